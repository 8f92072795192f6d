/* `tierio probe`: measure this machine's tiers and network, print the figures and write a
 * site file (docs/tier.md) that tio_tiers_open reads. An MPI program: alone it measures
 * the tiers of its node; under mpiexec with ranks on two nodes or more it also measures
 * the network between rank 0 and a rank of another node (and within rank 0's node).
 *   tierio probe [-o FILE] [--site FILE] [--tier NAME=KIND:PATH]... [--size BYTES] [--json]
 * Rank 0 measures and writes. Exit status 0, 1 when a measurement failed (then no site
 * file is written), 2 on a usage error. */
#include <errno.h>
#include <getopt.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "tierio/tier.h" /* the public API only: tio_site_probe does the work */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: [mpiexec ...] tierio probe [-o FILE] [--site FILE] [--tier NAME=KIND:PATH]...\n"
            "                                  [--size BYTES] [--json] [--no-progress]\n"
            "  Measures the latency and bandwidths of this node's tiers (DRAM, the HBM hwloc\n"
            "  reports, NUMA-bound DRAM and storage directories of the site file, the\n"
            "  directories given) and, with ranks on two nodes or more, of the network;\n"
            "  prints them and writes a site file.\n"
            "  -o, --output FILE   the site file to write (default tierio-site.conf; - = stdout)\n"
            "  --site FILE    start from this site file (default $TIERIO_SITE): its tiers are\n"
            "                 measured again, its hops and capacities kept\n"
            "  --tier NAME=KIND:PATH   a storage tier to measure (KIND node-local or global);\n"
            "                 without --site and --tier: $TIERIO_NODE_LOCAL and $TIERIO_PFS\n"
            "  --size BYTES   bytes moved per tier and pass, a multiple of 1 MiB, at least\n"
            "                 4 MiB (default 64Mi; units: docs/settings.md#sizes)\n"
            "  --json         the figures as one JSON object instead of a table\n"
            "  --no-progress  no progress line (shown when stderr is a terminal)\n");
}

struct args {
    const char *out, *site;
    size_t size;
    int json, progress;
    int ntiers;
    char tiers[16][TIO_TIER_PATH_MAX + 64];
};

/* 0: go on; 1: --help done; 2: usage error (printed). */
static int parse(int argc, char **argv, struct args *a)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"site", required_argument, NULL, 's'},
        {"tier", required_argument, NULL, 't'},   {"size", required_argument, NULL, 'S'},
        {"json", no_argument, NULL, 'j'},         {"no-progress", no_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},         {0}};
    a->out = "tierio-site.conf";
    a->site = NULL; /* tio_site_probe: $TIERIO_SITE */
    a->size = 64u << 20;
    a->progress = isatty(STDERR_FILENO);
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 1;
        case 'o':
            a->out = optarg;
            break;
        case 's':
            a->site = optarg;
            break;
        case 'j':
            a->json = 1;
            break;
        case 'P':
            a->progress = 0;
            break;
        case 'S': {
            uint64_t s;
            if (tio_parse_size(optarg, &s) < 0 || s < (4u << 20) || s % (1u << 20)) {
                fprintf(stderr, "tierio probe: --size %s: want a multiple of 1 MiB, at least "
                        "4Mi\n", optarg);
                return 2;
            }
            a->size = (size_t)s;
            break;
        }
        case 't':
            if (a->ntiers == 16 || strlen(optarg) >= sizeof a->tiers[0]) {
                fprintf(stderr, "tierio probe: too many or too long --tier\n");
                return 2;
            }
            snprintf(a->tiers[a->ntiers++], sizeof a->tiers[0], "%s", optarg);
            break;
        default:
            fprintf(stderr, "tierio probe: %s %s\n",
                    c == ':' ? "missing value for" : "unknown option", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tierio probe: unexpected argument %s\n", argv[optind]);
        return 2;
    }
    if (a->site && !*a->site)
        a->site = NULL;
    return 0;
}

int tio_cmd_probe(int argc, char **argv)
{
    struct args a = {0};
    int prc = parse(argc, argv, &a);
    if (prc == 2)
        fprintf(stderr, "usage: tierio probe [options]   (tierio probe --help)\n");
    if (prc)
        return prc == 1 ? TIO_CLI_OK : TIO_CLI_USAGE;
    MPI_Init(&argc, &argv);

    const char *tiers[16];
    for (int i = 0; i < a.ntiers; i++)
        tiers[i] = a.tiers[i];
    struct tio_site_probe_opts o = {
        .site = a.site, .tiers = tiers, .ntiers = a.ntiers, .size = a.size, .out = a.out,
        /* the figures go to stderr when the site file goes to stdout */
        .report = strcmp(a.out, "-") ? stdout : stderr, .json = a.json,
        .progress = a.progress ? stderr : NULL};
    int failed = tio_site_probe(MPI_COMM_WORLD, &o);
    if (failed == TIO_CLI_USAGE)
        fprintf(stderr, "usage: tierio probe [options]   (tierio probe --help)\n");
    MPI_Finalize();
    return failed;
}
