/* util/settings.h, the one mechanism behind every hint and environment variable: each
 * type's parse and message, the precedence rule (key or alias, environment, MPI-IO
 * fallback, default), conflicts, over-long values, and for every layer's real table:
 * defaults that parse, values that survive report -> parse, and no key claimed twice. */
#include "check.h"
#include "agg/settings.h"
#include "ckpt/handle.h"
#include "tier/tier_env.h"
#include "topo/discover.h"
#include "ummap/keys.h"
#include "util/log.h"
#include "util/settings.h"
#include "win/hints.h"
#include "tierio/ckpt.h"
#include "tierio/hints.h"
#include "tierio/topo.h"

/* ---- a table of every type ---------------------------------------------------------- */

struct toy {
    int flag;
    int count;
    uint64_t bytes;
    int colour;
    char name[8];
    int odd;
};

static int odd_only(const struct tio_key *k, const char *val, void *s, const char **why,
                    char *buf, size_t len)
{
    (void)k, (void)buf, (void)len;
    uint64_t v;
    if (tio_parse_u64(val, &v) || v % 2 == 0)
        return *why = "expected an odd number", -1;
    ((struct toy *)s)->odd = (int)v;
    return 0;
}

static const struct tio_key_word colours[] = {{"red", 1}, {"green", 2}, {"verde", 2},
                                              {NULL, 0}};
#define F(m) TIO_KEY_FIELD(struct toy, m)
static const struct tio_key toy_keys[] = {
    {.name = "t_flag", .alias = "x_flag", .env = "T_FLAG", .type = TIO_KEY_BOOL,
     .def = "false", F(flag)},
    {.name = "t_count", .env = "T_COUNT", .fallback = "mpi_count", .type = TIO_KEY_UINT,
     .def = "3", F(count), .lo = 1, .hi = 10},
    {.name = "t_bytes", .type = TIO_KEY_SIZE, .def = "1Ki", F(bytes), .lo = 1, .hi = 1 << 20},
    {.name = "t_colour", .type = TIO_KEY_CHOICE, .def = "red", F(colour), .words = colours},
    {.name = "t_name", .type = TIO_KEY_STRING, .def = "abc", F(name)},
    {.name = "t_odd", .type = TIO_KEY_CUSTOM, .def = "1", F(odd), .parse = odd_only},
};
#undef F
static const struct tio_key_table toy = {0, "toy", NULL, toy_keys, 6, sizeof(struct toy)};

#define kv_get tt_kv_get

#define KV(...) ((const char *[]){__VA_ARGS__, NULL})

static int parse(struct toy *t, struct tio_err *e, const char **info, const char **env)
{
    tio_err_clear(e);
    memset(t, 0x5a, sizeof *t);
    return tio_settings_parse(&toy, t, info ? kv_get : NULL, (void *)info, env ? kv_get : NULL,
                              (void *)env, NULL, e);
}

static void test_types(void)
{
    struct toy t;
    struct tio_err e;
    CASE("defaults");
    CHECK_EQ(parse(&t, &e, NULL, NULL), TIO_OK);
    CHECK_EQ(t.flag, 0);
    CHECK_EQ(t.count, 3);
    CHECK_EQ(t.bytes, 1024);
    CHECK_EQ(t.colour, 1);
    CHECK(!strcmp(t.name, "abc"));
    CHECK_EQ(t.odd, 1);

    CASE("every type");
    CHECK_EQ(parse(&t, &e, KV("t_flag", "yes", "t_count", "10", "t_bytes", "2KB", "t_colour",
                              "verde", "t_name", "1234567", "t_odd", "7"), NULL), TIO_OK);
    CHECK_EQ(t.flag, 1);
    CHECK_EQ(t.count, 10);
    CHECK_EQ(t.bytes, 2000);
    CHECK_EQ(t.colour, 2);
    CHECK(!strcmp(t.name, "1234567"));
    CHECK_EQ(t.odd, 7);

    static const char *bad[][3] = {
        {"t_flag", "maybe", "expected \"true\" or \"false\""},
        {"t_count", "0", "expected an integer from 1 to 10"},
        {"t_count", "11", "from 1 to 10"},
        {"t_count", "-1", "from 1 to 10"},
        {"t_bytes", "2Mi", "expected a size from"},
        {"t_bytes", "0", "expected a size from"},
        {"t_colour", "RED", "expected \"red\" or \"green\""}, /* case matters unless nocase */
        {"t_colour", "blue", "expected \"red\" or \"green\""},
        {"t_name", "12345678", "8 bytes long (at most 7)"},
        {"t_odd", "4", "expected an odd number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char label[64], want[128];
        snprintf(label, sizeof label, "bad %s=%s", bad[i][0], bad[i][1]);
        CASE(label);
        CHECK_EQ(parse(&t, &e, KV(bad[i][0], bad[i][1]), NULL), TIO_E_INFO_VALUE);
        snprintf(want, sizeof want, "hint %s=\"%s\" is invalid: ", bad[i][0], bad[i][1]);
        CHECK_HAS(e.msg, want);
        CHECK_HAS(e.msg, bad[i][2]);
    }
}

static void test_precedence(void)
{
    struct toy t;
    struct tio_err e;
    CASE("key over environment over fallback");
    CHECK_EQ(parse(&t, &e, KV("t_count", "5", "mpi_count", "7"), KV("T_COUNT", "6")), TIO_OK);
    CHECK_EQ(t.count, 5);
    CHECK_EQ(parse(&t, &e, KV("mpi_count", "7"), KV("T_COUNT", "6")), TIO_OK);
    CHECK_EQ(t.count, 6);
    CHECK_EQ(parse(&t, &e, KV("mpi_count", "7"), NULL), TIO_OK);
    CHECK_EQ(t.count, 7);

    CASE("alias: the same hint, so different values conflict");
    CHECK_EQ(parse(&t, &e, KV("x_flag", "true"), KV("T_FLAG", "false")), TIO_OK);
    CHECK_EQ(t.flag, 1);
    CHECK_EQ(parse(&t, &e, KV("t_flag", "true", "x_flag", "true"), NULL), TIO_OK);
    CHECK_EQ(parse(&t, &e, KV("t_flag", "true", "x_flag", "false"), NULL), TIO_E_INFO_KEY);
    CHECK_HAS(e.msg, "hints t_flag=\"true\" and x_flag=\"false\" conflict");

    CASE("messages name where the value came from");
    CHECK_EQ(parse(&t, &e, NULL, KV("T_COUNT", "x")), TIO_E_INFO_VALUE);
    CHECK_HAS(e.msg, "environment variable T_COUNT=\"x\" is invalid: ");
    CHECK_EQ(parse(&t, &e, KV("mpi_count", "x"), NULL), TIO_E_INFO_VALUE);
    CHECK_HAS(e.msg, "hint mpi_count=\"x\" is invalid: ");
    CHECK_EQ(parse(&t, &e, KV("x_flag", "x"), NULL), TIO_E_INFO_VALUE);
    CHECK_HAS(e.msg, "hint x_flag=\"x\" is invalid: ");

    CASE("one key alone");
    memset(&t, 0, sizeof t);
    tio_err_clear(&e);
    CHECK_EQ(tio_settings_one(&toy, "T_COUNT", &t, NULL, NULL, kv_get,
                              (void *)KV("T_COUNT", "9", "t_odd", "2"), &e), TIO_OK);
    CHECK_EQ(t.count, 9);
    CHECK_EQ(t.odd, 0); /* the other keys are not read */
}

static void test_long_values(void)
{
    static char big[TIO_KEY_VAL_MAX + 100], path[300];
    struct toy t;
    struct tio_err e;
    CASE("a value longer than any key takes");
    memset(big, 'v', sizeof big - 1);
    CHECK_EQ(parse(&t, &e, KV("t_name", big), NULL), TIO_E_INFO_VALUE);
    CHECK_HAS(e.msg, "hint t_name is invalid: its value of");
    CHECK_HAS(e.msg, "too long");
    CASE("a long value is quoted short, so the reason survives MPI's 256-byte strings");
    memset(path, 'p', sizeof path - 1);
    CHECK_EQ(parse(&t, &e, KV("t_odd", path), NULL), TIO_E_INFO_VALUE);
    CHECK(strlen(e.msg) < 160);
    CHECK_HAS(e.msg, "...\" is invalid: expected an odd number");
}

/* ---- the real tables ------------------------------------------------------------- */

static const struct tio_key_table *const known[] = {
    &tio_win_keys, &tio_win_env_keys, &tio_agg_keys, &tio_topo_keys, &tio_ckpt_keys,
    &tio_tier_env_keys, &tio_um_env_table, &tio_log_keys,
};
#define NT (sizeof known / sizeof *known)

/* A getter over the values one struct reports (what MPI_Win_get_info would answer). */
struct reported {
    const struct tio_key_table *t;
    const void *s;
};

static long report_get(void *ctx, const char *key, char *val, size_t len)
{
    const struct reported *r = ctx;
    for (size_t i = 0; i < r->t->n; i++) {
        const struct tio_key *k = &r->t->keys[i];
        if (k->name && !strcmp(k->name, key) && (!k->shown || k->shown(r->s)) &&
            tio_settings_format(k, r->s, val, len))
            return (long)strlen(val);
    }
    return -1;
}

static void test_tables(void)
{
    static char a[64 << 10];
    struct tio_err e;
    CASE("every layer's table registered itself, in reference order");
    size_t n;
    const struct tio_key_table *const *tables = tio_settings_tables(&n);
    CHECK_EQ(n, NT);
    for (size_t t = 0; t < NT; t++) {
        int found = 0;
        for (size_t u = 0; u < n; u++)
            found |= tables[u] == known[t];
        CHECK(found);
        CHECK(t == 0 || tables[t - 1]->order < tables[t]->order);
    }
    for (size_t t = 0; t < NT; t++) {
        CASE(tables[t]->layer);
        /* Defaults parse (with an empty environment for the environment tables). */
        tio_err_clear(&e);
        CHECK_EQ(tio_settings_parse(tables[t], a, NULL, NULL, NULL, NULL, NULL, &e), TIO_OK);
        for (size_t i = 0; i < tables[t]->n; i++) {
            const struct tio_key *k = &tables[t]->keys[i];
            CHECK(k->name || k->env);
            CHECK(k->doc && k->values);
            CHECK(k->off + k->size <= sizeof a);
            /* no key or variable is claimed twice, in this table or another */
            for (size_t u = 0; u < NT; u++)
                for (size_t j = 0; j < tables[u]->n; j++) {
                    const struct tio_key *o = &tables[u]->keys[j];
                    if (o == k)
                        continue;
                    CHECK(!k->name || !o->name || strcmp(k->name, o->name));
                    CHECK(!k->env || !o->env || strcmp(k->env, o->env));
                }
        }
    }

    CASE("window hints: report -> parse gives the same settings");
    struct tio_hints h, back;
    static const char *win[] = {"alloc_type", "storage", "storage_alloc_filename", "/f",
                                "storage_alloc_offset", "4096", "storage_alloc_factor", "0.5",
                                "storage_alloc_engine", "ummap", "storage_alloc_segsize",
                                "65536", "storage_alloc_flush_interval", "never",
                                "swin_ptype", "3", "storage_alloc_driver", "direct",
                                "storage_alloc_sync_scope", "file", "file_perm", "0640",
                                "access_style", "random", NULL};
    tio_err_clear(&e);
    CHECK_EQ(tio_hints_parse(&h, kv_get, (void *)win, &e), TIO_OK);
    struct reported r = {&tio_win_keys, &h};
    CHECK_EQ(tio_hints_parse(&back, report_get, &r, &e), TIO_OK);
    CHECK(memcmp(&h, &back, sizeof h) == 0);
    CHECK_EQ(back.policy, 3);
    CHECK_EQ(back.flush_interval, UINT_MAX);

    CASE("aggregation: report -> parse gives the same settings");
    struct tio_agg_settings s, s2;
    static const char *agg[] = {"tierio_agg_strategy", "tapioca", "tierio_agg_buffer_size",
                                "4Mi", "tierio_agg_buffer_count", "3", "tierio_agg_target",
                                "subfiles", "tierio_agg_subfiling", "2", "tierio_agg_read",
                                "aggregate", "tierio_agg_domains", "balanced",
                                "tierio_agg_tier", "nvme", NULL};
    CHECK_EQ(tio_agg_settings_parse(&s, kv_get, (void *)agg, NULL, NULL, &e), TIO_OK);
    r = (struct reported){&tio_agg_keys, &s};
    CHECK_EQ(tio_agg_settings_parse(&s2, report_get, &r, NULL, NULL, &e), TIO_OK);
    CHECK(memcmp(&s, &s2, sizeof s) == 0);

    CASE("a tuning hint of the user-level engine without it");
    CHECK_EQ(tio_hints_parse(&h, kv_get, (void *)KV("storage_alloc_segsize", "65536"), &e),
             TIO_E_INFO_VALUE);
    CHECK_HAS(e.msg, "storage_alloc_segsize=\"65536\" is invalid: it tunes the user-level");
}

/* The key macros' one pattern, and the deprecated spellings programs may still use. */
static void test_macro_names(void)
{
    CASE("deprecated key macros");
    CHECK(!strcmp(TIO_HINT_FILENAME, TIO_WIN_HINT_FILENAME));
    CHECK(!strcmp(TIO_HINT_SWIN_PTYPE, TIO_WIN_HINT_SWIN_PTYPE));
    CHECK(!strcmp(TIO_NBHD_DIRNAME_KEY, TIO_NBHD_HINT_DIRNAME));
    CHECK(!strcmp(TIO_CKPT_DRAIN_EVERY, TIO_CKPT_HINT_DRAIN_EVERY));
    CHECK(tio_settings_key(&tio_win_keys, TIO_WIN_HINT_SYNC_SCOPE) != NULL);
    CHECK(tio_settings_key(&tio_ckpt_keys, TIO_CKPT_HINT_LOCAL_DIR) != NULL);
}

int main(void)
{
    test_macro_names();
    test_types();
    test_precedence();
    test_long_values();
    test_tables();
    printf("test_settings: all checks passed\n");
    return 0;
}
