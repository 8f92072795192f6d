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
#include "tierio/tier.h" /* the public API only: tio_site_probe does the work */

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


struct args {
    const char *out, *site;
    size_t size;
    int ntiers;
    char tiers[16][TIO_TIER_PATH_MAX + 64];
};

static int parse(int argc, char **argv, struct args *a)
{
    a->out = "tierio-site.conf";
    a->site = NULL; /* tio_site_probe: $TIERIO_SITE */
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








int tio_cmd_probe(int argc, char **argv)
{
    struct args a = {0};
    int prc = parse(argc, argv, &a);
    if (prc)
        return prc == 1 ? 0 : 2;
    MPI_Init(&argc, &argv);

    const char *tiers[16];
    for (int i = 0; i < a.ntiers; i++)
        tiers[i] = a.tiers[i];
    struct tio_site_probe_opts o = {
        .site = a.site, .tiers = tiers, .ntiers = a.ntiers, .size = a.size, .out = a.out,
        /* the figures go to stderr when the site file goes to stdout */
        .report = strcmp(a.out, "-") ? stdout : stderr};
    int failed = tio_site_probe(MPI_COMM_WORLD, &o);
    MPI_Finalize();
    return failed;
}
