#define _POSIX_C_SOURCE 200809L
/* A FLASH-IO-like checkpoint through PnetCDF (seed 004 §4.5; FLASH-IO as published: the
 * I/O kernel of the FLASH AMR code, its data structures filled with dummy data and
 * written through a high-level library).
 *
 * Every process holds -b AMR blocks (default 80) of nxb x nyb x nzb cells (-x -y -z,
 * default 8 each) with -g guard cells on each side (default 4) and -v unknowns (default
 * 24) per cell, doubles, in FLASH's layout: unk[block][k][j][i][var], the variable fastest.
 * The checkpoint is one netCDF file (CDF-5) of a per-variable array
 * [total_blocks][nzb][nyb][nxb] per unknown plus the tree's metadata (lrefine, nodetype,
 * coordinates, block sizes), each written with one collective ncmpi_put_vara_all: the
 * unknowns straight from unk through an MPI datatype of the variable's interior cells,
 * which PnetCDF packs into a buffer of its own before it calls MPI-IO. With -p also the
 * two plotfiles: 4 variables in single precision per cell ("plot") and per cell corner
 * ("corners", [total_blocks][nzb+1][nyb+1][nxb+1]).
 *
 * Timed: each file from ncmpi_create to ncmpi_close (define, puts, -e ncmpi_sync), from a
 * barrier until the slowest process is done; "all_files" = the bytes of all files / the sum
 * of their times (the seed's aggregate bandwidth). Then every file is read back with
 * ncmpi_get_vara_all (-c: dropped from the page cache first, untimed) and compared byte for
 * byte with what was written (the checkpoint's read is timed: phase "checkpoint_read").
 *
 * PnetCDF goes through MPI-IO, so the MPI-IO route of libtierio-pmpi and its hints apply:
 * every IOR_HINT__MPI__<key>=<value> of the environment goes on the MPI_Info given to
 * ncmpi_create / ncmpi_open. "routed" is null when tierio is loaded: ncmpi_inq_file_info
 * gives the hints of the open, not the file's current MPI_File_get_info, so the count of
 * calls tierio served cannot be read here (TIERIO_LOG=info prints it at close: all 28
 * collective writes of the checkpoint went through tierio, 4 ranks, -b 3); -1 when
 * tierio is absent. -A: every repetition with tierio_agg = disable,
 * then = enable, in turn. Debian's PnetCDF is built on Open MPI: the program is built for
 * Open MPI only (bench/README.md).
 *
 *   tools/cluster/tio-cluster run --nodes 4 --np 8 --ppn 2 --mpi openmpi \
 *       --pfs-write-bps 100M -- build/openmpi/bench/tio-bench-agg-flashio -b 20 -p -e -c */
#include "bench_common.h"

#include "agg_common.h"
#include "memcon_common.h"

#include <pnetcdf.h>

extern char **environ;

#define NC_CHECK(call)                                                                   \
    do {                                                                                 \
        int nc_rc_ = (call);                                                             \
        if (nc_rc_ != NC_NOERR)                                                          \
            bench_die("%s:%d: %s failed: %s", __FILE__, __LINE__, #call,                 \
                      ncmpi_strerror(nc_rc_));                                           \
    } while (0)

enum { F_CHECKPOINT, F_PLOT, F_CORNERS, NFILES };
static const char *const file_name[NFILES] = {"checkpoint", "plot", "corners"};
enum { NPLOT = 4, NMETA = 4 };   /* plotted variables; metadata arrays of the checkpoint */
static const char *const meta_name[NMETA] = {"lrefine", "nodetype", "coordinates", "blocksize"};

typedef struct {
    int blocks, nxb, nyb, nzb, guard, nunk, reps;
    bool plots, fsync, cold, ab;
    char dir[PATH_MAX];
} options;

static options o;
static long long g_first;   /* global index of this process's first block */

/* The value of unknown u in cell (k, j, i) of global block gb, repetition rep: a multiple
 * of 1/16 below 2^16, exact in float too. */
static double cell(int u, long long gb, int k, int j, int i, int rep)
{
    uint64_t idx = (((uint64_t)gb * (uint64_t)o.nzb + (uint64_t)k) * (uint64_t)o.nyb +
                    (uint64_t)j) * (uint64_t)o.nxb + (uint64_t)i;
    return (double)(bench_mix64(idx * 64 + (uint64_t)u + ((uint64_t)rep << 50)) % (1u << 20)) /
           16.0;
}

static int nvars(int f)
{
    return f == F_CHECKPOINT ? o.nunk + NMETA : NPLOT;
}

/* Shape of the local part of variable v of file f: ndims, count (start is g_first then 0). */
static int shape(int f, int v, MPI_Offset count[4])
{
    count[0] = o.blocks;
    if (f == F_CHECKPOINT && v >= o.nunk) {
        count[1] = 3;
        return v - o.nunk < 2 ? 1 : 2;   /* lrefine, nodetype: [blocks]; the rest [blocks][3] */
    }
    int c = f == F_CORNERS;
    count[1] = o.nzb + c;
    count[2] = o.nyb + c;
    count[3] = o.nxb + c;
    return 4;
}

static nc_type var_type(int f, int v)
{
    if (f != F_CHECKPOINT)
        return NC_FLOAT;
    if (v >= o.nunk && v - o.nunk < 2)
        return NC_INT;
    return NC_DOUBLE;
}

static size_t elem_size(nc_type t)
{
    return t == NC_DOUBLE ? 8 : 4;
}

static size_t slab_elems(int f, int v)
{
    MPI_Offset c[4];
    int nd = shape(f, v, c);
    size_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= (size_t)c[d];
    return n;
}

/* The local part of variable v of file f as the file holds it, contiguous. */
static void slab(int f, int v, int rep, void *out)
{
    size_t k = 0;
    if (f == F_CHECKPOINT && v >= o.nunk) {
        int m = v - o.nunk;
        for (int b = 0; b < o.blocks; b++) {
            long long gb = g_first + b;
            if (m == 0)
                ((int *)out)[k++] = 1 + (int)(bench_mix64((uint64_t)gb + (uint64_t)rep) % 6);
            else if (m == 1)
                ((int *)out)[k++] = 1 + (int)(gb % 3);
            else
                for (int d = 0; d < 3; d++)
                    ((double *)out)[k++] = (double)(gb * 3 + d) * (m == 2 ? 0.5 : 0.125);
        }
        return;
    }
    int c = f == F_CORNERS;
    int u = f == F_CHECKPOINT ? v : v * (o.nunk / NPLOT);   /* plotted unknowns, spread */
    for (int b = 0; b < o.blocks; b++)
        for (int kk = 0; kk < o.nzb + c; kk++)
            for (int j = 0; j < o.nyb + c; j++)
                for (int i = 0; i < o.nxb + c; i++) {
                    double x = cell(u + (c ? 1000 : 0), g_first + b, kk, j, i, rep);
                    if (f == F_CHECKPOINT)
                        ((double *)out)[k++] = x;
                    else
                        ((float *)out)[k++] = (float)x;
                }
}

/* unk[block][k][j][i][var] with guard cells (filled with -1: never written). */
static size_t unk_index(int b, int k, int j, int i, int u)
{
    size_t kl = (size_t)(o.nzb + 2 * o.guard), jl = (size_t)(o.nyb + 2 * o.guard),
           il = (size_t)(o.nxb + 2 * o.guard);
    return (((((size_t)b * kl + (size_t)k) * jl + (size_t)j) * il + (size_t)i) *
            (size_t)o.nunk) + (size_t)u;
}

static void fill_unk(double *unk, size_t n, int rep)
{
    for (size_t x = 0; x < n; x++)
        unk[x] = -1.0;
    int g = o.guard;
    for (int b = 0; b < o.blocks; b++)
        for (int k = 0; k < o.nzb; k++)
            for (int j = 0; j < o.nyb; j++)
                for (int i = 0; i < o.nxb; i++)
                    for (int u = 0; u < o.nunk; u++)
                        unk[unk_index(b, k + g, j + g, i + g, u)] =
                            cell(u, g_first + b, k, j, i, rep);
}

/* The interior cells of unknown u in unk, as one MPI datatype (FLASH-IO's memory view). */
static MPI_Datatype unk_type(int u)
{
    int g = o.guard;
    int sizes[5] = {o.blocks, o.nzb + 2 * g, o.nyb + 2 * g, o.nxb + 2 * g, o.nunk};
    int sub[5] = {o.blocks, o.nzb, o.nyb, o.nxb, 1};
    int start[5] = {0, g, g, g, u};
    MPI_Datatype t;
    MPI_CHECK(MPI_Type_create_subarray(5, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    return t;
}

static void path_of(int f, char *out, size_t n)
{
    snprintf(out, n, "%s/flash_io_%s.nc", o.dir, file_name[f]);
}

static void var_name(int f, int v, char *out, size_t n)
{
    if (f == F_CHECKPOINT && v >= o.nunk)
        snprintf(out, n, "%s", meta_name[v - o.nunk]);
    else
        snprintf(out, n, "%s%02d", f == F_CHECKPOINT ? "unk" : "plot", v);
}

/* Define file f's dimensions, variables and attributes; varids[v]. */
static void define(int nc, int f, int *varids)
{
    int c = f == F_CORNERS, dblk, dz, dy, dx, d3;
    NC_CHECK(ncmpi_def_dim(nc, "blocks", (MPI_Offset)o.blocks * g_size, &dblk));
    NC_CHECK(ncmpi_def_dim(nc, "nzb", o.nzb + c, &dz));
    NC_CHECK(ncmpi_def_dim(nc, "nyb", o.nyb + c, &dy));
    NC_CHECK(ncmpi_def_dim(nc, "nxb", o.nxb + c, &dx));
    NC_CHECK(ncmpi_def_dim(nc, "ndim", 3, &d3));
    for (int v = 0; v < nvars(f); v++) {
        MPI_Offset count[4];
        int nd = shape(f, v, count);
        int dims[4] = {dblk, nd == 4 ? dz : d3, dy, dx};
        char name[32];
        var_name(f, v, name, sizeof name);
        NC_CHECK(ncmpi_def_var(nc, name, var_type(f, v), nd, dims, &varids[v]));
    }
    int geom[4] = {o.nxb, o.nyb, o.nzb, o.blocks * g_size};
    NC_CHECK(ncmpi_put_att_int(nc, NC_GLOBAL, "nxb_nyb_nzb_total_blocks", NC_INT, 4, geom));
    NC_CHECK(ncmpi_put_att_text(nc, NC_GLOBAL, "file_type", strlen(file_name[f]), file_name[f]));
    double tm[2] = {0.125, 1e-3};
    NC_CHECK(ncmpi_put_att_double(nc, NC_GLOBAL, "time_dt", NC_DOUBLE, 2, tm));
    NC_CHECK(ncmpi_enddef(nc));
}

static MPI_Datatype mpi_type(nc_type t)
{
    return t == NC_DOUBLE ? MPI_DOUBLE : t == NC_FLOAT ? MPI_FLOAT : MPI_INT;
}

/* The routed count of an open file, then ncmpi_close. */
static long close_file(int nc)
{
    MPI_Info used;
    NC_CHECK(ncmpi_inq_file_info(nc, &used));
    long calls = memcon_routed_info(used);
    if (calls >= 0) /* tierio is there, but the count is the open's: unknown */
        calls = MEMCON_ROUTED_UNKNOWN;
    MPI_CHECK(MPI_Info_free(&used));
    NC_CHECK(ncmpi_close(nc));
    return calls;
}

/* Write file f; returns the slowest process's seconds, *bytes the data written (all
 * processes), *calls the routed count. */
static double write_file(int f, int rep, int variant, const double *unk, const MPI_Datatype *ut,
                         void *scratch, unsigned long long *bytes, long *calls)
{
    char path[PATH_MAX + 32];
    path_of(f, path, sizeof path);
    MPI_Info info = memcon_file_info(environ, variant);
    int *varids = bench_malloc(sizeof(int) * (size_t)nvars(f));
    *bytes = 0;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    int nc;
    NC_CHECK(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, info, &nc));
    define(nc, f, varids);
    for (int v = 0; v < nvars(f); v++) {
        MPI_Offset start[4] = {g_first, 0, 0, 0}, count[4];
        shape(f, v, count);
        size_t n = slab_elems(f, v);
        if (f == F_CHECKPOINT && v < o.nunk) {
            NC_CHECK(ncmpi_put_vara_all(nc, varids[v], start, count, unk, 1, ut[v]));
        } else {
            slab(f, v, rep, scratch);   /* the conversion FLASH does before writing */
            NC_CHECK(ncmpi_put_vara_all(nc, varids[v], start, count, scratch, (MPI_Offset)n,
                                        mpi_type(var_type(f, v))));
        }
        *bytes += n * elem_size(var_type(f, v)) * (unsigned long long)g_size;
    }
    if (o.fsync)
        NC_CHECK(ncmpi_sync(nc));
    *calls = close_file(nc);
    double t = bench_max_time(MPI_Wtime() - t0);
    MPI_CHECK(MPI_Info_free(&info));
    free(varids);
    return t;
}

/* Read file f back and compare every variable byte for byte; returns the slowest
 * process's seconds, *ok on every process. */
static double read_file(int f, int rep, int variant, void *got, void *expect, bool *ok,
                        long *calls)
{
    char path[PATH_MAX + 32];
    path_of(f, path, sizeof path);
    if (o.cold)
        agg_drop_cache(path);
    MPI_Info info = memcon_file_info(environ, variant);
    bool good = true;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    int nc;
    NC_CHECK(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, info, &nc));
    for (int v = 0; v < nvars(f); v++) {
        char name[32];
        int id;
        var_name(f, v, name, sizeof name);
        NC_CHECK(ncmpi_inq_varid(nc, name, &id));
        MPI_Offset start[4] = {g_first, 0, 0, 0}, count[4];
        shape(f, v, count);
        size_t n = slab_elems(f, v);
        NC_CHECK(ncmpi_get_vara_all(nc, id, start, count, got, (MPI_Offset)n,
                                    mpi_type(var_type(f, v))));
        slab(f, v, rep, expect);
        good = good && memcmp(got, expect, n * elem_size(var_type(f, v))) == 0;
    }
    *calls = close_file(nc);
    double t = bench_max_time(MPI_Wtime() - t0);
    *ok = bench_all(good);
    MPI_CHECK(MPI_Info_free(&info));
    return t;
}

static void usage(const char *prog)
{
    bench_usage("usage: %s [-b blocks] [-x nxb] [-y nyb] [-z nzb] [-g guard] [-v unknowns] "
                "[-r reps] [-d dir] [-p] [-e] [-c] [-A]\n"
                "  -b  AMR blocks per process (default 80)\n"
                "  -x -y -z  cells per block and dimension (default 8)\n"
                "  -g  guard cells on each side (default 4; in memory only)\n"
                "  -v  unknowns per cell, doubles (default 24)\n"
                "  -r  repetitions, median reported (default 3)\n"
                "  -d  directory of the files (default $TIERIO_PFS, else $TIERIO_BENCH_DIR "
                "or /tmp)\n"
                "  -p  also the two plotfiles (cell centres, cell corners; 4 floats)\n"
                "  -e  ncmpi_sync before close (timed)\n"
                "  -c  drop each file from the page cache before reading it back (untimed)\n"
                "  -A  every repetition with tierio_agg=disable, then =enable\n"
                "Hints: IOR_HINT__MPI__<key>=<value> in the environment.\n", prog);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    agg_init_nodes();
    o = (options){.blocks = 80, .nxb = 8, .nyb = 8, .nzb = 8, .guard = 4, .nunk = 24,
                  .reps = 3};
    snprintf(o.dir, sizeof o.dir, "%s",
             getenv("TIERIO_PFS") ? getenv("TIERIO_PFS") : bench_default_dir());
    int c;
    while ((c = bench_getopt(argc, argv, "b:x:y:z:g:v:r:d:pecAh", usage)) != -1) {
        switch (c) {
        case 'b': o.blocks = (int)bench_parse_u64("-b", optarg); break;
        case 'x': o.nxb = (int)bench_parse_u64("-x", optarg); break;
        case 'y': o.nyb = (int)bench_parse_u64("-y", optarg); break;
        case 'z': o.nzb = (int)bench_parse_u64("-z", optarg); break;
        case 'g': o.guard = (int)bench_parse_u64("-g", optarg); break;
        case 'v': o.nunk = (int)bench_parse_u64("-v", optarg); break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'd': snprintf(o.dir, sizeof o.dir, "%s", optarg); break;
        case 'p': o.plots = true; break;
        case 'e': o.fsync = true; break;
        case 'c': o.cold = true; break;
        case 'A': o.ab = true; break;
        }
    }
    if (o.blocks < 1 || o.nxb < 1 || o.nyb < 1 || o.nzb < 1 || o.nxb > 1024 || o.nyb > 1024 ||
        o.nzb > 1024 || o.guard > 16 || o.nunk < NPLOT || o.nunk > 999 || o.reps < 1)
        bench_die("-b, -x, -y, -z, -r must be at least 1 (cells at most 1024), -g at most 16, "
                  "-v between %d and 999", NPLOT);
    g_first = (long long)g_rank * o.blocks;
    size_t cells = (size_t)o.blocks * (size_t)(o.nzb + 2 * o.guard) *
                   (size_t)(o.nyb + 2 * o.guard) * (size_t)(o.nxb + 2 * o.guard);
    size_t unk_n = cells * (size_t)o.nunk;
    size_t slab_max = (size_t)o.blocks * (size_t)(o.nzb + 1) * (size_t)(o.nyb + 1) *
                      (size_t)(o.nxb + 1) * 8;
    if (unk_n > (size_t)INT_MAX || slab_max / 8 > (size_t)INT_MAX)
        bench_die("too many cells per process for one call");
    int nfiles = o.plots ? NFILES : 1;
    bench_header("agg_flashio: %d ranks, %d blocks of %dx%dx%d cells (+%d guard) x %d "
                 "unknowns per rank, %d file(s), %d repetitions%s%s%s, PnetCDF %s, %s",
                 g_size, o.blocks, o.nxb, o.nyb, o.nzb, o.guard, o.nunk, nfiles, o.reps,
                 o.fsync ? ", sync" : "", o.cold ? ", cache dropped before reads" : "",
                 o.ab ? ", A/B" : "", ncmpi_inq_libvers(), o.dir);

    double *unk = bench_malloc(unk_n * sizeof *unk);
    void *scratch = bench_malloc(slab_max), *expect = bench_malloc(slab_max);
    MPI_Datatype *ut = bench_malloc(sizeof *ut * (size_t)o.nunk);
    for (int u = 0; u < o.nunk; u++)
        ut[u] = unk_type(u);

    /* t[variant][file] per repetition; file NFILES = the checkpoint's read. */
    int nvar = o.ab ? 2 : 1;
    double *t[2][NFILES + 1];
    unsigned long long bytes[NFILES + 1] = {0};
    long calls[2][NFILES + 1];
    bool ok[2] = {true, true};
    for (int v = 0; v < nvar; v++)
        for (int f = 0; f <= NFILES; f++) {
            t[v][f] = bench_malloc(sizeof(double) * (size_t)o.reps);
            calls[v][f] = -1;
        }
    for (int rep = 0; rep < o.reps; rep++)
        for (int k = 0; k < nvar; k++) {
            int v = (rep + k) % nvar;   /* each variant goes first in turn */
            int variant = o.ab ? v : -1;
            fill_unk(unk, unk_n, rep);
            for (int f = 0; f < nfiles; f++)
                t[v][f][rep] = write_file(f, rep, variant, unk, ut, scratch, &bytes[f],
                                          &calls[v][f]);
            for (int f = 0; f < nfiles; f++) {
                bool good;
                long n;
                double s = read_file(f, rep, variant, scratch, expect, &good, &n);
                ok[v] = ok[v] && good;
                if (f == F_CHECKPOINT) {
                    t[v][NFILES][rep] = s;
                    calls[v][NFILES] = n;
                    bytes[NFILES] = bytes[F_CHECKPOINT];
                }
            }
        }

    /* Results: each file, all files together (the sum of their times), the checkpoint's
     * read. */
    double *sum[2];
    unsigned long long all = 0;
    for (int f = 0; f < nfiles; f++)
        all += bytes[f];
    for (int v = 0; v < nvar; v++) {
        sum[v] = bench_malloc(sizeof(double) * (size_t)o.reps);
        for (int rep = 0; rep < o.reps; rep++) {
            sum[v][rep] = 0;
            for (int f = 0; f < nfiles; f++)
                sum[v][rep] += t[v][f][rep];
        }
    }
    for (int v = 0; v < nvar && g_rank == 0; v++)
        for (int f = 0; f <= NFILES + 1; f++) {
            if (f < NFILES && f >= nfiles)
                continue;
            const char *phase = f < NFILES ? file_name[f] : f == NFILES ? "checkpoint_read"
                                                                         : "all_files";
            const double *mine = f <= NFILES ? t[v][f] : sum[v];
            const double *base = f <= NFILES ? t[0][f] : sum[0];
            bench_json j;
            bench_json_begin(&j, "agg_flashio");
            bench_json_str(&j, "phase", phase);
            bench_json_str(&j, "method", memcon_method(o.ab, v));
            bench_json_int(&j, "ranks", g_size);
            bench_json_int(&j, "blocks_per_rank", o.blocks);
            bench_json_int(&j, "nxb", o.nxb);
            bench_json_int(&j, "nyb", o.nyb);
            bench_json_int(&j, "nzb", o.nzb);
            bench_json_int(&j, "unknowns", o.nunk);
            bench_json_int(&j, "reps", o.reps);
            bench_json_bool(&j, "fsync", o.fsync);
            memcon_json_finish(&j, mine, o.ab && v ? base : NULL, o.reps,
                               f <= NFILES ? bytes[f] : all,
                               f <= NFILES ? calls[v][f] : calls[v][F_CHECKPOINT], ok[v]);
        }
    for (int v = 0; v < nvar; v++)
        free(sum[v]);
    if (g_rank == 0)
        for (int f = 0; f < nfiles; f++) {
            char path[PATH_MAX + 32];
            path_of(f, path, sizeof path);
            unlink(path);
        }
    for (int v = 0; v < nvar; v++)
        for (int f = 0; f <= NFILES; f++)
            free(t[v][f]);
    for (int u = 0; u < o.nunk; u++)
        MPI_CHECK(MPI_Type_free(&ut[u]));
    free(ut);
    free(unk);
    free(scratch);
    free(expect);
    MPI_CHECK(MPI_Comm_free(&g_node_comm));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
