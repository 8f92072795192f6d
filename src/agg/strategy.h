/* Placement strategies: which process aggregates each domain, and on which tier. A table
 * (strategy.c) keeps them replaceable: a new strategy is one file and one line there.
 *   default            one aggregator per node, the way ROMIO picks them
 *                      (strategy_default.c)
 *   tapioca            the cost model of seed 002 §3.2 over processes and tiers
 *                      (strategy_tapioca.c)
 *   memory_conscious   seed 004 §3: aggregators where the memory is, buffers sized to it,
 *                      and each access's domains cut by a partition tree
 *                      (strategy_memcon.c, memcon.c) */
#ifndef TIO_AGG_STRATEGY_H
#define TIO_AGG_STRATEGY_H

#include <mpi.h>

#include "agg/plan.h"
#include "tierio/tier.h"
#include "util/error.h"

struct tio_agg;

struct tio_agg_placement {
    int ndomains;
    int *rank;                             /* domain -> aggregator (distinct ranks) */
    char (*tier)[TIO_TIER_NAME_MAX];       /* domain -> tier of its buffers */
    double *cost;                          /* domain -> the model's cost (tapioca), or 0 */
    int64_t *window;                       /* domain -> bytes of each of its buffers; NULL:
                                              the buffer_size setting for all */
};

struct tio_agg_strategy {
    const char *name;
    /* Needs the first access (how much data goes where) to place; else placed at open. */
    int needs_access;
    /* The number of domains: aggregators asked for, or what the strategy makes of 0. */
    int (*domains)(const struct tio_agg *a);
    /* Collective over a->icomm; fills out (allocated by the caller for ndomains).
     * plan/pieces: the first access (NULL unless needs_access). */
    int (*place)(struct tio_agg *a, const struct tio_agg_plan *plan,
                 const struct tio_agg_piece *pieces, size_t npieces,
                 struct tio_agg_placement *out, struct tio_err *err);
    /* Optional, for a strategy that keeps state (a->strategy_state) and cuts each access's
     * domains itself; NULL: none, and domains balanced or following the data (plan.h).
     * plan: local, the same on every process of the group from the same pieces (the
     * group's, ranks in gcomm); reading: the access is planned for a read. release: frees
     * the state. report: adds what it chose to an MPI_Info (tio_agg_get_info). */
    int (*plan)(struct tio_agg *a, const struct tio_agg_piece *pieces, size_t npieces,
                int reading, struct tio_agg_plan *p, struct tio_err *err);
    void (*release)(struct tio_agg *a);
    void (*report)(const struct tio_agg *a, MPI_Info info);
};

/* The strategy called name, or NULL; names: a comma-separated list for messages. */
const struct tio_agg_strategy *tio_agg_strategy_find(const char *name);
const char *tio_agg_strategy_names(void);

extern const struct tio_agg_strategy tio_agg_strategy_default;
extern const struct tio_agg_strategy tio_agg_strategy_tapioca;
extern const struct tio_agg_strategy tio_agg_strategy_memcon;

/* One aggregator per node first, then a second per node, ...: the ranks of the first
 * ndomains such picks, spread evenly over the nodes when there are fewer than nodes,
 * ordered by node. Shared by the strategies. */
int tio_agg_pick_per_node(const struct tio_agg *a, int ndomains, int *ranks,
                          struct tio_err *err);

#endif
