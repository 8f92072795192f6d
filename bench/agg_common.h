/* Helpers shared by the aggregation benchmarks (bench/agg_*.c, seed 002 §4): the MPI-IO
 * baseline set to the same aggregator count and buffer size as tierio (ROMIO through the
 * info hints cb_nodes / cb_buffer_size, OMPIO through its MCA parameters
 * io_ompio_num_aggregators / io_ompio_bytes_per_agg, set before MPI_Init), the tierio
 * settings, dropping a file from the page cache, and one JSON line per result.
 * Include after bench_common.h. */
#ifndef TIO_BENCH_AGG_COMMON_H
#define TIO_BENCH_AGG_COMMON_H

#include <fcntl.h>
#include <limits.h>

#include <tierio.h>

typedef struct {
    int aggregators;          /* 0 = one per node */
    unsigned long long buffer;/* bytes per aggregation buffer */
    int reps;
    const char *pfs;          /* the shared directory */
    const char *local;        /* node-local storage */
    bool cold;                /* drop files from the page cache before reads */
} agg_options;

static int g_rank, g_size, g_nodes, g_node_rank;
static MPI_Comm g_node_comm;

/* Before MPI_Init: OMPIO's aggregator count and bytes per aggregator, unless the caller set
 * them (they are MCA parameters, read at initialisation). Other MPI libraries ignore them. */
static inline void agg_setup_ompio(int argc, char **argv)
{
    int aggs = 0;
    unsigned long long buf = 16ull << 20;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "-a"))
            aggs = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "-b"))
            buf = strtoull(argv[i + 1], NULL, 10);
    }
    char v[32];
    if (aggs > 0 && !getenv("OMPI_MCA_io_ompio_num_aggregators")) {
        snprintf(v, sizeof v, "%d", aggs);
        setenv("OMPI_MCA_io_ompio_num_aggregators", v, 1);
    }
    if (!getenv("OMPI_MCA_io_ompio_bytes_per_agg")) {
        snprintf(v, sizeof v, "%llu", buf);
        setenv("OMPI_MCA_io_ompio_bytes_per_agg", v, 1);
    }
}

/* HACC-IO particles: particle i of rank r as 38 bytes of an array of structures (seven
 * floats, a 64-bit id, a 16-bit mask). */
#define AGG_PARTICLE_BYTES 38

static inline void agg_particles(unsigned char *b, long long n, int r)
{
    for (long long i = 0; i < n; i++) {
        unsigned char *p = b + i * AGG_PARTICLE_BYTES;
        uint64_t id = (uint64_t)r << 40 | (uint64_t)i;
        for (int v = 0; v < 7; v++) {
            float f = (float)(bench_mix64(id * 8 + (uint64_t)v) % 1000000) / 1000.0f;
            memcpy(p + 4 * v, &f, 4);
        }
        memcpy(p + 28, &id, 8);
        uint16_t mask = (uint16_t)(id & 0xffff);
        memcpy(p + 36, &mask, 2);
    }
}

static inline void agg_init_nodes(void)
{
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                  &g_node_comm));
    MPI_CHECK(MPI_Comm_rank(g_node_comm, &g_node_rank));
    int lead = g_node_rank == 0;
    MPI_CHECK(MPI_Allreduce(&lead, &g_nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
}

static inline int agg_count(const agg_options *o)
{
    return o->aggregators > 0 ? o->aggregators : g_nodes;
}

/* Which MPI-IO implementation serves the baseline. */
static inline const char *agg_io_name(void)
{
#ifdef OPEN_MPI
    const char *io = getenv("OMPI_MCA_io");
    return io && strstr(io, "romio") ? "romio" : "ompio";
#else
    return "romio";
#endif
}

/* The MPI-IO baseline's hints: the same aggregators and buffer as tierio, collective
 * buffering always on (ROMIO would otherwise skip it for non-interleaved accesses). */
static inline MPI_Info agg_mpiio_info(const agg_options *o)
{
    MPI_Info info;
    char v[32];
    MPI_CHECK(MPI_Info_create(&info));
    snprintf(v, sizeof v, "%d", agg_count(o));
    bench_info_set(info, "cb_nodes", v);
    snprintf(v, sizeof v, "%llu", o->buffer);
    bench_info_set(info, "cb_buffer_size", v);
    bench_info_set(info, "romio_cb_write", "enable");
    bench_info_set(info, "romio_cb_read", "enable");
    return info;
}

/* tierio's settings: the same aggregators and buffer (plus what the caller adds). */
static inline MPI_Info agg_tierio_info(const agg_options *o)
{
    MPI_Info info;
    char v[32];
    MPI_CHECK(MPI_Info_create(&info));
    snprintf(v, sizeof v, "%d", agg_count(o));
    bench_info_set(info, TIO_AGG_HINT_AGGREGATORS, v);
    snprintf(v, sizeof v, "%llu", o->buffer);
    bench_info_set(info, TIO_AGG_HINT_BUFFER_SIZE, v);
    return info;
}

/* Evict path's pages from this node's page cache (after they are durable), so that the
 * next read comes from storage, through the PFS's read throttle. One process per node. */
static inline void agg_drop_cache(const char *path)
{
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (g_node_rank == 0) {
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            fdatasync(fd);
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            close(fd);
        }
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static inline void agg_unlink(const char *path)
{
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (g_rank == 0)
        unlink(path);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Remove a subfile / node-local target: the manifest and <dir>/<name>.<k>. */
static inline void agg_unlink_target(const char *path, const char *datadir)
{
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (g_node_rank == 0 || g_rank == 0)
        for (int k = 0; k < 4096; k++) {
            char p[2 * PATH_MAX + 32];
            snprintf(p, sizeof p, "%s/%s.%d", datadir, name, k);
            if (unlink(p) != 0 && k > g_size)
                break;
        }
    if (g_rank == 0)
        unlink(path);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* One result line. baseline_gbps <= 0: no baseline (it is one). */
static inline void agg_json(const char *bench, const char *what_key, const char *what,
                            const char *phase, const char *method, const agg_options *o,
                            unsigned long long bytes, double seconds, double baseline_seconds,
                            bool verified, const char *extra_key, const char *extra)
{
    if (g_rank != 0)
        return;
    bench_json j;
    bench_json_begin(&j, bench);
    if (what_key)
        bench_json_str(&j, what_key, what);
    bench_json_str(&j, "phase", phase);
    bench_json_str(&j, "method", method);
    bench_json_str(&j, "mpiio", agg_io_name());
    bench_json_int(&j, "ranks", g_size);
    bench_json_int(&j, "nodes", g_nodes);
    bench_json_int(&j, "aggregators", agg_count(o));
    bench_json_int(&j, "buffer", (long long)o->buffer);
    bench_json_int(&j, "reps", o->reps);
    bench_json_int(&j, "bytes", (long long)bytes);
    bench_json_num(&j, "seconds", seconds);
    bench_json_num(&j, "GBps", seconds > 0 ? bytes / seconds / 1e9 : NAN);
    if (baseline_seconds > 0) {
        bench_json_str(&j, "baseline", "mpiio");
        bench_json_num(&j, "ratio", baseline_seconds / seconds);
    } else {
        bench_json_raw(&j, ",\"baseline\":null,\"ratio\":null");
    }
    if (extra_key)
        bench_json_str(&j, extra_key, extra);
    bench_json_bool(&j, "verified", verified);
    bench_json_end(&j);
}

static inline const char *agg_env_or(const char *var, const char *dflt)
{
    const char *v = getenv(var);
    return v && *v ? v : dflt;
}

#endif
