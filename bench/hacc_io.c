#define _POSIX_C_SOURCE 200809L
/* HACC-IO: checkpoint / restart of HACC particle data through MPI storage windows and MPI-IO.
 *
 * After seed 000 §3.3.3 (the HACC-IO kernel of the CORAL benchmarks). Every rank holds N
 * particles of 9 variables, the real HACC-IO layout:
 *     xx yy zz vx vy vz phi   float     (4 bytes each)
 *     pid                     int64_t   (8 bytes)
 *     mask                    uint16_t  (2 bytes)               38 bytes per particle
 * The checkpoint is ONE shared file. Each variable is one contiguous section of it (xx of all
 * particles, then yy, ...); inside a section the ranks' blocks follow in rank order:
 *     offset(v, r) = T * (sum of the sizes of the variables before v) + P_r * size(v)
 * with T the total number of particles and P_r the particles of the ranks before r.
 *
 * Methods, each timed from start until the data is durable on storage:
 *   storage_window     MPI_Win_allocate with alloc_type=storage, storage_alloc_filename=the
 *                      shared file, storage_alloc_offset=offset(v, r); copy the particles
 *                      into the window; MPI_Win_sync; MPI_Win_free.
 *   storage_window_ummap  the same on the user-level engine (storage_alloc_engine=ummap,
 *                      256 KiB segments, no implicit flush; a checkpoint does not read the
 *                      file first: storage_alloc_readfile=false), with
 *                      storage_alloc_sync_scope=file: the first MPI_Win_sync writes all
 *                      nine windows of the rank and makes them durable with one
 *                      fdatasync, as MPI-IO's one MPI_File_sync does; the eight that
 *                      follow find nothing left to do.
 *   mpiio_independent  MPI_File_open, MPI_File_write_at per variable, MPI_File_sync, close.
 *                      (The seed's MPI-IO baseline: independent I/O.)
 *   mpiio_collective   the same with MPI_File_write_at_all.
 * Restart reads the file back with the same method (windows on the existing file and a copy
 * out of them; MPI_File_read_at / _read_at_all) and is timed the same way. Before a restart
 * the file's pages are dropped from the page cache (posix_fadvise DONTNEED, one rank per
 * node) so that the restart reads from storage, unless -W (warm) is given.
 *
 * Why one storage window per variable: a window maps ONE contiguous range of a file, and in
 * the shared-file layout a rank's data is 9 separate ranges (one per variable section). So
 * each rank allocates 9 windows, window v over [offset(v, r), offset(v, r) + N*size(v)).
 * This writes exactly the file the MPI-IO methods write (same layout, byte for byte), which
 * keeps the comparison fair and lets one verification serve all methods. The alternative,
 * one window per rank over a per-rank file, would change the layout to file-per-process and
 * no longer compare with shared-file MPI-IO. The offsets are in general not page-aligned
 * (storage_alloc_offset need not be), and neighbouring ranks' windows share file pages.
 * Rank 0 creates the file at its final size before the windows are allocated (inside the
 * timed region), so no rank's allocation has to grow a file other ranks map concurrently.
 *
 * Verification (untimed), every repetition and method:
 *   restart     every byte read back by the method equals the generator's;
 *   checkpoint  every byte of the file, read with plain pread(), equals the generator's, and
 *               the file has exactly T*38 bytes.
 * The data is a deterministic function of (rank, index, variable).
 *
 * Output: one JSON line per result on stdout (rank 0). seconds = median over repetitions of
 * the slowest rank; ratio = baseline seconds / seconds (speed relative to
 * mpiio_independent, >1 is faster); time_ratio = seconds / baseline seconds.
 */
#include "bench_common.h"

#include <fcntl.h>
#include <limits.h>

#define NVARS 9
static const char *const var_name[NVARS] = {"xx", "yy", "zz", "vx", "vy", "vz", "phi", "pid",
                                            "mask"};
static const size_t var_size[NVARS] = {4, 4, 4, 4, 4, 4, 4, 8, 2};
#define PARTICLE_BYTES 38

static MPI_Datatype var_type(int v)
{
    return v < 7 ? MPI_FLOAT : (v == 7 ? MPI_INT64_T : MPI_UINT16_T);
}

enum method { M_STORAGE, M_INDEP, M_COLL, M_UMMAP, NMETHODS };
static const char *const method_name[NMETHODS] = {"storage_window", "mpiio_independent",
                                                  "mpiio_collective", "storage_window_ummap"};
static const char *const method_short[NMETHODS] = {"storage", "independent", "collective",
                                                   "ummap"};

typedef struct {
    size_t n; /* particles per rank */
    int reps;
    const char *dir;
    unsigned methods;
    bool keep;
    bool warm;
} options;

static int g_rank, g_size;
static MPI_Comm g_node;    /* ranks sharing this node (page cache) */
static int g_node_rank;
static unsigned long long g_total;  /* particles of all ranks */
static unsigned long long g_prefix; /* particles of lower ranks */
static unsigned long long g_off[NVARS];

static void usage(const char *prog)
{
    bench_usage("usage: %s [-n particles] [-r reps] [-d dir] [-M methods] [-k] [-W]\n"
                "  -n N       particles per rank (default 1000000; rounded up to a multiple "
                "of 8)\n"
                "  -r reps    repetitions, the median is reported (default 3)\n"
                "  -d dir     directory of the checkpoint files (default $TIERIO_BENCH_DIR or "
                "/tmp)\n"
                "  -M list    comma list of storage,independent,collective,ummap (default all)\n"
                "  -k         keep the checkpoint files <dir>/hacc_io.<method>.dat\n"
                "  -W         warm restart: do not drop the file from the page cache first\n",
                prog);
}

static unsigned parse_methods(const char *list)
{
    unsigned mask = 0;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (int m = 0; m < NMETHODS; m++) {
            if ((strlen(method_short[m]) == n && strncmp(p, method_short[m], n) == 0) ||
                (strlen(method_name[m]) == n && strncmp(p, method_name[m], n) == 0)) {
                mask |= 1u << m;
                found = 1;
            }
        }
        if (!found) {
            bench_die("-M: unknown method '%.*s' (storage, independent, collective, ummap)",
                      (int)n, p);
        }
        p += n;
        if (*p == ',') {
            p++;
        }
    }
    if (!mask) {
        bench_die("-M: empty list of methods");
    }
    return mask;
}

static options parse_options(int argc, char **argv)
{
    options o = {.n = 1000000, .reps = 3, .dir = bench_default_dir(), .methods = 15u,
                 .keep = false, .warm = false};
    int c;
    while ((c = bench_getopt(argc, argv, "n:r:d:M:kWh", usage)) != -1) {
        switch (c) {
        case 'n': o.n = (size_t)bench_parse_u64("-n", optarg); break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'd': o.dir = optarg; break;
        case 'M': o.methods = parse_methods(optarg); break;
        case 'k': o.keep = true; break;
        case 'W': o.warm = true; break;
        }
    }
    /* multiple of 8: every window (N * 2 bytes for mask) is a multiple of 16 bytes, which
     * MPICH 4.0.2 needs (MPI_Win_allocate misplaces the base otherwise) */
    o.n = (o.n + 7) & ~(size_t)7;
    if (o.n == 0 || o.n > (size_t)INT_MAX) {
        bench_die("-n: particles per rank must be 1 .. %d", INT_MAX);
    }
    if (o.reps < 1) {
        bench_die("-r: at least one repetition");
    }
    return o;
}

/* ---- data ---------------------------------------------------------------------------- */

static inline uint64_t hash_of(int rank, int v, size_t i)
{
    return bench_mix64(bench_mix64((uint64_t)rank * NVARS + (uint64_t)v) ^ (uint64_t)i);
}

/* The generator: value of variable v of particle i of this rank. */
static void generate(void *const data[NVARS], size_t n)
{
    for (int v = 0; v < NVARS; v++) {
        for (size_t i = 0; i < n; i++) {
            uint64_t h = hash_of(g_rank, v, i);
            float f = (float)(h >> 40) / 16777216.0f; /* [0, 1), exact */
            switch (v) {
            case 0: case 1: case 2: ((float *)data[v])[i] = 256.0f * f; break;      /* position */
            case 3: case 4: case 5: ((float *)data[v])[i] = 2000.0f * f - 1000.0f; break;
            case 6: ((float *)data[v])[i] = -f; break;                              /* phi */
            case 7: ((int64_t *)data[v])[i] = (int64_t)(g_prefix + i); break;      /* pid */
            default: ((uint16_t *)data[v])[i] = (uint16_t)h; break;                /* mask */
            }
        }
    }
}

static bool same_as_generator(void *const got[NVARS], void *const want[NVARS], size_t n,
                              const char *what)
{
    for (int v = 0; v < NVARS; v++) {
        const unsigned char *g = got[v], *w = want[v];
        if (memcmp(g, w, n * var_size[v]) != 0) {
            size_t b = 0;
            while (g[b] == w[b]) {
                b++;
            }
            fprintf(stderr, "[rank %d] hacc_io: %s: variable %s differs at particle %zu\n",
                    g_rank, what, var_name[v], b / var_size[v]);
            return false;
        }
    }
    return true;
}

static void poison(void *const buf[NVARS], size_t n)
{
    for (int v = 0; v < NVARS; v++) {
        memset(buf[v], 0xA5, n * var_size[v]);
    }
}

static void file_path(char *out, size_t len, const options *o, int m)
{
    snprintf(out, len, "%s/hacc_io.%s.dat", o->dir, method_short[m]);
}

static void remove_file(const char *path)
{
    if (g_rank == 0) {
        bench_remove_stale(path);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Drop the file's (clean) pages from this node's page cache. */
static void evict(const char *path)
{
    if (g_node_rank == 0) {
        int fd = open(path, O_RDONLY);
        SYS_CHECK(fd >= 0, path);
        int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        if (rc != 0) {
            bench_die("posix_fadvise(%s): %s", path, strerror(rc));
        }
        close(fd);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* ---- storage windows ----------------------------------------------------------------- */

/* ummap: the same windows on the user-level engine. A checkpoint overwrites every byte,
 * so its segments are not read from the file first (storage_alloc_readfile=false). */
static void open_windows(const char *path, const options *o, void *base[NVARS], MPI_Win win[NVARS],
                         bool ummap, bool readfile)
{
    for (int v = 0; v < NVARS; v++) {
        MPI_Info info = bench_win_info(BENCH_WIN_STORAGE, path, g_off[v], 0.0, false);
        if (ummap) {
            MPI_CHECK(MPI_Info_set(info, "storage_alloc_engine", "ummap"));
            MPI_CHECK(MPI_Info_set(info, "storage_alloc_segsize", "262144"));
            MPI_CHECK(MPI_Info_set(info, "storage_alloc_flush_interval", "never"));
            MPI_CHECK(MPI_Info_set(info, "storage_alloc_readfile", readfile ? "true" : "false"));
            MPI_CHECK(MPI_Info_set(info, "storage_alloc_sync_scope", "file"));
        }
        MPI_CHECK(MPI_Win_allocate((MPI_Aint)(o->n * var_size[v]), (int)var_size[v], info,
                                   MPI_COMM_WORLD, &base[v], &win[v]));
        MPI_CHECK(MPI_Info_free(&info));
        MPI_CHECK(MPI_Win_set_errhandler(win[v], MPI_ERRORS_RETURN));
    }
}

static double checkpoint_storage(const char *path, const options *o, void *const data[NVARS],
                                 bool ummap)
{
    void *base[NVARS];
    MPI_Win win[NVARS];
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    if (g_rank == 0) { /* the shared file at its final size */
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
        SYS_CHECK(fd >= 0, path);
        SYS_CHECK(ftruncate(fd, (off_t)(g_total * PARTICLE_BYTES)) == 0, "ftruncate");
        SYS_CHECK(close(fd) == 0, "close");
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    open_windows(path, o, base, win, ummap, false);
    for (int v = 0; v < NVARS; v++) {
        memcpy(base[v], data[v], o->n * var_size[v]);
    }
    for (int v = 0; v < NVARS; v++) {
        (void)bench_timed_win_sync(win[v]); /* durable when it returns */
    }
    for (int v = 0; v < NVARS; v++) {
        MPI_CHECK(MPI_Win_free(&win[v]));
    }
    return bench_max_time(MPI_Wtime() - t0);
}

static double restart_storage(const char *path, const options *o, void *const back[NVARS],
                              bool ummap)
{
    void *base[NVARS];
    MPI_Win win[NVARS];
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    open_windows(path, o, base, win, ummap, true);
    for (int v = 0; v < NVARS; v++) {
        memcpy(back[v], base[v], o->n * var_size[v]);
    }
    for (int v = 0; v < NVARS; v++) {
        MPI_CHECK(MPI_Win_free(&win[v]));
    }
    return bench_max_time(MPI_Wtime() - t0);
}

/* ---- MPI-IO -------------------------------------------------------------------------- */

static void check_count(MPI_Status *st, MPI_Datatype type, size_t n, const char *what)
{
    int count = 0;
    MPI_CHECK(MPI_Get_count(st, type, &count));
    if (count != (int)n) {
        bench_die("hacc_io: %s transferred %d elements, expected %zu", what, count, n);
    }
}

static double checkpoint_mpiio(const char *path, const options *o, void *const data[NVARS],
                               bool collective)
{
    MPI_File fh;
    MPI_Status st;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                            MPI_INFO_NULL, &fh));
    for (int v = 0; v < NVARS; v++) {
        if (collective) {
            MPI_CHECK(MPI_File_write_at_all(fh, (MPI_Offset)g_off[v], data[v], (int)o->n,
                                            var_type(v), &st));
        } else {
            MPI_CHECK(MPI_File_write_at(fh, (MPI_Offset)g_off[v], data[v], (int)o->n,
                                        var_type(v), &st));
        }
        check_count(&st, var_type(v), o->n, "write");
    }
    MPI_CHECK(MPI_File_sync(fh));
    MPI_CHECK(MPI_File_close(&fh));
    return bench_max_time(MPI_Wtime() - t0);
}

static double restart_mpiio(const char *path, const options *o, void *const back[NVARS],
                            bool collective)
{
    MPI_File fh;
    MPI_Status st;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    for (int v = 0; v < NVARS; v++) {
        if (collective) {
            MPI_CHECK(MPI_File_read_at_all(fh, (MPI_Offset)g_off[v], back[v], (int)o->n,
                                           var_type(v), &st));
        } else {
            MPI_CHECK(MPI_File_read_at(fh, (MPI_Offset)g_off[v], back[v], (int)o->n,
                                       var_type(v), &st));
        }
        check_count(&st, var_type(v), o->n, "read");
    }
    MPI_CHECK(MPI_File_close(&fh));
    return bench_max_time(MPI_Wtime() - t0);
}

/* ---- checkpoint verification: the file itself, read with pread() --------------------- */

static bool file_holds(const char *path, const options *o, void *const buf[NVARS],
                       void *const data[NVARS])
{
    bool ok = true;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "[rank %d] hacc_io: cannot open %s: %s\n", g_rank, path, strerror(errno));
        return false;
    }
    poison(buf, o->n);
    for (int v = 0; v < NVARS && ok; v++) {
        size_t len = o->n * var_size[v], done = 0;
        while (done < len) {
            ssize_t got = pread(fd, (char *)buf[v] + done, len - done,
                                (off_t)(g_off[v] + done));
            if (got <= 0) {
                fprintf(stderr, "[rank %d] hacc_io: %s: short file (variable %s)\n", g_rank,
                        path, var_name[v]);
                ok = false;
                break;
            }
            done += (size_t)got;
        }
    }
    if (ok && g_rank == 0) {
        struct stat sb;
        SYS_CHECK(fstat(fd, &sb) == 0, path);
        if ((unsigned long long)sb.st_size != g_total * PARTICLE_BYTES) {
            fprintf(stderr, "hacc_io: %s has %lld bytes, expected %llu\n", path,
                    (long long)sb.st_size, g_total * PARTICLE_BYTES);
            ok = false;
        }
    }
    close(fd);
    return ok && same_as_generator(buf, data, o->n, "file content");
}

/* ---- main ---------------------------------------------------------------------------- */

static void print_result(const char *phase, int m, double seconds, double base_seconds,
                         bool verified, const options *o)
{
    if (g_rank != 0) {
        return;
    }
    double bytes = (double)g_total * PARTICLE_BYTES;
    bool is_base = m == M_INDEP;
    bool have_base = isfinite(base_seconds);
    bench_json j;
    bench_json_begin(&j, "hacc_io");
    bench_json_str(&j, "phase", phase);
    bench_json_str(&j, "method", method_name[m]);
    bench_json_int(&j, "ranks", g_size);
    bench_json_int(&j, "particles_per_rank", (long long)o->n);
    bench_json_int(&j, "bytes", llround(bytes));
    bench_json_int(&j, "reps", o->reps);
    if (strcmp(phase, "restart") == 0) {
        bench_json_str(&j, "cache", o->warm ? "warm" : "dropped");
    }
    bench_json_num(&j, "seconds", seconds);
    bench_json_num(&j, "GBps", bytes / seconds / 1e9);
    bench_json_str(&j, "baseline", is_base ? NULL : method_name[M_INDEP]);
    bench_json_num(&j, "ratio", !is_base && have_base ? base_seconds / seconds : NAN);
    bench_json_num(&j, "time_ratio", !is_base && have_base ? seconds / base_seconds : NAN);
    bench_json_bool(&j, "verified", verified);
    bench_json_end(&j);
}

int main(int argc, char **argv)
{
    bench_mpi_start(&argc, &argv, &g_rank, &g_size);
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                  &g_node));
    MPI_CHECK(MPI_Comm_rank(g_node, &g_node_rank));
    options o = parse_options(argc, argv);

    unsigned long long n = o.n;
    MPI_CHECK(MPI_Allreduce(&n, &g_total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Exscan(&n, &g_prefix, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (g_rank == 0) {
        g_prefix = 0; /* MPI_Exscan leaves rank 0's result undefined */
    }
    unsigned long long section = 0;
    for (int v = 0; v < NVARS; v++) {
        g_off[v] = section + g_prefix * var_size[v];
        section += g_total * var_size[v];
    }

    bench_header("hacc_io: %d ranks, %zu particles per rank, %.1f MiB shared file, %d reps, "
                 "dir %s, restart %s",
                 g_size, o.n, (double)g_total * PARTICLE_BYTES / 1048576.0, o.reps, o.dir,
                 o.warm ? "warm" : "after dropping the page cache");

    void *data[NVARS], *back[NVARS];
    for (int v = 0; v < NVARS; v++) {
        data[v] = bench_malloc(o.n * var_size[v]);
        back[v] = bench_malloc(o.n * var_size[v]);
    }
    generate(data, o.n);

    double *tc[NMETHODS], *tr[NMETHODS];
    bool ok_c[NMETHODS], ok_r[NMETHODS];
    for (int m = 0; m < NMETHODS; m++) {
        tc[m] = bench_malloc((size_t)o.reps * sizeof(double));
        tr[m] = bench_malloc((size_t)o.reps * sizeof(double));
        ok_c[m] = ok_r[m] = true;
    }

    /* The methods take turns inside each repetition, so that drifting system state (page
     * cache, dirty memory) affects all alike. */
    for (int r = 0; r < o.reps; r++) {
        for (int m = 0; m < NMETHODS; m++) {
            if (!(o.methods & (1u << m))) {
                continue;
            }
            char path[4096];
            file_path(path, sizeof path, &o, m);
            remove_file(path);

            tc[m][r] = m == M_STORAGE || m == M_UMMAP
                           ? checkpoint_storage(path, &o, data, m == M_UMMAP)
                           : checkpoint_mpiio(path, &o, data, m == M_COLL);
            if (!o.warm) {
                evict(path);
            }
            poison(back, o.n);
            tr[m][r] = m == M_STORAGE || m == M_UMMAP
                           ? restart_storage(path, &o, back, m == M_UMMAP)
                           : restart_mpiio(path, &o, back, m == M_COLL);

            bool restart_ok = same_as_generator(back, data, o.n, method_name[m]);
            ok_r[m] = bench_all(restart_ok) && ok_r[m];
            bool file_ok = file_holds(path, &o, back, data);
            ok_c[m] = bench_all(file_ok) && ok_c[m];
        }
    }

    double base_c = (o.methods & (1u << M_INDEP)) ? bench_median(tc[M_INDEP], o.reps) : NAN;
    double base_r = (o.methods & (1u << M_INDEP)) ? bench_median(tr[M_INDEP], o.reps) : NAN;
    for (int m = 0; m < NMETHODS; m++) {
        if (o.methods & (1u << m)) {
            print_result("checkpoint", m, bench_median(tc[m], o.reps), base_c, ok_c[m], &o);
            print_result("restart", m, bench_median(tr[m], o.reps), base_r, ok_r[m], &o);
        }
    }

    if (!o.keep) {
        for (int m = 0; m < NMETHODS; m++) {
            if (o.methods & (1u << m)) {
                char path[4096];
                file_path(path, sizeof path, &o, m);
                remove_file(path);
            }
        }
    }
    for (int m = 0; m < NMETHODS; m++) {
        free(tc[m]);
        free(tr[m]);
    }
    for (int v = 0; v < NVARS; v++) {
        free(data[v]);
        free(back[v]);
    }
    MPI_CHECK(MPI_Comm_free(&g_node));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
