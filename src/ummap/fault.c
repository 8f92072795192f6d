/* What a handler thread does with one fault: load an absent segment (from storage, or
 * zeros), or let the first write into a clean segment through and mark it dirty. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ummap/engine.h"
#include "ummap/memnode.h"
#include "ummap/seglock.h"
#include "util/log.h"

/* Loads go through the staging buffer in chunks of at most this many bytes. */
#define STAGE_MAX ((size_t)4 << 20)

uint64_t tio_um_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Zeros to copy a segment from when nothing of it is read: address space never written,
 * so every page of it is the kernel's one zero page, which stays in the cache. Filling a
 * 256 KiB segment from a staging buffer memset to zero first cost a fifth more. */
static const char *zeros;
static pthread_once_t zeros_once = PTHREAD_ONCE_INIT;
static void zeros_map(void) {
    void *p = mmap(NULL, STAGE_MAX, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    zeros = p == MAP_FAILED ? NULL : p;
}

static void *stage_get(struct tio_um_stage *st, size_t len) {
    if (st->cap < len) {
        free(st->buf);
        st->buf = NULL;
        st->cap = 0;
        if (posix_memalign(&st->buf, 4096, len) != 0) return NULL;
        st->cap = len;
    }
    return st->buf;
}

/* Fill [sa, sa+span) with segment i's content, protected against writes unless the fault
 * was a write. Returns 0 or errno; nothing is woken yet. */
static int load(struct tio_umap *m, size_t i, char *sa, size_t span, int write,
                struct tio_um_stage *st) {
    int wp = !write && (m->prot & PROT_WRITE);
    int backed = m->read_file || (atomic_load(&m->seg[i].flags) & TIO_SEG_WRITTEN);
    if (!backed && !write && !wp) {
        /* Read-only: the shared zero page, no memory at all. (Writable mappings cannot
         * have it: it can be protected against writes only after it is mapped, and a
         * thread that does not wait for our wake could write into it before.) */
        return tio_uffd_zero(sa, span);
    }
    if (!backed) {
        pthread_once(&zeros_once, zeros_map);
        for (size_t done = 0, n; zeros && done < span; done += n) {
            n = span - done < STAGE_MAX ? span - done : STAGE_MAX;
            int rc = tio_uffd_copy(sa + done, zeros, n, wp);
            if (rc) return rc;
        }
        if (zeros) return 0; /* (without them: zeros through the staging buffer, below) */
    }
    /* File bytes of the segment, relative to its start. */
    size_t s0 = tio_um_seg_off(m, i);
    size_t vlo = tio_um_seg_lo(m, i) - s0, vhi = tio_um_seg_hi(m, i) - s0;
    size_t chunk = span < STAGE_MAX ? span : STAGE_MAX;
    char *buf = stage_get(st, chunk);
    if (!buf) return ENOMEM;
    for (size_t done = 0; done < span; done += chunk) {
        size_t n = span - done < chunk ? span - done : chunk;
        size_t lo = vlo > done ? vlo : done, hi = vhi < done + n ? vhi : done + n, got = 0;
        if (!backed || lo >= hi) lo = hi = done; /* nothing to read here */
        if (lo < hi) {
            int rc = m->drv.ops->read(&m->drv, buf + (lo - done), hi - lo,
                                      tio_um_file_off(m, s0 + lo), &got);
            if (rc) return rc;
            atomic_fetch_add(&m->st.bytes_read, got);
        }
        /* Zeros around what was read: before the mapping, past the end of the file. */
        memset(buf, 0, lo - done);
        memset(buf + (lo - done) + got, 0, n - (lo - done) - got);
        int rc = tio_uffd_copy(sa + done, buf, n, wp);
        if (rc) return rc;
    }
    if (backed) {
        atomic_fetch_add(&m->st.seg_reads, 1);
        tio_um_count_io(1, 0);
    }
    return 0;
}

static void mark_dirty(struct tio_umap *m, size_t i) {
    atomic_store(&m->seg[i].state, TIO_SEG_DIRTY);
    m->seg[i].dirty_since = tio_um_now_ns();
    atomic_fetch_add(&m->dirty, tio_um_seg_len(m, i));
}

void tio_um_fault(struct tio_umap *m, char *addr, int write, int wp, struct tio_um_stage *st) {
    size_t i = (size_t)(addr - m->base) >> m->segshift;
    char *sa = m->base + tio_um_seg_off(m, i);
    size_t span = tio_um_seg_span(m, i);
    struct tio_umseg *s = &m->seg[i];

    tio_seglock(&s->lock);
    uint8_t state = atomic_load(&s->state);
    if (state != TIO_SEG_ABSENT) {
        if (write && (m->prot & PROT_WRITE)) {
            /* A write into a write-protected segment (or a fault that raced with the
             * load): let writes through from now on. */
            if (state == TIO_SEG_CLEAN) {
                mark_dirty(m, i);
                atomic_fetch_add(&m->st.write_faults, 1);
                if (m->ptype == UMMAP_PTYPE_PLRU) tio_um_queue_touch(m, i);
            }
            int rc = tio_uffd_wp(sa, span, 0);
            if (rc) TIO_WARN("ummap: cannot unprotect a segment: %s", strerror(rc));
        } else {
            tio_uffd_wake(sa, span);
        }
        tio_segunlock(&s->lock);
        return;
    }
    (void)wp;

    /* Room first: what the budget says is over goes, in the policy's order. */
    size_t over = tio_memnode_charge(tio_um_memnode(), span);
    if (over) tio_um_evict(m, i, over);

    /* The state and the accounting first, then the pages: the faulting thread need not
     * wait for our wake (it retries as soon as the page is there), so a store can complete,
     * and a umsync or umstats that follows it begin, before this handler gets further.
     * Seeing the new state, that umsync waits for our lock and then writes the segment. */
    atomic_fetch_add(&m->resident, span); /* before dirty: dirty <= resident throughout */
    if (write)
        mark_dirty(m, i);
    else
        atomic_store(&s->state, TIO_SEG_CLEAN);
    atomic_fetch_add(write ? &m->st.write_faults : &m->st.read_faults, 1);
    int rc;
    for (int attempt = 0; (rc = load(m, i, sa, span, write, st)) != 0; attempt++) {
        if (attempt == 4) break;
        struct timespec t = {0, 1000000L << attempt};
        nanosleep(&t, NULL);
    }
    if (rc) {
        /* Like a failed page-in of mmap: the access cannot complete, and the process gets
         * SIGBUS rather than reading wrong data. */
        tio_log(TIO_LOG_ERROR, "ummap: cannot load segment %zu (file offset %lld): %s",
                i, (long long)tio_um_file_off(m, tio_um_seg_lo(m, i)), strerror(rc));
        if (write)
            atomic_fetch_sub(&m->dirty, tio_um_seg_len(m, i));
        atomic_fetch_sub(&m->resident, span);
        atomic_store(&s->state, TIO_SEG_ABSENT);
        tio_memnode_release(tio_um_memnode(), span);
        tio_segunlock(&s->lock);
        raise(SIGBUS);
        return;
    }
    tio_um_queue_push(m, i);
    tio_uffd_wake(sa, span);
    tio_segunlock(&s->lock);
}
