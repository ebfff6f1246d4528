// args.c: the argument helpers (args.h).
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "partita %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int cli_flush(const char *cmd, int code) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    cli_error(cmd, "error writing the output");
    return CLI_EXIT_FAIL;
  }
  return code;
}

int cli_is_flag(const char *arg, const char *name) { return strcmp(arg, name) == 0; }

int cli_positional(const char *cmd, const char *arg, const char *what, const char **pos) {
  if (arg[0] == '-' && arg[1] != '\0') {
    cli_error(cmd, "unknown option '%s' (see partita %s --help)", arg, cmd);
    return -1;
  }
  if (*pos) {
    cli_error(cmd, "one %s expected, got '%s' and '%s'", what, *pos, arg);
    return -1;
  }
  *pos = arg;
  return 0;
}

int cli_opt_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                  const char **val) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) {
    return 0;
  }
  if (arg[n] == '=') {
    *val = arg + n + 1;
    return 1;
  }
  if (arg[n] != '\0') {
    return 0;   // a longer option that starts the same way ("--init" vs "--init-rate")
  }
  if (*i + 1 >= argc) {
    cli_error(cmd, "%s needs a value", name);
    return -1;
  }
  *i += 1;
  *val = argv[*i];
  return 1;
}

int cli_parse_double(const char *cmd, const char *what, const char *s, double *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) {
    cli_error(cmd, "%s: '%s' is not a finite number", what, s);
    return -1;
  }
  *out = v;
  return 0;
}

int cli_ground_plane(const char *cmd, int argc, char **argv, int *i, int *on, double *z) {
  const char *v = NULL;
  int r = cli_opt_value(cmd, argc, argv, i, "--ground-plane", &v);
  if (r <= 0) return r;
  if (cli_parse_double(cmd, "--ground-plane", v, z) < 0) return -1;
  *on = 1;
  return 1;
}

int cli_parse_long(const char *cmd, const char *what, const char *s, long min, long max,
                   long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE || v < min || v > max) {
    cli_error(cmd, "%s: '%s' is not an integer in [%ld, %ld]", what, s, min, max);
    return -1;
  }
  *out = v;
  return 0;
}

int cli_parse_assign(const char *cmd, const char *what, const char *s, char *name,
                     size_t cap, double *value) {
  const char *eq = strrchr(s, '=');
  if (!eq || eq == s) {
    cli_error(cmd, "%s: expected NAME=VALUE, got '%s'", what, s);
    return -1;
  }
  size_t n = (size_t)(eq - s);
  if (n >= cap) {
    cli_error(cmd, "%s: name too long in '%s'", what, s);
    return -1;
  }
  memcpy(name, s, n);
  name[n] = '\0';
  return cli_parse_double(cmd, what, eq + 1, value);
}
