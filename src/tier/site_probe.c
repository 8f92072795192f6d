/* Measuring a machine's tiers and network into a site file: what `tierio probe` does
 * (include/tierio/tier.h, tio_site_probe). Rank 0 measures the tiers of its node (DRAM,
 * the HBM hwloc reports, the site file's and the given storage directories); with ranks on
 * two nodes or more, the network between rank 0 and a peer; then it writes the site file
 * (durably replaced, util/fileio.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tier/probe_report.h"
#include "tier/tier_env.h"
#include "tier/tier_hwloc.h"
#include "tier/tier_probe.h"
#include "tier/tier_site.h"
#include "tierio/tier.h"
#include "util/fileio.h"

/* Where the figures are printed (rank 0, one probe at a time per thread). */
static _Thread_local struct tio_probe_report *rep;

/* A probe file left behind by a signal would stay in the user's directory. */
static void remove_probe_file(int sig)
{
    if (tio_probe_file_path[0])
        unlink(tio_probe_file_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_signals(struct sigaction old[2])
{
    struct sigaction sa = {.sa_handler = remove_probe_file};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
}

/* Append a tier to s; returns it or NULL (message printed). */
static struct tio_site_tier *add_tier(struct tio_site *s, const char *name,
                                      enum tio_tier_kind kind, const char *path)
{
    if (tio_site_tier(s, name)) {
        fprintf(stderr, "tierio probe: tier \"%s\" is given twice\n", name);
        return NULL;
    }
    if (s->ntiers == TIO_SITE_MAX_TIERS) {
        fprintf(stderr, "tierio probe: too many tiers\n");
        return NULL;
    }
    struct tio_site_tier *t = &s->tiers[s->ntiers++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->kind = kind;
    t->persistence = t->scope = -1;
    if (path)
        snprintf(t->path, sizeof t->path, "%s", path);
    return t;
}

/* "ssd=node-local:/mnt/ssd" */
static int tier_arg(struct tio_site *s, const char *arg)
{
    char name[TIO_TIER_NAME_MAX + 1], kind[16];
    const char *eq = strchr(arg, '='), *colon = eq ? strchr(eq, ':') : NULL;
    if (!eq || !colon || eq - arg >= (long)sizeof name || colon - eq - 1 >= (long)sizeof kind ||
        colon[1] != '/') {
        fprintf(stderr, "tierio probe: --tier %s: want NAME=KIND:/PATH\n", arg);
        return -1;
    }
    snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
    snprintf(kind, sizeof kind, "%.*s", (int)(colon - eq - 1), eq + 1);
    int k = tio_tier_kind_parse(kind);
    if (k != TIO_TIER_NODE_LOCAL && k != TIO_TIER_GLOBAL) {
        fprintf(stderr, "tierio probe: --tier %s: KIND is node-local or global\n", arg);
        return -1;
    }
    return add_tier(s, name, (enum tio_tier_kind)k, colon + 1) ? 0 : -1;
}

/* Measure one tier of s on this node; 0, or 1 when it failed (printed). */
static int measure(const struct tio_hw *hw, struct tio_site_tier *t, size_t size)
{
    struct tio_probe p;
    struct tio_err err = {0};
    char where[TIO_TIER_PATH_MAX + 64], host[64] = "";
    gethostname(host, sizeof host - 1);
    const char *kind = tio_tier_kind_name(t->kind);
    if (!tio_site_tier_on_host(t, host)) {
        snprintf(where, sizeof where, "not on this host (nodes = %s): entry kept as it is",
                 t->nodes);
        tio_probe_report_tier(rep, t->name, kind, NULL, "elsewhere", where);
        return 0;
    }
    tio_probe_report_step(rep, t->name);
    if (t->kind == TIO_TIER_NODE_LOCAL || t->kind == TIO_TIER_GLOBAL) {
        if (tio_probe_storage(t->path, size, &p, &err)) {
            tio_probe_report_tier(rep, t->name, kind, NULL, "failed", err.msg);
            return 1;
        }
        snprintf(where, sizeof where, "%s%s", t->path,
                 p.direct ? "" : " (read through the page cache: no O_DIRECT)");
    } else {
        char list[64];
        snprintf(list, sizeof list, "%s", t->numa);
        if (t->kind == TIO_TIER_HBM && !list[0] && tio_hw_hbm_nodes(hw, list, sizeof list) == 0) {
            tio_probe_report_tier(rep, t->name, "hbm", NULL, "absent",
                                  "hwloc reports no HBM or MCDRAM NUMA node here (entry kept "
                                  "as it is)");
            return 0;
        }
        char what[64];
        snprintf(what, sizeof what, "tier \"%s\"", t->name);
        void *buf = list[0] ? tio_hw_alloc(hw, list, size, what, &err) : malloc(size);
        if (!buf || tio_probe_memory(buf, size, &p, &err)) {
            tio_probe_report_tier(rep, t->name, kind, NULL, "failed",
                                  err.cls ? err.msg : "out of memory");
            if (buf && list[0])
                tio_hw_free(hw, buf, size);
            else
                free(buf);
            return 1;
        }
        if (list[0])
            tio_hw_free(hw, buf, size);
        else
            free(buf);
        snprintf(where, sizeof where, list[0] ? "NUMA node(s) %s" : "malloc", list);
    }
    tio_probe_report_tier(rep, t->name, kind, &p, NULL, where);
    t->latency = p.latency;
    t->read_bandwidth = p.read_bw;
    t->write_bandwidth = p.write_bw;
    return 0;
}

/* One-way latency and bandwidth between rank 0 and peer (both call it). */
static void pingpong(MPI_Comm comm, int rank, int peer, double *lat, double *bw)
{
    const int small_iters = 1000, big_iters = 8, big = 8 << 20;
    char *buf = calloc(1, (size_t)big);
    int other = rank == 0 ? peer : 0;
    double t = 0;
    for (int phase = 0; phase < 2; phase++) {
        int iters = phase ? big_iters : small_iters, n = phase ? big : 1;
        for (int i = -10; i < iters; i++) { /* ten rounds of warm-up */
            if (i == 0)
                t = PMPI_Wtime();
            if (rank == 0) {
                PMPI_Send(buf, n, MPI_BYTE, other, 0, comm);
                PMPI_Recv(buf, n, MPI_BYTE, other, 0, comm, MPI_STATUS_IGNORE);
            } else {
                PMPI_Recv(buf, n, MPI_BYTE, other, 0, comm, MPI_STATUS_IGNORE);
                PMPI_Send(buf, n, MPI_BYTE, other, 0, comm);
            }
        }
        t = PMPI_Wtime() - t;
        if (phase)
            *bw = 2.0 * iters * n / t;
        else
            *lat = t / (2.0 * iters);
    }
    free(buf);
}

static void network(MPI_Comm comm, struct tio_site *s, int rank, int size)
{
    char (*hosts)[64] = calloc((size_t)size, 64), me[64] = "";
    gethostname(me, sizeof me - 1);
    PMPI_Allgather(me, 64, MPI_CHAR, hosts, 64, MPI_CHAR, comm);
    int intra = -1, inter = -1;
    for (int r = 1; r < size; r++) {
        if (intra < 0 && !strcmp(hosts[r], hosts[0]))
            intra = r;
        if (inter < 0 && strcmp(hosts[r], hosts[0]))
            inter = r;
    }
    double lat = 0, bw = 0;
    for (int level = 0; level < 2; level++) {
        int peer = level ? inter : intra;
        if (peer < 0)
            continue;
        if (rank == 0)
            tio_probe_report_step(rep, level ? "the network" : "the network within the node");
        if (rank == 0 || rank == peer)
            pingpong(comm, rank, peer, &lat, &bw);
        PMPI_Barrier(comm);
        if (rank != 0)
            continue;
        tio_probe_report_net(rep, level, lat, bw, hosts[0], peer, hosts[peer]);
        if (level) {
            s->net_latency = lat;
            s->net_bandwidth = bw;
        } else {
            s->node_latency = lat;
            s->node_bandwidth = bw;
        }
    }
    if (rank == 0 && inter < 0)
        tio_probe_report_net(rep, 1, 0, 0, hosts[0], -1, NULL);
    free(hosts);
}

static int write_site(const struct tio_site *s, const char *out, int nprocs)
{
    char comment[512], host[64] = "";
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&now));
    snprintf(comment, sizeof comment,
             "tierio site file, written by `tierio probe` on %s (%d process%s), %s.\n"
             "Figures measured here; edit freely (docs/tier.md).",
             host, nprocs, nprocs > 1 ? "es" : "", when);
    if (!strcmp(out, "-"))
        return tio_site_write(stdout, s, comment) == 0 ? 0 : -1;
    /* Rendered in memory, then durably replaced through a temporary of an unpredictable
     * name created without following links (a link planted at a guessable name would
     * otherwise have its target overwritten). */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return -1;
    int rc = tio_site_write(f, s, comment);
    if (fclose(f) != 0)
        rc = -1;
    struct tio_err err = {0};
    if (rc == 0 && tio_replace_file(out, text, len, 0644, &err) != TIO_OK) {
        fprintf(stderr, "tierio probe: %s\n", err.msg);
        rc = -1;
    }
    free(text);
    return rc;
}

int tio_site_probe(MPI_Comm comm, const struct tio_site_probe_opts *given)
{
    int rank, size, failed = 0;
    struct sigaction old[2];
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    /* What the caller leaves unset comes from TIERIO_SITE, TIERIO_NODE_LOCAL, TIERIO_PFS. */
    struct tio_site_probe_opts opts = *given;
    const struct tio_site_probe_opts *o = &opts;
    struct tio_tier_env env; /* opts may point into it for the whole call */
    struct tio_err env_err = {0};
    if (tio_tier_env(&env, &env_err)) {
        if (rank == 0)
            fprintf(stderr, "tierio probe: %s\n", env_err.msg);
        return 2;
    }
    if (!opts.site && env.site[0])
        opts.site = env.site;
    if (!opts.node_local)
        opts.node_local = env.node_local;
    if (!opts.pfs)
        opts.pfs = env.pfs;
    if (!opts.size)
        opts.size = 64u << 20;
    struct tio_probe_report report;
    if (rank == 0)
        tio_probe_report_open(&report, o->report ? o->report : stdout, o->progress, o->json);
    rep = &report;
    struct tio_site s;
    struct tio_hw hw = {0};
    struct tio_err err = {0};
    tio_site_init(&s);
    if (rank == 0) {
        catch_signals(old);
        if (o->site && tio_site_load(o->site, &s, &err)) {
            fprintf(stderr, "tierio probe: %s\n", err.msg);
            failed = 2;
        } else if (tio_hw_load(&hw, &err)) {
            fprintf(stderr, "tierio probe: %s\n", err.msg);
            failed = 1;
        }
        for (int i = 0; !failed && i < o->ntiers; i++)
            if (tier_arg(&s, o->tiers[i]) < 0)
                failed = 2;
        if (!failed && !o->site && !o->ntiers) {
            if (o->node_local && o->node_local[0])
                add_tier(&s, "node-local", TIO_TIER_NODE_LOCAL, o->node_local);
            if (o->pfs && o->pfs[0])
                add_tier(&s, "pfs", TIO_TIER_GLOBAL, o->pfs);
        }
        /* DRAM always; the HBM hwloc reports when the site file has none. */
        int has_dram = 0, has_hbm = 0;
        for (int i = 0; i < s.ntiers; i++) {
            has_dram |= s.tiers[i].kind == TIO_TIER_DRAM && !s.tiers[i].numa[0];
            has_hbm |= s.tiers[i].kind == TIO_TIER_HBM;
        }
        char hbm[64] = "";
        int nhbm = failed ? 0 : tio_hw_hbm_nodes(&hw, hbm, sizeof hbm);
        if (!failed && !has_dram && add_tier(&s, "dram", TIO_TIER_DRAM, NULL)) {
            /* first in the file, as tio_tiers_open lists it */
            struct tio_site_tier d = s.tiers[s.ntiers - 1];
            memmove(&s.tiers[1], &s.tiers[0], sizeof d * (size_t)(s.ntiers - 1));
            s.tiers[0] = d;
        }
        if (!failed && !has_hbm && nhbm) {
            struct tio_site_tier *h = add_tier(&s, "hbm", TIO_TIER_HBM, NULL);
            if (h)
                snprintf(h->numa, sizeof h->numa, "%s", hbm);
        }
        if (!failed) {
            tio_probe_report_begin(rep, size, o->size, s.ntiers + (size > 1 ? 2 : 0));
            for (int i = 0; i < s.ntiers; i++)
                failed |= measure(&hw, &s.tiers[i], o->size);
            if (!has_hbm && !nhbm)
                tio_probe_report_tier(rep, "hbm", "hbm", NULL, "absent",
                                      "hwloc reports no HBM or MCDRAM NUMA node");
        }
    }
    PMPI_Bcast(&failed, 1, MPI_INT, 0, comm);
    if (failed != 2)
        network(comm, &s, rank, size);
    if (rank == 0 && failed == 1) {
        fprintf(stderr, "tierio probe: a measurement failed: no site file written\n");
    } else if (rank == 0 && !failed && write_site(&s, o->out, size) < 0) {
        fprintf(stderr, "tierio probe: cannot write %s: %s\n", o->out, strerror(errno));
        failed = 1;
    }
    if (rank == 0)
        tio_probe_report_end(rep, failed, o->out);
    rep = NULL;
    tio_site_free(&s);
    tio_hw_unload(&hw);
    if (rank == 0) { /* the caller's handlers back */
        sigaction(SIGINT, &old[0], NULL);
        sigaction(SIGTERM, &old[1], NULL);
    }
    PMPI_Bcast(&failed, 1, MPI_INT, 0, comm);
    return failed;
}
