/* ummap.h — user-level memory-mapped I/O (uMMAP-IO compatible API:
 * ch. 6 of Rivas-Gomez, PhD thesis, KTH 2019; docs/ummap.md).
 *
 * A mapping reserves address space and divides it into segments of seg_size bytes. The first
 * access to a segment loads it from the file (or zero-fills it when read_file is 0); writes
 * mark it dirty; umsync writes the dirty segments back and returns when they are durable.
 * Programs written for the original uMMAP-IO library compile unchanged against this header
 * and link with -ltierio.
 *
 * Every call returns 0 or an errno value (errno itself is not set). Environment, read once
 * at the first ummap() of a process:
 *   UMMAP_MEMCONFIG  static (default) | dynamic   how the node's memory limit is shared
 *   UMMAP_MEM_LIMIT  bytes of segments resident on the node (default: the memory available
 *                    to the process at start, cgroup limits included, times UMMAP_MEM_FACTOR)
 *   UMMAP_MEM_FACTOR fraction of the available memory used when UMMAP_MEM_LIMIT is unset
 *   UMMAP_BULK_SYNC  1: umsync coalesces contiguous dirty segments into large writes
 *   UMMAP_DRIVER     posix (default) | direct | uring: the I/O driver of new mappings
 * The full description, including thread safety and the fault mechanism, is in
 * docs/ummap.md. */
#ifndef UMMAP_H
#define UMMAP_H

#include "tierio/export.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Evict policies (the ptype argument). */
#define UMMAP_PTYPE_FIFO   0 /* first loaded, first evicted */
#define UMMAP_PTYPE_LIFO   1 /* last loaded, first evicted */
#define UMMAP_PTYPE_PLRU   2 /* pseudo least-recently-used (second chance on faults) */
#define UMMAP_PTYPE_PRND   3 /* pseudo-random */
#define UMMAP_PTYPE_WIRO_F 4 /* writes in, reads out: clean segments first, then FIFO */
#define UMMAP_PTYPE_WIRO_L 5 /* writes in, reads out: clean segments first, then LIFO */

/* flush_interval value that disables the implicit write-back of the I/O thread. */
#define UMMAP_NO_FLUSH ((unsigned int)-1)

/* Map size bytes of fd starting at offset (any offset) in segments of seg_size bytes (a
 * power of two, at least the page size; the last segment may be partial). prot is
 * PROT_READ, PROT_WRITE or both. flush_interval: seconds after which the I/O thread writes
 * back a dirty segment (UMMAP_NO_FLUSH: never). read_file: 0 zero-fills segments on first
 * access instead of reading them. ptype: UMMAP_PTYPE_*. The descriptor is duplicated:
 * the caller may close fd after the call. Errors: EINVAL (size 0, seg_size, prot, ptype,
 * offset < 0, ptr NULL), EBADF (fd not open),
 * EACCES (fd not open for reading, or not for writing with PROT_WRITE), ENODEV (fd is
 * not a regular file or block device), ENOMEM (address space), ENOSYS (no user fault
 * mechanism usable). */
TIO_API int ummap(size_t size, size_t seg_size, int prot, int fd, off_t offset,
          unsigned int flush_interval, int read_file, int ptype, void **ptr);

/* Write back the dirty segments of the mapping that contains addr and make them durable
 * (fdatasync); with evict != 0, then drop every segment from memory. A failed write-back
 * (ENOSPC, EIO...) is returned and the data stays dirty in memory. */
TIO_API int umsync(void *addr, int evict);

/* Point the mapping at fd / offset from now on (versioned checkpoints). With sync != 0 the
 * dirty segments are written to the old file first; the segments in memory then belong to
 * the new file and are written there by the next umsync. *new_addr gets the (unchanged)
 * base address. */
TIO_API int umremap(void *old_addr, int fd, off_t offset, int sync, void **new_addr);

/* Release the mapping, with sync != 0 writing it back first. If that write-back fails the
 * mapping is kept and the error returned. */
TIO_API int umunmap(void *addr, int sync);

/* Segments read from and written to storage by this process, over all mappings. */
TIO_API int umstats(unsigned int *num_reads, unsigned int *num_writes);

/* ---- tierio extensions ---- */

/* Per-mapping statistics. */
typedef struct tio_ummap_stats {
  uint64_t read_faults;   /* first accesses that were reads */
  uint64_t write_faults;  /* first accesses that were writes, and writes to clean segments */
  uint64_t seg_reads;     /* segments loaded from storage */
  uint64_t seg_writes;    /* segments written to storage */
  uint64_t bytes_read;
  uint64_t bytes_written;
  uint64_t write_ops;     /* write calls issued (fewer than seg_writes in bulk mode) */
  uint64_t evictions;     /* segments dropped from memory */
  uint64_t syncs;         /* umsync calls and I/O-thread passes that wrote something */
  size_t resident;        /* bytes of segments in memory now */
  size_t dirty;           /* bytes of dirty segments now */
} tio_ummap_stats_t;
TIO_API int tio_ummap_stats(void *addr, tio_ummap_stats_t *stats);

/* Extended creation: the arguments of ummap() plus the engine's options. */
typedef struct tio_ummap_opts {
  size_t size, seg_size;
  int prot, fd;
  off_t offset;
  unsigned int flush_interval;
  int read_file, ptype;
  const char *driver; /* "posix" | "direct" | "uring"; NULL: UMMAP_DRIVER or "posix" */
  int bulk_sync;      /* -1: UMMAP_BULK_SYNC; 0: segment by segment; 1: coalesced */
  void *fixed_addr;   /* NULL, or a page-aligned range of the caller's to map over
                         (MAP_FIXED); umunmap then leaves the range to its owner */
  int congruent;      /* 1: *ptr = start + offset % page, so that memory and file line up
                         page by page (what O_DIRECT write-back needs; the "direct" driver
                         then bypasses the page cache at any offset) */
  int sync_file;      /* 1: umsync of this mapping also writes back this process's other
                         sync_file mappings of the same file, and one fdatasync makes them
                         all durable; their own umsyncs then have nothing left to do (a
                         checkpoint of several mappings into one file) */
} tio_ummap_opts_t;
#define TIO_UMMAP_OPTS_INIT {0, 0, 0, -1, 0, UMMAP_NO_FLUSH, 1, UMMAP_PTYPE_FIFO, NULL, -1, NULL, 0, 0}
TIO_API int tio_ummap_open(const tio_ummap_opts_t *opts, void **ptr);

#ifdef __cplusplus
}
#endif
#endif
