/* Which node each process is on: the one node numbering of tierio. A node is an MPI
 * shared-memory domain (MPI_COMM_TYPE_SHARED), numbered 0, 1, ... in the order of its
 * lowest rank; tiers, aggregation and storage windows all use this. (Topology discovery
 * asks another question, which processes share a processor name, without making a
 * communicator: topo/nodes.c.) */
#ifndef TIO_UTIL_NODE_H
#define TIO_UTIL_NODE_H

#include <mpi.h>

#include "util/error.h"

/* The processes of comm on this node, in comm's order (key 0), errors returning: the one
 * MPI_COMM_TYPE_SHARED split. Collective. TIO_OK, or the error. */
int tio_node_comm(MPI_Comm comm, MPI_Comm *node, struct tio_err *err);

/* node_of[r] for every rank r of comm and the number of nodes. node: this process's node
 * communicator (tio_node_comm), or MPI_COMM_NULL to make one here and free it. Collective.
 * TIO_OK, or the error. */
int tio_node_numbers(MPI_Comm comm, MPI_Comm node, int *node_of, int *nnodes,
                     struct tio_err *err);

/* The number of processes of comm on this node (1 when that cannot be found out).
 * Collective. */
int tio_node_size(MPI_Comm comm);

#endif
