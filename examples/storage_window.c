/* A window on storage: MPI_Win_allocate with hints, one-sided puts from every rank,
 * MPI_Win_sync to make the data durable, MPI_Win_get_info to see the hints in effect,
 * MPI_Win_free. Run: mpiexec -n 4 ./example-storage-window [file]
 * Built against libtierio-pmpi: only MPI calls appear here. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *path = argc > 1 ? argv[1] : "storage_window.dat";

    /* One shared file; each rank's window at its own offset (a multiple of 16 bytes). */
    const MPI_Aint n = 1024;
    char offset[32];
    snprintf(offset, sizeof offset, "%lld", (long long)(rank * n * (MPI_Aint)sizeof(int)));
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_offset", offset);

    int *base;
    MPI_Win win;
    MPI_Win_allocate(n * (MPI_Aint)sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &base, &win);
    MPI_Info_free(&info);

    /* Every rank writes its rank into slot `rank` of every window. */
    MPI_Win_lock_all(0, win);
    for (int t = 0; t < nprocs; t++)
        MPI_Put(&rank, 1, MPI_INT, t, rank, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_sync(win); /* durable from here on */

    int ok = 1;
    for (int r = 0; r < nprocs; r++)
        ok &= base[r] == r;

    MPI_Info used;
    char factor[64];
    int flag;
    MPI_Win_get_info(win, &used);
    MPI_Info_get(used, "storage_alloc_factor", sizeof factor - 1, factor, &flag);
    MPI_Info_free(&used);
    if (rank == 0)
        printf("storage window in %s: data %s, storage_alloc_factor in effect %s\n", path,
               ok ? "correct" : "WRONG", flag ? factor : "(none: not a storage window)");
    MPI_Win_free(&win);
    MPI_Finalize();
    return ok ? 0 : 1;
}
