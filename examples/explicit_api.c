/* The explicit API: tio_* calls take the MPI arguments and need only -ltierio (no MPI
 * name is replaced). Shows tio_win_allocate, tio_win_is_storage, tio_win_get_attr,
 * tio_win_sync, tio_win_free, and an error reported with its reason.
 * Run: mpiexec -n 2 ./example-explicit-api [file] */
#include <mpi.h>
#include <stdio.h>
#include <tierio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char offset[32];
    snprintf(offset, sizeof offset, "%d", rank * 8192);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, TIO_WIN_HINT_ALLOC_TYPE, "storage");
    MPI_Info_set(info, TIO_WIN_HINT_FILENAME, argc > 1 ? argv[1] : "explicit_api.dat");
    MPI_Info_set(info, TIO_WIN_HINT_OFFSET, offset);
    MPI_Info_set(info, TIO_WIN_HINT_UNLINK, "true");

    double *base;
    MPI_Win win;
    tio_win_allocate(8192, sizeof(double), info, MPI_COMM_WORLD, &base, &win);
    int is_storage, *flavor, flag;
    tio_win_is_storage(win, &is_storage);
    tio_win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    for (int i = 0; i < 1024; i++)
        base[i] = rank + i * 0.5;
    tio_win_sync(win);
    if (rank == 0)
        printf("storage: %s, flavor is MPI_WIN_FLAVOR_ALLOCATE: %s\n", is_storage ? "yes" : "no",
               flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE ? "yes" : "no");
    tio_win_free(&win);

    /* A bad hint: the error names it. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info_set(info, TIO_WIN_HINT_FACTOR, "1.5");
    int rc = tio_win_allocate(8192, 8, info, MPI_COMM_WORLD, &base, &win);
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    if (rank == 0)
        printf("as expected, the allocation failed: %s\n", msg);
    MPI_Info_free(&info);
    MPI_Finalize();
    return rc != MPI_SUCCESS && is_storage ? 0 : 1;
}
