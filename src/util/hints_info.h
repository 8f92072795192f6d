/* The storage-window hints read from and reported into an MPI_Info. */
#ifndef TIO_UTIL_HINTS_INFO_H
#define TIO_UTIL_HINTS_INFO_H

#include <mpi.h>

#include "util/hints.h"

/* Parse info (MPI_INFO_NULL gives the defaults). */
int tio_hints_from_info(struct tio_hints *h, MPI_Info info, struct tio_err *err);

/* Set in info the hints in effect for a window or allocation with these hints;
 * factor is the fraction really placed on storage (after page rounding). */
void tio_hints_report(const struct tio_hints *h, double factor, MPI_Info info);

#endif
