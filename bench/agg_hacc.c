#define _POSIX_C_SOURCE 200809L
/* HACC-IO through the aggregation engine (seed 002 §4.4, Figures 6 and 7): every process
 * holds N particles of the 9 HACC variables (xx yy zz vx vy vz phi: float; pid: int64;
 * mask: uint16; 38 bytes) and writes them, as an array of structures, into
 *   shared  one file on the PFS, the processes' particles in rank order (Figure 6);
 *   fpn     one file per node (Figure 7): MPI-IO opens a file per node on the node's
 *           communicator; tierio writes subfiles of one node each (target subfiles).
 * Then it reads them back (a restart), after the files were dropped from the page cache.
 *
 * Methods, side by side in one run (each goes first in turn), with the same aggregator
 * count and buffer size:
 *   mpiio         MPI_File_write_at_all / read_at_all (ROMIO cb_nodes / cb_buffer_size,
 *                 OMPIO io_ompio_num_aggregators / bytes_per_agg; in fpn one aggregator
 *                 per node file);
 *   tierio        tio_agg_declare + write / read (one aggregator per node, DRAM);
 *   tierio_route  (shared only) the mpiio calls with tierio_agg=enable.
 * Timed from a barrier until the slowest process is done: write = declaration (tierio) +
 * write + sync, durable, as a checkpoint must be; read = open's declaration (tierio) +
 * read. Verification (untimed): every byte read back equals the generator's; after the
 * shared write every process preads its particles from the file.
 * Several sizes in one run (-n list of particles per process).
 *
 *   tools/cluster/tio-cluster run --nodes 4 --np 8 --ppn 2 --mpi openmpi \
 *       --pfs-write-bps 100M --pfs-read-bps 200M -- build/openmpi/bench/tio-bench-agg-hacc */
#include "bench_common.h"

#include "agg_common.h"

#define PBYTES AGG_PARTICLE_BYTES

enum { M_MPIIO, M_TIERIO, M_ROUTE, NMETHODS };
static const char *const method_name[NMETHODS] = {"mpiio", "tierio", "tierio_route"};
enum { L_SHARED, L_FPN, NLAYOUTS };
static const char *const layout_name[NLAYOUTS] = {"shared", "fpn"};

struct ctx {
    const agg_options *o;
    long long n;               /* particles of this process */
    MPI_Offset off;            /* its bytes in the shared file */
    MPI_Offset node_off;       /* ... in its node's file */
    int node;                  /* its node's index */
    char shared[PATH_MAX], fpn[PATH_MAX], sub[PATH_MAX];
    const unsigned char *data;
    unsigned char *in;
};

/* One collective write (and sync) or read through MPI-IO; the route flag sends it
 * through tierio's MPI-IO route instead of the MPI library's own collective I/O. */
static double mpiio_access(struct ctx *c, int layout, int route, int write)
{
    MPI_Info info = agg_mpiio_info(c->o);
    bench_info_set(info, TIO_AGG_HINT_ENABLE, route ? "enable" : "disable");
    MPI_Comm comm = layout == L_SHARED ? MPI_COMM_WORLD : g_node_comm;
    if (layout == L_FPN)
        bench_info_set(info, "cb_nodes", "1");
    const char *path = layout == L_SHARED ? c->shared : c->fpn;
    MPI_Offset off = layout == L_SHARED ? c->off : c->node_off;
    MPI_File fh;
    MPI_CHECK(MPI_File_open(comm, path, write ? MPI_MODE_CREATE | MPI_MODE_WRONLY
                                              : MPI_MODE_RDONLY, info, &fh));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    if (write) {
        MPI_CHECK(MPI_File_write_at_all(fh, off, c->data, (int)(c->n * PBYTES), MPI_BYTE,
                                        MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_File_sync(fh));
    } else {
        MPI_CHECK(MPI_File_read_at_all(fh, off, c->in, (int)(c->n * PBYTES), MPI_BYTE,
                                       MPI_STATUS_IGNORE));
    }
    double t = bench_max_time(MPI_Wtime() - t0);
    MPI_CHECK(MPI_File_close(&fh));
    MPI_Info_free(&info);
    return t;
}

static MPI_Info tierio_info(struct ctx *c, int layout)
{
    MPI_Info info = agg_tierio_info(c->o);
    if (layout == L_FPN) {
        bench_info_set(info, TIO_AGG_HINT_TARGET, "subfiles");
        bench_info_set(info, TIO_AGG_HINT_SUBFILING, "1");
    }
    return info;
}

static double tierio_io(struct ctx *c, int layout, int writing)
{
    MPI_Info info = tierio_info(c, layout);
    const char *path = layout == L_SHARED ? c->shared : c->sub;
    tio_agg_t a;
    MPI_CHECK(tio_agg_open(MPI_COMM_WORLD, path,
                           writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY, info,
                           &a));
    MPI_Offset len = c->n * PBYTES;
    int id;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    MPI_CHECK(tio_agg_declare(a, len ? 1 : 0, &c->off, &len, &id));
    if (writing) {
        MPI_CHECK(tio_agg_write(a, id, c->data));
        MPI_CHECK(tio_agg_sync(a));
    } else {
        MPI_CHECK(tio_agg_read(a, id, c->in));
    }
    double t = bench_max_time(MPI_Wtime() - t0);
    MPI_CHECK(tio_agg_close(&a));
    MPI_Info_free(&info);
    return t;
}

static void remove_all(struct ctx *c)
{
    agg_unlink(c->shared);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (g_node_rank == 0)
        unlink(c->fpn);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", c->o->pfs);
    agg_unlink_target(c->sub, dir);
}

static void drop(struct ctx *c, int layout)
{
    if (!c->o->cold)
        return;
    if (layout == L_SHARED) {
        agg_drop_cache(c->shared);
        return;
    }
    agg_drop_cache(c->fpn);
    for (int k = 0; k < g_nodes; k++) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof p, "%s.%d", c->sub, k);
        agg_drop_cache(p);
    }
}

int main(int argc, char **argv)
{
    agg_setup_ompio(argc, argv);
    MPI_Init(&argc, &argv);
    agg_init_nodes();
    agg_options o = {.aggregators = 0, .buffer = 16ull << 20, .reps = 5,
                     .pfs = agg_env_or("TIERIO_PFS", bench_default_dir()), .cold = true};
    const char *sizes = "5000,27594,110376"; /* ~0.2, 1, 4 MB per process */
    unsigned layouts = 3;
    int c;
    while ((c = getopt(argc, argv, "n:a:b:r:p:L:Wh")) != -1) {
        switch (c) {
        case 'n': sizes = optarg; break;
        case 'a': o.aggregators = (int)bench_parse_u64("-a", optarg); break;
        case 'b': o.buffer = bench_parse_u64("-b", optarg); break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'p': o.pfs = optarg; break;
        case 'L':
            layouts = (strstr(optarg, "shared") ? 1u : 0u) | (strstr(optarg, "fpn") ? 2u : 0u);
            break;
        case 'W': o.cold = false; break;
        default:
            if (g_rank == 0)
                fprintf(stderr, "usage: %s [-n particles,...] [-a aggregators] [-b buffer] "
                        "[-r reps] [-p dir] [-L shared,fpn] [-W warm reads]\n", argv[0]);
            MPI_Finalize();
            return c == 'h' ? 0 : 2;
        }
    }
    if (o.reps < 1 || o.buffer == 0 || !layouts)
        bench_die("-r >= 1, -b > 0, -L shared and/or fpn");
    char lib[128];
    bench_mpi_library(lib, sizeof lib);
    if (g_rank == 0)
        fprintf(stderr, "# agg_hacc: %d ranks on %d nodes, %d aggregators, %llu-byte buffers, "
                "particles per rank %s, %d reps, %s, %s (%s)\n", g_size, g_nodes,
                agg_count(&o), o.buffer, sizes, o.reps, o.pfs, lib, agg_io_name());
    /* The node index (in the order of the nodes' lowest ranks). */
    int lead = g_node_rank == 0 ? g_rank : -1, node = 0, *leads = bench_malloc(sizeof(int) * (size_t)g_size);
    MPI_CHECK(MPI_Allgather(&lead, 1, MPI_INT, leads, 1, MPI_INT, MPI_COMM_WORLD));
    int mine_lead = g_rank;
    MPI_CHECK(MPI_Bcast(&mine_lead, 1, MPI_INT, 0, g_node_comm));
    for (int r = 0; r < g_size; r++)
        if (leads[r] >= 0 && leads[r] < mine_lead)
            node++;
    free(leads);

    double *t[NLAYOUTS][NMETHODS][2];
    for (int l = 0; l < NLAYOUTS; l++)
        for (int m = 0; m < NMETHODS; m++)
            for (int w = 0; w < 2; w++)
                t[l][m][w] = bench_malloc(sizeof(double) * (size_t)o.reps);
    for (const char *s = sizes; *s;) {
        long long n = strtoll(s, NULL, 10);
        s += strcspn(s, ",");
        s += *s == ',';
        if (n <= 0 || n * PBYTES > INT_MAX)
            bench_die("-n: particles per process between 1 and %d", INT_MAX / PBYTES);
        struct ctx cx = {.o = &o, .n = n, .node = node};
        cx.off = (MPI_Offset)g_rank * n * PBYTES;
        cx.node_off = (MPI_Offset)g_node_rank * n * PBYTES;
        snprintf(cx.shared, sizeof cx.shared, "%s/agg_hacc.shared", o.pfs);
        snprintf(cx.fpn, sizeof cx.fpn, "%s/agg_hacc.node%d", o.pfs, node);
        snprintf(cx.sub, sizeof cx.sub, "%s/agg_hacc.sub", o.pfs);
        unsigned char *data = bench_malloc((size_t)(n * PBYTES));
        cx.in = bench_malloc((size_t)(n * PBYTES));
        agg_particles(data, n, g_rank);
        cx.data = data;
        for (int l = 0; l < NLAYOUTS; l++) {
            if (!(layouts & 1u << l))
                continue;
            int nm = l == L_SHARED ? NMETHODS : 2;
            bool ok[NMETHODS] = {true, true, true};
            for (int rep = 0; rep < o.reps; rep++)
                for (int k = 0; k < nm; k++) {
                    int m = (rep + k) % nm;
                    remove_all(&cx);
                    t[l][m][0][rep] = m == M_TIERIO ? tierio_io(&cx, l, 1)
                                                    : mpiio_access(&cx, l, m == M_ROUTE, 1);
                    if (l == L_SHARED) {
                        unsigned char *got = bench_malloc((size_t)(n * PBYTES));
                        int fd = open(cx.shared, O_RDONLY);
                        ssize_t rd = fd >= 0 ? pread(fd, got, (size_t)(n * PBYTES), cx.off) : -1;
                        if (fd >= 0)
                            close(fd);
                        ok[m] = bench_all(rd == n * PBYTES &&
                                          !memcmp(got, data, (size_t)(n * PBYTES))) && ok[m];
                        free(got);
                    }
                    drop(&cx, l);
                    memset(cx.in, 0, (size_t)(n * PBYTES));
                    t[l][m][1][rep] = m == M_TIERIO ? tierio_io(&cx, l, 0)
                                                    : mpiio_access(&cx, l, m == M_ROUTE, 0);
                    ok[m] = bench_all(!memcmp(cx.in, data, (size_t)(n * PBYTES))) && ok[m];
                }
            char np[32];
            snprintf(np, sizeof np, "%lld", n);
            for (int w = 0; w < 2; w++) {
                double base = bench_median(t[l][M_MPIIO][w], o.reps);
                for (int m = 0; m < nm; m++)
                    agg_json("agg_hacc", "layout", layout_name[l], w ? "read" : "write+sync",
                             method_name[m], &o, (unsigned long long)(n * PBYTES) * g_size,
                             bench_median(t[l][m][w], o.reps), m == M_MPIIO ? 0 : base, ok[m],
                             "particles_per_rank", np);
            }
        }
        remove_all(&cx);
        free(data);
        free(cx.in);
    }
    for (int l = 0; l < NLAYOUTS; l++)
        for (int m = 0; m < NMETHODS; m++)
            for (int w = 0; w < 2; w++)
                free(t[l][m][w]);
    MPI_Comm_free(&g_node_comm);
    MPI_Finalize();
    return 0;
}
