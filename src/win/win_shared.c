/* MPI_Win_allocate_shared on storage. All processes map the same file region, one
 * piece after another (contiguous, as MPI's default), so loads and stores of one process
 * see the others' through the shared page cache; MPI_Win_shared_query answers from the
 * pieces tierio laid out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tierio/win.h"
#include "util/error_mpi.h"
#include "util/log.h"
#include "util/agree.h"
#include "win/quirks.h"
#include "win/shared_combined.h"
#include "win/state.h"
#include "win/win_create.h"

/* Every process must name the same file and offset. */
static void check_same(MPI_Comm comm, const struct tio_hints *h, struct tio_err *err)
{
    struct { char name[PATH_MAX]; unsigned long long off; } mine, root;
    memset(&mine, 0, sizeof mine);
    snprintf(mine.name, sizeof mine.name, "%s", h->filename);
    mine.off = h->offset;
    root = mine;
    PMPI_Bcast(&root, (int)sizeof root, MPI_BYTE, 0, comm);
    if (strcmp(root.name, mine.name) || root.off != mine.off)
        tio_err_set(err, TIO_E_INFO_VALUE,
                    "MPI_Win_allocate_shared: storage_alloc_filename/offset must be the same "
                    "on every process (\"%s\"@%llu here, \"%s\"@%llu on rank 0)", mine.name,
                    mine.off, root.name, root.off);
    else if (h->discard)
        tio_err_set(err, TIO_E_UNSUPPORTED,
                    "MPI_Win_allocate_shared: storage_alloc_discard=true is not supported: "
                    "the processes share the pages through the file");
    else if (h->engine == TIO_ENGINE_UMMAP)
        tio_err_set(err, TIO_E_UNSUPPORTED,
                    "MPI_Win_allocate_shared: storage_alloc_engine=ummap is not supported: "
                    "the user-level engine's memory is private to each process, so the "
                    "other processes could not load and store into it (use \"mmap\")");
}

static int allocate_shared(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                           void *baseptr, MPI_Win *win, int large)
{
    struct tio_hints h;
    struct tio_err err;
    tio_hints_default(&h);
    tio_err_clear(&err);
    if (size < 0 || disp_unit <= 0)
        tio_err_set(&err, TIO_E_ARG, "MPI_Win_allocate_shared: size %lld / disp_unit %lld",
                    (long long)size, (long long)disp_unit);
    else
        tio_parse_win_hints(&h, info, &err);
    int storage = !err.cls && h.alloc_type == TIO_ALLOC_STORAGE;
    int flags[2] = {storage, !storage}; /* any storage, any memory */
    if (tio_agree(comm, &err, flags, 2))
        return tio_err_raise_comm(comm, &err);
    if (!flags[0]) {
#if MPI_VERSION >= 4
        if (large)
            return PMPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win);
#endif
        (void)large;
        return PMPI_Win_allocate_shared(size, (int)disp_unit, info, comm, baseptr, win);
    }
    if (flags[1])
        tio_err_set(&err, TIO_E_INFO_VALUE,
                    "MPI_Win_allocate_shared: alloc_type must be the same on every process "
                    "(some asked for storage, some for memory)");
    else
        check_same(comm, &h, &err);
    if (tio_agree(comm, &err, NULL, 0))
        return tio_err_raise_comm(comm, &err);

    int rank, n;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &n);
    struct tio_win_state *st = tio_state_new(MPI_WIN_FLAVOR_SHARED);
    if (st) {
        st->nprocs = n;
        st->sizes = calloc((size_t)n, sizeof *st->sizes);
        st->disp_units = calloc((size_t)n, sizeof *st->disp_units);
        st->prefix = calloc((size_t)n + 1, sizeof *st->prefix);
    }
    if (!st || !st->sizes || !st->disp_units || !st->prefix) {
        tio_err_set(&err, TIO_E_NOMEM, "out of memory");
    } else {
        PMPI_Allgather(&size, 1, MPI_AINT, st->sizes, 1, MPI_AINT, comm);
        PMPI_Allgather(&disp_unit, 1, MPI_AINT, st->disp_units, 1, MPI_AINT, comm);
        for (int i = 0; i < n; i++)
            st->prefix[i + 1] = st->prefix[i] + (size_t)st->sizes[i];
    }
    /* Part memory, part storage somewhere (storage_alloc_factor < 1 or auto)? */
    int combined[2] = {h.factor_auto || h.factor < 1.0, h.factor_auto};
    if (tio_agree(comm, &err, combined, 2))
        goto fail;
    if (combined[0]) {
        uint64_t budget = combined[1] ? tio_auto_mem_budget(comm) : 0;
        if (tio_shared_combined(st, comm, &h, budget, &err))
            goto fail;
    } else {
        if (!tio_region_reserve_shared(&st->region, (size_t)size, st->prefix[rank], &h, &err))
            st->has_region = 1;
        /* The whole file range exists once every process has reserved its piece. */
        if (tio_agree(comm, &err, NULL, 0))
            goto fail;
        if (!tio_region_map_shared(&st->region, st->prefix[rank], st->prefix[n], &err))
            tio_check_window_base(st->region.base, "MPI_Win_allocate_shared piece", &err);
        if (tio_agree(comm, &err, NULL, 0))
            goto fail;
        st->shared_base = st->region.fm.addr;
    }

    int rc = PMPI_Comm_dup(comm, &st->comm);
    if (rc != MPI_SUCCESS) {
        tio_state_abandon(st);
        return rc;
    }
    return tio_expose_region(st, size, disp_unit, info, comm, baseptr, win);
fail:
    if (st)
        tio_state_abandon(st);
    return tio_err_raise_comm(comm, &err);
}

int tio_win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    return allocate_shared(size, disp_unit, info, comm, baseptr, win, 0);
}

int tio_win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                              MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    return allocate_shared(size, disp_unit, info, comm, baseptr, win, 1);
}

static int query(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    struct tio_win_state *st = tio_state_get(win);
    if (rank == MPI_PROC_NULL) { /* the lowest rank with a non-empty piece */
        for (rank = 0; rank < st->nprocs - 1 && st->sizes[rank] == 0; rank++)
            ;
    }
    if (rank < 0 || rank >= st->nprocs) {
        struct tio_err err;
        tio_err_clear(&err);
        tio_err_set(&err, TIO_E_ARG, "MPI_Win_shared_query: rank %d out of range", rank);
        return tio_err_raise_win(win, &err);
    }
    *size = st->sizes[rank];
    *disp_unit = st->disp_units[rank];
    *(void **)baseptr = st->shared_base + st->prefix[rank];
    return MPI_SUCCESS;
}

static int is_storage_shared(MPI_Win win)
{
    struct tio_win_state *st = tio_state_get(win);
    return st && st->flavor == MPI_WIN_FLAVOR_SHARED && st->has_region;
}

/* A window made on MPI's shared-memory window (overlay.c): MPI's answer, moved to the
 * window the application sees. */
static void adjust_overlay(MPI_Win win, int rank, MPI_Aint *size, void *baseptr)
{
    struct tio_win_state *st = tio_state_get(win);
    if (!st || !st->overlay || *(char **)baseptr == NULL)
        return;
    if (rank == MPI_PROC_NULL)
        rank = 0;
    if (rank >= 0 && rank < st->nprocs) {
        *(char **)baseptr += st->shifts[rank];
        *size = st->sizes[rank];
    }
}

int tio_win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                         void *baseptr)
{
    if (!is_storage_shared(win)) {
        int rc = PMPI_Win_shared_query(win, rank, size, disp_unit, baseptr);
        if (rc == MPI_SUCCESS)
            adjust_overlay(win, rank, size, baseptr);
        return rc;
    }
    MPI_Aint du = 0;
    int rc = query(win, rank, size, &du, baseptr);
    if (rc == MPI_SUCCESS)
        *disp_unit = (int)du;
    return rc;
}

int tio_win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                           void *baseptr)
{
    if (!is_storage_shared(win)) {
#if MPI_VERSION >= 4
        int rc = PMPI_Win_shared_query_c(win, rank, size, disp_unit, baseptr);
#else
        int du = 0;
        int rc = PMPI_Win_shared_query(win, rank, size, &du, baseptr);
        *disp_unit = du;
#endif
        if (rc == MPI_SUCCESS)
            adjust_overlay(win, rank, size, baseptr);
        return rc;
    }
    return query(win, rank, size, disp_unit, baseptr);
}
