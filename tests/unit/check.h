/* A tiny assertion kit for the unit tests: a failed check prints file:line and the
 * expression (with the values where it helps) and exits 1. Temporary directories made
 * with tt_tmpdir() live under $TIERIO_TEST_TMPDIR and are removed at exit, also after a
 * failed check. */
#ifndef TIO_TEST_CHECK_H
#define TIO_TEST_CHECK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>

#include "../common/leftovers.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *tt_current_case = "";

#define CHECK(expr)                                                                   \
    do {                                                                              \
        if (!(expr)) {                                                                \
            fprintf(stderr, "%s:%d: [%s] check failed: %s\n", __FILE__, __LINE__,     \
                    tt_current_case, #expr);                                          \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#define CHECK_EQ(a, b)                                                                \
    do {                                                                              \
        long long va_ = (long long)(a), vb_ = (long long)(b);                         \
        if (va_ != vb_) {                                                             \
            fprintf(stderr, "%s:%d: [%s] check failed: %s == %s (%lld != %lld)\n",    \
                    __FILE__, __LINE__, tt_current_case, #a, #b, va_, vb_);           \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* The string s contains sub. */
#define CHECK_HAS(s, sub)                                                             \
    do {                                                                              \
        const char *s_ = (s), *sub_ = (sub);                                          \
        if (!s_ || !strstr(s_, sub_)) {                                               \
            fprintf(stderr, "%s:%d: [%s] check failed: \"%s\" should contain \"%s\"\n", \
                    __FILE__, __LINE__, tt_current_case, s_ ? s_ : "(null)", sub_);   \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* A system call that must succeed. */
#define CHECK_OK(call)                                                                \
    do {                                                                              \
        if ((call) < 0) {                                                             \
            fprintf(stderr, "%s:%d: [%s] %s failed: %s\n", __FILE__, __LINE__,        \
                    tt_current_case, #call, strerror(errno));                         \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#define CASE(name) (tt_current_case = (name))

/* ---- temporary directories ---- */

#define TT_MAX_DIRS 16
static char tt_dirs[TT_MAX_DIRS][4096];
static int tt_ndirs;

static inline int tt_rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    if (remove(p) < 0 && errno != ENOENT)
        fprintf(stderr, "warning: cannot remove %s: %s\n", p, strerror(errno));
    return 0;
}

static inline void tt_rmtree(const char *dir)
{
    nftw(dir, tt_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void tt_cleanup(void)
{
    for (int i = tt_ndirs - 1; i >= 0; i--) {
        umount2(tt_dirs[i], MNT_DETACH); /* full-disk tests mount a tmpfs there */
        chmod(tt_dirs[i], 0700);
        tt_rmtree(tt_dirs[i]);
    }
    tt_ndirs = 0;
}

/* A fresh empty directory, removed at exit. */
static inline const char *tt_tmpdir(const char *tag)
{
    const char *root = getenv("TIERIO_TEST_TMPDIR");
    if (!root || !*root)
        root = "/tmp";
    if (tt_ndirs == TT_MAX_DIRS) {
        fprintf(stderr, "too many temporary directories\n");
        exit(1);
    }
    char *d = tt_dirs[tt_ndirs];
    snprintf(d, sizeof tt_dirs[0], "%s/%s-XXXXXX", root, tag);
    if (!mkdtemp(d)) {
        fprintf(stderr, "mkdtemp %s: %s\n", d, strerror(errno));
        exit(1);
    }
    if (tt_ndirs++ == 0)
        atexit(tt_cleanup);
    return d;
}

/* Is any byte of [p, p+len) mapped? */
static inline int tt_is_mapped(const void *p, size_t len)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char line[8192];
    int hit = 0;
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a < hi && lo < b)
            hit = 1;
    }
    fclose(f);
    return hit;
}

static inline void tt_fill(void *p, size_t n, unsigned seed)
{
    unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        c[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 9)) % 251u + 1u);
}

/* Read exactly n bytes at off of path (short read = zeros and a -1 return). */
static inline ssize_t tt_pread_file(const char *path, void *buf, size_t n, off_t off)
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

static inline void tt_write_file(const char *path, const void *buf, size_t n)
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

static inline off_t tt_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) < 0 ? -1 : st.st_size;
}

/* First index where a and b differ, or -1. */
static inline long tt_first_diff(const void *a, const void *b, size_t n)
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
        if (d_ >= 0) {                                                                \
            fprintf(stderr, "%s:%d: [%s] check failed: %s and %s differ at byte %ld " \
                    "(0x%02x != 0x%02x)\n", __FILE__, __LINE__, tt_current_case, #a,  \
                    #b, d_, ((const unsigned char *)(a))[d_],                         \
                    ((const unsigned char *)(b))[d_]);                                \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* A settings getter (util/settings.h) over a NULL-terminated key, value, key, value... list:
 * the value's full length, or -1 when the key is not there. */
static inline long tt_kv_get(void *ctx, const char *key, char *val, size_t len)
{
    for (const char *const *kv = ctx; kv && kv[0]; kv += 2)
        if (!strcmp(kv[0], key)) {
            snprintf(val, len, "%s", kv[1]);
            return (long)strlen(kv[1]);
        }
    return -1;
}

#endif
