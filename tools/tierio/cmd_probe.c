/* `tierio probe`: measure this machine's tiers and network, print the figures and write a
 * site file (docs/tier.md) that tio_tiers_open reads. An MPI program: alone it measures
 * the tiers of its node; under mpiexec with ranks on two nodes or more it also measures
 * the network between rank 0 and a rank of another node (and within rank 0's node).
 *   tierio probe [-o FILE] [--site FILE] [--tier NAME=KIND:PATH]... [--size BYTES]
 * Rank 0 measures and writes. Exit status 0, 1 when a measurement failed (then no site
 * file is written), 2 on a usage error. */
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "tier/tier_hwloc.h"
#include "tier/tier_probe.h"
#include "tier/tier_env.h"
#include "tier/tier_site.h"
#include "util/fileio.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: [mpiexec ...] tierio probe [-o FILE] [--site FILE] [--tier NAME=KIND:PATH]...\n"
            "                                  [--size BYTES]\n"
            "  Measures the latency and bandwidths of this node's tiers (DRAM, the HBM hwloc\n"
            "  reports, NUMA-bound DRAM and storage directories of the site file, the\n"
            "  directories given) and, with ranks on two nodes or more, of the network;\n"
            "  prints them and writes a site file.\n"
            "  -o FILE        the site file to write (default tierio-site.conf; - = stdout)\n"
            "  --site FILE    start from this site file (default $TIERIO_SITE): its tiers are\n"
            "                 measured again, its hops and capacities kept\n"
            "  --tier NAME=KIND:PATH   a storage tier to measure (KIND node-local or global);\n"
            "                 without --site and --tier: $TIERIO_NODE_LOCAL and $TIERIO_PFS\n"
            "  --size BYTES   bytes moved per tier and pass (default 64M)\n");
}

/* Where the figures are printed: stdout, or stderr when the site file goes to stdout. */
static FILE *rep;

static void remove_probe_file(int sig)
{
    if (tio_probe_file_path[0])
        unlink(tio_probe_file_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

struct args {
    const char *out, *site;
    size_t size;
    int ntiers;
    char tiers[16][TIO_TIER_PATH_MAX + 64];
};

/* TIERIO_SITE, TIERIO_NODE_LOCAL, TIERIO_PFS (tier/tier_env.h). */
static struct tio_tier_env env;

static int parse(int argc, char **argv, struct args *a)
{
    struct tio_err err = {0};
    if (tio_tier_env(&env, &err)) {
        fprintf(stderr, "tierio probe: %s\n", err.msg);
        return 2;
    }
    a->out = "tierio-site.conf";
    a->site = env.site[0] ? env.site : NULL;
    a->size = 64u << 20;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return 1;
        }
        if (!v) {
            fprintf(stderr, "tierio probe: %s needs a value\n", o);
            return 2;
        }
        if (!strcmp(o, "-o")) {
            a->out = v;
        } else if (!strcmp(o, "--site")) {
            a->site = v;
        } else if (!strcmp(o, "--size")) {
            uint64_t s;
            if (tio_parse_size(v, &s) < 0 || s < (4u << 20) || s % (1u << 20)) {
                fprintf(stderr, "tierio probe: --size %s: want a multiple of 1 MiB, at least "
                        "4M\n", v);
                return 2;
            }
            a->size = (size_t)s;
        } else if (!strcmp(o, "--tier")) {
            if (a->ntiers == 16 || strlen(v) >= sizeof a->tiers[0]) {
                fprintf(stderr, "tierio probe: too many or too long --tier\n");
                return 2;
            }
            snprintf(a->tiers[a->ntiers++], sizeof a->tiers[0], "%s", v);
        } else {
            fprintf(stderr, "tierio probe: unknown option %s\n", o);
            usage(stderr);
            return 2;
        }
        i++;
    }
    if (a->site && !*a->site)
        a->site = NULL;
    return 0;
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

static void print_row(const char *name, const char *kind, const struct tio_probe *p,
                      const char *where)
{
    char lat[32], rd[32], wr[32];
    tio_format_time(p->latency, lat, sizeof lat);
    tio_format_rate(p->read_bw, rd, sizeof rd);
    tio_format_rate(p->write_bw, wr, sizeof wr);
    fprintf(rep, "  %-10s %-11s %11s %12s %12s   %s\n", name, kind, lat, rd, wr, where);
}

/* Measure one tier of s on this node; 0, or 1 when it failed (printed). */
static int measure(const struct tio_hw *hw, struct tio_site_tier *t, size_t size)
{
    struct tio_probe p;
    struct tio_err err = {0};
    char where[TIO_TIER_PATH_MAX + 64], host[64] = "";
    gethostname(host, sizeof host - 1);
    if (!tio_site_tier_on_host(t, host)) {
        fprintf(rep, "  %-10s %-11s not on this host (nodes = %s): entry kept as it is\n",
                t->name, tio_tier_kind_name(t->kind), t->nodes);
        return 0;
    }
    if (t->kind == TIO_TIER_NODE_LOCAL || t->kind == TIO_TIER_GLOBAL) {
        if (tio_probe_storage(t->path, size, &p, &err)) {
            fprintf(rep, "  %-10s %-11s failed: %s\n", t->name, tio_tier_kind_name(t->kind), err.msg);
            return 1;
        }
        snprintf(where, sizeof where, "%s%s", t->path,
                 p.direct ? "" : " (read through the page cache: no O_DIRECT)");
    } else {
        char list[64];
        snprintf(list, sizeof list, "%s", t->numa);
        if (t->kind == TIO_TIER_HBM && !list[0] && tio_hw_hbm_nodes(hw, list, sizeof list) == 0) {
            fprintf(rep, "  %-10s %-11s absent: hwloc reports no HBM or MCDRAM NUMA node here "
                   "(entry kept as it is)\n", t->name, "hbm");
            return 0;
        }
        char what[64];
        snprintf(what, sizeof what, "tier \"%s\"", t->name);
        void *buf = list[0] ? tio_hw_alloc(hw, list, size, what, &err) : malloc(size);
        if (!buf || tio_probe_memory(buf, size, &p, &err)) {
            fprintf(rep, "  %-10s %-11s failed: %s\n", t->name, tio_tier_kind_name(t->kind),
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
    print_row(t->name, tio_tier_kind_name(t->kind), &p, where);
    t->latency = p.latency;
    t->read_bandwidth = p.read_bw;
    t->write_bandwidth = p.write_bw;
    return 0;
}

/* One-way latency and bandwidth between rank 0 and peer (both call it). */
static void pingpong(int rank, int peer, double *lat, double *bw)
{
    const int small_iters = 1000, big_iters = 8, big = 8 << 20;
    char *buf = calloc(1, (size_t)big);
    int other = rank == 0 ? peer : 0;
    double t = 0;
    for (int phase = 0; phase < 2; phase++) {
        int iters = phase ? big_iters : small_iters, n = phase ? big : 1;
        for (int i = -10; i < iters; i++) { /* ten rounds of warm-up */
            if (i == 0)
                t = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, n, MPI_BYTE, other, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, n, MPI_BYTE, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, n, MPI_BYTE, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, n, MPI_BYTE, other, 0, MPI_COMM_WORLD);
            }
        }
        t = MPI_Wtime() - t;
        if (phase)
            *bw = 2.0 * iters * n / t;
        else
            *lat = t / (2.0 * iters);
    }
    free(buf);
}

static void network(struct tio_site *s, int rank, int size)
{
    char (*hosts)[64] = calloc((size_t)size, 64), me[64] = "";
    gethostname(me, sizeof me - 1);
    MPI_Allgather(me, 64, MPI_CHAR, hosts, 64, MPI_CHAR, MPI_COMM_WORLD);
    int intra = -1, inter = -1;
    for (int r = 1; r < size; r++) {
        if (intra < 0 && !strcmp(hosts[r], hosts[0]))
            intra = r;
        if (inter < 0 && strcmp(hosts[r], hosts[0]))
            inter = r;
    }
    double lat = 0, bw = 0;
    char l[32], b[32];
    for (int level = 0; level < 2; level++) {
        int peer = level ? inter : intra;
        if (peer < 0)
            continue;
        if (rank == 0 || rank == peer)
            pingpong(rank, peer, &lat, &bw);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank != 0)
            continue;
        tio_format_time(lat, l, sizeof l);
        tio_format_rate(bw, b, sizeof b);
        fprintf(rep, "  %-10s %-11s %11s %12s %12s   rank 0 (%s) - rank %d (%s)\n",
               level ? "network" : "in-node", level ? "inter-node" : "intra-node", l, b, b,
               hosts[0], peer, hosts[peer]);
        if (level) {
            s->net_latency = lat;
            s->net_bandwidth = bw;
        } else {
            s->node_latency = lat;
            s->node_bandwidth = bw;
        }
    }
    if (rank == 0 && inter < 0)
        fprintf(rep, "  %-10s not measured: every rank is on %s (run under mpiexec on two nodes)\n",
               "network", hosts[0]);
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

int tio_cmd_probe(int argc, char **argv)
{
    struct args a = {0};
    int prc = parse(argc, argv, &a);
    if (prc)
        return prc == 1 ? 0 : 2;
    rep = strcmp(a.out, "-") ? stdout : stderr;
    MPI_Init(&argc, &argv);
    int rank, size, failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    struct tio_site s;
    struct tio_hw hw = {0};
    struct tio_err err = {0};
    tio_site_init(&s);
    if (rank == 0) {
        signal(SIGINT, remove_probe_file);
        signal(SIGTERM, remove_probe_file);
        if (a.site && tio_site_load(a.site, &s, &err)) {
            fprintf(stderr, "tierio probe: %s\n", err.msg);
            failed = 2;
        } else if (tio_hw_load(&hw, &err)) {
            fprintf(stderr, "tierio probe: %s\n", err.msg);
            failed = 1;
        }
        for (int i = 0; !failed && i < a.ntiers; i++)
            if (tier_arg(&s, a.tiers[i]) < 0)
                failed = 2;
        if (!failed && !a.site && !a.ntiers) {
            if (env.node_local[0])
                add_tier(&s, "node-local", TIO_TIER_NODE_LOCAL, env.node_local);
            if (env.pfs[0])
                add_tier(&s, "pfs", TIO_TIER_GLOBAL, env.pfs);
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
            char sz[32];
            tio_format_size(a.size, sz, sizeof sz);
            fprintf(rep, "tierio probe on %d process%s, %s per measurement\n", size,
                   size > 1 ? "es" : "", sz);
            fprintf(rep, "  %-10s %-11s %11s %12s %12s   %s\n", "tier", "kind", "latency", "read",
                   "write", "where");
            for (int i = 0; i < s.ntiers; i++)
                failed |= measure(&hw, &s.tiers[i], a.size);
            if (!has_hbm && !nhbm)
                fprintf(rep, "  %-10s %-11s absent: hwloc reports no HBM or MCDRAM NUMA node\n",
                       "hbm", "hbm");
        }
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (failed != 2)
        network(&s, rank, size);
    if (rank == 0 && failed) {
        fprintf(stderr, "tierio probe: a measurement failed: no site file written\n");
    } else if (rank == 0) {
        if (write_site(&s, a.out, size) < 0) {
            fprintf(stderr, "tierio probe: cannot write %s: %s\n", a.out, strerror(errno));
            failed = 1;
        } else if (strcmp(a.out, "-")) {
            fprintf(rep, "wrote %s\n", a.out);
        }
    }
    tio_site_free(&s);
    tio_hw_unload(&hw);
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return failed;
}
