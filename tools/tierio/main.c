/* `tierio`: the project's command-line tool. Each subcommand lives in cmd_<name>.c and is
 * listed in the table below; `tierio help` lists them. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "tierio/version.h"

static const tio_command_t commands[] = {
    {"info", tio_cmd_info, "version, build (MPI, engines, drivers) and effective settings"},
    {"topo", tio_cmd_topo, "which ranks and nodes share each directory"},
    {"probe", tio_cmd_probe, "measure this machine's tiers and network, write a site file"},
    {"settings", tio_cmd_settings, "every hint and environment variable (--markdown: the "
                                   "reference)"},
    {NULL, NULL, NULL},
};

static int usage(FILE *f) {
  fprintf(f, "usage: tierio <command> [options...]    (tierio <command> --help for one)\n"
             "       tierio --version\ncommands:\n");
  for (const tio_command_t *c = commands; c->name; c++)
    fprintf(f, "  %-10s %s\n", c->name, c->summary);
  return f == stderr ? TIO_CLI_USAGE : TIO_CLI_OK;
}

int main(int argc, char **argv) {
  if (argc < 2) return usage(stderr);
  if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
    return usage(stdout);
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") || !strcmp(argv[1], "version")) {
    printf("tierio %s\n", tio_version(NULL, NULL, NULL));
    return TIO_CLI_OK;
  }
  for (const tio_command_t *c = commands; c->name; c++)
    if (!strcmp(argv[1], c->name)) return c->run(argc - 1, argv + 1);
  fprintf(stderr, "tierio: unknown command '%s'\n", argv[1]);
  return usage(stderr);
}
