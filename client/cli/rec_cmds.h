// rec_cmds.h: the commands on recordings (docs/recording.md): record (partitad records one of
// its models: rec_record.c), replay (rec_replay.c), info and export (rec_info.c). The files
// they read and `simulate --record` writes are handled in rec_file.c.
#ifndef PARTITA_CLI_REC_CMDS_H
#define PARTITA_CLI_REC_CMDS_H

#include "usage.h"

int cli_record_main(const cli_command *self, int argc, char **argv);
int cli_replay_main(const cli_command *self, int argc, char **argv);
int cli_info_main(const cli_command *self, int argc, char **argv);
int cli_export_main(const cli_command *self, int argc, char **argv);

#endif
