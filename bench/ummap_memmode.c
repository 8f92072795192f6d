#define _GNU_SOURCE
/* Static versus dynamic memory mode of the ummap engine: the seed's experiment (seed 000
 * §6.2, Figure 6.4: 8 processes with delayed starts and random sizes of 1-4 GB under a
 * node limit of 8 GB, mSTREAM; dynamic 2.06x faster), scaled to this machine.
 *
 * P processes (-n, default 8) share one node limit L (-m, default 256 MiB: L/P each in
 * static mode). Process i starts i*D seconds after the first (-D, default 0.1 s) and maps
 * its own file of a random size between L/P and 4L/P (seeded, -s; the same sizes for both
 * modes) with ummap (segments of -g bytes, default 1 MiB; policy -p, default FIFO). In it
 * live the three STREAM arrays a, b, c; the process initialises them and runs K (-k,
 * default 10) repetitions of copy, scale, add, triad, then checks every element against the
 * same recurrence computed per element, and unmaps. Arrays larger than the process's
 * memory are evicted to and reloaded from the file as the kernels sweep them.
 *
 * The processes are forked by this program, one group per mode: UMMAP_MEMCONFIG=static |
 * dynamic, UMMAP_MEM_LIMIT=L, UMMAP_NODE_PROCS=P and a UMMAP_NODE_KEY of their own (so
 * that the group is exactly these P processes). Modes alternate over -r repetitions
 * (default 1), static first.
 *
 * Output: per process one JSON line (field "process": start and end relative to the
 * group's start, size, peak resident bytes seen between kernels, evictions, segments read
 * and written); per mode one line with the makespan (first start to last end) as
 * "seconds"; the dynamic line has ratio = static makespan / dynamic makespan (the seed's
 * 2.06x; median over repetitions). */
#include "ummap_common.h"

#include <signal.h>
#include <sys/wait.h>

#define SCALAR 3.0
#define MAXP 64

typedef struct {
    int nprocs, kreps, reps, ptype;
    size_t limit, seg_size;
    double delay;
    uint64_t seed;
    const char *dir;
} options;

static void usage(const char *prog)
{
    bench_usage("usage: %s [-n procs] [-m bytes] [-D seconds] [-k reps] [-g bytes] [-p policy]\n"
                "          [-r reps] [-s seed] [-d dir]\n"
                "  -n procs   processes (default 8, at most %d)\n"
                "  -m bytes   node memory limit UMMAP_MEM_LIMIT (default 256Mi)\n"
                "  -D sec     delay between process starts (default 0.1)\n"
                "  -k reps    STREAM repetitions per process (default 10)\n"
                "  -g bytes   segment size (default 1Mi)\n"
                "  -p policy  evict policy 0..5 (default 0, FIFO)\n"
                "  -r reps    repetitions of the static/dynamic pair (default 1)\n"
                "  -s seed    seed of the sizes (default 1)\n"
                "  -d dir     directory of the files (default $TIERIO_BENCH_DIR or /tmp)\n",
                prog, MAXP);
}

static options parse_options(int argc, char **argv)
{
    options o = {.nprocs = 8, .kreps = 10, .reps = 1, .ptype = UMMAP_PTYPE_FIFO,
                 .limit = 256u << 20, .seg_size = 1u << 20, .delay = 0.1, .seed = 1,
                 .dir = bench_default_dir()};
    int c;
    while ((c = bench_getopt(argc, argv, "n:m:D:k:g:p:r:s:d:h", usage)) != -1) {
        switch (c) {
        case 'n': o.nprocs = (int)bench_parse_u64("-n", optarg); break;
        case 'm': o.limit = (size_t)bench_parse_u64("-m", optarg); break;
        case 'D': o.delay = bench_parse_double("-D", optarg); break;
        case 'k': o.kreps = (int)bench_parse_u64("-k", optarg); break;
        case 'g': o.seg_size = um_parse_segsize("-g", optarg); break;
        case 'p': o.ptype = (int)bench_parse_u64("-p", optarg); break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 's': o.seed = bench_parse_u64("-s", optarg); break;
        case 'd': o.dir = optarg; break;
        }
    }
    if (o.nprocs < 1 || o.nprocs > MAXP) {
        bench_die("-n: 1..%d processes", MAXP);
    }
    if (o.kreps < 1 || o.kreps > 30) { /* values grow 15x per repetition */
        bench_die("-k: 1..30 repetitions");
    }
    if (o.reps < 1 || o.ptype < 0 || o.ptype > 5 || !(o.delay >= 0)) {
        bench_die("-r at least 1, -p 0..5, -D not negative");
    }
    if (o.limit / (size_t)o.nprocs < 2 * o.seg_size) {
        bench_die("-m: each process's share must hold at least 2 segments");
    }
    return o;
}

/* ---- one process ------------------------------------------------------------------- */

typedef struct {
    double start, end; /* seconds since the group's start */
    size_t size, peak_resident;
    uint64_t evictions, seg_reads, seg_writes;
    int ok;
} proc_result;

static inline double a_init(size_t i)
{
    return 1.0 + (double)(i % 4096) / 4096.0;
}

static bool check_arrays(const double *a, const double *b, const double *c, size_t n, int k)
{
    for (size_t i = 0; i < n; i++) {
        double x = a_init(i), y = 2.0, z = 0.0;
        for (int r = 0; r < k; r++) {
            z = x;
            y = SCALAR * z;
            z = x + y;
            x = y + SCALAR * z;
        }
        if (fabs(a[i] - x) > 1e-12 * fabs(x) || fabs(b[i] - y) > 1e-12 * fabs(y) ||
            fabs(c[i] - z) > 1e-12 * fabs(z)) {
            fprintf(stderr, "ummap_memmode: element %zu is (%g,%g,%g), expected (%g,%g,%g)\n",
                    i, a[i], b[i], c[i], x, y, z);
            return false;
        }
    }
    return true;
}

static void note_resident(void *base, proc_result *r)
{
    tio_ummap_stats_t s;
    UM_CHECK(tio_ummap_stats(base, &s));
    if (s.resident > r->peak_resident) {
        r->peak_resident = s.resident;
    }
}

static void child(const options *o, const char *path, size_t size, double t0, double start_at,
                  proc_result *r)
{
    struct timespec ts;
    double wake = start_at;
    ts.tv_sec = (time_t)wake;
    ts.tv_nsec = (long)((wake - (double)ts.tv_sec) * 1e9);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
    r->start = um_now() - t0;
    r->size = size;
    int fd = um_open_file(path, (off_t)size, true);
    tio_ummap_opts_t uo = TIO_UMMAP_OPTS_INIT;
    uo.size = size;
    uo.seg_size = o->seg_size;
    uo.prot = PROT_READ | PROT_WRITE;
    uo.fd = fd;
    uo.read_file = 1;
    uo.ptype = o->ptype;
    void *base = NULL;
    UM_CHECK(tio_ummap_open(&uo, &base));
    close(fd);
    const size_t n = size / (3 * sizeof(double));
    double *a = base, *b = a + n, *c = b + n;
    for (size_t i = 0; i < n; i++) {
        a[i] = a_init(i);
        b[i] = 2.0;
        c[i] = 0.0;
    }
    note_resident(base, r);
    for (int k = 0; k < o->kreps; k++) {
        for (size_t i = 0; i < n; i++) {
            c[i] = a[i];
        }
        note_resident(base, r);
        for (size_t i = 0; i < n; i++) {
            b[i] = SCALAR * c[i];
        }
        note_resident(base, r);
        for (size_t i = 0; i < n; i++) {
            c[i] = a[i] + b[i];
        }
        note_resident(base, r);
        for (size_t i = 0; i < n; i++) {
            a[i] = b[i] + SCALAR * c[i];
        }
        note_resident(base, r);
    }
    r->ok = check_arrays(a, b, c, n, o->kreps);
    tio_ummap_stats_t s;
    UM_CHECK(tio_ummap_stats(base, &s));
    r->evictions = s.evictions, r->seg_reads = s.seg_reads, r->seg_writes = s.seg_writes;
    UM_CHECK(umunmap(base, 0));
    r->end = um_now() - t0;
    SYS_CHECK(unlink(path) == 0, path);
}

/* ---- one group --------------------------------------------------------------------- */

/* What an interrupted run must undo: the running children, their files and their group's
 * object in /dev/shm (nobody else removes it when every member is killed). */
static pid_t g_pids[MAXP];
static char g_paths[MAXP][4096];
static char g_key[64];
static int g_npids;

static void cleanup(void)
{
    if (getpid() != um_parent) { /* a child inherits the exit handler: it owns nothing */
        return;
    }
    bool killed = false;
    for (int i = 0; i < g_npids; i++) {
        if (g_pids[i] > 0) {
            kill(g_pids[i], SIGKILL);
            waitpid(g_pids[i], NULL, 0);
            g_pids[i] = 0;
            unlink(g_paths[i]);
            killed = true;
        }
    }
    if (killed) {
        um_remove_node_objects(g_key);
    }
}

/* Only what is async-signal-safe: stop the children; the rest is done by um_interrupted(). */
static void on_signal(int sig)
{
    um_signal = sig;
    for (int i = 0; i < g_npids; i++) {
        if (g_pids[i] > 0) {
            kill(g_pids[i], SIGKILL);
        }
    }
}

/* Run the P processes in one mode; returns the makespan, or NAN if a process failed. */
static double run_group(const options *o, const char *mode, int rep, const size_t *sizes,
                        proc_result *res, bool *ok)
{
    int pfd[MAXP][2];
    char key[64], limit[32], procs[16];
    snprintf(key, sizeof key, "tierio-bench-memmode-%d-%s-%d", (int)getpid(), mode, rep);
    snprintf(limit, sizeof limit, "%zu", o->limit);
    snprintf(procs, sizeof procs, "%d", o->nprocs);
    snprintf(g_key, sizeof g_key, "%s", key);
    um_interrupted();
    fflush(NULL);
    /* no signal between a fork and the record of its pid: the handler must see them all */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &old);
    double t0 = um_now() + 0.05; /* every child is forked before the first starts */
    for (int i = 0; i < o->nprocs; i++) {
        snprintf(g_paths[i], sizeof g_paths[i], "%s/ummap_memmode.%d.%s.%d", o->dir,
                 (int)getpid(), mode, i);
    }
    g_npids = o->nprocs;
    for (int i = 0; i < o->nprocs; i++) {
        SYS_CHECK(pipe(pfd[i]) == 0, "pipe");
        pid_t pid = fork();
        SYS_CHECK(pid >= 0, "fork");
        if (pid == 0) {
            um_child_signals();
            sigprocmask(SIG_SETMASK, &old, NULL);
            for (int j = 0; j <= i; j++) {
                close(pfd[j][0]);
            }
            /* read at the first ummap() of this fresh process */
            setenv("UMMAP_MEMCONFIG", mode, 1);
            setenv("UMMAP_MEM_LIMIT", limit, 1);
            setenv("UMMAP_NODE_PROCS", procs, 1);
            setenv("UMMAP_NODE_KEY", key, 1);
            proc_result r;
            memset(&r, 0, sizeof r);
            child(o, g_paths[i], sizes[i], t0, t0 + o->delay * i, &r);
            ssize_t w = write(pfd[i][1], &r, sizeof r);
            _exit(w == (ssize_t)sizeof r ? 0 : 4);
        }
        g_pids[i] = pid;
        close(pfd[i][1]);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    *ok = true;
    double makespan = 0;
    for (int i = 0; i < o->nprocs; i++) {
        int status = 0;
        pid_t w;
        while ((w = waitpid(g_pids[i], &status, 0)) < 0 && errno == EINTR) {
        }
        SYS_CHECK(w == g_pids[i], "waitpid");
        g_pids[i] = 0;
        unlink(g_paths[i]); /* the child removed it, unless it failed */
        ssize_t got = read(pfd[i][0], &res[i], sizeof res[i]);
        close(pfd[i][0]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != (ssize_t)sizeof res[i]) {
            fprintf(stderr, "ummap_memmode: %s process %d %s %d\n", mode, i,
                    WIFSIGNALED(status) ? "was killed by signal" : "exited with status",
                    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
            memset(&res[i], 0, sizeof res[i]);
            *ok = false;
            continue;
        }
        *ok &= res[i].ok != 0;
        if (res[i].end > makespan) {
            makespan = res[i].end;
        }
    }
    g_npids = 0;
    if (um_signal != 0) {
        um_remove_node_objects(key); /* every member was killed */
        um_interrupted();
    }
    return makespan;
}

int main(int argc, char **argv)
{
    options o = parse_options(argc, argv);
    um_catch_interrupts(cleanup, on_signal);

    /* sizes: uniform between the share and 4 shares, whole segments, multiple of 48 bytes
     * (three arrays of doubles) by construction of the segment multiple */
    size_t sizes[MAXP], share = o.limit / (size_t)o.nprocs, total = 0;
    uint64_t s = bench_mix64(o.seed) | 1;
    for (int i = 0; i < o.nprocs; i++) {
        size_t lo = share / o.seg_size, hi = 4 * share / o.seg_size;
        sizes[i] = (lo + (size_t)(um_rand(&s) % (hi - lo + 1))) * o.seg_size;
        total += sizes[i];
    }
    fprintf(stderr, "# ummap_memmode: %d processes, node limit %zu B (static share %zu B), "
            "sizes %zu B in total, start delay %g s, %d STREAM reps, segments %zu B, policy %d, "
            "%d reps\n", o.nprocs, o.limit, share, total, o.delay, o.kreps, o.seg_size, o.ptype,
            o.reps);

    static const char *const modes[2] = {"static", "dynamic"};
    double *span[2] = {bench_malloc((size_t)o.reps * sizeof(double)),
                       bench_malloc((size_t)o.reps * sizeof(double))};
    bool ok[2] = {true, true};
    for (int rep = 0; rep < o.reps; rep++) {
        for (int md = 0; md < 2; md++) {
            proc_result res[MAXP];
            bool gok = false;
            span[md][rep] = run_group(&o, modes[md], rep, sizes, res, &gok);
            ok[md] &= gok;
            for (int i = 0; i < o.nprocs; i++) {
                bench_json j;
                bench_json_begin(&j, "ummap_memmode");
                bench_json_str(&j, "mode", modes[md]);
                bench_json_int(&j, "rep", rep);
                bench_json_int(&j, "process", i);
                bench_json_int(&j, "size", (long long)sizes[i]);
                bench_json_num(&j, "start", res[i].start);
                bench_json_num(&j, "end", res[i].end);
                bench_json_num(&j, "seconds", res[i].end - res[i].start);
                bench_json_int(&j, "peak_resident", (long long)res[i].peak_resident);
                bench_json_int(&j, "evictions", (long long)res[i].evictions);
                bench_json_int(&j, "seg_reads", (long long)res[i].seg_reads);
                bench_json_int(&j, "seg_writes", (long long)res[i].seg_writes);
                bench_json_bool(&j, "verified", res[i].ok != 0);
                bench_json_end(&j);
            }
        }
    }
    double med[2];
    for (int md = 0; md < 2; md++) {
        med[md] = bench_median(span[md], o.reps);
        bench_json j;
        bench_json_begin(&j, "ummap_memmode");
        bench_json_str(&j, "mode", modes[md]);
        bench_json_int(&j, "procs", o.nprocs);
        bench_json_int(&j, "limit", (long long)o.limit);
        bench_json_int(&j, "total_size", (long long)total);
        bench_json_num(&j, "delay", o.delay);
        bench_json_int(&j, "stream_reps", o.kreps);
        bench_json_int(&j, "seg_size", (long long)o.seg_size);
        bench_json_int(&j, "reps", o.reps);
        bench_json_num(&j, "seconds", med[md]);
        bench_json_str(&j, "baseline", md == 1 ? "static" : NULL);
        bench_json_num(&j, "ratio", md == 1 ? med[0] / med[1] : NAN);
        bench_json_bool(&j, "verified", ok[md]);
        bench_json_end(&j);
    }
    free(span[0]);
    free(span[1]);
    return 0;
}
