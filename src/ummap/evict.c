/* Eviction: dropping segments from memory, writing the dirty ones back first. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "ummap/engine.h"
#include "ummap/memnode.h"
#include "ummap/seglock.h"
#include "util/log.h"

int tio_um_drop_locked(struct tio_umap *m, size_t i) {
    struct tio_umseg *s = &m->seg[i];
    uint8_t state = atomic_load(&s->state);
    if (state == TIO_SEG_ABSENT) return 0;
    if (atomic_load(&s->flags) & TIO_SEG_INFLIGHT) return EBUSY;
    char *sa = m->base + tio_um_seg_off(m, i);
    size_t span = tio_um_seg_span(m, i);
    int rc;
    /* Read-only mappings need no move (and cannot have one: UFFDIO_MOVE wants a writable
     * destination): nothing can write into their pages, so a device still reading a
     * pinned one reads the right bytes after the mapping let it go. */
    if (tio_uffd_can_move() && (m->prot & PROT_WRITE)) {
        /* Move the pages out first (refused if the kernel has some pinned), then write
         * them back from where they went: an access meanwhile faults as missing and waits
         * for our lock, then loads what we wrote. */
        char *moved = tio_uffd_evict_begin(sa, span, &rc);
        if (!moved) {
            /* Pinned for a transfer: a device may still write into it, unseen by the
             * write protection. Keep it, and count it dirty. */
            if (rc == EBUSY) tio_um_redirty_locked(m, i);
            return rc;
        }
        if ((rc = tio_um_write_moved(m, i, moved)) != 0) {
            tio_uffd_evict_abort(sa, moved, span);
            return rc;
        }
        tio_uffd_evict_end(moved, span);
    } else {
        if (state == TIO_SEG_DIRTY && (rc = tio_um_write_locked(m, i)) != 0) return rc;
        /* Anonymous memory: the pages go, and the next access faults as missing again. */
        if (madvise(sa, span, MADV_DONTNEED) != 0) return errno;
    }
    atomic_store(&s->state, TIO_SEG_ABSENT);
    tio_um_queue_remove(m, i);
    atomic_fetch_sub(&m->resident, span);
    atomic_fetch_add(&m->st.evictions, 1);
    tio_memnode_release(tio_um_memnode(), span);
    return 0;
}

/* Evict from one mapping until want bytes are freed or it has nothing left to give. */
static size_t evict_from(struct tio_umap *m, size_t skip, size_t want) {
    size_t freed = 0;
    while (freed < want) {
        size_t cand[16];
        size_t n = tio_um_victims(m, cand, 16, skip), progress = 0;
        for (size_t k = 0; k < n && freed < want; k++) {
            struct tio_umseg *s = &m->seg[cand[k]];
            if (tio_segtrylock(&s->lock) != 0) continue; /* busy: someone is on it */
            if (atomic_load(&s->state) != TIO_SEG_ABSENT) {
                int rc = tio_um_drop_locked(m, cand[k]);
                if (rc == 0) {
                    freed += tio_um_seg_span(m, cand[k]);
                    progress++;
                } else if (rc != EBUSY) {
                    TIO_WARN("ummap: cannot evict segment %zu: %s (kept in memory)",
                             cand[k], strerror(rc));
                }
            }
            tio_segunlock(&s->lock);
        }
        if (!progress) break;
    }
    return freed;
}

struct evict_arg {
    struct tio_umap *first;
    size_t want, freed;
};

static int evict_other(struct tio_umap *m, void *p) {
    struct evict_arg *a = p;
    if (m != a->first) a->freed += evict_from(m, (size_t)-1, a->want - a->freed);
    return a->freed >= a->want;
}

size_t tio_um_evict(struct tio_umap *m, size_t skip, size_t want) {
    struct evict_arg a = {m, want, 0};
    if (m) a.freed = evict_from(m, skip, want);
    if (a.freed < want) tio_um_each(evict_other, &a);
    if (a.freed < want)
        TIO_DEBUG("ummap: over the memory limit by %zu bytes (nothing evictable now)",
                  want - a.freed);
    return a.freed;
}

int tio_um_drop_all(struct tio_umap *m) {
    int first = 0;
    for (size_t i = 0; i < m->nseg; i++) {
        struct tio_umseg *s = &m->seg[i];
        if (atomic_load(&s->state) == TIO_SEG_ABSENT) continue;
        tio_seglock(&s->lock);
        int rc = tio_um_drop_locked(m, i);
        tio_segunlock(&s->lock);
        /* EBUSY: in flight, or pinned by the kernel: written back, but it stays. */
        if (rc && rc != EBUSY && !first) first = rc;
    }
    return first;
}
