/* Unit tests of memory-conscious aggregation's pure part (src/agg/memcon.c): group
 * division, the binary partition tree, remerging and aggregator location on synthetic
 * layouts and memory maps, including the seed's worked examples (004, Figures 5 to 9),
 * and invariants over random ones: the domains tile the covered bytes in file order, no
 * slot serves two domains, no node more than per_node, the same input gives the same
 * result. */
#include "../unit/check.h"

#include "agg/memcon.h"

#define U ((int64_t)1 << 20) /* one unit of data: 1 MiB */

/* A cluster for the examples: nnodes nodes with the memory given, nslots slots each
 * (domain = node * MAXS + slot, rank = the node's first process + slot), each slot's
 * buffers taking `slot_bytes`. */
#define MAXN 16
#define MAXS 4
struct cluster {
    int nnodes;
    struct tio_mc_node node[MAXN];
    struct tio_mc_slot slot[MAXN][MAXS];
};

static void cluster_make(struct cluster *c, int nnodes, const int64_t *memory, int nslots,
                         int64_t slot_bytes, int procs_per_node)
{
    c->nnodes = nnodes;
    for (int k = 0; k < nnodes; k++) {
        for (int s = 0; s < nslots; s++)
            c->slot[k][s] = (struct tio_mc_slot){k * MAXS + s, k * procs_per_node + s,
                                                 slot_bytes};
        c->node[k] = (struct tio_mc_node){memory[k], nslots, c->slot[k]};
    }
}

static struct tio_mc_params params(int per_node, int64_t message, int64_t group_message,
                                   int64_t min_memory)
{
    return (struct tio_mc_params){per_node, message, group_message, min_memory, 1, 0};
}

static void run(const struct tio_agg_piece *p, size_t n, const int *node_of,
                const struct cluster *c, const struct tio_mc_params *prm,
                struct tio_mc_result *r)
{
    struct tio_err err = {0};
    if (tio_mc_partition(p, n, node_of, c->nnodes, c->node, prm, r, &err) != TIO_OK)
        FAIL_NOW("tio_mc_partition: %s", err.msg);
}

static void check_domain(const struct tio_mc_result *r, int d, int64_t lo, int64_t hi, int node)
{
    if (d >= r->ndomains)
        FAIL_NOW("domain %d of %d", d, r->ndomains);
    const struct tio_mc_domain *x = &r->dom[d];
    if (x->lo != lo || x->hi != hi || (node >= 0 && x->node != node))
        FAIL_NOW("domain %d is [%lld, %lld) on node %d, expected [%lld, %lld) on node %d", d,
                 (long long)(x->lo / U), (long long)(x->hi / U), x->node,
                 (long long)(lo / U), (long long)(hi / U), node);
}

/* Figure 5: nine processes on three nodes, data serially distributed. A group grows to the
 * end of the data of the node it reached, so no node is in two groups. */
static void test_group_division(void)
{
    CASE("group division (Figure 5)");
    struct tio_agg_piece p[9];
    int node_of[9];
    for (int i = 0; i < 9; i++) {
        p[i] = (struct tio_agg_piece){i * U, U, 0, i};
        node_of[i] = i / 3;
    }
    int64_t mem[3] = {1 << 30, 1 << 30, 1 << 30};
    struct cluster c;
    cluster_make(&c, 3, mem, 2, 2 * U, 3);
    struct tio_mc_result r;
    /* 2 units per group asked: each group still ends where its node's data ends. */
    struct tio_mc_params prm = params(2, 4 * U, 2 * U, U);
    run(p, 9, node_of, &c, &prm, &r);
    CHECK_EQ(r.ngroups, 3);
    for (int g = 0; g < 3; g++) {
        CHECK_EQ(r.group_lo[g], 3 * g * U);
        CHECK_EQ(r.group_hi[g], 3 * (g + 1) * U);
    }
    for (int d = 0; d < r.ndomains; d++) /* each group aggregated on its own node */
        CHECK_EQ(r.dom[d].node, r.dom[d].group);
    tio_mc_result_free(&r);
    /* 4 units: the first group takes two nodes (it reached 4 only with the second). */
    prm.group_message = 4 * U;
    run(p, 9, node_of, &c, &prm, &r);
    CHECK_EQ(r.ngroups, 2);
    CHECK_EQ(r.group_hi[0], 6 * U);
    tio_mc_result_free(&r);
    /* Interleaved nodes (process i writes units i and i + 9): no place to cut, one group. */
    struct tio_agg_piece q[18];
    for (int i = 0; i < 9; i++) {
        q[2 * i] = (struct tio_agg_piece){i * U, U, 0, i};
        q[2 * i + 1] = (struct tio_agg_piece){(i + 9) * U, U, U, i};
    }
    prm.group_message = 2 * U;
    run(q, 18, node_of, &c, &prm, &r);
    CHECK_EQ(r.ngroups, 1);
    tio_mc_result_free(&r);
    /* 0: one group. */
    prm.group_message = 0;
    run(p, 9, node_of, &c, &prm, &r);
    CHECK_EQ(r.ngroups, 1);
    tio_mc_result_free(&r);
}

/* Figure 7: recursive bisection by bytes until every leaf holds at most the message
 * size: nine units, two per leaf, give five domains, one branch deeper than the others. */
static void test_partition_tree(void)
{
    CASE("partition tree (Figure 7)");
    struct tio_agg_piece p[9];
    int node_of[9];
    for (int i = 0; i < 9; i++) {
        p[i] = (struct tio_agg_piece){i * U, U, 0, i};
        node_of[i] = i;
    }
    int64_t mem[9];
    for (int k = 0; k < 9; k++)
        mem[k] = 1 << 30;
    struct cluster c;
    cluster_make(&c, 9, mem, 1, 2 * U, 1);
    struct tio_mc_params prm = params(1, 2 * U, 0, U);
    prm.align = U;
    struct tio_mc_result r;
    run(p, 9, node_of, &c, &prm, &r);
    CHECK_EQ(r.leaves, 5);
    CHECK_EQ(r.ndomains, 5);
    int64_t cuts[6] = {0, 2, 4, 6, 7, 9};
    for (int d = 0; d < 5; d++) {
        check_domain(&r, d, cuts[d] * U, cuts[d + 1] * U, -1);
        CHECK_EQ(r.dom[d].bytes, (cuts[d + 1] - cuts[d]) * U);
    }
    /* Location: the host with the most memory among the leaf's processes' (all equal: the
     * first of them). */
    CHECK_EQ(r.dom[0].node, 0);
    CHECK_EQ(r.dom[3].node, 6);
    tio_mc_result_free(&r);
    /* Weights are bytes, not file span: a hole does not count. Units 0-3 full, then a
     * 12-unit hole, then unit 16: three units and a bit each side of the first cut. */
    struct tio_agg_piece h[2] = {{0, 4 * U, 0, 0}, {16 * U, U, 0, 1}};
    int hn[2] = {0, 1};
    prm.message = 3 * U;
    run(h, 2, hn, &c, &prm, &r);
    CHECK_EQ(r.ndomains, 2);
    int64_t total = 0;
    for (int d = 0; d < r.ndomains; d++)
        total += r.dom[d].bytes;
    CHECK_EQ(total, 5 * U);
    CHECK(r.dom[0].hi <= 4 * U); /* the cut is in the data, not in the hole */
    tio_mc_result_free(&r);

    CASE("no more leaves than the group's slots");
    /* 16 units on 2 nodes with one slot each, message 1 unit: 2 leaves of 8, not 16
     * leaves remerging into uneven domains. */
    struct tio_agg_piece q[16];
    int qn[16];
    for (int i = 0; i < 16; i++) {
        q[i] = (struct tio_agg_piece){i * U, U, 0, i};
        qn[i] = i / 8;
    }
    struct cluster c2;
    int64_t mem2[2] = {1 << 30, 1 << 30};
    cluster_make(&c2, 2, mem2, 1, 2 * U, 8);
    prm.message = U;
    run(q, 16, qn, &c2, &prm, &r);
    CHECK_EQ(r.leaves, 2);
    check_domain(&r, 0, 0, 8 * U, 0);
    check_domain(&r, 1, 8 * U, 16 * U, 1);
    tio_mc_result_free(&r);
}

/* Figure 8 (a): the leaving leaf's sibling is a leaf and takes its region over; (b) the
 * sibling is internal: the nearest leaf of its subtree does, searched on the leaving
 * leaf's side first, on either side. One process per node, one unit each. */
static void test_remerge(void)
{
    struct tio_agg_piece p[7];
    int node_of[7];
    for (int i = 0; i < 7; i++) {
        p[i] = (struct tio_agg_piece){i * U, U, 0, i};
        node_of[i] = i;
    }
    struct cluster c;
    struct tio_mc_result r;
    struct tio_mc_params prm = params(1, U, 0, U);
    prm.align = U;

    CASE("remerging, sibling a leaf (Figure 8a)");
    int64_t a[4] = {0, 8 * U, 8 * U, 8 * U}; /* node 0 has no memory */
    cluster_make(&c, 4, a, 1, 2 * U, 1);
    run(p, 4, node_of, &c, &prm, &r);
    CHECK_EQ(r.leaves, 4);
    CHECK_EQ(r.remerged, 1);
    CHECK_EQ(r.ndomains, 3);
    check_domain(&r, 0, 0, 2 * U, 1); /* A = [0,1) left; B = [1,2) took it */
    check_domain(&r, 1, 2 * U, 3 * U, 2);
    check_domain(&r, 2, 3 * U, 4 * U, 3);
    tio_mc_result_free(&r);

    CASE("remerging, sibling internal, leaf on the left (Figure 8b)");
    /* Three units: [0,1) | ([1,2) | [2,3)). A = [0,1) leaves; the leftmost leaf of its
     * sibling's subtree, [1,2), takes it. */
    int64_t b[3] = {0, 8 * U, 8 * U};
    cluster_make(&c, 3, b, 1, 2 * U, 1);
    run(p, 3, node_of, &c, &prm, &r);
    CHECK_EQ(r.remerged, 1);
    CHECK_EQ(r.ndomains, 2);
    check_domain(&r, 0, 0, 2 * U, 1);
    check_domain(&r, 1, 2 * U, 3 * U, 2);
    tio_mc_result_free(&r);

    CASE("remerging, sibling internal, leaf on the right");
    /* Seven units: ([0,1) | ([1,2) | [2,3))) | (([3,4) | [4,5)) | ([5,6) | [6,7))). Units 5
     * and 6 are node 5's two processes, which has no memory: [5,6) leaves, [6,7) takes it
     * ([5,7) a leaf), [5,7) finds no host either and leaves: its sibling ([3,4) | [4,5))
     * is internal, searched right first: [4,5) takes it. */
    int n7[7] = {0, 1, 2, 3, 4, 5, 5};
    int64_t m7[6] = {8 * U, 8 * U, 8 * U, 8 * U, 8 * U, 0};
    cluster_make(&c, 6, m7, 1, 2 * U, 1);
    run(p, 7, n7, &c, &prm, &r);
    CHECK_EQ(r.remerged, 2);
    CHECK_EQ(r.ndomains, 5);
    check_domain(&r, 3, 3 * U, 4 * U, 3);
    check_domain(&r, 4, 4 * U, 7 * U, 4);
    CHECK_EQ(r.dom[4].bytes, 3 * U);
    tio_mc_result_free(&r);
}

/* Figure 9: among the hosts of a domain's processes with fewer than N_ah aggregators, the
 * one with the most memory; below the minimum, the domain coalesces with its neighbour. */
static void test_location(void)
{
    CASE("location by memory (Figure 9)");
    /* Four processes, two per node, both nodes with data in both leaves. */
    struct tio_agg_piece p[4] = {{0, U, 0, 0}, {U, U, 0, 2}, {2 * U, U, 0, 1}, {3 * U, U, 0, 3}};
    int node_of[4] = {0, 0, 1, 1};
    int64_t mem[2] = {6 * U, 9 * U};
    struct cluster c;
    cluster_make(&c, 2, mem, 2, 2 * U, 2);
    struct tio_mc_result r;
    struct tio_mc_params prm = params(1, 2 * U, 0, U);
    prm.align = U;
    run(p, 4, node_of, &c, &prm, &r);
    CHECK_EQ(r.ndomains, 2);
    CHECK_EQ(r.dom[0].node, 1); /* the most memory */
    CHECK_EQ(r.dom[1].node, 0); /* node 1 has its N_ah = 1 aggregator already */
    tio_mc_result_free(&r);
    /* N_ah = 2: node 1 takes both (9 units, then 7 left, more than node 0's 6). */
    prm.per_node = 2;
    run(p, 4, node_of, &c, &prm, &r);
    CHECK_EQ(r.dom[0].node, 1);
    CHECK_EQ(r.dom[1].node, 1);
    CHECK(r.dom[0].slot != r.dom[1].slot);
    tio_mc_result_free(&r);

    CASE("location by data (tierio_agg_mc_location=data)");
    /* Node 0 has 3 of the leaf's 4 units, node 1 more memory: by data node 0 takes it, as
     * long as it has the minimum; below it, node 1. */
    struct tio_agg_piece d[4] = {{0, U, 0, 0}, {U, U, 0, 1}, {2 * U, U, 0, 2}, {3 * U, U, 0, 3}};
    int dn[4] = {0, 0, 0, 1};
    struct tio_mc_params bd = params(1, 4 * U, 0, U);
    bd.by_data = 1;
    run(d, 4, dn, &c, &bd, &r);
    CHECK_EQ(r.ndomains, 1);
    CHECK_EQ(r.dom[0].node, 0);
    tio_mc_result_free(&r);
    bd.min_memory = 7 * U; /* node 0 has 6 */
    run(d, 4, dn, &c, &bd, &r);
    CHECK_EQ(r.dom[0].node, 1);
    tio_mc_result_free(&r);
    bd.by_data = 0; /* the seed's rule: the most memory */
    bd.min_memory = U;
    run(d, 4, dn, &c, &bd, &r);
    CHECK_EQ(r.dom[0].node, 1);
    tio_mc_result_free(&r);

    CASE("below the minimum memory: coalesce");
    /* Node 1 has the minimum for one aggregator only (9 units left, 7 after one, minimum
     * 8); node 0 has less: the second leaf coalesces with the first. */
    prm.min_memory = 8 * U;
    run(p, 4, node_of, &c, &prm, &r);
    CHECK_EQ(r.ndomains, 1);
    CHECK_EQ(r.remerged, 1);
    check_domain(&r, 0, 0, 4 * U, 1);
    CHECK_EQ(r.dom[0].bytes, 4 * U);
    tio_mc_result_free(&r);
}

/* What the seed leaves open: a whole group without a host, every node short of memory,
 * and no slot left for a group. */
static void test_short_of_memory(void)
{
    struct tio_agg_piece p[4];
    int node_of[4] = {0, 1, 2, 3};
    for (int i = 0; i < 4; i++)
        p[i] = (struct tio_agg_piece){i * U, U, 0, i};
    struct cluster c;
    struct tio_mc_result r;
    struct tio_mc_params prm = params(1, 4 * U, 2 * U, 4 * U);

    CASE("a group without memory is aggregated on another group's node");
    int64_t m1[4] = {U, U, 16 * U, 16 * U}; /* groups [0,2) and [2,4) */
    cluster_make(&c, 4, m1, 1, 2 * U, 1);
    run(p, 4, node_of, &c, &prm, &r);
    CHECK_EQ(r.ngroups, 2);
    CHECK_EQ(r.ndomains, 2);
    CHECK_EQ(r.widened, 1);
    CHECK(r.dom[0].node >= 2);
    CHECK(r.dom[1].node >= 2);
    tio_mc_result_free(&r);

    CASE("every node short of memory: the richest, smaller rounds");
    int64_t m2[4] = {U, 2 * U, U, U};
    cluster_make(&c, 4, m2, 1, 2 * U, 1);
    prm.group_message = 0;
    run(p, 4, node_of, &c, &prm, &r);
    CHECK_EQ(r.ndomains, 1);
    CHECK_EQ(r.short_of_memory, 1);
    CHECK_EQ(r.dom[0].node, 1);
    tio_mc_result_free(&r);

    CASE("no slot left for a group: merged into its neighbour");
    int64_t m3[4] = {16 * U, 0, 0, 0};
    cluster_make(&c, 4, m3, 1, 2 * U, 1);
    c.node[1].nslots = c.node[2].nslots = c.node[3].nslots = 0;
    prm.group_message = U; /* four groups, one slot */
    run(p, 4, node_of, &c, &prm, &r);
    CHECK_EQ(r.ngroups, 4);
    CHECK_EQ(r.ndomains, 1);
    CHECK_EQ(r.crossed, 3);
    check_domain(&r, 0, 0, 4 * U, 0);
    tio_mc_result_free(&r);

    CASE("no slot at all: an error");
    c.node[0].nslots = 0;
    struct tio_err err = {0};
    CHECK(tio_mc_partition(p, 4, node_of, 4, c.node, &prm, &r, &err) == TIO_E_NOSPACE);
    CHECK_HAS(err.msg, "no node has an aggregator slot");
    tio_err_clear(&err);

    CASE("bad parameters and an empty access");
    prm.per_node = 0;
    CHECK(tio_mc_partition(p, 4, node_of, 4, c.node, &prm, &r, &err) == TIO_E_ARG);
    tio_err_clear(&err);
    prm.per_node = 1;
    c.node[0].nslots = 1;
    run(p, 0, node_of, &c, &prm, &r);
    CHECK_EQ(r.ndomains, 0);
    tio_mc_result_free(&r);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    return tt_rand(&rng);
}

/* Random layouts, memory maps and parameters: the invariants. */
static void test_random(void)
{
    CASE("random layouts");
    enum { NP = 24, MAXP = 4 * NP };
    for (int iter = 0; iter < 3000; iter++) {
        int nnodes = 1 + (int)(rnd() % 8), ppn = 1 + (int)(rnd() % 3);
        int nprocs = nnodes * ppn < NP ? nnodes * ppn : NP;
        int node_of[NP];
        for (int r = 0; r < nprocs; r++)
            node_of[r] = r / ppn;
        struct tio_agg_piece p[MAXP];
        size_t n = 0;
        int64_t at = 0;
        for (int r = 0; r < nprocs; r++) {
            int k = (int)(rnd() % 4), interleave = (int)(rnd() % 2);
            for (int i = 0; i < k; i++) {
                int64_t len = (int64_t)(rnd() % (3 * U)), gap = (int64_t)(rnd() % 2 ? 0 : rnd() % U);
                int64_t off = interleave ? (int64_t)(rnd() % (64 * U)) : at + gap;
                p[n++] = (struct tio_agg_piece){off, len, 0, r};
                if (!interleave)
                    at = off + len;
            }
        }
        int64_t mem[MAXN];
        int nslots = 1 + (int)(rnd() % 3);
        for (int k = 0; k < nnodes; k++)
            mem[k] = (int64_t)(rnd() % (16 * U));
        struct cluster c;
        cluster_make(&c, nnodes, mem, nslots < ppn ? nslots : ppn, (int64_t)(rnd() % (4 * U)), ppn);
        struct tio_mc_params prm = params(1 + (int)(rnd() % 3), U / 2 + (int64_t)(rnd() % (4 * U)),
                                          rnd() % 2 ? 0 : (int64_t)(rnd() % (16 * U)),
                                          (int64_t)(rnd() % (4 * U)));
        prm.align = rnd() % 2 ? 1 : 4096;
        struct tio_mc_result r, again;
        run(p, n, node_of, &c, &prm, &r);
        run(p, n, node_of, &c, &prm, &again);
        /* the covered bytes, from a sorted copy */
        int64_t total = 0, reach = -1;
        struct tio_agg_piece s[MAXP];
        memcpy(s, p, sizeof *p * n);
        for (size_t i = 1; i < n; i++) /* insertion sort by offset */
            for (size_t j = i; j > 0 && s[j - 1].off > s[j].off; j--) {
                struct tio_agg_piece t = s[j];
                s[j] = s[j - 1];
                s[j - 1] = t;
            }
        int64_t first = -1, last = -1;
        for (size_t i = 0; i < n; i++) {
            if (s[i].len <= 0)
                continue;
            int64_t lo = s[i].off > reach ? s[i].off : reach, hi = s[i].off + s[i].len;
            if (first < 0)
                first = s[i].off;
            if (hi > lo)
                total += hi - lo;
            if (hi > reach)
                reach = hi;
            last = reach;
        }
        CHECK_EQ(r.ndomains, again.ndomains);
        CHECK(r.ndomains <= r.leaves);
        int64_t sum = 0;
        char used[MAXN][MAXS] = {{0}};
        int per[MAXN] = {0};
        for (int d = 0; d < r.ndomains; d++) {
            const struct tio_mc_domain *x = &r.dom[d];
            const struct tio_mc_domain *y = &again.dom[d];
            CHECK(x->lo == y->lo && x->hi == y->hi && x->bytes == y->bytes &&
                  x->node == y->node && x->slot == y->slot && x->group == y->group);
            CHECK(x->lo < x->hi);
            CHECK(d == 0 ? x->lo == first : x->lo == r.dom[d - 1].hi);
            CHECK(!used[x->node][x->slot]);
            used[x->node][x->slot] = 1;
            per[x->node]++;
            CHECK(per[x->node] <= prm.per_node);
            CHECK_EQ(x->domain, x->node * MAXS + x->slot);
            sum += x->bytes;
        }
        CHECK_EQ(sum, total);
        if (r.ndomains)
            CHECK_EQ(r.dom[r.ndomains - 1].hi, last);
        else
            CHECK_EQ(total, 0);
        tio_mc_result_free(&r);
        tio_mc_result_free(&again);
    }
}

int main(void)
{
    test_group_division();
    test_partition_tree();
    test_remerge();
    test_location();
    test_short_of_memory();
    test_random();
    printf("test_agg_memcon: all checks passed\n");
    return 0;
}
