/* Internals of the user-level memory-mapped I/O engine (include/ummap.h).
 *
 * A mapping is anonymous memory registered with userfaultfd in missing and write-protect
 * modes. Handler threads (uffd.c) load a segment on its first access and track the first
 * write to a clean segment; sync.c writes dirty segments back; evict.c drops segments over
 * the memory budget (memnode.h) in the order of the mapping's policy (policy.c); the I/O
 * thread (iothread.c) does the implicit write-back and gives memory back on request.
 *
 * Segment state changes under the segment's own lock (seglock.h). Lock order: registry
 * lock, then a mapping's sync lock, then segment locks, then the mapping's queue lock. A
 * thread holding a segment lock takes another one only with trylock, except umremap,
 * which takes them all in ascending order while no other thread holds two. */
#ifndef TIO_UMMAP_ENGINE_H
#define TIO_UMMAP_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ummap.h"
#include "ummap/driver.h"

enum tio_umseg_state { TIO_SEG_ABSENT = 0, TIO_SEG_CLEAN, TIO_SEG_DIRTY };

/* Segment flags. */
#define TIO_SEG_WRITTEN  0x1 /* its current content is on storage: load it even if !read_file */
#define TIO_SEG_INFLIGHT 0x2 /* being written back without its lock held: not evictable */
#define TIO_SEG_UNSYNCED 0x4 /* written without fdatasync since: re-dirtied if that fails */

struct tio_umseg {
    _Atomic uint32_t lock;  /* seglock.h: 0 free, 1 held, 2 held with waiters */
    _Atomic uint8_t state;
    _Atomic uint8_t flags;
    int32_t prev, next;    /* resident queue, in load (or, for PLRU, fault) order */
    uint64_t dirty_since;  /* monotonic ns of the first write since the last write-back */
};

struct tio_umap {
    char *base;            /* page-aligned start of the registered range */
    size_t lead;           /* bytes of base before the first mapped byte (congruent mode) */
    size_t size;           /* bytes mapped to the file, from base + lead */
    size_t span;           /* lead + size rounded up to pages: the registered range */
    size_t segsize;
    unsigned segshift;
    size_t nseg;
    int prot;
    off_t offset;          /* file offset of base + lead */
    unsigned flush_interval;
    int read_file, ptype, bulk;
    int borrowed;          /* mapped over the caller's range: umunmap leaves it */
    int sync_file;         /* umsync also writes back this process's other sync_file
                              mappings of the same file, with one fdatasync for all */
    struct tio_umdrv drv;

    struct tio_umseg *seg;
    pthread_mutex_t qlock;  /* the resident queue */
    int32_t qhead, qtail;
    pthread_mutex_t synclock; /* one write-back pass at a time */
    uint64_t rng;

    atomic_size_t resident, dirty;  /* bytes */
    atomic_int wb_error;            /* first failed write-back since the last good umsync */
    atomic_int unsynced;            /* written without fdatasync since the last umsync */
    atomic_uint_fast64_t wgen;      /* bumped each time segments are flagged unsynced */
    /* The segments flagged TIO_SEG_UNSYNCED lie in [unsynced_lo, unsynced_hi): the next
     * fdatasync looks at those only, not at every segment of a large mapping. */
    pthread_mutex_t rangelock;
    size_t unsynced_lo, unsynced_hi;
    struct {
        atomic_uint_fast64_t read_faults, write_faults, seg_reads, seg_writes, bytes_read,
            bytes_written, write_ops, evictions, syncs;
    } st;
};

/* ---- segment geometry ----
 * Positions are offsets from base. Segment i covers [i * segsize, (i + 1) * segsize) of
 * memory; of that, [lo, hi) holds file bytes (the first may start after lead, the last may
 * be partial); the rest is never loaded from or written to the file. */
static inline size_t tio_um_seg_off(const struct tio_umap *m, size_t i) { return i << m->segshift; }
static inline size_t tio_um_seg_lo(const struct tio_umap *m, size_t i) {
    size_t off = tio_um_seg_off(m, i);
    return off > m->lead ? off : m->lead;
}
static inline size_t tio_um_seg_hi(const struct tio_umap *m, size_t i) {
    size_t end = tio_um_seg_off(m, i) + m->segsize;
    return end < m->lead + m->size ? end : m->lead + m->size;
}
/* Bytes of segment i that belong to the file. */
static inline size_t tio_um_seg_len(const struct tio_umap *m, size_t i) {
    return tio_um_seg_hi(m, i) - tio_um_seg_lo(m, i);
}
/* Bytes of segment i in memory (rounded up to pages). */
static inline size_t tio_um_seg_span(const struct tio_umap *m, size_t i) {
    size_t off = tio_um_seg_off(m, i);
    return m->span - off < m->segsize ? m->span - off : m->segsize;
}
/* File offset of position x. */
static inline off_t tio_um_file_off(const struct tio_umap *m, size_t x) {
    return m->offset + (off_t)x - (off_t)m->lead;
}
uint64_t tio_um_now_ns(void);

/* ---- registry.c: the process's mappings and shared engine state ---- */
int tio_um_engine_acquire(void);   /* start uffd, handlers, I/O thread, memory budget */
void tio_um_engine_release(void);  /* stop them with the last mapping */
int tio_um_register(struct tio_umap *m);
struct tio_umap *tio_um_unregister(void *addr);      /* remove the mapping containing addr */
/* Run fn on the mapping containing addr with the registry read-locked. Returns ENOENT-free
 * fn's result, or EINVAL when addr is in no mapping. */
int tio_um_with(void *addr, int (*fn)(struct tio_umap *m, void *arg), void *arg);
/* Call fn on every mapping (registry read-locked); stops at a non-zero result. */
int tio_um_each(int (*fn)(struct tio_umap *m, void *arg), void *arg);
/* The same for a caller that holds the registry lock already (inside tio_um_with). */
int tio_um_each_locked(int (*fn)(struct tio_umap *m, void *arg), void *arg);
struct tio_memnode *tio_um_memnode(void);
void tio_um_count_io(unsigned reads, unsigned writes);
void tio_um_totals(unsigned *reads, unsigned *writes);

/* ---- uffd.c: the fault mechanism ---- */
int tio_uffd_start(void);
void tio_uffd_stop(void);
int tio_uffd_register(struct tio_umap *m);
void tio_uffd_unregister(struct tio_umap *m);
/* Write-protect (wp=1) or unprotect and wake (wp=0) [addr, addr+len). */
int tio_uffd_wp(void *addr, size_t len, int wp);
int tio_uffd_wake(void *addr, size_t len);
/* Eviction with UFFDIO_MOVE (Linux 6.8+; tio_uffd_can_move): begin moves the pages of
 * [addr, addr+len) (of a writable mapping) out to a scratch range and returns it (NULL with *err = EBUSY when the
 * kernel holds some pinned: nothing moved); the caller writes back from there, then calls
 * end (pages freed) or, if the write failed, abort (pages put back). One at a time. */
int tio_uffd_can_move(void);
char *tio_uffd_evict_begin(void *addr, size_t len, int *err);
void tio_uffd_evict_end(char *moved, size_t len);
void tio_uffd_evict_abort(void *addr, char *moved, size_t len);
/* Install len bytes at addr (absent pages) from src, write-protected when wp; zero pages.
 * Neither wakes the faulting threads: tio_uffd_wake does, once the state is set. */
int tio_uffd_copy(void *addr, const void *src, size_t len, int wp);
int tio_uffd_zero(void *addr, size_t len);
int tio_uffd_user_mode_only(void);

/* ---- fault.c ---- */
struct tio_um_stage {   /* a handler thread's buffer for loading segments */
    void *buf;
    size_t cap;
};
/* Handle a fault at addr in m (write: a write access; wp: on a write-protected page). */
void tio_um_fault(struct tio_umap *m, char *addr, int write, int wp, struct tio_um_stage *st);

/* ---- policy.c: the resident queue and the victims ---- */
void tio_um_queue_push(struct tio_umap *m, size_t i);   /* caller holds i's lock */
void tio_um_queue_remove(struct tio_umap *m, size_t i);
void tio_um_queue_touch(struct tio_umap *m, size_t i);  /* PLRU: a fault refreshes i */
/* Up to max candidates to evict, best first, never `skip`. */
size_t tio_um_victims(struct tio_umap *m, size_t *out, size_t max, size_t skip);

/* ---- evict.c ---- */
/* Free at least want bytes from the process's mappings, m first; never segment `skip` of m.
 * Returns the bytes freed. */
size_t tio_um_evict(struct tio_umap *m, size_t skip, size_t want);
/* Write back if dirty, then drop segment i (caller holds its lock). 0 or errno. */
int tio_um_drop_locked(struct tio_umap *m, size_t i);
/* Drop every segment, writing back the dirty ones. */
int tio_um_drop_all(struct tio_umap *m);

/* ---- sync.c ---- */
/* Write back dirty segments (all, or those dirty for at least min_age_ns); durable: 1 also
 * fdatasync when something was written since the last one, TIO_UM_FORCE_SYNC always (it
 * covers other mappings of the file too). Returns 0 or the first error (the failed
 * segments stay dirty). */
#define TIO_UM_FORCE_SYNC 2
int tio_um_writeback(struct tio_umap *m, uint64_t min_age_ns, int durable);
/* umsync's write-back of a sync_file mapping (caller holds the registry lock). */
int tio_um_sync_file(struct tio_umap *m);
/* Write back segment i, caller holding its lock. */
int tio_um_write_locked(struct tio_umap *m, size_t i);
/* The same from a copy of the segment's pages at seg (eviction: moved out of the
 * mapping); the segment is then clean, or dirty again on error. */
int tio_um_write_moved(struct tio_umap *m, size_t i, const char *seg);
/* Mark segment i dirty (caller holds its lock) if it is clean. */
void tio_um_redirty_locked(struct tio_umap *m, size_t i);

/* ---- api.c ---- */
int tio_um_check_fd(int fd, int prot);     /* 0, EBADF, EACCES or ENODEV */
int tio_um_open_driver(struct tio_umdrv *d, const struct tio_umdrv_ops *ops, int fd);

/* ---- iothread.c ---- */
int tio_um_iothread_start(void);
void tio_um_iothread_stop(void);
void tio_um_iothread_kick(void);

#endif
