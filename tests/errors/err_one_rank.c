/* An error on ONE process only (rank 1) of a collective MPI_Win_allocate or
 * MPI_Win_allocate_shared: every process must return an error (no hang: the test has a
 * timeout) whose string names rank 1, the hint or path and the reason, and the files the
 * other processes had already created must be gone. */
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/resource.h>

#include "errtest.h"

#define WIN_SIZE (4 << 20)

int main(int argc, char **argv)
{
    et_init(&argc, &argv, "err_one_rank");
    if (tt_size < 2) {
        if (tt_rank == 0)
            printf("skipped: needs at least 2 processes\n");
        MPI_Finalize();
        return 77;
    }
    char dir[4200], ro[4200], mine[4400], shared[4400], bad[4400], label[256];
    et_subdir(dir, sizeof dir, "target");
    et_subdir(ro, sizeof ro, "readonly");
    if (tt_rank == 0)
        CHECK_EQ(chmod(ro, 0500), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(mine, sizeof mine, "%s/win-%d.dat", dir, tt_rank);
    snprintf(shared, sizeof shared, "%s/shared.dat", dir);
    const int me = tt_rank == 1, root = geteuid() == 0;
    signal(SIGXFSZ, SIG_IGN);

    enum { BAD_PATH, BAD_HINT, NO_FILENAME, CANNOT_GROW, NOT_WRITABLE, NKINDS };
    static const char *kind_name[] = {"nonexistent directory", "invalid hint",
                                      "missing filename", "file cannot grow",
                                      "directory not writable"};
    for (int c = ET_WIN_ALLOCATE; c <= ET_WIN_ALLOCATE_SHARED; c++) {
        const int sh = c == ET_WIN_ALLOCATE_SHARED;
        for (int k = 0; k < NKINDS; k++) {
            if (sh && k == BAD_PATH)
                continue; /* different names in a shared window: err_consistency */
            snprintf(label, sizeof label, "%s: rank 1 only: %s", et_call_name[c],
                     kind_name[k]);
            CASE(label);
            const char *fn = sh ? shared : mine;
            const char *kv[4][2] = {{"alloc_type", "storage"},
                                    {"storage_alloc_filename", fn},
                                    {"storage_alloc_unlink", "true"},
                                    {NULL, NULL}};
            snprintf(bad, sizeof bad, "%s", fn);
            if (me && k == BAD_PATH) {
                snprintf(bad, sizeof bad, "%s/missing/win-1.dat", dir);
                kv[1][1] = bad;
            } else if (me && k == BAD_HINT) {
                kv[3][0] = "storage_alloc_factor";
                kv[3][1] = "2";
            } else if (me && k == NO_FILENAME) {
                kv[1][0] = NULL;
            } else if (me && k == NOT_WRITABLE) {
                snprintf(bad, sizeof bad, "%s/%s", ro, sh ? "shared.dat" : "win-1.dat");
                kv[1][1] = bad;
            }
            if (k == NOT_WRITABLE && sh) { /* all name the same file in ro */
                snprintf(bad, sizeof bad, "%s/shared.dat", ro);
                kv[1][1] = bad;
            }
            if (k == NOT_WRITABLE && !root) {
                if (tt_rank == 0)
                    printf("skipped: %s (needs root for setfsuid)\n", label);
                continue;
            }
            MPI_Info info = et_info(kv, 4);
            struct et_snap s = et_snap_take(dir), sro = et_snap_take(ro);
            struct rlimit old, lim;
            getrlimit(RLIMIT_FSIZE, &old);
            if (me && k == CANNOT_GROW) { /* 1 MiB: rank 1's piece / window is 4 MiB */
                lim = old;
                lim.rlim_cur = 1 << 20;
                CHECK_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
            }
            if (me && k == NOT_WRITABLE)
                setfsuid(65534);
            MPI_Win win;
            void *base;
            /* a shared file already made longer by the pieces after rank 1's would let
             * rank 1 reserve below the limit: those ranks ask for nothing */
            MPI_Aint size = sh && k == CANNOT_GROW && tt_rank > 1 ? 0 : WIN_SIZE;
            int rc = et_call((enum et_call)c, size, info, 0, &win, &base);
            if (me && k == NOT_WRITABLE)
                setfsuid(0);
            if (me && k == CANNOT_GROW)
                CHECK_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
            MPI_Info_free(&info);

            /* everybody hears rank 1's reason */
            char bad1[4400];
            strcpy(bad1, bad);
            MPI_Bcast(bad1, sizeof bad1, MPI_CHAR, 1, MPI_COMM_WORLD);
            switch (k) {
            case BAD_PATH:
                et_check_error(rc, EX_NOENT, "rank 1: ", bad1, "No such file or directory",
                               NULL);
                break;
            case BAD_HINT:
                et_check_error(rc, EX_INFO_VALUE, "rank 1: ", "storage_alloc_factor=\"2\"",
                               NULL);
                break;
            case NO_FILENAME:
                et_check_error(rc, EX_INFO_KEY, "rank 1: ", "storage_alloc_filename", NULL);
                break;
            case CANNOT_GROW:
                et_check_error(rc, EX_NOSPACE, "rank 1: ", bad1, "reserve", "File too large",
                               NULL);
                break;
            case NOT_WRITABLE:
                et_check_error(rc, EX_ACCESS, "rank 1: ", bad1, "Permission denied", NULL);
                break;
            }
            et_snap_check(&s, dir, WIN_SIZE / 1024);
            et_snap_check(&sro, ro, WIN_SIZE / 1024);
        }
    }
    return et_finish();
}
