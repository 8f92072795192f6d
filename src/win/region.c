#include "win/region.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "ummap.h"
#include "util/log.h"

static size_t round_up(size_t x, size_t p) { return (x + p - 1) / p * p; }

static struct tio_filemap_opts opts_of(const struct tio_hints *h)
{
    struct tio_filemap_opts o = {
        .perm = h->file_perm,
        .private_map = h->discard,
        .access_style = h->access_style,
        .hugepages = tio_hints_hugepages(h),
        .striping = h->striping_factor || h->striping_unit,
    };
    return o;
}

/* Bytes of an N-byte window that go to storage, before page rounding. */
static size_t storage_share(size_t n, const struct tio_hints *h, uint64_t mem_budget)
{
    if (h->factor_auto) {
        uint64_t mem = mem_budget < n ? mem_budget : n;
        return n - (size_t)mem;
    }
    double s = (double)n * h->factor;
    return s >= (double)n ? n : (size_t)s;
}

/* How many bytes of the window go to storage (sets r->factor), or -1 with err set. */
static long long layout(struct tio_region *r, size_t size, const struct tio_hints *h,
                        uint64_t mem_budget, struct tio_err *err)
{
    const size_t page = tio_page_size();
    const size_t delta = h->offset % page;
    size_t want = h->alloc_type == TIO_ALLOC_STORAGE ? storage_share(size, h, mem_budget) : 0;
    size_t sto = 0;

    /* The boundary between memory and storage must fall on a page boundary, and the
     * file pages must line up with virtual pages. */
    if (want > 0 && want < size) {
        if (h->order == TIO_ORDER_MEMORY_FIRST) {
            if (delta)
                return -tio_err_set(err, TIO_E_INFO_VALUE,
                                   "hint storage_alloc_offset=%llu is invalid for a combined "
                                   "window with storage_alloc_order=memory_first: it must be "
                                   "a multiple of the page size (%zu), because the storage "
                                   "part starts on a page boundary",
                                   (unsigned long long)h->offset, page);
            /* Memory rounds down, so storage gets at least what was asked for (and the
             * memory part never exceeds an "auto" budget). */
            size_t mem = (size - want) / page * page;
            sto = size - mem;
        } else {
            sto = round_up(delta + want, page) - delta;
            if (sto > size)
                sto = size;
        }
    } else {
        sto = want;
    }
    r->factor = size ? (double)sto / (double)size : (h->factor_auto ? 0.0 : h->factor);
    return (long long)sto;
}

/* An anonymous read-write range of len bytes. With align (a power of two), placed so that
 * its start is congruent to want modulo align: then the file part can be mapped by PMD
 * when the kernel gives the file large folios. */
static char *reserve(size_t len, size_t align, uintptr_t want)
{
    size_t extra = align ? align : 0;
    char *raw = mmap(NULL, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    if (!align)
        return raw;
    char *at = raw + ((want - (uintptr_t)raw) & (align - 1));
    if (at > raw)
        munmap(raw, (size_t)(at - raw));
    if (raw + len + extra > at + len)
        munmap(at + len, (size_t)(raw + len + extra - (at + len)));
    return at;
}

#define HUGE_ALIGN ((size_t)2 << 20)

static int um_error(struct tio_err *err, int rc, const char *what, const struct tio_region *r)
{
    return tio_err_errno(err, rc, "%s of \"%s\" (storage_alloc_engine=ummap)", what,
                         r->hints.filename);
}

/* The storage part through the user-level engine, over [at, at+sto) of our range. */
static int map_user_level(struct tio_region *r, char *at, size_t sto, struct tio_err *err)
{
    const struct tio_hints *h = &r->hints;
    tio_ummap_opts_t o = TIO_UMMAP_OPTS_INIT;
    o.size = sto;
    o.seg_size = (size_t)h->segsize;
    o.prot = PROT_READ | PROT_WRITE;
    o.fd = r->fm.fd;
    o.offset = (off_t)h->offset;
    o.flush_interval = h->flush_interval == UINT_MAX ? UMMAP_NO_FLUSH : h->flush_interval;
    o.read_file = h->readfile;
    o.ptype = h->policy;
    o.driver = h->driver[0] ? h->driver : NULL;
    o.sync_file = h->sync_file;
    /* Memory and file line up page by page, as with the kernel's mapping: the same layout,
     * and direct I/O at any offset. */
    o.fixed_addr = at;
    o.congruent = 1;
    int rc = tio_ummap_open(&o, &r->um);
    if (rc)
        return um_error(err, rc, "cannot map", r);
    return TIO_OK;
}

long long tio_region_split(struct tio_region *r, size_t size, const struct tio_hints *h,
                           uint64_t mem_budget, struct tio_err *err)
{
    r->hints = *h;
    r->size = size;
    return layout(r, size, h, mem_budget, err);
}

int tio_region_create(struct tio_region *r, size_t size, const struct tio_hints *h,
                      uint64_t mem_budget, struct tio_err *err)
{
    memset(r, 0, sizeof *r);
    r->hints = *h;
    r->size = size;
    const size_t page = tio_page_size();
    const int user_level = h->engine == TIO_ENGINE_UMMAP;
    const size_t delta = h->offset % page;
    struct tio_filemap_opts o = opts_of(h);
    if (user_level)
        o.hugepages = 0;
    long long l = layout(r, size, h, mem_budget, err);
    if (l < 0)
        return err ? err->cls : TIO_E_OTHER;
    const size_t sto = (size_t)l;

    /* One anonymous range for the whole window; the file is laid over its storage part.
     * When storage comes first (or is everything), the file's page starts `delta` bytes
     * before the window; with memory first, the storage part starts on a page. */
    const int file_first = h->order == TIO_ORDER_STORAGE_FIRST || sto == size;
    const size_t lead = sto && file_first ? delta : 0;
    const size_t at = sto && !file_first ? size - sto : 0; /* file mapping in the range */
    r->reserve_len = round_up(lead + (size ? size : 1), page);
    uintptr_t want = (uintptr_t)(h->offset - (sto ? (file_first ? delta : 0) : 0)) - at;

    /* The file first: a full disk is the error to report, not the address space. */
    int rc = TIO_OK;
    if (sto) {
        rc = tio_filemap_open(&r->fm, h->filename, h->offset, sto, &o, err);
        if (rc)
            return rc;
        r->has_file = 1;
    }
    r->reserve = reserve(r->reserve_len, sto && o.hugepages ? HUGE_ALIGN : 0, want);
    if (!r->reserve)
        rc = tio_err_errno(err, errno, "cannot reserve %zu bytes of address space",
                           r->reserve_len);
    else if (sto && user_level)
        rc = map_user_level(r, r->reserve + at, sto, err);
    else if (sto)
        rc = tio_filemap_map(&r->fm, r->reserve + at, &o, err);
    if (rc) {
        if (r->reserve)
            munmap(r->reserve, r->reserve_len);
        if (r->has_file)
            tio_filemap_close(&r->fm, r->fm.created, 1);
        r->has_file = 0;
        r->reserve = NULL;
        return rc;
    }
    r->base = r->reserve + lead;
    if (sto == 0) /* everything in memory: no file is touched */
        return TIO_OK;
    r->sync_addr = user_level ? r->um : r->fm.addr;
    r->sync_len = sto;
    TIO_DEBUG("region %p: %zu bytes, %zu on \"%s\"@%llu, factor %.4f", (void *)r->base,
              size, sto, h->filename, (unsigned long long)h->offset, r->factor);
    return TIO_OK;
}

int tio_region_prepare(struct tio_region *r, size_t size, const struct tio_hints *h,
                       uint64_t mem_budget, struct tio_err *err)
{
    memset(r, 0, sizeof *r);
    r->hints = *h;
    r->size = size;
    r->borrowed = 1;
    if (h->offset % tio_page_size())
        return tio_err_set(err, TIO_E_ARG, "internal: a borrowed range needs an aligned offset");
    long long l = layout(r, size, h, mem_budget, err);
    if (l < 0)
        return err ? err->cls : TIO_E_OTHER;
    if (l == 0)
        return TIO_OK;
    struct tio_filemap_opts o = opts_of(h);
    int rc = tio_filemap_open(&r->fm, h->filename, h->offset, (size_t)l, &o, err);
    if (rc == TIO_OK)
        r->has_file = 1;
    return rc;
}

int tio_region_place(struct tio_region *r, char *at, struct tio_err *err)
{
    r->base = at;
    if (!r->has_file)
        return TIO_OK;
    struct tio_filemap_opts o = opts_of(&r->hints);
    size_t sto = r->fm.length;
    char *where = r->hints.order == TIO_ORDER_STORAGE_FIRST ? at : at + (r->size - sto);
    int rc = tio_filemap_map(&r->fm, where, &o, err);
    if (rc)
        return rc;
    r->sync_addr = r->fm.addr;
    r->sync_len = sto;
    return TIO_OK;
}

int tio_region_reserve_shared(struct tio_region *r, size_t size, size_t prefix,
                              const struct tio_hints *h, struct tio_err *err)
{
    memset(r, 0, sizeof *r);
    r->hints = *h;
    r->size = size;
    r->factor = 1.0;
    struct tio_filemap_opts o = opts_of(h);
    /* Every process reserves its own piece; the caller waits for all before mapping. */
    int rc = tio_filemap_open(&r->fm, h->filename, h->offset + prefix, size, &o, err);
    if (rc)
        return rc;
    r->has_file = 1;
    return TIO_OK;
}

int tio_region_map_shared(struct tio_region *r, size_t prefix, size_t total,
                          struct tio_err *err)
{
    struct tio_filemap_opts o = opts_of(&r->hints);
    r->fm.offset = r->hints.offset;
    r->fm.length = total;
    int rc = tio_filemap_map(&r->fm, NULL, &o, err);
    if (rc)
        return rc;
    r->reserve = r->fm.map;
    r->reserve_len = r->fm.map_len;
    r->base = r->fm.addr + prefix;
    r->sync_addr = r->fm.addr;
    r->sync_len = total;
    return TIO_OK;
}

int tio_region_sync(struct tio_region *r, struct tio_err *err)
{
    if (!r->has_file)
        return TIO_OK;
    return tio_region_sync_range(r, r->sync_addr, r->sync_len, err);
}

int tio_region_sync_range(struct tio_region *r, char *addr, size_t len, struct tio_err *err)
{
    if (!r->um)
        return tio_filemap_sync_range(&r->fm, addr, len, err);
    int rc = umsync(r->um, 0);
    return rc ? um_error(err, rc, "cannot write back", r) : TIO_OK;
}

int tio_region_destroy(struct tio_region *r, struct tio_err *err)
{
    int rc = TIO_OK;
    if (r->um) {
        /* Written back unless discarded; if that fails, the error is reported and the
         * window still goes, as MPI_Win_free must. */
        int urc = umunmap(r->um, !r->hints.discard);
        if (urc) {
            rc = um_error(err, urc, "cannot write back", r);
            umunmap(r->um, 0);
        }
    } else if (r->has_file && !r->hints.discard && r->fm.map)
        rc = tio_region_sync(r, err);
    if (r->reserve && !r->borrowed)
        munmap(r->reserve, r->reserve_len);
    if (r->has_file)
        tio_filemap_close(&r->fm, r->hints.unlink, 1);
    memset(r, 0, sizeof *r);
    return rc;
}
