#define _POSIX_C_SOURCE 200809L
/* The write-then-read workflow through node-local storage (seed 002 §4.4, Figure 10,
 * Table 8): a simulation writes HACC-IO particles (9 variables, 38 bytes each, -n per
 * process) and an analysis reads them back, on the same nodes, later in the job.
 *
 * Methods, side by side in one run (each goes first in turn), with the same aggregator
 * count and buffer size:
 *   mpiio             MPI_File_write_at_all + MPI_File_sync into one shared file on the
 *                     PFS, then MPI_File_read_at_all (the seed's MPI-IO row);
 *   tierio_pfs        tierio the same way, aggregating in DRAM (the seed's first row);
 *   tierio_nodelocal  tierio with tierio_agg_target=node-local: each node's aggregator
 *                     writes its part into a file on the node's local storage, aggregating
 *                     on that storage tier too (-t; the seed's SSD row), and reads it back
 *                     from there.
 * Timed from a barrier until the slowest process is done: write (declaration + write +
 * sync: durable on its tier) and read (declaration + read, by a new handle, as a second
 * application would); the total I/O time is their sum. Before each read the PFS file is
 * dropped from the page cache (the analysis reads storage, not the writer's cache); node-
 * local storage here is a tmpfs (MACHINE.md), whose pages are the storage itself.
 * Verification (untimed): every byte read back equals the generator's.
 * ratio = mpiio seconds / method seconds; "reduction" = 1 - method total / mpiio total
 * (seed: 26.8 %).
 *
 * Tiers: $TIERIO_SITE if set (its first node-local tier), else a site file written next to
 * the data naming $TIERIO_NODE_LOCAL as tier "ssd".
 *
 *   tools/cluster/tio-cluster run --nodes 4 --np 8 --ppn 2 --mpi openmpi \
 *       --pfs-write-bps 100M --pfs-read-bps 200M -- build/openmpi/bench/tio-bench-agg-workflow */
#include "bench_common.h"

#include "agg_common.h"

#define PBYTES AGG_PARTICLE_BYTES

enum { M_MPIIO, M_PFS, M_LOCAL, NMETHODS };
static const char *const method_name[NMETHODS] = {"mpiio", "tierio_pfs", "tierio_nodelocal"};

/* The node-local tier's name (every process: the same site file). */
static void local_tier(char *name, size_t len, const agg_options *o)
{
    tio_tiers_t t;
    MPI_CHECK(tio_tiers_open(MPI_COMM_WORLD, NULL, &t));
    int n = 0, found = 0;
    MPI_CHECK(tio_tiers_count(t, &n));
    for (int i = 0; i < n && !found; i++) {
        struct tio_tier_info info;
        MPI_CHECK(tio_tiers_get(t, i, &info));
        if (info.kind == TIO_TIER_NODE_LOCAL) {
            snprintf(name, len, "%s", info.name);
            found = 1;
        }
    }
    MPI_CHECK(tio_tiers_close(&t));
    if (!bench_all(found))
        bench_die("no node-local tier in the site file %s (node-local storage: %s)",
                  getenv("TIERIO_SITE"), o->local);
}

int main(int argc, char **argv)
{
    agg_setup_ompio(argc, argv);
    MPI_Init(&argc, &argv);
    agg_init_nodes();
    agg_options o = {.aggregators = 0, .buffer = 16ull << 20, .reps = 5,
                     .pfs = agg_env_or("TIERIO_PFS", bench_default_dir()),
                     .local = agg_env_or("TIERIO_NODE_LOCAL", "/tmp"), .cold = true};
    long long n = 110376; /* ~4 MB per process */
    const char *agg_tier = NULL;
    int c;
    while ((c = getopt(argc, argv, "n:a:b:r:p:l:t:Wh")) != -1) {
        switch (c) {
        case 'n': n = (long long)bench_parse_u64("-n", optarg); break;
        case 'a': o.aggregators = (int)bench_parse_u64("-a", optarg); break;
        case 'b': o.buffer = bench_parse_u64("-b", optarg); break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'p': o.pfs = optarg; break;
        case 'l': o.local = optarg; break;
        case 't': agg_tier = optarg; break;
        case 'W': o.cold = false; break;
        default:
            if (g_rank == 0)
                fprintf(stderr, "usage: %s [-n particles per process] [-a aggregators] "
                        "[-b buffer] [-r reps] [-p pfs dir] [-l node-local dir] [-t tier of "
                        "the node-local aggregation (default: the node-local tier)] [-W]\n",
                        argv[0]);
            MPI_Finalize();
            return c == 'h' ? 0 : 2;
        }
    }
    if (n < 1 || n * PBYTES > INT_MAX || o.reps < 1 || o.buffer == 0)
        bench_die("-n between 1 and %d, -r >= 1, -b > 0", INT_MAX / PBYTES);
    char site[PATH_MAX];
    if (!getenv("TIERIO_SITE")) {
        snprintf(site, sizeof site, "%s/agg_workflow.site", o.pfs);
        if (g_rank == 0) {
            FILE *f = fopen(site, "w");
            if (!f)
                bench_die("cannot write %s: %s", site, strerror(errno));
            fprintf(f, "# written by tio-bench-agg-workflow\n[tier ssd]\nkind = node-local\n"
                       "path = %s\n", o.local);
            fclose(f);
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        setenv("TIERIO_SITE", site, 1);
    } else {
        site[0] = 0;
    }
    char tier[64];
    local_tier(tier, sizeof tier, &o);
    if (!agg_tier)
        agg_tier = tier;
    char lib[128], path[PATH_MAX], local[PATH_MAX];
    bench_mpi_library(lib, sizeof lib);
    snprintf(path, sizeof path, "%s/agg_workflow.dat", o.pfs);
    snprintf(local, sizeof local, "%s/agg_workflow.local", o.pfs);
    if (g_rank == 0)
        fprintf(stderr, "# agg_workflow: %d ranks on %d nodes, %lld particles (%lld bytes) per "
                "rank, %d aggregators, %llu-byte buffers, node-local tier \"%s\" (%s), "
                "aggregation there on \"%s\", %d reps, PFS %s, %s (%s)\n", g_size, g_nodes, n,
                n * PBYTES, agg_count(&o), o.buffer, tier, o.local, agg_tier, o.reps, o.pfs,
                lib, agg_io_name());

    unsigned char *data = bench_malloc((size_t)(n * PBYTES)), *in = bench_malloc((size_t)(n * PBYTES));
    agg_particles(data, n, g_rank);
    MPI_Offset off = (MPI_Offset)g_rank * n * PBYTES, len = n * PBYTES;
    double *t[NMETHODS][2];
    bool ok[NMETHODS] = {true, true, true};
    for (int m = 0; m < NMETHODS; m++)
        for (int p = 0; p < 2; p++)
            t[m][p] = bench_malloc(sizeof(double) * (size_t)o.reps);
    for (int rep = 0; rep < o.reps; rep++)
        for (int k = 0; k < NMETHODS; k++) {
            int m = (rep + k) % NMETHODS;
            agg_unlink(path);
            agg_unlink_target(local, o.local);
            double t0;
            if (m == M_MPIIO) {
                MPI_Info info = agg_mpiio_info(&o);
                bench_info_set(info, TIO_AGG_HINT_ENABLE, "disable");
                MPI_File fh;
                MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                        info, &fh));
                MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
                t0 = MPI_Wtime();
                MPI_CHECK(MPI_File_write_at_all(fh, off, data, (int)len, MPI_BYTE,
                                                MPI_STATUS_IGNORE));
                MPI_CHECK(MPI_File_sync(fh));
                t[m][0][rep] = bench_max_time(MPI_Wtime() - t0);
                MPI_CHECK(MPI_File_close(&fh));
                if (o.cold)
                    agg_drop_cache(path);
                memset(in, 0, (size_t)len);
                MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
                MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
                t0 = MPI_Wtime();
                MPI_CHECK(MPI_File_read_at_all(fh, off, in, (int)len, MPI_BYTE,
                                               MPI_STATUS_IGNORE));
                t[m][1][rep] = bench_max_time(MPI_Wtime() - t0);
                MPI_CHECK(MPI_File_close(&fh));
                MPI_Info_free(&info);
            } else {
                MPI_Info info = agg_tierio_info(&o);
                const char *target = m == M_LOCAL ? local : path;
                if (m == M_LOCAL) {
                    bench_info_set(info, TIO_AGG_HINT_TARGET, "node-local");
                    bench_info_set(info, TIO_AGG_HINT_TARGET_TIER, tier);
                    bench_info_set(info, TIO_AGG_HINT_TIER, agg_tier);
                }
                tio_agg_t a;
                int id;
                MPI_CHECK(tio_agg_open(MPI_COMM_WORLD, target, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                       info, &a));
                MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
                t0 = MPI_Wtime();
                MPI_CHECK(tio_agg_declare(a, 1, &off, &len, &id));
                MPI_CHECK(tio_agg_write(a, id, data));
                MPI_CHECK(tio_agg_sync(a));
                t[m][0][rep] = bench_max_time(MPI_Wtime() - t0);
                MPI_CHECK(tio_agg_close(&a));
                if (o.cold && m == M_PFS)
                    agg_drop_cache(path);
                memset(in, 0, (size_t)len);
                MPI_CHECK(tio_agg_open(MPI_COMM_WORLD, target, MPI_MODE_RDONLY, info, &a));
                MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
                t0 = MPI_Wtime();
                MPI_CHECK(tio_agg_declare(a, 1, &off, &len, &id));
                MPI_CHECK(tio_agg_read(a, id, in));
                t[m][1][rep] = bench_max_time(MPI_Wtime() - t0);
                MPI_CHECK(tio_agg_close(&a));
                MPI_Info_free(&info);
            }
            ok[m] = bench_all(memcmp(in, data, (size_t)len) == 0) && ok[m];
        }
    unsigned long long bytes = (unsigned long long)len * (unsigned long long)g_size;
    double base[3];
    static const char *const phase[3] = {"write", "read", "total"};
    for (int m = 0; m < NMETHODS; m++) {
        double *total = bench_malloc(sizeof(double) * (size_t)o.reps);
        for (int r = 0; r < o.reps; r++)
            total[r] = t[m][0][r] + t[m][1][r];
        double v[3] = {bench_median(t[m][0], o.reps), bench_median(t[m][1], o.reps),
                       bench_median(total, o.reps)};
        if (m == M_MPIIO)
            memcpy(base, v, sizeof base);
        for (int p = 0; p < 3; p++) {
            char red[32];
            snprintf(red, sizeof red, "%.1f%%", 100.0 * (1 - v[p] / base[p]));
            agg_json("agg_workflow", NULL, NULL, phase[p], method_name[m], &o,
                     p == 2 ? 2 * bytes : bytes, v[p], m == M_MPIIO ? 0 : base[p], ok[m],
                     m == M_MPIIO ? NULL : "reduction", red);
        }
        free(total);
    }
    agg_unlink(path);
    agg_unlink_target(local, o.local);
    if (site[0] && g_rank == 0)
        unlink(site);
    free(data);
    free(in);
    for (int m = 0; m < NMETHODS; m++)
        for (int p = 0; p < 2; p++)
            free(t[m][p]);
    MPI_Comm_free(&g_node_comm);
    MPI_Finalize();
    return 0;
}
