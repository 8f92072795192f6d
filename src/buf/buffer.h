/* A buffer on a tier (include/tierio/tier.h, seed 002 Listing 1): every process's piece,
 * one window over all of them. buffer.c makes and frees it, buffer_rma.c moves data. */
#ifndef TIO_BUF_BUFFER_H
#define TIO_BUF_BUFFER_H

#include <limits.h>
#include <mpi.h>

#include "tier/tiers.h"

struct tio_buf {
    MPI_Comm comm;          /* dup of the caller's comm: its error handler reports */
    MPI_Comm icomm;         /* dup with MPI_ERRORS_RETURN for the calls made inside */
    int rank, size;
    MPI_Win win;            /* MPI_ERRORS_RETURN; in a lock_all epoch */
    enum tio_tier_kind kind;
    char tier[TIO_TIER_NAME_MAX];
    int storage;            /* a storage window (node-local or global tier) */
    const struct tio_hw *hw;/* the handle's hwloc topology, for bound memory */
    void *bound;            /* memory bound to NUMA nodes (HBM, bound DRAM) */
    size_t bound_len;
    void *base;
    MPI_Aint local_size;
    MPI_Aint *sizes;        /* every process's size */
    char file[PATH_MAX];    /* this process's file on a storage tier, "" if none */
};

/* An error in a buffer call on this process: raised through the buffer's comm. */
int tio_buf_fail(struct tio_buf *b, struct tio_err *err);

#endif
