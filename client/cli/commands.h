// commands.h: the command table of `partita` (commands.c): one row per command with where
// it runs, its handler, synopsis and help.
#ifndef PARTITA_CLI_COMMANDS_H
#define PARTITA_CLI_COMMANDS_H

#include <stdio.h>

#include "usage.h"

// The row of command `name`; NULL for an unknown command.
const cli_command *cli_find_command(const char *name);

// `partita --help`: every command's synopsis, grouped as the table is.
void cli_print_commands(FILE *out);

#endif
