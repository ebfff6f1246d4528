// analysis_cmds.h: the analyses, on a MODEL file here or on a model loaded in partitad
// (--model NAME): inverse, linearize, equilibrium (analysis.c). Both ways build the same
// protobuf request and print its reply with the same printer (print_analysis.h).
#ifndef PARTITA_CLI_ANALYSIS_CMDS_H
#define PARTITA_CLI_ANALYSIS_CMDS_H

#include "usage.h"

int cli_inverse_main(const cli_command *self, int argc, char **argv);
int cli_linearize_main(const cli_command *self, int argc, char **argv);
int cli_equilibrium_main(const cli_command *self, int argc, char **argv);

#endif
