/* The exhaustive algorithm (seed 003, Fig. 4): every process proves what it can see.
 *
 *   1. each process creates its own probe, <dir>/.tierio-nbhd-<token>.<rank>;
 *   2. all learn who could create one (an allgather that is also the barrier after which
 *      every probe exists); a process that could not, because the directory does not exist
 *      for it, gets MPI_COMM_NULL;
 *   3. each process that made a probe lists the directory: the ranks whose probes it sees
 *      are its group, named by the lowest of them;
 *   4. all exchange (group, size, set hash) and check that the groups are a partition (a
 *      file system whose listings disagree between processes is an error, not a guess);
 *   5. each process removes its probe (split.c), and all agree that every removal worked.
 * Cost: one creation and one listing per process (2 x ranks file operations), listings of
 * up to ranks entries each. Right for any topology, including directories shared by
 * processes of different nodes or by some processes of one node only. */
#include <string.h>

#include "topo/discover.h"
#include "topo/exchange.h"

/* Order-independent hash of a set of ranks: a sum of well-mixed words. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Every process runs this on the same gathered data, so all reach the same verdict. */
static int check_partition(struct topo_call *c, const int *g, struct tio_err *err)
{
    memset(c->class_count, 0, (size_t)c->size * sizeof *c->class_count);
    memset(c->class_hash, 0, (size_t)c->size * sizeof *c->class_hash);
    for (int r = 0; r < c->size; r++) {
        int color = g[r * 4];
        if (color == MPI_UNDEFINED)
            continue;
        c->class_count[color]++;
        c->class_hash[color] += mix((uint64_t)r);
    }
    for (int r = 0; r < c->size; r++) {
        int color = g[r * 4];
        if (color == MPI_UNDEFINED)
            continue;
        uint64_t h = (uint64_t)(uint32_t)g[r * 4 + 2] | (uint64_t)(uint32_t)g[r * 4 + 3] << 32;
        if (c->class_count[color] != g[r * 4 + 1] || c->class_hash[color] != h)
            return tio_err_set(err, TIO_E_IO,
                               "nbhd_common_dirname: processes disagree on who shares the "
                               "directory (rank %d sees the probe files of %d processes, %d "
                               "processes see rank %d's group): its listings are not coherent "
                               "across processes (directory \"%s\")", r, g[r * 4 + 1],
                               c->class_count[color], color, c->dir);
    }
    return TIO_OK;
}

int topo_exhaustive(struct topo_call *c, struct topo_result *res, struct tio_err *err)
{
    char path[PATH_MAX];
    topo_probe_path(path, sizeof path, c->dir, c->token, c->rank);
    enum topo_probe p = topo_probe_create(c->dir, path, NULL, &res->mine, err);
    if (p == TOPO_PROBE_EXISTS)
        topo_probe_taken(path, err);
    int made = p == TOPO_PROBE_DONE;
    if (made)
        memcpy(res->probe, path, sizeof res->probe);

    int *ga = c->gather_a, *gb = c->gather_b;
    int nmade = 0;
    if (topo_allgather(c->comm, &made, 1, ga, err) != TIO_OK)
        goto out;
    for (int r = 0; r < c->size; r++)
        nmade += ga[r];
    if (nmade == 0) { /* every process sees the same: no agreement needed */
        tio_err_set(err, TIO_E_NOENT,
                    "nbhd_common_dirname: no process can see the directory (it does not "
                    "exist): \"%s\"", c->dir);
        goto out;
    }

    int mine[4] = {MPI_UNDEFINED, 0, 0, 0};
    if (made) {
        memset(c->seen, 0, (size_t)c->size);
        if (topo_probe_list(c->dir, c->token, c->size, c->seen, &res->mine, err) == TIO_OK &&
            !c->seen[c->rank])
            tio_err_set(err, TIO_E_IO,
                        "nbhd_common_dirname: this process's probe file is missing from the "
                        "directory listing: \"%s\"", path);
        uint64_t h = 0;
        for (int r = c->size - 1; r >= 0; r--)
            if (c->seen[r]) {
                mine[0] = r; /* ends as the lowest */
                mine[1]++;
                h += mix((uint64_t)r);
            }
        mine[2] = (int)(uint32_t)h;
        mine[3] = (int)(uint32_t)(h >> 32);
    }
    if (topo_allgather(c->comm, mine, 4, gb, err) != TIO_OK)
        goto out;
    if (check_partition(c, gb, err) != TIO_OK)
        goto out;

    res->color = mine[0];
    for (int r = 0; r < c->size; r++) {
        if (gb[r * 4] == MPI_UNDEFINED)
            res->excluded++;
        else if (gb[r * 4] == r)
            res->groups++;
    }

out:
    res->all.creates = c->size;
    res->all.listings = nmade;
    res->all.removals = nmade;
    return err->cls;
}
