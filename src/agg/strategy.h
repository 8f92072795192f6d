/* Placement strategies: which process aggregates each domain, and on which tier. A table
 * (strategy.c) keeps them replaceable: a new strategy is one file and one line there.
 *   default   one aggregator per node, the way ROMIO picks them (strategy_default.c)
 *   tapioca   the cost model of seed 002 §3.2 over processes and tiers
 *             (strategy_tapioca.c) */
#ifndef TIO_AGG_STRATEGY_H
#define TIO_AGG_STRATEGY_H

#include "agg/plan.h"
#include "tierio/tier.h"
#include "util/error.h"

struct tio_agg;

struct tio_agg_placement {
    int ndomains;
    int *rank;                             /* domain -> aggregator (distinct ranks) */
    char (*tier)[TIO_TIER_NAME_MAX];       /* domain -> tier of its buffers */
    double *cost;                          /* domain -> the model's cost (tapioca), or 0 */
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
};

/* The strategy called name, or NULL; names: a comma-separated list for messages. */
const struct tio_agg_strategy *tio_agg_strategy_find(const char *name);
const char *tio_agg_strategy_names(void);

extern const struct tio_agg_strategy tio_agg_strategy_default;
extern const struct tio_agg_strategy tio_agg_strategy_tapioca;

/* One aggregator per node first, then a second per node, ...: the ranks of the first
 * ndomains such picks, spread evenly over the nodes when there are fewer than nodes,
 * ordered by node. Shared by the strategies. */
int tio_agg_pick_per_node(const struct tio_agg *a, int ndomains, int *ranks,
                          struct tio_err *err);

#endif
