#include "util/hints.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tierio/hints.h"

#define VAL_MAX 4096

/* A tuning hint of the user-level engine given without it (the engine hint is parsed
 * first, so its value is known here). */
static int needs_ummap(struct tio_err *err, const char *name, const char *val)
{
    return tio_err_set(err, TIO_E_INFO_VALUE,
                       "hint %s=\"%s\" is invalid: it tunes the user-level engine, so it is "
                       "expected only together with storage_alloc_engine=ummap "
                       "(swin_impl=ummap)", name, val);
}

const char *const tio_policy_names[6] = {"fifo", "lifo", "plru", "prnd", "wiro_f", "wiro_l"};

void tio_hints_default(struct tio_hints *h)
{
    memset(h, 0, sizeof *h);
    h->alloc_type = TIO_ALLOC_MEMORY;
    h->factor = 1.0;
    h->order = TIO_ORDER_MEMORY_FIRST;
    h->engine = TIO_ENGINE_MMAP;
    h->segsize = (uint64_t)1 << 20;
    h->flush_interval = 30; /* like the kernel's dirty_expire_centisecs */
    h->readfile = 1;
    h->policy = 0;
    h->file_perm = 0600;
    h->hugepages = -1;
}

int tio_hints_hugepages(const struct tio_hints *h)
{
    if (h->discard)
        return 0;
    if (h->hugepages >= 0)
        return h->hugepages;
    return !(h->access_style & TIO_ACCESS_RANDOM);
}

int tio_parse_bool(const char *s, int *out)
{
    if (!strcasecmp(s, "true") || !strcmp(s, "1") || !strcasecmp(s, "yes")) {
        *out = 1;
        return 0;
    }
    if (!strcasecmp(s, "false") || !strcmp(s, "0") || !strcasecmp(s, "no")) {
        *out = 0;
        return 0;
    }
    return -1;
}

int tio_parse_u64(const char *s, uint64_t *out)
{
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

/* Look a hint up under its tierio name and its alias; both set and different is an
 * error. Returns 1 if found (val filled, *name = the key used), 0 if not, -1 on error. */
static int lookup(tio_hint_get_fn get, void *ctx, const char *key, const char *alias,
                  char *val, const char **name, struct tio_err *err)
{
    char other[VAL_MAX];
    int a = get(ctx, key, val, VAL_MAX);
    int b = alias ? get(ctx, alias, other, sizeof other) : 0;
    if (a && b && strcmp(val, other) != 0) {
        tio_err_set(err, TIO_E_INFO_KEY, "hints %s=\"%s\" and %s=\"%s\" conflict", key, val,
                    alias, other);
        return -1;
    }
    if (!a && b)
        memcpy(val, other, sizeof other);
    *name = a ? key : alias;
    return a || b;
}

static int bad_value(struct tio_err *err, const char *name, const char *val, const char *why)
{
    return tio_err_set(err, TIO_E_INFO_VALUE, "hint %s=\"%s\" is invalid: %s", name, val, why);
}

static int parse_access_style(struct tio_hints *h, const char *name, const char *val,
                              struct tio_err *err)
{
    /* MPI-IO's reserved values; several may be given, comma-separated. */
    static const struct { const char *word; int bit; } words[] = {
        {"read_once", TIO_ACCESS_READ_ONCE}, {"write_once", 0}, {"read_mostly", 0},
        {"write_mostly", 0}, {"sequential", TIO_ACCESS_SEQUENTIAL},
        {"reverse_sequential", 0}, {"random", TIO_ACCESS_RANDOM}};
    char copy[VAL_MAX];
    snprintf(copy, sizeof copy, "%s", val);
    char *save = NULL;
    int any = 0;
    for (char *w = strtok_r(copy, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
        size_t i, n = sizeof words / sizeof words[0];
        for (i = 0; i < n && strcmp(w, words[i].word) != 0; i++)
            ;
        if (i == n)
            return bad_value(err, name, val,
                             "expected a comma-separated list of read_once, write_once, "
                             "read_mostly, write_mostly, sequential, reverse_sequential, "
                             "random");
        h->access_style |= words[i].bit;
        any = 1;
    }
    if (!any)
        return bad_value(err, name, val, "empty list");
    if ((h->access_style & TIO_ACCESS_SEQUENTIAL) && (h->access_style & TIO_ACCESS_RANDOM))
        return bad_value(err, name, val, "sequential and random exclude each other");
    size_t len = strlen(val);
    if (len >= sizeof h->access_style_str)
        return bad_value(err, name, val, "too long");
    memcpy(h->access_style_str, val, len + 1);
    return TIO_OK;
}

static int parse_positive(const char *name, const char *val, long *out, struct tio_err *err)
{
    uint64_t v;
    if (tio_parse_u64(val, &v) || v == 0 || v > LONG_MAX)
        return bad_value(err, name, val, "expected a positive integer");
    *out = (long)v;
    return TIO_OK;
}

int tio_hints_parse(struct tio_hints *h, tio_hint_get_fn get, void *ctx, struct tio_err *err)
{
    char val[VAL_MAX];
    const char *name;
    int r;
    tio_hints_default(h);

/* Runs the block that follows when the hint (or its alias) is set; returns on conflict. */
#define WITH_HINT(key, alias)                                          \
    if ((r = lookup(get, ctx, key, alias, val, &name, err)) < 0)      \
        return err->cls;                                               \
    if (r)

    WITH_HINT(TIO_HINT_ALLOC_TYPE, NULL) {
        if (!strcmp(val, "storage"))
            h->alloc_type = TIO_ALLOC_STORAGE;
        else if (strcmp(val, "memory") != 0)
            return bad_value(err, name, val, "expected \"memory\" or \"storage\"");
    }
    WITH_HINT(TIO_HINT_FILENAME, TIO_HINT_SWIN_FILENAME) {
        h->storage_keys_seen = 1;
        if (!val[0])
            return bad_value(err, name, val, "empty path");
        if (strlen(val) >= sizeof h->filename)
            return bad_value(err, name, val, "path longer than PATH_MAX");
        strcpy(h->filename, val);
    }
    WITH_HINT(TIO_HINT_OFFSET, TIO_HINT_SWIN_OFFSET) {
        h->storage_keys_seen = 1;
        if (tio_parse_u64(val, &h->offset) || h->offset > (uint64_t)INT64_MAX)
            return bad_value(err, name, val, "expected a non-negative byte offset");
    }
    WITH_HINT(TIO_HINT_FACTOR, TIO_HINT_SWIN_FACTOR) {
        h->storage_keys_seen = 1;
        if (!strcasecmp(val, "auto")) {
            h->factor_auto = 1;
        } else {
            char *end;
            errno = 0;
            double f = strtod(val, &end);
            if (errno || end == val || *end || !(f >= 0.0 && f <= 1.0))
                return bad_value(err, name, val, "expected a number in [0, 1] or \"auto\"");
            h->factor = f;
        }
    }
    WITH_HINT(TIO_HINT_ORDER, TIO_HINT_SWIN_ORDER) {
        h->storage_keys_seen = 1;
        if (!strcmp(val, "storage_first"))
            h->order = TIO_ORDER_STORAGE_FIRST;
        else if (strcmp(val, "memory_first") != 0)
            return bad_value(err, name, val,
                             "expected \"memory_first\" or \"storage_first\"");
    }
    WITH_HINT(TIO_HINT_UNLINK, TIO_HINT_SWIN_UNLINK) {
        h->storage_keys_seen = 1;
        if (tio_parse_bool(val, &h->unlink))
            return bad_value(err, name, val, "expected \"true\" or \"false\"");
    }
    WITH_HINT(TIO_HINT_DISCARD, NULL) {
        h->storage_keys_seen = 1;
        if (tio_parse_bool(val, &h->discard))
            return bad_value(err, name, val, "expected \"true\" or \"false\"");
    }
    WITH_HINT(TIO_HINT_ENGINE, TIO_HINT_SWIN_IMPL) {
        h->storage_keys_seen = 1;
        if (!strcmp(val, "ummap"))
            h->engine = TIO_ENGINE_UMMAP;
        else if (strcmp(val, "mmap") != 0)
            return bad_value(err, name, val, "expected \"mmap\" or \"ummap\"");
    }
    WITH_HINT(TIO_HINT_HUGEPAGES, NULL) {
        h->storage_keys_seen = 1;
        if (!strcasecmp(val, "auto"))
            h->hugepages = -1;
        else if (tio_parse_bool(val, &h->hugepages))
            return bad_value(err, name, val, "expected \"auto\", \"true\" or \"false\"");
    }
    WITH_HINT(TIO_HINT_SEGSIZE, TIO_HINT_SWIN_SEGSIZE) {
        h->engine_keys_seen = 1;
        if (h->engine != TIO_ENGINE_UMMAP)
            return needs_ummap(err, name, val);
        uint64_t v;
        long page = sysconf(_SC_PAGESIZE);
        if (tio_parse_u64(val, &v) || v < (uint64_t)page || (v & (v - 1)))
            return bad_value(err, name, val, page == 4096
                                 ? "expected a power of two of at least 4096 bytes"
                                 : "expected a power of two of at least the page size");
        h->segsize = v;
    }
    WITH_HINT(TIO_HINT_FLUSH_INTERVAL, TIO_HINT_SWIN_FLUSHINT) {
        h->engine_keys_seen = 1;
        if (h->engine != TIO_ENGINE_UMMAP)
            return needs_ummap(err, name, val);
        uint64_t v;
        /* "-1" is how programs of the original library say never (seed 000, Listing 6.1). */
        if (!strcasecmp(val, "never") || !strcmp(val, "-1"))
            h->flush_interval = UINT_MAX;
        else if (tio_parse_u64(val, &v) || v >= UINT_MAX)
            return bad_value(err, name, val, "expected seconds, or \"never\"");
        else
            h->flush_interval = (unsigned)v;
    }
    WITH_HINT(TIO_HINT_READFILE, TIO_HINT_SWIN_READFILE) {
        h->engine_keys_seen = 1;
        if (h->engine != TIO_ENGINE_UMMAP)
            return needs_ummap(err, name, val);
        if (tio_parse_bool(val, &h->readfile))
            return bad_value(err, name, val, "expected \"true\" or \"false\"");
    }
    WITH_HINT(TIO_HINT_DRIVER, NULL) {
        h->engine_keys_seen = 1;
        if (h->engine != TIO_ENGINE_UMMAP)
            return needs_ummap(err, name, val);
        if (strcmp(val, "posix") && strcmp(val, "direct") && strcmp(val, "uring"))
            return bad_value(err, name, val, "expected \"posix\", \"direct\" or \"uring\"");
        memcpy(h->driver, val, strlen(val) + 1); /* one of the three names */
    }
    WITH_HINT(TIO_HINT_SYNC_SCOPE, NULL) {
        h->engine_keys_seen = 1;
        if (h->engine != TIO_ENGINE_UMMAP)
            return needs_ummap(err, name, val);
        if (strcmp(val, "window") && strcmp(val, "file"))
            return bad_value(err, name, val, "expected \"window\" or \"file\"");
        h->sync_file = !strcmp(val, "file");
    }
    WITH_HINT(TIO_HINT_POLICY, TIO_HINT_SWIN_PTYPE) {
        h->engine_keys_seen = 1;
        if (h->engine != TIO_ENGINE_UMMAP)
            return needs_ummap(err, name, val);
        int found = -1;
        for (int k = 0; k < 6; k++)
            if (!strcasecmp(val, tio_policy_names[k]) || (val[0] == '0' + k && !val[1]))
                found = k;
        if (found < 0)
            return bad_value(err, name, val, "expected fifo, lifo, plru, prnd, wiro_f or "
                                             "wiro_l (or 0..5)");
        h->policy = found;
    }
    WITH_HINT(TIO_HINT_FILE_PERM, NULL) {
        char *end;
        errno = 0;
        long p = strtol(val, &end, 0); /* "0640" octal, "416" decimal, as MPI-IO users write */
        if (errno || end == val || *end || p < 0 || p > 07777)
            return bad_value(err, name, val, "expected file mode bits such as \"0640\"");
        h->file_perm = (mode_t)p;
        h->file_perm_given = 1;
    }
    WITH_HINT(TIO_HINT_ACCESS_STYLE, NULL) {
        if (parse_access_style(h, name, val, err))
            return err->cls;
    }
    WITH_HINT(TIO_HINT_STRIPING_FACTOR, NULL) {
        if (parse_positive(name, val, &h->striping_factor, err))
            return err->cls;
    }
    WITH_HINT(TIO_HINT_STRIPING_UNIT, NULL) {
        if (parse_positive(name, val, &h->striping_unit, err))
            return err->cls;
    }
#undef WITH_HINT
    return TIO_OK;
}
