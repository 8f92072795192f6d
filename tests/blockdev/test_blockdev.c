/* Storage windows on a block device: every rank maps its own range of the device, ranks
 * put into each other's windows, MPI_Win_sync; the driver script then checks the bytes on
 * the device's backing image. A window larger than the device must fail at allocation
 * with a message naming the device, and leave the device untouched.
 * Usage: test_blockdev DEVICE SIZE_PER_RANK */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, errors;

static void fail(const char *what)
{
    fprintf(stderr, "[blockdev rank %d] FAIL: %s\n", rank, what);
    errors++;
}

static MPI_Info hints(const char *dev, long long offset)
{
    char off[32];
    snprintf(off, sizeof off, "%lld", offset);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", dev);
    MPI_Info_set(info, "storage_alloc_offset", off);
    return info;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc < 3) {
        fprintf(stderr, "usage: %s DEVICE SIZE_PER_RANK\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *dev = argv[1];
    const MPI_Aint size = atol(argv[2]);

    /* 1. A window per rank on the device; every rank puts its pattern everywhere. */
    MPI_Info info = hints(dev, (long long)rank * size);
    unsigned char *base;
    MPI_Win win;
    if (MPI_Win_allocate(size, 1, info, MPI_COMM_WORLD, &base, &win) != MPI_SUCCESS) {
        fail("MPI_Win_allocate on the block device");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Info_free(&info);
    MPI_Aint chunk = size / nprocs;
    unsigned char *mine = malloc((size_t)chunk);
    for (MPI_Aint i = 0; i < chunk; i++)
        mine[i] = (unsigned char)(rank * 31 + i * 7 + 1);
    MPI_Win_lock_all(0, win);
    for (int t = 0; t < nprocs; t++)
        MPI_Put(mine, (int)chunk, MPI_BYTE, t, rank * chunk, (int)chunk, MPI_BYTE, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < nprocs; r++)
        for (MPI_Aint i = 0; i < chunk; i++)
            if (base[r * chunk + i] != (unsigned char)(r * 31 + i * 7 + 1)) {
                fail("window content after the puts");
                r = nprocs;
                break;
            }
    if (MPI_Win_sync(win) != MPI_SUCCESS)
        fail("MPI_Win_sync");
    MPI_Win_free(&win);

    /* 2. Past the end of the device: an error naming it, on every rank. */
    info = hints(dev, (long long)nprocs * size);
    win = MPI_WIN_NULL;
    int rc = MPI_Win_allocate(size * 1024, 1, info, MPI_COMM_WORLD, &base, &win);
    MPI_Info_free(&info);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len;
    if (rc == MPI_SUCCESS)
        fail("a window past the end of the device was allocated");
    else if (MPI_Error_string(rc, msg, &len), !strstr(msg, dev) || !strstr(msg, "block device"))
        fail(msg);
    if (win != MPI_WIN_NULL)
        fail("window handle set after a failed allocation");

    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && !total)
        printf("[blockdev] passed (%d ranks)\n", nprocs);
    free(mine);
    MPI_Finalize();
    return total ? 1 : 0;
}
