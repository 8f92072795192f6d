/* The placement of the aggregators: the strategy picks each domain's process and tier, the
 * node communicator and the node-level declarations' records are made, the buffers are
 * allocated and each aggregator opens its driver and I/O thread. At open for strategies that
 * need no access, else at the first declaration. */
#include <stdio.h>
#include <stdlib.h>

#include "agg/handle.h"
#include "util/log.h"
#include "util/agree.h"

/* What node-level declarations need (declare_node.c, check.c): the node's processes' group
 * ranks, gather buffers, a communicator and records for the checks. */
static void node_declarations_alloc(struct tio_agg *a, struct tio_err *err)
{
    MPI_Group g, ng;
    PMPI_Comm_size(a->nr.nodecomm, &a->nr.nsize);
    int *nr = malloc(sizeof *nr * (size_t)a->nr.nsize);
    a->nr.node_granks = malloc(sizeof *a->nr.node_granks * (size_t)a->nr.nsize);
    PMPI_Comm_rank(a->nr.nodecomm, &a->nr.node_rank);
    a->nr.node_first = malloc(sizeof *a->nr.node_first * TIO_AGG_MEET * (size_t)a->nr.nsize);
    if (PMPI_Comm_dup(a->grp.gcomm, &a->nr.vcomm) != MPI_SUCCESS) {
        a->nr.vcomm = MPI_COMM_NULL;
        tio_err_set(err, TIO_E_OTHER, "aggregator placement: MPI_Comm_dup failed");
    }
    if (!nr || !a->nr.node_granks || !a->nr.node_first) {
        free(nr);
        tio_err_set(err, TIO_E_NOMEM, "aggregator placement: out of memory");
        return;
    }
    for (int i = 0; i < a->nr.nsize; i++)
        nr[i] = i;
    PMPI_Comm_group(a->nr.nodecomm, &ng);
    PMPI_Comm_group(a->grp.gcomm, &g);
    PMPI_Group_translate_ranks(ng, a->nr.nsize, nr, g, a->nr.node_granks);
    PMPI_Group_free(&g);
    PMPI_Group_free(&ng);
    free(nr);
    tio_agg_checks_alloc(a, err);
}

int tio_agg_place(struct tio_agg *a, const struct tio_agg_access *first, struct tio_err *err)
{
    int nd = a->strategy->domains(a);
    a->place.ndomains = nd;
    a->place.rank = calloc((size_t)nd, sizeof *a->place.rank);
    a->place.tier = calloc((size_t)nd, sizeof *a->place.tier);
    a->place.cost = calloc((size_t)nd, sizeof *a->place.cost);
    a->dom_node = calloc((size_t)nd, sizeof *a->dom_node);
    a->nr.node_ndom = calloc((size_t)a->grp.gnnodes, sizeof *a->nr.node_ndom);
    a->nr.span = malloc(sizeof *a->nr.span * 2 * (size_t)a->grp.gnnodes);
    if (!a->place.rank || !a->place.tier || !a->place.cost || !a->dom_node || !a->nr.node_ndom ||
        !a->nr.span)
        tio_err_set(err, TIO_E_NOMEM, "aggregator placement: out of memory");
    if (err->cls == TIO_OK)
        a->strategy->place(a, first ? &first->plan : NULL, first ? first->gpieces : NULL,
                           first ? first->ngpieces : 0, &a->place, err);
    nd = a->place.ndomains; /* a strategy may use fewer than domains() said at most */
    if (PMPI_Comm_split(a->grp.gcomm, a->grp.gnode_of[a->grp.grank], a->grp.grank, &a->nr.nodecomm) !=
        MPI_SUCCESS) {
        a->nr.nodecomm = MPI_COMM_NULL;
        tio_err_set(err, TIO_E_OTHER, "aggregator placement: MPI_Comm_split of the node "
                    "failed");
    }
    if (err->cls == TIO_OK && a->set.target == TIO_AGG_TARGET_FILE)
        node_declarations_alloc(a, err);
    if (tio_agree(a->grp.gcomm, err, NULL, 0))
        return err->cls;
    a->my_domain = -1;
    for (int d = 0; d < nd; d++) {
        if (a->place.rank[d] == a->grp.grank)
            a->my_domain = d;
        a->dom_node[d] = a->grp.gnode_of[a->place.rank[d]];
        a->nr.node_ndom[a->dom_node[d]]++;
    }
    a->nr.all_nodes_aggregate = 1;
    for (int k = 0; k < a->grp.gnnodes; k++)
        a->nr.all_nodes_aggregate &= a->nr.node_ndom[k] > 0;
    if (tio_agg_buffers_alloc(&a->bufs, a->tiers, a->grp.gcomm, a->nr.nodecomm, nd, a->place.rank,
                              (const char(*)[TIO_TIER_NAME_MAX])a->place.tier,
                              a->place.window, (int64_t)a->set.buffer_size,
                              a->set.buffer_count, err))
        return err->cls; /* agreed by the tier layer */
    if (a->my_domain >= 0) {
        if (a->set.target == TIO_AGG_TARGET_FILE)
            tio_agg_driver_file(&a->drv, a->path, a->oflags, err);
        else if (!tio_agg_driver_subfile(&a->drv, &a->tgt.manifest, a->tgt.data_dir, a->oflags, err))
            snprintf(a->drv.path, sizeof a->drv.path, "%s", a->path);
        a->drv_open = err->cls == TIO_OK;
        if (a->drv_open && tio_agg_io_start(&a->io, a->set.buffer_count, err)) {
            a->drv.ops->close(&a->drv);
            a->drv_open = 0;
        }
    }
    if (tio_agree(a->grp.gcomm, err, NULL, 0)) {
        if (a->io)
            tio_agg_io_stop(a->io);
        a->io = NULL;
        if (a->drv_open)
            a->drv.ops->close(&a->drv);
        a->drv_open = 0;
        struct tio_err ignore = {0};
        tio_agg_buffers_free(&a->bufs, &ignore);
        return err->cls;
    }
    a->placed = 1;
    if (tio_log_enabled(TIO_LOG_INFO) && a->grp.grank == 0)
        for (int d = 0; d < nd; d++)
            TIO_INFO("aggregation: group %d, domain %d -> rank %d, tier %s (cost %g s)",
                     a->grp.group, d, a->grp.gworld[a->place.rank[d]], a->place.tier[d],
                     a->place.cost[d]);
    return TIO_OK;
}
