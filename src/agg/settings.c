/* Parsing the aggregation settings: info key, else environment variable, else default. */
#include "agg/settings.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tier/tier_site.h"
#include "tierio/agg.h"

#define VAL_MAX 256

void tio_agg_settings_default(struct tio_agg_settings *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->strategy, sizeof s->strategy, "default");
    s->buffer_size = TIO_AGG_DEFAULT_BUFFER_SIZE;
    s->buffer_count = 2;
    s->persistence = TIO_PERSIST_NONE;
    s->target = TIO_AGG_TARGET_FILE;
    s->subfiling = 1;
}

const char *tio_agg_target_name(enum tio_agg_target t)
{
    switch (t) {
    case TIO_AGG_TARGET_FILE: return "file";
    case TIO_AGG_TARGET_SUBFILES: return "subfiles";
    case TIO_AGG_TARGET_NODE_LOCAL: return "node-local";
    }
    return "?";
}

/* Where a value came from, for messages: the info key or the environment variable. */
struct src {
    char what[96];
};

/* The environment variable of an info key: tierio_agg_x -> TIERIO_AGG_X. */
static void env_name(const char *key, char *out, size_t len)
{
    size_t i = 0;
    for (; key[i] && i + 1 < len; i++)
        out[i] = (char)toupper((unsigned char)key[i]);
    out[i] = 0;
}

/* Look key up in info, then in the environment, then (alias, info only) under alias.
 * Returns 1 with val and where it came from, or 0. */
static int lookup(const char *key, const char *alias, tio_hint_get_fn info, void *ictx,
                  tio_hint_get_fn env, void *ectx, char *val, struct src *src)
{
    char var[64];
    if (info && info(ictx, key, val, VAL_MAX)) {
        snprintf(src->what, sizeof src->what, "hint %s", key);
        return 1;
    }
    env_name(key, var, sizeof var);
    if (env && env(ectx, var, val, VAL_MAX)) {
        snprintf(src->what, sizeof src->what, "environment variable %s", var);
        return 1;
    }
    if (alias && info && info(ictx, alias, val, VAL_MAX)) {
        snprintf(src->what, sizeof src->what, "hint %s", alias);
        return 1;
    }
    return 0;
}

static int bad(struct tio_err *err, const struct src *src, const char *val, const char *why)
{
    return tio_err_set(err, TIO_E_INFO_VALUE, "%s = \"%.64s\": %s", src->what, val, why);
}

/* 1 when val is `yes`, 0 when it is `no` (either case), -1 otherwise. */
static int pick(const char *val, const char *yes, const char *no)
{
    return !strcasecmp(val, yes) ? 1 : !strcasecmp(val, no) ? 0 : -1;
}

/* dst (TIO_AGG_NAME_MAX or TIO_TIER_NAME_MAX bytes) = src, which name_value checked. */
static void copy_name(char *dst, size_t len, const char *src)
{
    size_t n = strnlen(src, len - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

static int name_value(const char *val)
{
    size_t n = strlen(val);
    if (n == 0 || n >= TIO_TIER_NAME_MAX)
        return 0;
    for (const char *c = val; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.')
            return 0;
    return 1;
}

int tio_agg_settings_parse(struct tio_agg_settings *s, tio_hint_get_fn info, void *ictx,
                           tio_hint_get_fn env, void *ectx, struct tio_err *err)
{
    char val[VAL_MAX];
    struct src src;
    uint64_t v;
    tio_agg_settings_default(s);

#define FIND(key, alias) lookup(key, alias, info, ictx, env, ectx, val, &src)
    if (FIND(TIO_AGG_HINT_STRATEGY, NULL)) {
        if (!name_value(val))
            return bad(err, &src, val, "expected a strategy name (default, tapioca)");
        for (char *c = val; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        copy_name(s->strategy, sizeof s->strategy, val);
    }
    if (FIND(TIO_AGG_HINT_AGGREGATORS, "cb_nodes")) {
        if (tio_parse_u64(val, &v) || v > 1u << 20)
            return bad(err, &src, val, "expected a number of aggregators (0 = one per node)");
        s->aggregators = (int)v;
    }
    if (FIND(TIO_AGG_HINT_BUFFER_SIZE, "cb_buffer_size")) {
        if (tio_parse_size(val, &v) || v == 0 || v > TIO_AGG_MAX_BUFFER_SIZE)
            return bad(err, &src, val, "expected a buffer size of 1 byte to 1 GiB (a number "
                       "of bytes, or with K, M, G)");
        s->buffer_size = v;
    }
    if (FIND(TIO_AGG_HINT_BUFFER_COUNT, NULL)) {
        if (tio_parse_u64(val, &v) || v < 2 || v > TIO_AGG_MAX_BUFFER_COUNT)
            return bad(err, &src, val, "expected 2 to 64 buffers per aggregator (two at "
                       "least: one is filled while the other is written)");
        s->buffer_count = (int)v;
    }
    if (FIND(TIO_AGG_HINT_TIER, NULL)) {
        if (!name_value(val))
            return bad(err, &src, val, "expected a tier name or auto");
        copy_name(s->tier, sizeof s->tier, val);
    }
    if (FIND(TIO_AGG_HINT_PERSISTENCE, NULL)) {
        int p = tio_persistence_parse(val);
        if (p < 0)
            return bad(err, &src, val, "expected none, job or permanent");
        s->persistence = (enum tio_persistence)p;
    }
    if (FIND(TIO_AGG_HINT_TARGET, NULL)) {
        if (!strcasecmp(val, "file"))
            s->target = TIO_AGG_TARGET_FILE;
        else if (!strcasecmp(val, "subfiles"))
            s->target = TIO_AGG_TARGET_SUBFILES;
        else if (!strcasecmp(val, "node-local") || !strcasecmp(val, "node_local"))
            s->target = TIO_AGG_TARGET_NODE_LOCAL;
        else
            return bad(err, &src, val, "expected file, subfiles or node-local");
    }
    if (FIND(TIO_AGG_HINT_SUBFILING, NULL)) {
        if (tio_parse_u64(val, &v) || v == 0 || v > 1u << 20)
            return bad(err, &src, val, "expected a positive number of nodes per subfile");
        s->subfiling = (int)v;
        if (s->target != TIO_AGG_TARGET_SUBFILES)
            return tio_err_set(err, TIO_E_INFO_KEY, "%s is given but the target is %s: "
                               "set %s = subfiles", src.what, tio_agg_target_name(s->target),
                               TIO_AGG_HINT_TARGET);
    }
    if (FIND(TIO_AGG_HINT_TARGET_TIER, NULL)) {
        if (!name_value(val))
            return bad(err, &src, val, "expected the name of a node-local tier");
        if (s->target != TIO_AGG_TARGET_NODE_LOCAL)
            return tio_err_set(err, TIO_E_INFO_KEY, "%s is given but the target is %s: "
                               "set %s = node-local", src.what,
                               tio_agg_target_name(s->target), TIO_AGG_HINT_TARGET);
        copy_name(s->target_tier, sizeof s->target_tier, val);
    }
    if (FIND(TIO_AGG_HINT_ALIGN, "striping_unit")) {
        if (tio_parse_size(val, &v) || v == 0 || v > TIO_AGG_MAX_BUFFER_SIZE)
            return bad(err, &src, val, "expected an alignment of 1 byte to 1 GiB");
        s->align = v;
        /* striping_unit is the file system's business; only our own key must fit. */
        if (v > s->buffer_size && strcmp(src.what, "hint striping_unit") != 0)
            return tio_err_set(err, TIO_E_INFO_VALUE, "%s = %llu is larger than the buffer "
                               "size %llu: a round could not hold one aligned block",
                               src.what, (unsigned long long)v,
                               (unsigned long long)s->buffer_size);
        if (v > s->buffer_size)
            s->align = s->buffer_size;
    }
    /* Two-valued keys: the value that sets the flag first. */
    if (FIND(TIO_AGG_HINT_READ, NULL) && (s->read_aggregate = pick(val, "aggregate", "auto")) < 0)
        return bad(err, &src, val, "expected auto (non-interleaved reads are independent "
                   "reads) or aggregate");
    if (FIND(TIO_AGG_HINT_WRITE, NULL) &&
        (s->route_write_auto = pick(val, "auto", "aggregate")) < 0)
        return bad(err, &src, val, "expected aggregate or auto (non-interleaved writes are "
                   "independent writes)");
    if (FIND(TIO_AGG_HINT_DOMAINS, NULL) && (s->balanced = pick(val, "balanced", "local")) < 0)
        return bad(err, &src, val, "expected local (boundaries follow the data's nodes when "
                   "that is near) or balanced");
#undef FIND
    return TIO_OK;
}
