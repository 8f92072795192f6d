/* Settings: one table-driven mechanism for every info key and environment variable of
 * tierio. Each layer declares its keys next to its code, as a table of tio_key (its name,
 * alias, environment variable, type, default, where the value is stored, and a line of
 * documentation); this unit parses them, reports them back into an MPI_Info (the
 * MPI_Win_get_info / MPI_File_get_info answers) and prints the reference (docs/settings.md,
 * `tierio settings`). A new key is one row in its layer's table.
 *
 * One precedence rule: the info key or its alias (both given with different values is an
 * error: they are two spellings of one hint), else the environment variable, else the
 * key's MPI-IO fallback (a reserved hint such as cb_nodes that means nearly the same and
 * that an application may set for its MPI library), else the default.
 * One message format: `hint NAME="VALUE" is invalid: WHY`, `environment variable
 * NAME="VALUE" is invalid: WHY`; `hints A="x" and B="y" conflict`; a value longer than the
 * key takes is an error, never cut.
 *
 * Pure C apart from tio_settings_from_info / _report / _unknown (settings_mpi.c): values
 * come through a getter, so every table is unit-tested without MPI. */
#ifndef TIO_UTIL_SETTINGS_H
#define TIO_UTIL_SETTINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"
#include "util/values.h"

enum tio_key_type {
    TIO_KEY_BOOL,   /* true|false, yes|no, 1|0 -> int */
    TIO_KEY_UINT,   /* decimal integer in [lo, hi] -> int, long or uint64_t (by size) */
    TIO_KEY_SIZE,   /* bytes, with K/M/G/T (binary) or KB/MB (decimal) suffixes, as the
                       site file reads them (tio_parse_size), in [lo, hi] -> uint64_t */
    TIO_KEY_CHOICE, /* one of words (case-insensitive) -> int, the word's value */
    TIO_KEY_STRING, /* text of at most size - 1 bytes -> char[size] */
    TIO_KEY_CUSTOM, /* the key's parse hook does it all */
};

/* A word of a CHOICE key and the value it stores. The first word of a value is the one
 * reported and documented; later words with the same value are accepted spellings. */
struct tio_key_word {
    const char *word;
    int value;
};

struct tio_key;

/* Parse val into the settings struct s (the field is at k->off). Returns 0, or -1 with
 * *why set to the reason (a static string, or one written into why_buf). For CUSTOM keys
 * it is the parser; for the others an extra check after the type's own parse. */
typedef int (*tio_key_parse_fn)(const struct tio_key *k, const char *val, void *s,
                                const char **why, char *why_buf, size_t why_len);
/* Write the value to report for the key (CUSTOM keys, or a value that is not the
 * field's, e.g. "auto" resolved). Return 0 to leave the key out of the answer. */
typedef int (*tio_key_format_fn)(const struct tio_key *k, const void *s, char *out,
                                 size_t len);
/* Whether the key belongs in the get_info answer for these settings. */
typedef int (*tio_key_shown_fn)(const void *s);
/* For keys checked but never reported (hints tierio does not apply, switches). */
int tio_key_never(const void *s);

struct tio_key {
    const char *name;      /* info key (NULL: environment only) */
    const char *alias;     /* another info key with the same meaning, or NULL */
    const char *fallback;  /* an MPI-IO reserved hint taken when neither the key nor the
                              environment says, or NULL */
    const char *env;       /* environment variable, or NULL */
    enum tio_key_type type;
    const char *def;       /* the default, as text: parsed into the field by
                              tio_settings_default, shown by the reference. NULL: the
                              field is zero (the reference then shows def_doc) */
    const char *def_doc;   /* the default as the reference says it, when def is not it */
    size_t off, size;      /* the field in the layer's settings struct */
    uint64_t lo, hi;       /* UINT and SIZE: the range */
    const struct tio_key_word *words; /* CHOICE: ending with {NULL, 0} */
    tio_key_parse_fn parse;
    tio_key_format_fn format;
    tio_key_shown_fn shown; /* NULL: reported whenever the layer reports */
    tio_key_shown_fn needs; /* the key may be given only when this holds (NULL: always;
                               checked after the keys before it in the table) ... */
    const char *needs_why;  /* ... else the value is invalid for this reason */
    int nocase;            /* CHOICE: words match in any case */
    const char *expect;    /* the reason given for a value of the wrong form or range,
                              when the type's own ("expected an integer from 0 to 9") would
                              say less */
    const char *values;    /* the reference: the values it takes ("memory | storage") */
    const char *doc;       /* the reference: one sentence */
};

#define TIO_KEY_FIELD(type, member) .off = offsetof(type, member), .size = sizeof(((type *)0)->member)

struct tio_key_table {
    int order;             /* its place in the reference: the layers from the application
                              down (windows 10, aggregation 20, ..., logging 90) */
    const char *layer;     /* "storage windows", "aggregation", ... */
    const char *page;      /* its documentation page, docs/<page> */
    const struct tio_key *keys;
    size_t n;
    size_t size;           /* of the settings struct the keys fill: zeroed before defaults,
                              so that no field is left to chance */
};

/* Where a key's value came from (tio_settings_parse fills one per key). */
enum tio_key_from {
    TIO_FROM_DEFAULT = 0, TIO_FROM_NAME, TIO_FROM_ALIAS, TIO_FROM_ENV, TIO_FROM_FALLBACK
};

/* A getter: the value of key, or absent. Returns the full length of the value (val holds
 * at most len - 1 bytes of it, NUL-terminated), or -1 when the key is not set. */
typedef long (*tio_key_get_fn)(void *ctx, const char *key, char *val, size_t len);

/* The longest value any key takes (a path). */
#define TIO_KEY_VAL_MAX 4096

/* Each layer's table enters the reference by itself, when the library is loaded, so that
 * util/ (below every layer) knows none of them: TIO_SETTINGS_REGISTER(table) after its
 * definition. */
void tio_settings_register(const struct tio_key_table *t);
#define TIO_SETTINGS_REGISTER(table)                                                     \
    __attribute__((constructor)) static void tio_register_##table(void)                 \
    {                                                                                    \
        tio_settings_register(&(table));                                                 \
    }

/* Define a layer's table `var` of the keys array `keys_` filling a struct `type`, and
 * register it. */
#define TIO_SETTINGS_TABLE(var, order_, layer_, page_, keys_, type)                      \
    const struct tio_key_table var = {order_, layer_, page_, keys_,                      \
                                      sizeof keys_ / sizeof *keys_, sizeof(type)};       \
    TIO_SETTINGS_REGISTER(var)

/* Every registered table, in reference order; *n of them. */
const struct tio_key_table *const *tio_settings_tables(size_t *n);

/* Zero s (t->size bytes), then set every key's field to its default. */
void tio_settings_default(const struct tio_key_table *t, void *s);

/* Defaults, then every key of the table from info (getter, may be NULL) and the
 * environment (getter, may be NULL), in table order; the first error stops, err names the
 * key. from[] (t->n entries, may be NULL) says where each value came from. */
int tio_settings_parse(const struct tio_key_table *t, void *s, tio_key_get_fn info,
                       void *info_ctx, tio_key_get_fn env, void *env_ctx,
                       enum tio_key_from *from, struct tio_err *err);

/* One key of the table (by its info key or environment variable) by the precedence rule,
 * into its field of s, which is set to the key's default first. TIO_OK, or the error. */
int tio_settings_one(const struct tio_key_table *t, const char *name, void *s,
                     tio_key_get_fn info, void *info_ctx, tio_key_get_fn env, void *env_ctx,
                     struct tio_err *err);

/* The same from the environment alone, into its field of s, which is set to the key's default first. For settings read
 * where they are used (the engine's variables). TIO_OK, or the error naming the variable. */
int tio_settings_env_one(const struct tio_key_table *t, const char *name, void *s,
                         struct tio_err *err);

/* tio_settings_env_one without the misspelling check of the environment: for the logger
 * alone, which reads TIERIO_LOG with it (the check's warnings go through the logger). */
int tio_settings_env_unchecked(const struct tio_key_table *t, const char *name, void *s,
                               struct tio_err *err);

/* The environment as a getter (an empty variable counts as not set, as shells unset). */
long tio_settings_getenv(void *ctx, const char *key, char *val, size_t len);

/* One key of a table, by info key or environment variable name; NULL if none. */
const struct tio_key *tio_settings_key(const struct tio_key_table *t, const char *name);

/* The value to report for key k of s into out; 0 when it is not reported. */
int tio_settings_format(const struct tio_key *k, const void *s, char *out, size_t len);

/* The error for a value: `hint NAME="VALUE" is invalid: WHY` (or environment variable,
 * by where it came from). Returns TIO_E_INFO_VALUE; for layers' checks across keys. */
int tio_settings_bad(struct tio_err *err, const struct tio_key *k, enum tio_key_from from,
                     const char *val, const char *why, ...)
    __attribute__((format(printf, 5, 6)));

/* The name a value came under, for messages: the key, its alias or the variable. */
const char *tio_settings_source_name(const struct tio_key *k, enum tio_key_from from);

/* Misspellings (settings_unknown.c). A name that starts as tierio's settings do
 * (storage_alloc_, swin_, tierio_; TIERIO_, UMMAP_ but TIERIO_TEST_, _BENCH_, _CLUSTER_,
 * _SELFTEST_, which the project's tests and tools use) and is none of them is warned about
 * once per process; returns 1 for such a name. check_env does it for the environment (once);
 * the parsers call it. */
int tio_settings_check_name(const char *name, int env);
void tio_settings_check_env(void);
/* Keys a layer reports in get_info that are not settings (NULL-terminated; from a
 * constructor, as tables are registered). */
void tio_settings_register_reported(const char *const *names);

/* The reference of these tables, as Markdown (docs/settings.md). */
void tio_settings_markdown(FILE *out, const struct tio_key_table *const *tables, size_t n);

#endif
