/* The aggregation buffers: `count` slots of `size` bytes per aggregator on the tier its
 * placement chose, reachable by every process through one-sided communication, one window
 * per distinct tier (processes that do not aggregate on it take 0 bytes). Plain DRAM is
 * MPI shared memory within each node plus a window over it for the other nodes: moves
 * within a node are copies. Other tiers are made by the tier layer (tio_buf_alloc:
 * NUMA-bound memory for HBM, a mapped file exposed as a storage window for storage tiers).
 * The windows stay in a lock_all epoch: a round is Put/Get + flush, then a
 * synchronisation. */
#ifndef TIO_AGG_BUFFERS_H
#define TIO_AGG_BUFFERS_H

#include <mpi.h>
#include <stdint.h>

#include "tierio/tier.h"
#include "util/error.h"

#define TIO_AGG_MAX_TIERS 8

struct tio_agg_buffers {
    int ntiers;
    tio_buf_t buf[TIO_AGG_MAX_TIERS];
    MPI_Win win[TIO_AGG_MAX_TIERS];
    int ndomains;
    int *tier_of;          /* domain -> index in buf[] */
    int *rank_of;          /* domain -> aggregator rank */
    int64_t slot_size;     /* this process's slots (its domain's, else the default) */
    int64_t *dom_slot;     /* domain -> its aggregator's slot size */
    int nslots;
    char *mine;            /* this process's slots (NULL when it does not aggregate) */
    int my_tier;           /* index in buf[] of this process's slots, -1 */
    char *touched;         /* per tier x rank: Put/Get since the last flush */
    int *pending, npending;/* those pairs, tier * size + rank */
    int rank, size;
    /* DRAM: buffers in MPI shared memory of each node (buf[t] unused for that tier) */
    int shared_tier;       /* the tier made so, -1 */
    MPI_Comm node;         /* this node's processes (ours to free when own_node) */
    int own_node;
    MPI_Win swin;          /* the node's shared-memory window */
    char **peer;           /* domain -> its aggregator's slots when on this node, or NULL */
    int shared_copies;     /* copied into a neighbour's slots since the last flush */
};

/* Collective over comm. ranks[d] / tiers[d]: aggregator and tier of domain d (a process
 * aggregates at most one domain). node: the processes of this node among comm's, or
 * MPI_COMM_NULL to find them. tiers may be NULL (then only "dram" exists). Each slot of
 * domain d is slot_sizes[d] bytes, or slot_size for all when slot_sizes is NULL. */
int tio_agg_buffers_alloc(struct tio_agg_buffers *b, tio_tiers_t tiers, MPI_Comm comm,
                          MPI_Comm node, int ndomains, const int *ranks,
                          const char (*tier_names)[TIO_TIER_NAME_MAX],
                          const int64_t *slot_sizes, int64_t slot_size, int nslots,
                          struct tio_err *err);
/* Collective. */
int tio_agg_buffers_free(struct tio_agg_buffers *b, struct tio_err *err);

/* One-sided move between this process's memory and slot `slot` of domain d's aggregator,
 * at offset off. Complete after tio_agg_buffers_flush. */
int tio_agg_buffers_put(struct tio_agg_buffers *b, int d, int slot, int64_t off,
                        const void *src, int64_t len, struct tio_err *err);
int tio_agg_buffers_get(struct tio_agg_buffers *b, int d, int slot, int64_t off, void *dst,
                        int64_t len, struct tio_err *err);
/* The moves mv[0..n) (of one round, all to one domain) between this process's memory mem
 * and slot `slot` of that domain's aggregator, in one operation (indexed datatypes).
 * get: from the slot into mem. Complete after tio_agg_buffers_flush. */
struct tio_agg_move;
int tio_agg_buffers_move(struct tio_agg_buffers *b, int get, const struct tio_agg_move *mv,
                         size_t n, int slot, char *mem, struct tio_err *err);

/* Completes this process's Puts at their targets and its Gets here. */
int tio_agg_buffers_flush(struct tio_agg_buffers *b, struct tio_err *err);
/* Before this process reads (after a barrier) what others Put into its slots, or after
 * it filled them for others to Get: the memory barrier of MPI's unified model. */
int tio_agg_buffers_sync(struct tio_agg_buffers *b, struct tio_err *err);

static inline char *tio_agg_buffers_slot(const struct tio_agg_buffers *b, int slot)
{
    return b->mine + (int64_t)slot * b->slot_size;
}

#endif
