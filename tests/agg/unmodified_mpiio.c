/* An unmodified MPI-IO program: standard MPI calls only, built without tierio. Run with
 * libtierio-pmpi preloaded and TIERIO_AGG=1, its collective calls on contiguous memory go
 * through tierio's aggregation engine, whatever the file view; everything else
 * (noncontiguous memory, atomic mode, overlapping writes, reads past the end, independent
 * calls) to the MPI library.
 * Every result is checked byte for byte and against MPI's consistency rules (sync-barrier-
 * sync between independent writes and collective reads, close and reopen).
 *
 *   unmodified_mpiio FILE [ROUTED PASSED [INDEPENDENT_READS [INDEPENDENT_WRITES]]]
 * With ROUTED and PASSED it also checks, through MPI_File_get_info's keys
 * tierio_agg_collective_calls and tierio_agg_passed_calls, that exactly ROUTED collective
 * calls went through the engine and PASSED to the MPI library (a run without tierio
 * passes "- -"); with INDEPENDENT_READS (_WRITES), that tierio_agg_independent_reads
 * (_writes) says so many collective reads (writes) of non-interleaved requests became
 * independent ones. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, errors;

#define CHECK_MPI(call)                                                                  \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        if (rc_ != MPI_SUCCESS) {                                                        \
            char s_[MPI_MAX_ERROR_STRING];                                               \
            int l_;                                                                      \
            MPI_Error_string(rc_, s_, &l_);                                              \
            fprintf(stderr, "rank %d: %s:%d: %s: %s\n", rank, __FILE__, __LINE__, #call, \
                    s_);                                                                 \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                \
        }                                                                                \
    } while (0)

#define EXPECT(cond, ...)                                                                \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "rank %d: FAIL line %d: ", rank, __LINE__);                  \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, "\n");                                                       \
            errors++;                                                                    \
        }                                                                                \
    } while (0)

static int value(int version, long i)
{
    return (int)((uint32_t)(i * 2654435761u) ^ (uint32_t)(version * 40503));
}

/* Ints of rank r in the layout: count and first index. Rank 1 has none. */
static long count_of(int r)
{
    return r == 1 ? 0 : 1000 + 7919L * r % 5003;
}
static long first_of(int r)
{
    long f = 0;
    for (int q = 0; q < r; q++)
        f += count_of(q);
    return f;
}

static void compare(const int *got, long first, long n, int version, const char *what)
{
    for (long i = 0; i < n; i++)
        if (got[i] != value(version, first + i)) {
            EXPECT(0, "%s: int %ld is %d, %d expected", what, first + i, got[i],
                   value(version, first + i));
            return;
        }
}

static long info_long(MPI_File fh, const char *key)
{
    MPI_Info info;
    char v[64];
    int flag = 0;
    CHECK_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, key, (int)sizeof v - 1, v, &flag);
    MPI_Info_free(&info);
    return flag ? atol(v) : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        fprintf(stderr, "usage: unmodified_mpiio FILE [ROUTED PASSED [INDEPENDENT_READS "
                "[INDEPENDENT_WRITES]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *path = argv[1];
    long want_routed = argc > 3 && strcmp(argv[2], "-") ? atol(argv[2]) : -1;
    long want_passed = argc > 3 && strcmp(argv[3], "-") ? atol(argv[3]) : -1;
    long want_indep = argc > 4 ? atol(argv[4]) : -1;
    long want_indep_w = argc > 5 ? atol(argv[5]) : -1;
    long n = count_of(rank), first = first_of(rank), total = first_of(size);
    int *buf = malloc(sizeof(int) * (size_t)(2 * n + 128));
    int *in = malloc(sizeof(int) * (size_t)(2 * total + 64));
    MPI_Status st;
    int cnt;

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "8192"); /* several rounds */
    MPI_File fh;
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));

    /* 1. write_at_all / read_at_all, explicit byte offsets (default view). */
    for (long i = 0; i < n; i++)
        buf[i] = value(1, first + i);
    CHECK_MPI(MPI_File_write_at_all(fh, first * 4, buf, (int)n, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    EXPECT(cnt == n, "write_at_all: status count %d, %ld expected", cnt, n);
    memset(in, 0, sizeof(int) * (size_t)n);
    CHECK_MPI(MPI_File_read_at_all(fh, first * 4, in, (int)n, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    EXPECT(cnt == n, "read_at_all: status count %d, %ld expected", cnt, n);
    compare(in, first, n, 1, "read_at_all");

    /* 2. A contiguous view (displacement, etype int) and the individual file pointer:
     * write_all / read_all. Version 2 goes after version 1's ints. */
    MPI_Offset disp = total * 4;
    CHECK_MPI(MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_seek(fh, first, MPI_SEEK_SET));
    for (long i = 0; i < n; i++)
        buf[i] = value(2, first + i);
    /* in two calls, so that the pointer must move between them */
    CHECK_MPI(MPI_File_write_all(fh, buf, (int)(n / 2), MPI_INT, &st));
    CHECK_MPI(MPI_File_write_all(fh, buf + n / 2, (int)(n - n / 2), MPI_INT, &st));
    MPI_Offset pos;
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    EXPECT(pos == first + n, "file pointer at %lld after write_all, %ld expected",
           (long long)pos, first + n);
    CHECK_MPI(MPI_File_seek(fh, first, MPI_SEEK_SET));
    memset(in, 0, sizeof(int) * (size_t)n);
    CHECK_MPI(MPI_File_read_all(fh, in, (int)n, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    EXPECT(cnt == n, "read_all: status count %d, %ld expected", cnt, n);
    compare(in, first, n, 2, "read_all");
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    EXPECT(pos == first + n, "file pointer at %lld after read_all", (long long)pos);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    long routed = 5, passed = 0; /* so far */

    /* 3. Noncontiguous memory (every other int): to the MPI library. Version 3 in region 3. */
    MPI_Datatype strided;
    MPI_Type_vector((int)(n ? n : 1), 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    int *sparse = malloc(sizeof(int) * (size_t)(2 * n + 2));
    for (long i = 0; i < n; i++)
        sparse[2 * i] = value(3, first + i), sparse[2 * i + 1] = -1;
    CHECK_MPI(MPI_File_write_at_all(fh, (2 * total + first) * 4, sparse, n ? 1 : 0, strided,
                                    &st));
    passed++;
    MPI_Type_free(&strided);

    /* 4. A noncontiguous view: every process's ints interleaved by blocks of 1 int, written
     * and read back through the engine (the view's ranges). Version 4 in region 4 at int
     * (3*total + i*size + rank). */
    MPI_Datatype ftype, resized;
    MPI_Type_vector(1, 1, size, MPI_INT, &ftype);
    MPI_Type_create_resized(ftype, 0, (MPI_Aint)size * 4, &resized);
    MPI_Type_commit(&resized);
    CHECK_MPI(MPI_File_set_view(fh, (3 * total + rank) * 4, MPI_INT, resized, "native",
                                MPI_INFO_NULL));
    long m = 100;
    for (long i = 0; i < m; i++)
        buf[i] = value(4, i * size + rank);
    CHECK_MPI(MPI_File_write_all(fh, buf, (int)m, MPI_INT, &st));
    routed++;
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    EXPECT(pos == m, "file pointer at %lld after the view's write_all, %ld expected",
           (long long)pos, m);
    CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(in, 0, sizeof(int) * (size_t)m);
    CHECK_MPI(MPI_File_read_all(fh, in, (int)m, MPI_INT, &st));
    routed++;
    MPI_Get_count(&st, MPI_INT, &cnt);
    EXPECT(cnt == m, "read_all of the view: status count %d, %ld expected", cnt, m);
    for (long i = 0; i < m; i++)
        if (in[i] != value(4, i * size + rank)) {
            EXPECT(0, "read_all of the view: int %ld is %d, %d expected", i, in[i],
                   value(4, i * size + rank));
            break;
        }
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&ftype);
    MPI_Type_free(&resized);

    /* 5. Atomic mode: to the MPI library. Version 5 rewrites region 1 of rank 0 only. */
    CHECK_MPI(MPI_File_set_atomicity(fh, 1));
    for (long i = 0; i < n; i++)
        buf[i] = value(1, first + i); /* the same bytes: the region stays version 1 */
    CHECK_MPI(MPI_File_write_at_all(fh, first * 4, buf, (int)n, MPI_INT, &st));
    passed++;
    CHECK_MPI(MPI_File_set_atomicity(fh, 0));

    /* 6. Overlapping writes (every process the same 64 ints, same values): the MPI
     * library's. Region 5 at int 3*total + 100*size. */
    long ov = 3 * total + 100L * size;
    for (long i = 0; i < 64; i++)
        buf[i] = value(6, ov + i);
    CHECK_MPI(MPI_File_write_at_all(fh, ov * 4, buf, 64, MPI_INT, &st));
    passed++;

    /* 7. Independent writes, then sync-barrier-sync, then a routed collective read sees
     * them: each process rewrites the first int of its region 1 with version 7. */
    if (n > 0) {
        int v7 = value(7, first);
        CHECK_MPI(MPI_File_write_at(fh, first * 4, &v7, 1, MPI_INT, &st));
    }
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    memset(in, 0, sizeof(int) * (size_t)(n + 1));
    CHECK_MPI(MPI_File_read_at_all(fh, first * 4, in, (int)n, MPI_INT, &st));
    routed++;
    if (n > 0) {
        EXPECT(in[0] == value(7, first), "independent write not seen by the collective read: "
               "%d, %d expected", in[0], value(7, first));
        compare(in + 1, first + 1, n - 1, 1, "collective read after independent write");
    }

    /* 7b. Every process reads all of region 1: requests that overlap, which the route
     * aggregates also with tierio_agg_read=auto. */
    memset(in, 0, sizeof(int) * (size_t)total);
    CHECK_MPI(MPI_File_read_at_all(fh, 0, in, (int)total, MPI_INT, &st));
    routed++;
    for (int r = 0; r < size; r++) {
        long f = first_of(r), c = count_of(r);
        if (c == 0)
            continue;
        EXPECT(in[f] == value(7, f), "read of all region 1: rank %d's first int is %d, %d "
               "expected", r, in[f], value(7, f));
        compare(in + f + 1, f + 1, c - 1, 1, "read of all region 1");
    }

    /* 8. A read past the end of the file: the MPI library's short count. */
    MPI_Offset fsize;
    CHECK_MPI(MPI_File_get_size(fh, &fsize));
    EXPECT(fsize == (ov + 64) * 4, "file size %lld, %ld expected", (long long)fsize,
           (ov + 64) * 4);
    CHECK_MPI(MPI_File_read_at_all(fh, fsize - 8, in, 4, MPI_INT, &st));
    /* The count MPI reports differs between libraries (ROMIO: 2; OMPIO: 4); the bytes
     * that exist must be right. */
    MPI_Get_count(&st, MPI_INT, &cnt);
    EXPECT(cnt >= 2 && in[0] == value(6, ov + 62) && in[1] == value(6, ov + 63),
           "read past the end: %d ints, the last two of the file expected", cnt);
    passed++;

    long r = info_long(fh, "tierio_agg_collective_calls");
    long p = info_long(fh, "tierio_agg_passed_calls");
    long ind = info_long(fh, "tierio_agg_independent_reads");
    long indw = info_long(fh, "tierio_agg_independent_writes");
    if (want_routed >= 0) {
        EXPECT(r == want_routed, "%ld calls went through tierio, %ld expected", r, want_routed);
        EXPECT(p == want_passed, "%ld calls passed to MPI, %ld expected", p, want_passed);
        if (want_indep >= 0)
            EXPECT(ind == want_indep, "%ld reads became independent, %ld expected", ind,
                   want_indep);
        if (want_indep_w >= 0)
            EXPECT(indw == want_indep_w, "%ld writes became independent, %ld expected", indw,
                   want_indep_w);
    } else if (argc > 3) {
        EXPECT(r == -1 && p == -1, "tierio keys present (%ld, %ld) without tierio", r, p);
    }
    if (rank == 0)
        printf("routed %ld passed %ld independent reads %ld writes %ld (this program counted "
               "%ld routable and %ld to pass)\n", r, p, ind, indw, routed, passed);
    CHECK_MPI(MPI_File_close(&fh));

    /* 9. Reopen without any hint and check the whole file independently. */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    if (rank == 0) {
        long all = ov + 64;
        int *f = malloc(sizeof(int) * (size_t)all);
        CHECK_MPI(MPI_File_read_at(fh, 0, f, (int)all, MPI_INT, &st));
        for (int q = 0; q < size; q++) {
            long fq = first_of(q), nq = count_of(q);
            if (nq > 0) {
                EXPECT(f[fq] == value(7, fq), "file: int %ld", fq);
                compare(f + fq + 1, fq + 1, nq - 1, 1, "file region 1");
            }
            compare(f + total + fq, fq, nq, 2, "file region 2");
            for (long i = 0; i < nq; i++)
                if (f[2 * total + fq + i] != value(3, fq + i)) {
                    EXPECT(0, "file region 3: int %ld", 2 * total + fq + i);
                    break;
                }
        }
        for (long i = 0; i < 100L * size; i++)
            if (f[3 * total + i] != value(4, i)) {
                EXPECT(0, "file region 4: int %ld is %d", 3 * total + i, f[3 * total + i]);
                break;
            }
        compare(f + ov, ov, 64, 6, "file region 5");
        free(f);
    }
    CHECK_MPI(MPI_File_close(&fh));
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Info_free(&info);
    free(buf);
    free(in);
    free(sparse);
    int bad = 0;
    MPI_Allreduce(&errors, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(bad ? "unmodified_mpiio: FAILED\n" : "unmodified_mpiio: passed\n");
    MPI_Finalize();
    return bad ? 1 : 0;
}
