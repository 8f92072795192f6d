/* tio_comm_split_neighborhood on one node, every algorithm:
 *   default  a directory every process shares: one group, ordered by key (zero, reversed and
 *            tied keys), the cost each algorithm owes (statistics), no probe file left when
 *            the call returns; the directory from info; then the errors: a missing directory,
 *            a regular file, processes naming different directories or algorithms, a bad
 *            algorithm, no / empty / too long / conflicting directory names, NULL newcomm,
 *            MPI_COMM_NULL, an intercommunicator, and that comm's error handler is called.
 *            Every error must reach every process with the same message and MPI_COMM_NULL.
 *   --mounts (root) every process in a mount namespace of its own, which lets processes of
 *            one node see different things at one path: a directory private to each process,
 *            present on some processes only, read-only on one process or on all, missing on
 *            rank 0. Exits 77 when namespaces or mounts are not allowed.
 *   --threads under MPI_THREAD_MULTIPLE, two threads per process split their own
 *            communicators at the same time, each with another algorithm: every result and
 *            each thread's own statistics must be right. Exits 77 without MULTIPLE. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include "topo_test.h"

static int *keys_zero, *keys_rev, *keys_tie, *group_all;

static enum tio_nbhd_algorithm resolved(enum tio_nbhd_algorithm a)
{
    return a == TIO_NBHD_AUTO ? TIO_NBHD_HYBRID : a;
}

static void mkdir_all(const char *dir)
{
    if (tt_rank == 0 && mkdir(dir, 0755) < 0 && errno != EEXIST)
        TT_DIE("mkdir %s: %s", dir, strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
}

static int split(const char *dir, enum tio_nbhd_algorithm alg, int key, MPI_Comm *nc)
{
    MPI_Info info = tp_info(alg, NULL);
    int rc = tio_comm_split_neighborhood(MPI_COMM_WORLD, dir, key, info, nc);
    MPI_Info_free(&info);
    return rc;
}

/* The statistics of one node, one group, every process seeing the directory. */
static void check_stats_one_group(enum tio_nbhd_algorithm alg, const char *what)
{
    struct tio_nbhd_stats s;
    TT_CHECK(tio_nbhd_last_stats(&s) == 1, "%s: no statistics recorded", what);
    enum tio_nbhd_algorithm a = resolved(alg);
    TT_CHECK(s.algorithm == a, "%s: stats say algorithm %d", what, (int)s.algorithm);
    TT_CHECK(s.error == MPI_SUCCESS && s.nprocs == tt_size && s.groups == 1 && s.excluded == 0,
             "%s: stats error %d nprocs %d groups %d excluded %d", what, s.error, s.nprocs,
             s.groups, s.excluded);
    long long creates = a == TIO_NBHD_EXHAUSTIVE ? tt_size : 1;
    long long lookups = a == TIO_NBHD_HEURISTIC ? 1 : 0;
    long long listings = a == TIO_NBHD_EXHAUSTIVE ? tt_size : 0;
    /* writability checks: every process of the hybrid, all but rank 0 of the heuristic */
    long long checks = a == TIO_NBHD_HYBRID ? tt_size : a == TIO_NBHD_HEURISTIC ? tt_size - 1 : 0;
    TT_CHECK(s.creates_all == creates && s.lookups_all == lookups &&
             s.listings_all == listings && s.removals_all == creates &&
             s.checks_all == checks && s.fileops_all == creates + lookups + listings + checks,
             "%s: stats creates %lld lookups %lld listings %lld removals %lld checks %lld "
             "fileops %lld, expected %lld %lld %lld %lld %lld", what, s.creates_all,
             s.lookups_all, s.listings_all, s.removals_all, s.checks_all, s.fileops_all,
             creates, lookups, listings, creates, checks);
    long long mine = a == TIO_NBHD_EXHAUSTIVE ? 2
                     : a == TIO_NBHD_HYBRID   ? (tt_rank == 0) + 1
                                              : (tt_rank == 0) + (tt_rank == tt_size - 1) +
                                                    (tt_rank != 0);
    TT_CHECK(s.fileops == mine, "%s: this process made %lld file operations, expected %lld",
             what, s.fileops, mine);
    if (a != TIO_NBHD_EXHAUSTIVE)
        TT_CHECK(s.nodes == 1, "%s: stats say %d nodes", what, s.nodes);
    TT_CHECK(s.seconds > 0 && s.seconds < 60, "%s: stats time %g s", what, s.seconds);
}

static void case_shared(void)
{
    char dir[PATH_MAX];
    tt_path(dir, sizeof dir, "shared");
    mkdir_all(dir);
    const int *keys[] = {keys_zero, keys_rev, keys_tie};
    const char *kname[] = {"zero keys", "reversed keys", "tied keys"};
    for (int a = 0; a < TP_NALGS; a++)
        for (int k = 0; k < 3; k++) {
            char what[128];
            snprintf(what, sizeof what, "shared dir, %s, %s",
                     tio_nbhd_algorithm_name(tp_algs[a]), kname[k]);
            MPI_Comm nc = MPI_COMM_NULL;
            int rc = split(dir, tp_algs[a], keys[k][tt_rank], &nc);
            /* Probes are gone when the call returns, on every process: no barrier here. */
            TT_CHECK(tp_entries(dir) == 0, "%s: %d entries left in %s", what, tp_entries(dir),
                     dir);
            if (rc != MPI_SUCCESS) {
                char m[MPI_MAX_ERROR_STRING];
                int l;
                MPI_Error_string(rc, m, &l);
                tt_fail("%s: failed: %s", what, m);
                continue;
            }
            check_stats_one_group(tp_algs[a], what);
            tp_check_split(MPI_COMM_WORLD, &nc, group_all, keys[k], what);
            MPI_Barrier(MPI_COMM_WORLD);
        }

    /* The directory from info (MPI_Comm_split_type's way), and both ways agreeing. */
    for (int both = 0; both < 2; both++) {
        MPI_Info info = tp_info(TIO_NBHD_EXHAUSTIVE, dir);
        MPI_Comm nc;
        int rc = tio_comm_split_neighborhood(MPI_COMM_WORLD, both ? dir : NULL,
                                             keys_rev[tt_rank], info, &nc);
        MPI_Info_free(&info);
        TT_CHECK(rc == MPI_SUCCESS, "directory from info (%s): failed", both ? "and arg" : "only");
        if (rc == MPI_SUCCESS)
            tp_check_split(MPI_COMM_WORLD, &nc, group_all, keys_rev, "directory from info");
    }
    /* auto and hybrid are the same algorithm: processes may mix the two spellings. */
    {
        MPI_Comm nc;
        int rc = split(dir, tt_rank % 2 ? TIO_NBHD_AUTO : TIO_NBHD_HYBRID, 0, &nc);
        TT_CHECK(rc == MPI_SUCCESS, "auto on some processes, hybrid on others: failed");
        if (rc == MPI_SUCCESS)
            tp_check_split(MPI_COMM_WORLD, &nc, group_all, keys_zero, "auto and hybrid mixed");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TT_CHECK(tp_entries(dir) == 0, "shared dir: entries left");
}

static int errors_seen;
static void count_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
    errors_seen++;
}

static void case_errors(void)
{
    char missing[PATH_MAX], file[PATH_MAX], d0[PATH_MAX], d1[PATH_MAX], mine[PATH_MAX];
    tt_path(missing, sizeof missing, "missing");
    tt_path(file, sizeof file, "regular-file");
    tt_path(d0, sizeof d0, "d0");
    tt_path(d1, sizeof d1, "d1");
    mkdir_all(d0);
    mkdir_all(d1);
    if (tt_rank == 0) {
        int fd = open(file, O_CREAT | O_WRONLY, 0644);
        if (fd < 0)
            TT_DIE("create %s: %s", file, strerror(errno));
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int before = tp_entries(tt_dir);
    MPI_Comm nc;
    int rc;

    for (int a = 0; a < TP_NALGS; a++) {
        char what[128];
        snprintf(what, sizeof what, "missing directory, %s", tio_nbhd_algorithm_name(tp_algs[a]));
        nc = MPI_COMM_WORLD; /* must become MPI_COMM_NULL */
        rc = split(missing, tp_algs[a], 0, &nc);
        tp_check_error(MPI_COMM_WORLD, rc, nc, EX_NOENT, missing, what);
        snprintf(what, sizeof what, "regular file, %s", tio_nbhd_algorithm_name(tp_algs[a]));
        nc = MPI_COMM_WORLD;
        rc = split(file, tp_algs[a], 0, &nc);
        tp_check_error(MPI_COMM_WORLD, rc, nc, EX_NOENT, "Not a directory", what);
        struct tio_nbhd_stats s;
        TT_CHECK(tio_nbhd_last_stats(&s) == 1 && s.error == rc, "%s: stats do not record the error",
                 what);
    }

    if (tt_size > 1) {
        /* Processes naming different (existing) directories. */
        snprintf(mine, sizeof mine, "%s", tt_rank % 2 ? d1 : d0);
        for (int a = 0; a < TP_NALGS; a++) {
            nc = MPI_COMM_WORLD;
            rc = split(mine, tp_algs[a], 0, &nc);
            tp_check_error(MPI_COMM_WORLD, rc, nc, EX_INFO_VALUE, "different directories",
                           "different directories");
        }
        /* Different algorithms. */
        nc = MPI_COMM_WORLD;
        rc = split(d0, tt_rank == 0 ? TIO_NBHD_EXHAUSTIVE : TIO_NBHD_HYBRID, 0, &nc);
        tp_check_error(MPI_COMM_WORLD, rc, nc, EX_INFO_VALUE, "different algorithms",
                       "different algorithms");
        /* A directory on rank 0 only. */
        MPI_Info info = tp_info(TIO_NBHD_AUTO, tt_rank == 0 ? d0 : NULL);
        nc = MPI_COMM_WORLD;
        rc = tio_comm_split_neighborhood(MPI_COMM_WORLD, NULL, 0, info, &nc);
        MPI_Info_free(&info);
        tp_check_error(MPI_COMM_WORLD, rc, nc, EX_INFO_KEY, TIO_NBHD_HINT_DIRNAME,
                       "directory on rank 0 only");
        /* newcomm NULL on one process: every process fails. */
        info = tp_info(TIO_NBHD_AUTO, NULL);
        nc = MPI_COMM_WORLD;
        rc = tio_comm_split_neighborhood(MPI_COMM_WORLD, d0, 0, info, tt_rank == 1 ? NULL : &nc);
        MPI_Info_free(&info);
        tp_check_error(MPI_COMM_WORLD, rc, tt_rank == 1 ? MPI_COMM_NULL : nc, EX_ARG, "newcomm",
                       "NULL newcomm on rank 1");
        /* An intercommunicator: even ranks against odd ranks. */
        MPI_Comm half, inter;
        TT_MPI(MPI_Comm_split(MPI_COMM_WORLD, tt_rank % 2, tt_rank, &half));
        TT_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, tt_rank % 2 ? 0 : 1, 7, &inter));
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        nc = MPI_COMM_WORLD;
        rc = tio_comm_split_neighborhood(inter, d0, 0, MPI_INFO_NULL, &nc);
        tp_check_error(MPI_COMM_WORLD, rc, nc, EX_UNSUPPORTED, "intercommunicator",
                       "intercommunicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    /* Arguments every process gets wrong alike. */
    MPI_Info bad = tp_info(TIO_NBHD_AUTO, NULL);
    tt_info_set(bad, TIO_NBHD_HINT_ALGORITHM, "fastest");
    nc = MPI_COMM_WORLD;
    rc = tio_comm_split_neighborhood(MPI_COMM_WORLD, d0, 0, bad, &nc);
    tp_check_error(MPI_COMM_WORLD, rc, nc, EX_INFO_VALUE,
                   TIO_NBHD_HINT_ALGORITHM "=\"fastest\" is invalid",
                   "bad algorithm");
    MPI_Info_free(&bad);
    nc = MPI_COMM_WORLD;
    rc = tio_comm_split_neighborhood(MPI_COMM_WORLD, NULL, 0, MPI_INFO_NULL, &nc);
    tp_check_error(MPI_COMM_WORLD, rc, nc, EX_INFO_KEY, TIO_NBHD_HINT_DIRNAME, "no directory");
    nc = MPI_COMM_WORLD;
    rc = split("", TIO_NBHD_AUTO, 0, &nc);
    tp_check_error(MPI_COMM_WORLD, rc, nc, EX_INFO_VALUE, "empty", "empty directory name");
    static char longname[PATH_MAX];
    memset(longname, 'x', sizeof longname - 40);
    longname[0] = '/';
    nc = MPI_COMM_WORLD;
    rc = split(longname, TIO_NBHD_AUTO, 0, &nc);
    tp_check_error(MPI_COMM_WORLD, rc, nc, EX_INFO_VALUE, "bytes long", "too long a name");
    MPI_Info conflict = tp_info(TIO_NBHD_AUTO, d1);
    nc = MPI_COMM_WORLD;
    rc = tio_comm_split_neighborhood(MPI_COMM_WORLD, d0, 0, conflict, &nc);
    tp_check_error(MPI_COMM_WORLD, rc, nc, EX_INFO_KEY, "name different directories",
                   "argument and info disagree");
    MPI_Info_free(&conflict);
    nc = MPI_COMM_WORLD;
    rc = tio_comm_split_neighborhood(MPI_COMM_NULL, d0, 0, MPI_INFO_NULL, &nc);
    tp_check_error(MPI_COMM_WORLD, rc, nc, EX_ARG, "MPI_COMM_NULL", "MPI_COMM_NULL");

    /* Errors go through comm's error handler (once), then are returned. */
    MPI_Comm dup;
    MPI_Errhandler eh;
    TT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    TT_MPI(MPI_Comm_create_errhandler(count_errors, &eh));
    TT_MPI(MPI_Comm_set_errhandler(dup, eh));
    errors_seen = 0;
    nc = MPI_COMM_WORLD;
    rc = tio_comm_split_neighborhood(dup, missing, 0, MPI_INFO_NULL, &nc);
    tp_check_error(MPI_COMM_WORLD, rc, nc, EX_NOENT, missing, "error handler");
    TT_CHECK(errors_seen == 1, "comm's error handler was called %d times, expected once",
             errors_seen);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&dup);

    /* Nothing was created anywhere: no probe in the directories, no new entry. */
    MPI_Barrier(MPI_COMM_WORLD);
    TT_CHECK(tp_entries(tt_dir) == before, "errors left entries in %s (%d, before %d)", tt_dir,
             tp_entries(tt_dir), before);
    TT_CHECK(tp_entries(d0) == 0 && tp_entries(d1) == 0, "errors left probe files");
}

/* ---- a probe name that exists already ---- */

/* Discovery names its probes after random bits every process draws with getrandom(2).
 * While zero_random is set, this program's getrandom gives zeros, so the name is known in
 * advance and can be planted. */
static int zero_random;

ssize_t getrandom(void *buf, size_t n, unsigned int flags)
{
    if (zero_random) {
        memset(buf, 0, n);
        return (ssize_t)n;
    }
    return syscall(SYS_getrandom, buf, n, flags);
}

/* The name is taken in the one directory every process sees: hybrid and heuristic fail
 * on every process saying so (not that the directory is missing), and leave the planted
 * file alone. */
static void case_collision(void)
{
    char dir[PATH_MAX], planted[PATH_MAX + 64];
    MPI_Barrier(MPI_COMM_WORLD); /* the previous case has counted the entries */
    tt_path(dir, sizeof dir, "collision");
    mkdir_all(dir);
    snprintf(planted, sizeof planted, "%s/.tierio-nbhd-%032d", dir, 0);
    if (tt_rank == 0)
        tt_write_file(planted, "", 0);
    MPI_Barrier(MPI_COMM_WORLD);
    const enum tio_nbhd_algorithm algs[] = {TIO_NBHD_HYBRID, TIO_NBHD_HEURISTIC};
    for (int a = 0; a < 2; a++) {
        char what[64];
        snprintf(what, sizeof what, "%s, probe name taken", tio_nbhd_algorithm_name(algs[a]));
        MPI_Comm nc = MPI_COMM_WORLD;
        zero_random = 1;
        int rc = split(dir, algs[a], 0, &nc);
        zero_random = 0;
        tp_check_error(MPI_COMM_WORLD, rc, nc, EX_IO, "exists already", what);
        MPI_Barrier(MPI_COMM_WORLD);
        TT_CHECK(tt_exists(planted), "%s: the planted file was removed", what);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (tt_rank == 0)
        tt_rmtree(dir);
}

/* ---- one mount namespace per process (--mounts) ---- */

static void must_mount(const char *src, const char *dst, const char *type, unsigned long fl)
{
    if (mount(src, dst, type, fl, NULL) < 0)
        TT_DIE("mount %s on %s: %s", src ? src : "(none)", dst, strerror(errno));
}

static void ro_bind(const char *dir)
{
    must_mount(dir, dir, NULL, MS_BIND);
    must_mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY);
}

static void unmount(const char *dir)
{
    if (umount2(dir, 0) < 0)
        TT_DIE("umount %s: %s", dir, strerror(errno));
}

static void case_mounts(void)
{
    char own[PATH_MAX], some[PATH_MAX], sub[PATH_MAX], ro1[PATH_MAX], roall[PATH_MAX];
    int *group = malloc((size_t)tt_size * sizeof *group);
    MPI_Comm nc;
    int rc;
    tt_path(own, sizeof own, "own");
    tt_path(some, sizeof some, "some");
    tt_path(ro1, sizeof ro1, "ro1");
    tt_path(roall, sizeof roall, "roall");
    snprintf(sub, sizeof sub, "%s/sub", some);
    mkdir_all(own);
    mkdir_all(some);
    mkdir_all(sub);
    mkdir_all(ro1);
    mkdir_all(roall);

    /* Each process has a directory of its own at one path: exhaustive finds one group
     * per process (hybrid and heuristic assume a node sees one directory: not asked). */
    must_mount("tierio-own", own, "tmpfs", 0);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < tt_size; r++)
        group[r] = r;
    rc = split(own, TIO_NBHD_EXHAUSTIVE, keys_rev[tt_rank], &nc);
    TT_CHECK(rc == MPI_SUCCESS, "private directories: failed");
    TT_CHECK(tp_entries(own) == 0, "private directories: probe left");
    if (rc == MPI_SUCCESS)
        tp_check_split(MPI_COMM_WORLD, &nc, group, keys_rev, "private directories, exhaustive");
    MPI_Barrier(MPI_COMM_WORLD);
    unmount(own);

    /* Present on even ranks only: odd ranks get MPI_COMM_NULL, the others one group. */
    if (tt_rank % 2)
        must_mount("tierio-hide", some, "tmpfs", 0);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < tt_size; r++)
        group[r] = r % 2 ? -1 : 0;
    rc = split(sub, TIO_NBHD_EXHAUSTIVE, keys_rev[tt_rank], &nc);
    TT_CHECK(rc == MPI_SUCCESS, "directory on even ranks only: failed");
    if (rc == MPI_SUCCESS)
        tp_check_split(MPI_COMM_WORLD, &nc, group, keys_rev, "directory on even ranks only");
    struct tio_nbhd_stats s;
    tio_nbhd_last_stats(&s);
    TT_CHECK(s.excluded == tt_size / 2 && s.groups == 1, "even ranks only: stats excluded %d "
             "groups %d", s.excluded, s.groups);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tt_rank % 2)
        unmount(some);
    MPI_Barrier(MPI_COMM_WORLD);
    TT_CHECK(tp_entries(sub) == 0, "directory on even ranks only: probe left");

    /* Missing on rank 0: the heuristic cannot work and says so, on every process. */
    if (tt_rank == 0)
        must_mount("tierio-hide", some, "tmpfs", 0);
    MPI_Barrier(MPI_COMM_WORLD);
    nc = MPI_COMM_WORLD;
    rc = split(sub, TIO_NBHD_HEURISTIC, 0, &nc);
    tp_check_error(MPI_COMM_WORLD, rc, nc, EX_NOENT, "does not exist on rank 0",
                   "heuristic, directory missing on rank 0");
    MPI_Barrier(MPI_COMM_WORLD);
    if (tt_rank == 0)
        unmount(some);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Read-only on one process only (the node's first one, or another): every algorithm
     * fails everywhere with MPI_ERR_ACCESS naming that process, whichever process makes
     * the probe, and the probes the others made are removed. */
    int ro_ranks[2] = {tt_size - 1, 0};
    for (int i = 0; i < 2 && tt_size > 1; i++) {
        int ro = ro_ranks[i];
        if (tt_rank == ro)
            ro_bind(ro1);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int a = 0; a < TP_NALGS; a++) {
            char what[128], who[32];
            snprintf(what, sizeof what, "%s, read-only on rank %d",
                     tio_nbhd_algorithm_name(tp_algs[a]), ro);
            snprintf(who, sizeof who, "rank %d: ", ro);
            nc = MPI_COMM_WORLD;
            rc = split(ro1, tp_algs[a], 0, &nc);
            tp_check_error(MPI_COMM_WORLD, rc, nc, EX_ACCESS, who, what);
            tp_check_error(MPI_COMM_WORLD, rc, nc, EX_ACCESS, "Read-only file system", what);
            MPI_Barrier(MPI_COMM_WORLD);
            if (tt_rank != ro)
                TT_CHECK(tp_entries(ro1) == 0, "%s: %d probe(s) left in %s", what,
                         tp_entries(ro1), ro1);
        }
        if (tt_rank == ro)
            unmount(ro1);
    }

    /* Read-only everywhere: every algorithm fails with MPI_ERR_ACCESS. */
    ro_bind(roall);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int a = 0; a < TP_NALGS; a++) {
        char what[128];
        snprintf(what, sizeof what, "read-only everywhere, %s", tio_nbhd_algorithm_name(tp_algs[a]));
        nc = MPI_COMM_WORLD;
        rc = split(roall, tp_algs[a], 0, &nc);
        tp_check_error(MPI_COMM_WORLD, rc, nc, EX_ACCESS, "Read-only file system", what);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    unmount(roall);
    free(group);
}

/* ---- two threads at once (--threads) ---- */

struct thread_arg {
    MPI_Comm comm;
    enum tio_nbhd_algorithm alg;
    const char *dir;
    int failures;
};

static void *thread_main(void *p)
{
    struct thread_arg *a = p;
    for (int i = 0; i < 10; i++) {
        MPI_Info info = tp_info(a->alg, NULL);
        MPI_Comm nc;
        int rc = tio_comm_split_neighborhood(a->comm, a->dir, keys_rev[tt_rank], info, &nc);
        MPI_Info_free(&info);
        struct tio_nbhd_stats s;
        /* Statistics are per thread: the other thread's discoveries must not show here. */
        if (rc != MPI_SUCCESS || tio_nbhd_last_stats(&s) != 1 || s.algorithm != a->alg ||
            s.groups != 1) {
            a->failures++;
            continue;
        }
        int n = -1, r = -1;
        MPI_Comm_size(nc, &n);
        MPI_Comm_rank(nc, &r);
        a->failures += n != tt_size || r != tt_size - 1 - tt_rank;
        MPI_Comm_free(&nc);
    }
    return NULL;
}

static void case_threads(void)
{
    char dir[PATH_MAX];
    tt_path(dir, sizeof dir, "threads");
    mkdir_all(dir);
    struct thread_arg args[2] = {{MPI_COMM_NULL, TIO_NBHD_HYBRID, dir, 0},
                                 {MPI_COMM_NULL, TIO_NBHD_EXHAUSTIVE, dir, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        TT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &args[i].comm));
        MPI_Comm_set_errhandler(args[i].comm, MPI_ERRORS_RETURN);
    }
    for (int i = 0; i < 2; i++)
        if (pthread_create(&th[i], NULL, thread_main, &args[i]) != 0)
            TT_DIE("pthread_create failed");
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        TT_CHECK(args[i].failures == 0, "thread %d (%s): %d of 10 discoveries wrong", i,
                 tio_nbhd_algorithm_name(args[i].alg), args[i].failures);
        MPI_Comm_free(&args[i].comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TT_CHECK(tp_entries(dir) == 0, "threads: probe files left");
}

int main(int argc, char **argv)
{
    int mounts = argc > 1 && strcmp(argv[1], "--mounts") == 0;
    int threads = argc > 1 && strcmp(argv[1], "--threads") == 0;
    if (mounts) {
        /* Before MPI starts threads: this process's own mount namespace, private mounts. */
        if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 ||
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
            printf("skipped: needs root and a mount namespace per process (%s)\n",
                   geteuid() ? "not root" : strerror(errno));
            return 77;
        }
    }
    if (threads) {
        tt_mpi_init_multiple(&argc, &argv);
        tt_setup("topo_split_threads");
    } else {
        tt_init(&argc, &argv, mounts ? "topo_split_mounts" : "topo_split");
    }
    keys_zero = calloc((size_t)tt_size, sizeof(int));
    keys_rev = malloc((size_t)tt_size * sizeof(int));
    keys_tie = malloc((size_t)tt_size * sizeof(int));
    group_all = calloc((size_t)tt_size, sizeof(int));
    for (int r = 0; r < tt_size; r++) {
        keys_rev[r] = tt_size - r;
        keys_tie[r] = r % 2 ? -1 : 5; /* ties inside each key: by rank */
    }
    if (mounts) {
        case_mounts();
    } else if (threads) {
        case_threads();
    } else {
        case_shared();
        case_errors();
        case_collision();
    }
    return tt_finish();
}
