/* The MPI-IO route (include/tierio/agg.h): MPI_File_open gives a file an aggregation
 * handle when asked (info tierio_agg=enable, or TIERIO_AGG=1); its collective calls on
 * contiguous memory go through the engine, whatever the file view (a view whose filetype
 * is not contiguous becomes byte ranges: flatten.c), everything else to the MPI library.
 * The decision is collective: every call starts with one allgather of each process's
 * (offset, size, eligible, count of ranges), so all processes take the same path; the
 * ranges of views that have several follow in an allgatherv. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agg/flatten.h"
#include "agg/handle.h"
#include "util/error_mpi.h"
#include "util/log.h"
#include "util/agree.h"

/* Routed files: a small table (files are few) under a lock, for MPI_THREAD_MULTIPLE. */
struct route {
    MPI_File fh;
    struct tio_agg *agg;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct route *routes;
static int nroutes, cap_routes;

static struct tio_agg *find(MPI_File fh)
{
    struct tio_agg *a = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nroutes && !a; i++)
        if (routes[i].fh == fh)
            a = routes[i].agg;
    pthread_mutex_unlock(&lock);
    return a;
}

static int add(MPI_File fh, struct tio_agg *a)
{
    int ok = 1;
    pthread_mutex_lock(&lock);
    if (nroutes == cap_routes) {
        int cap = cap_routes ? 2 * cap_routes : 8;
        struct route *r = realloc(routes, sizeof *r * (size_t)cap);
        if (r)
            routes = r, cap_routes = cap;
        else
            ok = 0;
    }
    if (ok)
        routes[nroutes++] = (struct route){fh, a};
    pthread_mutex_unlock(&lock);
    return ok;
}

static struct tio_agg *take(MPI_File fh)
{
    struct tio_agg *a = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nroutes && !a; i++)
        if (routes[i].fh == fh) {
            a = routes[i].agg;
            routes[i] = routes[--nroutes];
        }
    pthread_mutex_unlock(&lock);
    return a;
}

/* What one process brings to a call. */
struct ask {
    int64_t off, len; /* its first file range (the only one of a contiguous view) */
    int64_t ok;       /* this process can go through the engine */
    int64_t fsize;    /* rank 0, reads: the file's size */
    int64_t count;    /* its file ranges */
};
#define ASK_WORDS 5

/* The most file ranges one process's call may have to go through the engine (its
 * filetype's blocks, and the ranges of the access): beyond, MPI does it. */
#define RANGES_MAX ((size_t)1 << 20)

/* What the route keeps for one file between calls (the handle holds it, opaque): per call,
 * what every process asks and the pieces; and the last access made, reused while the
 * pieces stay the same. */
struct tio_agg_route {
    struct ask *asks;
    struct tio_agg_piece *pieces;
    struct tio_agg_access scratch;    /* the last access */
    int have_scratch;
    struct tio_agg_piece *key;        /* the pieces it was made from */
    size_t n, key_cap;
    int by_node;                      /* ... with domains by node (decided before making) */
    int reading;                      /* ... for a read (strategies that plan by direction) */
    int told;                         /* why a call was not routed has been logged */
};

static void route_free(struct tio_agg_route *s)
{
    if (!s)
        return;
    if (s->have_scratch)
        tio_agg_access_free(&s->scratch);
    free(s->key);
    free(s->asks);
    free(s->pieces);
    free(s);
}

static int raise_file(MPI_File fh, const struct tio_err *err)
{
    int code = tio_err_mpi_code(err);
    PMPI_File_call_errhandler(fh, code);
    return code;
}

int tio_file_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                  MPI_File *fh)
{
    struct tio_err err = {0};
    int size, rank, on = 0, existed = 1;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    tio_agg_enabled_by(info, &on, &err);
    /* A file MPI creates for a handle we then fail to make is removed again. */
    struct stat st;
    if ((amode & MPI_MODE_CREATE) && rank == 0 && filename)
        existed = stat(filename, &st) == 0;
    int rc = PMPI_File_open(comm, filename, amode, info, fh);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Every process must ask alike; one process alone gains nothing from aggregation. */
    int v[2] = {on, -on};
    if (tio_agree(comm, &err, v, 2) == TIO_OK && v[0] != -v[1])
        tio_err_set(&err, TIO_E_INFO_VALUE, "%s: aggregation is enabled on some processes "
                    "only (info %s or TIERIO_AGG)", filename, TIO_AGG_HINT_ENABLE);
    if (err.cls == TIO_OK && (!v[0] || size == 1))
        return MPI_SUCCESS;
    if (err.cls == TIO_OK && (amode & MPI_MODE_SEQUENTIAL)) {
        TIO_INFO("%s: MPI_MODE_SEQUENTIAL: not routed through the aggregation engine",
                 filename);
        return MPI_SUCCESS;
    }
    struct tio_agg_settings set; /* the info is read once, here, for the whole open */
    tio_agg_settings_default(&set);
    if (err.cls == TIO_OK && tio_agg_settings_from(&set, info, &err) == TIO_OK &&
        set.target != TIO_AGG_TARGET_FILE)
        tio_err_set(&err, TIO_E_INFO_VALUE, "hint %s=\"%s\" is invalid: MPI_File_open routes "
                    "to the one file it opens; subfiles and node-local targets are for "
                    "tio_agg_open", TIO_AGG_HINT_TARGET, tio_agg_target_name(set.target));
    struct tio_agg *a = NULL;
    if (tio_agree(comm, &err, NULL, 0) == TIO_OK) {
        /* The file exists now (MPI made it): the engine opens it as it is. */
        int access = amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
        tio_agg_open_err(comm, filename, access, &set, &a, &err);
    }
    if (err.cls == TIO_OK) /* freed with the handle, whatever follows */
        a->route = calloc(1, sizeof *a->route), a->route_free = route_free;
    if (err.cls == TIO_OK &&
        (!a->route || !(a->route->asks = malloc(sizeof(struct ask) * (size_t)size)) ||
         !(a->route->pieces = malloc(sizeof *a->route->pieces * (size_t)size)) ||
         !(a->route->key = malloc(sizeof *a->route->key * (size_t)size)) || !add(*fh, a)))
        tio_err_set(&err, TIO_E_NOMEM, "%s: out of memory", filename);
    else if (err.cls == TIO_OK)
        a->route->key_cap = (size_t)size;
    if (tio_agree(comm, &err, NULL, 0) != TIO_OK) {
        if (a && find(*fh) == a)
            take(*fh);
        if (a) {
            struct tio_err ignore = {0};
            tio_agg_close_err(a, &ignore);
        }
        PMPI_File_close(fh);
        if (!existed)
            unlink(filename);
        return raise_file(MPI_FILE_NULL, &err);
    }
    return MPI_SUCCESS;
}

int tio_file_close(MPI_File *fh)
{
    struct tio_agg *a = fh ? take(*fh) : NULL;
    if (!a)
        return PMPI_File_close(fh);
    struct tio_err err = {0};
    int code = MPI_SUCCESS;
    if (a->rank == 0) /* what went where, for TIERIO_LOG=info */
        TIO_INFO("%s: %ld collective calls through tierio, %ld made independent (%ld reads, "
                 "%ld writes), %ld to the MPI library", a->path, a->stats.calls,
                 a->stats.independent + a->stats.independent_writes, a->stats.independent,
                 a->stats.independent_writes, a->stats.passed);
    if (tio_agg_close_err(a, &err))
        code = raise_file(*fh, &err);
    int rc = PMPI_File_close(fh);
    return code != MPI_SUCCESS ? code : rc;
}

int tio_file_sync(MPI_File fh)
{
    struct tio_agg *a = find(fh);
    if (!a)
        return PMPI_File_sync(fh);
    struct tio_err err = {0};
    if (tio_agg_do_sync(a, &err))
        return raise_file(fh, &err);
    return PMPI_File_sync(fh);
}

int tio_file_get_info(MPI_File fh, MPI_Info *info_used)
{
    int rc = PMPI_File_get_info(fh, info_used);
    struct tio_agg *a = find(fh);
    if (rc != MPI_SUCCESS || !a)
        return rc;
    /* MPI's answer, and tierio's keys over it: the settings in effect from the key table
     * and the handle's statistics. */
    tio_agg_info_fill(a, *info_used);
    PMPI_Info_set(*info_used, TIO_AGG_HINT_ENABLE, "enable");
    return rc;
}

/* ---- the collective calls ---------------------------------------------------------- */

/* A datatype whose count elements are one block of bytes. */
static int contiguous(MPI_Datatype t, int count, MPI_Count *bytes)
{
    int size;
    MPI_Aint lb, ext, tlb, text;
    if (PMPI_Type_size(t, &size) != MPI_SUCCESS || PMPI_Type_get_extent(t, &lb, &ext) ||
        PMPI_Type_get_true_extent(t, &tlb, &text))
        return 0;
    *bytes = (MPI_Count)size * count;
    if (count == 0 || size == 0)
        return 1;
    return lb == 0 && tlb == 0 && ext == size && text == size;
}

static void free_type(MPI_Datatype *t)
{
    int ni, na, nd, combiner;
    if (PMPI_Type_get_envelope(*t, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
        combiner != MPI_COMBINER_NAMED)
        PMPI_Type_free(t);
}

/* The file ranges of an access of `bytes` bytes at data byte `first` of a view whose
 * filetype is not contiguous: 1 and the ranges (*roff, *rlen malloc'ed), or 0 when MPI must
 * do it. */
static int view_ranges(MPI_Datatype ftype, MPI_Offset disp, int64_t first, int64_t bytes,
                       MPI_Offset **roff, MPI_Offset **rlen, size_t *n)
{
    struct tio_agg_flat f;
    if (tio_agg_flatten(ftype, RANGES_MAX, &f))
        return 0;
    int rc = tio_agg_flat_ranges(&f, disp, first, bytes, RANGES_MAX, roff, rlen, n);
    tio_agg_flat_free(&f);
    return rc == 0;
}

/* Can this call go through the engine here; its byte offset and size if so (a view
 * with several ranges: *roff, *rlen, me->count of them, malloc'ed). */
static int eligible(MPI_File fh, int writing, int explicit_offset, MPI_Offset offset,
                    int count, MPI_Datatype type, struct ask *me, MPI_Offset *pos,
                    MPI_Offset *esize, MPI_Offset **roff, MPI_Offset **rlen, const char **why)
{
    MPI_Count bytes;
    if (count < 0 || !contiguous(type, count, &bytes))
        return *why = "the memory datatype is not contiguous", 0;
    int atomic = 1, amode = 0;
    PMPI_File_get_atomicity(fh, &atomic);
    PMPI_File_get_amode(fh, &amode);
    if (atomic)
        return *why = "atomic mode", 0;
    if ((writing && (amode & MPI_MODE_RDONLY)) || (!writing && (amode & MPI_MODE_WRONLY)))
        return *why = "the access mode forbids it (MPI reports the error)", 0;
    MPI_Offset disp;
    MPI_Datatype etype, ftype;
    char rep[MPI_MAX_DATAREP_STRING + 1];
    if (PMPI_File_get_view(fh, &disp, &etype, &ftype, rep) != MPI_SUCCESS)
        return *why = "MPI_File_get_view failed", 0;
    MPI_Count fbytes = 0, ebytes = 0;
    int ok = !strcmp(rep, "native") && contiguous(etype, 1, &ebytes) && ebytes > 0 &&
             bytes % ebytes == 0;
    if (!ok)
        *why = "the view's data representation is not native, or its etype is not "
               "contiguous bytes";
    int flat = ok && !contiguous(ftype, 1, &fbytes);
    if (ok && !explicit_offset && PMPI_File_get_position(fh, &offset) != MPI_SUCCESS)
        ok = 0, *why = "MPI_File_get_position failed";
    *esize = (MPI_Offset)ebytes;
    *pos = offset;
    size_t n = 1;
    if (ok && flat) { /* offset counts etypes of the view's data */
        ok = offset >= 0 && view_ranges(ftype, disp, (int64_t)offset * (int64_t)ebytes,
                                        (int64_t)bytes, roff, rlen, &n);
        if (!ok)
            *why = "a filetype the engine cannot map (darray, Fortran types, displacements "
                   "not increasing, or over a million ranges)";
        if (ok && n > 0) {
            me->off = (*roff)[0];
            me->len = (*rlen)[0];
        }
    } else if (ok) {
        MPI_Offset boff = 0;
        ok = offset >= 0 && PMPI_File_get_byte_offset(fh, offset, &boff) == MPI_SUCCESS;
        if (!ok)
            *why = "a negative offset";
        me->off = boff;
        me->len = (int64_t)bytes;
    }
    me->count = flat ? (int64_t)n : 1;
    free_type(&etype);
    free_type(&ftype);
    return ok;
}

static struct tio_agg_access route_nothing;

/* Same pieces as the route's last access: reuse its plan. */
static int same_key(const struct tio_agg_route *s, const struct tio_agg_piece *p, size_t n)
{
    if (!s->have_scratch || s->n != n)
        return 0;
    for (size_t i = 0; i < n; i++) /* field by field: the struct has padding */
        if (s->key[i].off != p[i].off || s->key[i].len != p[i].len ||
            s->key[i].rank != p[i].rank)
            return 0;
    return 1;
}

static int route_pieces(struct tio_agg *a, struct tio_agg_route *s, MPI_File fh, int writing,
                        int explicit_offset, struct tio_agg_piece *p, size_t n, int64_t fsize,
                        MPI_Offset pos, MPI_Offset esize, void *buf, int count,
                        MPI_Datatype type, MPI_Status *status, int *rc, struct tio_err *errp);

/* Through the engine (1), to the MPI library (0), as an independent access (2: requests
 * that do not interleave, with tierio_agg_read / tierio_agg_write = auto), or an error
 * (-1, raised). */
/* The route decides the node regime call by call (it gathers every request anyway):
 * domains by node when the nodes' data lie apart (alike everywhere: nothing allocated);
 * such a call synchronises within nodes (engine.c). ctx: where the route keeps it. */
static int route_by_node(struct tio_agg *a, const struct tio_agg_piece *pieces, size_t n,
                         void *ctx)
{
    return *(int *)ctx = tio_agg_apart(a, pieces, n);
}

static int route(struct tio_agg *a, MPI_File fh, int writing, int explicit_offset,
                 MPI_Offset offset, void *buf, int count, MPI_Datatype type,
                 MPI_Status *status, int *rc)
{
    struct tio_agg_route *s = a->route;
    struct ask me = {0, 0, 0, -1, 0}, *all = s->asks;
    MPI_Offset pos = 0, esize = 1, *roff = NULL, *rlen = NULL;
    const char *why = "";
    me.ok = eligible(fh, writing, explicit_offset, offset, count, type, &me, &pos, &esize,
                     &roff, &rlen, &why);
    /* Why a call goes to the MPI library, once per handle (TIERIO_LOG=info): "my calls are
     * not routed" is otherwise a guess. */
    if (!me.ok && !s->told) {
        s->told = 1;
        TIO_INFO("%s: a collective %s goes to the MPI library: %s (further such calls are "
                 "not reported)", a->path, writing ? "write" : "read", why);
    }
    if (me.ok && !writing && a->rank == 0) {
        struct stat st;
        me.fsize = stat(a->path, &st) == 0 ? (int64_t)st.st_size : -1;
    }
    if (PMPI_Allgather(&me, ASK_WORDS, MPI_INT64_T, all, ASK_WORDS, MPI_INT64_T, a->icomm) !=
        MPI_SUCCESS) {
        free(roff);
        free(rlen);
        return 0; /* MPI's own call then decides, the same way everywhere */
    }
    int many = 0;
    long long total = 0;
    for (int r = 0; r < a->size; r++) {
        if (!all[r].ok) {
            free(roff);
            free(rlen);
            return 0;
        }
        many |= all[r].count > 1;
        total += all[r].count;
    }
    struct tio_agg_piece *p = s->pieces;
    size_t n = 0;
    struct tio_err err = {0};
    if (!many) {
        for (int r = 0; r < a->size; r++)
            if (all[r].len > 0)
                p[n++] = (struct tio_agg_piece){all[r].off, all[r].len, 0, r};
    } else { /* views with several ranges: everybody's, in rank order */
        for (int r = 0; r < a->size; r++) {
            a->gather_first[3 * r] = all[r].count;
            a->gather_first[3 * r + 1] = all[r].off;
            a->gather_first[3 * r + 2] = all[r].len;
        }
        int failed = tio_agg_gather_pieces(a->icomm, a->size, a->gather_first, total,
                                           (int)me.count, roff, rlen, NULL, &p, &n, a, &err);
        int ok = !failed && p && n <= (size_t)total;
        PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, a->icomm);
        if (!ok) { /* out of memory somewhere: MPI does the call, everywhere */
            if (a->rank == 0)
                TIO_INFO("%s: a collective %s goes to the MPI library: no memory to gather "
                         "the %lld file ranges of its views", a->path,
                         writing ? "write" : "read", total);
            if (!failed)
                free(p);
            free(roff);
            free(rlen);
            return 0;
        }
        size_t k = 0; /* (empty ranges carry nothing) */
        for (size_t i = 0; i < n; i++)
            if (p[i].len > 0)
                p[k++] = p[i];
        n = k;
    }
    free(roff);
    free(rlen);
    int how = route_pieces(a, s, fh, writing, explicit_offset, p, n, all[0].fsize, pos, esize,
                           buf, count, type, status, rc, &err);
    if (p != s->pieces)
        free(p);
    return how;
}

/* The rest of route() once every process's pieces p[0..n) are known (alike everywhere). */
static int route_pieces(struct tio_agg *a, struct tio_agg_route *s, MPI_File fh, int writing,
                        int explicit_offset, struct tio_agg_piece *p, size_t n, int64_t fsize,
                        MPI_Offset pos, MPI_Offset esize, void *buf, int count,
                        MPI_Datatype type, MPI_Status *status, int *rc, struct tio_err *errp)
{
    struct tio_err err = *errp;
    /* Every process knows every request: all decide alike. (An independent read past the
     * end gets MPI's short count, as the collective would.) */
    if ((writing ? a->set.route_write_auto : !a->set.read_aggregate) &&
        tio_agg_pieces_disjoint(p, n))
        return 2;
    /* The engine reads only what the file has (rank 0 looked before the allgather). */
    for (size_t i = 0; i < n && !writing; i++)
        if (p[i].off + p[i].len > fsize)
            return 0;
    /* A new pattern gets a new plan, through the same front door as tio_agg_declare (the
     * first one places the aggregators); the same pattern as the last call, which every
     * process sees alike, reuses the plan. */
    if (!same_key(s, p, n) || (a->strategy->plan && s->reading != !writing)) {
        a->planning_read = s->reading = !writing;
        if (s->have_scratch)
            tio_agg_access_free(&s->scratch);
        struct tio_agg_piece *own = malloc(sizeof *own * (n ? n : 1));
        if (!own)
            tio_err_set(&err, TIO_E_NOMEM, "out of memory");
        else
            memcpy(own, p, sizeof *p * n);
        s->have_scratch = tio_agg_plan_access(a, &s->scratch, own, n, route_by_node,
                                              &s->by_node, &err) == TIO_OK;
        /* reused only with a plan (same_key); a key that cannot be kept matches nothing */
        if (n > s->key_cap) {
            struct tio_agg_piece *k = realloc(s->key, sizeof *k * n);
            if (k)
                s->key = k, s->key_cap = n;
        }
        if (n <= s->key_cap) {
            memcpy(s->key, p, sizeof *p * n);
            s->n = n;
        } else {
            s->n = SIZE_MAX;
        }
    }
    /* The placement failed (agreed in tio_agg_plan_access: on every process). */
    if (!a->placed) {
        *rc = raise_file(fh, &err);
        return -1;
    }
    /* Overlapping writes have no defined result; the MPI library's is the reference.
     * (Every process knows it alike, unless its plan failed: then the first round stops
     * everybody.) */
    if (writing && s->have_scratch && s->scratch.plan.overlap)
        return 0;
    /* The node regime for this call or not. (Leaving it: every process is past its
     * previous call, which touched only its node's slots: the allgather above.) */
    a->nr.node_regime = s->by_node;
    /* A process whose plan failed works on nothing: the first round's synchronisation
     * carries its error to everybody (to its node's processes in the node regime). */
    struct tio_agg_access *x = s->have_scratch ? &s->scratch : &route_nothing;
    int failed = writing ? tio_agg_run_write(a, x, 0, buf, &err)
                         : tio_agg_run_read(a, x, 0, buf, 0, &err);
    tio_agg_note_call(a, 0, writing, &err);
    if (failed) {
        *rc = raise_file(fh, &err);
        return -1;
    }
    a->stats.calls++;
    if (!explicit_offset)
        PMPI_File_seek(fh, pos + (MPI_Offset)x->mine / esize, MPI_SEEK_SET);
    if (status != MPI_STATUS_IGNORE)
        PMPI_Status_set_elements(status, type, count);
    *rc = MPI_SUCCESS;
    return 1;
}

int tio_file_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    struct tio_agg *a = find(fh);
    int rc, how = a ? route(a, fh, 1, 1, offset, (void *)buf, count, datatype, status, &rc) : 0;
    if (how == 2) {
        a->stats.independent_writes++;
        return PMPI_File_write_at(fh, offset, buf, count, datatype, status);
    }
    if (how)
        return rc;
    if (a)
        a->stats.passed++;
    return PMPI_File_write_at_all(fh, offset, buf, count, datatype, status);
}

int tio_file_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                         MPI_Datatype datatype, MPI_Status *status)
{
    struct tio_agg *a = find(fh);
    int rc, how = a ? route(a, fh, 0, 1, offset, buf, count, datatype, status, &rc) : 0;
    if (how == 2) {
        a->stats.independent++;
        return PMPI_File_read_at(fh, offset, buf, count, datatype, status);
    }
    if (how)
        return rc;
    if (a)
        a->stats.passed++;
    return PMPI_File_read_at_all(fh, offset, buf, count, datatype, status);
}

int tio_file_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    struct tio_agg *a = find(fh);
    int rc, how = a ? route(a, fh, 1, 0, 0, (void *)buf, count, datatype, status, &rc) : 0;
    if (how == 2) {
        a->stats.independent_writes++;
        return PMPI_File_write(fh, buf, count, datatype, status);
    }
    if (how)
        return rc;
    if (a)
        a->stats.passed++;
    return PMPI_File_write_all(fh, buf, count, datatype, status);
}

int tio_file_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status)
{
    struct tio_agg *a = find(fh);
    int rc, how = a ? route(a, fh, 0, 0, 0, buf, count, datatype, status, &rc) : 0;
    if (how == 2) {
        a->stats.independent++;
        return PMPI_File_read(fh, buf, count, datatype, status);
    }
    if (how)
        return rc;
    if (a)
        a->stats.passed++;
    return PMPI_File_read_all(fh, buf, count, datatype, status);
}
