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
    PMPI_Comm_size(a->nodecomm, &a->nsize);
    int *nr = malloc(sizeof *nr * (size_t)a->nsize);
    a->node_granks = malloc(sizeof *a->node_granks * (size_t)a->nsize);
    PMPI_Comm_rank(a->nodecomm, &a->node_rank);
    a->node_first = malloc(sizeof *a->node_first * TIO_AGG_MEET * (size_t)a->nsize);
    if (PMPI_Comm_dup(a->gcomm, &a->vcomm) != MPI_SUCCESS) {
        a->vcomm = MPI_COMM_NULL;
        tio_err_set(err, TIO_E_OTHER, "aggregator placement: MPI_Comm_dup failed");
    }
    if (!nr || !a->node_granks || !a->node_first) {
        free(nr);
        tio_err_set(err, TIO_E_NOMEM, "aggregator placement: out of memory");
        return;
    }
    for (int i = 0; i < a->nsize; i++)
        nr[i] = i;
    PMPI_Comm_group(a->nodecomm, &ng);
    PMPI_Comm_group(a->gcomm, &g);
    PMPI_Group_translate_ranks(ng, a->nsize, nr, g, a->node_granks);
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
    a->node_ndom = calloc((size_t)a->gnnodes, sizeof *a->node_ndom);
    a->span = malloc(sizeof *a->span * 2 * (size_t)a->gnnodes);
    if (!a->place.rank || !a->place.tier || !a->place.cost || !a->dom_node || !a->node_ndom ||
        !a->span)
        tio_err_set(err, TIO_E_NOMEM, "aggregator placement: out of memory");
    if (err->cls == TIO_OK)
        a->strategy->place(a, first ? &first->plan : NULL, first ? first->gpieces : NULL,
                           first ? first->ngpieces : 0, &a->place, err);
    if (PMPI_Comm_split(a->gcomm, a->gnode_of[a->grank], a->grank, &a->nodecomm) !=
        MPI_SUCCESS) {
        a->nodecomm = MPI_COMM_NULL;
        tio_err_set(err, TIO_E_OTHER, "aggregator placement: MPI_Comm_split of the node "
                    "failed");
    }
    if (err->cls == TIO_OK && a->set.target == TIO_AGG_TARGET_FILE)
        node_declarations_alloc(a, err);
    if (tio_agree(a->gcomm, err, NULL, 0))
        return err->cls;
    a->my_domain = -1;
    for (int d = 0; d < nd; d++) {
        if (a->place.rank[d] == a->grank)
            a->my_domain = d;
        a->dom_node[d] = a->gnode_of[a->place.rank[d]];
        a->node_ndom[a->dom_node[d]]++;
    }
    a->all_nodes_aggregate = 1;
    for (int k = 0; k < a->gnnodes; k++)
        a->all_nodes_aggregate &= a->node_ndom[k] > 0;
    if (tio_agg_buffers_alloc(&a->bufs, a->tiers, a->gcomm, a->nodecomm, nd, a->place.rank,
                              (const char(*)[TIO_TIER_NAME_MAX])a->place.tier,
                              (int64_t)a->set.buffer_size, a->set.buffer_count, err))
        return err->cls; /* agreed by the tier layer */
    if (a->my_domain >= 0) {
        if (a->set.target == TIO_AGG_TARGET_FILE)
            tio_agg_driver_file(&a->drv, a->path, a->oflags, err);
        else if (!tio_agg_driver_subfile(&a->drv, &a->manifest, a->data_dir, a->oflags, err))
            snprintf(a->drv.path, sizeof a->drv.path, "%s", a->path);
        a->drv_open = err->cls == TIO_OK;
        if (a->drv_open && tio_agg_io_start(&a->io, a->set.buffer_count, err)) {
            a->drv.ops->close(&a->drv);
            a->drv_open = 0;
        }
    }
    if (tio_agree(a->gcomm, err, NULL, 0)) {
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
    if (tio_log_enabled(TIO_LOG_INFO) && a->grank == 0)
        for (int d = 0; d < nd; d++)
            TIO_INFO("aggregation: group %d, domain %d -> rank %d, tier %s (cost %g s)",
                     a->group, d, a->gworld[a->place.rank[d]], a->place.tier[d],
                     a->place.cost[d]);
    return TIO_OK;
}
