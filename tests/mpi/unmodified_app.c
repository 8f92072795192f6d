/* An "unmodified" MPI program: written against MPI only and built without tierio, it asks
 * for a storage window through the info hints, like the seed's Listing 3.1 (one shared
 * file, a window of ints per process, even ranks put into odd ranks, everyone puts into
 * its right neighbour). After MPI_Win_free it reads the file back itself.
 *
 *   unmodified_app                  the window must have been on storage: the file
 *                                   holds every rank's final window (run it with
 *                                   LD_PRELOAD=libtierio-pmpi.so)
 *   unmodified_app --expect-memory  the window must have been in memory: MPI ignores
 *                                   the hints and no file appears (run it without
 *                                   LD_PRELOAD: this proves the preload does the work)
 *
 * Exit status 0 when the expectation holds on every rank. Files go under
 * $TIERIO_TEST_TMPDIR and are removed. */
#define _GNU_SOURCE /* pread, PATH_MAX */
#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NINT 64 /* ints per window: 256 bytes, so every offset is a multiple of 16 */

int main(int argc, char **argv)
{
    int expect_memory = argc > 1 && !strcmp(argv[1], "--expect-memory");
    int rank, num_procs, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &num_procs);

    char dir[PATH_MAX] = "", path[PATH_MAX + 32];
    if (rank == 0) {
        const char *base = getenv("TIERIO_TEST_TMPDIR");
        snprintf(dir, sizeof dir, "%s/unmodified_app.%ld", base && *base ? base : "/tmp",
                 (long)getpid());
        if (mkdir(dir, 0755) < 0)
            perror(dir);
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/app.dat", dir);
    char offset[32];
    snprintf(offset, sizeof offset, "%d", rank * NINT * (int)sizeof(int));

    /* Define the Info object to enable storage allocations */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_offset", offset);
    MPI_Info_set(info, "storage_alloc_unlink", "false");

    int *baseptr;
    MPI_Win win;
    MPI_Win_allocate(NINT * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &baseptr, &win);
    MPI_Info_free(&info);

    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < NINT; i++)
        baseptr[i] = -1 - i;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Even ranks put a value into every odd rank, at the even rank's index */
    if (rank % 2 == 0)
        for (int drank = 1; drank < num_procs; drank += 2) {
            int k = rank * 1000 + drank;
            MPI_Win_lock(MPI_LOCK_SHARED, drank, 0, win);
            MPI_Put(&k, 1, MPI_INT, drank, rank, 1, MPI_INT, win);
            MPI_Win_unlock(drank, win);
        }
    /* Everyone puts into its right neighbour at index 32 + rank */
    int right = (rank + 1) % num_procs, v = 7000000 + rank;
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Put(&v, 1, MPI_INT, right, 32 + rank, 1, MPI_INT, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    MPI_Win_sync(win);
    MPI_Win_unlock(rank, win);

    int exp[NINT];
    for (int i = 0; i < NINT; i++)
        exp[i] = -1 - i;
    if (rank % 2 == 1)
        for (int src = 0; src < num_procs; src += 2)
            exp[src] = src * 1000 + rank;
    int left = (rank + num_procs - 1) % num_procs;
    exp[32 + left] = 7000000 + left;
    if (memcmp(baseptr, exp, sizeof exp)) {
        fprintf(stderr, "unmodified_app rank %d: FAIL: window content is wrong\n", rank);
        bad = 1;
    }
    MPI_Win_free(&win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Was the window on storage? Read the file back. */
    int fd = open(path, O_RDONLY);
    if (expect_memory) {
        if (fd >= 0) {
            fprintf(stderr, "unmodified_app rank %d: FAIL: %s exists although the window "
                    "should have been in memory\n", rank, path);
            bad = 1;
        }
    } else if (fd < 0) {
        fprintf(stderr, "unmodified_app rank %d: FAIL: the window was not on storage: "
                "cannot open %s: %s\n", rank, path, strerror(errno));
        bad = 1;
    } else {
        int got[NINT];
        ssize_t n = pread(fd, got, sizeof got, (off_t)rank * (off_t)sizeof got);
        if (n != (ssize_t)sizeof got || memcmp(got, exp, sizeof exp)) {
            int first = 0;
            while (n == (ssize_t)sizeof got && first < NINT && got[first] == exp[first])
                first++;
            fprintf(stderr, "unmodified_app rank %d: FAIL: %s does not hold the window "
                    "(read %zd bytes; first differing int %d)\n", rank, path, n, first);
            bad = 1;
        }
    }
    if (fd >= 0)
        close(fd);
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        unlink(path);
        rmdir(dir);
        printf("unmodified_app: %s (%s expected)\n", anybad ? "FAILED" : "passed",
               expect_memory ? "memory window" : "storage window");
    }
    MPI_Finalize();
    return anybad;
}
