#define _POSIX_C_SOURCE 200809L
/* Storage-topology discovery (seed 003 §4.1): the time and file operations of each way of
 * splitting MPI_COMM_WORLD by a directory, in one run, on each directory given:
 *   mpi-split-shared   MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): a communicator made
 *                      without touching any file, the floor;
 *   tierio-exhaustive  tierio's Fig. 4 (the baseline of "ratio": the seed's thorough way);
 *   tierio-heuristic   tierio's Fig. 5;
 *   tierio-hybrid      one probe per node (what `auto` picks);
 *   mpich-heuristic, mpich-exhaustive   MPICH's own MPIX_COMM_TYPE_NEIGHBORHOOD, when built
 *                      with MPICH (called through PMPI, so libtierio-pmpi does not take it);
 *                      its exhaustive variant is selected with MPIX_SPLIT_DISABLE_HEURISTIC.
 * Keys reverse the ranks. Every result is checked against tierio-exhaustive's groups
 * ("same_groups") and for MPI's order by key ("key_order"); the time is the median over
 * repetitions of the slowest rank, the methods taking turns in every repetition. File operations come from tio_nbhd_last_stats (tierio
 * only: MPICH's are not counted, null).
 *
 * Run: mpiexec -n 16 tio-bench-topo-discovery [-r reps] [-d dir]...
 * Default directories: $TIERIO_NODE_LOCAL and $TIERIO_PFS when set (the emulated cluster
 * sets both), else $TIERIO_BENCH_DIR or /tmp. A fresh subdirectory is made in each (by
 * every node's first rank) and removed at the end. */
#include "bench_common.h"

#include <tierio.h>

enum method { SPLIT_SHARED, T_EXHAUSTIVE, T_HEURISTIC, T_HYBRID, M_HEURISTIC, M_EXHAUSTIVE, NMETHODS };
static const char *method_name[NMETHODS] = {"mpi-split-shared", "tierio-exhaustive",
                                            "tierio-heuristic", "tierio-hybrid",
                                            "mpich-heuristic", "mpich-exhaustive"};

static int rank, size, nnodes, node_leader;

static int available(enum method m)
{
#ifdef MPIX_COMM_TYPE_NEIGHBORHOOD
    (void)m;
    return 1;
#else
    return m != M_HEURISTIC && m != M_EXHAUSTIVE;
#endif
}

/* One split of MPI_COMM_WORLD by dir with method m. */
static MPI_Comm run(enum method m, const char *dir)
{
    MPI_Comm c = MPI_COMM_NULL;
    int key = size - rank;
    if (m == SPLIT_SHARED) {
        MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, &c));
        return c;
    }
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    if (m == M_HEURISTIC || m == M_EXHAUSTIVE) {
#ifdef MPIX_COMM_TYPE_NEIGHBORHOOD
        bench_info_set(info, "nbhd_common_dirname", dir);
        if (m == M_EXHAUSTIVE)
            setenv("MPIX_SPLIT_DISABLE_HEURISTIC", "1", 1);
        MPI_CHECK(PMPI_Comm_split_type(MPI_COMM_WORLD, MPIX_COMM_TYPE_NEIGHBORHOOD, key, info, &c));
        unsetenv("MPIX_SPLIT_DISABLE_HEURISTIC");
#endif
    } else {
        enum tio_nbhd_algorithm a = m == T_EXHAUSTIVE   ? TIO_NBHD_EXHAUSTIVE
                                    : m == T_HEURISTIC ? TIO_NBHD_HEURISTIC
                                                       : TIO_NBHD_HYBRID;
        bench_info_set(info, TIO_NBHD_HINT_ALGORITHM, tio_nbhd_algorithm_name(a));
        MPI_CHECK(tio_comm_split_neighborhood(MPI_COMM_WORLD, dir, key, info, &c));
    }
    MPI_CHECK(MPI_Info_free(&info));
    return c;
}

/* Lowest world rank of this process's group (-1: none), and whether the group's order is
 * by key (the keys reverse the ranks: world ranks must decrease along the new ranks). */
static void describe(MPI_Comm c, int *group, int *ordered)
{
    *group = -1;
    *ordered = 1;
    if (c == MPI_COMM_NULL)
        return;
    int n;
    MPI_CHECK(MPI_Comm_size(c, &n));
    int *w = bench_malloc((size_t)n * sizeof *w);
    MPI_CHECK(MPI_Allgather(&rank, 1, MPI_INT, w, 1, MPI_INT, c));
    *group = w[0];
    for (int i = 0; i < n; i++) {
        if (w[i] < *group)
            *group = w[i];
        if (i > 0 && w[i] >= w[i - 1])
            *ordered = 0;
    }
    free(w);
}

static void bench_dir(const char *base, int reps, const char *lib)
{
    /* A fresh directory in base: each node's first rank makes it (nodes sharing base see
     * it made already). */
    char dir[4096];
    long tag = (long)getpid();
    MPI_CHECK(MPI_Bcast(&tag, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    snprintf(dir, sizeof dir, "%s/topo-bench.%ld", base, tag);
    if (node_leader && mkdir(dir, 0777) != 0 && errno != EEXIST)
        bench_die("mkdir %s: %s", dir, strerror(errno));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    struct result {
        int done, same, ordered, groups;
        double med, lo;
        struct tio_nbhd_stats st;
    } res[NMETHODS];
    memset(res, 0, sizeof res);
    int *ref = bench_malloc((size_t)size * sizeof *ref), *got = bench_malloc((size_t)size * sizeof *got);
    /* The groups, once per method; tierio-exhaustive first: its groups are the reference.
     * This first call is also every method's warm-up. */
    enum method order[NMETHODS];
    int nm = 0;
    for (int m = T_EXHAUSTIVE; m <= NMETHODS; m++) {
        enum method me = m == NMETHODS ? SPLIT_SHARED : (enum method)m;
        if (!available(me))
            continue;
        order[nm++] = me;
        struct result *r = &res[me];
        MPI_Comm c = run(me, dir);
        int group, ordered;
        describe(c, &group, &ordered);
        if (c != MPI_COMM_NULL)
            MPI_CHECK(MPI_Comm_free(&c));
        MPI_CHECK(MPI_Allgather(&group, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD));
        if (me == T_EXHAUSTIVE)
            memcpy(ref, got, (size_t)size * sizeof *ref);
        r->same = memcmp(ref, got, (size_t)size * sizeof *ref) == 0;
        for (int k = 0; k < size; k++)
            r->groups += got[k] == k;
        r->ordered = bench_all(ordered);
    }
    /* The timings, methods interleaved in every repetition: a machine whose load drifts
     * (shared CI hosts) weighs on all methods alike. */
    double *t = bench_malloc((size_t)reps * NMETHODS * sizeof *t);
    for (int i = 0; i < reps; i++)
        for (int k = 0; k < nm; k++) {
            enum method me = order[k];
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            double t0 = MPI_Wtime();
            MPI_Comm c = run(me, dir);
            t[me * reps + i] = bench_max_time(MPI_Wtime() - t0);
            if (c != MPI_COMM_NULL)
                MPI_CHECK(MPI_Comm_free(&c));
            if (me == T_EXHAUSTIVE || me == T_HEURISTIC || me == T_HYBRID)
                tio_nbhd_last_stats(&res[me].st);
        }
    for (int k = 0; k < nm; k++) {
        struct result *r = &res[order[k]];
        const double *tm = t + order[k] * reps;
        r->med = bench_median(tm, reps);
        r->lo = tm[0];
        for (int i = 1; i < reps; i++)
            r->lo = tm[i] < r->lo ? tm[i] : r->lo;
        r->done = 1;
    }

    double base_time = res[T_EXHAUSTIVE].med;
    double mpich_time = res[M_HEURISTIC].done ? res[M_HEURISTIC].med : NAN;
    for (int me = 0; me < NMETHODS && rank == 0; me++) {
        const struct result *r = &res[me];
        if (!r->done)
            continue;
        int tierio = me == T_EXHAUSTIVE || me == T_HEURISTIC || me == T_HYBRID;
        bench_json j;
        bench_json_begin(&j, "topo_discovery");
        bench_json_str(&j, "mpi", lib);
        bench_json_str(&j, "dir", base);
        bench_json_str(&j, "method", method_name[me]);
        bench_json_int(&j, "ranks", size);
        bench_json_int(&j, "nodes", nnodes);
        bench_json_int(&j, "reps", reps);
        bench_json_num(&j, "time_ms", r->med * 1e3);
        bench_json_num(&j, "time_min_ms", r->lo * 1e3);
        if (tierio) {
            bench_json_int(&j, "fileops", r->st.fileops_all);
            bench_json_int(&j, "creates", r->st.creates_all);
            bench_json_int(&j, "lookups", r->st.lookups_all);
            bench_json_int(&j, "listings", r->st.listings_all);
            bench_json_int(&j, "checks", r->st.checks_all);
            bench_json_int(&j, "removals", r->st.removals_all);
        } else {
            /* the floor makes none; MPICH's are not counted */
            bench_json_num(&j, "fileops", me == SPLIT_SHARED ? 0 : NAN);
        }
        bench_json_int(&j, "groups", r->groups);
        bench_json_bool(&j, "same_groups", r->same);
        bench_json_bool(&j, "key_order", r->ordered);
        bench_json_str(&j, "baseline", method_name[T_EXHAUSTIVE]);
        bench_json_num(&j, "ratio", base_time / r->med);
        bench_json_num(&j, "ratio_vs_mpich_heuristic", mpich_time / r->med);
        bench_json_end(&j);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (node_leader)
        rmdir(dir); /* a second leader of a shared directory finds it gone */
    free(ref);
    free(got);
    free(t);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int reps = 20, ndirs = 0;
    const char *dirs[16];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-r") && i + 1 < argc) {
            reps = (int)bench_parse_u64("-r", argv[++i]);
        } else if (!strcmp(argv[i], "-d") && i + 1 < argc && ndirs < 16) {
            dirs[ndirs++] = argv[++i];
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: tio-bench-topo-discovery [-r reps] [-d dir]...\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (reps < 1)
        bench_die("-r must be at least 1");
    if (ndirs == 0) {
        const char *nl = getenv("TIERIO_NODE_LOCAL"), *pfs = getenv("TIERIO_PFS");
        if (nl && *nl)
            dirs[ndirs++] = nl;
        if (pfs && *pfs)
            dirs[ndirs++] = pfs;
        if (ndirs == 0)
            dirs[ndirs++] = bench_default_dir();
    }

    MPI_Comm node;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nrank;
    MPI_CHECK(MPI_Comm_rank(node, &nrank));
    MPI_CHECK(MPI_Comm_free(&node));
    node_leader = nrank == 0;
    MPI_CHECK(MPI_Allreduce(&node_leader, &nnodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

    char lib[128];
    bench_mpi_library(lib, sizeof lib);
    if (rank == 0)
        fprintf(stderr, "# topo_discovery: %d ranks on %d nodes, %d repetitions, %s\n", size,
                nnodes, reps, lib);
    for (int d = 0; d < ndirs; d++)
        bench_dir(dirs[d], reps, lib);
    MPI_Finalize();
    return 0;
}
