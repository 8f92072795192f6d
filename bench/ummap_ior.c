#define _GNU_SOURCE
/* IOR-like transfers through the ummap engine, the kernel's mmap, pread/pwrite and plain
 * memory, side by side (seed 000 §6.3.1, Figure 6.5).
 *
 * Every rank owns a block of B bytes (-b, default 64 MiB; the seed's 1 GiB is -b 1Gi) of
 * one shared file per method, at offset rank*B, and moves it in transfers of T bytes (-t,
 * default 256 KiB), in sequential or pseudo-random order (a per-rank permutation of its
 * transfers). ummap's segment size is T unless -g says otherwise (the seed: 256 KiB).
 *
 * Write phase: every transfer is copied into the region (memcpy into the mapping, pwrite
 * for posix), with a sync every N transfers (-S N; the other variant syncs only once at
 * the end), and the phase ends when the data is durable (the final umsync / msync /
 * fdatasync is timed). The mappings are made on a fresh file with read_file=0 for ummap,
 * as the seed's example does for new data.
 * Read phase (after the write variant without intermediate syncs): the file's pages are
 * dropped from the page cache, the region is mapped again (ummap with read_file=1) and
 * every transfer is copied out in the same order.
 *
 * The data: a per-rank pattern with the transfer number and page stamped into the first
 * word of every 4 KiB page, so that a misplaced transfer or page shows. After each write
 * phase the rank's part of the file is read with pread and compared byte for byte (memory:
 * the region itself); the read phase folds the stamps it copied out and compares them with
 * the expected ones.
 *
 * Output: one JSON line per (pattern, phase, sync variant, method) on stdout (rank 0):
 * seconds = median over repetitions of the slowest rank; bytes = all ranks; ratio = speed
 * relative to the kernel mmap measured in the same run (the seed's comparison), and
 * ratio_memory = relative to plain memory; ummap lines carry the engine's counters of the
 * last repetition (segments read and written, write calls). */
#include "ummap_common.h"

#define STAMP_STRIDE 4096 /* one stamped word per page */

typedef struct {
    size_t block, transfer, seg_size;
    unsigned long long sync_every; /* transfers between syncs in the synced variant */
    int reps;
    const char *dir;
    unsigned methods;
    bool pattern[2]; /* seq, rnd */
    const char *driver; /* ummap I/O driver, NULL: UMMAP_DRIVER or posix */
} options;

static int g_rank, g_size;
static const char *const pattern_name[2] = {"seq", "rnd"};

static void usage(const char *prog)
{
    bench_usage("usage: %s [-b bytes] [-t bytes] [-g bytes] [-S N] [-P seq,rnd] [-M methods]\n"
                "          [-D driver] [-r reps] [-d dir]\n"
                "  -b bytes   block per process, Ki/Mi/Gi suffixes (default 64Mi; seed: 1Gi)\n"
                "  -t bytes   transfer size (default 256Ki)\n"
                "  -g bytes   ummap segment size (default: the transfer size)\n"
                "  -S N       sync every N transfers in the synced variant (default 16)\n"
                "  -P list    patterns: seq, rnd (default both)\n"
                "  -M list    methods: memory,ummap,mmap,posix (default all)\n"
                "  -D driver  ummap I/O driver: posix, direct, uring (default: UMMAP_DRIVER)\n"
                "  -r reps    repetitions, the median is reported (default 3)\n"
                "  -d dir     directory of the files (default $TIERIO_BENCH_DIR or /tmp)\n",
                prog);
}

static options parse_options(int argc, char **argv)
{
    options o = {.block = 64u << 20, .transfer = 256u << 10, .seg_size = 0, .sync_every = 16,
                 .reps = 3, .dir = bench_default_dir(), .methods = 0xfu,
                 .pattern = {true, true}};
    int c;
    while ((c = bench_getopt(argc, argv, "b:t:g:S:P:M:D:r:d:h", usage)) != -1) {
        switch (c) {
        case 'b': o.block = (size_t)bench_parse_u64("-b", optarg); break;
        case 't': o.transfer = (size_t)bench_parse_u64("-t", optarg); break;
        case 'g': o.seg_size = um_parse_segsize("-g", optarg); break;
        case 'S': o.sync_every = bench_parse_u64("-S", optarg); break;
        case 'P':
            bench_parse_either("-P", optarg, pattern_name[0], pattern_name[1],
                               "seq, rnd or seq,rnd", o.pattern);
            break;
        case 'M': o.methods = um_parse_methods("-M", optarg); break;
        case 'D': o.driver = optarg; break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'd': o.dir = optarg; break;
        }
    }
    if (o.transfer < STAMP_STRIDE || o.transfer % STAMP_STRIDE != 0) {
        bench_die("-t: the transfer size must be a multiple of %d", STAMP_STRIDE);
    }
    if (o.block < o.transfer || o.block % o.transfer != 0) {
        bench_die("-b: the block must be a positive multiple of the transfer size");
    }
    if (o.seg_size == 0) { /* the seed: segments as large as the transfers */
        o.seg_size = o.transfer;
        if ((o.transfer & (o.transfer - 1)) != 0) {
            bench_die("-t %zu is not a power of two: give the segment size with -g",
                      o.transfer);
        }
    }
    if (o.sync_every == 0) {
        bench_die("-S: at least 1");
    }
    if (o.reps < 1) {
        bench_die("-r: at least 1");
    }
    return o;
}

/* ---- data ---------------------------------------------------------------------------- */

/* The stamp of page p of transfer k of this rank. */
static inline uint64_t stamp(size_t k, size_t p)
{
    return um_word(0x5a00u + (uint64_t)g_rank, (uint64_t)k * 1048576u + p * 8u);
}

/* Put transfer k's stamps into buf (the rank's pattern otherwise). */
static inline void stamp_transfer(char *buf, size_t transfer, size_t k)
{
    for (size_t p = 0; p < transfer / STAMP_STRIDE; p++) {
        uint64_t s = stamp(k, p);
        memcpy(buf + p * STAMP_STRIDE, &s, sizeof s);
    }
}

/* XOR of the stamps of a copied-out transfer. */
static inline uint64_t fold_stamps(const char *buf, size_t transfer)
{
    uint64_t x = 0;
    for (size_t p = 0; p < transfer / STAMP_STRIDE; p++) {
        uint64_t s;
        memcpy(&s, buf + p * STAMP_STRIDE, sizeof s);
        x ^= s;
    }
    return x;
}

/* Does src (the rank's block, read back) hold transfer after transfer what was written? */
static bool check_block(const options *o, const char *pattern, char *scratch,
                        void (*get)(void *ctx, size_t off, void *dst, size_t len), void *ctx)
{
    for (size_t k = 0; k < o->block / o->transfer; k++) {
        memcpy(scratch, pattern, o->transfer);
        stamp_transfer(scratch, o->transfer, k);
        char *got = scratch + o->transfer;
        get(ctx, k * o->transfer, got, o->transfer);
        if (memcmp(got, scratch, o->transfer) != 0) {
            size_t i = 0;
            while (got[i] == scratch[i]) {
                i++;
            }
            fprintf(stderr, "[rank %d] ummap_ior: transfer %zu differs at byte %zu\n", g_rank,
                    k, i);
            return false;
        }
    }
    return true;
}

typedef struct {
    int fd;
    off_t base;
} file_ctx;

static void get_from_file(void *ctx, size_t off, void *dst, size_t len)
{
    file_ctx *f = ctx;
    um_pread_all(f->fd, dst, len, f->base + (off_t)off);
}

static void get_from_memory(void *ctx, size_t off, void *dst, size_t len)
{
    memcpy(dst, (const char *)ctx + off, len);
}

/* ---- results ------------------------------------------------------------------------- */

enum { PH_WRITE, PH_WRITE_SYNCED, PH_READ, PH_N };
static const char *const phase_name[PH_N] = {"write", "write", "read"};

typedef struct {
    double sec[2][PH_N][UM_NMETHODS];
    bool ok[2][PH_N][UM_NMETHODS];
    bool have[2][PH_N][UM_NMETHODS];
    tio_ummap_stats_t stats[2][PH_N];
} results;

static void print_results(const options *o, const results *res)
{
    if (g_rank != 0) {
        return;
    }
    for (int pat = 0; pat < 2; pat++) {
        for (int ph = 0; ph < PH_N; ph++) {
            unsigned have = 0;
            for (int m = 0; m < UM_NMETHODS; m++) {
                have |= res->have[pat][ph][m] ? 1u << m : 0u;
            }
            for (int m = 0; m < UM_NMETHODS; m++) {
                if (!res->have[pat][ph][m]) {
                    continue;
                }
                double bytes = (double)o->block * g_size;
                double sec = res->sec[pat][ph][m], gbps = bytes / sec / 1e9;
                bench_json j;
                bench_json_begin(&j, "ummap_ior");
                bench_json_str(&j, "pattern", pattern_name[pat]);
                bench_json_str(&j, "phase", phase_name[ph]);
                bench_json_int(&j, "sync_every",
                               ph == PH_WRITE_SYNCED ? (long long)o->sync_every : 0);
                bench_json_str(&j, "method", um_method_name(m));
                bench_json_int(&j, "ranks", g_size);
                bench_json_int(&j, "reps", o->reps);
                bench_json_int(&j, "block", (long long)o->block);
                bench_json_int(&j, "transfer", (long long)o->transfer);
                if (m == UM_UMMAP) {
                    const tio_ummap_stats_t *s = &res->stats[pat][ph];
                    um_json_engine(&j, o->seg_size, o->driver);
                    bench_json_int(&j, "seg_reads", (long long)s->seg_reads);
                    bench_json_int(&j, "seg_writes", (long long)s->seg_writes);
                    bench_json_int(&j, "write_ops", (long long)s->write_ops);
                }
                bench_json_num(&j, "bytes", bytes);
                bench_json_num(&j, "seconds", sec);
                bench_json_num(&j, "GBps", gbps);
                um_json_vs_mmap(&j, m, res->sec[pat][ph], have, res->ok[pat][ph][m]);
                bench_json_end(&j);
            }
        }
    }
}

/* ---- one run of one method ----------------------------------------------------------- */

typedef struct {
    const options *o;
    char *pattern; /* the rank's transfer pattern (one transfer) */
    char *buf;     /* transfer buffer */
    char *scratch; /* two transfers, for checks */
} ctx_t;

/* Write phase (sync_every 0: only the final sync). Returns the slowest rank's time; the
 * region stays open for memory (read from it later), else it is closed. */
static double write_phase(ctx_t *c, enum um_method m, int fd, const size_t *order,
                          unsigned long long sync_every, um_region *r,
                          tio_ummap_stats_t *stats)
{
    const options *o = c->o;
    const size_t n = o->block / o->transfer;
    um_region_opts ro = UM_REGION_OPTS_INIT;
    ro.seg_size = o->seg_size;
    ro.read_file = 0; /* fresh file: nothing to read (the seed's example) */
    ro.driver = o->driver;
    um_region_open(r, m, fd, (off_t)g_rank * (off_t)o->block, o->block, &ro, false);

    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    for (size_t i = 0; i < n; i++) {
        size_t k = order[i];
        stamp_transfer(c->buf, o->transfer, k);
        um_region_write(r, k * o->transfer, c->buf, o->transfer);
        if (sync_every != 0 && (i + 1) % sync_every == 0 && i + 1 < n) {
            um_region_sync(r);
        }
    }
    um_region_sync(r);
    double t = bench_max_time(MPI_Wtime() - t0);
    if (m == UM_UMMAP) {
        UM_CHECK(tio_ummap_stats(r->base, stats));
    }
    if (m != UM_MEMORY) {
        um_region_close(r);
    }
    return t;
}

/* Read phase, in the same order. The stamps copied out are folded and compared. */
static double read_phase(ctx_t *c, enum um_method m, int fd, const size_t *order,
                         um_region *r, bool *ok, tio_ummap_stats_t *stats)
{
    const options *o = c->o;
    const size_t n = o->block / o->transfer;
    if (m != UM_MEMORY) {
        um_drop_cache(fd, (off_t)g_rank * (off_t)o->block, (off_t)o->block);
        um_region_opts ro = UM_REGION_OPTS_INIT;
        ro.seg_size = o->seg_size;
        ro.read_file = 1;
        ro.driver = o->driver;
        um_region_open(r, m, fd, (off_t)g_rank * (off_t)o->block, o->block, &ro, false);
    }
    uint64_t folded = 0, want = 0;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    for (size_t i = 0; i < n; i++) {
        um_region_read(r, order[i] * o->transfer, c->buf, o->transfer);
        folded ^= fold_stamps(c->buf, o->transfer);
    }
    double t = bench_max_time(MPI_Wtime() - t0);
    for (size_t k = 0; k < n; k++) {
        for (size_t p = 0; p < o->transfer / STAMP_STRIDE; p++) {
            want ^= stamp(k, p);
        }
    }
    if (folded != want) {
        fprintf(stderr, "[rank %d] ummap_ior: %s read phase copied out wrong pages\n", g_rank,
                um_method_name(m));
    }
    *ok = folded == want;
    if (m == UM_UMMAP) {
        UM_CHECK(tio_ummap_stats(r->base, stats));
    }
    um_region_close(r);
    return t;
}

static void run(const options *o, results *res)
{
    ctx_t c = {.o = o};
    c.pattern = bench_malloc(o->transfer);
    c.buf = bench_malloc(o->transfer);
    c.scratch = bench_malloc(2 * o->transfer);
    um_fill(c.pattern, o->transfer, 1 + (uint64_t)g_rank, 0);
    const size_t n = o->block / o->transfer;
    double *t[2][PH_N][UM_NMETHODS];
    for (int pat = 0; pat < 2; pat++)
        for (int ph = 0; ph < PH_N; ph++)
            for (int m = 0; m < UM_NMETHODS; m++) {
                t[pat][ph][m] = bench_malloc((size_t)o->reps * sizeof(double));
                res->ok[pat][ph][m] = true;
            }

    for (int rep = 0; rep < o->reps; rep++) {
        for (int pat = 0; pat < 2; pat++) {
            if (!o->pattern[pat]) {
                continue;
            }
            size_t *order = NULL;
            if (pat == 0) {
                order = bench_malloc(n * sizeof *order);
                for (size_t i = 0; i < n; i++) {
                    order[i] = i;
                }
            } else {
                order = um_permutation(n, ((uint64_t)g_rank << 32) ^ (uint64_t)rep);
            }
            for (int m = 0; m < UM_NMETHODS; m++) {
                if (!(o->methods & (1u << m))) {
                    continue;
                }
                for (int synced = 1; synced >= 0; synced--) {
                    char path[4096];
                    snprintf(path, sizeof path, "%s/ummap_ior.%s", o->dir, um_method_name(m));
                    int fd = -1;
                    if (m != UM_MEMORY) {
                        /* a fresh file for every write phase: rank 0 truncates it */
                        if (g_rank == 0) {
                            fd = um_open_file(path, (off_t)o->block * g_size, true);
                        }
                        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
                        if (g_rank != 0) {
                            fd = um_open_file(path, 0, false);
                        }
                    }
                    memcpy(c.buf, c.pattern, o->transfer); /* the read phase overwrote it */
                    const int ph = synced ? PH_WRITE_SYNCED : PH_WRITE;
                    um_region r;
                    t[pat][ph][m][rep] = write_phase(&c, m, fd, order,
                                                     synced ? o->sync_every : 0, &r,
                                                     &res->stats[pat][ph]);
                    res->have[pat][ph][m] = true;
                    /* the rank's part of the file (memory: the region) is what was written */
                    bool ok;
                    if (m == UM_MEMORY) {
                        ok = check_block(o, c.pattern, c.scratch, get_from_memory, r.base);
                    } else {
                        file_ctx f = {fd, (off_t)g_rank * (off_t)o->block};
                        ok = check_block(o, c.pattern, c.scratch, get_from_file, &f);
                    }
                    res->ok[pat][ph][m] &= bench_all(ok);
                    if (!synced) {
                        bool rok = false;
                        t[pat][PH_READ][m][rep] = read_phase(&c, m, fd, order, &r, &rok,
                                                             &res->stats[pat][PH_READ]);
                        res->have[pat][PH_READ][m] = true;
                        res->ok[pat][PH_READ][m] &= bench_all(rok);
                    } else if (m == UM_MEMORY) {
                        um_region_close(&r);
                    }
                    if (fd >= 0) {
                        close(fd);
                        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
                        if (g_rank == 0) {
                            SYS_CHECK(unlink(path) == 0, path);
                        }
                    }
                }
            }
            free(order);
        }
    }
    for (int pat = 0; pat < 2; pat++)
        for (int ph = 0; ph < PH_N; ph++)
            for (int m = 0; m < UM_NMETHODS; m++) {
                res->sec[pat][ph][m] = bench_median(t[pat][ph][m], o->reps);
                free(t[pat][ph][m]);
            }
    free(c.pattern);
    free(c.buf);
    free(c.scratch);
}

int main(int argc, char **argv)
{
    bench_mpi_start(&argc, &argv, &g_rank, &g_size);
    options o = parse_options(argc, argv);
    bench_header("ummap_ior: %d ranks, block %zu B per rank, transfer %zu B, ummap segment "
                 "%zu B, sync every %llu transfers (synced variant), %d reps, dir %s",
                 g_size, o.block, o.transfer, o.seg_size, o.sync_every, o.reps, o.dir);
    results res;
    memset(&res, 0, sizeof res);
    run(&o, &res);
    print_results(&o, &res);
    MPI_CHECK(MPI_Finalize());
    return 0;
}
