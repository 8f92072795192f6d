/* Multi-level checkpointing (tierio/ckpt.h): a toy simulation checkpoints its state at
 * every step to node-local storage; tierio drains each checkpoint to the global directory
 * in the background. The program "crashes" after 3 steps (it just closes the handle and
 * forgets its state), then starts again like a new run would: restart finds step 3 and
 * the simulation goes on to step 6 from there.
 * Run: mpiexec -n 2 ./example-ckpt-multilevel LOCAL_DIR GLOBAL_DIR
 * (on a cluster LOCAL_DIR is node-local, e.g. /tmp or a ramdisk, and GLOBAL_DIR is on the
 * parallel file system). Both are created if missing; the example removes what it wrote. */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <tierio.h>

#define N 100000 /* doubles of state per process */

static int rank;

static void step(double *x, int t)
{
    for (int i = 0; i < N; i++)
        x[i] = 0.5 * x[i] + t + rank;
}

static void save(tio_ckpt_t ck, const double *x, int t)
{
    char path[4096];
    tio_ckpt_begin(ck, t);
    tio_ckpt_route(ck, "state", path, sizeof path); /* where this process writes */
    FILE *f = fopen(path, "wb");
    fwrite(x, sizeof *x, N, f);
    fclose(f);
    tio_ckpt_commit(ck); /* durable locally; the drain to GLOBAL_DIR starts */
}

/* Returns the step to continue from (0: fresh start). */
static int load(tio_ckpt_t ck, double *x)
{
    long long version;
    int level;
    tio_ckpt_restart(ck, &version, &level);
    if (version < 0)
        return 0;
    char path[4096];
    tio_ckpt_route(ck, "state", path, sizeof path); /* where to read it */
    FILE *f = fopen(path, "rb");
    size_t got = fread(x, sizeof *x, N, f);
    fclose(f);
    if (rank == 0)
        printf("restarted from step %lld (%s level), %zu values\n", version,
               level == TIO_CKPT_LEVEL_LOCAL ? "local" : "global", got);
    return (int)version;
}

static double run(MPI_Info info, int until)
{
    double *x = calloc(N, sizeof *x);
    tio_ckpt_t ck;
    tio_ckpt_open(MPI_COMM_WORLD, "toy", info, &ck);
    int t = load(ck, x);
    while (t < until) {
        step(x, ++t);
        save(ck, x, t);
    }
    long long local_v, global_v;
    tio_ckpt_status(ck, &local_v, &global_v);
    tio_ckpt_close(&ck); /* waits for the drain in flight */
    if (rank == 0)
        printf("step %d: complete locally up to %lld, globally up to %lld (before close)\n", t,
               local_v, global_v);
    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += x[i];
    free(x);
    return sum;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: %s LOCAL_DIR GLOBAL_DIR\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    /* The directories would exist on a real system; make them if not (and remove only
     * what we made). */
    int made_local = mkdir(argv[1], 0755) == 0;
    int made_global = rank == 0 && mkdir(argv[2], 0755) == 0;
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, TIO_CKPT_HINT_LOCAL_DIR, argv[1]);   /* fast, node-local */
    MPI_Info_set(info, TIO_CKPT_HINT_GLOBAL_DIR, argv[2]);  /* slow, survives node loss */
    MPI_Info_set(info, TIO_CKPT_HINT_KEEP, "2");            /* versions kept per level */

    run(info, 3);                  /* first run: steps 1..3, then "crash" */
    double resumed = run(info, 6);    /* second run: restarts from step 3, goes to 6 */

    /* The same 6 steps without any interruption must give the same state. */
    double *x = calloc(N, sizeof *x);
    for (int t = 1; t <= 6; t++)
        step(x, t);
    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += x[i];
    free(x);
    int same = resumed == sum, all_same; /* same operations: bit-identical */
    MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0)
        printf("resumed run %s the uninterrupted one\n", all_same ? "matches" : "DIFFERS FROM");

    /* Clean up what the example wrote (one process per directory). */
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/toy'", argv[1]);
    MPI_Comm node;
    int node_rank;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    if (node_rank == 0 && system(cmd) != 0)
        all_same = 0;
    snprintf(cmd, sizeof cmd, "rm -rf '%s/toy'", argv[2]);
    if (rank == 0 && system(cmd) != 0)
        all_same = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (made_local)
        rmdir(argv[1]);
    if (made_global)
        rmdir(argv[2]);
    MPI_Comm_free(&node);
    MPI_Info_free(&info);
    MPI_Finalize();
    return all_same ? 0 : 1;
}
