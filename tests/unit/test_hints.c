/* tio_hints_parse (util/hints.c) through a table-backed getter: defaults, every key and
 * its swin_* alias, invalid values of every hint (the message names the hint and the
 * value), key/alias conflicts, the hints of the user-level mmap engine (unsupported),
 * file_perm and access_style forms, and the bool / u64 helpers. */
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "tierio/hints.h"
#include "win/hints.h"

struct kv {
    const char *k, *v;
};

/* A NULL-terminated table of key/value pairs. */
#define KV(...) ((const struct kv[]){__VA_ARGS__, {NULL, NULL}})

static int calls; /* getter calls, to see that every key is looked up */

static long table_get(void *ctx, const char *key, char *val, size_t len)
{
    calls++;
    for (const struct kv *t = ctx; t->k; t++)
        if (!strcmp(t->k, key)) {
            snprintf(val, len, "%s", t->v); /* cut, as MPI_Info_get would: the length says */
            return (long)strlen(t->v);
        }
    return -1;
}

static int parse(struct tio_hints *h, struct tio_err *e, const struct kv *t)
{
    tio_err_clear(e);
    memset(h, 0xA5, sizeof *h); /* the parser must set every field */
    return tio_hints_parse(h, table_get, (void *)t, e);
}

static void check_defaults(const struct tio_hints *h)
{
    CHECK_EQ(h->alloc_type, TIO_ALLOC_MEMORY);
    CHECK_EQ(h->storage_keys_seen, 0);
    CHECK_EQ(h->filename[0], 0);
    CHECK_EQ(h->offset, 0);
    CHECK(h->factor == 1.0);
    CHECK_EQ(h->factor_auto, 0);
    CHECK_EQ(h->order, TIO_ORDER_MEMORY_FIRST);
    CHECK_EQ(h->unlink, 0);
    CHECK_EQ(h->discard, 0);
    CHECK_EQ(h->engine, TIO_ENGINE_MMAP);
    CHECK_EQ(h->file_perm_given, 0);
    CHECK_EQ(h->file_perm, 0600);
    CHECK_EQ(h->access_style, 0);
    CHECK_EQ(h->access_style_str[0], 0);
    CHECK_EQ(h->striping_factor, 0);
    CHECK_EQ(h->striping_unit, 0);
}

static void test_defaults(void)
{
    struct tio_hints h;
    struct tio_err e;
    CASE("defaults");
    calls = 0;
    CHECK_EQ(parse(&h, &e, KV({"unrelated_key", "x"})), TIO_OK);
    CHECK_EQ(e.cls, TIO_OK);
    check_defaults(&h);
    CHECK(calls >= 20); /* every hint and alias was asked for */

    CASE("tio_hints_default");
    memset(&h, 0x5A, sizeof h);
    tio_hints_default(&h);
    check_defaults(&h);

    /* alloc_type=memory alone is no storage key */
    CASE("alloc_type=memory");
    CHECK_EQ(parse(&h, &e, KV({"alloc_type", "memory"})), TIO_OK);
    CHECK_EQ(h.alloc_type, TIO_ALLOC_MEMORY);
    CHECK_EQ(h.storage_keys_seen, 0);
}

/* Every hint under its tierio name and its alias gives the same result. */
static void test_keys_and_aliases(void)
{
    struct tio_hints h;
    struct tio_err e;
    static const char *names[][2] = {
        {TIO_WIN_HINT_FILENAME, TIO_WIN_HINT_SWIN_FILENAME}, {TIO_WIN_HINT_OFFSET, TIO_WIN_HINT_SWIN_OFFSET},
        {TIO_WIN_HINT_FACTOR, TIO_WIN_HINT_SWIN_FACTOR},     {TIO_WIN_HINT_ORDER, TIO_WIN_HINT_SWIN_ORDER},
        {TIO_WIN_HINT_UNLINK, TIO_WIN_HINT_SWIN_UNLINK},     {TIO_WIN_HINT_ENGINE, TIO_WIN_HINT_SWIN_IMPL}};
    /* the spellings of contract 1 */
    CHECK(!strcmp(TIO_WIN_HINT_ALLOC_TYPE, "alloc_type"));
    CHECK(!strcmp(TIO_WIN_HINT_FILENAME, "storage_alloc_filename"));
    CHECK(!strcmp(TIO_WIN_HINT_OFFSET, "storage_alloc_offset"));
    CHECK(!strcmp(TIO_WIN_HINT_FACTOR, "storage_alloc_factor"));
    CHECK(!strcmp(TIO_WIN_HINT_ORDER, "storage_alloc_order"));
    CHECK(!strcmp(TIO_WIN_HINT_UNLINK, "storage_alloc_unlink"));
    CHECK(!strcmp(TIO_WIN_HINT_DISCARD, "storage_alloc_discard"));
    CHECK(!strcmp(TIO_WIN_HINT_SWIN_FILENAME, "swin_filename"));
    CHECK(!strcmp(TIO_WIN_HINT_SWIN_OFFSET, "swin_offset"));
    CHECK(!strcmp(TIO_WIN_HINT_SWIN_FACTOR, "swin_factor"));
    CHECK(!strcmp(TIO_WIN_HINT_SWIN_ORDER, "swin_order"));
    CHECK(!strcmp(TIO_WIN_HINT_SWIN_UNLINK, "swin_unlink"));
    CHECK(!strcmp(TIO_WIN_HINT_SWIN_IMPL, "swin_impl"));

    CASE("alloc_type=storage");
    CHECK_EQ(parse(&h, &e, KV({"alloc_type", "storage"})), TIO_OK);
    CHECK_EQ(h.alloc_type, TIO_ALLOC_STORAGE);

    for (int a = 0; a < 2; a++) {
        char label[96];
        const char *f = names[0][a], *o = names[1][a], *fa = names[2][a], *or = names[3][a],
                   *u = names[4][a], *en = names[5][a];
        snprintf(label, sizeof label, "all hints, %s spelling", a ? "swin_" : "tierio");
        CASE(label);
        CHECK_EQ(parse(&h, &e,
                       KV({"alloc_type", "storage"}, {f, "/some/dir/file.dat"},
                          {o, "123456789012"}, {fa, "0.25"}, {or, "storage_first"},
                          {u, "true"}, {en, "mmap"})),
                 TIO_OK);
        CHECK_EQ(h.alloc_type, TIO_ALLOC_STORAGE);
        CHECK(!strcmp(h.filename, "/some/dir/file.dat"));
        CHECK_EQ(h.offset, 123456789012LL);
        CHECK(h.factor == 0.25);
        CHECK_EQ(h.factor_auto, 0);
        CHECK_EQ(h.order, TIO_ORDER_STORAGE_FIRST);
        CHECK_EQ(h.unlink, 1);
        CHECK_EQ(h.engine, TIO_ENGINE_MMAP);
        CHECK_EQ(h.storage_keys_seen, 1);

        /* each storage key alone marks storage_keys_seen */
        for (int k = 0; k < 6; k++) {
            static const char *vals[] = {"/f", "0", "1", "memory_first", "false", "mmap"};
            snprintf(label, sizeof label, "%s alone", names[k][a]);
            CASE(label);
            CHECK_EQ(parse(&h, &e, KV({names[k][a], vals[k]})), TIO_OK);
            CHECK_EQ(h.storage_keys_seen, 1);
            CHECK_EQ(h.alloc_type, TIO_ALLOC_MEMORY);
        }
        snprintf(label, sizeof label, "factor auto, %s", fa);
        CASE(label);
        CHECK_EQ(parse(&h, &e, KV({fa, "auto"})), TIO_OK);
        CHECK_EQ(h.factor_auto, 1);
        CHECK_EQ(parse(&h, &e, KV({fa, "AUTO"})), TIO_OK);
        CHECK_EQ(h.factor_auto, 1);
        CHECK_EQ(parse(&h, &e, KV({fa, "0"})), TIO_OK);
        CHECK(h.factor == 0.0);
        CHECK_EQ(parse(&h, &e, KV({fa, "1"})), TIO_OK);
        CHECK(h.factor == 1.0);
        CHECK_EQ(parse(&h, &e, KV({fa, "1.0"})), TIO_OK);
        CHECK(h.factor == 1.0);
        CHECK_EQ(parse(&h, &e, KV({fa, "5e-1"})), TIO_OK);
        CHECK(h.factor == 0.5);
        CHECK_EQ(parse(&h, &e, KV({or, "memory_first"})), TIO_OK);
        CHECK_EQ(h.order, TIO_ORDER_MEMORY_FIRST);
        CHECK_EQ(parse(&h, &e, KV({u, "false"})), TIO_OK);
        CHECK_EQ(h.unlink, 0);
        CHECK_EQ(parse(&h, &e, KV({o, "18446744073709551615"})), TIO_E_INFO_VALUE);
        CHECK_EQ(parse(&h, &e, KV({o, "9223372036854775807"})), TIO_OK);
        CHECK_EQ(h.offset, INT64_MAX);
    }

    CASE("storage_alloc_discard");
    CHECK_EQ(parse(&h, &e, KV({"storage_alloc_discard", "true"})), TIO_OK);
    CHECK_EQ(h.discard, 1);
    CHECK_EQ(h.storage_keys_seen, 1);
    CHECK_EQ(parse(&h, &e, KV({"storage_alloc_discard", "no"})), TIO_OK);
    CHECK_EQ(h.discard, 0);

    CASE("striping hints");
    CHECK_EQ(parse(&h, &e, KV({"striping_factor", "4"}, {"striping_unit", "1048576"})), TIO_OK);
    CHECK_EQ(h.striping_factor, 4);
    CHECK_EQ(h.striping_unit, 1048576);

    /* key and alias both given with the same value is fine */
    CASE("key and alias agree");
    CHECK_EQ(parse(&h, &e,
                   KV({"storage_alloc_filename", "/a"}, {"swin_filename", "/a"},
                      {"storage_alloc_offset", "4096"}, {"swin_offset", "4096"},
                      {"storage_alloc_factor", "auto"}, {"swin_factor", "auto"},
                      {"storage_alloc_order", "storage_first"}, {"swin_order", "storage_first"},
                      {"storage_alloc_unlink", "true"}, {"swin_unlink", "true"},
                      {"storage_alloc_engine", "mmap"}, {"swin_impl", "mmap"})),
             TIO_OK);
    CHECK(!strcmp(h.filename, "/a"));
    CHECK_EQ(h.offset, 4096);
    CHECK_EQ(h.factor_auto, 1);
    CHECK_EQ(h.order, TIO_ORDER_STORAGE_FIRST);
    CHECK_EQ(h.unlink, 1);

    CASE("user-level engine and its tuning");
    CHECK_EQ(parse(&h, &e, KV({"storage_alloc_engine", "ummap"})), TIO_OK);
    CHECK_EQ(h.engine, TIO_ENGINE_UMMAP);
    CHECK_EQ(h.segsize, 1u << 20);
    CHECK_EQ(h.flush_interval, 30);
    CHECK_EQ(h.readfile, 1);
    CHECK_EQ(h.policy, 0);
    CHECK_EQ(parse(&h, &e, KV({"swin_impl", "ummap"}, {"swin_segsize", "65536"},
                              {"swin_flushint", "-1"}, {"swin_readfile", "0"},
                              {"swin_ptype", "5"})), TIO_OK);
    CHECK_EQ(h.segsize, 65536);
    CHECK_EQ(h.flush_interval, UINT_MAX);
    CHECK_EQ(h.readfile, 0);
    CHECK_EQ(h.policy, 5);
    CHECK_EQ(parse(&h, &e, KV({"storage_alloc_engine", "ummap"},
                              {"storage_alloc_policy", "WIRO_F"},
                              {"storage_alloc_flush_interval", "never"})), TIO_OK);
    CHECK_EQ(h.policy, 4);
    CHECK_EQ(h.flush_interval, UINT_MAX);
    CHECK_EQ(parse(&h, &e, KV({"swin_impl", "ummap"}, {"storage_alloc_driver", "direct"})), TIO_OK);
    CHECK(!strcmp(h.driver, "direct"));
    CHECK_EQ(parse(&h, &e, KV({"storage_alloc_driver", "direct"})), TIO_E_INFO_VALUE);
    CHECK_EQ(parse(&h, &e, KV({"swin_impl", "ummap"})), TIO_OK);
    CHECK_EQ(h.sync_file, 0); /* the default: MPI_Win_sync covers its own window */
    CHECK_EQ(parse(&h, &e, KV({"swin_impl", "ummap"}, {"storage_alloc_sync_scope", "file"})),
             TIO_OK);
    CHECK_EQ(h.sync_file, 1);
    CHECK_EQ(parse(&h, &e, KV({"swin_impl", "ummap"}, {"storage_alloc_sync_scope", "window"})),
             TIO_OK);
    CHECK_EQ(h.sync_file, 0);
    CHECK_EQ(parse(&h, &e, KV({"storage_alloc_sync_scope", "file"})), TIO_E_INFO_VALUE);
    CHECK_HAS(e.msg, "storage_alloc_sync_scope");
    static const char *bad_tuning[][2] = {
        {"storage_alloc_segsize", "1000"}, {"storage_alloc_segsize", "2048"},
        {"storage_alloc_segsize", "12288"}, {"swin_segsize", "1Mi"},
        {"storage_alloc_flush_interval", "-2"}, {"swin_flushint", "soon"},
        {"storage_alloc_readfile", "maybe"}, {"storage_alloc_policy", "lru"},
        {"storage_alloc_driver", "aio"}, {"storage_alloc_sync_scope", "node"},
        {"swin_ptype", "6"}, {"swin_ptype", "-1"}};
    for (size_t i = 0; i < sizeof bad_tuning / sizeof bad_tuning[0]; i++) {
        char want[128];
        CHECK_EQ(parse(&h, &e, KV({"storage_alloc_engine", "ummap"},
                                  {bad_tuning[i][0], bad_tuning[i][1]})), TIO_E_INFO_VALUE);
        snprintf(want, sizeof want, "%s=\"%s\"", bad_tuning[i][0], bad_tuning[i][1]);
        CHECK_HAS(e.msg, want);
        CHECK_HAS(e.msg, "expected");
    }
}

static void test_conflicts(void)
{
    static const char *pairs[][4] = {
        {"storage_alloc_filename", "/a", "swin_filename", "/b"},
        {"storage_alloc_offset", "0", "swin_offset", "4096"},
        {"storage_alloc_factor", "0.5", "swin_factor", "auto"},
        {"storage_alloc_order", "memory_first", "swin_order", "storage_first"},
        {"storage_alloc_unlink", "true", "swin_unlink", "false"},
        {"storage_alloc_engine", "mmap", "swin_impl", "ummap"},
        {"storage_alloc_segsize", "4096", "swin_segsize", "8192"},
        {"storage_alloc_flush_interval", "1", "swin_flushint", "2"},
        {"storage_alloc_readfile", "1", "swin_readfile", "0"},
        {"storage_alloc_policy", "0", "swin_ptype", "1"},
        /* the same meaning spelled differently is still a conflict: the values differ */
        {"storage_alloc_unlink", "true", "swin_unlink", "1"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        struct tio_hints h;
        struct tio_err e;
        char label[128], want[160];
        snprintf(label, sizeof label, "conflict %s/%s", pairs[i][0], pairs[i][2]);
        CASE(label);
        CHECK_EQ(parse(&h, &e, KV({pairs[i][0], pairs[i][1]}, {pairs[i][2], pairs[i][3]})),
                 TIO_E_INFO_KEY);
        CHECK_EQ(e.cls, TIO_E_INFO_KEY);
        snprintf(want, sizeof want, "%s=\"%s\"", pairs[i][0], pairs[i][1]);
        CHECK_HAS(e.msg, want);
        snprintf(want, sizeof want, "%s=\"%s\"", pairs[i][2], pairs[i][3]);
        CHECK_HAS(e.msg, want);
        CHECK_HAS(e.msg, "conflict");
    }
}

/* Invalid values: class, and a message that names the hint and quotes the value. */
static void test_invalid(void)
{
    static const struct {
        const char *key, *val;
        int cls;
    } bad[] = {
        {"alloc_type", "disk", TIO_E_INFO_VALUE},
        {"alloc_type", "", TIO_E_INFO_VALUE},
        {"alloc_type", "STORAGE", TIO_E_INFO_VALUE},
        {"alloc_type", "storage ", TIO_E_INFO_VALUE},
        {"storage_alloc_filename", "", TIO_E_INFO_VALUE},
        {"swin_filename", "", TIO_E_INFO_VALUE},
        {"storage_alloc_offset", "-1", TIO_E_INFO_VALUE},
        {"storage_alloc_offset", "+1", TIO_E_INFO_VALUE},
        {"storage_alloc_offset", "abc", TIO_E_INFO_VALUE},
        {"storage_alloc_offset", "12k", TIO_E_INFO_VALUE},
        {"storage_alloc_offset", "0x1000", TIO_E_INFO_VALUE},
        {"storage_alloc_offset", "", TIO_E_INFO_VALUE},
        {"storage_alloc_offset", "1.5", TIO_E_INFO_VALUE},
        {"storage_alloc_offset", "9223372036854775808", TIO_E_INFO_VALUE}, /* > INT64_MAX */
        {"storage_alloc_offset", "18446744073709551616", TIO_E_INFO_VALUE}, /* overflow */
        {"swin_offset", "-4096", TIO_E_INFO_VALUE},
        {"swin_offset", "99999999999999999999999", TIO_E_INFO_VALUE},
        {"storage_alloc_factor", "1.5", TIO_E_INFO_VALUE},
        {"storage_alloc_factor", "-0.1", TIO_E_INFO_VALUE},
        {"storage_alloc_factor", "half", TIO_E_INFO_VALUE},
        {"storage_alloc_factor", "", TIO_E_INFO_VALUE},
        {"storage_alloc_factor", "0.5x", TIO_E_INFO_VALUE},
        {"storage_alloc_factor", "nan", TIO_E_INFO_VALUE},
        {"storage_alloc_factor", "inf", TIO_E_INFO_VALUE},
        {"storage_alloc_factor", "1e400", TIO_E_INFO_VALUE},
        {"storage_alloc_factor", "autox", TIO_E_INFO_VALUE},
        {"swin_factor", "2", TIO_E_INFO_VALUE},
        {"storage_alloc_order", "first", TIO_E_INFO_VALUE},
        {"storage_alloc_order", "", TIO_E_INFO_VALUE},
        {"swin_order", "Storage_First", TIO_E_INFO_VALUE},
        {"storage_alloc_unlink", "maybe", TIO_E_INFO_VALUE},
        {"storage_alloc_unlink", "2", TIO_E_INFO_VALUE},
        {"storage_alloc_unlink", "", TIO_E_INFO_VALUE},
        {"swin_unlink", "yess", TIO_E_INFO_VALUE},
        {"storage_alloc_discard", "perhaps", TIO_E_INFO_VALUE},
        {"storage_alloc_discard", "-1", TIO_E_INFO_VALUE},
        {"storage_alloc_engine", "posix", TIO_E_INFO_VALUE},
        {"storage_alloc_engine", "", TIO_E_INFO_VALUE},
        {"swin_impl", "MMAP2", TIO_E_INFO_VALUE},
        {"file_perm", "rw-r-----", TIO_E_INFO_VALUE},
        {"file_perm", "-1", TIO_E_INFO_VALUE},
        {"file_perm", "010000", TIO_E_INFO_VALUE}, /* above 07777 */
        {"file_perm", "4096", TIO_E_INFO_VALUE},   /* above 07777 */
        {"file_perm", "0689", TIO_E_INFO_VALUE},   /* not octal */
        {"file_perm", "", TIO_E_INFO_VALUE},
        {"file_perm", "0640 ", TIO_E_INFO_VALUE},
        {"access_style", "fast", TIO_E_INFO_VALUE},
        {"access_style", "", TIO_E_INFO_VALUE},
        {"access_style", ",", TIO_E_INFO_VALUE},
        {"access_style", "sequential,random", TIO_E_INFO_VALUE},
        {"access_style", "read_once,writeonce", TIO_E_INFO_VALUE},
        {"striping_factor", "0", TIO_E_INFO_VALUE},
        {"striping_factor", "-4", TIO_E_INFO_VALUE},
        {"striping_factor", "four", TIO_E_INFO_VALUE},
        {"striping_factor", "", TIO_E_INFO_VALUE},
        {"striping_factor", "9223372036854775808", TIO_E_INFO_VALUE}, /* > LONG_MAX */
        {"striping_unit", "0", TIO_E_INFO_VALUE},
        {"striping_unit", "1Mi", TIO_E_INFO_VALUE},
        {"striping_unit", "-65536", TIO_E_INFO_VALUE},
        /* the user-level engine's tuning hints need the engine */
        {"storage_alloc_segsize", "4096", TIO_E_INFO_VALUE},
        {"swin_segsize", "4096", TIO_E_INFO_VALUE},
        {"storage_alloc_flush_interval", "5", TIO_E_INFO_VALUE},
        {"swin_flushint", "5", TIO_E_INFO_VALUE},
        {"storage_alloc_readfile", "1", TIO_E_INFO_VALUE},
        {"swin_readfile", "1", TIO_E_INFO_VALUE},
        {"storage_alloc_policy", "2", TIO_E_INFO_VALUE},
        {"swin_ptype", "2", TIO_E_INFO_VALUE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct tio_hints h;
        struct tio_err e;
        char label[160], want[160];
        snprintf(label, sizeof label, "invalid %s=\"%s\"", bad[i].key, bad[i].val);
        CASE(label);
        /* with alloc_type=storage and a filename, only the bad hint is wrong */
        const struct kv *t =
            !strcmp(bad[i].key, "alloc_type")
                ? KV({bad[i].key, bad[i].val}, {"storage_alloc_filename", "/f"})
            : strstr(bad[i].key, "filename")
                ? KV({"alloc_type", "storage"}, {bad[i].key, bad[i].val})
                : KV({"alloc_type", "storage"}, {"storage_alloc_filename", "/f"},
                     {bad[i].key, bad[i].val});
        CHECK_EQ(parse(&h, &e, t), bad[i].cls);
        CHECK_EQ(e.cls, bad[i].cls);
        snprintf(want, sizeof want, "%s=\"%s\"", bad[i].key, bad[i].val);
        CHECK_HAS(e.msg, want);
        CHECK_HAS(e.msg, bad[i].cls == TIO_E_UNSUPPORTED ? "cannot be honoured" : "invalid");
        /* the message says what would be valid */
        if (bad[i].cls == TIO_E_INFO_VALUE && strcmp(bad[i].key, "storage_alloc_filename") &&
            strcmp(bad[i].key, "swin_filename"))
            CHECK(strstr(e.msg, "expected") || strstr(e.msg, "exclude") ||
                  strstr(e.msg, "empty"));
        /* the first error wins: a second parse into the same err does not overwrite it */
        char saved[TIO_ERRMSG_MAX];
        memcpy(saved, e.msg, sizeof saved);
        tio_hints_parse(&h, table_get, (void *)KV({"alloc_type", "bogus"}), &e);
        CHECK(!strcmp(saved, e.msg));
    }
}

static void test_file_perm(void)
{
    static const struct {
        const char *val;
        unsigned mode;
    } ok[] = {{"0640", 0640}, {"416", 0640}, {"0600", 0600}, {"384", 0600}, {"0", 0},
              {"0777", 0777}, {"07777", 07777}, {"4095", 07777}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct tio_hints h;
        struct tio_err e;
        char label[64];
        snprintf(label, sizeof label, "file_perm=%s", ok[i].val);
        CASE(label);
        CHECK_EQ(parse(&h, &e, KV({"file_perm", ok[i].val})), TIO_OK);
        CHECK_EQ(h.file_perm, ok[i].mode);
        CHECK_EQ(h.file_perm_given, 1);
    }
}

static void test_access_style(void)
{
    static const struct {
        const char *val;
        int bits;
    } ok[] = {
        {"read_once", TIO_ACCESS_READ_ONCE},
        {"write_once", 0},
        {"read_mostly", 0},
        {"write_mostly", 0},
        {"sequential", TIO_ACCESS_SEQUENTIAL},
        {"reverse_sequential", 0},
        {"random", TIO_ACCESS_RANDOM},
        {"read_once,sequential", TIO_ACCESS_READ_ONCE | TIO_ACCESS_SEQUENTIAL},
        {"read_once, random", TIO_ACCESS_READ_ONCE | TIO_ACCESS_RANDOM},
        {"write_mostly,random,read_once", TIO_ACCESS_RANDOM | TIO_ACCESS_READ_ONCE},
        {"sequential,sequential", TIO_ACCESS_SEQUENTIAL},
        {"write_once,read_mostly,reverse_sequential", 0},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct tio_hints h;
        struct tio_err e;
        char label[96];
        snprintf(label, sizeof label, "access_style=%s", ok[i].val);
        CASE(label);
        CHECK_EQ(parse(&h, &e, KV({"access_style", ok[i].val})), TIO_OK);
        CHECK_EQ(h.access_style, ok[i].bits);
        CHECK(!strcmp(h.access_style_str, ok[i].val));
    }
}

static void test_hugepages(void)
{
    struct tio_hints h;
    struct tio_err e;
    CASE("storage_alloc_hugepages");
    CHECK(!strcmp(TIO_WIN_HINT_HUGEPAGES, "storage_alloc_hugepages"));
    CHECK_EQ(parse(&h, &e, KV({"alloc_type", "storage"})), TIO_OK);
    CHECK_EQ(h.hugepages, -1); /* auto */
    CHECK_EQ(tio_hints_hugepages(&h), 1);
    CHECK_EQ(parse(&h, &e, KV({"access_style", "random"})), TIO_OK);
    CHECK_EQ(tio_hints_hugepages(&h), 0); /* auto: not for random accesses */
    CHECK_EQ(parse(&h, &e, KV({"storage_alloc_discard", "true"},
                              {"storage_alloc_hugepages", "true"})), TIO_OK);
    CHECK_EQ(tio_hints_hugepages(&h), 0); /* never on private mappings */
    CHECK_EQ(parse(&h, &e, KV({"storage_alloc_hugepages", "false"})), TIO_OK);
    CHECK_EQ(h.hugepages, 0);
    CHECK_EQ(tio_hints_hugepages(&h), 0);
    CHECK_EQ(parse(&h, &e, KV({"storage_alloc_hugepages", "true"},
                              {"access_style", "random"})), TIO_OK);
    CHECK_EQ(tio_hints_hugepages(&h), 1); /* asked for explicitly */
    CHECK_EQ(parse(&h, &e, KV({"storage_alloc_hugepages", "AUTO"})), TIO_OK);
    CHECK_EQ(h.hugepages, -1);
    CHECK_EQ(parse(&h, &e, KV({"storage_alloc_hugepages", "2m"})), TIO_E_INFO_VALUE);
    CHECK_HAS(e.msg, "storage_alloc_hugepages=\"2m\"");
}

static void test_parse_bool(void)
{
    static const char *yes[] = {"true", "TRUE", "True", "1", "yes", "YES", "Yes"};
    static const char *no[] = {"false", "FALSE", "False", "0", "no", "NO"};
    static const char *bad[] = {"", "2", "-1", "truex", "t", "y", "n", "00", "01",
                                "on", "off", "true false"};
    CASE("tio_parse_bool");
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        int v = -7;
        CHECK_EQ(tio_parse_bool(yes[i], &v), 0);
        CHECK_EQ(v, 1);
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        int v = -7;
        CHECK_EQ(tio_parse_bool(no[i], &v), 0);
        CHECK_EQ(v, 0);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int v = -7;
        CASE(bad[i]);
        CHECK(tio_parse_bool(bad[i], &v) != 0);
        CHECK_EQ(v, -7); /* untouched on failure */
    }
}

static void test_parse_u64(void)
{
    static const struct {
        const char *s;
        uint64_t v;
    } ok[] = {{"0", 0},
              {"1", 1},
              {"007", 7},
              {"4096", 4096},
              {" 42", 42},
              {"42 ", 42},
              {"\t 42 \n", 42},
              {"18446744073709551615", UINT64_MAX},
              {"00000000000000000000000018446744073709551615", UINT64_MAX},
              {"9223372036854775808", UINT64_C(9223372036854775808)}};
    static const char *bad[] = {"",      " ",   "-1",   "-0",    "+1",   " -1", "- 1",
                                "1 2",   "1,2", "0x10", "1e3",   "12k",  "abc", "1.0",
                                "18446744073709551616", "99999999999999999999999999",
                                "\t",    "42\n43"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t v = 12345;
        CASE(ok[i].s);
        CHECK_EQ(tio_parse_u64(ok[i].s, &v), 0);
        CHECK(v == ok[i].v);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 12345;
        CASE(bad[i]);
        CHECK(tio_parse_u64(bad[i], &v) != 0);
        CHECK(v == 12345);
    }
}

/* A value longer than the parser's buffer: the getter truncates it (as MPI_Info_get
 * does); the parse must not overrun anything. */
static void test_long_values(void)
{
    struct tio_hints h;
    struct tio_err e;
    static char longpath[8192], longval[8192];
    CASE("long values");
    memset(longpath, 'p', sizeof longpath - 1);
    longpath[0] = '/';
    memset(longval, '1', sizeof longval - 1);
    int rc = parse(&h, &e, KV({"alloc_type", "storage"}, {"storage_alloc_filename", longpath}));
    CHECK(rc == TIO_OK || rc == TIO_E_INFO_VALUE);
    CHECK(strlen(h.filename) < sizeof h.filename);
    CHECK_EQ(parse(&h, &e, KV({"storage_alloc_offset", longval})), TIO_E_INFO_VALUE);
    CHECK_HAS(e.msg, "storage_alloc_offset");
    CHECK(strlen(e.msg) < TIO_ERRMSG_MAX);
}

int main(void)
{
    test_defaults();
    test_keys_and_aliases();
    test_conflicts();
    test_invalid();
    test_file_perm();
    test_access_style();
    test_hugepages();
    test_parse_bool();
    test_parse_u64();
    test_long_values();
    printf("test_hints: all checks passed\n");
    return 0;
}
