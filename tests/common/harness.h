/* The one test harness of the C tests: checks, the current case, temporary directories,
 * file helpers and child processes with a time limit. Every domain header
 * (tests/unit/check.h, tests/errors/errtest.h, tests/ummap/umtest.h, ...) includes it and
 * adds only what its domain needs. See tests/README.md for how to write a new C test.
 *
 * A failed check is fatal: it prints "[rank R: ]file:line: [case] what failed (values)"
 * on stderr and ends the process — exit(1) (temporary directories are removed by atexit),
 * or MPI_Abort once tests/common/harness_mpi.h has set tt_abort, so that a failure on one
 * rank cannot leave the others waiting in a collective.
 *
 * Header-only: each test program is one translation unit. */
#ifndef TIO_TEST_HARNESS_H
#define TIO_TEST_HARNESS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every helper is `static` and may go unused by a given test. */
#define TT_FN static __attribute__((unused))

/* The case being run, named in every failure message: CASE("what is checked"). */
static const char *tt_current_case __attribute__((unused)) = "";
#define CASE(name) (tt_current_case = (name))

/* Rank and size in MPI_COMM_WORLD once an MPI test has started (harness_mpi.h); -1 and 0
 * in a test without MPI, whose messages then name no rank. */
static int tt_rank = -1, tt_size __attribute__((unused));

/* How a failed check ends the process: NULL is exit(1). */
static void (*tt_abort)(void) __attribute__((unused));

TT_FN void tt_fail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
TT_FN void tt_fail_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    if (tt_rank >= 0)
        fprintf(stderr, "rank %d: ", tt_rank);
    fprintf(stderr, "%s:%d: [%s] ", file, line, tt_current_case);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    if (tt_abort)
        tt_abort();
    exit(1);
}

/* A small deterministic generator (xorshift64) for random cases that repeat run to run. */
TT_FN uint64_t tt_rand(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* Fatal failure with a printf-style message. */
#define FAIL_NOW(...) tt_fail_at(__FILE__, __LINE__, __VA_ARGS__)

#define CHECK(expr)                                                                   \
    do {                                                                              \
        if (!(expr))                                                                  \
            FAIL_NOW("check failed: %s", #expr);                                      \
    } while (0)

#define CHECK_EQ(a, b)                                                                \
    do {                                                                              \
        long long va_ = (long long)(a), vb_ = (long long)(b);                         \
        if (va_ != vb_)                                                               \
            FAIL_NOW("check failed: %s == %s (%lld != %lld)", #a, #b, va_, vb_);      \
    } while (0)

#define CHECK_LE(a, b)                                                                \
    do {                                                                              \
        long long va_ = (long long)(a), vb_ = (long long)(b);                         \
        if (va_ > vb_)                                                                \
            FAIL_NOW("check failed: %s <= %s (%lld > %lld)", #a, #b, va_, vb_);       \
    } while (0)

/* The string s contains sub. */
#define CHECK_HAS(s, sub)                                                             \
    do {                                                                              \
        const char *s_ = (s), *sub_ = (sub);                                          \
        if (!s_ || !strstr(s_, sub_))                                                 \
            FAIL_NOW("check failed: \"%s\" should contain \"%s\"", s_ ? s_ : "(null)", \
                     sub_);                                                           \
    } while (0)

/* A system call that must succeed (negative means failed, errno says why). */
#define CHECK_OK(call)                                                                \
    do {                                                                              \
        if ((call) < 0)                                                               \
            FAIL_NOW("%s failed: %s", #call, strerror(errno));                        \
    } while (0)

/* A call returning 0 or an errno value. */
#define CHECK_RC(call, want)                                                          \
    do {                                                                              \
        int rc_ = (call), w_ = (want);                                                \
        if (rc_ != w_)                                                                \
            FAIL_NOW("%s returned %d (%s), expected %d (%s)", #call, rc_,             \
                     strerror(rc_), w_, strerror(w_));                                \
    } while (0)

/* ---- bytes and files ---- */

/* First index where a and b differ, or -1. */
TT_FN long tt_first_diff(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return (long)i;
    return -1;
}

#define CHECK_BYTES(a, b, n)                                                          \
    do {                                                                              \
        long d_ = tt_first_diff((a), (b), (n));                                       \
        if (d_ >= 0)                                                                  \
            FAIL_NOW("check failed: %s and %s differ at byte %ld (0x%02x != 0x%02x)", \
                     #a, #b, d_, ((const unsigned char *)(a))[d_],                    \
                     ((const unsigned char *)(b))[d_]);                               \
    } while (0)

/* Read exactly n bytes at off of path (short read = zeros and a -1 return). */
TT_FN ssize_t tt_pread_file(const char *path, void *buf, size_t n, off_t off)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got < n) {
        memset((char *)buf + got, 0, n - got);
        return -1;
    }
    return (ssize_t)got;
}

TT_FN void tt_write_file(const char *path, const void *buf, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    CHECK_OK(fd);
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, (const char *)buf + done, n - done);
        CHECK_OK(w);
        done += (size_t)w;
    }
    close(fd);
}

/* Read the whole file at path (NULL when it cannot; *len its size). */
TT_FN char *tt_read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char *b = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (b && got < (size_t)st.st_size) {
        ssize_t r = pread(fd, b + got, (size_t)st.st_size - got, (off_t)got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (!b || got != (size_t)st.st_size) {
        free(b);
        return NULL;
    }
    b[got] = 0;
    *len = got;
    return b;
}

TT_FN off_t tt_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) < 0 ? -1 : st.st_size;
}

TT_FN int tt_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Compare n bytes of path at off with exp (a short file is a failure). */
#define CHECK_FILE(path, off, exp, n)                                                 \
    do {                                                                              \
        size_t n_ = (n);                                                              \
        unsigned char *b_ = malloc(n_ ? n_ : 1);                                      \
        CHECK(b_ != NULL);                                                            \
        if (tt_pread_file((path), b_, n_, (off)) != (ssize_t)n_)                      \
            FAIL_NOW("%s is shorter than %lld + %zu bytes (%lld)", (path),            \
                     (long long)(off), n_, (long long)tt_file_size(path));            \
        long d_ = tt_first_diff(b_, (exp), n_);                                       \
        if (d_ >= 0)                                                                  \
            FAIL_NOW("file %s differs at byte %lld (offset %ld into the range): "     \
                     "0x%02x, expected 0x%02x", (path), (long long)(off) + d_, d_,    \
                     b_[d_], ((const unsigned char *)(exp))[d_]);                     \
        free(b_);                                                                     \
    } while (0)

/* ---- temporary directories ---- */

static inline int tt_rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    chmod(p, 0700); /* permission tests leave read-only directories behind */
    if (remove(p) < 0 && errno != ENOENT)
        fprintf(stderr, "warning: cannot remove %s: %s\n", p, strerror(errno));
    return 0;
}

/* Remove dir and everything below it (not following symbolic links). */
TT_FN void tt_rmtree(const char *dir)
{
    nftw(dir, tt_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* $TIERIO_TEST_TMPDIR, where every test's files go (/tmp when unset). */
TT_FN const char *tt_tmproot(void)
{
    const char *root = getenv("TIERIO_TEST_TMPDIR");
    return root && *root ? root : "/tmp";
}

#define TT_MAX_DIRS 16
static char tt_dirs[TT_MAX_DIRS][4096];
static int tt_ndirs;

TT_FN void tt_cleanup(void)
{
    for (int i = tt_ndirs - 1; i >= 0; i--) {
        umount2(tt_dirs[i], MNT_DETACH); /* full-disk tests mount a tmpfs there */
        chmod(tt_dirs[i], 0700);
        tt_rmtree(tt_dirs[i]);
    }
    tt_ndirs = 0;
}

/* A fresh empty directory under $TIERIO_TEST_TMPDIR, removed at exit (also after a failed
 * check, which exits through exit(1)). */
TT_FN const char *tt_tmpdir(const char *tag)
{
    if (tt_ndirs == TT_MAX_DIRS)
        FAIL_NOW("too many temporary directories");
    char *d = tt_dirs[tt_ndirs];
    snprintf(d, sizeof tt_dirs[0], "%s/%s-XXXXXX", tt_tmproot(), tag);
    if (!mkdtemp(d))
        FAIL_NOW("mkdtemp %s: %s", d, strerror(errno));
    if (tt_ndirs++ == 0)
        atexit(tt_cleanup);
    return d;
}

/* ---- child processes with a time limit ---- */

/* fork(); in the child the parent's temporary directories are forgotten (so that a child
 * that exits, also through a failed check, does not remove them), the child dies with
 * the parent and gets SIGALRM (default action: terminate) after timeout_s. */
TT_FN pid_t tt_fork(unsigned timeout_s)
{
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid(), pid = fork();
    CHECK_OK(pid);
    if (pid == 0) {
        tt_ndirs = 0;
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) /* the parent died before prctl could take effect */
            _exit(1);
        alarm(timeout_s);
    }
    return pid;
}

/* Wait for a child; its status as text in why (for messages). Returns 1 if it exited
 * with status 0. */
TT_FN int tt_wait(pid_t pid, char *why, size_t n)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        CHECK(errno == EINTR);
    if (WIFEXITED(st))
        snprintf(why, n, "exit status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(why, n, "killed by signal %d (%s)%s", WTERMSIG(st), strsignal(WTERMSIG(st)),
                 WTERMSIG(st) == SIGALRM ? ": time limit, a hang?" : "");
    else
        snprintf(why, n, "status 0x%x", st);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Run fn(arg) in a child process with a time limit; 1 if it returned 0. */
TT_FN int tt_in_child(int (*fn)(void *), void *arg, unsigned timeout_s, char *why, size_t n)
{
    pid_t pid = tt_fork(timeout_s);
    if (pid == 0) {
        int rc = fn(arg);
        tt_cleanup(); /* the child's own temporary directories (_exit skips atexit) */
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    return tt_wait(pid, why, n);
}

#endif
