// main.c: the `partita` command-line program: finds the command in the table (commands.c),
// answers `--help` from its row and hands the arguments to its handler.
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "partita.h"

// Whether the arguments ask for help (before a "--" that ends the options).
static int wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0)
      return 0;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
      return 1;
  }
  return 0;
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

// `partita`, `partita --help`, `partita help [CMD]`, `partita --version`: 1 when name is one
// of them (*code set), else 0.
static int program_help(int argc, char **argv, int *code) {
  const char *name = argv[1];
  *code = CLI_EXIT_OK;
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    if (argc > 2 && strcmp(name, "help") == 0) {   // `partita help CMD`
      const cli_command *c = cli_find_command(argv[2]);
      if (c) {
        cli_usage(c, stdout);
      } else {
        fprintf(stderr, "partita: unknown command '%s' (see partita --help)\n", argv[2]);
        *code = CLI_EXIT_USAGE;
      }
      return 1;
    }
    cli_print_commands(stdout);
    return 1;
  }
  if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
    printf("partita %s\n", PT_VERSION);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    cli_print_commands(stderr);
    return CLI_EXIT_USAGE;
  }
  argc = hoist_globals(argc, argv);
  int code;
  if (program_help(argc, argv, &code))
    return code;
  const cli_command *c = cli_find_command(argv[1]);
  if (!c) {
    fprintf(stderr, "partita: unknown command '%s' (see partita --help)\n", argv[1]);
    return CLI_EXIT_USAGE;
  }
  if (wants_help(argc - 1, argv + 1)) {
    cli_usage(c, stdout);
    return CLI_EXIT_OK;
  }
  return c->run(c, argc - 1, argv + 1);
}
