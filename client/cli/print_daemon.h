// print_daemon.h: one printer per reply of partitad's commands, in text for people and with
// json (--json) in the shapes of docs/protocol.md for scripts. Everything goes to stdout.
#ifndef PARTITA_CLI_PRINT_DAEMON_H
#define PARTITA_CLI_PRINT_DAEMON_H

#include <stddef.h>

#include "partita.pb-c.h"

// "paused", "realtime", "free", "lockstep" ("unspecified", "unknown").
const char *cli_mode_name(int mode);
// The Mode of a name (and "free_run"); -1 for another text.
int cli_mode_value(const char *name);

// A state (state, reset, step, each frame of watch): names, n the coordinates' names.
// `tune`: the control parameters with their values in the state f (FIELD_CONTROLS).
void cli_print_parameters(const Partita__V1__ModelInfo *mi, const Partita__V1__StateFrame *f,
                          int json);
void cli_print_state(const Partita__V1__StateFrame *f, char **names, size_t n, int json);
// A model's description (load).
void cli_print_model_info(const Partita__V1__ModelInfo *mi, int json);
// The loaded models (models); ml may be NULL (none).
void cli_print_model_list(const Partita__V1__ModelList *ml, int json);
// Timing and traffic (stats); st may be NULL.
void cli_print_stats(const Partita__V1__Stats *st, int json);
// How a model runs now (mode): from mi, or the mode and rate asked when mi is NULL.
void cli_print_mode(const char *model, const Partita__V1__ModelInfo *mi, int mode, double rate,
                    int json);
// Success with nothing to show (unload, set): `what` or {"ok":true}.
void cli_print_ok(const char *what, int json);
// What a recording wrote (record).
void cli_print_record_status(const Partita__V1__RecordStatus *st, int json);

#endif
