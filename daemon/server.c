// server.c: the server as a whole: listeners, the periodic tick (slow and idle connections,
// the shutdown sequence), and the callbacks that connect the connection layer (conn.c) to the
// layers above it.
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "base/log.h"
#include "viewer/http.h"
#include "server.h"

static int listen_tcp(server *srv) {
  char host[128];
  int port;
  if (wire_split_addr(srv->cfg.listen, host, sizeof(host), &port)) {
    log_error("listen: bad address '%s' (HOST:PORT)", srv->cfg.listen);
    return -1;
  }
  struct sockaddr_storage ss;
  int rc = strchr(host, ':') ? uv_ip6_addr(host, port, (struct sockaddr_in6 *)&ss)
                             : uv_ip4_addr(host, port, (struct sockaddr_in *)&ss);
  if (rc == 0)
    rc = uv_tcp_init(srv->loop, &srv->tcp);
  if (rc == 0) {
    srv->has_tcp = 1;
    srv->tcp.data = srv;
    rc = uv_tcp_bind(&srv->tcp, (struct sockaddr *)&ss, 0);
  }
  if (rc == 0)
    rc = uv_listen((uv_stream_t *)&srv->tcp, 128, conn_accept);
  if (rc < 0) {
    log_error("listen %s: %s", srv->cfg.listen, uv_strerror(rc));
    return -1;
  }
  int len = sizeof(ss);
  uv_tcp_getsockname(&srv->tcp, (struct sockaddr *)&ss, &len);
  int actual = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
  log_info("listening on tcp %s port %d", host, actual);
  return 0;
}

// The Unix socket is for the daemon's user and the socket group (rw-rw----), before anyone
// can connect: a client that can write to it can drive the models.
static int socket_access(server *srv, const char *path) {
  gid_t gid = (gid_t)-1;
  if (srv->cfg.socket_group[0]) {
    struct group *g = getgrnam(srv->cfg.socket_group);
    if (!g) {
      log_error("socket %s: no group named '%s' (socket_group)", path, srv->cfg.socket_group);
      return -1;
    }
    gid = g->gr_gid;
  }
  if ((gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) != 0) || chmod(path, 0660) != 0) {
    log_error("socket %s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

static int listen_pipe(server *srv) {
  const char *path = srv->cfg.socket;
  int rc = uv_pipe_init(srv->loop, &srv->pipe, 0);
  if (rc == 0) {
    srv->has_pipe = 1;
    srv->pipe.data = srv;
    mode_t old = umask(0117);   // created rw-rw---- at once: no moment open to others
    rc = uv_pipe_bind(&srv->pipe, path);
    if (rc == UV_EADDRINUSE) {
      // a socket file left behind by an earlier run: replace it
      uv_fs_t req;
      if (uv_fs_unlink(NULL, &req, path, NULL) == 0)
        rc = uv_pipe_bind(&srv->pipe, path);
      uv_fs_req_cleanup(&req);
    }
    umask(old);
  }
  if (rc == 0 && socket_access(srv, path))
    return -1;
  if (rc == 0)
    rc = uv_listen((uv_stream_t *)&srv->pipe, 128, conn_accept);
  if (rc < 0) {
    log_error("socket %s: %s", path, uv_strerror(rc));
    return -1;
  }
  log_info("listening on unix socket %s", path);
  return 0;
}

// The Unix socket first: once the TCP port answers (what readiness checks look at), the
// socket exists with its final mode.
int server_listen(server *srv) {
  if (srv->cfg.socket[0] && listen_pipe(srv))
    return -1;
  if (srv->cfg.viewer.http[0] && http_start(srv))   // before TCP too: readiness is TCP
    return -1;
  if (srv->cfg.listen[0] && listen_tcp(srv))
    return -1;
  if (srv->cfg.udp[0] && udp_start(srv, srv->cfg.udp))
    return -1;
  if (!srv->has_tcp && !srv->has_pipe)
    log_warn("no TCP address and no Unix socket: only UDP inputs are served");
  return 0;
}

// Periodic: slow-subscriber timeouts, and the shutdown sequence.
void server_tick(server *srv) {
  uint64_t now = server_now_ms();
  for (conn *c = srv->conns, *next; c; c = next) {
    next = c->next;
    if (c->closing)
      continue;
    if (conn_backlog(c) > srv->cfg.limits.backlog_soft_bytes) {
      if (!c->soft_since)
        c->soft_since = now;
      else if (now - c->soft_since > (uint64_t)srv->cfg.limits.slow_timeout_ms) {
        srv->disconnects_slow++;
        conn_close(c, "output backlog over the soft limit for too long");
        continue;
      }
    } else {
      c->soft_since = 0;
    }
    if (c->auth_pending && now >= c->auth_answer_ms) {   // the delayed answer to a wrong token
      c->auth_pending = 0;
      c->close_when_flushed = 1;
      reply_status(c, c->auth_answer_id, PARTITA__V1__STATUS__CODE__UNAUTHENTICATED,
                   "bad or missing token; closing");
      continue;
    }
    if (!c->identified && !c->auth_pending && !srv->stopping &&
        now - c->accepted_ms > (uint64_t)srv->cfg.limits.hello_timeout_ms) {
      srv->disconnects_idle++;
      conn_close(c, srv->cfg.auth_token[0] ? "no Hello with the token in time"
                                           : "no request in time");
      continue;
    }
    // at shutdown, give in-flight answers 1.5 s to drain, then close regardless
    if (srv->stopping && (now - srv->stop_ms > 1500 ||
                          (c->inflight == 0 && !c->writing && c->olen == 0)))
      conn_close(c, NULL);
  }
  if (srv->stopping && srv->conns == NULL && srv->nmodels > 0) {
    while (srv->nmodels > 0)
      server_unload(srv, srv->models[srv->nmodels - 1], NULL, 0);
  }
  if (srv->stopping && srv->conns == NULL && srv->nmodels == 0 && srv->loading == 0 &&
      !uv_is_closing((uv_handle_t *)&srv->timer)) {
    uv_close((uv_handle_t *)&srv->timer, NULL);
    uv_close((uv_handle_t *)&srv->sigint, NULL);
    uv_close((uv_handle_t *)&srv->sigterm, NULL);
    uv_close((uv_handle_t *)&srv->sighup, NULL);
    // the loop is about to end: a second SIGTERM must not kill a daemon already stopping
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
  }
  // A model still compiling (a huge one) is not waited for: the answer would go nowhere.
  if (srv->stopping && srv->conns == NULL && srv->nmodels == 0 && srv->loading > 0 &&
      now - srv->stop_ms > 2000 && !srv->abandoned) {
    log_warn("shutting down with %d model load(s) in progress: abandoned", srv->loading);
    srv->abandoned = 1;
    uv_stop(srv->loop);
  }
}

void server_shutdown(server *srv) {
  if (srv->stopping)
    return;
  // the browsers first, before `stopping` makes each closing connection run the tick: their
  // connections close here without closing each other under the sessions
  http_stop(srv);
  srv->stopping = 1;
  srv->stop_ms = server_now_ms();
  sd_notify(0, "STOPPING=1");
  log_info("shutting down: %d clients, %d models", srv->nclients, srv->nmodels);
  if (srv->has_tcp)
    uv_close((uv_handle_t *)&srv->tcp, NULL);
  if (srv->has_pipe) {
    uv_close((uv_handle_t *)&srv->pipe, NULL);
    unlink(srv->cfg.socket);
  }
  if (srv->has_udp)
    uv_close((uv_handle_t *)&srv->udp, NULL);
  srv->has_tcp = srv->has_pipe = srv->has_udp = 0;
  for (conn *c = srv->conns; c; c = c->next) {
    if (c->reading && !c->closing)
      uv_read_stop(&c->h.stream);
    c->reading = 0;
    subs_drop_conn(c);   // no more frames: only the answers still owed go out
  }
  for (int i = 0; i < srv->nmodels; i++)   // queued and running commands answer at once
    atomic_store(&srv->models[i]->draining, 1);
  server_tick(srv);
}

// ---------------------------------------------------------------------------------------------
// The callbacks of the connection layer.

static void conn_closing(conn *c) {
  subs_drop_conn(c);
  if (c->viewer)
    http_conn_closing(c);
}

static void work_done(server *srv) {
  if (srv->stopping)
    server_tick(srv);
}

void server_init(server *srv) {
  srv->on_request = dispatch;
  srv->on_conn_closing = conn_closing;
  srv->on_work_done = work_done;
  srv->send_status = reply_status;
}
