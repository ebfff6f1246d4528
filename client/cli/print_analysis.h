// print_analysis.h: one printer per analysis reply (InverseDynamicsReply, LinearizeReply,
// EquilibriumReply), whether the analysis ran here on a MODEL file (through the bridge) or in
// partitad: the output is the same by construction. Text for people, JSON (--json) with the
// members of docs/cli.md. Everything goes to stdout.
#ifndef PARTITA_CLI_PRINT_ANALYSIS_H
#define PARTITA_CLI_PRINT_ANALYSIS_H

#include "partita.pb-c.h"

typedef struct {
  int json;            // --json
  const char *model;   // the model's name when the reply carries none (an older partitad)
  const char *mode;    // inverse: the mode when the reply carries none
  int daemon;          // it ran in partitad: equilibrium's JSON says whether it was applied
} cli_analysis_view;

void cli_print_inverse(const Partita__V1__InverseDynamicsReply *r, const cli_analysis_view *v);
void cli_print_linearize(const Partita__V1__LinearizeReply *r, const cli_analysis_view *v);
void cli_print_equilibrium(const Partita__V1__EquilibriumReply *r, const cli_analysis_view *v);

#endif
