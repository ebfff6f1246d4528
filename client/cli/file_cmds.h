// file_cmds.h: the commands on a MODEL file, done here by the embedded engine: check and
// simulate (file_check.c, file_simulate.c), and view (file_view.c: the engine and the viewer
// page in partita-view).
#ifndef PARTITA_CLI_FILE_CMDS_H
#define PARTITA_CLI_FILE_CMDS_H

#include "usage.h"

int cli_check_main(const cli_command *self, int argc, char **argv);
int cli_simulate_main(const cli_command *self, int argc, char **argv);
int cli_view_main(const cli_command *self, int argc, char **argv);

#endif
