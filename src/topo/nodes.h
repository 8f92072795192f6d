/* Which processes of a communicator share a node: those with the same processor name.
 * MPI defines MPI_Get_processor_name as naming the actual node a process runs on (Open MPI
 * and MPICH give the host name); names are compared by a 128-bit hash in one allgather, which
 * costs far less than making an MPI_COMM_TYPE_SHARED communicator. Each node is named by
 * its leader, its lowest rank in comm. */
#ifndef TIO_TOPO_NODES_H
#define TIO_TOPO_NODES_H

#include "topo/discover.h"

/* Collective: fills c->leader[r] for every rank r and returns the number of nodes (0 with
 * err set, on every process, when the exchange failed). */
int topo_find_nodes(struct topo_call *c, struct tio_err *err);

#endif
