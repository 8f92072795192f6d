/* An MPI program that knows nothing of tierio: it asks MPI_Win_allocate for a storage
 * window through standard info hints, writes its rank's bytes and frees the window. Run
 * with libtierio-pmpi in LD_PRELOAD the window lives in the file named by the hint, which
 * the test then reads back; without it the hints are ignored and no file appears. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 2) {
        fprintf(stderr, "usage: plain_mpi FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", argv[1]);
    char offset[32]; /* each rank its own 4 KiB of the one file */
    snprintf(offset, sizeof offset, "%d", rank * 4096);
    MPI_Info_set(info, "storage_alloc_offset", offset);
    MPI_Info_set(info, "storage_alloc_unlink", "false");
    char *base;
    MPI_Win win;
    const MPI_Aint size = 4096;
    if (MPI_Win_allocate(size, 1, info, MPI_COMM_WORLD, &base, &win) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(base, 'A' + rank, (size_t)size);
    MPI_Win_free(&win);
    MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
