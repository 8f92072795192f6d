/* Storage windows on MPI's own shared-memory window (one node, Open MPI).
 *
 * A window made with MPI_Win_create reaches its target through MPI's generic one-sided
 * path; in Open MPI that is osc pt2pt (messages the target must handle), 10-30x slower
 * than the osc sm path that MPI_Win_allocate gets on one node (measured with the DHT
 * benchmark; osc rdma crashes here). So when every process is on one node, tierio asks
 * MPI for a shared-memory window (MPI_Win_allocate_shared, non-contiguous: every piece
 * rounded to pages) and maps each process's file over the storage part of its piece, in
 * every process: osc sm's direct loads and stores then land in the file's pages.
 *
 * osc sm puts its own state before the first piece, so pieces do not start on a page.
 * Each process's window starts at the first unit boundary of its piece (a page, or 2 MiB
 * for large windows, so the file can be mapped with large folios), `shift` bytes in, and
 * each process maps the segment at its own address, so the shifts differ: the MPI_*
 * one-sided wrappers add the target's shift to target displacements (translate.h). Hence this
 * path is used only when libtierio-pmpi is loaded, and only with Open MPI, whose osc sm
 * reaches pieces through those addresses alone (its Fortran bindings call PMPI_* and so
 * bypass tierio altogether). TIERIO_SHM_OVERLAY=0 turns it off. */
#ifndef TIO_WIN_OVERLAY_H
#define TIO_WIN_OVERLAY_H

#include <mpi.h>
#include <stdint.h>

#include "win/hints.h"
#include "win/state.h"

/* Collective. *made = 1 when the window was made (st filled and attached to *win,
 * *baseptr set); *made = 0 when the case does not qualify and nothing was done (the
 * caller goes on with MPI_Win_create). On error st has been released, the error raised
 * through comm's handler, and its code is returned. */
int tio_overlay_allocate(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                         const struct tio_hints *h, uint64_t budget,
                         struct tio_win_state *st, void *baseptr, MPI_Win *win, int *made);

#endif
