/* What every driver shares: whole transfers with pwrite/pread. */
#include "agg/driver.h"

#include <errno.h>
#include <unistd.h>

int tio_agg_pwrite_all(int fd, const void *buf, int64_t len, int64_t off, const char *path,
                       struct tio_err *err)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = pwrite(fd, p, (size_t)len, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return tio_err_errno(err, w < 0 ? errno : EIO, "writing %lld bytes at offset "
                                 "%lld of \"%s\"", (long long)len, (long long)off, path);
        p += w;
        off += w;
        len -= w;
    }
    return TIO_OK;
}

int tio_agg_pread_all(int fd, void *buf, int64_t len, int64_t off, const char *path,
                      struct tio_err *err)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = pread(fd, p, (size_t)len, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return tio_err_errno(err, errno, "reading %lld bytes at offset %lld of \"%s\"",
                                 (long long)len, (long long)off, path);
        if (r == 0)
            return tio_err_set(err, TIO_E_IO, "reading bytes %lld..%lld of \"%s\": the file "
                               "ends at %lld", (long long)off, (long long)(off + len), path,
                               (long long)off);
        p += r;
        off += r;
        len -= r;
    }
    return TIO_OK;
}
