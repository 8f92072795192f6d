/* Memory-conscious collective I/O (seed 004 §3), the part that needs no MPI: from every
 * process's pieces of one access, the nodes they run on and the memory each node can give
 * to aggregation, the file domains of the access and the aggregator of each.
 *
 *   group division (§3.1)   the covered bytes are cut into aggregation groups of about
 *                           group_message bytes, only where no node has data on both
 *                           sides: a node never belongs to two groups. When the nodes'
 *                           data interleave there is no such place and one group.
 *   workload partition      each group's region is the root of a binary partition tree;
 *   (§3.2)                  a vertex holding more than `message` bytes is cut where half
 *                           of its bytes lie (on the alignment), recursively. The leaves
 *                           are the file domains, in file order. A group is cut no finer
 *                           than its bytes over the aggregator slots of its nodes: leaves
 *                           beyond the slots could only remerge, unevenly.
 *   location (§3.4)         for each leaf in file order: its candidate hosts are the
 *                           nodes of the processes with data in it that still have a free
 *                           aggregator slot (fewer than per_node used); the one with the
 *                           most memory left takes it if that is at least min_memory.
 *   remerging (§3.3)        otherwise the leaf leaves the tree: a sibling leaf takes its
 *                           region over (their parent becomes that leaf), else the
 *                           nearest leaf of the sibling's subtree (a depth-first search
 *                           that visits the children on the leaf's side first). A leaf
 *                           that took over and has no aggregator yet is located again,
 *                           with the hosts of its larger region.
 *
 * What the seed leaves open, decided here: a group whose whole region finds no host
 * (the root fails) looks for one among every node's; when no node has min_memory left, the
 * host with the most memory left takes it anyway (its buffers are smaller: more rounds),
 * counted in short_of_memory; a leaf for which no slot is left anywhere is merged into the
 * domain before it (or after it, for the first), across groups, counted in `crossed`.
 * Every process computes the same result from the same input. */
#ifndef TIO_AGG_MEMCON_H
#define TIO_AGG_MEMCON_H

#include <stddef.h>
#include <stdint.h>

#include "agg/plan.h"
#include "util/error.h"

struct tio_mc_params {
    int per_node;              /* N_ah: aggregators one node hosts in one access, at most */
    int64_t message;           /* Msg_ind: the most bytes of a leaf */
    int64_t group_message;     /* Msg_group: bytes of a group, about; 0: one group */
    int64_t min_memory;        /* Mem_min: a host with less left takes no aggregator */
    int64_t align;             /* cuts on it (1: anywhere) */
    int by_data;               /* location: among the hosts with min_memory left, the one
                                  with most of the leaf's bytes (ties: most memory); 0: the
                                  seed's rule, the most memory */
};

/* An aggregator slot: a process that can aggregate, the engine's domain it owns and the
 * memory its buffers take. */
struct tio_mc_slot {
    int domain, rank;
    int64_t bytes;
};

/* A node: the memory it can give to aggregation and its slots, in the order they are
 * taken. */
struct tio_mc_node {
    int64_t memory;
    int nslots;
    const struct tio_mc_slot *slot;
};

/* A file domain of the access: [lo, hi) holding `bytes` covered bytes, aggregated by
 * slot `slot` of node `node` (engine domain `domain`, process `rank`). */
struct tio_mc_domain {
    int64_t lo, hi, bytes;
    int group, node, slot, domain, rank;
};

struct tio_mc_result {
    int ngroups;
    int64_t *group_lo, *group_hi;  /* each group's region */
    int ndomains;                  /* in file order */
    struct tio_mc_domain *dom;
    int leaves;                    /* leaves of the trees before any remerging */
    int remerged;                  /* leaves that left their tree */
    int widened;                   /* groups whose aggregator is on another group's node */
    int short_of_memory;           /* leaves given a host below min_memory */
    int crossed;                   /* leaves merged across groups: no slot was left */
    struct tio_agg_run *runs;      /* the covered bytes, sorted and merged (a plan may take
                                      them over: tio_agg_plan_cut), nruns of them */
    size_t nruns;
};

/* pieces[0..n): ranks index node_of (node indexes < nnodes); nodes[nnodes]. An empty
 * access has no domain. Errors: bad parameters, out of memory, no slot on any node. */
int tio_mc_partition(const struct tio_agg_piece *pieces, size_t n, const int *node_of,
                     int nnodes, const struct tio_mc_node *nodes,
                     const struct tio_mc_params *prm, struct tio_mc_result *out,
                     struct tio_err *err);

void tio_mc_result_free(struct tio_mc_result *r);

#endif
