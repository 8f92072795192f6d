/* Domains and rounds of one access: see plan.h. */
#include "agg/plan.h"
#include "agg/ranges.h"

#include <stdlib.h>
#include <string.h>

/* A range of the file given to one domain. */
struct tio_agg_segment {
    int64_t lo, hi;
    int domain;
};

static int nomem(struct tio_err *err)
{
    return tio_err_set(err, TIO_E_NOMEM, "aggregation plan: out of memory");
}

static int cmp_run(const void *a, const void *b)
{
    const struct tio_agg_run *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

static int cmp_move(const void *a, const void *b)
{
    const struct tio_agg_move *x = a, *y = b;
    if (x->round != y->round)
        return x->round < y->round ? -1 : 1;
    if (x->domain != y->domain)
        return x->domain < y->domain ? -1 : 1;
    return (x->boff > y->boff) - (x->boff < y->boff);
}

int tio_agg_pieces_disjoint(const struct tio_agg_piece *pieces, size_t n)
{
    struct tio_agg_run *e = malloc(sizeof *e * (n ? n : 1)); /* each process's extent */
    if (!e)
        return 0;
    size_t m = 0;
    for (size_t i = 0, j; i < n; i = j) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (j = i; j < n && pieces[j].rank == pieces[i].rank; j++)
            if (pieces[j].len > 0) {
                lo = pieces[j].off < lo ? pieces[j].off : lo;
                hi = pieces[j].off + pieces[j].len > hi ? pieces[j].off + pieces[j].len : hi;
            }
        if (lo < hi)
            e[m++] = (struct tio_agg_run){lo, hi};
    }
    qsort(e, m, sizeof *e, cmp_run);
    int ok = 1;
    for (size_t k = 1; k < m && ok; k++)
        ok = e[k - 1].hi <= e[k].lo;
    free(e);
    return ok;
}

/* The union of the pieces as sorted runs; notes overlaps and the byte counts. */
static int merge_runs(struct tio_agg_plan *p, const struct tio_agg_piece *pieces, size_t n,
                      struct tio_err *err)
{
    struct tio_agg_run *r = malloc(sizeof *r * (n ? n : 1));
    if (!r)
        return nomem(err);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (pieces[i].off < 0 || pieces[i].len < 0 || pieces[i].off > INT64_MAX - pieces[i].len) {
            free(r);
            return tio_err_set(err, TIO_E_ARG, "piece of rank %d: offset %lld, size %lld is "
                               "not a valid range of a file", pieces[i].rank,
                               (long long)pieces[i].off, (long long)pieces[i].len);
        }
        p->bytes += pieces[i].len;
        if (pieces[i].len > 0)
            r[m++] = (struct tio_agg_run){pieces[i].off, pieces[i].off + pieces[i].len};
    }
    qsort(r, m, sizeof *r, cmp_run);
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (k > 0 && r[i].lo <= r[k - 1].hi) {
            if (r[i].lo < r[k - 1].hi)
                p->overlap = 1;
            if (r[i].hi > r[k - 1].hi)
                r[k - 1].hi = r[i].hi;
        } else {
            r[k++] = r[i];
        }
    }
    p->runs = r;
    p->nruns = k;
    if (k) {
        p->lo = r[0].lo;
        p->hi = r[k - 1].hi;
    }
    return TIO_OK;
}

/* Index of the first run ending after x (nruns when none). */
static size_t run_after(const struct tio_agg_plan *p, int64_t x)
{
    return tio_agg_first_ending_after(p->runs, p->nruns, sizeof *p->runs, x);
}

/* The number of runs starting before x. */
static size_t runs_before(const struct tio_agg_plan *p, int64_t x)
{
    size_t a = 0, b = p->nruns;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (p->runs[m].lo < x)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* Covered bytes in [lo, hi). */
static int64_t covered(const struct tio_agg_plan *p, int64_t lo, int64_t hi)
{
    int64_t n = 0;
    for (size_t i = run_after(p, lo); i < p->nruns && p->runs[i].lo < hi; i++) {
        int64_t a = p->runs[i].lo > lo ? p->runs[i].lo : lo;
        int64_t b = p->runs[i].hi < hi ? p->runs[i].hi : hi;
        n += b - a;
    }
    return n;
}

static int alloc_domains(struct tio_agg_plan *p, int ndomains, struct tio_err *err)
{
    p->ndomains = ndomains;
    p->dom_lo = calloc((size_t)ndomains, sizeof *p->dom_lo);
    p->dom_hi = calloc((size_t)ndomains, sizeof *p->dom_hi);
    p->dom_bytes = calloc((size_t)ndomains, sizeof *p->dom_bytes);
    p->dom_first = calloc((size_t)ndomains + 1, sizeof *p->dom_first);
    return p->dom_lo && p->dom_hi && p->dom_bytes && p->dom_first ? TIO_OK : nomem(err);
}

/* Cut the covered bytes of every segment (sorted, disjoint) into windows, and number the
 * windows of each domain in file order: its rounds. */
static int make_windows(struct tio_agg_plan *p, const struct tio_agg_segment *seg, size_t nseg,
                        int64_t buffer, int64_t align, struct tio_err *err)
{
    size_t cap = 16;
    p->win = malloc(sizeof *p->win * cap);
    if (!p->win)
        return nomem(err);
    int *count = calloc((size_t)p->ndomains, sizeof *count);
    if (!count)
        return nomem(err);
    for (size_t s = 0; s < nseg; s++) {
        int64_t c = seg[s].lo;
        for (;;) {
            size_t i = run_after(p, c);
            if (i == p->nruns)
                break;
            if (p->runs[i].lo > c)
                c = p->runs[i].lo;
            if (c >= seg[s].hi)
                break;
            int64_t end = c + buffer;
            /* Windows end on the alignment, so that rounds write whole blocks. */
            if (align > 1 && buffer >= align && end - end % align > c)
                end -= end % align;
            if (end > seg[s].hi)
                end = seg[s].hi;
            /* ... and not in a hole: at the end of the last run starting before it (one
             * that also holds c, or a later one). */
            size_t j = runs_before(p, end) - 1;
            if (p->runs[j].hi < end)
                end = p->runs[j].hi;
            if (p->nwin == cap) {
                cap *= 2;
                struct tio_agg_window *w = realloc(p->win, sizeof *w * cap);
                if (!w) {
                    free(count);
                    return nomem(err);
                }
                p->win = w;
            }
            int d = seg[s].domain;
            p->win[p->nwin++] = (struct tio_agg_window){c, end, d, count[d]++};
            if (count[d] > p->nrounds)
                p->nrounds = count[d];
            c = end;
        }
    }
    /* Windows of each domain, by round. */
    p->dom_win = malloc(sizeof *p->dom_win * (p->nwin ? p->nwin : 1));
    if (!p->dom_win) {
        free(count);
        return nomem(err);
    }
    p->dom_first[0] = 0;
    for (int d = 0; d < p->ndomains; d++)
        p->dom_first[d + 1] = p->dom_first[d] + (size_t)count[d];
    for (size_t w = 0; w < p->nwin; w++)
        p->dom_win[p->dom_first[p->win[w].domain] + (size_t)p->win[w].round] = w;
    for (int d = 0; d < p->ndomains; d++) {
        size_t a = p->dom_first[d], b = p->dom_first[d + 1];
        if (a < b) {
            p->dom_lo[d] = p->win[p->dom_win[a]].lo;
            p->dom_hi[d] = p->win[p->dom_win[b - 1]].hi;
        }
        for (size_t k = a; k < b; k++) {
            const struct tio_agg_window *w = &p->win[p->dom_win[k]];
            p->dom_bytes[d] += covered(p, w->lo, w->hi);
        }
    }
    free(count);
    return TIO_OK;
}

int tio_agg_plan_make(struct tio_agg_plan *p, const struct tio_agg_piece *pieces, size_t n,
                      int ndomains, int64_t buffer, int64_t align, struct tio_err *err)
{
    memset(p, 0, sizeof *p);
    if (ndomains < 1 || buffer < 1 || align < 1)
        return tio_err_set(err, TIO_E_ARG, "aggregation plan: %d domains, buffer %lld, "
                           "alignment %lld", ndomains, (long long)buffer, (long long)align);
    if (merge_runs(p, pieces, n, err) || alloc_domains(p, ndomains, err))
        goto fail;
    int64_t total = covered(p, p->lo, p->hi);
    struct tio_agg_segment *seg = malloc(sizeof *seg * (size_t)ndomains);
    if (!seg) {
        nomem(err);
        goto fail;
    }
    /* Boundary k after k/ndomains of the covered bytes, moved to the nearest aligned
     * offset: domains balance data, not file span, so holes and skewed sizes do not leave
     * aggregators idle. */
    int64_t prev = p->lo;
    size_t r = 0;
    int64_t before = 0; /* covered bytes before run r */
    for (int k = 0; k < ndomains; k++) {
        int64_t b;
        if (k == ndomains - 1) {
            b = p->hi;
        } else {
            int64_t t = (int64_t)((__int128)total * (k + 1) / ndomains);
            while (r < p->nruns && before + (p->runs[r].hi - p->runs[r].lo) <= t) {
                before += p->runs[r].hi - p->runs[r].lo;
                r++;
            }
            b = r < p->nruns ? p->runs[r].lo + (t - before) : p->hi;
            if (align > 1)
                b = (b + align / 2) / align * align;
            if (b > p->hi)
                b = p->hi;
        }
        if (b < prev)
            b = prev;
        seg[k] = (struct tio_agg_segment){prev, b, k};
        prev = b;
    }
    int rc = make_windows(p, seg, (size_t)ndomains, buffer, align, err);
    free(seg);
    if (rc)
        goto fail;
    return TIO_OK;
fail:
    tio_agg_plan_free(p);
    return err->cls;
}

void tio_agg_plan_free(struct tio_agg_plan *p)
{
    free(p->dom_lo);
    free(p->dom_hi);
    free(p->dom_bytes);
    free(p->dom_first);
    free(p->dom_win);
    free(p->runs);
    free(p->win);
    memset(p, 0, sizeof *p);
}

const struct tio_agg_window *tio_agg_plan_window(const struct tio_agg_plan *p, int d, int round)
{
    if (d < 0 || d >= p->ndomains || round < 0)
        return NULL;
    size_t k = p->dom_first[d] + (size_t)round;
    return k < p->dom_first[d + 1] ? &p->win[p->dom_win[k]] : NULL;
}

/* The window holding byte x, or NULL. */
static const struct tio_agg_window *window_of(const struct tio_agg_plan *p, int64_t x)
{
    size_t a = tio_agg_first_ending_after(p->win, p->nwin, sizeof *p->win, x);
    return a < p->nwin && p->win[a].lo <= x ? &p->win[a] : NULL;
}

int tio_agg_plan_moves(const struct tio_agg_plan *p, const struct tio_agg_piece *pieces,
                       size_t n, struct tio_agg_move **out, size_t *nout, struct tio_err *err)
{
    size_t cap = n + 8, m = 0;
    struct tio_agg_move *mv = malloc(sizeof *mv * cap);
    if (!mv)
        return nomem(err);
    for (size_t i = 0; i < n; i++) {
        int64_t end = pieces[i].off + pieces[i].len;
        for (int64_t x = pieces[i].off; x < end;) {
            const struct tio_agg_window *w = window_of(p, x);
            if (!w) {
                free(mv);
                return tio_err_set(err, TIO_E_OTHER, "aggregation plan: byte %lld of rank "
                                   "%d's piece is in no window", (long long)x,
                                   pieces[i].rank);
            }
            int64_t len = (w->hi < end ? w->hi : end) - x;
            if (m == cap) {
                cap *= 2;
                struct tio_agg_move *t = realloc(mv, sizeof *t * cap);
                if (!t) {
                    free(mv);
                    return nomem(err);
                }
                mv = t;
            }
            mv[m++] = (struct tio_agg_move){w->round, w->domain, x - w->lo,
                                            pieces[i].mem + (x - pieces[i].off), len};
            x += len;
        }
    }
    qsort(mv, m, sizeof *mv, cmp_move);
    if (m == 0) {
        free(mv);
        mv = NULL;
    }
    *out = mv;
    *nout = m;
    return TIO_OK;
}

size_t tio_agg_plan_runs(const struct tio_agg_plan *p, const struct tio_agg_window *w,
                         struct tio_agg_run *out, size_t max)
{
    size_t k = 0;
    for (size_t i = run_after(p, w->lo); i < p->nruns && p->runs[i].lo < w->hi; i++, k++) {
        if (k < max) {
            out[k].lo = p->runs[i].lo > w->lo ? p->runs[i].lo : w->lo;
            out[k].hi = p->runs[i].hi < w->hi ? p->runs[i].hi : w->hi;
        }
    }
    return k;
}
