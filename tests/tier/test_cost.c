/* The aggregation cost model (src/tier/cost.c) against MA-TAPIOCA's toy example (seed
 * 002 §3.2): Table 2 reproduced from Table 1's figures, every one of its twelve values to
 * the three decimals printed; then the capacity and persistence conditions (the paper's
 * Table 7 situation: the fastest tiers shrunk to 32 MB until the SSD is chosen), the
 * option that bounds the drain by the tier's speed, and the errors.
 *
 * Units: Table 1's GBps are GiB/s and the ω of Table 2 are MiB (with decimal units no
 * placement of the nodes reproduces the table; with binary ones it is exact).
 *
 * Topology (Figure 3, whose hop counts are not in the text): four processes on four nodes,
 * two memory banks of one node one hop apart. The cost depends on the network only through
 * Σ_i d(i,A) and d(A,T) per node; the table fixes those to (16, 13, 19, 14) and
 * (3, 2, 5, 2). The hop matrix below is one with these sums. */
#include <math.h>

#include "../unit/check.h"
#include "tier/cost.h"

#define MiB 1048576.0
#define GiB 1073741824.0

static const int hops[4][4] = {
    {0, 4, 7, 5},
    {4, 0, 6, 3},
    {7, 6, 0, 6},
    {5, 3, 6, 0},
};
static const int io_hops[4] = {3, 2, 5, 2};
static const unsigned long long omega[4] = {10 * 1048576ull, 50 * 1048576ull,
                                            20 * 1048576ull, 5 * 1048576ull};
/* Table 2: rows P0..P3, columns HBM, DRAM, NVR. */
static const double table2[4][3] = {
    {0.593, 0.603, 2.350},
    {0.470, 0.480, 2.020},
    {0.742, 0.752, 2.710},
    {0.503, 0.513, 2.120},
};

/* Table 1. */
static struct tio_tier_info tier(const char *name, double lat_ms, double gibps, double cap_gb,
                                 enum tio_persistence p)
{
    struct tio_tier_info t = {0};
    snprintf(t.name, sizeof t.name, "%s", name);
    t.latency = lat_ms * 1e-3;
    t.read_bandwidth = t.write_bandwidth = gibps * GiB;
    t.capacity = t.available = (unsigned long long)(cap_gb * GiB);
    t.persistence = p;
    return t;
}

static struct tio_tier_info tiers[3];
static double dram_bw[4];

static void setup(void)
{
    tiers[0] = tier("HBM", 10, 180, 16, TIO_PERSIST_NONE);
    tiers[1] = tier("DRAM", 20, 90, 192, TIO_PERSIST_NONE);
    tiers[2] = tier("NVR", 100, 0.15, 128, TIO_PERSIST_JOB);
    for (int i = 0; i < 4; i++)
        dram_bw[i] = 90 * GiB; /* the data is in DRAM */
}

/* The model's input for aggregating on node k. */
static struct tio_cost_input input(int k, int hop_row[4])
{
    for (int i = 0; i < 4; i++)
        hop_row[i] = hops[i][k];
    struct tio_cost_input in = {
        .nproducers = 4, .bytes = omega, .hops = hop_row, .src_bandwidth = dram_bw,
        .hops_to_target = io_hops[k], .net_latency = 30e-3, .net_bandwidth = 12.5 * GiB,
        /* no intermediate persistency; the buffers fit everywhere */
        .opts = {.persistence = TIO_PERSIST_NONE, .nbuf = 2, .bufsize = 16 * 1048576ull},
    };
    return in;
}

static void table_2(void)
{
    CASE("Table 2");
    int row[4];
    double best = INFINITY;
    int best_k = -1, best_t = -1;
    for (int k = 0; k < 4; k++) {
        struct tio_cost_input in = input(k, row);
        for (int t = 0; t < 3; t++) {
            struct tio_cost c;
            struct tio_err err = {0};
            CHECK(tio_cost_compute(&in, &tiers[t], &c, &err) == TIO_OK);
            CHECK_EQ(c.verdict, TIO_COST_OK);
            /* as printed: three decimals */
            double printed = round(c.total * 1000) / 1000;
            printf("P%d %-4s Cost_A %.5f + Cost_T %.5f = %.5f -> %.3f (Table 2: %.3f)\n", k,
                   tiers[t].name, c.aggregate, c.transfer, c.total, printed, table2[k][t]);
            if (fabs(printed - table2[k][t]) > 1e-9) {
                fprintf(stderr, "P%d %s: %.3f, Table 2 says %.3f\n", k, tiers[t].name,
                        printed, table2[k][t]);
                exit(1);
            }
            CHECK(fabs(c.total - (c.aggregate + c.transfer)) < 1e-12);
            if (c.total < best)
                best = c.total, best_k = k, best_t = t;
        }
    }
    /* "the most advantageous location for aggregation is the high-bandwidth memory
     * available on the node hosting process 1" */
    CHECK_EQ(best_k, 1);
    CHECK_EQ(best_t, 0);
}

/* The winner over all nodes and tiers, with the given capacities. */
static void winner(enum tio_persistence need, int *wk, int *wt)
{
    int row[4];
    double best = INFINITY;
    *wk = *wt = -1;
    for (int k = 0; k < 4; k++) {
        struct tio_cost_input in = input(k, row);
        in.opts.persistence = need;
        in.opts.nbuf = 3; /* Table 7: three buffers of 16 MB */
        in.opts.bufsize = 16 * 1048576ull;
        for (int t = 0; t < 3; t++) {
            struct tio_cost c;
            struct tio_err err = {0};
            CHECK(tio_cost_compute(&in, &tiers[t], &c, &err) == TIO_OK);
            if (c.verdict == TIO_COST_OK && c.total < best)
                best = c.total, *wk = k, *wt = t;
        }
    }
}

static void conditions(void)
{
    int k, t;
    CASE("Table 7: HBM shrunk to 32 MB, then DRAM too");
    winner(TIO_PERSIST_NONE, &k, &t);
    CHECK(k == 1 && t == 0);
    tiers[0].available = 32 * 1048576ull; /* below 3 x 16 MB */
    winner(TIO_PERSIST_NONE, &k, &t);
    CHECK(k == 1 && t == 1);
    tiers[1].available = 32 * 1048576ull;
    winner(TIO_PERSIST_NONE, &k, &t);
    CHECK(k == 1 && t == 2);
    tiers[2].available = 32 * 1048576ull;
    winner(TIO_PERSIST_NONE, &k, &t);
    CHECK(k == -1 && t == -1);
    setup();

    CASE("persistence: only the SSD keeps data for the job");
    winner(TIO_PERSIST_JOB, &k, &t);
    CHECK(k == 1 && t == 2);
    winner(TIO_PERSIST_PERMANENT, &k, &t);
    CHECK(k == -1);

    CASE("persistent data needs room for all of it");
    int row[4];
    struct tio_cost_input in = input(1, row);
    in.opts.persistence = TIO_PERSIST_JOB;
    struct tio_cost c;
    struct tio_err err = {0};
    struct tio_tier_info nvr = tiers[2];
    nvr.available = 85 * 1048576ull; /* exactly the 85 MiB */
    CHECK(tio_cost_compute(&in, &nvr, &c, &err) == TIO_OK);
    CHECK_EQ(c.verdict, TIO_COST_OK);
    CHECK_EQ(c.needed, 85 * 1048576ull);
    nvr.available -= 1;
    CHECK(tio_cost_compute(&in, &nvr, &c, &err) == TIO_OK);
    CHECK_EQ(c.verdict, TIO_COST_TOO_SMALL);
    CHECK(c.total == 0);
    CHECK(tio_cost_compute(&in, &tiers[0], &c, &err) == TIO_OK);
    CHECK_EQ(c.verdict, TIO_COST_NOT_PERSISTENT);
}

static void drain_flag(void)
{
    CASE("TIO_COST_DRAIN_AT_TIER_SPEED");
    int row[4];
    struct tio_cost_input in = input(1, row);
    struct tio_cost plain, bounded;
    struct tio_err err = {0};
    CHECK(tio_cost_compute(&in, &tiers[2], &plain, &err) == TIO_OK);
    in.opts.flags = TIO_COST_DRAIN_AT_TIER_SPEED;
    CHECK(tio_cost_compute(&in, &tiers[2], &bounded, &err) == TIO_OK);
    /* 85 MiB leave the SSD at 0.15 GiB/s instead of 12.5 GiB/s */
    double want = 85 * MiB / (0.15 * GiB) - 85 * MiB / (12.5 * GiB);
    CHECK(fabs((bounded.transfer - plain.transfer) - want) < 1e-12);
    CHECK(fabs(bounded.aggregate - plain.aggregate) < 1e-15);
    /* DRAM is faster than the network: no change there */
    CHECK(tio_cost_compute(&in, &tiers[1], &bounded, &err) == TIO_OK);
    in.opts.flags = 0;
    CHECK(tio_cost_compute(&in, &tiers[1], &plain, &err) == TIO_OK);
    CHECK(fabs(bounded.total - plain.total) < 1e-15);
}

static void target_figures(void)
{
    CASE("a slow target bounds Cost_T");
    int row[4];
    struct tio_cost_input in = input(0, row);
    struct tio_cost a, b;
    struct tio_err err = {0};
    CHECK(tio_cost_compute(&in, &tiers[1], &a, &err) == TIO_OK);
    in.opts.target_bandwidth = 1 * GiB;
    in.opts.target_latency = 50e-3; /* above the network's 30 ms */
    CHECK(tio_cost_compute(&in, &tiers[1], &b, &err) == TIO_OK);
    double want = 85 * MiB / GiB - 85 * MiB / (12.5 * GiB) + (50e-3 - 30e-3) * io_hops[0];
    CHECK(fabs((b.transfer - a.transfer) - want) < 1e-12);
}

static void errors(void)
{
    int row[4];
    struct tio_cost c;
    struct tio_tier_info t = tiers[0];
    struct tio_cost_input in;
    struct tio_err err;

    CASE("unknown network figures");
    in = input(0, row);
    in.net_bandwidth = 0;
    tio_err_clear(&err);
    CHECK(tio_cost_compute(&in, &t, &c, &err) == TIO_E_ARG);
    CHECK_HAS(err.msg, "network's bandwidth is unknown");
    in = input(0, row);
    in.net_latency = 0;
    tio_err_clear(&err);
    CHECK(tio_cost_compute(&in, &t, &c, &err) == TIO_E_ARG);
    CHECK_HAS(err.msg, "network's latency is unknown");

    CASE("unknown tier figures");
    in = input(0, row);
    t.latency = 0;
    tio_err_clear(&err);
    CHECK(tio_cost_compute(&in, &t, &c, &err) == TIO_E_ARG);
    CHECK_HAS(err.msg, "tier \"HBM\": latency unknown");
    t = tiers[0];
    t.write_bandwidth = 0;
    tio_err_clear(&err);
    CHECK(tio_cost_compute(&in, &t, &c, &err) == TIO_E_ARG);
    CHECK_HAS(err.msg, "write bandwidth unknown");
    t = tiers[0];
    t.read_bandwidth = 0; /* only the drain option needs it */
    tio_err_clear(&err);
    CHECK(tio_cost_compute(&in, &t, &c, &err) == TIO_OK);
    in.opts.flags = TIO_COST_DRAIN_AT_TIER_SPEED;
    CHECK(tio_cost_compute(&in, &t, &c, &err) == TIO_E_ARG);
    CHECK_HAS(err.msg, "read bandwidth unknown");

    CASE("bad arguments");
    in = input(0, row);
    row[2] = -1;
    tio_err_clear(&err);
    CHECK(tio_cost_compute(&in, &tiers[0], &c, &err) == TIO_E_ARG);
    CHECK_HAS(err.msg, "hops[2] = -1");
    in = input(0, row);
    in.hops = NULL;
    tio_err_clear(&err);
    CHECK(tio_cost_compute(&in, &tiers[0], &c, &err) == TIO_E_ARG);
    in = input(0, row);
    in.opts.persistence = (enum tio_persistence)7;
    tio_err_clear(&err);
    CHECK(tio_cost_compute(&in, &tiers[0], &c, &err) == TIO_E_ARG);
    in = input(0, row);
    in.opts.nbuf = 1ull << 40;
    in.opts.bufsize = 1ull << 40;
    tio_err_clear(&err);
    CHECK(tio_cost_compute(&in, &tiers[0], &c, &err) == TIO_E_ARG);
    CHECK_HAS(err.msg, "overflows");

    CASE("no producers: only the transfer of nothing");
    in = input(0, row);
    in.nproducers = 0;
    CHECK(tio_cost_compute(&in, &tiers[0], &c, &err) == TIO_OK);
    CHECK(c.aggregate == 0);
    CHECK(fabs(c.transfer - 30e-3 * io_hops[0]) < 1e-15);
}

int main(void)
{
    setup();
    table_2();
    conditions();
    setup();
    drain_flag();
    target_figures();
    errors();
    printf("test_cost: all checks passed\n");
    return 0;
}
