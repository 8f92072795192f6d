/* Self-test of the emulated cluster (tools/cluster/tio-cluster): run it with
 *   tio-cluster run --nodes N --mpi M --np P --ppn K -- cluster_selftest K [TOKEN]
 * It checks that
 *   - ranks are placed in blocks of K per node: rank r runs on node<r/K>, and
 *     MPI_Get_processor_name, gethostname and MPI_COMM_TYPE_SHARED groups agree with that;
 *   - a file one node's leader creates in TIERIO_NODE_LOCAL (and in /dev/shm) is seen on
 *     that node only, while a file in TIERIO_PFS is seen by every rank;
 *   - the caller's environment reached the ranks: TIERIO_SELFTEST_TOKEN equals TOKEN,
 *     and if TIERIO_SELFTEST_PRELOAD is set, LD_PRELOAD loaded the library that defines
 *     tio_selftest_preloaded.
 * Prints nothing on success; on failure every failing rank prints what failed and the
 * program exits non-zero.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int rank;
static int failures;

static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cluster_selftest: rank %d: ", rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    failures++;
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static void create(const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fail("cannot create %s: %s", path, strerror(errno));
        return;
    }
    fprintf(f, "%d\n", rank);
    fclose(f);
}

/* The leader of every node creates <dir>/selftest-node<k>; afterwards each rank must see
 * the files of all nodes (shared) or only its own node's (node-private). */
static void check_dir(const char *dir, int shared, int node, int nnodes, int leader,
                      MPI_Comm world) {
    char path[4096];
    if (leader) {
        snprintf(path, sizeof path, "%s/selftest-node%d", dir, node);
        create(path);
    }
    MPI_Barrier(world);
    for (int k = 0; k < nnodes; k++) {
        snprintf(path, sizeof path, "%s/selftest-node%d", dir, k);
        int want = shared || k == node;
        int have = exists(path);
        if (have != want)
            fail("%s %s on node%d but should%s be (%s directory)", path,
                 have ? "is visible" : "is not visible", node, want ? "" : " not",
                 shared ? "shared" : "node-local");
    }
    MPI_Barrier(world);
    if (leader) {
        snprintf(path, sizeof path, "%s/selftest-node%d", dir, node);
        unlink(path);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm world = MPI_COMM_WORLD;
    int size;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    if (argc < 2 || atoi(argv[1]) < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: cluster_selftest RANKS_PER_NODE [TOKEN]\n");
        MPI_Abort(world, 2);
    }
    int ppn = atoi(argv[1]);
    int node = rank / ppn;
    int nnodes = (size + ppn - 1) / ppn;
    char want_name[64];
    snprintf(want_name, sizeof want_name, "node%d", node);

    /* placement */
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    int len;
    MPI_Get_processor_name(name, &len);
    if (strcmp(name, want_name) != 0)
        fail("MPI_Get_processor_name is '%s', expected '%s'", name, want_name);
    char host[256] = "";
    gethostname(host, sizeof host);
    if (strcmp(host, want_name) != 0)
        fail("hostname is '%s', expected '%s'", host, want_name);

    MPI_Comm shm;
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm);
    int shm_rank, shm_size;
    MPI_Comm_rank(shm, &shm_rank);
    MPI_Comm_size(shm, &shm_size);
    int want_size = node == nnodes - 1 ? size - node * ppn : ppn;
    if (shm_size != want_size)
        fail("MPI_COMM_TYPE_SHARED group has %d ranks, expected %d", shm_size, want_size);
    /* the group holds exactly the ranks of this node: its lowest world rank is node*ppn */
    int lowest;
    MPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, shm);
    if (lowest != node * ppn)
        fail("MPI_COMM_TYPE_SHARED group starts at rank %d, expected %d", lowest, node * ppn);
    int leader = shm_rank == 0;

    /* storage */
    const char *pfs = getenv("TIERIO_PFS");
    const char *local = getenv("TIERIO_NODE_LOCAL");
    if (!pfs || !*pfs || !exists(pfs))
        fail("TIERIO_PFS is unset or not a directory (%s)", pfs ? pfs : "unset");
    if (!local || !*local || !exists(local))
        fail("TIERIO_NODE_LOCAL is unset or not a directory (%s)", local ? local : "unset");
    if (pfs && local && exists(pfs) && exists(local)) {
        check_dir(pfs, 1, node, nnodes, leader, world);
        check_dir(local, 0, node, nnodes, leader, world);
        check_dir("/dev/shm", 0, node, nnodes, leader, world);
    }

    /* environment forwarding */
    if (argc > 2) {
        const char *token = getenv("TIERIO_SELFTEST_TOKEN");
        if (!token || strcmp(token, argv[2]) != 0)
            fail("TIERIO_SELFTEST_TOKEN is '%s', expected '%s'", token ? token : "unset",
                 argv[2]);
    }
    if (getenv("TIERIO_SELFTEST_PRELOAD") && !dlsym(RTLD_DEFAULT, "tio_selftest_preloaded"))
        fail("LD_PRELOAD did not reach the rank (LD_PRELOAD=%s)",
             getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "unset");

    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, world);
    MPI_Comm_free(&shm);
    MPI_Finalize();
    return total ? 1 : 0;
}
