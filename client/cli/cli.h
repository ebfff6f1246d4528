// cli.h: shared pieces of the `partita` command-line program: command entry points, option
// parsing helpers, a small streaming JSON writer and what the analysis commands share.
//
// Exit codes used by every command: 0 success, 1 the work failed (model refused, a step
// failed, output could not be written), 2 usage error (unknown option or name, bad value).
#ifndef PARTITA_CLI_H
#define PARTITA_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "partita.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

// ---------------------------------------------------------------------------------------------
// Commands. Each takes argv[0] = the command name ("simulate"), argv[1..] its arguments.
int cli_check_main(int argc, char **argv);      // offline.c
int cli_simulate_main(int argc, char **argv);   // offline.c
int cli_inverse_main(int argc, char **argv);    // inverse.c
int cli_equilibrium_main(int argc, char **argv); // equilibrium.c
int cli_linearize_main(int argc, char **argv);  // linearize.c
int cli_remote_main(int argc, char **argv);     // remote.c (builds with PARTITA_HAVE_REMOTE)
int cli_view_main(int argc, char **argv);       // view.c: the viewer for a model file
int cli_open_main(int argc, char **argv);       // view.c: the daemon's viewer address

// Prints the usage text of one command (main.c). Returns 0, or -1 for an unknown command.
int cli_usage(const char *cmd, FILE *out);

// ---------------------------------------------------------------------------------------------
// Option parsing. Options are "--name VALUE" or "--name=VALUE"; errors are printed to stderr
// as "partita CMD: ..." so every helper takes the command name.

// Whether argv[i] is the flag `name` (exact match).
int cli_is_flag(const char *arg, const char *name);

// If argv[*i] is the option `name` ("--dt 0.1" or "--dt=0.1"): sets *val, moves *i onto the
// last argument consumed and returns 1. Another argument: returns 0. The option without a
// value: prints a message and returns -1.
int cli_opt_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                  const char **val);

// The last branch of a command's argument loop, for a command with one positional argument
// (`what`: "MODEL file", "recording", "model name"): an unknown option (a '-' and more; a
// lone "-" is a positional) or a second positional prints why and returns -1; otherwise *pos
// becomes arg and 0 is returned.
int cli_positional(const char *cmd, const char *arg, const char *what, const char **pos);

// Strict number parsing: the whole string, finite. 0 ok, -1 after printing a message naming
// the option `what` and the offending text.
int cli_parse_double(const char *cmd, const char *what, const char *s, double *out);
// Integer in [min, max].
int cli_parse_long(const char *cmd, const char *what, const char *s, long min, long max,
                   long *out);
// "NAME=VALUE": NAME non-empty and shorter than `cap`, VALUE a finite number.
int cli_parse_assign(const char *cmd, const char *what, const char *s, char *name,
                     size_t cap, double *value);

// Prints "partita CMD: " + message + '\n' to stderr.
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// ---------------------------------------------------------------------------------------------
// Output writers (json.c): a streaming JSON writer and CSV fields.
// Writes compact JSON as the calls come; commas and nesting
// are tracked here, so callers just say what comes next. Strings are escaped; numbers use
// "%.17g" (round-trips a double exactly); non-finite numbers become null.
#define CLI_JSON_MAXDEPTH 32

typedef struct {
  FILE *out;
  int depth;                          // open containers
  int count[CLI_JSON_MAXDEPTH];       // values written in each open container
  int after_key;                      // a key was just written: the value needs no comma
  int overflow;                       // nesting deeper than CLI_JSON_MAXDEPTH (a bug)
  int newline;                        // start the next value on a new line
} cli_json;

void cli_json_init(cli_json *j, FILE *out);
void cli_json_begin_object(cli_json *j);
void cli_json_end_object(cli_json *j);
void cli_json_begin_array(cli_json *j);
void cli_json_end_array(cli_json *j);
void cli_json_key(cli_json *j, const char *key);      // inside an object, before its value
void cli_json_string(cli_json *j, const char *s);     // NULL writes null
void cli_json_number(cli_json *j, double v);
void cli_json_int(cli_json *j, long long v);
void cli_json_bool(cli_json *j, int v);
void cli_json_null(cli_json *j);
// The next value starts on a new line (after its comma): long arrays read a row per line.
void cli_json_newline(cli_json *j);
// Ends the document with a newline. Returns 0, or -1 if the nesting was unbalanced.
int cli_json_finish(cli_json *j);

// Writes `s` as a quoted, escaped JSON string (no comma handling).
void cli_json_write_string(FILE *out, const char *s);

// Writes one CSV field, quoted (RFC 4180) only when it holds a comma, quote or line break.
void cli_csv_field(FILE *out, const char *s);

// ---------------------------------------------------------------------------------------------
// The analysis commands on a MODEL file: inverse, equilibrium, linearize (analysis.c).

// The options the analysis commands share; the lists hold the NAME=VALUE texts (argc each).
typedef struct {
  const char *path;            // MODEL
  int json;                    // --json
  pt_load_options lopt;        // --floating-base
  const char **init;           // --init NAME=VALUE
  const char **rate;           // --init-rate NAME=VALUE; NULL: the command refuses the option
  int ninit, nrate;
} cli_model_args;

// Zeroes *a, sizes the lists for argc arguments (no --init-rate unless with_rate). 0, or -1
// after printing "out of memory".
int cli_model_args_init(const char *cmd, cli_model_args *a, int argc, int with_rate);
void cli_model_args_free(cli_model_args *a);
// Takes argv[*i] when it is none of the command's own options: a shared option (moving *i past
// its value), MODEL, or an unknown option. 0 taken, 1 --help printed, -1 error printed.
int cli_model_arg(const char *cmd, int argc, char **argv, int *i, cli_model_args *a);
// After the last argument: 0, or -1 after "MODEL file missing (usage: `usage`)".
int cli_model_args_done(const char *cmd, const cli_model_args *a, const char *usage);

// Loads a->path (printing its warnings) and a pt_data for it. Returns an exit code.
int cli_analysis_load(const char *cmd, const cli_model_args *a, pt_model **m, pt_data **d);
// Sets the state given by --init / --init-rate (nothing when neither). Returns an exit code.
int cli_analysis_state(const char *cmd, const cli_model_args *a, const pt_model *m, pt_data *d);
// The n "NAME=VALUE" texts of option `opt` to coordinate assignments in out[*nout] (room for n);
// a name given twice keeps its last value. Returns an exit code.
int cli_analysis_assign(const char *cmd, const char *opt, const pt_model *m,
                        const char *const *args, int n, pt_assign *out, int *nout);
// Prints an engine failure (err's message, else rc's) and returns its exit code: usage for
// PT_EINVAL (a bad request), failure for the rest.
int cli_analysis_fail(const char *cmd, int rc, const pt_error *err);
// Flushes stdout. Returns CLI_EXIT_OK, or CLI_EXIT_FAIL after a message if writing failed.
int cli_analysis_flush(const char *cmd);
// Starts the JSON document on stdout: {"model": NAME, "time": time, and the caller goes on.
void cli_analysis_json_begin(cli_json *j, const pt_model *m, double time);
// "reactions": {JOINT: {"force": [3], "torque": [3]}} into j, or (j NULL) a text table.
void cli_analysis_reactions(cli_json *j, const pt_model *m, const double *reaction);
// '\n'-terminated lines (an analysis result's limit notes): JSON "limit_notes" (an array of
// lines) or a "notes" section in the text; nothing when text is empty.
void cli_analysis_note_lines(cli_json *j, const char *text);
// Limit reactions of the limits an analysis held (held[j] != 0): JSON "limit_reactions"
// {joint: reaction}, always present; text section "limits held (reaction)" when any is held.
void cli_analysis_limit_reactions(cli_json *j, const pt_model *m, const int *held,
                                  const double *reaction);

#endif
