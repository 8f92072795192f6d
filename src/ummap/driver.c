/* The table of I/O drivers. */
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
