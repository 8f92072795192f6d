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
#include "util/settings.h"

/* A subfile or node-local target is read by the groups that wrote it, each from its own
 * data file: every byte the group's processes ask for must be in an extent of the group's
 * file. Deterministic within the group (same manifest, same pieces), so its processes
 * agree; groups read independently. */
static int read_locality(struct tio_agg *a, const struct tio_agg_access *x,
                         struct tio_err *err)
{
    int file = a->grp.file_of_group[a->grp.group];
    for (size_t i = 0; i < x->ngpieces; i++) {
        const struct tio_agg_piece *p = &x->gpieces[i];
        int rank = a->grp.gworld[p->rank];
        for (int64_t at = p->off, end = p->off + p->len; at < end;) {
            const struct tio_agg_extent *e = tio_agg_manifest_find(&a->tgt.manifest, at);
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

/* Whether the nodes' data of the gathered (count, first piece) of every process lie apart
 * (when no process has more than one piece). */
static int apart_of_first(struct tio_agg *a, const int64_t *first, int n)
{
    if (!tio_agg_by_node_possible(a))
        return 0;
    tio_agg_spans_of(NULL, 0, a->grp.gnode_of, a->nr.span, a->grp.gnnodes);
    for (int r = 0; r < n; r++)
        if (first[3 * r] == 1)
            tio_agg_span_add(a->nr.span, a->grp.gnode_of[r], first[3 * r + 1],
                             first[3 * r + 1] + first[3 * r + 2]);
    return tio_agg_spans_apart_here(a);
}

/* An access without domains by node: from now on calls synchronise among all processes.
 * (Every process is past its previous calls, which touched only their nodes' slots: the
 * declaration gathered from all.) */
static void leave_node_regime(struct tio_agg *a, int by_node)
{
    if (!by_node && tio_agg_by_node_possible(a))
        a->nr.node_regime = 0;
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

/* The arguments of one declaration, checked locally (a failure travels with the gather). */
static void check_declaration(int count, const MPI_Offset offsets[], const MPI_Offset sizes[],
                              const int *id, struct tio_err *err)
{
    if (count < 0)
        tio_err_set(err, TIO_E_ARG, "tio_agg_declare: count %d is negative", count);
    else if (count > 0 && (!offsets || !sizes))
        tio_err_set(err, TIO_E_ARG, "tio_agg_declare: %s is NULL for %d pieces",
                    !offsets ? "offsets" : "sizes", count);
    else if (!id)
        tio_err_set(err, TIO_E_ARG, "tio_agg_declare: id is NULL");
    for (int i = 0; i < count && err->cls == TIO_OK; i++)
        if (offsets[i] < 0 || sizes[i] < 0 || offsets[i] > INT64_MAX - sizes[i])
            tio_err_set(err, TIO_E_ARG, "tio_agg_declare: piece %d (offset %lld, size %lld) "
                        "is not a range of a file", i, (long long)offsets[i],
                        (long long)sizes[i]);
}

/* Everybody's pieces, in rank order, into *pieces (n of them); *many: some process has more
 * than one. One gather of (count, first piece) per process says whether some process's
 * arguments are wrong (count -1) and is all there is to know when no process has more than
 * one piece; otherwise all the pieces follow. Subfiles and node-local storage: a group
 * needs only its own processes' pieces. Returns nonzero on an error (agreed). */
static int gather_declaration(struct tio_agg *a, int count, const MPI_Offset offsets[],
                              const MPI_Offset sizes[], struct tio_agg_piece **pieces,
                              size_t *n, int *many, struct tio_err *err)
{
    int64_t *first = a->gather_first, me[3] = {err->cls == TIO_OK ? count : -1,
                                                count > 0 && offsets ? offsets[0] : 0,
                                                count > 0 && sizes ? sizes[0] : 0};
    PMPI_Allgather(me, 3, MPI_INT64_T, first, 3, MPI_INT64_T, a->grp.gcomm);
    long long total = 0;
    int bad = 0;
    *many = 0;
    for (int r = 0; r < a->grp.gsize; r++) {
        bad |= first[3 * r] < 0;
        *many |= first[3 * r] > 1;
        total += first[3 * r] > 0 ? first[3 * r] : 0;
    }
    if (bad)
        return tio_agree(a->grp.gcomm, err, NULL, 0);
    if (total > INT32_MAX / 2) /* the same everywhere */
        return tio_err_set(err, TIO_E_UNSUPPORTED, "tio_agg_declare: %lld pieces in all; "
                           "at most %d", total, INT32_MAX / 2);
    return tio_agg_gather_pieces(a->grp.gcomm, a->grp.gsize, first, total, count, offsets, sizes,
                                 NULL, pieces, n, a, err);
}

/* Declarations among all: domains by node when the nodes' data lie apart, and while
 * every access has them the calls synchronise within nodes (engine.c); an access without
 * them ends that (decided alike everywhere: from what was gathered, nothing allocated). */
struct declared {
    int many; /* some process declared more than one piece */
};

static int declared_by_node(struct tio_agg *a, const struct tio_agg_piece *pieces, size_t n,
                            void *ctx)
{
    const struct declared *d = ctx;
    int by_node = a->nr.node_regime && (d->many ? tio_agg_apart(a, pieces, n)
                                             : apart_of_first(a, a->gather_first, a->grp.gsize));
    leave_node_regime(a, by_node);
    return by_node;
}

/* The access of the gathered pieces (taken over) in *x, placing the aggregators if this is
 * the first declaration of a strategy that needs one. Returns nonzero on an error, x freed. */
static int make_declared(struct tio_agg *a, struct tio_agg_piece *pieces, size_t n, int many,
                         struct tio_agg_access *x, struct tio_err *err)
{
    struct declared d = {many};
    tio_agg_access_room(a, err);
    return tio_agg_plan_access(a, x, pieces, n, declared_by_node, &d, err);
}

int tio_agg_declare(tio_agg_t a, int count, const MPI_Offset offsets[],
                    const MPI_Offset sizes[], int *id)
{
    struct tio_err err = {0};
    if (!a) {
        tio_err_set(&err, TIO_E_ARG, "tio_agg_declare: agg is NULL");
        return tio_agg_raise(NULL, &err);
    }
    check_declaration(count, offsets, sizes, id, &err);
    /* The checks of earlier declarations that have seen a call (the same everywhere). */
    tio_agg_settle(a, 0, &err);
    /* While every access keeps each node's bytes on it, a declaration is the node's
     * business, checked among all in the background (declare_node.c, check.c). */
    if (tio_agg_node_declarations(a)) {
        if (tio_agg_declare_node(a, count, offsets, sizes, id, &err))
            return tio_agg_raise(a, &err);
        return MPI_SUCCESS;
    }
    struct tio_agg_piece *pieces = NULL;
    size_t n = 0;
    int many = 0;
    struct tio_agg_access x;
    if (gather_declaration(a, count, offsets, sizes, &pieces, &n, &many, &err) ||
        make_declared(a, pieces, n, many, &x, &err))
        return tio_agg_raise(a, &err);
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
        a->tgt.wrote = 1; /* every process: the call is collective */
    int rc = tio_agg_run_write(a, x, id, buf, &err);
    tio_agg_note_call(a, id, 1, &err);
    if (rc)
        return tio_agg_raise(a, &err);
    a->stats.calls++;
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
        a->stats.independent++;
        return MPI_SUCCESS;
    }
    int rc = tio_agg_run_read(a, x, id, buf, met, &err);
    tio_agg_note_call(a, id, 0, &err);
    if (rc)
        return tio_agg_raise(a, &err);
    a->stats.calls++;
    return MPI_SUCCESS;
}

void tio_agg_info_list(MPI_Info info, const char *key, int count, tio_agg_item_fn item,
                       const struct tio_agg *a)
{
    char v[MPI_MAX_INFO_VAL];
    size_t used = 0;
    v[0] = 0;
    for (int i = 0; i < count; i++) {
        char one[96];
        int len = item(a, i, one, sizeof one);
        if (used + (size_t)len + 5 >= sizeof v) {
            snprintf(v + used, sizeof v - used, "%s...", i ? "," : "");
            break;
        }
        used += (size_t)snprintf(v + used, sizeof v - used, "%s%s", i ? "," : "", one);
    }
    PMPI_Info_set(info, key, v);
}

static int rank_item(const struct tio_agg *a, int d, char *s, size_t len)
{
    return snprintf(s, len, "%d", a->grp.gworld[a->place.rank[d]]);
}

static int tier_item(const struct tio_agg *a, int d, char *s, size_t len)
{
    return snprintf(s, len, "%s", a->place.tier[d]);
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

/* The keys below are reported, not settings: given back to an open, they are not
 * misspellings (util/settings_unknown.c). */
static const char *const reported_keys[] = {
    "tierio_agg_node_local_dir", "tierio_agg_aggregator_ranks", "tierio_agg_aggregator_tiers",
    "tierio_agg_collective_calls", "tierio_agg_passed_calls", "tierio_agg_independent_reads",
    "tierio_agg_independent_writes", "tierio_agg_boundaries_moved",
    "tierio_agg_cross_node_rounds", "tierio_agg_domains_by_node", "tierio_agg_declared_within",
    "tierio_agg_sync_scope", NULL};
__attribute__((constructor)) static void register_reported(void)
{
    tio_settings_register_reported(reported_keys);
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
        PMPI_Info_set(info, "tierio_agg_node_local_dir", a->tgt.data_dir);
    if (a->placed) {
        tio_agg_info_list(info, "tierio_agg_aggregator_ranks", a->place.ndomains, rank_item, a);
        tio_agg_info_list(info, "tierio_agg_aggregator_tiers", a->place.ndomains, tier_item, a);
    }
    snprintf(v, sizeof v, "%ld", a->stats.calls);
    PMPI_Info_set(info, "tierio_agg_collective_calls", v);
    snprintf(v, sizeof v, "%ld", a->stats.passed);
    PMPI_Info_set(info, "tierio_agg_passed_calls", v);
    snprintf(v, sizeof v, "%ld", a->stats.independent);
    PMPI_Info_set(info, "tierio_agg_independent_reads", v);
    snprintf(v, sizeof v, "%ld", a->stats.independent_writes);
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
    if (a->strategy->report)
        a->strategy->report(a, info);
}
