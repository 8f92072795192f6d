/* storage_alloc_sync_scope on ummap windows: a checkpoint of three windows per process into
 * one shared file (HACC-IO's layout: window v of every rank in section v, rank by rank, at
 * unaligned offsets), synced window by window.
 *
 * With sync_scope=file, MPI_Win_sync of the first window alone puts all three of this
 * process's windows into the file, written back (clean page cache, root only); with the
 * default (window) the second and third stay in the windows until their own MPI_Win_sync,
 * and the file has none of their bytes. MPI_Win_get_info reports the scope in effect.
 * Then every window is synced and freed, and the whole file is checked byte for byte
 * (every rank's part, by every rank). */
#include "../mpi/tio_test.h"

#define NWIN 3
/* MPICH 4.0 misplaces one-sided operations on window bases that are not multiples of 16,
 * and tierio refuses such windows there (README): multiples of 16 with MPICH. */
#ifdef MPICH
#define HEADER 16
static const size_t win_bytes[NWIN] = {70000, 150000, 40000};
#else
#define HEADER 13
static const size_t win_bytes[NWIN] = {70001, 150000, 40000};
#endif

/* Offset of window v of rank r: sections of n ranks each, after HEADER bytes. */
static uint64_t offset_of(int v, int r, int n)
{
    uint64_t off = HEADER;
    for (int k = 0; k < v; k++)
        off += (uint64_t)n * win_bytes[k];
    return off + (uint64_t)r * win_bytes[v];
}

static uint64_t total_bytes(int n)
{
    return offset_of(NWIN - 1, n - 1, n) + win_bytes[NWIN - 1];
}

static uint64_t seed_of(int v, int r, int pass)
{
    return 1000003u * (uint64_t)(pass + 1) + 101u * (uint64_t)v + (uint64_t)r;
}

/* Written back: the pages wholly inside [off, off+len) (the edge pages are shared with
 * other processes' windows, which may not be synced yet). */
static void check_clean(const char *path, uint64_t off, size_t len, const char *what)
{
    uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), lo = (off + pg - 1) / pg * pg,
             hi = (off + len) / pg * pg;
    if (lo < hi)
        tt_check_clean(path, lo, (size_t)(hi - lo), what);
}

static void run(const char *scope, int pass)
{
    char path[PATH_MAX];
    tt_path(path, sizeof path, scope ? "ckpt.file.dat" : "ckpt.window.dat");
    const int n = tt_size, me = tt_rank;
    int file_scope = scope && !strcmp(scope, "file");
    MPI_Win win[NWIN];
    uint8_t *base[NWIN], *exp[NWIN];
    for (int v = 0; v < NWIN; v++) {
        char off[32];
        snprintf(off, sizeof off, "%llu", (unsigned long long)offset_of(v, me, n));
        MPI_Info info = tt_storage_info(path, off);
        tt_info_set(info, "storage_alloc_engine", "ummap");
        tt_info_set(info, "storage_alloc_segsize", "65536");
        tt_info_set(info, "storage_alloc_flush_interval", "never");
        tt_info_set(info, "storage_alloc_readfile", "false");
        if (scope)
            tt_info_set(info, "storage_alloc_sync_scope", scope);
        TT_MPI(MPI_Win_allocate((MPI_Aint)win_bytes[v], 1, info, MPI_COMM_WORLD, &base[v],
                                &win[v]));
        MPI_Info_free(&info);
        MPI_Info used;
        TT_MPI(MPI_Win_get_info(win[v], &used));
        const char *got = tt_info_get(used, "storage_alloc_sync_scope");
        TT_CHECK(got && !strcmp(got, file_scope ? "file" : "window"),
                 "window %d: MPI_Win_get_info says storage_alloc_sync_scope=%s, expected %s",
                 v, got ? got : "(nothing)", file_scope ? "file" : "window");
        MPI_Info_free(&used);
        exp[v] = malloc(win_bytes[v]);
        tt_fill(exp[v], win_bytes[v], seed_of(v, me, pass), 0);
        memcpy(base[v], exp[v], win_bytes[v]);
    }

    /* the first window only */
    TT_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win[0]));
    TT_MPI(MPI_Win_sync(win[0]));
    TT_MPI(MPI_Win_unlock_all(win[0]));
    tt_check_file(path, offset_of(0, me, n), exp[0], win_bytes[0], "window 0 after its sync");
    check_clean(path, offset_of(0, me, n), win_bytes[0], "window 0 after its sync");
    for (int v = 1; v < NWIN; v++) {
        char what[96];
        if (file_scope) {
            snprintf(what, sizeof what, "window %d after window 0's sync (scope file)", v);
            tt_check_file(path, offset_of(v, me, n), exp[v], win_bytes[v], what);
            check_clean(path, offset_of(v, me, n), win_bytes[v], what);
        } else {
            snprintf(what, sizeof what, "window %d after window 0's sync (scope window)", v);
            uint8_t *zero = calloc(1, win_bytes[v]);
            tt_check_file(path, offset_of(v, me, n), zero, win_bytes[v], what);
            free(zero);
        }
    }
    /* the rest, window by window; then free */
    for (int v = 1; v < NWIN; v++) {
        TT_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win[v]));
        TT_MPI(MPI_Win_sync(win[v]));
        TT_MPI(MPI_Win_unlock_all(win[v]));
        check_clean(path, offset_of(v, me, n), win_bytes[v], "after its own sync");
    }
    for (int v = 0; v < NWIN; v++)
        TT_MPI(MPI_Win_free(&win[v]));
    MPI_Barrier(MPI_COMM_WORLD);

    /* every rank's bytes, by every rank; the header untouched */
    uint8_t header[HEADER] = {0};
    tt_check_file(path, 0, header, sizeof header, "the bytes before the first window");
    for (int v = 0; v < NWIN; v++) {
        uint8_t *e = malloc(win_bytes[v]);
        for (int r = 0; r < n; r++) {
            char what[64];
            snprintf(what, sizeof what, "window %d of rank %d after MPI_Win_free", v, r);
            tt_fill(e, win_bytes[v], seed_of(v, r, pass), 0);
            tt_check_file(path, offset_of(v, r, n), e, win_bytes[v], what);
        }
        free(e);
        free(exp[v]);
    }
    struct stat st;
    TT_CHECK(stat(path, &st) == 0 && (uint64_t)st.st_size == total_bytes(n),
             "%s: size %lld, expected %llu", path, (long long)st.st_size,
             (unsigned long long)total_bytes(n));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "ummap_syncscope");
    run("file", 0);
    run(NULL, 1);     /* the default */
    run("window", 2);
    return tt_finish();
}
