/* The network abstraction and the collective placement, on one node or on several
 * (emulated) nodes: node-aware distances between ranks and to the I/O node as the site
 * file gives them, the nodes and their names, a node-local tier whose files each node sees
 * alone, and tio_cost_place against a reference computed here from the same figures.
 *
 * The site file (written here, to $TIERIO_PFS when the cluster gives one) names hosts
 * node0..node3: hops node0-node1 2, node0-node2 5, node1-node2 3, others 4 (default);
 * io_hops node0 1, node1 4, others 7. Hosts are told apart here with gethostname, the
 * library uses MPI_COMM_TYPE_SHARED: the two must agree.
 *   mpiexec -n 4 test_tier_net                 (one node)
 *   tio-cluster run --nodes 3 --np 6 -- test_tier_net      (three) */
#include "../mpi/tio_test.h"

#include <math.h>

#include "tierio.h"

#define MiB 1048576.0

static char site_path[PATH_MAX], local_dir[PATH_MAX], pfs_dir[PATH_MAX];
static char (*hosts)[64]; /* every rank's host name */

/* The hop table of the site file, written out again independently of the parser. */
static int expect_hops(const char *a, const char *b)
{
    if (!strcmp(a, b))
        return 0;
    const char *pairs[][2] = {{"node0", "node1"}, {"node0", "node2"}, {"node1", "node2"}};
    const int hops[] = {2, 5, 3};
    for (int i = 0; i < 3; i++)
        if ((!strcmp(a, pairs[i][0]) && !strcmp(b, pairs[i][1])) ||
            (!strcmp(b, pairs[i][0]) && !strcmp(a, pairs[i][1])))
            return hops[i];
    return 4;
}

static int expect_io(const char *a)
{
    return !strcmp(a, "node0") ? 1 : !strcmp(a, "node1") ? 4 : 7;
}

/* Figures of the site file. */
static const double net_lat = 10e-6, net_bw = 5e9;
static const struct { const char *name; double lat, bw; double cap; int persist; } tiers[] = {
    {"dram", 100e-9, 20e9, 1024 * MiB, TIO_PERSIST_NONE},
    {"local", 50e-6, 2e9, 64 * MiB, TIO_PERSIST_JOB},
    {"pfs", 1e-3, 1e9, 128 * MiB, TIO_PERSIST_PERMANENT},
};

static void write_site(void)
{
    const char *pfs = getenv("TIERIO_PFS"), *local = getenv("TIERIO_NODE_LOCAL");
    /* On one node: a directory of the test plays the node-local tier. */
    snprintf(pfs_dir, sizeof pfs_dir, "%s/pfs", pfs && *pfs ? pfs : tt_dir);
    if (local && *local) /* the cluster's node-private tmpfs */
        snprintf(local_dir, sizeof local_dir, "%s/%s", local, strrchr(tt_dir, '/') + 1);
    else
        snprintf(local_dir, sizeof local_dir, "%s/local", tt_dir);
    snprintf(site_path, sizeof site_path, "%s/site.conf", pfs_dir);
    if (tt_rank == 0) {
        if (mkdir(pfs_dir, 0700) < 0 && errno != EEXIST)
            TT_DIE("mkdir %s: %s", pfs_dir, strerror(errno));
        FILE *f = fopen(site_path, "w");
        if (!f)
            TT_DIE("cannot write %s", site_path);
        fprintf(f, "[network]\nlatency = 10us\nbandwidth = 5GB/s\n"
                   "node_latency = 1us\nnode_bandwidth = 8GB/s\ndefault_hops = 4\n"
                   "hops = node0 node1 2\nhops = node2 node0 5\nhops = node1 node2 3\n"
                   "default_io_hops = 7\nio_hops = node0 1\nio_hops = node1 4\n"
                   "[tier dram]\nkind = dram\nlatency = 100ns\nbandwidth = 20GB/s\n"
                   "capacity = 1GiB\n"
                   "[tier local]\nkind = node-local\npath = %s\nlatency = 50us\n"
                   "bandwidth = 2GB/s\ncapacity = 64MiB\n"
                   "[tier pfs]\nkind = global\npath = %s\nlatency = 1ms\nbandwidth = 1GB/s\n"
                   "capacity = 128MiB\n",
                local_dir, pfs_dir);
        fclose(f);
    }
    /* The node-local directory: made by the first process of each node. */
    MPI_Comm node;
    int nrank;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    if (nrank == 0 && mkdir(local_dir, 0700) < 0 && errno != EEXIST)
        TT_DIE("mkdir %s: %s", local_dir, strerror(errno));
    MPI_Comm_free(&node);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void check_network(tio_tiers_t t)
{
    int nodes, distinct = 0;
    TT_MPI(tio_net_nodes(t, &nodes));
    for (int r = 0; r < tt_size; r++) {
        int first = 1;
        for (int q = 0; q < r; q++)
            first &= strcmp(hosts[q], hosts[r]) != 0;
        distinct += first;
    }
    TT_CHECK(nodes == distinct, "%d nodes, %d distinct host names", nodes, distinct);
    for (int a = 0; a < tt_size; a++) {
        int node;
        char name[64];
        TT_MPI(tio_net_node(t, a, &node, name, sizeof name));
        TT_CHECK(!strcmp(name, hosts[a]), "rank %d: node name %s, host %s", a, name, hosts[a]);
        TT_CHECK(node >= 0 && node < nodes, "rank %d: node %d of %d", a, node, nodes);
        for (int b = 0; b < tt_size; b++) {
            int h, nb;
            TT_MPI(tio_net_distance(t, a, b, &h));
            TT_MPI(tio_net_node(t, b, &nb, NULL, 0));
            TT_CHECK(h == expect_hops(hosts[a], hosts[b]), "distance %d (%s) - %d (%s): %d, "
                     "want %d", a, hosts[a], b, hosts[b], h, expect_hops(hosts[a], hosts[b]));
            TT_CHECK((nb == node) == !strcmp(hosts[a], hosts[b]),
                     "ranks %d and %d: same node index %d but hosts %s, %s", a, b, node,
                     hosts[a], hosts[b]);
        }
        int io;
        TT_MPI(tio_net_distance_to_io(t, a, &io));
        TT_CHECK(io == expect_io(hosts[a]), "rank %d (%s) to the I/O node: %d, want %d", a,
                 hosts[a], io, expect_io(hosts[a]));
    }
    double v;
#define NEAR(x, y) (fabs((x) - (y)) <= 1e-12 * (y))
    TT_MPI(tio_net_latency(t, TIO_NET_INTER_NODE, &v));
    TT_CHECK(NEAR(v, 10e-6), "latency %g", v);
    TT_MPI(tio_net_bandwidth(t, TIO_NET_INTER_NODE, &v));
    TT_CHECK(NEAR(v, 5e9), "bandwidth %g", v);
    TT_MPI(tio_net_latency(t, TIO_NET_INTRA_NODE, &v));
    TT_CHECK(NEAR(v, 1e-6), "node latency %g", v);
    TT_MPI(tio_net_bandwidth(t, TIO_NET_INTRA_NODE, &v));
    TT_CHECK(NEAR(v, 8e9), "node bandwidth %g", v);
}

/* Every rank writes into every other rank's node-local buffer; each node sees only the
 * files of its own ranks. */
static void check_node_local(tio_tiers_t t)
{
    const MPI_Aint n = 3 * 4096 + 77;
    tio_buf_t b;
    TT_MPI(tio_buf_alloc(t, "local", n, "nl", 0, MPI_COMM_WORLD, &b));
    MPI_Aint chunk = n / tt_size;
    for (int target = 0; target < tt_size; target++) {
        MPI_Aint len = tt_rank == tt_size - 1 ? n - tt_rank * chunk : chunk;
        uint8_t *src = malloc((size_t)len);
        tt_fill(src, (size_t)len, (uint64_t)target, (uint64_t)(tt_rank * chunk));
        TT_MPI(tio_buf_write(b, src, len, tt_rank * chunk, target));
        free(src);
    }
    TT_MPI(tio_buf_flush(b));
    MPI_Barrier(MPI_COMM_WORLD);
    TT_MPI(tio_buf_flush(b)); /* own piece to the file */
    uint8_t *want = malloc((size_t)n), *got = malloc((size_t)n);
    for (int target = 0; target < tt_size; target++) {
        tt_fill(want, (size_t)n, (uint64_t)target, 0);
        TT_MPI(tio_buf_read(b, got, n, 0, target));
        tt_compare(got, want, (size_t)n, "node-local buffer of rank %d (%s) read by %d (%s)",
                   target, hosts[target], tt_rank, hosts[tt_rank]);
    }
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/nl.%d", local_dir, tt_rank);
    tt_fill(want, (size_t)n, (uint64_t)tt_rank, 0);
    tt_check_file(path, 0, want, (size_t)n, "own node-local file");
    for (int r = 0; r < tt_size; r++) {
        snprintf(path, sizeof path, "%s/nl.%d", local_dir, r);
        int same = !strcmp(hosts[r], hosts[tt_rank]);
        TT_CHECK(tt_exists(path) == same, "rank %d (%s) %s rank %d's file (%s)", tt_rank,
                 hosts[tt_rank], same ? "does not see" : "sees", r, hosts[r]);
    }
    free(want);
    free(got);
    MPI_Barrier(MPI_COMM_WORLD);
    TT_MPI(tio_buf_free(&b));
    snprintf(path, sizeof path, "%s/nl.%d", local_dir, tt_rank);
    TT_CHECK(!tt_exists(path), "%s left after tio_buf_free", path);
}

/* The reference: Cost_A + Cost_T of tier k on host h for the producers' bytes. */
static double reference(int k, const char *h, const double *bytes)
{
    double cost = 0, total = 0;
    for (int i = 0; i < tt_size; i++) {
        int hops = expect_hops(hosts[i], h);
        double src = tiers[0].bw; /* the data is in DRAM */
        double b = src < tiers[k].bw ? src : tiers[k].bw;
        if (hops == 0) {
            cost += tiers[k].lat + bytes[i] / b;
        } else {
            double l = net_lat > tiers[k].lat ? net_lat : tiers[k].lat;
            cost += l * hops + bytes[i] / (net_bw < b ? net_bw : b);
        }
        total += bytes[i];
    }
    return cost + net_lat * expect_io(h) + total / net_bw;
}

/* Expected winner: over the hosts of eligible ranks (the lowest eligible rank of each),
 * over the tiers that qualify. */
static void expect_place(const double *bytes, const int *eligible, int persist, double needed,
                         int *rank, int *tier, double *cost)
{
    *rank = *tier = -1;
    *cost = INFINITY;
    for (int r = 0; r < tt_size; r++) {
        int first = eligible[r];
        for (int q = 0; q < r; q++)
            if (eligible[q] && !strcmp(hosts[q], hosts[r]))
                first = 0;
        if (!first)
            continue;
        for (int k = 0; k < 3; k++) {
            if (tiers[k].persist < persist || tiers[k].cap < needed)
                continue;
            double c = reference(k, hosts[r], bytes);
            if (c < *cost)
                *cost = c, *rank = r, *tier = k;
        }
    }
}

static void check_place(tio_tiers_t t, const char *what, int persist, double total_mib,
                        int only_host_of)
{
    double *bytes = malloc(sizeof(double) * (size_t)tt_size);
    int *eligible = malloc(sizeof(int) * (size_t)tt_size);
    double total = 0;
    for (int r = 0; r < tt_size; r++) {
        /* uneven, total_mib in all: the producers on the last host send the most */
        bytes[r] = floor(total_mib * MiB * (1 + r) / (tt_size * (tt_size + 1) / 2));
        eligible[r] = only_host_of < 0 || !strcmp(hosts[r], hosts[only_host_of]);
        total += bytes[r];
    }
    struct tio_cost_opts o = {.persistence = (enum tio_persistence)persist, .nbuf = 2,
                              .bufsize = 4 << 20};
    double needed = persist > TIO_PERSIST_NONE ? total : 8 * MiB;
    int rank, tier;
    double cost;
    expect_place(bytes, eligible, persist, needed, &rank, &tier, &cost);
    struct tio_placement p;
    TT_MPI(tio_cost_place(t, MPI_COMM_WORLD, (unsigned long long)bytes[tt_rank],
                          eligible[tt_rank], &o, &p));
    if (tt_rank == 0)
        printf("%s: rank %d (%s) tier %s, cost %.6f s (Cost_A %.6f + Cost_T %.6f), "
               "%d candidates, %d qualified; expected rank %d tier %s cost %.6f\n", what,
               p.rank, hosts[p.rank], p.tier, p.total, p.aggregate, p.transfer, p.candidates,
               p.qualified, rank, tier >= 0 ? tiers[tier].name : "-", cost);
    TT_CHECK(p.rank == rank && tier >= 0 && !strcmp(p.tier, tiers[tier].name),
             "%s: placed on rank %d tier %s, expected rank %d tier %s", what, p.rank, p.tier,
             rank, tier >= 0 ? tiers[tier].name : "-");
    TT_CHECK(fabs(p.total - cost) <= 1e-9 * cost, "%s: cost %.12g, expected %.12g", what,
             p.total, cost);
    TT_CHECK(fabs(p.total - (p.aggregate + p.transfer)) <= 1e-12 * p.total,
             "%s: total is not Cost_A + Cost_T", what);
    free(bytes);
    free(eligible);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "test_tier_net");
    hosts = malloc(64 * (size_t)tt_size);
    char me[64] = "";
    gethostname(me, sizeof me - 1);
    MPI_Allgather(me, 64, MPI_CHAR, hosts, 64, MPI_CHAR, MPI_COMM_WORLD);
    write_site();
    tio_tiers_t t;
    TT_MPI(tio_tiers_open(MPI_COMM_WORLD, site_path, &t));
    check_network(t);
    check_node_local(t);
    check_place(t, "scratch aggregation", TIO_PERSIST_NONE, 24, -1);
    check_place(t, "persistent for the job", TIO_PERSIST_JOB, 24, -1);
    check_place(t, "too much for the node-local tier", TIO_PERSIST_JOB, 100, -1);
    check_place(t, "only the first host may aggregate", TIO_PERSIST_NONE, 24, 0);
    TT_MPI(tio_tiers_close(&t));
    MPI_Barrier(MPI_COMM_WORLD);
    if (getenv("TIERIO_NODE_LOCAL")) /* the cluster's tmpfs: tidy up */
        rmdir(local_dir);
    if (tt_rank == 0) {
        unlink(site_path);
        rmdir(pfs_dir);
    }
    free(hosts);
    return tt_finish();
}
