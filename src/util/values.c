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

/* A non-negative decimal number at the start of s; *end after it. */
static int parse_number(const char *s, double *v, const char **end)
{
    s = tio_skip_blank(s);
    if (!isdigit((unsigned char)*s) && *s != '.')
        return -1;
    char *e;
    errno = 0;
    double x = strtod(s, &e);
    if (e == s || errno || !isfinite(x) || x < 0)
        return -1;
    *v = x;
    *end = tio_skip_blank(e);
    return 0;
}

/* The multiplier of a size suffix ("", "B", "K", "KiB", "KB", ...), or 0. */
static double size_unit(const char *u, size_t n)
{
    static const struct { const char *name; double mult; } units[] = {
        {"", 1}, {"B", 1},
        {"K", 1024.0}, {"KiB", 1024.0}, {"KB", 1e3},
        {"M", 1048576.0}, {"MiB", 1048576.0}, {"MB", 1e6},
        {"G", 1073741824.0}, {"GiB", 1073741824.0}, {"GB", 1e9},
        {"T", 1099511627776.0}, {"TiB", 1099511627776.0}, {"TB", 1e12},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].name) == n && !strncasecmp(u, units[i].name, n))
            return units[i].mult;
    return 0;
}

static size_t trimmed_len(const char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return n;
}

int tio_parse_size(const char *s, uint64_t *out)
{
    double v, m;
    const char *u;
    if (parse_number(s, &v, &u) < 0 || (m = size_unit(u, trimmed_len(u))) == 0)
        return -1;
    double b = v * m;
    if (b >= 18446744073709551615.0 || b != floor(b))
        return -1; /* too large, or a fraction of a byte */
    *out = (uint64_t)b;
    return 0;
}

int tio_parse_rate(const char *s, double *out)
{
    double v, m;
    const char *u;
    if (parse_number(s, &v, &u) < 0)
        return -1;
    size_t n = trimmed_len(u);
    if (n < 2 || u[n - 2] != '/' || (u[n - 1] != 's' && u[n - 1] != 'S'))
        return -1;
    size_t k = n - 2;
    while (k && (u[k - 1] == ' ' || u[k - 1] == '\t'))
        k--;
    if ((m = size_unit(u, k)) == 0)
        return -1;
    *out = v * m;
    return 0;
}

int tio_parse_time(const char *s, double *out)
{
    static const struct { const char *name; double mult; } units[] = {
        {"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9},
    };
    double v;
    const char *u;
    if (parse_number(s, &v, &u) < 0)
        return -1;
    size_t n = trimmed_len(u);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].name) == n && !strncmp(u, units[i].name, n)) {
            *out = v * units[i].mult;
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

