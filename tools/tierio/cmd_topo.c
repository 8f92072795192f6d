/* `tierio topo DIR...`: which ranks and nodes share each directory, and what finding out
 * cost. An MPI program: run it under mpiexec with the ranks and nodes of interest, e.g.
 *   mpiexec -n 16 --hostfile hosts tierio topo /scratch /lustre/project
 * Rank 0 prints; the exit status is 0 when every discovery worked, 1 when one failed, 2 on
 * a usage error. */
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "util/json.h"
#include "tierio/topo.h"

struct topo_cli {
    int rank, size, nnodes;
    enum tio_nbhd_algorithm alg;
    int json;
    char *names;   /* rank 0: size * MPI_MAX_PROCESSOR_NAME */
    int *node;     /* rank 0: node index of every rank (nodes numbered by lowest rank) */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpiexec ... tierio topo [-a ALGORITHM] [--json] DIR...\n"
            "  For each DIR, which ranks and nodes share it (see the same files there), which\n"
            "  ranks cannot see it, and what the discovery cost: file operations of all ranks\n"
            "  and the time of the slowest rank.\n"
            "  -a, --algorithm auto|hybrid|exhaustive|heuristic   (default auto = hybrid)\n"
            "  --json   one JSON object per directory instead of text\n");
}

/* "0-3,8,10-11" from ascending ranks. */
static void fmt_ranks(const int *r, int n, char *out, size_t len)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < n && at < len; i++) {
        int j = i;
        while (j + 1 < n && r[j + 1] == r[j] + 1)
            j++;
        int w = j > i ? snprintf(out + at, len - at, "%s%d-%d", i ? "," : "", r[i], r[j])
                      : snprintf(out + at, len - at, "%s%d", i ? "," : "", r[i]);
        at += w > 0 ? (size_t)w : 0;
        i = j;
    }
}

/* The ranks of member[] (ascending) and the names of their nodes, in text or JSON. */
static void print_members(const struct topo_cli *t, const int *member, int n, int json)
{
    static char buf[1 << 16];
    int *seen_node = calloc((size_t)t->nnodes, sizeof *seen_node);
    if (json) {
        printf("{\"ranks\":[");
        for (int i = 0; i < n; i++)
            printf("%s%d", i ? "," : "", member[i]);
        printf("],\"nodes\":[");
    } else {
        fmt_ranks(member, n, buf, sizeof buf);
        printf("ranks %s on ", buf);
    }
    int first = 1;
    for (int i = 0; i < n; i++) {
        int k = t->node[member[i]];
        if (!seen_node || seen_node[k])
            continue;
        seen_node[k] = 1;
        const char *name = t->names + (size_t)member[i] * MPI_MAX_PROCESSOR_NAME;
        printf("%s", first ? "" : json ? "," : ", ");
        if (json)
            tio_json_str(stdout, name);
        else
            printf("%s", name);
        first = 0;
    }
    printf(json ? "]}" : "\n");
    free(seen_node);
}

/* Rank 0: the report for one directory. gid[r] is the lowest rank of r's group, or -1. */
static void report(const struct topo_cli *t, const char *dir, const int *gid,
                   const struct tio_nbhd_stats *s, double slowest)
{
    int *member = malloc((size_t)t->size * sizeof *member), groups = 0;
    if (!member)
        return;
    for (int r = 0; r < t->size; r++)
        groups += gid[r] == r;
    if (t->json) {
        printf("{\"dir\":");
        tio_json_str(stdout, dir);
        printf(",\"algorithm\":\"%s\",\"ranks\":%d,\"nodes\":%d,\"groups\":[",
               tio_nbhd_algorithm_name(s->algorithm), t->size, t->nnodes);
    }
    else
        printf("%s: %d group%s\n", dir, groups, groups == 1 ? "" : "s");
    int g = 0;
    for (int lead = 0; lead < t->size; lead++) {
        if (gid[lead] != lead)
            continue;
        int n = 0;
        for (int r = lead; r < t->size; r++)
            if (gid[r] == lead)
                member[n++] = r;
        if (t->json)
            printf("%s", g ? "," : "");
        else
            printf("  group %d: ", g + 1);
        print_members(t, member, n, t->json);
        g++;
    }
    int n = 0;
    for (int r = 0; r < t->size; r++)
        if (gid[r] < 0)
            member[n++] = r;
    if (t->json) {
        printf("],\"no_access\":");
        if (n)
            print_members(t, member, n, 1);
        else
            printf("{\"ranks\":[],\"nodes\":[]}");
        printf(",\"fileops\":%lld,\"creates\":%lld,\"lookups\":%lld,\"listings\":%lld,"
               "\"checks\":%lld,\"removals\":%lld,\"seconds\":%.6f}\n",
               s->fileops_all, s->creates_all, s->lookups_all, s->listings_all,
               s->checks_all, s->removals_all, slowest);
    } else {
        if (n) {
            printf("  no access: ");
            print_members(t, member, n, 0);
        }
        printf("  cost: %lld file operation%s (creations %lld, lookups %lld, listings %lld, "
               "writability checks %lld; probes removed %lld), %.3f ms (slowest rank), "
               "algorithm %s\n",
               s->fileops_all, s->fileops_all == 1 ? "" : "s", s->creates_all, s->lookups_all,
               s->listings_all, s->checks_all, s->removals_all, slowest * 1e3,
               tio_nbhd_algorithm_name(s->algorithm));
    }
    free(member);
}

/* One directory; returns 0 when the discovery worked. */
static int discover(const struct topo_cli *t, const char *dir)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, TIO_NBHD_HINT_ALGORITHM, tio_nbhd_algorithm_name(t->alg));
    MPI_Comm c = MPI_COMM_NULL;
    int rc = tio_comm_split_neighborhood(MPI_COMM_WORLD, dir, 0, info, &c);
    MPI_Info_free(&info);
    struct tio_nbhd_stats s;
    tio_nbhd_last_stats(&s);
    if (rc != MPI_SUCCESS) { /* every rank has the same error */
        if (t->rank == 0) {
            char msg[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, msg, &len);
            if (t->json) {
                printf("{\"dir\":");
                tio_json_str(stdout, dir);
                printf(",\"error\":");
                tio_json_str(stdout, msg);
                printf("}\n");
            } else
                printf("%s: error: %s\n", dir, msg);
        }
        return 1;
    }
    int lead = t->rank, *gid = NULL;
    if (c != MPI_COMM_NULL) {
        MPI_Bcast(&lead, 1, MPI_INT, 0, c);
        MPI_Comm_free(&c);
    } else {
        lead = -1;
    }
    if (t->rank == 0)
        gid = malloc((size_t)t->size * sizeof *gid);
    MPI_Gather(&lead, 1, MPI_INT, gid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    double slowest = 0;
    MPI_Reduce(&s.seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (t->rank == 0 && gid)
        report(t, dir, gid, &s, slowest);
    free(gid);
    return 0;
}

/* Names of the nodes and the node index of every rank, at rank 0. A node is a processor
 * name, as in the discovery itself; nodes are numbered in the order of their lowest rank. */
static void find_nodes(struct topo_cli *t)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    memset(name, 0, sizeof name);
    MPI_Get_processor_name(name, &len);
    if (t->rank == 0) {
        t->names = calloc((size_t)t->size, MPI_MAX_PROCESSOR_NAME);
        t->node = malloc((size_t)t->size * sizeof *t->node);
    }
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, t->names, MPI_MAX_PROCESSOR_NAME,
               MPI_CHAR, 0, MPI_COMM_WORLD);
    if (t->rank == 0) {
        for (int r = 0; r < t->size; r++) {
            const char *n = t->names + (size_t)r * MPI_MAX_PROCESSOR_NAME;
            int q = 0;
            while (q < r && strcmp(n, t->names + (size_t)q * MPI_MAX_PROCESSOR_NAME) != 0)
                q++;
            t->node[r] = q < r ? t->node[q] : t->nnodes++;
        }
    }
    MPI_Bcast(&t->nnodes, 1, MPI_INT, 0, MPI_COMM_WORLD);
}

/* Options; returns the index of the first directory, or -1 (usage error), or 0 (help). */
static int parse(struct topo_cli *t, int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"algorithm", required_argument, NULL, 'a'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:a:h", opts, NULL)) != -1) {
        if (c == 'h')
            return 0;
        if (c == 'j') {
            t->json = 1;
        } else if (c == 'a') {
            enum tio_nbhd_algorithm all[] = {TIO_NBHD_AUTO, TIO_NBHD_HYBRID, TIO_NBHD_EXHAUSTIVE,
                                             TIO_NBHD_HEURISTIC};
            int ok = 0;
            for (int k = 0; k < 4; k++)
                if (!strcmp(optarg, tio_nbhd_algorithm_name(all[k]))) {
                    t->alg = all[k];
                    ok = 1;
                }
            if (!ok) {
                if (t->rank == 0)
                    fprintf(stderr, "tierio topo: unknown algorithm '%s'\n", optarg);
                return -1;
            }
        } else {
            if (t->rank == 0)
                fprintf(stderr, "tierio topo: %s '%s'\n",
                        c == ':' ? "missing value for" : "unknown option", argv[optind - 1]);
            return -1;
        }
    }
    if (optind >= argc) {
        if (t->rank == 0)
            fprintf(stderr, "tierio topo: no directory given\n");
        return -1;
    }
    return optind;
}

int tio_cmd_topo(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    struct topo_cli t;
    memset(&t, 0, sizeof t);
    MPI_Comm_rank(MPI_COMM_WORLD, &t.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t.size);
    int first = parse(&t, argc, argv), status = 0;
    if (first <= 0) {
        if (t.rank == 0)
            usage(first == 0 ? stdout : stderr);
        MPI_Finalize();
        return first == 0 ? TIO_CLI_OK : TIO_CLI_USAGE;
    }
    find_nodes(&t);
    if (t.rank == 0 && !t.json)
        printf("tierio topo: %d rank%s on %d node%s, algorithm %s\n", t.size,
               t.size == 1 ? "" : "s", t.nnodes, t.nnodes == 1 ? "" : "s",
               tio_nbhd_algorithm_name(t.alg == TIO_NBHD_AUTO ? TIO_NBHD_HYBRID : t.alg));
    for (int i = first; i < argc; i++)
        status |= discover(&t, argv[i]);
    fflush(stdout);
    free(t.names);
    free(t.node);
    MPI_Finalize();
    return status;
}
