/* `tierio settings`: every info key and environment variable tierio reads, from the key
 * tables the library's layers declare. --markdown prints docs/settings.md, which a test
 * regenerates and compares, so that the reference cannot drift from the code. Without it,
 * a plain list with the value each variable has in this environment. */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "tierio/settings.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tierio settings [--markdown]\n"
               "  Every info key and environment variable tierio reads; --markdown: the\n"
               "  reference page (docs/settings.md).\n");
}

int tio_cmd_settings(int argc, char **argv)
{
    static const struct option opts[] = {
        {"markdown", no_argument, NULL, 'm'}, {"help", no_argument, NULL, 'h'}, {0}};
    int format = TIO_SETTINGS_REFERENCE, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'm')
            format = TIO_SETTINGS_MARKDOWN;
        else if (c == 'h')
            return usage(stdout), TIO_CLI_OK;
        else
            return fprintf(stderr, "tierio settings: unknown option '%s'\n", argv[optind - 1]),
                   usage(stderr), TIO_CLI_USAGE;
    }
    if (optind < argc)
        return usage(stderr), TIO_CLI_USAGE;
    tio_settings_print(stdout, format);
    return TIO_CLI_OK;
}
