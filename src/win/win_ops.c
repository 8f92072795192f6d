/* Calls on an existing window: sync, free, get_info, get_attr. */
#include <stdlib.h>

#include "tierio/win.h"
#include "util/error_mpi.h"
#include "win/hints.h"
#include "util/log.h"
#include "util/settings.h"
#include "win/dynamic.h"
#include "win/state.h"
#include "win/translate.h"

/* Is win in MPI's unified memory model (public and private copies are one)? */
static int is_unified(MPI_Win win)
{
    int *model = NULL, flag = 0;
    PMPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    return flag && *model == MPI_WIN_UNIFIED;
}

int tio_win_sync(MPI_Win win)
{
    struct tio_win_state *st = tio_state_get(win);
    if (!st)
        return PMPI_Win_sync(win);
    /* Storage windows are synced to storage outside access epochs too (the seed's
     * usage), which MPICH refuses for MPI_Win_sync. In the unified model MPI_Win_sync
     * is a memory barrier, so that is what we do there; otherwise MPI's rules apply. */
    if (is_unified(win)) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    } else {
        int rc = PMPI_Win_sync(win);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    struct tio_err err;
    tio_err_clear(&err);
    if (st->has_region)
        tio_region_sync(&st->region, &err);
    if (!err.cls && st->natt)
        tio_sync_attached(st, &err);
    return tio_err_raise_win(win, &err);
}

int tio_win_free(MPI_Win *win)
{
    struct tio_win_state *st = tio_state_get(*win);
    if (!st || !st->has_region)
        return PMPI_Win_free(win); /* the delete callback frees a dynamic state */

    /* Once every process has entered MPI_Win_free, all RMA targeting us is complete
     * (each finished its epochs first): write back now, while the window can still
     * report an error through its handler, then free it. */
    struct tio_err err;
    tio_err_clear(&err);
    PMPI_Barrier(st->comm);
    if (!st->region.hints.discard)
        tio_region_sync(&st->region, &err);
    int code = tio_err_raise_win(*win, &err);
    if (st->overlay)
        tio_xlate_unregister(*win);
    st->freeing = 1;
    int rc = PMPI_Win_free(win);
    st->region.hints.discard = 1; /* written back above */
    tio_state_release(st, NULL);
    return rc != MPI_SUCCESS ? rc : code;
}

/* Reported by get_info, not a setting (util/settings_unknown.c). */
static const char *const reported_keys[] = {"tierio_window_impl", NULL};
__attribute__((constructor)) static void register_reported(void)
{
    tio_settings_register_reported(reported_keys);
}

int tio_win_get_info(MPI_Win win, MPI_Info *info_used)
{
    int rc = PMPI_Win_get_info(win, info_used);
    struct tio_win_state *st = tio_state_get(win);
    if (rc == MPI_SUCCESS && st && st->has_region) {
        tio_hints_report(&st->region.hints, st->region.factor, *info_used);
        /* how tierio made it: on MPI's shared-memory window, or with MPI_Win_create */
        PMPI_Info_set(*info_used, "tierio_window_impl",
                      st->overlay ? "shared_memory" : "create");
    }
    return rc;
}

int tio_win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    struct tio_win_state *st;
    if (keyval == MPI_WIN_CREATE_FLAVOR && (st = tio_state_get(win)) != NULL) {
        *(int **)attribute_val = &st->flavor;
        *flag = 1;
        return MPI_SUCCESS;
    }
    /* Base and size as the application got them: on MPI's shared-memory window MPI's
     * are those of its larger piece, and MPICH answers NULL for an empty MPI_Win_create
     * window. */
    if ((keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE) &&
        (st = tio_state_get(win)) != NULL && st->base) {
        if (keyval == MPI_WIN_BASE)
            *(void **)attribute_val = st->base;
        else
            *(MPI_Aint **)attribute_val = &st->size;
        *flag = 1;
        return MPI_SUCCESS;
    }
    return PMPI_Win_get_attr(win, keyval, attribute_val, flag);
}

int tio_win_is_storage(MPI_Win win, int *flag)
{
    struct tio_win_state *st = tio_state_get(win);
    *flag = st && ((st->has_region && st->region.has_file) || st->natt > 0);
    return MPI_SUCCESS;
}
