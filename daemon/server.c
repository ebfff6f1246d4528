// server.c: partitad as a whole (server.h): the start-up partitad and partita-view share, the
// listeners the config names, the periodic tick, the shutdown sequence, and the hooks that
// tell this level what the connection layer sees (a connection closing, work completing).
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "api/dispatch.h"
#include "api/models.h"
#include "api/subs.h"
#include "base/log.h"
#include "net/listen.h"
#include "server.h"

static partitad *top_of(net *n) {
  server *srv = (server *)(void *)((char *)n - offsetof(server, net));
  return (partitad *)(void *)((char *)srv - offsetof(partitad, srv));
}

// ---------------------------------------------------------------------------------------------
// The connection layer's hooks at this level, the signals, the tick.

static void conn_closing(conn *c) {
  partitad *d = top_of(c->net);
  subs_drop_conn(c);
  if (d->http)
    http_conn_closing(d->http, c);
}

static void work_done(net *n) {
  if (n->stopping)
    server_tick(top_of(n));
}

static void on_signal(uv_signal_t *h, int signum) {
  log_info("signal %d received", signum);
  server_shutdown(h->data);
}

// SIGHUP: reopen the log file (after logrotate moved it).
static void on_hangup(uv_signal_t *h, int signum) {
  (void)h;
  (void)signum;
  if (log_reopen() != 0)
    log_error("could not reopen the log: %s", strerror(errno));
  else
    log_info("log reopened");
}

// The loop thread pings systemd's watchdog from here: a loop that hangs stops the pings, and
// systemd restarts the daemon.
static void on_timer(uv_timer_t *t) {
  partitad *d = t->data;
  server_tick(d);
  uint64_t now = net_now_ms();
  if (d->watchdog_usec && now - d->watchdog_ms >= d->watchdog_usec / 2000) {
    sd_notify(0, "WATCHDOG=1");
    d->watchdog_ms = now;
  }
}

int server_open(partitad *d, uv_loop_t *loop, int as_daemon) {
  server *srv = &d->srv;
  if (dispatch_init(srv, loop))
    return -1;
  srv->net.on_conn_closing = conn_closing;
  srv->net.on_work_done = work_done;
  uv_signal_init(loop, &d->sigint);
  uv_signal_init(loop, &d->sigterm);
  uv_signal_init(loop, &d->sighup);
  d->sigint.data = d->sigterm.data = d;
  uv_signal_start(&d->sigint, on_signal, SIGINT);
  uv_signal_start(&d->sigterm, on_signal, SIGTERM);
  if (as_daemon) {
    uv_signal_start(&d->sighup, on_hangup, SIGHUP);
    if (sd_watchdog_enabled(0, &d->watchdog_usec) <= 0)
      d->watchdog_usec = 0;
  }
  uv_timer_init(loop, &d->timer);
  d->timer.data = d;
  uv_timer_start(&d->timer, on_timer, 100, 100);
  return 0;
}

// The Unix socket first: once the TCP port answers (what readiness checks look at), the
// socket exists with its final mode.
int server_listen(partitad *d) {
  server *srv = &d->srv;
  const config *cfg = &srv->cfg;
  if (cfg->socket[0] && listen_pipe(&srv->net, cfg->socket, cfg->socket_group))
    return -1;
  if (cfg->viewer.http[0] && http_start(srv, &d->http))   // before TCP too: readiness is TCP
    return -1;
  if (cfg->listen[0] && listen_tcp(&srv->net, cfg->listen))
    return -1;
  if (cfg->udp[0] && udp_start(&srv->udp, srv->net.loop, cfg->udp))
    return -1;
  if (!srv->net.has_tcp && !srv->net.has_pipe)
    log_warn("no TCP address and no Unix socket: only UDP inputs are served");
  return 0;
}

// Periodic: the connections' checks (net_tick), and the shutdown sequence.
void server_tick(partitad *d) {
  server *srv = &d->srv;
  net *n = &srv->net;
  net_tick(n);
  if (n->stopping && n->conns == NULL && srv->nmodels > 0) {
    while (srv->nmodels > 0)
      models_unload(srv, srv->models[srv->nmodels - 1], NULL, 0);
  }
  if (n->stopping && n->conns == NULL && srv->nmodels == 0 && srv->loading == 0 &&
      !uv_is_closing((uv_handle_t *)&d->timer)) {
    uv_close((uv_handle_t *)&d->timer, NULL);
    uv_close((uv_handle_t *)&d->sigint, NULL);
    uv_close((uv_handle_t *)&d->sigterm, NULL);
    uv_close((uv_handle_t *)&d->sighup, NULL);
    // the loop is about to end: a second SIGTERM must not kill a daemon already stopping
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
  }
  // A model still compiling (a huge one) is not waited for: the answer would go nowhere.
  if (n->stopping && n->conns == NULL && srv->nmodels == 0 && srv->loading > 0 &&
      net_now_ms() - n->stop_ms > 2000 && !d->abandoned) {
    log_warn("shutting down with %d model load(s) in progress: abandoned", srv->loading);
    d->abandoned = 1;
    uv_stop(n->loop);
  }
}

void server_shutdown(partitad *d) {
  server *srv = &d->srv;
  if (srv->net.stopping)
    return;
  // the browsers first, before `stopping` makes each closing connection run the tick: their
  // connections close here without closing each other under the sessions
  http_stop(d->http);
  d->http = NULL;
  sd_notify(0, "STOPPING=1");
  log_info("shutting down: %d clients, %d models", srv->net.nclients, srv->nmodels);
  net_shutdown(&srv->net);
  udp_close(&srv->udp);
  for (conn *c = srv->net.conns; c; c = c->next)
    subs_drop_conn(c);   // no more frames: only the answers still owed go out
  for (int i = 0; i < srv->nmodels; i++)   // queued and running commands answer at once
    atomic_store(&srv->models[i]->draining, 1);
  server_tick(d);
}

int server_run(partitad *d) {
  uv_loop_t *loop = d->srv.net.loop;
  uv_run(loop, UV_RUN_DEFAULT);
  if (d->abandoned)
    return 1;   // a work-pool thread is still compiling, and libuv's destructor would join it
  http_finish(loop);
  if (uv_loop_close(loop))
    log_warn("loop closed with handles still open");
  free(d->srv.models);
  return 0;
}
