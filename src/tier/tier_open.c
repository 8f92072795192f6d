/* tio_tiers_open/close and the local queries: the handle of include/tierio/tier.h. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tier/tiers.h"
#include "util/error_mpi.h"
#include "util/agree.h"
#include "util/node.h"

/* Which node each process is on: MPI's shared-memory domains (util/node.c), named by the
 * host name of their lowest rank, numbered in the order of those ranks. */
static int find_nodes(struct tio_tiers *t, struct tio_err *err)
{
    char (*hosts)[TIO_SITE_HOST_MAX] = malloc(TIO_SITE_HOST_MAX * (size_t)t->size);
    t->node_of = malloc(sizeof(int) * (size_t)t->size);
    t->node_leader = malloc(sizeof(int) * (size_t)t->size);
    t->node_name = malloc(TIO_SITE_HOST_MAX * (size_t)t->size);
    /* Agreed by the caller, like the split's failure. */
    if (!hosts || !t->node_of || !t->node_leader || !t->node_name) {
        free(hosts);
        return tio_err_set(err, TIO_E_NOMEM, "tio_tiers_open: out of memory");
    }
    if (tio_node_number(t->comm, t->node_of, &t->nnodes) != MPI_SUCCESS) {
        free(hosts);
        return tio_err_set(err, TIO_E_OTHER, "tio_tiers_open: MPI_Comm_split_type "
                           "(MPI_COMM_TYPE_SHARED) failed");
    }
    PMPI_Allgather(t->host, TIO_SITE_HOST_MAX, MPI_CHAR, hosts, TIO_SITE_HOST_MAX, MPI_CHAR,
                   t->comm);
    /* A node's leader is its first rank. */
    for (int r = 0, seen = 0; r < t->size; r++)
        if (t->node_of[r] == seen) {
            t->node_leader[seen] = r;
            memcpy(t->node_name[seen], hosts[r], TIO_SITE_HOST_MAX);
            seen++;
        }
    free(hosts);
    return TIO_OK;
}

static void release(struct tio_tiers *t)
{
    tio_tiers_local_free(t);
    free(t->node_of);
    free(t->node_leader);
    free(t->node_name);
    if (t->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&t->comm);
    free(t);
}

int tio_tiers_open(MPI_Comm comm, const char *site_file, tio_tiers_t *tiers)
{
    struct tio_err err = {0};
    if (!tiers) {
        tio_err_set(&err, TIO_E_ARG, "tio_tiers_open: tiers is NULL");
        return tio_err_raise_comm(comm, &err);
    }
    *tiers = NULL;
    struct tio_tiers *t = calloc(1, sizeof *t);
    if (!t) {
        tio_err_set(&err, TIO_E_NOMEM, "tio_tiers_open: out of memory");
    } else {
        t->comm = MPI_COMM_NULL;
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        if (strlen(host) >= TIO_SITE_HOST_MAX)
            host[TIO_SITE_HOST_MAX - 1] = 0;
        tio_tiers_local(t, site_file, host, &err);
    }
    /* Every process agrees before the handle's communicator exists. */
    if (tio_agree(comm, &err, NULL, 0) == TIO_OK) {
        PMPI_Comm_dup(comm, &t->comm);
        PMPI_Comm_rank(t->comm, &t->rank);
        PMPI_Comm_size(t->comm, &t->size);
        find_nodes(t, &err);
        tio_agree(t->comm, &err, NULL, 0);
    }
    if (err.cls != TIO_OK) {
        if (t)
            release(t);
        return tio_err_raise_comm(comm, &err);
    }
    *tiers = t;
    return MPI_SUCCESS;
}

int tio_tiers_close(tio_tiers_t *tiers)
{
    if (!tiers || !*tiers) {
        struct tio_err err = {0};
        tio_err_set(&err, TIO_E_ARG, "tio_tiers_close: no handle (NULL)");
        return tio_err_raise_comm(MPI_COMM_SELF, &err);
    }
    /* Collective: nobody may still be using the others' figures in a collective call. */
    PMPI_Barrier((*tiers)->comm);
    release(*tiers);
    *tiers = NULL;
    return MPI_SUCCESS;
}

static int bad_handle(const char *call)
{
    struct tio_err err = {0};
    tio_err_set(&err, TIO_E_ARG, "%s: tiers handle or result pointer is NULL", call);
    return tio_err_raise_comm(MPI_COMM_SELF, &err);
}

int tio_tiers_count(tio_tiers_t tiers, int *count)
{
    if (!tiers || !count)
        return bad_handle("tio_tiers_count");
    *count = tiers->ntiers;
    return MPI_SUCCESS;
}

int tio_tiers_get(tio_tiers_t tiers, int index, struct tio_tier_info *info)
{
    if (!tiers || !info)
        return bad_handle("tio_tiers_get");
    if (index < 0 || index >= tiers->ntiers) {
        struct tio_err err = {0};
        tio_err_set(&err, TIO_E_ARG, "tio_tiers_get: index %d is not a tier of this node "
                    "(it has %d)", index, tiers->ntiers);
        return tio_err_raise_comm(tiers->comm, &err);
    }
    tio_tiers_info_now(tiers, index, info);
    return MPI_SUCCESS;
}

int tio_tiers_find(tio_tiers_t tiers, const char *name, int *index)
{
    if (!tiers || !name || !index)
        return bad_handle("tio_tiers_find");
    *index = tio_tiers_index(tiers, name);
    return MPI_SUCCESS;
}
