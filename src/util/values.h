/* Values every layer parses and prints: booleans, integers, sizes, rates and times, with
 * one meaning each wherever tierio reads them (the site file, hints, the command line). */
#ifndef TIO_UTIL_VALUES_H
#define TIO_UTIL_VALUES_H

#include "tierio/export.h"
#include <stddef.h>
#include <stdint.h>

/* p past blanks and tabs. */
const char *tio_skip_blank(const char *p);

/* true|yes|1 and false|no|0 (case-insensitive). */
int tio_parse_bool(const char *s, int *out);
/* A decimal integer, blanks around it allowed; no sign. */
int tio_parse_u64(const char *s, uint64_t *out);

/* Values with units; return 0, -1 for a malformed value (no decimal number, a sign,
 * hexadecimal, inf, nan, an unknown unit) or TIO_VALUE_RANGE for a well-formed value out
 * of its range. *out is set only on success.
 *   sizes: bytes, or K M G T P (also KB ...: powers of 1000), Ki Mi Gi Ti Pi (also KiB ...:
 *          powers of 1024);
 *          at most 2^64 - 1 bytes, whole bytes
 *   rates: a size per second, "5GB/s", "38 GiB/s"; 0, or TIO_RATE_MIN to TIO_RATE_MAX
 *   times: s, ms, us, ns (bare numbers are seconds); 0, or TIO_TIME_MIN to TIO_TIME_MAX
 * tio_parse_size (also public, include/tierio/tier.h) returns -1 for both failures. */
#define TIO_VALUE_RANGE (-2)
/* The units of sizes, as messages and the reference say them. */
#define TIO_SIZE_UNITS "K, M, G, T, P (powers of 1000) or Ki, Mi, Gi, Ti, Pi (powers of 1024)"
#define TIO_RATE_MIN 1.0      /* B/s */
#define TIO_RATE_MAX 1e18     /* 1 EB/s */
#define TIO_RATE_RANGE "from 1 B/s to 1 EB/s"
#define TIO_TIME_MIN 1e-12    /* 1 ps */
#define TIO_TIME_MAX 86400.0  /* a day */
#define TIO_TIME_RANGE "0, or from 1 ps to 1 day"
#define TIO_SIZE_RANGE "at most 2^64 - 1 bytes"
int tio_parse_bytes(const char *s, uint64_t *out);
TIO_API int tio_parse_size(const char *s, uint64_t *out);
int tio_parse_rate(const char *s, double *out);
int tio_parse_time(const char *s, double *out);
/* Readable forms for the site file and reports ("38.2 GB/s", "85 ns", "7.0 GiB"). */
void tio_format_rate(double bps, char *buf, size_t len);
void tio_format_time(double s, char *buf, size_t len);
void tio_format_size(uint64_t bytes, char *buf, size_t len);

#endif
