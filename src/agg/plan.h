/* Domains and rounds of one access (seed 002 §3.3: the I/O scheduling computed from the
 * declared accesses). Pure C, no MPI: every process computes the same plan from the same
 * pieces, and the unit tests check it directly.
 *
 * The bytes of all pieces, merged into covered runs, are cut into one contiguous domain
 * per aggregator holding about the same number of data bytes, with boundaries on the
 * alignment; each domain is cut into windows of at most one buffer, which start only at
 * covered bytes (holes cost nothing). Window i of every domain is round i.
 *
 * Domains that follow the data (given where processes and aggregators are): a boundary
 * moves to a nearby place where the data of the node of the aggregator before it ends and
 * that of the node of the aggregator after it begins, so that those processes' bytes stay
 * on their node instead of crossing the network (seed 002's Cost_A, which counts bytes
 * times distance, is then zero for them). Nearby: within half a balanced domain, and not
 * when that would add a round or the alignment is more than a page (a stripe of a
 * parallel file system, a hint: aggregators must not share one).
 *
 * Domains by node (tio_agg_plan_by_node), for layouts whose nodes' data lie apart: each
 * node's bytes are cut among the aggregators of that node only, so none crosses the
 * network and each node can plan and move its data alone (declare_node.c). */
#ifndef TIO_AGG_PLAN_H
#define TIO_AGG_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Bytes [off, off+len) of the file, at `mem` in the buffer of process `rank`. */
struct tio_agg_piece {
    int64_t off, len;
    int64_t mem;
    int rank;
};

/* One round of one domain: the file bytes [lo, hi) one buffer holds. */
struct tio_agg_window {
    int64_t lo, hi;
    int domain, round;
};

struct tio_agg_run {
    int64_t lo, hi;
};

/* A range of the file given to one domain. */
struct tio_agg_segment {
    int64_t lo, hi;
    int domain;
};

struct tio_agg_plan {
    int ndomains;
    int nrounds;                    /* the most windows of any domain */
    int64_t bytes;                  /* data bytes of all pieces */
    int64_t lo, hi;                 /* first and last covered byte + 1 (0, 0 when empty) */
    int overlap;                    /* some bytes are in two pieces */
    int followed;                   /* boundaries moved to follow the data */
    int by_node;                    /* domains by node (tio_agg_plan_by_node) */
    int64_t *dom_lo, *dom_hi;       /* each domain's range (balanced plans; lo == hi when
                                       it has no data) */
    int64_t *dom_bytes;             /* data bytes of each domain */
    size_t nruns;                   /* the union of the pieces, sorted */
    struct tio_agg_run *runs;
    size_t nwin;                    /* every window, sorted by lo */
    struct tio_agg_window *win;
    size_t *dom_first;              /* dom_win[dom_first[d] .. dom_first[d+1]) are the */
    size_t *dom_win;                /* indexes in win[] of domain d's windows, by round */
};

/* Where the data is, for domains that follow it. */
struct tio_agg_locality {
    const int *node_of;             /* piece rank -> its node */
    const int *dom_node;            /* domain -> the node of its aggregator */
};

/* The union of the pieces as sorted, merged runs (*runs malloc'ed, *nruns of them), their
 * bytes counted with repeats, and whether two overlap. Pieces must be valid file ranges
 * (an error naming the rank otherwise). */
int tio_agg_merge_runs(const struct tio_agg_piece *pieces, size_t n, struct tio_agg_run **runs,
                       size_t *nruns, int64_t *bytes, int *overlap, struct tio_err *err);

/* The largest alignment that domains following the data may break. */
#define TIO_AGG_LOCAL_ALIGN_MAX 4096

/* Domains by node, for layouts whose nodes' data lie apart (tio_agg_spans_apart): the
 * covered bytes of node k are cut among the domains whose aggregator is on node k, in
 * domain order and balanced by data, so that no byte leaves its node. nnodes: node
 * indexes are below it. An error when a node with data has no domain, or when nodes'
 * data interleave. */
int tio_agg_plan_by_node(struct tio_agg_plan *p, const struct tio_agg_piece *pieces, size_t n,
                         int ndomains, int64_t buffer, int64_t align,
                         const struct tio_agg_locality *loc, int nnodes, struct tio_err *err);

/* span[k] = from the first to past the last byte of node k's processes' pieces (lo >= hi:
 * none). Nothing is allocated: every process decides alike whatever its memory. */
void tio_agg_spans_of(const struct tio_agg_piece *pieces, size_t n, const int *node_of,
                      struct tio_agg_run *span, int nnodes);
void tio_agg_span_add(struct tio_agg_run *span, int node, int64_t lo, int64_t hi);

/* The nodes' data lie apart: no two nodes' spans meet, and every node with data has a
 * domain (ndom_of_node[k] >= 1). scratch: nnodes entries. 1 or 0. */
int tio_agg_spans_apart(const struct tio_agg_run *span, int nnodes, const int *ndom_of_node,
                        struct tio_agg_run *scratch);

/* ndomains >= 1, buffer >= 1, align >= 1 (1 = none; windows end on it when the buffer is
 * at least that large). loc: NULL for balanced domains, else domains follow the data where
 * they can (above). pieces are not modified. */
int tio_agg_plan_make(struct tio_agg_plan *p, const struct tio_agg_piece *pieces, size_t n,
                      int ndomains, int64_t buffer, int64_t align,
                      const struct tio_agg_locality *loc, struct tio_err *err);

/* Domains cut by the caller (a strategy that plans its own, strategy.h): segment i gives
 * [seg[i].lo, seg[i].hi) to domain seg[i].domain (sorted, disjoint, together covering
 * every piece's bytes; a domain may have none), whose windows hold at most window[d]
 * bytes (ndomains entries, each >= 1). runs: the union of the pieces, sorted and merged,
 * if the caller has it (nruns of them, malloc'ed: taken over, also on failure), else NULL
 * and the plan sorts the pieces itself. */
int tio_agg_plan_cut(struct tio_agg_plan *p, const struct tio_agg_piece *pieces, size_t n,
                     struct tio_agg_run *runs, size_t nruns, int ndomains,
                     const struct tio_agg_segment *seg, size_t nseg, const int64_t *window,
                     int64_t align, struct tio_err *err);

void tio_agg_plan_free(struct tio_agg_plan *p);

/* The window of round `round` of domain d, or NULL when d has fewer rounds. */
const struct tio_agg_window *tio_agg_plan_window(const struct tio_agg_plan *p, int d,
                                                 int round);

/* One transfer between a process's buffer and an aggregator's buffer. */
struct tio_agg_move {
    int round, domain;
    int64_t boff;                   /* offset in the window (the aggregation buffer) */
    int64_t mem;                    /* offset in the process's buffer */
    int64_t len;
};

/* The moves of pieces[0..n) (one process's), sorted by round, then domain, then boff.
 * *out is malloc'ed (NULL when there is none). */
int tio_agg_plan_moves(const struct tio_agg_plan *p, const struct tio_agg_piece *pieces,
                       size_t n, struct tio_agg_move **out, size_t *nout, struct tio_err *err);

/* No two processes' pieces interleave: the range from each process's first byte to its
 * last meets no other process's range (pieces in rank order, a process's pieces
 * together). Aggregation then only adds a copy through the aggregators' buffers, and each
 * process may as well access its own pieces: what ROMIO decides for non-interleaved
 * requests. 1 or 0 (0 also when out of memory: aggregating is always right). */
int tio_agg_pieces_disjoint(const struct tio_agg_piece *pieces, size_t n);

/* cross[r] = 1 when round r moves bytes between nodes (a piece's bytes in a window whose
 * domain's aggregator is on another node than the piece's process), else 0; cross has
 * p->nrounds entries. */
void tio_agg_plan_cross(const struct tio_agg_plan *p, const struct tio_agg_piece *pieces,
                        size_t n, const struct tio_agg_locality *loc, char *cross);

/* The covered runs inside window w (what the aggregator writes or reads), at most `max`;
 * returns how many there are (call again with a larger array when it is more). */
size_t tio_agg_plan_runs(const struct tio_agg_plan *p, const struct tio_agg_window *w,
                         struct tio_agg_run *out, size_t max);

#endif
