#include "util/node.h"

int tio_node_comm(MPI_Comm comm, MPI_Comm *node, struct tio_err *err)
{
    *node = MPI_COMM_NULL;
    if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node) !=
        MPI_SUCCESS)
        return tio_err_set(err, TIO_E_OTHER, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) "
                           "failed");
    PMPI_Comm_set_errhandler(*node, MPI_ERRORS_RETURN);
    return TIO_OK;
}

int tio_node_numbers(MPI_Comm comm, MPI_Comm node, int *node_of, int *nnodes,
                     struct tio_err *err)
{
    int rank, size, leader;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    MPI_Comm own = MPI_COMM_NULL;
    if (node == MPI_COMM_NULL && tio_node_comm(comm, &own, err) != TIO_OK)
        return err->cls;
    /* Key 0: the node communicator keeps comm's order, its rank 0 is the node's lowest. */
    leader = rank;
    PMPI_Bcast(&leader, 1, MPI_INT, 0, own != MPI_COMM_NULL ? own : node);
    if (own != MPI_COMM_NULL)
        PMPI_Comm_free(&own);
    PMPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, comm);
    /* node_of holds leaders, each at or below its rank: renumber them 0, 1, ... in rank
     * order (a leader meets its own number before any rank of its node does). */
    int n = 0;
    for (int r = 0; r < size; r++)
        node_of[r] = node_of[r] == r ? -(++n) : node_of[node_of[r]];
    for (int r = 0; r < size; r++)
        node_of[r] = -node_of[r] - 1;
    *nnodes = n;
    return TIO_OK;
}

int tio_node_size(MPI_Comm comm)
{
    MPI_Comm node;
    struct tio_err ignore = {0};
    int n = 1;
    if (tio_node_comm(comm, &node, &ignore) == TIO_OK) {
        PMPI_Comm_size(node, &n);
        PMPI_Comm_free(&node);
    }
    return n;
}
