// args.h: the argument helpers every command of `partita` uses. Options are "--name VALUE" or
// "--name=VALUE"; errors are printed to stderr as "partita CMD: ..." so every helper takes the
// command's name.
//
// Exit codes used by every command: 0 success, 1 the work failed (model refused, a step
// failed, output could not be written), 2 usage error (unknown option or name, bad value).
#ifndef PARTITA_CLI_ARGS_H
#define PARTITA_CLI_ARGS_H

#include <stddef.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

// Prints "partita CMD: " + message + '\n' to stderr.
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Flushes stdout: code, or CLI_EXIT_FAIL after "error writing the output" when writing failed
// (a full disk, a closed pipe).
int cli_flush(const char *cmd, int code);

// Whether arg is the flag `name` (exact match).
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

// If argv[*i] is `--ground-plane Z` (a ground plane z = Z added to the model, the load option
// ground_plane): sets *on and *z and returns 1; another argument: 0; a bad value: -1 after a
// message.
int cli_ground_plane(const char *cmd, int argc, char **argv, int *i, int *on, double *z);

#endif
