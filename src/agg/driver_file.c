/* The I/O driver of the target `file`: every aggregator writes its domain into the one
 * shared file at the access's own offsets. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "agg/driver.h"

static int file_write(struct tio_agg_driver *d, const void *mem, int64_t off, int64_t len,
                      struct tio_err *err)
{
    d->dirty = 1;
    return tio_agg_pwrite_all(d->fd, mem, len, off, d->path, err);
}

static int file_read(struct tio_agg_driver *d, void *mem, int64_t off, int64_t len,
                     struct tio_err *err)
{
    return tio_agg_pread_all(d->fd, mem, len, off, d->path, err);
}

static int file_sync(struct tio_agg_driver *d, struct tio_err *err)
{
    if (!d->dirty)
        return TIO_OK;
    if (fdatasync(d->fd) < 0)
        return tio_err_errno(err, errno, "fdatasync of \"%s\"", d->path);
    d->dirty = 0;
    return TIO_OK;
}

static void file_close(struct tio_agg_driver *d)
{
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
}

static const struct tio_agg_driver_ops file_ops = {file_write, file_read, file_sync,
                                                   file_close};

int tio_agg_driver_file(struct tio_agg_driver *d, const char *path, int flags,
                        struct tio_err *err)
{
    d->ops = &file_ops;
    d->flags = flags;
    d->fd = -1;
    snprintf(d->path, sizeof d->path, "%s", path);
    d->fd = open(path, flags | O_CLOEXEC);
    if (d->fd < 0)
        return tio_err_errno(err, errno, "opening \"%s\"", path);
    return TIO_OK;
}
