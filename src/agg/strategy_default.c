/* The default placement: one aggregator per node (the lowest process), more per node when
 * more are asked for, fewer nodes spread evenly when fewer; buffers on the tier named by
 * tierio_agg_tier (DRAM unless given). Needs no knowledge of the data: placed at open. */
#include <stdio.h>
#include <string.h>

#include "agg/handle.h"
#include "tierio/tier.h"
#include "tierio/agg.h"

static int default_domains(const struct tio_agg *a)
{
    int n = a->set.aggregators ? a->set.aggregators : a->grp.gnnodes;
    return n < a->grp.gsize ? n : a->grp.gsize;
}

static int default_place(struct tio_agg *a, const struct tio_agg_plan *plan,
                         const struct tio_agg_piece *pieces, size_t npieces,
                         struct tio_agg_placement *out, struct tio_err *err)
{
    (void)plan, (void)pieces, (void)npieces;
    const char *tier = a->set.tier[0] ? a->set.tier : "dram";
    if (!strcmp(tier, "auto"))
        return tio_err_set(err, TIO_E_INFO_VALUE, "%s = auto: choosing the tier needs the "
                           "cost model (%s = tapioca)", TIO_AGG_HINT_TIER,
                           TIO_AGG_HINT_STRATEGY);
    /* A persistence asked for is the tier's to give (seed 002 §3.2). */
    if (a->set.persistence > TIO_PERSIST_NONE) {
        int idx = -1;
        struct tio_tier_info info = {.persistence = TIO_PERSIST_NONE}; /* DRAM, no handle */
        if (a->tiers)
            tio_tiers_find(a->tiers, tier, &idx);
        if ((!a->tiers || (idx >= 0 && tio_tiers_get(a->tiers, idx, &info) == MPI_SUCCESS)) &&
            info.persistence < a->set.persistence)
            return tio_err_set(err, TIO_E_INFO_VALUE, "%s = %s: tier \"%s\" keeps data for "
                               "\"%s\" only (%s = %s asks more; choose a tier that keeps "
                               "it, or tierio_agg_strategy = tapioca)", TIO_AGG_HINT_TIER,
                               tier, tier, tio_persistence_name(info.persistence),
                               TIO_AGG_HINT_PERSISTENCE,
                               tio_persistence_name(a->set.persistence));
    }
    if (tio_agg_pick_per_node(a, out->ndomains, out->rank, err))
        return err->cls;
    for (int d = 0; d < out->ndomains; d++) {
        snprintf(out->tier[d], sizeof out->tier[d], "%s", tier);
        out->cost[d] = 0;
    }
    return TIO_OK;
}

const struct tio_agg_strategy tio_agg_strategy_default = {
    .name = "default",
    .needs_access = 0,
    .domains = default_domains,
    .place = default_place,
};
