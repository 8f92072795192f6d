/* The network abstraction of include/tierio/net.h (seed 002 Listing 2) on a tiers handle. */
#include <stdio.h>
#include <string.h>

#include "tier/tiers.h"
#include "tierio/net.h"
#include "util/error_mpi.h"

/* value == -1: a NULL pointer `what`; else `what` has a bad value. */
static int arg_error(tio_tiers_t t, const char *call, const char *what, int value)
{
    struct tio_err err = {0};
    if (!t)
        tio_err_set(&err, TIO_E_ARG, "%s: tiers handle is NULL", call);
    else if (value == -1)
        tio_err_set(&err, TIO_E_ARG, "%s: %s is NULL", call, what);
    else if (!strncmp(what, "rank", 4))
        tio_err_set(&err, TIO_E_ARG, "%s: %s %d is not a rank of the handle's communicator "
                    "(size %d)", call, what, value, t->size);
    else
        tio_err_set(&err, TIO_E_ARG, "%s: %s %d is not TIO_NET_INTRA_NODE (0) or "
                    "TIO_NET_INTER_NODE (1)", call, what, value);
    return tio_err_raise_comm(t ? t->comm : MPI_COMM_SELF, &err);
}

static int bad_rank(tio_tiers_t t, int r)
{
    return r < 0 || r >= t->size;
}

int tio_net_latency(tio_tiers_t t, int level, double *latency)
{
    if (!t || !latency)
        return arg_error(t, "tio_net_latency", "latency", -1);
    if (level != TIO_NET_INTRA_NODE && level != TIO_NET_INTER_NODE)
        return arg_error(t, "tio_net_latency", "level", level);
    *latency = t->latency[level];
    return MPI_SUCCESS;
}

int tio_net_bandwidth(tio_tiers_t t, int level, double *bandwidth)
{
    if (!t || !bandwidth)
        return arg_error(t, "tio_net_bandwidth", "bandwidth", -1);
    if (level != TIO_NET_INTRA_NODE && level != TIO_NET_INTER_NODE)
        return arg_error(t, "tio_net_bandwidth", "level", level);
    *bandwidth = t->bandwidth[level];
    return MPI_SUCCESS;
}

int tio_net_distance(tio_tiers_t t, int rank_a, int rank_b, int *hops)
{
    if (!t || !hops)
        return arg_error(t, "tio_net_distance", "hops", -1);
    if (bad_rank(t, rank_a))
        return arg_error(t, "tio_net_distance", "rank_a", rank_a);
    if (bad_rank(t, rank_b))
        return arg_error(t, "tio_net_distance", "rank_b", rank_b);
    *hops = tio_tiers_node_hops(t, t->node_of[rank_a], t->node_of[rank_b]);
    return MPI_SUCCESS;
}

int tio_net_distance_to_io(tio_tiers_t t, int rank, int *hops)
{
    if (!t || !hops)
        return arg_error(t, "tio_net_distance_to_io", "hops", -1);
    if (bad_rank(t, rank))
        return arg_error(t, "tio_net_distance_to_io", "rank", rank);
    *hops = tio_tiers_node_io_hops(t, t->node_of[rank]);
    return MPI_SUCCESS;
}

int tio_net_nodes(tio_tiers_t t, int *nodes)
{
    if (!t || !nodes)
        return arg_error(t, "tio_net_nodes", "nodes", -1);
    *nodes = t->nnodes;
    return MPI_SUCCESS;
}

int tio_net_node(tio_tiers_t t, int rank, int *node, char *name, int len)
{
    if (!t || !node)
        return arg_error(t, "tio_net_node", "node", -1);
    if (bad_rank(t, rank))
        return arg_error(t, "tio_net_node", "rank", rank);
    if (name && len < 1) {
        struct tio_err err = {0};
        tio_err_set(&err, TIO_E_ARG, "tio_net_node: len %d: the name needs at least 1 byte",
                    len);
        return tio_err_raise_comm(t->comm, &err);
    }
    *node = t->node_of[rank];
    if (name)
        snprintf(name, (size_t)len, "%s", t->node_name[*node]);
    return MPI_SUCCESS;
}
