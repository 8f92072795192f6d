#include "win/shared_combined.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/agree.h"

/* Every process's split, and where its parts go. */
struct part {
    unsigned long long mem, sto;  /* bytes in memory / on storage */
    unsigned long long mem_off;   /* in the shared-memory object */
    unsigned long long sto_off;   /* in the file, from storage_alloc_offset */
};

static int map_fixed(char *at, size_t len, int fd, uint64_t off, const char *what,
                     struct tio_err *err)
{
    if (len == 0)
        return TIO_OK;
    if (mmap(at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t)off) ==
        MAP_FAILED)
        return tio_err_errno(err, errno, "MPI_Win_allocate_shared: mmap of %s", what);
    return TIO_OK;
}

/* Rank 0 makes the shared-memory object; everybody opens it; it is removed at once. */
static int open_shm(MPI_Comm comm, size_t len, struct tio_err *err)
{
    static int seq;
    char name[64] = "";
    int rank, fd = -1, rc;
    PMPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        snprintf(name, sizeof name, "/tierio.%ld.%d", (long)getpid(),
                 __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0)
            tio_err_errno(err, errno, "MPI_Win_allocate_shared: shm_open %s", name);
        else if (len && (rc = posix_fallocate(fd, 0, (off_t)len)) != 0)
            /* reserved now: a full /dev/shm is an error here, not a SIGBUS later */
            tio_err_errno(err, rc, "MPI_Win_allocate_shared: %zu bytes of shared memory",
                          len);
    }
    PMPI_Bcast(name, (int)sizeof name, MPI_CHAR, 0, comm);
    if (rank != 0 && name[0]) {
        fd = shm_open(name, O_RDWR, 0);
        if (fd < 0)
            tio_err_errno(err, errno, "MPI_Win_allocate_shared: shm_open %s", name);
    }
    tio_agree(comm, err, NULL, 0); /* after this nobody needs the name any more */
    if (rank == 0 && name[0])
        shm_unlink(name);
    if (err->cls && fd >= 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int tio_shared_combined(struct tio_win_state *st, MPI_Comm comm, const struct tio_hints *h,
                        uint64_t budget, struct tio_err *err)
{
    const size_t page = tio_page_size();
    const int n = st->nprocs;
    int rank;
    PMPI_Comm_rank(comm, &rank);
    size_t size = (size_t)st->sizes[rank];
    struct tio_region *r = &st->region;
    struct part me = {0, 0, 0, 0}, *all = calloc((size_t)n, sizeof *all);
    int shm = -1, ffd = -1;
    size_t total_mem = 0, total_sto = 0, total = st->prefix[n];

    r->hints = *h;
    if (!all)
        tio_err_set(err, TIO_E_NOMEM, "out of memory");
    else if (size % page || h->offset % page)
        tio_err_set(err, TIO_E_INFO_VALUE,
                    "MPI_Win_allocate_shared with storage_alloc_factor below 1 needs every "
                    "process's size and storage_alloc_offset to be multiples of the page "
                    "size (%zu): memory and storage parts meet on page boundaries "
                    "(size %zu, offset %llu here)", page, size,
                    (unsigned long long)h->offset);
    else {
        long long sto = tio_region_split(r, size, h, budget, err);
        if (sto >= 0) {
            me.sto = (unsigned long long)sto;
            me.mem = size - me.sto;
        }
    }
    if (tio_agree(comm, err, NULL, 0))
        goto out;
    PMPI_Allgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, comm);
    for (int i = 0; i < n; i++) {
        all[i].mem_off = total_mem;
        all[i].sto_off = total_sto;
        total_mem += all[i].mem;
        total_sto += all[i].sto;
    }

    /* My storage part reserved in the file; the memory parts in one shared object. */
    struct tio_filemap_opts o = {.perm = h->file_perm, .access_style = h->access_style};
    if (tio_filemap_open(&r->fm, h->filename, h->offset + all[rank].sto_off, me.sto, &o,
                         err) == TIO_OK)
        r->has_file = 1;
    if (tio_agree(comm, err, NULL, 0))
        goto out;
    shm = open_shm(comm, total_mem, err);
    if (err->cls)
        goto out;

    /* One range, the same layout in every process. */
    r->reserve_len = total ? total : page;
    r->reserve = mmap(NULL, r->reserve_len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r->reserve == MAP_FAILED) {
        r->reserve = NULL;
        tio_err_errno(err, errno, "cannot reserve %zu bytes of address space", total);
    }
    ffd = r->reserve ? open(h->filename, O_RDWR | O_CLOEXEC) : -1;
    if (r->reserve && ffd < 0)
        tio_err_errno(err, errno, "storage_alloc_filename \"%s\": open", h->filename);
    const int sto_first = h->order == TIO_ORDER_STORAGE_FIRST;
    for (int i = 0; i < n && !err->cls; i++) {
        char *piece = r->reserve + st->prefix[i];
        char *mem_at = piece + (sto_first ? all[i].sto : 0);
        char *sto_at = piece + (sto_first ? 0 : all[i].mem);
        if (!map_fixed(mem_at, all[i].mem, shm, all[i].mem_off, "shared memory", err))
            map_fixed(sto_at, all[i].sto, ffd, h->offset + all[i].sto_off, h->filename, err);
    }
    tio_agree(comm, err, NULL, 0);
out:
    if (ffd >= 0)
        close(ffd);
    if (shm >= 0)
        close(shm);
    free(all);
    if (!err->cls) {
        st->has_region = 1;
        st->shared_base = r->reserve;
        r->base = r->reserve + st->prefix[rank];
        r->size = size;
        r->sync_addr = r->reserve; /* msync of the shared-memory parts is a no-op */
        r->sync_len = total_sto ? r->reserve_len : 0;
        r->fm.map = r->reserve; /* the file is mapped (in pieces) in this range */
        r->fm.addr = r->reserve + st->prefix[rank] + (h->order == TIO_ORDER_STORAGE_FIRST
                                                          ? 0 : me.mem);
    } else if (r->has_file || r->reserve) {
        st->has_region = 1; /* for the caller's abandon: unmap, close, remove */
    }
    return err->cls;
}
