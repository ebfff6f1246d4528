// partita-view: what `partita view MODEL` runs (docs/viewer.md). The embedded engine steps one
// model file, and partitad's viewer page shows it: the daemon's own modules and start-up
// (server.c: a model thread, the HTTP/WebSocket port of viewer/http.c) without its protocol
// ports. Ctrl-C stops it.
#include <spawn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>  // openblas_set_num_threads

#include "addr.h"
#include "api/models.h"
#include "base/log.h"
#include "server.h"

extern char **environ;

#define DEFAULT_HTTP "127.0.0.1:7453"

static const char usage[] =
    "usage: partita view MODEL [--http HOST:PORT] [--mode realtime|paused|free|lockstep]\n"
    "                          [--rate R] [--floating-base] [--balance-inertia]\n"
    "                          [--no-joint-limits] [--package-path DIRS] [--open]\n"
    "Steps MODEL with the embedded engine and serves the viewer page for it (default\n"
    "http://" DEFAULT_HTTP "/, or a free port when that one is taken); Ctrl-C stops.\n"
    "  --mode M           how the model starts (default realtime, rate 1)\n"
    "  --rate R           real-time rate, 0.001 to 1000 (default 1)\n"
    "  --floating-base, --balance-inertia, --no-joint-limits   as for `partita simulate`\n"
    "  --package-path D   ':'-separated directories for package:// meshes (also\n"
    "                     $PARTITA_PACKAGE_PATH)\n"
    "  --open             open the page with xdg-open\n";

static void open_browser(const char *url) {
  char *argv[] = {"xdg-open", (char *)url, NULL};
  pid_t pid;
  if (posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ) != 0)
    fprintf(stderr, "partita view: xdg-open is not available; open %s yourself\n", url);
}

int main(int argc, char **argv) {
  static partitad d;
  server *srv = &d.srv;
  const char *file = NULL, *package_path = NULL;
  int mode = MODE(REALTIME), floating = 0, balance = 0, no_limits = 0, open_it = 0;
  double rate = 1.0;
  config_defaults(&srv->cfg);
  srv->cfg.listen[0] = 0;                 // no protocol port: this is not a daemon
  srv->cfg.realtime.mlockall = 0;
  snprintf(srv->cfg.viewer.http, sizeof(srv->cfg.viewer.http), "%s", DEFAULT_HTTP);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage, stdout);
      return 0;
    } else if (!strcmp(a, "--http") && v) {
      snprintf(srv->cfg.viewer.http, sizeof(srv->cfg.viewer.http), "%s", v);
      srv->cfg.viewer.http_set = 1;
      i++;
    } else if (!strcmp(a, "--mode") && v) {
      if ((mode = config_parse_mode(v)) < 0) {
        fprintf(stderr, "partita view: --mode: paused, realtime, free or lockstep\n");
        return 2;
      }
      i++;
    } else if (!strcmp(a, "--rate") && v) {
      char *end;
      rate = strtod(v, &end);
      if (end == v || *end || !(rate >= 0.001 && rate <= 1000)) {
        fprintf(stderr, "partita view: --rate: a number from 0.001 to 1000, got '%s'\n", v);
        return 2;
      }
      i++;
    } else if (!strcmp(a, "--package-path") && v) {
      package_path = v;
      i++;
    } else if (!strcmp(a, "--floating-base")) {
      floating = 1;
    } else if (!strcmp(a, "--balance-inertia")) {
      balance = 1;
    } else if (!strcmp(a, "--no-joint-limits")) {
      no_limits = 1;
    } else if (!strcmp(a, "--open")) {
      open_it = 1;
    } else if (a[0] != '-' && !file) {
      file = a;
    } else {
      fprintf(stderr, "partita view: unknown option or missing value: %s\n%s", a, usage);
      return 2;
    }
  }
  if (!file) {
    fputs(usage, stderr);
    return 2;
  }
  char why[512];
  if (config_check(&srv->cfg, why, sizeof(why))) {  // as partitad: no open port without a token
    fprintf(stderr, "partita view: %s\n", why);
    return 2;
  }
  log_set_level(LOG_ERROR);
  openblas_set_num_threads(1);
  signal(SIGPIPE, SIG_IGN);
  pt_load_options opt = {.floating_base = floating, .balance_inertia = balance,
                         .no_joint_limits = no_limits, .package_path = package_path};
  pt_model *m;
  pt_error err = {0};
  if (pt_model_load_file(file, &opt, &m, &err) < 0) {
    fprintf(stderr, "partita view: %s\n", err.msg);
    return 1;
  }
  const char *w = pt_model_warnings(m);
  while (w && *w) {   // one line each, as the other commands print them
    int n = (int)strcspn(w, "\n");
    fprintf(stderr, "partita view: warning: %.*s\n", n, w);
    w += n + (w[n] == '\n');
  }
  char msg[256];
  model_opts o = {.run = {.mode = mode, .rate = rate}};
  if (server_open(&d, uv_default_loop(), 0) ||
      models_add(srv, pt_model_name(m), m, &o, NULL, msg, sizeof(msg))) {
    fprintf(stderr, "partita view: %s\n", srv->models ? msg : "out of memory");
    pt_model_free(m);
    return 1;
  }
  int rc = http_start(srv, &d.http);
  if (rc == 0 && !d.http) {   // the default port is taken: any free one
    snprintf(srv->cfg.viewer.http, sizeof(srv->cfg.viewer.http), "127.0.0.1:0");
    srv->cfg.viewer.http_set = 1;
    rc = http_start(srv, &d.http);
  }
  if (rc || !d.http) {
    fprintf(stderr, "partita view: cannot serve http on %s\n", srv->cfg.viewer.http);
    server_shutdown(&d);
    server_run(&d);
    return 2;
  }
  char host[128] = "127.0.0.1", url[512];
  int port;
  wire_split_addr(srv->cfg.viewer.http, host, sizeof(host), &port);
  if (!strcmp(host, "0.0.0.0") || !strcmp(host, "::"))
    snprintf(host, sizeof(host), "127.0.0.1");
  snprintf(url, sizeof(url), "http://%s%s%s:%d/#model=%s", strchr(host, ':') ? "[" : "", host,
           strchr(host, ':') ? "]" : "", http_port(d.http), pt_model_name(m));
  printf("partita view: %s  (Ctrl-C to stop)\n", url);
  fflush(stdout);
  if (open_it)
    open_browser(url);
  server_run(&d);
  return 0;
}
