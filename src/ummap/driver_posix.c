/* POSIX driver: pread / pwrite / fdatasync, retried on short transfers and EINTR. */
#include <errno.h>
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

static int posix_write(struct tio_umdrv *d, const struct tio_umio *io, size_t n) {
    for (size_t k = 0; k < n; k++) {
        int rc = tio_umdrv_pio(d->fd, 1, (void *)io[k].addr, io[k].len, io[k].off, NULL);
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
