/* The entry libtierio-pmpi's MPI_Comm_split_type uses for TIERIO_COMM_TYPE_NEIGHBORHOOD:
 * the directory comes from info's nbhd_common_dirname. When no process gives one and the
 * MPI library has its own MPIX_COMM_TYPE_NEIGHBORHOOD (MPICH), the call goes to the library
 * unchanged, so that its other keys (network_topo) keep working; elsewhere it is an error. */
#ifndef TIO_TOPO_SPLIT_TYPE_H
#define TIO_TOPO_SPLIT_TYPE_H

#include <mpi.h>

#include "tierio/export.h"

/* Exported for libtierio-pmpi only (not in a public header). */
TIO_API int tio_topo_split_type(MPI_Comm comm, int key, MPI_Info info, MPI_Comm *newcomm);

#endif
