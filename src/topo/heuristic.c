/* The heuristic (seed 003, Fig. 5): group by node, then one probe and one look.
 *
 *   1. processes are grouped by node (nodes.c); the "challenge" process is
 *      the first one on another node than rank 0 (the last rank when all share a node);
 *   2. rank 0 creates <dir>/.tierio-nbhd-<token>, every other process checks that it could
 *      write there (access(2)); an agreement orders the look after the creation and fails
 *      the call everywhere when any process cannot write;
 *   3. the challenge process looks the probe up by name; a broadcast tells everybody;
 *   4. seen: one group of all processes; not seen: one group per node.
 * Cost: two file operations whatever the size, and a writability check per process but
 * rank 0. It is right for node-local directories on
 * every node and for one directory shared by all. It assumes that every node has the
 * directory and that sharing is all-or-nothing: a directory shared by a subset of the
 * nodes comes out as node-local (or, if the challenge node shares it with rank 0, as
 * global), and processes without the directory still get their node's group. Rank 0 must
 * see the directory; if it does not, the call fails. Unlike the seed's Fig. 5 (and
 * MPICH), the global case is a split by key too, not a duplicate of comm, so the order
 * follows MPI's rules. */
#include <string.h>

#include "topo/discover.h"
#include "topo/exchange.h"
#include "topo/nodes.h"
#include "util/agree.h"

int topo_heuristic(struct topo_call *c, struct topo_result *res, struct tio_err *err)
{
    res->nodes = topo_find_nodes(c, err);
    if (err->cls != TIO_OK) /* agreed; nothing made yet */
        return err->cls;
    int challenge = c->size - 1;
    for (int r = 1; r < c->size; r++)
        if (c->leader[r] != c->leader[0]) {
            challenge = r;
            break;
        }

    char path[PATH_MAX];
    topo_probe_path(path, sizeof path, c->dir, c->token, -1);
    int visible = 0;
    if (c->rank == 0) {
        enum topo_probe p = topo_probe_create(c->dir, path, NULL, &res->mine, err);
        if (p == TOPO_PROBE_DONE)
            memcpy(res->probe, path, sizeof res->probe);
        if (p == TOPO_PROBE_NODIR)
            tio_err_set(err, TIO_E_NOENT,
                        "nbhd_common_dirname: the directory does not exist on rank 0 (the "
                        "heuristic needs it there; hybrid and exhaustive do not): \"%s\"",
                        c->dir);
        else if (p == TOPO_PROBE_EXISTS)
            topo_probe_taken(path, err);
    } else {
        topo_probe_writable(c->dir, &res->mine, err);
    }
    res->all.checks = c->size - 1;
    res->all.creates = 1;
    /* Every process's outcome (rank 0 made the probe before it joins), so that a process
     * that cannot write fails the call on every process. */
    if (tio_agree(c->comm, err, NULL, 0) != TIO_OK)
        goto out;
    res->all.removals = 1; /* the probe exists; failing to remove it is an error */

    if (c->rank == challenge) {
        enum topo_probe p = topo_probe_read(c->dir, path, NULL, 0, &res->mine, err);
        visible = p == TOPO_PROBE_DONE;
    }
    res->all.lookups = 1;
    if (topo_bcast(c->comm, challenge, &visible, 1, err) != TIO_OK)
        goto out;
    res->color = visible ? 0 : c->leader[c->rank];
    res->groups = visible ? 1 : res->nodes;

out:
    return err->cls;
}
