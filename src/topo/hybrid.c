/* The hybrid algorithm (tierio's; `auto`): one probe per node, no directory listing.
 *
 * Every node leader (the lowest rank of the processes sharing a processor name, nodes.c)
 * tries to create the same name, <dir>/.tierio-nbhd-<token>, with O_CREAT|O_EXCL, writing
 * its rank into the file when it succeeds. In each distinct directory exactly one leader
 * wins; the others get EEXIST, and leaders whose node lacks the directory get ENOENT. One
 * allgather tells everybody every node's outcome:
 *   - no winner: nobody sees the directory, or (some lost) the name existed already: an
 *     error on every process;
 *   - one winner: every leader that lost shares the winner's directory (one group);
 *   - only winners: every node has a directory of its own (node-local);
 *   - several winners and some losers (directories shared by subsets of nodes): each loser
 *     reads the winner's rank from the file, and a second allgather spreads the answers.
 * Before that every process checks that it can write there (access(2), one check per
 * process in the statistics); a process that cannot fails the call on every process
 * through the same allgather.
 * Processes get their node leader's group; nodes without the directory get MPI_COMM_NULL.
 * Winners remove their files once nobody needs them (split.c), and all agree that the
 * removals worked.
 * Cost: one creation per node, plus one lookup per losing node in the mixed case: nodes
 * file operations for node-local or global directories, nodes + (nodes - groups) for
 * directories shared by subsets. It assumes what the heuristic assumes too: all processes
 * of a node see the same directory at that path. */
#include <stdio.h>
#include <string.h>

#include "topo/discover.h"
#include "topo/exchange.h"
#include "topo/nodes.h"

enum { NOT_LEADER = -1, NODIR = 0, WON = 1, LOST = 2, FAILED = 3 };

/* The winner a losing leader reads from the probe: checked against the token and against
 * the outcomes everybody reported, so a planted or damaged file is an error, not a group. */
static int read_winner(struct topo_call *c, const char *path, const int *ga,
                       struct topo_ops *ops, struct tio_err *err)
{
    char buf[128], tok[TOPO_TOKEN_LEN + 1];
    int w = -1;
    enum topo_probe p = topo_probe_read(c->dir, path, buf, sizeof buf, ops, err);
    if (p == TOPO_PROBE_ERROR)
        return -1;
    if (p == TOPO_PROBE_NODIR) {
        tio_err_set(err, TIO_E_IO,
                    "nbhd_common_dirname: the probe file existed when this node tried to "
                    "create it but is gone now: \"%s\"", path);
        return -1;
    }
    if (sscanf(buf, "tierio-nbhd %32s %d", tok, &w) != 2 || strcmp(tok, c->token) != 0 ||
        w < 0 || w >= c->size || ga[w] != WON) {
        tio_err_set(err, TIO_E_IO,
                    "nbhd_common_dirname: the probe file does not name a process that created "
                    "it (content \"%.40s\"): \"%s\"", buf, path);
        return -1;
    }
    return w;
}

int topo_hybrid(struct topo_call *c, struct topo_result *res, struct tio_err *err)
{
    int state = NOT_LEADER;
    int *ga = c->gather_a, *gb = c->gather_b;
    char path[PATH_MAX];
    topo_probe_path(path, sizeof path, c->dir, c->token, -1);

    res->nodes = topo_find_nodes(c, err);
    if (err->cls != TIO_OK) /* agreed; nothing made yet */
        return err->cls;
    /* Every process checks first that it can write in the directory, so that a process
     * that cannot (a read-only mount of its own) fails the call on every process with the
     * same message, whichever leader would have created the probe first. */
    int leader = c->leader[c->rank];
    int writable = topo_probe_writable(c->dir, &res->mine, err) != TOPO_PROBE_ERROR;
    res->all.checks = c->size;
    if (leader == c->rank && !writable)
        state = FAILED;
    else if (leader == c->rank) {
        char content[64 + TOPO_TOKEN_LEN];
        snprintf(content, sizeof content, "tierio-nbhd %s %d\n", c->token, c->rank);
        switch (topo_probe_create(c->dir, path, content, &res->mine, err)) {
        case TOPO_PROBE_DONE: state = WON; break;
        case TOPO_PROBE_EXISTS: state = LOST; break;
        case TOPO_PROBE_NODIR: state = NODIR; break;
        default: state = FAILED; break;
        }
        if (state == WON)
            memcpy(res->probe, path, sizeof res->probe);
    }
    int winners = 0, losers = 0;
    if (topo_allgather(c->comm, &state, 1, ga, err) != TIO_OK)
        goto out;
    for (int r = 0; r < c->size; r++) {
        winners += ga[r] == WON;
        losers += ga[r] == LOST;
    }
    res->all.creates = res->nodes;
    res->all.removals = winners;
    if (winners == 0 && losers > 0) { /* the name existed before anybody made it */
        topo_probe_taken(path, err);
        goto out;
    }
    if (winners == 0) { /* every process sees the same: no agreement needed */
        tio_err_set(err, TIO_E_NOENT,
                    "nbhd_common_dirname: no process can see the directory (it does not exist "
                    "on any of the %d nodes): \"%s\"", res->nodes, c->dir);
        goto out;
    }

    /* The group of every node leader, in gb[r] (only leaders' entries are used). */
    if (winners > 1 && losers > 0) {
        int color = MPI_UNDEFINED;
        if (state == WON)
            color = c->rank;
        else if (state == LOST)
            color = read_winner(c, path, ga, &res->mine, err);
        res->all.lookups = losers;
        if (topo_allgather(c->comm, &color, 1, gb, err) != TIO_OK)
            goto out;
    } else {
        int sole = -1;
        for (int r = 0; r < c->size; r++)
            if (ga[r] == WON)
                sole = r;
        for (int r = 0; r < c->size; r++)
            gb[r] = ga[r] == WON ? r : ga[r] == LOST ? sole : MPI_UNDEFINED;
    }
    res->color = gb[leader];
    res->groups = winners;
    for (int r = 0; r < c->size; r++)
        res->excluded += ga[c->leader[r]] == NODIR;

out:
    return err->cls;
}
