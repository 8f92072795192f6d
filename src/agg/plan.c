/* Domains and rounds of one access: see plan.h. */
#include "agg/plan.h"
#include "agg/ranges.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static int nomem(struct tio_err *err)
{
    return tio_err_set(err, TIO_E_NOMEM, "aggregation plan: out of memory");
}

static int cmp_run(const void *a, const void *b)
{
    const struct tio_agg_run *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

static int cmp_run_of_segment(const void *a, const void *b)
{
    const struct tio_agg_segment *x = a, *y = b;
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

int tio_agg_merge_runs(const struct tio_agg_piece *pieces, size_t n, struct tio_agg_run **runs,
                       size_t *nruns, int64_t *bytes, int *overlap, struct tio_err *err)
{
    *bytes = 0;
    *overlap = 0;
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
        *bytes += pieces[i].len;
        if (pieces[i].len > 0)
            r[m++] = (struct tio_agg_run){pieces[i].off, pieces[i].off + pieces[i].len};
    }
    qsort(r, m, sizeof *r, cmp_run);
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (k > 0 && r[i].lo <= r[k - 1].hi) {
            if (r[i].lo < r[k - 1].hi)
                *overlap = 1;
            if (r[i].hi > r[k - 1].hi)
                r[k - 1].hi = r[i].hi;
        } else {
            r[k++] = r[i];
        }
    }
    *runs = r;
    *nruns = k;
    return TIO_OK;
}

/* The plan's runs (tio_agg_merge_runs) with its byte counts and bounds. */
static int merge_runs(struct tio_agg_plan *p, const struct tio_agg_piece *pieces, size_t n,
                      struct tio_err *err)
{
    if (tio_agg_merge_runs(pieces, n, &p->runs, &p->nruns, &p->bytes, &p->overlap, err))
        return err->cls;
    size_t k = p->nruns;
    struct tio_agg_run *r = p->runs;
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

/* Cut the covered bytes of every segment (sorted, disjoint) into windows of at most
 * window[domain] bytes (buffer when window is NULL), and number the windows of each domain
 * in file order: its rounds. */
static int make_windows(struct tio_agg_plan *p, const struct tio_agg_segment *seg, size_t nseg,
                        const int64_t *window, int64_t buffer, int64_t align,
                        struct tio_err *err)
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
            int64_t size = window ? window[seg[s].domain] : buffer, end = c + size;
            /* Windows end on the alignment, so that rounds write whole blocks. */
            if (align > 1 && size >= align && end - end % align > c)
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

/* cut[k]: the end of domain k of nd sharing [lo, hi) (cut[nd - 1] = hi). Boundary k after
 * (k+1)/nd of the covered bytes, moved to the nearest aligned offset: domains balance data,
 * not file span, so holes and skewed sizes do not leave aggregators idle. */
static void balanced_cuts(const struct tio_agg_plan *p, int64_t lo, int64_t hi, int nd,
                          int64_t align, int64_t *cut)
{
    int64_t total = covered(p, lo, hi), prev = lo, before = 0; /* covered before run r */
    size_t r = run_after(p, lo);
    for (int k = 0; k < nd; k++) {
        int64_t b;
        if (k == nd - 1) {
            b = hi;
        } else {
            int64_t t = (int64_t)((__int128)total * (k + 1) / nd);
            while (r < p->nruns && p->runs[r].lo < hi) {
                int64_t a = p->runs[r].lo > lo ? p->runs[r].lo : lo;
                int64_t e = p->runs[r].hi < hi ? p->runs[r].hi : hi;
                if (before + (e - a) > t)
                    break;
                before += e - a;
                r++;
            }
            b = r < p->nruns && p->runs[r].lo < hi
                    ? (p->runs[r].lo > lo ? p->runs[r].lo : lo) + (t - before)
                    : hi;
            if (align > 1)
                b = (b + align / 2) / align * align;
            if (b > hi)
                b = hi;
        }
        cut[k] = prev = b < prev ? prev : b;
    }
}

/* The most windows any domain of cuts needs (holes aside). */
static int64_t rounds_of(const struct tio_agg_plan *p, const int64_t *cut, int nd,
                         int64_t buffer)
{
    int64_t most = 0;
    for (int k = 0; k < nd; k++) {
        int64_t n = (covered(p, k ? cut[k - 1] : p->lo, cut[k]) + buffer - 1) / buffer;
        most = n > most ? n : most;
    }
    return most;
}

/* A place between two nodes' data: bytes before `lo` end with node `before`'s, bytes from
 * `hi` on start with node `after`'s, nothing in between. */
struct edge {
    int64_t lo, hi;
    int before, after;
};

static int cmp_piece_off(const void *a, const void *b)
{
    const struct tio_agg_piece *x = *(const struct tio_agg_piece *const *)a,
                               *y = *(const struct tio_agg_piece *const *)b;
    return (x->off > y->off) - (x->off < y->off);
}

/* The edges between consecutive pieces of different nodes, in file order; -1 when out of
 * memory. */
static ssize_t node_edges(const struct tio_agg_piece *pieces, size_t n, const int *node_of,
                          struct edge **out)
{
    const struct tio_agg_piece **s = malloc(sizeof *s * (n ? n : 1));
    struct edge *e = malloc(sizeof *e * (n ? n : 1));
    if (!s || !e) {
        free(s);
        free(e);
        return -1;
    }
    size_t m = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        if (pieces[i].len > 0)
            s[m++] = &pieces[i];
    qsort(s, m, sizeof *s, cmp_piece_off);
    for (size_t i = 0; i + 1 < m; i++) {
        int a = node_of[s[i]->rank], b = node_of[s[i + 1]->rank];
        if (a != b)
            e[k++] = (struct edge){s[i]->off + s[i]->len, s[i + 1]->off, a, b};
    }
    free(s);
    *out = e;
    return (ssize_t)k;
}

/* Moves each boundary of cut to the nearest edge between its two aggregators' nodes
 * within tol (and after the boundary before it). Returns how many moved. */
static int follow_data(const struct edge *e, size_t ne, const int *dom_node, int nd,
                       int64_t tol, int64_t *cut)
{
    int moved = 0;
    size_t first = 0;
    for (int k = 0; k + 1 < nd; k++) {
        int64_t t = cut[k], floor = k ? cut[k - 1] : INT64_MIN, best = -1, dist = tol + 1;
        while (first < ne && e[first].hi < t - tol)
            first++;
        for (size_t i = first; i < ne && e[i].lo <= t + tol; i++) {
            if (e[i].before != dom_node[k] || e[i].after != dom_node[k + 1])
                continue;
            int64_t at = t < e[i].lo ? e[i].lo : t > e[i].hi ? e[i].hi : t;
            int64_t d = at > t ? at - t : t - at;
            if (at >= floor && d < dist)
                best = at, dist = d;
        }
        if (best >= 0 && best != t) {
            cut[k] = best;
            moved++;
        }
        if (cut[k + 1] < cut[k])
            cut[k + 1] = cut[k];
    }
    return moved;
}

int tio_agg_plan_make(struct tio_agg_plan *p, const struct tio_agg_piece *pieces, size_t n,
                      int ndomains, int64_t buffer, int64_t align,
                      const struct tio_agg_locality *loc, struct tio_err *err)
{
    memset(p, 0, sizeof *p);
    if (ndomains < 1 || buffer < 1 || align < 1)
        return tio_err_set(err, TIO_E_ARG, "aggregation plan: %d domains, buffer %lld, "
                           "alignment %lld", ndomains, (long long)buffer, (long long)align);
    if (merge_runs(p, pieces, n, err) || alloc_domains(p, ndomains, err))
        goto fail;
    struct tio_agg_segment *seg = malloc(sizeof *seg * (size_t)ndomains);
    int64_t *cut = malloc(sizeof *cut * 2 * (size_t)ndomains), *near = cut + ndomains;
    if (!seg || !cut) {
        free(seg);
        free(cut);
        nomem(err);
        goto fail;
    }
    balanced_cuts(p, p->lo, p->hi, ndomains, align, cut);
    if (loc && ndomains > 1 && !p->overlap && align <= TIO_AGG_LOCAL_ALIGN_MAX) {
        struct edge *e;
        ssize_t ne = node_edges(pieces, n, loc->node_of, &e);
        if (ne < 0) {
            free(seg);
            free(cut);
            nomem(err);
            goto fail;
        }
        memcpy(near, cut, sizeof *cut * (size_t)ndomains);
        int64_t tol = covered(p, p->lo, p->hi) / ndomains / 2;
        int moved = follow_data(e, (size_t)ne, loc->dom_node, ndomains, tol, near);
        if (moved && rounds_of(p, near, ndomains, buffer) <= rounds_of(p, cut, ndomains, buffer)) {
            memcpy(cut, near, sizeof *cut * (size_t)ndomains);
            p->followed = moved;
        }
        free(e);
    }
    for (int k = 0; k < ndomains; k++)
        seg[k] = (struct tio_agg_segment){k ? cut[k - 1] : p->lo, cut[k], k};
    free(cut);
    int rc = make_windows(p, seg, (size_t)ndomains, NULL, buffer, align, err);
    free(seg);
    if (rc)
        goto fail;
    return TIO_OK;
fail:
    tio_agg_plan_free(p);
    return err->cls;
}

void tio_agg_spans_of(const struct tio_agg_piece *pieces, size_t n, const int *node_of,
                      struct tio_agg_run *span, int nnodes)
{
    for (int k = 0; k < nnodes; k++)
        span[k] = (struct tio_agg_run){INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < n; i++)
        if (pieces[i].len > 0)
            tio_agg_span_add(span, node_of[pieces[i].rank], pieces[i].off,
                             pieces[i].off + pieces[i].len);
}

void tio_agg_span_add(struct tio_agg_run *span, int node, int64_t lo, int64_t hi)
{
    if (lo >= hi)
        return;
    if (lo < span[node].lo)
        span[node].lo = lo;
    if (hi > span[node].hi)
        span[node].hi = hi;
}

int tio_agg_spans_apart(const struct tio_agg_run *span, int nnodes, const int *ndom_of_node,
                        struct tio_agg_run *scratch)
{
    int m = 0;
    for (int k = 0; k < nnodes; k++) {
        if (span[k].lo >= span[k].hi)
            continue; /* no data */
        if (ndom_of_node[k] < 1)
            return 0; /* its bytes would have to leave the node */
        scratch[m++] = span[k];
    }
    qsort(scratch, (size_t)m, sizeof *scratch, cmp_run);
    for (int i = 1; i < m; i++)
        if (scratch[i - 1].hi > scratch[i].lo)
            return 0;
    return 1;
}

int tio_agg_plan_by_node(struct tio_agg_plan *p, const struct tio_agg_piece *pieces, size_t n,
                         int ndomains, int64_t buffer, int64_t align,
                         const struct tio_agg_locality *loc, int nnodes, struct tio_err *err)
{
    memset(p, 0, sizeof *p);
    if (ndomains < 1 || buffer < 1 || align < 1 || nnodes < 1)
        return tio_err_set(err, TIO_E_ARG, "aggregation plan: %d domains on %d nodes, buffer "
                           "%lld, alignment %lld", ndomains, nnodes, (long long)buffer,
                           (long long)align);
    if (merge_runs(p, pieces, n, err) || alloc_domains(p, ndomains, err))
        goto fail;
    struct tio_agg_run *span = malloc(sizeof *span * (size_t)nnodes);
    struct tio_agg_segment *seg = malloc(sizeof *seg * (size_t)ndomains);
    int64_t *cut = malloc(sizeof *cut * (size_t)ndomains);
    int *dom = malloc(sizeof *dom * (size_t)ndomains);
    int *start = calloc((size_t)nnodes + 1, sizeof *start); /* node k's: dom[start[k] ..] */
    size_t nseg = 0;
    if (!span || !seg || !cut || !dom || !start) {
        nomem(err);
        goto out;
    }
    /* The domains of each node, in domain order (a counting sort: one pass each). */
    for (int d = 0; d < ndomains; d++)
        start[loc->dom_node[d] + 1]++;
    for (int k = 0; k < nnodes; k++)
        start[k + 1] += start[k];
    for (int d = 0; d < ndomains; d++)
        dom[start[loc->dom_node[d]]++] = d;
    for (int k = nnodes; k > 0; k--) /* (the fill moved each start to the next node's) */
        start[k] = start[k - 1];
    start[0] = 0;
    tio_agg_spans_of(pieces, n, loc->node_of, span, nnodes);
    for (int k = 0; k < nnodes; k++) {
        if (span[k].lo >= span[k].hi)
            continue;
        int m = start[k + 1] - start[k];
        const int *mine = dom + start[k];
        if (m == 0) {
            tio_err_set(err, TIO_E_OTHER, "aggregation plan: node %d has data and no "
                        "aggregator", k);
            goto out;
        }
        balanced_cuts(p, span[k].lo, span[k].hi, m, align, cut);
        for (int j = 0; j < m; j++)
            seg[nseg++] = (struct tio_agg_segment){j ? cut[j - 1] : span[k].lo, cut[j], mine[j]};
    }
    qsort(seg, nseg, sizeof *seg, cmp_run_of_segment);
    for (size_t i = 1; i < nseg && err->cls == TIO_OK; i++)
        if (seg[i - 1].hi > seg[i].lo)
            tio_err_set(err, TIO_E_OTHER, "aggregation plan: the nodes' data interleave");
    if (err->cls == TIO_OK && make_windows(p, seg, nseg, NULL, buffer, align, err) == TIO_OK)
        p->by_node = 1;
out:
    free(span);
    free(seg);
    free(cut);
    free(dom);
    free(start);
    if (err->cls == TIO_OK)
        return TIO_OK;
fail:
    tio_agg_plan_free(p);
    return err->cls;
}

/* The plan's runs from runs the caller merged already (taken over). */
static void given_runs(struct tio_agg_plan *p, const struct tio_agg_piece *pieces, size_t n,
                       struct tio_agg_run *runs, size_t nruns)
{
    int64_t cov = 0;
    for (size_t i = 0; i < n; i++)
        p->bytes += pieces[i].len;
    for (size_t i = 0; i < nruns; i++)
        cov += runs[i].hi - runs[i].lo;
    p->overlap = cov != p->bytes;
    p->runs = runs;
    p->nruns = nruns;
    if (nruns) {
        p->lo = runs[0].lo;
        p->hi = runs[nruns - 1].hi;
    }
}

int tio_agg_plan_cut(struct tio_agg_plan *p, const struct tio_agg_piece *pieces, size_t n,
                     struct tio_agg_run *runs, size_t nruns, int ndomains,
                     const struct tio_agg_segment *seg, size_t nseg, const int64_t *window,
                     int64_t align, struct tio_err *err)
{
    memset(p, 0, sizeof *p);
    for (int d = 0; d < ndomains && err->cls == TIO_OK; d++)
        if (window[d] < 1)
            tio_err_set(err, TIO_E_ARG, "aggregation plan: domain %d has windows of %lld "
                        "bytes", d, (long long)window[d]);
    for (size_t i = 0; i < nseg && err->cls == TIO_OK; i++)
        if (seg[i].domain < 0 || seg[i].domain >= ndomains || seg[i].lo > seg[i].hi ||
            (i && seg[i - 1].hi > seg[i].lo))
            tio_err_set(err, TIO_E_ARG, "aggregation plan: segment %zu is not a domain's "
                        "range after the one before it", i);
    if (err->cls == TIO_OK && (ndomains < 1 || align < 1))
        tio_err_set(err, TIO_E_ARG, "aggregation plan: %d domains, alignment %lld",
                    ndomains, (long long)align);
    if (err->cls != TIO_OK) {
        free(runs);
        return err->cls;
    }
    if (runs)
        given_runs(p, pieces, n, runs, nruns);
    if ((!runs && merge_runs(p, pieces, n, err)) || alloc_domains(p, ndomains, err) ||
        make_windows(p, seg, nseg, window, 0, align, err)) {
        tio_agg_plan_free(p);
        return err->cls;
    }
    /* Every covered byte must be in a segment: the moves find a window for each. */
    int64_t in = 0;
    for (int d = 0; d < ndomains; d++)
        in += p->dom_bytes[d];
    if (in != covered(p, p->lo, p->hi)) {
        tio_agg_plan_free(p);
        return tio_err_set(err, TIO_E_OTHER, "aggregation plan: the domains hold %lld of "
                           "%lld covered bytes", (long long)in,
                           (long long)covered(p, p->lo, p->hi));
    }
    return TIO_OK;
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

void tio_agg_plan_cross(const struct tio_agg_plan *p, const struct tio_agg_piece *pieces,
                        size_t n, const struct tio_agg_locality *loc, char *cross)
{
    memset(cross, 0, (size_t)p->nrounds);
    for (size_t i = 0; i < n; i++) {
        int node = loc->node_of[pieces[i].rank];
        int64_t end = pieces[i].off + pieces[i].len;
        for (int64_t x = pieces[i].off; x < end;) {
            const struct tio_agg_window *w = window_of(p, x);
            if (!w)
                break; /* (no plan leaves a byte out) */
            if (loc->dom_node[w->domain] != node)
                cross[w->round] = 1;
            x = w->hi;
        }
    }
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
