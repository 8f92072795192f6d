/* Storage windows outlive their processes: storage_alloc_unlink, storage_alloc_discard.
 *
 *   test_restart --phase all      one job: write, free, map again and see the data;
 *                                 discard=true: synced changes reach the file, later
 *                                 ones do not; unlink=true: the file is gone after free
 *   test_restart --phase write --dir D   write and free with unlink=false
 *   test_restart --phase read --dir D    (a later job, same rank count) map the same file,
 *                                        see the data, free with unlink=true: the file
 *                                        must be gone
 * (run_restart_jobs.sh runs the write job and then the read job). */
#include "tio_test.h"

#define WIN 14288 /* 3.5 pages, a multiple of 16 */

static uint64_t offset_of(int r) { return 16 + (uint64_t)r * (WIN + 32); }

/* What rank r's window holds after the write phase: its own pattern, 1000 bytes at 3000
 * put by its left neighbour (both synced), then (not synced: MPI_Win_free must write
 * them back) 500 bytes at 10000 by itself and 100 at 500 put by its left neighbour. */
static void written_synced(uint8_t *w, int r, int n)
{
    tt_fill(w, WIN, 40 + (uint64_t)r, 0);
    tt_fill(w + 3000, 1000, 60 + (uint64_t)((r + n - 1) % n), 0);
}
static void written(uint8_t *w, int r, int n)
{
    written_synced(w, r, n);
    tt_fill(w + 10000, 500, 45 + (uint64_t)r, 0);
    tt_fill(w + 500, 100, 65 + (uint64_t)((r + n - 1) % n), 0);
}

static MPI_Win open_window(const char *file, const char *unlink_v, const char *discard_v,
                           uint8_t **base)
{
    MPI_Info info;
    MPI_Info_create(&info);
    tt_info_set(info, "alloc_type", "storage");
    tt_info_set(info, "storage_alloc_filename", file);
    tt_info_setf(info, "storage_alloc_offset", "%" PRIu64, offset_of(tt_rank));
    tt_info_set(info, "storage_alloc_unlink", unlink_v);
    if (discard_v)
        tt_info_set(info, "storage_alloc_discard", discard_v);
    MPI_Win win;
    TT_MPI(MPI_Win_allocate(WIN, 1, info, MPI_COMM_WORLD, base, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Info_free(&info);
    return win;
}

static void local_fill(MPI_Win win, uint8_t *base, size_t at, size_t len, uint64_t seed)
{
    TT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tt_rank, 0, win));
    tt_fill(base + at, len, seed, 0);
    TT_MPI(MPI_Win_unlock(tt_rank, win));
}

static void put_right(MPI_Win win, size_t at, size_t len, uint64_t seed)
{
    int right = (tt_rank + 1) % tt_size;
    uint8_t *buf = malloc(len);
    tt_fill(buf, len, seed, 0);
    TT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    TT_MPI(MPI_Put(buf, (int)len, MPI_BYTE, right, (MPI_Aint)at, (int)len, MPI_BYTE, win));
    TT_MPI(MPI_Win_unlock(right, win));
    free(buf);
}

/* Read our window under a lock on ourselves. Not MPI_Win_sync: on a storage window it
 * also writes back to storage, which the discard phase must not do before it means to. */
static void check_memory(MPI_Win win, const uint8_t *base, const uint8_t *exp, const char *what)
{
    TT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, tt_rank, 0, win));
    tt_compare(base, exp, WIN, "%s: window of rank %d", what, tt_rank);
    TT_MPI(MPI_Win_unlock(tt_rank, win));
}

static void check_file(const char *file, const uint8_t *exp, const char *what)
{
    tt_check_file(file, offset_of(tt_rank), exp, WIN, what);
}

static void phase_write(const char *file)
{
    uint8_t *base, *exp = malloc(WIN);
    written_synced(exp, tt_rank, tt_size);
    MPI_Win win = open_window(file, "false", NULL, &base);
    local_fill(win, base, 0, WIN, 40 + (uint64_t)tt_rank);
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    put_right(win, 3000, 1000, 60 + (uint64_t)tt_rank);
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    check_memory(win, base, exp, "write phase");
    TT_MPI(MPI_Win_sync(win)); /* outside any epoch, as the seed's programs do */
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    check_file(file, exp, "write phase: file after MPI_Win_sync");
    tt_check_clean(file, offset_of(tt_rank), WIN, "write phase after MPI_Win_sync");
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* changes after the last MPI_Win_sync: MPI_Win_free writes them back */
    local_fill(win, base, 10000, 500, 45 + (uint64_t)tt_rank);
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    put_right(win, 500, 100, 65 + (uint64_t)tt_rank);
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    written(exp, tt_rank, tt_size);
    check_memory(win, base, exp, "write phase, unsynced changes");
    TT_MPI(MPI_Win_free(&win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_CHECK(tt_exists(file), "storage_alloc_unlink=false: \"%s\" is gone after MPI_Win_free",
             file);
    check_file(file, exp, "write phase: file after MPI_Win_free");
    tt_check_clean(file, offset_of(tt_rank), WIN, "write phase after MPI_Win_free");
    free(exp);
}

/* Map the file again and see what the write phase left. */
static void phase_read(const char *file, const char *unlink_v)
{
    uint8_t *base, *exp = malloc(WIN);
    written(exp, tt_rank, tt_size);
    MPI_Win win = open_window(file, unlink_v, NULL, &base);
    check_memory(win, base, exp, "restart: the data written by the earlier window");
    TT_CHECK(tt_exists(file), "\"%s\" missing while its window is alive", file);
    TT_MPI(MPI_Win_free(&win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (!strcmp(unlink_v, "true"))
        TT_CHECK(!tt_exists(file), "storage_alloc_unlink=true: \"%s\" still exists after "
                 "MPI_Win_free", file);
    else
        check_file(file, exp, "restart: file after a read-only window was freed");
    free(exp);
}

/* storage_alloc_discard=true: the window starts with the file's data; what is synced
 * reaches the file, what changes after the last MPI_Win_sync does not. */
static void phase_discard(const char *file)
{
    const int n = tt_size, left = (tt_rank + n - 1) % n;
    uint8_t *base, *exp = malloc(WIN), *synced = malloc(WIN);
    written(exp, tt_rank, n);
    MPI_Win win = open_window(file, "false", "true", &base);
    check_memory(win, base, exp, "discard: initial content from the file");

    /* B: local stores over [100, 5100), a put from the left into [8000, 9000) */
    local_fill(win, base, 100, 5000, 70 + (uint64_t)tt_rank);
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    put_right(win, 8000, 1000, 80 + (uint64_t)tt_rank);
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    tt_fill(exp + 100, 5000, 70 + (uint64_t)tt_rank, 0);
    tt_fill(exp + 8000, 1000, 80 + (uint64_t)left, 0);
    check_memory(win, base, exp, "discard: after the first changes");
    TT_MPI(MPI_Win_sync(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    check_file(file, exp, "discard: file after MPI_Win_sync (synced changes must be there)");
    tt_check_clean(file, offset_of(tt_rank), WIN, "discard: after MPI_Win_sync");
    memcpy(synced, exp, WIN);

    /* C, never synced: into a page synced before ([4000, 4500)), a page untouched until
     * now up to the window's end ([12000, WIN)), and a put from the left [6000, 6100) */
    local_fill(win, base, 4000, 500, 90 + (uint64_t)tt_rank);
    local_fill(win, base, 12000, WIN - 12000, 91 + (uint64_t)tt_rank);
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    put_right(win, 6000, 100, 95 + (uint64_t)tt_rank);
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    tt_fill(exp + 4000, 500, 90 + (uint64_t)tt_rank, 0);
    tt_fill(exp + 12000, WIN - 12000, 91 + (uint64_t)tt_rank, 0);
    tt_fill(exp + 6000, 100, 95 + (uint64_t)left, 0);
    check_memory(win, base, exp, "discard: after the unsynced changes");
    /* They are not in the file before the free either (a private mapping). */
    check_file(file, synced, "discard: file before MPI_Win_free (unsynced changes leaked)");
    TT_MPI(MPI_Win_free(&win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    check_file(file, synced, "discard: file after MPI_Win_free (unsynced changes leaked)");

    /* unlink=true: the window sees the synced data, the file is gone after the free */
    win = open_window(file, "true", NULL, &base);
    check_memory(win, base, synced, "unlink: window over the file left by the discard phase");
    TT_CHECK(tt_exists(file), "\"%s\" missing while its window is alive", file);
    TT_MPI(MPI_Win_free(&win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_CHECK(!tt_exists(file), "storage_alloc_unlink=true: \"%s\" still exists after "
             "MPI_Win_free", file);
    free(exp);
    free(synced);
}

int main(int argc, char **argv)
{
    const char *phase = "all", *xdir = NULL;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--phase") && i + 1 < argc)
            phase = argv[++i];
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            xdir = argv[++i];
    tt_init(&argc, &argv, "restart");
    char file[PATH_MAX + 32];
    if (!strcmp(phase, "all")) {
        tt_path(file, sizeof file, "restart.dat");
        phase_write(file);
        phase_read(file, "false");
        phase_discard(file);
    } else {
        if (!xdir)
            TT_DIE("--phase %s needs --dir D (the same for both jobs)", phase);
        snprintf(file, sizeof file, "%s/restart.dat", xdir);
        if (!strcmp(phase, "write")) {
            phase_write(file);
        } else if (!strcmp(phase, "read")) {
            if (!tt_exists(file))
                tt_fail("\"%s\" does not exist: did the write job run (same rank count)?",
                        file);
            else
                phase_read(file, "true");
        } else {
            TT_DIE("unknown phase %s", phase);
        }
    }
    return tt_finish();
}
