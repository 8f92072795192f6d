#include "util/settings.h"

#include "tierio/settings.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- fields ---------------------------------------------------------------------- */

static void *field(const struct tio_key *k, void *s) { return (char *)s + k->off; }
static const void *cfield(const struct tio_key *k, const void *s)
{
    return (const char *)s + k->off;
}

/* Integers are stored as int, long or uint64_t, by the field's size. */
static void store_uint(const struct tio_key *k, void *s, uint64_t v)
{
    if (k->size == sizeof(int))
        *(int *)field(k, s) = (int)v;
    else
        *(uint64_t *)field(k, s) = v; /* long and uint64_t are 8 bytes here */
}

static uint64_t load_uint(const struct tio_key *k, const void *s)
{
    if (k->size == sizeof(int))
        return (uint64_t)(int64_t) * (const int *)cfield(k, s);
    return *(const uint64_t *)cfield(k, s);
}

static const struct tio_key_word *word_of(const struct tio_key *k, const char *val)
{
    for (const struct tio_key_word *w = k->words; w && w->word; w++)
        if (k->nocase ? !strcasecmp(val, w->word) : !strcmp(val, w->word))
            return w;
    return NULL;
}

/* "a", "b" or "c": the first word of each value, for messages. */
static void words_list(const struct tio_key *k, char *out, size_t len)
{
    const char *first[32];
    size_t n = 0;
    for (const struct tio_key_word *w = k->words; w && w->word && n < 32; w++) {
        int seen = 0;
        for (const struct tio_key_word *v = k->words; v != w; v++)
            seen |= v->value == w->value;
        if (!seen)
            first[n++] = w->word;
    }
    size_t at = 0;
    out[0] = 0;
    for (size_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s\"%s\"",
                               i == 0 ? "" : i + 1 == n ? " or " : ", ", first[i]);
}

/* ---- parsing one value ------------------------------------------------------------ */

/* The value val of key k into s. Returns 0, or -1 with *why (static, or in buf). */
static int parse_typed(const struct tio_key *k, const char *val, void *s, const char **why,
                       char *buf, size_t len)
{
    uint64_t v;
    switch (k->type) {
    case TIO_KEY_BOOL:
        if (tio_parse_bool(val, (int *)field(k, s)))
            return *why = "expected \"true\" or \"false\"", -1;
        break;
    case TIO_KEY_UINT:
        if (tio_parse_u64(val, &v) || v < k->lo || v > k->hi) {
            snprintf(buf, len, "expected an integer from %" PRIu64 " to %" PRIu64, k->lo,
                     k->hi);
            return *why = buf, -1;
        }
        store_uint(k, s, v);
        break;
    case TIO_KEY_SIZE:
        if (tio_parse_size(val, &v) || v < k->lo || v > k->hi) {
            char lo[32], hi[32];
            tio_format_size(k->lo, lo, sizeof lo);
            tio_format_size(k->hi, hi, sizeof hi);
            snprintf(buf, len, "expected a size from %s to %s (bytes, or with " TIO_SIZE_UNITS
                     ")", lo, hi);
            return *why = buf, -1;
        }
        store_uint(k, s, v);
        break;
    case TIO_KEY_CHOICE: {
        const struct tio_key_word *w = word_of(k, val);
        if (!w) {
            char list[256];
            words_list(k, list, sizeof list);
            snprintf(buf, len, "expected %s", list);
            return *why = buf, -1;
        }
        *(int *)field(k, s) = w->value;
        break;
    }
    case TIO_KEY_STRING: {
        size_t n = strlen(val);
        if (n >= k->size) {
            snprintf(buf, len, "%zu bytes long (at most %zu)", n, k->size - 1);
            return *why = buf, -1;
        }
        memcpy(field(k, s), val, n + 1);
        break;
    }
    case TIO_KEY_CUSTOM:
        break;
    }
    if (k->parse && k->parse(k, val, s, why, buf, len) < 0)
        return -1;
    return 0;
}

static int parse_value(const struct tio_key *k, const char *val, void *s, const char **why,
                       char *buf, size_t len)
{
    if (parse_typed(k, val, s, why, buf, len) == 0)
        return 0;
    if (k->expect && k->type != TIO_KEY_CUSTOM)
        *why = k->expect;
    return -1;
}

/* A key's default into its field. Defaults are the table's own text: one that does not
 * parse is a bug caught by the unit test of every table (test_settings). */
static void default_key(const struct tio_key *k, void *s)
{
    const char *why;
    char buf[512];
    if (k->def)
        parse_value(k, k->def, s, &why, buf, sizeof buf);
}

void tio_settings_default(const struct tio_key_table *t, void *s)
{
    memset(s, 0, t->size);
    for (size_t i = 0; i < t->n; i++)
        default_key(&t->keys[i], s);
}

/* ---- sources ----------------------------------------------------------------------- */

const char *tio_settings_source_name(const struct tio_key *k, enum tio_key_from from)
{
    return from == TIO_FROM_ALIAS      ? k->alias
           : from == TIO_FROM_ENV      ? k->env
           : from == TIO_FROM_FALLBACK ? k->fallback
                                       : k->name;
}

/* A value quoted in a message: MPI cuts error strings at MPI_MAX_ERROR_STRING (256 bytes
 * in Open MPI), so a long value (a path) must not push the reason out. */
static const char *quoted(const char *val, char *buf, size_t len)
{
    if (strlen(val) < 64)
        return val;
    snprintf(buf, len, "%.56s...", val);
    return buf;
}

static int bad_va(struct tio_err *err, const struct tio_key *k, enum tio_key_from from,
                  const char *val, const char *fmt, va_list ap)
{
    char why[512], q[64];
    vsnprintf(why, sizeof why, fmt, ap);
    return tio_err_set(err, TIO_E_INFO_VALUE, "%s %s=\"%s\" is invalid: %s",
                       from == TIO_FROM_ENV ? "environment variable" : "hint",
                       tio_settings_source_name(k, from), quoted(val, q, sizeof q), why);
}

int tio_settings_bad(struct tio_err *err, const struct tio_key *k, enum tio_key_from from,
                     const char *val, const char *why, ...)
{
    va_list ap;
    va_start(ap, why);
    int rc = bad_va(err, k, from, val, why, ap);
    va_end(ap);
    return rc;
}

long tio_settings_getenv(void *ctx, const char *key, char *val, size_t len)
{
    (void)ctx;
    const char *v = getenv(key);
    if (!v || !*v)
        return -1;
    snprintf(val, len, "%s", v);
    return (long)strlen(v);
}

/* One source: -1 absent, 0 found (val set), 1 error (err set). */
static int get_one(tio_key_get_fn get, void *ctx, const struct tio_key *k,
                   enum tio_key_from from, char *val, struct tio_err *err)
{
    const char *name = tio_settings_source_name(k, from);
    if (!get || !name)
        return -1;
    long n = get(ctx, name, val, TIO_KEY_VAL_MAX + 1);
    if (n < 0)
        return -1;
    if (n > TIO_KEY_VAL_MAX) {
        tio_err_set(err, TIO_E_INFO_VALUE, "%s %s is invalid: its value of %ld bytes is too "
                    "long (at most %d)", from == TIO_FROM_ENV ? "environment variable" : "hint",
                    name, n, TIO_KEY_VAL_MAX);
        return 1;
    }
    return 0;
}

/* The value of k by the one precedence rule: info key or alias (different values: an
 * error), else the environment, else the MPI-IO fallback hint. -1 absent, 0 found (*from
 * set), 1 error. */
static int lookup(const struct tio_key *k, tio_key_get_fn info, void *ictx,
                  tio_key_get_fn env, void *ectx, char *val, enum tio_key_from *from,
                  struct tio_err *err)
{
    static _Thread_local char other[TIO_KEY_VAL_MAX + 2];
    int a = get_one(info, ictx, k, TIO_FROM_NAME, val, err);
    if (a > 0)
        return 1;
    int b = get_one(info, ictx, k, TIO_FROM_ALIAS, other, err);
    if (b > 0)
        return 1;
    if (a == 0 && b == 0 && strcmp(val, other) != 0) {
        char q1[64], q2[64];
        tio_err_set(err, TIO_E_INFO_KEY, "hints %s=\"%s\" and %s=\"%s\" conflict", k->name,
                    quoted(val, q1, sizeof q1), k->alias, quoted(other, q2, sizeof q2));
        return 1;
    }
    if (a == 0 || b == 0) {
        if (a != 0)
            memcpy(val, other, strlen(other) + 1);
        *from = a == 0 ? TIO_FROM_NAME : TIO_FROM_ALIAS;
        return 0;
    }
    int e = get_one(env, ectx, k, TIO_FROM_ENV, val, err);
    if (e == 0)
        *from = TIO_FROM_ENV;
    if (e < 0 && (e = get_one(info, ictx, k, TIO_FROM_FALLBACK, val, err)) == 0)
        *from = TIO_FROM_FALLBACK;
    return e;
}

/* One key from the sources into s (its default already there): where it came from in
 * *from (TIO_FROM_DEFAULT when not given). TIO_OK, or the error naming it. */
static int parse_key(const struct tio_key *k, void *s, tio_key_get_fn info, void *info_ctx,
                     tio_key_get_fn env, void *env_ctx, enum tio_key_from *from,
                     struct tio_err *err)
{
    static _Thread_local char val[TIO_KEY_VAL_MAX + 2];
    const char *why = NULL;
    char buf[512];
    *from = TIO_FROM_DEFAULT;
    int r = lookup(k, info, info_ctx, env, env_ctx, val, from, err);
    if (r > 0)
        return err->cls;
    if (r < 0)
        return TIO_OK;
    if (k->needs && !k->needs(s))
        return tio_settings_bad(err, k, *from, val, "%s", k->needs_why);
    if (parse_value(k, val, s, &why, buf, sizeof buf) < 0)
        return tio_settings_bad(err, k, *from, val, "%s", why);
    return TIO_OK;
}

int tio_settings_parse(const struct tio_key_table *t, void *s, tio_key_get_fn info,
                       void *info_ctx, tio_key_get_fn env, void *env_ctx,
                       enum tio_key_from *from, struct tio_err *err)
{
    if (env)
        tio_settings_check_env();
    tio_settings_default(t, s);
    if (from)
        memset(from, 0, sizeof *from * t->n);
    for (size_t i = 0; i < t->n; i++) {
        enum tio_key_from f;
        if (parse_key(&t->keys[i], s, info, info_ctx, env, env_ctx, &f, err))
            return err->cls;
        if (from)
            from[i] = f;
    }
    return TIO_OK;
}

/* One key, without looking at the rest of the environment. */
static int one_key(const struct tio_key_table *t, const char *name, void *s,
                   tio_key_get_fn info, void *info_ctx, tio_key_get_fn env, void *env_ctx,
                   struct tio_err *err)
{
    const struct tio_key *k = tio_settings_key(t, name);
    if (!k)
        return tio_err_set(err, TIO_E_ARG, "no setting %s", name);
    enum tio_key_from f;
    memset(field(k, s), 0, k->size); /* this key only: the caller's struct is partial */
    default_key(k, s);
    return parse_key(k, s, info, info_ctx, env, env_ctx, &f, err);
}

int tio_settings_one(const struct tio_key_table *t, const char *name, void *s,
                     tio_key_get_fn info, void *info_ctx, tio_key_get_fn env, void *env_ctx,
                     struct tio_err *err)
{
    if (env)
        tio_settings_check_env();
    return one_key(t, name, s, info, info_ctx, env, env_ctx, err);
}

int tio_settings_env_one(const struct tio_key_table *t, const char *name, void *s,
                         struct tio_err *err)
{
    return tio_settings_one(t, name, s, NULL, NULL, tio_settings_getenv, NULL, err);
}

int tio_settings_env_unchecked(const struct tio_key_table *t, const char *name, void *s,
                               struct tio_err *err)
{
    return one_key(t, name, s, NULL, NULL, tio_settings_getenv, NULL, err);
}

const struct tio_key *tio_settings_key(const struct tio_key_table *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct tio_key *k = &t->keys[i];
        if ((k->name && !strcmp(k->name, name)) || (k->env && !strcmp(k->env, name)))
            return k;
    }
    return NULL;
}

/* ---- reporting ------------------------------------------------------------------- */

int tio_key_never(const void *s)
{
    (void)s;
    return 0;
}

int tio_settings_format(const struct tio_key *k, const void *s, char *out, size_t len)
{
    if (k->format)
        return k->format(k, s, out, len);
    switch (k->type) {
    case TIO_KEY_BOOL:
        snprintf(out, len, "%s", *(const int *)cfield(k, s) ? "true" : "false");
        return 1;
    case TIO_KEY_UINT:
    case TIO_KEY_SIZE:
        snprintf(out, len, "%" PRIu64, load_uint(k, s));
        return 1;
    case TIO_KEY_CHOICE:
        for (const struct tio_key_word *w = k->words; w && w->word; w++)
            if (w->value == *(const int *)cfield(k, s)) {
                snprintf(out, len, "%s", w->word);
                return 1;
            }
        return 0;
    case TIO_KEY_STRING:
        snprintf(out, len, "%s", (const char *)cfield(k, s));
        return 1;
    case TIO_KEY_CUSTOM:
        return 0;
    }
    return 0;
}

/* ---- the reference --------------------------------------------------------------- */

static void md_cell(FILE *out, const char *s)
{
    for (; s && *s; s++)
        fputs(*s == '|' ? "\\|" : (char[2]){*s, 0}, out);
}

void tio_settings_markdown(FILE *out, const struct tio_key_table *const *tables, size_t n)
{
    fputs("# Settings reference\n\n"
          "Every info key (hint) and environment variable tierio reads, by layer. Generated "
          "from the tables in the code by `tierio settings --markdown`; a test fails when "
          "this page and the code differ.\n\n"
          "One precedence rule everywhere: the info key or its alias (both given with "
          "different values is an error), else the environment variable, else the MPI-IO "
          "fallback hint (a reserved hint such as `cb_nodes` that an application may set for "
          "its MPI library), else the default. "
          "One error format: `hint NAME=\"VALUE\" is invalid: WHY` (or `environment "
          "variable ...`).\n\n"
          "## Sizes\n\n"
          "Every size tierio reads (hints, environment, site file, command line) takes bytes "
          "or a number with a unit that means what it says: " TIO_SIZE_UNITS ", with an "
          "optional B (`64Mi`, `64MiB` = 67108864; `64M`, `64MB` = 64000000), in any case. "
          "A fraction is allowed when it makes whole bytes (`1.5Ki`).\n\n"
          "## Misspellings\n\n"
          "An info key starting with `storage_alloc_`, `swin_` or `tierio_`, or an environment "
          "variable starting with `TIERIO_` or `UMMAP_`, that is none of the settings below is "
          "ignored with a warning (once per process, naming the closest setting). "
          "`TIERIO_TEST_`, `TIERIO_BENCH_`, `TIERIO_CLUSTER_` and `TIERIO_SELFTEST_` are "
          "left to the project's tests and tools.\n", out);
    for (size_t t = 0; t < n; t++) {
        const struct tio_key_table *tb = tables[t];
        fprintf(out, "\n## %s\n\n", tb->layer);
        if (tb->page)
            fprintf(out, "Guide: [docs/%s](%s).\n\n", tb->page, tb->page);
        fputs("| info key | alias | environment | MPI-IO fallback | values | default | "
              "meaning |\n| --- | --- | --- | --- | --- | --- | --- |\n", out);
        for (size_t i = 0; i < tb->n; i++) {
            const struct tio_key *k = &tb->keys[i];
            const char *names[] = {k->name, k->alias, k->env, k->fallback};
            for (size_t c = 0; c < 4; c++)
                fprintf(out, names[c] ? "| `%s` " : "| %s", names[c] ? names[c] : "");
            fputs("| ", out);
            md_cell(out, k->values);
            fputs(" | ", out);
            md_cell(out, k->def_doc ? k->def_doc : k->def ? k->def : "");
            fputs(" | ", out);
            md_cell(out, k->doc);
            fputs(" |\n", out);
        }
    }
}

/* ---- the registry ---------------------------------------------------------------- */

#define TABLES_MAX 32
static const struct tio_key_table *tables[TABLES_MAX];
static size_t ntables;

/* Called from constructors, before main and before any thread: no lock needed. */
void tio_settings_register(const struct tio_key_table *t)
{
    if (ntables == TABLES_MAX)
        return; /* more layers than this would be caught by test_settings */
    size_t i = ntables++;
    for (; i > 0 && tables[i - 1]->order > t->order; i--)
        tables[i] = tables[i - 1];
    tables[i] = t;
}

const struct tio_key_table *const *tio_settings_tables(size_t *n)
{
    *n = ntables;
    return tables;
}
