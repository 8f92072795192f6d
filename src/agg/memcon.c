/* Memory-conscious collective I/O, the pure part: see memcon.h. */
#include "agg/memcon.h"
#include "agg/ranges.h"

#include <stdlib.h>
#include <string.h>

static int nomem(struct tio_err *err)
{
    return tio_err_set(err, TIO_E_NOMEM, "memory-conscious aggregation: out of memory");
}

/* ---- the covered bytes: sorted disjoint runs, with the bytes before each ---- */

struct cover {
    size_t n;
    struct tio_agg_run *run;
    int64_t *before;                /* n + 1 entries: before[n] is the total */
};

/* The runs (tio_agg_merge_runs) and the bytes before each. */
static int cover_make(struct cover *c, const struct tio_agg_piece *p, size_t n,
                      struct tio_err *err)
{
    int64_t bytes;
    int overlap;
    if (tio_agg_merge_runs(p, n, &c->run, &c->n, &bytes, &overlap, err))
        return err->cls;
    c->before = malloc(sizeof *c->before * (c->n + 1));
    if (!c->before)
        return nomem(err);
    c->before[0] = 0;
    for (size_t i = 0; i < c->n; i++)
        c->before[i + 1] = c->before[i] + (c->run[i].hi - c->run[i].lo);
    return TIO_OK;
}

/* Covered bytes below x. */
static int64_t below(const struct cover *c, int64_t x)
{
    size_t a = tio_agg_first_ending_after(c->run, c->n, sizeof *c->run, x);
    int64_t n = c->before[a];
    if (a < c->n && x > c->run[a].lo)
        n += x - c->run[a].lo;
    return n;
}

static int64_t covered(const struct cover *c, int64_t lo, int64_t hi)
{
    return below(c, hi) - below(c, lo);
}

/* The offset below which t covered bytes lie (0 < t < total). */
static int64_t offset_at(const struct cover *c, int64_t t)
{
    size_t a = 0, b = c->n; /* the first run with before[i + 1] >= t */
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (c->before[m + 1] < t)
            a = m + 1;
        else
            b = m;
    }
    return c->run[a].lo + (t - c->before[a]);
}

/* ---- the partition trees ---- */

struct vertex {
    int64_t lo, hi, bytes;
    int parent, left, right;        /* -1: none */
    int group;
    int node, slot;                 /* located: node >= 0; -2: no slot anywhere */
    int alive;
};

struct forest {
    struct vertex *v;
    int n, cap;
    int *root;                      /* per group */
};

static int vertex_new(struct forest *f, int64_t lo, int64_t hi, int64_t bytes, int parent,
                      int group)
{
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 64;
        struct vertex *v = realloc(f->v, sizeof *v * (size_t)cap);
        if (!v)
            return -1;
        f->v = v;
        f->cap = cap;
    }
    f->v[f->n] = (struct vertex){lo, hi, bytes, parent, -1, -1, group, -1, -1, 1};
    return f->n++;
}

static int is_leaf(const struct vertex *v)
{
    return v->left < 0;
}

/* Where vertex [lo, hi) is cut: half of its bytes on each side, on the alignment; -1 when
 * no such place leaves bytes on both sides. */
static int64_t bisect(const struct cover *c, const struct vertex *v, int64_t align)
{
    int64_t x = offset_at(c, below(c, v->lo) + v->bytes / 2);
    if (align > 1) {
        int64_t down = x / align * align, up = down + align;
        x = x - down <= up - x ? down : up;
        if (x <= v->lo || x >= v->hi)
            x = x <= v->lo ? up : down; /* the other side may still cut it */
    }
    if (x <= v->lo || x >= v->hi || covered(c, v->lo, x) == 0 || covered(c, x, v->hi) == 0)
        return -1;
    return x;
}

/* Grow the tree of root r until every leaf holds at most `message` bytes. */
static int grow(struct forest *f, const struct cover *c, int r, int64_t message, int64_t align)
{
    int *stack = malloc(sizeof *stack * 64), top = 0, cap = 64;
    if (!stack)
        return -1;
    stack[top++] = r;
    while (top) {
        int v = stack[--top];
        if (f->v[v].bytes <= message)
            continue;
        int64_t x = bisect(c, &f->v[v], align);
        if (x < 0)
            continue; /* the alignment leaves no cut: a larger leaf */
        int64_t lo = f->v[v].lo, hi = f->v[v].hi;
        int g = f->v[v].group;
        int l = vertex_new(f, lo, x, covered(c, lo, x), v, g);
        int rr = l < 0 ? -1 : vertex_new(f, x, hi, covered(c, x, hi), v, g);
        int *more = top + 2 > cap ? realloc(stack, sizeof *stack * (size_t)(cap *= 2)) : stack;
        if (rr < 0 || !more) {
            free(more ? more : stack);
            return -1;
        }
        stack = more;
        f->v[v].left = l;
        f->v[v].right = rr;
        stack[top++] = rr;
        stack[top++] = l;
    }
    free(stack);
    return 0;
}

/* The alive leaves of every tree, in file order, into out (f->n entries); how many. */
static int leaves_in_order(const struct forest *f, int ngroups, int *out, int *stack)
{
    int k = 0;
    for (int g = 0; g < ngroups; g++) {
        int top = 0;
        stack[top++] = f->root[g];
        while (top) {
            int v = stack[--top];
            if (is_leaf(&f->v[v])) {
                out[k++] = v;
            } else {
                stack[top++] = f->v[v].right;
                stack[top++] = f->v[v].left;
            }
        }
    }
    return k;
}

/* Leaf a leaves its tree (§3.3): its region goes to its sibling if that is a leaf (their
 * parent becomes the leaf, with the sibling's aggregator), else to the nearest leaf of
 * the sibling's subtree, whose ancestors up to the sibling grow with it. */
static void remerge(struct forest *f, int a)
{
    struct vertex *v = f->v;
    int p = v[a].parent, left = v[p].left == a, b = left ? v[p].right : v[p].left;
    v[a].alive = 0;
    if (is_leaf(&v[b])) {
        v[p].left = v[p].right = -1;
        v[p].node = v[b].node;
        v[p].slot = v[b].slot;
        v[b].alive = 0;
        return;
    }
    for (int c = b;; c = left ? v[c].left : v[c].right) {
        if (left)
            v[c].lo = v[a].lo;
        else
            v[c].hi = v[a].hi;
        v[c].bytes += v[a].bytes;
        if (is_leaf(&v[c]))
            break;
    }
    /* b takes p's place */
    int pp = v[p].parent;
    v[b].parent = pp;
    if (pp < 0)
        f->root[v[p].group] = b;
    else if (v[pp].left == p)
        v[pp].left = b;
    else
        v[pp].right = b;
    v[p].alive = 0;
}

/* ---- location ---- */

struct hosts {
    const struct tio_mc_node *node;
    int nnodes;
    int64_t *left;                  /* memory left per node */
    int *used;                      /* slots taken per node */
    char *cand;                     /* scratch: candidate per node ... */
    int64_t *have;                  /* ... and its processes' bytes in the leaf */
};

/* Marks in h->cand the nodes of the processes with data in [lo, hi), with their bytes
 * there in h->have. */
static void candidates(struct hosts *h, const struct tio_agg_piece *p, size_t n,
                       const int *node_of, int64_t lo, int64_t hi)
{
    memset(h->cand, 0, (size_t)h->nnodes);
    memset(h->have, 0, sizeof *h->have * (size_t)h->nnodes);
    for (size_t i = 0; i < n; i++)
        if (p[i].len > 0 && p[i].off < hi && p[i].off + p[i].len > lo) {
            int64_t a = p[i].off > lo ? p[i].off : lo;
            int64_t b = p[i].off + p[i].len < hi ? p[i].off + p[i].len : hi;
            h->cand[node_of[p[i].rank]] = 1;
            h->have[node_of[p[i].rank]] += b - a;
        }
}

/* Is host k a better choice than host best (-1: none yet)? */
static int better(const struct hosts *h, int k, int best, int by_data, int64_t min)
{
    if (best < 0)
        return 1;
    if (by_data) { /* enough memory first, then the data, then the memory */
        int ok = h->left[k] >= min, okb = h->left[best] >= min;
        if (ok != okb)
            return ok;
        if (h->have[k] != h->have[best])
            return h->have[k] > h->have[best];
    }
    return h->left[k] > h->left[best];
}

/* Among the candidates (all nodes when all) with a free slot, the best host (better())
 * if its memory left is at least min (else -1); takes its next slot into v. */
static int take(struct hosts *h, struct vertex *v, int all, int per_node, int64_t min,
                int by_data)
{
    int best = -1;
    for (int k = 0; k < h->nnodes; k++) {
        int room = h->used[k] < per_node && h->used[k] < h->node[k].nslots;
        if ((all || h->cand[k]) && room && better(h, k, best, by_data, min))
            best = k;
    }
    if (best < 0 || h->left[best] < min)
        return -1;
    v->node = best;
    v->slot = h->used[best]++;
    h->left[best] -= h->node[best].slot[v->slot].bytes;
    return best;
}

/* ---- group division ---- */

struct span_at {
    int64_t lo, hi;
};

static int cmp_span(const void *a, const void *b)
{
    const struct span_at *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* The groups' regions into f (roots) and out: cut after about group_message bytes, only
 * where every node's data lies on one side. */
static int divide(struct forest *f, const struct cover *c, const struct tio_agg_piece *p,
                  size_t n, const int *node_of, int nnodes, const struct tio_mc_params *prm,
                  struct tio_mc_result *out)
{
    struct tio_agg_run *span = malloc(sizeof *span * (size_t)nnodes);
    struct span_at *s = malloc(sizeof *s * (size_t)nnodes);
    int64_t *cut = malloc(sizeof *cut * (size_t)(nnodes + 1));
    if (!span || !s || !cut) {
        free(span);
        free(s);
        free(cut);
        return -1;
    }
    tio_agg_spans_of(p, n, node_of, span, nnodes);
    int m = 0, ncut = 0;
    for (int k = 0; k < nnodes; k++)
        if (span[k].lo < span[k].hi)
            s[m++] = (struct span_at){span[k].lo, span[k].hi};
    qsort(s, (size_t)m, sizeof *s, cmp_span);
    int64_t first = c->run[0].lo, start = first, reach = s[0].hi;
    for (int j = 1; j < m; j++) {
        if (prm->group_message > 0 && s[j].lo >= reach &&
            covered(c, start, s[j].lo) >= prm->group_message)
            cut[ncut++] = start = s[j].lo;
        if (s[j].hi > reach)
            reach = s[j].hi;
    }
    int ng = ncut + 1;
    out->group_lo = malloc(sizeof *out->group_lo * (size_t)ng);
    out->group_hi = malloc(sizeof *out->group_hi * (size_t)ng);
    f->root = malloc(sizeof *f->root * (size_t)ng);
    int rc = out->group_lo && out->group_hi && f->root ? 0 : -1;
    for (int g = 0; g < ng && !rc; g++) {
        int64_t lo = g ? cut[g - 1] : first, hi = g < ncut ? cut[g] : c->run[c->n - 1].hi;
        out->group_lo[g] = lo;
        out->group_hi[g] = hi;
        f->root[g] = vertex_new(f, lo, hi, covered(c, lo, hi), -1, g);
        rc = f->root[g] < 0 ? -1 : 0;
    }
    out->ngroups = rc ? 0 : ng;
    free(span);
    free(s);
    free(cut);
    return rc;
}

/* The message a group's leaves are cut to: `message`, but no smaller than the group's
 * bytes over the slots of its nodes (every node's when its own have none). More leaves than
 * slots could only find no host and remerge, two by two along the tree, into domains of
 * uneven sizes; cut no finer, they stay balanced. */
static int64_t leaf_message(const struct vertex *root, const struct tio_agg_piece *p, size_t n,
                            const int *node_of, struct hosts *h,
                            const struct tio_mc_params *prm)
{
    int64_t slots = 0, all = 0;
    candidates(h, p, n, node_of, root->lo, root->hi);
    for (int k = 0; k < h->nnodes; k++) {
        int s = h->node[k].nslots < prm->per_node ? h->node[k].nslots : prm->per_node;
        all += s;
        slots += h->cand[k] ? s : 0;
    }
    slots = slots ? slots : all;
    int64_t fair = slots ? (root->bytes + slots - 1) / slots : root->bytes;
    return fair > prm->message ? fair : prm->message;
}

/* ---- the whole ---- */

/* Locate every leaf, remerging those that find no host; then the result. */
static int locate_all(struct forest *f, struct hosts *h, const struct tio_agg_piece *p,
                      size_t n, const int *node_of, const struct tio_mc_params *prm,
                      struct tio_mc_result *out, int *order, int *stack)
{
    for (;;) {
        int nl = leaves_in_order(f, out->ngroups, order, stack), a = -1;
        for (int i = 0; i < nl && a < 0; i++)
            if (f->v[order[i]].node == -1)
                a = order[i];
        if (a < 0)
            break;
        struct vertex *v = &f->v[a];
        candidates(h, p, n, node_of, v->lo, v->hi);
        if (take(h, v, 0, prm->per_node, prm->min_memory, prm->by_data) >= 0)
            continue;
        if (v->parent >= 0) { /* leaves the tree */
            remerge(f, a);
            out->remerged++;
            continue;
        }
        /* A whole group without a host: any node's, else the richest below min_memory. */
        if (take(h, v, 1, prm->per_node, prm->min_memory, prm->by_data) >= 0)
            out->widened++;
        else if (take(h, v, 1, prm->per_node, 0, prm->by_data) >= 0)
            out->short_of_memory++;
        else
            v->node = -2; /* no slot left anywhere */
    }
    int nl = leaves_in_order(f, out->ngroups, order, stack);
    out->dom = malloc(sizeof *out->dom * (size_t)(nl ? nl : 1));
    if (!out->dom)
        return -1;
    int k = 0, orphans = 0;
    for (int i = 0; i < nl; i++) {
        const struct vertex *v = &f->v[order[i]];
        if (v->node == -2) {
            orphans++;
            continue;
        }
        const struct tio_mc_slot *s = &h->node[v->node].slot[v->slot];
        out->dom[k++] = (struct tio_mc_domain){v->lo, v->hi, v->bytes, v->group, v->node,
                                               v->slot, s->domain, s->rank};
    }
    if (orphans && !k)
        return -2;
    /* Leaves without a slot join the domain before them (after them, at the start). */
    for (int i = 0, d = -1; i < nl; i++) {
        const struct vertex *v = &f->v[order[i]];
        if (v->node != -2) {
            d++;
            continue;
        }
        struct tio_mc_domain *t = &out->dom[d < 0 ? 0 : d];
        if (d < 0)
            t->lo = v->lo;
        else
            t->hi = v->hi;
        t->bytes += v->bytes;
        out->crossed++;
    }
    out->ndomains = k;
    return 0;
}

int tio_mc_partition(const struct tio_agg_piece *pieces, size_t n, const int *node_of,
                     int nnodes, const struct tio_mc_node *nodes,
                     const struct tio_mc_params *prm, struct tio_mc_result *out,
                     struct tio_err *err)
{
    memset(out, 0, sizeof *out);
    if (prm->per_node < 1 || prm->message < 1 || prm->group_message < 0 ||
        prm->min_memory < 0 || prm->align < 1 || nnodes < 1)
        return tio_err_set(err, TIO_E_ARG, "memory-conscious aggregation: %d per node, "
                           "message %lld, group message %lld, minimum memory %lld, alignment "
                           "%lld, %d nodes", prm->per_node, (long long)prm->message,
                           (long long)prm->group_message, (long long)prm->min_memory,
                           (long long)prm->align, nnodes);
    struct cover c = {0};
    struct forest f = {0};
    struct hosts h = {nodes, nnodes, calloc((size_t)nnodes, sizeof(int64_t)),
                      calloc((size_t)nnodes, sizeof(int)), malloc((size_t)nnodes),
                      malloc(sizeof(int64_t) * (size_t)nnodes)};
    int *order = NULL, *stack = NULL, rc = 0;
    if (!h.left || !h.used || !h.cand || !h.have || cover_make(&c, pieces, n, err)) {
        rc = -1;
        goto out;
    }
    if (c.n == 0)
        goto out; /* nothing to aggregate */
    for (int k = 0; k < nnodes; k++)
        h.left[k] = nodes[k].memory;
    if (divide(&f, &c, pieces, n, node_of, nnodes, prm, out)) {
        rc = -1;
        goto out;
    }
    for (int g = 0; g < out->ngroups && !rc; g++)
        rc = grow(&f, &c, f.root[g], leaf_message(&f.v[f.root[g]], pieces, n, node_of, &h,
                                                  prm), prm->align);
    if (!rc) {
        order = malloc(sizeof *order * (size_t)f.n);
        stack = malloc(sizeof *stack * (size_t)f.n);
        rc = order && stack ? 0 : -1;
    }
    if (!rc) {
        out->leaves = leaves_in_order(&f, out->ngroups, order, stack);
        rc = locate_all(&f, &h, pieces, n, node_of, prm, out, order, stack);
    }
out:
    if (rc == 0) { /* the runs go to the result, for the plan */
        out->runs = c.run;
        out->nruns = c.n;
        c.run = NULL;
    }
    free(c.run);
    free(c.before);
    free(f.v);
    free(f.root);
    free(h.left);
    free(h.used);
    free(h.cand);
    free(h.have);
    free(order);
    free(stack);
    if (rc == -2) {
        tio_mc_result_free(out);
        return tio_err_set(err, TIO_E_NOSPACE, "memory-conscious aggregation: no node has "
                           "an aggregator slot");
    }
    if (rc) {
        tio_mc_result_free(out);
        return err->cls != TIO_OK ? (int)err->cls : nomem(err);
    }
    return TIO_OK;
}

void tio_mc_result_free(struct tio_mc_result *r)
{
    free(r->runs);
    free(r->group_lo);
    free(r->group_hi);
    free(r->dom);
    memset(r, 0, sizeof *r);
}
