#include "util/agree.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tio_agree(MPI_Comm comm, struct tio_err *err, int *flags, int n)
{
    int rank, size, v[8];
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    /* size - rank is largest for the lowest failing rank. */
    v[0] = err->cls != TIO_OK ? size - rank : 0;
    for (int i = 0; i < n; i++)
        v[i + 1] = flags[i];
    int rc = PMPI_Allreduce(MPI_IN_PLACE, v, n + 1, MPI_INT, MPI_MAX, comm);
    if (rc != MPI_SUCCESS)
        return tio_err_set(err, TIO_E_OTHER, "MPI_Allreduce failed while agreeing on errors");
    for (int i = 0; i < n; i++)
        flags[i] = v[i + 1];
    if (v[0] == 0)
        return TIO_OK;
    return tio_share_error(comm, size - v[0], err);
}

size_t tio_err_rank_prefix(const char *msg)
{
    if (strncmp(msg, "rank ", 5) != 0)
        return 0;
    const char *p = msg + 5;
    while (*p >= '0' && *p <= '9')
        p++;
    return p > msg + 5 && p[0] == ':' && p[1] == ' ' ? (size_t)(p + 2 - msg) : 0;
}

void tio_err_adopt(struct tio_err *err, int cls, const char *msg, int root)
{
    /* msg may be err->msg itself, or a buffer shorter than it: copy it out first, no
     * further than its end. */
    char copy[sizeof err->msg], pre[32];
    size_t n = strnlen(msg, sizeof copy - 1);
    memcpy(copy, msg, n);
    copy[n] = 0;
    err->cls = cls;
    /* agreed before: it names its rank already */
    int pl = tio_err_rank_prefix(copy) ? 0 : snprintf(pre, sizeof pre, "rank %d: ", root);
    if (n > sizeof err->msg - 1 - (size_t)pl)
        n = sizeof err->msg - 1 - (size_t)pl;
    memcpy(err->msg, pre, (size_t)pl);
    memcpy(err->msg + pl, copy, n);
    err->msg[(size_t)pl + n] = 0;
}

int tio_err_wrap(struct tio_err *err, enum tio_errclass cls, const char *msg,
                 const char *fmt, ...)
{
    char ctx[TIO_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    int pl = (int)tio_err_rank_prefix(msg);
    return tio_err_set(err, cls, "%.*s%s: %s", pl, msg, ctx, msg + pl);
}

int tio_share_error(MPI_Comm comm, int root, struct tio_err *err)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    struct { int cls; char msg[TIO_ERRMSG_MAX]; } m;
    memset(&m, 0, sizeof m);
    if (rank == root) {
        m.cls = err->cls;
        snprintf(m.msg, sizeof m.msg, "%s", err->msg);
    }
    if (PMPI_Bcast(&m, (int)sizeof m, MPI_BYTE, root, comm) != MPI_SUCCESS) {
        tio_err_clear(err);
        return tio_err_set(err, TIO_E_OTHER, "MPI_Bcast failed while sharing an error");
    }
    tio_err_adopt(err, m.cls, m.msg, root);
    return err->cls;
}
