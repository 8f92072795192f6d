/* One job of a multi-job checkpoint test (driven by the scripts next to it, on one node
 * or on the emulated cluster): write versions, or restart and check what comes back.
 *
 *   ckpt_job --local DIR|- --global DIR|- [--name N] [--partner] [--keep K]
 *            [--drain async|sync|none] [--drain-every K] [--threads multiple]
 *            [--scale S] ACTION
 *   ACTION:
 *     --write FIRST LAST [--hang-at V]
 *         versions FIRST..LAST; rank 0 prints "committed V" after each commit. With
 *         --hang-at V, version V is begun and half of every file written, then rank 0
 *         prints "pids P..." and "half V" and every process waits to be killed.
 *     --restart [--expect-version V|A,B] [--expect-level L]
 *         restart (a new handle), print "restarted V LEVEL", check every byte of every
 *         file of this process, and the expectations.
 * DIR may name an environment variable as $VAR (e.g. $TIERIO_NODE_LOCAL). */
#include "tio_test.h"

#include <signal.h>
#include <sys/prctl.h>

#include "ckpt_data.h"

static const char *dir_arg(const char *s)
{
    if (!strcmp(s, "-"))
        return NULL;
    if (s[0] == '$') {
        const char *v = getenv(s + 1);
        if (!v || !*v)
            TT_DIE("environment variable %s is not set", s + 1);
        return v;
    }
    return s;
}

static int level_of(const char *s)
{
    static const char *const names[] = {"none", "local", "partner", "global"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i]))
            return i;
    TT_DIE("unknown level %s", s);
    return -1;
}

int main(int argc, char **argv)
{
    const char *local = NULL, *global = NULL, *name = "job", *keep = NULL, *drain = NULL,
               *every = NULL, *expect_v = NULL, *expect_l = NULL;
    int partner = 0, threads = 0, write = 0, restart = 0;
    long long first = 0, last = 0, hang = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--local") && next)
            local = argv[++i];
        else if (!strcmp(a, "--global") && next)
            global = argv[++i];
        else if (!strcmp(a, "--name") && next)
            name = argv[++i];
        else if (!strcmp(a, "--keep") && next)
            keep = argv[++i];
        else if (!strcmp(a, "--drain") && next)
            drain = argv[++i];
        else if (!strcmp(a, "--drain-every") && next)
            every = argv[++i];
        else if (!strcmp(a, "--scale") && next)
            cd_scale = (size_t)atol(argv[++i]);
        else if (!strcmp(a, "--partner"))
            partner = 1;
        else if (!strcmp(a, "--threads") && next)
            threads = !strcmp(argv[++i], "multiple");
        else if (!strcmp(a, "--write") && i + 2 < argc) {
            write = 1;
            first = atoll(argv[++i]);
            last = atoll(argv[++i]);
        } else if (!strcmp(a, "--hang-at") && next)
            hang = atoll(argv[++i]);
        else if (!strcmp(a, "--restart"))
            restart = 1;
        else if (!strcmp(a, "--expect-version") && next)
            expect_v = argv[++i];
        else if (!strcmp(a, "--expect-level") && next)
            expect_l = argv[++i];
        else {
            fprintf(stderr, "ckpt_job: bad argument %s (see the comment at the top)\n", a);
            return 2;
        }
    }
    if (write == restart) {
        fprintf(stderr, "ckpt_job: give --write or --restart\n");
        return 2;
    }
    /* Die with the launcher: no orphan when a script kills the job. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (threads) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        tt_setup("ckpt_job");
        TT_CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
    } else {
        tt_init(&argc, &argv, "ckpt_job");
    }
    local = local ? dir_arg(local) : NULL;
    global = global ? dir_arg(global) : NULL;
    MPI_Info info = cd_info(local, global, partner ? "true" : NULL, keep, drain, every);
    tio_ckpt_t ck;
    TT_MPI(tio_ckpt_open(MPI_COMM_WORLD, name, info, &ck));
    MPI_Info_free(&info);

    if (write) {
        for (long long v = first; v <= last; v++) {
            TT_MPI(tio_ckpt_begin(ck, v));
            cd_write_all(ck, v);
            TT_MPI(tio_ckpt_commit(ck));
            if (tt_rank == 0) {
                printf("committed %lld\n", v);
                fflush(stdout);
            }
        }
        if (hang >= 0) {
            TT_MPI(tio_ckpt_begin(ck, hang));
            for (int f = 0; f < CD_NFILES; f++) {
                char path[PATH_MAX];
                TT_MPI(tio_ckpt_route(ck, cd_file[f], path, sizeof path));
                size_t n = cd_size(tt_rank, hang, f);
                cd_write_part(path, tt_rank, hang, f, 0, n / 2);
            }
            int pid = (int)getpid(), *pids = malloc(sizeof(int) * (size_t)tt_size);
            MPI_Gather(&pid, 1, MPI_INT, pids, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (tt_rank == 0) {
                printf("pids");
                for (int r = 0; r < tt_size; r++)
                    printf(" %d", pids[r]);
                printf("\nhalf %lld\n", hang);
                fflush(stdout);
            }
            for (;;)
                pause(); /* killed here, in the middle of version `hang` */
        }
        TT_MPI(tio_ckpt_close(&ck));
        return tt_finish();
    }

    long long v = -2;
    int level = -2;
    TT_MPI(tio_ckpt_restart(ck, &v, &level));
    if (tt_rank == 0) {
        printf("restarted %lld %s\n", v, cd_level_name(level));
        fflush(stdout);
    }
    if (v >= 0)
        cd_verify_all(ck, v);
    if (expect_v) {
        int ok = 0;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", expect_v);
        for (char *s = strtok(buf, ","); s; s = strtok(NULL, ","))
            ok |= atoll(s) == v;
        TT_CHECK(ok, "restarted version %lld, expected %s", v, expect_v);
    }
    if (expect_l)
        TT_CHECK(level == level_of(expect_l), "restarted from level %s, expected %s",
                 cd_level_name(level), expect_l);
    TT_MPI(tio_ckpt_close(&ck));
    return tt_finish();
}
