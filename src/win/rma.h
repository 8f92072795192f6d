/* One-sided transfers made by tierio itself (tier buffers, aggregation buffers, probes).
 *
 * A window tierio made on MPI's shared memory may start some bytes after the piece MPI
 * allocated (overlay.c, translate.h); every target displacement must then be shifted, and
 * a call site that forgot to would write to the wrong address in silence. So inside the
 * library no code calls PMPI_Put / PMPI_Get itself: it calls these, which shift. (The
 * MPI_* wrappers of libtierio-pmpi do the same for the application's calls.) The test
 * `layering_rma` fails when a raw call appears anywhere else in src/. */
#ifndef TIO_WIN_RMA_H
#define TIO_WIN_RMA_H

#include <mpi.h>

#include "win/translate.h"

static inline int tio_rma_put(const void *origin, int ocount, MPI_Datatype otype, int rank,
                              MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Win win)
{
    return PMPI_Put(origin, ocount, otype, rank, tio_xlate_disp(win, rank, disp), tcount,
                    ttype, win);
}

static inline int tio_rma_get(void *origin, int ocount, MPI_Datatype otype, int rank,
                              MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Win win)
{
    return PMPI_Get(origin, ocount, otype, rank, tio_xlate_disp(win, rank, disp), tcount,
                    ttype, win);
}

/* A put (get = 0) or get (get = 1) of the same shape on both sides: the direction as a
 * value, for code that moves data either way through one path. */
static inline int tio_rma_move(int get, void *mem, int count, MPI_Datatype otype, int rank,
                               MPI_Aint disp, MPI_Datatype ttype, MPI_Win win)
{
    return get ? tio_rma_get(mem, count, otype, rank, disp, count, ttype, win)
               : tio_rma_put(mem, count, otype, rank, disp, count, ttype, win);
}

#endif
