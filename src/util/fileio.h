/* Whole-file I/O that every layer shares: transfers that finish (short counts and EINTR
 * handled once, here), a directory made durable, output files created without following
 * links, and the durable atomic replace every manifest and site file is written with.
 *
 * The loops return 0, or -1 with errno set; a write that makes no progress sets ENOSPC
 * (the file system is full), a read that ends early sets EIO unless the caller asks for the
 * count. The helpers taking a struct tio_err name the path in their message. */
#ifndef TIO_UTIL_FILEIO_H
#define TIO_UTIL_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

/* Write len bytes at the file offset (write) or at off (pwrite). */
int tio_write_full(int fd, const void *buf, size_t len);
int tio_pwrite_full(int fd, const void *buf, size_t len, uint64_t off);

/* Read len bytes at off. Returns the bytes read (less than len only at the end of the
 * file), or -1 with errno set. */
ssize_t tio_pread_full(int fd, void *buf, size_t len, uint64_t off);

/* Make the entries of a directory durable (after a create, rename or unlink in it). A
 * file system with nothing to sync for directories (EINVAL, some FUSE ones) is fine. */
int tio_fsync_dir(const char *path, struct tio_err *err);

/* The directory part of path into dir ("." for a bare name). -1 when it does not fit. */
int tio_dirname_of(const char *path, char *dir, size_t len);

/* Create a new file for writing, never through a symbolic link and never over an existing
 * file (O_CREAT | O_EXCL | O_NOFOLLOW): a link planted at a predictable name makes this
 * fail instead of redirecting the write. Returns the descriptor, or -1 with errno set. */
int tio_create_new(const char *path, mode_t mode);

/* Replace path by a file holding data[0..len), durably and atomically: readers see the old
 * content or the new, never a part, also after a crash. The new content goes to a
 * temporary of an unpredictable name in the same directory (tio_create_new), is flushed
 * (fdatasync), renamed over path, and the directory is synced so that the rename itself
 * survives a crash. On any error the temporary is removed and path is left as it was. */
int tio_replace_file(const char *path, const void *data, size_t len, mode_t mode,
                     struct tio_err *err);

#endif
