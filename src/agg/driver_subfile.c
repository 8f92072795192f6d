/* The I/O driver of the targets `subfiles` and `node-local`: the manifest says in which
 * data file, and where in it, every byte of the access lives; the files are <dir>/<base>.<k>
 * (next to the manifest, or in the node-local tier's directory). Files are opened when
 * first used. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "agg/driver.h"

static int fd_of(struct tio_agg_driver *d, int file, int writing, char *path, size_t plen,
                 struct tio_err *err)
{
    int len = snprintf(path, plen, "%s/%s.%d", d->dir, d->manifest->base, file);
    if (len < 0 || (size_t)len >= plen) {
        tio_err_set(err, TIO_E_ARG, "data file %d of \"%s\": path too long", file, d->path);
        return -1;
    }
    if (file < d->nfd && d->fds[file] >= 0)
        return d->fds[file];
    if (file >= d->nfd) {
        int *f = realloc(d->fds, sizeof *f * (size_t)(file + 1));
        if (!f) {
            tio_err_set(err, TIO_E_NOMEM, "out of memory");
            return -1;
        }
        for (int i = d->nfd; i <= file; i++)
            f[i] = -1;
        d->fds = f;
        d->nfd = file + 1;
    }
    int fd = open(path, d->flags | (writing ? O_CREAT : 0) | O_CLOEXEC, 0666);
    if (fd < 0) {
        tio_err_errno(err, errno, "opening \"%s\"", path);
        return -1;
    }
    d->fds[file] = fd;
    return fd;
}

/* Each piece of [off, off+len) in its file. */
static int transfer(struct tio_agg_driver *d, char *mem, int64_t off, int64_t len, int writing,
                    struct tio_err *err)
{
    char path[PATH_MAX + NAME_MAX + 32];
    for (int64_t x = off, end = off + len; x < end;) {
        const struct tio_agg_extent *e = tio_agg_manifest_find(d->manifest, x);
        if (!e)
            return tio_err_set(err, TIO_E_IO, "bytes from %lld of \"%s\" were never written "
                               "(no extent of its manifest holds them)", (long long)x,
                               d->path);
        int64_t n = (e->hi < end ? e->hi : end) - x;
        int fd = fd_of(d, e->file, writing, path, sizeof path, err);
        if (fd < 0)
            return err->cls;
        int rc = writing ? tio_agg_pwrite_all(fd, mem, n, e->at + (x - e->lo), path, err)
                         : tio_agg_pread_all(fd, mem, n, e->at + (x - e->lo), path, err);
        if (rc)
            return rc;
        mem += n;
        x += n;
    }
    if (writing)
        d->dirty = 1;
    return TIO_OK;
}

static int sub_write(struct tio_agg_driver *d, const void *mem, int64_t off, int64_t len,
                     struct tio_err *err)
{
    return transfer(d, (char *)mem, off, len, 1, err);
}

static int sub_read(struct tio_agg_driver *d, void *mem, int64_t off, int64_t len,
                    struct tio_err *err)
{
    return transfer(d, mem, off, len, 0, err);
}

static int sub_sync(struct tio_agg_driver *d, struct tio_err *err)
{
    if (!d->dirty)
        return TIO_OK;
    for (int i = 0; i < d->nfd; i++)
        if (d->fds[i] >= 0 && fdatasync(d->fds[i]) < 0)
            return tio_err_errno(err, errno, "fdatasync of \"%s/%s.%d\"", d->dir,
                                 d->manifest->base, i);
    d->dirty = 0;
    return TIO_OK;
}

static void sub_close(struct tio_agg_driver *d)
{
    for (int i = 0; i < d->nfd; i++)
        if (d->fds[i] >= 0)
            close(d->fds[i]);
    free(d->fds);
    d->fds = NULL;
    d->nfd = 0;
}

static const struct tio_agg_driver_ops sub_ops = {sub_write, sub_read, sub_sync, sub_close};

int tio_agg_driver_subfile(struct tio_agg_driver *d, struct tio_agg_manifest *m,
                           const char *dir, int flags, struct tio_err *err)
{
    d->ops = &sub_ops;
    d->flags = flags;
    d->fd = -1;
    d->manifest = m;
    d->fds = NULL;
    d->nfd = 0;
    int n = snprintf(d->dir, sizeof d->dir, "%s", dir);
    if (n < 0 || (size_t)n >= sizeof d->dir)
        return tio_err_set(err, TIO_E_ARG, "directory \"%.64s...\" is too long", dir);
    return TIO_OK;
}
