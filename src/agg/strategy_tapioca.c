/* The tapioca placement (seed 002 §3.2): for every domain, every node evaluates each of
 * its tiers as the place to aggregate that domain's producers with the cost model
 * (Cost_A + Cost_T, tier/cost.c), tiers lacking the persistence or the room asked for
 * excluded; the costs are gathered and every process makes the same choice: domains with
 * the most data first, each to the cheapest (node, tier) that still has a free process
 * and room. Needs the first access (how much each process sends to each domain), and the
 * figures of the tiers and the network (a site file; tierio probe writes one). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg/handle.h"
#include "tier/cost.h"
#include "tierio/agg.h"
#include "tierio/net.h"
#include "util/agree.h"

#define MAXT 8 /* tiers one node offers as candidates */
#define HDR 8  /* a block starts with the count of tiers, padded for alignment */

/* What a node leader tells the others about one of its tiers, for every domain. */
struct cand_tier {
    char name[TIO_TIER_NAME_MAX];
    unsigned long long available;
    unsigned long long needed;       /* for the largest domain (message) */
    int verdict;                     /* for the largest domain (message) */
};

static int tapioca_domains(const struct tio_agg *a)
{
    int n = a->set.aggregators ? a->set.aggregators : a->grp.gnnodes;
    return n < a->grp.gsize ? n : a->grp.gsize;
}

/* omega[d * size + i]: bytes process i (of the group) sends to domain d. */
static void volumes(const struct tio_agg *a, const struct tio_agg_plan *plan,
                    const struct tio_agg_piece *pieces, size_t n, unsigned long long *omega)
{
    int nd = plan->ndomains;
    for (size_t k = 0; k < n; k++) {
        int64_t lo = pieces[k].off, hi = lo + pieces[k].len;
        for (int d = 0; d < nd && lo < hi; d++) {
            int64_t a0 = plan->dom_lo[d] > lo ? plan->dom_lo[d] : lo;
            int64_t b0 = plan->dom_hi[d] < hi ? plan->dom_hi[d] : hi;
            if (b0 > a0)
                omega[(size_t)d * (size_t)a->grp.gsize + (size_t)pieces[k].rank] +=
                    (unsigned long long)(b0 - a0);
        }
    }
}

/* The target's figures for Cost_T: the global tier (file, subfiles) or the node-local
 * target tier, when this node knows them. */
static void target_figures(const struct tio_agg *a, double *lat, double *bw)
{
    struct tio_tier_info t;
    *lat = *bw = 0;
    int found = 0;
    if (a->set.target == TIO_AGG_TARGET_NODE_LOCAL) {
        found = tio_agg_find_target_tier(a, &t);
    } else {
        int n = 0;
        tio_tiers_count(a->tiers, &n);
        for (int i = 0; i < n && !found; i++)
            found = tio_tiers_get(a->tiers, i, &t) == MPI_SUCCESS && t.kind == TIO_TIER_GLOBAL;
    }
    if (found) {
        *lat = t.latency;
        *bw = t.write_bandwidth;
    }
}

/* This node's costs (leaders only): cost[d * MAXT + t], +inf when tier t cannot take
 * domain d. */
static int evaluate(struct tio_agg *a, const unsigned long long *omega, int nd,
                    struct cand_tier *ct, int *nct, double *cost, struct tio_err *err)
{
    int ntiers = 0, leader = a->grp.gworld[a->grp.grank]; /* ranks of the tiers handle */
    tio_tiers_count(a->tiers, &ntiers);
    double lat = 0, bw = 0, tlat, tbw;
    tio_net_latency(a->tiers, TIO_NET_INTER_NODE, &lat);
    tio_net_bandwidth(a->tiers, TIO_NET_INTER_NODE, &bw);
    if (a->grp.gnnodes == 1) { /* no network between producers: the node's own figures */
        double l1 = 0, b1 = 0;
        tio_net_latency(a->tiers, TIO_NET_INTRA_NODE, &l1);
        tio_net_bandwidth(a->tiers, TIO_NET_INTRA_NODE, &b1);
        if (l1 > 0 && b1 > 0)
            lat = l1, bw = b1;
    }
    target_figures(a, &tlat, &tbw);
    int io_hops = 0;
    tio_net_distance_to_io(a->tiers, leader, &io_hops);
    unsigned long long *bytes = malloc(sizeof *bytes * (size_t)a->grp.gsize);
    int *hops = malloc(sizeof *hops * (size_t)a->grp.gsize);
    if (!bytes || !hops) {
        free(bytes);
        free(hops);
        return tio_err_set(err, TIO_E_NOMEM, "tapioca placement: out of memory");
    }
    *nct = 0;
    int biggest = 0;
    unsigned long long most = 0, sum;
    for (int d = 0; d < nd; d++) {
        sum = 0;
        for (int i = 0; i < a->grp.gsize; i++)
            sum += omega[(size_t)d * (size_t)a->grp.gsize + (size_t)i];
        if (sum > most)
            most = sum, biggest = d;
    }
    for (int t = 0; t < ntiers && *nct < MAXT; t++) {
        struct tio_tier_info info;
        if (tio_tiers_get(a->tiers, t, &info) != MPI_SUCCESS)
            continue;
        if (strcmp(a->set.tier, "auto") != 0 && strcmp(a->set.tier, info.name) != 0)
            continue;
        /* The global file system is where the data goes, not a place to stage it. */
        if (info.kind == TIO_TIER_GLOBAL)
            continue;
        int c = (*nct)++;
        snprintf(ct[c].name, sizeof ct[c].name, "%s", info.name);
        ct[c].available = info.available;
        for (int d = 0; d < nd; d++) {
            int np = 0;
            for (int i = 0; i < a->grp.gsize; i++) {
                unsigned long long w = omega[(size_t)d * (size_t)a->grp.gsize + (size_t)i];
                if (!w)
                    continue;
                bytes[np] = w;
                tio_net_distance(a->tiers, a->grp.gworld[i], leader, &hops[np]);
                np++;
            }
            struct tio_cost_input in = {
                .nproducers = np, .bytes = bytes, .hops = hops, .src_bandwidth = NULL,
                .hops_to_target = io_hops, .net_latency = lat, .net_bandwidth = bw,
                .opts = {.persistence = a->set.persistence,
                         .nbuf = (unsigned long long)a->set.buffer_count,
                         .bufsize = a->set.buffer_size, .target_latency = tlat,
                         .target_bandwidth = tbw,
                         .flags = info.read_bandwidth > 0 ? TIO_COST_DRAIN_AT_TIER_SPEED : 0}};
            struct tio_cost out;
            if (tio_cost_compute(&in, &info, &out, err)) {
                free(bytes);
                free(hops);
                return err->cls;
            }
            cost[d * MAXT + c] = out.verdict == TIO_COST_OK ? out.total : INFINITY;
            if (d == biggest) {
                ct[c].needed = out.needed;
                ct[c].verdict = out.verdict;
            }
        }
    }
    free(bytes);
    free(hops);
    return TIO_OK;
}

/* Domains by their bytes (omega summed over the processes), most first; ties in domain
 * order. */
static void order_by_volume(const unsigned long long *omega, int nd, int size, int *order,
                            unsigned long long *dbytes)
{
    for (int d = 0; d < nd; d++) {
        order[d] = d;
        for (int i = 0; i < size; i++)
            dbytes[d] += omega[(size_t)d * (size_t)size + (size_t)i];
    }
    for (int i = 1; i < nd; i++)
        for (int j = i; j > 0 && dbytes[order[j]] > dbytes[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
}

/* The cheapest (process, candidate tier) for domain d with need bytes left, among nodes
 * below their share of aggregators; *best_r -1 if none. */
static void cheapest_holder(const struct tio_agg *a, const char *all, size_t block,
                            const unsigned long long *left, const int *used, int nd, int d,
                            unsigned long long need, int *best_r, int *best_t, double *best)
{
    int size = a->grp.gsize;
    *best_r = *best_t = -1;
    *best = INFINITY;
    for (int r = 0; r < size; r++) {
        const char *blk = all + block * (size_t)r;
        int nct = *(const int *)blk;
        const double *cost = (const double *)(blk + HDR + MAXT * sizeof(struct cand_tier));
        int node = a->grp.gnode_of[r], count = 0;
        for (int q = 0; q < size; q++)
            count += a->grp.gnode_of[q] == node;
        /* Aggregators spread over the nodes (their network links and memory are not
         * in the model): at most an even share per node. */
        int share = (nd + a->grp.gnnodes - 1) / a->grp.gnnodes;
        if (nct == 0 || used[node] >= count || used[node] >= share)
            continue;
        for (int t = 0; t < nct; t++)
            if (cost[d * MAXT + t] < *best && left[r * MAXT + t] >= need) {
                *best = cost[d * MAXT + t];
                *best_r = r;
                *best_t = t;
            }
    }
}

/* No tier can hold domain d: say what was needed and the best there was, from the largest
 * domain's view. */
static int no_tier_for(const struct tio_agg *a, const char *all, size_t block, int d,
                       unsigned long long need, struct tio_err *err)
{
    unsigned long long most = 0;
    const char *where = "none";
    for (int r = 0; r < a->grp.gsize; r++) {
        const char *blk = all + block * (size_t)r;
        const struct cand_tier *ct = (const struct cand_tier *)(blk + HDR);
        for (int t = 0; t < *(const int *)blk; t++)
            if (ct[t].available >= most) {
                most = ct[t].available;
                where = ct[t].name;
            }
    }
    return tio_err_set(err, TIO_E_NOSPACE, "tapioca placement: no tier (%s = %s) can "
                       "aggregate domain %d: it needs %llu bytes with persistence %s; the "
                       "most any node has is %llu bytes on \"%s\"", TIO_AGG_HINT_TIER,
                       a->set.tier, d, need, tio_persistence_name(a->set.persistence), most,
                       where);
}

/* Every process makes the same choice from the same table (all: every process's candidate
 * tiers and costs): domains with most data first, each to its cheapest holder, on the
 * node's lowest process not yet aggregating. */
static int choose(struct tio_agg *a, const unsigned long long *omega, const char *all,
                  size_t block, struct tio_agg_placement *out, struct tio_err *err)
{
    int nd = out->ndomains, size = a->grp.gsize;
    unsigned long long *left = malloc(sizeof *left * (size_t)size * MAXT);
    int *used = calloc((size_t)a->grp.gnnodes, sizeof *used), *order = malloc(sizeof *order * (size_t)nd);
    char *taken = calloc((size_t)size, 1);
    unsigned long long *dbytes = calloc((size_t)nd, sizeof *dbytes);
    if (!left || !used || !order || !taken || !dbytes) {
        tio_err_set(err, TIO_E_NOMEM, "tapioca placement: out of memory");
        goto out;
    }
    for (int r = 0; r < size; r++) {
        const struct cand_tier *ct = (const struct cand_tier *)(all + block * (size_t)r + HDR);
        for (int t = 0; t < MAXT; t++)
            left[r * MAXT + t] = ct[t].available;
    }
    order_by_volume(omega, nd, size, order, dbytes);
    for (int k = 0; k < nd; k++) {
        int d = order[k], best_r, best_t;
        double best;
        unsigned long long need = a->set.persistence > TIO_PERSIST_NONE
                                      ? dbytes[d]
                                      : (unsigned long long)a->set.buffer_count * a->set.buffer_size;
        cheapest_holder(a, all, block, left, used, nd, d, need, &best_r, &best_t, &best);
        if (best_r < 0) {
            no_tier_for(a, all, block, d, need, err);
            goto out;
        }
        const struct cand_tier *ct = (const struct cand_tier *)(all + block * (size_t)best_r + HDR);
        /* The node's lowest process not yet aggregating. */
        int node = a->grp.gnode_of[best_r], rank = -1;
        for (int q = 0; q < size && rank < 0; q++)
            if (a->grp.gnode_of[q] == node && !taken[q])
                rank = q;
        taken[rank] = 1;
        used[node]++;
        left[best_r * MAXT + best_t] -= need;
        out->rank[d] = rank;
        snprintf(out->tier[d], sizeof out->tier[d], "%s", ct[best_t].name);
        out->cost[d] = best;
    }
out:
    free(left);
    free(used);
    free(order);
    free(taken);
    free(dbytes);
    return err->cls;
}

static int tapioca_place(struct tio_agg *a, const struct tio_agg_plan *plan,
                         const struct tio_agg_piece *pieces, size_t npieces,
                         struct tio_agg_placement *out, struct tio_err *err)
{
    int nd = out->ndomains, size = a->grp.gsize;
    if (!a->set.tier[0])
        snprintf(a->set.tier, sizeof a->set.tier, "auto");
    unsigned long long *omega = calloc((size_t)nd * (size_t)size, sizeof *omega);
    /* Per process: its candidate tiers and their costs (leaders only; others none). */
    size_t block = HDR + MAXT * sizeof(struct cand_tier) +
                   (size_t)nd * MAXT * sizeof(double);
    char *mine = calloc(1, block), *all = malloc(block * (size_t)size);
    int *leader = malloc(sizeof *leader * (size_t)a->grp.gnnodes);
    if (!omega || !mine || !all || !leader)
        tio_err_set(err, TIO_E_NOMEM, "tapioca placement: out of memory");
    int is_leader = 0;
    if (err->cls == TIO_OK) {
        for (int n = 0; n < a->grp.gnnodes; n++)
            leader[n] = -1;
        for (int r = size - 1; r >= 0; r--)
            leader[a->grp.gnode_of[r]] = r;
        is_leader = leader[a->grp.gnode_of[a->grp.grank]] == a->grp.grank;
        volumes(a, plan, pieces, npieces, omega);
        if (is_leader)
            evaluate(a, omega, nd, (struct cand_tier *)(mine + HDR), (int *)mine,
                     (double *)(mine + HDR + MAXT * sizeof(struct cand_tier)), err);
    }
    if (tio_agree(a->grp.gcomm, err, NULL, 0) == TIO_OK) {
        PMPI_Allgather(mine, (int)block, MPI_BYTE, all, (int)block, MPI_BYTE, a->grp.gcomm);
        choose(a, omega, all, block, out, err);
    }
    free(omega);
    free(mine);
    free(all);
    free(leader);
    return err->cls;
}

const struct tio_agg_strategy tio_agg_strategy_tapioca = {
    .name = "tapioca",
    .needs_access = 1,
    .domains = tapioca_domains,
    .place = tapioca_place,
};
