/* The tiers handle (include/tierio/tier.h): this node's tiers, and the nodes and network
 * of the communicator. The local part (which tiers this node has, with which figures) is
 * MPI-free so that it is unit-tested on its own; tio_tiers_open adds the nodes. */
#ifndef TIO_TIER_TIERS_H
#define TIO_TIER_TIERS_H

#include <mpi.h>

#include "tier/tier_hwloc.h"
#include "tier/tier_site.h"
#include "tierio/tier.h"
#include "util/error.h"

/* Tiers a node may have: the site file's, plus DRAM and HBM found without it. */
#define TIO_MAX_TIERS (TIO_SITE_MAX_TIERS + 2)

struct tio_tier_rec {
    struct tio_tier_info info;  /* as found at open; `available` is refreshed on demand */
    uint64_t site_capacity;     /* the site file's capacity: a cap on `available` */
};

struct tio_tiers {
    MPI_Comm comm;              /* dup of the communicator (MPI_COMM_NULL in unit tests) */
    int rank, size;
    char host[TIO_SITE_HOST_MAX];
    struct tio_hw hw;
    struct tio_site site;       /* empty (no tiers, default hops) without a site file */
    int have_site;
    int ntiers;
    struct tio_tier_rec tiers[TIO_MAX_TIERS];
    /* the network: nodes in the order of their lowest rank */
    int nnodes;
    int *node_of;                           /* rank -> node */
    int *node_leader;                       /* node -> its lowest rank */
    char (*node_name)[TIO_SITE_HOST_MAX];   /* node -> host name */
    double latency[2], bandwidth[2];        /* by enum tio_net_level; 0 = unknown */
};

/* The local part: hwloc, the site file (path; NULL = $TIERIO_SITE or none) and the
 * system, for host. On error nothing is held. */
int tio_tiers_local(struct tio_tiers *t, const char *site_file, const char *host,
                    struct tio_err *err);
void tio_tiers_local_free(struct tio_tiers *t);

/* Index of the tier called name, or -1. */
int tio_tiers_index(const struct tio_tiers *t, const char *name);
/* Tier idx with `available` measured now. */
void tio_tiers_info_now(const struct tio_tiers *t, int idx, struct tio_tier_info *out);

/* Hops between nodes a and b, and from node a to the I/O node. */
int tio_tiers_node_hops(const struct tio_tiers *t, int a, int b);
int tio_tiers_node_io_hops(const struct tio_tiers *t, int a);

#endif
