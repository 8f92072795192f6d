/* Internal helpers shared by the window-creating calls. */
#ifndef TIO_WIN_CREATE_H
#define TIO_WIN_CREATE_H

#include <mpi.h>
#include <stdint.h>

#include "util/error.h"
#include "win/hints.h"

/* PMPI_Win_create with an MPI_Aint displacement unit (large-count form when needed). */
int tio_pmpi_win_create(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                        MPI_Comm comm, MPI_Win *win);
/* Memory each process of comm may use for storage_alloc_factor=auto: what is available
 * (cgroup limits included), shared among the processes of the node, with headroom.
 * Collective over comm. */
uint64_t tio_auto_mem_budget(MPI_Comm comm);
/* Expose st's region with MPI_Win_create and attach st to the window; on failure (MPI
 * has called comm's error handler) st is released. Returns an MPI error code. */
struct tio_win_state;
/* Cache st on win, agreeing across comm; on failure every process frees win, st is
 * released and the error raised. Returns an MPI error code. */
int tio_attach_state(MPI_Win win, struct tio_win_state *st, MPI_Comm comm);
int tio_expose_region(struct tio_win_state *st, MPI_Aint size, MPI_Aint disp_unit,
                      MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win);
/* Parse info; warn when storage hints come without alloc_type=storage. */
int tio_parse_win_hints(struct tio_hints *h, MPI_Info info, struct tio_err *err);

#endif
