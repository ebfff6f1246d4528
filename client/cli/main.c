// main.c: the `partita` command-line program: the command table, dispatch, usage texts and
// the argument helpers the commands share (declared in cli.h).
//
// A MODEL file argument means the work is done here by the embedded engine (offline.c);
// the daemon commands are handed to cli_remote_main (remote.c) with argv[0] = the command.
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "partita.h"
#include "record.h"

typedef enum { LOCAL, REMOTE } cmd_kind;

// `partita record`: a daemon's recording (record_remote.c needs the client library).
static int run_record(int argc, char **argv) {
#ifdef PARTITA_HAVE_REMOTE
  return cli_record_remote_main(argc, argv);
#else
  (void)argc;
  cli_error(argv[0], "remote commands are not available in this build");
  return CLI_EXIT_USAGE;
#endif
}

typedef struct {
  const char *name;
  cmd_kind kind;
  int (*run)(int argc, char **argv);   // LOCAL only
  const char *synopsis;                // shown by `partita --help`
  const char *help;                    // shown by `partita CMD --help` (after the synopsis)
} command;

static const command commands[] = {
  {"check", LOCAL, cli_check_main,
   "check MODEL [--json] [--floating-base] [--balance-inertia] [--no-joint-limits]",
   "Load MODEL (YAML or URDF), assemble its initial state and print a summary: bodies,\n"
   "constraints, degrees of freedom, coordinates, actuator inputs, motions, the independent\n"
   "coordinates of the partition, integrator and step size. Warnings go to stderr.\n"
   "  --json            one JSON object instead of the text summary\n"
   "  --floating-base   URDF: the root link moves freely instead of being welded to ground\n"
   "  --balance-inertia URDF: repair non-physical inertias to the nearest physical ones\n"
   "                    (each link changed is listed in the warnings) instead of refusing\n"
   "  --no-joint-limits joint limits kept but not enforced (simulation: {joint_limits: off})\n"},
  {"simulate", LOCAL, cli_simulate_main,
   "simulate MODEL [--duration T] [--dt H] [--integrator rk4|abm4|euler] [--every K]\n"
   "         [--set ACTUATOR=VALUE ...] [--init NAME=VALUE ...] [--init-rate NAME=VALUE ...]\n"
   "         [--json] [--floating-base] [--balance-inertia] [--no-joint-limits] [--record FILE]",
   "Simulate MODEL with the embedded engine and print CSV on stdout: t, each coordinate,\n"
   "each coordinate rate (NAME.rate), energy, residual_pos, residual_vel; one row at t=0\n"
   "and one every K steps. Steps = round(T / H).\n"
   "  --duration T      simulated time in seconds (default 1)\n"
   "  --dt H            step size (default: the model's simulation.dt)\n"
   "  --integrator I    rk4, abm4 or euler (default: the model's simulation.integrator)\n"
   "  --every K         print every K-th step (default 1)\n"
   "  --set A=V         hold actuator input A at V (repeatable)\n"
   "  --init C=V        start coordinate C at V; the rest is assembled around it\n"
   "  --init-rate C=V   start coordinate C with rate V\n"
   "  --json            {\"columns\": [..], \"rows\": [[..], ..]} instead of CSV\n"
   "  --no-joint-limits joint limits kept but not enforced\n"
   "  --record FILE     also write an MCAP recording (states every K steps, the inputs,\n"
   "                    the model text and options): see replay, info, export\n"},
  // recordings (record.c, docs/recording.md)
  {"replay", LOCAL, cli_replay_main, "replay FILE [--model MODEL] [--json]",
   "Rebuild the model of a recording (or MODEL instead), apply the recorded inputs at their\n"
   "recorded steps and compare every recorded state: identical bit for bit for the same\n"
   "model (exit 1 otherwise), or a table of the largest differences per coordinate.\n"
   "  --model MODEL     replay with this model file instead of the recorded one\n"
   "  --json            one JSON object\n"},
  {"info", LOCAL, cli_info_main, "info FILE [--json]",
   "Summary of a recording: model, channels and message counts, steps and time range,\n"
   "inputs, events, overruns, dropped state frames; a cut-off file says where it ends.\n"},
  {"export", LOCAL, cli_export_main, "export FILE --csv",
   "The recorded states as CSV with the columns of `partita simulate`.\n"},
  {"record", LOCAL, run_record,
   "record NAME --out FILE [--duration T] [--every K] [--fields LIST] [--json]",
   "Record daemon model NAME into FILE, created by partitad inside its record directory\n"
   "(config record.dir, --record-dir; a relative FILE is taken from there), for T seconds\n"
   "or until Ctrl-C, then print what was written (frames, dropped frames, inputs, bytes).\n"
   "  --every K         one state frame every K steps (default 1)\n"
   "  --fields LIST     coordinates,rates,accelerations,inputs,bodies,energy,residual, all\n"
   "                    or default (default: all but bodies, what replay compares)\n"
   "Talks to a running partitad (--connect HOST:PORT or --socket PATH).\n"},
  {"inverse", LOCAL, cli_inverse_main,
   "inverse MODEL|--model NAME [--at T] [--acc NAME=VALUE ...] [--gravity]\n"
   "                [--init NAME=VALUE ...] [--init-rate NAME=VALUE ...] [--floating-base]\n"
   "                [--balance-inertia] [--json]",
   "Inverse dynamics. Without --acc: kinematic inverse dynamics (every degree of freedom\n"
   "prescribed by motions): motion efforts and joint reactions at time T. With --acc: the\n"
   "actuator efforts that give the named actuated coordinates those accelerations.\n"
   "  --acc C=V         acceleration V of actuated coordinate C (repeatable); all=V: every\n"
   "                    actuated coordinate (a named one overrides it)\n"
   "  --gravity         holding efforts at the configuration: every rate and every actuated\n"
   "                    acceleration zero (gravity and spring compensation)\n"
   "  --at T            time of the evaluation (motions at T)\n"
   "  --init C=V        the state: coordinate values (the rest is assembled around them)\n"
   "  --init-rate C=V   the state: coordinate rates\n"},
  {"linearize", LOCAL, cli_linearize_main,
   "linearize MODEL|--model NAME [--states A,B] [--inputs U,V] [--outputs Y,Z]\n"
   "                [--init NAME=VALUE ...] [--init-rate NAME=VALUE ...] [--set ACTUATOR=VALUE ...]\n"
   "                [--dense] [--floating-base] [--balance-inertia] [--json]",
   "Linearized state-space model (A, B, C, D), M, C, K and eigenvalues, by the augmented\n"
   "sensitivity method, in the chosen coordinates (default: the partition's independent\n"
   "coordinates, joint coordinates preferred). Outputs: NAME, NAME.rate or NAME.acc.\n"
   "  --init C=V        operating point: coordinate values (the rest is assembled)\n"
   "  --init-rate C=V   operating point: coordinate rates\n"
   "  --set A=V         actuator input A held at V at the operating point (repeatable;\n"
   "                    holding torques: partita inverse --gravity)\n"},
  {"equilibrium", LOCAL, cli_equilibrium_main, "equilibrium MODEL|--model NAME [--apply] [--init NAME=VALUE ...]\n"
   "                [--max-iterations N] [--tolerance X] [--newton-only] [--allow-unstable] [--json]",
   "Static equilibrium configuration and reactions.\n"},
  {"view", LOCAL, cli_view_main,
   "view MODEL [--http HOST:PORT] [--mode M] [--rate R] [--package-path DIRS] [--open]",
   "Step MODEL with the embedded engine in real time and show it in a browser: serves the\n"
   "viewer page (3D scene, plots, controls; docs/viewer.md) on http://127.0.0.1:7453/ (a free\n"
   "port when that one is taken) and prints the address; Ctrl-C stops. No daemon needed.\n"
   "  --http HOST:PORT   where to serve the page\n"
   "  --mode M           realtime (default), paused, free or lockstep; --rate R real-time rate\n"
   "  --package-path D   ':'-separated directories for package:// meshes\n"
   "  --open             open the page with xdg-open\n"},
  {"open", LOCAL, cli_open_main, "open NAME [--print]",
   "Print the address of the viewer page of daemon model NAME (from the daemon's Hello), and\n"
   "open it with xdg-open when a desktop session is there (not with --print).\n"
   "Talks to a running partitad (--connect HOST:PORT or --socket PATH; PARTITA_TOKEN).\n"},
  {"models", REMOTE, NULL, "models", "List the models loaded in the daemon.\n"},
  {"load", REMOTE, NULL, "load FILE [--name N]", "Load a model file into the daemon.\n"},
  {"unload", REMOTE, NULL, "unload N", "Unload a model from the daemon.\n"},
  {"state", REMOTE, NULL, "state N", "Print the state of a daemon model.\n"},
  {"watch", REMOTE, NULL, "watch N", "Stream the state of a daemon model.\n"},
  {"set", REMOTE, NULL, "set N ACT=VALUE ...", "Set actuator inputs of a daemon model.\n"},
  {"step", REMOTE, NULL, "step N [COUNT]", "Advance a lockstep daemon model.\n"},
  {"mode", REMOTE, NULL, "mode N paused|realtime|free|lockstep [--rate R]",
   "Change how a daemon model runs.\n"},
  {"reset", REMOTE, NULL, "reset N", "Reset a daemon model to its initial state.\n"},
  {"stats", REMOTE, NULL, "stats [N]", "Timing and traffic statistics of the daemon.\n"},
};

#define NCOMMAND ((int)(sizeof(commands) / sizeof(commands[0])))

static const command *find_command(const char *name) {
  for (int i = 0; i < NCOMMAND; i++) {
    if (strcmp(commands[i].name, name) == 0) {
      return &commands[i];
    }
  }
  return NULL;
}

int cli_usage(const char *cmd, FILE *out) {
  const command *c = find_command(cmd);
  if (!c) {
    return -1;
  }
  fprintf(out, "usage: partita %s\n\n%s", c->synopsis, c->help);
  if (c->kind == REMOTE) {
    fputs("\nRemote commands talk to a running partitad (--connect HOST:PORT or --socket "
          "PATH).\n", out);
  } else if (strstr(c->synopsis, "--model")) {  // the analyses: local file or daemon
    fputs("\nWith MODEL the embedded engine does the work; with --model NAME a running\n"
          "partitad does (--connect HOST:PORT or --socket PATH).\n", out);
  }
  return 0;
}

static void print_help(FILE *out) {
  fputs("usage: partita COMMAND [ARGS]\n\n"
        "Partita " PT_VERSION ": real-time multibody dynamics.\n"
        "A MODEL file is worked on locally by the embedded engine; `--model NAME` and the\n"
        "daemon commands talk to a running partitad.\n\ncommands:\n", out);
  for (int i = 0; i < NCOMMAND; i++) {
    fprintf(out, "  partita %s\n", commands[i].synopsis);
  }
  fputs("\n  partita --help | --version | COMMAND --help\n"
        "\nExit status: 0 success, 1 the work failed, 2 usage error.\n", out);
}

// Whether the arguments ask for help (before a "--" that ends the options).
static int wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) {
      return 0;
    }
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      return 1;
    }
  }
  return 0;
}

static int has_arg(int argc, char **argv, const char *name) {
  size_t n = strlen(name);
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], name, n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '=')) {
      return 1;
    }
  }
  return 0;
}

static int run_remote(int argc, char **argv) {
#ifdef PARTITA_HAVE_REMOTE
  return cli_remote_main(argc, argv);
#else
  (void)argc;
  cli_error(argv[0], "remote commands are not available in this build");
  return CLI_EXIT_USAGE;
#endif
}

// Global options may come before the command (`partita --connect HOST:PORT models`, as
// redis-cli and kubectl users type them): they are moved behind it, where every command
// parses them. Answers the new argc; argv is rewritten in place.
static int hoist_globals(int argc, char **argv) {
  static const char *const with_value[] = {"--connect", "--socket", "--timeout"};
  int first = 1;   // where the leading options end
  while (first < argc) {
    const char *a = argv[first];
    int takes = 0, known = strcmp(a, "--json") == 0;
    for (size_t k = 0; k < sizeof(with_value) / sizeof(with_value[0]) && !known; k++) {
      size_t n = strlen(with_value[k]);
      if (strncmp(a, with_value[k], n) == 0 && (a[n] == '\0' || a[n] == '=')) {
        known = 1;
        takes = a[n] == '\0';
      }
    }
    if (!known || first + takes >= argc)
      break;
    first += 1 + takes;
  }
  if (first == 1 || first >= argc)
    return argc;
  // rotate argv[1..first) behind the rest: COMMAND ARGS... GLOBALS...
  char *moved[16];
  int nm = first - 1 < 16 ? first - 1 : 16;
  memcpy(moved, argv + 1, sizeof(char *) * (size_t)nm);
  memmove(argv + 1, argv + 1 + nm, sizeof(char *) * (size_t)(argc - 1 - nm));
  memcpy(argv + argc - nm, moved, sizeof(char *) * (size_t)nm);
  return argc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_help(stderr);
    return CLI_EXIT_USAGE;
  }
  argc = hoist_globals(argc, argv);
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    if (argc > 2 && strcmp(name, "help") == 0) {   // `partita help CMD`
      if (cli_usage(argv[2], stdout) == 0) {
        return CLI_EXIT_OK;
      }
      fprintf(stderr, "partita: unknown command '%s' (see partita --help)\n", argv[2]);
      return CLI_EXIT_USAGE;
    }
    print_help(stdout);
    return CLI_EXIT_OK;
  }
  if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
    printf("partita %s\n", PT_VERSION);
    return CLI_EXIT_OK;
  }
  const command *c = find_command(name);
  if (!c) {
    fprintf(stderr, "partita: unknown command '%s' (see partita --help)\n", name);
    return CLI_EXIT_USAGE;
  }
  int cargc = argc - 1;
  char **cargv = argv + 1;
  switch (c->kind) {
    case LOCAL:
      if (c->run != cli_replay_main && !wants_help(cargc, cargv) &&
          has_arg(cargc, cargv, "--model"))
        return run_remote(cargc, cargv);   // asked of a running daemon
      return c->run(cargc, cargv);   // handles --help itself, in its option loop
    case REMOTE:
#ifdef PARTITA_HAVE_REMOTE
      return run_remote(cargc, cargv);   // the remote commands print their own help
#else
      if (wants_help(cargc, cargv)) {
        cli_usage(name, stdout);
        return CLI_EXIT_OK;
      }
      return run_remote(cargc, cargv);
#endif
  }
  return CLI_EXIT_USAGE;
}

// ---------------------------------------------------------------------------------------------
// Argument helpers (cli.h).

void cli_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "partita %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
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
