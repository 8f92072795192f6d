/* What every driver shares: whole transfers with pwrite/pread (util/fileio.h), with
 * messages that name the target. */
#include "agg/driver.h"

#include <errno.h>

#include "util/fileio.h"

int tio_agg_pwrite_all(int fd, const void *buf, int64_t len, int64_t off, const char *path,
                       struct tio_err *err)
{
    if (tio_pwrite_full(fd, buf, (size_t)len, (uint64_t)off) < 0)
        return tio_err_errno(err, errno, "writing %lld bytes at offset %lld of \"%s\"",
                             (long long)len, (long long)off, path);
    return TIO_OK;
}

int tio_agg_pread_all(int fd, void *buf, int64_t len, int64_t off, const char *path,
                      struct tio_err *err)
{
    ssize_t r = tio_pread_full(fd, buf, (size_t)len, (uint64_t)off);
    if (r < 0)
        return tio_err_errno(err, errno, "reading %lld bytes at offset %lld of \"%s\"",
                             (long long)len, (long long)off, path);
    if (r < len)
        return tio_err_set(err, TIO_E_IO, "reading bytes %lld..%lld of \"%s\": the file "
                           "ends at %lld", (long long)off, (long long)(off + len), path,
                           (long long)(off + r));
    return TIO_OK;
}
