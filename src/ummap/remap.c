/* umremap: move a mapping to another file or offset (versioned checkpoints).
 *
 * The mapping's content does not change: what the application sees before the call it
 * sees after it, and the next umsync makes the new location a complete copy. Segments in
 * memory become dirty (they are written to the new location by the next umsync); segments
 * not in memory whose content is on storage are copied there now, inside the kernel
 * (copy_file_range). With sync, the dirty segments are first written to the old location,
 * so that it too is complete. All faults on the mapping wait while the move happens. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ummap/engine.h"
#include "ummap/seglock.h"

/* Past the end of the old file the mapping showed zeros: so must the new location. */
static int write_zeros(int out, off_t ooff, size_t len) {
    static const char zeros[65536];
    while (len) {
        size_t c = len < sizeof zeros ? len : sizeof zeros;
        ssize_t w = pwrite(out, zeros, c, ooff);
        if (w < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        ooff += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Copy len bytes from (in, ioff) to (out, ooff); zeros where the source has ended. */
static int copy_range(int in, off_t ioff, int out, off_t ooff, size_t len) {
    while (len) {
        ssize_t n = copy_file_range(in, &ioff, out, &ooff, len, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0) {
            len -= (size_t)n;
            continue;
        }
        if (n == 0) return write_zeros(out, ooff, len);
        if (errno != EXDEV && errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL)
            return errno;
        /* No in-kernel copy between these files: through a buffer. */
        char *buf = malloc(1 << 20);
        if (!buf) return ENOMEM;
        int rc = 0;
        while (len && !rc) {
            size_t c = len < (1u << 20) ? len : (1u << 20);
            ssize_t r = pread(in, buf, c, ioff);
            if (r < 0) { rc = errno == EINTR ? 0 : errno; continue; }
            if (r == 0) {
                rc = write_zeros(out, ooff, len);
                break;
            }
            for (ssize_t w = 0; w < r && !rc;) {
                ssize_t k = pwrite(out, buf + w, (size_t)(r - w), ooff + w);
                if (k < 0) rc = errno == EINTR ? 0 : errno;
                else w += k;
            }
            ioff += r;
            ooff += r;
            len -= (size_t)r;
        }
        free(buf);
        return rc;
    }
    return 0;
}

struct remap_arg {
    int fd, sync;
    off_t offset;
    void **new_addr;
};

/* 0: another file or a disjoint range; 1: the same place; 2: an overlapping range. */
static int same_place(const struct tio_umap *m, int fd, off_t offset) {
    struct stat a, b;
    if (fstat(m->drv.fd, &a) != 0 || fstat(fd, &b) != 0) return 0;
    if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) return 0;
    if (offset == m->offset) return 1;
    return offset < m->offset + (off_t)m->size && m->offset < offset + (off_t)m->size ? 2 : 0;
}

static int remap_cb(struct tio_umap *m, void *p) {
    struct remap_arg *a = p;
    int rc = tio_um_check_fd(a->fd, m->prot), place = same_place(m, a->fd, a->offset);
    if (rc) return rc;
    if (place == 2) return EINVAL; /* the copy would overwrite what it still has to read */
    if (a->sync && (rc = tio_um_writeback(m, 0, 1)) != 0) return rc;
    if (place == 1) {
        *a->new_addr = m->base + m->lead;
        return 0;
    }
    struct tio_umdrv nd = {.fd = -1};
    pthread_mutex_init(&nd.lock, NULL);
    if ((rc = tio_um_open_driver(&nd, m->drv.ops, a->fd)) != 0) {
        pthread_mutex_destroy(&nd.lock);
        return rc;
    }

    pthread_mutex_lock(&m->synclock);
    for (size_t i = 0; i < m->nseg; i++) tio_seglock(&m->seg[i].lock);
    /* 1. Copy what only the old location holds. */
    for (size_t i = 0; i < m->nseg && !rc; i++) {
        struct tio_umseg *s = &m->seg[i];
        int backed = m->read_file || (atomic_load(&s->flags) & TIO_SEG_WRITTEN);
        if (atomic_load(&s->state) == TIO_SEG_ABSENT && backed)
            rc = copy_range(m->drv.fd, tio_um_file_off(m, tio_um_seg_lo(m, i)), nd.fd,
                            a->offset + (off_t)(tio_um_seg_lo(m, i) - m->lead),
                            tio_um_seg_len(m, i));
    }
    if (!rc) {
        /* 2. Switch: segments in memory are now dirty with respect to the new location. */
        uint64_t now = tio_um_now_ns();
        for (size_t i = 0; i < m->nseg; i++) {
            struct tio_umseg *s = &m->seg[i];
            uint8_t st = atomic_load(&s->state);
            uint8_t fl = atomic_load(&s->flags) & (uint8_t)~(TIO_SEG_UNSYNCED | TIO_SEG_WRITTEN);
            if (st == TIO_SEG_ABSENT && (m->read_file || (atomic_load(&s->flags) & TIO_SEG_WRITTEN)))
                fl |= TIO_SEG_WRITTEN;
            atomic_store(&s->flags, fl);
            if (st == TIO_SEG_CLEAN) {
                atomic_store(&s->state, TIO_SEG_DIRTY);
                s->dirty_since = now;
                atomic_fetch_add(&m->dirty, tio_um_seg_len(m, i));
            }
        }
        struct tio_umdrv old = m->drv;
        m->drv.ops = nd.ops;
        m->drv.fd = nd.fd;
        m->drv.priv = nd.priv;
        m->offset = a->offset;
        atomic_store(&m->unsynced, 1); /* the copies of step 1 */
        old.ops->close(&old);
        close(old.fd);
        nd.fd = -1;
    }
    for (size_t i = m->nseg; i-- > 0;) tio_segunlock(&m->seg[i].lock);
    pthread_mutex_unlock(&m->synclock);
    if (nd.fd >= 0) {
        nd.ops->close(&nd);
        close(nd.fd);
    }
    pthread_mutex_destroy(&nd.lock);
    if (!rc) *a->new_addr = m->base + m->lead;
    return rc;
}

int umremap(void *old_addr, int fd, off_t offset, int sync, void **new_addr) {
    if (!old_addr || !new_addr || offset < 0) return EINVAL;
    struct remap_arg a = {fd, sync, offset, new_addr};
    int rc = tio_um_with(old_addr, remap_cb, &a);
    return rc;
}
