/* Which processes share a directory, and using it: MPI_Comm_split_type with
 * TIERIO_COMM_TYPE_NEIGHBORHOOD and info key nbhd_common_dirname (seed 003, Fig. 3), then a
 * topology-aware checkpoint: each group writes one file in the directory with its own
 * communicator (MPI-IO), instead of all processes writing one file on the parallel file
 * system. Run: mpiexec -n 4 ./example-topo-split [dir] (default $TIERIO_NODE_LOCAL, or /tmp).
 * Built against libtierio-pmpi: the split is an MPI call; tierio.h only for the constant
 * and the cost of the discovery. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include <tierio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *env = getenv("TIERIO_NODE_LOCAL");
    const char *dir = argc > 1 ? argv[1] : env && *env ? env : "/tmp";

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "nbhd_common_dirname", dir);
    MPI_Info_set(info, "tierio_nbhd_algorithm", "auto"); /* the default: hybrid */
    MPI_Comm group;
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, TIERIO_COMM_TYPE_NEIGHBORHOOD, rank, info,
                                 &group);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) /* the default error handler aborts before this */
        return 1;
    struct tio_nbhd_stats cost;
    tio_nbhd_last_stats(&cost);
    if (rank == 0)
        printf("%s: %d group(s), found with %lld file operations in %.3f ms (%s)\n", dir,
               cost.groups, cost.fileops_all, cost.seconds * 1e3,
               tio_nbhd_algorithm_name(cost.algorithm));

    int ok = 1;
    if (group != MPI_COMM_NULL) { /* MPI_COMM_NULL: this process cannot see dir */
        int grank, gsize, first = rank;
        MPI_Comm_rank(group, &grank);
        MPI_Comm_size(group, &gsize);
        MPI_Bcast(&first, 1, MPI_INT, 0, group); /* names the group's file */
        char path[4096];
        snprintf(path, sizeof path, "%s/example-topo-split.%d", dir, first);
        MPI_File fh;
        MPI_File_open(group, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        MPI_File_write_at_all(fh, (MPI_Offset)grank * (MPI_Offset)sizeof rank, &rank, 1, MPI_INT,
                              MPI_STATUS_IGNORE);
        /* MPI-IO's rule for reading what others wrote: sync, barrier, sync. */
        MPI_File_sync(fh);
        MPI_Barrier(group);
        MPI_File_sync(fh);
        if (grank == 0) { /* every member's rank landed in its slot */
            int *back = malloc((size_t)gsize * sizeof *back), *who = malloc((size_t)gsize * sizeof *who);
            MPI_File_read_at(fh, 0, back, gsize, MPI_INT, MPI_STATUS_IGNORE);
            MPI_Gather(&rank, 1, MPI_INT, who, 1, MPI_INT, 0, group);
            for (int i = 0; i < gsize; i++)
                ok &= back[i] == who[i];
            printf("group of rank %d: %d process(es) share %s; their checkpoint %s\n", first,
                   gsize, dir, ok ? "is correct" : "is WRONG");
            free(back);
            free(who);
        } else {
            MPI_Gather(&rank, 1, MPI_INT, NULL, 1, MPI_INT, 0, group);
        }
        MPI_File_close(&fh);
        if (grank == 0)
            MPI_File_delete(path, MPI_INFO_NULL);
        MPI_Comm_free(&group);
    }
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
