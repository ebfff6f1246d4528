// daemon_open.c: `partita open NAME [--print]` (docs/viewer.md, docs/cli.md): asks a running
// partitad (Hello) where it serves its viewer, checks that it has model NAME and prints the
// page's address; with a desktop session and xdg-open it also opens it.
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "daemon_cmds.h"
#include "link.h"

extern char **environ;

static int hex_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '_' || c == '.' || c == '~';
}

// The viewer's address from the daemon's Hello into url ("" after printing why not).
static void viewer_url(ptc_client *c, int timeout_ms, char *url, size_t cap) {
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__Hello h = PARTITA__V1__HELLO__INIT;
  h.protocol_version = 1;
  h.token = getenv("PARTITA_TOKEN") ? getenv("PARTITA_TOKEN") : "";
  rq.op_case = PARTITA__V1__REQUEST__OP_HELLO;
  rq.hello = &h;
  Partita__V1__ServerMessage *m = NULL;
  url[0] = '\0';
  if (ptc_call(c, &rq, &m, timeout_ms) != PTC_OK || !m->response)
    fprintf(stderr, "partita open: no answer to Hello\n");
  else if (m->response->status->code != PARTITA__V1__STATUS__CODE__OK)
    fprintf(stderr, "partita open: %s\n", m->response->status->message);
  else if (!m->response->hello->viewer_url || !m->response->hello->viewer_url[0])
    fprintf(stderr, "partita open: this partitad serves no viewer (started with --no-http, "
            "or its http port was taken)\n");
  else
    snprintf(url, cap, "%s", m->response->hello->viewer_url);
  if (m)
    ptc_free(m);
}

// Whether the daemon has model `name` (GetModelInfo); if so "#model=NAME" (escaped) is
// appended to url. 0, or -1 after printing why not.
static int model_page(ptc_client *c, int timeout_ms, const char *name, char *url, size_t cap) {
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__GetModelInfo gi = PARTITA__V1__GET_MODEL_INFO__INIT;
  gi.model = (char *)name;
  rq.op_case = PARTITA__V1__REQUEST__OP_GET_MODEL_INFO;
  rq.get_model_info = &gi;
  Partita__V1__ServerMessage *m = NULL;
  int rc = -1;
  if (ptc_call(c, &rq, &m, timeout_ms) != PTC_OK || !m->response) {
    fprintf(stderr, "partita open: no answer to GetModelInfo\n");
  } else if (m->response->status->code != PARTITA__V1__STATUS__CODE__OK) {
    fprintf(stderr, "partita open: %s\n", m->response->status->message);
  } else {
    size_t k = strlen(url);
    k += (size_t)snprintf(url + k, cap - k, "#model=");
    for (const char *p = name; *p && k + 4 < cap; p++)
      k += hex_safe(*p) ? (size_t)snprintf(url + k, cap - k, "%c", *p)
                        : (size_t)snprintf(url + k, cap - k, "%%%02X", (unsigned char)*p);
    rc = 0;
  }
  if (m)
    ptc_free(m);
  return rc;
}

int cli_open_main(const cli_command *self, int argc, char **argv) {
  const char *name = NULL;
  cli_link link;
  int print_only = 0;
  cli_link_init(&link);
  for (int i = 1; i < argc; i++) {
    int r = cli_link_arg(self->name, argc, argv, &i, &link);
    if (r < 0)
      return CLI_EXIT_USAGE;
    if (r > 0)
      continue;
    if (!strcmp(argv[i], "--print")) {
      print_only = 1;
    } else if (argv[i][0] != '-' && !name) {
      name = argv[i];
    } else {
      fprintf(stderr, "partita open: unknown option or missing value: %s\n", argv[i]);
      return CLI_EXIT_USAGE;
    }
  }
  if (!name) {
    cli_usage(self, stderr);
    return CLI_EXIT_USAGE;
  }
  if (cli_link_check(self->name, &link) < 0)
    return CLI_EXIT_USAGE;
  ptc_client *c = cli_link_open(self->name, &link);
  if (!c)
    return CLI_EXIT_FAIL;
  char url[1024];
  viewer_url(c, link.timeout_ms, url, sizeof(url));
  int rc = url[0] && model_page(c, link.timeout_ms, name, url, sizeof(url)) == 0;
  ptc_close(c);
  if (!rc)
    return CLI_EXIT_FAIL;
  printf("%s\n", url);
  fflush(stdout);
  // a browser only where there is a desktop to show it
  if (!print_only && (getenv("DISPLAY") || getenv("WAYLAND_DISPLAY"))) {
    char *args[] = {"xdg-open", url, NULL};
    pid_t pid;
    if (posix_spawnp(&pid, "xdg-open", NULL, NULL, args, environ) != 0)
      fprintf(stderr, "partita open: xdg-open is not available; the address is above\n");
  }
  return CLI_EXIT_OK;
}
