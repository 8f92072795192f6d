/* The table of I/O drivers. */
#include <stdio.h>
#include <string.h>

#include "ummap/driver.h"

static const struct tio_umdrv_ops *const drivers[] = {
    &tio_umdrv_posix,
    &tio_umdrv_direct,
#ifdef TIO_HAVE_URING
    &tio_umdrv_uring,
#endif
    NULL,
};

const struct tio_umdrv_ops *tio_umdrv_find(const char *name) {
    if (!name || !*name) return &tio_umdrv_posix;
    for (size_t i = 0; drivers[i]; i++)
        if (!strcmp(drivers[i]->name, name)) return drivers[i];
    return NULL;
}

const char *tio_umdrv_name(size_t i) {
    return i < sizeof drivers / sizeof *drivers ? (drivers[i] ? drivers[i]->name : NULL) : NULL;
}

void tio_umdrv_names(char *out, size_t len) {
    size_t at = 0, n = 0;
    while (drivers[n]) n++;
    out[0] = 0;
    for (size_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s\"%s\"",
                               i == 0 ? "" : i + 1 == n ? " or " : ", ", drivers[i]->name);
}
