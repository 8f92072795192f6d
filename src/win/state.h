/* What tierio knows about a window, cached on the window as an MPI attribute (the
 * seed's design): its flavor as the application asked for it, its storage region, the
 * pieces of a shared window, and the storage ranges attached to a dynamic window. */
#ifndef TIO_WIN_STATE_H
#define TIO_WIN_STATE_H

#include <mpi.h>
#include <pthread.h>

#include "win/region.h"

struct tio_attached {
    char *base;
    size_t size;
};

struct tio_win_state {
    int flavor;                 /* MPI_WIN_FLAVOR_* the application asked for */
    int has_region;
    struct tio_region region;
    MPI_Comm comm;              /* dup of the window's communicator (storage windows) */
    /* shared windows: every process's piece */
    int nprocs;
    MPI_Aint *sizes;
    MPI_Aint *disp_units;
    size_t *prefix;
    char *shared_base;          /* where piece 0 starts in this process */
    /* dynamic windows: storage ranges attached */
    pthread_mutex_t lock;
    struct tio_attached *att;
    int natt, capatt;
    void *base;                 /* local base and size as the application got them */
    MPI_Aint size;
    /* made on MPI's shared-memory window (overlay.c) */
    int overlay;
    MPI_Aint *shifts;           /* per process: its window start - its piece start */
    int file_created;           /* overlay.c made the file, then left it to MPI_Win_create */
    int freeing;                /* tio_win_free is releasing it: the attribute's delete
                                   callback must not */
};

struct tio_win_state *tio_state_new(int flavor);
/* Attach st to win. Returns an MPI error code. */
int tio_state_set(MPI_Win win, struct tio_win_state *st);
/* The state of win, or NULL for a window tierio did not make. */
struct tio_win_state *tio_state_get(MPI_Win win);
/* Release everything the state holds (the region is destroyed: synced unless discard). */
int tio_state_release(struct tio_win_state *st, struct tio_err *err);
/* Undo a creation that failed: nothing written back, a file we created removed. */
void tio_state_abandon(struct tio_win_state *st);

#endif
