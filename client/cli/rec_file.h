// rec_file.h: recording files on the command line (docs/recording.md): `simulate --record
// FILE` writes one (the hooks below), `replay`, `info` and `export` read one (rec_file.c).
#ifndef PARTITA_CLI_REC_FILE_H
#define PARTITA_CLI_REC_FILE_H

#include <stdint.h>

#include "partita.h"

struct rec_file;

// simulate --record FILE: opened after the initial state is set (before the first step), with
// the data's step and integrator,
// `init` and `init_rate` the "NAME=VALUE" lines given to --init and --init-rate, and the inputs
// of --set as (index, value) pairs. NULL after printing an error.
typedef struct cli_rec cli_rec;
// `text` (len bytes, `format` 1 YAML / 2 URDF) is the model file as its load read it
// (pt_model_load_file_text): the file is read once.
cli_rec *cli_rec_open(const char *cmd, const char *path, const char *model_path,
                      const char *text, size_t len, int format,
                      const pt_load_options *lopt, const pt_model *m, const pt_data *d,
                      double dt, pt_integrator integrator, long every, const char *init,
                      const char *init_rate, const int *set_index, const double *set_value,
                      int nset);
// After each step (and once for the initial state): writes the state when step % every == 0.
int cli_rec_step(cli_rec *r, const pt_model *m, const pt_data *d);
// Ends the file (ok = 0: the run failed, noted in the file). Returns an exit code.
int cli_rec_close(const char *cmd, cli_rec *r, int ok);

// Reads a recording for command `cmd`, printing a cut-off file's note as a warning (and what
// makes a file unusable as an error). Returns an exit code; free r with rec_file_free.
int cli_rec_read(const char *cmd, const char *path, struct rec_file *r);

#endif
