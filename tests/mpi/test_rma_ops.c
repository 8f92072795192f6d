/* Every one-sided operation under every synchronisation mode, on memory, storage and
 * combined windows; plus shared windows on storage and dynamic windows with storage
 * attached. Each rank knows what its window must hold and checks it byte for byte in
 * memory, then (for the storage part) in the file with pread, after MPI_Win_sync, and
 * again after MPI_Win_free; the storage pages must also be clean in the page cache then
 * (written back: tt_check_clean, root only), which pread alone cannot tell.
 *
 *   test_rma_ops --kind memory|storage|combined|shared|dynamic
 *                [--factor F] [--order memory_first|storage_first]
 *                [--modes lock_shared,lock_exclusive,lock_all,fence,pscw]
 *                [--hint key=value]...   more hints for every storage allocation (e.g.
 *                                        storage_alloc_engine=ummap: tests/ummap)
 *
 * Operations: MPI_Put (typed and MPI_BYTE of odd length), MPI_Get, MPI_Accumulate
 * (MPI_SUM, MPI_REPLACE), MPI_Get_accumulate (MPI_SUM, MPI_REPLACE), MPI_Fetch_and_op
 * (a counter every rank increments NFOP times: it must end at exactly bg + ranks*NFOP
 * and the fetched values must be all of bg..bg+ranks*NFOP-1), MPI_Compare_and_swap
 * (exactly one winner; and in passive modes a CAS spin lock protecting a non-atomic
 * counter that must end at exactly ranks*NCTR), MPI_Rput/MPI_Rget + MPI_Wait (passive
 * target only: MPI allows request-based operations only there). In lock_exclusive mode
 * the counter is a plain get/increment/put under the exclusive lock instead. */
#include "tio_test.h"

#include <math.h>

#define WIN_BYTES 21504 /* 5.25 pages: a multiple of 16, not of the page size */
#define K 40            /* elements of a block */
#define NFOP 50         /* MPI_Fetch_and_op increments per origin and target */
#define NCTR 40         /* lock-protected increments per origin and target */

enum kind { K_MEMORY, K_STORAGE, K_COMBINED, K_SHARED, K_DYNAMIC };
enum mode { M_LOCK_SHARED, M_LOCK_EXCL, M_LOCK_ALL, M_FENCE, M_PSCW, M_COUNT };
static const char *mode_names[M_COUNT] = {"lock_shared", "lock_exclusive", "lock_all",
                                          "fence", "pscw"};

/* Blocks of the window, in uint64 slots. Per-origin blocks exist once per rank. */
enum blk {
    B_ACC_SUM, B_PUT, B_FOP, B_BYTEPUT, B_GET, B_CAS, B_ACC_REPL, B_GACC_SUM,
    B_GACC_REPL, B_CTR, B_RPUT, B_RGET, B_COUNT
};
static const int per_origin[B_COUNT] = {0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 1, 1};
static const int blk_len[B_COUNT] = {K, K, 1, K, K, 1, K, K, K, 2, K, K};
static size_t blk_pos[B_COUNT][64]; /* [block][origin] first slot */

static size_t nslots;
static size_t page;

/* --hint key=value: added to every storage allocation's info. */
static const char *extra_hints[16];
static int n_extra_hints;

static void add_extra_hints(MPI_Info info)
{
    for (int i = 0; i < n_extra_hints; i++) {
        char key[256];
        const char *eq = strchr(extra_hints[i], '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - extra_hints[i]), extra_hints[i]);
        tt_info_set(info, key, eq + 1);
    }
}

static void layout(int n)
{
    size_t used = 0;
    int nblocks = 0;
    for (int b = 0; b < B_COUNT; b++) {
        int copies = per_origin[b] ? n : 1;
        used += (size_t)copies * (size_t)blk_len[b];
        nblocks += copies;
    }
    if (used > nslots)
        TT_DIE("window too small for %d ranks", n);
    size_t gap = (nslots - used) / (size_t)(nblocks + 1), at = gap;
    for (int b = 0; b < B_COUNT; b++)
        for (int r = 0; r < (per_origin[b] ? n : 1); r++) {
            blk_pos[b][r] = at;
            at += (size_t)blk_len[b] + gap;
        }
}

static size_t pos(int b, int r) { return blk_pos[b][per_origin[b] ? r : 0]; }

/* ---- what every rank puts where (deterministic) ---- */
static uint64_t bg_seed(int t, int phase) { return 1000 + (uint64_t)t * 16 + (uint64_t)phase; }
static uint64_t data_seed(int phase, int o, int t, int what)
{
    return 100000 + (((uint64_t)phase * 64 + (uint64_t)o) * 64 + (uint64_t)t) * 16 +
           (uint64_t)what;
}
/* The background of target t in a phase, as bytes of the whole window. */
static void background(uint8_t *w, int t, int phase)
{
    tt_fill(w, WIN_BYTES, bg_seed(t, phase), 0);
    uint64_t zero = 0;
    memcpy(w + 8 * pos(B_CTR, 0), &zero, 8); /* the spin-lock word starts free */
}
static uint64_t slot(const uint8_t *w, size_t i)
{
    uint64_t v;
    memcpy(&v, w + 8 * i, 8);
    return v;
}
static void set_slot(uint8_t *w, size_t i, uint64_t v) { memcpy(w + 8 * i, &v, 8); }
static uint64_t gacc_inc(int i) { return (uint64_t)(i + 1) * 0x10001ull; }
static uint64_t cas_value(int phase, int o)
{
    return tt_word(data_seed(phase, o, 0, 15), 7) | 1;
}
static void words(uint64_t *dst, int n, uint64_t seed)
{
    for (int i = 0; i < n; i++)
        dst[i] = tt_word(seed, (uint64_t)i);
}

/* Buffers of one origin for one target in one phase; alive until the phase is checked. */
struct tbuf {
    uint64_t put[K], acc_repl[K], gacc_repl[K], acc_sum[K], gacc_sum[K], rput[K];
    uint8_t byteput[8 * K - 3];
    uint64_t get[K], rget[K], gacc_repl_res[K], gacc_sum_res[K], fop_res[NFOP], cas_res;
};

static int is_passive(int m) { return m == M_LOCK_SHARED || m == M_LOCK_EXCL || m == M_LOCK_ALL; }

static void make_sources(struct tbuf *b, int phase, int o, int t)
{
    memset(b, 0, sizeof *b);
    words(b->put, K, data_seed(phase, o, t, 0));
    tt_fill(b->byteput, sizeof b->byteput, data_seed(phase, o, t, 1), 0);
    words(b->acc_repl, K, data_seed(phase, o, t, 2));
    words(b->gacc_repl, K, data_seed(phase, o, t, 3));
    words(b->acc_sum, K, data_seed(phase, o, t, 4));
    words(b->rput, K, data_seed(phase, o, t, 5));
    for (int i = 0; i < K; i++)
        b->gacc_sum[i] = gacc_inc(i);
}

/* The operations of one origin on target t inside an open access epoch. */
static void issue_ops(struct tbuf *b, int t, int phase, int m, MPI_Win win)
{
    const MPI_Datatype U = MPI_UINT64_T;
    const int me = tt_rank;
    uint8_t bgw[WIN_BYTES];
    background(bgw, t, phase);
    uint64_t one = 1, cmp = slot(bgw, pos(B_CAS, 0)), mine = cas_value(phase, me);
    TT_MPI(MPI_Put(b->put, K, U, t, (MPI_Aint)pos(B_PUT, me), K, U, win));
    TT_MPI(MPI_Put(b->byteput, (int)sizeof b->byteput, MPI_BYTE, t,
                   (MPI_Aint)pos(B_BYTEPUT, me), (int)sizeof b->byteput, MPI_BYTE, win));
    TT_MPI(MPI_Get(b->get, K, U, t, (MPI_Aint)pos(B_GET, me), K, U, win));
    TT_MPI(MPI_Accumulate(b->acc_repl, K, U, t, (MPI_Aint)pos(B_ACC_REPL, me), K, U,
                          MPI_REPLACE, win));
    TT_MPI(MPI_Get_accumulate(b->gacc_repl, K, U, b->gacc_repl_res, K, U, t,
                              (MPI_Aint)pos(B_GACC_REPL, me), K, U, MPI_REPLACE, win));
    TT_MPI(MPI_Accumulate(b->acc_sum, K, U, t, (MPI_Aint)pos(B_ACC_SUM, 0), K, U, MPI_SUM,
                          win));
    TT_MPI(MPI_Get_accumulate(b->gacc_sum, K, U, b->gacc_sum_res, K, U, t,
                              (MPI_Aint)pos(B_GACC_SUM, 0), K, U, MPI_SUM, win));
    for (int j = 0; j < NFOP; j++)
        TT_MPI(MPI_Fetch_and_op(&one, &b->fop_res[j], U, t, (MPI_Aint)pos(B_FOP, 0),
                                MPI_SUM, win));
    TT_MPI(MPI_Compare_and_swap(&mine, &cmp, &b->cas_res, U, t, (MPI_Aint)pos(B_CAS, 0),
                                win));
    if (is_passive(m)) {
        MPI_Request rq[2];
        TT_MPI(MPI_Rput(b->rput, K, U, t, (MPI_Aint)pos(B_RPUT, me), K, U, win, &rq[0]));
        TT_MPI(MPI_Rget(b->rget, K, U, t, (MPI_Aint)pos(B_RGET, me), K, U, win, &rq[1]));
        TT_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        TT_MPI(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    }
}

/* A counter protected by a compare-and-swap spin lock; the read-modify-write of the
 * counter itself is not atomic, so a broken lock loses updates. */
static void spin_counter(int t, MPI_Win win)
{
    const MPI_Datatype U = MPI_UINT64_T;
    MPI_Aint lk = (MPI_Aint)pos(B_CTR, 0), ctr = lk + 1;
    uint64_t zero = 0, me = (uint64_t)tt_rank + 1, old, val, dummy = 0;
    for (int j = 0; j < NCTR; j++) {
        do {
            TT_MPI(MPI_Compare_and_swap(&me, &zero, &old, U, t, lk, win));
            TT_MPI(MPI_Win_flush(t, win));
        } while (old != 0);
        TT_MPI(MPI_Fetch_and_op(&dummy, &val, U, t, ctr, MPI_NO_OP, win));
        TT_MPI(MPI_Win_flush(t, win));
        val++;
        TT_MPI(MPI_Accumulate(&val, 1, U, t, ctr, 1, U, MPI_REPLACE, win));
        TT_MPI(MPI_Win_flush(t, win));
        TT_MPI(MPI_Fetch_and_op(&zero, &old, U, t, lk, MPI_REPLACE, win));
        TT_MPI(MPI_Win_flush(t, win));
        if (old != me)
            tt_fail("spin lock on rank %d: released a lock word holding %" PRIu64
                    " instead of ours (%" PRIu64 ")", t, old, me);
    }
}

/* The counter under exclusive locks: get, increment, put, one epoch per increment. */
static void exclusive_counter(int t, MPI_Win win)
{
    const MPI_Datatype U = MPI_UINT64_T;
    MPI_Aint ctr = (MPI_Aint)pos(B_CTR, 0) + 1;
    for (int j = 0; j < NCTR; j++) {
        uint64_t val = 0;
        TT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        TT_MPI(MPI_Get(&val, 1, U, t, ctr, 1, U, win));
        TT_MPI(MPI_Win_flush(t, win));
        val++;
        TT_MPI(MPI_Put(&val, 1, U, t, ctr, 1, U, win));
        TT_MPI(MPI_Win_unlock(t, win));
    }
}

static void run_mode(int m, int phase, struct tbuf *tb, MPI_Win win)
{
    const int n = tt_size, me = tt_rank;
    MPI_Group wg;
    switch (m) {
    case M_LOCK_SHARED:
    case M_LOCK_EXCL:
        for (int k = 0; k < n; k++) {
            int t = (me + k) % n;
            TT_MPI(MPI_Win_lock(m == M_LOCK_SHARED ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, t,
                                0, win));
            issue_ops(&tb[t], t, phase, m, win);
            if (m == M_LOCK_SHARED)
                spin_counter(t, win);
            TT_MPI(MPI_Win_unlock(t, win));
            if (m == M_LOCK_EXCL)
                exclusive_counter(t, win);
        }
        break;
    case M_LOCK_ALL:
        TT_MPI(MPI_Win_lock_all(0, win));
        for (int k = 0; k < n; k++) {
            int t = (me + k) % n;
            issue_ops(&tb[t], t, phase, m, win);
            TT_MPI(MPI_Win_flush(t, win));
        }
        for (int k = 0; k < n; k++)
            spin_counter((me + k) % n, win);
        TT_MPI(MPI_Win_flush_all(win));
        TT_MPI(MPI_Win_unlock_all(win));
        break;
    case M_FENCE:
        TT_MPI(MPI_Win_fence(0, win));
        for (int k = 0; k < n; k++)
            issue_ops(&tb[(me + k) % n], (me + k) % n, phase, m, win);
        TT_MPI(MPI_Win_fence(0, win));
        break;
    case M_PSCW:
        TT_MPI(MPI_Win_get_group(win, &wg));
        TT_MPI(MPI_Win_post(wg, 0, win));
        TT_MPI(MPI_Win_start(wg, 0, win));
        for (int k = 0; k < n; k++)
            issue_ops(&tb[(me + k) % n], (me + k) % n, phase, m, win);
        TT_MPI(MPI_Win_complete(win));
        TT_MPI(MPI_Win_wait(win));
        MPI_Group_free(&wg);
        break;
    }
}

/* Check what this origin got back, agree on the atomics' outcomes, and compute what
 * this rank's window must now hold. */
static void expected_window(uint8_t *exp, int m, int phase, struct tbuf *tb)
{
    const int n = tt_size, me = tt_rank;
    const char *mn = mode_names[m];
    /* origin side: what Get, Rget and Get_accumulate(REPLACE) returned */
    for (int t = 0; t < n; t++) {
        uint8_t bgw[WIN_BYTES];
        background(bgw, t, phase);
        tt_compare(tb[t].get, bgw + 8 * pos(B_GET, me), 8 * K,
                   "%s: MPI_Get from rank %d", mn, t);
        if (is_passive(m))
            tt_compare(tb[t].rget, bgw + 8 * pos(B_RGET, me), 8 * K,
                       "%s: MPI_Rget from rank %d", mn, t);
        tt_compare(tb[t].gacc_repl_res, bgw + 8 * pos(B_GACC_REPL, me), 8 * K,
                   "%s: MPI_Get_accumulate(MPI_REPLACE) result from rank %d", mn, t);
    }
    /* every origin's atomic results about every target */
    const int per = K + NFOP + 1;
    uint64_t *mine = malloc(sizeof(uint64_t) * (size_t)(n * per));
    uint64_t *all = malloc(sizeof(uint64_t) * (size_t)(n * n * per));
    for (int t = 0; t < n; t++) {
        memcpy(mine + t * per, tb[t].gacc_sum_res, 8 * K);
        memcpy(mine + t * per + K, tb[t].fop_res, 8 * NFOP);
        mine[t * per + K + NFOP] = tb[t].cas_res;
    }
    TT_MPI(MPI_Allgather(mine, n * per, MPI_UINT64_T, all, n * per, MPI_UINT64_T,
                         MPI_COMM_WORLD));
#define RES(o, t) (all + ((size_t)(o) * (size_t)n + (size_t)(t)) * (size_t)per)

    background(exp, me, phase);
    uint8_t bgw[WIN_BYTES];
    memcpy(bgw, exp, WIN_BYTES);
    for (int o = 0; o < n; o++) {
        struct tbuf src;
        make_sources(&src, phase, o, me);
        memcpy(exp + 8 * pos(B_PUT, o), src.put, 8 * K);
        memcpy(exp + 8 * pos(B_BYTEPUT, o), src.byteput, sizeof src.byteput);
        memcpy(exp + 8 * pos(B_ACC_REPL, o), src.acc_repl, 8 * K);
        memcpy(exp + 8 * pos(B_GACC_REPL, o), src.gacc_repl, 8 * K);
        if (is_passive(m))
            memcpy(exp + 8 * pos(B_RPUT, o), src.rput, 8 * K);
        for (int i = 0; i < K; i++) {
            size_t s = pos(B_ACC_SUM, 0) + (size_t)i;
            set_slot(exp, s, slot(exp, s) + src.acc_sum[i]);
        }
    }
    /* Get_accumulate(SUM): element i fetched by the n origins must be bg + k*inc for
     * k = 0..n-1, each k once (atomicity), and ends at bg + n*inc. */
    for (int i = 0; i < K; i++) {
        size_t s = pos(B_GACC_SUM, 0) + (size_t)i;
        uint64_t b0 = slot(bgw, s), inc = gacc_inc(i), seen = 0;
        for (int o = 0; o < n; o++) {
            uint64_t d = RES(o, me)[i] - b0;
            if (d % inc || d / inc >= (uint64_t)n || (seen >> (d / inc) & 1)) {
                tt_fail("%s: MPI_Get_accumulate(MPI_SUM) element %d: rank %d fetched %" PRIu64
                        ", not a fresh bg+k*inc (bg %" PRIu64 ", inc %" PRIu64 ")",
                        mn, i, o, RES(o, me)[i], b0, inc);
                continue;
            }
            seen |= 1ull << (d / inc);
        }
        set_slot(exp, s, b0 + (uint64_t)n * inc);
    }
    /* Fetch_and_op(SUM, 1): the fetched values are exactly bg .. bg+n*NFOP-1. */
    {
        size_t s = pos(B_FOP, 0);
        uint64_t b0 = slot(bgw, s), total = (uint64_t)n * NFOP;
        char *seen = calloc((size_t)total, 1);
        for (int o = 0; o < n; o++)
            for (int j = 0; j < NFOP; j++) {
                uint64_t d = RES(o, me)[K + j] - b0;
                if (d >= total || seen[d])
                    tt_fail("%s: MPI_Fetch_and_op counter on rank %d: rank %d's fetch %d "
                            "returned bg+%" PRIu64 " (out of range or seen twice)",
                            mn, me, o, j, d);
                else
                    seen[d] = 1;
            }
        free(seen);
        set_slot(exp, s, b0 + total);
    }
    /* Compare_and_swap: one winner saw bg, every other origin saw the winner's value. */
    {
        size_t s = pos(B_CAS, 0);
        uint64_t b0 = slot(bgw, s);
        int winner = -1;
        for (int o = 0; o < n; o++)
            if (RES(o, me)[K + NFOP] == b0) {
                if (winner >= 0)
                    tt_fail("%s: MPI_Compare_and_swap on rank %d: ranks %d and %d both won",
                            mn, me, winner, o);
                winner = o;
            }
        if (winner < 0) {
            tt_fail("%s: MPI_Compare_and_swap on rank %d: nobody saw the old value", mn, me);
            winner = 0;
        }
        for (int o = 0; o < n; o++)
            if (o != winner && RES(o, me)[K + NFOP] != cas_value(phase, winner))
                tt_fail("%s: MPI_Compare_and_swap on rank %d: rank %d got %" PRIu64
                        ", not the winner's (rank %d) value", mn, me, o,
                        RES(o, me)[K + NFOP], winner);
        set_slot(exp, s, cas_value(phase, winner));
    }
    if (m == M_LOCK_SHARED || m == M_LOCK_ALL || m == M_LOCK_EXCL) {
        size_t s = pos(B_CTR, 0);
        set_slot(exp, s, 0);
        set_slot(exp, s + 1, slot(bgw, s + 1) + (uint64_t)n * NCTR);
    }
#undef RES
    free(mine);
    free(all);
}

/* ---- window kinds ---- */
struct wopts {
    enum kind kind;
    double factor;
    int storage_first;
    int aligned;       /* page-aligned file offsets (tierio may use MPI's shared memory) */
    const char *impl;  /* expected tierio_window_impl, or NULL */
};

static size_t round_up(size_t x, size_t p) { return (x + p - 1) / p * p; }

static uint64_t file_offset(const struct wopts *o, int r)
{
    if (o->aligned || (o->kind == K_COMBINED && !o->storage_first)) /* page-aligned */
        return (uint64_t)(r + 1) * round_up(WIN_BYTES, page);
    return 16 + (uint64_t)r * (WIN_BYTES + 48); /* multiples of 16, not of the page */
}

/* Bytes of the window on storage, as contract 1 says (page rounding of the boundary). */
static size_t storage_bytes(const struct wopts *o, int r)
{
    if (o->kind == K_MEMORY)
        return 0;
    if (o->kind == K_STORAGE || o->factor >= 1.0)
        return WIN_BYTES;
    size_t want = (size_t)((double)WIN_BYTES * o->factor);
    if (want == 0)
        return 0;
    if (!o->storage_first) {
        size_t mem = (WIN_BYTES - want) / page * page; /* memory rounds down */
        return WIN_BYTES - mem;
    }
    size_t delta = file_offset(o, r) % page, sto = round_up(delta + want, page) - delta;
    return sto > WIN_BYTES ? WIN_BYTES : sto;
}
static size_t storage_start(const struct wopts *o, int r)
{
    return o->storage_first ? 0 : WIN_BYTES - storage_bytes(o, r);
}

static void check_reported_hints(const struct wopts *o, MPI_Win win, const char *file)
{
    MPI_Info used;
    TT_MPI(MPI_Win_get_info(win, &used));
    const char *v = tt_info_get(used, "alloc_type");
    if (o->kind == K_MEMORY) {
        TT_CHECK(!v || !strcmp(v, "memory"), "memory window reports alloc_type=%s", v);
    } else {
        TT_CHECK(v && !strcmp(v, "storage"), "storage window reports alloc_type=%s",
                 v ? v : "(unset)");
        v = tt_info_get(used, "storage_alloc_filename");
        TT_CHECK(v && !strcmp(v, file), "storage_alloc_filename reported as %s, not %s",
                 v ? v : "(unset)", file);
        v = tt_info_get(used, "storage_alloc_factor");
        double want = (double)storage_bytes(o, tt_rank) / WIN_BYTES;
        TT_CHECK(v && fabs(atof(v) - want) < 1e-5,
                 "storage_alloc_factor reported as %s, expected %.6f (%zu of %d bytes)",
                 v ? v : "(unset)", want, storage_bytes(o, tt_rank), WIN_BYTES);
    }
    MPI_Info_free(&used);
}

/* Check this rank's window (memory), sync to storage, check the file. */
static void check_window(const struct wopts *o, MPI_Win win, const uint8_t *base,
                         const uint8_t *exp, const char *file, int phase, int m)
{
    const int me = tt_rank;
    /* MPI_Win_sync writes the storage part back. Even phases call it inside an epoch (as
     * MPI allows everywhere), odd ones only outside any epoch (the seed's usage; MPI
     * itself forbids that on memory windows, which always sync inside). The memory is
     * read under a lock on ourselves, which makes it consistent in both memory models. */
    int outside = phase % 2 == 1 && o->kind != K_MEMORY;
    TT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    if (!outside)
        TT_MPI(MPI_Win_sync(win));
    tt_compare(base, exp, WIN_BYTES, "%s: window memory of rank %d", mode_names[m], me);
    TT_MPI(MPI_Win_unlock(me, win));
    if (outside)
        TT_MPI(MPI_Win_sync(win));
    /* Every rank has synced its part: the file holds it, and its pages are clean. */
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    size_t sto = storage_bytes(o, me);
    if (sto) {
        char what[128];
        snprintf(what, sizeof what, "%s: storage part of rank %d after MPI_Win_sync",
                 mode_names[m], me);
        tt_check_file(file, file_offset(o, me), exp + storage_start(o, me), sto, what);
        tt_check_clean(file, file_offset(o, me), sto, what);
    }
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* After MPI_Win_free: every rank's storage part, and nothing else, is in the file. */
static void check_whole_file(const struct wopts *o, const uint8_t *exp, const char *file)
{
    const int n = tt_size, me = tt_rank;
    size_t sto = storage_bytes(o, me);
    tt_check_file(file, file_offset(o, me), exp + storage_start(o, me), sto,
                  "storage part after MPI_Win_free");
    tt_check_clean(file, file_offset(o, me), sto, "storage part after MPI_Win_free");
    uint8_t *all = me == 0 ? malloc((size_t)n * WIN_BYTES) : NULL;
    TT_MPI(MPI_Gather(exp, WIN_BYTES, MPI_BYTE, all, WIN_BYTES, MPI_BYTE, 0, MPI_COMM_WORLD));
    if (me == 0) {
        size_t end = 0;
        for (int r = 0; r < n; r++)
            if (storage_bytes(o, r) && file_offset(o, r) + storage_bytes(o, r) > end)
                end = file_offset(o, r) + storage_bytes(o, r);
        uint8_t *img = calloc(end ? end : 1, 1);
        for (int r = 0; r < n; r++)
            memcpy(img + file_offset(o, r), all + (size_t)r * WIN_BYTES + storage_start(o, r),
                   storage_bytes(o, r));
        struct stat st;
        if (stat(file, &st) < 0)
            tt_fail("stat \"%s\" after MPI_Win_free: %s", file, strerror(errno));
        else
            TT_CHECK((size_t)st.st_size == end,
                     "file \"%s\" is %lld bytes, expected %zu (end of the last storage part)",
                     file, (long long)st.st_size, end);
        tt_check_file(file, 0, img, end, "whole file after MPI_Win_free (zeros between parts)");
        free(img);
        free(all);
    }
}

static void run_window_kind(const struct wopts *o, int modes)
{
    const int me = tt_rank;
    char file[PATH_MAX];
    tt_path(file, sizeof file, "rma.dat");
    MPI_Info info = MPI_INFO_NULL;
    if (o->kind != K_MEMORY) {
        MPI_Info_create(&info);
        tt_info_set(info, "alloc_type", "storage");
        tt_info_set(info, "storage_alloc_filename", file);
        tt_info_setf(info, "storage_alloc_offset", "%" PRIu64, file_offset(o, me));
        tt_info_set(info, "storage_alloc_unlink", "false");
        add_extra_hints(info);
        if (o->kind == K_COMBINED) {
            tt_info_setf(info, "storage_alloc_factor", "%g", o->factor);
            tt_info_set(info, "storage_alloc_order",
                        o->storage_first ? "storage_first" : "memory_first");
        }
    }
    uint8_t *base = NULL;
    MPI_Win win;
    TT_MPI(MPI_Win_allocate(WIN_BYTES, 8, info, MPI_COMM_WORLD, &base, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    check_reported_hints(o, win, file);
    if (o->impl) { /* which way tierio made the window, when the test demands one */
        MPI_Info used;
        TT_MPI(MPI_Win_get_info(win, &used));
        const char *impl = tt_info_get(used, "tierio_window_impl");
        TT_CHECK(impl && !strcmp(impl, o->impl), "tierio_window_impl is %s, expected %s",
                 impl ? impl : "(unset)", o->impl);
        MPI_Info_free(&used);
    }
    if (o->kind != K_MEMORY) /* tierio refuses misaligned bases where MPICH needs them */
        TT_CHECK((uintptr_t)base % 16 == 0, "storage window base %p is not 16-byte aligned",
                 (void *)base);
    if (o->kind == K_MEMORY && me == 0)
        TT_CHECK(!tt_exists(file), "a memory window created \"%s\"", file);

    struct tbuf *tb = malloc(sizeof *tb * (size_t)tt_size);
    uint8_t *exp = malloc(WIN_BYTES);
    int phase = 0;
    for (int m = 0; m < M_COUNT; m++) {
        if (!(modes >> m & 1))
            continue;
        /* local reset of our own window */
        TT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
        background(base, me, phase);
        TT_MPI(MPI_Win_unlock(me, win));
        for (int t = 0; t < tt_size; t++)
            make_sources(&tb[t], phase, me, t);
        TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        run_mode(m, phase, tb, win);
        TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        expected_window(exp, m, phase, tb);
        check_window(o, win, base, exp, file, phase, m);
        phase++;
    }
    TT_MPI(MPI_Win_free(&win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (o->kind != K_MEMORY)
        check_whole_file(o, exp, file);
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0 && o->kind != K_MEMORY && unlink(file) < 0)
        tt_fail("unlink \"%s\": %s", file, strerror(errno));
    free(tb);
    free(exp);
}

/* ---- MPI_Win_allocate_shared on storage ---- */
static size_t piece_size(int r) { return 4096 + 16 * (size_t)(37 * r + 1); }
static uint64_t shared_offset(void) { return 48; }

static void run_shared(void)
{
    const int n = tt_size, me = tt_rank;
    char file[PATH_MAX];
    tt_path(file, sizeof file, "shared.dat");
    MPI_Info info;
    MPI_Info_create(&info);
    tt_info_set(info, "alloc_type", "storage");
    tt_info_set(info, "storage_alloc_filename", file);
    tt_info_setf(info, "storage_alloc_offset", "%" PRIu64, shared_offset());
    add_extra_hints(info);
    uint8_t *mybase = NULL;
    MPI_Win win;
    TT_MPI(MPI_Win_allocate_shared((MPI_Aint)piece_size(me), 1, info, MPI_COMM_WORLD,
                                   &mybase, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Info_free(&info);

    size_t *prefix = calloc((size_t)n + 1, sizeof *prefix);
    for (int r = 0; r < n; r++)
        prefix[r + 1] = prefix[r] + piece_size(r);
    const size_t total = prefix[n];
    uint8_t **pb = calloc((size_t)n, sizeof *pb);
    for (int r = 0; r < n; r++) {
        MPI_Aint sz;
        int du;
        TT_MPI(MPI_Win_shared_query(win, r, &sz, &du, &pb[r]));
        TT_CHECK((size_t)sz == piece_size(r), "shared_query(%d): size %ld, expected %zu", r,
                 (long)sz, piece_size(r));
        TT_CHECK(du == 1, "shared_query(%d): disp_unit %d, expected 1", r, du);
        TT_CHECK((uintptr_t)pb[r] % 16 == 0, "shared_query(%d): base %p not 16-byte aligned",
                 r, (void *)pb[r]);
    }
    TT_CHECK(pb[me] == mybase, "shared_query(own rank) %p != baseptr %p", (void *)pb[me],
             (void *)mybase);
    for (int r = 1; r < n; r++)
        TT_CHECK(pb[r] == pb[0] + prefix[r],
                 "pieces not contiguous: rank %d's piece at %p, expected %p", r, (void *)pb[r],
                 (void *)(pb[0] + prefix[r]));
    {
        MPI_Aint sz;
        int du;
        uint8_t *p;
        TT_MPI(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p));
        TT_CHECK(p == pb[0] && (size_t)sz == piece_size(0),
                 "shared_query(MPI_PROC_NULL) did not answer rank 0's piece");
    }

    /* Expected image: rank r stores into the first half of its right neighbour's piece
     * and the second half of its own; then rank r puts a 48-byte block at the start of
     * its left neighbour's second half (RMA on the shared window) and every rank adds 1
     * to a counter in rank 0's piece (at byte 16) n*3 times with Fetch_and_op. */
    uint8_t *img = malloc(total);
    tt_fill(img, total, 777, 0); /* the initial image every rank writes to its own piece */
    for (int r = 0; r < n; r++) {
        int right = (r + 1) % n;
        size_t h = piece_size(right) / 2;
        tt_fill(img + prefix[right], h, 900 + (uint64_t)r, 0);
        size_t h2 = piece_size(r) / 2;
        tt_fill(img + prefix[r] + h2, piece_size(r) - h2, 950 + (uint64_t)r, 0);
    }
    for (int r = 0; r < n; r++) {
        int left = (r + n - 1) % n;
        size_t at = prefix[left] + piece_size(left) / 2 / 16 * 16 + 32;
        tt_fill(img + at, 48, 990 + (uint64_t)r, 0);
    }
    uint64_t ctr0;
    memcpy(&ctr0, img + 16, 8);
    uint64_t ctr_final = ctr0 + (uint64_t)n * 3;
    memcpy(img + 16, &ctr_final, 8);

    TT_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    tt_fill(mybase, piece_size(me), 777, prefix[me]);
    TT_MPI(MPI_Win_sync(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_MPI(MPI_Win_sync(win));
    {
        int right = (me + 1) % n;
        tt_fill(pb[right], piece_size(right) / 2, 900 + (uint64_t)me, 0);
        size_t h2 = piece_size(me) / 2;
        tt_fill(pb[me] + h2, piece_size(me) - h2, 950 + (uint64_t)me, 0);
    }
    TT_MPI(MPI_Win_sync(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_MPI(MPI_Win_sync(win));
    {
        int left = (me + n - 1) % n;
        uint8_t blk[48];
        tt_fill(blk, 48, 990 + (uint64_t)me, 0);
        TT_MPI(MPI_Put(blk, 48, MPI_BYTE, left,
                       (MPI_Aint)(piece_size(left) / 2 / 16 * 16 + 32), 48, MPI_BYTE, win));
        uint64_t one = 1, res;
        for (int j = 0; j < 3; j++)
            TT_MPI(MPI_Fetch_and_op(&one, &res, MPI_UINT64_T, 0, 16, MPI_SUM, win));
        TT_MPI(MPI_Win_flush_all(win));
    }
    TT_MPI(MPI_Win_sync(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_MPI(MPI_Win_sync(win));
    tt_compare(pb[0], img, total, "shared window: all pieces as seen by rank %d", me);
    TT_MPI(MPI_Win_unlock_all(win));
    TT_MPI(MPI_Win_sync(win)); /* storage sync outside any epoch */
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    tt_check_file(file, shared_offset(), img, total, "shared window file after MPI_Win_sync");
    tt_check_clean(file, shared_offset(), total, "shared window after MPI_Win_sync");
    uint8_t zeros[48] = {0};
    tt_check_file(file, 0, zeros, shared_offset(), "bytes before storage_alloc_offset");
    TT_MPI(MPI_Win_free(&win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    tt_check_file(file, shared_offset(), img, total, "shared window file after MPI_Win_free");
    tt_check_clean(file, shared_offset(), total, "shared window after MPI_Win_free");
    if (me == 0) {
        struct stat st;
        TT_CHECK(stat(file, &st) == 0 && (size_t)st.st_size == shared_offset() + total,
                 "shared window file size %lld, expected %zu", (long long)st.st_size,
                 (size_t)shared_offset() + total);
    }
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        unlink(file);
    free(img);
    free(pb);
    free(prefix);
}

/* A shared window on storage where rank 0's piece is empty: MPI_PROC_NULL answers the
 * lowest non-empty piece, every piece lands contiguously in the file. */
static void run_shared_zero(void)
{
    const int n = tt_size, me = tt_rank;
    char file[PATH_MAX];
    tt_path(file, sizeof file, "shared0.dat");
    MPI_Info info = tt_storage_info(file, "4112");
    tt_info_set(info, "storage_alloc_unlink", "true");
    size_t mine = me == 0 ? 0 : 2048 + 16 * (size_t)me, total = 0, at = 0;
    for (int r = 1; r < n; r++) {
        if (r == me)
            at = total;
        total += 2048 + 16 * (size_t)r;
    }
    uint8_t *base;
    MPI_Win win;
    TT_MPI(MPI_Win_allocate_shared((MPI_Aint)mine, 1, info, MPI_COMM_WORLD, &base, &win));
    MPI_Info_free(&info);
    MPI_Aint sz;
    int du;
    uint8_t *p, *p1;
    TT_MPI(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p));
    TT_MPI(MPI_Win_shared_query(win, n > 1 ? 1 : 0, &sz, &du, &p1));
    TT_CHECK(n < 2 || p == p1, "shared_query(MPI_PROC_NULL) with an empty rank-0 piece: %p, "
             "expected rank 1's piece %p", (void *)p, (void *)p1);
    TT_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    tt_fill(base, mine, 4000, at);
    TT_MPI(MPI_Win_sync(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_MPI(MPI_Win_sync(win));
    uint8_t *img = malloc(total ? total : 1);
    tt_fill(img, total, 4000, 0);
    if (n > 1)
        tt_compare(p1, img, total, "shared window with an empty piece, seen by rank %d", me);
    TT_MPI(MPI_Win_unlock_all(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (total)
        tt_check_file(file, 4112, img, total, "shared window with an empty piece: file");
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_MPI(MPI_Win_free(&win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_CHECK(!tt_exists(file), "storage_alloc_unlink=true left \"%s\"", file);
    free(img);
}

/* ---- dynamic windows with storage from MPI_Alloc_mem ---- */
#define DYN_BYTES 12304 /* 3 pages + 16 */
#define CDYN (4 * 4096 + 48) /* the combined buffer */

static void run_dynamic(void)
{
    const int n = tt_size, me = tt_rank;
    char file[PATH_MAX];
    tt_path(file, sizeof file, "dynamic.dat");
    const uint64_t off = 32 + (uint64_t)me * (DYN_BYTES + 64);
    MPI_Info info;
    MPI_Info_create(&info);
    tt_info_set(info, "alloc_type", "storage");
    tt_info_set(info, "storage_alloc_filename", file);
    tt_info_setf(info, "storage_alloc_offset", "%" PRIu64, off);
    add_extra_hints(info);
    uint8_t *sbuf = NULL, *mbuf = NULL;
    TT_MPI(MPI_Alloc_mem(DYN_BYTES, info, &sbuf));
    MPI_Info_free(&info);
    TT_MPI(MPI_Alloc_mem(4096, MPI_INFO_NULL, &mbuf)); /* a plain memory buffer too */
    TT_CHECK(tt_exists(file), "MPI_Alloc_mem with storage hints did not create \"%s\"", file);
    /* and a combined one: memory first, its last CDYN_STO bytes on storage */
    char file2[PATH_MAX];
    tt_path(file2, sizeof file2, "dynamic2.dat");
    const uint64_t off2 = (uint64_t)(me + 1) * 8 * page;
    MPI_Info_create(&info);
    tt_info_set(info, "alloc_type", "storage");
    tt_info_set(info, "storage_alloc_filename", file2);
    tt_info_setf(info, "storage_alloc_offset", "%" PRIu64, off2);
    tt_info_set(info, "storage_alloc_factor", "0.5");
    tt_info_set(info, "storage_alloc_order", "memory_first");
    add_extra_hints(info);
    uint8_t *cbuf = NULL;
    TT_MPI(MPI_Alloc_mem(CDYN, info, &cbuf));
    MPI_Info_free(&info);
    const size_t cmem = (CDYN - CDYN / 2) / page * page, csto = CDYN - cmem;

    MPI_Win win;
    TT_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    TT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    tt_fill(sbuf, DYN_BYTES, 3000 + (uint64_t)me, 0);
    memset(mbuf, 0, 4096);
    tt_fill(cbuf, CDYN, 3400 + (uint64_t)me, 0);
    TT_MPI(MPI_Win_unlock(me, win));
    TT_MPI(MPI_Win_attach(win, sbuf, DYN_BYTES));
    TT_MPI(MPI_Win_attach(win, mbuf, 4096));
    TT_MPI(MPI_Win_attach(win, cbuf + 16, CDYN - 16)); /* a sub-range of the allocation */
    MPI_Aint addr[3], *all = malloc(sizeof(MPI_Aint) * 3 * (size_t)n);
    TT_MPI(MPI_Get_address(sbuf, &addr[0]));
    TT_MPI(MPI_Get_address(mbuf, &addr[1]));
    TT_MPI(MPI_Get_address(cbuf, &addr[2]));
    TT_MPI(MPI_Allgather(addr, 3, MPI_AINT, all, 3, MPI_AINT, MPI_COMM_WORLD));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* Round 1: each rank puts 5000 bytes at byte 1000 of its right neighbour's storage
     * buffer and 100 bytes into its memory buffer, and increments a counter at byte 8 of
     * rank 0's storage buffer twice. */
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    uint8_t *src1 = malloc(5000), src2[100], *src3 = malloc(3000);
    tt_fill(src1, 5000, 3100 + (uint64_t)me, 0);
    tt_fill(src2, 100, 3200 + (uint64_t)me, 0);
    tt_fill(src3, 3000, 3300 + (uint64_t)me, 0);
    uint64_t one = 1, res;
    TT_MPI(MPI_Win_lock_all(0, win));
    TT_MPI(MPI_Put(src1, 5000, MPI_BYTE, right, MPI_Aint_add(all[3 * right], 1000), 5000,
                   MPI_BYTE, win));
    TT_MPI(MPI_Put(src2, 100, MPI_BYTE, right, MPI_Aint_add(all[3 * right + 1], 16), 100,
                   MPI_BYTE, win));
    /* across the memory/storage boundary of the combined buffer */
    TT_MPI(MPI_Put(src1, 5000, MPI_BYTE, right, MPI_Aint_add(all[3 * right + 2], 10000), 5000,
                   MPI_BYTE, win));
    for (int j = 0; j < 2; j++)
        TT_MPI(MPI_Fetch_and_op(&one, &res, MPI_UINT64_T, 0, MPI_Aint_add(all[0], 8), MPI_SUM,
                                win));
    TT_MPI(MPI_Win_unlock_all(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    uint8_t *exp = malloc(DYN_BYTES), mexp[4096];
    tt_fill(exp, DYN_BYTES, 3000 + (uint64_t)me, 0);
    tt_fill(exp + 1000, 5000, 3100 + (uint64_t)left, 0);
    if (me == 0) {
        uint64_t c;
        memcpy(&c, exp + 8, 8);
        c += 2 * (uint64_t)n;
        memcpy(exp + 8, &c, 8);
    }
    memset(mexp, 0, sizeof mexp);
    tt_fill(mexp + 16, 100, 3200 + (uint64_t)left, 0);
    uint8_t *cexp = malloc(CDYN);
    tt_fill(cexp, CDYN, 3400 + (uint64_t)me, 0);
    tt_fill(cexp + 10000, 5000, 3100 + (uint64_t)left, 0);
    TT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    TT_MPI(MPI_Win_sync(win));
    tt_compare(sbuf, exp, DYN_BYTES, "dynamic: storage buffer of rank %d after puts", me);
    tt_compare(mbuf, mexp, sizeof mexp, "dynamic: memory buffer of rank %d after puts", me);
    tt_compare(cbuf, cexp, CDYN, "dynamic: combined buffer of rank %d after puts", me);
    TT_MPI(MPI_Win_unlock(me, win));
    TT_MPI(MPI_Win_sync(win)); /* writes back the attached storage */
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    tt_check_file(file, off, exp, DYN_BYTES, "dynamic: file after MPI_Win_sync");
    tt_check_clean(file, off, DYN_BYTES, "dynamic: attached storage after MPI_Win_sync");
    tt_check_file(file2, off2, cexp + cmem, csto,
                  "dynamic: storage part of the combined buffer after MPI_Win_sync");
    tt_check_clean(file2, off2, csto, "dynamic: combined buffer after MPI_Win_sync");
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* Round 2, not synced: 3000 bytes at byte 9000 (spanning a page boundary). Then
     * detach and MPI_Free_mem, which must write them back. */
    TT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    TT_MPI(MPI_Put(src3, 3000, MPI_BYTE, right, MPI_Aint_add(all[3 * right], 9000), 3000,
                   MPI_BYTE, win));
    TT_MPI(MPI_Win_unlock(right, win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    tt_fill(exp + 9000, 3000, 3300 + (uint64_t)left, 0);
    TT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    TT_MPI(MPI_Win_sync(win));
    tt_compare(sbuf, exp, DYN_BYTES, "dynamic: storage buffer of rank %d after round 2", me);
    TT_MPI(MPI_Win_unlock(me, win));
    TT_MPI(MPI_Win_detach(win, sbuf));
    TT_MPI(MPI_Win_detach(win, mbuf));
    TT_MPI(MPI_Win_detach(win, cbuf + 16));
    TT_MPI(MPI_Free_mem(sbuf));
    TT_MPI(MPI_Free_mem(mbuf));
    TT_MPI(MPI_Free_mem(cbuf));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    tt_check_file(file, off, exp, DYN_BYTES, "dynamic: file after MPI_Win_detach + MPI_Free_mem");
    tt_check_clean(file, off, DYN_BYTES, "dynamic: storage after MPI_Free_mem");
    TT_MPI(MPI_Win_free(&win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    tt_check_file(file, off, exp, DYN_BYTES, "dynamic: file after MPI_Win_free");
    tt_check_file(file2, off2, cexp + cmem, csto, "dynamic: combined buffer's file at the end");
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        unlink(file);
        unlink(file2);
    }
    free(exp);
    free(cexp);
    free(src1);
    free(src3);
    free(all);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "rma_ops");
    page = (size_t)sysconf(_SC_PAGESIZE);
    nslots = WIN_BYTES / 8;
    struct wopts o = {K_MEMORY, 1.0, 0, 0, NULL};
    int modes = (1 << M_COUNT) - 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--kind")) {
            i++;
            static const char *kinds[] = {"memory", "storage", "combined", "shared",
                                          "dynamic"};
            int k;
            for (k = 0; k < 5 && strcmp(v, kinds[k]); k++)
                ;
            if (k == 5)
                TT_DIE("unknown kind %s", v);
            o.kind = (enum kind)k;
        } else if (!strcmp(a, "--aligned")) {
            o.aligned = 1;
        } else if (!strcmp(a, "--expect-impl")) {
            o.impl = v;
            i++;
        } else if (!strcmp(a, "--factor")) {
            o.factor = atof(v);
            i++;
        } else if (!strcmp(a, "--order")) {
            o.storage_first = !strcmp(v, "storage_first");
            i++;
        } else if (!strcmp(a, "--hint")) {
            if (!strchr(v, '=') || n_extra_hints == 16)
                TT_DIE("--hint takes key=value (at most 16)");
            extra_hints[n_extra_hints++] = v;
            i++;
        } else if (!strcmp(a, "--modes")) {
            modes = 0;
            char copy[256], *save = NULL;
            snprintf(copy, sizeof copy, "%s", v);
            for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
                int m;
                for (m = 0; m < M_COUNT && strcmp(w, mode_names[m]); m++)
                    ;
                if (m == M_COUNT)
                    TT_DIE("unknown mode %s", w);
                modes |= 1 << m;
            }
            i++;
        } else {
            TT_DIE("unknown argument %s", a);
        }
    }
    if (tt_size > 64)
        TT_DIE("at most 64 ranks");
    layout(tt_size);
    if (o.kind == K_SHARED) {
        run_shared();
        run_shared_zero();
    }
    else if (o.kind == K_DYNAMIC)
        run_dynamic();
    else
        run_window_kind(&o, modes);
    return tt_finish();
}
