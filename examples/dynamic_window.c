/* Storage in a dynamic window: MPI_Alloc_mem with the storage hints, MPI_Win_attach,
 * remote puts at addresses exchanged with MPI_Get_address, MPI_Win_sync, MPI_Win_detach,
 * MPI_Free_mem. Run: mpiexec -n 2 ./example-dynamic-window [dir] */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    char path[4096];
    snprintf(path, sizeof path, "%s/dynamic.%d.dat", argc > 1 ? argv[1] : ".", rank);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_unlink", "true");
    int *buf;
    MPI_Alloc_mem(4096, info, &buf);
    MPI_Info_free(&info);
    buf[0] = -1;

    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_attach(win, buf, 4096);
    MPI_Aint mine, theirs;
    MPI_Get_address(buf, &mine);
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    MPI_Sendrecv(&mine, 1, MPI_AINT, left, 0, &theirs, 1, MPI_AINT, right, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);

    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(&rank, 1, MPI_INT, right, theirs, 1, MPI_INT, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win); /* writes back the attached storage */

    int ok = buf[0] == left;
    printf("rank %d: received %d from rank %d (%s)\n", rank, buf[0], left,
           ok ? "correct" : "WRONG");
    MPI_Win_detach(win, buf);
    MPI_Win_free(&win);
    MPI_Free_mem(buf);
    MPI_Finalize();
    return ok ? 0 : 1;
}
