/* Declarations made within each node, checked among all processes in the background.
 *
 * In the node regime (engine.c) a write or a read moves nothing between nodes, so a node
 * needs only its own processes' pieces to plan them: a declaration gathers them within
 * the node (shared memory, no network) and cuts them among the node's aggregators, and
 * the first call on it runs without any synchronisation among all processes. What the
 * node cannot see — whether the nodes' data really lie apart (plan.h), and whether a
 * process of another node passed bad arguments — travels in a nonblocking allgather of
 * (count, first byte, last byte + 1) per process, started by the declaration and
 * completed by the second call on the handle after it (or by tio_agg_sync / close),
 * which every process reaches at the same point: all decide alike.
 *
 * The check's outcomes: the data lie apart (the usual case: the access keeps its plan);
 * they do not (the access gets a plan among all processes, which needs their pieces —
 * an allgather when some process has more than one — and from then on the handle's calls
 * synchronise among all); some process's declaration failed (the access fails on every
 * process from then on). Until then a call works on what the node knows: its writes are
 * each node's bytes, right in any case (overlapping pieces of different nodes aside,
 * which writes do not allow and which the check then reports). */
#include <stdlib.h>
#include <string.h>

#include "agg/handle.h"
#include "util/agree.h"

#define MEET TIO_AGG_MEET

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

int tio_agg_node_declarations(const struct tio_agg *a)
{
    return a->node_regime && a->all_nodes_aggregate && a->checks &&
           tio_agg_by_node_possible(a);
}

int tio_agg_checks_alloc(struct tio_agg *a, struct tio_err *err)
{
    a->checks = calloc(TIO_AGG_CHECKS, sizeof *a->checks);
    for (int i = 0; a->checks && i < TIO_AGG_CHECKS; i++)
        if (!(a->checks[i].all = malloc(sizeof(int64_t) * 3 * (size_t)a->gsize)))
            return tio_err_set(err, TIO_E_NOMEM, "aggregation: out of memory");
    return a->checks ? TIO_OK : tio_err_set(err, TIO_E_NOMEM, "aggregation: out of memory");
}

static struct tio_agg_check *check_at(struct tio_agg *a, int i)
{
    return &a->checks[(a->check_head + i) % TIO_AGG_CHECKS];
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
    a->check_head = (a->check_head + 1) % TIO_AGG_CHECKS;
    a->nchecks--;
}

/* Start the check of access id (this process's count, or -1, and pieces). All records
 * busy: the oldest completes first (everywhere at the same declaration). */
static void start_check(struct tio_agg *a, int id, int64_t count,
                        const struct tio_agg_piece *mine, size_t n, struct tio_err *err)
{
    if (a->nchecks == TIO_AGG_CHECKS)
        complete_oldest(a, err);
    struct tio_agg_check *c = check_at(a, a->nchecks);
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
    if (PMPI_Iallgather(c->mine, 3, MPI_INT64_T, c->all, 3, MPI_INT64_T, a->vcomm, &c->req) !=
        MPI_SUCCESS) {
        tio_err_set(err, TIO_E_OTHER, "tio_agg_declare: MPI_Iallgather failed");
        return;
    }
    a->nchecks++;
}

/* The failed declaration of access id, in its place (ids stay the same on every node). */
static void add_failed(struct tio_agg *a, struct tio_agg_access *x, const struct tio_err *why)
{
    memset(x, 0, sizeof *x);
    x->failed = *why;
    x->within_node = 1;
    a->access[a->naccess++] = *x;
}

int tio_agg_declare_node(struct tio_agg *a, int count, const MPI_Offset offsets[],
                         const MPI_Offset sizes[], int *id, struct tio_err *err)
{
    struct tio_agg_access x;
    memset(&x, 0, sizeof x);
    if (tio_agg_access_room(a, err) != TIO_OK) {
        /* No room to keep the access (out of memory): the check still tells every
         * process that this declaration failed; this process's ids fall behind. */
        start_check(a, a->naccess, -1, NULL, 0, err);
        return err->cls;
    }
    int my = a->naccess;
    struct tio_agg_piece *own = err->cls == TIO_OK ? malloc(sizeof *own * (size_t)(count + 1))
                                                   : NULL;
    if (err->cls == TIO_OK && !own)
        tio_err_set(err, TIO_E_NOMEM, "tio_agg_declare: out of memory");
    if (err->cls != TIO_OK) { /* its node learns it at the access's first call */
        start_check(a, my, -1, NULL, 0, err);
        add_failed(a, &x, err);
        return err->cls;
    }
    int64_t mem = 0;
    for (int i = 0; i < count; i++) {
        own[i] = (struct tio_agg_piece){offsets[i], sizes[i], mem, a->grank};
        mem += sizes[i];
    }
    /* Its own pieces only, until the first call gathers the node's (tio_agg_node_meet). */
    x.pieces = x.gpieces = own;
    x.npieces = x.ngpieces = x.own_n = (size_t)count;
    x.mine = mem;
    x.by_node = 1;
    x.checking = 1;
    x.within_node = 1;
    start_check(a, my, count, own, (size_t)count, err);
    a->access[a->naccess++] = x;
    *id = my;
    return TIO_OK;
}

/* The node's processes' bytes of one lane each, in the first buffer of the node's
 * aggregator (0 when lanes cannot be used: its memory is not shared, or the node has
 * several aggregators). */
static int64_t lane_size(const struct tio_agg *a, int *dom)
{
    int node = a->gnode_of[a->grank];
    *dom = -1;
    if (a->node_ndom[node] != 1)
        return 0;
    for (int d = 0; d < a->place.ndomains; d++)
        if (a->dom_node[d] == node)
            *dom = d;
    if (*dom != a->my_domain && (!a->bufs.peer || !a->bufs.peer[*dom]))
        return 0;
    return a->bufs.slot_size / a->nsize / 64 * 64;
}

int tio_agg_lane_fill(struct tio_agg *a, const struct tio_agg_access *x, const void *buf,
                      const struct tio_err *err)
{
    int dom;
    int64_t lane = lane_size(a, &dom);
    if (err->cls != TIO_OK || x->exchanged || x->failed.cls != TIO_OK || x->own_n > 1 ||
        x->mine > lane)
        return 0;
    if (dom != a->my_domain && x->mine > 0) { /* the aggregator writes from its own buffer */
        memcpy(a->bufs.peer[dom] + (int64_t)a->node_rank * lane, buf, (size_t)x->mine);
        PMPI_Win_sync(a->bufs.swin);
    }
    return 1;
}

void tio_agg_lanes_write(struct tio_agg *a, const void *buf, struct tio_err *err)
{
    int dom;
    int64_t lane = lane_size(a, &dom);
    const int64_t *m = a->node_first;
    PMPI_Win_sync(a->bufs.swin); /* see what the node's processes copied */
    for (int k = 0; k < a->nsize && err->cls == TIO_OK; k++) {
        if (m[MEET * k + 2] != 1 || m[MEET * k + 4] == 0)
            continue;
        const char *src = k == a->node_rank ? buf : a->bufs.mine + (int64_t)k * lane;
        a->drv.ops->write(&a->drv, src, m[MEET * k + 3], m[MEET * k + 4], err);
    }
}

/* Access x's first call: the node's pieces from the meeting (and an allgather of the rest
 * when a process has several), and its plan by node. A failure is this process's: its
 * error goes with the call's next synchronisation. */
static void exchange(struct tio_agg *a, struct tio_agg_access *x, struct tio_err *err)
{
    const int64_t *m = a->node_first;
    int64_t *first = a->gather_first;
    long long total = 0;
    for (int k = 0; k < a->nsize; k++) {
        first[3 * k] = m[MEET * k + 2];
        first[3 * k + 1] = m[MEET * k + 3];
        first[3 * k + 2] = m[MEET * k + 4];
        total += first[3 * k];
    }
    MPI_Offset *offs = malloc(sizeof *offs * (x->own_n + 1)),
               *lens = malloc(sizeof *lens * (x->own_n + 1));
    if (!offs || !lens)
        tio_err_set(err, TIO_E_NOMEM, "out of memory");
    for (size_t i = 0; offs && lens && i < x->own_n; i++) {
        offs[i] = x->gpieces[i].off;
        lens[i] = x->gpieces[i].len;
    }
    struct tio_agg_piece *pieces = NULL;
    size_t n = 0;
    tio_agg_gather_pieces(a->nodecomm, a->nsize, first, total, (int)x->own_n, offs, lens,
                          a->node_granks, &pieces, &n, a, err);
    free(offs);
    free(lens);
    struct tio_agg_access nx;
    int checking = x->checking;
    if (err->cls == TIO_OK && tio_agg_access_make(a, &nx, pieces, n, 1, err) == TIO_OK) {
        nx.read_own = !a->set.read_aggregate && tio_agg_pieces_disjoint(nx.gpieces,
                                                                        nx.ngpieces);
        nx.checking = checking;
        nx.within_node = 1;
        tio_agg_access_free(x);
        *x = nx;
        return;
    }
    if (err->cls == TIO_OK) /* (access_make failed: nx has what it made) */
        tio_agg_access_free(&nx);
    else
        free(pieces);
    tio_err_set(&x->failed, err->cls, "gathering its node's pieces: %s", err->msg);
}

int tio_agg_node_meet(struct tio_agg *a, struct tio_agg_access *x, int id, int lane,
                      int *lanes, struct tio_err *err)
{
    int64_t me[MEET] = {id, err->cls != TIO_OK, x->exchanged ? -2 : (int64_t)x->own_n,
                        x->own_n > 0 ? x->gpieces[0].off : 0,
                        x->own_n > 0 ? x->gpieces[0].len : 0, lane};
    int64_t *m = a->node_first;
    PMPI_Allgather(me, MEET, MPI_INT64_T, m, MEET, MPI_INT64_T, a->nodecomm);
    int failed = -1, differ = 0, all = 1;
    for (int k = 0; k < a->nsize; k++) {
        if (m[MEET * k + 1] && failed < 0)
            failed = k;
        differ |= m[MEET * k] != id || (m[MEET * k + 2] == -2) != (me[2] == -2);
        all &= m[MEET * k + 5] == 1 && m[MEET * k + 2] >= 0 && m[MEET * k + 2] <= 1;
    }
    if (failed >= 0) /* the lowest failing process's error, everywhere on the node */
        return tio_share_error(a->nodecomm, failed, err) != TIO_OK;
    if (differ)
        return tio_err_set(err, TIO_E_ARG, "the processes pass different accesses (ids %d "
                           "and others); every process passes the same", id) != TIO_OK;
    /* Lanes when everybody's data is in one (one piece each at most), none overlapping. */
    for (int k = 0; all && k < a->nsize; k++)
        for (int j = k + 1; all && j < a->nsize; j++) {
            int64_t ko = m[MEET * k + 3], kl = m[MEET * k + 4], jo = m[MEET * j + 3],
                    jl = m[MEET * j + 4];
            all = !(kl > 0 && jl > 0 && ko < jo + jl && jo < ko + kl);
        }
    if (lanes)
        *lanes = all;
    if (!x->exchanged)
        exchange(a, x, err);
    return 0;
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
    tio_agree(a->gcomm, err, NULL, 0);
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
    tio_agg_gather_pieces(a->gcomm, a->gsize, first, total, (int)x->own_n, offs, lens, NULL,
                          &pieces, &n, a, &err);
    free(offs);
    free(lens);
    finish_plan(a, x, pieces, n, pieces && tio_agg_apart(a, pieces, n), id, &err);
}

/* The check says the data of access x do not lie apart: its plan among all processes,
 * from every process's pieces (the (count, lo, hi) gathered give them when nobody has
 * more than one). Collective over the group; a failure anywhere fails the access
 * everywhere. */
static void replan(struct tio_agg *a, struct tio_agg_access *x, const int64_t *all, int id)
{
    long long total = 0;
    /* (count, first offset, first size) of each process, as a declaration gathers them:
     * the check's extent is the piece when there is one */
    int64_t *first = a->gather_first;
    for (int r = 0; r < a->gsize; r++) {
        first[3 * r] = all[3 * r];
        first[3 * r + 1] = all[3 * r + 1];
        first[3 * r + 2] = all[3 * r + 2] - all[3 * r + 1];
        total += all[3 * r];
    }
    plan_among_all(a, x, first, total, id);
}

/* Access id's declaration failed on group rank r (known alike everywhere): it fails on
 * every process, and needs no plan any more. */
static void fail_access(struct tio_agg *a, struct tio_agg_access *x, int id, int r)
{
    if (x->failed.cls == TIO_OK) {
        tio_agg_access_free(x);
        tio_err_set(&x->failed, TIO_E_ARG, "access %d: its declaration failed on rank %d", id,
                    a->gworld[r]);
    }
    x->within_node = x->among_all = 1;
}

/* The regime ends: every access declared within the node and not used yet gets its plan
 * among all processes now (a process whose declaration failed brings -1: the access then
 * fails everywhere). Collective over the group, in id order, alike everywhere. */
static void exchange_all(struct tio_agg *a, int skip)
{
    for (int i = 0; i < a->naccess; i++) {
        struct tio_agg_access *x = &a->access[i];
        if (i == skip || !x->within_node || x->among_all) /* (alike everywhere) */
            continue;
        const struct tio_agg_piece *own = x->gpieces ? x->gpieces + x->own_first : NULL;
        int64_t me[3] = {x->failed.cls != TIO_OK ? -1 : (int64_t)x->own_n,
                         x->own_n > 0 ? own->off : 0, x->own_n > 0 ? own->len : 0},
                *first = a->gather_first;
        PMPI_Allgather(me, 3, MPI_INT64_T, first, 3, MPI_INT64_T, a->gcomm);
        int failed = -1;
        long long total = 0;
        for (int r = 0; r < a->gsize; r++) {
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
    tio_agg_spans_of(NULL, 0, a->gnode_of, a->span, a->gnnodes);
    for (int r = 0; r < a->gsize; r++) {
        if (all[3 * r] < 0 && failed < 0)
            failed = r;
        tio_agg_span_add(a->span, a->gnode_of[r], all[3 * r + 1], all[3 * r + 2]);
    }
    if (failed >= 0) { /* everywhere alike */
        fail_access(a, x, c->id, failed);
        return;
    }
    x->checking = 0;
    if (tio_agg_spans_apart(a->span, a->gnnodes, a->node_ndom, a->span + a->gnnodes))
        return;
    /* Nodes' data interleave: plans among all from now on (replan synchronises all:
     * every process is then past its calls in the node regime). */
    a->node_regime = 0;
    replan(a, x, all, c->id);
    exchange_all(a, c->id);
}

int tio_agg_settle(struct tio_agg *a, int all, struct tio_err *err)
{
    while (a->nchecks > 0 && (all || check_at(a, 0)->calls > 0))
        complete_oldest(a, err);
    return err->cls;
}

void tio_agg_note_call(struct tio_agg *a, int id, int writing, const struct tio_err *err)
{
    for (int i = 0; i < a->nchecks; i++)
        check_at(a, i)->calls++;
    if (err->cls != TIO_OK && a->late.cls == TIO_OK)
        a->late = *err;
    a->call_hash = (a->call_hash ^ (uint64_t)(2 * (int64_t)id + writing + 2)) *
                   0x100000001b3ull;
}

void tio_agg_checks_free(struct tio_agg *a)
{
    if (!a->checks)
        return;
    struct tio_err ignore = {0};
    tio_agg_settle(a, 1, &ignore);
    for (int i = 0; i < TIO_AGG_CHECKS; i++)
        free(a->checks[i].all);
    free(a->checks);
    a->checks = NULL;
}
