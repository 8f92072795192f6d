#include "win/overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tier/filemap.h"
#include "util/error_mpi.h"
#include "util/log.h"
#include "util/node.h"
#include "util/agree.h"
#include "win/hints.h"
#include "win/translate.h"

#define HUGE_UNIT ((size_t)2 << 20)

/* Where a process's storage part is: the file region and its place in the piece. */
struct piece {
    char path[PATH_MAX];
    unsigned long long file_off;
    unsigned long long piece_off; /* from the start of the window the application sees */
    unsigned long long len;       /* 0: nothing on storage */
};

static int enabled(void)
{
#ifdef OPEN_MPI
    struct tio_win_env e;
    struct tio_err err = {0};
    if (tio_win_env(&e, &err) != TIO_OK) {
        tio_log(TIO_LOG_ERROR, "%s; storage windows are not placed over shared memory",
                err.msg);
        return 0;
    }
    return tio_rma_interposed() && e.shm_overlay;
#else
    /* MPICH's MPI_Win_create path is already fast here, and its shared-memory windows
     * may be registered with UCX, which must not see their pages replaced. */
    return 0;
#endif
}

static int all_on_one_node(MPI_Comm comm)
{
    int n;
    PMPI_Comm_size(comm, &n);
    return tio_node_size(comm) == n;
}

/* Map peer p's storage part where this process sees p's window. */
static int map_peer(const struct piece *p, char *window, struct tio_err *err)
{
    int fd = open(p->path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return tio_err_errno(err, errno, "storage_alloc_filename \"%s\": open", p->path);
    size_t page = tio_page_size(), len = (p->len + page - 1) / page * page;
    void *m = mmap(window + p->piece_off, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                   fd, (off_t)p->file_off);
    int e = errno;
    close(fd);
    if (m == MAP_FAILED)
        return tio_err_errno(err, e, "storage_alloc_filename \"%s\": mmap", p->path);
    return TIO_OK;
}

/* One call of tio_overlay_allocate: what its steps share. */
struct overlay {
    MPI_Comm comm;
    int rank, n;
    size_t unit;          /* the window starts on a multiple of it: a page, or 2 MiB */
    char **bases;         /* every process's piece of MPI's shared-memory window */
    struct piece *all;    /* every process's storage part */
    char *mine;           /* my piece */
    MPI_Aint shift;       /* my window starts this far into my piece */
    struct tio_err err;
};

/* Whether the window can be made here at all (agreed): enabled, one node, every storage
 * offset page-aligned, no discard (private mappings cannot be shared), the kernel's engine
 * (the user-level engine's memory is private to its process: peers could not load or
 * store into it). Sets the unit: 2 MiB when large pages are wanted somewhere, on a window
 * big enough for them, so that the files can be mapped with them. */
static int qualifies(struct overlay *o, const struct tio_hints *h, MPI_Aint size)
{
    const size_t page = tio_page_size();
    int flags[2] = {!enabled() || (h->alloc_type == TIO_ALLOC_STORAGE &&
                                   (h->offset % page != 0 || h->discard ||
                                    h->engine == TIO_ENGINE_UMMAP)),
                    h->alloc_type == TIO_ALLOC_STORAGE && tio_hints_hugepages(h) &&
                        (size_t)size >= HUGE_UNIT};
    if (tio_agree(o->comm, &o->err, flags, 2) || flags[0] || !all_on_one_node(o->comm))
        return 0;
    o->unit = flags[1] ? HUGE_UNIT : page;
    return 1;
}

/* Every process's size and displacement unit, and room for the rest. 0, or 1 when out of
 * memory somewhere (agreed). */
static int gather_sizes(struct overlay *o, struct tio_win_state *st, MPI_Aint size,
                        MPI_Aint disp_unit)
{
    size_t n = (size_t)o->n;
    st->nprocs = o->n;
    st->sizes = calloc(n, sizeof *st->sizes);
    st->disp_units = calloc(n, sizeof *st->disp_units);
    st->shifts = calloc(n, sizeof *st->shifts);
    o->bases = calloc(n, sizeof *o->bases);
    o->all = calloc(n, sizeof *o->all);
    int flag = !st->sizes || !st->disp_units || !st->shifts || !o->bases || !o->all;
    if (tio_agree(o->comm, &o->err, &flag, 1) || flag)
        return 1;
    PMPI_Allgather(&size, 1, MPI_AINT, st->sizes, 1, MPI_AINT, o->comm);
    PMPI_Allgather(&disp_unit, 1, MPI_AINT, st->disp_units, 1, MPI_AINT, o->comm);
    return 0;
}

/* MPI's shared-memory window, one unit more than asked for: room to start the window on
 * a unit boundary. On tierio's own communicator, whose errors return: if MPI cannot make
 * one here (e.g. osc sm deselected), MPI_Win_create still can. 0, or 1 when it could not
 * (agreed; nothing left). */
static int allocate_shared(struct overlay *o, struct tio_win_state *st, MPI_Info info,
                           MPI_Aint size, MPI_Aint disp_unit, MPI_Win *win)
{
    MPI_Info shinfo;
    if (info == MPI_INFO_NULL)
        PMPI_Info_create(&shinfo);
    else
        PMPI_Info_dup(info, &shinfo);
    PMPI_Info_set(shinfo, "alloc_shared_noncontig", "true");
    MPI_Aint asked = (MPI_Aint)(((size_t)size + o->unit - 1) / o->unit * o->unit + o->unit);
    *win = MPI_WIN_NULL;
    PMPI_Comm_set_errhandler(st->comm, MPI_ERRORS_RETURN);
#if MPI_VERSION >= 4
    int rc = PMPI_Win_allocate_shared_c(asked, disp_unit, shinfo, st->comm, &o->mine, win);
#else
    int rc = PMPI_Win_allocate_shared(asked, (int)disp_unit, shinfo, st->comm, &o->mine, win);
#endif
    PMPI_Info_free(&shinfo);
    int flag = rc != MPI_SUCCESS;
    if (tio_agree(o->comm, &o->err, &flag, 1) || flag) {
        TIO_INFO("MPI cannot make a shared-memory window here; using MPI_Win_create");
        if (*win != MPI_WIN_NULL)
            PMPI_Win_free(win);
        return 1;
    }
    return 0;
}

/* My window starts `shift` bytes into my piece: where the file mapping (at `at` in the
 * window) lines up with the file offset modulo the unit, so that it can be mapped with
 * large folios. Each process maps the segment at its own address, so each has its own
 * shift; peers reach my window at my shift into my piece. It must be a whole number of my
 * displacement units: 0, or 1 when it is not somewhere (agreed; the window freed). */
static int find_shift(struct overlay *o, struct tio_win_state *st, MPI_Aint size,
                      MPI_Aint disp_unit, MPI_Win *win)
{
    size_t at = 0;
    uint64_t file_off = 0;
    if (st->region.has_file) {
        at = st->region.hints.order == TIO_ORDER_STORAGE_FIRST
                 ? 0 : (size_t)size - st->region.fm.length;
        file_off = st->region.fm.offset;
    }
    o->shift = (MPI_Aint)((file_off - at - (uintptr_t)o->mine) & (o->unit - 1));
    for (int i = 0; i < o->n; i++) {
        MPI_Aint sz;
        int du;
        PMPI_Win_shared_query(*win, i, &sz, &du, &o->bases[i]);
    }
    PMPI_Allgather(&o->shift, 1, MPI_AINT, st->shifts, 1, MPI_AINT, o->comm);
    int flag = o->shift % disp_unit != 0;
    if (tio_agree(o->comm, &o->err, &flag, 1) || flag) {
        TIO_INFO("shared-memory pieces do not line up with the displacement unit; using "
                 "MPI_Win_create");
        PMPI_Win_free(win);
        return 1;
    }
    return 0;
}

/* Tell everybody where my storage part is, map theirs over their pieces, and register the
 * shifts with the one-sided wrappers. Errors in o->err (not agreed yet). */
static void map_peers(struct overlay *o, struct tio_win_state *st, MPI_Win win)
{
    struct piece me;
    memset(&me, 0, sizeof me);
    if (st->region.has_file) {
        snprintf(me.path, sizeof me.path, "%s", st->region.fm.path);
        me.file_off = st->region.fm.offset;
        me.piece_off = (unsigned long long)(st->region.fm.addr - (o->mine + o->shift));
        me.len = st->region.fm.length;
    }
    PMPI_Allgather(&me, (int)sizeof me, MPI_BYTE, o->all, (int)sizeof me, MPI_BYTE, o->comm);
    for (int i = 0; i < o->n && !o->err.cls; i++)
        if (i != o->rank && o->all[i].len)
            map_peer(&o->all[i], o->bases[i] + st->shifts[i], &o->err);
    if (!o->err.cls && tio_xlate_register(win, o->n, st->shifts, st->disp_units))
        tio_err_set(&o->err, TIO_E_NOMEM,
                    "out of memory, or more than 1024 storage windows at once on MPI's "
                    "shared-memory window (TIERIO_SHM_OVERLAY=0 lifts the limit)");
}

/* Not here after all: the caller makes the region again, with its own memory. */
static int not_here(struct overlay *o, struct tio_win_state *st)
{
    if (st->has_region) {
        /* Keep the file: the other processes may have it open already. Whether we made
         * it goes on to the caller's region, for the cleanup after a later error. */
        st->file_created = st->region.has_file && st->region.fm.created;
        st->region.hints.discard = 1;
        st->region.hints.unlink = 0;
        tio_region_destroy(&st->region, NULL);
        st->has_region = 0;
    }
    free(o->bases);
    free(o->all);
    free(st->sizes);
    free(st->disp_units);
    free(st->shifts);
    st->sizes = NULL;
    st->disp_units = NULL;
    st->shifts = NULL;
    st->nprocs = 0;
    return MPI_SUCCESS;
}

/* An agreed error after MPI's window was made: everything undone, the error raised. */
static int fail(struct overlay *o, struct tio_win_state *st, MPI_Win *win)
{
    free(o->bases);
    free(o->all);
    tio_xlate_unregister(*win);
    PMPI_Win_free(win); /* unmaps MPI's segment, and our file mappings over it */
    tio_state_abandon(st);
    return tio_err_raise_comm(o->comm, &o->err);
}

int tio_overlay_allocate(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                         const struct tio_hints *h, uint64_t budget,
                         struct tio_win_state *st, void *baseptr, MPI_Win *win, int *made)
{
    struct overlay o = {.comm = comm};
    tio_err_clear(&o.err);
    *made = 0;
    if (!qualifies(&o, h, size))
        return MPI_SUCCESS;
    PMPI_Comm_rank(comm, &o.rank);
    PMPI_Comm_size(comm, &o.n);
    if (gather_sizes(&o, st, size, disp_unit))
        return not_here(&o, st);

    /* Files first: their errors are the application's to hear, before MPI's window. */
    if (!tio_region_prepare(&st->region, (size_t)size, h, budget, &o.err))
        st->has_region = 1;
    if (tio_agree(comm, &o.err, NULL, 0)) {
        free(o.bases);
        free(o.all);
        tio_state_abandon(st);
        return tio_err_raise_comm(comm, &o.err);
    }
    if (allocate_shared(&o, st, info, size, disp_unit, win) ||
        find_shift(&o, st, size, disp_unit, win))
        return not_here(&o, st);
    tio_region_place(&st->region, o.mine + o.shift, &o.err);
    if (tio_agree(comm, &o.err, NULL, 0))
        return fail(&o, st, win);
    map_peers(&o, st, *win);
    if (tio_agree(comm, &o.err, NULL, 0))
        return fail(&o, st, win);
    free(o.bases);
    free(o.all);
    st->overlay = 1;
    st->size = size;
    st->base = o.mine + o.shift;
    *(void **)baseptr = st->base;
    *made = 1;
    TIO_DEBUG("storage window on MPI's shared-memory window (%lld bytes, shift %lld)",
              (long long)size, (long long)o.shift);
    return MPI_SUCCESS;
}
