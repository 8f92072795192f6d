#include "win/region.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "util/log.h"

static size_t round_up(size_t x, size_t p) { return (x + p - 1) / p * p; }

static struct tio_filemap_opts opts_of(const struct tio_hints *h)
{
    struct tio_filemap_opts o = {
        .perm = h->file_perm,
        .private_map = h->discard,
        .access_style = h->access_style,
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

int tio_region_create(struct tio_region *r, size_t size, const struct tio_hints *h,
                      uint64_t mem_budget, struct tio_err *err)
{
    memset(r, 0, sizeof *r);
    r->hints = *h;
    r->size = size;
    const size_t page = tio_page_size();
    const size_t delta = h->offset % page;
    struct tio_filemap_opts o = opts_of(h);
    long long l = layout(r, size, h, mem_budget, err);
    if (l < 0)
        return err ? err->cls : TIO_E_OTHER;
    size_t sto = (size_t)l;
    if (sto == 0) { /* everything in memory: no file is touched */
        r->reserve_len = round_up(size ? size : 1, page);
        r->reserve = mmap(NULL, r->reserve_len, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (r->reserve == MAP_FAILED) {
            r->reserve = NULL;
            return tio_err_errno(err, errno, "cannot allocate %zu bytes of memory", size);
        }
        r->base = r->reserve;
        return TIO_OK;
    }

    int rc = tio_filemap_open(&r->fm, h->filename, h->offset, sto, &o, err);
    if (rc)
        return rc;
    r->has_file = 1;
    if (sto == size) {
        rc = tio_filemap_map(&r->fm, NULL, &o, err);
        if (rc)
            goto fail;
        r->reserve = r->fm.map;
        r->reserve_len = r->fm.map_len;
        r->base = r->fm.addr;
    } else {
        /* Reserve the whole range as memory, then lay the file over its storage part. */
        size_t lead = h->order == TIO_ORDER_STORAGE_FIRST ? delta : 0;
        r->reserve_len = round_up(lead + size, page);
        r->reserve = mmap(NULL, r->reserve_len, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (r->reserve == MAP_FAILED) {
            r->reserve = NULL;
            rc = tio_err_errno(err, errno, "cannot reserve %zu bytes of address space",
                               r->reserve_len);
            goto fail;
        }
        char *where = h->order == TIO_ORDER_STORAGE_FIRST ? r->reserve
                                                          : r->reserve + (size - sto);
        rc = tio_filemap_map(&r->fm, where, &o, err);
        if (rc)
            goto fail;
        r->base = r->reserve + lead;
    }
    r->sync_addr = r->fm.addr;
    r->sync_len = sto;
    TIO_DEBUG("region %p: %zu bytes, %zu on \"%s\"@%llu, factor %.4f", (void *)r->base,
              size, sto, h->filename, (unsigned long long)h->offset, r->factor);
    return TIO_OK;
fail:
    if (r->reserve && r->reserve != r->fm.map)
        munmap(r->reserve, r->reserve_len);
    tio_filemap_close(&r->fm, r->fm.created, r->reserve != NULL && r->reserve != r->fm.map);
    r->has_file = 0;
    r->reserve = NULL;
    return rc;
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
    return tio_filemap_sync_range(&r->fm, r->sync_addr, r->sync_len, err);
}

int tio_region_destroy(struct tio_region *r, struct tio_err *err)
{
    int rc = TIO_OK;
    if (r->has_file && !r->hints.discard && r->fm.map)
        rc = tio_region_sync(r, err);
    if (r->reserve && !r->borrowed)
        munmap(r->reserve, r->reserve_len);
    if (r->has_file)
        tio_filemap_close(&r->fm, r->hints.unlink, 1);
    memset(r, 0, sizeof *r);
    return rc;
}
