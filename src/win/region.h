/* The local memory of one storage window or storage allocation: one contiguous address
 * range, part anonymous memory and part a mapped file region (DESIGN.md contract 1,
 * storage_alloc_factor / storage_alloc_order). */
#ifndef TIO_WIN_REGION_H
#define TIO_WIN_REGION_H

#include <stddef.h>
#include <stdint.h>

#include "tier/filemap.h"
#include "win/hints.h"

struct tio_region {
    char *reserve;          /* the whole page-aligned range we mapped */
    size_t reserve_len;
    char *base;             /* what the application sees */
    size_t size;
    char *sync_addr;        /* what MPI_Win_sync writes back */
    size_t sync_len;
    int has_file;
    struct tio_filemap fm;  /* the file; mapped by the kernel unless um is set */
    void *um;               /* storage_alloc_engine=ummap: the engine's mapping */
    double factor;          /* fraction really on storage, after page rounding */
    int borrowed;           /* the range belongs to someone else (MPI): never unmapped */
    struct tio_hints hints;
};

/* Create the local range for size bytes as the hints say. mem_budget is the memory this
 * process may use for storage_alloc_factor=auto. Leaves nothing behind on error. */
int tio_region_create(struct tio_region *r, size_t size, const struct tio_hints *h,
                      uint64_t mem_budget, struct tio_err *err);

/* How many of size bytes go to storage under these hints (page rounding included); sets
 * r->hints, r->size and r->factor. -1 with err set when the hints cannot be honoured. */
long long tio_region_split(struct tio_region *r, size_t size, const struct tio_hints *h,
                           uint64_t mem_budget, struct tio_err *err);

/* The same inside a range someone else owns, in two steps. prepare lays the window out
 * and opens and reserves the file (storage_alloc_offset must be page-aligned); place maps
 * the file over the storage part of at (page-aligned, at least size bytes rounded up to
 * pages), leaving the memory part as it is. tierio never unmaps the range: its owner does,
 * and the file mapping with it. Before place, tio_region_destroy only closes (and removes,
 * with unlink) the file. */
int tio_region_prepare(struct tio_region *r, size_t size, const struct tio_hints *h,
                       uint64_t mem_budget, struct tio_err *err);
int tio_region_place(struct tio_region *r, char *at, struct tio_err *err);

/* A shared-window piece, in two steps with a barrier between them: every process first
 * reserves its own [offset+prefix, +size) of the one file, then maps the whole
 * [offset, offset+total) (so it can load and store into its peers' pieces). */
int tio_region_reserve_shared(struct tio_region *r, size_t size, size_t prefix,
                              const struct tio_hints *h, struct tio_err *err);
int tio_region_map_shared(struct tio_region *r, size_t prefix, size_t total,
                          struct tio_err *err);

/* Write back the dirty data and return when it is durable. */
int tio_region_sync(struct tio_region *r, struct tio_err *err);
/* The same for [addr, addr+len) inside the storage part (the ummap engine writes back
 * every dirty segment of the region). */
int tio_region_sync_range(struct tio_region *r, char *addr, size_t len, struct tio_err *err);

/* Sync (unless storage_alloc_discard), unmap, close, unlink if storage_alloc_unlink. */
int tio_region_destroy(struct tio_region *r, struct tio_err *err);

#endif
