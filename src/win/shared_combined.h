/* MPI_Win_allocate_shared with part of every piece in memory and part on storage
 * (storage_alloc_factor < 1 or auto). */
#ifndef TIO_WIN_SHARED_COMBINED_H
#define TIO_WIN_SHARED_COMBINED_H

#include <mpi.h>
#include <stdint.h>

#include "win/state.h"

/* Collective over comm. st->sizes and st->prefix hold every process's piece. Lays the
 * window out in one address range that every process maps alike: memory parts from one
 * shared-memory object (removed from /dev/shm as soon as every process has it open),
 * storage parts from the file, one after another from storage_alloc_offset. Needs every
 * size and the offset to be multiples of the page size (the parts must meet on page
 * boundaries). Sets st->region (has_region) and st->shared_base; on error err is set and
 * the caller abandons st. Returns the error class. */
int tio_shared_combined(struct tio_win_state *st, MPI_Comm comm, const struct tio_hints *h,
                        uint64_t budget, struct tio_err *err);

#endif
