#define _POSIX_C_SOURCE 200809L
/* What multi-level checkpointing costs the application (seed 003 §6, FILE_SYNC_LOCAL):
 * an application loop of K steps, each a compute phase on its state followed by a
 * checkpoint of that state (tio_ckpt_begin, tio_ckpt_write, tio_ckpt_commit), run four
 * ways:
 *   none              compute only: the application's own time;
 *   global_sync       single-level: the checkpoint goes straight to the global directory
 *                     (parallel file system) and commit returns when it is durable there;
 *   multilevel_async  node-local directory + drain to the global one in the background;
 *   local_only        node-local directory only (what the local level alone costs).
 * Each run's time includes closing the handle, i.e. waiting for the last drain: nothing
 * is left in flight.
 *
 * The compute phase is a loop of passes over the state that runs for -c seconds of wall
 * time on every process, then a barrier (the step's own synchronisation). So every run
 * computes for the same time and
 *   overhead_seconds = run time - the "none" run's time
 * is exactly the time the application could not compute because of checkpointing.
 * hidden_fraction (multilevel_async) = 1 - its overhead / global_sync's overhead is the
 * share of the checkpointing time taken off the application when the local level replaces
 * the global one; hidden_fraction_before_close is the same without the final close (where
 * the application waits for the last drain, close_seconds), i.e. the steady state of a
 * long run. drain_hidden_fraction = 1 - (its overhead - local_only's) / global_sync's
 * overhead is the share of the global write time the drain keeps off the application: what
 * the application still sees of the global write, the local checkpoint's own cost (which
 * local_only measures) aside. What the background drain
 * takes from the computation itself (CPU, memory bandwidth) shows as compute_rate: passes
 * per second of compute relative to the "none" run (1 = no slowdown).
 * The modes run interleaved, -r times; figures are medians. After each run a restart
 * (new handle) reads the last version back and every byte is compared with the state
 * ("verified"; restart_level says from which level).
 *
 * -t initialises MPI with MPI_THREAD_MULTIPLE: then the drain thread completes each drain
 * (agreement, global manifest) by itself; without it that completion happens in the
 * application's next commit.
 *
 * Run it on the emulated cluster with the shared directory throttled, e.g.
 *   tools/cluster/tio-cluster run --nodes 4 --np 8 --ppn 2 --mpi openmpi \
 *       --pfs-write-bps 200000000 -- build/openmpi/bench/tio-bench-ckpt-drain */
#include "bench_common.h"

#include <fcntl.h>
#include <limits.h>
#include <tierio.h>

typedef struct {
    size_t bytes; /* state per process */
    int iters, reps;
    bool threads; /* MPI_THREAD_MULTIPLE: the drain thread completes the drain itself */
    double compute;
    const char *pfs, *local;
} options;

enum mode { M_NONE, M_GLOBAL, M_ASYNC, M_LOCAL, NMODES };
static const char *const mode_name[NMODES] = {"none", "global_sync", "multilevel_async",
                                              "local_only"};

static int g_rank, g_size;

static const char *env_or(const char *var, const char *dflt)
{
    const char *v = getenv(var);
    return v && *v ? v : dflt;
}

static options parse(int argc, char **argv)
{
    options o = {.bytes = 16u << 20, .iters = 10, .reps = 3, .compute = 1.0,
                 .pfs = env_or("TIERIO_PFS", bench_default_dir()),
                 .local = env_or("TIERIO_NODE_LOCAL", "/tmp")};
    int c;
    while ((c = getopt(argc, argv, "s:k:r:c:g:l:th")) != -1) {
        switch (c) {
        case 's': o.bytes = (size_t)bench_parse_u64("-s", optarg); break;
        case 'k': o.iters = (int)bench_parse_u64("-k", optarg); break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'c': o.compute = bench_parse_double("-c", optarg); break;
        case 'g': o.pfs = optarg; break;
        case 'l': o.local = optarg; break;
        case 't': o.threads = true; break;
        default:
            if (g_rank == 0)
                fprintf(stderr, "usage: %s [-s state bytes/process] [-k steps] "
                        "[-r repetitions] [-c compute seconds/step] [-g pfs dir] "
                        "[-l node-local dir] [-t]\n", argv[0]);
            MPI_Finalize();
            exit(c == 'h' ? 0 : 2);
        }
    }
    o.bytes = (o.bytes + 7) & ~(size_t)7;
    if (o.bytes == 0 || o.iters < 1 || o.reps < 1 || o.compute <= 0)
        bench_die("-s, -k, -r and -c must be positive");
    return o;
}

/* One pass of the "simulation": every word of the state changes. */
static void pass(uint64_t *s, size_t n, uint64_t step)
{
    for (size_t i = 0; i < n; i++)
        s[i] = s[i] * 6364136223846793005ull + step + i;
}

static void initial(uint64_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        s[i] = bench_mix64(((uint64_t)g_rank << 40) ^ i);
}

static MPI_Info info_for(enum mode m, const options *o)
{
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    if (m == M_ASYNC || m == M_LOCAL)
        bench_info_set(info, TIO_CKPT_HINT_LOCAL_DIR, o->local);
    if (m == M_ASYNC || m == M_GLOBAL)
        bench_info_set(info, TIO_CKPT_HINT_GLOBAL_DIR, o->pfs);
    bench_info_set(info, TIO_CKPT_HINT_KEEP, "1");
    return info;
}

static const char *set_name(enum mode m)
{
    static char name[64];
    snprintf(name, sizeof name, "ckpt_drain_%s", mode_name[m]);
    return name;
}

struct result {
    double seconds;   /* the loop, slowest process */
    double in_calls;  /* in checkpoint calls, slowest process */
    double in_close;  /* of which in the final close (the last drain), slowest process */
    double rate;      /* passes per second of compute, summed over processes */
};

static struct result run(enum mode m, const options *o, uint64_t *s)
{
    size_t n = o->bytes / 8;
    tio_ckpt_t ck = NULL;
    uint64_t step = 0;
    long long passes = 0;
    initial(s, n);
    if (m != M_NONE) {
        MPI_Info info = info_for(m, o);
        MPI_CHECK(tio_ckpt_open(MPI_COMM_WORLD, set_name(m), info, &ck));
        MPI_CHECK(MPI_Info_free(&info));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime(), in_calls = 0, in_close = 0, computing = 0;
    for (int it = 1; it <= o->iters; it++) {
        double c0 = MPI_Wtime(), c;
        do {
            pass(s, n, step++);
            passes++;
        } while ((c = MPI_Wtime() - c0) < o->compute);
        computing += c;
        /* the step's own synchronisation (a halo exchange, a reduction) */
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        if (m == M_NONE)
            continue;
        double a = MPI_Wtime();
        MPI_CHECK(tio_ckpt_begin(ck, it));
        MPI_CHECK(tio_ckpt_write(ck, "state", s, o->bytes)); /* checksummed on the way */
        MPI_CHECK(tio_ckpt_commit(ck));
        in_calls += MPI_Wtime() - a;
    }
    if (ck) {
        double a = MPI_Wtime();
        MPI_CHECK(tio_ckpt_close(&ck));
        in_close = MPI_Wtime() - a;
        in_calls += in_close;
    }
    struct result r;
    r.seconds = bench_max_time(MPI_Wtime() - t0);
    r.in_calls = bench_max_time(in_calls);
    r.in_close = bench_max_time(in_close);
    double rate = (double)passes / computing;
    MPI_CHECK(MPI_Allreduce(&rate, &r.rate, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    return r;
}

/* Restart the last version of mode m's set and compare it with the state. */
static bool verify(enum mode m, const options *o, const uint64_t *s, int *level)
{
    MPI_Info info = info_for(m, o);
    tio_ckpt_t ck;
    MPI_CHECK(tio_ckpt_open(MPI_COMM_WORLD, set_name(m), info, &ck));
    MPI_CHECK(MPI_Info_free(&info));
    long long v;
    MPI_CHECK(tio_ckpt_restart(ck, &v, level));
    bool ok = v == o->iters;
    char path[PATH_MAX];
    if (ok) {
        MPI_CHECK(tio_ckpt_route(ck, "state", path, sizeof path));
        char *back = bench_malloc(o->bytes);
        int fd = open(path, O_RDONLY);
        SYS_CHECK(fd >= 0, path);
        size_t done = 0;
        while (done < o->bytes) {
            ssize_t r = read(fd, back + done, o->bytes - done);
            SYS_CHECK(r >= 0, path);
            if (r == 0)
                break;
            done += (size_t)r;
        }
        close(fd);
        ok = done == o->bytes && memcmp(back, s, o->bytes) == 0;
        free(back);
    }
    MPI_CHECK(tio_ckpt_close(&ck));
    return bench_all(ok);
}

/* Remove the set of mode m: its directories, by one process per directory. */
static void clean(enum mode m, const options *o, MPI_Comm nbhd)
{
    char cmd[2 * PATH_MAX];
    int nr;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Comm_rank(nbhd, &nr));
    if (nr == 0 && (m == M_ASYNC || m == M_LOCAL)) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s/%s'", o->local, set_name(m));
        SYS_CHECK(system(cmd) == 0, cmd);
    }
    if (g_rank == 0 && (m == M_ASYNC || m == M_GLOBAL)) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s/%s'", o->pfs, set_name(m));
        SYS_CHECK(system(cmd) == 0, cmd);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    /* -t asks for MPI_THREAD_MULTIPLE (looked for before MPI_Init, which comes first). */
    int want = MPI_THREAD_SINGLE, provided;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-t"))
            want = MPI_THREAD_MULTIPLE;
    MPI_Init_thread(&argc, &argv, want, &provided);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    options o = parse(argc, argv);
    if (o.threads && provided != MPI_THREAD_MULTIPLE)
        bench_die("-t: the MPI library did not provide MPI_THREAD_MULTIPLE");
    uint64_t *s = bench_malloc(o.bytes);

    MPI_Comm nbhd;
    MPI_CHECK(tio_comm_split_neighborhood(MPI_COMM_WORLD, o.local, g_rank, MPI_INFO_NULL,
                                          &nbhd));
    if (nbhd == MPI_COMM_NULL)
        bench_die("this process cannot use the node-local directory %s", o.local);

    char lib[128];
    bench_mpi_library(lib, sizeof lib);
    if (g_rank == 0)
        fprintf(stderr, "# ckpt_drain: %d processes, %.1f MB state each (%.1f MB per "
                "checkpoint), %d steps of %.2f s compute, %d repetitions, local %s, "
                "global %s, %s%s\n", g_size, o.bytes / 1e6, o.bytes * (double)g_size / 1e6,
                o.iters, o.compute, o.reps, o.local, o.pfs, lib,
                o.threads ? ", MPI_THREAD_MULTIPLE" : "");

    struct result *all = bench_malloc(sizeof *all * NMODES * (size_t)o.reps);
    bool ok[NMODES] = {true, true, true, true};
    int level[NMODES] = {0};
    for (int rep = 0; rep < o.reps; rep++) {
        for (int m = 0; m < NMODES; m++) {
            clean((enum mode)m, &o, nbhd);
            all[m * o.reps + rep] = run((enum mode)m, &o, s);
            if (m != M_NONE)
                ok[m] = verify((enum mode)m, &o, s, &level[m]) && ok[m];
            clean((enum mode)m, &o, nbhd);
        }
    }
    double sec[NMODES], calls[NMODES], closing[NMODES], rate[NMODES];
    double *v = bench_malloc(sizeof(double) * (size_t)o.reps);
    for (int m = 0; m < NMODES; m++) {
        double *out[4] = {&sec[m], &calls[m], &closing[m], &rate[m]};
        for (int k = 0; k < 4; k++) {
            for (int rep = 0; rep < o.reps; rep++) {
                const struct result *r = &all[m * o.reps + rep];
                v[rep] = k == 0 ? r->seconds : k == 1 ? r->in_calls
                                             : k == 2 ? r->in_close : r->rate;
            }
            *out[k] = bench_median(v, o.reps);
        }
    }

    if (g_rank == 0) {
        double ovh_global = sec[M_GLOBAL] - sec[M_NONE];
        for (int m = 0; m < NMODES; m++) {
            double ovh = sec[m] - sec[M_NONE];
            bench_json j;
            bench_json_begin(&j, "ckpt_drain");
            bench_json_str(&j, "mode", mode_name[m]);
            bench_json_int(&j, "ranks", g_size);
            bench_json_bool(&j, "thread_multiple", o.threads);
            bench_json_num(&j, "bytes_per_checkpoint", (double)o.bytes * g_size);
            bench_json_int(&j, "steps", o.iters);
            bench_json_num(&j, "compute_seconds_per_step", o.compute);
            bench_json_num(&j, "seconds", sec[m]);
            bench_json_num(&j, "overhead_seconds", ovh);
            bench_json_num(&j, "checkpoint_call_seconds", m == M_NONE ? 0.0 : calls[m]);
            bench_json_num(&j, "close_seconds", m == M_NONE ? 0.0 : closing[m]);
            bench_json_num(&j, "compute_rate", rate[m] / rate[M_NONE]);
            bench_json_str(&j, "baseline", mode_name[M_GLOBAL]);
            bench_json_num(&j, "ratio", m == M_NONE ? NAN : ovh_global / ovh);
            if (m == M_ASYNC) {
                bench_json_num(&j, "hidden_fraction", 1.0 - ovh / ovh_global);
                /* the same without the wait for the last drain at close (steady state) */
                bench_json_num(&j, "hidden_fraction_before_close",
                               1.0 - (ovh - closing[m]) / (ovh_global - closing[M_GLOBAL]));
                double ovh_local = sec[M_LOCAL] - sec[M_NONE];
                bench_json_num(&j, "drain_hidden_fraction",
                               1.0 - (ovh - ovh_local) / ovh_global);
            }
            if (m != M_NONE) {
                bench_json_int(&j, "restart_level", level[m]);
                bench_json_bool(&j, "verified", ok[m]);
            }
            bench_json_int(&j, "reps", o.reps);
            bench_json_str(&j, "mpi", lib);
            bench_json_end(&j);
        }
    }
    free(v);
    free(all);
    free(s);
    MPI_CHECK(MPI_Comm_free(&nbhd));
    MPI_Finalize();
    return ok[M_GLOBAL] && ok[M_ASYNC] && ok[M_LOCAL] ? 0 : 1;
}
