/* Errors that lower layers (the tier layer, MPI itself) return as MPI error codes, turned
 * back into a tio_err with the matching reason, so that the aggregation calls raise them
 * like their own errors. */
#ifndef TIO_AGG_MPIERR_H
#define TIO_AGG_MPIERR_H

#include <mpi.h>

#include "util/error.h"

/* Records "<what>: <MPI's message for rc>" in err; returns its class. */
int tio_agg_err_from_mpi(int rc, struct tio_err *err, const char *what);

#endif
