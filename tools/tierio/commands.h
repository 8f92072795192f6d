/* The subcommands of the `tierio` command, one file each (cmd_<name>.c). */
#ifndef TIO_TOOLS_COMMANDS_H
#define TIO_TOOLS_COMMANDS_H

typedef struct tio_command {
  const char *name;
  int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name */
  const char *summary;
} tio_command_t;

int tio_cmd_topo(int argc, char **argv);
int tio_cmd_probe(int argc, char **argv);
int tio_cmd_settings(int argc, char **argv);

#endif
