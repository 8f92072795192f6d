/* Window bases that are not 16-byte aligned: MPICH 4.0 lands one-sided operations
 * base % 16 bytes early on such windows (MACHINE.md, src/win/quirks.c), so there tierio
 * refuses them with a clear error; Open MPI places them right, so there they must work
 * and the data must land at the right place in memory and in the file.
 *   - MPI_Win_allocate with storage_alloc_offset = 8 (and 16, which works everywhere)
 *   - MPI_Win_allocate_shared with pieces of 24 bytes (rank 1's piece starts at 24) */
#include "errtest.h"

static int misplacing_mpi(void)
{
#ifdef MPICH
    return 1;
#else
    return 0;
#endif
}

/* Whether this MPI can make a window with MPI_Win_create at all here: Open MPI's pt2pt
 * one-sided component refuses under MPI_THREAD_MULTIPLE. Then tierio's windows fail too,
 * and what is checked is that they fail cleanly: an error returned, not an abort, and
 * nothing left behind. */
static int mpi_makes_windows(void)
{
    static char buf[64];
    MPI_Comm self;
    MPI_Win win;
    MPI_Comm_dup(MPI_COMM_SELF, &self);
    MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
    int ok = MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, self, &win) == MPI_SUCCESS;
    if (ok)
        MPI_Win_free(&win);
    MPI_Comm_free(&self);
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

static void fill(unsigned char *p, size_t n, int who)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 29 + who * 17 + 5);
}

static void read_file(const char *fn, void *buf, size_t n, off_t off)
{
    FILE *f = fopen(fn, "r");
    CHECK(f != NULL);
    CHECK_EQ(fseeko(f, off, SEEK_SET), 0);
    CHECK_EQ(fread(buf, 1, n, f), n);
    fclose(f);
}

static void allocate_at(const char *dir, unsigned offset)
{
    const size_t n = 1000;
    char fn[4400], off[32], label[96];
    snprintf(label, sizeof label, "MPI_Win_allocate, storage_alloc_offset=%u", offset);
    CASE(label);
    snprintf(fn, sizeof fn, "%s/win-%d.dat", dir, tt_rank);
    snprintf(off, sizeof off, "%u", offset);
    const char *kv[][2] = {{"alloc_type", "storage"}, {"storage_alloc_filename", fn},
                           {"storage_alloc_offset", off}};
    MPI_Info info = et_info(kv, 3);
    struct et_snap s = et_snap_take(dir);
    MPI_Win win = MPI_WIN_NULL;
    unsigned char *base = ET_SENTINEL;
    int rc = et_call(ET_WIN_ALLOCATE, (MPI_Aint)n, info, 1, &win, (void **)&base);
    MPI_Info_free(&info);
    if (offset % 16 && misplacing_mpi()) {
        char hint[64];
        snprintf(hint, sizeof hint, "storage_alloc_offset=%u", offset);
        et_check_error(rc, EX_UNSUPPORTED, "rank 0: ", hint, "multiple of 16", NULL);
        et_snap_check(&s, dir, 1 << 20);
        return;
    }
    if (rc != MPI_SUCCESS && !mpi_makes_windows()) {
        CHECK(win == MPI_WIN_NULL);
        et_snap_check(&s, dir, 1 << 20);
        return;
    }
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        FAIL_NOW("MPI_Win_allocate failed: %s", msg);
    }
    CHECK_EQ((uintptr_t)base % 4096, offset % 4096);
    /* passive target: put into the right neighbour, then check memory and file */
    static unsigned char mine[1000], want[1000], back[1000];
    const int right = (tt_rank + 1) % tt_size, left = (tt_rank + tt_size - 1) % tt_size;
    fill(mine, n, tt_rank);
    fill(want, n, left);
    memset(base, 0, n);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(mine, (int)n, MPI_BYTE, right, 0, (int)n, MPI_BYTE, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, tt_rank, 0, win);
    CHECK(memcmp(base, want, n) == 0);
    MPI_Win_unlock(tt_rank, win);
    /* and a get of the left neighbour's window reads what we put there */
    static unsigned char got[1000];
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Get(got, (int)n, MPI_BYTE, right, 0, (int)n, MPI_BYTE, win);
    MPI_Win_unlock(right, win);
    CHECK(memcmp(got, mine, n) == 0);
    CHECK_EQ(MPI_Win_sync(win), MPI_SUCCESS);
    read_file(fn, back, n, offset);
    CHECK(memcmp(back, want, n) == 0);
    CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    unlink(fn);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void shared_pieces(const char *dir, int piece)
{
    char fn[4400], label[96];
    snprintf(label, sizeof label, "MPI_Win_allocate_shared, pieces of %d bytes", piece);
    CASE(label);
    snprintf(fn, sizeof fn, "%s/shared.dat", dir);
    const char *kv[][2] = {{"alloc_type", "storage"}, {"storage_alloc_filename", fn},
                           {"storage_alloc_unlink", "true"}};
    MPI_Info info = et_info(kv, 3);
    struct et_snap s = et_snap_take(dir);
    MPI_Win win = MPI_WIN_NULL;
    unsigned char *base = ET_SENTINEL;
    int rc = et_call(ET_WIN_ALLOCATE_SHARED, piece, info, 1, &win, (void **)&base);
    MPI_Info_free(&info);
    if (piece % 16 && misplacing_mpi()) {
        et_check_error(rc, EX_UNSUPPORTED, "rank 1: ", "MPI_Win_allocate_shared piece",
                       "multiple of 16", NULL);
        et_snap_check(&s, dir, 1 << 20);
        return;
    }
    if (rc != MPI_SUCCESS && !mpi_makes_windows()) {
        CHECK(win == MPI_WIN_NULL);
        et_snap_check(&s, dir, 1 << 20);
        return;
    }
    CHECK_EQ(rc, MPI_SUCCESS);
    /* the pieces are contiguous, rank after rank */
    unsigned char *b0 = NULL;
    MPI_Aint sz;
    int du;
    CHECK_EQ(MPI_Win_shared_query(win, 0, &sz, &du, &b0), MPI_SUCCESS);
    CHECK(base == b0 + (size_t)piece * (size_t)tt_rank);
    /* put into the right neighbour's piece; read it back with plain loads */
    unsigned char mine[64], want[64];
    const int right = (tt_rank + 1) % tt_size, left = (tt_rank + tt_size - 1) % tt_size;
    fill(mine, (size_t)piece, tt_rank);
    fill(want, (size_t)piece, left);
    MPI_Win_lock_all(0, win);
    MPI_Put(mine, piece, MPI_BYTE, right, 0, piece, MPI_BYTE, win);
    MPI_Win_flush(right, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    MPI_Win_sync(win);
    CHECK(memcmp(base, want, (size_t)piece) == 0);
    MPI_Win_unlock_all(win);
    CHECK_EQ(MPI_Win_sync(win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char back[64];
    read_file(fn, back, (size_t)piece, (off_t)piece * tt_rank);
    CHECK(memcmp(back, want, (size_t)piece) == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(tc_count_entries(dir), 0);
}

int main(int argc, char **argv)
{
    et_init(&argc, &argv, "err_offset16");
    char dir[4200];
    et_subdir(dir, sizeof dir, "target");
    allocate_at(dir, 8);
    allocate_at(dir, 16);
    allocate_at(dir, 4096 + 40);
    allocate_at(dir, 4096 + 48);
    if (tt_size > 1) {
        shared_pieces(dir, 24);
        shared_pieces(dir, 32);
    }
    return et_finish();
}
