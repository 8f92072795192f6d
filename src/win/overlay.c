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
#include "util/node.h"
#include "util/log.h"
#include "util/agree.h"
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
    const char *e = getenv("TIERIO_SHM_OVERLAY");
    return tio_rma_interposed() && (!e || strcmp(e, "0") != 0);
#else
    /* MPICH's MPI_Win_create path is already fast here, and its shared-memory windows
     * may be registered with UCX, which must not see their pages replaced. */
    return 0;
#endif
}

static int all_on_one_node(MPI_Comm comm)
{
    MPI_Comm node;
    int n, nn = -1;
    PMPI_Comm_size(comm, &n);
    if (tio_node_comm(comm, &node) != MPI_SUCCESS)
        return 0;
    PMPI_Comm_size(node, &nn);
    PMPI_Comm_free(&node);
    return nn == n;
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

int tio_overlay_allocate(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                         const struct tio_hints *h, uint64_t budget,
                         struct tio_win_state *st, void *baseptr, MPI_Win *win, int *made)
{
    const size_t page = tio_page_size();
    struct tio_err err;
    tio_err_clear(&err);
    *made = 0;
    /* Qualifies: enabled, one node, every storage offset page-aligned, no discard
     * (private mappings cannot be shared), the kernel's engine (the user-level engine's
     * memory is private to its process: peers could not load or store into it). */
    int flags[2] = {!enabled() || (h->alloc_type == TIO_ALLOC_STORAGE &&
                                   (h->offset % page != 0 || h->discard ||
                                    h->engine == TIO_ENGINE_UMMAP)),
                    /* large pages wanted somewhere, on a window big enough for them */
                    h->alloc_type == TIO_ALLOC_STORAGE && tio_hints_hugepages(h) &&
                        (size_t)size >= HUGE_UNIT};
    if (tio_agree(comm, &err, flags, 2) || flags[0] || !all_on_one_node(comm))
        return MPI_SUCCESS;
    /* Windows start on a multiple of unit: a page, or 2 MiB so that the files can be
     * mapped with large pages (the pieces are then multiples of 2 MiB too). */
    const size_t unit = flags[1] ? HUGE_UNIT : page;

    int rank, n;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &n);
    st->nprocs = n;
    st->sizes = calloc((size_t)n, sizeof *st->sizes);
    st->disp_units = calloc((size_t)n, sizeof *st->disp_units);
    st->shifts = calloc((size_t)n, sizeof *st->shifts);
    char **bases = calloc((size_t)n, sizeof *bases);
    struct piece *all = calloc((size_t)n, sizeof *all);
    flags[0] = !st->sizes || !st->disp_units || !st->shifts || !bases || !all;
    if (tio_agree(comm, &err, flags, 1) || flags[0])
        goto not_here;
    PMPI_Allgather(&size, 1, MPI_AINT, st->sizes, 1, MPI_AINT, comm);
    PMPI_Allgather(&disp_unit, 1, MPI_AINT, st->disp_units, 1, MPI_AINT, comm);

    /* Files first: their errors are the application's to hear, before MPI's window. */
    if (!tio_region_prepare(&st->region, (size_t)size, h, budget, &err))
        st->has_region = 1;
    if (tio_agree(comm, &err, NULL, 0)) {
        free(bases);
        free(all);
        tio_state_abandon(st);
        return tio_err_raise_comm(comm, &err);
    }

    /* One unit more than asked for: room to start the window on a unit boundary. */
    MPI_Info shinfo;
    if (info == MPI_INFO_NULL)
        PMPI_Info_create(&shinfo);
    else
        PMPI_Info_dup(info, &shinfo);
    PMPI_Info_set(shinfo, "alloc_shared_noncontig", "true");
    MPI_Aint asked = (MPI_Aint)(((size_t)size + unit - 1) / unit * unit + unit);
    char *mine = NULL;
    /* On tierio's own communicator, whose errors return: if MPI cannot make a
     * shared-memory window here (e.g. osc sm deselected), MPI_Win_create still can. */
    *win = MPI_WIN_NULL;
    PMPI_Comm_set_errhandler(st->comm, MPI_ERRORS_RETURN);
#if MPI_VERSION >= 4
    int rc = PMPI_Win_allocate_shared_c(asked, disp_unit, shinfo, st->comm, &mine, win);
#else
    int rc = PMPI_Win_allocate_shared(asked, (int)disp_unit, shinfo, st->comm, &mine, win);
#endif
    PMPI_Info_free(&shinfo);
    flags[0] = rc != MPI_SUCCESS;
    if (tio_agree(comm, &err, flags, 1) || flags[0]) {
        TIO_INFO("MPI cannot make a shared-memory window here; using MPI_Win_create");
        if (*win != MPI_WIN_NULL)
            PMPI_Win_free(win);
        goto not_here;
    }

    /* My window starts `shift` bytes into my piece: where the file mapping (at `at` in
     * the window) lines up with the file offset modulo the unit, so that it can be mapped
     * with large folios. Each process maps the segment at its own address, so each has
     * its own shift; peers reach my window at my shift into my piece. It must be a whole
     * number of my displacement units. */
    size_t at = 0;
    uint64_t file_off = 0;
    if (st->region.has_file) {
        at = st->region.hints.order == TIO_ORDER_STORAGE_FIRST
                 ? 0 : (size_t)size - st->region.fm.length;
        file_off = st->region.fm.offset;
    }
    MPI_Aint shift = (MPI_Aint)((file_off - at - (uintptr_t)mine) & (unit - 1));
    for (int i = 0; i < n; i++) {
        MPI_Aint sz;
        int du;
        PMPI_Win_shared_query(*win, i, &sz, &du, &bases[i]);
    }
    PMPI_Allgather(&shift, 1, MPI_AINT, st->shifts, 1, MPI_AINT, comm);
    flags[0] = shift % disp_unit != 0;
    if (tio_agree(comm, &err, flags, 1) || flags[0]) {
        TIO_INFO("shared-memory pieces do not line up with the displacement unit; using "
                 "MPI_Win_create");
        PMPI_Win_free(win);
        goto not_here;
    }
    tio_region_place(&st->region, mine + shift, &err);
    if (tio_agree(comm, &err, NULL, 0))
        goto fail;

    /* Tell everybody where my storage part is, then map theirs. */
    struct piece me;
    memset(&me, 0, sizeof me);
    if (st->region.has_file) {
        snprintf(me.path, sizeof me.path, "%s", st->region.fm.path);
        me.file_off = st->region.fm.offset;
        me.piece_off = (unsigned long long)(st->region.fm.addr - (mine + shift));
        me.len = st->region.fm.length;
    }
    PMPI_Allgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, comm);
    for (int i = 0; i < n && !err.cls; i++)
        if (i != rank && all[i].len)
            map_peer(&all[i], bases[i] + st->shifts[i], &err);
    if (!err.cls && tio_xlate_register(*win, n, st->shifts, st->disp_units))
        tio_err_set(&err, TIO_E_NOMEM,
                    "out of memory, or more than 1024 storage windows at once on MPI's "
                    "shared-memory window (TIERIO_SHM_OVERLAY=0 lifts the limit)");
    if (tio_agree(comm, &err, NULL, 0))
        goto fail;
    free(bases);
    free(all);
    st->overlay = 1;
    st->size = size;
    st->base = mine + shift;
    *(void **)baseptr = st->base;
    *made = 1;
    TIO_DEBUG("storage window on MPI's shared-memory window (%lld bytes, shift %lld)",
              (long long)size, (long long)shift);
    return MPI_SUCCESS;
not_here: /* the caller makes the region again, with its own memory */
    if (st->has_region) {
        /* Keep the file: the other processes may have it open already. Whether we made
         * it goes on to the caller's region, for the cleanup after a later error. */
        st->file_created = st->region.has_file && st->region.fm.created;
        st->region.hints.discard = 1;
        st->region.hints.unlink = 0;
        tio_region_destroy(&st->region, NULL);
        st->has_region = 0;
    }
    free(bases);
    free(all);
    free(st->sizes);
    free(st->disp_units);
    free(st->shifts);
    st->sizes = NULL;
    st->disp_units = NULL;
    st->shifts = NULL;
    st->nprocs = 0;
    return MPI_SUCCESS;
fail:
    free(bases);
    free(all);
    tio_xlate_unregister(*win);
    PMPI_Win_free(win); /* unmaps MPI's segment, and our file mappings over it */
    tio_state_abandon(st);
    return tio_err_raise_comm(comm, &err);
}
