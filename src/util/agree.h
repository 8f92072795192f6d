/* Collective agreement on errors: a collective call where one process failed locally
 * must fail on every process (else the others hang in the next collective), and every
 * process should report the real reason. */
#ifndef TIO_UTIL_AGREE_H
#define TIO_UTIL_AGREE_H

#include <mpi.h>

#include "util/error.h"

/* All processes of comm call this. flags[0..n) are OR-ed (MPI_MAX) across processes
 * (n <= 6). When some process has an error in err, every process gets the error of the
 * lowest such rank in err (prefixed with that rank) and TIO error class is returned. */
int tio_agree(MPI_Comm comm, struct tio_err *err, int *flags, int n);

/* Every process of comm gets root's error (root knows it failed; the others know that it
 * did), prefixed "rank R: ". Returns its class. */
int tio_share_error(MPI_Comm comm, int root, struct tio_err *err);
/* Take the error (cls, msg) of process root as ours, prefixed "rank R: ". */
void tio_err_adopt(struct tio_err *err, int cls, const char *msg, int root);

#endif
