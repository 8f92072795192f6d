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

/* Values with units; return 0, or -1 for a malformed or negative value.
 *   sizes: bytes, or K M G T (powers of 1024, also KiB...), KB MB GB TB (powers of 1000)
 *   rates: a size per second, "5GB/s", "38 GiB/s"
 *   times: s, ms, us, ns (bare numbers are seconds) */
TIO_API int tio_parse_size(const char *s, uint64_t *out); /* public: tierio/tier.h */
int tio_parse_rate(const char *s, double *out);
int tio_parse_time(const char *s, double *out);
/* Readable forms for the site file and reports ("38.2 GB/s", "85 ns", "7.0 GiB"). */
void tio_format_rate(double bps, char *buf, size_t len);
void tio_format_time(double s, char *buf, size_t len);
void tio_format_size(uint64_t bytes, char *buf, size_t len);

#endif
