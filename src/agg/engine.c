/* The two phases of an access, pipelined over the aggregators' buffers (seed 002 §3.3,
 * Algorithm 1 for reads; writes are its mirror).
 *
 * Write, round r (slot r % N of every aggregator): every process Puts its round-r bytes
 * and flushes; the synchronisation that closes the round tells the aggregators their slot
 * is complete; each hands it to its I/O thread and the next round is Put into the next
 * slot meanwhile. Before a slot is filled again its previous write must be done: an
 * aggregator waits for it before the synchronisation that opens that round.
 *
 * Read: aggregators read rounds 0..N-1 ahead; round r's synchronisation says slot r % N is
 * full (and that everyone is done with round r-1's slot, which is then refilled with round
 * r-1+N while the processes Get round r).
 *
 * A call costs one synchronisation per round plus a final agreement (two for an access
 * that fits in one round). A round's synchronisation is among the processes of each node
 * when no byte of the rounds it separates crosses between nodes (every process that Puts
 * into, or Gets from, the node's aggregators is on the node: domains that follow the data
 * make this the common case), else among all processes as well. In the node regime
 * (every access of the handle has domains by node) the final agreement is the node's too:
 * each node works alone, and tio_agg_sync tells every process what the others' calls did.
 * Every synchronisation carries each process's error so far and the access it works on,
 * so that a failure or a mismatch stops the node, or everybody, at the same round; the
 * final agreement then reports the lowest failing rank's error (or the mismatch) to all
 * it spans. All the synchronisations among all processes in a call have one signature,
 * so that processes whose plans differ (they passed different accesses, which is an
 * error) still meet at the first one and stop there; in the node regime every call starts
 * with the same meeting (tio_agg_node_meet) for the same reason.
 *
 * Rounds hold no data of their own beyond the buffers: memory stays N x buffer size per
 * aggregator whatever the access size. Errors do not break the lockstep: a process that
 * failed keeps taking part in the barriers without moving data. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "agg/handle.h"
#include "util/log.h"
#include "util/agree.h"

/* The covered runs of window w (a growing array kept by the caller). */
static size_t runs_of(const struct tio_agg_plan *p, const struct tio_agg_window *w,
                      struct tio_agg_run **runs, size_t *cap, struct tio_err *err)
{
    size_t n = tio_agg_plan_runs(p, w, *runs, *cap);
    if (n > *cap) {
        struct tio_agg_run *r = realloc(*runs, sizeof *r * n);
        if (!r) {
            tio_err_set(err, TIO_E_NOMEM, "aggregation: out of memory");
            return 0;
        }
        *runs = r;
        *cap = n;
        tio_agg_plan_runs(p, w, *runs, *cap);
    }
    return n;
}

/* Round r's slot. Every call starts at slot 0: the end of the previous one (finish) left
 * every slot idle for all who may touch it — its Puts and Gets flushed, its I/O waited
 * for, among all processes or, in the node regime, among the node's, the only ones that
 * touch the node's aggregators' slots. (The same slots every call: their pages stay.) */
static int slot_of(const struct tio_agg *a, int r)
{
    return r % a->set.buffer_count;
}

/* This process's moves of round r (from index m, sorted by round then domain): one
 * operation per aggregator. Returns the index after them. */
static size_t transfer(struct tio_agg *a, const struct tio_agg_move *mv, size_t n, size_t m,
                       int r, int get, char *mem, struct tio_err *err)
{
    while (m < n && mv[m].round == r) {
        size_t k = m;
        while (k < n && mv[k].round == r && mv[k].domain == mv[m].domain)
            k++;
        if (err->cls == TIO_OK)
            tio_agg_buffers_move(&a->bufs, get, mv + m, k - m, slot_of(a, r), mem, err);
        m = k;
    }
    return m;
}

/* The aggregator's I/O of round r of its domain (nothing when it has fewer rounds). */
static void io_round(struct tio_agg *a, const struct tio_agg_plan *p, int r, int writing,
                     int inline_, struct tio_agg_run **runs, size_t *cap, struct tio_err *err)
{
    const struct tio_agg_window *w = tio_agg_plan_window(p, a->my_domain, r);
    if (!w || err->cls != TIO_OK)
        return;
    size_t n = runs_of(p, w, runs, cap, err);
    if (err->cls != TIO_OK)
        return;
    int slot = slot_of(a, r);
    tio_agg_io_submit(a->io, slot, writing, &a->drv, tio_agg_buffers_slot(&a->bufs, slot),
                      w->lo, *runs, n, inline_, err);
}

/* A synchronisation over comm (seed 002's Fence): an allreduce that also carries every
 * process's error so far and the access it works on. Returns nonzero to stop; err then
 * holds the lowest failing rank's error, or the mismatch. */
static int sync_on(MPI_Comm comm, int id, struct tio_err *err)
{
    int flags[2] = {id, -id};
    if (tio_agree(comm, err, flags, 2))
        return 1;
    if (flags[0] != -flags[1])
        return tio_err_set(err, TIO_E_ARG, "the processes pass different accesses (ids %d to "
                           "%d); every process passes the same", -flags[1], flags[0]);
    return 0;
}

/* The node regime: every access of the handle (the MPI-IO route: this call's) has domains
 * by node, so nothing crosses between nodes and each node works alone, its
 * synchronisations and its end among its processes. Decided alike everywhere, whatever
 * access a process passes (a handle-wide state): processes that pass different accesses
 * still meet at the same synchronisations. */
int tio_agg_node_level(const struct tio_agg *a)
{
    return a->nr.node_regime && tio_agg_by_node_possible(a);
}

/* Whether the synchronisation after round r must include every process: some byte of the
 * rounds it separates (r and `other`, the round before or after it) crosses between
 * nodes, or the first round of a subfile or node-local target (whose extents enter the
 * manifest once everybody of the group is known to write them). */
static int global_round(const struct tio_agg *a, const struct tio_agg_access *x, int r,
                        int other)
{
    /* (Nothing crosses an access with domains by node; their round counts may differ
     * between nodes when they were declared within them.) */
    if (tio_agg_node_level(a) || x->by_node)
        return 0;
    if (!x->cross || (r == 0 && a->set.target != TIO_AGG_TARGET_FILE))
        return 1;
    return x->cross[r] || (other >= 0 && other < x->plan.nrounds && x->cross[other]);
}

/* The synchronisation that closes round r: within the node, then among all processes
 * when the round needs it. *agreed is set when the stop was agreed among all whom the
 * call's end would include (the node's, in the node regime). */
static int round_sync(struct tio_agg *a, struct tio_agg_access *x, int id, int r,
                      int other, int meet, int *agreed, struct tio_err *err)
{
    if (meet) /* the call's first synchronisation in the node regime */
        return *agreed = tio_agg_node_meet(a, x, id, 0, NULL, err);
    if (a->nr.nodecomm != MPI_COMM_NULL && sync_on(a->nr.nodecomm, id, err)) {
        *agreed = tio_agg_node_level(a);
        return 1;
    }
    if (!global_round(a, x, r, other))
        return 0;
    return *agreed = sync_on(a->grp.gcomm, id, err);
}

/* The end of a call: among all processes (unless a stop was agreed among all already),
 * among the node's in the node regime: the aggregators' I/O is done and every process
 * has the call's outcome. */
static int finish(struct tio_agg *a, int id, int agreed, struct tio_err *err)
{
    if (!agreed)
        sync_on(tio_agg_node_level(a) ? a->nr.nodecomm : a->grp.gcomm, id, err);
    return err->cls;
}

int tio_agg_run_write(struct tio_agg *a, struct tio_agg_access *x, int id, const void *buf,
                      struct tio_err *err)
{
    const struct tio_agg_plan *p = &x->plan;
    const char *src = buf;
    int nslots = a->set.buffer_count, agg = a->my_domain >= 0, stop = 0, agreed = 0;
    int met = !tio_agg_node_level(a);
    /* The first write of an access declared within the node: the processes' data goes
     * into lanes of the aggregator's buffer while the meeting gathers the pieces, and the
     * aggregator writes it from there — one synchronisation less than a round. */
    if (!met && !x->exchanged) {
        int lane = tio_agg_lane_fill(a, x, buf, err), lanes = 0;
        if (tio_agg_node_meet(a, x, id, lane, &lanes, err))
            return finish(a, id, 1, err);
        met = 1;
        if (lanes) { /* (decided alike on the node, from what the meeting gathered) */
            if (agg)
                tio_agg_lanes_write(a, buf, err);
            return finish(a, id, 0, err);
        }
        /* Overlaps within the node show now (between nodes: at the declaration's check);
         * the first round's synchronisation then stops everybody. */
        if (x->plan.overlap)
            tio_err_set(err, TIO_E_ARG, "tio_agg_write: the pieces of access %d overlap (they "
                        "may only be read)", id);
    }
    int rounds = p->nrounds > 0 ? p->nrounds : 1;
    struct tio_agg_run *runs = NULL;
    size_t cap = 0, m = 0;
    for (int r = 0; r < rounds && !stop; r++) {
        m = transfer(a, x->moves, x->nmoves, m, r, 0, (char *)src, err);
        tio_agg_buffers_flush(&a->bufs, err);
        /* Round r+1 goes into the slot round r+1-N left: its write must be done. */
        if (agg && r + 1 >= nslots && r + 1 < p->nrounds)
            tio_agg_io_wait(a->io, slot_of(a, r + 1), err);
        /* Closes round r (its Puts are in) and opens r+1 (its slots are free). */
        stop = round_sync(a, x, id, r, r + 1, r == 0 && !met, &agreed, err);
        /* The first synchronisation said that everybody writes this access: now it may
         * have its place in the manifest (which the I/O phase reads). */
        if (r == 0 && !stop && a->set.target != TIO_AGG_TARGET_FILE)
            tio_agg_place_extents(a, p, err);
        if (agg && !stop) {
            tio_agg_buffers_sync(&a->bufs, err);
            io_round(a, p, r, 1, r == p->nrounds - 1, &runs, &cap, err);
        }
    }
    if (agg)
        tio_agg_io_wait_all(a->io, err);
    free(runs);
    return finish(a, id, agreed, err);
}

int tio_agg_run_read_own(struct tio_agg *a, struct tio_agg_access *x, int id, void *buf,
                         int met, struct tio_err *err)
{
    char *dst = buf;
    if (a->own_fd < 0 && err->cls == TIO_OK) { /* (tio_agg_read refuses write-only handles) */
        a->own_fd = open(a->path, O_RDONLY | O_CLOEXEC);
        if (a->own_fd < 0)
            tio_err_errno(err, errno, "opening \"%s\"", a->path);
    }
    for (size_t i = x->own_first; i < x->own_first + x->own_n && err->cls == TIO_OK; i++) {
        const struct tio_agg_piece *q = &x->gpieces[i];
        if (q->len > 0)
            tio_agg_pread_all(a->own_fd, dst + q->mem, q->len, q->off, a->path, err);
    }
    /* The node's synchronisation too: processes that passed other accesses meet the ones
     * they would meet there (in the node regime: the meeting, which is then the end). */
    if (tio_agg_node_level(a) && !met) {
        tio_agg_node_meet(a, x, id, 0, NULL, err);
        return err->cls;
    }
    if (a->nr.nodecomm != MPI_COMM_NULL && !tio_agg_node_level(a))
        sync_on(a->nr.nodecomm, id, err); /* a stop here reaches everybody through finish */
    return finish(a, id, 0, err);
}

int tio_agg_run_read(struct tio_agg *a, struct tio_agg_access *x, int id, void *buf,
                     int met, struct tio_err *err)
{
    met |= !tio_agg_node_level(a);
    /* (tio_agg_read meets first for an access declared within the node: its plan) */
    if (!met && !x->exchanged) {
        if (tio_agg_node_meet(a, x, id, 0, NULL, err))
            return finish(a, id, 1, err);
        met = 1;
    }
    const struct tio_agg_plan *p = &x->plan;
    const struct tio_agg_move *moves = x->moves;
    size_t nmoves = x->nmoves;
    char *dst = buf;
    int nslots = a->set.buffer_count, agg = a->my_domain >= 0, stop = 0, agreed = 0;
    int rounds = p->nrounds > 0 ? p->nrounds : 1;
    struct tio_agg_run *runs = NULL;
    size_t cap = 0, m = 0;
    /* Ahead: rounds 0..N-2 now; round N-1 goes into round -1's slot once round 0 opens. */
    if (agg && err->cls == TIO_OK)
        for (int r = 0; r < nslots - 1 && r < p->nrounds; r++)
            io_round(a, p, r, 0, r == 0, &runs, &cap, err);
    for (int r = 0; r < rounds && !stop; r++) {
        if (agg) {
            tio_agg_io_wait(a->io, slot_of(a, r), err);
            tio_agg_buffers_sync(&a->bufs, err);
        }
        /* Opens round r (its slots are full) and closes r-1 (its Gets are done). */
        stop = round_sync(a, x, id, r, r - 1, r == 0 && !met, &agreed, err);
        if (stop)
            break;
        /* Everybody is done with round r-1's slot: round r+N-1 goes there. */
        if (agg && r + nslots - 1 < p->nrounds)
            io_round(a, p, r + nslots - 1, 0, 0, &runs, &cap, err);
        m = transfer(a, moves, nmoves, m, r, 1, dst, err);
        tio_agg_buffers_flush(&a->bufs, err);
    }
    if (agg)
        tio_agg_io_wait_all(a->io, err);
    free(runs);
    /* The last agreement covers the Gets, and keeps every aggregator in MPI until they are
     * served: one-sided components without a progress thread (Open MPI's osc pt2pt,
     * between nodes) serve a Get only while its target is inside an MPI call. */
    return finish(a, id, agreed, err);
}
