/* MPI_Win_allocate_shared with part of every piece in memory and part on storage
 * (storage_alloc_factor 0.5 / 0.25 / auto, both orders): the pieces are contiguous, every
 * process stores into its neighbours' pieces through MPI_Win_shared_query, one-sided
 * operations work, and after MPI_Win_sync each process's storage part is in the file, the
 * parts of all processes one after another from storage_alloc_offset; the memory parts are
 * not. Then the sizes that cannot be split on pages are refused with a message.
 * Usage: test_shared_combined --factor F --order memory_first|storage_first */
#include "tio_test.h"

static size_t page;

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "shared_combined");
    page = (size_t)sysconf(_SC_PAGESIZE);
    const char *factor = "0.5", *order = "memory_first";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--factor"))
            factor = argv[i + 1];
        else if (!strcmp(argv[i], "--order"))
            order = argv[i + 1];
    }
    const int n = tt_size, me = tt_rank, sto_first = !strcmp(order, "storage_first");
    MPI_Comm node;
    TT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    TT_CHECK(n > 0, "no ranks");
    const size_t size = (size_t)(me + 2) * 4 * page; /* pieces of different sizes */
    char file[PATH_MAX];
    tt_path(file, sizeof file, "shared_combined.dat");
    MPI_Info info = tt_storage_info(file, "8192");
    tt_info_set(info, "storage_alloc_factor", factor);
    tt_info_set(info, "storage_alloc_order", order);
    uint8_t *mine;
    MPI_Win win;
    TT_MPI(MPI_Win_allocate_shared((MPI_Aint)size, 1, info, node, &mine, &win));

    /* The split each process really got, from MPI_Win_get_info. */
    MPI_Info used;
    TT_MPI(MPI_Win_get_info(win, &used));
    const char *f = tt_info_get(used, "storage_alloc_factor");
    double got_factor = f ? atof(f) : -1.0;
    MPI_Info_free(&used);
    size_t sto = (size_t)(got_factor * (double)size + 0.5);
    TT_CHECK(sto % page == 0 && sto <= size, "storage part %zu bytes is not whole pages", sto);
    if (strcmp(factor, "auto") != 0)
        TT_CHECK(sto >= (size_t)(atof(factor) * (double)size),
                 "storage part %zu bytes is less than factor %s asks", sto, factor);

    /* Contiguous pieces; every process writes a pattern into every piece. */
    MPI_Aint qsize;
    int du;
    uint8_t *p0;
    TT_MPI(MPI_Win_shared_query(win, 0, &qsize, &du, &p0));
    size_t *sizes = malloc(sizeof *sizes * (size_t)n), *stos = malloc(sizeof *stos * (size_t)n);
    MPI_Allgather(&size, 1, MPI_UNSIGNED_LONG, sizes, 1, MPI_UNSIGNED_LONG, node);
    MPI_Allgather(&sto, 1, MPI_UNSIGNED_LONG, stos, 1, MPI_UNSIGNED_LONG, node);
    size_t at = 0;
    for (int r = 0; r < n; r++) {
        uint8_t *pr;
        TT_MPI(MPI_Win_shared_query(win, r, &qsize, &du, &pr));
        TT_CHECK(pr == p0 + at && (size_t)qsize == sizes[r],
                 "piece %d at %p (%zu bytes), expected %p (%zu bytes)", r, (void *)pr,
                 (size_t)qsize, (void *)(p0 + at), sizes[r]);
        at += sizes[r];
    }
    TT_MPI(MPI_Win_lock_all(0, win));
    for (int r = 0; r < n; r++) { /* my stripe of every piece: bytes i with i % n == me */
        uint8_t *pr;
        TT_MPI(MPI_Win_shared_query(win, r, &qsize, &du, &pr));
        for (size_t i = (size_t)me; i < sizes[r]; i += (size_t)n)
            pr[i] = tt_byte((uint64_t)r * 131 + 7, i);
    }
    TT_MPI(MPI_Win_sync(win));
    TT_MPI(MPI_Barrier(node));
    TT_MPI(MPI_Win_sync(win));
    /* and one-sided: each process adds 1 to the first byte of the next piece's last page */
    int right = (me + 1) % n;
    uint8_t one = 1;
    TT_MPI(MPI_Accumulate(&one, 1, MPI_UINT8_T, right, (MPI_Aint)(sizes[right] - page), 1,
                          MPI_UINT8_T, MPI_SUM, win));
    TT_MPI(MPI_Win_flush_all(win));
    TT_MPI(MPI_Barrier(node));
    TT_MPI(MPI_Win_sync(win));
    TT_MPI(MPI_Win_unlock_all(win));

    uint8_t *want = malloc(size);
    for (size_t i = 0; i < size; i++)
        want[i] = tt_byte((uint64_t)me * 131 + 7, i);
    want[size - page] = (uint8_t)(want[size - page] + 1);
    tt_compare(mine, want, size, "my piece after every process's stores");

    /* The file: storage parts one after another from offset 8192. */
    size_t before = 0;
    for (int r = 0; r < me; r++)
        before += stos[r];
    size_t first = sto_first ? 0 : size - sto;
    tt_check_file(file, 8192 + before, want + first, sto, "my storage part in the file");
    TT_MPI(MPI_Win_free(&win));
    tt_check_file(file, 8192 + before, want + first, sto, "my storage part after MPI_Win_free");

    /* A size that is not whole pages cannot be split: an error that says why. */
    info = tt_storage_info(file, "8192");
    tt_info_set(info, "storage_alloc_factor", "0.5");
    MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    win = MPI_WIN_NULL;
    int rc = MPI_Win_allocate_shared((MPI_Aint)(page + 16), 1, info, node, &mine, &win);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, msg, &len);
    TT_CHECK(rc != MPI_SUCCESS && strstr(msg, "multiples of the page size"),
             "size %zu with factor 0.5: expected a page-size error, got \"%s\"", page + 16, msg);
    TT_CHECK(win == MPI_WIN_NULL, "a window was made after the error");
    MPI_Info_free(&info);
    free(want);
    free(sizes);
    free(stos);
    MPI_Comm_free(&node);
    return tt_finish();
}
