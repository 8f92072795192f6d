/* Errors inside tierio: a reason class plus a message that names the hint, argument
 * or path and why. At the MPI boundary they become MPI error codes whose
 * MPI_Error_string is that message (see error_mpi.c). */
#ifndef TIO_UTIL_ERROR_H
#define TIO_UTIL_ERROR_H

#include <stddef.h>

enum tio_errclass {
    TIO_OK = 0,
    TIO_E_ARG,        /* invalid argument */
    TIO_E_INFO_KEY,   /* a required hint is missing, or hints conflict */
    TIO_E_INFO_VALUE, /* a hint has an invalid value */
    TIO_E_NOENT,      /* no such file or directory */
    TIO_E_ACCESS,     /* permission denied */
    TIO_E_NOSPACE,    /* no space left on the device, or file cannot grow */
    TIO_E_IO,         /* other I/O error */
    TIO_E_NOMEM,      /* out of memory or address space */
    TIO_E_UNSUPPORTED,/* valid request this build or system cannot honour */
    TIO_E_OTHER,
    TIO_E_COUNT
};

#define TIO_ERRMSG_MAX 480

struct tio_err {
    enum tio_errclass cls;
    char msg[TIO_ERRMSG_MAX];
};

/* Record an error (the first one wins: later calls do not overwrite it). Returns cls. */
int tio_err_set(struct tio_err *e, enum tio_errclass cls, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, appending ": strerror(errnum)" and picking the class from errnum. */
int tio_err_errno(struct tio_err *e, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The class an errno value maps to. */
enum tio_errclass tio_errclass_from_errno(int errnum);
static inline void tio_err_clear(struct tio_err *e) { e->cls = TIO_OK; e->msg[0] = 0; }

#endif
