/* The background check of declarations made within the node (declare_node.c).
 *
 * What a node cannot see — whether the nodes' data really lie apart (plan.h), and whether
 * a process of another node passed bad arguments — travels in a nonblocking allgather of
 * (count, first byte, last byte + 1) per process, started by the declaration and
 * completed by the second call on the handle after it (or by tio_agg_sync / close),
 * which every process reaches at the same point: all decide alike.
 *
 * The check's outcomes: the data lie apart (the usual case: the access keeps its plan);
 * they do not (the access gets a plan among all processes, which needs their pieces — an
 * allgather when some process has more than one — and from then on the handle's calls
 * synchronise among all, every access declared within the node being planned among all
 * then); some process's declaration failed (the access fails on every process from then
 * on). Until then a call works on what the node knows: its writes are each node's bytes,
 * right in any case (overlapping pieces of different nodes aside, which writes do not
 * allow and which the check then reports).
 *
 * Also here: what a call tells the next tio_agg_sync (tio_agg_note_call). */
#include <stdlib.h>
#include <string.h>

#include "agg/handle.h"
#include "util/agree.h"

/* One declaration whose check is under way. Records (and their buffers, which MPI uses
 * until the check completes) are made at placement and never move: starting a check
 * cannot fail, so every process starts one for every such declaration. */
struct tio_agg_check {
    int id;
    int calls;                        /* calls on the handle since the declaration */
    int64_t mine[3];                  /* count (-1: this process failed), lo, hi */
    int64_t *all;                     /* 3 per process of the group */
    MPI_Request req;
};

int tio_agg_checks_alloc(struct tio_agg *a, struct tio_err *err)
{
    a->nr.checks = calloc(TIO_AGG_CHECKS, sizeof *a->nr.checks);
    for (int i = 0; a->nr.checks && i < TIO_AGG_CHECKS; i++)
        if (!(a->nr.checks[i].all = malloc(sizeof(int64_t) * 3 * (size_t)a->grp.gsize)))
            return tio_err_set(err, TIO_E_NOMEM, "aggregation: out of memory");
    return a->nr.checks ? TIO_OK : tio_err_set(err, TIO_E_NOMEM, "aggregation: out of memory");
}

static struct tio_agg_check *check_at(struct tio_agg *a, int i)
{
    return &a->nr.checks[(a->nr.check_head + i) % TIO_AGG_CHECKS];
}

static void conclude(struct tio_agg *a, struct tio_agg_check *c);

/* Complete the oldest check (collective: every process is at the same point). */
static void complete_oldest(struct tio_agg *a, struct tio_err *err)
{
    struct tio_agg_check *c = check_at(a, 0);
    if (PMPI_Wait(&c->req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        tio_err_set(err, TIO_E_OTHER, "completing the check of access %d: MPI_Wait failed",
                    c->id);
    else
        conclude(a, c);
    a->nr.check_head = (a->nr.check_head + 1) % TIO_AGG_CHECKS;
    a->nr.nchecks--;
}

/* All records busy: the oldest completes first (everywhere at the same declaration). */
void tio_agg_check_start(struct tio_agg *a, int id, int64_t count,
                         const struct tio_agg_piece *mine, size_t n, struct tio_err *err)
{
    if (a->nr.nchecks == TIO_AGG_CHECKS)
        complete_oldest(a, err);
    struct tio_agg_check *c = check_at(a, a->nr.nchecks);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++)
        if (mine[i].len > 0) {
            lo = mine[i].off < lo ? mine[i].off : lo;
            hi = mine[i].off + mine[i].len > hi ? mine[i].off + mine[i].len : hi;
        }
    c->id = id;
    c->calls = 0;
    c->mine[0] = count;
    c->mine[1] = lo < hi ? lo : 0;
    c->mine[2] = lo < hi ? hi : 0;
    if (PMPI_Iallgather(c->mine, 3, MPI_INT64_T, c->all, 3, MPI_INT64_T, a->nr.vcomm, &c->req) !=
        MPI_SUCCESS) {
        tio_err_set(err, TIO_E_OTHER, "tio_agg_declare: MPI_Iallgather failed");
        return;
    }
    a->nr.nchecks++;
}

/* Access x's plan among all processes from every process's pieces (taken over; NULL
 * with err set when gathering them failed here), agreed: a failure anywhere fails the
 * access everywhere. Every process is past its calls of the node regime then. */
static void finish_plan(struct tio_agg *a, struct tio_agg_access *x,
                        struct tio_agg_piece *pieces, size_t n, int by_node, int id,
                        struct tio_err *err)
{
    struct tio_agg_access nx;
    memset(&nx, 0, sizeof nx);
    if (err->cls == TIO_OK) {
        tio_agg_access_make(a, &nx, pieces, n, by_node, err);
        nx.read_own = !a->set.read_aggregate && tio_agg_pieces_disjoint(nx.gpieces, nx.ngpieces);
    } else {
        free(pieces);
    }
    tio_agree(a->grp.gcomm, err, NULL, 0);
    tio_agg_access_free(x);
    if (err->cls == TIO_OK) {
        *x = nx;
    } else {
        tio_agg_access_free(&nx);
        tio_err_set(&x->failed, err->cls, "access %d: planning it among all processes: %s", id,
                    err->msg);
    }
    x->within_node = x->among_all = 1;
}

/* Access x's plan among all processes: every process's pieces from first (the gathered
 * (count, first offset, first size), total pieces) and, when a process has several, an
 * allgather of this process's; domains by node when they allow it. */
static void plan_among_all(struct tio_agg *a, struct tio_agg_access *x, const int64_t *first,
                           long long total, int id)
{
    struct tio_err err = {0};
    MPI_Offset *offs = malloc(sizeof *offs * (x->own_n + 1)),
               *lens = malloc(sizeof *lens * (x->own_n + 1));
    if (!offs || !lens)
        tio_err_set(&err, TIO_E_NOMEM, "out of memory");
    for (size_t k = 0; offs && lens && k < x->own_n; k++) {
        offs[k] = x->gpieces[x->own_first + k].off;
        lens[k] = x->gpieces[x->own_first + k].len;
    }
    struct tio_agg_piece *pieces = NULL;
    size_t n = 0;
    tio_agg_gather_pieces(a->grp.gcomm, a->grp.gsize, first, total, (int)x->own_n, offs, lens, NULL,
                          &pieces, &n, a, &err);
    free(offs);
    free(lens);
    finish_plan(a, x, pieces, n, pieces && tio_agg_apart(a, pieces, n), id, &err);
}

/* Access id's declaration failed on group rank r (known alike everywhere): it fails on
 * every process, and needs no plan any more. */
static void fail_access(struct tio_agg *a, struct tio_agg_access *x, int id, int r)
{
    if (x->failed.cls == TIO_OK) {
        tio_agg_access_free(x);
        tio_err_set(&x->failed, TIO_E_ARG, "access %d: its declaration failed on rank %d", id,
                    a->grp.gworld[r]);
    }
    x->within_node = x->among_all = 1;
}

/* The regime ends: every access declared within the node gets its plan among all
 * processes now, from an allgather of each process's (count, first piece) and, when a
 * process has several, of the pieces (a process whose declaration failed brings -1: the
 * access then fails everywhere). Collective over the group, in id order, alike
 * everywhere; every process is past its calls of the node regime then. */
static void plan_all_among_all(struct tio_agg *a)
{
    for (int i = 0; i < a->naccess; i++) {
        struct tio_agg_access *x = &a->access[i];
        if (!x->within_node || x->among_all) /* (alike everywhere) */
            continue;
        const struct tio_agg_piece *own = x->gpieces ? x->gpieces + x->own_first : NULL;
        int64_t me[3] = {x->failed.cls != TIO_OK ? -1 : (int64_t)x->own_n,
                         x->own_n > 0 ? own->off : 0, x->own_n > 0 ? own->len : 0},
                *first = a->gather_first;
        PMPI_Allgather(me, 3, MPI_INT64_T, first, 3, MPI_INT64_T, a->grp.gcomm);
        int failed = -1;
        long long total = 0;
        for (int r = 0; r < a->grp.gsize; r++) {
            if (first[3 * r] < 0 && failed < 0)
                failed = r;
            total += first[3 * r] > 0 ? first[3 * r] : 0;
        }
        if (failed >= 0) {
            fail_access(a, x, i, failed);
            continue;
        }
        plan_among_all(a, x, first, total, i);
    }
}

/* Conclude check c (completed). */
static void conclude(struct tio_agg *a, struct tio_agg_check *c)
{
    if (c->id >= a->naccess) /* (this process had no room to keep it: out of memory) */
        return;
    struct tio_agg_access *x = &a->access[c->id];
    const int64_t *all = c->all;
    int failed = -1;
    tio_agg_spans_of(NULL, 0, a->grp.gnode_of, a->nr.span, a->grp.gnnodes);
    for (int r = 0; r < a->grp.gsize; r++) {
        if (all[3 * r] < 0 && failed < 0)
            failed = r;
        tio_agg_span_add(a->nr.span, a->grp.gnode_of[r], all[3 * r + 1], all[3 * r + 2]);
    }
    if (failed >= 0) { /* everywhere alike */
        fail_access(a, x, c->id, failed);
        return;
    }
    x->checking = 0;
    /* Nodes' data interleave: plans among all from now on (this access's too, with its
     * domains balanced or following the data). Already so when the regime ended before. */
    if (!x->among_all && !tio_agg_spans_apart_here(a)) {
        a->nr.node_regime = 0;
        plan_all_among_all(a);
    }
}

int tio_agg_settle(struct tio_agg *a, int all, struct tio_err *err)
{
    while (a->nr.nchecks > 0 && (all || check_at(a, 0)->calls > 0))
        complete_oldest(a, err);
    return err->cls;
}

void tio_agg_note_call(struct tio_agg *a, int id, int writing, const struct tio_err *err)
{
    for (int i = 0; i < a->nr.nchecks; i++)
        check_at(a, i)->calls++;
    if (err->cls != TIO_OK && a->late.cls == TIO_OK)
        a->late = *err;
    a->call_hash = (a->call_hash ^ (uint64_t)(2 * (int64_t)id + writing + 2)) *
                   0x100000001b3ull;
}

void tio_agg_checks_free(struct tio_agg *a)
{
    if (!a->nr.checks)
        return;
    struct tio_err ignore = {0};
    tio_agg_settle(a, 1, &ignore);
    for (int i = 0; i < TIO_AGG_CHECKS; i++)
        free(a->nr.checks[i].all);
    free(a->nr.checks);
    a->nr.checks = NULL;
}
