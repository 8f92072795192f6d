/* The aggregation buffers on their tiers: see buffers.h. */
#include "agg/buffers.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agg/mpierr.h"
#include "agg/plan.h"
#include "tier/memavail.h"
#include "util/agree.h"
#include "util/node.h"
#include "win/rma.h"

/* Plain DRAM (no NUMA binding) on every process: the buffers can be MPI shared memory
 * within each node. Collective: the answer is agreed. */
static int shared_dram(struct tio_agg_buffers *b, tio_tiers_t tiers, const char *name,
                       MPI_Comm comm)
{
    int idx = -1, ok = 0;
    struct tio_tier_info info;
    if (b->shared_tier >= 0)
        ok = 0;
    else if (!tiers) /* no tiers handle: plain DRAM is all there is */
        ok = !strcmp(name, "dram");
    else if (tio_tiers_find(tiers, name, &idx) == MPI_SUCCESS && idx >= 0 &&
             tio_tiers_get(tiers, idx, &info) == MPI_SUCCESS)
        ok = info.kind == TIO_TIER_DRAM && !info.numa_nodes[0];
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    return ok;
}

/* DRAM buffers as MPI shared memory of each node (MPI_Win_allocate_shared), exposed to
 * every process by a second window over the same memory (MPI_Win_create): moves between
 * processes of one node are plain copies, the others one-sided operations. The room is
 * checked as the tier layer does for its buffers. */
static int shared_alloc(struct tio_agg_buffers *b, int t, tio_tiers_t tiers, const char *name,
                        MPI_Aint size, MPI_Comm comm, MPI_Comm node, struct tio_err *err)
{
    int idx = -1;
    struct tio_tier_info info = {0};
    if (!tiers) /* what the tier layer would say without a site file */
        info.available = tio_mem_available();
    else if (tio_tiers_find(tiers, name, &idx) != MPI_SUCCESS || idx < 0 ||
             tio_tiers_get(tiers, idx, &info) != MPI_SUCCESS)
        info.available = ULLONG_MAX;
    if (size > 0 && (unsigned long long)size > info.available) {
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        tio_err_set(err, TIO_E_NOSPACE, "aggregation buffers: tier \"%s\" on %s has %llu "
                    "bytes available, %lld asked", name, host, info.available,
                    (long long)size);
    }
    b->peer = calloc((size_t)b->ndomains, sizeof *b->peer);
    if (!b->peer)
        tio_err_set(err, TIO_E_NOMEM, "aggregation buffers: out of memory");
    if (tio_agree(comm, err, NULL, 0))
        return err->cls;
    /* MPICH 4.0.2 misplaces window bases of sizes that are not multiples of 16. */
    MPI_Aint wsize = (size + 15) / 16 * 16;
    MPI_Info hint;
    PMPI_Info_create(&hint);
    PMPI_Info_set(hint, "alloc_shared_noncontig", "true");
    void *base = NULL;
    int rc = MPI_SUCCESS;
    if (node != MPI_COMM_NULL) {
        b->node = node;
    } else if (tio_node_comm(comm, &b->node, err) != TIO_OK) {
        PMPI_Info_free(&hint);
        return err->cls; /* the split's own message */
    } else {
        b->own_node = 1;
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_allocate_shared(wsize, 1, hint, b->node, &base, &b->swin);
    PMPI_Info_free(&hint);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_create(base, wsize, 1, MPI_INFO_NULL, comm, &b->win[t]);
    if (rc != MPI_SUCCESS)
        return tio_agg_err_from_mpi(rc, err, "allocating the aggregation buffers");
    b->shared_tier = t;
    PMPI_Win_set_errhandler(b->win[t], MPI_ERRORS_RETURN);
    PMPI_Win_set_errhandler(b->swin, MPI_ERRORS_RETURN);
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, b->win[t]);
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, b->swin);
    if (size > 0)
        b->mine = base;
    /* Where the aggregators of this node keep their buffers. */
    MPI_Group g, ng;
    PMPI_Comm_group(comm, &g);
    PMPI_Comm_group(b->node, &ng);
    for (int d = 0; d < b->ndomains; d++) {
        int nr = MPI_UNDEFINED, du;
        MPI_Aint sz;
        void *ptr = NULL;
        if (b->tier_of[d] != t)
            continue;
        PMPI_Group_translate_ranks(g, 1, &b->rank_of[d], ng, &nr);
        if (nr != MPI_UNDEFINED && PMPI_Win_shared_query(b->swin, nr, &sz, &du, &ptr) ==
                                       MPI_SUCCESS)
            b->peer[d] = ptr;
    }
    PMPI_Group_free(&g);
    PMPI_Group_free(&ng);
    return TIO_OK;
}

int tio_agg_buffers_alloc(struct tio_agg_buffers *b, tio_tiers_t tiers, MPI_Comm comm,
                          MPI_Comm node, int ndomains, const int *ranks,
                          const char (*tier_names)[TIO_TIER_NAME_MAX],
                          const int64_t *slot_sizes, int64_t slot_size, int nslots,
                          struct tio_err *err)
{
    int rank;
    memset(b, 0, sizeof *b);
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &b->size);
    b->rank = rank;
    b->ndomains = ndomains;
    b->slot_size = slot_size;
    b->nslots = nslots;
    b->my_tier = -1;
    b->shared_tier = -1;
    b->swin = MPI_WIN_NULL;
    b->node = MPI_COMM_NULL;
    b->tier_of = malloc(sizeof *b->tier_of * (size_t)ndomains);
    b->rank_of = malloc(sizeof *b->rank_of * (size_t)ndomains);
    b->dom_slot = malloc(sizeof *b->dom_slot * (size_t)ndomains);
    int fail = !b->tier_of || !b->rank_of || !b->dom_slot;
    /* Same on every process (the placement is): the distinct tiers in domain order. */
    int my_domain = -1;
    for (int d = 0; d < ndomains && !fail; d++) {
        int t;
        for (t = 0; t < d; t++)
            if (!strcmp(tier_names[t], tier_names[d]))
                break;
        b->tier_of[d] = t < d ? b->tier_of[t] : b->ntiers++;
        b->rank_of[d] = ranks[d];
        b->dom_slot[d] = slot_sizes ? slot_sizes[d] : slot_size;
        if (ranks[d] == rank) {
            my_domain = d;
            b->slot_size = b->dom_slot[d];
        }
    }
    if (b->ntiers > TIO_AGG_MAX_TIERS)
        fail = 2;
    b->touched = calloc((size_t)b->ntiers * (size_t)b->size, 1);
    b->pending = malloc(sizeof *b->pending * (size_t)(b->ntiers * b->size + 1));
    if (!b->touched || !b->pending)
        fail = 1;
    /* Every process reaches the collective calls below, or none does. */
    int any = fail;
    PMPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any) {
        free(b->tier_of);
        free(b->rank_of);
        free(b->dom_slot);
        free(b->touched);
        free(b->pending);
        memset(b, 0, sizeof *b);
        if (any == 2)
            return tio_err_set(err, TIO_E_UNSUPPORTED, "aggregation buffers on more than %d "
                               "different tiers", TIO_AGG_MAX_TIERS);
        return tio_err_set(err, TIO_E_NOMEM, "aggregation buffers: out of memory");
    }
    for (int t = 0; t < b->ntiers; t++) {
        const char *name = NULL;
        for (int d = 0; d < ndomains && !name; d++)
            if (b->tier_of[d] == t)
                name = tier_names[d];
        MPI_Aint size = 0;
        if (my_domain >= 0 && b->tier_of[my_domain] == t) {
            size = (MPI_Aint)(b->slot_size * nslots);
            b->my_tier = t;
        }
        if (shared_dram(b, tiers, name, comm)) {
            if (shared_alloc(b, t, tiers, name, size, comm, node, err))
                goto undo;
            continue;
        }
        int rc = tio_buf_alloc(tiers, name, size, NULL, 0, comm, &b->buf[t]);
        if (rc != MPI_SUCCESS) {
            tio_agg_err_from_mpi(rc, err, "allocating the aggregation buffers");
            goto undo;
        }
        tio_buf_win(b->buf[t], &b->win[t]);
        if (size > 0) {
            void *base;
            MPI_Aint got;
            tio_buf_local(b->buf[t], &base, &got);
            b->mine = base;
        }
    }
    return TIO_OK;
undo:
    {
        struct tio_err ignore = {0};
        tio_agg_buffers_free(b, &ignore);
    }
    return err->cls;
}

int tio_agg_buffers_free(struct tio_agg_buffers *b, struct tio_err *err)
{
    for (int t = 0; t < b->ntiers; t++) {
        if (!b->buf[t])
            continue;
        int rc = tio_buf_free(&b->buf[t]);
        if (rc != MPI_SUCCESS && err->cls == TIO_OK)
            tio_agg_err_from_mpi(rc, err, "freeing the aggregation buffers");
    }
    if (b->shared_tier >= 0 && b->win[b->shared_tier] != MPI_WIN_NULL) {
        PMPI_Win_unlock_all(b->win[b->shared_tier]);
        PMPI_Win_free(&b->win[b->shared_tier]);
    }
    if (b->swin != MPI_WIN_NULL) {
        PMPI_Win_unlock_all(b->swin);
        PMPI_Win_free(&b->swin);
    }
    if (b->node != MPI_COMM_NULL && b->own_node)
        PMPI_Comm_free(&b->node);
    free(b->peer);
    free(b->tier_of);
    free(b->rank_of);
    free(b->dom_slot);
    free(b->touched);
    free(b->pending);
    memset(b, 0, sizeof *b);
    return err->cls;
}

static int mpi_failed(int rc, const char *what, struct tio_err *err)
{
    return tio_agg_err_from_mpi(rc, err, what);
}

/* Remember that (tier t, rank r) needs a flush. */
static void touch(struct tio_agg_buffers *b, int t, int r)
{
    if (!b->touched[t * b->size + r]) {
        b->touched[t * b->size + r] = 1;
        b->pending[b->npending++] = t * b->size + r;
    }
}

int tio_agg_buffers_put(struct tio_agg_buffers *b, int d, int slot, int64_t off,
                        const void *src, int64_t len, struct tio_err *err)
{
    int t = b->tier_of[d], r = b->rank_of[d];
    int64_t at = (int64_t)slot * b->dom_slot[d] + off;
    if (t == b->my_tier && b->mine && r == b->rank) {
        memcpy(b->mine + at, src, (size_t)len);
        return TIO_OK;
    }
    int rc = tio_rma_put(src, (int)len, MPI_BYTE, r, (MPI_Aint)at, (int)len, MPI_BYTE,
                         b->win[t]);
    if (rc != MPI_SUCCESS)
        return mpi_failed(rc, "MPI_Put into an aggregation buffer", err);
    touch(b, t, r);
    return TIO_OK;
}

int tio_agg_buffers_get(struct tio_agg_buffers *b, int d, int slot, int64_t off, void *dst,
                        int64_t len, struct tio_err *err)
{
    int t = b->tier_of[d], r = b->rank_of[d];
    int64_t at = (int64_t)slot * b->dom_slot[d] + off;
    if (t == b->my_tier && b->mine && r == b->rank) {
        memcpy(dst, b->mine + at, (size_t)len);
        return TIO_OK;
    }
    int rc = tio_rma_get(dst, (int)len, MPI_BYTE, r, (MPI_Aint)at, (int)len, MPI_BYTE,
                         b->win[t]);
    if (rc != MPI_SUCCESS)
        return mpi_failed(rc, "MPI_Get from an aggregation buffer", err);
    touch(b, t, r);
    return TIO_OK;
}

int tio_agg_buffers_move(struct tio_agg_buffers *b, int get, const struct tio_agg_move *mv,
                         size_t n, int slot, char *mem, struct tio_err *err)
{
    if (n == 0)
        return TIO_OK;
    int d = mv[0].domain, t = b->tier_of[d], r = b->rank_of[d];
    int64_t base = (int64_t)slot * b->dom_slot[d];
    char *slots = t == b->my_tier && b->mine && r == b->rank ? b->mine
                  : b->peer                                  ? b->peer[d]
                                                             : NULL;
    if (slots) { /* our own slot, or a slot in this node's shared memory: copies */
        if (slots != b->mine)
            b->shared_copies = 1;
        if (get && slots != b->mine)
            PMPI_Win_sync(b->swin); /* see what the aggregator put there */
        for (size_t i = 0; i < n; i++) {
            char *slotp = slots + base + mv[i].boff;
            if (get)
                memcpy(mem + mv[i].mem, slotp, (size_t)mv[i].len);
            else
                memcpy(slotp, mem + mv[i].mem, (size_t)mv[i].len);
        }
        return TIO_OK;
    }
    if (n == 1)
        return get ? tio_agg_buffers_get(b, d, slot, mv[0].boff, mem + mv[0].mem, mv[0].len, err)
                   : tio_agg_buffers_put(b, d, slot, mv[0].boff, mem + mv[0].mem, mv[0].len,
                                         err);
    /* One operation for all: the pieces on both sides as indexed datatypes. */
    int *len = malloc(sizeof *len * n);
    MPI_Aint *odisp = malloc(sizeof *odisp * n), *tdisp = malloc(sizeof *tdisp * n);
    MPI_Datatype ot = MPI_DATATYPE_NULL, tt = MPI_DATATYPE_NULL;
    int rc = MPI_SUCCESS;
    if (!len || !odisp || !tdisp) {
        tio_err_set(err, TIO_E_NOMEM, "aggregation: out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        len[i] = (int)mv[i].len;
        odisp[i] = (MPI_Aint)mv[i].mem;
        tdisp[i] = (MPI_Aint)mv[i].boff;
    }
    if ((rc = PMPI_Type_create_hindexed((int)n, len, odisp, MPI_BYTE, &ot)) ||
        (rc = PMPI_Type_commit(&ot)) ||
        (rc = PMPI_Type_create_hindexed((int)n, len, tdisp, MPI_BYTE, &tt)) ||
        (rc = PMPI_Type_commit(&tt)))
        goto out;
    rc = tio_rma_move(get, mem, 1, ot, r, (MPI_Aint)base, tt, b->win[t]);
    if (rc == MPI_SUCCESS)
        touch(b, t, r);
out:
    if (rc != MPI_SUCCESS)
        mpi_failed(rc, get ? "MPI_Get from an aggregation buffer"
                           : "MPI_Put into an aggregation buffer", err);
    /* Types may be freed while the operation is pending (MPI keeps them alive). */
    if (ot != MPI_DATATYPE_NULL)
        PMPI_Type_free(&ot);
    if (tt != MPI_DATATYPE_NULL)
        PMPI_Type_free(&tt);
    free(len);
    free(odisp);
    free(tdisp);
    return err->cls;
}

int tio_agg_buffers_flush(struct tio_agg_buffers *b, struct tio_err *err)
{
    for (int i = 0; i < b->npending; i++) {
        int t = b->pending[i] / b->size, r = b->pending[i] % b->size;
        b->touched[b->pending[i]] = 0;
        int rc = PMPI_Win_flush(r, b->win[t]);
        if (rc != MPI_SUCCESS && err->cls == TIO_OK)
            mpi_failed(rc, "MPI_Win_flush of an aggregation buffer", err);
    }
    b->npending = 0;
    /* Copies into a neighbour's shared memory: visible before the round's synchronisation. */
    if (b->shared_copies) {
        PMPI_Win_sync(b->swin);
        b->shared_copies = 0;
    }
    return err->cls;
}

int tio_agg_buffers_sync(struct tio_agg_buffers *b, struct tio_err *err)
{
    if (b->my_tier < 0)
        return TIO_OK;
    int rc = PMPI_Win_sync(b->my_tier == b->shared_tier ? b->swin : b->win[b->my_tier]);
    return rc == MPI_SUCCESS ? TIO_OK : mpi_failed(rc, "MPI_Win_sync", err);
}
