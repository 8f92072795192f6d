/* Two-phase aggregation through tierio's C API, in the spirit of seed 002's Algorithm 2:
 * every process holds three arrays x, y, z of n doubles (n differs between processes; one
 * has none) and writes them to one shared file, rank after rank, each rank's x then y then
 * z. The accesses are declared once; the writes (and a read back) follow.
 *
 *   mpiexec -n 4 ./example-agg-write /path/to/file.dat
 *
 * Settings come from the info (or the environment: TIERIO_AGG_BUFFER_SIZE=...); here two
 * buffers of 64 KiB per aggregator, so that the rounds are pipelined. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include <tierio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: %s FILE\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* n doubles per array on this rank (rank 1 has nothing); where its data starts. */
    long long n = rank == 1 ? 0 : 1000 + 3000LL * rank;
    long long before = 0;
    for (int r = 0; r < rank; r++)
        before += r == 1 ? 0 : 1000 + 3000LL * r;
    double *xyz = malloc(sizeof(double) * (size_t)(3 * n + 1));
    for (long long i = 0; i < 3 * n; i++)
        xyz[i] = rank * 1e6 + (double)i;

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, TIO_AGG_HINT_BUFFER_SIZE, "64Ki");
    MPI_Info_set(info, TIO_AGG_HINT_BUFFER_COUNT, "2");
    tio_agg_t agg;
    tio_agg_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &agg);
    MPI_Info_free(&info);

    /* Declare the three accesses once: x, y, z, each one piece of n doubles. */
    int id[3];
    for (int k = 0; k < 3; k++) {
        MPI_Offset off = (MPI_Offset)(3 * before + k * n) * 8, len = (MPI_Offset)n * 8;
        tio_agg_declare(agg, n ? 1 : 0, &off, &len, &id[k]);
    }
    for (int k = 0; k < 3; k++)
        tio_agg_write(agg, id[k], xyz + k * n);
    tio_agg_sync(agg); /* durable */

    /* Read them back and compare. */
    double *back = calloc((size_t)(3 * n + 1), sizeof(double));
    for (int k = 0; k < 3; k++)
        tio_agg_read(agg, id[k], back + k * n);
    long long bad = 0;
    for (long long i = 0; i < 3 * n; i++)
        bad += back[i] != xyz[i];

    MPI_Info used;
    tio_agg_get_info(agg, &used);
    char ranks[256] = "";
    int flag;
    MPI_Info_get(used, "tierio_agg_aggregator_ranks", (int)sizeof ranks - 1, ranks, &flag);
    MPI_Info_free(&used);
    tio_agg_close(&agg);

    long long total_bad = 0;
    MPI_Allreduce(&bad, &total_bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("wrote and read back %d processes' x, y, z through aggregators %s: %s\n", size,
               ranks, total_bad ? "MISMATCH" : "all equal");
    free(xyz);
    free(back);
    MPI_Finalize();
    return total_bad ? 1 : 0;
}
