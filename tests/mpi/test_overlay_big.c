/* Large storage windows (several MiB, page-aligned offsets): on one node with Open MPI they
 * are built on MPI's shared-memory window with 2 MiB alignment, where every process sees
 * the segment at its own address and so each window starts at its own distance into its
 * piece. Every rank puts, gets and accumulates at the start, the middle and the end of
 * every other rank's window; window memory and files are checked byte for byte.
 * Usage: test_overlay_big --kind storage|combined [--expect-impl IMPL] */
#include "tio_test.h"

#define BIG ((size_t)6 << 20) /* 6 MiB: three 2 MiB units */

static uint64_t pattern(int owner, int writer, size_t slot)
{
    return ((uint64_t)owner << 48) ^ ((uint64_t)writer << 40) ^ (slot * 2654435761u);
}

/* The content of owner's window after every writer's puts and the counter. */
static void expected(uint64_t *want, size_t nslots, const size_t *spots, size_t nspots,
                     int owner, int n)
{
    memset(want, 0, nslots * 8);
    for (int w = 0; w < n; w++)
        for (size_t k = 0; k < nspots; k++)
            want[spots[k] + (size_t)w] = pattern(owner, w, spots[k] + (size_t)w);
    want[nslots - 1] = (uint64_t)n;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "overlay_big");
    const char *kind = "storage", *impl = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--kind"))
            kind = argv[i + 1];
        else if (!strcmp(argv[i], "--expect-impl"))
            impl = argv[i + 1];
    }
    const int n = tt_size, me = tt_rank;
    const size_t nslots = BIG / 8;
    char file[PATH_MAX], off[32];
    tt_path(file, sizeof file, "big.dat");
    snprintf(off, sizeof off, "%zu", (size_t)me * (BIG + ((size_t)1 << 20)));
    MPI_Info info = tt_storage_info(file, off);
    int combined = !strcmp(kind, "combined");
    if (combined)
        tt_info_set(info, "storage_alloc_factor", "0.5");
    uint64_t *base;
    MPI_Win win;
    TT_MPI(MPI_Win_allocate((MPI_Aint)BIG, 8, info, MPI_COMM_WORLD, &base, &win));
    MPI_Info_free(&info);
    if (impl) {
        MPI_Info used;
        TT_MPI(MPI_Win_get_info(win, &used));
        const char *got = tt_info_get(used, "tierio_window_impl");
        TT_CHECK(got && !strcmp(got, impl), "tierio_window_impl %s, expected %s",
                 got ? got : "(unset)", impl);
        MPI_Info_free(&used);
    }
    for (size_t s = 0; s < nslots; s++)
        base[s] = 0;

    /* Slots each writer owns in every target (writer w: spot + w), at the start, the
     * middle and the end; the last slot is the counter. */
    const size_t spots[] = {0, 2 * (size_t)n, nslots / 2 - (size_t)n, nslots / 2,
                            nslots - 2 * (size_t)n};
    const size_t nspots = sizeof spots / sizeof spots[0];
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_MPI(MPI_Win_lock_all(0, win));
    for (int t = 0; t < n; t++)
        for (size_t k = 0; k < nspots; k++) {
            size_t slot = spots[k] + (size_t)me;
            uint64_t v = pattern(t, me, slot);
            TT_MPI(MPI_Put(&v, 1, MPI_UINT64_T, t, (MPI_Aint)slot, 1, MPI_UINT64_T, win));
        }
    TT_MPI(MPI_Win_flush_all(win));
    /* an atomic counter in the last slot of every window */
    for (int t = 0; t < n; t++) {
        uint64_t one = 1, old;
        TT_MPI(MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, t, (MPI_Aint)(nslots - 1), MPI_SUM,
                                win));
    }
    TT_MPI(MPI_Win_flush_all(win));
    TT_MPI(MPI_Win_unlock_all(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* What every window must hold now: ours locally, a neighbour's through MPI_Get, and
     * the storage part of ours (memory first) in the file from our offset. */
    uint64_t *want = malloc(BIG), *got = malloc(BIG);
    expected(want, nslots, spots, nspots, me, n);
    TT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    tt_compare(base, want, BIG, "own window after puts and fetch_and_op");
    TT_MPI(MPI_Win_unlock(me, win));
    TT_MPI(MPI_Win_sync(win));
    size_t sto = combined ? BIG - (BIG / 2) / 4096 * 4096 : BIG;
    tt_check_file(file, (uint64_t)atoll(off), (uint8_t *)want + (BIG - sto), sto,
                  "storage part of my window in the file");

    const int right = (me + 1) % n;
    TT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    TT_MPI(MPI_Get(got, (int)nslots, MPI_UINT64_T, right, 0, (int)nslots, MPI_UINT64_T, win));
    TT_MPI(MPI_Win_unlock(right, win));
    expected(want, nslots, spots, nspots, right, n);
    tt_compare(got, want, BIG, "right neighbour's window through MPI_Get");
    TT_MPI(MPI_Win_free(&win));
    free(want);
    free(got);
    return tt_finish();
}
