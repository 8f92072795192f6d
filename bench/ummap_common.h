/* Helpers shared by the benchmarks of the ummap engine (bench/ummap_*.c), on top of
 * bench_common.h (errors, options, JSON lines, medians).
 *
 * The benchmarks compare four ways of keeping a byte range of a file in a program:
 *   memory  malloc'd memory, no file at all (the upper bound; nothing is durable)
 *   ummap   the user-level mapping of ummap.h (userfaultfd, segments, umsync)
 *   mmap    the kernel's MAP_SHARED mapping, made durable with msync(MS_SYNC)
 *   posix   no mapping: pread/pwrite at the offsets, made durable with fdatasync
 * A um_region hides which one is in use behind read / write / sync calls, so that every
 * benchmark runs exactly the same access sequence over the four. Programs that touch the
 * data with loads and stores (PRK, STREAM) use um_region_ptr() and, for posix, keep the
 * data in memory and write all of it at every sync (what a program without a mapping
 * does for a checkpoint).
 *
 * Include after defining _GNU_SOURCE (the benchmarks do so on their first line). */
#ifndef TIO_BENCH_UMMAP_COMMON_H
#define TIO_BENCH_UMMAP_COMMON_H

#include "bench_common.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include <ummap.h>

/* ---------------------------------------------------------------------------------------- */
/* Time, errors                                                                             */
/* ---------------------------------------------------------------------------------------- */

static inline double um_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ummap.h calls return 0 or an errno value (errno itself is untouched). */
#define UM_CHECK(call)                                                                   \
    do {                                                                                 \
        int um_rc_ = (call);                                                             \
        if (um_rc_ != 0) {                                                               \
            bench_die("%s:%d: %s failed: %s", __FILE__, __LINE__, #call, strerror(um_rc_)); \
        }                                                                                \
    } while (0)

/* ---------------------------------------------------------------------------------------- */
/* Methods                                                                                  */
/* ---------------------------------------------------------------------------------------- */

enum um_method { UM_MEMORY = 0, UM_UMMAP = 1, UM_MMAP = 2, UM_POSIX = 3 };
#define UM_NMETHODS 4

static inline const char *um_method_name(int m)
{
    static const char *const names[UM_NMETHODS] = {"memory", "ummap", "mmap", "posix"};
    return (m >= 0 && m < UM_NMETHODS) ? names[m] : "?";
}

/* Comma list of method names -> mask (bit m = method m). */
static inline unsigned um_parse_methods(const char *opt, const char *list)
{
    unsigned mask = 0;
    const char *p = list;
    while (*p != '\0') {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (int m = 0; m < UM_NMETHODS; m++) {
            const char *name = um_method_name(m);
            if (strlen(name) == n && strncmp(p, name, n) == 0) {
                mask |= 1u << m;
                found = 1;
            }
        }
        if (!found) {
            bench_die("option %s: unknown method '%.*s' (memory, ummap, mmap, posix)", opt,
                      (int)n, p);
        }
        p += n + (p[n] == ',');
    }
    if (mask == 0) {
        bench_die("option %s: empty list of methods", opt);
    }
    return mask;
}

/* A power of two at least the page size (the engine's rule for seg_size). */
static inline size_t um_parse_segsize(const char *opt, const char *s)
{
    unsigned long long v = bench_parse_u64(opt, s);
    long page = sysconf(_SC_PAGESIZE);
    if (v < (unsigned long long)page || (v & (v - 1)) != 0) {
        bench_die("option %s: %s is not a power of two of at least %ld bytes", opt, s, page);
    }
    return (size_t)v;
}

/* Comma list of I/O driver names (-D) into drivers[0..max): pointers into list, which
 * strtok_r cuts up. The names are not checked here: the engine says which it refuses.
 * Returns how many there are (0 for a list of commas only). */
static inline int um_parse_drivers(const char *opt, char *list, char **drivers, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == max) {
            bench_die("%s: at most %d drivers", opt, max);
        }
        drivers[n++] = t;
    }
    return n;
}

/* ---------------------------------------------------------------------------------------- */
/* Files                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* Open (create) path read-write; with size != 0 give it that size (ftruncate: sparse). */
static inline int um_open_file(const char *path, off_t size, bool truncate)
{
    int fd = open(path, O_RDWR | O_CREAT | (truncate ? O_TRUNC : 0) | O_CLOEXEC, 0600);
    SYS_CHECK(fd >= 0, path);
    if (size > 0) {
        struct stat st;
        SYS_CHECK(fstat(fd, &st) == 0, path);
        if (st.st_size < size) {
            SYS_CHECK(ftruncate(fd, size) == 0, path);
        }
    }
    return fd;
}

/* Write everything or die (pwrite may write less than asked). */
static inline void um_pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = pwrite(fd, p, len, off);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        SYS_CHECK(w > 0, "pwrite");
        p += w, len -= (size_t)w, off += w;
    }
}

static inline void um_pread_all(int fd, void *buf, size_t len, off_t off)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = pread(fd, p, len, off);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        SYS_CHECK(r > 0, "pread (file shorter than expected?)");
        p += r, len -= (size_t)r, off += r;
    }
}

/* Make [off, off+len) durable and drop it from the page cache, so that the next reader
 * reads from storage (the disk of this machine kind is the host's cache: "storage" here
 * means "not this VM's page cache"). */
static inline void um_drop_cache(int fd, off_t off, off_t len)
{
    SYS_CHECK(fdatasync(fd) == 0, "fdatasync before dropping the page cache");
    int rc = posix_fadvise(fd, off, len, POSIX_FADV_DONTNEED);
    if (rc != 0) {
        bench_die("posix_fadvise(DONTNEED): %s", strerror(rc));
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Deterministic data                                                                       */
/* ---------------------------------------------------------------------------------------- */

/* The 64-bit word at byte offset `off` (a multiple of 8) of data set `tag`. */
static inline uint64_t um_word(uint64_t tag, uint64_t off)
{
    return bench_mix64((tag << 40) ^ (off >> 3));
}

static inline void um_fill(void *buf, size_t len, uint64_t tag, uint64_t off)
{
    uint64_t *w = buf;
    for (size_t i = 0; i < len / 8; i++) {
        w[i] = um_word(tag, off + 8 * i);
    }
}

/* Index of the first word of buf that differs from um_fill(tag, off), or -1. */
static inline long long um_check(const void *buf, size_t len, uint64_t tag, uint64_t off)
{
    const uint64_t *w = buf;
    for (size_t i = 0; i < len / 8; i++) {
        if (w[i] != um_word(tag, off + 8 * i)) {
            return (long long)i;
        }
    }
    return -1;
}

/* Small xorshift PRNG (per process, seeded): reproducible pseudo-random orders. */
static inline uint64_t um_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* A pseudo-random permutation of 0..n-1 (Fisher-Yates). */
static inline size_t *um_permutation(size_t n, uint64_t seed)
{
    size_t *p = bench_malloc(n * sizeof *p);
    uint64_t s = bench_mix64(seed) | 1;
    for (size_t i = 0; i < n; i++) {
        p[i] = i;
    }
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(um_rand(&s) % i);
        size_t t = p[i - 1];
        p[i - 1] = p[j];
        p[j] = t;
    }
    return p;
}

/* ---------------------------------------------------------------------------------------- */
/* Regions: one byte range of a file, kept by one of the four methods                       */
/* ---------------------------------------------------------------------------------------- */

typedef struct {
    size_t seg_size;     /* ummap: segment size */
    int read_file;       /* ummap: load segments from the file on first access */
    int ptype;           /* ummap: evict policy */
    int bulk_sync;       /* ummap: -1 environment, 0 individual, 1 coalesced */
    const char *driver;  /* ummap: NULL (environment) | "posix" | "uring" */
    bool load;           /* posix with um_region_ptr: read the file into memory at open */
} um_region_opts;

#define UM_REGION_OPTS_INIT {1u << 20, 1, UMMAP_PTYPE_FIFO, -1, NULL, false}

typedef struct {
    enum um_method method;
    size_t size;
    int fd;       /* -1 for memory */
    off_t offset; /* of the region in the file */
    char *base;   /* memory, ummap, mmap: the bytes; posix: memory copy if asked for */
} um_region;

/* Map / allocate size bytes of fd at offset with method m. fd is ignored for memory; it
 * stays owned by the caller (ummap duplicates it). The file must already be large enough. */
static inline void um_region_open(um_region *r, enum um_method m, int fd, off_t offset,
                                  size_t size, const um_region_opts *o, bool with_memory)
{
    memset(r, 0, sizeof *r);
    r->method = m, r->size = size, r->fd = fd, r->offset = offset;
    void *p = NULL;
    switch (m) {
    case UM_MEMORY:
        /* fresh anonymous pages every time (malloc could hand back pages already touched,
         * which would make the baseline depend on what ran before) */
        r->fd = -1;
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        SYS_CHECK(p != MAP_FAILED, "mmap of anonymous memory");
        r->base = p;
        break;
    case UM_UMMAP: {
        tio_ummap_opts_t uo = TIO_UMMAP_OPTS_INIT;
        uo.size = size;
        uo.seg_size = o->seg_size;
        uo.prot = PROT_READ | PROT_WRITE;
        uo.fd = fd;
        uo.offset = offset;
        uo.flush_interval = UMMAP_NO_FLUSH;
        uo.read_file = o->read_file;
        uo.ptype = o->ptype;
        uo.driver = o->driver;
        uo.bulk_sync = o->bulk_sync;
        UM_CHECK(tio_ummap_open(&uo, &p));
        r->base = p;
        break;
    }
    case UM_MMAP: {
        /* mmap needs a page-aligned file offset: map from the page below and skip. */
        long page = sysconf(_SC_PAGESIZE);
        off_t skip = offset % page;
        p = mmap(NULL, size + (size_t)skip, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                 offset - skip);
        SYS_CHECK(p != MAP_FAILED, "mmap of the benchmark file");
        r->base = (char *)p + skip;
        break;
    }
    case UM_POSIX:
        if (with_memory) {
            r->base = bench_malloc(size);
            if (o->load) {
                um_pread_all(fd, r->base, size, offset);
            }
        }
        break;
    }
}

/* The region's bytes for loads and stores (posix: the memory copy). */
static inline char *um_region_ptr(const um_region *r)
{
    return r->base;
}

static inline void um_region_write(um_region *r, size_t off, const void *src, size_t len)
{
    if (r->method == UM_POSIX) {
        um_pwrite_all(r->fd, src, len, r->offset + (off_t)off);
    } else {
        memcpy(r->base + off, src, len);
    }
}

static inline void um_region_read(um_region *r, size_t off, void *dst, size_t len)
{
    if (r->method == UM_POSIX) {
        um_pread_all(r->fd, dst, len, r->offset + (off_t)off);
    } else {
        memcpy(dst, r->base + off, len);
    }
}

/* Make everything written so far durable: umsync / msync(MS_SYNC) / (posix with a memory
 * copy: pwrite of the whole copy, then) fdatasync. memory: nothing to do. */
static inline void um_region_sync(um_region *r)
{
    switch (r->method) {
    case UM_MEMORY:
        break;
    case UM_UMMAP:
        UM_CHECK(umsync(r->base, 0));
        break;
    case UM_MMAP: {
        long page = sysconf(_SC_PAGESIZE);
        uintptr_t a = (uintptr_t)r->base, skip = a % (uintptr_t)page;
        SYS_CHECK(msync((void *)(a - skip), r->size + skip, MS_SYNC) == 0, "msync");
        break;
    }
    case UM_POSIX:
        if (r->base != NULL) {
            um_pwrite_all(r->fd, r->base, r->size, r->offset);
        }
        SYS_CHECK(fdatasync(r->fd) == 0, "fdatasync");
        break;
    }
}

/* Release without writing back anything not yet synced. */
static inline void um_region_close(um_region *r)
{
    switch (r->method) {
    case UM_MEMORY:
        SYS_CHECK(munmap(r->base, r->size) == 0, "munmap");
        break;
    case UM_UMMAP:
        UM_CHECK(umunmap(r->base, 0));
        break;
    case UM_MMAP: {
        long page = sysconf(_SC_PAGESIZE);
        uintptr_t a = (uintptr_t)r->base, skip = a % (uintptr_t)page;
        SYS_CHECK(munmap((void *)(a - skip), r->size + skip) == 0, "munmap");
        break;
    }
    case UM_POSIX:
        free(r->base);
        break;
    }
    r->base = NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* JSON fields shared by the MPI benchmarks (ummap_ior, ummap_prk)                          */
/* ---------------------------------------------------------------------------------------- */

/* The ummap rows' engine settings: segment size and I/O driver (NULL: "default", i.e.
 * UMMAP_DRIVER or posix). */
static inline void um_json_engine(bench_json *j, size_t seg_size, const char *driver)
{
    bench_json_int(j, "seg_size", (long long)seg_size);
    bench_json_str(j, "driver", driver != NULL ? driver : "default");
}

/* The tail of a row of method m, compared with the kernel's mmap (the seed's comparison)
 * and with plain memory measured in the same run: baseline ("mmap"; null for mmap itself
 * or when it did not run), ratio = mmap seconds / seconds, ratio_memory = memory seconds /
 * seconds (null where the other did not run), verified. sec[k] is read only where bit k of
 * have is set. */
static inline void um_json_vs_mmap(bench_json *j, int m, const double *sec, unsigned have,
                                   bool verified)
{
    bool base = m != UM_MMAP && (have & (1u << UM_MMAP));
    bool mem = m != UM_MEMORY && (have & (1u << UM_MEMORY));
    bench_json_str(j, "baseline", base ? "mmap" : NULL);
    bench_json_num(j, "ratio", base ? sec[UM_MMAP] / sec[m] : NAN);
    bench_json_num(j, "ratio_memory", mem ? sec[UM_MEMORY] / sec[m] : NAN);
    bench_json_bool(j, "verified", verified);
}

/* ---------------------------------------------------------------------------------------- */
/* Interruption of the programs that fork ummap processes (ummap_ooc, ummap_memmode)         */
/* ---------------------------------------------------------------------------------------- */

/* Such a program must leave nothing behind when it is interrupted: no child, file, cgroup
 * or node-group object. Each has a cleanup() of its own (at exit, and after a signal) and
 * a signal handler that only does what is async-signal-safe (stop its children and set
 * um_signal); the run checks um_interrupted() where it can stop. A child inherits the exit
 * handler, so cleanup() does nothing unless getpid() == um_parent. */
static volatile sig_atomic_t um_signal __attribute__((unused)); /* 0: not interrupted */
static pid_t um_parent __attribute__((unused));                  /* owns what is undone */
static void (*um_cleanup)(void) __attribute__((unused));

/* cleanup at exit; on_signal for SIGINT, SIGTERM and SIGHUP, without SA_RESTART so that a
 * waitpid returns and the run stops. */
static inline void um_catch_interrupts(void (*cleanup)(void), void (*on_signal)(int))
{
    um_parent = getpid();
    um_cleanup = cleanup;
    atexit(cleanup);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* In a forked child: the default actions again for the signals um_catch_interrupts
 * catches (its handlers clean up for the parent, not for a child). */
static inline void um_child_signals(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
}

/* After a signal: undo what the run made, then die of that signal (as the caller of the
 * program expects from an interrupted one). Nothing when no signal came. */
static inline void um_interrupted(void)
{
    if (um_signal != 0) {
        int sig = um_signal;
        um_cleanup();
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Node groups of the engine's memory budget (docs/ummap_memory.md)                          */
/* ---------------------------------------------------------------------------------------- */

/* The programs that fork ummap processes give each group its own UMMAP_NODE_KEY (letters,
 * digits, '-' only, at most 40 characters, so that it appears unchanged in the object's
 * name). When every member of a group is killed — the benchmark interrupted — nobody
 * removes the group's /dev/shm object (the doc says so); this does, after the members are
 * gone: /dev/shm/tierio-memnode-<uid>-<hash>-<key>. */
static inline void um_remove_node_objects(const char *key)
{
    char prefix[64], suffix[160];
    snprintf(prefix, sizeof prefix, "tierio-memnode-%u-", (unsigned)getuid());
    snprintf(suffix, sizeof suffix, "-%s", key);
    DIR *d = opendir("/dev/shm");
    if (d == NULL) {
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), sl = strlen(suffix);
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && n > sl &&
            strcmp(e->d_name + n - sl, suffix) == 0) {
            char path[512];
            snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
            if (unlink(path) == 0) {
                fprintf(stderr, "# removed %s, left by the killed processes\n", path);
            }
        }
    }
    closedir(d);
}

/* ---------------------------------------------------------------------------------------- */
/* Process figures for the analysis (peak RSS, faults)                                       */
/* ---------------------------------------------------------------------------------------- */

/* VmHWM / VmRSS of this process in bytes (0 when /proc says nothing). */
static inline size_t um_proc_status_bytes(const char *field)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (f == NULL) {
        return 0;
    }
    char line[256];
    size_t n = strlen(field);
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            sscanf(line + n + 1, "%llu", &kb);
            break;
        }
    }
    fclose(f);
    return (size_t)kb * 1024;
}

/* Minor + major page faults of this process so far. */
static inline long um_faults(long *major)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (major != NULL) {
        *major = ru.ru_majflt;
    }
    return ru.ru_minflt + ru.ru_majflt;
}

#endif /* TIO_BENCH_UMMAP_COMMON_H */
