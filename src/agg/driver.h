/* I/O drivers: where the I/O phase puts an aggregator's buffer. A driver maps file bytes
 * of the access (global offsets) to its own files and moves them with POSIX calls.
 *   driver_file.c      one shared file (the target `file`)
 *   driver_subfile.c   subfiles next to the manifest, or files on node-local storage
 * Only aggregators open target files; the I/O thread calls write/read, the main thread
 * everything else, never both at once. */
#ifndef TIO_AGG_DRIVER_H
#define TIO_AGG_DRIVER_H

#include <limits.h>
#include <stdint.h>

#include "agg/manifest.h"
#include "agg/settings.h"
#include "util/error.h"

struct tio_agg_driver;

struct tio_agg_driver_ops {
    /* Bytes [off, off+len) of the access's file space from / into mem. */
    int (*write)(struct tio_agg_driver *d, const void *mem, int64_t off, int64_t len,
                 struct tio_err *err);
    int (*read)(struct tio_agg_driver *d, void *mem, int64_t off, int64_t len,
                struct tio_err *err);
    /* Durable: fdatasync of what this process wrote. */
    int (*sync)(struct tio_agg_driver *d, struct tio_err *err);
    void (*close)(struct tio_agg_driver *d);
};

struct tio_agg_driver {
    const struct tio_agg_driver_ops *ops;
    char path[PATH_MAX];        /* the file, or the manifest */
    int flags;                  /* O_RDONLY / O_WRONLY / O_RDWR */
    int fd;                     /* target file: the shared file (-1 when not open) */
    int dirty;                  /* written since the last sync */
    /* subfiles and node-local */
    struct tio_agg_manifest *manifest; /* the handle's, shared by every process */
    char dir[PATH_MAX];         /* where this process's files are */
    int nfd;
    int *fds;                   /* by file index of the manifest, -1 when not open */
    int64_t eof;                /* file target: the file's size when the read began */
};

/* Open the shared file for an aggregator (flags: O_* access mode). */
int tio_agg_driver_file(struct tio_agg_driver *d, const char *path, int flags,
                        struct tio_err *err);

/* Subfiles / node-local: files <dir>/<base>.<k> of the manifest m. */
int tio_agg_driver_subfile(struct tio_agg_driver *d, struct tio_agg_manifest *m,
                           const char *dir, int flags, struct tio_err *err);

/* Full pwrite/pread loops (EINTR, short transfers); a read past the end of the file is an
 * error naming path and the bytes. */
int tio_agg_pwrite_all(int fd, const void *buf, int64_t len, int64_t off, const char *path,
                       struct tio_err *err);
int tio_agg_pread_all(int fd, void *buf, int64_t len, int64_t off, const char *path,
                      struct tio_err *err);

#endif
