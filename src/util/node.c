#include "util/node.h"

int tio_node_comm(MPI_Comm comm, MPI_Comm *node)
{
    /* Key 0: the node communicator keeps comm's order, its rank 0 is the lowest. */
    int rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node);
    if (rc != MPI_SUCCESS)
        *node = MPI_COMM_NULL;
    return rc;
}

int tio_node_number(MPI_Comm comm, int *node_of, int *nnodes)
{
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    MPI_Comm node;
    int rc = tio_node_comm(comm, &node);
    if (rc != MPI_SUCCESS)
        return rc;
    int leader = rank;
    PMPI_Bcast(&leader, 1, MPI_INT, 0, node);
    PMPI_Comm_free(&node);
    PMPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, comm);
    /* node_of holds leaders: renumber them 0, 1, ... in rank order (a leader comes first
     * among its node's ranks, so its number is known when the others ask for it). */
    *nnodes = 0;
    for (int r = 0; r < size; r++) {
        if (node_of[r] == r)
            node_of[r] = -(++*nnodes); /* a new node, marked */
        else
            node_of[r] = node_of[node_of[r]];
    }
    for (int r = 0; r < size; r++)
        node_of[r] = -node_of[r] - 1;
    return MPI_SUCCESS;
}
