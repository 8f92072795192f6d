/* io_uring driver: a write-back pass submits all its writes at once (up to the ring's
 * depth in flight), so the device sees a deep queue instead of one write at a time. Reads
 * (segment loads) are single requests. One ring per mapping, guarded by the driver lock. */
#ifdef TIO_HAVE_URING
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>

#include "ummap/driver.h"

#define DEPTH 64

struct pending {        /* a write still owed: the rest of one request */
    const char *addr;
    size_t len;
    off_t off;
};

static int uring_open(struct tio_umdrv *d) {
    struct io_uring *ring = calloc(1, sizeof *ring);
    if (!ring) return ENOMEM;
    int rc = io_uring_queue_init(DEPTH, ring, 0);
    if (rc < 0) {
        free(ring);
        return -rc;
    }
    d->priv = ring;
    return 0;
}

static void uring_close(struct tio_umdrv *d) {
    if (!d->priv) return;
    io_uring_queue_exit(d->priv);
    free(d->priv);
    d->priv = NULL;
}

/* Wait for one completion; returns its result and the request it belongs to. */
static int reap(struct io_uring *ring, int *res, void **data) {
    struct io_uring_cqe *cqe;
    int rc;
    while ((rc = io_uring_wait_cqe(ring, &cqe)) == -EINTR) {}
    if (rc < 0) return -rc;
    *res = cqe->res;
    *data = io_uring_cqe_get_data(cqe);
    io_uring_cqe_seen(ring, cqe);
    return 0;
}

static int uring_read(struct tio_umdrv *d, void *buf, size_t len, off_t off, size_t *got) {
    struct io_uring *ring = d->priv;
    size_t done = 0;
    int err = 0;
    pthread_mutex_lock(&d->lock);
    while (done < len) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
        io_uring_prep_read(sqe, d->fd, (char *)buf + done, (unsigned)(len - done),
                           (__u64)(off + (off_t)done));
        io_uring_sqe_set_data(sqe, NULL);
        int rc = io_uring_submit(ring), res = 0;
        void *data;
        if (rc < 0 || (rc = reap(ring, &res, &data)) != 0) {
            err = rc < 0 ? -rc : rc;
            break;
        }
        if (res == -EINTR || res == -EAGAIN) continue;
        if (res < 0) { err = -res; break; }
        if (res == 0) break; /* end of file */
        done += (size_t)res;
    }
    pthread_mutex_unlock(&d->lock);
    *got = done;
    return err;
}

static int uring_write(struct tio_umdrv *d, const struct tio_umio *io, size_t n) {
    struct io_uring *ring = d->priv;
    struct pending *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) return ENOMEM;
    for (size_t k = 0; k < n; k++) p[k] = (struct pending){io[k].addr, io[k].len, io[k].off};
    size_t next = 0, inflight = 0;
    int err = 0;
    pthread_mutex_lock(&d->lock);
    /* Requests cut short are queued again; a request is at most 1 GiB per submission. */
    size_t *again = malloc((n ? n : 1) * sizeof *again), nagain = 0;
    if (!again) err = ENOMEM;
    while (!err && (next < n || nagain || inflight)) {
        while (inflight < DEPTH && (nagain || next < n)) {
            size_t k = nagain ? again[nagain - 1] : next;
            if (p[k].len == 0) {
                if (nagain) nagain--; else next++;
                continue;
            }
            struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
            if (!sqe) break;
            if (nagain) nagain--; else next++;
            unsigned chunk = p[k].len > (1u << 30) ? (1u << 30) : (unsigned)p[k].len;
            io_uring_prep_write(sqe, d->fd, p[k].addr, chunk, (__u64)p[k].off);
            io_uring_sqe_set_data(sqe, &p[k]);
            inflight++;
        }
        if (!inflight) continue;
        int rc = io_uring_submit(ring);
        if (rc < 0 && rc != -EINTR) { err = -rc; break; }
        int res;
        void *data;
        if ((rc = reap(ring, &res, &data)) != 0) { err = rc; break; }
        inflight--;
        struct pending *q = data;
        if (res == -EINTR || res == -EAGAIN) res = 0;
        else if (res < 0) { err = -res; break; }
        else if (res == 0) { err = EIO; break; }
        q->addr += res; q->len -= (size_t)res; q->off += res;
        if (q->len) again[nagain++] = (size_t)(q - p);
    }
    /* After an error, collect what is still in flight before the buffers can change. */
    while (inflight) {
        int res;
        void *data;
        if (reap(ring, &res, &data) != 0) break;
        inflight--;
    }
    pthread_mutex_unlock(&d->lock);
    free(again);
    free(p);
    return err;
}

static int uring_sync(struct tio_umdrv *d) {
    struct io_uring *ring = d->priv;
    int err = 0, res;
    void *data;
    pthread_mutex_lock(&d->lock);
    for (;;) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
        io_uring_prep_fsync(sqe, d->fd, IORING_FSYNC_DATASYNC);
        io_uring_sqe_set_data(sqe, NULL);
        int rc = io_uring_submit(ring);
        if (rc < 0 || (rc = reap(ring, &res, &data)) != 0) { err = rc < 0 ? -rc : rc; break; }
        if (res == -EINTR) continue;
        err = res < 0 ? -res : 0;
        break;
    }
    pthread_mutex_unlock(&d->lock);
    return err;
}

const struct tio_umdrv_ops tio_umdrv_uring = {
    "uring", uring_open, uring_close, uring_read, uring_write, uring_sync,
};
#endif
