/* Sorted, disjoint byte ranges: the engine keeps several arrays of them (the plan's runs
 * and windows, the manifest's extents), all structs that begin with int64_t lo, hi. */
#ifndef TIO_AGG_RANGES_H
#define TIO_AGG_RANGES_H

#include <stddef.h>
#include <stdint.h>

/* Index of the first of the n ranges (stride bytes apart) ending after x; n when none. */
static inline size_t tio_agg_first_ending_after(const void *ranges, size_t n, size_t stride,
                                                int64_t x)
{
    const char *base = ranges;
    size_t a = 0, b = n;
    while (a < b) {
        size_t k = a + (b - a) / 2;
        const int64_t *lohi = (const int64_t *)(const void *)(base + k * stride);
        if (lohi[1] > x)
            b = k;
        else
            a = k + 1;
    }
    return a;
}

#endif
