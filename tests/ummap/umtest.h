/* Helpers shared by the single-process tests of the ummap engine (tests/ummap): a seeded
 * PRNG, what a process holds (threads,
 * resident bytes of a range, /dev/shm entries), page-cache dirtiness of a file range and
 * deadlines. Checks, files and child processes with a time limit (tt_fork, tt_in_child)
 * are the harness's (tests/common/harness.h, through tests/unit/check.h). */
#ifndef TIO_TEST_UMTEST_H
#define TIO_TEST_UMTEST_H

#include "../common/page_flags.h"
#include "../unit/check.h"

#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <ummap.h>

/* ---- a seeded PRNG (splitmix64): the same seed replays the same run ---- */

static inline uint64_t um_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n) (n > 0; the tiny modulo bias does not matter here). */
static inline uint64_t um_below(uint64_t *s, uint64_t n) { return um_rand(s) % n; }

static inline void um_fill_rand(void *p, size_t n, uint64_t *s)
{
    unsigned char *c = p;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = um_rand(s);
        memcpy(c + i, &v, n - i < 8 ? n - i : 8);
    }
}

/* A seed from argv ("--seed N") or the environment (TIERIO_TEST_SEED), else fresh. */
static inline uint64_t um_seed(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--seed"))
            return strtoull(argv[i + 1], NULL, 0);
    const char *e = getenv("TIERIO_TEST_SEED");
    if (e && *e)
        return strtoull(e, NULL, 0);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid() << 40;
}

static inline size_t um_page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* ---- what the process holds ---- */

static inline int um_threads(void) { return tc_count_entries("/proc/self/task"); }
static inline int um_fds(void) { return tc_count_entries("/proc/self/fd"); }

/* Resident bytes (Rss of /proc/self/smaps) of the mappings overlapping [p, p+len),
 * counted only for the part inside the range when a mapping is larger. */
static inline size_t um_rss(const void *p, size_t len)
{
    FILE *f = fopen("/proc/self/smaps", "re");
    char line[1024];
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    int in = 0;
    size_t total = 0;
    CHECK(f != NULL);
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b, kb;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = a < hi && lo < b;
            continue;
        }
        if (in && sscanf(line, "Rss: %lu kB", &kb) == 1)
            total += kb * 1024;
    }
    fclose(f);
    return total;
}

static inline void um_stats(void *addr, tio_ummap_stats_t *st)
{
    memset(st, 0xA5, sizeof *st);
    CHECK_RC(tio_ummap_stats(addr, st), 0);
}

/* This test's own node-memory group: processes of concurrent tests must not share one
 * UMMAP_MEM_LIMIT (docs/ummap_memory.md: UMMAP_NODE_KEY, UMMAP_NODE_PROCS). */
static inline void um_private_node(const char *tag, int procs)
{
    char key[128], n[16];
    snprintf(key, sizeof key, "tiotest-%s-%ld", tag, (long)getpid());
    snprintf(n, sizeof n, "%d", procs);
    setenv("UMMAP_NODE_KEY", key, 1);
    setenv("UMMAP_NODE_PROCS", n, 1);
}

/* A limit of `limit` bytes for this process's mappings (UMMAP_MEM_LIMIT), kept statically
 * (UMMAP_MEMCONFIG=static: no borrowing from the node), in a node group of its own: the
 * engine evicts exactly where the test expects it. Before the first ummap call. */
static inline void um_static_limit(const char *tag, size_t limit)
{
    char v[32];
    snprintf(v, sizeof v, "%zu", limit);
    setenv("UMMAP_MEM_LIMIT", v, 1);
    setenv("UMMAP_MEMCONFIG", "static", 1);
    um_private_node(tag, 1);
}

/* ---- files ---- */

static inline int um_open(const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC, 0600);
    if (fd < 0)
        FAIL_NOW("open %s: %s", path, strerror(errno));
    return fd;
}

/* The range must be durable (tests/common/page_flags.h: a content check cannot tell); -1
 * (cannot tell, not root) is said once and accepted. */
#define CHECK_CLEAN(path, off, len)                                                   \
    do {                                                                              \
        long dp_ = tc_dirty_pages((path), (uint64_t)(off), (len), NULL, NULL);        \
        if (dp_ < 0) {                                                                \
            static int said_;                                                         \
            if (!said_++)                                                             \
                printf("note: cannot read page flags (needs root): durability of "    \
                       "written data not checked\n");                                 \
        } else if (dp_ > 0) {                                                         \
            FAIL_NOW("%ld page(s) of %s bytes %lld..%lld are still dirty in the page "  \
                     "cache: not durable", dp_, (path), (long long)(off),             \
                     (long long)(off) + (long long)(len));                            \
        }                                                                             \
    } while (0)

/* Deadlines for waiting on the engine's own threads (an I/O thread pass, a give-back),
 * which act asynchronously: the caller polls a condition it checks afterwards, and a
 * timeout is a failure it reports. Usage:
 *     struct timespec dl = um_deadline(5000);
 *     while (!cond && !um_expired(&dl)) ;
 *     CHECK(cond); */
static inline struct timespec um_deadline(long ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    return t;
}

/* Waits 2 ms, then 1 if the deadline has passed. */
static inline int um_expired(const struct timespec *dl)
{
    struct timespec t;
    poll(NULL, 0, 2);
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec > dl->tv_sec || (t.tv_sec == dl->tv_sec && t.tv_nsec >= dl->tv_nsec);
}

#endif
