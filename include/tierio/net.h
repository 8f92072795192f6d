/* The network between the nodes of a tiers handle (MA-TAPIOCA: §3.1 Listing 2 of
 * Tessier et al., ICS 2018:
 * networkBandwidth, networkLatency, networkDistanceBetweenRanks, networkDistanceToIONode).
 * Full guide: docs/tier.md.
 *
 * Nodes are MPI's: the processes of one MPI_COMM_TYPE_SHARED group. Distances are network
 * hops: 0 between processes of one node; between two nodes the site file's hop count for
 * that pair of host names (`hops = nodeA nodeB N`), else its `default_hops` (1 when not
 * given). The distance to the I/O node (the gateway to the global file system) is the
 * site file's `io_hops = node N`, else `default_io_hops` (1). Latency and bandwidth come
 * from the site file's [network] section (`tierio probe` measures them when it runs on
 * two nodes or more); 0 means unknown.
 *
 * All calls are local and take ranks of the handle's communicator. */
#ifndef TIERIO_NET_H
#define TIERIO_NET_H

#include "tierio/export.h"

#include "tierio/tier.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Levels of tio_net_latency and tio_net_bandwidth. */
enum tio_net_level {
    TIO_NET_INTRA_NODE = 0, /* between processes of one node (site file: node_latency,
                               node_bandwidth) */
    TIO_NET_INTER_NODE = 1  /* between nodes (latency, bandwidth) */
};

/* Seconds per hop, and bytes per second; 0 when unknown. */
TIO_API int tio_net_latency(tio_tiers_t tiers, int level, double *latency);
TIO_API int tio_net_bandwidth(tio_tiers_t tiers, int level, double *bandwidth);

/* Hops between the nodes of two ranks (0 on one node). */
TIO_API int tio_net_distance(tio_tiers_t tiers, int rank_a, int rank_b, int *hops);
/* Hops from rank's node to the I/O node. */
TIO_API int tio_net_distance_to_io(tio_tiers_t tiers, int rank, int *hops);

/* The number of nodes, and the node of a rank: its index (0..nodes-1, in the order of
 * their lowest ranks) and its host name (name may be NULL; len >= 1). */
TIO_API int tio_net_nodes(tio_tiers_t tiers, int *nodes);
TIO_API int tio_net_node(tio_tiers_t tiers, int rank, int *node, char *name, int len);

#ifdef __cplusplus
}
#endif
#endif
