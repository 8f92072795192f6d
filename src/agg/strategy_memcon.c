/* The memory_conscious strategy (seed 004 §3). At the first access every node says how
 * much memory it has (tio_mem_available: MemAvailable and every memory cgroup above the
 * process); a share of it (tierio_agg_mc_memory_share) is what its aggregators' buffers may
 * take. That fixes the aggregator slots: on each node up to N_ah processes
 * (tierio_agg_mc_per_node), as many as the share holds Mem_min (tierio_agg_mc_min_memory),
 * each with buffers of at most the message size and together never more than the share.
 * Nodes below Mem_min get none: their data goes elsewhere. These are the engine's domains,
 * their buffers allocated once (pages become resident when used).
 *
 * Each access is then cut by memcon.c: groups, partition trees, remerging and location by
 * the memory left, choosing for each file domain one free slot; unused slots have no data
 * in that access. The message size is the write's or the read's (the MPI-IO route knows
 * which; tio_agg_declare plans with the write's).
 *
 * Defaults ("auto", 0): the message is where a write (read) to the file system reaches
 * 90 % of its bandwidth, 9 x latency x bandwidth of the site file's global tier (tierio
 * probe writes one), within 1 MiB .. 64 MiB; without those figures the buffer size. Mem_min
 * is the buffer count x a quarter of the write message; Msg_group 4 x N_ah x the write
 * message. Decided on the group's first process and broadcast: every process plans alike. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg/handle.h"
#include "agg/memcon.h"
#include "tier/memavail.h"
#include "util/log.h"

#define MIB ((int64_t)1 << 20)
#define PAGE ((int64_t)4096)

struct memcon {
    struct tio_mc_params prm;          /* with the write message */
    int64_t read_message;
    int nnodes;
    int64_t *available;                /* node -> its memory (the least any process saw) */
    int64_t *share;                    /* node -> what its aggregators may take */
    struct tio_mc_node *node;
    struct tio_mc_slot *slot;          /* every slot, node by node (domain order) */
    struct tio_mc_result last;         /* the last access's cut, for tio_agg_get_info */
    int fallback;                      /* no node had Mem_min: one slot on the richest */
};

static int memcon_domains(const struct tio_agg *a)
{
    int per = a->set.mc_per_node, n = a->grp.gnnodes;
    long long most = (long long)per * n;
    if (a->set.aggregators && a->set.aggregators < most)
        most = a->set.aggregators;
    return most < a->grp.gsize ? (int)most : a->grp.gsize;
}

/* The message at which one transfer to the file system reaches 90 % of its bandwidth
 * (latency x bandwidth x 9), or 0 without the figures. */
static int64_t message_from_site(const struct tio_agg *a, int reading)
{
    int n = 0;
    tio_tiers_count(a->tiers, &n);
    for (int i = 0; i < n; i++) {
        struct tio_tier_info t;
        if (tio_tiers_get(a->tiers, i, &t) != MPI_SUCCESS || t.kind != TIO_TIER_GLOBAL)
            continue;
        double bw = reading ? t.read_bandwidth : t.write_bandwidth;
        if (t.latency <= 0 || bw <= 0)
            return 0;
        double m = 9 * t.latency * bw;
        return m < MIB ? MIB : m > 64 * MIB ? 64 * MIB : (int64_t)m / PAGE * PAGE;
    }
    return 0;
}

/* The parameters in effect, decided on group rank 0 (the site's figures are its). */
static void parameters(struct tio_agg *a, struct memcon *m)
{
    int64_t v[5] = {(int64_t)a->set.mc_write_message, (int64_t)a->set.mc_read_message,
                    (int64_t)a->set.mc_min_memory, (int64_t)a->set.mc_group_message, 0};
    if (a->grp.grank == 0) {
        int64_t buffer = (int64_t)a->set.buffer_size;
        for (int r = 0; r < 2; r++)
            if (!v[r])
                v[r] = message_from_site(a, r) ? message_from_site(a, r) : buffer;
        if (!v[2])
            v[2] = a->set.buffer_count * (v[0] / 4);
        if (!v[3])
            v[3] = 4 * (int64_t)a->set.mc_per_node * v[0];
    }
    PMPI_Bcast(v, 5, MPI_INT64_T, 0, a->grp.gcomm);
    m->prm = (struct tio_mc_params){a->set.mc_per_node, v[0], v[3], v[2], a->align,
                                    !a->set.mc_by_memory};
    m->read_message = v[1];
    /* What get_info reports as the settings: the values in effect. */
    a->set.mc_write_message = (uint64_t)v[0];
    a->set.mc_read_message = (uint64_t)v[1];
    a->set.mc_min_memory = (uint64_t)v[2];
    a->set.mc_group_message = (uint64_t)v[3];
}

/* Every node's memory: the least any of its processes sees (they share its limits). */
static int node_memory(struct tio_agg *a, struct memcon *m, struct tio_err *err)
{
    int64_t mine = (int64_t)tio_mem_available(), *all = malloc(sizeof *all * (size_t)a->grp.gsize);
    int ok = all != NULL;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, a->grp.gcomm);
    if (!ok) {
        free(all);
        return tio_err_set(err, TIO_E_NOMEM, "memory_conscious placement: out of memory");
    }
    PMPI_Allgather(&mine, 1, MPI_INT64_T, all, 1, MPI_INT64_T, a->grp.gcomm);
    for (int k = 0; k < m->nnodes; k++)
        m->available[k] = INT64_MAX;
    for (int r = 0; r < a->grp.gsize; r++) {
        int k = a->grp.gnode_of[r];
        if (all[r] < m->available[k])
            m->available[k] = all[r];
    }
    for (int k = 0; k < m->nnodes; k++)
        m->share[k] = (int64_t)((__int128)m->available[k] * a->set.mc_memory_share / 100);
    free(all);
    return TIO_OK;
}

/* Bytes of each buffer of a node's slots: at most the larger message or the buffer size
 * setting (a domain may hold more than a message: fewer rounds), together within the
 * share, a multiple of the alignment (or of a page); 0 when not even one fits. */
static int64_t window_of(const struct tio_agg *a, const struct memcon *m, int64_t share,
                         int nslots)
{
    int64_t most = m->prm.message > m->read_message ? m->prm.message : m->read_message;
    if ((int64_t)a->set.buffer_size > most)
        most = (int64_t)a->set.buffer_size;
    int64_t w = share / nslots / a->set.buffer_count, unit = a->align > PAGE ? a->align : PAGE;
    if (w > most)
        w = most;
    return w >= unit ? w / unit * unit : 0;
}

/* The slots of every node; the fallback when no node has Mem_min. */
static int slots(struct tio_agg *a, struct memcon *m, struct tio_agg_placement *out,
                 struct tio_err *err)
{
    int cap = memcon_domains(a), nd = 0, *count = calloc((size_t)m->nnodes, sizeof *count);
    int64_t *window = calloc((size_t)m->nnodes, sizeof *window);
    m->slot = malloc(sizeof *m->slot * (size_t)cap);
    if (!count || !window || !m->slot) {
        free(count);
        free(window);
        return tio_err_set(err, TIO_E_NOMEM, "memory_conscious placement: out of memory");
    }
    for (int r = 0; r < a->grp.gsize; r++)
        count[a->grp.gnode_of[r]]++; /* processes per node */
    for (int k = 0; k < m->nnodes; k++) {
        int64_t per = m->prm.min_memory > 0 ? m->share[k] / m->prm.min_memory : m->prm.per_node;
        int s = (int)(per < m->prm.per_node ? per : m->prm.per_node);
        s = s < count[k] ? s : count[k];
        while (s > 0 && !(window[k] = window_of(a, m, m->share[k], s)))
            s--;
        count[k] = s;
    }
    int total = 0, richest = 0;
    for (int k = 0; k < m->nnodes; k++) {
        total += count[k];
        if (m->share[k] > m->share[richest])
            richest = k;
    }
    if (!total) { /* every node short of Mem_min: the richest, with smaller buffers */
        window[richest] = window_of(a, m, m->share[richest], 1);
        count[richest] = window[richest] > 0;
        m->fallback = 1;
        if (!count[richest]) {
            tio_err_set(err, TIO_E_NOSPACE, "memory_conscious placement: no node has memory "
                        "for aggregation buffers (the most: %" PRId64 " bytes available on "
                        "node %d, %d%% of it for %d buffers of at least %" PRId64 " bytes)",
                        m->available[richest], richest, a->set.mc_memory_share,
                        a->set.buffer_count, a->align > PAGE ? a->align : PAGE);
            free(count);
            free(window);
            return err->cls;
        }
    }
    /* Slots node by node, the node's first processes; at most cap (tierio_agg_aggregators). */
    for (int k = 0, start = nd; k < m->nnodes; k++, start = nd) {
        for (int r = 0; r < a->grp.gsize && nd - start < count[k] && nd < cap; r++) {
            if (a->grp.gnode_of[r] != k)
                continue;
            m->slot[nd] = (struct tio_mc_slot){nd, r, window[k] * a->set.buffer_count};
            out->rank[nd] = r;
            out->window[nd] = window[k];
            snprintf(out->tier[nd], sizeof out->tier[nd], "dram");
            nd++;
        }
        m->node[k] = (struct tio_mc_node){m->share[k], nd - start, m->slot + start};
    }
    out->ndomains = nd;
    free(count);
    free(window);
    return TIO_OK;
}

static void release(struct tio_agg *a)
{
    struct memcon *m = a->strategy_state;
    if (!m)
        return;
    free(m->available);
    free(m->share);
    free(m->node);
    free(m->slot);
    tio_mc_result_free(&m->last);
    free(m);
    a->strategy_state = NULL;
}

static int memcon_place(struct tio_agg *a, const struct tio_agg_plan *plan,
                        const struct tio_agg_piece *pieces, size_t npieces,
                        struct tio_agg_placement *out, struct tio_err *err)
{
    (void)plan, (void)pieces, (void)npieces;
    int n = a->grp.gnnodes;
    struct memcon *m = calloc(1, sizeof *m);
    if (m) {
        m->nnodes = n;
        m->available = malloc(sizeof *m->available * (size_t)n);
        m->share = malloc(sizeof *m->share * (size_t)n);
        m->node = calloc((size_t)n, sizeof *m->node);
    }
    out->window = calloc((size_t)out->ndomains, sizeof *out->window);
    int ok = m && m->available && m->share && m->node && out->window;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, a->grp.gcomm);
    a->strategy_state = m;
    if (!ok) {
        release(a);
        return tio_err_set(err, TIO_E_NOMEM, "memory_conscious placement: out of memory");
    }
    parameters(a, m);
    if (node_memory(a, m, err) || slots(a, m, out, err))
        return err->cls;
    if (m->fallback && a->grp.grank == 0)
        TIO_WARN("memory_conscious: no node has %" PRId64 " bytes for aggregation (%s); node "
                 "%d aggregates everything with %" PRId64 "-byte buffers, in more rounds",
                 m->prm.min_memory, TIO_AGG_HINT_MC_MIN_MEMORY, a->grp.gnode_of[out->rank[0]],
                 out->window[0]);
    return TIO_OK;
}

static int memcon_plan(struct tio_agg *a, const struct tio_agg_piece *pieces, size_t n,
                       int reading, struct tio_agg_plan *p, struct tio_err *err)
{
    struct memcon *m = a->strategy_state;
    struct tio_mc_params prm = m->prm;
    if (reading)
        prm.message = m->read_message;
    struct tio_mc_result r;
    if (tio_mc_partition(pieces, n, a->grp.gnode_of, a->grp.gnnodes, m->node, &prm, &r, err))
        return err->cls;
    struct tio_agg_segment *seg = malloc(sizeof *seg * (size_t)(r.ndomains ? r.ndomains : 1));
    if (!seg) {
        tio_mc_result_free(&r);
        return tio_err_set(err, TIO_E_NOMEM, "memory_conscious plan: out of memory");
    }
    for (int d = 0; d < r.ndomains; d++)
        seg[d] = (struct tio_agg_segment){r.dom[d].lo, r.dom[d].hi, r.dom[d].domain};
    int rc = tio_agg_plan_cut(p, pieces, n, r.runs, r.nruns, a->place.ndomains, seg,
                              (size_t)r.ndomains, a->place.window, a->align, err);
    r.runs = NULL; /* the plan's now */
    free(seg);
    tio_mc_result_free(&m->last);
    m->last = r;
    return rc;
}

static int node_item(const struct tio_agg *a, int k, char *s, size_t len)
{
    const struct memcon *m = a->strategy_state;
    return snprintf(s, len, "%" PRId64 "/%" PRId64, m->share[k], m->available[k]);
}

static int buffer_item(const struct tio_agg *a, int d, char *s, size_t len)
{
    return snprintf(s, len, "%d:%" PRId64, a->grp.gworld[a->place.rank[d]],
                    a->place.window[d] * a->set.buffer_count);
}

static int domain_item(const struct tio_agg *a, int d, char *s, size_t len)
{
    const struct memcon *m = a->strategy_state;
    const struct tio_mc_domain *x = &m->last.dom[d];
    return snprintf(s, len, "%" PRId64 "-%" PRId64 "@%d", x->lo, x->hi,
                    a->grp.gworld[x->rank]);
}

static void memcon_report(const struct tio_agg *a, MPI_Info info)
{
    const struct memcon *m = a->strategy_state;
    if (!a->placed || !m)
        return;
    char v[64];
    /* per node: bytes for aggregation / bytes available */
    tio_agg_info_list(info, "tierio_agg_mc_node_memory", m->nnodes, node_item, a);
    /* per aggregator: rank:bytes of its buffers */
    tio_agg_info_list(info, "tierio_agg_mc_buffers", a->place.ndomains, buffer_item, a);
    /* the last access: its groups, file domains (lo-hi@rank), leaves and remerges */
    snprintf(v, sizeof v, "%d", m->last.ngroups);
    PMPI_Info_set(info, "tierio_agg_mc_groups", v);
    tio_agg_info_list(info, "tierio_agg_mc_domains", m->last.ndomains, domain_item, a);
    snprintf(v, sizeof v, "%d", m->last.leaves);
    PMPI_Info_set(info, "tierio_agg_mc_leaves", v);
    snprintf(v, sizeof v, "%d", m->last.remerged);
    PMPI_Info_set(info, "tierio_agg_mc_remerged", v);
    snprintf(v, sizeof v, "%d", m->last.short_of_memory + m->fallback);
    PMPI_Info_set(info, "tierio_agg_mc_short_of_memory", v);
}

/* Reported keys, not settings (util/settings_unknown.c). */
static const char *const reported[] = {
    "tierio_agg_mc_node_memory", "tierio_agg_mc_buffers", "tierio_agg_mc_groups",
    "tierio_agg_mc_domains", "tierio_agg_mc_leaves", "tierio_agg_mc_remerged",
    "tierio_agg_mc_short_of_memory", NULL};
__attribute__((constructor)) static void register_reported(void)
{
    tio_settings_register_reported(reported);
}

const struct tio_agg_strategy tio_agg_strategy_memcon = {
    .name = "memory_conscious",
    .needs_access = 1,
    .domains = memcon_domains,
    .place = memcon_place,
    .plan = memcon_plan,
    .release = release,
    .report = memcon_report,
};
