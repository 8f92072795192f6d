/* Moving data into and out of a buffer on a tier: one-sided operations in the buffer's
 * lock_all epoch (seed 002: memWrite, memRead, memFlush). libtierio calls PMPI_* and
 * applies the displacement shift of storage windows made on MPI's shared-memory window
 * itself (win/translate.h), so it is right with and without libtierio-pmpi. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "buf/buffer.h"
#include "tierio/win.h"
#include "util/error_mpi.h"
#include "win/rma.h"

/* MPI counts are ints: large transfers go in pieces of 1 GiB. */
#define PIECE ((MPI_Aint)1 << 30)

static int check(struct tio_buf *b, const char *call, const void *p, MPI_Aint size,
                 MPI_Aint offset, int rank, struct tio_err *err)
{
    if (!b)
        return tio_err_set(err, TIO_E_ARG, "%s: buf is NULL", call);
    if (rank < 0 || rank >= b->size)
        return tio_err_set(err, TIO_E_ARG, "%s: rank %d is not in the buffer's communicator "
                           "(size %d)", call, rank, b->size);
    if (size < 0 || offset < 0)
        return tio_err_set(err, TIO_E_ARG, "%s: negative %s %lld", call,
                           size < 0 ? "size" : "offset",
                           (long long)(size < 0 ? size : offset));
    if (size > 0 && !p)
        return tio_err_set(err, TIO_E_ARG, "%s: %lld bytes from a NULL pointer", call,
                           (long long)size);
    if (offset > b->sizes[rank] || size > b->sizes[rank] - offset)
        return tio_err_set(err, TIO_E_ARG, "%s: bytes %lld..%lld are beyond rank %d's buffer "
                           "of %lld bytes on tier \"%s\"", call, (long long)offset,
                           (long long)offset + (long long)size, rank,
                           (long long)b->sizes[rank], b->tier);
    return TIO_OK;
}

static int mpi_failed(struct tio_buf *b, const char *call, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    PMPI_Error_string(rc, msg, &len);
    struct tio_err err = {0};
    tio_err_set(&err, TIO_E_OTHER, "%s: %s", call, msg);
    return tio_buf_fail(b, &err);
}

/* Both directions in PIECE-sized one-sided transfers. A write completes locally (src may
 * be reused; completion at the target is tio_buf_flush's), a read completely. */
static int transfer(tio_buf_t b, const char *call, int get, void *mem, MPI_Aint size,
                    MPI_Aint offset, int rank)
{
    struct tio_err err = {0};
    if (check(b, call, mem, size, offset, rank, &err))
        return tio_buf_fail(b, &err);
    for (MPI_Aint done = 0; done < size;) {
        int n = (int)(size - done < PIECE ? size - done : PIECE);
        int rc = tio_rma_move(get, (char *)mem + done, n, MPI_BYTE, rank, offset + done,
                              MPI_BYTE, b->win);
        if (rc != MPI_SUCCESS)
            return mpi_failed(b, call, rc);
        done += n;
    }
    int rc = !size ? MPI_SUCCESS
             : get ? PMPI_Win_flush(rank, b->win)
                   : PMPI_Win_flush_local(rank, b->win);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : mpi_failed(b, call, rc);
}

int tio_buf_write(tio_buf_t b, const void *src, MPI_Aint size, MPI_Aint offset, int rank)
{
    /* The transfer only reads src: the cast serves the one path for both directions. */
    return transfer(b, "tio_buf_write", 0, (void *)(uintptr_t)src, size, offset, rank);
}

int tio_buf_read(tio_buf_t b, void *dst, MPI_Aint size, MPI_Aint offset, int rank)
{
    return transfer(b, "tio_buf_read", 1, dst, size, offset, rank);
}

int tio_buf_flush(tio_buf_t b)
{
    if (!b) {
        struct tio_err err = {0};
        tio_err_set(&err, TIO_E_ARG, "tio_buf_flush: buf is NULL");
        return tio_buf_fail(b, &err);
    }
    int rc = PMPI_Win_flush_all(b->win);
    if (rc != MPI_SUCCESS)
        return mpi_failed(b, "tio_buf_flush", rc);
    /* Storage: this process's piece to its file, durably (only dirty pages). Memory:
     * the unified model's barrier between one-sided updates and local loads. */
    rc = tio_win_sync(b->win);
    if (rc != MPI_SUCCESS) {
        PMPI_Comm_call_errhandler(b->comm, rc);
        return rc;
    }
    return MPI_SUCCESS;
}
