/* Probes for MPI library defects that would corrupt storage windows silently. */
#ifndef TIO_WIN_QUIRKS_H
#define TIO_WIN_QUIRKS_H

#include "util/error.h"

/* MPICH 4.0.2 (ch4) lands RMA on an MPI_Win_create window at (base & ~15) + disp, i.e.
 * base % 16 bytes too early, when base is not 16-byte aligned (found here; it is also
 * behind MACHINE.md's MPI_Win_allocate finding). A storage window at a file offset that
 * is not a multiple of 16 has such a base. Sets err and returns its class when base
 * would be misplaced by this MPI library; probes the library once per process. */
int tio_check_window_base(const void *base, const char *what, struct tio_err *err);

#endif
