/* MPI_THREAD_MULTIPLE: two threads per process, each on its own communicator, create
 * storage windows, put into their neighbours' windows, sync, check and free them, again
 * and again, at the same time. Exercises tierio's shared tables (error codes, the
 * displacement table of windows on MPI's shared memory) under concurrency. */
#include "tio_test.h" /* first: it sets the feature macros */

#include <pthread.h>

#define ROUNDS 6
#define WORDS 4096 /* 32 KiB windows, page-aligned offsets */

struct job {
    int id;
    MPI_Comm comm;
    int failures;
};

static void *run(void *arg)
{
    struct job *j = arg;
    int me, n;
    MPI_Comm_rank(j->comm, &me);
    MPI_Comm_size(j->comm, &n);
    char file[PATH_MAX], name[64], off[32];
    snprintf(name, sizeof name, "threads.%d.dat", j->id);
    tt_path(file, sizeof file, name);
    snprintf(off, sizeof off, "%zu", (size_t)me * WORDS * 8);
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Info info = tt_storage_info(file, off);
        uint64_t *base;
        MPI_Win win;
        if (MPI_Win_allocate(WORDS * 8, 8, info, j->comm, &base, &win) != MPI_SUCCESS) {
            j->failures++;
            MPI_Info_free(&info);
            break;
        }
        MPI_Info_free(&info);
        for (int i = 0; i < WORDS; i++)
            base[i] = 0;
        MPI_Barrier(j->comm);
        int right = (me + 1) % n, left = (me + n - 1) % n;
        uint64_t v[WORDS / 4];
        for (int i = 0; i < WORDS / 4; i++)
            v[i] = ((uint64_t)j->id << 56) ^ ((uint64_t)round << 48) ^ ((uint64_t)me << 32) ^
                   (uint64_t)i;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
        MPI_Put(v, WORDS / 4, MPI_UINT64_T, right, WORDS / 2, WORDS / 4, MPI_UINT64_T, win);
        MPI_Win_unlock(right, win);
        MPI_Barrier(j->comm);
        MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win);
        for (int i = 0; i < WORDS / 4; i++) {
            uint64_t want = ((uint64_t)j->id << 56) ^ ((uint64_t)round << 48) ^
                            ((uint64_t)left << 32) ^ (uint64_t)i;
            if (base[WORDS / 2 + i] != want) {
                fprintf(stderr, "[threads rank %d thread %d] round %d word %d: %llx, want %llx\n",
                        me, j->id, round, i, (unsigned long long)base[WORDS / 2 + i],
                        (unsigned long long)want);
                j->failures++;
                break;
            }
        }
        MPI_Win_unlock(me, win);
        MPI_Win_sync(win);
        MPI_Win_free(&win);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    tt_setup("threads");
    if (provided < MPI_THREAD_MULTIPLE) {
        if (tt_rank == 0)
            printf("[threads] SKIP: the MPI library gives thread level %d\n", provided);
        MPI_Finalize();
        return 77;
    }
    struct job jobs[2];
    pthread_t th[2];
    for (int t = 0; t < 2; t++) {
        jobs[t] = (struct job){t, MPI_COMM_NULL, 0};
        MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm);
    }
    for (int t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, run, &jobs[t]);
    for (int t = 0; t < 2; t++) {
        pthread_join(th[t], NULL);
        tt_errors += jobs[t].failures;
        MPI_Comm_free(&jobs[t].comm);
    }
    return tt_finish();
}
