/* Declared accesses (seed 002 Algorithm 2): tio_agg_declare, tio_agg_write, tio_agg_read,
 * and tio_agg_get_info. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg/handle.h"
#include "tierio/net.h"
#include "util/error_mpi.h"
#include "util/agree.h"

/* What an access derives from its pieces. */
static void free_plan(struct tio_agg_access *x)
{
    tio_agg_plan_free(&x->plan);
    free(x->moves);
    free(x->cross);
    x->moves = NULL;
    x->cross = NULL;
}

void tio_agg_access_free(struct tio_agg_access *x)
{
    free_plan(x);
    if (x->gpieces != x->pieces)
        free(x->gpieces);
    free(x->pieces);
    memset(x, 0, sizeof *x);
}

int tio_agg_by_node_possible(const struct tio_agg *a)
{
    return a->placed && a->nodecomm != MPI_COMM_NULL && a->set.target == TIO_AGG_TARGET_FILE &&
           !a->set.balanced && a->align <= TIO_AGG_LOCAL_ALIGN_MAX;
}

int tio_agg_spans_apart_here(struct tio_agg *a)
{
    return tio_agg_by_node_possible(a) &&
           tio_agg_spans_apart(a->span, a->gnnodes, a->node_ndom, a->span + a->gnnodes);
}

int tio_agg_apart(struct tio_agg *a, const struct tio_agg_piece *pieces, size_t n)
{
    if (!tio_agg_by_node_possible(a))
        return 0;
    tio_agg_spans_of(pieces, n, a->gnode_of, a->span, a->gnnodes);
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
    /* Once the aggregators are known, domains may follow the data's nodes. */
    struct tio_agg_locality loc = {a->gnode_of, a->dom_node};
    int64_t buffer = (int64_t)a->set.buffer_size;
    int rc = by_node ? tio_agg_plan_by_node(&x->plan, x->gpieces, x->ngpieces, nd, buffer,
                                            a->align, &loc, a->gnnodes, err)
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
    while (first < x->ngpieces && x->gpieces[first].rank != a->grank)
        first++;
    while (first + k < x->ngpieces && x->gpieces[first + k].rank == a->grank)
        k++;
    for (size_t i = 0; i < k; i++)
        x->mine += x->gpieces[first + i].len;
    x->own_first = first;
    x->own_n = k;
    return tio_agg_plan_moves(&x->plan, x->gpieces + first, k, &x->moves, &x->nmoves, err);
}

/* Subfiles and node-local: the group's data goes to the group's data file, run by run
 * (the holes between them may be other groups' data), in the manifest and in the journal
 * the other groups will learn it from. */
int tio_agg_place_extents(struct tio_agg *a, const struct tio_agg_plan *p, struct tio_err *err)
{
    struct tio_agg_journal *j = &a->journal;
    int file = a->file_of_group[a->group];
    for (size_t r = 0; r < p->nruns && err->cls == TIO_OK; r++) {
        int64_t at, lo = p->runs[r].lo, hi = p->runs[r].hi;
        int was = a->manifest.dirty;
        a->manifest.dirty = 0;
        int rc = tio_agg_manifest_place(&a->manifest, lo, hi, file, &at, err);
        int changed = a->manifest.dirty;
        a->manifest.dirty |= was;
        if (rc)
            break;
        if (!changed) /* rewritten in place: nothing new to tell */
            continue;
        if (j->n == j->cap) {
            size_t cap = j->cap ? 2 * j->cap : 16;
            struct tio_agg_extent *e = realloc(j->ext, sizeof *e * cap);
            if (!e) {
                tio_err_set(err, TIO_E_NOMEM, "aggregation manifest: out of memory");
                break;
            }
            j->ext = e;
            j->cap = cap;
        }
        j->ext[j->n++] = (struct tio_agg_extent){lo, hi, file, at};
    }
    return err->cls;
}

/* Extents a process brings to the one-gather exchange; more take a second gather. */
#define XCH_FEW 8
#define XCH_BLOCK (1 + 4 * XCH_FEW)

static void pack(const struct tio_agg_extent *e, int64_t *out)
{
    out[0] = e->lo;
    out[1] = e->hi;
    out[2] = e->file;
    out[3] = e->at;
}

static int apply_all(struct tio_agg *a, const int64_t *v, long long n, struct tio_err *err)
{
    for (long long i = 0; i < n && err->cls == TIO_OK; i++) {
        struct tio_agg_extent e = {v[4 * i], v[4 * i + 1], (int)v[4 * i + 2], v[4 * i + 3]};
        tio_agg_manifest_apply(&a->manifest, &e, err);
    }
    return err->cls;
}

int tio_agg_exchange(struct tio_agg *a, struct tio_err *err)
{
    /* Each group's first process speaks for the group (all of its processes placed the
     * same extents). Usually one gather of a small fixed block per process does it. */
    if (!a->xch && !(a->xch = malloc(sizeof *a->xch * XCH_BLOCK * (size_t)a->size)))
        return tio_err_set(err, TIO_E_NOMEM, "aggregation manifest: out of memory");
    int64_t mine[XCH_BLOCK] = {0};
    size_t n = a->grank == 0 ? a->journal.n : 0;
    mine[0] = (int64_t)n;
    for (size_t i = 0; i < n && i < XCH_FEW; i++)
        pack(&a->journal.ext[i], mine + 1 + 4 * i);
    PMPI_Allgather(mine, XCH_BLOCK, MPI_INT64_T, a->xch, XCH_BLOCK, MPI_INT64_T, a->icomm);
    a->journal.n = 0;
    a->wrote = 0;
    long long total = 0;
    int many = 0;
    for (int r = 0; r < a->size; r++) {
        total += a->xch[r * XCH_BLOCK];
        many |= a->xch[r * XCH_BLOCK] > XCH_FEW;
    }
    /* In group order (ranks), so that every process builds the same manifest. */
    if (!many) {
        for (int r = 0; r < a->size && err->cls == TIO_OK; r++)
            apply_all(a, a->xch + r * XCH_BLOCK + 1, a->xch[r * XCH_BLOCK], err);
        return err->cls;
    }
    int *counts = a->gather_counts, *displs = a->gather_displs;
    for (int r = 0, at = 0; r < a->size; r++) {
        counts[r] = 4 * (int)a->xch[r * XCH_BLOCK];
        displs[r] = at;
        at += counts[r];
    }
    int64_t *all = malloc(sizeof *all * (size_t)(4 * total + 1));
    int64_t *my = malloc(sizeof *my * (4 * n + 1));
    if (!all || !my) {
        /* The gather cannot be made without memory: stop the job rather than hang it. */
        free(all);
        free(my);
        tio_err_set(err, TIO_E_NOMEM, "aggregation manifest: out of memory");
        PMPI_Abort(a->icomm, 1);
        return err->cls;
    }
    for (size_t i = 0; i < n; i++)
        pack(&a->journal.ext[i], my + 4 * i);
    PMPI_Allgatherv(my, (int)(4 * n), MPI_INT64_T, all, counts, displs, MPI_INT64_T, a->icomm);
    apply_all(a, all, total, err);
    free(all);
    free(my);
    return err->cls;
}

/* A subfile or node-local target is read by the groups that wrote it, each from its own
 * data file: every byte the group's processes ask for must be in an extent of the group's
 * file. Deterministic within the group (same manifest, same pieces), so its processes
 * agree; groups read independently. */
static int read_locality(struct tio_agg *a, const struct tio_agg_access *x,
                         struct tio_err *err)
{
    int file = a->file_of_group[a->group];
    for (size_t i = 0; i < x->ngpieces; i++) {
        const struct tio_agg_piece *p = &x->gpieces[i];
        int rank = a->gworld[p->rank];
        for (int64_t at = p->off, end = p->off + p->len; at < end;) {
            const struct tio_agg_extent *e = tio_agg_manifest_find(&a->manifest, at);
            if (!e)
                return tio_err_set(err, TIO_E_IO, "bytes from %lld of \"%s\" (read by rank "
                                   "%d) were never written (no extent of its manifest holds "
                                   "them)", (long long)at, a->path, rank);
            if (e->file != file)
                return tio_err_set(err, TIO_E_UNSUPPORTED, "bytes %lld..%lld of \"%s\" that "
                                   "rank %d reads are in data file %d, of another group of "
                                   "nodes than rank %d's (file %d): a %s target is read with "
                                   "the nodes and decomposition that wrote it",
                                   (long long)at, (long long)(e->hi < end ? e->hi : end),
                                   a->path, rank, e->file, rank, file,
                                   tio_agg_target_name(a->set.target));
            at = e->hi;
        }
    }
    return TIO_OK;
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

/* Whether the nodes' data of the gathered (count, first piece) of every process lie apart
 * (when no process has more than one piece). */
static int apart_of_first(struct tio_agg *a, const int64_t *first, int n)
{
    if (!tio_agg_by_node_possible(a))
        return 0;
    tio_agg_spans_of(NULL, 0, a->gnode_of, a->span, a->gnnodes);
    for (int r = 0; r < n; r++)
        if (first[3 * r] == 1)
            tio_agg_span_add(a->span, a->gnode_of[r], first[3 * r + 1],
                             first[3 * r + 1] + first[3 * r + 2]);
    return tio_agg_spans_apart_here(a);
}

/* An access without domains by node: from now on calls synchronise among all processes.
 * (Every process is past its previous calls, which touched only their nodes' slots: the
 * declaration gathered from all.) */
static void leave_node_regime(struct tio_agg *a, int by_node)
{
    if (!by_node && tio_agg_by_node_possible(a))
        a->node_regime = 0;
}

/* The checks every access call makes, locally: a failure here is carried by the first
 * round's synchronisation, which stops every process. */
static int enter(struct tio_agg *a, const char *call, int id, const void *buf, int writing,
                 struct tio_err *err)
{
    if (id < 0 || id >= a->naccess)
        tio_err_set(err, TIO_E_ARG, "%s: access %d was not declared (%d declared)", call, id,
                    a->naccess);
    else if (!buf && a->access[id].mine > 0)
        tio_err_set(err, TIO_E_ARG, "%s: buf is NULL for %lld bytes", call,
                    (long long)a->access[id].mine);
    else if (writing && a->oflags == O_RDONLY)
        tio_err_set(err, TIO_E_ACCESS, "%s: \"%s\" was opened read-only", call, a->path);
    else if (!writing && a->oflags == O_WRONLY)
        tio_err_set(err, TIO_E_ACCESS, "%s: \"%s\" was opened write-only", call, a->path);
    else if (a->access[id].failed.cls != TIO_OK)
        tio_err_set(err, a->access[id].failed.cls, "%s: %s", call, a->access[id].failed.msg);
    else if (writing && a->access[id].plan.overlap)
        tio_err_set(err, TIO_E_ARG, "%s: the pieces of access %d overlap (they may only be "
                    "read)", call, id);
    return err->cls;
}

int tio_agg_declare(tio_agg_t a, int count, const MPI_Offset offsets[],
                    const MPI_Offset sizes[], int *id)
{
    struct tio_err err = {0};
    if (!a) {
        tio_err_set(&err, TIO_E_ARG, "tio_agg_declare: agg is NULL");
        return tio_agg_raise(NULL, &err);
    }
    if (count < 0)
        tio_err_set(&err, TIO_E_ARG, "tio_agg_declare: count %d is negative", count);
    else if (count > 0 && (!offsets || !sizes))
        tio_err_set(&err, TIO_E_ARG, "tio_agg_declare: %s is NULL for %d pieces",
                    !offsets ? "offsets" : "sizes", count);
    else if (!id)
        tio_err_set(&err, TIO_E_ARG, "tio_agg_declare: id is NULL");
    for (int i = 0; i < count && err.cls == TIO_OK; i++)
        if (offsets[i] < 0 || sizes[i] < 0 || offsets[i] > INT64_MAX - sizes[i])
            tio_err_set(&err, TIO_E_ARG, "tio_agg_declare: piece %d (offset %lld, size %lld) "
                        "is not a range of a file", i, (long long)offsets[i],
                        (long long)sizes[i]);
    /* The checks of earlier declarations that have seen a call (the same everywhere). */
    tio_agg_settle(a, 0, &err);
    /* While every access keeps each node's bytes on it, a declaration is the node's
     * business, checked among all in the background (declare_node.c, check.c). */
    if (tio_agg_node_declarations(a)) {
        if (tio_agg_declare_node(a, count, offsets, sizes, id, &err))
            return tio_agg_raise(a, &err);
        return MPI_SUCCESS;
    }
    /* Everybody's pieces, in rank order. One gather of (count, first piece) per process
     * says whether some process's arguments are wrong (count -1) and is all there is to
     * know when no process has more than one piece; otherwise all the pieces follow. */
    int64_t *first = a->gather_first, me[3] = {err.cls == TIO_OK ? count : -1,
                                                count > 0 && offsets ? offsets[0] : 0,
                                                count > 0 && sizes ? sizes[0] : 0};
    /* Subfiles and node-local storage: a group needs only its own processes' pieces. */
    MPI_Comm dcomm = a->gcomm;
    int dsize = a->gsize;
    PMPI_Allgather(me, 3, MPI_INT64_T, first, 3, MPI_INT64_T, dcomm);
    long long total = 0;
    int bad = 0, many = 0;
    for (int r = 0; r < dsize; r++) {
        bad |= first[3 * r] < 0;
        many |= first[3 * r] > 1;
        total += first[3 * r] > 0 ? first[3 * r] : 0;
    }
    if (bad) {
        tio_agree(dcomm, &err, NULL, 0);
        return tio_agg_raise(a, &err);
    }
    if (total > INT32_MAX / 2) { /* the same everywhere */
        tio_err_set(&err, TIO_E_UNSUPPORTED, "tio_agg_declare: %lld pieces in all; at most "
                    "%d", total, INT32_MAX / 2);
        return tio_agg_raise(a, &err);
    }
    struct tio_agg_piece *pieces;
    size_t n;
    if (tio_agg_gather_pieces(dcomm, dsize, first, total, count, offsets, sizes, NULL,
                              &pieces, &n, a, &err))
        return tio_agg_raise(a, &err); /* agreed */

    tio_agg_access_room(a, &err);
    /* Domains by node when the nodes' data lie apart, and while every access has them
     * the calls synchronise within nodes (engine.c); an access without them ends that
     * (decided alike everywhere: from what was gathered, nothing allocated). */
    int by_node = a->node_regime && (many ? tio_agg_apart(a, pieces, n)
                                          : apart_of_first(a, first, dsize));
    leave_node_regime(a, by_node);
    struct tio_agg_access x;
    memset(&x, 0, sizeof x);
    if (err.cls == TIO_OK)
        tio_agg_access_make(a, &x, pieces, n, by_node, &err);
    else
        free(pieces);
    /* Once the aggregators are placed, a failure here (out of memory) is this process's
     * alone, and costs no agreement: the ids then differ, and the access's first use
     * stops every process at its first round, which checks that they all work on the
     * same access. The first declaration of tapioca agrees, and places. */
    int placing = !a->placed;
    if ((!a->placed && (tio_agree(dcomm, &err, NULL, 0) || tio_agg_place(a, &x, &err))) ||
        err.cls != TIO_OK) {
        tio_agg_access_free(&x);
        return tio_agg_raise(a, &err);
    }
    /* Placed by this access (tapioca): its domains may now follow the data. The same
     * everywhere; a failure (out of memory) is this process's alone, as above. */
    if (placing && !a->set.balanced) {
        free_plan(&x);
        by_node = a->node_regime && tio_agg_apart(a, pieces, n);
        leave_node_regime(a, by_node);
        if (tio_agg_access_make(a, &x, pieces, n, by_node, &err) != TIO_OK) {
            tio_agg_access_free(&x);
            return tio_agg_raise(a, &err);
        }
    }
    /* Reads of pieces that do not interleave: every process reads its own (decided here,
     * once, alike everywhere: the same pieces, the settings agreed at open). */
    x.read_own = a->set.target == TIO_AGG_TARGET_FILE && !a->set.read_aggregate &&
                 tio_agg_pieces_disjoint(x.gpieces, x.ngpieces);
    a->access[a->naccess] = x;
    *id = a->naccess++;
    return MPI_SUCCESS;
}

/* What a process whose call is wrong works on: nothing, for one round. */
static struct tio_agg_access nothing;

int tio_agg_write(tio_agg_t a, int id, const void *buf)
{
    struct tio_err err = {0};
    if (!a) {
        tio_err_set(&err, TIO_E_ARG, "tio_agg_write: agg is NULL");
        return tio_agg_raise(NULL, &err);
    }
    tio_agg_settle(a, 0, &err); /* (an error here is the call's: it runs on nothing) */
    struct tio_agg_access *x = enter(a, "tio_agg_write", id, buf, 1, &err) ? &nothing
                                                                            : &a->access[id];
    if (a->set.target != TIO_AGG_TARGET_FILE)
        a->wrote = 1; /* every process: the call is collective */
    int rc = tio_agg_run_write(a, x, id, buf, &err);
    tio_agg_note_call(a, id, 1, &err);
    if (rc)
        return tio_agg_raise(a, &err);
    a->calls++;
    return MPI_SUCCESS;
}

int tio_agg_read(tio_agg_t a, int id, void *buf)
{
    struct tio_err err = {0};
    if (!a) {
        tio_err_set(&err, TIO_E_ARG, "tio_agg_read: agg is NULL");
        return tio_agg_raise(NULL, &err);
    }
    tio_agg_settle(a, 0, &err);
    struct tio_agg_access *x = enter(a, "tio_agg_read", id, buf, 0, &err) ? &nothing
                                                                           : &a->access[id];
    /* Subfiles, node-local: each group reads its own file (what other groups wrote is
     * known after tio_agg_sync; their data is not read here anyway). */
    if (x != &nothing && a->set.target != TIO_AGG_TARGET_FILE && read_locality(a, x, &err))
        x = &nothing;
    /* An access declared within the node, not used yet: its pieces first (the call's first
     * synchronisation), which say whether each process reads its own. */
    int met = 0;
    if (x != &nothing && !x->exchanged && tio_agg_node_level(a)) {
        if (tio_agg_node_meet(a, x, id, 0, NULL, &err)) {
            tio_agg_note_call(a, id, 0, &err);
            return tio_agg_raise(a, &err);
        }
        met = 1;
    }
    if (x->read_own) {
        int rc = tio_agg_run_read_own(a, x, id, buf, met, &err);
        tio_agg_note_call(a, id, 0, &err);
        if (rc)
            return tio_agg_raise(a, &err);
        a->independent++;
        return MPI_SUCCESS;
    }
    int rc = tio_agg_run_read(a, x, id, buf, met, &err);
    tio_agg_note_call(a, id, 0, &err);
    if (rc)
        return tio_agg_raise(a, &err);
    a->calls++;
    return MPI_SUCCESS;
}

/* A comma-separated list into info under key. */
static void set_list(MPI_Info info, const char *key, const struct tio_agg *a, int ranks)
{
    size_t cap = (size_t)a->place.ndomains * (TIO_TIER_NAME_MAX + 2) + 16, used = 0;
    char *s = malloc(cap);
    if (!s)
        return;
    s[0] = 0;
    for (int d = 0; d < a->place.ndomains; d++) {
        int n = ranks ? snprintf(s + used, cap - used, "%s%d", d ? "," : "",
                                 a->gworld[a->place.rank[d]])
                      : snprintf(s + used, cap - used, "%s%s", d ? "," : "", a->place.tier[d]);
        if (n > 0 && (size_t)n < cap - used)
            used += (size_t)n;
    }
    PMPI_Info_set(info, key, s);
    free(s);
}

int tio_agg_get_info(tio_agg_t a, MPI_Info *info_used)
{
    struct tio_err err = {0};
    if (!a || !info_used) {
        tio_err_set(&err, TIO_E_ARG, "tio_agg_get_info: %s is NULL", !a ? "agg" : "info_used");
        return tio_agg_raise(a, &err);
    }
    PMPI_Info_create(info_used);
    tio_agg_info_fill(a, *info_used);
    return MPI_SUCCESS;
}

void tio_agg_info_fill(const struct tio_agg *a, MPI_Info info)
{
    char v[64];
    /* The settings in effect, from the key table: what the strategy and the file system
     * decided where the user left it to them. */
    struct tio_agg_settings shown = a->set;
    snprintf(shown.strategy, sizeof shown.strategy, "%s", a->strategy->name);
    shown.aggregators = a->placed ? a->place.ndomains : a->strategy->domains(a);
    shown.align = (uint64_t)a->align;
    tio_agg_settings_report(&shown, info);
    if (a->set.target == TIO_AGG_TARGET_NODE_LOCAL)
        PMPI_Info_set(info, "tierio_agg_node_local_dir", a->data_dir);
    if (a->placed) {
        set_list(info, "tierio_agg_aggregator_ranks", a, 1);
        set_list(info, "tierio_agg_aggregator_tiers", a, 0);
    }
    snprintf(v, sizeof v, "%ld", a->calls);
    PMPI_Info_set(info, "tierio_agg_collective_calls", v);
    snprintf(v, sizeof v, "%ld", a->passed);
    PMPI_Info_set(info, "tierio_agg_passed_calls", v);
    snprintf(v, sizeof v, "%ld", a->independent);
    PMPI_Info_set(info, "tierio_agg_independent_reads", v);
    snprintf(v, sizeof v, "%ld", a->independent_writes);
    PMPI_Info_set(info, "tierio_agg_independent_writes", v);
    if (a->naccess > 0) { /* the last declared access: how its domains were cut, and how
                             many of its rounds move bytes between nodes */
        const struct tio_agg_access *x = &a->access[a->naccess - 1];
        int cross = 0;
        for (int r = 0; r < x->plan.nrounds; r++)
            cross += !x->cross || x->cross[r];
        snprintf(v, sizeof v, "%d", x->plan.followed);
        PMPI_Info_set(info, "tierio_agg_boundaries_moved", v);
        snprintf(v, sizeof v, "%d", cross);
        PMPI_Info_set(info, "tierio_agg_cross_node_rounds", v);
        PMPI_Info_set(info, "tierio_agg_domains_by_node", x->by_node ? "true" : "false");
        PMPI_Info_set(info, "tierio_agg_declared_within",
                      x->checking ? "node (checked at the second call after)" : "all");
    }
    PMPI_Info_set(info, "tierio_agg_sync_scope", tio_agg_node_level(a) ? "node" : "all");
}
