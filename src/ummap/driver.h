/* I/O drivers of the ummap engine: how segments move between memory and storage. A small
 * table (like IOR's back ends): POSIX pread/pwrite (default), direct (O_DIRECT: no page
 * cache) and io_uring (asynchronous write-back: a whole pass of writes is in flight at
 * once). Chosen per mapping. */
#ifndef TIO_UMMAP_DRIVER_H
#define TIO_UMMAP_DRIVER_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

struct tio_umio {       /* one write: len bytes from addr to file offset off */
    const void *addr;
    size_t len;
    off_t off;
};

struct tio_umdrv;
struct tio_umdrv_ops {
    const char *name;
    int (*open)(struct tio_umdrv *d);          /* d->fd is set */
    void (*close)(struct tio_umdrv *d);
    /* Read up to len bytes at off into buf; *got = bytes read (short at end of file). */
    int (*read)(struct tio_umdrv *d, void *buf, size_t len, off_t off, size_t *got);
    /* Write every request completely; 0 or the first errno. */
    int (*write)(struct tio_umdrv *d, const struct tio_umio *io, size_t n);
    int (*sync)(struct tio_umdrv *d);          /* fdatasync */
};

struct tio_umdrv {
    const struct tio_umdrv_ops *ops;
    int fd;            /* our own duplicate of the caller's descriptor */
    void *priv;
    pthread_mutex_t lock;
};

/* Shared by the drivers: pread (wr 0) or pwrite until len bytes, end of file or error;
 * and fdatasync of d->fd. */
int tio_umdrv_pio(int fd, int wr, void *buf, size_t len, off_t off, size_t *done);
int tio_umdrv_fdatasync(struct tio_umdrv *d);

/* The driver called name ("posix", "uring"), or NULL. */
const struct tio_umdrv_ops *tio_umdrv_find(const char *name);
/* The drivers of this build, as a list for messages: "posix", "direct" or "uring". */
void tio_umdrv_names(char *out, size_t len);
/* The i-th driver of this build's table, or NULL past the last. */
const char *tio_umdrv_name(size_t i);
extern const struct tio_umdrv_ops tio_umdrv_posix;
extern const struct tio_umdrv_ops tio_umdrv_direct;
#ifdef TIO_HAVE_URING
extern const struct tio_umdrv_ops tio_umdrv_uring;
#endif

#endif
