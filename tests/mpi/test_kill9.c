/* Data synced with MPI_Win_sync survives the processes being killed (kill -9: no
 * MPI_Win_free, no munmap, no MPI_Finalize). Driven by test_kill9.sh:
 *
 *   test_kill9 --dir D        (under mpiexec) write a pattern through local stores and
 *                             MPI_Put, MPI_Win_sync, then print "synced <pid>..." (all
 *                             ranks' pids) and wait to be killed
 *   test_kill9 --check D NP   (no MPI) the file holds every rank's synced pattern byte
 *                             for byte, and its pages are clean in the page cache
 *
 * Limitation: the processes die, the kernel does not; the page cache survives process
 * death, so finding the data in the file after the kill does not by itself prove it
 * reached the device. The clean-page check does (written back, as msync(MS_SYNC) leaves
 * pages); surviving a machine crash is not tested here. */
#include "tio_test.h"

#include <signal.h>
#include <sys/prctl.h>

#define WIN 10256 /* 2.5 pages + 16: a multiple of 16 */

static uint64_t offset_of(int r) { return 32 + (uint64_t)r * (WIN + 48); }

static void expected(uint8_t *w, int r, int n)
{
    tt_fill(w, WIN, 500 + (uint64_t)r, 0);
    tt_fill(w + 4000, 3000, 600 + (uint64_t)((r + n - 1) % n), 0); /* put by the left */
}

static int check(const char *dir, int n)
{
    char file[PATH_MAX];
    snprintf(file, sizeof file, "%s/kill9.dat", dir);
    tt_name = "kill9-check";
    uint8_t *exp = malloc(WIN);
    for (int r = 0; r < n; r++) {
        char what[64];
        snprintf(what, sizeof what, "rank %d's synced data", r);
        expected(exp, r, n);
        tt_check_file(file, offset_of(r), exp, WIN, what);
        tt_check_clean(file, offset_of(r), WIN, what);
    }
    free(exp);
    if (!tt_errors)
        printf("kill9-check: the synced data of %d ranks is in %s\n", n, file);
    return tt_errors ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--check"))
        return check(argv[2], atoi(argv[3]));
    if (argc != 3 || strcmp(argv[1], "--dir")) {
        fprintf(stderr, "usage: test_kill9 --dir D | --check D NP\n");
        return 2;
    }
    /* Die with the launcher's process that started us: no orphan waits forever when the
     * script has to kill the job some other way. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* not tt_init: the script owns the directory */
    MPI_Init(&argc, &argv);
    tt_name = "kill9";
    MPI_Comm_rank(MPI_COMM_WORLD, &tt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tt_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int n = tt_size, me = tt_rank;
    char file[PATH_MAX];
    snprintf(file, sizeof file, "%s/kill9.dat", argv[2]);
    MPI_Info info;
    MPI_Info_create(&info);
    tt_info_set(info, "alloc_type", "storage");
    tt_info_set(info, "storage_alloc_filename", file);
    tt_info_setf(info, "storage_alloc_offset", "%" PRIu64, offset_of(me));
    tt_info_set(info, "storage_alloc_unlink", "false");
    uint8_t *base;
    MPI_Win win;
    TT_MPI(MPI_Win_allocate(WIN, 1, info, MPI_COMM_WORLD, &base, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Info_free(&info);

    TT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    tt_fill(base, WIN, 500 + (uint64_t)me, 0);
    TT_MPI(MPI_Win_unlock(me, win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    uint8_t src[3000];
    tt_fill(src, sizeof src, 600 + (uint64_t)me, 0);
    int right = (me + 1) % n;
    TT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    TT_MPI(MPI_Put(src, 3000, MPI_BYTE, right, 4000, 3000, MPI_BYTE, win));
    TT_MPI(MPI_Win_unlock(right, win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_MPI(MPI_Win_sync(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    long pid = (long)getpid(), *pids = malloc(sizeof(long) * (size_t)n);
    TT_MPI(MPI_Gather(&pid, 1, MPI_LONG, pids, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    if (me == 0) {
        printf("synced");
        for (int r = 0; r < n; r++)
            printf(" %ld", pids[r]);
        printf("\n");
        fflush(stdout);
    }
    /* Wait for SIGKILL; a hang here is ended by the script's (or CTest's) timeout. */
    for (;;)
        pause();
}
