/* The subcommands of the `tierio` command, one file each (cmd_<name>.c). Each parses its
 * own options with getopt_long (so --opt=value and --opt value both work) and returns the
 * exit status: 0 done, 1 the work failed, 2 usage error (after printing "usage: ..."). */
#ifndef TIO_TOOLS_COMMANDS_H
#define TIO_TOOLS_COMMANDS_H

#include <stdio.h>

typedef struct tio_command {
  const char *name;
  int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name */
  const char *summary;
} tio_command_t;

int tio_cmd_topo(int argc, char **argv);
int tio_cmd_probe(int argc, char **argv);
int tio_cmd_settings(int argc, char **argv);
int tio_cmd_info(int argc, char **argv);

/* Exit statuses. */
#define TIO_CLI_OK 0
#define TIO_CLI_FAILED 1
#define TIO_CLI_USAGE 2

#endif
