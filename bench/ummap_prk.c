#define _GNU_SOURCE
/* PRK-like stencil and transpose with their arrays in the ummap engine, the kernel's mmap,
 * plain memory, or memory written out with pwrite (seed 000 §6.3.2, Figure 6.6: Parallel
 * Research Kernels, 100 iterations, a storage synchronisation every 25 iterations to mimic
 * checkpoints, one file per process, 1 MiB segments).
 *
 * stencil    every rank owns an n x n tile (-n, default 1024; the seed: 4096) of a grid of
 *            (P*n) rows, plus R halo rows above and below (star stencil of radius R = 2).
 *            in(i,j) = i + j; per iteration the halos are exchanged with MPI_Sendrecv,
 *            out += the stencil of in on the grid's interior, in += 1. Check (as the PRK
 *            does, but per point): every interior out = 2 * iterations.
 * transpose  a global N x N matrix (-N, default 2048), N/P rows of A and B per rank;
 *            per iteration B += transpose(A) (local blocks transposed into a buffer,
 *            MPI_Alltoall, added into B), A += 1. A(i,j) = i*N + j at the start. Check:
 *            B(i,j) = k*A0(j,i) + k(k-1)/2 after k iterations, exactly.
 * Methods (-M): memory (malloc), ummap (tio_ummap_open on a new file, read_file=0, umsync),
 * mmap (MAP_SHARED, msync), posix (malloc + pwrite of the whole arrays + fdatasync: a
 * program without a mapping writing a checkpoint). The arrays of both kernels are one
 * region per rank; the synchronisation every S iterations (-S, default 25) covers all of
 * it. Initialisation is not timed; the iterations with their synchronisations are.
 * After the run the arrays are checked as above, and the file compared with the arrays.
 *
 * Output: one JSON line per (kernel, method): seconds = median over -r repetitions
 * (default 1) of the slowest rank; ratio = mmap seconds / seconds (speed relative to the
 * kernel's mmap in the same run, the seed's comparison), ratio_memory likewise. */
#include "ummap_common.h"

#define RADIUS 2
#define TILE 32 /* transpose tile */

typedef struct {
    size_t n, order, seg_size;
    int iters, sync_every, reps;
    bool kernel[2]; /* stencil, transpose */
    unsigned methods;
    const char *dir;
    const char *driver; /* ummap I/O driver, NULL: UMMAP_DRIVER or posix */
} options;

static int g_rank, g_size;
static const char *const kernel_name[2] = {"stencil", "transpose"};

static void usage(const char *prog)
{
    bench_usage("usage: %s [-n tile] [-N order] [-i iters] [-S every] [-K kernels] [-M methods]\n"
                "          [-g bytes] [-D driver] [-r reps] [-d dir]\n"
                "  -n tile    stencil tile per rank, n x n doubles (default 1024; seed 4096)\n"
                "  -N order   transpose matrix order, a multiple of the ranks (default 2048)\n"
                "  -i iters   iterations (default 100)\n"
                "  -S every   synchronise every this many iterations (default 25)\n"
                "  -K list    kernels: stencil,transpose (default both)\n"
                "  -M list    methods: memory,ummap,mmap,posix (default all)\n"
                "  -g bytes   ummap segment size (default 1Mi)\n"
                "  -D driver  ummap I/O driver: posix, direct, uring (default: UMMAP_DRIVER)\n"
                "  -r reps    repetitions, the median is reported (default 1)\n"
                "  -d dir     directory of the files (default $TIERIO_BENCH_DIR or /tmp)\n",
                prog);
}

static options parse_options(int argc, char **argv)
{
    options o = {.n = 1024, .order = 2048, .seg_size = 1u << 20, .iters = 100,
                 .sync_every = 25, .reps = 1, .kernel = {true, true}, .methods = 0xfu,
                 .dir = bench_default_dir()};
    int c;
    while ((c = bench_getopt(argc, argv, "n:N:i:S:K:M:g:D:r:d:h", usage)) != -1) {
        switch (c) {
        case 'n': o.n = (size_t)bench_parse_u64("-n", optarg); break;
        case 'N': o.order = (size_t)bench_parse_u64("-N", optarg); break;
        case 'i': o.iters = (int)bench_parse_u64("-i", optarg); break;
        case 'S': o.sync_every = (int)bench_parse_u64("-S", optarg); break;
        case 'K':
            bench_parse_either("-K", optarg, kernel_name[0], kernel_name[1],
                               "stencil, transpose or both", o.kernel);
            break;
        case 'M': o.methods = um_parse_methods("-M", optarg); break;
        case 'g': o.seg_size = um_parse_segsize("-g", optarg); break;
        case 'D': o.driver = optarg; break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'd': o.dir = optarg; break;
        }
    }
    if (o.n < 2 * RADIUS + 1) {
        bench_die("-n: the tile must be at least %d", 2 * RADIUS + 1);
    }
    if (o.order == 0 || o.order % (size_t)g_size != 0) {
        bench_die("-N: the order must be a positive multiple of the %d ranks", g_size);
    }
    if (o.iters < 1 || o.sync_every < 1 || o.reps < 1) {
        bench_die("-i, -S and -r must be at least 1");
    }
    return o;
}

/* ---- stencil ------------------------------------------------------------------------- */

/* The region: in, (n + 2R) rows of n (halo rows first and last), then out, n rows of n. */
static size_t stencil_bytes(const options *o)
{
    return ((o->n + 2 * RADIUS) * o->n + o->n * o->n) * sizeof(double);
}

static void stencil_init(const options *o, double *in, double *out)
{
    const size_t n = o->n;
    for (size_t i = 0; i < n + 2 * RADIUS; i++) {
        double gi = (double)g_rank * (double)n + (double)i - RADIUS; /* global row */
        for (size_t j = 0; j < n; j++) {
            in[i * n + j] = gi + (double)j;
        }
    }
    memset(out, 0, n * n * sizeof(double));
}

static void stencil_halo(const options *o, double *in)
{
    const size_t n = o->n;
    const int up = g_rank > 0 ? g_rank - 1 : MPI_PROC_NULL;
    const int down = g_rank < g_size - 1 ? g_rank + 1 : MPI_PROC_NULL;
    const int cnt = (int)(RADIUS * n);
    /* my first R rows go up, the upper neighbour's last R rows come into my top halo */
    MPI_CHECK(MPI_Sendrecv(in + RADIUS * n, cnt, MPI_DOUBLE, up, 1, in + (n + RADIUS) * n, cnt,
                           MPI_DOUBLE, down, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Sendrecv(in + n * n, cnt, MPI_DOUBLE, down, 2, in, cnt, MPI_DOUBLE, up, 2,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

/* Interior rows of my tile: global rows R .. P*n-R-1, columns R .. n-R-1. */
static void stencil_rows(const options *o, size_t *lo, size_t *hi)
{
    const size_t n = o->n, grows = (size_t)g_size * n;
    size_t g0 = (size_t)g_rank * n;
    *lo = g0 < RADIUS ? RADIUS - g0 : 0;
    *hi = g0 + n > grows - RADIUS ? grows - RADIUS - g0 : n;
}

static void stencil_iter(const options *o, double *in, double *out)
{
    const size_t n = o->n;
    size_t lo, hi;
    stencil_halo(o, in);
    stencil_rows(o, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const double *row = in + (i + RADIUS) * n;
        for (size_t j = RADIUS; j < n - RADIUS; j++) {
            double v = 0.0;
            for (int k = 1; k <= RADIUS; k++) {
                double w = 1.0 / (2.0 * k * RADIUS);
                v += w * (row[j + k] - row[j - k]);
                v += w * (row[j + k * n] - row[j - k * n]);
            }
            out[i * n + j] += v;
        }
    }
    for (size_t i = RADIUS; i < n + RADIUS; i++) { /* my rows, not the halos */
        for (size_t j = 0; j < n; j++) {
            in[i * n + j] += 1.0;
        }
    }
}

static bool stencil_check(const options *o, const double *out)
{
    const size_t n = o->n;
    size_t lo, hi;
    stencil_rows(o, &lo, &hi);
    const double want = 2.0 * o->iters;
    for (size_t i = lo; i < hi; i++) {
        for (size_t j = RADIUS; j < n - RADIUS; j++) {
            if (fabs(out[i * n + j] - want) > 1e-9 * want) {
                fprintf(stderr, "[rank %d] ummap_prk: stencil out(%zu,%zu) = %.17g, expected %g\n",
                        g_rank, i, j, out[i * n + j], want);
                return false;
            }
        }
    }
    return true;
}

/* ---- transpose ----------------------------------------------------------------------- */

static size_t transpose_bytes(const options *o)
{
    return 2 * (o->order / (size_t)g_size) * o->order * sizeof(double);
}

static void transpose_init(const options *o, double *a, double *b)
{
    const size_t w = o->order / (size_t)g_size, N = o->order;
    for (size_t i = 0; i < w; i++) {
        for (size_t j = 0; j < N; j++) {
            a[i * N + j] = (double)(((size_t)g_rank * w + i) * N + j);
            b[i * N + j] = 0.0;
        }
    }
}

static void transpose_iter(const options *o, double *a, double *b, double *sbuf, double *rbuf)
{
    const size_t w = o->order / (size_t)g_size, N = o->order;
    /* block for rank s: T[ii][jj] = A_mine[jj][s*w + ii], in tiles that stay in cache */
    for (int s = 0; s < g_size; s++) {
        double *t = sbuf + (size_t)s * w * w;
        for (size_t j0 = 0; j0 < w; j0 += TILE) {
            for (size_t i0 = 0; i0 < w; i0 += TILE) {
                size_t j1 = j0 + TILE < w ? j0 + TILE : w, i1 = i0 + TILE < w ? i0 + TILE : w;
                for (size_t jj = j0; jj < j1; jj++) {
                    const double *arow = a + jj * N + (size_t)s * w;
                    for (size_t ii = i0; ii < i1; ii++) {
                        t[ii * w + jj] = arow[ii];
                    }
                }
            }
        }
    }
    MPI_CHECK(MPI_Alltoall(sbuf, (int)(w * w), MPI_DOUBLE, rbuf, (int)(w * w), MPI_DOUBLE,
                           MPI_COMM_WORLD));
    for (int r = 0; r < g_size; r++) { /* from rank r: columns r*w .. of my rows */
        const double *t = rbuf + (size_t)r * w * w;
        for (size_t ii = 0; ii < w; ii++) {
            double *brow = b + ii * N + (size_t)r * w;
            for (size_t jj = 0; jj < w; jj++) {
                brow[jj] += t[ii * w + jj];
            }
        }
    }
    for (size_t i = 0; i < w * N; i++) {
        a[i] += 1.0;
    }
}

static bool transpose_check(const options *o, const double *b)
{
    const size_t w = o->order / (size_t)g_size, N = o->order;
    const double k = o->iters;
    for (size_t i = 0; i < w; i++) {
        size_t gi = (size_t)g_rank * w + i;
        for (size_t j = 0; j < N; j++) {
            double want = k * (double)(j * N + gi) + k * (k - 1) / 2;
            if (b[i * N + j] != want) {
                fprintf(stderr, "[rank %d] ummap_prk: transpose B(%zu,%zu) = %.17g, expected "
                        "%.17g\n", g_rank, gi, j, b[i * N + j], want);
                return false;
            }
        }
    }
    return true;
}

/* ---- one run ------------------------------------------------------------------------- */

static bool file_matches(int fd, const char *mem, size_t len)
{
    size_t chunk = 1u << 20;
    char *buf = bench_malloc(chunk);
    bool ok = true;
    for (size_t off = 0; off < len && ok; off += chunk) {
        size_t l = len - off < chunk ? len - off : chunk;
        um_pread_all(fd, buf, l, (off_t)off);
        if (memcmp(buf, mem + off, l) != 0) {
            fprintf(stderr, "[rank %d] ummap_prk: the file differs from the arrays near byte "
                    "%zu\n", g_rank, off);
            ok = false;
        }
    }
    free(buf);
    return ok;
}

static double run_one(const options *o, int kernel, enum um_method m, bool *ok,
                      tio_ummap_stats_t *st)
{
    const size_t bytes = kernel == 0 ? stencil_bytes(o) : transpose_bytes(o);
    char path[4096];
    snprintf(path, sizeof path, "%s/ummap_prk.%s.%s.%d", o->dir, kernel_name[kernel],
             um_method_name(m), g_rank);
    int fd = m == UM_MEMORY ? -1 : um_open_file(path, (off_t)bytes, true);
    um_region r;
    um_region_opts ro = UM_REGION_OPTS_INIT;
    ro.seg_size = o->seg_size;
    ro.read_file = 0; /* new arrays */
    ro.driver = o->driver;
    um_region_open(&r, m, fd, 0, bytes, &ro, true);
    double *base = (double *)um_region_ptr(&r);
    double *sbuf = NULL, *rbuf = NULL;
    if (kernel == 0) {
        stencil_init(o, base, base + (o->n + 2 * RADIUS) * o->n);
    } else {
        size_t w = o->order / (size_t)g_size;
        transpose_init(o, base, base + w * o->order);
        sbuf = bench_malloc((size_t)g_size * w * w * sizeof(double));
        rbuf = bench_malloc((size_t)g_size * w * w * sizeof(double));
    }

    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    for (int it = 0; it < o->iters; it++) {
        if (kernel == 0) {
            stencil_iter(o, base, base + (o->n + 2 * RADIUS) * o->n);
        } else {
            size_t w = o->order / (size_t)g_size;
            transpose_iter(o, base, base + w * o->order, sbuf, rbuf);
        }
        if ((it + 1) % o->sync_every == 0) {
            um_region_sync(&r);
        }
    }
    double t = bench_max_time(MPI_Wtime() - t0);

    bool good = kernel == 0
                    ? stencil_check(o, base + (o->n + 2 * RADIUS) * o->n)
                    : transpose_check(o, base + (o->order / (size_t)g_size) * o->order);
    if (m != UM_MEMORY) {
        um_region_sync(&r); /* not timed: iterations that are not a multiple of -S */
        good = file_matches(fd, (const char *)base, bytes) && good;
    }
    if (m == UM_UMMAP) {
        UM_CHECK(tio_ummap_stats(base, st));
    }
    um_region_close(&r);
    if (fd >= 0) {
        close(fd);
        SYS_CHECK(unlink(path) == 0, path);
    }
    free(sbuf);
    free(rbuf);
    *ok = bench_all(good);
    return t;
}

int main(int argc, char **argv)
{
    bench_mpi_start(&argc, &argv, &g_rank, &g_size);
    options o = parse_options(argc, argv);
    bench_header("ummap_prk: %d ranks, stencil tile %zu^2 (radius %d), transpose order %zu, "
                 "%d iterations, sync every %d, ummap segment %zu B, %d reps, dir %s",
                 g_size, o.n, RADIUS, o.order, o.iters, o.sync_every, o.seg_size, o.reps, o.dir);
    for (int k = 0; k < 2; k++) {
        if (!o.kernel[k]) {
            continue;
        }
        double sec[UM_NMETHODS];
        bool ok[UM_NMETHODS];
        tio_ummap_stats_t st;
        memset(&st, 0, sizeof st);
        double *t = bench_malloc((size_t)o.reps * sizeof(double));
        for (int m = 0; m < UM_NMETHODS; m++) {
            ok[m] = true;
            if (!(o.methods & (1u << m))) {
                continue;
            }
            for (int rep = 0; rep < o.reps; rep++) {
                bool good = false;
                t[rep] = run_one(&o, k, (enum um_method)m, &good, &st);
                ok[m] &= good;
            }
            sec[m] = bench_median(t, o.reps);
        }
        free(t);
        for (int m = 0; m < UM_NMETHODS && g_rank == 0; m++) {
            if (!(o.methods & (1u << m))) {
                continue;
            }
            size_t bytes = k == 0 ? stencil_bytes(&o) : transpose_bytes(&o);
            bench_json j;
            bench_json_begin(&j, "ummap_prk");
            bench_json_str(&j, "kernel", kernel_name[k]);
            bench_json_str(&j, "method", um_method_name(m));
            bench_json_int(&j, "ranks", g_size);
            bench_json_int(&j, k == 0 ? "tile" : "order", (long long)(k == 0 ? o.n : o.order));
            bench_json_int(&j, "iterations", o.iters);
            bench_json_int(&j, "sync_every", o.sync_every);
            bench_json_int(&j, "bytes_per_rank", (long long)bytes);
            bench_json_int(&j, "reps", o.reps);
            if (m == UM_UMMAP) {
                um_json_engine(&j, o.seg_size, o.driver);
                bench_json_int(&j, "seg_writes", (long long)st.seg_writes);
                bench_json_int(&j, "write_faults", (long long)st.write_faults);
            }
            bench_json_num(&j, "seconds", sec[m]);
            bench_json_num(&j, "seconds_per_iteration", sec[m] / o.iters);
            um_json_vs_mmap(&j, m, sec, o.methods, ok[m]);
            bench_json_end(&j);
        }
    }
    MPI_CHECK(MPI_Finalize());
    return 0;
}
