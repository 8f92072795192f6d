/* A combined window: a quarter of the addresses in memory, three quarters on storage, in
 * one contiguous range (storage_alloc_factor, storage_alloc_order). The file is removed
 * at MPI_Win_free (storage_alloc_unlink). Run: mpiexec -n 2 ./example-combined-window [dir] */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[4096];
    snprintf(path, sizeof path, "%s/combined.%d.dat", argc > 1 ? argv[1] : ".", rank);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_factor", "0.75");
    MPI_Info_set(info, "storage_alloc_order", "memory_first");
    MPI_Info_set(info, "storage_alloc_unlink", "true");

    const MPI_Aint bytes = 1 << 20;
    char *base;
    MPI_Win win;
    MPI_Win_allocate(bytes, 1, info, MPI_COMM_WORLD, &base, &win);
    MPI_Info_free(&info);
    memset(base, 'a' + rank, (size_t)bytes); /* touches memory and storage alike */
    MPI_Win_sync(win);

    MPI_Info used;
    char factor[64] = "?";
    int flag;
    MPI_Win_get_info(win, &used);
    MPI_Info_get(used, "storage_alloc_factor", sizeof factor - 1, factor, &flag);
    MPI_Info_free(&used);
    printf("rank %d: %lld bytes, fraction on storage %s\n", rank, (long long)bytes, factor);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
