/* The collective steps of discovery, each carrying errors along (util/agree.h for the
 * agreement on errors alone): a step where one process
 * failed fails on every process with the same error (that of the lowest failing rank,
 * prefixed "rank R: "), so that no process waits in a later collective for one that gave
 * up, and every process reports the real reason. */
#ifndef TIO_TOPO_EXCHANGE_H
#define TIO_TOPO_EXCHANGE_H

#include <mpi.h>

#include "util/error.h"

/* Every process contributes n ints and gets everybody's in all[] (rank r's at all[r * n]).
 * all must have room for size * (n + 1) ints: the exchange allocates nothing, so that it
 * cannot fail on one process only. Returns TIO_OK, or the agreed error class with err set
 * on every process (all[] is filled all the same). */
int topo_allgather(MPI_Comm comm, const int *mine, int n, int *all, struct tio_err *err);

/* root's n ints (n <= 8) and root's error go to every process. An error of another process
 * is not looked at: only root acted. */
int topo_bcast(MPI_Comm comm, int root, int *vals, int n, struct tio_err *err);

#endif
