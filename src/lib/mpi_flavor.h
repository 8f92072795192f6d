/* Which MPI library tierio was compiled against, and the check that the program runs with
 * the same one. A program compiled with another MPI (MPICH's mpicc against an Open MPI
 * build of tierio) links and starts, then fails deep inside MPI ("Invalid MPI_Op"): the
 * two libraries' handles and constants differ. */
#ifndef TIO_LIB_MPI_FLAVOR_H
#define TIO_LIB_MPI_FLAVOR_H

#include <mpi.h>
#include <stddef.h>

#define TIO_STR_(x) #x
#define TIO_STR(x) TIO_STR_(x)

#if defined(OPEN_MPI)
#define TIO_BUILD_MPI_FAMILY "Open MPI"
#define TIO_BUILD_MPI                                                                    \
    "Open MPI " TIO_STR(OMPI_MAJOR_VERSION) "." TIO_STR(OMPI_MINOR_VERSION) "."          \
        TIO_STR(OMPI_RELEASE_VERSION)
#elif defined(MPICH)
#define TIO_BUILD_MPI_FAMILY "MPICH"
#define TIO_BUILD_MPI "MPICH " MPICH_VERSION
#else
#define TIO_BUILD_MPI_FAMILY ""
#define TIO_BUILD_MPI "MPI " TIO_STR(MPI_VERSION) "." TIO_STR(MPI_SUBVERSION)
#endif

/* NULL when the MPI library of the running program is of the family tierio was compiled
 * against (or when that cannot be told), else a message naming both. `running` is
 * MPI_Get_library_version's string. */
const char *tio_mpi_mismatch(const char *running, char *msg, size_t len);

#endif
