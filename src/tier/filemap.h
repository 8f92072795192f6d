/* A region of a file or block device mapped into memory: the storage half of a storage
 * window. POSIX only (no MPI), so it is unit-testable on its own.
 *
 * Space is reserved when the region is opened (posix_fallocate), so a full disk is an
 * error here and never a SIGBUS later. Shared mode (MAP_SHARED) makes the page cache the
 * window's memory: msync writes back exactly the dirty pages. Private mode (used for
 * storage_alloc_discard) maps copy-on-write; sync then writes the pages the process
 * changed, found through /proc/self/pagemap, and drops its private copies. */
#ifndef TIO_TIER_FILEMAP_H
#define TIO_TIER_FILEMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

struct tio_filemap {
    int fd;
    char path[4096];
    int created;        /* we created the file: remove it if opening fails */
    int is_blockdev;
    int private_map;    /* MAP_PRIVATE (discard mode) */
    uint64_t offset;    /* file offset of addr */
    size_t length;      /* bytes of the file the region covers */
    void *map;          /* page-aligned start of the mapping */
    size_t map_len;
    char *addr;         /* = map + (offset % page) */
};

/* The access_style values a mapping acts on (madvise); the hint is parsed in win/hints.c. */
enum { TIO_ACCESS_SEQUENTIAL = 1, TIO_ACCESS_RANDOM = 2, TIO_ACCESS_READ_ONCE = 4 };

struct tio_filemap_opts {
    mode_t perm;        /* for a created file */
    int private_map;
    int access_style;   /* TIO_ACCESS_* bits: madvise */
    int hugepages;      /* ask for large folios mapped by PMD (MADV_HUGEPAGE) */
    int striping;       /* striping hints were given */
};

/* Open (creating if needed) path and reserve [offset, offset+length). */
int tio_filemap_open(struct tio_filemap *fm, const char *path, uint64_t offset, size_t length,
                     const struct tio_filemap_opts *o, struct tio_err *err);
/* Map the region; at fixed (page-aligned, must be inside a reservation of ours, and
 * congruent to offset modulo the page size) or anywhere when fixed is NULL. */
int tio_filemap_map(struct tio_filemap *fm, void *fixed, const struct tio_filemap_opts *o,
                    struct tio_err *err);
/* Write back what changed in [addr, addr+len) (a sub-range of the region) and return
 * when it is durable. */
int tio_filemap_sync_range(struct tio_filemap *fm, char *addr, size_t len, struct tio_err *err);
int tio_filemap_sync(struct tio_filemap *fm, struct tio_err *err);
/* Unmap (unless keep_mapping: the caller owns the address range), close, and remove
 * the file when unlink_file. */
void tio_filemap_close(struct tio_filemap *fm, int unlink_file, int keep_mapping);

size_t tio_page_size(void);

#endif
