#define _GNU_SOURCE
/* Out-of-core read-modify-writes: the ummap engine vs the kernel's mmap under one memory
 * limit (issue 3; seed 000 ch. 6).
 *
 * A file of W bytes (-w, default twice the limit) holds a known pattern. The program makes
 * R random read-modify-writes of T bytes (-t, default 256 KiB; -n R, default 2*W/T) at
 * transfer-aligned offsets — every 64-bit word of the transfer gets +1 — and then makes all
 * of it durable (the full sync is timed too). The same sequence runs with:
 *   mmap    MAP_SHARED mapping, in-place updates, msync(MS_SYNC) at the end;
 *   ummap   tio_ummap_open with UMMAP_MEM_LIMIT = limit - headroom, segments of -g bytes
 *           (default T), in-place updates, umsync at the end;
 *   posix   pread into a buffer, update, pwrite back, fdatasync at the end;
 *   memory  (reference, NOT confined) the whole file read into malloc'd memory, updated
 *           there, written back and fdatasync'ed.
 * mmap, ummap and posix each run in a child process inside a fresh cgroup-v1 memory cgroup
 * whose memory.limit_in_bytes is the limit (-m, default 128 MiB): the kernel's page cache
 * and the engine's segments are confined alike. The engine gets the headroom (-H, default
 * max(16 MiB, limit/8)) for what the cgroup also charges it that is not segments (its own
 * page cache from pread/pwrite, program, stacks). The cgroup is created under this
 * process's own memory cgroup and removed afterwards, also after an error or a signal.
 * Without root or the v1 memory controller the confined rows are skipped with a message
 * (a JSON line with "skipped") and ummap runs confined by UMMAP_MEM_LIMIT alone.
 *
 * Before each method the file is rewritten with the pattern, made durable and dropped from
 * the page cache. After it, the file is read back with pread and every word compared with
 * pattern + (times its transfer was updated).
 *
 * Output: one JSON line per method: seconds (total), rmw_seconds, sync_seconds, GBps
 * (bytes read+written by the updates / total), ratio = mmap seconds / seconds (speed
 * relative to the kernel's mmap, measured in the same run), the cgroup's peak usage and
 * failcnt, the process's faults, and the engine's statistics for ummap. */
#include "ummap_common.h"

#include <signal.h>
#include <sys/wait.h>

typedef struct {
    size_t limit, wset, transfer, seg_size, headroom;
    unsigned long long ops;
    int ptype;
    unsigned methods;
    double timeout;
    uint64_t seed;
    const char *dir;
    const char *driver; /* ummap I/O driver of the current run, NULL: UMMAP_DRIVER or posix */
    char *drivers[4];   /* -D: one ummap run per driver */
    int ndrivers;
} options;

static void usage(const char *prog)
{
    bench_usage("usage: %s [-m bytes] [-w bytes] [-t bytes] [-g bytes] [-n ops] [-H bytes]\n"
                "          [-p policy] [-D drivers] [-M methods] [-T seconds] [-s seed] [-d dir]\n"
                "  -m bytes   memory limit: the cgroup's limit (default 128Mi)\n"
                "  -w bytes   working set, the file size (default twice the limit)\n"
                "  -t bytes   read-modify-write size (default 256Ki)\n"
                "  -g bytes   ummap segment size (default the transfer size)\n"
                "  -n ops     read-modify-writes (default 2 * working set / transfer)\n"
                "  -H bytes   limit - UMMAP_MEM_LIMIT, room for what is not segments\n"
                "             (default max(16m, limit/8))\n"
                "  -p policy  ummap evict policy 0..5 (FIFO LIFO PLRU PRND WIRO_F WIRO_L; "
                "default 0)\n"
                "  -D list    ummap I/O drivers, one ummap run each: posix, direct, uring\n"
                "             (default: one run with UMMAP_DRIVER, else posix)\n"
                "  -M list    methods: memory,ummap,mmap,posix (default all)\n"
                "  -T sec     stop a method after this long and report it as timed out "
                "(default 600)\n"
                "  -s seed    seed of the random offsets (default 1)\n"
                "  -d dir     directory of the file (default $TIERIO_BENCH_DIR or /tmp)\n",
                prog);
}

static options parse_options(int argc, char **argv)
{
    options o = {.limit = 128u << 20, .transfer = 256u << 10, .ptype = UMMAP_PTYPE_FIFO,
                 .methods = 0xfu, .timeout = 600, .seed = 1, .dir = bench_default_dir()};
    bool headroom_set = false;
    int c;
    while ((c = bench_getopt(argc, argv, "m:w:t:g:n:H:p:D:M:T:s:d:h", usage)) != -1) {
        switch (c) {
        case 'm': o.limit = (size_t)bench_parse_u64("-m", optarg); break;
        case 'w': o.wset = (size_t)bench_parse_u64("-w", optarg); break;
        case 't': o.transfer = (size_t)bench_parse_u64("-t", optarg); break;
        case 'g': o.seg_size = um_parse_segsize("-g", optarg); break;
        case 'n': o.ops = bench_parse_u64("-n", optarg); break;
        case 'H': o.headroom = (size_t)bench_parse_u64("-H", optarg), headroom_set = true; break;
        case 'p': o.ptype = (int)bench_parse_u64("-p", optarg); break;
        case 'D': o.ndrivers = um_parse_drivers("-D", optarg, o.drivers, 4); break;
        case 'M': o.methods = um_parse_methods("-M", optarg); break;
        case 'T': o.timeout = bench_parse_double("-T", optarg); break;
        case 's': o.seed = bench_parse_u64("-s", optarg); break;
        case 'd': o.dir = optarg; break;
        }
    }
    if (o.transfer < 8 || o.transfer % 8 != 0) {
        bench_die("-t: the transfer size must be a positive multiple of 8");
    }
    if (o.wset == 0) {
        o.wset = 2 * o.limit;
    }
    o.wset -= o.wset % o.transfer;
    if (o.wset == 0) {
        bench_die("-w: the working set must hold at least one transfer");
    }
    if (o.seg_size == 0) {
        if ((o.transfer & (o.transfer - 1)) != 0 || o.transfer < 4096) {
            bench_die("-t %zu is not a power of two of at least a page: give -g", o.transfer);
        }
        o.seg_size = o.transfer;
    }
    if (!headroom_set) {
        o.headroom = o.limit / 8 > (16u << 20) ? o.limit / 8 : (16u << 20);
    }
    if (o.headroom >= o.limit || o.limit - o.headroom < 4 * o.seg_size) {
        bench_die("-H/-m: the limit minus the headroom must hold at least 4 segments");
    }
    if (o.ops == 0) {
        o.ops = 2 * (o.wset / o.transfer);
    }
    if (o.ptype < 0 || o.ptype > 5) {
        bench_die("-p: policy 0..5");
    }
    if (!(o.timeout > 0)) {
        bench_die("-T: a positive number of seconds");
    }
    return o;
}

/* ---- the memory cgroup (v1) ---------------------------------------------------------- */

/* What must be undone at exit or after a signal. */
static char g_cgroup[4096];      /* the cgroup we made, "" when none */
static char g_file[4096];        /* the data file, "" when none */
static char g_key[64];           /* UMMAP_NODE_KEY of a running ummap child, "" when none */
static volatile pid_t g_child;   /* a running child, 0 when none */

static void cleanup(void)
{
    if (getpid() != um_parent) { /* a child inherits the exit handler: it owns nothing */
        return;
    }
    if (g_child > 0) {
        kill(g_child, SIGKILL);
        waitpid(g_child, NULL, 0);
        g_child = 0;
        if (g_key[0] != '\0') { /* killed: its node group's object stays behind */
            um_remove_node_objects(g_key);
        }
    }
    g_key[0] = '\0';
    if (g_cgroup[0] != '\0') {
        /* the reaped child may still be leaving the cgroup for a moment */
        for (int i = 0; i < 200 && rmdir(g_cgroup) != 0 && errno == EBUSY; i++) {
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
        }
        g_cgroup[0] = '\0';
    }
    if (g_file[0] != '\0') {
        unlink(g_file);
        g_file[0] = '\0';
    }
}

/* Only what is async-signal-safe: stop the child; the rest is done by um_interrupted(). */
static void on_signal(int sig)
{
    um_signal = sig;
    if (g_child > 0) {
        kill(g_child, SIGKILL);
    }
}

/* The directory under which our cgroup goes: the v1 memory hierarchy's mount point plus
 * this process's own memory cgroup (so the new one is nested in whatever confines us). On
 * failure returns false with the reason. */
static bool cgroup_parent(char *out, size_t n, char *why, size_t wn)
{
    if (geteuid() != 0) {
        snprintf(why, wn, "needs root to create a memory cgroup (running as uid %d)",
                 (int)geteuid());
        return false;
    }
    FILE *f = fopen("/proc/self/mounts", "re");
    char mnt[1024] = "", line[4096];
    while (f != NULL && fgets(line, sizeof line, f)) {
        char dev[256], dir[1024], type[64], opts[1024];
        if (sscanf(line, "%255s %1023s %63s %1023s", dev, dir, type, opts) == 4 &&
            strcmp(type, "cgroup") == 0 && strstr(opts, "memory") != NULL) {
            snprintf(mnt, sizeof mnt, "%s", dir);
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    if (mnt[0] == '\0') {
        snprintf(why, wn, "the cgroup v1 memory controller is not mounted");
        return false;
    }
    char rel[2048] = "";
    f = fopen("/proc/self/cgroup", "re");
    while (f != NULL && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 != NULL) {
            *c2 = '\0';
            if (strstr(c1 + 1, "memory") != NULL) {
                snprintf(rel, sizeof rel, "%s", strcmp(c2 + 1, "/") == 0 ? "" : c2 + 1);
            }
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    snprintf(out, n, "%s%s", mnt, rel);
    struct stat st;
    if (stat(out, &st) != 0) { /* a cgroup namespace hides the path: use the mount's root */
        snprintf(out, n, "%s", mnt);
    }
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/memory.limit_in_bytes", out);
    if (access(probe, W_OK) != 0) {
        snprintf(why, wn, "%.400s is not a writable cgroup v1 memory directory", out);
        return false;
    }
    return true;
}

static bool write_file(const char *path, const char *value)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    ssize_t w = write(fd, value, strlen(value));
    close(fd);
    return w == (ssize_t)strlen(value);
}

static long long read_number(const char *dir, const char *file)
{
    char path[4200], buf[64] = "";
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    return r > 0 ? atoll(buf) : -1;
}

/* A value from the cgroup's memory.stat (e.g. "pgmajfault"), -1 if absent. */
static long long read_stat(const char *dir, const char *key)
{
    char path[4200], line[256];
    snprintf(path, sizeof path, "%s/memory.stat", dir);
    FILE *f = fopen(path, "re");
    long long v = -1;
    size_t n = strlen(key);
    while (f != NULL && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, n) == 0 && line[n] == ' ') {
            v = atoll(line + n + 1);
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return v;
}

/* ---- the data ------------------------------------------------------------------------ */

#define TAG 0x00cull

static void make_file(const options *o, const char *path)
{
    int fd = um_open_file(path, 0, true);
    size_t chunk = 1u << 20;
    char *buf = bench_malloc(chunk);
    for (size_t off = 0; off < o->wset; off += chunk) {
        size_t len = o->wset - off < chunk ? o->wset - off : chunk;
        um_fill(buf, len, TAG, off);
        um_pwrite_all(fd, buf, len, (off_t)off);
    }
    free(buf);
    um_drop_cache(fd, 0, (off_t)o->wset);
    close(fd);
}

/* The transfer indices of the updates (the same sequence for every method). */
static uint32_t *make_sequence(const options *o)
{
    uint32_t *seq = bench_malloc(o->ops * sizeof *seq);
    uint64_t s = bench_mix64(o->seed) | 1;
    size_t n = o->wset / o->transfer;
    for (unsigned long long i = 0; i < o->ops; i++) {
        seq[i] = (uint32_t)(um_rand(&s) % n);
    }
    return seq;
}

static bool check_file(const options *o, const char *path, const uint32_t *seq)
{
    size_t n = o->wset / o->transfer;
    uint32_t *count = calloc(n, sizeof *count);
    if (count == NULL) {
        bench_die("out of memory");
    }
    for (unsigned long long i = 0; i < o->ops; i++) {
        count[seq[i]]++;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    SYS_CHECK(fd >= 0, path);
    uint64_t *buf = bench_malloc(o->transfer);
    bool ok = true;
    for (size_t k = 0; k < n && ok; k++) {
        um_pread_all(fd, buf, o->transfer, (off_t)(k * o->transfer));
        for (size_t i = 0; i < o->transfer / 8; i++) {
            uint64_t want = um_word(TAG, k * o->transfer + 8 * i) + count[k];
            if (buf[i] != want) {
                fprintf(stderr, "ummap_ooc: %s: word %zu of transfer %zu is %#llx, expected "
                        "%#llx (updated %u times)\n", path, i, k, (unsigned long long)buf[i],
                        (unsigned long long)want, count[k]);
                ok = false;
                break;
            }
        }
    }
    struct stat st;
    if (ok && (fstat(fd, &st) != 0 || (size_t)st.st_size != o->wset)) {
        fprintf(stderr, "ummap_ooc: %s has the wrong size\n", path);
        ok = false;
    }
    close(fd);
    free(buf);
    free(count);
    return ok;
}

/* ---- one method, in the child -------------------------------------------------------- */

typedef struct {
    double total, rmw, sync;
    long minflt, majflt;
    size_t hwm;
    tio_ummap_stats_t st;
} child_result;

static inline void update(uint64_t *w, size_t words)
{
    for (size_t i = 0; i < words; i++) {
        w[i] += 1;
    }
}

static void child_run(const options *o, enum um_method m, const char *path,
                      const uint32_t *seq, child_result *res)
{
    const size_t words = o->transfer / 8;
    long maj0 = 0, flt0 = um_faults(&maj0);
    int fd = um_open_file(path, 0, false);
    um_region r;
    um_region_opts ro = UM_REGION_OPTS_INIT;
    ro.seg_size = o->seg_size;
    ro.read_file = 1;
    ro.ptype = o->ptype;
    ro.driver = o->driver;
    ro.load = true;
    double t0 = um_now();
    /* memory: the whole working set is loaded first (inside the timing: it is the cost of
     * not having a mapping); posix: one transfer buffer */
    um_region_open(&r, m == UM_MEMORY ? UM_POSIX : m, fd, 0, o->wset, &ro, m == UM_MEMORY);
    uint64_t *buf = bench_malloc(o->transfer);
    for (unsigned long long i = 0; i < o->ops; i++) {
        size_t off = (size_t)seq[i] * o->transfer;
        if (m == UM_POSIX) {
            um_region_read(&r, off, buf, o->transfer);
            update(buf, words);
            um_region_write(&r, off, buf, o->transfer);
        } else {
            update((uint64_t *)(um_region_ptr(&r) + off), words);
        }
    }
    double t1 = um_now();
    um_region_sync(&r); /* memory: pwrite of the whole copy + fdatasync */
    double t2 = um_now();
    if (m == UM_UMMAP) {
        UM_CHECK(tio_ummap_stats(r.base, &res->st));
    }
    um_region_close(&r);
    close(fd);
    free(buf);
    res->total = t2 - t0, res->rmw = t1 - t0, res->sync = t2 - t1;
    res->minflt = um_faults(&res->majflt) - flt0;
    res->majflt -= maj0;
    res->hwm = um_proc_status_bytes("VmHWM");
}

/* ---- one method, from the parent ----------------------------------------------------- */

typedef struct {
    bool ran, ok, timed_out, confined;
    char error[512];
    child_result res;
    long long cg_max_usage, cg_failcnt, cg_oom_kills, cg_pgmajfault;
} method_result;

static void run_method(const options *o, enum um_method m, const uint32_t *seq,
                       const char *cg_parent, method_result *mr)
{
    memset(mr, 0, sizeof *mr);
    mr->cg_max_usage = mr->cg_failcnt = mr->cg_oom_kills = mr->cg_pgmajfault = -1;
    snprintf(g_file, sizeof g_file, "%s/ummap_ooc.%s.%d", o->dir, um_method_name(m),
             (int)getpid());
    make_file(o, g_file);

    mr->confined = m != UM_MEMORY && cg_parent != NULL;
    if (mr->confined) {
        snprintf(g_cgroup, sizeof g_cgroup, "%s/tierio-bench-ooc-%d", cg_parent, (int)getpid());
        SYS_CHECK(mkdir(g_cgroup, 0755) == 0, g_cgroup);
        char path[4200], val[64];
        snprintf(path, sizeof path, "%s/memory.limit_in_bytes", g_cgroup);
        snprintf(val, sizeof val, "%zu", o->limit);
        if (!write_file(path, val)) {
            bench_die("cannot set %s to %s: %s", path, val, strerror(errno));
        }
    }

    int pfd[2];
    SYS_CHECK(pipe(pfd) == 0, "pipe");
    fflush(NULL);
    pid_t pid = fork();
    SYS_CHECK(pid >= 0, "fork");
    if (pid == 0) {
        um_child_signals();
        close(pfd[0]);
        if (mr->confined) {
            char path[4200], val[32];
            snprintf(path, sizeof path, "%s/cgroup.procs", g_cgroup);
            snprintf(val, sizeof val, "%d", (int)getpid());
            if (!write_file(path, val)) {
                fprintf(stderr, "ummap_ooc: cannot join %s: %s\n", g_cgroup, strerror(errno));
                _exit(3);
            }
        }
        if (m == UM_UMMAP) {
            /* read once at the first ummap() of this (fresh) process */
            char val[32];
            snprintf(val, sizeof val, "%zu", o->limit - o->headroom);
            setenv("UMMAP_MEM_LIMIT", val, 1);
            setenv("UMMAP_MEMCONFIG", "static", 1);
            setenv("UMMAP_NODE_PROCS", "1", 1); /* alone in its node group */
            snprintf(val, sizeof val, "tierio-bench-ooc-%d", (int)getpid());
            setenv("UMMAP_NODE_KEY", val, 1);
        }
        child_result res;
        memset(&res, 0, sizeof res);
        child_run(o, m, g_file, seq, &res);
        ssize_t w = write(pfd[1], &res, sizeof res);
        _exit(w == (ssize_t)sizeof res ? 0 : 4);
    }
    g_child = pid;
    if (m == UM_UMMAP) {
        snprintf(g_key, sizeof g_key, "tierio-bench-ooc-%d", (int)pid);
    }
    close(pfd[1]);

    int status = 0;
    double deadline = um_now() + o->timeout;
    for (;;) {
        um_interrupted();
        pid_t w = waitpid(pid, &status, WNOHANG);
        SYS_CHECK(w >= 0 || errno == EINTR, "waitpid");
        if (w == pid) {
            break;
        }
        if (um_now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            mr->timed_out = true;
            break;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    g_child = 0;
    if (g_key[0] != '\0' && WIFSIGNALED(status)) {
        um_remove_node_objects(g_key); /* killed: its node group's object stays behind */
    }
    g_key[0] = '\0';
    um_interrupted();
    ssize_t got = read(pfd[0], &mr->res, sizeof mr->res);
    close(pfd[0]);

    if (mr->confined) {
        mr->cg_max_usage = read_number(g_cgroup, "memory.max_usage_in_bytes");
        mr->cg_failcnt = read_number(g_cgroup, "memory.failcnt");
        mr->cg_pgmajfault = read_stat(g_cgroup, "total_pgmajfault");
        char path[4200], line[128];
        snprintf(path, sizeof path, "%s/memory.oom_control", g_cgroup);
        FILE *f = fopen(path, "re");
        while (f != NULL && fgets(line, sizeof line, f)) {
            if (strncmp(line, "oom_kill ", 9) == 0) {
                mr->cg_oom_kills = atoll(line + 9);
            }
        }
        if (f != NULL) {
            fclose(f);
        }
    }
    if (mr->timed_out) {
        snprintf(mr->error, sizeof mr->error, "did not finish within %g s (-T)", o->timeout);
    } else if (WIFSIGNALED(status)) {
        snprintf(mr->error, sizeof mr->error, "killed by signal %d%s", WTERMSIG(status),
                 mr->cg_oom_kills > 0 ? " (the cgroup's OOM killer)" : "");
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != (ssize_t)sizeof mr->res) {
        snprintf(mr->error, sizeof mr->error, "exited with status %d",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    } else {
        mr->ran = true;
        mr->ok = check_file(o, g_file, seq);
    }
    cleanup(); /* the cgroup and the file */
}

static void print_result(const options *o, enum um_method m, const method_result *mr,
                         const method_result *base, const char *skipped)
{
    bench_json j;
    bench_json_begin(&j, "ummap_ooc");
    bench_json_str(&j, "method", um_method_name(m));
    bench_json_int(&j, "limit", (long long)o->limit);
    bench_json_int(&j, "working_set", (long long)o->wset);
    bench_json_int(&j, "transfer", (long long)o->transfer);
    bench_json_int(&j, "ops", (long long)o->ops);
    if (skipped != NULL) {
        bench_json_str(&j, "skipped", skipped);
        bench_json_end(&j);
        return;
    }
    bench_json_str(&j, "confinement",
                   m == UM_MEMORY ? "none"
                   : mr->confined ? (m == UM_UMMAP ? "cgroup+UMMAP_MEM_LIMIT" : "cgroup")
                                  : "UMMAP_MEM_LIMIT");
    if (m == UM_UMMAP) {
        bench_json_int(&j, "ummap_mem_limit", (long long)(o->limit - o->headroom));
        bench_json_int(&j, "seg_size", (long long)o->seg_size);
        bench_json_int(&j, "ptype", o->ptype);
        bench_json_str(&j, "driver", o->driver != NULL ? o->driver
                                     : getenv("UMMAP_DRIVER") != NULL ? getenv("UMMAP_DRIVER")
                                                                      : "posix");
    }
    if (!mr->ran) {
        bench_json_str(&j, "error", mr->error);
        if (mr->timed_out) {
            bench_json_num(&j, "seconds_at_least", o->timeout);
        }
        bench_json_bool(&j, "verified", false);
        bench_json_end(&j);
        return;
    }
    /* every update reads and writes its transfer */
    double bytes = 2.0 * (double)o->ops * (double)o->transfer;
    const child_result *r = &mr->res;
    bench_json_num(&j, "bytes", bytes);
    bench_json_num(&j, "seconds", r->total);
    bench_json_num(&j, "rmw_seconds", r->rmw);
    bench_json_num(&j, "sync_seconds", r->sync);
    bench_json_num(&j, "GBps", bytes / r->total / 1e9);
    bool have_base = m != UM_MMAP && base != NULL && (base->ran || base->timed_out);
    bench_json_str(&j, "baseline", have_base ? "mmap" : NULL);
    if (have_base && base->ran) {
        bench_json_num(&j, "ratio", base->res.total / r->total);
    } else if (have_base) { /* the baseline ran out of time: a lower bound */
        bench_json_num(&j, "ratio", NAN);
        bench_json_num(&j, "ratio_at_least", o->timeout / r->total);
    } else {
        bench_json_num(&j, "ratio", NAN);
    }
    bench_json_int(&j, "minor_faults", r->minflt - r->majflt);
    bench_json_int(&j, "major_faults", r->majflt);
    bench_json_int(&j, "peak_rss", (long long)r->hwm);
    if (mr->confined) {
        bench_json_int(&j, "cgroup_max_usage", mr->cg_max_usage);
        bench_json_int(&j, "cgroup_failcnt", mr->cg_failcnt);
    }
    if (m == UM_UMMAP) {
        bench_json_int(&j, "read_faults", (long long)r->st.read_faults);
        bench_json_int(&j, "write_faults", (long long)r->st.write_faults);
        bench_json_int(&j, "seg_reads", (long long)r->st.seg_reads);
        bench_json_int(&j, "seg_writes", (long long)r->st.seg_writes);
        bench_json_int(&j, "evictions", (long long)r->st.evictions);
        bench_json_int(&j, "write_ops", (long long)r->st.write_ops);
    }
    bench_json_bool(&j, "verified", mr->ok);
    bench_json_end(&j);
}

int main(int argc, char **argv)
{
    options o = parse_options(argc, argv);
    um_catch_interrupts(cleanup, on_signal);

    char cg_parent[3000], why[512] = "";
    bool have_cg = cgroup_parent(cg_parent, sizeof cg_parent, why, sizeof why);
    fprintf(stderr,
            "# ummap_ooc: limit %zu B, working set %zu B, %llu read-modify-writes of %zu B, "
            "ummap segment %zu B, UMMAP_MEM_LIMIT %zu B, policy %d, seed %llu, dir %s, cgroup "
            "under %s\n",
            o.limit, o.wset, o.ops, o.transfer, o.seg_size, o.limit - o.headroom, o.ptype,
            (unsigned long long)o.seed, o.dir, have_cg ? cg_parent : "(none)");
    if (!have_cg) {
        fprintf(stderr, "ummap_ooc: no memory cgroup: %s. The mmap and posix rows are "
                        "skipped; ummap runs confined by UMMAP_MEM_LIMIT only.\n", why);
    }

    uint32_t *seq = make_sequence(&o);
    method_result res[UM_NMETHODS];
    bool skip[UM_NMETHODS] = {false};
    /* the baseline first, so every other line can carry its ratio */
    const enum um_method order[UM_NMETHODS] = {UM_MMAP, UM_UMMAP, UM_POSIX, UM_MEMORY};
    for (int i = 0; i < UM_NMETHODS; i++) {
        enum um_method m = order[i];
        if (!(o.methods & (1u << m))) {
            continue;
        }
        if (!have_cg && (m == UM_MMAP || m == UM_POSIX)) {
            skip[m] = true;
            print_result(&o, m, NULL, NULL, why);
            continue;
        }
        bool have_base = (o.methods & (1u << UM_MMAP)) && !skip[UM_MMAP];
        int runs = m == UM_UMMAP && o.ndrivers > 0 ? o.ndrivers : 1;
        for (int d = 0; d < runs; d++) {
            options od = o;
            od.driver = m == UM_UMMAP && o.ndrivers > 0 ? o.drivers[d] : NULL;
            run_method(&od, m, seq, have_cg ? cg_parent : NULL, &res[m]);
            um_interrupted();
            print_result(&od, m, &res[m], have_base ? &res[UM_MMAP] : NULL, NULL);
            if (!res[m].ran) {
                fprintf(stderr, "ummap_ooc: %s: %s\n", um_method_name(m), res[m].error);
            }
        }
    }
    free(seq);
    return 0;
}
