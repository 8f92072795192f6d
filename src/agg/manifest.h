/* Where the data of subfile and node-local targets lives: extents of the access's byte
 * space, each stored contiguously in one data file at some offset. Every process keeps
 * the same manifest (updated alike everywhere from the plans, and exchanged between groups
 * of nodes at sync and before reads); one process writes
 * it, as text, to the path the handle was opened with. Pure C, unit-tested. */
#ifndef TIO_AGG_MANIFEST_H
#define TIO_AGG_MANIFEST_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define TIO_AGG_HOST_MAX 64

struct tio_agg_extent {
    int64_t lo, hi;     /* bytes [lo, hi) of the access's space */
    int file;           /* data file index */
    int64_t at;         /* their offset in that file */
};

struct tio_agg_mfile {
    char host[TIO_AGG_HOST_MAX]; /* node-local: the node holding it; "" = every node */
    int64_t size;                /* bytes allocated in it so far */
};

struct tio_agg_manifest {
    int node_local;              /* files are on node-local storage */
    char base[NAME_MAX + 1];     /* data files are <dir>/<base>.<index> */
    int nfiles;
    struct tio_agg_mfile *files;
    size_t next, cap;
    struct tio_agg_extent *ext;  /* sorted by lo, disjoint */
    int dirty;                   /* changed since loaded or saved */
};

/* An empty manifest with nfiles data files (hosts: NULL, or one per file). */
int tio_agg_manifest_init(struct tio_agg_manifest *m, int node_local, const char *base,
                          int nfiles, const char (*hosts)[TIO_AGG_HOST_MAX],
                          struct tio_err *err);
void tio_agg_manifest_free(struct tio_agg_manifest *m);

/* Bytes [lo, hi) are (re)written to data file `file`: the same extent keeps its place,
 * anything else is appended to the file; what they replace is dropped from older extents.
 * Sets *at to their offset in the file. */
int tio_agg_manifest_place(struct tio_agg_manifest *m, int64_t lo, int64_t hi, int file,
                           int64_t *at, struct tio_err *err);

/* The same with the place given (another group's extent): what it replaces is dropped,
 * the file is at least that long. */
int tio_agg_manifest_apply(struct tio_agg_manifest *m, const struct tio_agg_extent *e,
                           struct tio_err *err);

/* The extent holding byte x, or NULL. */
const struct tio_agg_extent *tio_agg_manifest_find(const struct tio_agg_manifest *m,
                                                   int64_t x);

/* Text form (what is written to the file) and back. */
int tio_agg_manifest_format(const struct tio_agg_manifest *m, char **text, size_t *len,
                            struct tio_err *err);
int tio_agg_manifest_parse(struct tio_agg_manifest *m, const char *text, const char *name,
                           struct tio_err *err);

#endif
