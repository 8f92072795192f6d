/* tio_cost_place: the collective choice of the aggregator (seed 002 §3.2: "every node is
 * in charge of computing the cost, for each of its local memory banks, of being an
 * aggregator"). One allgather of what each producer sends, each node's evaluator scores
 * its own tiers, one MINLOC reduction picks the winner. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "tier/cost.h"
#include "tier/tiers.h"
#include "util/error_mpi.h"
#include "util/agree.h"

struct producer {
    unsigned long long bytes;
    double src_bandwidth; /* read bandwidth of the DRAM the data is in; 0 = unknown */
    int handle_rank;      /* rank in the handle's communicator, -1 when not in it */
    int eligible;
};

/* This process's DRAM: where producers hold their data. */
static double dram_read_bandwidth(const struct tio_tiers *t)
{
    for (int i = 0; i < t->ntiers; i++)
        if (t->tiers[i].info.kind == TIO_TIER_DRAM && !t->tiers[i].info.numa_nodes[0])
            return t->tiers[i].info.read_bandwidth;
    return 0;
}

struct best {
    int tier;             /* index in this node's tiers, -1 = none qualified */
    struct tio_cost cost;
    int candidates, qualified;
    unsigned long long largest; /* most available bytes on a tier persistent enough */
    int largest_tier;
};

/* Score every tier of this node as the aggregator of the producers p[0..n). */
static int evaluate(const struct tio_tiers *t, const struct producer *p, int n,
                    const struct tio_cost_opts *o, struct best *b, struct tio_err *err)
{
    int me = t->node_of[t->rank];
    int *hops = malloc(sizeof(int) * (size_t)n);
    unsigned long long *bytes = malloc(sizeof *bytes * (size_t)n);
    double *src = malloc(sizeof(double) * (size_t)n);
    if (!hops || !bytes || !src) {
        free(hops), free(bytes), free(src);
        return tio_err_set(err, TIO_E_NOMEM, "tio_cost_place: out of memory");
    }
    for (int i = 0; i < n; i++) {
        hops[i] = tio_tiers_node_hops(t, t->node_of[p[i].handle_rank], me);
        bytes[i] = p[i].bytes;
        src[i] = p[i].src_bandwidth;
    }
    struct tio_cost_input in = {
        .nproducers = n, .bytes = bytes, .hops = hops, .src_bandwidth = src,
        .hops_to_target = tio_tiers_node_io_hops(t, me),
        .net_latency = t->latency[1], .net_bandwidth = t->bandwidth[1], .opts = *o,
    };
    int rc = TIO_OK;
    struct tio_err why = {0};
    for (int i = 0; i < t->ntiers && !rc; i++) {
        struct tio_tier_info info;
        struct tio_cost c;
        tio_tiers_info_now(t, i, &info);
        rc = tio_cost_compute(&in, &info, &c, &why);
        if (rc)
            break;
        b->candidates++;
        if (info.persistence >= o->persistence && (b->largest_tier < 0 ||
                                                   info.available > b->largest)) {
            b->largest = info.available;
            b->largest_tier = i;
        }
        if (c.verdict != TIO_COST_OK)
            continue;
        b->qualified++;
        if (b->tier < 0 || c.total < b->cost.total) {
            b->tier = i;
            b->cost = c;
        }
    }
    if (rc) /* which node could not score its tiers */
        tio_err_set(err, why.cls, "%s (on %s)", why.msg, t->host);
    free(hops), free(bytes), free(src);
    return rc;
}

static int place(tio_tiers_t t, MPI_Comm comm, unsigned long long bytes, int eligible,
                 const struct tio_cost_opts *o, struct tio_placement *out,
                 struct tio_err *err)
{
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    struct producer mine = {.bytes = bytes, .eligible = eligible != 0,
                            .src_bandwidth = dram_read_bandwidth(t)};
    MPI_Group g_comm, g_handle;
    PMPI_Comm_group(comm, &g_comm);
    PMPI_Comm_group(t->comm, &g_handle);
    PMPI_Group_translate_ranks(g_comm, 1, &rank, g_handle, &mine.handle_rank);
    PMPI_Group_free(&g_comm);
    PMPI_Group_free(&g_handle);
    if (mine.handle_rank == MPI_UNDEFINED) {
        mine.handle_rank = -1;
        tio_err_set(err, TIO_E_ARG, "tio_cost_place: this process is not in the tiers "
                    "handle's communicator");
    }
    if (tio_agree(comm, err, NULL, 0))
        return err->cls;

    struct producer *p = malloc(sizeof *p * (size_t)size);
    if (!p)
        tio_err_set(err, TIO_E_NOMEM, "tio_cost_place: out of memory");
    if (tio_agree(comm, err, NULL, 0)) {
        free(p);
        return err->cls;
    }
    PMPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, p, (int)sizeof mine, MPI_BYTE, comm);

    /* This node's evaluator: its lowest eligible process in comm. */
    int me = t->node_of[t->rank], evaluator = 0;
    if (eligible) {
        evaluator = 1;
        for (int r = 0; r < rank; r++)
            if (p[r].eligible && t->node_of[p[r].handle_rank] == me)
                evaluator = 0;
    }
    struct best b = {.tier = -1, .largest_tier = -1};
    if (evaluator)
        evaluate(t, p, size, o, &b, err);
    free(p);
    if (tio_agree(comm, err, NULL, 0))
        return err->cls;

    int counts[2] = {b.candidates, b.qualified};
    PMPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, comm);
    struct { double v; int r; } win = {b.tier >= 0 ? b.cost.total : DBL_MAX, rank};
    PMPI_Allreduce(MPI_IN_PLACE, &win, 1, MPI_DOUBLE_INT, MPI_MINLOC, comm);
    if (counts[0] == 0)
        return tio_err_set(err, TIO_E_ARG, "tio_cost_place: no process is eligible to "
                           "aggregate");
    if (win.v == DBL_MAX) {
        /* Say what was needed and the best there was. */
        struct { double v; int r; } big = {b.largest_tier >= 0 ? (double)b.largest : -1.0,
                                           rank};
        PMPI_Allreduce(MPI_IN_PLACE, &big, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
        char name[TIO_TIER_NAME_MAX + TIO_SITE_HOST_MAX + 8] = "";
        if (rank == big.r && b.largest_tier >= 0)
            snprintf(name, sizeof name, "\"%s\" on %s", t->tiers[b.largest_tier].info.name,
                     t->host);
        PMPI_Bcast(name, (int)sizeof name, MPI_CHAR, big.r, comm);
        unsigned long long needed = o->persistence > TIO_PERSIST_NONE ? 0 : o->nbuf * o->bufsize;
        if (o->persistence > TIO_PERSIST_NONE) {
            PMPI_Allreduce(&bytes, &needed, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
        }
        if (big.v < 0)
            return tio_err_set(err, TIO_E_NOSPACE, "tio_cost_place: none of the %d tiers "
                               "has persistence %s or more", counts[0],
                               tio_persistence_name(o->persistence));
        return tio_err_set(err, TIO_E_NOSPACE, "tio_cost_place: no tier can hold the %llu "
                           "bytes needed (%s); the largest with persistence %s or more has "
                           "%.0f bytes available (%s)", needed,
                           o->persistence > TIO_PERSIST_NONE ? "all the data, persistent"
                                                             : "nbuf x bufsize",
                           tio_persistence_name(o->persistence), big.v, name);
    }

    struct tio_placement res = {.rank = win.r, .candidates = counts[0],
                                .qualified = counts[1]};
    if (rank == win.r) {
        snprintf(res.tier, sizeof res.tier, "%s", t->tiers[b.tier].info.name);
        res.total = b.cost.total;
        res.aggregate = b.cost.aggregate;
        res.transfer = b.cost.transfer;
    }
    PMPI_Bcast(&res, (int)sizeof res, MPI_BYTE, win.r, comm);
    *out = res;
    return TIO_OK;
}

int tio_cost_place(tio_tiers_t tiers, MPI_Comm comm, unsigned long long bytes, int eligible,
                   const struct tio_cost_opts *opts, struct tio_placement *out)
{
    struct tio_err err = {0};
    if (!tiers || !opts || !out || comm == MPI_COMM_NULL) {
        tio_err_set(&err, TIO_E_ARG, "tio_cost_place: %s", !tiers ? "tiers handle is NULL"
                    : comm == MPI_COMM_NULL ? "comm is MPI_COMM_NULL"
                    : "opts or out is NULL");
        return tio_err_raise_comm(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, &err);
    }
    if (place(tiers, comm, bytes, eligible, opts, out, &err))
        return tio_err_raise_comm(comm, &err);
    return MPI_SUCCESS;
}
