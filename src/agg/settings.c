/* The aggregation settings as a key table (util/settings.h): each key's spelling,
 * environment variable, MPI-IO fallback, values and default once, here; parsing, the
 * settings half of tio_agg_get_info / MPI_File_get_info and the reference
 * (docs/settings.md) come from it. */
#include "agg/settings.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tierio/agg.h"
#include "util/settings_mpi.h"

#define S(s) ((struct tio_agg_settings *)(s))

const char *tio_agg_target_name(enum tio_agg_target t)
{
    switch (t) {
    case TIO_AGG_TARGET_FILE: return "file";
    case TIO_AGG_TARGET_SUBFILES: return "subfiles";
    case TIO_AGG_TARGET_NODE_LOCAL: return "node-local";
    }
    return "?";
}

/* A name (the STRING type copied it): letters, digits, '-', '_', '.'. */
static int is_name(const char *val)
{
    int ok = val[0] != 0;
    for (const char *c = val; *c && ok; c++)
        ok = isalnum((unsigned char)*c) || *c == '-' || *c == '_' || *c == '.';
    return ok;
}

static int tier_name(const struct tio_key *k, const char *val, void *s, const char **why,
                     char *buf, size_t len)
{
    (void)k, (void)s, (void)buf, (void)len;
    return is_name(val) ? 0 : (*why = "expected a tier name", -1);
}

/* Strategies are found by their lower-case names (the strategy table). */
static int strategy_name(const struct tio_key *k, const char *val, void *s, const char **why,
                         char *buf, size_t len)
{
    (void)k, (void)buf, (void)len;
    if (!is_name(val))
        return *why = "expected a strategy name (default, tapioca, memory_conscious)", -1;
    for (char *c = S(s)->strategy; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    return 0;
}

static int tier_format(const struct tio_key *k, const void *s, char *out, size_t len)
{
    (void)k;
    const char *t = ((const struct tio_agg_settings *)s)->tier;
    snprintf(out, len, "%s", t[0] ? t : "dram");
    return 1;
}

static int subfiles(const void *s) { return S(s)->target == TIO_AGG_TARGET_SUBFILES; }
static int node_local(const void *s)
{
    return S(s)->target == TIO_AGG_TARGET_NODE_LOCAL && S(s)->target_tier[0];
}
static int aligned(const void *s) { return S(s)->align != 0; } /* 0: not known yet */
static int memcon(const void *s) { return !strcmp(S(s)->strategy, "memory_conscious"); }

static const struct tio_key_word enable_words[] = {
    {"enable", 1}, {"disable", 0}, {"1", 1}, {"0", 0}, {NULL, 0}};
static const struct tio_key_word persistence_words[] = {
    {"none", TIO_PERSIST_NONE}, {"job", TIO_PERSIST_JOB}, {"permanent", TIO_PERSIST_PERMANENT},
    {NULL, 0}};
static const struct tio_key_word target_words[] = {
    {"file", TIO_AGG_TARGET_FILE}, {"subfiles", TIO_AGG_TARGET_SUBFILES},
    {"node-local", TIO_AGG_TARGET_NODE_LOCAL}, {"node_local", TIO_AGG_TARGET_NODE_LOCAL},
    {NULL, 0}};
static const struct tio_key_word read_words[] = {{"auto", 0}, {"aggregate", 1}, {NULL, 0}};
static const struct tio_key_word write_words[] = {{"aggregate", 0}, {"auto", 1}, {NULL, 0}};
static const struct tio_key_word domain_words[] = {{"local", 0}, {"balanced", 1}, {NULL, 0}};
static const struct tio_key_word location_words[] = {{"data", 0}, {"memory", 1}, {NULL, 0}};

#define F(m) TIO_KEY_FIELD(struct tio_agg_settings, m)
enum { K_ENABLE, K_STRATEGY, K_AGGREGATORS, K_BUFFER_SIZE, K_BUFFER_COUNT, K_TIER,
       K_PERSISTENCE, K_TARGET, K_SUBFILING, K_TARGET_TIER, K_ALIGN, K_N_CHECKED };
static const struct tio_key keys[] = {
    {.name = TIO_AGG_HINT_ENABLE, .env = "TIERIO_AGG", .type = TIO_KEY_CHOICE, .def = "0",
     F(enable), .words = enable_words, .nocase = 1, .shown = tio_key_never,
     .values = "enable | disable (1 | 0)",
     .doc = "MPI_File_open: route the file's collective reads and writes through tierio "
            "(libtierio-pmpi)."},
    {.name = TIO_AGG_HINT_STRATEGY, .env = "TIERIO_AGG_STRATEGY", .type = TIO_KEY_STRING,
     .def = "default", F(strategy), .parse = strategy_name, .values = "default | tapioca | memory_conscious",
     .doc = "how aggregators and their buffer tier are chosen (src/agg/strategy.c)."},
    {.name = TIO_AGG_HINT_AGGREGATORS, .env = "TIERIO_AGG_AGGREGATORS", .fallback = "cb_nodes",
     .type = TIO_KEY_UINT, .def = "0", F(aggregators), .lo = 0, .hi = 1u << 20,
     .expect = "expected a number of aggregators (0 = one per node)",
     .values = "a count, 0 = one per node",
     .doc = "aggregators (MPI_File_get_info reports the number chosen)."},
    {.name = TIO_AGG_HINT_BUFFER_SIZE, .env = "TIERIO_AGG_BUFFER_SIZE", .fallback = "cb_buffer_size",
     .type = TIO_KEY_SIZE, .def = "16777216", .def_doc = "16 MiB", F(buffer_size), .lo = 1,
     .hi = TIO_AGG_MAX_BUFFER_SIZE, .values = "1 byte .. 1 GiB",
     .expect = "expected a buffer size of 1 byte to 1 GiB (a number of bytes, or with K, M, "
               "G)",
     .doc = "bytes per aggregation buffer."},
    {.name = TIO_AGG_HINT_BUFFER_COUNT, .env = "TIERIO_AGG_BUFFER_COUNT", .type = TIO_KEY_UINT,
     .def = "2", F(buffer_count), .lo = 2, .hi = TIO_AGG_MAX_BUFFER_COUNT, .values = "2 .. 64",
     .expect = "expected 2 to 64 buffers per aggregator (two at least: one is filled while "
               "the other is written)",
     .doc = "buffers per aggregator (two at least: one is filled while another is written)."},
    {.name = TIO_AGG_HINT_TIER, .env = "TIERIO_AGG_TIER", .type = TIO_KEY_STRING, F(tier),
     .parse = tier_name, .format = tier_format, .def_doc = "dram; auto with tapioca",
     .values = "a tier name (docs/tier.md), or auto",
     .doc = "the tier of the aggregation buffers; auto: the cost model's choice."},
    {.name = TIO_AGG_HINT_PERSISTENCE, .env = "TIERIO_AGG_PERSISTENCE", .type = TIO_KEY_CHOICE,
     .def = "none", F(persistence), .words = persistence_words, .nocase = 1,
     .values = "none | job | permanent", .doc = "what the aggregated data needs to survive."},
    {.name = TIO_AGG_HINT_TARGET, .env = "TIERIO_AGG_TARGET", .type = TIO_KEY_CHOICE, .def = "file",
     F(target), .words = target_words, .nocase = 1, .values = "file | subfiles | node-local",
     .doc = "one shared file, a subfile per group of nodes, or node-local files "
            "(tio_agg_open only)."},
    {.name = TIO_AGG_HINT_SUBFILING, .env = "TIERIO_AGG_SUBFILING", .type = TIO_KEY_UINT, .def = "1",
     F(subfiling), .lo = 1, .hi = 1u << 20, .shown = subfiles,
     .expect = "expected a positive number of nodes per subfile",
     .values = "nodes per subfile", .doc = "target subfiles: aggregators' nodes per subfile."},
    {.name = TIO_AGG_HINT_TARGET_TIER, .env = "TIERIO_AGG_TARGET_TIER", .type = TIO_KEY_STRING,
     F(target_tier), .parse = tier_name, .shown = node_local,
     .def_doc = "the first node-local tier", .values = "a node-local tier name",
     .doc = "target node-local: the tier the files go to."},
    {.name = TIO_AGG_HINT_ALIGN, .env = "TIERIO_AGG_ALIGN", .fallback = "striping_unit",
     .type = TIO_KEY_SIZE, F(align), .lo = 1, .hi = TIO_AGG_MAX_BUFFER_SIZE,
     .def_doc = "the file system's block size", .values = "1 byte .. 1 GiB",
     .expect = "expected an alignment of 1 byte to 1 GiB", .shown = aligned,
     .doc = "domain alignment (MPI_File_get_info reports the one in effect)."},
    {.name = TIO_AGG_HINT_READ, .env = "TIERIO_AGG_READ", .type = TIO_KEY_CHOICE, .def = "auto",
     F(read_aggregate), .words = read_words, .nocase = 1, .values = "auto | aggregate",
     .doc = "auto: reads whose processes' pieces do not interleave are made by every "
            "process from the shared file itself."},
    {.name = TIO_AGG_HINT_WRITE, .env = "TIERIO_AGG_WRITE", .type = TIO_KEY_CHOICE,
     .def = "aggregate", F(route_write_auto), .words = write_words, .nocase = 1,
     .values = "aggregate | auto",
     .doc = "MPI-IO route: auto makes non-interleaved collective writes independent."},
    {.name = TIO_AGG_HINT_DOMAINS, .env = "TIERIO_AGG_DOMAINS", .type = TIO_KEY_CHOICE,
     .def = "local", F(balanced), .words = domain_words, .nocase = 1,
     .values = "local | balanced",
     .doc = "balanced: every domain holds as many bytes; local: domains follow the nodes' "
            "data (docs/agg.md)."},
    {.name = TIO_AGG_HINT_MC_PER_NODE, .env = "TIERIO_AGG_MC_PER_NODE", .type = TIO_KEY_UINT,
     .def = "1", F(mc_per_node), .lo = 1, .hi = 64, .shown = memcon, .values = "1 .. 64",
     .expect = "expected 1 to 64 aggregators per node",
     .doc = "memory_conscious: aggregators one node hosts in one access at most (N_ah)."},
    {.name = TIO_AGG_HINT_MC_WRITE_MESSAGE, .env = "TIERIO_AGG_MC_WRITE_MESSAGE",
     .type = TIO_KEY_SIZE, .def = "0", F(mc_write_message), .lo = 0,
     .hi = TIO_AGG_MAX_BUFFER_SIZE, .shown = memcon,
     .def_doc = "auto: from the site's file system figures, else the buffer size",
     .values = "0 (auto) or 1 byte .. 1 GiB",
     .expect = "expected a message size of 1 byte to 1 GiB, or 0 for auto",
     .doc = "memory_conscious: the most bytes one aggregator takes in a write (Msg_ind): "
            "file domains are bisected until they hold no more."},
    {.name = TIO_AGG_HINT_MC_READ_MESSAGE, .env = "TIERIO_AGG_MC_READ_MESSAGE",
     .type = TIO_KEY_SIZE, .def = "0", F(mc_read_message), .lo = 0,
     .hi = TIO_AGG_MAX_BUFFER_SIZE, .shown = memcon,
     .def_doc = "auto: from the site's file system figures, else the buffer size",
     .values = "0 (auto) or 1 byte .. 1 GiB",
     .expect = "expected a message size of 1 byte to 1 GiB, or 0 for auto",
     .doc = "memory_conscious: the same for reads (the MPI-IO route's reads; tio_agg_declare "
            "plans with the write size)."},
    {.name = TIO_AGG_HINT_MC_MIN_MEMORY, .env = "TIERIO_AGG_MC_MIN_MEMORY",
     .type = TIO_KEY_SIZE, .def = "0", F(mc_min_memory), .lo = 0,
     .hi = (uint64_t)1 << 40, .shown = memcon,
     .def_doc = "auto: buffer count x a quarter of the write message",
     .values = "0 (auto) or bytes", .expect = "expected a size, or 0 for auto",
     .doc = "memory_conscious: a node with less memory left for aggregation hosts no "
            "aggregator (Mem_min)."},
    {.name = TIO_AGG_HINT_MC_GROUP_MESSAGE, .env = "TIERIO_AGG_MC_GROUP_MESSAGE",
     .type = TIO_KEY_SIZE, .def = "0", F(mc_group_message), .lo = 0,
     .hi = (uint64_t)1 << 50, .shown = memcon,
     .def_doc = "auto: 4 x aggregators per node x the message",
     .values = "0 (auto) or bytes", .expect = "expected a size, or 0 for auto",
     .doc = "memory_conscious: bytes per aggregation group, about (Msg_group); groups end "
            "where a node's data ends."},
    {.name = TIO_AGG_HINT_MC_MEMORY_SHARE, .env = "TIERIO_AGG_MC_MEMORY_SHARE",
     .type = TIO_KEY_UINT, .def = "50", F(mc_memory_share), .lo = 1, .hi = 100,
     .shown = memcon, .values = "1 .. 100 (percent)",
     .expect = "expected a percentage from 1 to 100",
     .doc = "memory_conscious: the part of a node's available memory (cgroup limits "
            "included) its aggregators' buffers may take."},
    {.name = TIO_AGG_HINT_MC_LOCATION, .env = "TIERIO_AGG_MC_LOCATION", .type = TIO_KEY_CHOICE,
     .def = "memory", F(mc_by_memory), .words = location_words, .nocase = 1, .shown = memcon,
     .values = "data | memory",
     .doc = "memory_conscious: a file domain's aggregator is on the node with the most "
            "memory left (memory: the seed's rule), or, among those with the minimum memory "
            "left, on the one with most of the domain's data (data)."},
};
#undef F

TIO_SETTINGS_TABLE(tio_agg_keys, 20, "aggregation", "agg.md", keys, struct tio_agg_settings)


void tio_agg_settings_default(struct tio_agg_settings *s)
{
    tio_settings_default(&tio_agg_keys, s);
}

/* What one key says about another. */
static int across(struct tio_agg_settings *s, const enum tio_key_from *from,
                  struct tio_err *err)
{
    const char *target = tio_agg_target_name(s->target);
    if (from[K_SUBFILING] && s->target != TIO_AGG_TARGET_SUBFILES)
        return tio_err_set(err, TIO_E_INFO_KEY, "%s is given but the target is %s: set %s = "
                           "subfiles", tio_settings_source_name(&keys[K_SUBFILING],
                                                                from[K_SUBFILING]),
                           target, TIO_AGG_HINT_TARGET);
    if (from[K_TARGET_TIER] && s->target != TIO_AGG_TARGET_NODE_LOCAL)
        return tio_err_set(err, TIO_E_INFO_KEY, "%s is given but the target is %s: set %s = "
                           "node-local", tio_settings_source_name(&keys[K_TARGET_TIER],
                                                                  from[K_TARGET_TIER]),
                           target, TIO_AGG_HINT_TARGET);
    /* The memory_conscious keys mean nothing to another strategy: a mistake to say. */
    for (size_t k = 0; k < sizeof keys / sizeof *keys && !memcon(s); k++)
        if (from[k] && keys[k].shown == memcon)
            return tio_err_set(err, TIO_E_INFO_KEY, "%s is given but the strategy is %s: set "
                               "%s = memory_conscious",
                               tio_settings_source_name(&keys[k], from[k]), s->strategy,
                               TIO_AGG_HINT_STRATEGY);
    if (memcon(s) && s->tier[0] && strcmp(s->tier, "dram") && strcmp(s->tier, "auto"))
        return tio_settings_bad(err, &keys[K_TIER], from[K_TIER], s->tier,
                                "memory_conscious sizes its buffers to each node's memory: "
                                "dram (or auto)");
    if (from[K_ALIGN] && s->align > s->buffer_size) {
        /* striping_unit is the file system's business; only our own key must fit. */
        if (from[K_ALIGN] != TIO_FROM_FALLBACK) {
            char val[32];
            snprintf(val, sizeof val, "%llu", (unsigned long long)s->align);
            return tio_settings_bad(err, &keys[K_ALIGN], from[K_ALIGN], val,
                                    "larger than the buffer size %llu: a round could not "
                                    "hold one aligned block",
                                    (unsigned long long)s->buffer_size);
        }
        s->align = s->buffer_size;
    }
    return TIO_OK;
}

int tio_agg_settings_parse(struct tio_agg_settings *s, tio_key_get_fn info, void *ictx,
                           tio_key_get_fn env, void *ectx, struct tio_err *err)
{
    enum tio_key_from from[sizeof keys / sizeof *keys];
    int rc = tio_settings_parse(&tio_agg_keys, s, info, ictx, env, ectx, from, err);
    return rc ? rc : across(s, from, err);
}

int tio_agg_settings_from(struct tio_agg_settings *s, MPI_Info info, struct tio_err *err)
{
    tio_settings_check_info(info);
    return tio_agg_settings_parse(s, info == MPI_INFO_NULL ? NULL : tio_settings_info_get,
                                  &info, tio_settings_getenv, NULL, err);
}

void tio_agg_settings_report(const struct tio_agg_settings *s, MPI_Info info)
{
    tio_settings_report(&tio_agg_keys, s, info);
}

int tio_agg_enabled_by(MPI_Info info, int *enabled, struct tio_err *err)
{
    struct tio_agg_settings s;
    tio_settings_check_info(info);
    int rc = tio_settings_one(&tio_agg_keys, TIO_AGG_HINT_ENABLE, &s,
                              info == MPI_INFO_NULL ? NULL : tio_settings_info_get, &info,
                              tio_settings_getenv, NULL, err);
    *enabled = rc == TIO_OK && s.enable;
    return rc;
}
