/* Helpers for the tests of the node memory budget (src/ummap/memnode.c): processes forked
 * as members of a group, driven step by step over pipes (never by sleeping), and checks of
 * what is in /dev/shm. Builds on the harness through tests/unit/check.h (a failed check
 * exits 1; in a child that is the child's exit status, which the parent checks). */
#ifndef TIO_TEST_MNTEST_H
#define TIO_TEST_MNTEST_H

#include "../unit/check.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "blocked.h"
#include "ummap/memnode.h"
#include "ummap/memnode_inspect.h"

#define MiB ((size_t)1 << 20)
#define MN_STEP_TIMEOUT_MS 20000

/* ---- environment ---- */

/* Nothing of a launcher or of an earlier case may leak into a case. */
static inline void mn_clear_env(void)
{
    static const char *vars[] = {"UMMAP_NODE_KEY", "UMMAP_MEM_LIMIT", "UMMAP_MEM_FACTOR",
                                 "UMMAP_MEMCONFIG", "UMMAP_NODE_PROCS", "PMIX_NAMESPACE",
                                 "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMI_RANK",
                                 "PMI_FD", "HYDI_CONTROL_FD", "SLURM_JOB_ID", "SLURM_STEP_ID"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
}

/* A group key of its own for this run and case: tests running at the same time do not meet. */
static inline const char *mn_key(const char *tag)
{
    static char k[8][128];
    static int next;
    char *p = k[next++ % 8];
    snprintf(p, sizeof k[0], "memnode-test-%s-%ld", tag, (long)getpid());
    return p;
}

static inline void mn_env(const char *key, const char *limit, const char *mode,
                          const char *procs)
{
    mn_clear_env();
    if (key)
        setenv("UMMAP_NODE_KEY", key, 1);
    if (limit)
        setenv("UMMAP_MEM_LIMIT", limit, 1);
    if (mode)
        setenv("UMMAP_MEMCONFIG", mode, 1);
    if (procs)
        setenv("UMMAP_NODE_PROCS", procs, 1);
}

/* ---- /dev/shm ---- */

static inline int mn_shm_exists(const char *name)
{
    char p[256];
    snprintf(p, sizeof p, "/dev/shm%s", name);
    return access(p, F_OK) == 0;
}

/* ---- what the library logs ---- */

/* Send stderr to a memory file until mn_stderr_end, which returns what was written. */
static inline int mn_stderr_begin(void)
{
    fflush(stderr);
    int saved = dup(2), mem = memfd_create("stderr", MFD_CLOEXEC);
    CHECK_OK(saved);
    CHECK_OK(mem);
    CHECK_OK(dup2(mem, 2));
    close(mem);
    return saved;
}

static inline const char *mn_stderr_end(int saved)
{
    static char buf[8192];
    fflush(stderr);
    ssize_t n = pread(2, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = 0;
    CHECK_OK(dup2(saved, 2));
    close(saved);
    return buf;
}

/* ---- forked members, driven over pipes ---- */

struct mn_kid {
    pid_t pid;
    int to, from; /* our ends: write to the child, read from it */
};

/* Messages are 64-bit values. */
static inline void mn_send(int fd, uint64_t v)
{
    CHECK(write(fd, &v, sizeof v) == (ssize_t)sizeof v);
}

static inline uint64_t mn_recv(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    int r;
    do
        r = poll(&p, 1, MN_STEP_TIMEOUT_MS);
    while (r < 0 && errno == EINTR);
    if (r == 0)
        FAIL_NOW("process %ld: no message within %d ms", (long)getpid(), MN_STEP_TIMEOUT_MS);
    uint64_t v;
    CHECK(read(fd, &v, sizeof v) == (ssize_t)sizeof v);
    return v;
}

/* Fork a child running fn(in, out); it exits 0 when fn returns. The child dies with us. */
static inline struct mn_kid mn_spawn(void (*fn)(int in, int out))
{
    int down[2], up[2];
    CHECK_OK(pipe(down));
    CHECK_OK(pipe(up));
    fflush(NULL);
    pid_t pid = tt_fork(60); /* a child that hangs fails instead of outliving the test */
    if (pid == 0) {
        close(down[1]);
        close(up[0]);
        fn(down[0], up[1]);
        fflush(NULL);
        _exit(0);
    }
    close(down[0]);
    close(up[1]);
    return (struct mn_kid){pid, down[1], up[0]};
}

/* Wait for the child and check that it exited 0. */
static inline void mn_reap_ok(struct mn_kid *k)
{
    int st;
    CHECK(waitpid(k->pid, &st, 0) == k->pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        FAIL_NOW("child %ld failed (status 0x%x)", (long)k->pid, st);
    close(k->to);
    close(k->from);
}

/* Kill the child with SIGKILL and wait until it is gone (its descriptors are closed by
 * the kernel before waitpid returns, so its locks are released by then). */
static inline void mn_kill(struct mn_kid *k)
{
    CHECK_OK(kill(k->pid, SIGKILL));
    int st;
    CHECK(waitpid(k->pid, &st, 0) == k->pid);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    close(k->to);
    close(k->from);
}

/* Wait until thread tid of pid sleeps in futex(): then a wake-up that follows can only
 * have come through the futex word. */
static inline void mn_wait_blocked(pid_t pid, pid_t tid)
{
    if (mn_wait_futex(pid, tid, MN_STEP_TIMEOUT_MS) < 0)
        FAIL_NOW("thread %ld never blocked in futex()", (long)tid);
}

static inline double mn_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A thread blocked in tio_memnode_reclaim_wait, and what it returned. */
struct mn_waiter {
    pthread_t th;
    tio_memnode_t *m;
    unsigned timeout_ms;
    _Atomic pid_t tid;
    size_t got;
    double seconds;
};

static inline void *mn_waiter_main(void *arg)
{
    struct mn_waiter *w = arg;
    w->tid = (pid_t)syscall(SYS_gettid);
    double t0 = mn_now();
    w->got = tio_memnode_reclaim_wait(w->m, w->timeout_ms);
    w->seconds = mn_now() - t0;
    return NULL;
}

/* Start a waiter and return once it sleeps in the futex. */
static inline void mn_waiter_start(struct mn_waiter *w, tio_memnode_t *m, unsigned timeout_ms)
{
    memset(w, 0, sizeof *w);
    w->m = m;
    w->timeout_ms = timeout_ms;
    CHECK(pthread_create(&w->th, NULL, mn_waiter_main, w) == 0);
    while (!w->tid)
        sched_yield();
    mn_wait_blocked(getpid(), w->tid);
}

/* Join the waiter; it must have been woken, not timed out (well before its timeout). */
static inline size_t mn_waiter_end(struct mn_waiter *w)
{
    CHECK(pthread_join(w->th, NULL) == 0);
    if (w->seconds >= w->timeout_ms / 2000.0)
        FAIL_NOW("reclaim_wait returned after %.3f s of its %u ms: not woken", w->seconds,
                 w->timeout_ms);
    return w->got;
}

#endif
