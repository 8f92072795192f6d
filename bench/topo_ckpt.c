#define _POSIX_C_SOURCE 200809L
/* Topology-aware checkpointing (seed 003 §4.3): the HACC-IO checkpoint written
 *   shared_pfs       the traditional way: one shared file on the parallel file system,
 *                    written collectively by all processes (MPI_File_write_at_all on
 *                    MPI_COMM_WORLD);
 *   topology_aware   one file per storage neighbourhood on node-local storage, written
 *                    collectively by that neighbourhood (tio_comm_split_neighborhood on
 *                    the node-local directory, then MPI_File_write_at_all on it).
 * Both timed from open until the data is durable (MPI_File_sync) and the file closed.
 * Restart reads the checkpoint back with the same method (the shared file's pages are
 * dropped from the page cache first; a ramdisk has nothing to drop) and every byte is
 * compared with the generator: "verified" in the JSON says it was all there.
 *
 * HACC-IO layout: every process holds N particles of 9 variables (xx yy zz vx vy vz phi:
 * float, pid: int64, mask: uint16; 38 bytes per particle); in a file each variable is one
 * section, and inside a section the processes' blocks follow in rank order. The
 * neighbourhood file has the same layout over the neighbourhood's processes.
 *
 * Run it on the emulated cluster with the shared directory throttled, e.g.
 *   tools/cluster/tio-cluster run --nodes 4 --np 8 --ppn 2 --mpi openmpi \
 *       --pfs-write-bps 200000000 -- build/openmpi/bench/tio-bench-topo-ckpt -n 1000000
 * (the tool gives the ranks TIERIO_PFS and TIERIO_NODE_LOCAL, the defaults of -g, -l).
 *
 * Output: one JSON line per method and phase; seconds = median over repetitions of the
 * slowest rank; ratio = shared_pfs seconds / seconds (>1: faster than the shared file). */
#include "bench_common.h"

#include <fcntl.h>
#include <limits.h>
#include <tierio.h>

#define NVARS 9
static const size_t var_size[NVARS] = {4, 4, 4, 4, 4, 4, 4, 8, 2};
#define PARTICLE_BYTES 38

enum method { M_SHARED, M_TOPO, NMETHODS };
static const char *const method_name[NMETHODS] = {"shared_pfs", "topology_aware"};

typedef struct {
    size_t n;
    int reps;
    const char *pfs, *local;
    unsigned methods;
} options;

static int g_rank, g_size;
static MPI_Comm g_node; /* processes sharing a page cache: one evicts for all */
static int g_node_rank;

static MPI_Datatype var_type(int v)
{
    return v < 7 ? MPI_FLOAT : (v == 7 ? MPI_INT64_T : MPI_UINT16_T);
}

static const char *env_or(const char *var, const char *dflt)
{
    const char *v = getenv(var);
    return v && *v ? v : dflt;
}

static options parse(int argc, char **argv)
{
    options o = {.n = 1000000, .reps = 3, .pfs = env_or("TIERIO_PFS", bench_default_dir()),
                 .local = env_or("TIERIO_NODE_LOCAL", "/tmp"), .methods = 3};
    int c;
    while ((c = getopt(argc, argv, "n:r:g:l:M:h")) != -1) {
        switch (c) {
        case 'n': o.n = (size_t)bench_parse_u64("-n", optarg); break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'g': o.pfs = optarg; break;
        case 'l': o.local = optarg; break;
        case 'M':
            o.methods = 0;
            if (strstr(optarg, "shared"))
                o.methods |= 1u << M_SHARED;
            if (strstr(optarg, "topo"))
                o.methods |= 1u << M_TOPO;
            if (!o.methods)
                bench_die("-M: give shared, topo or shared,topo");
            break;
        default:
            if (g_rank == 0)
                fprintf(stderr, "usage: %s [-n particles/rank] [-r reps] [-g pfs dir] "
                        "[-l node-local dir] [-M shared,topo]\n", argv[0]);
            MPI_Finalize();
            exit(c == 'h' ? 0 : 2);
        }
    }
    if (o.n == 0 || o.n > (size_t)INT_MAX || o.reps < 1)
        bench_die("-n must be 1..%d and -r at least 1", INT_MAX);
    return o;
}

/* ---- data ---------------------------------------------------------------------------- */

static void generate(void *const d[NVARS], size_t n, unsigned long long first_pid)
{
    for (int v = 0; v < NVARS; v++)
        for (size_t i = 0; i < n; i++) {
            uint64_t h = bench_mix64(((uint64_t)g_rank << 40) ^ ((uint64_t)v << 36) ^ i);
            float f = (float)(h >> 40) / 16777216.0f;
            if (v < 7)
                ((float *)d[v])[i] = v < 3 ? 256.0f * f : (v < 6 ? 2000.0f * f - 1000.0f : -f);
            else if (v == 7)
                ((int64_t *)d[v])[i] = (int64_t)(first_pid + i);
            else
                ((uint16_t *)d[v])[i] = (uint16_t)h;
        }
}

static bool same(void *const got[NVARS], void *const want[NVARS], size_t n, const char *what)
{
    for (int v = 0; v < NVARS; v++)
        if (memcmp(got[v], want[v], n * var_size[v]) != 0) {
            fprintf(stderr, "[rank %d] topo_ckpt: %s: variable %d differs\n", g_rank, what, v);
            return false;
        }
    return true;
}

/* ---- one checkpoint file written by the processes of comm ---------------------------- */

struct layout {
    MPI_Comm comm;
    char path[PATH_MAX];
    unsigned long long total, prefix; /* particles of comm, and of its lower ranks */
    MPI_Offset off[NVARS];
};

static void make_layout(struct layout *l, MPI_Comm comm, const char *path, size_t n)
{
    unsigned long long mine = n;
    l->comm = comm;
    snprintf(l->path, sizeof l->path, "%s", path);
    MPI_CHECK(MPI_Allreduce(&mine, &l->total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm));
    MPI_CHECK(MPI_Exscan(&mine, &l->prefix, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm));
    int r;
    MPI_CHECK(MPI_Comm_rank(comm, &r));
    if (r == 0)
        l->prefix = 0;
    unsigned long long before = 0;
    for (int v = 0; v < NVARS; v++) {
        l->off[v] = (MPI_Offset)(l->total * before + l->prefix * var_size[v]);
        before += var_size[v];
    }
}

static double write_file(const struct layout *l, void *const d[NVARS], size_t n)
{
    MPI_File fh;
    MPI_Status st;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    MPI_CHECK(MPI_File_open(l->comm, l->path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                            &fh));
    for (int v = 0; v < NVARS; v++)
        MPI_CHECK(MPI_File_write_at_all(fh, l->off[v], d[v], (int)n, var_type(v), &st));
    MPI_CHECK(MPI_File_sync(fh));
    MPI_CHECK(MPI_File_close(&fh));
    return bench_max_time(MPI_Wtime() - t0);
}

static double read_file(const struct layout *l, void *const d[NVARS], size_t n)
{
    MPI_File fh;
    MPI_Status st;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    MPI_CHECK(MPI_File_open(l->comm, l->path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    for (int v = 0; v < NVARS; v++) {
        MPI_CHECK(MPI_File_read_at_all(fh, l->off[v], d[v], (int)n, var_type(v), &st));
        int count = 0;
        MPI_CHECK(MPI_Get_count(&st, var_type(v), &count));
        if (count != (int)n)
            bench_die("topo_ckpt: read %d of %zu elements of variable %d", count, n, v);
    }
    MPI_CHECK(MPI_File_close(&fh));
    return bench_max_time(MPI_Wtime() - t0);
}

/* The file has exactly the bytes of its processes (checked by its first process). */
static bool right_size(const struct layout *l)
{
    int r;
    MPI_CHECK(MPI_Comm_rank(l->comm, &r));
    if (r != 0)
        return true;
    struct stat st;
    if (stat(l->path, &st) != 0 || (unsigned long long)st.st_size != l->total * PARTICLE_BYTES) {
        fprintf(stderr, "topo_ckpt: %s has %lld bytes, expected %llu\n", l->path,
                (long long)st.st_size, l->total * PARTICLE_BYTES);
        return false;
    }
    return true;
}

static void evict(const char *path)
{
    if (g_node_rank == 0) {
        int fd = open(path, O_RDONLY);
        SYS_CHECK(fd >= 0, path);
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void remove_file(const struct layout *l)
{
    int r;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Comm_rank(l->comm, &r));
    if (r == 0)
        bench_remove_stale(l->path);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* ---- main ---------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                  &g_node));
    MPI_CHECK(MPI_Comm_rank(g_node, &g_node_rank));
    options o = parse(argc, argv);

    /* The storage neighbourhoods of the node-local directory. */
    MPI_Comm nbhd;
    MPI_CHECK(tio_comm_split_neighborhood(MPI_COMM_WORLD, o.local, g_rank, MPI_INFO_NULL,
                                          &nbhd));
    if (nbhd == MPI_COMM_NULL)
        bench_die("this process cannot use the node-local directory %s", o.local);
    int nbhd_rank, leader = g_rank, is_leader, groups = 0;
    MPI_CHECK(MPI_Comm_rank(nbhd, &nbhd_rank));
    MPI_CHECK(MPI_Bcast(&leader, 1, MPI_INT, 0, nbhd));
    is_leader = nbhd_rank == 0;
    MPI_CHECK(MPI_Allreduce(&is_leader, &groups, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

    void *data[NVARS], *back[NVARS];
    unsigned long long first_pid = 0, mine = o.n;
    MPI_CHECK(MPI_Exscan(&mine, &first_pid, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (g_rank == 0)
        first_pid = 0;
    for (int v = 0; v < NVARS; v++) {
        data[v] = bench_malloc(o.n * var_size[v]);
        back[v] = bench_malloc(o.n * var_size[v]);
    }
    generate(data, o.n, first_pid);

    struct layout lay[NMETHODS];
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/topo_ckpt.shared.dat", o.pfs);
    make_layout(&lay[M_SHARED], MPI_COMM_WORLD, path, o.n);
    snprintf(path, sizeof path, "%s/topo_ckpt.nbhd%d.dat", o.local, leader);
    make_layout(&lay[M_TOPO], nbhd, path, o.n);

    char lib[128];
    bench_mpi_library(lib, sizeof lib);
    if (g_rank == 0)
        fprintf(stderr, "# topo_ckpt: %d processes, %d storage neighbourhoods of %s, PFS %s, "
                "%zu particles (%.1f MB) per process, %d repetitions, %s\n", g_size, groups,
                o.local, o.pfs, o.n, o.n * PARTICLE_BYTES / 1e6, o.reps, lib);

    double wsec[NMETHODS] = {NAN, NAN}, rsec[NMETHODS] = {NAN, NAN};
    bool ok[NMETHODS] = {true, true};
    double *tw = bench_malloc(sizeof(double) * (size_t)o.reps);
    double *tr = bench_malloc(sizeof(double) * (size_t)o.reps);
    for (int m = 0; m < NMETHODS; m++) {
        if (!(o.methods & (1u << m)))
            continue;
        for (int rep = 0; rep < o.reps; rep++) {
            remove_file(&lay[m]);
            tw[rep] = write_file(&lay[m], data, o.n);
            ok[m] = bench_all(right_size(&lay[m])) && ok[m];
            if (m == M_SHARED)
                evict(lay[m].path);
            for (int v = 0; v < NVARS; v++)
                memset(back[v], 0xA5, o.n * var_size[v]);
            tr[rep] = read_file(&lay[m], back, o.n);
            ok[m] = bench_all(same(back, data, o.n, method_name[m])) && ok[m];
        }
        remove_file(&lay[m]);
        wsec[m] = bench_median(tw, o.reps);
        rsec[m] = bench_median(tr, o.reps);
    }

    if (g_rank == 0) {
        for (int phase = 0; phase < 2; phase++)
            for (int m = 0; m < NMETHODS; m++) {
                if (!(o.methods & (1u << m)))
                    continue;
                double s = phase ? rsec[m] : wsec[m], base = phase ? rsec[M_SHARED]
                                                                    : wsec[M_SHARED];
                double bytes = (double)o.n * PARTICLE_BYTES * g_size;
                bench_json j;
                bench_json_begin(&j, "topo_ckpt");
                bench_json_str(&j, "phase", phase ? "restart" : "checkpoint");
                bench_json_str(&j, "method", method_name[m]);
                bench_json_int(&j, "ranks", g_size);
                bench_json_int(&j, "neighbourhoods", groups);
                bench_json_int(&j, "particles_per_rank", (long long)o.n);
                bench_json_num(&j, "bytes", bytes);
                bench_json_num(&j, "seconds", s);
                bench_json_num(&j, "mb_per_s", bytes / s / 1e6);
                bench_json_str(&j, "baseline", method_name[M_SHARED]);
                bench_json_num(&j, "ratio", base / s);
                bench_json_bool(&j, "verified", ok[m]);
                bench_json_int(&j, "reps", o.reps);
                bench_json_str(&j, "mpi", lib);
                bench_json_end(&j);
            }
    }
    free(tw);
    free(tr);
    for (int v = 0; v < NVARS; v++) {
        free(data[v]);
        free(back[v]);
    }
    MPI_CHECK(MPI_Comm_free(&nbhd));
    MPI_CHECK(MPI_Comm_free(&g_node));
    MPI_Finalize();
    return ok[M_SHARED] && ok[M_TOPO] ? 0 : 1;
}
