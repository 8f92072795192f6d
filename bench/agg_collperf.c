#define _POSIX_C_SOURCE 200809L
/* A coll_perf-like MPI-IO program (ROMIO's test program as described in seed 004 §4.2):
 * a 3D array of N x N x N ints, block-distributed over the processes (a 3D process grid
 * from MPI_Dims_create, each process owning one block), stored in one shared file as the
 * global array in row-major (C) order. Every process describes its block with a subarray
 * filetype, sets it as its view (MPI_File_set_view) and writes it with one
 * MPI_File_write_all, then reads it back with MPI_File_read_all. Timed as coll_perf does:
 * open + set view + write (+ MPI_File_sync with -e) + close, and open + set view + read +
 * close, each from a barrier until the slowest process is done; bandwidth = the array's
 * bytes / that time. The seed evicts cached data between write and read: -c drops the file
 * from each node's page cache (untimed) before the read.
 *
 * Data: element (i, j, k) of the global array holds a mix of its global index and the
 * repetition; the read is checked element for element (byte for byte), and "verified" is
 * true only if every process found every byte right.
 *
 * Standard MPI calls only, so that it runs unmodified under libtierio-pmpi's MPI-IO route:
 * hints as IOR takes them (every IOR_HINT__MPI__<key>=<value> of the environment goes on
 * the file's MPI_Info), "routed" from MPI_File_get_info (tierio_agg_collective_calls, -1
 * when absent). -A (A/B in one run): every repetition runs with the info key tierio_agg =
 * disable (the MPI library's collective I/O) and = enable (tierio's engine), in turn.
 * Note: the MPI-IO route serves contiguous file views only (docs/agg.md); a subarray view
 * goes to the MPI library, and "routed" then says 0.
 *
 *   tools/cluster/tio-cluster run --nodes 4 --np 8 --ppn 2 --mpi openmpi \
 *       --pfs-write-bps 100M -- build/openmpi/bench/tio-bench-agg-collperf -n 256 -r 3 -e -c */
#include "bench_common.h"

#include "agg_common.h"
#include "memcon_common.h"

extern char **environ;

typedef struct {
    int n, reps;
    bool fsync, cold, ab;
    const char *path;
} options;

typedef struct {
    int dims[3], coords[3];
    int sub[3], start[3];   /* the local block: sizes and first global index, per dim */
    size_t count;           /* elements of the block */
} layout;

static uint32_t value(unsigned long long gidx, int rep)
{
    return (uint32_t)bench_mix64(gidx ^ ((uint64_t)rep << 48));
}

/* The block of this process, as coll_perf lays it out: coordinates in row-major order over
 * the process grid, N / dims elements per dimension, the remainder to the first ones. */
static layout make_layout(int n)
{
    layout l = {.dims = {0, 0, 0}};
    MPI_CHECK(MPI_Dims_create(g_size, 3, l.dims));
    l.coords[0] = g_rank / (l.dims[1] * l.dims[2]);
    l.coords[1] = (g_rank / l.dims[2]) % l.dims[1];
    l.coords[2] = g_rank % l.dims[2];
    l.count = 1;
    for (int d = 0; d < 3; d++) {
        int base = n / l.dims[d], extra = n % l.dims[d], c = l.coords[d];
        l.sub[d] = base + (c < extra);
        l.start[d] = c * base + (c < extra ? c : extra);
        l.count *= (size_t)l.sub[d];
    }
    return l;
}

static void fill(uint32_t *b, const layout *l, int n, int rep)
{
    size_t k = 0;
    for (int i = 0; i < l->sub[0]; i++)
        for (int j = 0; j < l->sub[1]; j++)
            for (int m = 0; m < l->sub[2]; m++) {
                unsigned long long g = ((unsigned long long)(l->start[0] + i) * (unsigned)n +
                                        (unsigned)(l->start[1] + j)) * (unsigned)n +
                                       (unsigned)(l->start[2] + m);
                b[k++] = value(g, rep);
            }
}

static bool check(const uint32_t *b, uint32_t *expect, const layout *l, int n, int rep)
{
    fill(expect, l, n, rep);
    return memcmp(b, expect, l->count * sizeof *b) == 0;
}

/* One phase; returns the slowest process's seconds, *calls the routed count. */
static double phase(const options *o, MPI_Datatype view, uint32_t *buf, int count,
                    bool writing, int variant, long *calls)
{
    MPI_Info info = memcon_file_info(environ, variant);
    MPI_File fh;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, o->path,
                            writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY,
                            info, &fh));
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_UINT32_T, view, "native", info));
    if (writing) {
        MPI_CHECK(MPI_File_write_all(fh, buf, count, MPI_UINT32_T, MPI_STATUS_IGNORE));
        if (o->fsync)
            MPI_CHECK(MPI_File_sync(fh));
    } else {
        MPI_CHECK(MPI_File_read_all(fh, buf, count, MPI_UINT32_T, MPI_STATUS_IGNORE));
    }
    *calls = memcon_routed(fh);
    MPI_CHECK(MPI_File_close(&fh));
    double t = bench_max_time(MPI_Wtime() - t0);
    MPI_CHECK(MPI_Info_free(&info));
    return t;
}

static void usage(const char *prog)
{
    bench_usage("usage: %s [-n N] [-r reps] [-o file] [-e] [-c] [-A]\n"
                "  -n N     global array of N x N x N 4-byte ints (default 128)\n"
                "  -r reps  repetitions, median reported (default 3)\n"
                "  -o file  the shared file (default $TIERIO_PFS/agg_collperf.dat, else "
                "$TIERIO_BENCH_DIR or /tmp)\n"
                "  -e       MPI_File_sync before close (timed)\n"
                "  -c       drop the file from the page cache before each read (untimed)\n"
                "  -A       every repetition with tierio_agg=disable, then =enable\n"
                "Hints: IOR_HINT__MPI__<key>=<value> in the environment.\n", prog);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    agg_init_nodes();
    char defpath[PATH_MAX];
    snprintf(defpath, sizeof defpath, "%s/agg_collperf.dat",
             getenv("TIERIO_PFS") ? getenv("TIERIO_PFS") : bench_default_dir());
    options o = {.n = 128, .reps = 3, .path = defpath};
    int c;
    while ((c = bench_getopt(argc, argv, "n:r:o:ecAh", usage)) != -1) {
        switch (c) {
        case 'n': o.n = (int)bench_parse_u64("-n", optarg); break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'o': o.path = optarg; break;
        case 'e': o.fsync = true; break;
        case 'c': o.cold = true; break;
        case 'A': o.ab = true; break;
        }
    }
    if (o.n < 1 || o.n > 2048 || o.reps < 1)
        bench_die("-n must be 1..2048, -r at least 1");
    layout l = make_layout(o.n);
    if (l.count > INT_MAX)
        bench_die("-n %d: a block of %zu elements is more than one call can pass", o.n, l.count);
    int sizes[3] = {o.n, o.n, o.n};
    MPI_Datatype view;
    MPI_CHECK(MPI_Type_create_subarray(3, sizes, l.sub, l.start, MPI_ORDER_C, MPI_UINT32_T,
                                       &view));
    MPI_CHECK(MPI_Type_commit(&view));
    unsigned long long bytes = (unsigned long long)o.n * o.n * o.n * sizeof(uint32_t);
    bench_header("agg_collperf: %d ranks on %d nodes, %d^3 ints (%llu bytes), process grid "
                 "%dx%dx%d, %d repetitions%s%s%s, %s", g_size, g_nodes, o.n, bytes, l.dims[0],
                 l.dims[1], l.dims[2], o.reps, o.fsync ? ", fsync" : "",
                 o.cold ? ", cache dropped before reads" : "", o.ab ? ", A/B" : "", o.path);

    uint32_t *buf = bench_malloc(l.count * sizeof *buf);
    uint32_t *expect = bench_malloc(l.count * sizeof *expect);
    int nvar = o.ab ? 2 : 1;
    double *t[2][2];
    bool ok[2] = {true, true};
    long calls[2][2] = {{-1, -1}, {-1, -1}};
    for (int v = 0; v < nvar; v++)
        for (int p = 0; p < 2; p++)
            t[v][p] = bench_malloc(sizeof(double) * (size_t)o.reps);
    for (int rep = 0; rep < o.reps; rep++)
        for (int k = 0; k < nvar; k++) {
            int v = (rep + k) % nvar;   /* each variant goes first in turn */
            int variant = o.ab ? v : -1;
            if (g_rank == 0)
                unlink(o.path);
            fill(buf, &l, o.n, rep);
            t[v][0][rep] = phase(&o, view, buf, (int)l.count, true, variant, &calls[v][0]);
            if (o.cold)
                agg_drop_cache(o.path);
            memset(buf, 0, l.count * sizeof *buf);
            t[v][1][rep] = phase(&o, view, buf, (int)l.count, false, variant, &calls[v][1]);
            ok[v] = bench_all(check(buf, expect, &l, o.n, rep)) && ok[v];
        }

    static const char *const pname[2] = {"write", "read"};
    char grid[64];
    snprintf(grid, sizeof grid, "%dx%dx%d", l.dims[0], l.dims[1], l.dims[2]);
    for (int p = 0; p < 2 && g_rank == 0; p++) {
        for (int v = 0; v < nvar; v++) {
            bench_json j;
            bench_json_begin(&j, "agg_collperf");
            bench_json_str(&j, "phase", pname[p]);
            bench_json_str(&j, "method", memcon_method(o.ab, v));
            bench_json_int(&j, "ranks", g_size);
            bench_json_int(&j, "nodes", g_nodes);
            bench_json_int(&j, "n", o.n);
            bench_json_str(&j, "grid", grid);
            bench_json_int(&j, "reps", o.reps);
            bench_json_bool(&j, "fsync", o.fsync);
            bench_json_bool(&j, "cold", o.cold);
            memcon_json_finish(&j, t[v][p], o.ab && v ? t[0][p] : NULL, o.reps, bytes,
                               calls[v][p], ok[v]);
        }
    }
    if (g_rank == 0)
        unlink(o.path);
    for (int v = 0; v < nvar; v++)
        for (int p = 0; p < 2; p++)
            free(t[v][p]);
    free(buf);
    free(expect);
    MPI_CHECK(MPI_Type_free(&view));
    MPI_CHECK(MPI_Comm_free(&g_node_comm));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
