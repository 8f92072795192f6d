/* `tierio settings`: every info key and environment variable tierio reads, from the key
 * tables the library's layers declare. --markdown prints docs/settings.md, which a test
 * regenerates and compares, so that the reference cannot drift from the code. Without it,
 * a plain list with the value each variable has in this environment. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "tierio/settings.h"

int tio_cmd_settings(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && strcmp(argv[1], "--markdown") != 0)) {
        fprintf(stderr, "usage: tierio settings [--markdown]\n");
        return 2;
    }
    tio_settings_print(stdout, argc == 2);
    return 0;
}
