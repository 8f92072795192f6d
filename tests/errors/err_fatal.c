/* The default error handler, MPI_ERRORS_ARE_FATAL: an invalid hint aborts the job, and
 * the reason (hint and value) is on stderr. CTest passes it on that message; the line
 * "RETURNED" (the call came back) fails it.
 *   err_fatal win_allocate | win_allocate_shared | alloc_mem
 *   err_fatal long_message: a path so long that the message exceeds Open MPI's
 *                           MPI_MAX_ERROR_STRING (256): the reason must still show */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *call = argc > 1 ? argv[1] : "win_allocate";
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", "/nonexistent-dir-tierio/f.dat");
    if (!strcmp(call, "long_message")) {
        static char path[300] = "/nonexistent-dir-tierio/";
        size_t l = strlen(path);
        memset(path + l, 'L', 200); /* 224 characters: fits MPI_MAX_INFO_VAL */
        path[l + 200] = 0;
        MPI_Info_set(info, "storage_alloc_filename", path);
    } else {
        MPI_Info_set(info, "storage_alloc_order", "bogus_order");
    }
    void *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    if (!strcmp(call, "alloc_mem"))
        MPI_Alloc_mem(4096, info, &base);
    else if (!strcmp(call, "win_allocate_shared"))
        MPI_Win_allocate_shared(4096, 1, info, MPI_COMM_WORLD, &base, &win);
    else
        MPI_Win_allocate(4096, 1, info, MPI_COMM_WORLD, &base, &win);
    printf("RETURNED from %s\n", call);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
