/* `tierio info [--json]`: what this tierio is: its version, the MPI library it was built
 * with and the one this process loads, the engines and drivers of the build, hwloc and
 * liburing, and the effective value of every tierio environment variable. It does not
 * start MPI (MPI_Get_library_version may be called before MPI_Init), so it runs anywhere,
 * also without mpiexec. Exit status 1 when an environment variable has an invalid value. */
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "util/json.h"
#include "tierio/settings.h"
#include "tierio/version.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tierio info [--json]\n"
               "  The version, the build (MPI library, engines, drivers, hwloc, liburing) and\n"
               "  the effective value of every tierio environment variable.\n");
}

int tio_cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    int json = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else if (c == 'h')
            return usage(stdout), TIO_CLI_OK;
        else
            return fprintf(stderr, "tierio info: unknown option '%s'\n", argv[optind - 1]),
                   usage(stderr), TIO_CLI_USAGE;
    }
    if (optind < argc)
        return usage(stderr), TIO_CLI_USAGE;

    char running[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(running, &len);
    running[strcspn(running, "\n")] = 0; /* the first line names it and its version */

    const char *key, *value;
    if (json) {
        printf("{");
        for (int i = 0; tio_build_info(i, &key, &value) == 0; i++) {
            printf("%s", i ? "," : "");
            tio_json_str(stdout, key);
            printf(":");
            tio_json_str(stdout, value);
        }
        printf(",\"library_version\":");
        tio_json_str(stdout, tio_version(NULL, NULL, NULL));
        printf(",\"mpi_running\":");
        tio_json_str(stdout, running);
        printf(",\"environment\":");
        fflush(stdout);
    } else {
        printf("tierio %s (library %s)\n", TIERIO_VERSION_STRING, tio_version(NULL, NULL, NULL));
        for (int i = 1; tio_build_info(i, &key, &value) == 0; i++)
            printf("  %-16s %s\n", key, value);
        printf("  %-16s %s\n", "mpi_running", running);
        printf("environment:\n");
    }
    int bad = tio_settings_print(stdout, json ? TIO_SETTINGS_ENVIRONMENT_JSON
                                              : TIO_SETTINGS_ENVIRONMENT);
    if (json)
        printf("}\n");
    return bad ? TIO_CLI_FAILED : TIO_CLI_OK;
}
