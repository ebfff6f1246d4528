// view.c: `partita view MODEL` and `partita open NAME` (docs/viewer.md, docs/cli.md).
//
// view: runs partita-view (daemon/view_main.c), the embedded engine with partitad's viewer
// page for one model file; it is looked up beside this program, in the build tree's daemon/
// directory, then on PATH. open: asks a running partitad (Hello) where its viewer is and
// prints the page's address for model NAME; with a desktop session and xdg-open, opens it.
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "partita.h"

#ifdef PARTITA_HAVE_REMOTE
#include "partita_client.h"
#include "remote.h"
#endif

extern char **environ;

int cli_view_main(int argc, char **argv) {
  (void)argc;   // argv is NULL-terminated: passed on whole
  char self[PATH_MAX], path[PATH_MAX + 32];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  argv[0] = "partita-view";
  if (n > 0) {
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;
    const char *tries[] = {"%s/partita-view", "%s/../daemon/partita-view"};
    for (int i = 0; i < 2; i++) {
      snprintf(path, sizeof(path), tries[i], self);
      if (access(path, X_OK) == 0) {
        execv(path, argv);
      }
    }
  }
  execvp("partita-view", argv);
  fprintf(stderr, "partita view: partita-view is not installed beside partita or on PATH\n");
  return CLI_EXIT_FAIL;
}

#ifdef PARTITA_HAVE_REMOTE
static int hex_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '_' || c == '.' || c == '~';
}

int cli_open_main(int argc, char **argv) {
  const char *name = NULL, *connect = NULL, *sock = NULL;
  int print_only = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      cli_usage("open", stdout);
      return CLI_EXIT_OK;
    } else if (!strcmp(argv[i], "--connect") && i + 1 < argc) {
      connect = argv[++i];
    } else if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
      sock = argv[++i];
    } else if (!strcmp(argv[i], "--print")) {
      print_only = 1;
    } else if (argv[i][0] != '-' && !name) {
      name = argv[i];
    } else {
      fprintf(stderr, "partita open: unknown option or missing value: %s\n", argv[i]);
      return CLI_EXIT_USAGE;
    }
  }
  if (!name) {
    cli_usage("open", stderr);
    return CLI_EXIT_USAGE;
  }
  char err[512];
  if (!sock && !connect) sock = getenv("PARTITA_SOCKET");
  if (!connect) connect = getenv("PARTITA_CONNECT");
  ptc_client *c = sock && *sock ? ptc_connect_unix(sock, CLI_REMOTE_TIMEOUT_MS, err, sizeof(err))
                                : ptc_connect_addr(connect && *connect ? connect
                                                                       : CLI_REMOTE_DEFAULT_CONNECT,
                                                   CLI_REMOTE_TIMEOUT_MS, err, sizeof(err));
  if (!c) {
    fprintf(stderr, "partita open: cannot reach partitad: %s\n", err);
    return CLI_EXIT_FAIL;
  }
  int rc = CLI_EXIT_FAIL;
  char url[1024] = "";
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__Hello h = PARTITA__V1__HELLO__INIT;
  h.protocol_version = 1;
  h.token = getenv("PARTITA_TOKEN") ? getenv("PARTITA_TOKEN") : "";
  rq.op_case = PARTITA__V1__REQUEST__OP_HELLO;
  rq.hello = &h;
  Partita__V1__ServerMessage *m = NULL;
  if (ptc_call(c, &rq, &m, CLI_REMOTE_TIMEOUT_MS) != PTC_OK || !m->response) {
    fprintf(stderr, "partita open: no answer to Hello\n");
  } else if (m->response->status->code != PARTITA__V1__STATUS__CODE__OK) {
    fprintf(stderr, "partita open: %s\n", m->response->status->message);
  } else if (!m->response->hello->viewer_url || !m->response->hello->viewer_url[0]) {
    fprintf(stderr, "partita open: this partitad serves no viewer (started with --no-http, "
            "or its http port was taken)\n");
  } else {
    snprintf(url, sizeof(url), "%s", m->response->hello->viewer_url);
  }
  if (m) ptc_free(m);
  m = NULL;
  if (url[0]) {   // the model must exist
    Partita__V1__GetModelInfo gi = PARTITA__V1__GET_MODEL_INFO__INIT;
    gi.model = (char *)name;
    rq.op_case = PARTITA__V1__REQUEST__OP_GET_MODEL_INFO;
    rq.get_model_info = &gi;
    if (ptc_call(c, &rq, &m, CLI_REMOTE_TIMEOUT_MS) != PTC_OK || !m->response) {
      fprintf(stderr, "partita open: no answer to GetModelInfo\n");
    } else if (m->response->status->code != PARTITA__V1__STATUS__CODE__OK) {
      fprintf(stderr, "partita open: %s\n", m->response->status->message);
    } else {
      size_t k = strlen(url);
      k += (size_t)snprintf(url + k, sizeof(url) - k, "#model=");
      for (const char *p = name; *p && k + 4 < sizeof(url); p++)
        k += hex_safe(*p) ? (size_t)snprintf(url + k, sizeof(url) - k, "%c", *p)
                          : (size_t)snprintf(url + k, sizeof(url) - k, "%%%02X",
                                             (unsigned char)*p);
      rc = CLI_EXIT_OK;
    }
    if (m) ptc_free(m);
  }
  ptc_close(c);
  if (rc != CLI_EXIT_OK) return rc;
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
#else
int cli_open_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "partita open: built without the client library\n");
  return CLI_EXIT_FAIL;
}
#endif
