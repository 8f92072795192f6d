/* File views through the MPI-IO route (src/agg/flatten.c): for each filetype — subarrays
 * in C and Fortran order, vectors, hvectors, indexed, hindexed, indexed blocks, structs,
 * resized and nested types, a dup — every process writes through its view with
 * tierio_agg=enable; each process's bytes must be in the file where MPI_Unpack of its data
 * through the filetype puts them (the oracle, no MPI-IO involved), bytes in no view's
 * data must stay zero, the calls must have gone through the engine, and a collective read
 * through the view must give the data back. Two calls per file (the second continues
 * where the first stopped, mid-filetype), so ranges that start inside a tile are covered
 * too. Run with libtierio-pmpi preloaded. (The MPI libraries' own collective writes are
 * no oracle here: on this machine OMPIO wrote uninitialised bytes into the holes of such
 * views, and ROMIO, started mid-filetype, wrote bytes past a block.) */
#include "../mpi/tio_test.h"

enum { N = 8 }; /* edge of the 3D array (ints) */

/* This process's filetype number k, its displacement; NULL name past the last. */
static const char *make_type(int k, MPI_Datatype *t, MPI_Offset *disp)
{
    int r = tt_rank, p = tt_size;
    MPI_Datatype a, b;
    *disp = 0;
    switch (k) {
    case 0: { /* a 3D block of an N x N x (N*p) array, C order: coll_perf */
        int sizes[3] = {N * p, N, N}, subs[3] = {N, N / 2, N}, starts[3] = {N * r, N / 4, 0};
        MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_INT, t);
        return "subarray C";
    }
    case 1: {
        int sizes[3] = {N, N, N * p}, subs[3] = {N / 2, N, N}, starts[3] = {1, 0, N * r};
        MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, t);
        return "subarray Fortran";
    }
    case 2: /* 1 int of every p, tiled: the interleaved 1D case */
        MPI_Type_vector(3, 2, 2 * p, MPI_INT, &a);
        MPI_Type_create_resized(a, 0, (MPI_Aint)6 * p * 4, t);
        MPI_Type_free(&a);
        *disp = (MPI_Offset)r * 8;
        return "vector resized";
    case 3:
        MPI_Type_create_hvector(4, 3, (MPI_Aint)12 * p + 4, MPI_INT, &a);
        MPI_Type_create_resized(a, 0, (MPI_Aint)4 * (12 * p + 4), t);
        MPI_Type_free(&a);
        *disp = (MPI_Offset)r * 12;
        return "hvector";
    case 4: {
        int bl[3] = {1, 3, 2}, dp[3] = {0, 2, 6}; /* within [9r, 9r + 9) */
        for (int i = 0; i < 3; i++)
            dp[i] += r * 9;
        MPI_Type_indexed(3, bl, dp, MPI_INT, &a);
        MPI_Type_create_resized(a, 0, (MPI_Aint)9 * p * 4, t);
        MPI_Type_free(&a);
        return "indexed";
    }
    case 5: {
        int bl[2] = {5, 7};
        MPI_Aint dp[2] = {(MPI_Aint)r * 20, (MPI_Aint)(p * 20 + r * 28)};
        MPI_Type_create_hindexed(2, bl, dp, MPI_BYTE, &a);
        MPI_Type_create_resized(a, 0, (MPI_Aint)p * 48, t);
        MPI_Type_free(&a);
        return "hindexed bytes";
    }
    case 6: {
        int dp[3] = {2 * r, 2 * p + 2 * r, 6 * p + 2 * r};
        MPI_Type_create_indexed_block(3, 2, dp, MPI_SHORT, &a);
        MPI_Type_create_resized(a, 0, (MPI_Aint)8 * p * 2, t);
        MPI_Type_free(&a);
        return "indexed block";
    }
    case 7: { /* a struct of a double and two ints, each process's records interleaved */
        int bl[2] = {1, 2};
        MPI_Aint dp[2] = {0, 8};
        MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT};
        MPI_Type_create_struct(2, bl, dp, ty, &a);
        MPI_Type_create_resized(a, 0, (MPI_Aint)16 * p, t);
        MPI_Type_free(&a);
        *disp = (MPI_Offset)r * 16;
        return "struct";
    }
    case 8: { /* a vector of subarrays: 2D tiles, tiled again */
        int sizes[2] = {4, 4 * p}, subs[2] = {4, 2}, starts[2] = {0, 4 * r + 1};
        MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &a);
        MPI_Type_contiguous(2, a, &b);
        MPI_Type_free(&a);
        MPI_Type_dup(b, t);
        MPI_Type_free(&b);
        return "contiguous of subarray, dup";
    }
    }
    return NULL;
}

/* The file image this process's data must make: MPI_Unpack of the data into tiles of the
 * filetype puts data byte i where the typemap says (the oracle: no MPI-IO involved), and
 * of 0xff markers, which bytes are this process's. n bytes of image from the
 * displacement on. */
static void expect(MPI_Datatype ft, MPI_Offset disp, const unsigned char *data, int total,
                   int tiles, int64_t n, unsigned char *img, unsigned char *mine)
{
    int fsize, pos = 0;
    MPI_Type_size(ft, &fsize);
    size_t packed = (size_t)fsize * (size_t)tiles;
    unsigned char *src = calloc(packed, 1), *marks = calloc(packed, 1);
    memcpy(src, data, (size_t)total);
    memset(marks, 0xff, (size_t)total);
    memset(img, 0, (size_t)n);
    memset(mine, 0, (size_t)n);
    TT_MPI(MPI_Unpack(src, (int)packed, &pos, img + disp, tiles, ft, MPI_COMM_SELF));
    pos = 0;
    TT_MPI(MPI_Unpack(marks, (int)packed, &pos, mine + disp, tiles, ft, MPI_COMM_SELF));
    free(src);
    free(marks);
}

static void one(int k)
{
    MPI_Datatype ft;
    MPI_Offset disp;
    const char *name = make_type(k, &ft, &disp);
    if (!name)
        return;
    MPI_Type_commit(&ft);
    int fsize;
    MPI_Aint lb, ext;
    MPI_Type_size(ft, &fsize);
    MPI_Type_get_extent(ft, &lb, &ext);
    /* 2.5 filetypes of data, in two calls: 1.25 and 1.25 */
    int total = fsize * 5 / 2 / 4 * 4, first = total / 2 / 4 * 4, tiles = 3;
    int64_t n = 0, mydisp = disp + (int64_t)tiles * ext;
    MPI_Allreduce(&mydisp, &n, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    unsigned char *data = malloc((size_t)total), *back = malloc((size_t)total);
    unsigned char *img = malloc((size_t)n), *mine = malloc((size_t)n),
                  *file = calloc((size_t)n, 1), *any = malloc((size_t)n);
    tt_fill(data, (size_t)total, 100 + (uint64_t)(k * 64 + tt_rank), 0);
    expect(ft, disp, data, total, tiles, n, img, mine);
    char path[PATH_MAX], leaf[64];
    snprintf(leaf, sizeof leaf, "view%d.dat", k);
    tt_path(path, sizeof path, leaf);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tierio_agg", "enable");
    MPI_Info_set(info, "tierio_agg_read", "aggregate");
    MPI_Info_set(info, "cb_buffer_size", "4096");
    MPI_File fh;
    TT_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    TT_MPI(MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    TT_MPI(MPI_File_write_all(fh, data, first, MPI_BYTE, MPI_STATUS_IGNORE));
    TT_MPI(MPI_File_write_all(fh, data + first, total - first, MPI_BYTE, MPI_STATUS_IGNORE));
    TT_MPI(MPI_File_sync(fh));
    memset(back, 0, (size_t)total);
    TT_MPI(MPI_File_read_at_all(fh, 0, back, first, MPI_BYTE, MPI_STATUS_IGNORE));
    TT_MPI(MPI_File_read_at_all(fh, first, back + first, total - first, MPI_BYTE,
                                MPI_STATUS_IGNORE));
    tt_compare(back, data, (size_t)total, "%s: read back through the view", name);
    MPI_Info used;
    TT_MPI(MPI_File_get_info(fh, &used));
    const char *v = tt_info_get(used, "tierio_agg_collective_calls");
    long calls = v ? atol(v) : -1;
    TT_CHECK(calls == 4, "%s: %ld calls through tierio, 4 expected (libtierio-pmpi "
             "preloaded?)", name, calls);
    MPI_Info_free(&used);
    TT_MPI(MPI_File_close(&fh));
    /* The file: this process's bytes where its typemap puts them, and no byte that nobody
     * wrote other than zero. */
    int fd = open(path, O_RDONLY);
    ssize_t got = fd >= 0 ? pread(fd, file, (size_t)n, 0) : -1;
    if (fd >= 0)
        close(fd);
    TT_CHECK(got > 0, "%s: cannot read the file", name);
    for (int64_t i = 0; i < n; i++)
        if (mine[i] && file[i] != img[i]) {
            TT_CHECK(0, "%s: file byte %lld is %d, %d expected (this process's data)", name,
                     (long long)i, file[i], img[i]);
            break;
        }
    MPI_Allreduce(mine, any, (int)n, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
    for (int64_t i = 0; i < n && tt_rank == 0; i++)
        if (!any[i] && file[i]) {
            TT_CHECK(0, "%s: file byte %lld in a hole of every view is %d", name,
                     (long long)i, file[i]);
            break;
        }
    MPI_Type_free(&ft);
    free(data);
    free(back);
    free(img);
    free(mine);
    free(file);
    free(any);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "agg_views");
    for (int k = 0; k < 9; k++)
        one(k);
    return tt_finish();
}
