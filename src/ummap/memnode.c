/* The node memory budget of the ummap engine (memnode.h; docs/ummap_memory.md).
 *
 * The processes of a group share one object in /dev/shm: a header written by whoever
 * (re)initialises it, and one slot per process holding the bytes charged to it, the bytes
 * others ask it to give back, and a futex word to wake its I/O thread. Counters are
 * atomics updated by their owner; nothing else is locked on the charge path.
 *
 * Liveness comes from open-file-description (OFD) locks on bytes of the object, which the
 * kernel drops when a process dies however it dies:
 *   byte 0        "init": held exclusively while joining, leaving or removing the object
 *   byte 1        "members": every member holds it shared; whoever gets it exclusively
 *                 (under "init") knows there is no live member
 *   byte 2 + i    slot i: held exclusively by its owner; a slot marked live whose lock can
 *                 be taken belongs to a process that ended without leaving (killed)
 * The last leaver removes the object; an object without live members found later (all
 * its processes were killed) is reinitialised by the next join of its group, or removed
 * by the next join of any group of the same user on the node. */
#include "ummap/memnode.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ummap/memnode_env.h"
#include "ummap/memnode_inspect.h"
#include "util/log.h"

#define MN_MAGIC 0x316d656d72656974ull /* "tiermem1" */
#define MN_VERSION 1u
#define MN_SLOTS 1024u
#define MN_HEADER_SIZE 4096

enum { LOCK_INIT = 0, LOCK_MEMBERS = 1, LOCK_SLOT0 = 2 };
enum { SLOT_FREE = 0, SLOT_LIVE = 1 };

struct mn_slot {
    _Atomic uint32_t state;
    _Atomic uint32_t wake;     /* futex word: bumped to wake the owner's reclaim_wait */
    _Atomic uint64_t charged;  /* bytes resident in the owner */
    _Atomic uint64_t request;  /* bytes others ask the owner to give back (dynamic mode) */
    _Atomic int32_t pid;       /* for messages */
    char pad[36];              /* one cache line per process */
};
_Static_assert(sizeof(struct mn_slot) == 64, "a slot is one cache line");

/* Written once under the init lock while nobody else is a member; read-only after. */
struct mn_header {
    uint64_t magic;
    uint32_t version, nslots;
    uint64_t limit;
    uint32_t dynamic, nprocs;
    uint32_t limit_explicit, mode_explicit, nprocs_explicit;
    int32_t creator;
    _Atomic uint32_t hiwater; /* slots [0, hiwater) have been used */
    char key_source[64], procs_source[64];
    char key[256];
};

struct mn_shared {
    union {
        struct mn_header h;
        char page[MN_HEADER_SIZE];
    };
    struct mn_slot slot[MN_SLOTS];
};

struct tio_memnode {
    struct mn_shared *sh; /* NULL in a forked child (inert) */
    int fd;
    uint32_t me;          /* our slot */
    int refs;
    uint64_t limit;       /* copies of the header, valid in an inert child too */
    uint32_t nprocs;
    int dynamic;
    _Atomic int wake_pending;
    _Atomic uint64_t last_reap_ms; /* automatic dead-member checks are rate-limited */
    char name[128];
    char key_source[64], procs_source[64];
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tio_memnode *g_member; /* the process-wide membership */
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

/* ---- small system helpers ---- */

/* Lock (F_RDLCK/F_WRLCK) or unlock one byte. 0, EAGAIN if another description holds a
 * conflicting lock (wait == 0), or an errno value. */
static int lock_byte(int fd, short type, off_t byte, int wait)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl); /* l_pid must be 0 for OFD locks */
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = byte;
    fl.l_len = 1;
    while (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) < 0) {
        if (errno == EINTR && wait)
            continue;
        return errno == EACCES ? EAGAIN : errno;
    }
    return 0;
}

static void futex_wake_all(_Atomic uint32_t *w)
{
    /* Not FUTEX_PRIVATE: the waiter is another process. */
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void futex_wait(_Atomic uint32_t *w, uint32_t seen, const struct timespec *rel)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, seen, rel, NULL, 0);
}

static void notify(struct mn_slot *s)
{
    atomic_fetch_add(&s->wake, 1);
    futex_wake_all(&s->wake);
}

/* Does the name still refer to the object open as fd? (A last leaver may have removed
 * it, and someone else created a new one, while we waited for its init lock.) */
static int names_object(const char *name, int fd)
{
    int fd2 = shm_open(name, O_RDONLY, 0);
    if (fd2 < 0)
        return 0;
    struct stat a, b;
    int same = fstat(fd, &a) == 0 && fstat(fd2, &b) == 0 && a.st_dev == b.st_dev &&
               a.st_ino == b.st_ino;
    close(fd2);
    return same;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- accounting over the slots ---- */

static uint32_t hiwater(const struct tio_memnode *m)
{
    uint32_t h = atomic_load(&m->sh->h.hiwater);
    return h < MN_SLOTS ? h : MN_SLOTS;
}

static unsigned count_live(const struct tio_memnode *m)
{
    unsigned n = 0;
    for (uint32_t i = 0, hi = hiwater(m); i < hi; i++)
        n += atomic_load(&m->sh->slot[i].state) == SLOT_LIVE;
    return n;
}

static uint64_t node_total(const struct tio_memnode *m)
{
    uint64_t t = 0;
    for (uint32_t i = 0, hi = hiwater(m); i < hi; i++)
        if (atomic_load(&m->sh->slot[i].state) == SLOT_LIVE)
            t += atomic_load(&m->sh->slot[i].charged);
    return t;
}

static uint64_t fair_share(const struct tio_memnode *m)
{
    unsigned n = m->nprocs;
    if (!n && m->sh)
        n = count_live(m);
    return m->limit / (n ? n : 1);
}

static void clear_slot(struct mn_slot *s)
{
    atomic_store(&s->charged, 0);
    atomic_store(&s->request, 0);
    atomic_store(&s->pid, 0);
    atomic_store(&s->state, SLOT_FREE);
}

/* Slots marked live whose lock we can take belong to processes that died. */
static unsigned reap_dead(struct tio_memnode *m)
{
    unsigned n = 0;
    for (uint32_t i = 0, hi = hiwater(m); i < hi; i++) {
        struct mn_slot *s = &m->sh->slot[i];
        if (i == m->me || atomic_load(&s->state) != SLOT_LIVE)
            continue;
        if (lock_byte(m->fd, F_WRLCK, LOCK_SLOT0 + i, 0))
            continue; /* its owner is alive (or it is being joined or reaped right now) */
        if (atomic_load(&s->state) == SLOT_LIVE) {
            TIO_INFO("ummap: process %d ended without leaving the node memory group; its "
                     "%llu bytes are no longer counted", (int)atomic_load(&s->pid),
                     (unsigned long long)atomic_load(&s->charged));
            clear_slot(s);
            n++;
        }
        lock_byte(m->fd, F_UNLCK, LOCK_SLOT0 + i, 0);
    }
    return n;
}

/* The automatic check for dead members (on a full node, on a timed-out wait) costs one
 * fcntl per member: at most every REAP_INTERVAL_MS per process. */
#define REAP_INTERVAL_MS 100
static unsigned maybe_reap(struct tio_memnode *m)
{
    uint64_t now = now_ms(), last = atomic_load(&m->last_reap_ms);
    if (now - last < REAP_INTERVAL_MS ||
        !atomic_compare_exchange_strong(&m->last_reap_ms, &last, now))
        return 0;
    return reap_dead(m);
}

/* Shares shrank (a process joined, static mode counting members): wake every other member
 * so that its I/O thread can give back what is now over its share. */
static void notify_others(struct tio_memnode *m)
{
    for (uint32_t i = 0, hi = hiwater(m); i < hi; i++)
        if (i != m->me && atomic_load(&m->sh->slot[i].state) == SLOT_LIVE)
            notify(&m->sh->slot[i]);
}

/* Dynamic mode, node full: every other member over its share is asked to give back half
 * of its excess (seed 000 §6.2, the multiplicative decrease of TCP's congestion
 * avoidance). A request only grows, so repeated calls do not add up. */
static void ask_back(struct tio_memnode *m, uint64_t share)
{
    for (uint32_t i = 0, hi = hiwater(m); i < hi; i++) {
        struct mn_slot *s = &m->sh->slot[i];
        if (i == m->me || atomic_load(&s->state) != SLOT_LIVE)
            continue;
        uint64_t c = atomic_load(&s->charged);
        if (c <= share)
            continue;
        uint64_t want = (c - share + 1) / 2, cur = atomic_load(&s->request);
        int raised = 0;
        while (cur < want && !(raised = atomic_compare_exchange_weak(&s->request, &cur, want)))
            ;
        if (raised)
            notify(s);
    }
}

static uint64_t dynamic_evict(struct tio_memnode *m, uint64_t mine, uint64_t share)
{
    uint64_t total = node_total(m);
    if (total <= m->limit)
        return 0;
    /* Before making anyone give memory back, drop the bytes of processes that died. */
    if (maybe_reap(m)) {
        total = node_total(m);
        share = fair_share(m);
        if (total <= m->limit)
            return 0;
    }
    uint64_t over = total - m->limit, own = mine > share ? mine - share : 0;
    uint64_t evict = over < own ? over : own;
    if (over > evict)
        ask_back(m, share);
    return evict;
}

static uint64_t static_excess(const struct tio_memnode *m)
{
    if (m->dynamic)
        return 0;
    uint64_t mine = atomic_load(&m->sh->slot[m->me].charged), share = fair_share(m);
    return mine > share ? mine - share : 0;
}

/* ---- joining and leaving ---- */

static void atfork_prepare(void) { pthread_mutex_lock(&g_lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&g_lock); }

/* A forked child is not a member: its copy of the descriptor would keep the parent's
 * locks alive after the parent dies, so it is closed; the object it inherited goes inert. */
static void atfork_child(void)
{
    struct tio_memnode *m = g_member;
    if (m) {
        close(m->fd);
        m->fd = -1;
        munmap(m->sh, sizeof *m->sh);
        m->sh = NULL;
        g_member = NULL;
    }
    pthread_mutex_unlock(&g_lock);
}

static void register_atfork(void)
{
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* We hold "init" and "members" (shared) on fd; the join failed: if nobody else is a
 * member, the object goes away with us. */
static void abandon(int fd, const char *name)
{
    if (lock_byte(fd, F_WRLCK, LOCK_MEMBERS, 0) == 0 && names_object(name, fd))
        shm_unlink(name);
    close(fd);
}

/* Objects of this user's other groups that no live process belongs to (every process of
 * their job was killed) are removed here, so that they do not pile up in /dev/shm. */
static void remove_stale_objects(const char *own)
{
    char prefix[64];
    int plen = snprintf(prefix, sizeof prefix, TIO_MEMNODE_PREFIX "%u-", (unsigned)geteuid());
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char name[NAME_MAX + 2];
        if (strncmp(e->d_name, prefix, (size_t)plen))
            continue;
        snprintf(name, sizeof name, "/%s", e->d_name);
        if (!strcmp(name, own))
            continue;
        int fd = shm_open(name, O_RDWR, 0);
        if (fd < 0)
            continue;
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
            lock_byte(fd, F_WRLCK, LOCK_INIT, 0) == 0 &&
            lock_byte(fd, F_WRLCK, LOCK_MEMBERS, 0) == 0 && names_object(name, fd)) {
            TIO_INFO("ummap: removing /dev/shm%s: no live process belongs to it", name);
            shm_unlink(name);
        }
        close(fd);
    }
    closedir(d);
}

static int init_object(int fd, struct mn_shared **out, const struct tio_memnode_config *c)
{
    /* Truncating first zeroes whatever a dead group left. Reserving the pages now makes a
     * full /dev/shm an error here rather than a SIGBUS later. */
    int rc = ftruncate(fd, 0) < 0 ? errno : posix_fallocate(fd, 0, sizeof(struct mn_shared));
    if (rc) {
        tio_log(TIO_LOG_ERROR, "ummap: cannot size the node memory object /dev/shm%s: %s",
                c->name, strerror(rc));
        return rc;
    }
    struct mn_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (sh == MAP_FAILED) {
        rc = errno;
        tio_log(TIO_LOG_ERROR, "ummap: cannot map /dev/shm%s: %s", c->name, strerror(rc));
        return rc;
    }
    struct mn_header *h = &sh->h;
    h->version = MN_VERSION;
    h->nslots = MN_SLOTS;
    h->limit = c->limit;
    h->dynamic = (uint32_t)c->dynamic;
    h->nprocs = c->nprocs;
    h->limit_explicit = (uint32_t)c->limit_explicit;
    h->mode_explicit = (uint32_t)c->mode_explicit;
    h->nprocs_explicit = (uint32_t)c->nprocs_explicit;
    h->creator = (int32_t)getpid();
    snprintf(h->key_source, sizeof h->key_source, "%s", c->key_source);
    snprintf(h->procs_source, sizeof h->procs_source, "%s", c->nprocs_source);
    snprintf(h->key, sizeof h->key, "%s", c->key);
    h->magic = MN_MAGIC;
    *out = sh;
    return 0;
}

/* An explicit setting that differs from the group's is an error: the group's limit and
 * mode were fixed by the process that created it. */
static int check_agreement(const struct mn_header *h, const struct tio_memnode_config *c)
{
    if (c->limit_explicit && c->limit != h->limit) {
        tio_log(TIO_LOG_ERROR, "ummap: UMMAP_MEM_LIMIT gives %llu bytes, but the node's "
                "memory group (created by process %d) has a limit of %llu bytes: every "
                "process of the group must use the same value",
                (unsigned long long)c->limit, (int)h->creator, (unsigned long long)h->limit);
        return EINVAL;
    }
    if (c->mode_explicit && (uint32_t)c->dynamic != h->dynamic) {
        tio_log(TIO_LOG_ERROR, "ummap: UMMAP_MEMCONFIG=%s, but the node's memory group "
                "(created by process %d) is %s: every process of the group must use the "
                "same mode", c->dynamic ? "dynamic" : "static", (int)h->creator,
                h->dynamic ? "dynamic" : "static");
        return EINVAL;
    }
    if (c->nprocs_explicit && c->nprocs != h->nprocs) {
        tio_log(TIO_LOG_ERROR, "ummap: UMMAP_NODE_PROCS=%u, but the node's memory group "
                "(created by process %d) shares its limit among %u%s: every process of "
                "the group must use the same value", c->nprocs, (int)h->creator, h->nprocs,
                h->nprocs ? " processes" : " (the processes joined)");
        return EINVAL;
    }
    if (c->limit != h->limit || (uint32_t)c->dynamic != h->dynamic || c->nprocs != h->nprocs)
        TIO_INFO("ummap: using the node memory group's settings (limit %llu bytes, %s, "
                 "processes: %u) set by process %d", (unsigned long long)h->limit,
                 h->dynamic ? "dynamic" : "static", h->nprocs, (int)h->creator);
    return 0;
}

static int map_existing(int fd, struct mn_shared **out, const struct tio_memnode_config *c)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return errno;
    struct mn_shared *sh = MAP_FAILED;
    if ((size_t)st.st_size == sizeof *sh)
        sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (sh == MAP_FAILED || sh->h.magic != MN_MAGIC || sh->h.version != MN_VERSION ||
        sh->h.nslots != MN_SLOTS) {
        tio_log(TIO_LOG_ERROR, "ummap: /dev/shm%s is in use by live processes but is not a "
                "node memory object of this tierio version", c->name);
        if (sh != MAP_FAILED)
            munmap(sh, sizeof *sh);
        return EPROTO;
    }
    int rc = check_agreement(&sh->h, c);
    if (rc) {
        munmap(sh, sizeof *sh);
        return rc;
    }
    *out = sh;
    return 0;
}

static int claim_slot(struct tio_memnode *m)
{
    for (uint32_t i = 0; i < MN_SLOTS; i++) {
        int rc = lock_byte(m->fd, F_WRLCK, LOCK_SLOT0 + i, 0);
        if (rc == EAGAIN)
            continue;
        if (rc)
            return rc;
        /* Free, or left by a process that died: its bytes go with it. */
        struct mn_slot *s = &m->sh->slot[i];
        atomic_store(&s->charged, 0);
        atomic_store(&s->request, 0);
        atomic_store(&s->pid, (int32_t)getpid());
        atomic_store(&s->state, SLOT_LIVE);
        uint32_t h = atomic_load(&m->sh->h.hiwater);
        while (h < i + 1 && !atomic_compare_exchange_weak(&m->sh->h.hiwater, &h, i + 1))
            ;
        m->me = i;
        return 0;
    }
    tio_log(TIO_LOG_ERROR, "ummap: the node memory group /dev/shm%s already has %u "
            "processes", m->name, MN_SLOTS);
    return ENOSPC;
}

/* Open (or create) the group's object, become a member and take a slot. */
static int attach(struct tio_memnode *m, const struct tio_memnode_config *c)
{
    remove_stale_objects(c->name);
    for (int tries = 0; tries < 100; tries++) {
        int fd = shm_open(c->name, O_RDWR | O_CREAT, 0600);
        if (fd < 0) {
            int rc = errno;
            tio_log(TIO_LOG_ERROR, "ummap: cannot open the node memory object /dev/shm%s: %s",
                    c->name, strerror(rc));
            return rc;
        }
        struct stat st;
        if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
            tio_log(TIO_LOG_ERROR, "ummap: /dev/shm%s belongs to another user", c->name);
            close(fd);
            return EACCES;
        }
        int rc = lock_byte(fd, F_WRLCK, LOCK_INIT, 1);
        if (rc) {
            tio_log(TIO_LOG_ERROR, "ummap: cannot lock /dev/shm%s: %s", c->name, strerror(rc));
            close(fd);
            return rc;
        }
        if (!names_object(c->name, fd)) { /* removed while we waited: start again */
            close(fd);
            continue;
        }
        m->fd = fd;
        /* Members hold "members" shared and take "init" before they give it up, so under
         * "init" the exclusive lock tells exactly whether anyone is alive in the group. */
        rc = lock_byte(fd, F_WRLCK, LOCK_MEMBERS, 0);
        if (rc == 0) { /* no live member: new, or left by a job whose processes died */
            rc = init_object(fd, &m->sh, c);
            if (!rc && (rc = lock_byte(fd, F_RDLCK, LOCK_MEMBERS, 0)) != 0) /* downgrade */
                tio_log(TIO_LOG_ERROR, "ummap: cannot lock /dev/shm%s: %s", c->name,
                        strerror(rc));
        } else if (rc == EAGAIN) {
            if ((rc = lock_byte(fd, F_RDLCK, LOCK_MEMBERS, 0)) != 0)
                tio_log(TIO_LOG_ERROR, "ummap: cannot lock /dev/shm%s: %s", c->name,
                        strerror(rc));
            else
                rc = map_existing(fd, &m->sh, c);
        } else {
            tio_log(TIO_LOG_ERROR, "ummap: cannot lock /dev/shm%s: %s", c->name, strerror(rc));
        }
        if (!rc)
            rc = claim_slot(m);
        if (rc) {
            if (m->sh)
                munmap(m->sh, sizeof *m->sh);
            m->sh = NULL;
            abandon(fd, c->name); /* also drops the init lock */
            m->fd = -1;
            return rc;
        }
        const struct mn_header *h = &m->sh->h;
        m->limit = h->limit;
        m->nprocs = h->nprocs;
        m->dynamic = (int)h->dynamic;
        snprintf(m->key_source, sizeof m->key_source, "%s", h->key_source);
        snprintf(m->procs_source, sizeof m->procs_source, "%s", h->procs_source);
        reap_dead(m);
        if (!m->dynamic && !m->nprocs)
            notify_others(m);
        lock_byte(fd, F_UNLCK, LOCK_INIT, 0);
        return 0;
    }
    tio_log(TIO_LOG_ERROR, "ummap: /dev/shm%s keeps being removed and created again",
            c->name);
    return EAGAIN;
}

int tio_memnode_join(tio_memnode_t **out)
{
    if (!out)
        return EINVAL;
    *out = NULL;
    pthread_once(&g_atfork_once, register_atfork);
    pthread_mutex_lock(&g_lock);
    if (g_member) {
        g_member->refs++;
        *out = g_member;
        pthread_mutex_unlock(&g_lock);
        return 0;
    }
    struct tio_memnode_config c;
    int rc = tio_memnode_config_read(&c);
    struct tio_memnode *m = NULL;
    if (!rc && !(m = calloc(1, sizeof *m)))
        rc = ENOMEM;
    if (!rc) {
        m->fd = -1;
        m->refs = 1;
        snprintf(m->name, sizeof m->name, "%s", c.name);
        rc = attach(m, &c);
    }
    if (rc) {
        free(m);
    } else {
        TIO_DEBUG("ummap: joined node memory group /dev/shm%s (key from %s) in slot %u: "
                  "limit %llu bytes, %s, share %llu bytes", m->name, m->key_source, m->me,
                  (unsigned long long)m->limit, m->dynamic ? "dynamic" : "static",
                  (unsigned long long)fair_share(m));
        g_member = m;
        *out = m;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static void detach(struct tio_memnode *m)
{
    if (lock_byte(m->fd, F_WRLCK, LOCK_INIT, 1) == 0) {
        clear_slot(&m->sh->slot[m->me]);
        lock_byte(m->fd, F_UNLCK, LOCK_SLOT0 + m->me, 0);
        reap_dead(m); /* so that a killed member does not keep the object alive */
        if (lock_byte(m->fd, F_WRLCK, LOCK_MEMBERS, 0) == 0 && names_object(m->name, m->fd))
            shm_unlink(m->name);
    }
    close(m->fd); /* drops every lock */
    munmap(m->sh, sizeof *m->sh);
}

void tio_memnode_leave(tio_memnode_t *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&g_lock);
    if (--m->refs > 0) {
        pthread_mutex_unlock(&g_lock);
        return;
    }
    if (g_member == m)
        g_member = NULL;
    if (m->sh)
        detach(m);
    pthread_mutex_unlock(&g_lock);
    free(m);
}

/* ---- the engine's calls ---- */

size_t tio_memnode_charge(tio_memnode_t *m, size_t n)
{
    if (!m || !m->sh)
        return 0;
    struct mn_slot *s = &m->sh->slot[m->me];
    uint64_t mine = atomic_fetch_add(&s->charged, n) + n, share = fair_share(m), evict;
    if (m->dynamic)
        evict = dynamic_evict(m, mine, share);
    else
        evict = mine > share ? mine - share : 0;
    /* A request from another process is served here too, so that it is honoured even by
     * an engine without an I/O thread. */
    uint64_t asked = atomic_exchange(&s->request, 0);
    if (asked > mine)
        asked = mine;
    return (size_t)(asked > evict ? asked : evict);
}

void tio_memnode_release(tio_memnode_t *m, size_t n)
{
    if (!m || !m->sh || !n)
        return;
    struct mn_slot *s = &m->sh->slot[m->me];
    uint64_t cur = atomic_load(&s->charged);
    while (!atomic_compare_exchange_weak(&s->charged, &cur, cur > n ? cur - n : 0))
        ;
    if (n > cur)
        TIO_DEBUG("ummap: released %zu bytes but only %llu were charged", n,
                  (unsigned long long)cur);
    /* What is released counts towards what others asked for. */
    cur = atomic_load(&s->request);
    while (cur && !atomic_compare_exchange_weak(&s->request, &cur, cur > n ? cur - n : 0))
        ;
}

size_t tio_memnode_reclaim_wait(tio_memnode_t *m, unsigned timeout_ms)
{
    if (!m || !m->sh)
        return 0;
    struct mn_slot *s = &m->sh->slot[m->me];
    const uint64_t deadline = now_ms() + timeout_ms;
    int woken = 0;
    for (;;) {
        if (atomic_exchange(&m->wake_pending, 0))
            return 0;
        uint64_t asked = atomic_exchange(&s->request, 0);
        if (asked) {
            uint64_t mine = atomic_load(&s->charged);
            if (asked > mine)
                asked = mine;
            if (asked)
                return (size_t)asked;
        }
        /* Static mode: shares shrink when processes join, and they wake us. Only then
         * (not at every call) is the excess returned, so that an engine that cannot
         * evict does not spin. */
        uint64_t ex;
        if (woken && (ex = static_excess(m)))
            return (size_t)ex;
        uint32_t seen = atomic_load(&s->wake);
        if (atomic_load(&s->request) || atomic_load(&m->wake_pending))
            continue; /* arrived between the checks and reading the futex word */
        uint64_t now = now_ms();
        if (now >= deadline)
            break;
        uint64_t left = deadline - now;
        struct timespec rel = {(time_t)(left / 1000), (long)(left % 1000) * 1000000L};
        futex_wait(&s->wake, seen, &rel);
        woken = atomic_load(&s->wake) != seen;
    }
    /* Timed out: the I/O thread's periodic housekeeping. */
    maybe_reap(m);
    return (size_t)static_excess(m);
}

void tio_memnode_wake(tio_memnode_t *m)
{
    if (!m || !m->sh)
        return;
    atomic_store(&m->wake_pending, 1);
    notify(&m->sh->slot[m->me]);
}

size_t tio_memnode_share(const tio_memnode_t *m) { return m ? (size_t)fair_share(m) : 0; }
size_t tio_memnode_limit(const tio_memnode_t *m) { return m ? (size_t)m->limit : 0; }
int tio_memnode_dynamic(const tio_memnode_t *m) { return m ? m->dynamic : 0; }

/* ---- memnode_inspect.h ---- */

const char *tio_memnode_name(const tio_memnode_t *m) { return m->name; }
const char *tio_memnode_key_source(const tio_memnode_t *m) { return m->key_source; }
const char *tio_memnode_procs_source(const tio_memnode_t *m) { return m->procs_source; }

size_t tio_memnode_charged(const tio_memnode_t *m)
{
    return m->sh ? (size_t)atomic_load(&m->sh->slot[m->me].charged) : 0;
}

size_t tio_memnode_node_total(const tio_memnode_t *m)
{
    return m->sh ? (size_t)node_total(m) : 0;
}

unsigned tio_memnode_members(const tio_memnode_t *m) { return m->sh ? count_live(m) : 0; }

unsigned tio_memnode_reap(tio_memnode_t *m) { return m->sh ? reap_dead(m) : 0; }
