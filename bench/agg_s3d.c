#define _POSIX_C_SOURCE 200809L
/* S3D-IO through the aggregation engine (seed 002 §4.3, Table 6): a 3D grid of points,
 * each an array-of-structures record of -v doubles (S3D keeps every point's state
 * together), block-decomposed over the processes (MPI_Dims_create); the checkpoint is one
 * shared file holding the whole grid in C order (x fastest). A process's block is
 * bz x by rows of bx records in the file: noncontiguous.
 *
 * Methods, side by side in one run (each goes first in turn), with the same aggregator
 * count and buffer size:
 *   mpiio           a subarray file view and MPI_File_write_all (ROMIO cb_nodes /
 *                   cb_buffer_size; OMPIO io_ompio_num_aggregators / bytes_per_agg);
 *   tierio_default  tio_agg_declare of the block's rows + tio_agg_write, one aggregator
 *                   per node, buffers in DRAM;
 *   tierio_tapioca  the same with the tapioca strategy and tierio_agg_tier=auto: the cost
 *                   model chooses the aggregators and the tier of their buffers from the
 *                   site file's figures ($TIERIO_SITE; `tierio probe` writes one).
 * Timed from a barrier until the slowest process is done: the write + sync, i.e. the
 * checkpoint durable. tierio's declaration is made once before (S3D would make it at
 * start-up, as it sets its MPI-IO view) and reported apart (phase "declare": it includes
 * tapioca's placement and the allocation of the buffers on the chosen tier). The tiers
 * tapioca chose are printed.
 * Verification (untimed): every process preads its block's rows from the file.
 *
 *   tools/cluster/tio-cluster up --nodes 4 --pfs-write-bps 100M
 *   tools/cluster/tio-cluster mpirun --mpi openmpi --np 8 -- build/openmpi/tools/tierio probe \
 *       -o <pfs>/site.conf
 *   TIERIO_SITE=<pfs>/site.conf tools/cluster/tio-cluster mpirun --mpi openmpi --np 8 -- \
 *       build/openmpi/bench/tio-bench-agg-s3d
 *   tools/cluster/tio-cluster down */
#include "bench_common.h"

#include "agg_common.h"

enum { M_MPIIO, M_DEFAULT, M_TAPIOCA, NMETHODS };
static const char *const method_name[NMETHODS] = {"mpiio", "tierio_default",
                                                  "tierio_tapioca"};

static int gsz[3], bsz[3], start[3], nvars;

static double value(long long x, long long y, long long z, int v)
{
    return (double)(bench_mix64(((uint64_t)z << 42) ^ ((uint64_t)y << 21) ^ (uint64_t)x) % 100000) +
           v * 0.25;
}

/* The local block, records back to back in (z, y, x) order. */
static void fill(double *b)
{
    size_t k = 0;
    for (int z = 0; z < bsz[2]; z++)
        for (int y = 0; y < bsz[1]; y++)
            for (int x = 0; x < bsz[0]; x++)
                for (int v = 0; v < nvars; v++)
                    b[k++] = value(start[0] + x, start[1] + y, start[2] + z, v);
}

static MPI_Offset row_offset(int y, int z)
{
    long long gy = start[1] + y, gz = start[2] + z;
    return (MPI_Offset)(((gz * gsz[1] + gy) * gsz[0] + start[0]) * nvars * 8);
}

static double write_mpiio(const agg_options *o, const char *path, const double *b)
{
    MPI_Datatype rec, view;
    MPI_CHECK(MPI_Type_contiguous(nvars, MPI_DOUBLE, &rec));
    int sizes[3] = {gsz[2], gsz[1], gsz[0]}, sub[3] = {bsz[2], bsz[1], bsz[0]},
        st[3] = {start[2], start[1], start[0]};
    MPI_CHECK(MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_C, rec, &view));
    MPI_CHECK(MPI_Type_commit(&rec));
    MPI_CHECK(MPI_Type_commit(&view));
    MPI_Info info = agg_mpiio_info(o);
    bench_info_set(info, TIO_AGG_HINT_ENABLE, "disable");
    MPI_File fh;
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
    MPI_CHECK(MPI_File_set_view(fh, 0, rec, view, "native", info));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    MPI_CHECK(MPI_File_write_all(fh, b, bsz[0] * bsz[1] * bsz[2], rec, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_File_sync(fh));
    double t = bench_max_time(MPI_Wtime() - t0);
    MPI_CHECK(MPI_File_close(&fh));
    MPI_Info_free(&info);
    MPI_Type_free(&view);
    MPI_Type_free(&rec);
    return t;
}

static double write_tierio(const agg_options *o, const char *path, const double *b,
                           int tapioca, char *tiers, size_t tlen, double *declare)
{
    MPI_Info info = agg_tierio_info(o);
    if (tapioca) {
        bench_info_set(info, TIO_AGG_HINT_STRATEGY, "tapioca");
        bench_info_set(info, TIO_AGG_HINT_TIER, "auto");
    }
    int rows = bsz[1] * bsz[2];
    MPI_Offset *off = bench_malloc(sizeof *off * (size_t)rows),
               *len = bench_malloc(sizeof *len * (size_t)rows);
    for (int z = 0, k = 0; z < bsz[2]; z++)
        for (int y = 0; y < bsz[1]; y++, k++) {
            off[k] = row_offset(y, z);
            len[k] = (MPI_Offset)bsz[0] * nvars * 8;
        }
    tio_agg_t a;
    MPI_CHECK(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &a));
    int id;
    /* Declared once, as S3D would at start-up (like the MPI-IO view, set before timing);
     * reported apart. */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    MPI_CHECK(tio_agg_declare(a, rows, off, len, &id));
    *declare = bench_max_time(MPI_Wtime() - t0);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    MPI_CHECK(tio_agg_write(a, id, b));
    MPI_CHECK(tio_agg_sync(a));
    double t = bench_max_time(MPI_Wtime() - t0);
    MPI_Info used;
    MPI_CHECK(tio_agg_get_info(a, &used));
    int flag = 0;
    MPI_CHECK(MPI_Info_get(used, "tierio_agg_aggregator_tiers", (int)tlen - 1, tiers, &flag));
    if (!flag)
        snprintf(tiers, tlen, "?");
    MPI_Info_free(&used);
    MPI_CHECK(tio_agg_close(&a));
    MPI_Info_free(&info);
    free(off);
    free(len);
    return t;
}

static bool verify(const char *path, const double *b)
{
    size_t row = (size_t)bsz[0] * (size_t)nvars * 8;
    double *got = bench_malloc(row);
    int fd = open(path, O_RDONLY);
    bool ok = fd >= 0;
    for (int z = 0, k = 0; ok && z < bsz[2]; z++)
        for (int y = 0; ok && y < bsz[1]; y++, k++)
            ok = pread(fd, got, row, row_offset(y, z)) == (ssize_t)row &&
                 !memcmp(got, (const char *)b + (size_t)k * row, row);
    if (fd >= 0)
        close(fd);
    free(got);
    return bench_all(ok);
}

int main(int argc, char **argv)
{
    agg_setup_ompio(argc, argv);
    MPI_Init(&argc, &argv);
    agg_init_nodes();
    agg_options o = {.aggregators = 0, .buffer = 16ull << 20, .reps = 5,
                     .pfs = agg_env_or("TIERIO_PFS", bench_default_dir())};
    int block = 32;
    nvars = 8;
    int c;
    while ((c = getopt(argc, argv, "B:v:a:b:r:p:h")) != -1) {
        switch (c) {
        case 'B': block = (int)bench_parse_u64("-B", optarg); break;
        case 'v': nvars = (int)bench_parse_u64("-v", optarg); break;
        case 'a': o.aggregators = (int)bench_parse_u64("-a", optarg); break;
        case 'b': o.buffer = bench_parse_u64("-b", optarg); break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'p': o.pfs = optarg; break;
        default:
            if (g_rank == 0)
                fprintf(stderr, "usage: %s [-B block edge (points)] [-v doubles per point] "
                        "[-a aggregators] [-b buffer] [-r reps] [-p dir]\n", argv[0]);
            MPI_Finalize();
            return c == 'h' ? 0 : 2;
        }
    }
    if (block < 1 || nvars < 1 || o.reps < 1 || o.buffer == 0)
        bench_die("-B, -v, -r, -b must be positive");
    if (!getenv("TIERIO_SITE"))
        bench_die("tierio_tapioca needs the figures of the tiers: set TIERIO_SITE to a site "
                  "file (`tierio probe -o FILE` measures this machine)");
    int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
    MPI_CHECK(MPI_Dims_create(g_size, 3, dims));
    MPI_Comm cart;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart));
    MPI_CHECK(MPI_Cart_coords(cart, g_rank, 3, coords));
    MPI_CHECK(MPI_Comm_free(&cart));
    for (int d = 0; d < 3; d++) { /* dims[0] splits x */
        bsz[d] = block;
        gsz[d] = block * dims[d];
        start[d] = block * coords[d];
    }
    size_t bytes = (size_t)block * block * block * (size_t)nvars * 8;
    if (bytes > INT_MAX)
        bench_die("a block of %zu bytes is too large", bytes);
    char path[PATH_MAX], lib[128];
    snprintf(path, sizeof path, "%s/agg_s3d.dat", o.pfs);
    bench_mpi_library(lib, sizeof lib);
    if (g_rank == 0)
        fprintf(stderr, "# agg_s3d: %d ranks on %d nodes (%dx%dx%d blocks of %d^3 points, %d "
                "doubles each: %zu bytes per rank), %d aggregators, %llu-byte buffers, %d "
                "reps, %s, %s (%s)\n", g_size, g_nodes, dims[0], dims[1], dims[2], block,
                nvars, bytes, agg_count(&o), o.buffer, o.reps, path, lib, agg_io_name());
    double *b = bench_malloc(bytes);
    fill(b);
    double *t[NMETHODS], *td[NMETHODS];
    bool ok[NMETHODS] = {true, true, true};
    char tiers[NMETHODS][256] = {"", "", ""};
    for (int m = 0; m < NMETHODS; m++) {
        t[m] = bench_malloc(sizeof(double) * (size_t)o.reps);
        td[m] = bench_malloc(sizeof(double) * (size_t)o.reps);
        for (int r = 0; r < o.reps; r++)
            td[m][r] = 0;
    }
    for (int rep = 0; rep < o.reps; rep++)
        for (int k = 0; k < NMETHODS; k++) {
            int m = (rep + k) % NMETHODS;
            agg_unlink(path);
            t[m][rep] = m == M_MPIIO ? write_mpiio(&o, path, b)
                                     : write_tierio(&o, path, b, m == M_TAPIOCA, tiers[m],
                                                    sizeof tiers[m], &td[m][rep]);
            ok[m] = verify(path, b) && ok[m];
        }
    double base = bench_median(t[M_MPIIO], o.reps);
    for (int m = 0; m < NMETHODS; m++)
        agg_json("agg_s3d", NULL, NULL, "write+sync", method_name[m], &o,
                 (unsigned long long)bytes * (unsigned long long)g_size,
                 bench_median(t[m], o.reps), m == M_MPIIO ? 0 : base, ok[m],
                 m == M_MPIIO ? NULL : "aggregator_tiers", tiers[m]);
    for (int m = M_DEFAULT; m < NMETHODS; m++)
        agg_json("agg_s3d", NULL, NULL, "declare", method_name[m], &o,
                 (unsigned long long)bytes * (unsigned long long)g_size,
                 bench_median(td[m], o.reps), 0, ok[m], "aggregator_tiers", tiers[m]);
    agg_unlink(path);
    free(b);
    for (int m = 0; m < NMETHODS; m++) {
        free(t[m]);
        free(td[m]);
    }
    MPI_Comm_free(&g_node_comm);
    MPI_Finalize();
    return 0;
}
