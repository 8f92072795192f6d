/* The public calls of include/ummap.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ummap/engine.h"
#include "ummap/keys.h"
#include "ummap/memnode.h"
#include "ummap/seglock.h"
#include "util/log.h"

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* UMMAP_BULK_SYNC (ummap/keys.c): 1 or 0; anything else is an error (-1), not a guess. */
static int env_bulk(void) {
    struct tio_err err = {0};
    int v = tio_um_env_bulk_sync(&err);
    if (v < 0) tio_log(TIO_LOG_ERROR, "ummap: %s", err.msg);
    return v;
}

/* Can fd back a mapping with prot? 0, or the errno of ummap.h. */
int tio_um_check_fd(int fd, int prot) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0) return EBADF;
    struct stat sb;
    if (fstat(fd, &sb) != 0) return errno;
    if (!S_ISREG(sb.st_mode) && !S_ISBLK(sb.st_mode)) return ENODEV;
    int acc = fl & O_ACCMODE;
    /* Segments are read back after eviction even with read_file 0: reading is needed. */
    if (acc == O_WRONLY) return EACCES;
    if ((prot & PROT_WRITE) && acc != O_RDWR) return EACCES;
    return 0;
}

static int check_args(const tio_ummap_opts_t *o, void **ptr) {
    if (!ptr || !o->size || o->offset < 0) return EINVAL;
    if (o->seg_size < page_size() || (o->seg_size & (o->seg_size - 1))) return EINVAL;
    if (!o->prot || (o->prot & ~(PROT_READ | PROT_WRITE))) return EINVAL;
    if (o->ptype < UMMAP_PTYPE_FIFO || o->ptype > UMMAP_PTYPE_WIRO_L) return EINVAL;
    if (o->size > SIZE_MAX - 2 * page_size() || o->size / o->seg_size >= INT32_MAX - 1)
        return EINVAL;
    if ((uint64_t)INT64_MAX - (uint64_t)o->offset < o->size) return EINVAL;
    return tio_um_check_fd(o->fd, o->prot);
}

static void free_map(struct tio_umap *m) {
    if (m->drv.ops) m->drv.ops->close(&m->drv);
    if (m->drv.fd >= 0) close(m->drv.fd);
    pthread_mutex_destroy(&m->drv.lock);
    pthread_mutex_destroy(&m->qlock);
    pthread_mutex_destroy(&m->synclock);
    pthread_mutex_destroy(&m->rangelock);
    free(m->seg);
    free(m);
}

int tio_um_open_driver(struct tio_umdrv *d, const struct tio_umdrv_ops *ops, int fd) {
    d->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (d->fd < 0) return errno;
    d->ops = ops;
    int rc = ops->open(d);
    if (rc) {
        d->ops = NULL;
        close(d->fd);
        d->fd = -1;
    }
    return rc;
}

int tio_ummap_open(const tio_ummap_opts_t *o, void **ptr) {
    if (!o) return EINVAL;
    int rc = check_args(o, ptr);
    if (rc) return rc;
    int bulk = o->bulk_sync < 0 ? env_bulk() : !!o->bulk_sync;
    if (bulk < 0) return EINVAL;
    char env_driver[16];
    const char *dname = o->driver;
    if (!dname) {
        struct tio_err err = {0};
        if (!(dname = tio_um_env_driver(env_driver, sizeof env_driver, &err))) {
            tio_log(TIO_LOG_ERROR, "ummap: %s", err.msg);
            return EINVAL;
        }
    }
    const struct tio_umdrv_ops *ops = tio_umdrv_find(dname);
    if (!ops) {
        TIO_WARN("ummap: unknown I/O driver '%s' (posix%s)", dname,
                 tio_umdrv_find("uring") ? ", uring" : "");
        return EINVAL;
    }

    struct tio_umap *m = calloc(1, sizeof *m);
    if (!m) return ENOMEM;
    m->drv.fd = -1;
    pthread_mutex_init(&m->drv.lock, NULL);
    pthread_mutex_init(&m->qlock, NULL);
    pthread_mutex_init(&m->synclock, NULL);
    pthread_mutex_init(&m->rangelock, NULL);
    m->lead = o->congruent ? (size_t)o->offset % page_size() : 0;
    m->size = o->size;
    m->span = (m->lead + o->size + page_size() - 1) & ~(page_size() - 1);
    m->segsize = o->seg_size;
    m->segshift = (unsigned)__builtin_ctzl(o->seg_size);
    m->nseg = (m->lead + o->size + o->seg_size - 1) >> m->segshift;
    m->prot = o->prot;
    m->offset = o->offset;
    m->flush_interval = o->flush_interval;
    m->read_file = !!o->read_file;
    m->ptype = o->ptype;
    m->bulk = bulk;
    m->sync_file = !!o->sync_file;
    m->qhead = m->qtail = -1;
    m->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)m;
    m->seg = calloc(m->nseg, sizeof *m->seg);
    if (!m->seg) {
        free_map(m);
        return ENOMEM;
    }
    for (size_t i = 0; i < m->nseg; i++) m->seg[i].prev = m->seg[i].next = -1;
    if ((rc = tio_um_open_driver(&m->drv, ops, o->fd)) != 0) {
        free_map(m);
        return rc;
    }
    if ((rc = tio_um_engine_acquire()) != 0) {
        free_map(m);
        return rc;
    }
    if (o->fixed_addr && ((uintptr_t)o->fixed_addr & (page_size() - 1))) {
        rc = EINVAL;
        goto out_engine;
    }
    m->borrowed = o->fixed_addr != NULL;
    void *base = mmap(o->fixed_addr, m->span, o->prot,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (m->borrowed ? MAP_FIXED : 0),
                      -1, 0);
    if (base == MAP_FAILED) {
        rc = errno;
        goto out_engine;
    }
    m->base = base;
    /* Pages come from us in segment units; huge pages would only get in the way. */
    madvise(base, m->span, MADV_NOHUGEPAGE);
    if ((rc = tio_uffd_register(m)) != 0) goto out_unmap;
    if ((rc = tio_um_register(m)) != 0) {
        tio_uffd_unregister(m);
        goto out_unmap;
    }
    *ptr = (char *)base + m->lead;
    return 0;
out_unmap:
    if (!m->borrowed) munmap(base, m->span);
out_engine:
    tio_um_engine_release();
    free_map(m);
    return rc;
}

int ummap(size_t size, size_t seg_size, int prot, int fd, off_t offset,
          unsigned int flush_interval, int read_file, int ptype, void **ptr) {
    tio_ummap_opts_t o = TIO_UMMAP_OPTS_INIT;
    o.size = size;
    o.seg_size = seg_size;
    o.prot = prot;
    o.fd = fd;
    o.offset = offset;
    o.flush_interval = flush_interval;
    o.read_file = read_file;
    o.ptype = ptype;
    return tio_ummap_open(&o, ptr);
}

/* This mapping's write-back, made durable; with sync_file, its file's too. */
static int writeback_durable(struct tio_umap *m) {
    return m->sync_file ? tio_um_sync_file(m) : tio_um_writeback(m, 0, 1);
}

static int sync_cb(struct tio_umap *m, void *arg) {
    int evict = *(int *)arg;
    int rc = writeback_durable(m);
    if (!rc && evict) {
        rc = tio_um_drop_all(m);
        /* A store between the write-back and the drop made a segment dirty again; the
         * drop wrote it; make that durable too. */
        if (!rc) rc = tio_um_writeback(m, 0, 1);
    }
    if (!rc) atomic_store(&m->wb_error, 0);
    return rc;
}

int umsync(void *addr, int evict) {
    if (!addr) return EINVAL;
    return tio_um_with(addr, sync_cb, &evict);
}

static int sync_only_cb(struct tio_umap *m, void *arg) {
    (void)arg;
    int rc = writeback_durable(m);
    if (!rc) atomic_store(&m->wb_error, 0);
    return rc;
}

int umunmap(void *addr, int sync) {
    if (!addr) return EINVAL;
    if (sync) {
        int rc = tio_um_with(addr, sync_only_cb, NULL);
        if (rc) return rc;
    }
    struct tio_umap *m = tio_um_unregister(addr);
    if (!m) return EINVAL;
    tio_uffd_unregister(m);
    size_t resident = atomic_load(&m->resident);
    if (m->borrowed) madvise(m->base, m->span, MADV_DONTNEED); /* the owner keeps the range */
    else munmap(m->base, m->span);
    tio_memnode_release(tio_um_memnode(), resident);
    tio_um_engine_release();
    free_map(m);
    return 0;
}

int umstats(unsigned int *num_reads, unsigned int *num_writes) {
    if (!num_reads || !num_writes) return EINVAL;
    tio_um_totals(num_reads, num_writes);
    return 0;
}

static int stats_cb(struct tio_umap *m, void *arg) {
    tio_ummap_stats_t *s = arg;
    s->read_faults = atomic_load(&m->st.read_faults);
    s->write_faults = atomic_load(&m->st.write_faults);
    s->seg_reads = atomic_load(&m->st.seg_reads);
    s->seg_writes = atomic_load(&m->st.seg_writes);
    s->bytes_read = atomic_load(&m->st.bytes_read);
    s->bytes_written = atomic_load(&m->st.bytes_written);
    s->write_ops = atomic_load(&m->st.write_ops);
    s->evictions = atomic_load(&m->st.evictions);
    s->syncs = atomic_load(&m->st.syncs);
    s->resident = atomic_load(&m->resident);
    s->dirty = atomic_load(&m->dirty);
    return 0;
}

int tio_ummap_stats(void *addr, tio_ummap_stats_t *stats) {
    if (!addr || !stats) return EINVAL;
    return tio_um_with(addr, stats_cb, stats);
}
