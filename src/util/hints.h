/* Parsing and validating the storage-window hints (DESIGN.md contract 1).
 * Pure C: the values come through a getter, so the parser is testable without MPI;
 * hints_info.c binds it to MPI_Info. */
#ifndef TIO_UTIL_HINTS_H
#define TIO_UTIL_HINTS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

enum tio_alloc_type { TIO_ALLOC_MEMORY = 0, TIO_ALLOC_STORAGE = 1 };
enum tio_alloc_order { TIO_ORDER_MEMORY_FIRST = 0, TIO_ORDER_STORAGE_FIRST = 1 };
enum tio_engine { TIO_ENGINE_MMAP = 0, TIO_ENGINE_UMMAP = 1 };

/* access_style values we act on (madvise). */
enum { TIO_ACCESS_SEQUENTIAL = 1, TIO_ACCESS_RANDOM = 2, TIO_ACCESS_READ_ONCE = 4 };

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

/* Returns 1 and fills val (NUL-terminated) when key is set, 0 when not. */
typedef int (*tio_hint_get_fn)(void *ctx, const char *key, char *val, size_t len);

/* Defaults, then every recognised key. Returns TIO_OK or the error class, with err set
 * naming the hint and the reason. Does not require a filename: callers decide. */
int tio_hints_parse(struct tio_hints *h, tio_hint_get_fn get, void *ctx, struct tio_err *err);

void tio_hints_default(struct tio_hints *h);

/* Whether large pages are asked for, "auto" resolved: yes unless the accesses are
 * random or the mapping is private (storage_alloc_discard). */
int tio_hints_hugepages(const struct tio_hints *h);

/* The names of the ummap evict policies, by UMMAP_PTYPE_* value. */
extern const char *const tio_policy_names[6];

/* Parse helpers, exposed for tests. Return 0 on success. */
int tio_parse_bool(const char *s, int *out);
int tio_parse_u64(const char *s, uint64_t *out);

#endif
