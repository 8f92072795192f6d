/* The unit tests' helpers on top of the harness (tests/common/harness.h: checks,
 * temporary directories, file helpers): whether memory is mapped, and a fill pattern. */
#ifndef TIO_TEST_CHECK_H
#define TIO_TEST_CHECK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>

#include "../common/harness.h"
#include "../common/leftovers.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* Is any byte of [p, p+len) mapped? */
static inline int tt_is_mapped(const void *p, size_t len)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char line[8192];
    int hit = 0;
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a < hi && lo < b)
            hit = 1;
    }
    fclose(f);
    return hit;
}

static inline void tt_fill(void *p, size_t n, unsigned seed)
{
    unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        c[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 9)) % 251u + 1u);
}

/* A settings getter (util/settings.h) over a NULL-terminated key, value, key, value... list:
 * the value's full length, or -1 when the key is not there. */
static inline long tt_kv_get(void *ctx, const char *key, char *val, size_t len)
{
    for (const char *const *kv = ctx; kv && kv[0]; kv += 2)
        if (!strcmp(kv[0], key)) {
            snprintf(val, len, "%s", kv[1]);
            return (long)strlen(kv[1]);
        }
    return -1;
}

#endif
