/* The table of placement strategies, and the per-node pick they share. */
#include "agg/strategy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agg/handle.h"

static const struct tio_agg_strategy *const table[] = {
    &tio_agg_strategy_default,
    &tio_agg_strategy_tapioca,
    &tio_agg_strategy_memcon,
};

const struct tio_agg_strategy *tio_agg_strategy_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcasecmp(table[i]->name, name))
            return table[i];
    return NULL;
}

/* "default, tapioca, ...": from the table, so that a new strategy is listed by being in it. */
static char names[128];

__attribute__((constructor)) static void list_names(void)
{
    size_t at = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "",
                               table[i]->name);
}

const char *tio_agg_strategy_names(void)
{
    return names;
}

int tio_agg_pick_per_node(const struct tio_agg *a, int ndomains, int *ranks,
                          struct tio_err *err)
{
    int n = a->grp.gnnodes;
    /* How many processes each node has, and which are already picked. */
    int *count = calloc((size_t)n, sizeof *count), *used = calloc((size_t)n, sizeof *used);
    char *picked = calloc((size_t)a->grp.gsize, 1);
    if (!count || !used || !picked) {
        free(count);
        free(used);
        free(picked);
        return tio_err_set(err, TIO_E_NOMEM, "aggregator placement: out of memory");
    }
    for (int r = 0; r < a->grp.gsize; r++)
        count[a->grp.gnode_of[r]]++;
    int k = 0;
    if (ndomains <= n) {
        /* Nodes spread evenly, the lowest process of each (ROMIO's default). */
        for (int i = 0; i < ndomains; i++) {
            int node = (int)((long long)i * n / ndomains);
            for (int r = 0; r < a->grp.gsize; r++)
                if (a->grp.gnode_of[r] == node) {
                    picked[r] = 1;
                    break;
                }
        }
    } else {
        /* A first process on every node, then a second, ... */
        while (k < ndomains) {
            int progress = 0;
            for (int node = 0; node < n && k < ndomains; node++) {
                if (used[node] == count[node])
                    continue;
                int seen = 0;
                for (int r = 0; r < a->grp.gsize; r++)
                    if (a->grp.gnode_of[r] == node && seen++ == used[node]) {
                        picked[r] = 1;
                        break;
                    }
                used[node]++;
                k++;
                progress = 1;
            }
            if (!progress)
                break;
        }
    }
    /* In node order, then rank order: neighbouring domains on one node, and subfiles of
     * consecutive nodes hold consecutive bytes. */
    k = 0;
    for (int node = 0; node < n; node++)
        for (int r = 0; r < a->grp.gsize; r++)
            if (picked[r] && a->grp.gnode_of[r] == node)
                ranks[k++] = r;
    free(count);
    free(used);
    free(picked);
    if (k != ndomains)
        return tio_err_set(err, TIO_E_ARG, "aggregator placement: %d aggregators asked, %d "
                           "processes", ndomains, a->grp.gsize);
    return TIO_OK;
}
