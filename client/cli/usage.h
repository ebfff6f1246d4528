// usage.h: one row of the command table (commands.c) and the usage text it gives.
//
// Each command says where its work runs: here on a file (a MODEL file by the embedded engine,
// or a recording), in a running partitad, or either (the analyses: a MODEL file here, a model
// loaded in partitad with --model NAME).
#ifndef PARTITA_CLI_USAGE_H
#define PARTITA_CLI_USAGE_H

#include <stdio.h>

typedef enum {
  CLI_FILE,      // a MODEL file or a recording, here
  CLI_DAEMON,    // a running partitad
  CLI_BOTH,      // MODEL here, or --model NAME in partitad
} cli_where;

typedef struct cli_command cli_command;
struct cli_command {
  const char *name;
  cli_where where;
  // argv[0] is the command's name; answers an exit code (args.h). --help never reaches it.
  int (*run)(const cli_command *self, int argc, char **argv);
  const char *synopsis;   // its line in `partita --help`
  const char *help;       // `partita NAME --help`, after the synopsis
};

// "usage: partita SYNOPSIS", the help text and what `where` adds (how to reach partitad).
void cli_usage(const cli_command *c, FILE *out);

#endif
