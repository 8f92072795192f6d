/* POSIX driver: pread / pwrite / fdatasync, retried on short transfers and EINTR. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "ummap/driver.h"

static int posix_open(struct tio_umdrv *d) { (void)d; return 0; }
static void posix_close(struct tio_umdrv *d) { (void)d; }

int tio_umdrv_pio(int fd, int wr, void *buf, size_t len, off_t off, size_t *done_out) {
    size_t done = 0;
    while (done < len) {
        ssize_t n = wr ? pwrite(fd, (char *)buf + done, len - done, off + (off_t)done)
                       : pread(fd, (char *)buf + done, len - done, off + (off_t)done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (n == 0) {
            if (wr) return EIO;
            break; /* end of file */
        }
        done += (size_t)n;
    }
    if (done_out) *done_out = done;
    return 0;
}

static int posix_read(struct tio_umdrv *d, void *buf, size_t len, off_t off, size_t *got) {
    return tio_umdrv_pio(d->fd, 0, buf, len, off, got);
}

/* Early write-back: once a request of at least EARLY_WB_MIN bytes is in the page cache, the
 * kernel is asked to start writing it to storage, and a long one (a bulk write-back of many
 * contiguous segments) goes in chunks of EARLY_WB_CHUNK, each started the same way: the
 * disk then works while the next request or chunk is copied, and the fdatasync that
 * follows has less left to do. sync_file_range(SYNC_FILE_RANGE_WRITE) neither waits for
 * the I/O nor makes anything durable (umsync's fdatasync does, and reports a failed
 * write-back), so its own result is only advice and is not checked. Measured here (ext4,
 * Linux 6.18): 64 MiB, pwrite + fdatasync 18-21 ms, in 4 MiB chunks started early
 * 14-15 ms; 2 processes each writing 9 ranges of 0.25-1 MiB into one file (a HACC-IO
 * checkpoint) and one fdatasync, 4.5-6.5 ms, each range started early 3.4-3.9 ms. */
#define EARLY_WB_MIN ((size_t)256 << 10)
#define EARLY_WB_CHUNK ((size_t)4 << 20)

static int write_early_writeback(int fd, char *p, size_t len, off_t off) {
    size_t l;
    for (size_t done = 0; done < len; done += l) {
        /* 4 MiB pieces; the last one takes the rest, up to two chunks long */
        l = len - done < 2 * EARLY_WB_CHUNK ? len - done : EARLY_WB_CHUNK;
        int rc = tio_umdrv_pio(fd, 1, p + done, l, off + (off_t)done, NULL);
        if (rc) return rc;
        if (l >= EARLY_WB_MIN)
            (void)sync_file_range(fd, off + (off_t)done, (off_t)l, SYNC_FILE_RANGE_WRITE);
    }
    return 0;
}

static int posix_write(struct tio_umdrv *d, const struct tio_umio *io, size_t n) {
    for (size_t k = 0; k < n; k++) {
        int rc = write_early_writeback(d->fd, (char *)io[k].addr, io[k].len, io[k].off);
        if (rc) return rc;
    }
    return 0;
}

int tio_umdrv_fdatasync(struct tio_umdrv *d) {
    while (fdatasync(d->fd) != 0)
        if (errno != EINTR) return errno;
    return 0;
}

const struct tio_umdrv_ops tio_umdrv_posix = {
    "posix", posix_open, posix_close, posix_read, posix_write, tio_umdrv_fdatasync,
};
