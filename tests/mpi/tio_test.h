/* Helpers for the single-node MPI tests of storage windows (tests/mpi).
 *
 * Every test: MPI errors return (and are reported with MPI_Error_string), every check
 * compares byte for byte and prints what differed on stderr, failures are counted and
 * agreed on at the end (exit status 1 on every rank when any rank failed). Files go to a
 * per-run directory under $TIERIO_TEST_TMPDIR that tt_finish removes.
 *
 * The harness (tests/common/harness.h, harness_mpi.h) gives the checks (the fatal CHECK...,
 * which abort the job, and the counted TT_CHECK, which lets a test go on and report every
 * difference), temporary directories and file helpers; this header adds what the window
 * tests share: their start and end, byte streams and comparisons.
 *
 * Header-only: each test program is one translation unit. */
#ifndef TIO_TEST_H
#define TIO_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mpi.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "../common/harness_mpi.h"
#include "../common/page_flags.h"

static char tt_dir[PATH_MAX];

/* A deterministic byte stream: byte i of stream `seed`. Never constant over a page. */
TT_FN inline uint8_t tt_byte(uint64_t seed, uint64_t i)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
    x ^= x >> 31;
    x *= 0xD6E8FEB86659FD93ull;
    x ^= x >> 29;
    return (uint8_t)(x >> 56);
}

TT_FN inline uint64_t tt_word(uint64_t seed, uint64_t i)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

TT_FN inline void tt_fill(void *buf, size_t n, uint64_t seed, uint64_t first)
{
    uint8_t *b = buf;
    for (size_t i = 0; i < n; i++)
        b[i] = tt_byte(seed, first + i);
}

/* Compare n bytes; on a difference print where (offset, count, the first few bytes). */
TT_FN int tt_compare(const void *got, const void *exp, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
TT_FN int tt_compare(const void *got, const void *exp, size_t n, const char *fmt, ...)
{
    const uint8_t *g = got, *e = exp;
    if (memcmp(g, e, n) == 0)
        return 0;
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t first = SIZE_MAX, last = 0, count = 0;
    for (size_t i = 0; i < n; i++)
        if (g[i] != e[i]) {
            if (first == SIZE_MAX)
                first = i;
            last = i;
            count++;
        }
    char detail[512];
    int len = 0;
    for (size_t i = first, shown = 0; i <= last && shown < 8 && len < 400; i++)
        if (g[i] != e[i]) {
            len += snprintf(detail + len, sizeof detail - (size_t)len,
                            " [%zu] got 0x%02x want 0x%02x;", i, g[i], e[i]);
            shown++;
        }
    tt_fail("%s: %zu of %zu bytes differ (first at byte %zu, last at %zu):%s", what, count,
            n, first, last, detail);
    return 1;
}

/* Read n bytes at off of path and compare them with exp. */
TT_FN int tt_check_file(const char *path, uint64_t off, const void *exp, size_t n,
                         const char *what)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        tt_fail("%s: cannot open \"%s\": %s", what, path, strerror(errno));
        return 1;
    }
    uint8_t *buf = malloc(n ? n : 1);
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)(off + got));
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    int bad;
    if (got < n) {
        tt_fail("%s: \"%s\" has only %zu of the %zu bytes at offset %" PRIu64, what, path,
                got, n, off);
        bad = 1;
    } else {
        bad = tt_compare(buf, exp, n, "%s (file \"%s\" bytes %" PRIu64 "..%" PRIu64 ")",
                         what, path, off, off + n);
    }
    free(buf);
    return bad;
}

/* Durability: are the page-cache pages of [off, off+len) of path clean, i.e. written
 * back to the device as msync(MS_SYNC)/fdatasync leave them? A content check through
 * pread cannot tell (it reads the page cache, which holds unsynced data too); the
 * kernel's page flags can. Needs root (/proc/kpageflags and PFNs in pagemap). Call it
 * only when no process writes the range. Returns 0 clean, 1 dirty (a failure is
 * reported), -1 when this process cannot tell (not root): the caller skips. */
TT_FN int tt_check_clean(const char *path, uint64_t off, size_t len, const char *what)
{
    if (len == 0)
        return 0;
    uint64_t first = 0;
    size_t pages = 0;
    long dirty = tc_dirty_pages(path, off, len, &first, &pages);
    if (dirty > 0) {
        tt_fail("%s: %ld of %zu page(s) of \"%s\" bytes %" PRIu64 "..%" PRIu64
                " are still dirty in the page cache (first: file offset %" PRIu64
                "): not written back", what, dirty, pages, path, off, off + len, first);
        return 1;
    }
    if (dirty < 0) {
        static int said;
        if (!said++)
            fprintf(stderr, "[%s rank %d] note: cannot read page flags (needs root): "
                    "durability checks skipped\n", tt_name, tt_rank);
        return -1;
    }
    return 0;
}

TT_FN void tt_path(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", tt_dir, name);
}

TT_FN void tt_info_set(MPI_Info info, const char *key, const char *val)
{
    TT_MPI(MPI_Info_set(info, key, val));
}

TT_FN void tt_info_setf(MPI_Info info, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
TT_FN void tt_info_setf(MPI_Info info, const char *key, const char *fmt, ...)
{
    char v[PATH_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    TT_MPI(MPI_Info_set(info, key, v));
}

/* A new info asking for a storage window in file at offset (a decimal string). */
TT_FN MPI_Info tt_storage_info(const char *file, const char *offset)
{
    MPI_Info info;
    TT_MPI(MPI_Info_create(&info));
    tt_info_set(info, "alloc_type", "storage");
    tt_info_set(info, "storage_alloc_filename", file);
    tt_info_set(info, "storage_alloc_offset", offset);
    return info;
}

/* Value of key in info, or NULL (static buffer). */
TT_FN const char *tt_info_get(MPI_Info info, const char *key)
{
    static char v[PATH_MAX + 64];
    int flag = 0;
    TT_MPI(MPI_Info_get(info, key, (int)sizeof v - 1, v, &flag));
    return flag ? v : NULL;
}

/* MPI_Init, a per-run directory $TIERIO_TEST_TMPDIR/<name>.<pid of rank 0>. */
/* After MPI_Init (or MPI_Init_thread): the per-run directory and error handling. */
TT_FN void tt_setup(const char *name)
{
    tt_name = name;
    tt_mpi_joined();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (tt_rank == 0) {
        const char *base = tt_tmproot();
        mkdir(base, 0755);
        snprintf(tt_dir, sizeof tt_dir, "%s/%s.%ld", base, name, (long)getpid());
        if (mkdir(tt_dir, 0755) < 0 && errno != EEXIST) {
            fprintf(stderr, "[%s] cannot create %s: %s\n", name, tt_dir, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Bcast(tt_dir, (int)sizeof tt_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
}

TT_FN void tt_init(int *argc, char ***argv, const char *name)
{
    MPI_Init(argc, argv);
    tt_setup(name);
}

/* Agree on the result, remove the directory, finalize; the exit status. */
TT_FN int tt_finish(void)
{
    int total = 0;
    MPI_Allreduce(&tt_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (tt_rank == 0) {
        tt_rmtree(tt_dir);
        if (total)
            fprintf(stderr, "[%s] FAILED: %d check(s) failed\n", tt_name, total);
        else
            printf("[%s] passed (%d ranks)\n", tt_name, tt_size);
        fflush(stdout);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}

#endif
