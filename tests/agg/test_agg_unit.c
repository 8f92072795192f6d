/* Unit tests of the aggregation engine's pure parts: the plan (domains, rounds, moves,
 * runs), the manifest of subfile targets, the settings. The plan is checked by simulating
 * a whole write with it, byte for byte: every process's bytes go through the moves into
 * the aggregators' buffers and from there through the runs into a file image, which must
 * equal the file written directly. */
#include "../unit/check.h"

#include <inttypes.h>

#include "agg/manifest.h"
#include "agg/plan.h"
#include "agg/settings.h"

/* A small deterministic generator. */
static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    return tt_rand(&rng_state);
}

static unsigned char byte_of(int rank, int64_t i)
{
    return (unsigned char)((rank * 131 + i * 7 + (i >> 8)) % 251 + 1);
}

/* Pieces p[0..k) in rank order (stable within a rank: file order), mem back to back: a new
 * array of *n. */
static struct tio_agg_piece *by_rank(const struct tio_agg_piece *p, size_t k, int nprocs,
                                     size_t *n)
{
    struct tio_agg_piece *s = malloc(sizeof *s * (k + 1));
    size_t m = 0;
    for (int r = 0; r < nprocs; r++) {
        int64_t mem = 0;
        for (size_t i = 0; i < k; i++)
            if (p[i].rank == r) {
                s[m] = p[i];
                s[m++].mem = mem;
                mem += p[i].len;
            }
    }
    *n = m;
    return s;
}

/* nprocs processes; each has up to maxp pieces laid out with holes; returns pieces in rank
 * order with their mem offsets. Non-overlapping. */
static struct tio_agg_piece *layout(int nprocs, int maxp, int64_t maxlen, size_t *n,
                                    int64_t *extent)
{
    struct tio_agg_piece *p = malloc(sizeof *p * (size_t)(nprocs * maxp + 1));
    /* Interleave: walk the file, giving each stretch to a random process. */
    int64_t off = (int64_t)(rnd() % 5000);
    size_t k = 0;
    int *count = calloc((size_t)nprocs, sizeof *count);
    for (int i = 0; i < nprocs * maxp; i++) {
        int r = (int)(rnd() % (uint64_t)nprocs);
        if (count[r] == maxp)
            continue;
        int64_t len = (int64_t)(rnd() % (uint64_t)(maxlen + 1)); /* zero sizes too */
        if (rnd() % 4 == 0)
            off += (int64_t)(rnd() % 3000); /* a hole */
        p[k++] = (struct tio_agg_piece){off, len, 0, r};
        count[r]++;
        off += len;
    }
    *extent = off;
    free(count);
    struct tio_agg_piece *s = by_rank(p, k, nprocs, n);
    free(p);
    return s;
}

/* Simulate a write with the plan and compare with the expected image. */
static void simulate(const struct tio_agg_plan *pl, const struct tio_agg_piece *pc, size_t n,
                     int nprocs, int64_t extent, int64_t buffer)
{
    unsigned char *want = calloc((size_t)extent + 1, 1), *got = calloc((size_t)extent + 1, 1);
    unsigned char *bufs = calloc((size_t)pl->ndomains * (size_t)(pl->nrounds ? pl->nrounds : 1),
                                 (size_t)buffer);
    char *filled = calloc((size_t)pl->ndomains * (size_t)(pl->nrounds ? pl->nrounds : 1),
                          (size_t)buffer);
    CHECK(want && got && bufs && filled);
    for (size_t i = 0; i < n; i++)
        for (int64_t b = 0; b < pc[i].len; b++)
            want[pc[i].off + b] = byte_of(pc[i].rank, pc[i].mem + b);
    for (int r = 0; r < nprocs; r++) {
        size_t first = 0, k = 0;
        while (first < n && pc[first].rank != r)
            first++;
        while (first + k < n && pc[first + k].rank == r)
            k++;
        struct tio_agg_move *mv;
        size_t nm;
        struct tio_err err = {0};
        CHECK_EQ(tio_agg_plan_moves(pl, pc + first, k, &mv, &nm, &err), TIO_OK);
        int64_t total = 0;
        for (size_t j = 0; j < nm; j++) {
            CHECK(j == 0 || mv[j].round > mv[j - 1].round ||
                  (mv[j].round == mv[j - 1].round && mv[j].domain >= mv[j - 1].domain));
            const struct tio_agg_window *w = tio_agg_plan_window(pl, mv[j].domain, mv[j].round);
            CHECK(w != NULL);
            CHECK(mv[j].len > 0 && mv[j].boff >= 0 && mv[j].boff + mv[j].len <= w->hi - w->lo);
            CHECK(w->hi - w->lo <= buffer);
            size_t slot = ((size_t)mv[j].domain * (size_t)pl->nrounds + (size_t)mv[j].round) *
                          (size_t)buffer;
            for (int64_t b = 0; b < mv[j].len; b++) {
                CHECK(!filled[slot + (size_t)(mv[j].boff + b)]); /* nobody writes it twice */
                filled[slot + (size_t)(mv[j].boff + b)] = 1;
                bufs[slot + (size_t)(mv[j].boff + b)] = byte_of(r, mv[j].mem + b);
            }
            total += mv[j].len;
        }
        int64_t mine = 0;
        for (size_t j = 0; j < k; j++)
            mine += pc[first + j].len;
        CHECK_EQ(total, mine);
        free(mv);
    }
    /* The I/O phase: each window's runs from its buffer into the file. */
    int64_t runbytes = 0;
    for (int d = 0; d < pl->ndomains; d++)
        for (int r = 0; r < pl->nrounds; r++) {
            const struct tio_agg_window *w = tio_agg_plan_window(pl, d, r);
            if (!w)
                continue;
            CHECK_EQ(w->domain, d);
            CHECK_EQ(w->round, r);
            struct tio_agg_run runs[4096];
            size_t nr = tio_agg_plan_runs(pl, w, runs, 4096);
            CHECK(nr >= 1 && nr <= 4096);
            CHECK_EQ(runs[0].lo, w->lo);         /* windows start and end on data */
            CHECK_EQ(runs[nr - 1].hi, w->hi);
            size_t slot = ((size_t)d * (size_t)pl->nrounds + (size_t)r) * (size_t)buffer;
            for (size_t q = 0; q < nr; q++)
                for (int64_t x = runs[q].lo; x < runs[q].hi; x++) {
                    CHECK(filled[slot + (size_t)(x - w->lo)]); /* no hole is written */
                    got[x] = bufs[slot + (size_t)(x - w->lo)];
                    runbytes++;
                }
        }
    int64_t data = 0;
    for (size_t i = 0; i < pl->nruns; i++)
        data += pl->runs[i].hi - pl->runs[i].lo;
    CHECK_EQ(runbytes, data);
    CHECK_BYTES(got, want, (size_t)extent);
    free(want);
    free(got);
    free(bufs);
    free(filled);
}

static void check_shape(const struct tio_agg_plan *pl, int64_t buffer, int64_t align,
                        int local)
{
    int maxw = 0;
    int64_t prev_hi = -1, total = 0;
    for (size_t w = 0; w < pl->nwin; w++) {
        CHECK(pl->win[w].lo < pl->win[w].hi);
        CHECK(pl->win[w].lo >= prev_hi); /* sorted, disjoint */
        prev_hi = pl->win[w].hi;
    }
    for (int d = 0; d < pl->ndomains; d++) {
        int nw = (int)(pl->dom_first[d + 1] - pl->dom_first[d]);
        if (nw > maxw)
            maxw = nw;
        total += pl->dom_bytes[d];
        if (d > 0 && pl->dom_hi[d] > pl->dom_lo[d] && pl->dom_hi[d - 1] > pl->dom_lo[d - 1])
            CHECK(pl->dom_lo[d] >= pl->dom_hi[d - 1]); /* domains in file order */
        /* Windows end on the alignment unless the domain or the data ends first. */
        for (size_t k = pl->dom_first[d]; k + 1 < pl->dom_first[d + 1]; k++) {
            const struct tio_agg_window *w = &pl->win[pl->dom_win[k]];
            CHECK(w->hi - w->lo <= buffer);
            if (buffer >= align && align > 1 && w->hi - w->lo == buffer)
                CHECK(w->hi % align == 0 || w->lo % align != 0);
        }
    }
    CHECK_EQ(maxw, pl->nrounds);
    int64_t data = 0;
    for (size_t i = 0; i < pl->nruns; i++)
        data += pl->runs[i].hi - pl->runs[i].lo;
    CHECK_EQ(total, data);
    /* Balance: no domain holds more than its share plus an alignment unit and a run; when
     * domains follow the data, boundaries move by at most half a share each. */
    if (pl->ndomains > 1 && data > 0)
        for (int d = 0; d < pl->ndomains; d++)
            CHECK(pl->dom_bytes[d] <= data / pl->ndomains + 2 * align + 1 +
                                          (local ? data / pl->ndomains + 2 : 0));
}

static void test_plan_random(void)
{
    CASE("plan: random layouts");
    for (int iter = 0; iter < 300; iter++) {
        int nprocs = 1 + (int)(rnd() % 9), maxp = 1 + (int)(rnd() % 6);
        int64_t maxlen = (int64_t)(rnd() % 20000);
        size_t n;
        int64_t extent;
        struct tio_agg_piece *pc = layout(nprocs, maxp, maxlen, &n, &extent);
        int nd = 1 + (int)(rnd() % 5);
        int64_t buffer = 1 + (int64_t)(rnd() % 9000);
        int64_t aligns[] = {1, 512, 4096};
        int64_t align = aligns[rnd() % 3];
        if (align > buffer)
            align = 1;
        struct tio_agg_plan pl;
        struct tio_err err = {0};
        /* Every other layout with domains that follow the data of random nodes. */
        int node_of[16], dom_node[8], nnodes = 1 + (int)(rnd() % 4), local = iter % 2;
        for (int r = 0; r < nprocs; r++)
            node_of[r] = (int)(rnd() % (uint64_t)nnodes);
        for (int d = 0; d < nd; d++)
            dom_node[d] = (int)(rnd() % (uint64_t)nnodes);
        struct tio_agg_locality loc = {node_of, dom_node};
        CHECK_EQ(tio_agg_plan_make(&pl, pc, n, nd, buffer, align, local ? &loc : NULL, &err),
                 TIO_OK);
        CHECK_EQ(pl.overlap, 0);
        CHECK_EQ(pl.ndomains, nd);
        check_shape(&pl, buffer, align, local);
        simulate(&pl, pc, n, nprocs, extent, buffer);
        if (!local)
            CHECK_EQ(pl.followed, 0);
        tio_agg_plan_free(&pl);
        free(pc);
    }
}

static void test_plan_cases(void)
{
    struct tio_err err = {0};
    struct tio_agg_plan pl;

    CASE("plan: nothing at all");
    CHECK_EQ(tio_agg_plan_make(&pl, NULL, 0, 3, 100, 1, NULL, &err), TIO_OK);
    CHECK_EQ(pl.nrounds, 0);
    CHECK_EQ(pl.nwin, 0);
    tio_agg_plan_free(&pl);

    CASE("plan: fixed 100 KB per process, 4 domains, 1 MiB buffers: one round each");
    struct tio_agg_piece p8[8];
    for (int r = 0; r < 8; r++)
        p8[r] = (struct tio_agg_piece){r * 102400, 102400, 0, r};
    CHECK_EQ(tio_agg_plan_make(&pl, p8, 8, 4, 1 << 20, 4096, NULL, &err), TIO_OK);
    CHECK_EQ(pl.nrounds, 1);
    for (int d = 0; d < 4; d++) {
        CHECK_EQ(pl.dom_lo[d], d * 204800);
        CHECK_EQ(pl.dom_hi[d], (d + 1) * 204800);
    }
    tio_agg_plan_free(&pl);

    CASE("plan: rounds of one buffer, aligned ends");
    CHECK_EQ(tio_agg_plan_make(&pl, p8, 8, 2, 65536, 4096, NULL, &err), TIO_OK);
    CHECK_EQ(pl.nrounds, 7); /* 409600 bytes per domain / 65536 */
    const struct tio_agg_window *w = tio_agg_plan_window(&pl, 1, 0);
    CHECK_EQ(w->lo, 409600);
    CHECK_EQ(w->hi, 409600 + 65536);
    CHECK(tio_agg_plan_window(&pl, 1, 7) == NULL);
    tio_agg_plan_free(&pl);

    CASE("plan: a hole costs no round");
    struct tio_agg_piece h[2] = {{0, 1000, 0, 0}, {1000000000, 1000, 0, 1}};
    CHECK_EQ(tio_agg_plan_make(&pl, h, 2, 1, 4096, 1, NULL, &err), TIO_OK);
    CHECK_EQ(pl.nrounds, 2);
    CHECK_EQ(pl.nwin, 2);
    tio_agg_plan_free(&pl);

    CASE("plan: overlaps are noted");
    struct tio_agg_piece o[2] = {{0, 1000, 0, 0}, {999, 10, 0, 1}};
    CHECK_EQ(tio_agg_plan_make(&pl, o, 2, 2, 4096, 1, NULL, &err), TIO_OK);
    CHECK_EQ(pl.overlap, 1);
    tio_agg_plan_free(&pl);
    struct tio_agg_piece adj[2] = {{0, 1000, 0, 0}, {1000, 10, 0, 1}};
    CHECK_EQ(tio_agg_plan_make(&pl, adj, 2, 2, 4096, 1, NULL, &err), TIO_OK);
    CHECK_EQ(pl.overlap, 0);
    CHECK_EQ(pl.nruns, 1);
    tio_agg_plan_free(&pl);

    CASE("plan: domains follow the nodes' data (2 processes per node, uneven sizes)");
    {
        /* Node k's processes 2k and 2k+1; node totals 250000, 150000, 210000, 190000 (the
         * balanced boundaries, at 200000 multiples, cut inside nodes 0 and 2). */
        static const int64_t len[8] = {130000, 120000, 70000, 80000, 100000, 110000,
                                       90000, 100000};
        struct tio_agg_piece q[8];
        int64_t at = 0;
        for (int r = 0; r < 8; r++) {
            q[r] = (struct tio_agg_piece){at, len[r], 0, r};
            at += len[r];
        }
        int node_of[8] = {0, 0, 1, 1, 2, 2, 3, 3}, dom_node[4] = {0, 1, 2, 3};
        struct tio_agg_locality loc = {node_of, dom_node};
        char cross[4];
        CHECK_EQ(tio_agg_plan_make(&pl, q, 8, 4, 1 << 20, 4096, NULL, &err), TIO_OK);
        CHECK_EQ(pl.followed, 0);
        tio_agg_plan_cross(&pl, q, 8, &loc, cross);
        CHECK_EQ(cross[0], 1);
        tio_agg_plan_free(&pl);
        CHECK_EQ(tio_agg_plan_make(&pl, q, 8, 4, 1 << 20, 4096, &loc, &err), TIO_OK);
        CHECK_EQ(pl.nrounds, 1);
        CHECK_EQ(pl.dom_hi[0], 250000);
        CHECK_EQ(pl.dom_hi[1], 400000);
        CHECK_EQ(pl.dom_hi[2], 610000);
        CHECK_EQ(pl.dom_hi[3], 800000);
        CHECK_EQ(pl.followed, 3); /* 400000 and 610000 are not multiples of 4096 either */
        tio_agg_plan_cross(&pl, q, 8, &loc, cross);
        CHECK_EQ(cross[0], 0);
        tio_agg_plan_free(&pl);

        CASE("plan: ... not to another pair of nodes' edge");
        int swapped[4] = {0, 2, 1, 3}; /* domain 1 on node 2: no 0|2 edge */
        struct tio_agg_locality loc2 = {node_of, swapped};
        CHECK_EQ(tio_agg_plan_make(&pl, q, 8, 4, 1 << 20, 4096, &loc2, &err), TIO_OK);
        CHECK_EQ(pl.followed, 0); /* balanced, aligned */
        CHECK(pl.dom_hi[0] % 4096 == 0 && pl.dom_hi[1] % 4096 == 0);
        tio_agg_plan_free(&pl);

        CASE("plan: ... not farther than half a domain");
        static const int64_t skew[8] = {300000, 200000, 1000, 1000, 1000, 1000, 1000, 1000};
        at = 0;
        for (int r = 0; r < 8; r++) {
            q[r] = (struct tio_agg_piece){at, skew[r], 0, r};
            at += skew[r];
        }
        CHECK_EQ(tio_agg_plan_make(&pl, q, 8, 4, 1 << 20, 1, &loc, &err), TIO_OK);
        CHECK_EQ(pl.dom_hi[0], 126500); /* the node 0|1 edge, 500000, is too far */
        tio_agg_plan_free(&pl);

        CASE("plan: ... not with an alignment larger than a page, nor adding a round");
        at = 0;
        for (int r = 0; r < 8; r++) {
            q[r] = (struct tio_agg_piece){at, len[r], 0, r};
            at += len[r];
        }
        CHECK_EQ(tio_agg_plan_make(&pl, q, 8, 4, 1 << 20, 65536, &loc, &err), TIO_OK);
        CHECK_EQ(pl.followed, 0);
        tio_agg_plan_free(&pl);
        /* 200000-byte domains in 200000-byte buffers: one round; node 0's 250000 need two */
        CHECK_EQ(tio_agg_plan_make(&pl, q, 8, 4, 200000, 1, &loc, &err), TIO_OK);
        CHECK_EQ(pl.nrounds, 1);
        CHECK_EQ(pl.followed, 0);
        tio_agg_plan_free(&pl);

        CASE("plan: ... not when pieces overlap");
        q[1].off -= 10;
        CHECK_EQ(tio_agg_plan_make(&pl, q, 8, 4, 1 << 20, 1, &loc, &err), TIO_OK);
        CHECK_EQ(pl.overlap, 1);
        CHECK_EQ(pl.followed, 0);
        tio_agg_plan_free(&pl);
    }

    CASE("plan: bad input");
    struct tio_agg_piece bad[1] = {{-5, 10, 0, 3}};
    CHECK(tio_agg_plan_make(&pl, bad, 1, 1, 100, 1, NULL, &err) == TIO_E_ARG);
    CHECK_HAS(err.msg, "rank 3");
    tio_err_clear(&err);
    CHECK(tio_agg_plan_make(&pl, p8, 8, 0, 100, 1, NULL, &err) == TIO_E_ARG);
    tio_err_clear(&err);

}

/* Domains by node: random layouts whose nodes' data lie apart (each node's processes'
 * pieces, interleaved among themselves with holes, in a stretch of the file of its own;
 * nodes in random file order; every node with at least one domain), through the write
 * simulation; nothing crosses between nodes, and a node's domains split its data evenly. */
static void test_plan_by_node(void)
{
    CASE("plan by node: random layouts whose nodes' data lie apart");
    for (int iter = 0; iter < 200; iter++) {
        int nnodes = 1 + (int)(rnd() % 4), nprocs = nnodes + (int)(rnd() % 7);
        int node_of[16], nd = nnodes + (int)(rnd() % 4), dom_node[8], ndom[4] = {0};
        for (int r = 0; r < nprocs; r++) /* every node has a process */
            node_of[r] = r < nnodes ? r : (int)(rnd() % (uint64_t)nnodes);
        int order[4] = {0, 1, 2, 3};
        for (int k = nnodes - 1; k > 0; k--) {
            int j = (int)(rnd() % (uint64_t)(k + 1)), t = order[k];
            order[k] = order[j];
            order[j] = t;
        }
        for (int d = 0; d < nd; d++)
            dom_node[d] = d < nnodes ? order[d] : (int)(rnd() % (uint64_t)nnodes);
        for (int d = 0; d < nd; d++)
            ndom[dom_node[d]]++;
        /* Node by node in file order: a random layout of its processes, shifted. */
        struct tio_agg_piece *pc = malloc(sizeof *pc * 16 * 6);
        size_t n = 0;
        int64_t extent = 0, maxlen = 1 + (int64_t)(rnd() % 20000);
        for (int k = 0; k < nnodes; k++) {
            int node = order[k], members[16], nm = 0;
            for (int r = 0; r < nprocs; r++)
                if (node_of[r] == node)
                    members[nm++] = r;
            size_t ln;
            int64_t lext;
            struct tio_agg_piece *lp = layout(nm, 1 + (int)(rnd() % 5), maxlen, &ln, &lext);
            for (size_t i = 0; i < ln; i++) {
                pc[n] = lp[i];
                pc[n].off += extent;
                pc[n++].rank = members[lp[i].rank];
            }
            extent += lext;
            free(lp);
        }
        size_t m;
        struct tio_agg_piece *sorted = by_rank(pc, n, nprocs, &m);
        struct tio_agg_run span[4], scratch[4];
        tio_agg_spans_of(sorted, m, node_of, span, nnodes);
        CHECK_EQ(tio_agg_spans_apart(span, nnodes, ndom, scratch), 1);
        int64_t buffer = 1 + (int64_t)(rnd() % 9000), aligns[] = {1, 512, 4096};
        int64_t align = aligns[rnd() % 3];
        if (align > buffer)
            align = 1;
        struct tio_agg_locality loc = {node_of, dom_node};
        struct tio_agg_plan pl;
        struct tio_err err = {0};
        CHECK_EQ(tio_agg_plan_by_node(&pl, sorted, m, nd, buffer, align, &loc, nnodes, &err),
                 TIO_OK);
        CHECK_EQ(pl.by_node, 1);
        simulate(&pl, sorted, m, nprocs, extent, buffer);
        char *cross = malloc((size_t)pl.nrounds + 1);
        CHECK(cross != NULL);
        tio_agg_plan_cross(&pl, sorted, m, &loc, cross);
        for (int r = 0; r < pl.nrounds; r++)
            CHECK_EQ(cross[r], 0);
        free(cross);
        /* A node's domains: its data in even shares (give or take an alignment unit and
         * the rounding of a share). */
        for (int d = 0; d < nd; d++) {
            int k = dom_node[d];
            int64_t node_data = 0;
            for (int e = 0; e < nd; e++)
                if (dom_node[e] == k)
                    node_data += pl.dom_bytes[e];
            CHECK(pl.dom_bytes[d] <= node_data / ndom[k] + 2 * align + 1);
        }
        tio_agg_plan_free(&pl);
        free(pc);
        free(sorted);
    }

    CASE("plan by node: nodes whose data interleave, or without a domain");
    struct tio_agg_piece il[] = {{0, 10, 0, 0}, {20, 10, 0, 1}, {10, 10, 0, 2}};
    int node_of[3] = {0, 0, 1}, dom_node[2] = {0, 1}, ndom[2] = {1, 1}, none[2] = {1, 0};
    struct tio_agg_run span[2], scratch[2];
    tio_agg_spans_of(il, 3, node_of, span, 2);
    CHECK_EQ(span[0].lo, 0);
    CHECK_EQ(span[0].hi, 30);
    CHECK_EQ(tio_agg_spans_apart(span, 2, ndom, scratch), 0); /* node 1's 10..20 inside */
    struct tio_agg_locality loc = {node_of, dom_node};
    struct tio_agg_plan pl;
    struct tio_err err = {0};
    CHECK(tio_agg_plan_by_node(&pl, il, 3, 2, 100, 1, &loc, 2, &err) == TIO_E_OTHER);
    CHECK_HAS(err.msg, "interleave");
    tio_err_clear(&err);
    il[2].off = 30; /* now apart: node 0's 0..30, node 1's 30..40 */
    tio_agg_spans_of(il, 3, node_of, span, 2);
    CHECK_EQ(tio_agg_spans_apart(span, 2, ndom, scratch), 1);
    CHECK_EQ(tio_agg_spans_apart(span, 2, none, scratch), 0); /* node 1: data, no domain */
    CHECK_EQ(tio_agg_plan_by_node(&pl, il, 3, 2, 100, 1, &loc, 2, &err), TIO_OK);
    CHECK_EQ(pl.dom_lo[0], 0);
    CHECK_EQ(pl.dom_hi[0], 30);
    CHECK_EQ(pl.dom_lo[1], 30);
    CHECK_EQ(pl.dom_hi[1], 40);
    tio_agg_plan_free(&pl);
    il[2].len = 0; /* a node without data needs no domain */
    tio_agg_spans_of(il, 3, node_of, span, 2);
    CHECK_EQ(tio_agg_spans_apart(span, 2, none, scratch), 1);
}

/* Whether each process may read its own pieces (tierio_agg_read=auto). */
static void test_disjoint(void)
{
    CASE("disjoint: no pieces, one process");
    CHECK_EQ(tio_agg_pieces_disjoint(NULL, 0), 1);
    struct tio_agg_piece one[] = {{0, 10, 0, 0}, {50, 10, 10, 0}};
    CHECK_EQ(tio_agg_pieces_disjoint(one, 2), 1);

    CASE("disjoint: back to back, and out of file order");
    struct tio_agg_piece adj[] = {{100, 10, 0, 0}, {0, 50, 0, 1}, {50, 50, 0, 2}};
    CHECK_EQ(tio_agg_pieces_disjoint(adj, 3), 1);

    CASE("disjoint: a process's pieces around another's are interleaved");
    struct tio_agg_piece il[] = {{0, 10, 0, 0}, {20, 10, 10, 0}, {10, 10, 0, 1}};
    CHECK_EQ(tio_agg_pieces_disjoint(il, 3), 0);

    CASE("disjoint: overlapping pieces are not");
    struct tio_agg_piece ov[] = {{0, 10, 0, 0}, {5, 10, 0, 1}};
    CHECK_EQ(tio_agg_pieces_disjoint(ov, 2), 0);

    CASE("disjoint: empty pieces take no room");
    struct tio_agg_piece em[] = {{0, 10, 0, 0}, {20, 10, 10, 0}, {15, 0, 0, 1}, {30, 5, 0, 2}};
    CHECK_EQ(tio_agg_pieces_disjoint(em, 4), 1);
}

static void test_manifest(void)
{
    struct tio_err err = {0};
    struct tio_agg_manifest m, back;
    int64_t at;
    const char hosts[2][TIO_AGG_HOST_MAX] = {"node0", "node1"};

    CASE("manifest: place, rewrite in place, append");
    CHECK_EQ(tio_agg_manifest_init(&m, 1, "out.dat", 2, hosts, &err), TIO_OK);
    CHECK_EQ(tio_agg_manifest_place(&m, 0, 100, 0, &at, &err), TIO_OK);
    CHECK_EQ(at, 0);
    CHECK_EQ(tio_agg_manifest_place(&m, 100, 300, 1, &at, &err), TIO_OK);
    CHECK_EQ(at, 0);
    CHECK_EQ(tio_agg_manifest_place(&m, 300, 350, 0, &at, &err), TIO_OK);
    CHECK_EQ(at, 100);
    CHECK_EQ(tio_agg_manifest_place(&m, 100, 300, 1, &at, &err), TIO_OK); /* same extent */
    CHECK_EQ(at, 0);
    CHECK_EQ(m.files[1].size, 200);
    CHECK_EQ(m.next, 3);

    CASE("manifest: a new extent cuts the old ones it covers");
    CHECK_EQ(tio_agg_manifest_place(&m, 50, 150, 0, &at, &err), TIO_OK);
    CHECK_EQ(at, 150);
    CHECK_EQ(m.next, 4);
    const struct tio_agg_extent *e = tio_agg_manifest_find(&m, 10);
    CHECK(e && e->lo == 0 && e->hi == 50 && e->file == 0 && e->at == 0);
    e = tio_agg_manifest_find(&m, 149);
    CHECK(e && e->lo == 50 && e->hi == 150 && e->at == 150);
    e = tio_agg_manifest_find(&m, 150);
    CHECK(e && e->lo == 150 && e->hi == 300 && e->file == 1 && e->at == 50);
    CHECK(tio_agg_manifest_find(&m, 350) == NULL);
    /* Splitting one extent in two. */
    CHECK_EQ(tio_agg_manifest_place(&m, 200, 210, 0, &at, &err), TIO_OK);
    e = tio_agg_manifest_find(&m, 199);
    CHECK(e && e->lo == 150 && e->hi == 200 && e->at == 50);
    e = tio_agg_manifest_find(&m, 210);
    CHECK(e && e->lo == 210 && e->hi == 300 && e->at == 110 && e->file == 1);
    for (size_t i = 1; i < m.next; i++)
        CHECK(m.ext[i].lo >= m.ext[i - 1].hi);

    CASE("manifest: another group's extent, at its place");
    struct tio_agg_extent other = {400, 500, 1, 1000};
    CHECK_EQ(tio_agg_manifest_apply(&m, &other, &err), TIO_OK);
    CHECK_EQ(m.files[1].size, 1100);
    e = tio_agg_manifest_find(&m, 450);
    CHECK(e && e->file == 1 && e->at == 1000 && e->lo == 400);
    CHECK_EQ(tio_agg_manifest_apply(&m, &other, &err), TIO_OK); /* again: nothing changes */
    size_t before = m.next;
    CHECK_EQ(m.next, before);
    struct tio_agg_extent cut = {0, 20, 1, 2000}; /* over the start of [0, 50) */
    CHECK_EQ(tio_agg_manifest_apply(&m, &cut, &err), TIO_OK);
    e = tio_agg_manifest_find(&m, 20);
    CHECK(e && e->lo == 20 && e->hi == 50 && e->file == 0 && e->at == 20);
    struct tio_agg_extent bad = {0, 10, 7, 0};
    CHECK(tio_agg_manifest_apply(&m, &bad, &err) == TIO_E_ARG);
    tio_err_clear(&err);

    CASE("manifest: text and back");
    char *text;
    size_t len;
    CHECK_EQ(tio_agg_manifest_format(&m, &text, &len, &err), TIO_OK);
    CHECK_EQ(tio_agg_manifest_parse(&back, text, "t", &err), TIO_OK);
    CHECK_EQ(back.nfiles, 2);
    CHECK_EQ(back.node_local, 1);
    CHECK(!strcmp(back.files[1].host, "node1"));
    CHECK_EQ(back.next, m.next);
    for (size_t i = 0; i < m.next; i++) {
        CHECK_EQ(back.ext[i].lo, m.ext[i].lo);
        CHECK_EQ(back.ext[i].hi, m.ext[i].hi);
        CHECK_EQ(back.ext[i].file, m.ext[i].file);
        CHECK_EQ(back.ext[i].at, m.ext[i].at);
    }
    tio_agg_manifest_free(&back);
    free(text);
    tio_agg_manifest_free(&m);

    CASE("manifest: broken text");
    CHECK(tio_agg_manifest_parse(&back, "hello\n", "x", &err) == TIO_E_IO);
    CHECK_HAS(err.msg, "manifest x, line 1");
    tio_err_clear(&err);
    CHECK(tio_agg_manifest_parse(&back, "tierio-agg-manifest 1\nbase a file\nfile 0 10 -\n"
                                 "extent 0 20 0 0\n", "y", &err) == TIO_E_IO);
    CHECK_HAS(err.msg, "line 4");
    tio_err_clear(&err);
    CHECK(tio_agg_manifest_parse(&back, "tierio-agg-manifest 1\nfile 0 10 -\n", "z", &err) ==
          TIO_E_IO);
    tio_err_clear(&err);
}

#define kv_get tt_kv_get

static void test_settings(void)
{
    struct tio_agg_settings s;
    struct tio_err err = {0};

    CASE("settings: defaults");
    CHECK_EQ(tio_agg_settings_parse(&s, NULL, NULL, NULL, NULL, &err), TIO_OK);
    CHECK(!strcmp(s.strategy, "default"));
    CHECK_EQ(s.aggregators, 0);
    CHECK_EQ(s.buffer_size, 16 << 20);
    CHECK_EQ(s.buffer_count, 2);
    CHECK_EQ(s.target, TIO_AGG_TARGET_FILE);
    CHECK_EQ(s.persistence, TIO_PERSIST_NONE);
    CHECK_EQ(s.read_aggregate, 0); /* reads: auto */
    CHECK_EQ(s.route_write_auto, 0);     /* writes: aggregate */
    CHECK_EQ(s.balanced, 0);             /* domains: local */

    CASE("settings: the MPI-IO route's read and write modes");
    const char *modes[] = {"tierio_agg_read", "AGGREGATE", "tierio_agg_write", "auto", NULL};
    CHECK_EQ(tio_agg_settings_parse(&s, kv_get, modes, NULL, NULL, &err), TIO_OK);
    CHECK_EQ(s.read_aggregate, 1);
    CHECK_EQ(s.route_write_auto, 1);
    const char *modes_env[] = {"TIERIO_AGG_READ", "auto", "TIERIO_AGG_WRITE", "aggregate",
                               NULL};
    CHECK_EQ(tio_agg_settings_parse(&s, NULL, NULL, kv_get, modes_env, &err), TIO_OK);
    CHECK_EQ(s.read_aggregate, 0);
    CHECK_EQ(s.route_write_auto, 0);

    CASE("settings: domains");
    const char *dom[] = {"tierio_agg_domains", "Balanced", NULL};
    CHECK_EQ(tio_agg_settings_parse(&s, kv_get, dom, NULL, NULL, &err), TIO_OK);
    CHECK_EQ(s.balanced, 1);
    const char *dom_env[] = {"TIERIO_AGG_DOMAINS", "local", NULL};
    CHECK_EQ(tio_agg_settings_parse(&s, NULL, NULL, kv_get, dom_env, &err), TIO_OK);
    CHECK_EQ(s.balanced, 0);

    CASE("settings: info over environment over MPI-IO aliases");
    const char *info[] = {"tierio_agg_buffer_size", "4Mi", "cb_nodes", "3", "cb_buffer_size",
                          "99", "tierio_agg_strategy", "TAPIOCA", NULL};
    const char *env[] = {"TIERIO_AGG_BUFFER_SIZE", "1Mi", "TIERIO_AGG_AGGREGATORS", "5",
                         "TIERIO_AGG_BUFFER_COUNT", "3", "TIERIO_AGG_TARGET", "subfiles",
                         "TIERIO_AGG_SUBFILING", "2", "TIERIO_AGG_PERSISTENCE", "job", NULL};
    CHECK_EQ(tio_agg_settings_parse(&s, kv_get, info, kv_get, env, &err), TIO_OK);
    CHECK_EQ(s.buffer_size, 4 << 20);
    CHECK_EQ(s.aggregators, 5);
    CHECK_EQ(s.buffer_count, 3);
    CHECK(!strcmp(s.strategy, "tapioca"));
    CHECK_EQ(s.target, TIO_AGG_TARGET_SUBFILES);
    CHECK_EQ(s.subfiling, 2);
    CHECK_EQ(s.persistence, TIO_PERSIST_JOB);
    const char *alias[] = {"cb_nodes", "3", "cb_buffer_size", "65536", "striping_unit",
                           "1048576", NULL};
    CHECK_EQ(tio_agg_settings_parse(&s, kv_get, alias, NULL, NULL, &err), TIO_OK);
    CHECK_EQ(s.aggregators, 3);
    CHECK_EQ(s.buffer_size, 65536);
    CHECK_EQ(s.align, 65536); /* striping_unit beyond the buffer: the buffer */

    CASE("settings: errors name the key or variable");
    const char *bad1[] = {"tierio_agg_buffer_count", "1", NULL};
    CHECK(tio_agg_settings_parse(&s, kv_get, bad1, NULL, NULL, &err) == TIO_E_INFO_VALUE);
    CHECK_HAS(err.msg, "hint tierio_agg_buffer_count=\"1\" is invalid");
    tio_err_clear(&err);
    const char *bad2[] = {"TIERIO_AGG_BUFFER_SIZE", "lots", NULL};
    CHECK(tio_agg_settings_parse(&s, NULL, NULL, kv_get, bad2, &err) == TIO_E_INFO_VALUE);
    CHECK_HAS(err.msg, "environment variable TIERIO_AGG_BUFFER_SIZE=\"lots\" is invalid");
    tio_err_clear(&err);
    const char *bad3[] = {"tierio_agg_target", "tape", NULL};
    CHECK(tio_agg_settings_parse(&s, kv_get, bad3, NULL, NULL, &err) == TIO_E_INFO_VALUE);
    CHECK_HAS(err.msg, "\"file\", \"subfiles\" or \"node-local\"");
    tio_err_clear(&err);
    const char *bad4[] = {"tierio_agg_subfiling", "2", NULL};
    CHECK(tio_agg_settings_parse(&s, kv_get, bad4, NULL, NULL, &err) == TIO_E_INFO_KEY);
    CHECK_HAS(err.msg, "tierio_agg_target = subfiles");
    tio_err_clear(&err);
    const char *bad5[] = {"tierio_agg_persistence", "forever", NULL};
    CHECK(tio_agg_settings_parse(&s, kv_get, bad5, NULL, NULL, &err) == TIO_E_INFO_VALUE);
    tio_err_clear(&err);
    const char *bad6[] = {"tierio_agg_align", "2Mi", "tierio_agg_buffer_size", "1Mi", NULL};
    CHECK(tio_agg_settings_parse(&s, kv_get, bad6, NULL, NULL, &err) == TIO_E_INFO_VALUE);
    CHECK_HAS(err.msg, "larger than the buffer");
    tio_err_clear(&err);
    const char *bad7[] = {"tierio_agg_tier", "../etc", NULL};
    CHECK(tio_agg_settings_parse(&s, kv_get, bad7, NULL, NULL, &err) == TIO_E_INFO_VALUE);
    tio_err_clear(&err);
    const char *bad8[] = {"tierio_agg_read", "independent", NULL};
    CHECK(tio_agg_settings_parse(&s, kv_get, bad8, NULL, NULL, &err) == TIO_E_INFO_VALUE);
    CHECK_HAS(err.msg, "hint tierio_agg_read=\"independent\" is invalid");
    tio_err_clear(&err);
    const char *bad9[] = {"TIERIO_AGG_WRITE", "yes", NULL};
    CHECK(tio_agg_settings_parse(&s, NULL, NULL, kv_get, bad9, &err) == TIO_E_INFO_VALUE);
    CHECK_HAS(err.msg, "environment variable TIERIO_AGG_WRITE=\"yes\" is invalid");
    tio_err_clear(&err);
    const char *bad10[] = {"tierio_agg_domains", "even", NULL};
    CHECK(tio_agg_settings_parse(&s, kv_get, bad10, NULL, NULL, &err) == TIO_E_INFO_VALUE);
    CHECK_HAS(err.msg, "hint tierio_agg_domains=\"even\" is invalid");
    tio_err_clear(&err);
}

int main(void)
{
    test_plan_cases();
    test_plan_random();
    test_plan_by_node();
    test_disjoint();
    test_manifest();
    test_settings();
    printf("test_agg_unit: all checks passed\n");
    return 0;
}
