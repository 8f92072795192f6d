/* Helpers shared by the tierio benchmarks (header-only, plain MPI + POSIX, C11).
 *
 * Every benchmark:
 *   - checks every MPI return code (MPI_CHECK) and aborts with a message on failure;
 *   - prints one JSON object per result on stdout from rank 0 (bench_json_*);
 *   - prints a '#' header comment on stderr from rank 0;
 *   - reports the median over repetitions of the slowest rank's time.
 *
 * Include this after defining _POSIX_C_SOURCE (each benchmark does so on its first line).
 */
#ifndef TIO_BENCH_COMMON_H
#define TIO_BENCH_COMMON_H

#include "tierio/tier.h"
#include <mpi.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static inline void bench_die(const char *fmt, ...)
{
    int rank = -1, init = 0, fini = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fini);
    if (init && !fini) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[rank %d] error: ", rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    if (init && !fini) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    exit(1);
}

static inline void bench_mpi_fail(int rc, const char *call, const char *file, int line)
{
    char msg[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) {
        snprintf(msg, sizeof msg, "MPI error code %d", rc);
    } else {
        msg[len] = '\0';
    }
    bench_die("%s:%d: %s failed: %s", file, line, call, msg);
}

/* Check an MPI call; abort the job with the call, the place and MPI's message on failure.
 * Works because the benchmarks set MPI_ERRORS_RETURN on MPI_COMM_WORLD and on every window
 * (files default to MPI_ERRORS_RETURN). */
#define MPI_CHECK(call)                                          \
    do {                                                         \
        int bench_rc_ = (call);                                  \
        if (bench_rc_ != MPI_SUCCESS) {                          \
            bench_mpi_fail(bench_rc_, #call, __FILE__, __LINE__); \
        }                                                        \
    } while (0)

/* Check a POSIX condition; abort with strerror(errno) when it is false. */
#define SYS_CHECK(cond, what)                                                        \
    do {                                                                             \
        if (!(cond)) {                                                               \
            bench_die("%s:%d: %s: %s", __FILE__, __LINE__, (what), strerror(errno)); \
        }                                                                            \
    } while (0)

static inline void *bench_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        bench_die("out of memory allocating %zu bytes", n);
    }
    return p;
}

/* ---------------------------------------------------------------------------------------- */
/* Options                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* A non-negative integer or size, by tierio's one size parser (tio_parse_size: "64Mi" is
 * 64 x 2^20, "64Mi" 64 x 10^6; docs/settings.md, "Sizes"). */
static inline unsigned long long bench_parse_u64(const char *opt, const char *s)
{
    uint64_t v;
    if (tio_parse_size(s, &v) != 0)
        bench_die("option %s: '%s' is not a non-negative integer or size (units: K, M, G "
                  "are powers of 1000, Ki, Mi, Gi of 1024)", opt, s);
    return v;
}

static inline double bench_parse_double(const char *opt, const char *s)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v)) {
        bench_die("option %s: '%s' is not a number", opt, s);
    }
    return v;
}

/* The command line around each benchmark's own options. Every benchmark keeps its options
 * and its usage text in its own file; what surrounds them (-h, a bad option, a stray
 * argument, printing the usage once per job) is here, so that all of them behave alike. */

/* Print the usage text: on rank 0 only when MPI runs (every rank parses the same command
 * line; one copy is enough), always in a program that does not start MPI. */
__attribute__((format(printf, 1, 2))) static inline void bench_usage(const char *fmt, ...)
{
    int rank = 0, init = 0, fini = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fini);
    if (init && !fini) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    if (rank != 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

/* A benchmark's usage(prog): its own usage text, printed with bench_usage. */
typedef void (*bench_usage_fn)(const char *prog);

/* getopt, plus what every benchmark does alike, so that the caller's switch holds only its
 * own options: -h prints the usage and ends the program (MPI_Finalize first when MPI
 * runs); an unknown option or a missing value prints the usage and aborts; after the last
 * option, a word that is not one aborts too (no benchmark takes operands). optstring must
 * contain 'h'. */
static inline int bench_getopt(int argc, char **argv, const char *optstring,
                               bench_usage_fn usage)
{
    int c = getopt(argc, argv, optstring);
    if (c == 'h') {
        int init = 0, fini = 0;
        usage(argv[0]);
        MPI_Initialized(&init);
        MPI_Finalized(&fini);
        if (init && !fini) {
            MPI_Finalize();
        }
        exit(0);
    }
    if (c == '?' || c == ':') {
        usage(argv[0]);
        bench_die("bad command line");
    }
    if (c == -1 && optind < argc) {
        usage(argv[0]);
        bench_die("unexpected argument '%s'", argv[optind]);
    }
    return c;
}

/* Which of two words arg is: 0 for first, 1 for second, -1 for neither (the caller says
 * what it expected). For options that choose between two modes. */
static inline int bench_which(const char *arg, const char *first, const char *second)
{
    return strcmp(arg, first) == 0 ? 0 : strcmp(arg, second) == 0 ? 1 : -1;
}

/* An option that names one or both of two things ("seq", "rnd", "seq,rnd"): pick[k] is
 * whether arg contains name k. Naming neither aborts with "<opt>: expected <expected>". */
static inline void bench_parse_either(const char *opt, const char *arg, const char *name0,
                                      const char *name1, const char *expected, bool pick[2])
{
    pick[0] = strstr(arg, name0) != NULL;
    pick[1] = strstr(arg, name1) != NULL;
    if (!pick[0] && !pick[1]) {
        bench_die("%s: expected %s", opt, expected);
    }
}

/* -d default: $TIERIO_BENCH_DIR, else /tmp */
static inline const char *bench_default_dir(void)
{
    const char *d = getenv("TIERIO_BENCH_DIR");
    return (d != NULL && d[0] != '\0') ? d : "/tmp";
}

/* ---------------------------------------------------------------------------------------- */
/* Window kinds and the storage-window hints (the library's contract)                       */
/* ---------------------------------------------------------------------------------------- */

enum bench_win_kind { BENCH_WIN_MEMORY = 0, BENCH_WIN_STORAGE = 1, BENCH_WIN_COMBINED = 2 };
#define BENCH_WIN_NKINDS 3
static inline const char *bench_win_kind_name(int kind)
{
    static const char *const names[BENCH_WIN_NKINDS] = {"memory", "storage", "combined"};
    return (kind >= 0 && kind < BENCH_WIN_NKINDS) ? names[kind] : "?";
}

/* Parse a comma-separated list of window kinds into a mask (bit k = kind k). */
static inline unsigned bench_parse_kinds(const char *opt, const char *list)
{
    unsigned mask = 0;
    const char *p = list;
    while (*p != '\0') {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (int k = 0; k < BENCH_WIN_NKINDS; k++) {
            const char *name = bench_win_kind_name(k);
            if (strlen(name) == n && strncmp(p, name, n) == 0) {
                mask |= 1u << k;
                found = 1;
            }
        }
        if (!found) {
            bench_die("option %s: unknown window kind '%.*s' (memory, storage, combined)", opt,
                      (int)n, p);
        }
        p += n;
        if (*p == ',') {
            p++;
        }
    }
    if (mask == 0) {
        bench_die("option %s: empty list of window kinds", opt);
    }
    return mask;
}

static inline void bench_info_set(MPI_Info info, const char *key, const char *value)
{
    MPI_CHECK(MPI_Info_set(info, key, value));
}

/* Info object for a window kind. memory: MPI_INFO_NULL (no hints at all, the plain MPI
 * window). storage: alloc_type=storage + filename + offset + unlink. combined: storage with
 * storage_alloc_factor=factor (the rest of the window in memory, memory_first).
 * The caller frees a non-null result with MPI_Info_free. */
static inline MPI_Info bench_win_info(enum bench_win_kind kind, const char *filename,
                               unsigned long long offset, double factor, bool unlink_file)
{
    if (kind == BENCH_WIN_MEMORY) {
        return MPI_INFO_NULL;
    }
    MPI_Info info;
    char buf[64];
    MPI_CHECK(MPI_Info_create(&info));
    bench_info_set(info, "alloc_type", "storage");
    bench_info_set(info, "storage_alloc_filename", filename);
    snprintf(buf, sizeof buf, "%llu", offset);
    bench_info_set(info, "storage_alloc_offset", buf);
    bench_info_set(info, "storage_alloc_unlink", unlink_file ? "true" : "false");
    if (kind == BENCH_WIN_COMBINED) {
        snprintf(buf, sizeof buf, "%.6g", factor);
        bench_info_set(info, "storage_alloc_factor", buf);
        bench_info_set(info, "storage_alloc_order", "memory_first");
    }
    return info;
}

/* Where the window really lives: "storage" when MPI_Win_get_info reports
 * alloc_type=storage AND the window's file exists, else "memory". Both are needed: a plain
 * MPICH drops unknown hints from the info, but a plain Open MPI echoes every hint it was
 * given, so only the file tells that the hints were honoured. Callers remove a stale file of
 * that name before allocating (bench_remove_stale). With a plain MPI library (no tierio)
 * every window is "memory": the JSON field "placement" makes that visible. */
static inline const char *bench_win_placement(MPI_Win win, const char *filename)
{
    MPI_Info info = MPI_INFO_NULL;
    char value[64] = "";
    int flag = 0;
    MPI_CHECK(MPI_Win_get_info(win, &info));
#if MPI_VERSION >= 4
    int len = (int)sizeof value;
    MPI_CHECK(MPI_Info_get_string(info, "alloc_type", &len, value, &flag));
#else
    MPI_CHECK(MPI_Info_get(info, "alloc_type", (int)sizeof value - 1, value, &flag));
#endif
    MPI_CHECK(MPI_Info_free(&info));
    if (!flag || strcmp(value, "storage") != 0 || filename == NULL) {
        return "memory";
    }
    struct stat st;
    return stat(filename, &st) == 0 ? "storage" : "memory";
}

/* Remove a file left behind by an earlier (crashed) run; a missing file is fine. */
static inline void bench_remove_stale(const char *path)
{
    if (unlink(path) != 0 && errno != ENOENT) {
        bench_die("cannot remove stale file %s: %s", path, strerror(errno));
    }
}

/* MPI_Win_sync needs a passive-target epoch in MPICH (MPI_ERR_RMA_SYNC outside one). The
 * benchmarks time only the MPI_Win_sync call, inside a lock_all epoch opened here. */
static inline double bench_timed_win_sync(MPI_Win win)
{
    MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    double t0 = MPI_Wtime();
    MPI_CHECK(MPI_Win_sync(win));
    double t = MPI_Wtime() - t0;
    MPI_CHECK(MPI_Win_unlock_all(win));
    return t;
}

/* ---------------------------------------------------------------------------------------- */
/* Statistics                                                                               */
/* ---------------------------------------------------------------------------------------- */

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double bench_median(const double *v, int n)
{
    if (n <= 0) {
        return NAN;
    }
    double *s = bench_malloc((size_t)n * sizeof *s);
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, bench_cmp_double);
    double m = (n % 2) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

/* The slowest rank's time: what a parallel phase costs. */
static inline double bench_max_time(double t)
{
    double m = 0.0;
    MPI_CHECK(MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    return m;
}

/* true on every rank iff ok on every rank */
static inline bool bench_all(bool ok)
{
    int in = ok ? 1 : 0, out = 0;
    MPI_CHECK(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
    return out != 0;
}

/* 64-bit mixer (splitmix64 finaliser): a bijection, used for deterministic data. */
static inline uint64_t bench_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* ---------------------------------------------------------------------------------------- */
/* JSON output (one object per line, rank 0 only)                                            */
/* ---------------------------------------------------------------------------------------- */

typedef struct {
    char buf[4096];
    size_t len;
} bench_json;

static inline void bench_json_raw(bench_json *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(j->buf + j->len, sizeof j->buf - j->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof j->buf - j->len) {
        bench_die("JSON line too long");
    }
    j->len += (size_t)n;
}

static inline void bench_json_key(bench_json *j, const char *key)
{
    bench_json_raw(j, "%s\"%s\":", j->len > 1 ? "," : "", key);
}

static inline void bench_json_begin(bench_json *j, const char *bench)
{
    j->len = 0;
    j->buf[0] = '\0';
    bench_json_raw(j, "{");
    bench_json_key(j, "bench");
    bench_json_raw(j, "\"%s\"", bench);
}

/* string value; NULL gives null */
static inline void bench_json_str(bench_json *j, const char *key, const char *v)
{
    bench_json_key(j, key);
    if (v == NULL) {
        bench_json_raw(j, "null");
        return;
    }
    bench_json_raw(j, "\"");
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\') {
            bench_json_raw(j, "\\%c", *p);
        } else if (*p < 0x20) {
            bench_json_raw(j, "\\u%04x", *p);
        } else {
            bench_json_raw(j, "%c", *p);
        }
    }
    bench_json_raw(j, "\"");
}

/* number; NaN / infinity give null */
static inline void bench_json_num(bench_json *j, const char *key, double v)
{
    bench_json_key(j, key);
    if (isfinite(v)) {
        bench_json_raw(j, "%.6g", v);
    } else {
        bench_json_raw(j, "null");
    }
}

static inline void bench_json_int(bench_json *j, const char *key, long long v)
{
    bench_json_key(j, key);
    bench_json_raw(j, "%lld", v);
}

static inline void bench_json_bool(bench_json *j, const char *key, bool v)
{
    bench_json_key(j, key);
    bench_json_raw(j, v ? "true" : "false");
}

static inline void bench_json_end(bench_json *j)
{
    bench_json_raw(j, "}");
    printf("%s\n", j->buf);
    fflush(stdout);
}

/* First line of MPI_Get_library_version, for the header comment. */
static inline void bench_mpi_library(char *out, size_t n)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = 0;
    MPI_CHECK(MPI_Get_library_version(v, &len));
    v[len] = '\0';
    v[strcspn(v, "\n,")] = '\0';
    size_t l = strlen(v);
    if (n == 0) {
        return;
    }
    if (l >= n) {
        l = n - 1;
    }
    memcpy(out, v, l);
    out[l] = '\0';
}

/* ---------------------------------------------------------------------------------------- */
/* Start-up                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* MPI start-up of the MPI benchmarks: MPI_ERRORS_RETURN on MPI_COMM_WORLD (so that
 * MPI_CHECK, not MPI's default handler, reports a failure with the call and the place),
 * then this process's rank and the job's size. */
static inline void bench_mpi_start(int *argc, char ***argv, int *rank, int *size)
{
    MPI_CHECK(MPI_Init(argc, argv));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, size));
}

/* The '#' header comment of an MPI benchmark on stderr (rank 0): "# " and the benchmark's
 * own settings, then ", MPI: " and the library, so that every run says which MPI library
 * produced its numbers. One fprintf, so that the line comes out whole. */
__attribute__((format(printf, 1, 2))) static inline void bench_header(const char *fmt, ...)
{
    int rank = 0;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (rank != 0) {
        return;
    }
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        bench_die("cannot format the header line");
    }
    char *what = bench_malloc((size_t)n + 1);
    vsnprintf(what, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    char lib[256];
    bench_mpi_library(lib, sizeof lib);
    fprintf(stderr, "# %s, MPI: %s\n", what, lib);
    free(what);
}

#endif /* TIO_BENCH_COMMON_H */
