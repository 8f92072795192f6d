/* MPI_Win_allocate on storage: the local memory is a tio_region (memory, file, or both),
 * exposed with MPI_Win_create; the attribute cache remembers that it is a storage window
 * so that sync, free, get_info and the flavor attribute behave as for MPI_Win_allocate. */
#include <stdio.h>
#include <stdlib.h>

#include "tierio/win.h"
#include "tier/memavail.h"
#include "util/error_mpi.h"
#include "util/hints_info.h"
#include "util/log.h"
#include "util/agree.h"
#include "util/node.h"
#include "win/overlay.h"
#include "win/quirks.h"
#include "win/state.h"
#include "win/translate.h"
#include "win/win_create.h"

int tio_pmpi_win_create(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                        MPI_Comm comm, MPI_Win *win)
{
#if MPI_VERSION >= 4
    if (disp_unit > INT32_MAX)
        return PMPI_Win_create_c(base, size, disp_unit, info, comm, win);
#endif
    return PMPI_Win_create(base, size, (int)disp_unit, info, comm, win);
}

int tio_attach_state(MPI_Win win, struct tio_win_state *st, MPI_Comm comm)
{
    /* Caching an attribute practically never fails, but if it failed on one process
     * only, a lone MPI_Win_free there would hang: agree, then free together. */
    struct tio_err err;
    tio_err_clear(&err);
    if (tio_state_set(win, st) != MPI_SUCCESS)
        tio_err_set(&err, TIO_E_OTHER, "cannot cache tierio's state on the window");
    if (tio_agree(comm, &err, NULL, 0) == TIO_OK)
        return MPI_SUCCESS;
    if (st->overlay)
        tio_xlate_unregister(win);
    st->freeing = 1;
    PMPI_Win_free(&win);
    tio_state_abandon(st);
    return tio_err_raise_comm(comm, &err);
}

int tio_expose_region(struct tio_win_state *st, MPI_Aint size, MPI_Aint disp_unit,
                      MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    *win = MPI_WIN_NULL;
    int rc = tio_pmpi_win_create(st->region.base, size, disp_unit, info, comm, win);
    if (rc != MPI_SUCCESS) { /* MPI has already called the error handler */
        tio_state_abandon(st);
        return rc;
    }
    rc = tio_attach_state(*win, st, comm);
    if (rc != MPI_SUCCESS) {
        *win = MPI_WIN_NULL;
        return rc;
    }
    st->base = st->region.base;
    st->size = size;
    *(void **)baseptr = st->region.base;
    return MPI_SUCCESS;
}

uint64_t tio_auto_mem_budget(MPI_Comm comm)
{
    MPI_Comm node;
    int nlocal = 1;
    if (tio_node_comm(comm, &node) == MPI_SUCCESS) {
        PMPI_Comm_size(node, &nlocal);
        PMPI_Comm_free(&node);
    }
    /* Keep a tenth back for the application's other needs and the page cache. */
    return tio_mem_available() / 10 * 9 / (uint64_t)nlocal;
}

int tio_parse_win_hints(struct tio_hints *h, MPI_Info info, struct tio_err *err)
{
    int rc = tio_hints_from_info(h, info, err);
    if (!rc && h->alloc_type != TIO_ALLOC_STORAGE && h->storage_keys_seen)
        TIO_WARN("storage hints given without alloc_type=storage: the allocation is in "
                 "memory");
    if (!rc && h->alloc_type == TIO_ALLOC_STORAGE && !h->filename[0])
        rc = tio_err_set(err, TIO_E_INFO_KEY,
                         "alloc_type=storage needs the hint storage_alloc_filename "
                         "(or swin_filename)");
    return rc;
}

static int allocate(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                    void *baseptr, MPI_Win *win, int large)
{
    struct tio_hints h;
    struct tio_err err;
    tio_hints_default(&h);
    tio_err_clear(&err);
    if (size < 0)
        tio_err_set(&err, TIO_E_ARG, "MPI_Win_allocate: negative size %lld", (long long)size);
    else if (disp_unit <= 0)
        tio_err_set(&err, TIO_E_ARG, "MPI_Win_allocate: disp_unit %lld is not positive",
                    (long long)disp_unit);
    else
        tio_parse_win_hints(&h, info, &err);

    /* flags: [0] some process wants storage, [1] some process wants factor=auto */
    int flags[2] = {!err.cls && h.alloc_type == TIO_ALLOC_STORAGE,
                    !err.cls && h.alloc_type == TIO_ALLOC_STORAGE && h.factor_auto};
    if (tio_agree(comm, &err, flags, 2))
        return tio_err_raise_comm(comm, &err);
    if (!flags[0]) { /* a memory window everywhere: exactly MPI's */
#if MPI_VERSION >= 4
        if (large)
            return PMPI_Win_allocate_c(size, disp_unit, info, comm, baseptr, win);
#endif
        (void)large;
        return PMPI_Win_allocate(size, (int)disp_unit, info, comm, baseptr, win);
    }

    uint64_t budget = flags[1] ? tio_auto_mem_budget(comm) : 0;
    struct tio_win_state *st = tio_state_new(MPI_WIN_FLAVOR_ALLOCATE);
    if (!st)
        tio_err_set(&err, TIO_E_NOMEM, "out of memory");
    if (tio_agree(comm, &err, NULL, 0))
        goto fail;
    int rc = PMPI_Comm_dup(comm, &st->comm);
    if (rc != MPI_SUCCESS) {
        tio_state_abandon(st);
        return rc;
    }

    /* One node (Open MPI): on MPI's shared-memory window, with the files over it. */
    int made = 0;
    rc = tio_overlay_allocate(size, disp_unit, info, comm, &h, budget, st, baseptr, win, &made);
    if (rc != MPI_SUCCESS)
        return rc;
    if (made) {
        rc = tio_attach_state(*win, st, comm);
        if (rc != MPI_SUCCESS)
            *win = MPI_WIN_NULL;
        return rc;
    }

    if (!tio_region_create(&st->region, (size_t)size, &h, budget, &err)) {
        st->has_region = 1;
        st->region.fm.created |= st->file_created;
        char what[64];
        snprintf(what, sizeof what, "storage_alloc_offset=%llu",
                 (unsigned long long)h.offset);
        tio_check_window_base(st->region.base, what, &err);
    }
    if (tio_agree(comm, &err, NULL, 0))
        goto fail;

    return tio_expose_region(st, size, disp_unit, info, comm, baseptr, win);
fail:
    if (st)
        tio_state_abandon(st);
    return tio_err_raise_comm(comm, &err);
}

int tio_win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                     void *baseptr, MPI_Win *win)
{
    return allocate(size, disp_unit, info, comm, baseptr, win, 0);
}

int tio_win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                       void *baseptr, MPI_Win *win)
{
    return allocate(size, disp_unit, info, comm, baseptr, win, 1);
}
