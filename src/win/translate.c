#include "win/translate.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A fixed table read without locks on every one-sided call: a slot's window handle is
 * published last (release) and read first (acquire). A slot is emptied only by
 * MPI_Win_free, when MPI guarantees no one-sided call on that window is in flight. */
#define SLOTS 1024

struct slot {
    MPI_Win win; /* MPI_WIN_NULL: free */
    int n;
    MPI_Aint *units; /* shift in each rank's displacement units */
};

int tio_xlate_count;
static int interposed;
static struct slot slots[SLOTS];
static int used; /* slots below this index have been used: readers look no further */
static pthread_mutex_t writers = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
    for (int i = 0; i < SLOTS; i++)
        slots[i].win = MPI_WIN_NULL;
}

void tio_mark_rma_interposed(void) { __atomic_store_n(&interposed, 1, __ATOMIC_RELEASE); }
int tio_rma_interposed(void) { return __atomic_load_n(&interposed, __ATOMIC_ACQUIRE); }

int tio_xlate_register(MPI_Win win, int n, const MPI_Aint *shifts,
                       const MPI_Aint *disp_units)
{
    pthread_once(&once, init);
    MPI_Aint *units = calloc((size_t)n, sizeof *units);
    if (!units)
        return ENOMEM;
    for (int i = 0; i < n; i++)
        units[i] = shifts[i] / disp_units[i];
    int rc = ENOMEM;
    pthread_mutex_lock(&writers);
    for (int i = 0; i < SLOTS; i++)
        if (__atomic_load_n(&slots[i].win, __ATOMIC_ACQUIRE) == MPI_WIN_NULL) {
            slots[i].n = n;
            slots[i].units = units;
            __atomic_store_n(&slots[i].win, win, __ATOMIC_RELEASE);
            if (i >= used)
                __atomic_store_n(&used, i + 1, __ATOMIC_RELEASE);
            __atomic_add_fetch(&tio_xlate_count, 1, __ATOMIC_RELEASE);
            rc = 0;
            break;
        }
    pthread_mutex_unlock(&writers);
    if (rc)
        free(units); /* more than SLOTS such windows: the caller uses MPI_Win_create */
    return rc;
}

void tio_xlate_unregister(MPI_Win win)
{
    pthread_once(&once, init);
    pthread_mutex_lock(&writers);
    for (int i = 0; i < SLOTS; i++)
        if (__atomic_load_n(&slots[i].win, __ATOMIC_ACQUIRE) == win) {
            __atomic_store_n(&slots[i].win, MPI_WIN_NULL, __ATOMIC_RELEASE);
            __atomic_sub_fetch(&tio_xlate_count, 1, __ATOMIC_RELEASE);
            free(slots[i].units);
            slots[i].units = NULL;
            break;
        }
    pthread_mutex_unlock(&writers);
}

MPI_Aint tio_xlate_disp_slow(MPI_Win win, int rank, MPI_Aint disp)
{
    int n = __atomic_load_n(&used, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (__atomic_load_n(&slots[i].win, __ATOMIC_ACQUIRE) == win) {
            if (rank >= 0 && rank < slots[i].n)
                disp += slots[i].units[rank];
            break;
        }
    return disp;
}
