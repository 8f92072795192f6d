/* File views as byte ranges: see flatten.h. The type is walked through
 * MPI_Type_get_envelope / MPI_Type_get_contents, each constructor repeating the blocks of
 * its old type at its displacements; a part that is contiguous bytes is one block at once
 * (most filetypes bottom out in one: a row of a subarray, a vector's block). */
#include "agg/flatten.h"

#include <stdlib.h>
#include <string.h>

#define DEPTH_MAX 16

static int add(struct tio_agg_flat *f, int64_t off, int64_t len, size_t max)
{
    if (len <= 0)
        return 0;
    if (f->n && f->off[f->n - 1] + f->len[f->n - 1] == off) {
        f->len[f->n - 1] += len;
        return 0;
    }
    if (f->n == max)
        return -1;
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        int64_t *o = realloc(f->off, sizeof *o * cap);
        if (!o)
            return -1;
        f->off = o;
        int64_t *l = realloc(f->len, sizeof *l * cap);
        if (!l)
            return -1;
        f->len = l;
        f->cap = cap;
    }
    f->off[f->n] = off;
    f->len[f->n++] = len;
    return 0;
}

/* Its bytes are one run: (true lb, size); else 0. */
static int dense(MPI_Datatype t, int64_t *at, int64_t *size)
{
    int s;
    MPI_Aint tlb, text;
    if (PMPI_Type_size(t, &s) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS)
        return 0;
    *at = tlb;
    *size = s;
    return s == 0 || (MPI_Aint)s == text;
}

static int64_t extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    return PMPI_Type_get_extent(t, &lb, &ext) == MPI_SUCCESS ? (int64_t)ext : 0;
}

static int walk(MPI_Datatype t, int64_t base, size_t max, struct tio_agg_flat *f, int depth);

/* count copies of old, copy i at base + disp(i) (bytes) and each a run of blen elements. */
struct blocks {
    int count;
    const int *blen;               /* per block, or NULL: one length, blen1 */
    int blen1;
    const int *idisp;              /* displacements in extents of old ... */
    const MPI_Aint *adisp;         /* ... or in bytes */
    int64_t stride, astride;       /* regular: block i at i * stride extents (or astride
                                      bytes) when no displacement array */
};

static int repeat(MPI_Datatype old, int64_t base, const struct blocks *b, size_t max,
                  struct tio_agg_flat *f, int depth)
{
    int64_t ext = extent_of(old), at, size;
    int whole = dense(old, &at, &size) && size == ext;
    for (int i = 0; i < b->count; i++) {
        int64_t d = b->idisp ? (int64_t)b->idisp[i] * ext
                    : b->adisp ? (int64_t)b->adisp[i]
                    : b->astride ? (int64_t)i * b->astride
                                 : (int64_t)i * b->stride * ext;
        int n = b->blen ? b->blen[i] : b->blen1;
        if (whole) { /* n copies back to back: one run */
            if (add(f, base + d + at, (int64_t)n * size, max))
                return -1;
            continue;
        }
        for (int j = 0; j < n; j++)
            if (walk(old, base + d + (int64_t)j * ext, max, f, depth + 1))
                return -1;
    }
    return 0;
}

/* The subarray's rows (its fastest dimension) in its own order. */
static int subarray(const int *ints, MPI_Datatype old, int64_t base, size_t max,
                    struct tio_agg_flat *f, int depth)
{
    int nd = ints[0];
    const int *sizes = ints + 1, *subs = ints + 1 + nd, *starts = ints + 1 + 2 * nd;
    int c_order = ints[1 + 3 * nd] == MPI_ORDER_C;
    if (nd < 1 || nd > 32)
        return -1;
    int64_t stride[32], idx[32] = {0};
    /* dims from the slowest to the fastest: perm[0] slowest */
    int perm[32];
    for (int k = 0; k < nd; k++)
        perm[k] = c_order ? k : nd - 1 - k;
    int64_t s = 1;
    for (int k = nd - 1; k >= 0; k--) {
        stride[perm[k]] = s;
        s *= sizes[perm[k]];
    }
    for (int k = 0; k < nd; k++)
        if (subs[k] <= 0)
            return 0; /* empty */
    int fast = perm[nd - 1];
    struct blocks row = {.count = 1, .blen1 = subs[fast], .adisp = NULL};
    int64_t ext = extent_of(old);
    for (;;) {
        int64_t e = 0;
        for (int k = 0; k < nd; k++)
            e += (starts[k] + (k == fast ? 0 : idx[k])) * stride[k];
        if (repeat(old, base + e * ext, &row, max, f, depth))
            return -1;
        int k = nd - 2; /* next row: odometer over the other dimensions */
        while (k >= 0 && ++idx[perm[k]] == subs[perm[k]])
            idx[perm[k--]] = 0;
        if (k < 0)
            return 0;
    }
}

static int walk(MPI_Datatype t, int64_t base, size_t max, struct tio_agg_flat *f, int depth)
{
    int64_t at, size;
    if (dense(t, &at, &size))
        return add(f, base + at, size, max);
    int ni, na, nt, comb;
    if (depth > DEPTH_MAX || PMPI_Type_get_envelope(t, &ni, &na, &nt, &comb) != MPI_SUCCESS ||
        comb == MPI_COMBINER_NAMED) /* a named type with holes (MPI_SHORT_INT) */
        return -1;
    int *ints = malloc(sizeof *ints * (size_t)(ni + 1));
    MPI_Aint *addrs = malloc(sizeof *addrs * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof *types * (size_t)(nt + 1));
    int rc = -1;
    if (!ints || !addrs || !types ||
        PMPI_Type_get_contents(t, ni, na, nt, ints, addrs, types) != MPI_SUCCESS) {
        free(ints);
        free(addrs);
        free(types);
        return -1;
    }
    struct blocks b = {0};
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* bounds change, the data stays where it is */
        rc = walk(types[0], base, max, f, depth + 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        b = (struct blocks){.count = 1, .blen1 = ints[0]};
        rc = repeat(types[0], base, &b, max, f, depth);
        break;
    case MPI_COMBINER_VECTOR:
        b = (struct blocks){.count = ints[0], .blen1 = ints[1], .stride = ints[2]};
        rc = ints[2] ? repeat(types[0], base, &b, max, f, depth) : -1;
        break;
    case MPI_COMBINER_HVECTOR:
        b = (struct blocks){.count = ints[0], .blen1 = ints[1], .astride = addrs[0]};
        rc = addrs[0] ? repeat(types[0], base, &b, max, f, depth) : -1;
        break;
    case MPI_COMBINER_INDEXED:
        b = (struct blocks){.count = ints[0], .blen = ints + 1, .idisp = ints + 1 + ints[0]};
        rc = repeat(types[0], base, &b, max, f, depth);
        break;
    case MPI_COMBINER_HINDEXED:
        b = (struct blocks){.count = ints[0], .blen = ints + 1, .adisp = addrs};
        rc = repeat(types[0], base, &b, max, f, depth);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        b = (struct blocks){.count = ints[0], .blen1 = ints[1], .idisp = ints + 2};
        rc = repeat(types[0], base, &b, max, f, depth);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        b = (struct blocks){.count = ints[0], .blen1 = ints[1], .adisp = addrs};
        rc = repeat(types[0], base, &b, max, f, depth);
        break;
    case MPI_COMBINER_STRUCT:
        rc = 0;
        for (int i = 0; i < ints[0] && !rc; i++) {
            b = (struct blocks){.count = 1, .blen1 = ints[1 + i], .adisp = addrs + i};
            rc = repeat(types[i], base, &b, max, f, depth);
        }
        break;
    case MPI_COMBINER_SUBARRAY:
        rc = subarray(ints, types[0], base, max, f, depth);
        break;
    default: /* darray, Fortran parameterised types, ...: MPI does those itself */
        rc = -1;
    }
    for (int i = 0; i < nt; i++) {
        int ni2, na2, nt2, c2;
        if (PMPI_Type_get_envelope(types[i], &ni2, &na2, &nt2, &c2) == MPI_SUCCESS &&
            c2 != MPI_COMBINER_NAMED)
            PMPI_Type_free(&types[i]);
    }
    free(ints);
    free(addrs);
    free(types);
    return rc;
}

int tio_agg_flatten(MPI_Datatype type, size_t max, struct tio_agg_flat *f)
{
    memset(f, 0, sizeof *f);
    int size;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return -1;
    f->size = size;
    f->extent = extent_of(type);
    if (walk(type, 0, max, f, 0)) {
        tio_agg_flat_free(f);
        return -1;
    }
    int64_t sum = 0;
    for (size_t i = 0; i < f->n; i++)
        sum += f->len[i];
    if (sum != f->size) { /* (cannot happen for a type MPI accepted; never guess) */
        tio_agg_flat_free(f);
        return -1;
    }
    return 0;
}

void tio_agg_flat_free(struct tio_agg_flat *f)
{
    free(f->off);
    free(f->len);
    memset(f, 0, sizeof *f);
}

int tio_agg_flat_ranges(const struct tio_agg_flat *f, MPI_Offset disp, int64_t first,
                        int64_t bytes, size_t max, MPI_Offset **off, MPI_Offset **len,
                        size_t *n)
{
    *off = *len = NULL;
    *n = 0;
    if (bytes == 0)
        return 0;
    if (f->n == 0 || f->size <= 0 || f->off[0] < 0 ||
        f->off[f->n - 1] + f->len[f->n - 1] > f->off[0] + f->extent)
        return -1; /* tiles would overlap or go backwards */
    for (size_t i = 1; i < f->n; i++)
        if (f->off[i] < f->off[i - 1] + f->len[i - 1])
            return -1; /* not increasing (a filetype must be) */
    size_t cap = 16;
    MPI_Offset *o = malloc(sizeof *o * cap), *l = malloc(sizeof *l * cap);
    if (!o || !l)
        goto fail;
    int64_t tile = first / f->size, r = first % f->size, left = bytes;
    size_t i = 0;
    while (r >= f->len[i]) /* the block holding data byte r of the tile */
        r -= f->len[i++];
    while (left > 0) {
        int64_t take = f->len[i] - r < left ? f->len[i] - r : left;
        MPI_Offset at = disp + tile * f->extent + f->off[i] + r;
        if (*n && o[*n - 1] + l[*n - 1] == at) {
            l[*n - 1] += take;
        } else {
            if (*n == max)
                goto fail;
            if (*n == cap) {
                cap *= 2;
                MPI_Offset *o2 = realloc(o, sizeof *o * cap);
                if (!o2)
                    goto fail;
                o = o2;
                MPI_Offset *l2 = realloc(l, sizeof *l * cap);
                if (!l2)
                    goto fail;
                l = l2;
            }
            o[*n] = at;
            l[(*n)++] = take;
        }
        left -= take;
        r = 0;
        if (++i == f->n)
            i = 0, tile++;
    }
    *off = o;
    *len = l;
    return 0;
fail:
    free(o);
    free(l);
    *n = 0;
    return -1;
}
