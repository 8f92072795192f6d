/* One-sided operations into cold segments of storage windows on the user-level engine
 * (MPI_Win_allocate with storage_alloc_engine=ummap). The file holds data before the
 * window is made; each process's memory limit is a few segments, so the segments other
 * processes put into, accumulate into, read and compare-and-swap on were never touched by
 * their owner, or were evicted since. Three epochs:
 *   fence:            MPI_Put spanning a segment boundary into the right neighbour,
 *                     MPI_Get from it, MPI_Accumulate(SUM) from everyone into rank 0,
 *                     MPI_Compare_and_swap from everyone on one word of rank 0;
 *   lock exclusive:   each origin in turn on every target: MPI_Put into its own slot,
 *                     MPI_Fetch_and_op(SUM) on a counter, MPI_Get of cold bytes;
 *   lock_all + flush: MPI_Accumulate(REPLACE) into an origin's slot, MPI_Win_flush,
 *                     MPI_Get of it back.
 * Results at the origins are checked; then every window byte for byte in memory, and,
 * after MPI_Win_sync, in the file (pages written back, root only), again after
 * MPI_Win_free, and the bytes of the file around the windows untouched. Half the ranks
 * spell the hints with their swin_* aliases. MPI_Win_get_info must report the engine's
 * hints.
 *
 *   test_ummap_rma [--readfile true|false] [--policy NAME] [--segsize BYTES] [--segs N]
 *                  [--limit-segs K] [--aligned] [--expect-nodes N]
 * --limit-segs: UMMAP_MEM_LIMIT is set to K segments per process of the node (unless the
 * environment sets it). With readfile=false, cold segments start as zeros; after a sync
 * a segment written to holds the window's bytes in the file, and the others keep the
 * file's old bytes. */
#include "../mpi/tio_test.h"

#include <ummap.h>

static size_t page, SEG, W;
static int nsegs = 24, readfile = 1, aligned, limit_segs = 6, expect_nodes;
static const char *policy = "fifo";
static int n, me;
static uint8_t *fileimg;   /* the file's content before the windows */
static size_t flen;
static uint8_t *view;      /* every rank's window as it must be: n * W bytes */
static uint8_t *dirtyseg;  /* n * (nsegs + 1): a segment of that rank's window was written */
static size_t *lead;       /* per rank: bytes between its segment 0 and its window base */

/* Unaligned offsets are multiples of 16: storage windows of this engine start as far into
 * their first page as the file offset is (memory congruent with the file), and MPICH
 * 4.0.2 needs 16-byte aligned window bases (README). */
static uint64_t off_of(int r)
{
    if (aligned)
        return (uint64_t)(r + 1) * ((W + page - 1) / page * page + page);
    return 1008 + (uint64_t)r * ((W + 333 + 15) / 16 * 16);
}

static uint8_t *V(int r) { return view + (size_t)r * W; }

/* Segments are counted from the page-aligned start of the engine's mapping: window byte d
 * is in segment (lead + d) / SEG. */
static void wrote(int r, size_t disp, size_t len)
{
    for (size_t s = (lead[r] + disp) / SEG; s <= (lead[r] + disp + len - 1) / SEG; s++)
        dirtyseg[(size_t)r * (size_t)(nsegs + 1) + s] = 1;
}

/* The window byte `delta` bytes from the start of segment k of rank t (segment
 * boundaries are where the operations must cross or stay clear of). */
static size_t sd(int t, size_t k, long delta)
{
    return (size_t)((long)(k * SEG) - (long)lead[t] + delta);
}

static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* What the file must hold at our window after a sync. */
static void expected_file(uint8_t *exp)
{
    memcpy(exp, V(me), W);
    if (readfile)
        return;
    for (int s = 0; s <= nsegs; s++)
        if (!dirtyseg[(size_t)me * (size_t)(nsegs + 1) + (size_t)s]) {
            /* window bytes [s*SEG - lead, (s+1)*SEG - lead) clipped to [0, W) */
            long a = (long)s * (long)SEG - (long)lead[me], e = a + (long)SEG;
            if (a < 0)
                a = 0;
            if (e > (long)W)
                e = (long)W;
            if (a < e)
                memcpy(exp + a, fileimg + off_of(me) + (size_t)a, (size_t)(e - a));
        }
}

static void check_info(MPI_Win win)
{
    MPI_Info used;
    TT_MPI(MPI_Win_get_info(win, &used));
    char want[32];
    snprintf(want, sizeof want, "%zu", SEG);
    struct {
        const char *key, *val;
    } exp[] = {{"storage_alloc_engine", "ummap"},
               {"storage_alloc_segsize", want},
               {"storage_alloc_readfile", readfile ? "true" : "false"},
               {"storage_alloc_policy", policy},
               {"storage_alloc_flush_interval", "never"}};
    for (size_t i = 0; i < sizeof exp / sizeof exp[0]; i++) {
        const char *v = tt_info_get(used, exp[i].key);
        TT_CHECK(v && !strcmp(v, exp[i].val), "MPI_Win_get_info: %s is %s, expected %s",
                 exp[i].key, v ? v : "(unset)", exp[i].val);
    }
    MPI_Info_free(&used);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "ummap_rma");
    page = (size_t)sysconf(_SC_PAGESIZE);
    SEG = page;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--aligned")) {
            aligned = 1;
            continue;
        }
        if (!strcmp(a, "--readfile"))
            readfile = !strcmp(v, "true");
        else if (!strcmp(a, "--policy"))
            policy = v;
        else if (!strcmp(a, "--segsize"))
            SEG = (size_t)atol(v);
        else if (!strcmp(a, "--segs"))
            nsegs = atoi(v);
        else if (!strcmp(a, "--limit-segs"))
            limit_segs = atoi(v);
        else if (!strcmp(a, "--expect-nodes"))
            expect_nodes = atoi(v);
        else
            TT_DIE("unknown argument %s", a);
        i++;
    }
    n = tt_size;
    me = tt_rank;
    if (nsegs < 22 || SEG < page)
        TT_DIE("--segs must be at least 22, --segsize at least a page");
    W = (size_t)nsegs * SEG - SEG + SEG / 2 + 40; /* a partial last segment */
    /* the memory limit: limit_segs segments per process of this node */
    MPI_Comm node;
    int local;
    TT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_size(node, &local);
    if (expect_nodes) { /* the ranks really are on that many nodes (the emulated cluster) */
        int leader = 0, nodes = 0;
        MPI_Comm_rank(node, &leader);
        leader = leader == 0;
        TT_MPI(MPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        TT_CHECK(nodes == expect_nodes, "the ranks are on %d node(s), expected %d", nodes,
                 expect_nodes);
    }
    MPI_Comm_free(&node);
    char lim[32];
    snprintf(lim, sizeof lim, "%zu", (size_t)limit_segs * SEG * (size_t)local);
    setenv("UMMAP_MEM_LIMIT", lim, 0);

    char file[PATH_MAX];
    tt_path(file, sizeof file, "ummap_rma.dat");
    flen = off_of(n - 1) + W + 777;
    fileimg = malloc(flen);
    tt_fill(fileimg, flen, 4242, 0);
    if (me == 0) {
        int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || pwrite(fd, fileimg, flen, 0) != (ssize_t)flen)
            TT_DIE("cannot write %s: %s", file, strerror(errno));
        close(fd);
    }
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    view = malloc((size_t)n * W);
    dirtyseg = calloc((size_t)n * (size_t)(nsegs + 1), 1);
    for (int r = 0; r < n; r++) {
        if (readfile)
            memcpy(V(r), fileimg + off_of(r), W);
        else
            memset(V(r), 0, W);
    }

    MPI_Info info;
    TT_MPI(MPI_Info_create(&info));
    int alias = me % 2;
    tt_info_set(info, "alloc_type", "storage");
    tt_info_set(info, alias ? "swin_filename" : "storage_alloc_filename", file);
    tt_info_setf(info, alias ? "swin_offset" : "storage_alloc_offset", "%" PRIu64, off_of(me));
    tt_info_set(info, alias ? "swin_impl" : "storage_alloc_engine", "ummap");
    tt_info_setf(info, alias ? "swin_segsize" : "storage_alloc_segsize", "%zu", SEG);
    tt_info_set(info, alias ? "swin_readfile" : "storage_alloc_readfile",
                readfile ? "true" : "false");
    tt_info_set(info, alias ? "swin_flushint" : "storage_alloc_flush_interval",
                alias ? "-1" : "never");
    if (alias) { /* the number of the policy */
        static const char *names[] = {"fifo", "lifo", "plru", "prnd", "wiro_f", "wiro_l"};
        int k;
        for (k = 0; k < 6 && strcmp(names[k], policy); k++)
            ;
        if (k == 6)
            TT_DIE("unknown policy %s", policy);
        tt_info_setf(info, "swin_ptype", "%d", k);
    } else {
        tt_info_set(info, "storage_alloc_policy", policy);
    }
    uint8_t *base = NULL;
    MPI_Win win;
    TT_MPI(MPI_Win_allocate((MPI_Aint)W, 1, info, MPI_COMM_WORLD, &base, &win));
    MPI_Info_free(&info);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    check_info(win);
    /* where each rank's segments start relative to its window */
    size_t mylead = (uintptr_t)base % page;
    lead = malloc(sizeof(size_t) * (size_t)n);
    TT_MPI(MPI_Allgather(&mylead, sizeof mylead, MPI_BYTE, lead, sizeof mylead, MPI_BYTE,
                         MPI_COMM_WORLD));
    TT_CHECK(mylead == 0 || mylead == off_of(me) % page,
             "the window base is %zu bytes into its page: neither 0 nor the file offset's %zu",
             mylead, (size_t)(off_of(me) % page));
    tio_ummap_stats_t st0;
    int src = tio_ummap_stats(base, &st0);
    TT_CHECK(src == 0, "tio_ummap_stats on the window base: %s", strerror(src));
    TT_CHECK(st0.resident == 0, "%zu bytes resident before any access", st0.resident);

    const int right = (me + 1) % n;
    const MPI_Datatype U = MPI_UINT64_T;

    /* ---- fence ---- */
    uint8_t put1[3000], get1[2000];
    uint64_t acc[40], cas_res = 0, cas_mine = 0x1000 + (uint64_t)me, cas_cmp;
    tt_fill(put1, sizeof put1, 100 + (uint64_t)me, 0);
    for (int i = 0; i < 40; i++)
        acc[i] = tt_word(200 + (uint64_t)me, (uint64_t)i) >> 8;
#define d_put1(t) sd(t, 5, -1000)
#define d_get1(t) sd(t, 9, 17)
    const size_t d_acc = sd(0, 12, -160), d_cas = sd(0, 16, 8);
    cas_cmp = get64(V(0) + d_cas);
    TT_MPI(MPI_Win_fence(0, win));
    TT_MPI(MPI_Put(put1, sizeof put1, MPI_BYTE, right, (MPI_Aint)d_put1(right), sizeof put1, MPI_BYTE, win));
    TT_MPI(MPI_Get(get1, sizeof get1, MPI_BYTE, right, (MPI_Aint)d_get1(right), sizeof get1, MPI_BYTE, win));
    TT_MPI(MPI_Accumulate(acc, 40, U, 0, (MPI_Aint)d_acc, 40, U, MPI_SUM, win));
    TT_MPI(MPI_Compare_and_swap(&cas_mine, &cas_cmp, &cas_res, U, 0, (MPI_Aint)d_cas, win));
    TT_MPI(MPI_Win_fence(0, win));
    tt_compare(get1, V(right) + d_get1(right), sizeof get1, "fence: MPI_Get from rank %d's cold segment", right);
    for (int o = 0; o < n; o++) {
        int t = (o + 1) % n;
        uint8_t p[3000];
        tt_fill(p, sizeof p, 100 + (uint64_t)o, 0);
        memcpy(V(t) + d_put1(t), p, sizeof p);
        wrote(t, d_put1(t), sizeof p);
        for (int i = 0; i < 40; i++) {
            uint8_t *q = V(0) + d_acc + 8 * (size_t)i;
            put64(q, get64(q) + (tt_word(200 + (uint64_t)o, (uint64_t)i) >> 8));
        }
    }
    wrote(0, d_acc, 320);
    /* one winner saw the old value; everyone else saw the winner's */
    uint64_t *cas_all = malloc(sizeof(uint64_t) * (size_t)n);
    TT_MPI(MPI_Allgather(&cas_res, 1, U, cas_all, 1, U, MPI_COMM_WORLD));
    int winner = -1;
    for (int o = 0; o < n; o++)
        if (cas_all[o] == cas_cmp) {
            TT_CHECK(winner < 0, "MPI_Compare_and_swap: ranks %d and %d both won", winner, o);
            winner = o;
        }
    TT_CHECK(winner >= 0, "MPI_Compare_and_swap: nobody saw the old value of a cold word");
    if (winner < 0)
        winner = 0;
    for (int o = 0; o < n; o++)
        TT_CHECK(o == winner || cas_all[o] == 0x1000 + (uint64_t)winner,
                 "MPI_Compare_and_swap: rank %d got %" PRIx64 ", not the winner's value", o,
                 cas_all[o]);
    put64(V(0) + d_cas, 0x1000 + (uint64_t)winner);
    wrote(0, d_cas, 8);

    /* ---- lock exclusive, every target in turn ---- */
#define d_slot(t) sd(t, 14, 3)
#define d_ctr(t) sd(t, 18, 16)
#define d_get2(t) sd(t, 20, -50)
    uint8_t put2[1500], get2[100];
    tt_fill(put2, sizeof put2, 300 + (uint64_t)me, 0);
    uint64_t one = 1, fetched;
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n;
        TT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        TT_MPI(MPI_Put(put2, sizeof put2, MPI_BYTE, t, (MPI_Aint)(d_slot(t) + 1600 * (size_t)me),
                       sizeof put2, MPI_BYTE, win));
        TT_MPI(MPI_Fetch_and_op(&one, &fetched, U, t, (MPI_Aint)d_ctr(t), MPI_SUM, win));
        TT_MPI(MPI_Get(get2, sizeof get2, MPI_BYTE, t, (MPI_Aint)d_get2(t), sizeof get2, MPI_BYTE, win));
        TT_MPI(MPI_Win_unlock(t, win));
        uint64_t b0 = get64(V(t) + d_ctr(t));
        TT_CHECK(fetched >= b0 && fetched < b0 + (uint64_t)n,
                 "MPI_Fetch_and_op on rank %d's cold counter fetched bg+%" PRIu64, t, fetched - b0);
        tt_compare(get2, V(t) + d_get2(t), sizeof get2, "lock: MPI_Get from rank %d", t);
    }
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int t = 0; t < n; t++) {
        for (int o = 0; o < n; o++) {
            uint8_t p[1500];
            tt_fill(p, sizeof p, 300 + (uint64_t)o, 0);
            memcpy(V(t) + d_slot(t) + 1600 * (size_t)o, p, sizeof p);
            wrote(t, d_slot(t) + 1600 * (size_t)o, sizeof p);
        }
        put64(V(t) + d_ctr(t), get64(V(t) + d_ctr(t)) + (uint64_t)n);
        wrote(t, d_ctr(t), 8);
    }

    /* ---- lock_all, accumulate(REPLACE) + flush + get back ---- */
#define d_rep(t) sd(t, 21, -128)
    uint64_t rep[8], back[8];
    for (int i = 0; i < 8; i++)
        rep[i] = tt_word(400 + (uint64_t)me, (uint64_t)i);
    TT_MPI(MPI_Win_lock_all(0, win));
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n;
        MPI_Aint d = (MPI_Aint)(d_rep(t) + 64 * (size_t)me);
        TT_MPI(MPI_Accumulate(rep, 8, U, t, d, 8, U, MPI_REPLACE, win));
        TT_MPI(MPI_Win_flush(t, win));
        TT_MPI(MPI_Get(back, 8, U, t, d, 8, U, win));
        TT_MPI(MPI_Win_flush(t, win));
        tt_compare(back, rep, sizeof rep, "lock_all: MPI_Get after MPI_Accumulate+flush on rank %d", t);
    }
    TT_MPI(MPI_Win_unlock_all(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int t = 0; t < n; t++)
        for (int o = 0; o < n; o++) {
            for (int i = 0; i < 8; i++)
                put64(V(t) + d_rep(t) + 64 * (size_t)o + 8 * (size_t)i,
                      tt_word(400 + (uint64_t)o, (uint64_t)i));
            wrote(t, d_rep(t) + 64 * (size_t)o, 64);
        }

    /* ---- the window, the file ---- */
    tio_ummap_stats_t st;
    tio_ummap_stats(base, &st);
    TT_CHECK(st.evictions > 0, "no eviction with %d segments under a limit of %d",
             nsegs, limit_segs);
    TT_CHECK(st.resident <= (size_t)limit_segs * SEG,
             "%zu bytes resident, more than the limit of %d segments", st.resident, limit_segs);
    TT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    tt_compare(base, V(me), W, "window of rank %d after the epochs", me);
    TT_MPI(MPI_Win_unlock(me, win));
    TT_MPI(MPI_Win_sync(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    uint8_t *exp = malloc(W);
    expected_file(exp);
    tt_check_file(file, off_of(me), exp, W, "window in the file after MPI_Win_sync");
    tt_check_clean(file, off_of(me), W, "window after MPI_Win_sync");
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* one more local change, written back by MPI_Win_free */
    TT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    memset(base + W - 100, 0xee, 100);
    TT_MPI(MPI_Win_unlock(me, win));
    memset(V(me) + W - 100, 0xee, 100);
    wrote(me, W - 100, 100);
    TT_MPI(MPI_Win_free(&win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    expected_file(exp);
    tt_check_file(file, off_of(me), exp, W, "window in the file after MPI_Win_free");
    if (me == 0) { /* the bytes between and around the windows */
        for (int r = 0; r <= n; r++) {
            uint64_t a = r == 0 ? 0 : off_of(r - 1) + W, b = r == n ? flen : off_of(r);
            tt_check_file(file, a, fileimg + a, (size_t)(b - a), "file bytes outside the windows");
        }
        struct stat sb;
        TT_CHECK(stat(file, &sb) == 0 && (size_t)sb.st_size == flen,
                 "the file is %lld bytes, expected %zu", (long long)sb.st_size, flen);
    }
    if (me == 0 && !tt_errors)
        printf("[ummap_rma] %d ranks, %zu-byte segments, limit %d per process, policy %s, "
               "readfile %d: %" PRIu64 " evictions, %" PRIu64 " segment reads on rank 0\n",
               n, SEG, limit_segs, policy, readfile, st.evictions, st.seg_reads);
    free(exp);
    free(cas_all);
    free(view);
    free(dirtyseg);
    free(lead);
    free(fileimg);
    return tt_finish();
}
