/* The node memory budget under a real launcher: the processes of each node find one
 * group from the launcher's environment alone (no UMMAP_NODE_KEY, no UMMAP_NODE_PROCS),
 * static shares are the limit over the launcher's count of local processes, dynamic mode
 * lets one process run over its share while the node has room and makes it give back half
 * of its excess when another needs room, and every node's /dev/shm is clean at the end.
 *
 *   mpiexec -n N test_memnode_mpi --expect-key SOURCE --expect-procs SOURCE
 *
 * and, driven by test_memnode_killjob.sh (a job killed with SIGKILL, then another job):
 *   mpiexec -n N test_memnode_mpi --hold          join, charge, print "held NAME PIDS..."
 *                                                 and wait to be killed
 *   mpiexec -n N test_memnode_mpi --after-kill NAME   join: NAME (the killed job's object,
 *                                                 no live member) must be gone once every
 *                                                 process of the node has joined
 *
 * UMMAP_MEM_LIMIT must be set (the test's environment). Works on one node and on several
 * (each node its own group: MPI_COMM_TYPE_SHARED gives the processes of a node). */
#include "tio_test.h"

#include <signal.h>
#include <sys/prctl.h>

#include "blocked.h"
#include "ummap/memnode.h"
#include "ummap/memnode_inspect.h"

static MPI_Comm node;
static int nrank, nsize;

static tio_memnode_t *join(void)
{
    tio_memnode_t *m = NULL;
    int rc = tio_memnode_join(&m);
    if (rc)
        TT_DIE("tio_memnode_join: %s", strerror(rc));
    return m;
}

/* Every process of the node is in the same group, the key and the count of processes came
 * from where the launcher says. */
static void check_group(tio_memnode_t *m, const char *key_src, const char *procs_src)
{
    char mine[128] = "", *all = malloc(128 * (size_t)nsize);
    snprintf(mine, sizeof mine, "%s", tio_memnode_name(m));
    TT_MPI(MPI_Allgather(mine, 128, MPI_CHAR, all, 128, MPI_CHAR, node));
    for (int r = 0; r < nsize; r++)
        TT_CHECK(!strcmp(all + 128 * r, mine), "node rank %d is in group %s, we are in %s",
                 r, all + 128 * r, mine);
    free(all);
    TT_CHECK(!strcmp(tio_memnode_key_source(m), key_src), "key from %s, expected %s",
             tio_memnode_key_source(m), key_src);
    TT_CHECK(!strcmp(tio_memnode_procs_source(m), procs_src),
             "process count from %s, expected %s", tio_memnode_procs_source(m), procs_src);
    TT_MPI(MPI_Barrier(node));
    TT_CHECK(tio_memnode_members(m) == (unsigned)nsize, "%u members, %d processes on the node",
             tio_memnode_members(m), nsize);
    TT_MPI(MPI_Barrier(node));
}

/* Leave; once every process of the node has left, the object is gone. */
static void leave_all(tio_memnode_t *m)
{
    char name[128];
    snprintf(name, sizeof name, "/dev/shm%s", tio_memnode_name(m));
    tio_memnode_leave(m);
    TT_MPI(MPI_Barrier(node));
    TT_CHECK(access(name, F_OK) != 0, "%s is still there after every process left", name);
    TT_MPI(MPI_Barrier(node));
}

static void static_mode(const char *key_src, const char *procs_src)
{
    setenv("UMMAP_MEMCONFIG", "static", 1);
    tio_memnode_t *m = join();
    check_group(m, key_src, procs_src);
    size_t limit = tio_memnode_limit(m), share = tio_memnode_share(m);
    TT_CHECK(!tio_memnode_dynamic(m), "static mode expected");
    TT_CHECK(share == limit / (size_t)nsize, "share %zu, expected %zu / %d", share, limit,
             nsize);
    size_t extra = 4096 * (size_t)(nrank + 1);
    size_t got = tio_memnode_charge(m, share + extra);
    TT_CHECK(got == extra, "charging share + %zu asked to evict %zu", extra, got);
    tio_memnode_release(m, extra);
    TT_MPI(MPI_Barrier(node));
    TT_CHECK(tio_memnode_node_total(m) == share * (size_t)nsize, "node total %zu, expected %zu",
             tio_memnode_node_total(m), share * (size_t)nsize);
    TT_MPI(MPI_Barrier(node));
    tio_memnode_release(m, share);
    leave_all(m);
}

static void dynamic_mode(const char *key_src, const char *procs_src)
{
    setenv("UMMAP_MEMCONFIG", "dynamic", 1);
    tio_memnode_t *m = join();
    check_group(m, key_src, procs_src);
    size_t limit = tio_memnode_limit(m), share = tio_memnode_share(m);
    TT_CHECK(tio_memnode_dynamic(m), "dynamic mode expected");
    long pid = (long)getpid();
    TT_MPI(MPI_Bcast(&pid, 1, MPI_LONG, 0, node));

    /* Node rank 0 takes all but half a share: over its share, but the node has room. */
    size_t big = limit - share / 2;
    if (nrank == 0)
        TT_CHECK(tio_memnode_charge(m, big) == 0, "charge within the node's room evicts");
    TT_MPI(MPI_Barrier(node));

    /* Node rank 1 needs its share: rank 0 (blocked waiting) gives back half its excess. */
    size_t want = (big - share + 1) / 2;
    if (nrank == 0) {
        double t0 = MPI_Wtime();
        size_t got = tio_memnode_reclaim_wait(m, 30000);
        double dt = MPI_Wtime() - t0;
        TT_CHECK(got == want, "asked to give back %zu, expected %zu", got, want);
        TT_CHECK(dt < 15, "reclaim_wait returned after %.1f s: not woken", dt);
        tio_memnode_release(m, got);
    } else if (nrank == 1) {
        if (mn_wait_futex((pid_t)pid, (pid_t)pid, 20000) < 0)
            tt_fail("node rank 0 never blocked in reclaim_wait");
        size_t got = tio_memnode_charge(m, share);
        TT_CHECK(got == 0, "a process within its share was asked to evict %zu", got);
    }
    TT_MPI(MPI_Barrier(node));
    size_t expect = big - want + (nsize > 1 ? share : 0);
    TT_CHECK(tio_memnode_node_total(m) == expect, "node total %zu, expected %zu",
             tio_memnode_node_total(m), expect);
    TT_MPI(MPI_Barrier(node));
    tio_memnode_release(m, tio_memnode_charged(m));
    leave_all(m);
}

/* Join, charge, report, and wait for SIGKILL (no leave, no MPI_Finalize). */
static void hold(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* no orphan if the launcher goes first */
    setenv("UMMAP_MEMCONFIG", "static", 1);
    tio_memnode_t *m = join();
    tio_memnode_charge(m, tio_memnode_share(m) / 2);
    long pid = (long)getpid(), *pids = malloc(sizeof(long) * (size_t)nsize);
    TT_MPI(MPI_Gather(&pid, 1, MPI_LONG, pids, 1, MPI_LONG, 0, node));
    if (nrank == 0) {
        printf("held %s", tio_memnode_name(m));
        for (int r = 0; r < nsize; r++)
            printf(" %ld", pids[r]);
        printf("\n");
        fflush(stdout);
    }
    for (;;)
        pause();
}

static void after_kill(const char *stale)
{
    char path[256];
    snprintf(path, sizeof path, "/dev/shm%s", stale);
    setenv("UMMAP_MEMCONFIG", "static", 1);
    tio_memnode_t *m = join();
    TT_CHECK(strcmp(tio_memnode_name(m), stale) != 0, "a new job got the old job's key");
    /* Once every process of the node has joined: one of the joins removes it, and one
     * process's join may pass over it while another's is removing it right then. */
    TT_MPI(MPI_Barrier(node));
    TT_CHECK(access(path, F_OK) != 0, "%s (no live member) is still there after the node's "
             "joins", path);
    leave_all(m);
}

int main(int argc, char **argv)
{
    const char *key_src = NULL, *procs_src = NULL, *stale = NULL;
    int holding = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--hold"))
            holding = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "--expect-key"))
            key_src = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--expect-procs"))
            procs_src = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--after-kill"))
            stale = argv[++i];
    }
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    tt_setup("memnode_mpi");
    if (!holding && !stale && (!key_src || !procs_src))
        TT_DIE("usage: test_memnode_mpi --expect-key SOURCE --expect-procs SOURCE | --hold | "
               "--after-kill NAME");
    if (getenv("UMMAP_NODE_KEY") || getenv("UMMAP_NODE_PROCS") || !getenv("UMMAP_MEM_LIMIT"))
        TT_DIE("run with UMMAP_MEM_LIMIT and without UMMAP_NODE_KEY / UMMAP_NODE_PROCS");
    TT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    if (nsize < 2)
        TT_DIE("needs at least 2 processes per node");
    if (holding)
        hold();
    if (stale) {
        after_kill(stale);
    } else {
        static_mode(key_src, procs_src);
        dynamic_mode(key_src, procs_src);
    }
    MPI_Comm_free(&node);
    return tt_finish();
}
