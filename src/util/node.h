/* The node a process is on: MPI's shared-memory domain (MPI_COMM_TYPE_SHARED). The one
 * place that makes node communicators and numbers nodes, so that the tier layer, the
 * windows and the aggregation engine agree on both. (topo/ names nodes by processor name
 * instead, which costs no communicator.) */
#ifndef TIO_UTIL_NODE_H
#define TIO_UTIL_NODE_H

#include <mpi.h>

/* Collective over comm: the processes of comm on this process's node, in comm's order
 * (rank 0 is the lowest). Returns the MPI error code of the split. */
int tio_node_comm(MPI_Comm comm, MPI_Comm *node);

/* Collective over comm: node_of[r] (comm's size entries) is rank r's node, the nodes
 * numbered 0, 1, ... in the order of their lowest ranks; *nnodes their count. Returns the
 * MPI error code of the split (then node_of is not filled). */
int tio_node_number(MPI_Comm comm, int *node_of, int *nnodes);

#endif
