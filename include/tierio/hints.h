/* Names of the storage-window info hints (docs/win.md; after Rivas-Gomez et al., CCGrid 2017).
 *
 * Set them with MPI_Info_set on the info passed to MPI_Win_allocate,
 * MPI_Win_allocate_shared or MPI_Alloc_mem (the latter for MPI_Win_attach on
 * dynamic windows). Every hint has a tierio spelling and, where one exists, the
 * "swin_" alias other tools use; giving both with different values is an error. */
#ifndef TIERIO_HINTS_H
#define TIERIO_HINTS_H

#define TIO_WIN_HINT_ALLOC_TYPE  "alloc_type"              /* memory | storage */
#define TIO_WIN_HINT_FILENAME    "storage_alloc_filename"  /* file or block device */
#define TIO_WIN_HINT_OFFSET      "storage_alloc_offset"    /* bytes, any alignment */
#define TIO_WIN_HINT_FACTOR      "storage_alloc_factor"    /* 0..1 on storage, or auto */
#define TIO_WIN_HINT_ORDER       "storage_alloc_order"     /* memory_first | storage_first */
#define TIO_WIN_HINT_UNLINK      "storage_alloc_unlink"    /* true | false */
#define TIO_WIN_HINT_DISCARD     "storage_alloc_discard"   /* true | false */
#define TIO_WIN_HINT_ENGINE      "storage_alloc_engine"    /* mmap | ummap */
#define TIO_WIN_HINT_HUGEPAGES   "storage_alloc_hugepages" /* auto | true | false */
/* Tuning of the user-level engine (storage_alloc_engine=ummap only; include/ummap.h). */
#define TIO_WIN_HINT_SEGSIZE     "storage_alloc_segsize"   /* bytes, power of two >= page */
#define TIO_WIN_HINT_FLUSH_INTERVAL "storage_alloc_flush_interval" /* seconds, or "never" */
#define TIO_WIN_HINT_READFILE    "storage_alloc_readfile"  /* true | false */
#define TIO_WIN_HINT_POLICY      "storage_alloc_policy"    /* fifo lifo plru prnd wiro_f wiro_l, or 0..5 */
#define TIO_WIN_HINT_DRIVER      "storage_alloc_driver"    /* posix | direct | uring */
#define TIO_WIN_HINT_SYNC_SCOPE  "storage_alloc_sync_scope" /* window | file */

/* MPI-IO reserved hints that apply to storage windows. */
#define TIO_WIN_HINT_ACCESS_STYLE "access_style"
#define TIO_WIN_HINT_FILE_PERM   "file_perm"
#define TIO_WIN_HINT_STRIPING_FACTOR "striping_factor"
#define TIO_WIN_HINT_STRIPING_UNIT "striping_unit"

/* Aliases (the later, unpublished spelling). */
#define TIO_WIN_HINT_SWIN_FILENAME "swin_filename"
#define TIO_WIN_HINT_SWIN_OFFSET "swin_offset"
#define TIO_WIN_HINT_SWIN_FACTOR "swin_factor"
#define TIO_WIN_HINT_SWIN_ORDER  "swin_order"
#define TIO_WIN_HINT_SWIN_UNLINK "swin_unlink"
#define TIO_WIN_HINT_SWIN_IMPL   "swin_impl"
#define TIO_WIN_HINT_SWIN_SEGSIZE "swin_segsize"
#define TIO_WIN_HINT_SWIN_FLUSHINT "swin_flushint"
#define TIO_WIN_HINT_SWIN_READFILE "swin_readfile"
#define TIO_WIN_HINT_SWIN_PTYPE  "swin_ptype"

/* Deprecated spellings (one pattern, TIO_<LAYER>_HINT_<NAME>, for every layer). */
#define TIO_HINT_ALLOC_TYPE TIO_WIN_HINT_ALLOC_TYPE
#define TIO_HINT_FILENAME TIO_WIN_HINT_FILENAME
#define TIO_HINT_OFFSET TIO_WIN_HINT_OFFSET
#define TIO_HINT_FACTOR TIO_WIN_HINT_FACTOR
#define TIO_HINT_ORDER TIO_WIN_HINT_ORDER
#define TIO_HINT_UNLINK TIO_WIN_HINT_UNLINK
#define TIO_HINT_DISCARD TIO_WIN_HINT_DISCARD
#define TIO_HINT_ENGINE TIO_WIN_HINT_ENGINE
#define TIO_HINT_HUGEPAGES TIO_WIN_HINT_HUGEPAGES
#define TIO_HINT_SEGSIZE TIO_WIN_HINT_SEGSIZE
#define TIO_HINT_FLUSH_INTERVAL TIO_WIN_HINT_FLUSH_INTERVAL
#define TIO_HINT_READFILE TIO_WIN_HINT_READFILE
#define TIO_HINT_POLICY TIO_WIN_HINT_POLICY
#define TIO_HINT_DRIVER TIO_WIN_HINT_DRIVER
#define TIO_HINT_SYNC_SCOPE TIO_WIN_HINT_SYNC_SCOPE
#define TIO_HINT_ACCESS_STYLE TIO_WIN_HINT_ACCESS_STYLE
#define TIO_HINT_FILE_PERM TIO_WIN_HINT_FILE_PERM
#define TIO_HINT_STRIPING_FACTOR TIO_WIN_HINT_STRIPING_FACTOR
#define TIO_HINT_STRIPING_UNIT TIO_WIN_HINT_STRIPING_UNIT
#define TIO_HINT_SWIN_FILENAME TIO_WIN_HINT_SWIN_FILENAME
#define TIO_HINT_SWIN_OFFSET TIO_WIN_HINT_SWIN_OFFSET
#define TIO_HINT_SWIN_FACTOR TIO_WIN_HINT_SWIN_FACTOR
#define TIO_HINT_SWIN_ORDER TIO_WIN_HINT_SWIN_ORDER
#define TIO_HINT_SWIN_UNLINK TIO_WIN_HINT_SWIN_UNLINK
#define TIO_HINT_SWIN_IMPL TIO_WIN_HINT_SWIN_IMPL
#define TIO_HINT_SWIN_SEGSIZE TIO_WIN_HINT_SWIN_SEGSIZE
#define TIO_HINT_SWIN_FLUSHINT TIO_WIN_HINT_SWIN_FLUSHINT
#define TIO_HINT_SWIN_READFILE TIO_WIN_HINT_SWIN_READFILE
#define TIO_HINT_SWIN_PTYPE TIO_WIN_HINT_SWIN_PTYPE

#endif
