#define _POSIX_C_SOURCE 200809L
/* An IOR-like MPI-IO program (IOR itself is not packaged here; this one follows its
 * MPI-IO back end and options): an unmodified MPI-IO program, standard MPI calls only,
 * for the MPI-IO route of libtierio-pmpi (include/tierio/agg.h).
 *
 * Shared file, segments of np blocks: block b of rank r in segment s starts at
 * (s * np + r) * b, written in transfers of t bytes, each one MPI_File_write_at_all
 * (collective, like IOR -c), then read back the same way (with -C the processes read the
 * blocks of the processes one node further on, like IOR -C). Each phase is timed as IOR
 * does: open, the transfers, (-e) MPI_File_sync, close; bandwidth = bytes / the slowest
 * process's time. Data checks as IOR -W / -R: every 8-byte word of the file is a function
 * of its offset and the iteration, checked after the write (-W) and in the read (-R).
 * Hints as in IOR: every IOR_HINT__MPI__<key>=<value> in the environment is set on the
 * MPI_Info of MPI_File_open.
 *
 * -A (A/B in one run): every iteration runs twice, once with the info key tierio_agg =
 * disable (the MPI library's collective I/O) and once with tierio_agg = enable (through
 * tierio's engine when libtierio-pmpi is preloaded or linked; an MPI library without
 * tierio ignores the key, and the report then says routed=0). Without -A the program runs
 * once, as configured by the environment (TIERIO_AGG=1, IOR_HINT__MPI__tierio_agg=...).
 * Each line reports whether the calls really went through tierio ("routed": the count of
 * collective calls tierio served, from MPI_File_get_info, -1 when the key is absent).
 *
 *   IOR_HINT__MPI__cb_nodes=4 tools/cluster/tio-cluster run --nodes 4 --np 8 --ppn 2 \
 *       --mpi openmpi --pfs-write-bps 100M --env LD_PRELOAD=.../libtierio-pmpi.so -- \
 *       build/openmpi/bench/tio-bench-agg-ior -A -b 1Mi -t 256Ki -s 4 -i 5 -e -W -R -C */
#include "bench_common.h"
#include "memcon_common.h"

#include <fcntl.h>
#include <limits.h>

extern char **environ;

static int g_rank, g_size;

typedef struct {
    unsigned long long block, transfer;
    int segments, iters;
    bool fsync, check_write, check_read, reorder, ab;
    const char *path;
} options;

static uint64_t word(unsigned long long off, int iter)
{
    return bench_mix64((off / 8) ^ ((uint64_t)iter << 48));
}

static void fill(unsigned char *b, unsigned long long n, unsigned long long off, int iter)
{
    for (unsigned long long i = 0; i < n; i += 8) {
        uint64_t w = word(off + i, iter);
        memcpy(b + i, &w, 8);
    }
}

static bool check(const unsigned char *b, unsigned long long n, unsigned long long off, int iter)
{
    for (unsigned long long i = 0; i < n; i += 8) {
        uint64_t w = word(off + i, iter);
        if (memcmp(b + i, &w, 8))
            return false;
    }
    return true;
}

/* The offset of transfer k of segment s for rank r. */
static unsigned long long offset_of(const options *o, int s, int r, unsigned long long k)
{
    return ((unsigned long long)s * (unsigned long long)g_size + (unsigned long long)r) *
               o->block + k * o->transfer;
}

/* One phase; returns the slowest process's seconds; *ok: the data checks; *calls: routed. */
static double phase(const options *o, int writing, int variant, int iter, int reader_shift,
                    bool verify, bool *ok, long *calls)
{
    MPI_Info info = memcon_file_info(environ, variant);
    unsigned char *buf = bench_malloc(o->transfer);
    int who = (g_rank + reader_shift) % g_size;
    MPI_File fh;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, o->path,
                            writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY,
                            info, &fh));
    bool good = true;
    for (int s = 0; s < o->segments; s++)
        for (unsigned long long k = 0; k < o->block / o->transfer; k++) {
            unsigned long long off = offset_of(o, s, writing ? g_rank : who, k);
            if (writing) {
                fill(buf, o->transfer, off, iter);
                MPI_CHECK(MPI_File_write_at_all(fh, (MPI_Offset)off, buf, (int)o->transfer,
                                                MPI_BYTE, MPI_STATUS_IGNORE));
            } else {
                MPI_CHECK(MPI_File_read_at_all(fh, (MPI_Offset)off, buf, (int)o->transfer,
                                               MPI_BYTE, MPI_STATUS_IGNORE));
                if (verify)
                    good = check(buf, o->transfer, off, iter) && good;
            }
        }
    if (writing && o->fsync)
        MPI_CHECK(MPI_File_sync(fh));
    *calls = memcon_routed(fh);
    MPI_CHECK(MPI_File_close(&fh));
    double t = bench_max_time(MPI_Wtime() - t0);
    *ok = bench_all(good);
    MPI_Info_free(&info);
    free(buf);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    char defpath[PATH_MAX];
    snprintf(defpath, sizeof defpath, "%s/agg_ior.dat",
             getenv("TIERIO_PFS") ? getenv("TIERIO_PFS") : bench_default_dir());
    options o = {.block = 1 << 20, .transfer = 256 << 10, .segments = 4, .iters = 5,
                 .path = defpath};
    int c;
    while ((c = getopt(argc, argv, "b:t:s:i:o:eWRCAh")) != -1) {
        switch (c) {
        case 'b': o.block = bench_parse_u64("-b", optarg); break;
        case 't': o.transfer = bench_parse_u64("-t", optarg); break;
        case 's': o.segments = (int)bench_parse_u64("-s", optarg); break;
        case 'i': o.iters = (int)bench_parse_u64("-i", optarg); break;
        case 'o': o.path = optarg; break;
        case 'e': o.fsync = true; break;
        case 'W': o.check_write = true; break;
        case 'R': o.check_read = true; break;
        case 'C': o.reorder = true; break;
        case 'A': o.ab = true; break;
        default:
            if (g_rank == 0)
                fprintf(stderr, "usage: %s [-b block] [-t transfer] [-s segments] [-i iterations] "
                        "[-o file] [-e fsync] [-W check write] [-R check read] [-C reorder "
                        "readers] [-A tierio_agg disable/enable in turn]\n", argv[0]);
            MPI_Finalize();
            return c == 'h' ? 0 : 2;
        }
    }
    if (o.transfer == 0 || o.transfer % 8 || o.block % o.transfer || o.transfer > INT_MAX ||
        o.segments < 1 || o.iters < 1)
        bench_die("-t must divide -b and be a multiple of 8 below 2 GiB; -s, -i >= 1");
    /* -C: read the blocks of the processes one node further (ranks per node). */
    MPI_Comm node;
    int per_node;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_CHECK(MPI_Comm_size(node, &per_node));
    MPI_CHECK(MPI_Comm_free(&node));
    int shift = o.reorder ? per_node % g_size : 0;
    char lib[128];
    bench_mpi_library(lib, sizeof lib);
    if (g_rank == 0)
        fprintf(stderr, "# agg_ior: %d ranks, block %llu, transfer %llu, %d segments, %d "
                "iterations%s%s%s%s, %s, %s\n", g_size, o.block, o.transfer, o.segments,
                o.iters, o.fsync ? ", fsync" : "", o.check_write ? ", check write" : "",
                o.check_read ? ", check read" : "", o.reorder ? ", reordered readers" : "",
                o.path, lib);
    int nvar = o.ab ? 2 : 1;
    double *t[2][2];
    bool ok[2] = {true, true};
    long calls[2][2] = {{0, 0}, {0, 0}};
    for (int v = 0; v < nvar; v++)
        for (int p = 0; p < 2; p++)
            t[v][p] = bench_malloc(sizeof(double) * (size_t)o.iters);
    for (int it = 0; it < o.iters; it++)
        for (int k = 0; k < nvar; k++) {
            int v = (it + k) % nvar;
            int variant = o.ab ? v : -1;
            bool good;
            long n;
            if (g_rank == 0)
                unlink(o.path);
            t[v][0][it] = phase(&o, 1, variant, it, 0, false, &good, &n);
            calls[v][0] = n;
            if (o.check_write) {
                double ignore = phase(&o, 0, variant, it, 0, true, &good, &n);
                (void)ignore;
                ok[v] = good && ok[v];
            }
            t[v][1][it] = phase(&o, 0, variant, it, shift, o.check_read, &good, &n);
            calls[v][1] = n;
            ok[v] = good && ok[v];
        }
    unsigned long long bytes = o.block * (unsigned long long)o.segments * (unsigned long long)g_size;
    static const char *const pname[2] = {"write", "read"};
    for (int p = 0; p < 2; p++) {
        double base = bench_median(t[0][p], o.iters);
        for (int v = 0; v < nvar; v++) {
            double s = bench_median(t[v][p], o.iters);
            if (g_rank != 0)
                continue;
            bench_json j;
            bench_json_begin(&j, "agg_ior");
            bench_json_str(&j, "phase", pname[p]);
            bench_json_str(&j, "method", !o.ab ? "as_configured" : v ? "tierio_route" : "mpiio");
            bench_json_int(&j, "ranks", g_size);
            bench_json_int(&j, "block", (long long)o.block);
            bench_json_int(&j, "transfer", (long long)o.transfer);
            bench_json_int(&j, "segments", o.segments);
            bench_json_int(&j, "iterations", o.iters);
            bench_json_bool(&j, "fsync", o.fsync);
            bench_json_int(&j, "bytes", (long long)bytes);
            bench_json_num(&j, "seconds", s);
            bench_json_num(&j, "GBps", bytes / s / 1e9);
            if (o.ab && v) {
                bench_json_str(&j, "baseline", "mpiio");
                bench_json_num(&j, "ratio", base / s);
            } else {
                bench_json_raw(&j, ",\"baseline\":null,\"ratio\":null");
            }
            bench_json_int(&j, "routed", calls[v][p]);
            bench_json_bool(&j, "verified", ok[v] && (o.check_read || o.check_write));
            bench_json_end(&j);
        }
    }
    if (g_rank == 0)
        unlink(o.path);
    for (int v = 0; v < nvar; v++)
        for (int p = 0; p < 2; p++)
            free(t[v][p]);
    MPI_Finalize();
    return 0;
}
