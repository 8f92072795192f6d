/* MPI storage windows: the explicit C API.
 *
 * Each call mirrors the MPI function of the same name and takes the same arguments.
 * Given the hints of <tierio/hints.h> (alloc_type=storage, storage_alloc_filename, ...)
 * the memory of the window lives in a file or block device, mapped into the address
 * space; without them the call is exactly the MPI call. Errors are MPI error codes whose
 * MPI_Error_string names the hint or path and the reason; they are raised through the
 * communicator's (allocation) or window's error handler, as MPI does, and returned.
 * Collective calls agree on errors: when one process fails, every process returns an
 * error and nothing is left behind (no file created, no mapping, no window).
 *
 * libtierio-pmpi defines the MPI_* names on top of these, so unmodified programs get the
 * same behaviour by linking it or through LD_PRELOAD.
 *
 * Thread safety: the calls may be made from several threads under
 * MPI_THREAD_MULTIPLE, with MPI's own rules (collective calls on one communicator or
 * window are not concurrent). tierio keeps no global state but an allocation table
 * guarded by a mutex. */
#ifndef TIERIO_WIN_H
#define TIERIO_WIN_H

#include "tierio/export.h"

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

TIO_API int tio_win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                     void *baseptr, MPI_Win *win);
TIO_API int tio_win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win);
TIO_API int tio_win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                         void *baseptr);

/* Storage for dynamic windows: allocate with hints, then MPI_Win_attach / tio_win_attach. */
TIO_API int tio_alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
TIO_API int tio_free_mem(void *base);
TIO_API int tio_win_attach(MPI_Win win, void *base, MPI_Aint size);
TIO_API int tio_win_detach(MPI_Win win, const void *base);

/* MPI_Win_sync, and for storage windows: write back the dirty data and return when it is
 * durable (fdatasync level). Only dirty pages are written. */
TIO_API int tio_win_sync(MPI_Win win);
/* MPI_Win_free; writes back first unless storage_alloc_discard, and removes the file
 * with storage_alloc_unlink. */
TIO_API int tio_win_free(MPI_Win *win);
/* MPI_Win_get_info plus the storage hints in effect (storage_alloc_factor is the
 * fraction really on storage after page rounding). */
TIO_API int tio_win_get_info(MPI_Win win, MPI_Info *info_used);
/* MPI_Win_get_attr; MPI_WIN_CREATE_FLAVOR answers for the call the application made. */
TIO_API int tio_win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag);

/* Is win a tierio storage window (any part of its local memory on storage)? */
TIO_API int tio_win_is_storage(MPI_Win win, int *flag);

/* Large-count forms (MPI-4 MPI_Win_allocate_c and friends). */
TIO_API int tio_win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                       void *baseptr, MPI_Win *win);
TIO_API int tio_win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                              MPI_Comm comm, void *baseptr, MPI_Win *win);
TIO_API int tio_win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                           void *baseptr);

#ifdef __cplusplus
}
#endif
#endif
