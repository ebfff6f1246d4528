// daemon_cmds.h: the commands a running partitad answers: models, load, unload, state,
// reset, watch, set, step, mode, stats (daemon_cmds.c) and open (daemon_open.c: the address
// of its viewer page).
#ifndef PARTITA_CLI_DAEMON_CMDS_H
#define PARTITA_CLI_DAEMON_CMDS_H

#include "usage.h"

int cli_models_main(const cli_command *self, int argc, char **argv);
int cli_load_main(const cli_command *self, int argc, char **argv);
int cli_unload_main(const cli_command *self, int argc, char **argv);
int cli_state_main(const cli_command *self, int argc, char **argv);   // state and reset
int cli_watch_main(const cli_command *self, int argc, char **argv);
int cli_set_main(const cli_command *self, int argc, char **argv);
int cli_tune_main(const cli_command *self, int argc, char **argv);
int cli_step_main(const cli_command *self, int argc, char **argv);
int cli_mode_main(const cli_command *self, int argc, char **argv);
int cli_stats_main(const cli_command *self, int argc, char **argv);
int cli_open_main(const cli_command *self, int argc, char **argv);

#endif
