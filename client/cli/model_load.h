// model_load.h: a MODEL file loaded for a command (check, simulate, the analyses): the
// model, its warnings on stderr, and the names a refusal lists.
#ifndef PARTITA_CLI_MODEL_LOAD_H
#define PARTITA_CLI_MODEL_LOAD_H

#include <stddef.h>
#include <stdio.h>

#include "partita.h"

// Loads path with o, printing the model's warnings ("partita CMD: warning: ...", one a line).
// With text non-NULL, the file's bytes as read come too (*text malloc'd, *len, *format: for
// simulate --record). 0, or -1 after printing why (*m NULL).
int cli_model_load(const char *cmd, const char *path, const pt_load_options *o, pt_model **m,
                   char **text, size_t *len, int *format);

// "a, b, c" for error messages: which names the model does have (the first 40, then how many
// in all), "none" without.
void cli_print_names(FILE *out, const pt_model *m, int n,
                     const char *(*name)(const pt_model *, int));

#endif
