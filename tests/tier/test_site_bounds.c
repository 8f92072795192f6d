/* Numbers the site file must refuse although they parse as numbers: rates, times and sizes
 * that overflow (to infinity, past 2^64, by the unit's multiplication), are not finite,
 * negative or hexadecimal, or are absurd (a rate below 1 B/s or above 1 EB/s, a time below
 * 1 ps or above a day), and NUMA node numbers that do not fit. Each bad value is refused
 * with the file, the line, the key, the value and the reason; the good ones around the
 * bounds are kept exactly. */
#include <math.h>

#include "../unit/check.h"
#include "tier/tier_site.h"

/* A value of a key and what the parser must say: NULL = accepted. */
struct row {
    const char *key, *value, *why;
};

/* [network] keys take rates and times; [tier t] keys sizes and NUMA lists. */
static const struct row rows[] = {
    /* rates */
    {"bandwidth", "1e300TB/s", "out of range"}, /* finite number, infinite product */
    {"bandwidth", "1e400B/s", "out of range"},  /* strtod overflows */
    {"bandwidth", "1e19B/s", "out of range"},   /* above 1 EB/s */
    {"bandwidth", "1000001TB/s", "out of range"},
    {"bandwidth", "0.5B/s", "out of range"},    /* below 1 B/s */
    {"bandwidth", "1e-320B/s", "out of range"}, /* subnormal */
    {"bandwidth", "1e-400GB/s", "out of range"}, /* strtod underflows */
    {"bandwidth", "nan GB/s", "not a positive rate"},
    {"bandwidth", "inf GB/s", "not a positive rate"},
    {"bandwidth", "infinityB/s", "not a positive rate"},
    {"bandwidth", "-5GB/s", "not a positive rate"},
    {"bandwidth", "0x10GB/s", "not a positive rate"},
    {"bandwidth", "0GB/s", "not a positive rate"},
    {"node_bandwidth", "1e300TB/s", "out of range"},
    {"bandwidth", "1B/s", NULL},
    {"bandwidth", "0.001KB/s", NULL},
    {"bandwidth", "1000000TB/s", NULL}, /* 1 EB/s */
    {"bandwidth", "12.5GiB/s", NULL},
    /* times */
    {"latency", "1e300s", "out of range"},
    {"latency", "1e400ns", "out of range"},
    {"latency", "86401s", "out of range"},     /* above a day */
    {"latency", "1e-13s", "out of range"},     /* below 1 ps */
    {"latency", "1e-400s", "out of range"},
    {"latency", "nan", "not a time"},
    {"latency", "inf ms", "not a time"},
    {"latency", "-1ms", "not a time"},
    {"latency", "0x1p3s", "not a time"},
    {"node_latency", "1e300ms", "out of range"},
    {"latency", "0", NULL},
    {"latency", "0.001ns", NULL},
    {"latency", "86400s", NULL},
    {"latency", "90ns", NULL},
    /* hop counts */
    {"default_hops", "99999999999999999999999", "not a hop count"},
    {"default_hops", "1000001", "not a hop count"},
    {"hops", "a b 99999999999999999999", "not a hop count"},
    {"io_hops", "a 4294967297", "not a hop count"},
    {"default_hops", "1000000", NULL},
};

static const struct row tier_rows[] = {
    /* sizes */
    {"capacity", "18446744073709551616", "out of range"},   /* 2^64 */
    {"capacity", "99999999999999999999999", "out of range"}, /* strtoull overflows */
    {"capacity", "17179869184Gi", "out of range"},           /* 2^34 GiB = 2^64 */
    {"capacity", "16777216Ti", "out of range"},              /* 2^24 TiB = 2^64 */
    {"capacity", "18446744073709552KB", "out of range"},
    {"capacity", "1e300TB", "out of range"},
    {"capacity", "1e400", "out of range"},
    {"capacity", "nan", "not a positive size"},
    {"capacity", "inf", "not a positive size"},
    {"capacity", "-1", "not a positive size"},
    {"capacity", "0x10", "not a positive size"},
    {"capacity", "0", "not a positive size"},
    {"capacity", "18446744073709551615", NULL}, /* 2^64 - 1 */
    {"capacity", "16777215Ti", NULL},
    {"capacity", "9007199254740993", NULL}, /* 2^53 + 1: no rounding through a double */
    {"capacity", "1.5e3", NULL},
    /* NUMA node numbers */
    {"numa", "4294967296", "NUMA node"}, /* would wrap to node 0 */
    {"numa", "1,99999999999999999999", "NUMA node"},
    {"numa", "65536", "NUMA node"},
    {"numa", "0,65535", NULL},
};

static void one(const char *section, const struct row *r)
{
    char text[512], line[64];
    snprintf(text, sizeof text, "%s\n%s = %s\n", section, r->key, r->value);
    snprintf(line, sizeof line, "site.conf:%d:", !strcmp(section, "[network]") ? 2 : 3);
    struct tio_site s;
    struct tio_err err = {0};
    int rc = tio_site_parse(text, "site.conf", &s, &err);
    if (!r->why) {
        if (rc != TIO_OK)
            FAIL_NOW("%s = %s refused: %s", r->key, r->value, err.msg);
        tio_site_free(&s);
        return;
    }
    if (rc == TIO_OK)
        FAIL_NOW("%s = %s accepted (should be refused: %s)", r->key, r->value, r->why);
    CHECK_EQ(rc, TIO_E_ARG);
    char kv[128];
    snprintf(kv, sizeof kv, "%s = \"%s\"", r->key, r->value);
    CHECK_HAS(err.msg, line);
    CHECK_HAS(err.msg, strcmp(r->key, "hops") && strcmp(r->key, "io_hops") ? kv : r->key);
    CHECK_HAS(err.msg, r->why);
}

/* The values the good rows must keep exactly. */
static void exact(void)
{
    CASE("good values kept exactly");
    uint64_t b;
    double d;
    CHECK(tio_parse_size("18446744073709551615", &b) == 0 && b == UINT64_MAX);
    CHECK(tio_parse_size("9007199254740993", &b) == 0 && b == 9007199254740993ull);
    CHECK(tio_parse_size("16777215Ti", &b) == 0 && b == 16777215ull << 40);
    CHECK(tio_parse_size("1.5e3", &b) == 0 && b == 1500);
    CHECK(tio_parse_size("1.5Ki", &b) == 0 && b == 1536);
    CHECK(tio_parse_size("1.5K", &b) == 0 && b == 1500);
    CHECK(tio_parse_rate("1000000TB/s", &d) == 0 && d == 1e18);
    CHECK(tio_parse_time("86400s", &d) == 0 && d == 86400);
    CHECK(tio_parse_time("0.001ns", &d) == 0 && fabs(d - 1e-12) < 1e-24);
    /* whatever refuses, the output is left alone */
    b = 7;
    CHECK(tio_parse_size("1e300TB", &b) < 0 && b == 7);
    d = 7;
    CHECK(tio_parse_rate("1e300TB/s", &d) < 0 && d == 7);
    CHECK(tio_parse_time("1e300s", &d) < 0 && d == 7);
}

int main(void)
{
    CASE("[network] rates, times and hop counts");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        one("[network]", &rows[i]);
    CASE("[tier] sizes and NUMA lists");
    for (size_t i = 0; i < sizeof tier_rows / sizeof tier_rows[0]; i++)
        one("[tier t]\nkind = dram", &tier_rows[i]);
    exact();
    printf("test_site_bounds: all checks passed\n");
    return 0;
}
