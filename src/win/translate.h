/* Displacement translation for storage windows made on MPI's shared-memory window
 * (overlay.c). There the window the application sees starts `shift` bytes after the
 * piece MPI allocated (so that it starts on a page and the file can be mapped over it);
 * the MPI_* one-sided wrappers of libtierio-pmpi add the shift, in the target's
 * displacement units, to every target displacement. Windows without a shift cost one
 * atomic load. */
#ifndef TIO_WIN_TRANSLATE_H
#define TIO_WIN_TRANSLATE_H

#include <mpi.h>

#include "tierio/export.h"

/* Exported (TIO_API) for libtierio-pmpi only; not declared in a public header, not API. */
TIO_API extern int tio_xlate_count;

/* Called by libtierio-pmpi when it is loaded: only then are the one-sided calls
 * translated, so only then may overlay windows be made. */
TIO_API void tio_mark_rma_interposed(void);
int tio_rma_interposed(void);

/* shifts[n] in bytes and disp_units[n] of every rank (copied). Returns 0 or ENOMEM. */
int tio_xlate_register(MPI_Win win, int n, const MPI_Aint *shifts,
                       const MPI_Aint *disp_units);
void tio_xlate_unregister(MPI_Win win);
TIO_API MPI_Aint tio_xlate_disp_slow(MPI_Win win, int rank, MPI_Aint disp);

static inline MPI_Aint tio_xlate_disp(MPI_Win win, int rank, MPI_Aint disp)
{
    if (__atomic_load_n(&tio_xlate_count, __ATOMIC_ACQUIRE) == 0)
        return disp;
    return tio_xlate_disp_slow(win, rank, disp);
}

#endif
