#include "win/state.h"

#include <stdlib.h>
#include <string.h>

#include "util/log.h"

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int keyval = MPI_KEYVAL_INVALID;

/* Runs inside MPI_Win_free. When the application freed the window through
 * PMPI_Win_free directly (bypassing tierio), this is the last chance to release the
 * mapping; tio_win_free sets freeing and does it itself, with error reporting. */
static int delete_fn(MPI_Win win, int kv, void *attr, void *extra)
{
    (void)win, (void)kv, (void)extra;
    struct tio_win_state *st = attr;
    if (st && !st->freeing) {
        struct tio_err err;
        tio_err_clear(&err);
        if (tio_state_release(st, &err))
            TIO_WARN("window freed without tierio: %s", err.msg);
    }
    return MPI_SUCCESS;
}

static void make_key(void)
{
    PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_fn, &keyval, NULL);
}

struct tio_win_state *tio_state_new(int flavor)
{
    struct tio_win_state *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->flavor = flavor;
    st->comm = MPI_COMM_NULL;
    pthread_mutex_init(&st->lock, NULL);
    return st;
}

int tio_state_set(MPI_Win win, struct tio_win_state *st)
{
    pthread_once(&key_once, make_key);
    return PMPI_Win_set_attr(win, keyval, st);
}

struct tio_win_state *tio_state_get(MPI_Win win)
{
    pthread_once(&key_once, make_key);
    void *v = NULL;
    int flag = 0;
    if (win == MPI_WIN_NULL || PMPI_Win_get_attr(win, keyval, &v, &flag) != MPI_SUCCESS)
        return NULL;
    return flag ? v : NULL;
}

int tio_state_release(struct tio_win_state *st, struct tio_err *err)
{
    int rc = TIO_OK;
    if (st->has_region)
        rc = tio_region_destroy(&st->region, err);
    if (st->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&st->comm);
    free(st->sizes);
    free(st->disp_units);
    free(st->prefix);
    free(st->shifts);
    free(st->att);
    pthread_mutex_destroy(&st->lock);
    free(st);
    return rc;
}

void tio_state_abandon(struct tio_win_state *st)
{
    st->region.hints.discard = 1;
    st->region.hints.unlink = st->region.has_file && st->region.fm.created;
    tio_state_release(st, NULL);
}
