/* libtierio-pmpi: MPI_Comm_split_type. TIERIO_COMM_TYPE_NEIGHBORHOOD (which is MPICH's
 * MPIX_COMM_TYPE_NEIGHBORHOOD where that exists) goes to tierio's storage-topology
 * discovery; every other split type goes to the MPI library unchanged. */
#include <mpi.h>

#include "tierio/topo.h"
#include "topo/split_type.h"

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm)
{
    if (split_type != TIERIO_COMM_TYPE_NEIGHBORHOOD)
        return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    return tio_topo_split_type(comm, key, info, newcomm);
}
