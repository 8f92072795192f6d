/* Storage for dynamic windows: MPI_Alloc_mem with the storage hints returns mapped
 * storage; MPI_Win_attach records the storage ranges of a window so that MPI_Win_sync
 * writes them back; MPI_Free_mem writes back (unless discard) and unmaps. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tierio/win.h"
#include "tier/memavail.h"
#include "util/error_mpi.h"
#include "util/log.h"
#include "win/dynamic.h"
#include "win/state.h"
#include "win/win_create.h"

struct alloc {
    struct tio_region region;
    struct alloc *next;
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc *table;

/* The storage allocation containing [p, p+len), or NULL. Caller holds table_lock. */
static struct alloc *find(const void *p, size_t len)
{
    for (struct alloc *a = table; a; a = a->next) {
        const char *b = a->region.base;
        if ((const char *)p >= b && (const char *)p + len <= b + a->region.size)
            return a;
    }
    return NULL;
}

int tio_alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    struct tio_hints h;
    struct tio_err err;
    tio_err_clear(&err);
    if (size < 0) {
        tio_err_set(&err, TIO_E_ARG, "MPI_Alloc_mem: negative size %lld", (long long)size);
        return tio_err_raise_comm(MPI_COMM_WORLD, &err);
    }
    if (tio_parse_win_hints(&h, info, &err))
        return tio_err_raise_comm(MPI_COMM_WORLD, &err);
    if (h.alloc_type != TIO_ALLOC_STORAGE)
        return PMPI_Alloc_mem(size, info, baseptr);
    struct alloc *a = calloc(1, sizeof *a);
    if (!a) {
        tio_err_set(&err, TIO_E_NOMEM, "out of memory");
        return tio_err_raise_comm(MPI_COMM_WORLD, &err);
    }
    /* Not collective: "auto" uses this process's share of what is available as if it
     * were alone on the node. */
    if (tio_region_create(&a->region, (size_t)size, &h, tio_mem_available() / 10 * 9, &err)) {
        free(a);
        return tio_err_raise_comm(MPI_COMM_WORLD, &err);
    }
    pthread_mutex_lock(&table_lock);
    a->next = table;
    table = a;
    pthread_mutex_unlock(&table_lock);
    *(void **)baseptr = a->region.base;
    return MPI_SUCCESS;
}

int tio_free_mem(void *base)
{
    pthread_mutex_lock(&table_lock);
    struct alloc **pp = &table;
    while (*pp && (*pp)->region.base != base)
        pp = &(*pp)->next;
    struct alloc *a = *pp;
    if (a)
        *pp = a->next;
    pthread_mutex_unlock(&table_lock);
    if (!a)
        return PMPI_Free_mem(base);
    struct tio_err err;
    tio_err_clear(&err);
    tio_region_destroy(&a->region, &err);
    free(a);
    return tio_err_raise_comm(MPI_COMM_WORLD, &err);
}

int tio_win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    int rc = PMPI_Win_attach(win, base, size);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&table_lock);
    int storage = size > 0 && find(base, (size_t)size) != NULL;
    pthread_mutex_unlock(&table_lock);
    if (!storage)
        return MPI_SUCCESS;

    /* The state is made on the first storage attach; table_lock keeps two threads
     * attaching at once from making two. */
    pthread_mutex_lock(&table_lock);
    struct tio_win_state *st = tio_state_get(win);
    if (!st) {
        st = tio_state_new(MPI_WIN_FLAVOR_DYNAMIC);
        if (st && tio_state_set(win, st) != MPI_SUCCESS) {
            tio_state_release(st, NULL);
            st = NULL;
        }
    }
    pthread_mutex_unlock(&table_lock);
    int ok = 0;
    if (st) {
        pthread_mutex_lock(&st->lock);
        if (st->natt == st->capatt) {
            int cap = st->capatt ? 2 * st->capatt : 8;
            struct tio_attached *n = realloc(st->att, (size_t)cap * sizeof *n);
            if (n) {
                st->att = n;
                st->capatt = cap;
            }
        }
        ok = st->natt < st->capatt;
        if (ok)
            st->att[st->natt++] = (struct tio_attached){base, (size_t)size};
        pthread_mutex_unlock(&st->lock);
    }
    if (!ok) {
        PMPI_Win_detach(win, base);
        struct tio_err err;
        tio_err_clear(&err);
        tio_err_set(&err, TIO_E_NOMEM, "MPI_Win_attach: out of memory recording storage");
        return tio_err_raise_win(win, &err);
    }
    return MPI_SUCCESS;
}

int tio_win_detach(MPI_Win win, const void *base)
{
    int rc = PMPI_Win_detach(win, base);
    struct tio_win_state *st = tio_state_get(win);
    if (rc != MPI_SUCCESS || !st)
        return rc;
    pthread_mutex_lock(&st->lock);
    for (int i = 0; i < st->natt; i++)
        if (st->att[i].base == base) {
            st->att[i] = st->att[--st->natt];
            break;
        }
    pthread_mutex_unlock(&st->lock);
    return MPI_SUCCESS;
}

int tio_sync_attached(struct tio_win_state *st, struct tio_err *err)
{
    int rc = TIO_OK;
    pthread_mutex_lock(&st->lock);
    for (int i = 0; i < st->natt && !rc; i++) {
        pthread_mutex_lock(&table_lock);
        struct alloc *a = find(st->att[i].base, st->att[i].size);
        pthread_mutex_unlock(&table_lock);
        /* Freed while attached (erroneous in MPI): nothing left to write back. */
        if (a && a->region.has_file) {
            char *lo = st->att[i].base, *hi = lo + st->att[i].size;
            char *slo = a->region.sync_addr, *shi = slo + a->region.sync_len;
            if (lo < slo)
                lo = slo;
            if (hi > shi)
                hi = shi;
            if (lo < hi)
                rc = tio_region_sync_range(&a->region, lo, (size_t)(hi - lo), err);
        }
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}
