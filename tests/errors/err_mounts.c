/* A full disk and a read-only file system, on MPI_Win_allocate, MPI_Win_allocate_shared
 * and MPI_Alloc_mem. Run by with_mounts.sh, which gives the job a 1 MiB tmpfs
 * ($TIERIO_TEST_FULL_DIR) and a read-only bind mount ($TIERIO_TEST_RO_DIR) in a private mount
 * namespace.
 *   - a window bigger than the free space fails at allocation with MPI_ERR_NO_SPACE
 *     (message: path, "reserve"), on every process, also when only rank 1's is too big;
 *     the files the others created are gone; nothing stays mapped;
 *   - a window that fits stays usable after the rest of the disk filled up: stores and
 *     RMA into every byte (no SIGBUS), MPI_Win_sync, and the file holds the data;
 *   - a read-only file system: MPI_ERR_ACCESS naming the path and the reason. */
#include <setjmp.h>
#include <signal.h>

#include "errtest.h"

static sigjmp_buf jb;
static void on_sigbus(int sig)
{
    (void)sig;
    siglongjmp(jb, 1);
}

static int run(enum et_call c, MPI_Aint size, const char *fn)
{
    const char *kv[][2] = {{"alloc_type", "storage"}, {"storage_alloc_filename", fn},
                           {"storage_alloc_unlink", "true"}};
    MPI_Info info = et_info(kv, 3);
    MPI_Win win;
    void *base;
    int rc = et_call(c, size, info, 0, &win, &base);
    MPI_Info_free(&info);
    return rc;
}

static void fill_up(const char *path)
{
    static char junk[16384];
    memset(junk, 'j', sizeof junk);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    setvbuf(f, NULL, _IONBF, 0);
    for (size_t chunk = sizeof junk; chunk > 0;)
        if (fwrite(junk, 1, chunk, f) != chunk) {
            CHECK(errno == ENOSPC);
            clearerr(f);
            chunk /= 2;
        }
    fclose(f);
}

static void reserved_window_survives(const char *full)
{
    const MPI_Aint n = 192 * 1024;
    char fn[4400], filler[4400];
    CASE("MPI_Win_allocate: a reserved window survives a full disk");
    snprintf(fn, sizeof fn, "%s/win-%d.dat", full, tt_rank);
    snprintf(filler, sizeof filler, "%s/filler", full);
    const char *kv[][2] = {{"alloc_type", "storage"}, {"storage_alloc_filename", fn}};
    MPI_Info info = et_info(kv, 2);
    MPI_Win win = MPI_WIN_NULL;
    unsigned char *base = NULL;
    CHECK_EQ(MPI_Win_allocate(n, 1, info, MPI_COMM_WORLD, &base, &win), MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tt_rank == 0)
        fill_up(filler);
    MPI_Barrier(MPI_COMM_WORLD);

    static unsigned char mine[192 * 1024], want[192 * 1024], back[192 * 1024];
    const int right = (tt_rank + 1) % tt_size, left = (tt_rank + tt_size - 1) % tt_size;
    for (MPI_Aint i = 0; i < n; i++) {
        mine[i] = (unsigned char)(i * 3 + tt_rank + 1);
        want[i] = (unsigned char)(i * 3 + left + 1);
    }
    struct sigaction sa = {.sa_handler = on_sigbus}, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &old);
    if (sigsetjmp(jb, 1) != 0)
        FAIL_NOW("SIGBUS writing into a reserved storage window on a full disk");
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tt_rank, 0, win);
    memset(base, 0xAB, (size_t)n); /* every byte, by stores */
    MPI_Win_unlock(tt_rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(mine, (int)n, MPI_BYTE, right, 0, (int)n, MPI_BYTE, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    sigaction(SIGBUS, &old, NULL);
    MPI_Win_lock(MPI_LOCK_SHARED, tt_rank, 0, win);
    CHECK(memcmp(base, want, (size_t)n) == 0);
    MPI_Win_unlock(tt_rank, win);
    CHECK_EQ(MPI_Win_sync(win), MPI_SUCCESS);
    FILE *f = fopen(fn, "r");
    CHECK(f && fread(back, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    CHECK(memcmp(back, want, (size_t)n) == 0);
    CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    unlink(fn);
    if (tt_rank == 0)
        unlink(filler);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(tc_count_entries(full), 0);
}

int main(int argc, char **argv)
{
    et_init(&argc, &argv, "err_mounts");
    const char *full = getenv("TIERIO_TEST_FULL_DIR"), *ro = getenv("TIERIO_TEST_RO_DIR");
    if (!full || !ro) {
        if (tt_rank == 0)
            printf("skipped: run me through with_mounts.sh\n");
        MPI_Finalize();
        return 77;
    }
    char path[4400], label[192];
    const MPI_Aint big = 4 << 20; /* the tmpfs holds 1 MiB */
    for (int c = 0; c < ET_NCALLS; c++) {
        const int shared = c == ET_WIN_ALLOCATE_SHARED, coll = c != ET_ALLOC_MEM;
        struct et_snap s;

        snprintf(label, sizeof label, "%s: full disk", et_call_name[c]);
        CASE(label);
        if (shared)
            snprintf(path, sizeof path, "%s/shared.dat", full);
        else
            snprintf(path, sizeof path, "%s/win-%d.dat", full, tt_rank);
        char rpath[4400]; /* a collective call reports rank 0's path everywhere */
        if (shared)
            snprintf(rpath, sizeof rpath, "%s", path);
        else
            snprintf(rpath, sizeof rpath, "%s/win-%d.dat", full, coll ? 0 : tt_rank);
        s = et_snap_take(full);
        et_check_error(run(c, big, path), EX_NOSPACE, coll ? "rank 0: " : "", rpath,
                       "reserve", "No space left on device", NULL);
        et_snap_check(&s, full, big / 1024);

        if (coll && tt_size > 1) {
            snprintf(label, sizeof label, "%s: full disk on rank 1 only", et_call_name[c]);
            CASE(label);
            char path1[4400];
            if (shared)
                snprintf(path1, sizeof path1, "%s/shared.dat", full);
            else
                snprintf(path1, sizeof path1, "%s/win-1.dat", full);
            s = et_snap_take(full);
            et_check_error(run(c, tt_rank == 1 ? big : 64 * 1024, path), EX_NOSPACE,
                           "rank 1: ", path1, "reserve", "No space left on device", NULL);
            et_snap_check(&s, full, big / 1024);
        }

        snprintf(label, sizeof label, "%s: read-only file system", et_call_name[c]);
        CASE(label);
        if (shared)
            snprintf(path, sizeof path, "%s/shared.dat", ro);
        else
            snprintf(path, sizeof path, "%s/win-%d.dat", ro, tt_rank);
        if (shared)
            snprintf(rpath, sizeof rpath, "%s", path);
        else
            snprintf(rpath, sizeof rpath, "%s/win-%d.dat", ro, coll ? 0 : tt_rank);
        s = et_snap_take(ro);
        et_check_error(run(c, 64 * 1024, path), EX_ACCESS, coll ? "rank 0: " : "", rpath,
                       "Read-only file system", NULL);
        et_snap_check(&s, ro, 1 << 20);
    }
    reserved_window_survives(full);
    return et_finish();
}
