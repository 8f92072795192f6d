#define _POSIX_C_SOURCE 200809L
/* mSTREAM: STREAM kernels and one-sided Put/Get over an MPI window, in memory or in storage.
 *
 * After seed 000 §3.3.1 (mSTREAM, sergiorg-kth/mpi-storagewin/benchmark). Every rank
 * allocates ONE window with MPI_Win_allocate that holds the three STREAM arrays a, b, c
 * (N doubles each, back to back). Window kinds:
 *   memory    no info hints: a plain MPI window (the baseline);
 *   storage   alloc_type=storage, storage_alloc_filename=<dir>/mstream.<rank>,
 *             storage_alloc_unlink=true: the whole window is a mapped file;
 *   combined  storage + storage_alloc_factor=F (default 0.5): part memory, part file.
 * With -e ummap the storage kinds also get storage_alloc_engine=ummap (and, with -g,
 * storage_alloc_segsize): the window is then the user-level engine's mapping of the file.
 *
 * Per repetition: copy c=a, scale b=s*c, add c=a+b, triad a=b+s*c (each timed on its own).
 * The write-back MPI_Win_sync (storage kinds) is timed on its own once after the
 * repetitions, as in the seed (-s every: after each repetition instead, so the kernels also
 * pay for re-dirtying the pages the write-back cleaned); then one more pass is timed and
 * reported as triad_after_sync, the cost of the first stores after a write-back. After that
 * every element of a, b, c is checked against the same recurrence computed per element,
 * and for the storage kind the file is compared with the window. Then the Put and Get
 * variants: each rank puts its array a into the right neighbour's array c, and gets the
 * right neighbour's array a into its own array b, in chunks of -t KiB, under
 * MPI_Win_lock_all + MPI_Win_flush (default) or MPI_Win_lock/MPI_Win_unlock (-l lock);
 * both are verified afterwards.
 *
 * Baselines for the write-back: the same number of bytes written with write() + fsync() to a
 * file in the same directory (<dir>/mstream.<rank>.fsync), measured in the same run, in the
 * two states a window's file can be in. write+fsync: a new file every repetition, as the
 * window's first write-back finds its file (reserved at allocation, never written: the file
 * system allocates its blocks then). rewrite+fsync: the bytes written again over the
 * file's own, as a later write-back finds it. The window's first write-back (sync) is
 * compared with the first, the write-back after triad_after_sync (resync: every page
 * written again) with the second; with -s every, sync (mostly later write-backs) with the
 * second.
 *
 * Output: one JSON line per result on stdout (rank 0). bytes = bytes moved by all ranks;
 * seconds = median over repetitions of the slowest rank; ratio = GBps / baseline GBps.
 */
#include "bench_common.h"

#include <fcntl.h>

#define SCALAR 3.0
#define MAX_REPS 100 /* values grow 15x per repetition: stay far from overflow */

enum { K_COPY, K_SCALE, K_ADD, K_TRIAD, K_NKERNELS };
static const char *const kernel_name[K_NKERNELS] = {"copy", "scale", "add", "triad"};
/* bytes moved per element of one array, as STREAM counts them */
static const double kernel_bytes[K_NKERNELS] = {16.0, 16.0, 24.0, 24.0};

typedef struct {
    size_t n;         /* elements per array */
    int reps;
    const char *dir;
    unsigned kinds;   /* mask of enum bench_win_kind */
    double factor;    /* storage_alloc_factor of the combined kind */
    size_t transfer;  /* bytes per MPI_Put / MPI_Get */
    bool lock_all;    /* true: lock_all + flush; false: lock/unlock */
    bool sync_every;  /* true: MPI_Win_sync after every repetition; false: once at the end */
    const char *engine;   /* storage_alloc_engine of the storage kinds, NULL: no hint */
    const char *segsize;  /* storage_alloc_segsize (ummap), NULL: the engine's default */
} options;

static int g_rank, g_size;

static void usage(const char *prog)
{
    bench_usage("usage: %s [-m MiB | -n elements] [-r reps] [-d dir] [-w kinds] [-f factor]\n"
                "          [-t KiB] [-l lockall|lock] [-s end|every] [-e mmap|ummap] [-g bytes]\n"
                "  -m MiB     window size per rank (three arrays together), default 64\n"
                "  -n N       elements per array (overrides -m)\n"
                "  -r reps    repetitions, the median is reported (default 5, max %d)\n"
                "  -d dir     directory of the window files (default $TIERIO_BENCH_DIR or /tmp)\n"
                "  -w kinds   comma list of memory,storage,combined (default all three)\n"
                "  -f factor  storage_alloc_factor of the combined window (default 0.5)\n"
                "  -t KiB     transfer size of the Put/Get variants (default 1024)\n"
                "  -l mode    lockall (MPI_Win_lock_all + MPI_Win_flush, default) or lock\n"
                "  -s when    write-back after all repetitions (end, default, as the seed) or\n"
                "             after every one (every: kernels then include re-dirtying faults)\n"
                "             (MPI_Win_lock + MPI_Win_unlock) for the Put/Get variants\n"
                "  -e engine  storage_alloc_engine of the storage kinds: mmap or ummap\n"
                "             (default: no hint, the library's default engine)\n"
                "  -g bytes   storage_alloc_segsize with -e ummap (a power of two >= page)\n",
                prog, MAX_REPS);
}

static options parse_options(int argc, char **argv)
{
    options o = {.n = 0, .reps = 5, .dir = bench_default_dir(), .kinds = 7u, .factor = 0.5,
                 .transfer = 1024 * 1024, .lock_all = true};
    unsigned long long mib = 64;
    int c, pick;
    while ((c = bench_getopt(argc, argv, "m:n:r:d:w:f:t:l:s:e:g:h", usage)) != -1) {
        switch (c) {
        case 'm': mib = bench_parse_u64("-m", optarg); break;
        case 'n': o.n = (size_t)bench_parse_u64("-n", optarg); break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'd': o.dir = optarg; break;
        case 'w': o.kinds = bench_parse_kinds("-w", optarg); break;
        case 'f': o.factor = bench_parse_double("-f", optarg); break;
        case 't': o.transfer = (size_t)bench_parse_u64("-t", optarg) * 1024; break;
        case 'e':
            if (bench_which(optarg, "mmap", "ummap") < 0) {
                bench_die("-e: expected mmap or ummap, got '%s'", optarg);
            }
            o.engine = optarg;
            break;
        case 'g':
            (void)bench_parse_u64("-g", optarg); /* the library checks the rest */
            o.segsize = optarg;
            break;
        case 's':
            if ((pick = bench_which(optarg, "end", "every")) < 0) {
                usage(argv[0]);
                bench_die("-s: expected end or every");
            }
            o.sync_every = pick == 1;
            break;
        case 'l':
            if ((pick = bench_which(optarg, "lock", "lockall")) < 0) {
                bench_die("-l: expected lockall or lock, got '%s'", optarg);
            }
            o.lock_all = pick == 1;
            break;
        }
    }
    if (o.n == 0) {
        o.n = (size_t)(mib * 1024 * 1024 / (3 * sizeof(double)));
    }
    /* 3*N*8 must be a multiple of 16 (MPICH 4.0.2 misplaces the base of windows whose size
     * is not): N even. */
    o.n &= ~(size_t)1;
    if (o.n < 2) {
        bench_die("window too small: need at least 2 elements per array");
    }
    if (o.reps < 1 || o.reps > MAX_REPS) {
        bench_die("-r: repetitions must be 1..%d", MAX_REPS);
    }
    if (!(o.factor > 0.0 && o.factor < 1.0)) {
        bench_die("-f: the combined window needs a factor strictly between 0 and 1");
    }
    if (o.segsize != NULL && (o.engine == NULL || strcmp(o.engine, "ummap") != 0)) {
        bench_die("-g: a segment size needs -e ummap");
    }
    if (o.transfer < sizeof(double) || o.transfer > (1u << 30)) {
        bench_die("-t: transfer size must be 1 KiB .. 1 GiB");
    }
    return o;
}

/* ---- data ---------------------------------------------------------------------------- */

/* Initial value of a[i] on rank q: rank- and position-dependent, so a misplaced or
 * shifted transfer is caught. b starts at 2, c at 0. */
static inline double a_init(int q, size_t i)
{
    return 1.0 + (double)q + (double)(i % 4096) / 4096.0;
}

/* The value each array element must hold after `reps` repetitions of the four kernels,
 * computed with the same operations in the same order as the kernels. */
static inline void expected(int q, size_t i, int reps, double *a, double *b, double *c)
{
    double x = a_init(q, i), y = 2.0, z = 0.0;
    for (int r = 0; r < reps; r++) {
        z = x;
        y = SCALAR * z;
        z = x + y;
        x = y + SCALAR * z;
    }
    *a = x, *b = y, *c = z;
}

static inline bool close_enough(double got, double want)
{
    return fabs(got - want) <= 1e-12 * fabs(want);
}

static void init_arrays(double *a, double *b, double *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        a[i] = a_init(g_rank, i);
        b[i] = 2.0;
        c[i] = 0.0;
    }
}

static bool check_arrays(const double *a, const double *b, const double *c, size_t n, int reps)
{
    for (size_t i = 0; i < n; i++) {
        double ea, eb, ec;
        expected(g_rank, i, reps, &ea, &eb, &ec);
        if (!close_enough(a[i], ea) || !close_enough(b[i], eb) || !close_enough(c[i], ec)) {
            fprintf(stderr, "[rank %d] mstream: element %zu is (%g,%g,%g), expected (%g,%g,%g)\n",
                    g_rank, i, a[i], b[i], c[i], ea, eb, ec);
            return false;
        }
    }
    return true;
}

/* Compare a file's first `len` bytes with memory. */
static bool file_matches(const char *path, const void *mem, size_t len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "[rank %d] mstream: cannot open %s to check it: %s\n", g_rank, path,
                strerror(errno));
        return false;
    }
    size_t chunk = 1 << 20, off = 0;
    char *buf = bench_malloc(chunk);
    bool ok = true;
    while (ok && off < len) {
        size_t want = len - off < chunk ? len - off : chunk;
        ssize_t got = pread(fd, buf, want, (off_t)off);
        if (got != (ssize_t)want) {
            fprintf(stderr, "[rank %d] mstream: short read of %s at %zu\n", g_rank, path, off);
            ok = false;
        } else if (memcmp(buf, (const char *)mem + off, want) != 0) {
            fprintf(stderr, "[rank %d] mstream: %s differs from the window near byte %zu\n",
                    g_rank, path, off);
            ok = false;
        }
        off += want;
    }
    free(buf);
    close(fd);
    return ok;
}

/* ---- results ------------------------------------------------------------------------- */

typedef struct {
    double gbps[BENCH_WIN_NKINDS][K_NKERNELS + 2]; /* + put, get: to compute ratios */
    bool have[BENCH_WIN_NKINDS];
    /* write()+fsync() baselines [new file, rewrite] of the whole window's bytes and of the
     * combined window's storage bytes */
    double fsync_gbps[2];
    double fsync_gbps_combined[2];
} results;

static void print_result(const char *kernel, const char *window, const char *placement,
                         double bytes, double seconds, double gbps, const char *baseline,
                         double ratio, bool verified, const options *o, bool rma)
{
    if (g_rank != 0) {
        return;
    }
    bench_json j;
    bench_json_begin(&j, "mstream");
    bench_json_str(&j, "kernel", kernel);
    bench_json_str(&j, "window", window);
    bench_json_str(&j, "placement", placement);
    if (strcmp(window, "memory") != 0 && strcmp(window, "file") != 0 &&
        strcmp(window, "file_combined") != 0) {
        bench_json_str(&j, "engine", o->engine != NULL ? o->engine : "default");
    }
    bench_json_int(&j, "ranks", g_size);
    bench_json_int(&j, "bytes", llround(bytes));
    bench_json_int(&j, "elements", (long long)o->n);
    bench_json_int(&j, "reps", o->reps);
    bench_json_str(&j, "writeback", o->sync_every ? "every_rep" : "end");
    if (rma) {
        bench_json_int(&j, "transfer", (long long)o->transfer);
        bench_json_str(&j, "sync_mode", o->lock_all ? "lock_all+flush" : "lock+unlock");
    }
    bench_json_num(&j, "seconds", seconds);
    bench_json_num(&j, "GBps", gbps);
    bench_json_str(&j, "baseline", baseline);
    bench_json_num(&j, "ratio", ratio);
    bench_json_bool(&j, "verified", verified);
    bench_json_end(&j);
}

/* ---- baseline: write() + fsync() ----------------------------------------------------- */

/* pwrite() of len bytes of buf at offset 0, then fsync(); the slowest rank's time. */
static double write_fsync(int fd, const double *buf, size_t len)
{
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    size_t off = 0;
    while (off < len) {
        ssize_t w = pwrite(fd, (const char *)buf + off, len - off, (off_t)off);
        SYS_CHECK(w > 0, "pwrite of the write+fsync baseline");
        off += (size_t)w;
    }
    SYS_CHECK(fsync(fd) == 0, "fsync of the write+fsync baseline");
    return bench_max_time(MPI_Wtime() - t0);
}

/* write()+fsync() of len bytes per rank, as a write-back's baseline: into a new file every
 * repetition, or (rewrite) over the bytes the file already holds (an untimed first write
 * puts them there); GB/s. */
static double run_fsync_baseline(const options *o, size_t len, const char *what, bool rewrite)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/mstream.%d.fsync", o->dir, g_rank);
    double *buf = bench_malloc(3 * o->n * sizeof(double)); /* len is at most this */
    init_arrays(buf, buf + o->n, buf + 2 * o->n, o->n);

    int fd = -1;
    double *t = bench_malloc((size_t)o->reps * sizeof *t);
    for (int r = 0; r < o->reps; r++) {
        if (fd < 0 || !rewrite) { /* a new file: its blocks are allocated by this write */
            if (fd >= 0) {
                close(fd);
                SYS_CHECK(unlink(path) == 0, path);
            }
            fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
            SYS_CHECK(fd >= 0, path);
            if (rewrite) {
                (void)write_fsync(fd, buf, len);
            }
        }
        t[r] = write_fsync(fd, buf, len);
    }
    close(fd);
    bool ok = bench_all(file_matches(path, buf, len));
    SYS_CHECK(unlink(path) == 0, path);
    free(buf);

    double sec = bench_median(t, o->reps);
    double bytes = (double)len * g_size, gbps = bytes / sec / 1e9;
    print_result(rewrite ? "rewrite+fsync" : "write+fsync", what, "storage", bytes, sec, gbps,
                 NULL, NAN, ok, o, false);
    free(t);
    return gbps;
}

/* ---- Put / Get variants -------------------------------------------------------------- */

/* One timed pass of a variant, in chunks of -t: put, my array `mine` into the array c of
 * the right neighbour; get, the right neighbour's array a into `mine`. Under lock_all the
 * caller holds the epoch and a flush completes the pass; else a lock/unlock does. The
 * slowest rank's time. */
static double rma_pass(const options *o, MPI_Win win, bool put, double *mine, int right)
{
    const size_t n = o->n, chunk = o->transfer / sizeof(double);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    if (!o->lock_all) {
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    }
    for (size_t off = 0; off < n; off += chunk) {
        int cnt = (int)(n - off < chunk ? n - off : chunk);
        if (put) {
            MPI_CHECK(MPI_Put(mine + off, cnt, MPI_DOUBLE, right, (MPI_Aint)(2 * n + off), cnt,
                              MPI_DOUBLE, win));
        } else {
            MPI_CHECK(MPI_Get(mine + off, cnt, MPI_DOUBLE, right, (MPI_Aint)off, cnt,
                              MPI_DOUBLE, win));
        }
    }
    if (o->lock_all) {
        MPI_CHECK(MPI_Win_flush(right, win));
    } else {
        MPI_CHECK(MPI_Win_unlock(right, win));
    }
    return bench_max_time(MPI_Wtime() - t0);
}

/* ---- one window kind ----------------------------------------------------------------- */

static void run_kind(enum bench_win_kind kind, const options *o, results *res)
{
    const size_t n = o->n;
    const size_t win_bytes = 3 * n * sizeof(double);
    const char *kname = bench_win_kind_name(kind);
    const bool storage = kind != BENCH_WIN_MEMORY;
    char path[4096];
    snprintf(path, sizeof path, "%s/mstream.%d", o->dir, g_rank);

    bench_remove_stale(path);
    MPI_Info info = bench_win_info(kind, path, 0, o->factor, true);
    if (info != MPI_INFO_NULL && o->engine != NULL) {
        bench_info_set(info, "storage_alloc_engine", o->engine);
        if (o->segsize != NULL) {
            bench_info_set(info, "storage_alloc_segsize", o->segsize);
        }
    }
    double *base = NULL;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate((MPI_Aint)win_bytes, sizeof(double), info, MPI_COMM_WORLD, &base,
                               &win));
    if (info != MPI_INFO_NULL) {
        MPI_CHECK(MPI_Info_free(&info));
    }
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    const char *placement = bench_win_placement(win, kind == BENCH_WIN_MEMORY ? NULL : path);
    double *a = base, *b = base + n, *c = base + 2 * n;

    /* Local loads and stores on the window between barriers: the windows of both MPI
     * libraries are in the unified memory model. */
    init_arrays(a, b, c, n);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    double *t[K_NKERNELS + 1];
    for (int k = 0; k <= K_NKERNELS; k++) {
        t[k] = bench_malloc((size_t)o->reps * sizeof(double));
    }
    for (int r = 0; r < o->reps; r++) {
        double t0;
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        t0 = MPI_Wtime();
        for (size_t i = 0; i < n; i++) {
            c[i] = a[i];
        }
        t[K_COPY][r] = bench_max_time(MPI_Wtime() - t0);

        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        t0 = MPI_Wtime();
        for (size_t i = 0; i < n; i++) {
            b[i] = SCALAR * c[i];
        }
        t[K_SCALE][r] = bench_max_time(MPI_Wtime() - t0);

        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        t0 = MPI_Wtime();
        for (size_t i = 0; i < n; i++) {
            c[i] = a[i] + b[i];
        }
        t[K_ADD][r] = bench_max_time(MPI_Wtime() - t0);

        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        t0 = MPI_Wtime();
        for (size_t i = 0; i < n; i++) {
            a[i] = b[i] + SCALAR * c[i];
        }
        t[K_TRIAD][r] = bench_max_time(MPI_Wtime() - t0);

        /* write-back of everything the kernels dirtied (all three arrays) */
        if (storage && o->sync_every) {
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            t[K_NKERNELS][r] = bench_max_time(bench_timed_win_sync(win));
        }
    }
    int passes = o->reps;
    double triad_after_sync = NAN, resync = NAN;
    if (storage && !o->sync_every) {
        /* The seed's method: the kernels run, then one write-back is timed. */
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        double ts = bench_max_time(bench_timed_win_sync(win));
        for (int r = 0; r < o->reps; r++) {
            t[K_NKERNELS][r] = ts;
        }
        /* What the write-back costs the next pass: with the kernel's mmap, pages written
         * back are write-protected again, so the first store to each faults. Timed on one
         * more full pass (all four kernels, so the values stay checkable). */
        for (size_t i = 0; i < n; i++) {
            c[i] = a[i];
        }
        for (size_t i = 0; i < n; i++) {
            b[i] = SCALAR * c[i];
        }
        for (size_t i = 0; i < n; i++) {
            c[i] = a[i] + b[i];
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = MPI_Wtime();
        for (size_t i = 0; i < n; i++) {
            a[i] = b[i] + SCALAR * c[i];
        }
        triad_after_sync = bench_max_time(MPI_Wtime() - t0);
        passes++;
        /* The second write-back: every page written again (and the file can be compared
         * below). */
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        resync = bench_max_time(bench_timed_win_sync(win));
    }
    bool ok = check_arrays(a, b, c, n, passes);
    bool file_ok = true;
    if (kind == BENCH_WIN_STORAGE && strcmp(placement, "storage") == 0) {
        /* after MPI_Win_sync the file must hold exactly the window's bytes */
        file_ok = file_matches(path, base, win_bytes);
    }
    ok = bench_all(ok);
    file_ok = bench_all(file_ok);

    res->have[kind] = true;
    for (int k = 0; k < K_NKERNELS; k++) {
        double sec = bench_median(t[k], o->reps);
        double bytes = kernel_bytes[k] * (double)n * g_size;
        double gbps = bytes / sec / 1e9;
        res->gbps[kind][k] = gbps;
        bool base_ok = kind != BENCH_WIN_MEMORY && res->have[BENCH_WIN_MEMORY];
        print_result(kernel_name[k], kname, placement, bytes, sec, gbps,
                     kind == BENCH_WIN_MEMORY ? NULL : "memory",
                     base_ok ? gbps / res->gbps[BENCH_WIN_MEMORY][k] : NAN, ok, o, false);
    }
    if (storage && !isnan(triad_after_sync)) {
        /* compared with the memory window's triad: what re-dirtying after a sync costs */
        double bytes = kernel_bytes[K_TRIAD] * (double)n * g_size;
        double gbps = bytes / triad_after_sync / 1e9;
        bool base_ok = res->have[BENCH_WIN_MEMORY];
        print_result("triad_after_sync", kname, placement, bytes, triad_after_sync, gbps,
                     "memory", base_ok ? gbps / res->gbps[BENCH_WIN_MEMORY][K_TRIAD] : NAN, ok,
                     o, false);
    }
    if (storage) {
        double frac = kind == BENCH_WIN_COMBINED ? o->factor : 1.0;
        double bytes = frac * (double)win_bytes * g_size; /* bytes placed on storage */
        const double *base =
            kind == BENCH_WIN_COMBINED ? res->fsync_gbps_combined : res->fsync_gbps;
        /* the first write-back of the new file (-s end), or mostly later ones (-s every) */
        double sec = bench_median(t[K_NKERNELS], o->reps);
        double gbps = bytes / sec / 1e9;
        int b = o->sync_every ? 1 : 0;
        print_result("sync", kname, placement, bytes, sec, gbps,
                     b ? "rewrite+fsync" : "write+fsync", gbps / base[b], ok && file_ok, o,
                     false);
        if (!isnan(resync)) {
            gbps = bytes / resync / 1e9;
            print_result("resync", kname, placement, bytes, resync, gbps, "rewrite+fsync",
                         gbps / base[1], ok && file_ok, o, false);
        }
    }

    /* ---- Put / Get variants ---- */
    const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
    double *tp = t[0], *tg = t[1];
    if (o->lock_all) {
        MPI_CHECK(MPI_Win_lock_all(0, win));
    }
    for (int r = 0; r < o->reps; r++) { /* my a -> right neighbour's c */
        tp[r] = rma_pass(o, win, true, a, right);
    }
    for (int r = 0; r < o->reps; r++) { /* right neighbour's a -> my b */
        tg[r] = rma_pass(o, win, false, b, right);
    }
    if (o->lock_all) {
        MPI_CHECK(MPI_Win_unlock_all(win));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* my c must now be the left neighbour's a, my b the right neighbour's a */
    bool put_ok = true, get_ok = true;
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, g_rank, 0, win));
    for (size_t i = 0; i < n && (put_ok || get_ok); i++) {
        double ea, eb, ec;
        expected(left, i, passes, &ea, &eb, &ec);
        if (put_ok && !close_enough(c[i], ea)) {
            fprintf(stderr, "[rank %d] mstream: put: c[%zu]=%g, expected %g\n", g_rank, i, c[i],
                    ea);
            put_ok = false;
        }
        expected(right, i, passes, &ea, &eb, &ec);
        if (get_ok && !close_enough(b[i], ea)) {
            fprintf(stderr, "[rank %d] mstream: get: b[%zu]=%g, expected %g\n", g_rank, i, b[i],
                    ea);
            get_ok = false;
        }
    }
    MPI_CHECK(MPI_Win_unlock(g_rank, win));
    put_ok = bench_all(put_ok);
    get_ok = bench_all(get_ok);
    for (int v = 0; v < 2; v++) {
        double sec = bench_median(v == 0 ? tp : tg, o->reps);
        double bytes = (double)n * sizeof(double) * g_size;
        double gbps = bytes / sec / 1e9;
        res->gbps[kind][K_NKERNELS + v] = gbps;
        bool base_ok = kind != BENCH_WIN_MEMORY && res->have[BENCH_WIN_MEMORY];
        print_result(v == 0 ? "put" : "get", kname, placement, bytes, sec, gbps,
                     kind == BENCH_WIN_MEMORY ? NULL : "memory",
                     base_ok ? gbps / res->gbps[BENCH_WIN_MEMORY][K_NKERNELS + v] : NAN,
                     v == 0 ? put_ok : get_ok, o, true);
    }

    for (int k = 0; k <= K_NKERNELS; k++) {
        free(t[k]);
    }
    MPI_CHECK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    bench_mpi_start(&argc, &argv, &g_rank, &g_size);
    options o = parse_options(argc, argv);

    bench_header("mstream: %d ranks, %zu doubles per array, %.1f MiB window per rank, %d reps, "
                 "dir %s, transfer %zu B, %s",
                 g_size, o.n, 3.0 * (double)o.n * sizeof(double) / 1048576.0, o.reps, o.dir,
                 o.transfer, o.lock_all ? "lock_all+flush" : "lock+unlock");

    results res = {0};
    /* The write-back baselines: the same bytes written with write() + fsync(), to a new
     * file and over the file's own bytes. */
    const size_t win_bytes = 3 * o.n * sizeof(double);
    for (int rewrite = 0; rewrite < 2; rewrite++) {
        if (o.kinds & (1u << BENCH_WIN_STORAGE))
            res.fsync_gbps[rewrite] = run_fsync_baseline(&o, win_bytes, "file", rewrite);
        if (o.kinds & (1u << BENCH_WIN_COMBINED))
            res.fsync_gbps_combined[rewrite] = run_fsync_baseline(
                &o, (size_t)(o.factor * (double)win_bytes), "file_combined", rewrite);
    }
    for (int k = 0; k < BENCH_WIN_NKINDS; k++) { /* memory first: it is the baseline */
        if (o.kinds & (1u << k)) {
            run_kind((enum bench_win_kind)k, &o, &res);
        }
    }
    MPI_CHECK(MPI_Finalize());
    return 0;
}
