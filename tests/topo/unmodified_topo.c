/* A program that knows nothing of tierio but its split-type constant (header only, no
 * tierio library linked): MPI_Comm_split_type(TIERIO_COMM_TYPE_NEIGHBORHOOD)
 *   - with keys that reverse the ranks: one communicator ordered by key;
 *   - on a missing directory: an error on every process whose message names the directory
 *     (tierio's; MPICH's own implementation would spin forever, Open MPI rejects the split
 *     type without naming anything).
 * With libtierio-pmpi in LD_PRELOAD both must hold. Without it Open MPI rejects the unknown
 * split type (the test registered without preload expects that failure). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tierio/topo.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char dir[4096];
    const char *base = getenv("TIERIO_TEST_TMPDIR");
    snprintf(dir, sizeof dir, "%s", base && *base ? base : "/tmp");

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "nbhd_common_dirname", dir);
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, TIERIO_COMM_TYPE_NEIGHBORHOOD, size - rank, info,
                                 &c);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS || c == MPI_COMM_NULL) {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len;
        if (rc != MPI_SUCCESS)
            MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "rank %d: FAIL: no neighborhood communicator (%s)\n", rank, msg);
        bad = 1;
    } else {
        int nrank = -1, nsize = -1;
        MPI_Comm_rank(c, &nrank);
        MPI_Comm_size(c, &nsize);
        if (nsize != size || nrank != size - 1 - rank) {
            fprintf(stderr, "rank %d: FAIL: ranks not ordered by key (new rank %d of %d, "
                    "expected %d of %d)\n", rank, nrank, nsize, size - 1 - rank, size);
            bad = 1;
        }
        MPI_Comm_free(&c);
    }
    /* A missing directory: tierio's error, everywhere. */
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/unmodified-topo-missing", dir);
    MPI_Info_create(&info);
    MPI_Info_set(info, "nbhd_common_dirname", missing);
    c = MPI_COMM_NULL;
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, TIERIO_COMM_TYPE_NEIGHBORHOOD, 0, info, &c);
    MPI_Info_free(&info);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, msg, &len);
    if (rc == MPI_SUCCESS || c != MPI_COMM_NULL || !strstr(msg, missing)) {
        fprintf(stderr, "rank %d: FAIL: a missing directory gave rc %d, message \"%s\"\n", rank,
                rc, msg);
        bad = 1;
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("unmodified_topo: one communicator ordered by key; a missing directory is "
               "an error naming it\n");
    MPI_Finalize();
    return any;
}
