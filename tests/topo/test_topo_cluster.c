/* Storage-topology discovery across the emulated cluster (tools/cluster/tio-cluster): ranks
 * are placed in blocks per node, every node has its own tmpfs at $TIERIO_NODE_LOCAL (or
 * shares it with other nodes: --node-local-shared), and $TIERIO_PFS is seen by all.
 *
 *   --scenario nodelocal        node-local directories on every node: one group per node;
 *                               the PFS: one group of everybody. Every algorithm.
 *   --scenario shared --shared L   (cluster run with --node-local-shared L) the nodes of L
 *                               share one directory, every other node has its own: exhaustive
 *                               and hybrid find exactly that; the heuristic gives the answer
 *                               the seed documents for it (one group of all, because the node
 *                               it challenges shares rank 0's directory).
 *   --scenario some --present P [--shared L]   a directory that only the nodes of P (and
 *                               the nodes sharing with them) have: the others get
 *                               MPI_COMM_NULL, the rest their groups (exhaustive, hybrid).
 *   --scenario errors           missing everywhere, processes naming different directories,
 *                               read-only on node 1 only (probes made on other nodes must be
 *                               removed) and read-only everywhere: an error on every process.
 * Every result is checked for membership, size and MPI's order (keys reverse the ranks),
 * the statistics for the cost each algorithm owes, and every node-local and shared directory
 * for leftover probe files right after each call. Before that, the test checks that the
 * cluster is what the scenario says (which nodes see each other's files). */
#define _GNU_SOURCE
#include <sys/mount.h>

#include "topo_test.h"

static int node, nnodes, leader; /* this process's node index, the node count, its leader */
static int *node_of;              /* node index of every rank */
static int *key;
static int shared_with[256];      /* node -> the lowest node sharing its node-local dir */
static char nl[PATH_MAX], pfs[PATH_MAX];

/* "0-1,3" -> marks in set[]; returns 0 on a bad list. */
static int parse_nodes(const char *s, int *set, int n)
{
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            return 0;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
            if (end == s)
                return 0;
        }
        for (long k = a; k <= b; k++)
            if (k >= 0 && k < n)
                set[k] = 1;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return 0;
    }
    return 1;
}

static void find_nodes(void)
{
    MPI_Comm nodecomm;
    TT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &nodecomm));
    leader = tt_rank;
    MPI_Bcast(&leader, 1, MPI_INT, 0, nodecomm);
    MPI_Comm_free(&nodecomm);
    int *leaders = malloc((size_t)tt_size * sizeof *leaders);
    node_of = malloc((size_t)tt_size * sizeof *node_of);
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
    nnodes = 0;
    for (int r = 0; r < tt_size; r++)
        node_of[r] = leaders[r] == r ? nnodes++ : node_of[leaders[r]];
    node = node_of[tt_rank];
    free(leaders);
    /* The cluster names node i "node<i>" and fills nodes in rank order. */
    char host[256] = "", want[32];
    gethostname(host, sizeof host);
    snprintf(want, sizeof want, "node%d", node);
    if (strcmp(host, want) != 0)
        TT_DIE("rank %d runs on %s, expected %s: not the emulated cluster's placement", tt_rank,
               host, want);
}

/* Collective: the node leaders create base/name (mode 0777); a leader whose directory is
 * shared with a lower node finds it made already. */
static void make_node_dirs(const char *base, const char *name, const int *on_node, char *out)
{
    snprintf(out, PATH_MAX, "%s/%s", base, name);
    if (leader == tt_rank && (!on_node || on_node[node]) && mkdir(out, 0777) < 0 &&
        errno != EEXIST)
        TT_DIE("mkdir %s: %s", out, strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Node leaders remove base/name again (once per distinct directory is enough; others see
 * ENOENT). */
static void remove_node_dirs(const char *dir)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (leader == tt_rank)
        rmdir(dir);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The cluster is what we were told: node-local files are seen exactly by the nodes that
 * share the directory, PFS files by everyone. */
static void check_cluster(void)
{
    char mark[PATH_MAX], dir[PATH_MAX];
    make_node_dirs(nl, "topo-marks", NULL, dir);
    snprintf(mark, sizeof mark, "%s/node%d", dir, node);
    if (leader == tt_rank) {
        int fd = open(mark, O_CREAT | O_WRONLY, 0644);
        if (fd < 0)
            TT_DIE("create %s: %s", mark, strerror(errno));
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < nnodes; k++) {
        snprintf(mark, sizeof mark, "%s/node%d", dir, k);
        int want = shared_with[k] == shared_with[node];
        if (tt_exists(mark) != want)
            TT_DIE("node%d %s node%d's node-local files: the cluster is not set up as the "
                   "scenario says", node, want ? "does not see" : "sees", k);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (leader == tt_rank) {
        snprintf(mark, sizeof mark, "%s/node%d", dir, node);
        unlink(mark);
    }
    remove_node_dirs(dir);
}

/* Right after a call: no probe in dir on this process's node (every process looks). */
static void check_clean(const char *dir, const char *what)
{
    int n = tp_probe_count(dir);
    TT_CHECK(n <= 0, "%s: %d probe file(s) left in %s on node%d", what, n, dir, node);
}

static int split(const char *dir, enum tio_nbhd_algorithm alg, MPI_Comm *nc)
{
    MPI_Info info = tp_info(alg, NULL);
    int rc = tio_comm_split_neighborhood(MPI_COMM_WORLD, dir, key[tt_rank], info, nc);
    MPI_Info_free(&info);
    return rc;
}

/* Split dir with alg and check against group[] and the cost the algorithm owes (groups
 * and nodes with access known from group[]). */
static void expect_groups(const char *dir, enum tio_nbhd_algorithm alg, const int *group,
                          const char *what_dir)
{
    char what[256];
    snprintf(what, sizeof what, "%s, %s", what_dir, tio_nbhd_algorithm_name(alg));
    MPI_Comm nc = MPI_COMM_WORLD;
    int rc = split(dir, alg, &nc);
    check_clean(dir, what);
    if (rc != MPI_SUCCESS) {
        char m[MPI_MAX_ERROR_STRING];
        int l;
        MPI_Error_string(rc, m, &l);
        tt_fail("%s: failed: %s", what, m);
        return;
    }
    struct tio_nbhd_stats s;
    tio_nbhd_last_stats(&s);
    /* Groups, processes without access, nodes with access. */
    int groups = 0, excluded = 0, nodes_in = 0, first_rank_of_group[256];
    memset(first_rank_of_group, -1, sizeof first_rank_of_group);
    for (int r = 0; r < tt_size; r++) {
        if (group[r] < 0) {
            excluded++;
            continue;
        }
        if (first_rank_of_group[group[r]] < 0) {
            first_rank_of_group[group[r]] = r;
            groups++;
        }
        nodes_in += r == 0 || node_of[r] != node_of[r - 1];
    }
    TT_CHECK(s.groups == groups && s.excluded == excluded,
             "%s: stats say %d groups, %d excluded; expected %d, %d", what, s.groups, s.excluded,
             groups, excluded);
    enum tio_nbhd_algorithm a = alg == TIO_NBHD_AUTO ? TIO_NBHD_HYBRID : alg;
    long long want = -1;
    if (a == TIO_NBHD_EXHAUSTIVE)
        want = tt_size + (tt_size - excluded); /* creations by all, listings by those in */
    else if (a == TIO_NBHD_HEURISTIC) /* and a writability check by all but rank 0 */
        want = 2 + (tt_size - 1);
    else /* one creation per node, a lookup per node that lost when several won, and a
            writability check by every process */
        want = nnodes + (groups > 1 && nodes_in > groups ? nodes_in - groups : 0) + tt_size;
    TT_CHECK(s.fileops_all == want, "%s: %lld file operations, expected %lld", what,
             s.fileops_all, want);
    if (a != TIO_NBHD_EXHAUSTIVE)
        TT_CHECK(s.nodes == nnodes, "%s: stats say %d nodes, expected %d", what, s.nodes, nnodes);
    tp_check_split(MPI_COMM_WORLD, &nc, group, key, what);
}

static void scenario_groups(int heuristic_global)
{
    int *group = malloc((size_t)tt_size * sizeof *group);
    char dir[PATH_MAX], name[64];
    snprintf(name, sizeof name, "topo-nl.%s", strrchr(tt_dir, '.') + 1);
    make_node_dirs(nl, name, NULL, dir);
    for (int a = 0; a < TP_NALGS; a++) {
        int heur = tp_algs[a] == TIO_NBHD_HEURISTIC;
        for (int r = 0; r < tt_size; r++)
            group[r] = heur && heuristic_global ? 0 : shared_with[node_of[r]];
        expect_groups(dir, tp_algs[a], group, "node-local");
    }
    remove_node_dirs(dir);
    snprintf(dir, sizeof dir, "%s/topo-pfs.%s", pfs, strrchr(tt_dir, '.') + 1);
    if (tt_rank == 0 && mkdir(dir, 0777) < 0)
        TT_DIE("mkdir %s: %s", dir, strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < tt_size; r++)
        group[r] = 0;
    for (int a = 0; a < TP_NALGS; a++)
        expect_groups(dir, tp_algs[a], group, "PFS");
    MPI_Barrier(MPI_COMM_WORLD);
    if (tt_rank == 0)
        rmdir(dir);
    free(group);
}

static void scenario_some(const int *present)
{
    /* A node has the directory if it, or a node sharing its node-local directory, made it. */
    int has[256] = {0};
    for (int k = 0; k < nnodes; k++)
        if (present[k])
            for (int j = 0; j < nnodes; j++)
                has[j] |= shared_with[j] == shared_with[k];
    int *group = malloc((size_t)tt_size * sizeof *group);
    for (int r = 0; r < tt_size; r++)
        group[r] = has[node_of[r]] ? shared_with[node_of[r]] : -1;
    char dir[PATH_MAX];
    make_node_dirs(nl, "topo-some", present, dir);
    expect_groups(dir, TIO_NBHD_EXHAUSTIVE, group, "present on some nodes");
    expect_groups(dir, TIO_NBHD_HYBRID, group, "present on some nodes");
    remove_node_dirs(dir);
    free(group);
}

static void ro_bind(const char *dir)
{
    if (mount(dir, dir, NULL, MS_BIND, NULL) < 0 ||
        mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
        TT_DIE("read-only bind mount of %s: %s", dir, strerror(errno));
}

static void scenario_errors(void)
{
    char dir[PATH_MAX], what[160];
    MPI_Comm nc;
    int rc;
    /* Missing everywhere, node-local and shared. */
    const char *bases[] = {nl, pfs};
    for (int b = 0; b < 2; b++) {
        snprintf(dir, sizeof dir, "%s/topo-missing", bases[b]);
        for (int a = 0; a < TP_NALGS; a++) {
            snprintf(what, sizeof what, "missing in %s, %s", bases[b],
                     tio_nbhd_algorithm_name(tp_algs[a]));
            nc = MPI_COMM_WORLD;
            rc = split(dir, tp_algs[a], &nc);
            tp_check_error(MPI_COMM_WORLD, rc, nc, EX_NOENT, dir, what);
        }
    }

    /* Each node names a directory of its own on the PFS. */
    char mine[PATH_MAX];
    snprintf(mine, sizeof mine, "%s/topo-node%d", pfs, node);
    if (leader == tt_rank && mkdir(mine, 0777) < 0)
        TT_DIE("mkdir %s: %s", mine, strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int a = 0; a < TP_NALGS; a++) {
        snprintf(what, sizeof what, "different directories, %s", tio_nbhd_algorithm_name(tp_algs[a]));
        nc = MPI_COMM_WORLD;
        rc = split(mine, tp_algs[a], &nc);
        tp_check_error(MPI_COMM_WORLD, rc, nc, EX_INFO_VALUE, "different directories", what);
        TT_CHECK(tp_entries(mine) == 0, "%s: something was created in %s", what, mine);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (leader == tt_rank)
        rmdir(mine);

    /* Read-only on node 1 only: the probes made on other nodes must be gone too. */
    make_node_dirs(nl, "topo-ro1", NULL, dir);
    if (node == 1 && leader == tt_rank)
        ro_bind(dir);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int a = 0; a < 2; a++) {
        enum tio_nbhd_algorithm alg = a == 0 ? TIO_NBHD_EXHAUSTIVE : TIO_NBHD_HYBRID;
        snprintf(what, sizeof what, "read-only on node1, %s", tio_nbhd_algorithm_name(alg));
        nc = MPI_COMM_WORLD;
        rc = split(dir, alg, &nc);
        tp_check_error(MPI_COMM_WORLD, rc, nc, EX_ACCESS, "Read-only file system", what);
        TT_CHECK(tp_entries(dir) == 0, "%s: %d entries left in %s on node%d", what,
                 tp_entries(dir), dir, node);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (node == 1 && leader == tt_rank && umount2(dir, 0) < 0)
        TT_DIE("umount %s: %s", dir, strerror(errno));
    remove_node_dirs(dir);

    /* Read-only everywhere. */
    make_node_dirs(nl, "topo-roall", NULL, dir);
    if (leader == tt_rank)
        ro_bind(dir);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int a = 0; a < TP_NALGS; a++) {
        snprintf(what, sizeof what, "read-only everywhere, %s", tio_nbhd_algorithm_name(tp_algs[a]));
        nc = MPI_COMM_WORLD;
        rc = split(dir, tp_algs[a], &nc);
        tp_check_error(MPI_COMM_WORLD, rc, nc, EX_ACCESS, "Read-only file system", what);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (leader == tt_rank && umount2(dir, 0) < 0)
        TT_DIE("umount %s: %s", dir, strerror(errno));
    remove_node_dirs(dir);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "topo_cluster");
    const char *scenario = NULL, *shared = NULL, *present = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--scenario"))
            scenario = argv[i + 1];
        else if (!strcmp(argv[i], "--shared"))
            shared = argv[i + 1];
        else if (!strcmp(argv[i], "--present"))
            present = argv[i + 1];
        else
            TT_DIE("unknown option %s", argv[i]);
    }
    const char *e_nl = getenv("TIERIO_NODE_LOCAL"), *e_pfs = getenv("TIERIO_PFS");
    if (!scenario || !e_nl || !e_pfs)
        TT_DIE("usage: --scenario nodelocal|shared|some|errors [--shared L] [--present L]; "
               "run by tio-cluster (TIERIO_NODE_LOCAL and TIERIO_PFS)");
    snprintf(nl, sizeof nl, "%s", e_nl);
    snprintf(pfs, sizeof pfs, "%s", e_pfs);
    find_nodes();
    if (nnodes > 256)
        TT_DIE("more than 256 nodes");
    int in_shared[256] = {0}, in_present[256] = {0};
    if (shared && !parse_nodes(shared, in_shared, nnodes))
        TT_DIE("bad --shared list %s", shared);
    if (present && !parse_nodes(present, in_present, nnodes))
        TT_DIE("bad --present list %s", present);
    int lowest_shared = -1;
    for (int k = 0; k < nnodes; k++) {
        if (in_shared[k] && lowest_shared < 0)
            lowest_shared = k;
        shared_with[k] = in_shared[k] ? lowest_shared : k;
    }
    key = malloc((size_t)tt_size * sizeof *key);
    for (int r = 0; r < tt_size; r++)
        key[r] = 3 * (tt_size - r); /* reverses the ranks in every group */
    check_cluster();

    if (!strcmp(scenario, "nodelocal"))
        scenario_groups(0);
    else if (!strcmp(scenario, "shared"))
        scenario_groups(lowest_shared == 0 && in_shared[1]);
    else if (!strcmp(scenario, "some"))
        scenario_some(in_present);
    else if (!strcmp(scenario, "errors"))
        scenario_errors();
    else
        TT_DIE("unknown scenario %s", scenario);
    if (tt_rank == 0)
        printf("[topo_cluster] %s: %d ranks on %d nodes\n", scenario, tt_size, nnodes);
    return tt_finish();
}
