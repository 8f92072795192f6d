/* The storage-window hints as a key table (util/settings.h): each hint's spelling, alias,
 * values and default once, here; parsing, the MPI_Win_get_info answer and the reference
 * (docs/settings.md) come from it. The user-level engine's policies and drivers come from
 * the engine's own tables (ummap/keys.h). */
#include "win/hints.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tierio/hints.h"
#include "ummap/keys.h"
#include "util/settings_mpi.h"

#define H(s) ((struct tio_hints *)(s))
#define CH(s) ((const struct tio_hints *)(s))

/* ---- values that are more than a type --------------------------------------------- */

static int not_empty(const struct tio_key *k, const char *val, void *s, const char **why,
                     char *buf, size_t len)
{
    (void)k, (void)s, (void)buf, (void)len;
    return val[0] ? 0 : (*why = "empty path", -1);
}

static int factor(const struct tio_key *k, const char *val, void *s, const char **why,
                  char *buf, size_t len)
{
    (void)k, (void)buf, (void)len;
    if (!strcasecmp(val, "auto")) {
        H(s)->factor_auto = 1;
        return 0;
    }
    char *end;
    errno = 0;
    double f = strtod(val, &end);
    if (errno || end == val || *end || !(f >= 0.0 && f <= 1.0))
        return *why = "expected a number in [0, 1] or \"auto\"", -1;
    H(s)->factor = f;
    H(s)->factor_auto = 0;
    return 0;
}

static int factor_format(const struct tio_key *k, const void *s, char *out, size_t len)
{
    (void)k;
    snprintf(out, len, "%.6g", CH(s)->factor);
    return 1;
}

static int segsize_format(const struct tio_key *k, const void *s, char *out, size_t len)
{
    (void)k;
    snprintf(out, len, "%llu", (unsigned long long)CH(s)->segsize);
    return 1;
}

static int segsize(const struct tio_key *k, const char *val, void *s, const char **why,
                   char *buf, size_t len)
{
    (void)k, (void)buf, (void)len;
    uint64_t v;
    long page = sysconf(_SC_PAGESIZE);
    if (tio_parse_u64(val, &v) || v < (uint64_t)page || (v & (v - 1)))
        return *why = page == 4096 ? "expected a power of two of at least 4096 bytes"
                                   : "expected a power of two of at least the page size",
               -1;
    H(s)->segsize = v;
    return 0;
}

static int flush_interval(const struct tio_key *k, const char *val, void *s, const char **why,
                          char *buf, size_t len)
{
    (void)k, (void)buf, (void)len;
    uint64_t v;
    /* "-1" is how programs of the original library say never (seed 000, Listing 6.1). */
    if (!strcasecmp(val, "never") || !strcmp(val, "-1"))
        H(s)->flush_interval = UINT_MAX;
    else if (tio_parse_u64(val, &v) || v >= UINT_MAX)
        return *why = "expected seconds, or \"never\"", -1;
    else
        H(s)->flush_interval = (unsigned)v;
    return 0;
}

static int flush_format(const struct tio_key *k, const void *s, char *out, size_t len)
{
    (void)k;
    unsigned v = CH(s)->flush_interval;
    if (v == UINT_MAX)
        snprintf(out, len, "never");
    else
        snprintf(out, len, "%u", v);
    return 1;
}

static int file_perm(const struct tio_key *k, const char *val, void *s, const char **why,
                     char *buf, size_t len)
{
    (void)k, (void)buf, (void)len;
    char *end;
    errno = 0;
    long p = strtol(val, &end, 0); /* "0640" octal, "416" decimal, as MPI-IO users write */
    if (errno || end == val || *end || p < 0 || p > 07777)
        return *why = "expected file mode bits such as \"0640\"", -1;
    H(s)->file_perm = (mode_t)p;
    return 0;
}

static int perm_format(const struct tio_key *k, const void *s, char *out, size_t len)
{
    (void)k;
    snprintf(out, len, "0%o", (unsigned)CH(s)->file_perm);
    return 1;
}

/* MPI-IO's reserved values; several may be given, comma-separated. */
static int access_style(const struct tio_key *k, const char *val, void *s, const char **why,
                        char *buf, size_t len)
{
    (void)k, (void)buf, (void)len;
    static const struct { const char *word; int bit; } words[] = {
        {"read_once", TIO_ACCESS_READ_ONCE}, {"write_once", 0}, {"read_mostly", 0},
        {"write_mostly", 0}, {"sequential", TIO_ACCESS_SEQUENTIAL},
        {"reverse_sequential", 0}, {"random", TIO_ACCESS_RANDOM}};
    struct tio_hints *h = H(s);
    char copy[TIO_KEY_VAL_MAX + 1];
    snprintf(copy, sizeof copy, "%s", val);
    char *save = NULL;
    int any = 0;
    h->access_style = 0;
    for (char *w = strtok_r(copy, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
        size_t i, n = sizeof words / sizeof words[0];
        for (i = 0; i < n && strcmp(w, words[i].word) != 0; i++)
            ;
        if (i == n)
            return *why = "expected a comma-separated list of read_once, write_once, "
                          "read_mostly, write_mostly, sequential, reverse_sequential, "
                          "random",
                   -1;
        h->access_style |= words[i].bit;
        any = 1;
    }
    if (!any)
        return *why = "empty list", -1;
    if ((h->access_style & TIO_ACCESS_SEQUENTIAL) && (h->access_style & TIO_ACCESS_RANDOM))
        return *why = "sequential and random exclude each other", -1;
    size_t n = strlen(val);
    if (n >= sizeof h->access_style_str)
        return *why = "too long", -1;
    memcpy(h->access_style_str, val, n + 1);
    return 0;
}

static int style_format(const struct tio_key *k, const void *s, char *out, size_t len)
{
    (void)k;
    snprintf(out, len, "%s", CH(s)->access_style_str);
    return CH(s)->access_style_str[0] != 0;
}

static int hugepages_format(const struct tio_key *k, const void *s, char *out, size_t len)
{
    (void)k;
    snprintf(out, len, "%s", tio_hints_hugepages(CH(s)) ? "true" : "false");
    return 1;
}

static int storage(const void *s) { return CH(s)->alloc_type == TIO_ALLOC_STORAGE; }
static int ummap(const void *s) { return CH(s)->engine == TIO_ENGINE_UMMAP; }
static int storage_ummap(const void *s) { return storage(s) && ummap(s); }
static int storage_mmap(const void *s) { return storage(s) && !ummap(s); }
static int storage_driver(const void *s) { return storage_ummap(s) && CH(s)->driver[0]; }

/* ---- the table ------------------------------------------------------------------- */

static const struct tio_key_word alloc_words[] = {
    {"memory", TIO_ALLOC_MEMORY}, {"storage", TIO_ALLOC_STORAGE}, {NULL, 0}};
static const struct tio_key_word order_words[] = {
    {"memory_first", TIO_ORDER_MEMORY_FIRST}, {"storage_first", TIO_ORDER_STORAGE_FIRST},
    {NULL, 0}};
static const struct tio_key_word engine_words[] = {
    {"mmap", TIO_ENGINE_MMAP}, {"ummap", TIO_ENGINE_UMMAP}, {NULL, 0}};
static const struct tio_key_word huge_words[] = {
    {"auto", -1}, {"true", 1}, {"false", 0}, {"yes", 1}, {"no", 0}, {"1", 1}, {"0", 0},
    {NULL, 0}};
static const struct tio_key_word scope_words[] = {{"window", 0}, {"file", 1}, {NULL, 0}};

#define NEEDS_UMMAP                                                                        \
    .needs = ummap, .needs_why = "it tunes the user-level engine, so it is expected only "  \
                                 "together with storage_alloc_engine=ummap (swin_impl=ummap)"
#define F(m) TIO_KEY_FIELD(struct tio_hints, m)

/* The keys between FIRST_STORAGE and LAST_STORAGE make a window a storage request even
 * without alloc_type; those between FIRST_ENGINE and LAST_ENGINE tune the ummap engine. */
enum { K_ALLOC, FIRST_STORAGE, LAST_STORAGE = FIRST_STORAGE + 7, FIRST_ENGINE,
       LAST_ENGINE = FIRST_ENGINE + 5, K_FILE_PERM };

static const struct tio_key keys[] = {
    {.name = TIO_WIN_HINT_ALLOC_TYPE, .alias = NULL, .type = TIO_KEY_CHOICE, .def = "memory", .def_doc = NULL,
     F(alloc_type),
     .words = alloc_words, .values = "memory | storage",
     .doc = "where the window's memory lives; storage needs storage_alloc_filename."},
    {.name = TIO_WIN_HINT_FILENAME, .alias = TIO_WIN_HINT_SWIN_FILENAME, .type = TIO_KEY_STRING, .def = NULL, .def_doc = "none",
     F(filename), .parse = not_empty, .shown = storage, .values = "a path",
     .doc = "file or block device that holds the window (created if missing)."},
    {.name = TIO_WIN_HINT_OFFSET, .alias = TIO_WIN_HINT_SWIN_OFFSET, .type = TIO_KEY_UINT, .def = "0", .def_doc = NULL,
     F(offset),
     .lo = 0, .hi = INT64_MAX, .expect = "expected a non-negative byte offset",
     .shown = storage, .values = "bytes, any alignment",
     .doc = "where in the file this process's part of the window starts."},
    {.name = TIO_WIN_HINT_FACTOR, .alias = TIO_WIN_HINT_SWIN_FACTOR, .type = TIO_KEY_CUSTOM, .def = "1", .def_doc = NULL,
     F(factor),
     .parse = factor, .format = factor_format, .shown = storage, .values = "0 .. 1, or auto",
     .doc = "share of the window on storage, the rest in memory; auto: what the available "
            "memory does not hold (MPI_Win_get_info reports the share placed)."},
    {.name = TIO_WIN_HINT_ORDER, .alias = TIO_WIN_HINT_SWIN_ORDER, .type = TIO_KEY_CHOICE, .def = "memory_first", .def_doc = NULL,
     F(order), .words = order_words, .shown = storage, .values = "memory_first | storage_first",
     .doc = "which part of a combined window comes first."},
    {.name = TIO_WIN_HINT_UNLINK, .alias = TIO_WIN_HINT_SWIN_UNLINK, .type = TIO_KEY_BOOL, .def = "false", .def_doc = NULL,
     F(unlink),
     .shown = storage, .values = "true | false",
     .doc = "remove the file when the window is freed."},
    {.name = TIO_WIN_HINT_DISCARD, .alias = NULL, .type = TIO_KEY_BOOL, .def = "false", .def_doc = NULL,
     F(discard), .shown = storage,
     .values = "true | false",
     .doc = "a private mapping: the file is read, changes reach it only at MPI_Win_sync."},
    {.name = TIO_WIN_HINT_ENGINE, .alias = TIO_WIN_HINT_SWIN_IMPL, .type = TIO_KEY_CHOICE, .def = "mmap", .def_doc = NULL,
     F(engine),
     .words = engine_words, .shown = storage, .values = "mmap | ummap",
     .doc = "the kernel's memory mapping or tierio's user-level engine (docs/ummap.md)."},
    {.name = TIO_WIN_HINT_HUGEPAGES, .alias = NULL, .type = TIO_KEY_CHOICE, .def = "auto", .def_doc = NULL,
     F(hugepages),
     .words = huge_words, .nocase = 1, .format = hugepages_format, .shown = storage_mmap,
     .values = "auto | true | false",
     .doc = "large folios for the mapping; auto: yes unless access_style=random or "
            "storage_alloc_discard (reported resolved)."},
    {.name = TIO_WIN_HINT_SEGSIZE, .alias = TIO_WIN_HINT_SWIN_SEGSIZE, .type = TIO_KEY_CUSTOM, .def = "1048576", .def_doc = NULL,
     F(segsize), .parse = segsize, .format = segsize_format, .shown = storage_ummap, NEEDS_UMMAP,
     .values = "bytes, a power of two >= the page size",
     .doc = "ummap engine: segment size, the unit of faults and write-back."},
    {.name = TIO_WIN_HINT_FLUSH_INTERVAL, .alias = TIO_WIN_HINT_SWIN_FLUSHINT, .type = TIO_KEY_CUSTOM, .def = "30", .def_doc = NULL,
     F(flush_interval), .parse = flush_interval, .format = flush_format,
     .shown = storage_ummap, NEEDS_UMMAP, .values = "seconds, or never (-1)",
     .doc = "ummap engine: the I/O thread writes dirty segments back this often."},
    {.name = TIO_WIN_HINT_READFILE, .alias = TIO_WIN_HINT_SWIN_READFILE, .type = TIO_KEY_BOOL, .def = "true", .def_doc = NULL,
     F(readfile), .shown = storage_ummap, NEEDS_UMMAP, .values = "true | false",
     .doc = "ummap engine: load segments from the file (false: start from zeros)."},
    {.name = TIO_WIN_HINT_DRIVER, .alias = NULL, .type = TIO_KEY_STRING, .def = NULL, .def_doc = "UMMAP_DRIVER, else posix",
     F(driver), .parse = tio_um_driver_known, .shown = storage_driver, NEEDS_UMMAP,
     .values = "posix | direct | uring (where liburing exists)",
     .doc = "ummap engine: the I/O driver of this window."},
    {.name = TIO_WIN_HINT_SYNC_SCOPE, .alias = NULL, .type = TIO_KEY_CHOICE, .def = "window", .def_doc = NULL,
     F(sync_file),
     .words = scope_words, .shown = storage_ummap, NEEDS_UMMAP, .values = "window | file",
     .doc = "ummap engine: MPI_Win_sync makes this window durable, or every window of the "
            "process on the same file that says file too (one fdatasync)."},
    {.name = TIO_WIN_HINT_POLICY, .alias = TIO_WIN_HINT_SWIN_PTYPE, .type = TIO_KEY_CHOICE, .def = "fifo", .def_doc = NULL,
     F(policy),
     .words = tio_um_policy_words, .nocase = 1, .shown = storage_ummap, NEEDS_UMMAP,
     .expect = "expected fifo, lifo, plru, prnd, wiro_f or wiro_l (or 0..5)",
     .values = "fifo | lifo | plru | prnd | wiro_f | wiro_l, or 0 .. 5",
     .doc = "ummap engine: which segment is evicted when memory is full."},
    {.name = TIO_WIN_HINT_FILE_PERM, .alias = NULL, .type = TIO_KEY_CUSTOM, .def = "0600", .def_doc = NULL,
     F(file_perm),
     .parse = file_perm, .format = perm_format, .shown = storage,
     .values = "mode bits (\"0640\")", .doc = "MPI-IO reserved: mode of a created file."},
    {.name = TIO_WIN_HINT_ACCESS_STYLE, .alias = NULL, .type = TIO_KEY_CUSTOM, .def = NULL, .def_doc = "none",
     F(access_style),
     .parse = access_style, .format = style_format, .shown = storage,
     .values = "read_once, write_once, read_mostly, write_mostly, sequential, "
               "reverse_sequential, random (comma-separated)",
     .doc = "MPI-IO reserved: sequential / random / read_once advise the kernel (madvise)."},
    {.name = TIO_WIN_HINT_STRIPING_FACTOR, .alias = NULL, .type = TIO_KEY_UINT, .def = NULL, .def_doc = "none",
     F(striping_factor),
     .lo = 1, .hi = LONG_MAX, .expect = "expected a positive integer", .shown = tio_key_never,
     .values = "a positive integer",
     .doc = "MPI-IO reserved: checked, not applied (no striped file system here)."},
    {.name = TIO_WIN_HINT_STRIPING_UNIT, .alias = NULL, .type = TIO_KEY_UINT, .def = NULL, .def_doc = "none",
     F(striping_unit),
     .lo = 1, .hi = LONG_MAX, .expect = "expected a positive integer", .shown = tio_key_never,
     .values = "a positive integer",
     .doc = "MPI-IO reserved: checked, not applied (no striped file system here)."},
};
#undef F

TIO_SETTINGS_TABLE(tio_win_keys, 10, "storage windows", "win.md", keys, struct tio_hints)


/* ---- parse and report ----------------------------------------------------------------- */

void tio_hints_default(struct tio_hints *h)
{
    tio_settings_default(&tio_win_keys, h);
}

int tio_hints_hugepages(const struct tio_hints *h)
{
    if (h->discard)
        return 0;
    if (h->hugepages >= 0)
        return h->hugepages;
    return !(h->access_style & TIO_ACCESS_RANDOM);
}

/* What the keys given say beyond their values. */
static void given(struct tio_hints *h, const enum tio_key_from *from)
{
    for (int i = FIRST_STORAGE; i <= LAST_STORAGE; i++)
        h->storage_keys_seen |= from[i] != TIO_FROM_DEFAULT;
    for (int i = FIRST_ENGINE; i <= LAST_ENGINE; i++)
        h->engine_keys_seen |= from[i] != TIO_FROM_DEFAULT;
    h->file_perm_given = from[K_FILE_PERM] != TIO_FROM_DEFAULT;
}

int tio_hints_parse(struct tio_hints *h, tio_key_get_fn get, void *ctx, struct tio_err *err)
{
    enum tio_key_from from[sizeof keys / sizeof *keys];
    int rc = tio_settings_parse(&tio_win_keys, h, get, ctx, NULL, NULL, from, err);
    if (rc == TIO_OK)
        given(h, from);
    return rc;
}

int tio_hints_from_info(struct tio_hints *h, MPI_Info info, struct tio_err *err)
{
    if (info == MPI_INFO_NULL) {
        tio_hints_default(h);
        return TIO_OK;
    }
    tio_settings_check_info(info);
    return tio_hints_parse(h, tio_settings_info_get, &info, err);
}

void tio_hints_report(const struct tio_hints *h, double placed, MPI_Info info)
{
    struct tio_hints shown = *h;
    shown.factor = placed; /* what was placed, after page rounding */
    tio_settings_report(&tio_win_keys, &shown, info);
}

/* ---- the environment ------------------------------------------------------------- */

static const struct tio_key env_keys[] = {
    {.env = "TIERIO_SHM_OVERLAY", .type = TIO_KEY_BOOL, .def = "true",
     TIO_KEY_FIELD(struct tio_win_env, shm_overlay), .values = "true | false (1 | 0)",
     .doc = "Open MPI with libtierio-pmpi: storage windows of MPI_Win_allocate_shared and of "
            "one-node MPI_Win_allocate are mapped over MPI's own shared memory (docs/win.md); "
            "false: a window of their own."},
};

TIO_SETTINGS_TABLE(tio_win_env_keys, 11, "storage windows (environment)", "win.md", env_keys,
                   struct tio_win_env)


int tio_win_env(struct tio_win_env *e, struct tio_err *err)
{
    return tio_settings_parse(&tio_win_env_keys, e, NULL, NULL, tio_settings_getenv, NULL,
                              NULL, err);
}
