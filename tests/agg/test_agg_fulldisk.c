/* A full file system under the aggregation engine. The test's directory is on a small
 * tmpfs of its own (run_fulldisk.sh). Rank 0 fills it but 512 KiB, then every process
 * writes 256 KiB of a 1D array through one handle: aggregators run out of space.
 *
 * Every process must learn it — at the write (where it happened, and its node's in the
 * node regime) or at the tio_agg_sync after it (everybody else) — and none may hang.
 * Then rank 0 removes its filler, the same handle writes the array again, the sync
 * succeeds, and the file is checked byte for byte; nothing is left but the file. */
#include "agg_test.h"

#include <sys/statvfs.h>

#define PER_RANK (256 * 1024)

static void fill(uint8_t *buf, int r, int v)
{
    tt_fill(buf, PER_RANK, (uint64_t)(100 * v + r) + 3, 0);
}

/* rc failed for lack of space (what the message says). */
static int no_space(int rc)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int l;
    if (rc == MPI_SUCCESS)
        return 0;
    MPI_Error_string(rc, msg, &l);
    if (!strstr(msg, "No space left"))
        tt_fail("an error other than no space: %s", msg);
    return 1;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "agg_fulldisk");
    char path[PATH_MAX], filler[PATH_MAX];
    snprintf(path, sizeof path, "%s/full.dat", tt_dir);
    snprintf(filler, sizeof filler, "%s/filler", tt_dir);
    if (tt_rank == 0) {
        struct statvfs st;
        if (statvfs(tt_dir, &st) < 0 || st.f_blocks * st.f_frsize > (64u << 20))
            TT_DIE("%s: not a small file system of the test's own (run_fulldisk.sh)", tt_dir);
        long long room = (long long)(st.f_bavail * st.f_frsize) - 512 * 1024;
        int fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || room < 0 || posix_fallocate(fd, 0, room) != 0)
            TT_DIE("cannot fill %s up to its last 512 KiB", tt_dir);
        close(fd);
    }
    uint8_t *buf = malloc(PER_RANK);
    MPI_Offset off = (MPI_Offset)tt_rank * PER_RANK, len = PER_RANK;
    tio_agg_t a;
    int id;
    TT_MPI(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &a));
    TT_MPI(tio_agg_declare(a, 1, &off, &len, &id));
    fill(buf, tt_rank, 1);
    int at_write = no_space(tio_agg_write(a, id, buf));
    int at_sync = no_space(tio_agg_sync(a));
    TT_CHECK(at_write + at_sync == 1, "no space reported at the write: %d, at the sync: %d "
             "(exactly one expected)", at_write, at_sync);
    int seen[2] = {at_write, at_sync};
    MPI_Allreduce(MPI_IN_PLACE, seen, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    TT_CHECK(seen[0] > 0, "no aggregator ran out of space: the file system was not full");
    if (tt_rank == 0)
        printf("[agg_fulldisk] no space: %d processes told at the write, %d at the sync\n",
               seen[0], seen[1]);

    /* Room again: the same handle writes the array, byte for byte. */
    if (tt_rank == 0)
        unlink(filler);
    MPI_Barrier(MPI_COMM_WORLD);
    fill(buf, tt_rank, 2);
    TT_MPI(tio_agg_write(a, id, buf));
    TT_MPI(tio_agg_sync(a));
    struct at_image im = {calloc((size_t)tt_size, PER_RANK), calloc((size_t)tt_size, PER_RANK),
                          (int64_t)tt_size * PER_RANK};
    for (int r = 0; r < tt_size; r++) {
        fill(im.bytes + (size_t)r * PER_RANK, r, 2);
        memset(im.set + (size_t)r * PER_RANK, 1, PER_RANK);
    }
    TT_CHECK(at_check_target(path, "file", NULL, &im, "after the room was freed") ==
                 im.extent, "the file was not all checked");
    TT_MPI(tio_agg_close(&a));
    if (tt_rank == 0) {
        int n = tc_count_entries(tt_dir);
        TT_CHECK(n == 1, "%d entries in %s (the file alone expected)", n, tt_dir);
        unlink(path);
    }
    free(buf);
    free(im.bytes);
    free(im.set);
    return tt_finish();
}
