#define _POSIX_C_SOURCE 200809L
/* 1D-array (seed 002 §4.2, Figure 4): every process writes one buffer of its own size into
 * one shared file, the processes' buffers back to back, collectively; then reads it back.
 * Sizes per process: fixed (-s bytes, 100 KB in the seed), uniform in [0, -s], normal with
 * mean -s/2 and standard deviation -s/6 (clipped to [0, -s]), the same for every method.
 *
 * Methods, side by side in one run (each goes first in turn):
 *   mpiio         MPI_File_write_at_all / read_at_all, collective buffering on, with the
 *                 same aggregator count and buffer size (ROMIO: cb_nodes, cb_buffer_size;
 *                 OMPIO: io_ompio_num_aggregators, io_ompio_bytes_per_agg, set before
 *                 MPI_Init); info tierio_agg=disable, so the route leaves it to MPI;
 *   tierio        the C API: tio_agg_declare + tio_agg_write / tio_agg_read (default
 *                 strategy: one aggregator per node, buffers in DRAM);
 *   tierio_route  the same MPI-IO calls as mpiio with tierio_agg=enable: through the
 *                 engine by libtierio-pmpi (this program links it).
 * Phases, each from a barrier until the slowest process is done, per repetition:
 *   write        the first write of the layout (tierio: with its declaration): the data is
 *                in the file, visible to every process (MPI-IO's completion);
 *   write+sync   the same plus MPI_File_sync / tio_agg_sync: durable, which is what the
 *                throttled PFS charges;
 *   rewrite      the same layout written again (a later time step; tierio: no declaration);
 *   read         a new handle reads the file back (tierio: with its declaration), after the
 *                file was dropped from the page cache (-W: warm).
 * Verification (untimed): after each repetition every process preads its own bytes from
 * the file and compares what it read. The median over repetitions is reported with
 * ratio = mpiio seconds / method seconds (> 1: faster than MPI-IO).
 *
 * Run on the emulated cluster, PFS throttled, e.g.
 *   tools/cluster/tio-cluster run --nodes 4 --np 8 --ppn 2 --mpi openmpi \
 *       --pfs-write-bps 100M --pfs-read-bps 200M -- build/openmpi/bench/tio-bench-agg-1d */
#include "bench_common.h"

#include "agg_common.h"

enum { D_FIXED, D_UNIFORM, D_NORMAL, NDIST };
static const char *const dist_name[NDIST] = {"fixed", "uniform", "normal"};

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static long long size_of(int dist, long long max, int rank, uint64_t seed)
{
    uint64_t s = seed * 1000003u + (uint64_t)rank;
    double u1 = ((double)(next(&s) >> 11) + 0.5) / 9007199254740992.0;
    double u2 = ((double)(next(&s) >> 11) + 0.5) / 9007199254740992.0;
    double v = dist == D_FIXED     ? (double)max
               : dist == D_UNIFORM ? u1 * (double)(max + 1)
                                   : max / 2.0 + max / 6.0 * sqrt(-2 * log(u1)) *
                                                     cos(2 * 3.14159265358979 * u2);
    return v < 0 ? 0 : v > max ? max : (long long)v;
}

static void fill(unsigned char *b, long long n, long long first)
{
    for (long long i = 0; i < n; i++)
        b[i] = (unsigned char)(bench_mix64((uint64_t)(first + i)) >> 56);
}

static bool verify_file(const char *path, MPI_Offset off, const unsigned char *want, long long n)
{
    unsigned char *got = bench_malloc((size_t)n);
    int fd = open(path, O_RDONLY);
    ssize_t r = fd >= 0 ? pread(fd, got, (size_t)n, (off_t)off) : -1;
    if (fd >= 0)
        close(fd);
    bool ok = (n == 0 || r == n) && memcmp(got, want, (size_t)n) == 0;
    free(got);
    return bench_all(ok);
}

enum { M_MPIIO, M_TIERIO, M_ROUTE, NMETHODS };
static const char *const method_name[NMETHODS] = {"mpiio", "tierio", "tierio_route"};

/* The phases one repetition times. */
enum { P_WRITE, P_SYNC, P_REWRITE, P_READ, NPHASES };

/* MPI-IO, with or without the route (tierio_agg=enable through libtierio-pmpi). */
static void mpiio_rep(int method, const char *path, const agg_options *o, MPI_Offset off,
                      long long n, const unsigned char *data, unsigned char *in, bool reads,
                      double *t)
{
    MPI_Info info = agg_mpiio_info(o);
    bench_info_set(info, TIO_AGG_HINT_ENABLE, method == M_ROUTE ? "enable" : "disable");
    MPI_File fh;
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    MPI_CHECK(MPI_File_write_at_all(fh, off, data, (int)n, MPI_BYTE, MPI_STATUS_IGNORE));
    double t1 = MPI_Wtime();
    MPI_CHECK(MPI_File_sync(fh));
    double t2 = MPI_Wtime();
    t[P_WRITE] = bench_max_time(t1 - t0);
    t[P_SYNC] = bench_max_time(t2 - t0);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    MPI_CHECK(MPI_File_write_at_all(fh, off, data, (int)n, MPI_BYTE, MPI_STATUS_IGNORE));
    t[P_REWRITE] = bench_max_time(MPI_Wtime() - t0);
    MPI_CHECK(MPI_File_close(&fh));
    if (reads) {
        if (o->cold)
            agg_drop_cache(path);
        MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        t0 = MPI_Wtime();
        MPI_CHECK(MPI_File_read_at_all(fh, off, in, (int)n, MPI_BYTE, MPI_STATUS_IGNORE));
        t[P_READ] = bench_max_time(MPI_Wtime() - t0);
        MPI_CHECK(MPI_File_close(&fh));
    }
    MPI_Info_free(&info);
}

/* The C API: a declaration (timed with the first write, and with the read, which another
 * program would make), then the write and its sync; the rewrite uses the declaration. */
static void tierio_rep(const char *path, const agg_options *o, MPI_Offset off, long long n,
                       const unsigned char *data, unsigned char *in, bool reads, double *t)
{
    MPI_Info info = agg_tierio_info(o);
    tio_agg_t a;
    MPI_Offset len = n;
    int id;
    MPI_CHECK(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    MPI_CHECK(tio_agg_declare(a, n ? 1 : 0, &off, &len, &id));
    MPI_CHECK(tio_agg_write(a, id, data));
    double t1 = MPI_Wtime();
    MPI_CHECK(tio_agg_sync(a));
    double t2 = MPI_Wtime();
    t[P_WRITE] = bench_max_time(t1 - t0);
    t[P_SYNC] = bench_max_time(t2 - t0);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    MPI_CHECK(tio_agg_write(a, id, data));
    t[P_REWRITE] = bench_max_time(MPI_Wtime() - t0);
    MPI_CHECK(tio_agg_close(&a));
    if (reads) {
        if (o->cold)
            agg_drop_cache(path);
        MPI_CHECK(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &a));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        t0 = MPI_Wtime();
        MPI_CHECK(tio_agg_declare(a, n ? 1 : 0, &off, &len, &id));
        MPI_CHECK(tio_agg_read(a, id, in));
        t[P_READ] = bench_max_time(MPI_Wtime() - t0);
        MPI_CHECK(tio_agg_close(&a));
    }
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    agg_setup_ompio(argc, argv);
    MPI_Init(&argc, &argv);
    agg_init_nodes();
    agg_options o = {.aggregators = 0, .buffer = 16ull << 20, .reps = 7,
                     .pfs = agg_env_or("TIERIO_PFS", bench_default_dir()), .cold = true};
    long long max = 100000;
    unsigned dists = 7;
    bool reads = true;
    int c;
    while ((c = getopt(argc, argv, "s:a:b:r:p:D:WNh")) != -1) {
        switch (c) {
        case 's': max = (long long)bench_parse_u64("-s", optarg); break;
        case 'a': o.aggregators = (int)bench_parse_u64("-a", optarg); break;
        case 'b': o.buffer = bench_parse_u64("-b", optarg); break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'p': o.pfs = optarg; break;
        case 'D':
            dists = 0;
            for (int d = 0; d < NDIST; d++)
                if (strstr(optarg, dist_name[d]))
                    dists |= 1u << d;
            break;
        case 'W': o.cold = false; break;
        case 'N': reads = false; break;
        default:
            if (g_rank == 0)
                fprintf(stderr, "usage: %s [-s max bytes per process] [-a aggregators] "
                        "[-b buffer bytes] [-r reps] [-p dir] [-D fixed,uniform,normal] "
                        "[-W warm reads] [-N no reads]\n", argv[0]);
            MPI_Finalize();
            return c == 'h' ? 0 : 2;
        }
    }
    if (o.reps < 1 || o.buffer == 0 || max < 0 || max > INT_MAX)
        bench_die("-r >= 1, -b > 0, 0 <= -s <= INT_MAX");
    char path[PATH_MAX], lib[128];
    snprintf(path, sizeof path, "%s/agg_1d.dat", o.pfs);
    bench_mpi_library(lib, sizeof lib);
    if (g_rank == 0)
        fprintf(stderr, "# agg_1d: %d ranks on %d nodes, %d aggregators, %llu-byte buffers, "
                "max %lld bytes per rank, %d reps, %s, %s (%s)\n", g_size, g_nodes,
                agg_count(&o), o.buffer, max, o.reps, path, lib, agg_io_name());

    unsigned char *data = bench_malloc((size_t)max + 1), *in = bench_malloc((size_t)max + 1);
    double *t[NMETHODS][NPHASES];
    for (int m = 0; m < NMETHODS; m++)
        for (int p = 0; p < NPHASES; p++)
            t[m][p] = bench_malloc(sizeof(double) * (size_t)o.reps);
    static const char *const phase_name[NPHASES] = {"write", "write+sync", "rewrite", "read"};
    for (int d = 0; d < NDIST; d++) {
        if (!(dists & 1u << d))
            continue;
        long long n = size_of(d, max, g_rank, 42), total = 0, before = 0;
        for (int r = 0; r < g_size; r++) {
            long long s = size_of(d, max, r, 42);
            if (r < g_rank)
                before += s;
            total += s;
        }
        fill(data, n, before);
        bool ok[NMETHODS] = {true, true, true};
        for (int rep = 0; rep < o.reps; rep++)
            for (int k = 0; k < NMETHODS; k++) {
                int m = (rep + k) % NMETHODS; /* each goes first in turn */
                double tt[NPHASES] = {0};
                agg_unlink(path);
                memset(in, 0, (size_t)n + 1);
                if (m == M_TIERIO)
                    tierio_rep(path, &o, before, n, data, in, reads, tt);
                else
                    mpiio_rep(m, path, &o, before, n, data, in, reads, tt);
                ok[m] = verify_file(path, before, data, n) && ok[m];
                if (reads)
                    ok[m] = bench_all(memcmp(in, data, (size_t)n) == 0) && ok[m];
                for (int p = 0; p < NPHASES; p++)
                    t[m][p][rep] = tt[p];
            }
        for (int p = 0; p < NPHASES; p++) {
            if (p == P_READ && !reads)
                continue;
            double base = bench_median(t[M_MPIIO][p], o.reps);
            for (int m = 0; m < NMETHODS; m++)
                agg_json("agg_1d", "dist", dist_name[d], phase_name[p], method_name[m], &o,
                         (unsigned long long)total, bench_median(t[m][p], o.reps),
                         m == M_MPIIO ? 0 : base, ok[m], NULL, NULL);
        }
    }
    agg_unlink(path);
    free(data);
    free(in);
    for (int m = 0; m < NMETHODS; m++)
        for (int p = 0; p < NPHASES; p++)
            free(t[m][p]);
    MPI_Comm_free(&g_node_comm);
    MPI_Finalize();
    return 0;
}
