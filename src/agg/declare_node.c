/* Declarations made within each node (the node regime, engine.c).
 *
 * In the node regime a write or a read moves nothing between nodes, so a node needs only
 * its own processes' pieces to plan them. A declaration is local: each process keeps its
 * own pieces and starts the background check among all (check.c). The access's first
 * call gathers the node's pieces in the call's first synchronisation, the meeting (an
 * allgather within the node that every node-regime call starts with), and every process
 * of the node then plans it alike, cut among the node's aggregators. A first write whose
 * processes have one piece each has put its data in lanes of the aggregator's first
 * buffer before the meeting, and the aggregator writes it from there: no round. */
#include <stdlib.h>
#include <string.h>

#include "agg/handle.h"
#include "util/agree.h"

#define MEET TIO_AGG_MEET

int tio_agg_node_declarations(const struct tio_agg *a)
{
    return a->nr.node_regime && a->nr.all_nodes_aggregate && a->nr.checks &&
           tio_agg_by_node_possible(a);
}

/* The failed declaration of access id, in its place (ids stay the same on every node). */
static void add_failed(struct tio_agg *a, struct tio_agg_access *x, const struct tio_err *why)
{
    memset(x, 0, sizeof *x);
    x->failed = *why;
    x->within_node = 1;
    a->access[a->naccess++] = *x;
}

int tio_agg_declare_node(struct tio_agg *a, int count, const MPI_Offset offsets[],
                         const MPI_Offset sizes[], int *id, struct tio_err *err)
{
    struct tio_agg_access x;
    memset(&x, 0, sizeof x);
    if (tio_agg_access_room(a, err) != TIO_OK) {
        /* No room to keep the access (out of memory): the check still tells every
         * process that this declaration failed; this process's ids fall behind. */
        tio_agg_check_start(a, a->naccess, -1, NULL, 0, err);
        return err->cls;
    }
    int my = a->naccess;
    struct tio_agg_piece *own = err->cls == TIO_OK ? malloc(sizeof *own * (size_t)(count + 1))
                                                   : NULL;
    if (err->cls == TIO_OK && !own)
        tio_err_set(err, TIO_E_NOMEM, "tio_agg_declare: out of memory");
    if (err->cls != TIO_OK) { /* its node learns it at the access's first call */
        tio_agg_check_start(a, my, -1, NULL, 0, err);
        add_failed(a, &x, err);
        return err->cls;
    }
    int64_t mem = 0;
    for (int i = 0; i < count; i++) {
        own[i] = (struct tio_agg_piece){offsets[i], sizes[i], mem, a->grp.grank};
        mem += sizes[i];
    }
    /* Its own pieces only, until the first call gathers the node's (tio_agg_node_meet). */
    x.pieces = x.gpieces = own;
    x.npieces = x.ngpieces = x.own_n = (size_t)count;
    x.mine = mem;
    x.by_node = 1;
    x.checking = 1;
    x.within_node = 1;
    tio_agg_check_start(a, my, count, own, (size_t)count, err);
    a->access[a->naccess++] = x;
    *id = my;
    return TIO_OK;
}

/* The node's processes' bytes of one lane each, in the first buffer of the node's
 * aggregator (0 when lanes cannot be used: its memory is not shared, or the node has
 * several aggregators). */
static int64_t lane_size(const struct tio_agg *a, int *dom)
{
    int node = a->grp.gnode_of[a->grp.grank];
    *dom = -1;
    if (a->nr.node_ndom[node] != 1)
        return 0;
    for (int d = 0; d < a->place.ndomains; d++)
        if (a->dom_node[d] == node)
            *dom = d;
    if (*dom != a->my_domain && (!a->bufs.peer || !a->bufs.peer[*dom]))
        return 0;
    return a->bufs.slot_size / a->nr.nsize / 64 * 64;
}

int tio_agg_lane_fill(struct tio_agg *a, const struct tio_agg_access *x, const void *buf,
                      const struct tio_err *err)
{
    int dom;
    int64_t lane = lane_size(a, &dom);
    if (err->cls != TIO_OK || x->exchanged || x->failed.cls != TIO_OK || x->own_n > 1 ||
        x->mine > lane)
        return 0;
    if (dom != a->my_domain && x->mine > 0) { /* the aggregator writes from its own buffer */
        memcpy(a->bufs.peer[dom] + (int64_t)a->nr.node_rank * lane, buf, (size_t)x->mine);
        PMPI_Win_sync(a->bufs.swin);
    }
    return 1;
}

void tio_agg_lanes_write(struct tio_agg *a, const void *buf, struct tio_err *err)
{
    int dom;
    int64_t lane = lane_size(a, &dom);
    const int64_t *m = a->nr.node_first;
    PMPI_Win_sync(a->bufs.swin); /* see what the node's processes copied */
    for (int k = 0; k < a->nr.nsize && err->cls == TIO_OK; k++) {
        if (m[MEET * k + 2] != 1 || m[MEET * k + 4] == 0)
            continue;
        const char *src = k == a->nr.node_rank ? buf : a->bufs.mine + (int64_t)k * lane;
        a->drv.ops->write(&a->drv, src, m[MEET * k + 3], m[MEET * k + 4], err);
    }
}

/* Access x's first call: the node's pieces from the meeting (and an allgather of the rest
 * when a process has several), and its plan by node. A failure is this process's: its
 * error goes with the call's next synchronisation. */
static void exchange(struct tio_agg *a, struct tio_agg_access *x, struct tio_err *err)
{
    const int64_t *m = a->nr.node_first;
    int64_t *first = a->gather_first;
    long long total = 0;
    for (int k = 0; k < a->nr.nsize; k++) {
        first[3 * k] = m[MEET * k + 2];
        first[3 * k + 1] = m[MEET * k + 3];
        first[3 * k + 2] = m[MEET * k + 4];
        total += first[3 * k];
    }
    MPI_Offset *offs = malloc(sizeof *offs * (x->own_n + 1)),
               *lens = malloc(sizeof *lens * (x->own_n + 1));
    if (!offs || !lens)
        tio_err_set(err, TIO_E_NOMEM, "out of memory");
    for (size_t i = 0; offs && lens && i < x->own_n; i++) {
        offs[i] = x->gpieces[i].off;
        lens[i] = x->gpieces[i].len;
    }
    struct tio_agg_piece *pieces = NULL;
    size_t n = 0;
    tio_agg_gather_pieces(a->nr.nodecomm, a->nr.nsize, first, total, (int)x->own_n, offs, lens,
                          a->nr.node_granks, &pieces, &n, a, err);
    free(offs);
    free(lens);
    struct tio_agg_access nx;
    int checking = x->checking;
    if (err->cls == TIO_OK && tio_agg_access_make(a, &nx, pieces, n, 1, err) == TIO_OK) {
        nx.read_own = !a->set.read_aggregate && tio_agg_pieces_disjoint(nx.gpieces,
                                                                        nx.ngpieces);
        nx.checking = checking;
        nx.within_node = 1;
        tio_agg_access_free(x);
        *x = nx;
        return;
    }
    if (err->cls == TIO_OK) /* (access_make failed: nx has what it made) */
        tio_agg_access_free(&nx);
    else
        free(pieces);
    tio_err_set(&x->failed, err->cls, "gathering its node's pieces: %s", err->msg);
}

int tio_agg_node_meet(struct tio_agg *a, struct tio_agg_access *x, int id, int lane,
                      int *lanes, struct tio_err *err)
{
    int64_t me[MEET] = {id, err->cls != TIO_OK, x->exchanged ? -2 : (int64_t)x->own_n,
                        x->own_n > 0 ? x->gpieces[0].off : 0,
                        x->own_n > 0 ? x->gpieces[0].len : 0, lane};
    int64_t *m = a->nr.node_first;
    PMPI_Allgather(me, MEET, MPI_INT64_T, m, MEET, MPI_INT64_T, a->nr.nodecomm);
    int failed = -1, differ = 0, all = 1;
    for (int k = 0; k < a->nr.nsize; k++) {
        if (m[MEET * k + 1] && failed < 0)
            failed = k;
        differ |= m[MEET * k] != id || (m[MEET * k + 2] == -2) != (me[2] == -2);
        all &= m[MEET * k + 5] == 1 && m[MEET * k + 2] >= 0 && m[MEET * k + 2] <= 1;
    }
    if (failed >= 0) /* the lowest failing process's error, everywhere on the node */
        return tio_share_error(a->nr.nodecomm, failed, err) != TIO_OK;
    if (differ)
        return tio_err_set(err, TIO_E_ARG, "the processes pass different accesses (ids %d "
                           "and others); every process passes the same", id) != TIO_OK;
    /* Lanes when everybody's data is in one (one piece each at most), none overlapping. */
    for (int k = 0; all && k < a->nr.nsize; k++)
        for (int j = k + 1; all && j < a->nr.nsize; j++) {
            int64_t ko = m[MEET * k + 3], kl = m[MEET * k + 4], jo = m[MEET * j + 3],
                    jl = m[MEET * j + 4];
            all = !(kl > 0 && jl > 0 && ko < jo + jl && jo < ko + kl);
        }
    if (lanes)
        *lanes = all;
    if (!x->exchanged)
        exchange(a, x, err);
    return 0;
}

