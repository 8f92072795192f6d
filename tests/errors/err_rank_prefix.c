/* The rank in an agreed error message: a collective call that fails on one process fails
 * on all with that process's message prefixed "rank R: " exactly once, R being its rank in
 * the communicator the caller passed, on every process -- also when the error is agreed
 * on more than once on its way out. Three paths, the last process failing alone:
 *   checkpoint open (a bad value, then a different value, in that process's info);
 *   MPI_File_open routed by libtierio-pmpi (a bad tierio hint in that process's info);
 *   a drain (that process cannot create its global copy), with --threads under
 *   MPI_THREAD_MULTIPLE, where the drain thread agrees by itself. */
#include "errtest.h"

#include <tierio.h>

static char g_local[4096], g_global[4096];

/* rc must be an error whose message starts with "rank <want>: " and holds no other rank
 * prefix ("rank " digits ": ") anywhere. */
static void check_prefix(int rc, int want, const char *what)
{
    CASE(what);
    char msg[MPI_MAX_ERROR_STRING] = "", pre[32];
    int len = 0, n = 0;
    if (rc == MPI_SUCCESS)
        FAIL_NOW("the call succeeded; an error was expected");
    MPI_Error_string(rc, msg, &len);
    for (const char *p = msg; (p = strstr(p, "rank ")) != NULL; p++) {
        const char *d = p + 5;
        while (*d >= '0' && *d <= '9')
            d++;
        n += d > p + 5 && d[0] == ':' && d[1] == ' ';
    }
    snprintf(pre, sizeof pre, "rank %d: ", want);
    if (n != 1 || strncmp(msg, pre, strlen(pre)) != 0)
        FAIL_NOW("%d rank prefix(es), expected one \"%s\" at the start: \"%s\"", n, pre, msg);
}

static void test_ckpt_open(void)
{
    int last = tt_size - 1;
    const char *kv[][2] = {{TIO_CKPT_HINT_GLOBAL_DIR, g_global},
                           {TIO_CKPT_HINT_KEEP, tt_rank == last ? "0" : "2"}};
    MPI_Info info = et_info(kv, 2);
    tio_ckpt_t ck = NULL;
    check_prefix(tio_ckpt_open(MPI_COMM_WORLD, "prefix", info, &ck), last,
                 "checkpoint open, a bad value on the last process");
    MPI_Info_free(&info);
    kv[1][1] = tt_rank == last ? "3" : "2";
    info = et_info(kv, 2);
    check_prefix(tio_ckpt_open(MPI_COMM_WORLD, "prefix", info, &ck), last,
                 "checkpoint open, a different value on the last process");
    MPI_Info_free(&info);
}

static void test_mpiio(void)
{
    int last = tt_size - 1;
    const char *kv[][2] = {{TIO_AGG_HINT_ENABLE, "enable"},
                           {TIO_AGG_HINT_BUFFER_COUNT, tt_rank == last ? "1" : "2"}};
    MPI_Info info = et_info(kv, 2);
    char path[4200];
    snprintf(path, sizeof path, "%s/routed", et_root);
    MPI_File fh = MPI_FILE_NULL;
    check_prefix(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info,
                               &fh),
                 last, "MPI_File_open, a bad tierio hint on the last process");
    CHECK(fh == MPI_FILE_NULL);
    MPI_Info_free(&info);
}

static void test_drain(void)
{
    int last = tt_size - 1;
    const char *kv[][2] = {{TIO_CKPT_HINT_LOCAL_DIR, g_local},
                           {TIO_CKPT_HINT_GLOBAL_DIR, g_global},
                           {TIO_CKPT_HINT_DRAIN, "sync"}};
    MPI_Info info = et_info(kv, 3);
    tio_ckpt_t ck;
    if (tio_ckpt_open(MPI_COMM_WORLD, "drain", info, &ck) != MPI_SUCCESS ||
        tio_ckpt_begin(ck, 1) != MPI_SUCCESS)
        FAIL_NOW("open and begin");
    static const char data[] = "state of one process";
    CHECK_EQ(tio_ckpt_write(ck, "state", data, sizeof data), MPI_SUCCESS);
    /* The last process's global copy cannot be made: a directory has its name. */
    if (tt_rank == last) {
        char p[4400];
        snprintf(p, sizeof p, "%s/drain/v1", g_global);
        CHECK_OK(mkdir(p, 0755));
        snprintf(p, sizeof p, "%s/drain/v1/r%d.state", g_global, last);
        CHECK_OK(mkdir(p, 0755));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check_prefix(tio_ckpt_commit(ck), last, "drain, the last process cannot copy");
    CHECK_EQ(tio_ckpt_close(&ck), MPI_SUCCESS);
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--threads") == 0)
        tt_mpi_init_multiple(&argc, &argv);
    et_init(&argc, &argv, "rank-prefix");
    snprintf(g_local, sizeof g_local, "%s/local", et_root);
    snprintf(g_global, sizeof g_global, "%s/global", et_root);
    if (tt_rank == 0) {
        CHECK_OK(mkdir(g_local, 0755));
        CHECK_OK(mkdir(g_global, 0755));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    test_ckpt_open();
    test_mpiio();
    test_drain();
    return et_finish();
}
