/* Write-back of dirty segments. A segment is write-protected before its bytes are written,
 * so a store that lands during the write faults, marks it dirty again and is written by the
 * next pass: what was stored before a umsync began is in the file when it returns.
 *
 * Individual mode writes each segment with its own request; bulk mode (UMMAP_BULK_SYNC)
 * writes each run of contiguous dirty segments as one request (they are contiguous in
 * memory and in the file). Either way the requests of one pass go to the driver together,
 * and umsync ends with one fdatasync. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ummap/engine.h"
#include "ummap/seglock.h"
#include "util/log.h"

/* Segments protected and written as one run, at most (the locks held meanwhile). */
#define RUN_MAX 4096

/* After a failed write or fdatasync: the segments are dirty again (their bytes are still
 * in memory) unless a store already made them so. */
void tio_um_redirty_locked(struct tio_umap *m, size_t i) {
    if (atomic_load(&m->seg[i].state) == TIO_SEG_CLEAN) {
        atomic_store(&m->seg[i].state, TIO_SEG_DIRTY);
        m->seg[i].dirty_since = tio_um_now_ns();
        atomic_fetch_add(&m->dirty, tio_um_seg_len(m, i));
    }
}

/* Protect segment i and count it clean; the caller then writes its bytes. */
static int begin_write_locked(struct tio_umap *m, size_t i) {
    int rc = tio_uffd_wp(m->base + tio_um_seg_off(m, i), tio_um_seg_span(m, i), 1);
    if (rc) return rc;
    atomic_store(&m->seg[i].state, TIO_SEG_CLEAN);
    atomic_fetch_sub(&m->dirty, tio_um_seg_len(m, i));
    return 0;
}

/* Segments [first, last] were written and flagged unsynced: the next fdatasync covers
 * them. Flag first, then the range, then the mapping: a make_durable that runs in between
 * misses them this time and finds them the next. */
static void note_unsynced(struct tio_umap *m, size_t first, size_t last) {
    pthread_mutex_lock(&m->rangelock);
    if (m->unsynced_lo >= m->unsynced_hi) {
        m->unsynced_lo = first;
        m->unsynced_hi = last + 1;
    } else {
        if (first < m->unsynced_lo) m->unsynced_lo = first;
        if (last + 1 > m->unsynced_hi) m->unsynced_hi = last + 1;
    }
    pthread_mutex_unlock(&m->rangelock);
    atomic_store(&m->unsynced, 1);
    atomic_fetch_add(&m->wgen, 1);
}

static void count_writes(struct tio_umap *m, size_t segs, size_t bytes, size_t ops) {
    atomic_fetch_add(&m->st.seg_writes, segs);
    atomic_fetch_add(&m->st.bytes_written, bytes);
    atomic_fetch_add(&m->st.write_ops, ops);
    tio_um_count_io(0, (unsigned)segs);
}

int tio_um_write_locked(struct tio_umap *m, size_t i) {
    struct tio_umseg *s = &m->seg[i];
    if (atomic_load(&s->state) != TIO_SEG_DIRTY) return 0;
    int rc = begin_write_locked(m, i);
    if (rc) return rc;
    size_t lo = tio_um_seg_lo(m, i);
    struct tio_umio io = {m->base + lo, tio_um_seg_len(m, i), tio_um_file_off(m, lo)};
    rc = m->drv.ops->write(&m->drv, &io, 1);
    if (rc) {
        tio_um_redirty_locked(m, i);
        int none = 0;
        atomic_compare_exchange_strong(&m->wb_error, &none, rc);
        return rc;
    }
    atomic_fetch_or(&s->flags, TIO_SEG_WRITTEN | TIO_SEG_UNSYNCED);
    note_unsynced(m, i, i);
    count_writes(m, 1, io.len, 1);
    return 0;
}

int tio_um_write_moved(struct tio_umap *m, size_t i, const char *seg) {
    struct tio_umseg *s = &m->seg[i];
    if (atomic_load(&s->state) != TIO_SEG_DIRTY) return 0;
    size_t lo = tio_um_seg_lo(m, i);
    struct tio_umio io = {seg + (lo - tio_um_seg_off(m, i)), tio_um_seg_len(m, i),
                          tio_um_file_off(m, lo)};
    int rc = m->drv.ops->write(&m->drv, &io, 1);
    if (rc) {
        int none = 0;
        atomic_compare_exchange_strong(&m->wb_error, &none, rc);
        return rc;
    }
    atomic_store(&s->state, TIO_SEG_CLEAN);
    atomic_fetch_sub(&m->dirty, io.len);
    atomic_fetch_or(&s->flags, TIO_SEG_WRITTEN | TIO_SEG_UNSYNCED);
    note_unsynced(m, i, i);
    count_writes(m, 1, io.len, 1);
    return 0;
}

/* Take the unsynced range for an fdatasync about to run: [*lo, *hi). */
static void take_unsynced(struct tio_umap *m, size_t *lo, size_t *hi) {
    atomic_store(&m->unsynced, 0);
    pthread_mutex_lock(&m->rangelock);
    *lo = m->unsynced_lo;
    *hi = m->unsynced_hi;
    m->unsynced_lo = m->unsynced_hi = 0;
    pthread_mutex_unlock(&m->rangelock);
}

/* After the fdatasync (result rc) that covered [lo, hi): the segments there are durable,
 * or, if it failed, may not be: every one still in memory becomes dirty again. */
static void settle_unsynced(struct tio_umap *m, size_t lo, size_t hi, int rc) {
    for (size_t i = lo; i < hi; i++) {
        struct tio_umseg *s = &m->seg[i];
        if (!(atomic_load(&s->flags) & TIO_SEG_UNSYNCED)) continue;
        tio_seglock(&s->lock);
        atomic_fetch_and(&s->flags, (uint8_t)~TIO_SEG_UNSYNCED);
        if (rc) tio_um_redirty_locked(m, i);
        tio_segunlock(&s->lock);
    }
    if (rc) atomic_store(&m->unsynced, 1); /* the redirtied segments: written again next */
}

/* fdatasync, when something was written since the last one (or force). */
static int make_durable(struct tio_umap *m, int force) {
    if (!atomic_load(&m->unsynced) && !force) return 0;
    size_t lo, hi;
    take_unsynced(m, &lo, &hi);
    int rc = m->drv.ops->sync(&m->drv);
    settle_unsynced(m, lo, hi, rc);
    return rc;
}

int tio_um_writeback(struct tio_umap *m, uint64_t min_age_ns, int durable) {
    pthread_mutex_lock(&m->synclock);
    uint64_t now = tio_um_now_ns();
    size_t cap = 0, nsel = 0, nio = 0, bytes = 0;
    size_t *sel = NULL;
    struct tio_umio *io = NULL;
    int rc = 0;

    /* 1. Select: protect the dirty segments and mark them in flight (not evictable). A run
     * of contiguous ones is protected with one call, held locked meanwhile: each call
     * flushes the TLBs of every CPU, and one per segment cost more than the writing. */
    size_t run = 0; /* the selected segments sel[nsel - run .. nsel) are still locked */
    for (size_t i = 0; i <= m->nseg && !rc; i++) {
        struct tio_umseg *s = i < m->nseg ? &m->seg[i] : NULL;
        int take = 0;
        if (s && atomic_load(&s->state) == TIO_SEG_DIRTY) {
            tio_seglock(&s->lock);
            take = atomic_load(&s->state) == TIO_SEG_DIRTY &&
                   !(atomic_load(&s->flags) & TIO_SEG_INFLIGHT) &&
                   (!min_age_ns || now - s->dirty_since >= min_age_ns) && run < RUN_MAX;
            if (take && nsel == cap) {
                size_t nc = cap ? 2 * cap : 64;
                size_t *ns = realloc(sel, nc * sizeof *ns);
                struct tio_umio *ni = ns ? realloc(io, nc * sizeof *ni) : NULL;
                if (ns) sel = ns;
                if (ni) io = ni;
                if (!ns || !ni) rc = ENOMEM, take = 0;
                else cap = nc;
            }
            if (!take) tio_segunlock(&s->lock);
        }
        if (take && (!run || sel[nsel - 1] + 1 == i)) {
            sel[nsel++] = i;
            run++;
            continue;
        }
        if (run) { /* the run ends: protect it, then let its segments go */
            size_t first = sel[nsel - run], last = sel[nsel - 1];
            char *lo = m->base + tio_um_seg_off(m, first);
            char *hi = m->base + tio_um_seg_off(m, last) + tio_um_seg_span(m, last);
            int wrc = tio_uffd_wp(lo, (size_t)(hi - lo), 1);
            for (size_t k = nsel - run; k < nsel; k++) {
                struct tio_umseg *r = &m->seg[sel[k]];
                if (!wrc) {
                    atomic_store(&r->state, TIO_SEG_CLEAN);
                    atomic_fetch_sub(&m->dirty, tio_um_seg_len(m, sel[k]));
                    atomic_fetch_or(&r->flags, TIO_SEG_INFLIGHT);
                }
                tio_segunlock(&r->lock);
            }
            if (wrc) {
                nsel -= run;
                rc = wrc;
            }
            run = 0;
        }
        if (take) { /* not contiguous with the run: starts the next one */
            sel[nsel++] = i;
            run = 1;
        }
    }
    /* 2. The requests: one per segment, or one per contiguous run in bulk mode. */
    for (size_t k = 0; k < nsel; k++) {
        size_t i = sel[k], len = tio_um_seg_len(m, i);
        bytes += len;
        if (m->bulk && nio && sel[k - 1] + 1 == i) {
            io[nio - 1].len += len;
            continue;
        }
        size_t lo = tio_um_seg_lo(m, i);
        io[nio++] = (struct tio_umio){m->base + lo, len, tio_um_file_off(m, lo)};
    }
    int wrc = nio ? m->drv.ops->write(&m->drv, io, nio) : 0;
    if (!rc) rc = wrc;

    /* 3. Settle: written (and not yet durable), or dirty again after an error. */
    for (size_t k = 0; k < nsel; k++) {
        struct tio_umseg *s = &m->seg[sel[k]];
        tio_seglock(&s->lock);
        atomic_fetch_and(&s->flags, (uint8_t)~TIO_SEG_INFLIGHT);
        if (wrc) tio_um_redirty_locked(m, sel[k]);
        else atomic_fetch_or(&s->flags, TIO_SEG_WRITTEN | TIO_SEG_UNSYNCED);
        tio_segunlock(&s->lock);
    }
    if (nsel && !wrc) {
        note_unsynced(m, sel[0], sel[nsel - 1]); /* sel is in ascending order */
        count_writes(m, nsel, bytes, nio);
        atomic_fetch_add(&m->st.syncs, 1);
    }
    if (!rc && durable) rc = make_durable(m, durable == TIO_UM_FORCE_SYNC);
    if (rc) {
        int none = 0;
        atomic_compare_exchange_strong(&m->wb_error, &none, rc);
    }
    pthread_mutex_unlock(&m->synclock);
    free(sel);
    free(io);
    return rc;
}

/* ---- one fdatasync for the mappings of one file ----
 * A checkpoint often maps one shared file as several windows (HACC-IO: one per variable)
 * and syncs them one after the other: an fdatasync each, where write calls into the page
 * cache followed by one fdatasync would do. With sync_file, umsync of one such mapping
 * first writes back the other sync_file mappings of the same file in this process, then
 * makes them durable with its own fdatasync (it covers the whole file, whichever
 * descriptor it is called on); their own umsyncs then find nothing to do. A peer counts as
 * durable only if nothing was flagged unsynced in it between its write-back and that
 * fdatasync (its wgen unchanged): a write that raced with us is left to its own next
 * umsync. A peer's failed write-back stays its own: its segments are dirty again and its
 * wb_error reports it at its umsync, not at ours. When our write-back or the fdatasync
 * fails, the peers' written segments become dirty again, as make_durable does with ours:
 * a later fdatasync through another descriptor of the same open file may not report that
 * error again, so only writing them anew makes them durable for certain. */
struct peer {
    struct tio_umap *m;
    uint64_t wgen;
};
struct peers {
    struct tio_umap *self;
    struct stat st;
    size_t n, cap;
    struct peer *v;
};

static int collect_peer(struct tio_umap *g, void *arg) {
    struct peers *p = arg;
    struct stat st;
    if (g == p->self || !g->sync_file || g->drv.ops->sync != p->self->drv.ops->sync ||
        fstat(g->drv.fd, &st) != 0 || st.st_dev != p->st.st_dev || st.st_ino != p->st.st_ino)
        return 0;
    if (p->n == p->cap) {
        size_t nc = p->cap ? 2 * p->cap : 8;
        struct peer *nv = realloc(p->v, nc * sizeof *nv);
        if (!nv) return ENOMEM;
        p->v = nv;
        p->cap = nc;
    }
    p->v[p->n++] = (struct peer){g, 0};
    return 0;
}

int tio_um_sync_file(struct tio_umap *m) {
    struct peers p = {.self = m};
    int rc = fstat(m->drv.fd, &p.st) != 0 ? errno : tio_um_each_locked(collect_peer, &p);
    if (rc) { /* no peers then: this mapping's write-back alone is still correct */
        free(p.v);
        return tio_um_writeback(m, 0, 1);
    }
    int pending = 0;
    for (size_t k = 0; k < p.n; k++) {
        struct tio_umap *g = p.v[k].m;
        (void)tio_um_writeback(g, 0, 0); /* an error stays g's (see above) */
        p.v[k].wgen = atomic_load(&g->wgen);
        pending |= atomic_load(&g->unsynced);
    }
    rc = tio_um_writeback(m, 0, pending ? TIO_UM_FORCE_SYNC : 1);
    for (size_t k = 0; k < p.n; k++) {
        struct tio_umap *g = p.v[k].m;
        pthread_mutex_lock(&g->synclock);
        if (atomic_load(&g->unsynced) && atomic_load(&g->wgen) == p.v[k].wgen) {
            size_t lo, hi;
            take_unsynced(g, &lo, &hi);
            settle_unsynced(g, lo, hi, rc);
        }
        pthread_mutex_unlock(&g->synclock);
    }
    free(p.v);
    return rc;
}
