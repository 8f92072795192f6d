/* The storage-window hints (DESIGN.md contract 1): their settings and their key table
 * (win/hints.c), read from the info of MPI_Win_allocate, MPI_Win_allocate_shared and
 * MPI_Alloc_mem and reported by MPI_Win_get_info. */
#ifndef TIO_WIN_HINTS_H
#define TIO_WIN_HINTS_H

#include <limits.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tier/filemap.h" /* TIO_ACCESS_* */
#include "util/settings.h"

enum tio_alloc_type { TIO_ALLOC_MEMORY = 0, TIO_ALLOC_STORAGE = 1 };
enum tio_alloc_order { TIO_ORDER_MEMORY_FIRST = 0, TIO_ORDER_STORAGE_FIRST = 1 };
enum tio_engine { TIO_ENGINE_MMAP = 0, TIO_ENGINE_UMMAP = 1 };

struct tio_hints {
    enum tio_alloc_type alloc_type;
    int storage_keys_seen;       /* some storage hint was given (alloc_type or not) */
    char filename[PATH_MAX];     /* "" when not given */
    uint64_t offset;
    double factor;               /* fraction of the window on storage, 0..1 */
    int factor_auto;             /* "auto": from the memory really available */
    enum tio_alloc_order order;
    int unlink;
    int discard;
    enum tio_engine engine;
    int engine_keys_seen;        /* a tuning hint of the ummap engine was given */
    uint64_t segsize;            /* ummap: segment bytes (default 1 MiB) */
    unsigned flush_interval;     /* ummap: seconds, UINT_MAX = never (default 30) */
    int readfile;                /* ummap: load segments from the file (default 1) */
    int policy;                  /* ummap: UMMAP_PTYPE_* (default FIFO) */
    char driver[16];             /* ummap: I/O driver, "" = UMMAP_DRIVER or posix */
    int sync_file;               /* ummap: MPI_Win_sync covers the process's windows of the
                                    same file that say so too (default 0: this window) */
    int hugepages;               /* -1 auto (yes unless access_style=random), 0, 1 */
    int file_perm_given;
    mode_t file_perm;            /* default 0600 */
    int access_style;            /* TIO_ACCESS_* bits */
    char access_style_str[128];
    long striping_factor;        /* 0 = not given */
    long striping_unit;          /* 0 = not given */
};

/* The key table of the window hints (for the reference and the tests). */
extern const struct tio_key_table tio_win_keys;

/* The window layer's environment variables. */
struct tio_win_env {
    int shm_overlay; /* TIERIO_SHM_OVERLAY: storage windows over MPI's shared memory */
};
extern const struct tio_key_table tio_win_env_keys;
int tio_win_env(struct tio_win_env *e, struct tio_err *err);

/* Defaults, then every key through the getter (pure C, unit-tested without MPI). Returns
 * TIO_OK or the error class, with err naming the hint. Does not require a filename:
 * callers decide. */
int tio_hints_parse(struct tio_hints *h, tio_key_get_fn get, void *ctx, struct tio_err *err);
void tio_hints_default(struct tio_hints *h);

/* The same from an MPI_Info, read once (MPI_INFO_NULL gives the defaults). */
int tio_hints_from_info(struct tio_hints *h, MPI_Info info, struct tio_err *err);

/* Set in info the hints in effect for a window or allocation with these hints; factor is
 * the fraction really placed on storage (after page rounding). */
void tio_hints_report(const struct tio_hints *h, double factor, MPI_Info info);

/* Whether large pages are asked for, "auto" resolved: yes unless the accesses are random
 * or the mapping is private (storage_alloc_discard). */
int tio_hints_hugepages(const struct tio_hints *h);

#endif
