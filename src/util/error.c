#include "util/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum tio_errclass tio_errclass_from_errno(int errnum)
{
    switch (errnum) {
    case ENOENT: case ENOTDIR: case ENAMETOOLONG: case ELOOP:
        return TIO_E_NOENT;
    case EACCES: case EPERM: case EROFS: case ETXTBSY:
        return TIO_E_ACCESS;
    case ENOSPC: case EFBIG: case EDQUOT:
        return TIO_E_NOSPACE;
    case ENOMEM:
        return TIO_E_NOMEM;
    case EINVAL: case EISDIR:
        return TIO_E_ARG;
    case EOPNOTSUPP: case ENODEV:
        return TIO_E_UNSUPPORTED;
    default:
        return TIO_E_IO;
    }
}

static void vset(struct tio_err *e, enum tio_errclass cls, const char *suffix,
                 const char *fmt, va_list ap)
{
    if (!e || e->cls != TIO_OK)
        return;
    e->cls = cls;
    int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    if (suffix && n >= 0 && (size_t)n < sizeof e->msg)
        snprintf(e->msg + n, sizeof e->msg - (size_t)n, ": %s", suffix);
}

int tio_err_set(struct tio_err *e, enum tio_errclass cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(e, cls, NULL, fmt, ap);
    va_end(ap);
    return cls;
}

int tio_err_errno(struct tio_err *e, int errnum, const char *fmt, ...)
{
    char buf[128];
    /* GNU strerror_r returns the message pointer. */
    const char *s = strerror_r(errnum, buf, sizeof buf);
    va_list ap;
    va_start(ap, fmt);
    enum tio_errclass cls = tio_errclass_from_errno(errnum);
    vset(e, cls, s, fmt, ap);
    va_end(ap);
    return cls;
}
