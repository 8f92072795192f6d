/* Direct driver: segments move between the mapping and the device without going through
 * the page cache (O_DIRECT), so write-back copies nothing and an out-of-core run's memory
 * is only its segments. Requests whose file offset and memory address are not both
 * aligned (an unaligned storage_alloc_offset, a partial last segment) go through the page
 * cache for their unaligned head and tail; the kernel keeps the two paths coherent. The
 * file system must support O_DIRECT (ext4, xfs, tmpfs do): otherwise the mapping fails. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ummap/driver.h"

#define ALIGN_MIN 4096u /* a page: a direct and a buffered request never share one */

struct direct {
    int dfd;        /* the same file opened with O_DIRECT */
    size_t align;
};

static int direct_open(struct tio_umdrv *d) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", d->fd);
    int acc = fcntl(d->fd, F_GETFL) & O_ACCMODE;
    int dfd = open(path, acc | O_DIRECT | O_CLOEXEC);
    if (dfd < 0) return errno;
    struct direct *x = malloc(sizeof *x);
    if (!x) {
        close(dfd);
        return ENOMEM;
    }
    x->dfd = dfd;
    x->align = ALIGN_MIN;
#ifdef STATX_DIOALIGN
    struct statx sx;
    if (statx(dfd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN)) {
        if (sx.stx_dio_offset_align > x->align) x->align = sx.stx_dio_offset_align;
        if (sx.stx_dio_mem_align > x->align) x->align = sx.stx_dio_mem_align;
    }
#endif
    d->priv = x;
    return 0;
}

static void direct_close(struct tio_umdrv *d) {
    struct direct *x = d->priv;
    if (!x) return;
    close(x->dfd);
    free(x);
    d->priv = NULL;
}

static int aligned(uintptr_t v, size_t a) { return (v & (a - 1)) == 0; }

static int direct_read(struct tio_umdrv *d, void *buf, size_t len, off_t off, size_t *got) {
    struct direct *x = d->priv;
    size_t a = x->align, rounded = (len + a - 1) & ~(a - 1);
    /* The staging buffer is page-aligned and a whole number of pages long. */
    if (aligned((uintptr_t)buf, a) && aligned((uintptr_t)off, a) && rounded <= ((len + 4095) & ~(size_t)4095)) {
        int rc = tio_umdrv_pio(x->dfd, 0, buf, rounded, off, got);
        if (rc == 0 && *got > len) *got = len; /* what lies past the mapping is not ours */
        if (rc != EINVAL) return rc;
    }
    return tio_umdrv_pio(d->fd, 0, buf, len, off, got);
}

static int write_one(struct tio_umdrv *d, const struct tio_umio *io) {
    struct direct *x = d->priv;
    size_t a = x->align;
    char *p = (char *)io->addr;
    off_t off = io->off;
    size_t len = io->len;
    if (((uintptr_t)p - (uintptr_t)off) & (a - 1)) /* never alignable: all buffered */
        return tio_umdrv_pio(d->fd, 1, p, len, off, NULL);
    size_t head = (size_t)((a - ((uintptr_t)off & (a - 1))) & (a - 1));
    if (head > len) head = len;
    size_t mid = (len - head) & ~(a - 1), tail = len - head - mid;
    int rc = 0;
    if (head) rc = tio_umdrv_pio(d->fd, 1, p, head, off, NULL);
    if (!rc && mid) rc = tio_umdrv_pio(x->dfd, 1, p + head, mid, off + (off_t)head, NULL);
    if (!rc && tail) rc = tio_umdrv_pio(d->fd, 1, p + head + mid, tail, off + (off_t)(head + mid), NULL);
    return rc;
}

static int direct_write(struct tio_umdrv *d, const struct tio_umio *io, size_t n) {
    for (size_t k = 0; k < n; k++) {
        int rc = write_one(d, &io[k]);
        if (rc) return rc;
    }
    return 0;
}

/* Direct writes are on the device (perhaps in its cache), the buffered heads and tails in
 * the page cache: one fdatasync covers both, and the file's size. */
const struct tio_umdrv_ops tio_umdrv_direct = {
    "direct", direct_open, direct_close, direct_read, direct_write, tio_umdrv_fdatasync,
};
