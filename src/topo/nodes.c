#include "topo/nodes.h"

#include <stdlib.h>
#include <string.h>

#include "topo/exchange.h"
#include "topo/hash.h"

static int by_hash_then_rank(const void *pa, const void *pb)
{
    const struct topo_node_key *a = pa, *b = pb;
    int c = memcmp(a->h, b->h, sizeof a->h);
    return c ? c : (a->rank > b->rank) - (a->rank < b->rank);
}

int topo_find_nodes(struct topo_call *c, struct tio_err *err)
{
    char name[MPI_MAX_PROCESSOR_NAME + 1];
    int len = 0;
    uint32_t h[4] = {0, 0, 0, 0};
    memset(name, 0, sizeof name);
    if (PMPI_Get_processor_name(name, &len) != MPI_SUCCESS)
        tio_err_set(err, TIO_E_OTHER, "MPI_Get_processor_name failed");
    topo_hash128(name, h);
    int mine[4];
    memcpy(mine, h, sizeof mine);
    int *g = c->gather_b;
    if (topo_allgather(c->comm, mine, 4, g, err) != TIO_OK)
        return 0;
    struct topo_node_key *k = c->node_keys;
    for (int r = 0; r < c->size; r++) {
        memcpy(k[r].h, g + r * 4, sizeof k[r].h);
        k[r].rank = r;
    }
    qsort(k, (size_t)c->size, sizeof *k, by_hash_then_rank);
    int nodes = 0, lead = -1;
    for (int i = 0; i < c->size; i++) {
        if (i == 0 || memcmp(k[i].h, k[i - 1].h, sizeof k[i].h) != 0) {
            lead = k[i].rank; /* the lowest rank with this name */
            nodes++;
        }
        c->leader[k[i].rank] = lead;
    }
    return nodes;
}
