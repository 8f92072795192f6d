/* A shared-memory window on storage: MPI_Win_allocate_shared lays the ranks' pieces out
 * one after another in one file; MPI_Win_shared_query gives a neighbour's piece for
 * plain loads and stores. Run on one node: mpiexec -n 4 ./example-shared-window [file] */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int rank, nprocs;
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &nprocs);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", argc > 1 ? argv[1] : "shared_window.dat");
    MPI_Info_set(info, "storage_alloc_unlink", "true");

    long *mine;
    MPI_Win win;
    MPI_Win_allocate_shared(64 * sizeof(long), sizeof(long), info, node, &mine, &win);
    MPI_Info_free(&info);

    /* Store into the right neighbour's piece directly. */
    long *right;
    MPI_Aint size;
    int disp_unit;
    MPI_Win_shared_query(win, (rank + 1) % nprocs, &size, &disp_unit, &right);
    MPI_Win_lock_all(0, win);
    right[0] = 1000 + rank;
    MPI_Win_sync(win);          /* memory barrier, and write-back to the file */
    MPI_Barrier(node);
    MPI_Win_sync(win);
    int ok = mine[0] == 1000 + (rank + nprocs - 1) % nprocs;
    MPI_Win_unlock_all(win);

    printf("rank %d: left neighbour wrote %ld into my piece (%s)\n", rank, mine[0],
           ok ? "correct" : "WRONG");
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return ok ? 0 : 1;
}
