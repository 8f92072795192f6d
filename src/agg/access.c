/* Declared accesses' parts below the C API: an access made from its pieces (plan, moves,
 * cross-node rounds), freed; the pieces gathered from every process; whether the nodes'
 * data lie apart (domains by node); the handle's room for one more access. Called by
 * agg_access.c, declare_node.c, check.c, engine.c and mpiio.c; calls only the plan. */
#include <stdlib.h>
#include <string.h>

#include "agg/handle.h"
#include "util/agree.h"

/* What an access derives from its pieces. */
void tio_agg_access_free_plan(struct tio_agg_access *x)
{
    tio_agg_plan_free(&x->plan);
    free(x->moves);
    free(x->cross);
    x->moves = NULL;
    x->cross = NULL;
}

void tio_agg_access_free(struct tio_agg_access *x)
{
    tio_agg_access_free_plan(x);
    if (x->gpieces != x->pieces)
        free(x->gpieces);
    free(x->pieces);
    memset(x, 0, sizeof *x);
}

int tio_agg_by_node_possible(const struct tio_agg *a)
{
    /* (A strategy that cuts the domains itself moves data between nodes on purpose.) */
    return a->placed && a->nr.nodecomm != MPI_COMM_NULL && a->set.target == TIO_AGG_TARGET_FILE &&
           !a->set.balanced && a->align <= TIO_AGG_LOCAL_ALIGN_MAX && !a->strategy->plan;
}

int tio_agg_spans_apart_here(struct tio_agg *a)
{
    return tio_agg_by_node_possible(a) &&
           tio_agg_spans_apart(a->nr.span, a->grp.gnnodes, a->nr.node_ndom, a->nr.span + a->grp.gnnodes);
}

int tio_agg_apart(struct tio_agg *a, const struct tio_agg_piece *pieces, size_t n)
{
    if (!tio_agg_by_node_possible(a))
        return 0;
    tio_agg_spans_of(pieces, n, a->grp.gnode_of, a->nr.span, a->grp.gnnodes);
    return tio_agg_spans_apart_here(a);
}

int tio_agg_access_make(struct tio_agg *a, struct tio_agg_access *x,
                        struct tio_agg_piece *pieces, size_t n, int by_node,
                        struct tio_err *err)
{
    memset(x, 0, sizeof *x);
    x->pieces = x->gpieces = pieces;
    x->npieces = x->ngpieces = n;
    int nd = a->placed ? a->place.ndomains : a->strategy->domains(a);
    if (!a->placed && a->strategy->plan) {
        /* Its placement needs no plan and its plan needs the placement: the access is
         * planned once placed (tio_agg_plan_access), not twice. */
        x->exchanged = 1;
        return TIO_OK;
    }
    /* Once the aggregators are known, domains may follow the data's nodes. */
    struct tio_agg_locality loc = {a->grp.gnode_of, a->dom_node};
    int64_t buffer = (int64_t)a->set.buffer_size;
    int rc = a->placed && a->strategy->plan
                 ? a->strategy->plan(a, x->gpieces, x->ngpieces, a->planning_read, &x->plan, err)
             : by_node ? tio_agg_plan_by_node(&x->plan, x->gpieces, x->ngpieces, nd, buffer,
                                              a->align, &loc, a->grp.gnnodes, err)
                       : tio_agg_plan_make(&x->plan, x->gpieces, x->ngpieces, nd, buffer,
                                           a->align, a->placed && !a->set.balanced ? &loc : NULL,
                                           err);
    if (rc)
        return err->cls;
    x->by_node = by_node;
    x->exchanged = 1;
    if (a->placed && x->plan.nrounds > 0) {
        if (!(x->cross = malloc((size_t)x->plan.nrounds)))
            return tio_err_set(err, TIO_E_NOMEM, "aggregation plan: out of memory");
        tio_agg_plan_cross(&x->plan, x->gpieces, x->ngpieces, &loc, x->cross);
    }
    /* This process's pieces and their moves. */
    size_t first = 0, k = 0;
    while (first < x->ngpieces && x->gpieces[first].rank != a->grp.grank)
        first++;
    while (first + k < x->ngpieces && x->gpieces[first + k].rank == a->grp.grank)
        k++;
    for (size_t i = 0; i < k; i++)
        x->mine += x->gpieces[first + i].len;
    x->own_first = first;
    x->own_n = k;
    return tio_agg_plan_moves(&x->plan, x->gpieces + first, k, &x->moves, &x->nmoves, err);
}

int tio_agg_gather_pieces(MPI_Comm comm, int size, const int64_t *first, long long total,
                          int count, const MPI_Offset offsets[], const MPI_Offset sizes[],
                          const int *rank_of, struct tio_agg_piece **out, size_t *nout,
                          struct tio_agg *a, struct tio_err *err)
{
    int many = 0;
    for (int r = 0; r < size; r++)
        many |= first[3 * r] > 1;
    struct tio_agg_piece *pieces = malloc(sizeof *pieces * (size_t)(total + 1));
    size_t n = 0;
    *out = NULL;
    *nout = 0;
    if (!pieces)
        tio_err_set(err, TIO_E_NOMEM, "tio_agg_declare: out of memory");
    if (!many) {
        for (int r = 0; pieces && r < size; r++)
            if (first[3 * r] == 1)
                pieces[n++] = (struct tio_agg_piece){first[3 * r + 1], first[3 * r + 2], 0,
                                                     rank_of ? rank_of[r] : r};
        *out = pieces;
        *nout = n;
        return 0;
    }
    int *counts = a->gather_counts, *displs = a->gather_displs;
    for (int r = 0, at = 0; r < size; r++) {
        counts[r] = 2 * (int)first[3 * r];
        displs[r] = at;
        at += counts[r];
    }
    int64_t *pairs = malloc(sizeof *pairs * (size_t)(2 * total + 2 * count + 2));
    if (!pairs)
        tio_err_set(err, TIO_E_NOMEM, "tio_agg_declare: out of memory");
    if (tio_agree(comm, err, NULL, 0)) {
        free(pairs);
        free(pieces);
        return 1;
    }
    int64_t *my = pairs + 2 * total;
    for (int i = 0; i < count; i++) {
        my[2 * i] = offsets[i];
        my[2 * i + 1] = sizes[i];
    }
    PMPI_Allgatherv(my, 2 * count, MPI_INT64_T, pairs, counts, displs, MPI_INT64_T, comm);
    for (int r = 0; r < size; r++) {
        int64_t mem = 0;
        for (int i = displs[r]; i < displs[r] + counts[r]; i += 2) {
            pieces[n++] = (struct tio_agg_piece){pairs[i], pairs[i + 1], mem,
                                                 rank_of ? rank_of[r] : r};
            mem += pairs[i + 1];
        }
    }
    free(pairs);
    *out = pieces;
    *nout = n;
    return 0;
}

int tio_agg_access_room(struct tio_agg *a, struct tio_err *err)
{
    if (a->naccess < a->cap_access)
        return TIO_OK;
    int cap = a->cap_access ? 2 * a->cap_access : 8;
    struct tio_agg_access *t = realloc(a->access, sizeof *t * (size_t)cap);
    if (!t)
        return tio_err_set(err, TIO_E_NOMEM, "tio_agg_declare: out of memory");
    a->access = t;
    a->cap_access = cap;
    return TIO_OK;
}

int tio_agg_plan_access(struct tio_agg *a, struct tio_agg_access *x,
                        struct tio_agg_piece *pieces, size_t n, tio_agg_by_node_fn by_node,
                        void *ctx, struct tio_err *err)
{
    int node = by_node(a, pieces, n, ctx); /* from what every process has: alike */
    memset(x, 0, sizeof *x);
    if (err->cls == TIO_OK)
        tio_agg_access_make(a, x, pieces, n, node, err);
    else
        free(pieces);
    int placing = !a->placed;
    if ((placing && (tio_agree(a->grp.gcomm, err, NULL, 0) || tio_agg_place(a, x, err))) ||
        err->cls != TIO_OK) {
        tio_agg_access_free(x);
        return err->cls;
    }
    /* Placed by this access (tapioca, memory_conscious): its domains may now follow the
     * data, or be the strategy's. */
    if (placing && (!a->set.balanced || a->strategy->plan)) {
        tio_agg_access_free_plan(x);
        node = by_node(a, pieces, n, ctx);
        if (tio_agg_access_make(a, x, pieces, n, node, err) != TIO_OK) {
            tio_agg_access_free(x);
            return err->cls;
        }
    }
    /* Reads of pieces that do not interleave: every process reads its own (decided here,
     * once, alike everywhere: the same pieces, the settings agreed at open). */
    x->read_own = a->set.target == TIO_AGG_TARGET_FILE && !a->set.read_aggregate &&
                  tio_agg_pieces_disjoint(x->gpieces, x->ngpieces);
    return TIO_OK;
}
