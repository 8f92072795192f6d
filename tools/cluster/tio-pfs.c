/* tio-pfs: the emulated cluster's "parallel file system" as a FUSE file system that
 * forwards every operation to a backing directory and paces every data request itself.
 *
 *   tio-pfs BACKING_DIR MOUNTPOINT [--write-bps B] [--read-bps B] [--latency SECONDS]
 *           [--foreground] [--ready-fd N]
 *
 * Why a file system and not blkio: cgroup-v1 blkio throttles only I/O issued in the
 * writer's context, so write-back by the flusher or by memory-cgroup reclaim escapes it,
 * and every emulated node shares one page cache, so a node reads what another wrote from
 * memory.  Here file data is direct I/O toward the kernel (no client page cache), so every
 * read and write of every client is a request to this daemon, which charges it to one
 * token bucket per direction (the PFS's aggregate bandwidth) and adds a fixed per-request
 * latency (the RPC cost), whatever the backing file's page cache holds.
 *
 * Low-level libfuse 3.14 API, multi-threaded loop: requests sleep concurrently, so the
 * latencies of different clients overlap the way RPCs do while the buckets are shared.
 * We mount /dev/fuse ourselves (we are root) and hand libfuse the descriptor through
 * fuse_session_custom_io(): that needs no fusermount3 (the fuse3 package would remove the
 * fuse-2 tools), and it lets us add two kernel flags libfuse 3.14 does not know to its
 * replies (FUSE_DIRECT_IO_ALLOW_MMAP, FOPEN_PARALLEL_DIRECT_WRITES; see io_writev). */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>
#include <linux/fuse.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "util/values.h"

/* Linux >= 6.6 lets MAP_SHARED work on FOPEN_DIRECT_IO files when the daemon asks for
 * it; the Debian 12 uapi header (protocol 7.38) and libfuse 3.14 predate the bit, whose
 * value is fixed by the protocol (7.39). */
#ifndef FUSE_DIRECT_IO_ALLOW_MMAP
#define FUSE_DIRECT_IO_ALLOW_MMAP (1ULL << 36)
#endif
#ifndef FOPEN_PARALLEL_DIRECT_WRITES
#define FOPEN_PARALLEL_DIRECT_WRITES (1 << 6)
#endif

#define MAX_THREADS 64 /* workers; each may sleep in the pacing, so more than cores */

static const char usage[] =
    "usage: tio-pfs BACKING_DIR MOUNTPOINT [--write-bps B] [--read-bps B]\n"
    "               [--latency SECONDS] [--foreground] [--ready-fd N]\n"
    "  B: bytes per second, " TIO_SIZE_UNITS ", optional B (20M, 1.5GiB)\n"
    "  SECONDS: 0.005, 5ms, 200us (added to every read and write request)\n";

/* ---- pacing ---------------------------------------------------------------------- */

/* One per direction, shared by all requests of all clients: the PFS's aggregate
 * bandwidth.  Tokens may go negative: a request takes its bytes at once and sleeps off
 * the debt, so later requests queue behind earlier ones (first come, first served) and
 * the long-run rate is exactly `rate`, with at most `burst` (1/20 s of bandwidth) ahead. */
struct bucket {
    pthread_mutex_t mu;
    double rate, burst, tokens; /* rate 0: unpaced */
    struct timespec last;
    double waited; /* seconds requests slept for tokens */
    uint64_t bytes, requests;
};

static struct bucket rd = {.mu = PTHREAD_MUTEX_INITIALIZER};
static struct bucket wr = {.mu = PTHREAD_MUTEX_INITIALIZER};
static double latency; /* seconds added to every read and write */
static atomic_uint_fast64_t all_requests;

static double ts_diff(struct timespec a, struct timespec b)
{
    return (double)(a.tv_sec - b.tv_sec) + (double)(a.tv_nsec - b.tv_nsec) * 1e-9;
}

static struct timespec ts_add(struct timespec t, double s)
{
    time_t whole = (time_t)s;
    t.tv_sec += whole;
    t.tv_nsec += (long)((s - (double)whole) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/* Charge n bytes to b and sleep (not spin) for the token debt plus the request latency.
 * Called by the worker that serves the request, before it replies. */
static void pace(struct bucket *b, size_t n)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double wait = 0;
    pthread_mutex_lock(&b->mu);
    b->bytes += n;
    b->requests++;
    if (b->rate > 0) {
        b->tokens += ts_diff(now, b->last) * b->rate;
        if (b->tokens > b->burst)
            b->tokens = b->burst;
        b->last = now;
        b->tokens -= (double)n;
        if (b->tokens < 0)
            wait = -b->tokens / b->rate;
        b->waited += wait;
    }
    pthread_mutex_unlock(&b->mu);
    double total = wait + latency;
    if (total <= 0)
        return;
    struct timespec until = ts_add(now, total);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
        ;
}

static void bucket_init(struct bucket *b, double rate)
{
    b->rate = rate;
    b->burst = rate / 20;
    b->tokens = b->burst;
    clock_gettime(CLOCK_MONOTONIC, &b->last);
}

/* ---- inodes ---------------------------------------------------------------------- */

/* A FUSE inode number is the address of one of these; it holds an O_PATH descriptor of
 * the backing file so that operations reach it even after a rename by another client, and
 * so that the backing inode (and its number, our hash key) lives as long as the kernel
 * may still name it (nlookup > 0). */
struct node {
    int fd;
    dev_t dev;
    ino_t ino;
    uint64_t nlookup;
    struct node *next; /* hash chain */
};

#define NBUCKETS 4096
static struct node *table[NBUCKETS];
static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;
static struct node root = {.fd = -1};

static struct node *N(fuse_ino_t ino)
{
    return ino == FUSE_ROOT_ID ? &root : (struct node *)(uintptr_t)ino;
}

static size_t slot(dev_t dev, ino_t ino)
{
    return (size_t)((ino * 0x9E3779B97F4A7C15ULL) ^ dev) % NBUCKETS;
}

/* "/proc/self/fd/N": how the calls that take no descriptor (open, chmod, truncate,
 * utimensat, linkat) reach an O_PATH descriptor's file. */
static void proc_path(char buf[static 40], int fd)
{
    snprintf(buf, 40, "/proc/self/fd/%d", fd);
}

/* Look fd's file up in the table (one more kernel reference) or add it; takes fd. */
static int node_for_fd(int fd, struct fuse_entry_param *e)
{
    struct stat st;
    if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == -1) {
        int err = errno;
        close(fd);
        return err;
    }
    pthread_mutex_lock(&table_mu);
    size_t s = slot(st.st_dev, st.st_ino);
    struct node *n = table[s];
    while (n && !(n->dev == st.st_dev && n->ino == st.st_ino))
        n = n->next;
    if (n) {
        n->nlookup++;
        close(fd);
    } else {
        n = calloc(1, sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&table_mu);
            close(fd);
            return ENOMEM;
        }
        *n = (struct node){.fd = fd, .dev = st.st_dev, .ino = st.st_ino, .nlookup = 1,
                           .next = table[s]};
        table[s] = n;
    }
    pthread_mutex_unlock(&table_mu);
    /* Timeouts 0: other "nodes" change sizes and mtimes behind this kernel's back
     * (MPI_File_get_size must see them), so the kernel asks every time. */
    memset(e, 0, sizeof *e);
    e->ino = (fuse_ino_t)(uintptr_t)n;
    e->attr = st;
    e->attr_timeout = 0;
    e->entry_timeout = 0;
    return 0;
}

static int lookup_child(struct node *parent, const char *name, struct fuse_entry_param *e)
{
    int fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd == -1)
        return errno;
    return node_for_fd(fd, e);
}

static void forget_one(fuse_ino_t ino, uint64_t nlookup)
{
    struct node *n = N(ino);
    if (n == &root)
        return;
    pthread_mutex_lock(&table_mu);
    if (n->nlookup > nlookup) {
        n->nlookup -= nlookup;
        pthread_mutex_unlock(&table_mu);
        return;
    }
    struct node **p = &table[slot(n->dev, n->ino)];
    while (*p != n)
        p = &(*p)->next;
    *p = n->next;
    pthread_mutex_unlock(&table_mu);
    close(n->fd);
    free(n);
}

/* Files and directories made for a non-root caller belong to it, as on any file system
 * (the daemon runs as root); default_permissions then checks access as usual. */
static void give_to_caller(fuse_req_t req, int dirfd, const char *name)
{
    const struct fuse_ctx *c = fuse_req_ctx(req);
    if (c->uid != geteuid() || c->gid != getegid())
        if (fchownat(dirfd, name, c->uid, c->gid, AT_SYMLINK_NOFOLLOW) == -1) {
            /* the file exists; it stays root's, which is what the caller can see */
        }
}

static void reply_entry_or_err(fuse_req_t req, int err, struct fuse_entry_param *e)
{
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_entry(req, e);
}

static void pfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct fuse_entry_param e;
    reply_entry_or_err(req, lookup_child(N(parent), name, &e), &e);
}

static void pfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
    forget_one(ino, nlookup);
    fuse_reply_none(req);
}

static void pfs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *f)
{
    for (size_t i = 0; i < count; i++)
        forget_one(f[i].ino, f[i].nlookup);
    fuse_reply_none(req);
}

static void reply_attr_of(fuse_req_t req, struct node *n)
{
    struct stat st;
    if (fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == -1)
        fuse_reply_err(req, errno);
    else
        fuse_reply_attr(req, &st, 0);
}

static void pfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    reply_attr_of(req, N(ino));
}

/* ---- open files ------------------------------------------------------------------ */

/* fi->fh of files and directories alike, so that setattr with a handle (ftruncate,
 * fchmod, futimens on either) can use fd without knowing which it is. */
struct handle {
    int fd;   /* the backing file, without O_APPEND */
    int afd;  /* with O_APPEND for a client that opened so, else -1 */
    DIR *dp;  /* directories */
    off_t pos;
    struct dirent *pending; /* read from dp but did not fit the last reply */
};

static struct handle *H(struct fuse_file_info *fi)
{
    return (struct handle *)(uintptr_t)fi->fh;
}

/* Backing open flags: no O_DIRECT (libfuse's buffers are not aligned for it, and the
 * client-side cache is already off), no O_NOFOLLOW (it would refuse /proc/self/fd/N),
 * and O_APPEND on a second descriptor only: writes of mmap pages (fi->writepage) may use
 * any writable handle of the file and must land at their offset. */
static int open_backing(const char *path, int flags, struct handle **out)
{
    int base = flags & ~(O_DIRECT | O_NOFOLLOW | O_APPEND | O_CREAT | O_EXCL);
    struct handle *h = calloc(1, sizeof *h);
    if (!h)
        return ENOMEM;
    h->afd = -1;
    h->fd = open(path, base | O_CLOEXEC);
    if (h->fd == -1) {
        int err = errno;
        free(h);
        return err;
    }
    if (flags & O_APPEND) {
        h->afd = open(path, (base & ~O_TRUNC) | O_APPEND | O_CLOEXEC);
        if (h->afd == -1) {
            int err = errno;
            close(h->fd);
            free(h);
            return err;
        }
    }
    *out = h;
    return 0;
}

static void set_open_reply(struct fuse_file_info *fi, struct handle *h)
{
    fi->fh = (uint64_t)(uintptr_t)h;
    fi->direct_io = 1;  /* every read and write comes here: no client page cache */
    fi->keep_cache = 0;
}

static void pfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    char path[40];
    struct handle *h = NULL;
    proc_path(path, N(ino)->fd);
    int err = open_backing(path, fi->flags, &h);
    if (err) {
        fuse_reply_err(req, err);
        return;
    }
    set_open_reply(fi, h);
    if (fuse_reply_open(req, fi) == -ENOENT) { /* the open was interrupted */
        close(h->fd);
        if (h->afd != -1)
            close(h->afd);
        free(h);
    }
}

static void pfs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                       struct fuse_file_info *fi)
{
    struct node *p = N(parent);
    /* Create with the client's flags but without O_APPEND (see open_backing), then
     * reopen through /proc for the rest: one inode, no race with a rename. */
    int fd = openat(p->fd, name,
                    (fi->flags & ~(O_DIRECT | O_NOFOLLOW | O_APPEND)) | O_CREAT | O_CLOEXEC,
                    mode);
    if (fd == -1) {
        fuse_reply_err(req, errno);
        return;
    }
    give_to_caller(req, p->fd, name);
    char path[40];
    proc_path(path, fd);
    struct handle *h = calloc(1, sizeof *h);
    int pfd = open(path, O_PATH | O_CLOEXEC), err = 0;
    if (!h || pfd == -1) {
        err = h ? errno : ENOMEM;
    } else {
        h->fd = fd;
        h->afd = -1;
        if (fi->flags & O_APPEND &&
            (h->afd = open(path, (fi->flags & O_ACCMODE) | O_APPEND | O_CLOEXEC)) == -1)
            err = errno;
    }
    struct fuse_entry_param e;
    if (!err) {
        err = node_for_fd(pfd, &e);
        pfd = -1;
    }
    if (err) {
        if (pfd != -1)
            close(pfd);
        if (h && h->afd != -1)
            close(h->afd);
        free(h);
        close(fd);
        fuse_reply_err(req, err);
        return;
    }
    set_open_reply(fi, h);
    fuse_reply_create(req, &e, fi);
}

static void pfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    struct handle *h = H(fi);
    close(h->fd);
    if (h->afd != -1)
        close(h->afd);
    free(h);
    fuse_reply_err(req, 0);
}

/* close(2) of a client: nothing is buffered here (data went to the backing file with
 * each write) and locks are the kernel's, so there is nothing to do. */
static void pfs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino, (void)fi;
    fuse_reply_err(req, 0);
}

static void pfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    (void)ino;
    char *buf = malloc(size ? size : 1);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    /* The bytes actually read are charged (a read at the end of file moves less), after
     * the backing read: a page-cache hit on the backing file still waits its turn. */
    size_t got = 0;
    while (got < size) {
        ssize_t r = pread(H(fi)->fd, buf + got, size - got, off + (off_t)got);
        if (r == -1 && errno == EINTR)
            continue;
        if (r == -1) {
            int err = errno;
            free(buf);
            fuse_reply_err(req, err);
            return;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    pace(&rd, got);
    fuse_reply_buf(req, buf, got);
    free(buf);
}

static void pfs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
                      off_t off, struct fuse_file_info *fi)
{
    (void)ino;
    struct handle *h = H(fi);
    int fd = h->afd != -1 && !fi->writepage ? h->afd : h->fd;
    /* Charged before the data moves, like bytes that must cross the network first. */
    pace(&wr, size);
    size_t done = 0;
    while (done < size) {
        ssize_t r = pwrite(fd, buf + done, size - done, off + (off_t)done);
        if (r == -1 && errno == EINTR)
            continue;
        if (r == -1) {
            if (done)
                break;
            fuse_reply_err(req, errno);
            return;
        }
        done += (size_t)r;
    }
    fuse_reply_write(req, done);
}

static void pfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
    (void)ino;
    int fd = H(fi)->fd;
    fuse_reply_err(req, (datasync ? fdatasync(fd) : fsync(fd)) == -1 ? errno : 0);
}

static void pfs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                          struct fuse_file_info *fi)
{
    (void)ino;
    fuse_reply_err(req, fallocate(H(fi)->fd, mode, off, len) == -1 ? errno : 0);
}

static void pfs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
                      struct fuse_file_info *fi)
{
    (void)ino;
    off_t r = lseek(H(fi)->fd, off, whence);
    if (r == -1)
        fuse_reply_err(req, errno);
    else
        fuse_reply_lseek(req, r);
}

/* ---- attributes ------------------------------------------------------------------ */

static void pfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                        struct fuse_file_info *fi)
{
    struct node *n = N(ino);
    char path[40];
    proc_path(path, n->fd);
    int fd = fi ? H(fi)->fd : -1, r = 0;
    if (to_set & FUSE_SET_ATTR_MODE)
        r = fd != -1 ? fchmod(fd, attr->st_mode) : chmod(path, attr->st_mode);
    if (!r && to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
        uid_t uid = to_set & FUSE_SET_ATTR_UID ? attr->st_uid : (uid_t)-1;
        gid_t gid = to_set & FUSE_SET_ATTR_GID ? attr->st_gid : (gid_t)-1;
        r = fchownat(n->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
    }
    if (!r && to_set & FUSE_SET_ATTR_SIZE)
        r = fd != -1 ? ftruncate(fd, attr->st_size) : truncate(path, attr->st_size);
    if (!r && to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
        struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_nsec = UTIME_OMIT}};
        if (to_set & FUSE_SET_ATTR_ATIME_NOW)
            ts[0].tv_nsec = UTIME_NOW;
        else if (to_set & FUSE_SET_ATTR_ATIME)
            ts[0] = attr->st_atim;
        if (to_set & FUSE_SET_ATTR_MTIME_NOW)
            ts[1].tv_nsec = UTIME_NOW;
        else if (to_set & FUSE_SET_ATTR_MTIME)
            ts[1] = attr->st_mtim;
        r = fd != -1 ? futimens(fd, ts) : utimensat(AT_FDCWD, path, ts, 0);
    }
    if (r == -1)
        fuse_reply_err(req, errno);
    else
        reply_attr_of(req, n);
}

static void pfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
    char buf[PATH_MAX + 1];
    ssize_t r = readlinkat(N(ino)->fd, "", buf, sizeof buf - 1);
    if (r == -1) {
        fuse_reply_err(req, errno);
        return;
    }
    buf[r] = '\0';
    fuse_reply_readlink(req, buf);
}

static void pfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
    struct statvfs sv;
    (void)ino;
    if (fstatvfs(root.fd, &sv) == -1)
        fuse_reply_err(req, errno);
    else
        fuse_reply_statfs(req, &sv);
}

/* ---- names ----------------------------------------------------------------------- */

/* After a call that made parent/name: the caller owns it, the kernel gets its entry. */
static void reply_made(fuse_req_t req, struct node *p, const char *name, int r)
{
    if (r == -1) {
        fuse_reply_err(req, errno);
        return;
    }
    give_to_caller(req, p->fd, name);
    struct fuse_entry_param e;
    reply_entry_or_err(req, lookup_child(p, name, &e), &e);
}

static void pfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                      dev_t rdev)
{
    struct node *p = N(parent);
    reply_made(req, p, name, mknodat(p->fd, name, mode, rdev));
}

static void pfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
    struct node *p = N(parent);
    reply_made(req, p, name, mkdirat(p->fd, name, mode));
}

static void pfs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
                        const char *name)
{
    struct node *p = N(parent);
    reply_made(req, p, name, symlinkat(link, p->fd, name));
}

static void pfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent, const char *name)
{
    char path[40];
    struct node *p = N(parent);
    proc_path(path, N(ino)->fd);
    int r = linkat(AT_FDCWD, path, p->fd, name, AT_SYMLINK_FOLLOW);
    if (r == -1) {
        fuse_reply_err(req, errno);
        return;
    }
    struct fuse_entry_param e;
    reply_entry_or_err(req, lookup_child(p, name, &e), &e);
}

static void pfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    fuse_reply_err(req, unlinkat(N(parent)->fd, name, 0) == -1 ? errno : 0);
}

static void pfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    fuse_reply_err(req, unlinkat(N(parent)->fd, name, AT_REMOVEDIR) == -1 ? errno : 0);
}

static void pfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
                       fuse_ino_t newparent, const char *newname, unsigned int flags)
{
    int r = renameat2(N(parent)->fd, name, N(newparent)->fd, newname, flags);
    fuse_reply_err(req, r == -1 ? errno : 0);
}

/* ---- directories ----------------------------------------------------------------- */

static void pfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct handle *h = calloc(1, sizeof *h);
    int fd = openat(N(ino)->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;
    if (!h || fd == -1) {
        err = h ? errno : ENOMEM;
    } else if (!(h->dp = fdopendir(fd))) {
        err = errno;
    }
    if (err) {
        if (fd != -1)
            close(fd);
        free(h);
        fuse_reply_err(req, err);
        return;
    }
    h->fd = fd;
    h->afd = -1;
    fi->fh = (uint64_t)(uintptr_t)h;
    fuse_reply_open(req, fi);
}

static void pfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                        struct fuse_file_info *fi)
{
    (void)ino;
    struct handle *h = H(fi);
    char *buf = malloc(size ? size : 1);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    if (off != h->pos) { /* the kernel went back (rewinddir, seekdir) */
        seekdir(h->dp, off);
        h->pos = off;
        h->pending = NULL;
    }
    size_t used = 0;
    for (;;) {
        struct dirent *de = h->pending;
        if (!de) {
            errno = 0;
            if (!(de = readdir(h->dp))) {
                if (errno && !used) {
                    int err = errno;
                    free(buf);
                    fuse_reply_err(req, err);
                    return;
                }
                break;
            }
        }
        /* Only the inode number and type: the kernel looks names up itself. */
        struct stat st = {.st_ino = de->d_ino, .st_mode = (mode_t)de->d_type << 12};
        size_t len = fuse_add_direntry(req, buf + used, size - used, de->d_name, &st,
                                       de->d_off);
        if (len > size - used) {
            h->pending = de; /* sent with the next call */
            break;
        }
        used += len;
        h->pending = NULL;
        h->pos = de->d_off;
    }
    fuse_reply_buf(req, buf, used);
    free(buf);
}

static void pfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    closedir(H(fi)->dp);
    free(H(fi));
    fuse_reply_err(req, 0);
}

static void pfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
                         struct fuse_file_info *fi)
{
    (void)ino;
    int fd = H(fi)->fd;
    fuse_reply_err(req, (datasync ? fdatasync(fd) : fsync(fd)) == -1 ? errno : 0);
}

/* ---- session --------------------------------------------------------------------- */

static int ready_fd = -1, daemon_pipe = -1;

static void signal_ready(int *fd)
{
    if (*fd == -1)
        return;
    if (write(*fd, "1", 1) != 1) {
        /* whoever waits sees EOF at our exit instead */
    }
    close(*fd);
    *fd = -1;
}

static void pfs_init(void *userdata, struct fuse_conn_info *conn)
{
    (void)userdata;
    /* No client cache at all: no writeback cache, data through direct I/O (open).
     * Locks are not offered (no getlk/setlk here): the kernel keeps POSIX locks itself,
     * which is exact because every emulated node runs on this one kernel. */
    conn->want &= ~(unsigned)(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_POSIX_LOCKS |
                              FUSE_CAP_FLOCK_LOCKS);
    conn->max_background = 64; /* async reads and mmap write-back from many clients */
    signal_ready(&ready_fd);
    signal_ready(&daemon_pipe);
}

static const struct fuse_lowlevel_ops ops = {
    .init = pfs_init,
    .lookup = pfs_lookup,
    .forget = pfs_forget,
    .forget_multi = pfs_forget_multi,
    .getattr = pfs_getattr,
    .setattr = pfs_setattr,
    .readlink = pfs_readlink,
    .mknod = pfs_mknod,
    .mkdir = pfs_mkdir,
    .symlink = pfs_symlink,
    .link = pfs_link,
    .unlink = pfs_unlink,
    .rmdir = pfs_rmdir,
    .rename = pfs_rename,
    .open = pfs_open,
    .create = pfs_create,
    .read = pfs_read,
    .write = pfs_write,
    .flush = pfs_flush,
    .release = pfs_release,
    .fsync = pfs_fsync,
    .opendir = pfs_opendir,
    .readdir = pfs_readdir,
    .releasedir = pfs_releasedir,
    .fsyncdir = pfs_fsyncdir,
    .statfs = pfs_statfs,
    .fallocate = pfs_fallocate,
    .lseek = pfs_lseek,
};

/* ---- the device: requests in, replies out ---------------------------------------- */

/* Requests whose replies io_writev amends, by unique id: INIT (to ask for shared mmap on
 * direct-I/O files) and OPEN/CREATE (to allow parallel direct writes to one file).  Few
 * are in flight at once; a full table only costs that amendment. */
#define PENDING 256
static struct {
    uint64_t unique;
    uint32_t opcode;
} pending[PENDING];
static pthread_mutex_t pending_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int npending;
static _Atomic uint32_t kernel_flags2; /* what the kernel offered in INIT */
static atomic_int mmap_allowed;        /* we asked for FUSE_DIRECT_IO_ALLOW_MMAP */

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
    (void)userdata;
    ssize_t r = read(fd, buf, len);
    if (r < (ssize_t)sizeof(struct fuse_in_header))
        return r;
    const struct fuse_in_header *in = buf;
    atomic_fetch_add(&all_requests, 1);
    if (in->opcode != FUSE_INIT && in->opcode != FUSE_OPEN && in->opcode != FUSE_CREATE)
        return r;
    if (in->opcode == FUSE_INIT &&
        (size_t)r >= sizeof *in + offsetof(struct fuse_init_in, flags2) + sizeof(uint32_t)) {
        const struct fuse_init_in *init = (const void *)(in + 1);
        kernel_flags2 = init->flags & FUSE_INIT_EXT ? init->flags2 : 0;
    }
    pthread_mutex_lock(&pending_mu);
    for (int i = 0; i < PENDING; i++)
        if (!pending[i].unique) {
            pending[i].unique = in->unique;
            pending[i].opcode = in->opcode;
            atomic_fetch_add(&npending, 1);
            break;
        }
    pthread_mutex_unlock(&pending_mu);
    return r;
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
    (void)userdata;
    const struct fuse_out_header *out = iov[0].iov_base;
    /* Every reply ends its request's entry, error replies (the header alone) too. */
    if (atomic_load(&npending) && out->unique) {
        uint32_t opcode = 0;
        pthread_mutex_lock(&pending_mu);
        for (int i = 0; i < PENDING; i++)
            if (pending[i].unique == out->unique) {
                opcode = pending[i].opcode;
                pending[i].unique = 0;
                atomic_fetch_sub(&npending, 1);
                break;
            }
        pthread_mutex_unlock(&pending_mu);
        if (count < 2 || out->error) {
            /* nothing to amend */
        } else if (opcode == FUSE_INIT && iov[1].iov_len >= sizeof(struct fuse_init_out)) {
            struct fuse_init_out *init = iov[1].iov_base;
            /* Shared mmap of our direct-I/O files (the project's storage windows map
             * files); the kernel then caches the mapped pages only, writes them back
             * through us (paced) and still sends every read(2)/write(2) here. */
            if (init->flags & FUSE_INIT_EXT &&
                kernel_flags2 & (uint32_t)(FUSE_DIRECT_IO_ALLOW_MMAP >> 32)) {
                init->flags2 |= (uint32_t)(FUSE_DIRECT_IO_ALLOW_MMAP >> 32);
                atomic_store(&mmap_allowed, 1);
            }
        } else if ((opcode == FUSE_OPEN || opcode == FUSE_CREATE) &&
                   iov[1].iov_len >= sizeof(struct fuse_open_out)) {
            /* Without this flag the kernel serialises all direct writes to one inode:
             * ranks writing one shared file at different offsets would queue in the
             * kernel, not here.  (Writes past the end of file stay serialised.) */
            struct fuse_open_out *o =
                (void *)((char *)iov[1].iov_base + iov[1].iov_len - sizeof *o);
            if (o->open_flags & FOPEN_DIRECT_IO)
                o->open_flags |= FOPEN_PARALLEL_DIRECT_WRITES;
        }
    }
    return writev(fd, iov, count);
}

/* ---- start and stop -------------------------------------------------------------- */

static struct fuse_session *se;
static char *mountpoint;
static pthread_t main_thread;
static atomic_int loop_done, stopped_by;

static void on_wake(int sig)
{
    (void)sig; /* only interrupts the session loop's sem_wait */
}

/* SIGTERM/SIGINT/SIGHUP: unmount (lazily: clients that still hold files keep them until
 * the daemon is gone) while the loop still answers the kernel, then stop the loop. */
static void *signal_thread(void *arg)
{
    sigset_t *set = arg;
    int sig;
    while (sigwait(set, &sig))
        ;
    atomic_store(&stopped_by, sig);
    umount2(mountpoint, MNT_DETACH);
    fuse_session_exit(se);
    /* The loop waits on a semaphore that only a signal interrupts; repeat in case the
     * first one came before it started waiting. */
    while (!atomic_load(&loop_done)) {
        pthread_kill(main_thread, SIGUSR1);
        struct timespec t = {0, 100 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    return NULL;
}

static void die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "tio-pfs: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage);
    exit(2);
}

static double parse_bps(const char *opt, const char *s)
{
    uint64_t b;
    double r;
    if (tio_parse_bytes(s, &b) == 0 && b > 0)
        return (double)b;
    if (tio_parse_rate(s, &r) == 0 && r > 0) /* "20MB/s" as tierio writes rates */
        return r;
    fprintf(stderr, "tio-pfs: %s: '%s' is not a positive number of bytes per second\n%s",
            opt, s, usage);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *pos[2] = {0};
    int npos = 0, foreground = 0;
    double wbps = 0, rbps = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        char name[32];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--foreground")) {
            foreground = 1;
            continue;
        }
        if (strncmp(a, "--", 2) || !a[2]) {
            if (npos == 2)
                die_usage("unexpected argument '%s'", a);
            pos[npos++] = a;
            continue;
        }
        /* --opt VALUE or --opt=VALUE */
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        if (len >= sizeof name)
            die_usage("unknown option '%s'", a);
        memcpy(name, a, len);
        name[len] = '\0';
        if (strcmp(name, "--write-bps") && strcmp(name, "--read-bps") &&
            strcmp(name, "--latency") && strcmp(name, "--ready-fd"))
            die_usage("unknown option '%s'", a);
        if (eq)
            v = eq + 1;
        else if (i + 1 < argc)
            v = argv[++i];
        else
            die_usage("%s needs a value", name);
        if (!strcmp(name, "--write-bps")) {
            wbps = parse_bps(name, v);
        } else if (!strcmp(name, "--read-bps")) {
            rbps = parse_bps(name, v);
        } else if (!strcmp(name, "--latency")) {
            if (tio_parse_time(v, &latency))
                die_usage("--latency: '%s' is not a time (0.005, 5ms, 200us)", v);
        } else {
            char *end;
            errno = 0;
            long fd = strtol(v, &end, 10);
            if (errno || *end || end == v || fd < 0 || fd > INT_MAX ||
                fcntl((int)fd, F_GETFD) == -1)
                die_usage("--ready-fd: '%s' is not an open file descriptor", v);
            ready_fd = (int)fd;
        }
    }
    if (npos != 2)
        die_usage("%s", "BACKING_DIR and MOUNTPOINT are required");
    struct stat st;
    if (stat(pos[0], &st) == -1 || !S_ISDIR(st.st_mode))
        die_usage("backing directory '%s' is not a directory", pos[0]);
    if (stat(pos[1], &st) == -1 || !S_ISDIR(st.st_mode))
        die_usage("mount point '%s' is not a directory", pos[1]);
    if (geteuid() != 0) {
        fprintf(stderr, "tio-pfs: must run as root (it mounts /dev/fuse itself)\n");
        return 2;
    }
    char *backing = realpath(pos[0], NULL);
    mountpoint = realpath(pos[1], NULL);
    if (!backing || !mountpoint) {
        perror("tio-pfs: realpath");
        return 1;
    }
    bucket_init(&wr, wbps);
    bucket_init(&rd, rbps);

    /* Background by default: the parent returns once the mount answers (or failed). */
    if (!foreground) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) == -1) {
            perror("tio-pfs: pipe");
            return 1;
        }
        pid_t pid = fork();
        if (pid == -1) {
            perror("tio-pfs: fork");
            return 1;
        }
        if (pid > 0) {
            char c;
            close(p[1]);
            return read(p[0], &c, 1) == 1 ? 0 : 1; /* the child said why on stderr */
        }
        close(p[0]);
        daemon_pipe = p[1];
        setsid();
        int null = open("/dev/null", O_RDWR);
        if (null != -1) {
            dup2(null, 0);
            dup2(null, 1);
            if (null > 2)
                close(null);
        }
    }
    if (chdir("/") == -1) {
        /* not needed for anything but not pinning the caller's directory */
    }
    umask(0); /* the kernel already applied the client's umask to the modes we get */

    root.fd = open(backing, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root.fd == -1) {
        fprintf(stderr, "tio-pfs: %s: %s\n", backing, strerror(errno));
        return 1;
    }

    /* Signals: one thread takes the stopping ones; SIGUSR1 wakes the loop. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_wake}; /* no SA_RESTART */
    sigaction(SIGUSR1, &sa, NULL);
    main_thread = pthread_self();

    char *fargv[] = {argv[0], NULL};
    struct fuse_args fargs = FUSE_ARGS_INIT(1, fargv);
    se = fuse_session_new(&fargs, &ops, sizeof ops, NULL);
    if (!se) {
        fprintf(stderr, "tio-pfs: fuse_session_new failed\n");
        return 1;
    }
    int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fd == -1) {
        fprintf(stderr, "tio-pfs: /dev/fuse: %s\n", strerror(errno));
        return 1;
    }
    char opts[160];
    snprintf(opts, sizeof opts,
             "fd=%d,rootmode=40000,user_id=%u,group_id=%u,default_permissions,allow_other",
             fd, (unsigned)getuid(), (unsigned)getgid());
    if (mount(backing, mountpoint, "fuse.tio-pfs", MS_NOSUID | MS_NODEV, opts) == -1) {
        fprintf(stderr, "tio-pfs: mount on %s: %s\n", mountpoint, strerror(errno));
        return 1;
    }
    static const struct fuse_custom_io io = {.read = io_read, .writev = io_writev};
    if (fuse_session_custom_io(se, &io, fd)) {
        fprintf(stderr, "tio-pfs: fuse_session_custom_io failed\n");
        umount2(mountpoint, MNT_DETACH);
        return 1;
    }
    pthread_t sig_tid;
    pthread_create(&sig_tid, NULL, signal_thread, &stop);
    pthread_detach(sig_tid);

    struct fuse_loop_config *cfg = fuse_loop_cfg_create();
    fuse_loop_cfg_set_max_threads(cfg, MAX_THREADS);
    int rc = fuse_session_loop_mt(se, cfg);
    atomic_store(&loop_done, 1);
    fuse_loop_cfg_destroy(cfg);
    if (!atomic_load(&stopped_by))
        rc = rc == -ENODEV ? 0 : rc; /* unmounted from outside: the normal end */
    else
        rc = 0;

    fprintf(stderr,
            "tio-pfs: %s: read %" PRIu64 " B in %" PRIu64 " requests, wrote %" PRIu64
            " B in %" PRIu64 " requests, %" PRIu64 " requests in all; waited %.3f s for "
            "read tokens, %.3f s for write tokens%s\n",
            mountpoint, rd.bytes, rd.requests, wr.bytes, wr.requests,
            (uint64_t)atomic_load(&all_requests), rd.waited, wr.waited,
            atomic_load(&mmap_allowed) ? "" : " (shared mmap not offered by the kernel)");
    fuse_session_destroy(se); /* closes /dev/fuse: clients left see ENOTCONN */
    return rc ? 1 : 0;
}
