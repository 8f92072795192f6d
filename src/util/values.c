/* Values every layer parses and prints: booleans, integers, sizes, rates and times. */
#include "util/values.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

const char *tio_skip_blank(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* The end of a plain decimal number at p (digits, an optional fraction, an optional
 * exponent), or p when there is none; *integer: digits only. */
static const char *decimal_end(const char *p, int *integer)
{
    const char *c = p;
    size_t digits = 0;
    while (isdigit((unsigned char)*c))
        c++, digits++;
    *integer = 1;
    if (*c == '.') {
        *integer = 0;
        for (c++; isdigit((unsigned char)*c); c++)
            digits++;
    }
    if (!digits)
        return p;
    if (*c == 'e' || *c == 'E') {
        const char *x = c + 1 + (c[1] == '+' || c[1] == '-');
        if (isdigit((unsigned char)*x)) {
            *integer = 0;
            for (c = x; isdigit((unsigned char)*c); c++)
                ;
        }
    }
    return c;
}

static size_t trimmed_len(const char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return n;
}

/* A non-negative decimal number at the start of s (no sign, hexadecimal, inf or nan);
 * *end after it and its blanks, *unit_len the length of what follows without trailing
 * blanks (its unit), *integer when it is digits only. 0, -1 when there is none,
 * TIO_VALUE_RANGE when it overflows or underflows a double (*end still set, for the
 * caller to check the unit first). */
static int parse_number(const char *s, double *v, const char **end, size_t *unit_len,
                        int *integer)
{
    s = tio_skip_blank(s);
    const char *stop = decimal_end(s, integer);
    if (stop == s)
        return -1;
    char *e;
    errno = 0;
    double x = strtod(s, &e);
    if (e != stop)
        return -1;
    *v = x;
    *end = tio_skip_blank(e);
    *unit_len = trimmed_len(*end);
    return errno == ERANGE || !isfinite(x) ? TIO_VALUE_RANGE : 0;
}

/* The multiplier of a size suffix, or 0. Units mean what they say (docs/settings.md,
 * "Sizes"): K, M, G, T, P (and KB ...) are powers of 1000, Ki, Mi, Gi, Ti, Pi (and
 * KiB ...) powers of 1024; any case. */
static uint64_t size_unit(const char *u, size_t n)
{
    static const char prefixes[] = "KMGTP";
    if (n == 0 || (n == 1 && (*u == 'B' || *u == 'b')))
        return 1;
    const char *p = strchr(prefixes, toupper((unsigned char)*u));
    if (!p || !*p)
        return 0;
    int power = (int)(p - prefixes) + 1, binary = n >= 2 && (u[1] == 'i' || u[1] == 'I');
    size_t rest = n - 1 - (size_t)binary; /* what follows: nothing or "B" */
    if (rest > 1 || (rest == 1 && u[n - 1] != 'B' && u[n - 1] != 'b'))
        return 0;
    uint64_t m = 1;
    for (int i = 0; i < power; i++)
        m *= binary ? 1024 : 1000;
    return m;
}

int tio_parse_bytes(const char *s, uint64_t *out)
{
    double v;
    const char *u;
    size_t n;
    int integer, rc = parse_number(s, &v, &u, &n, &integer);
    uint64_t m, b;
    if (rc == -1 || (m = size_unit(u, n)) == 0)
        return -1;
    if (rc)
        return rc;
    if (integer) { /* exactly, also above 2^53 */
        errno = 0;
        unsigned long long x = strtoull(tio_skip_blank(s), NULL, 10);
        if (errno == ERANGE || __builtin_mul_overflow(x, m, &b))
            return TIO_VALUE_RANGE;
    } else {
        double d = v * (double)m;
        if (d >= 0x1p64)
            return TIO_VALUE_RANGE;
        if (d != floor(d))
            return -1; /* a fraction of a byte */
        b = (uint64_t)d;
    }
    *out = b;
    return 0;
}

int tio_parse_size(const char *s, uint64_t *out)
{
    return tio_parse_bytes(s, out) ? -1 : 0;
}

/* 0, or within [lo, hi] give or take rounding (0.001ns is 1 ps). */
static int in_range(double x, double lo, double hi)
{
    return x == 0 || (x >= lo * (1 - 1e-9) && x <= hi * (1 + 1e-9));
}

int tio_parse_rate(const char *s, double *out)
{
    double v;
    const char *u;
    size_t n;
    int integer, rc = parse_number(s, &v, &u, &n, &integer);
    if (rc == -1)
        return -1;
    if (n < 2 || u[n - 2] != '/' || (u[n - 1] != 's' && u[n - 1] != 'S'))
        return -1;
    size_t k = n - 2;
    while (k && (u[k - 1] == ' ' || u[k - 1] == '\t'))
        k--;
    uint64_t m = size_unit(u, k);
    if (m == 0)
        return -1;
    double r = v * (double)m;
    if (rc || !in_range(r, TIO_RATE_MIN, TIO_RATE_MAX))
        return TIO_VALUE_RANGE;
    *out = r;
    return 0;
}

int tio_parse_time(const char *s, double *out)
{
    static const struct { const char *name; double mult; } units[] = {
        {"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9},
    };
    double v;
    const char *u;
    size_t n;
    int integer, rc = parse_number(s, &v, &u, &n, &integer);
    if (rc == -1)
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].name) == n && !strncmp(u, units[i].name, n)) {
            double t = v * units[i].mult;
            if (rc || !in_range(t, TIO_TIME_MIN, TIO_TIME_MAX))
                return TIO_VALUE_RANGE;
            *out = t;
            return 0;
        }
    return -1;
}

void tio_format_rate(double bps, char *buf, size_t len)
{
    static const char *names[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s"};
    int i = 0;
    while (i < 4 && bps >= 1000)
        bps /= 1000, i++;
    snprintf(buf, len, "%.4g %s", bps, names[i]);
}

void tio_format_time(double s, char *buf, size_t len)
{
    if (s >= 1)
        snprintf(buf, len, "%.4g s", s);
    else if (s >= 1e-3)
        snprintf(buf, len, "%.4g ms", s * 1e3);
    else if (s >= 1e-6)
        snprintf(buf, len, "%.4g us", s * 1e6);
    else
        snprintf(buf, len, "%.4g ns", s * 1e9);
}

void tio_format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int i = 0;
    while (i < 4 && v >= 1024 && fmod(v, 1024) == 0)
        v /= 1024, i++;
    snprintf(buf, len, "%.0f %s", v, names[i]);
}

