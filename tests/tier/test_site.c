/* The site-file parser (src/tier/tier_site.c): values with units, every key of the format
 * on docs/site.example, host patterns and hop counts, a write/parse round trip, and every
 * malformed input refused with the file, the line and the reason. */
#include <math.h>

#include "../unit/check.h"
#include "tier/tier_site.h"

static void check_near(double got, double want, const char *what)
{
    if (fabs(got - want) > 1e-9 * fabs(want)) {
        fprintf(stderr, "[%s] %s: got %.12g, want %.12g\n", tt_current_case, what, got, want);
        exit(1);
    }
}

static void units(void)
{
    CASE("units");
    uint64_t b;
    double d;
    CHECK(tio_parse_size("4096", &b) == 0 && b == 4096);
    CHECK(tio_parse_size("16GiB", &b) == 0 && b == 16ull << 30);
    CHECK(tio_parse_size("16 Gi", &b) == 0 && b == 16ull << 30);
    CHECK(tio_parse_size("16 G", &b) == 0 && b == 16000000000ull);
    CHECK(tio_parse_size("128GB", &b) == 0 && b == 128000000000ull);
    CHECK(tio_parse_size("1.5Ki", &b) == 0 && b == 1536);
    CHECK(tio_parse_size("1.5K", &b) == 0 && b == 1500);
    CHECK(tio_parse_size("2mib", &b) == 0 && b == 2ull << 20);
    CHECK(tio_parse_size("1.3", &b) < 0);      /* a fraction of a byte */
    CHECK(tio_parse_size("-1", &b) < 0);
    CHECK(tio_parse_size("12 parsecs", &b) < 0);
    CHECK(tio_parse_size("", &b) < 0);
    CHECK(tio_parse_size("99999999999Ti", &b) < 0); /* beyond 2^64 */
    CHECK(tio_parse_rate("12.5GiB/s", &d) == 0);
    check_near(d, 12.5 * 1073741824.0, "12.5GiB/s");
    CHECK(tio_parse_rate("5 GB/s", &d) == 0);
    check_near(d, 5e9, "5 GB/s");
    CHECK(tio_parse_rate("800MB /s", &d) == 0);
    check_near(d, 8e8, "800MB /s");
    CHECK(tio_parse_rate("100", &d) < 0);      /* a rate needs /s */
    CHECK(tio_parse_rate("5GB", &d) < 0);
    CHECK(tio_parse_time("30ms", &d) == 0);
    check_near(d, 0.030, "30ms");
    CHECK(tio_parse_time("85 ns", &d) == 0);
    check_near(d, 85e-9, "85 ns");
    CHECK(tio_parse_time("7us", &d) == 0);
    check_near(d, 7e-6, "7us");
    CHECK(tio_parse_time("2", &d) == 0);
    check_near(d, 2, "2");
    CHECK(tio_parse_time("2 days", &d) < 0);
    CHECK(tio_parse_time("ms", &d) < 0);

    char buf[64];
    tio_format_rate(38.2e9, buf, sizeof buf);
    CHECK(!strcmp(buf, "38.2 GB/s"));
    tio_format_time(85e-9, buf, sizeof buf);
    CHECK(!strcmp(buf, "85 ns"));
    tio_format_size(7ull << 30, buf, sizeof buf);
    CHECK(!strcmp(buf, "7 GiB"));
}

static const char *example_path(void)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/docs/site.example", TIO_SOURCE_DIR);
    return p;
}

static void example(void)
{
    CASE("docs/site.example");
    struct tio_site s;
    struct tio_err err = {0};
    int rc = tio_site_load(example_path(), &s, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    CHECK(rc == TIO_OK);
    check_near(s.net_latency, 0.030, "network latency");
    check_near(s.net_bandwidth, 12.5 * 1073741824.0, "network bandwidth");
    check_near(s.node_latency, 0.5e-6, "node latency");
    check_near(s.node_bandwidth, 20e9, "node bandwidth");
    CHECK_EQ(s.ntiers, 4);
    const struct tio_site_tier *dram = tio_site_tier(&s, "dram");
    const struct tio_site_tier *hbm = tio_site_tier(&s, "hbm");
    const struct tio_site_tier *ssd = tio_site_tier(&s, "ssd");
    const struct tio_site_tier *pfs = tio_site_tier(&s, "pfs");
    CHECK(dram && hbm && ssd && pfs && !tio_site_tier(&s, "nvr"));
    CHECK_EQ(dram->kind, TIO_TIER_DRAM);
    check_near(dram->latency, 0.020, "dram latency");
    check_near(dram->read_bandwidth, 90 * 1073741824.0, "dram read bandwidth");
    check_near(dram->write_bandwidth, 90 * 1073741824.0, "dram write bandwidth");
    CHECK_EQ(dram->capacity, 192ull << 30);
    CHECK_EQ(dram->persistence, -1);
    CHECK_EQ(hbm->kind, TIO_TIER_HBM);
    CHECK(!strcmp(hbm->numa, "1"));
    CHECK_EQ(ssd->kind, TIO_TIER_NODE_LOCAL);
    CHECK(!strcmp(ssd->path, "/tmp/tierio-node-local"));
    check_near(ssd->read_bandwidth, 0.5 * 1073741824.0, "ssd read bandwidth");
    check_near(ssd->write_bandwidth, 0.15 * 1073741824.0, "ssd write bandwidth");
    CHECK_EQ(ssd->persistence, TIO_PERSIST_JOB);
    CHECK_EQ(pfs->kind, TIO_TIER_GLOBAL);
    CHECK_EQ(pfs->persistence, TIO_PERSIST_PERMANENT);
    CHECK(!strcmp(pfs->path, "/lustre/scratch"));

    /* nodes = node[0-3]: hosts by pattern, full or short name. */
    CHECK(tio_site_tier_on_host(hbm, "node2"));
    CHECK(tio_site_tier_on_host(hbm, "node3.cluster.example"));
    CHECK(!tio_site_tier_on_host(hbm, "node4"));
    CHECK(!tio_site_tier_on_host(hbm, "login0"));
    CHECK(tio_site_tier_on_host(ssd, "anything"));

    /* Hops: named pairs (either order), the default, 0 to itself. */
    CHECK_EQ(tio_site_hops(&s, "node0", "node1"), 1);
    CHECK_EQ(tio_site_hops(&s, "node1", "node0"), 1);
    CHECK_EQ(tio_site_hops(&s, "node3", "node2"), 1);
    CHECK_EQ(tio_site_hops(&s, "node0", "node3"), 2);
    CHECK_EQ(tio_site_hops(&s, "node2", "node2"), 0);
    CHECK_EQ(tio_site_io_hops(&s, "node0"), 1);
    CHECK_EQ(tio_site_io_hops(&s, "node0.cluster.example"), 1);
    CHECK_EQ(tio_site_io_hops(&s, "node1"), 3);
    tio_site_free(&s);
}

static void defaults_and_patterns(void)
{
    CASE("defaults and patterns");
    struct tio_site s;
    struct tio_err err = {0};
    const char *text = "[network]\n"
                       "hops = rack0-* rack1-* 5\n"
                       "hops = rack0-a rack1-b 7   # the first line that matches wins\n"
                       "io_hops = rack1-* 4\n"
                       "[tier x]\nkind = global\npath = /x#not-a-comment\n";
    CHECK(tio_site_parse(text, "<text>", &s, &err) == TIO_OK);
    CHECK_EQ(s.default_hops, 1);
    CHECK_EQ(s.default_io_hops, 1);
    CHECK_EQ(tio_site_hops(&s, "rack0-a", "rack1-b"), 5);
    CHECK_EQ(tio_site_hops(&s, "rack1-c", "rack0-q"), 5);
    CHECK_EQ(tio_site_hops(&s, "rack0-a", "rack0-b"), 1);
    CHECK_EQ(tio_site_io_hops(&s, "rack1-z"), 4);
    CHECK_EQ(tio_site_io_hops(&s, "rack0-z"), 1);
    CHECK(!strcmp(s.tiers[0].path, "/x#not-a-comment"));
    CHECK(s.net_latency == 0 && s.net_bandwidth == 0);
    tio_site_free(&s);
}

static void round_trip(void)
{
    CASE("write and parse again");
    struct tio_site s, t;
    struct tio_err err = {0};
    CHECK(tio_site_load(example_path(), &s, &err) == TIO_OK);
    const char *dir = tt_tmpdir("site");
    char path[4096];
    snprintf(path, sizeof path, "%s/site.conf", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    CHECK(tio_site_write(f, &s, "written by test_site\nsecond line") == 0);
    fclose(f);
    if (tio_site_load(path, &t, &err))
        fprintf(stderr, "%s\n", err.msg);
    CHECK(err.cls == TIO_OK);
    CHECK_EQ(t.ntiers, s.ntiers);
    check_near(t.net_latency, s.net_latency, "net latency");
    check_near(t.net_bandwidth, s.net_bandwidth, "net bandwidth");
    CHECK_EQ(t.nhops, s.nhops);
    CHECK_EQ(t.default_hops, s.default_hops);
    CHECK_EQ(t.default_io_hops, s.default_io_hops);
    CHECK_EQ(tio_site_hops(&t, "node3", "node2"), 1);
    for (int i = 0; i < s.ntiers; i++) {
        const struct tio_site_tier *a = &s.tiers[i], *b = &t.tiers[i];
        CHECK(!strcmp(a->name, b->name) && a->kind == b->kind);
        CHECK(!strcmp(a->path, b->path) && !strcmp(a->numa, b->numa));
        CHECK(!strcmp(a->nodes, b->nodes));
        CHECK_EQ(a->capacity, b->capacity);
        CHECK_EQ(a->persistence, b->persistence);
        /* Figures are written with 9 significant digits. */
        CHECK(fabs(a->latency - b->latency) <= 1e-8 * a->latency);
        CHECK(fabs(a->read_bandwidth - b->read_bandwidth) <= 1e-8 * a->read_bandwidth);
        CHECK(fabs(a->write_bandwidth - b->write_bandwidth) <= 1e-8 * a->write_bandwidth);
    }
    tio_site_free(&s);
    tio_site_free(&t);
}

/* text must fail with a message containing every string of want (NULL-terminated). */
static void refused(const char *text, const char *line, const char *reason)
{
    struct tio_site s;
    struct tio_err err = {0};
    int rc = tio_site_parse(text, "site.conf", &s, &err);
    if (rc == TIO_OK) {
        fprintf(stderr, "[%s] accepted:\n%s\n", tt_current_case, text);
        exit(1);
    }
    CHECK_EQ(rc, TIO_E_ARG);
    CHECK_HAS(err.msg, line);
    CHECK_HAS(err.msg, reason);
    CHECK(s.hops == NULL && s.io == NULL); /* nothing held after an error */
}

static void errors(void)
{
    CASE("malformed site files");
    refused("latency = 1ms\n", "site.conf:1:", "outside a section");
    refused("[network]\n\n[storage]\n", "site.conf:3:", "unknown section [storage]");
    refused("[tier]\n", "site.conf:1:", "needs a name");
    refused("[tier a b]\n", "site.conf:1:", "unknown section");
    refused("[network\n", "site.conf:1:", "malformed section header");
    refused("[network]\n[network]\n", "site.conf:2:", "a second [network]");
    refused("[network]\nlatency 5ms\n", "site.conf:2:", "want \"key = value\"");
    refused("[network]\nlatency =\n", "site.conf:2:", "has no value");
    refused("[network]\nlatency = 5 parsecs\n", "site.conf:2:", "not a time");
    refused("[network]\nbandwidth = 5GB\n", "site.conf:2:", "not a positive rate");
    refused("[network]\nbandwidth = 0GB/s\n", "site.conf:2:", "not a positive rate");
    refused("[network]\nlatency = 1ms\nlatency = 2ms\n", "site.conf:3:", "given twice");
    refused("[network]\nwhatever = 1\n", "site.conf:2:", "unknown key \"whatever\"");
    refused("[network]\nhops = a 3\n", "site.conf:2:", "two host names and a hop count");
    refused("[network]\nhops = a b -1\n", "site.conf:2:", "not a hop count");
    refused("[network]\nhops = a a 2\n", "site.conf:2:", "0 hops from itself");
    refused("[network]\nio_hops = a b 2\n", "site.conf:2:", "a host name and a hop count");
    refused("[tier .x]\nkind = dram\n", "site.conf:1:", "tier name \".x\"");
    refused("[tier a/b]\nkind = dram\n", "site.conf:1:", "tier name \"a/b\"");
    refused("[tier a]\nkind = dram\n[tier a]\nkind = dram\n", "site.conf:3:",
            "described twice");
    refused("[tier a]\nlatency = 1us\n", "site.conf:1:", "has no kind");
    refused("[tier a]\nkind = tape\n", "site.conf:2:", "want dram, hbm, node-local or global");
    refused("[tier a]\nkind = node-local\n", "site.conf:1:", "needs a path");
    refused("[tier a]\nkind = dram\npath = /tmp\n", "site.conf:1:", "path does not apply");
    refused("[tier a]\nkind = global\npath = rel/dir\n", "site.conf:3:", "absolute");
    refused("[tier a]\nkind = global\npath = /g\nnuma = 1\n", "site.conf:1:",
            "numa does not apply");
    refused("[tier a]\nkind = hbm\nnuma = 1,,2\n", "site.conf:3:", "NUMA node numbers");
    refused("[tier a]\nkind = hbm\nnuma = one\n", "site.conf:3:", "NUMA node numbers");
    refused("[tier a]\nkind = hbm\nnuma = 1,\n", "site.conf:3:", "NUMA node numbers");
    refused("[tier a]\nkind = dram\npersistence = job\n", "site.conf:1:",
            "persistence must be none");
    refused("[tier a]\nkind = dram\npersistence = forever\n", "site.conf:3:",
            "none, job or permanent");
    refused("[tier a]\nkind = dram\nscope = node\n", "site.conf:1:", "scope must be process");
    refused("[tier a]\nkind = global\npath = /g\nscope = node\n", "site.conf:1:",
            "scope must be global");
    refused("[tier a]\nkind = node-local\npath = /g\nscope = global\n", "site.conf:1:",
            "scope must be node or nodes");
    refused("[tier a]\nkind = dram\nbandwidth = 1GB/s\nread_bandwidth = 2GB/s\n",
            "site.conf:4:", "either bandwidth or read_bandwidth");
    refused("[tier a]\nkind = dram\ncapacity = 0\n", "site.conf:3:", "not a positive size");
    refused("[tier a]\nkind = dram\nsize = 1G\n", "site.conf:3:", "unknown key \"size\"");

    struct tio_site s;
    struct tio_err err = {0};
    CASE("a missing site file");
    CHECK(tio_site_load("/nonexistent/site.conf", &s, &err) == TIO_E_NOENT);
    CHECK_HAS(err.msg, "\"/nonexistent/site.conf\"");
    CHECK_HAS(err.msg, "No such file or directory");
}

/* test_tier_site --probed FILE [--network] TIER...: FILE (written by tierio probe) parses,
 * and each TIER has a positive latency and both bandwidths (the network too with
 * --network: both levels). */
static int probed(int argc, char **argv)
{
    CASE("a site file written by tierio probe");
    struct tio_site s;
    struct tio_err err = {0};
    if (tio_site_load(argv[2], &s, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--network")) {
            CHECK(s.net_latency > 0 && s.net_bandwidth > 0);
            CHECK(s.node_latency > 0 && s.node_bandwidth > 0);
            continue;
        }
        const struct tio_site_tier *t = tio_site_tier(&s, argv[i]);
        if (!t) {
            fprintf(stderr, "%s: no tier \"%s\"\n", argv[2], argv[i]);
            return 1;
        }
        CHECK(t->latency > 0 && t->read_bandwidth > 0 && t->write_bandwidth > 0);
        printf("%s: latency %.3g s, read %.4g B/s, write %.4g B/s\n", t->name, t->latency,
               t->read_bandwidth, t->write_bandwidth);
    }
    tio_site_free(&s);
    printf("test_site: %s checked\n", argv[2]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--probed"))
        return probed(argc, argv);
    units();
    example();
    defaults_and_patterns();
    round_trip();
    errors();
    printf("test_site: all checks passed\n");
    return 0;
}
