// http.c: partitad's browser viewer (docs/viewer.md). Debian's libwebsockets serves, on the
// daemon's own libuv loop (LWS_SERVER_OPTION_LIBUV with the loop as a foreign loop):
//   /            the page (daemon/web, or viewer.web_root)
//   /three/      three.js from Debian's libjs-three, where the package installed it
//   /mesh/M/I.x  mesh file I of model M (only files a loaded model names, STL/DAE/OBJ)
//   WebSocket    subprotocol "partita-viewer": JSON both ways, plus binary pose frames.
//
// Pose frames are cut from each model's latest published state (the triple buffer of sim.c)
// by a loop-thread timer at viewer.fps, so the model threads never see a browser: a slow
// browser's queue (viewer.queue_frames) drops its oldest frame, and a browser that has not
// taken a frame for viewer.drop_limit frames is disconnected; both are counted in GetStats.
// Requests from the page (SetMode, Step, Reset, SetInputs, GetStats, Subscribe, ...) are the
// protocol's own Request messages written as JSON: they go through a connection without a
// socket (conn_detached), so every check of the TCP path applies, and the answers come back
// as JSON.
#include <dlfcn.h>
#include <errno.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "addr.h"
#include "base/log.h"
#include "base/text.h"
#include "model/state.h"
#include "viewer/http.h"
#include "viewer/pbjson.h"

#ifndef PD_WEB_SRC
#define PD_WEB_SRC ""
#endif
#ifndef PD_WEB_INSTALLED
#define PD_WEB_INSTALLED ""
#endif

#define MAX_TEXT_IN 65536          // a JSON message from the page
#define MAX_TEXT_QUEUE 512         // answers and events waiting for a browser
#define SNDBUF_BYTES (256 * 1024)  // bounds what the kernel holds for a browser that stalls
#define FRAME_HEAD 10              // doubles before the bodies (docs/viewer.md)

typedef struct text_msg {
  struct text_msg *next;
  size_t len;
  unsigned char buf[];             // LWS_PRE + len
} text_msg;

typedef struct session {
  struct session *prev, *next;     // the viewer's list
  struct lws *wsi;
  viewer *v;
  int authed;                      // token given (or none configured)
  conn *c;                         // requests from the page, created at the first one
  wire_frame_decoder dec;           // the answers in c->obuf
  int dec_init;
  char watch[SIM_NAME];            // the model whose poses are streamed ("" none)
  uint64_t watch_serial;           // which load of it (sim.serial)
  // pose frames: a ring of q slots of cap bytes each (LWS_PRE before each frame)
  unsigned char *ring;
  size_t cap, *len;
  int q, head, count;
  int drops_in_row;
  text_msg *text_head, *text_tail;
  int ntext;
  char *rx;                        // a text message arriving in fragments
  size_t rxlen;
  int closing;
} session;

struct viewer {
  server *srv;
  stats_source stats;              // the counters below, added to GetStats
  struct lws_context *ctx;
  struct lws_http_mount mounts[3];
  char web_root[CFG_STR];
  uv_timer_t timer;
  int timer_on;
  session *sessions;
  unsigned char *frame;            // the frame being cut (frame_cap bytes)
  size_t frame_cap;
  uint64_t clients, frames, dropped_frames, dropped_clients, auth_failures, refused;
  int nsessions;
  int port;
  char url[CFG_STR + 16];
};

// ---------------------------------------------------------------------------------------------
// Queues

static void ring_free(session *s) {
  free(s->ring);
  free(s->len);
  s->ring = NULL;
  s->len = NULL;
  s->cap = 0;
  s->count = s->head = 0;
}

static int ring_alloc(session *s, size_t frame_bytes, int q) {
  ring_free(s);
  s->cap = LWS_PRE + frame_bytes;
  s->ring = malloc(s->cap * (size_t)q);
  s->len = calloc((size_t)q, sizeof(size_t));
  s->q = q;
  if (!s->ring || !s->len) {
    ring_free(s);
    return -1;
  }
  return 0;
}

// A frame for the browser: the oldest is dropped when the ring is full.
static void ring_push(session *s, const unsigned char *frame, size_t n) {
  viewer *v = s->v;
  if (!s->ring || n + LWS_PRE > s->cap)
    return;
  if (s->count == s->q) {   // the oldest goes: the head moves on
    s->head = (s->head + 1) % s->q;
    s->count--;
    v->dropped_frames++;
    if (++s->drops_in_row >= v->srv->cfg.viewer.drop_limit && !s->closing) {
      v->dropped_clients++;
      s->closing = 1;
      log_info("viewer: a browser took no frame for %d frames: disconnected", s->drops_in_row);
      lws_set_timeout(s->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
      return;
    }
  }
  int slot = (s->head + s->count) % s->q;
  memcpy(s->ring + (size_t)slot * s->cap + LWS_PRE, frame, n);
  s->len[slot] = n;
  s->count++;
  lws_callback_on_writable(s->wsi);
}

static void text_push(session *s, const char *json) {
  if (s->closing)
    return;
  if (s->ntext >= MAX_TEXT_QUEUE) {
    s->closing = 1;
    s->v->dropped_clients++;
    log_info("viewer: a browser let %d answers pile up: disconnected", s->ntext);
    lws_set_timeout(s->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
    return;
  }
  size_t n = strlen(json);
  text_msg *t = malloc(sizeof(*t) + LWS_PRE + n);
  if (!t)
    return;
  t->next = NULL;
  t->len = n;
  memcpy(t->buf + LWS_PRE, json, n);
  if (s->text_tail)
    s->text_tail->next = t;
  else
    s->text_head = t;
  s->text_tail = t;
  s->ntext++;
  lws_callback_on_writable(s->wsi);
}

static void text_push_obj(session *s, const char *key, json_object *val) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, key, val);
  text_push(s, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
  json_object_put(o);
}

static void text_error(session *s, const char *msg) {
  text_push_obj(s, "error", json_object_new_string(msg));
}

// ---------------------------------------------------------------------------------------------
// Requests through a connection without a socket

// The answers and events the connection has produced, as JSON, to the browser.
static void drain_conn(session *s) {
  conn *c = s->c;
  if (!c || c->olen == 0)
    return;
  if (wire_frame_feed(&s->dec, c->obuf, c->olen) != WIRE_FRAME_OK) {
    c->olen = 0;
    return;
  }
  c->olen = 0;
  const uint8_t *msg;
  size_t len;
  while (wire_frame_next(&s->dec, &msg, &len) == WIRE_FRAME_OK) {
    Partita__V1__ServerMessage *m = partita__v1__server_message__unpack(NULL, len, msg);
    if (!m)
      continue;
    json_object *j = pbjson_from_message(&m->base);
    partita__v1__server_message__free_unpacked(m, NULL);
    if (j)
      text_push_obj(s, "message", j);
  }
}

static void do_request(session *s, json_object *rq) {
  server *srv = s->v->srv;
  if (!s->c) {
    s->c = conn_detached(&srv->net);
    if (!s->c) {
      text_error(s, "out of memory");
      return;
    }
    // the browser proved the token (or none is configured) when it opened: as after Hello
    s->c->authed = 1;
    s->c->identified = 1;
    s->c->dec.max_frame = srv->cfg.limits.max_frame_bytes;
    snprintf(s->c->peer, sizeof(s->c->peer), "#%llu (viewer)", (unsigned long long)s->c->id);
    if (s->dec_init)   // a connection before this one was closed by the server
      wire_frame_decoder_free(&s->dec);
    wire_frame_decoder_init(&s->dec, (size_t)1 << 30);
    s->dec_init = 1;
  }
  char err[256];
  ProtobufCMessage *m = NULL;
  if (pbjson_to_message(&partita__v1__request__descriptor, rq, &m, err, sizeof(err))) {
    text_error(s, err);
    return;
  }
  if (((Partita__V1__Request *)m)->op_case == PARTITA__V1__REQUEST__OP_HELLO) {
    // the token went in {"token"} when the page opened; a failed Hello would close the
    // connection under the session
    protobuf_c_message_free_unpacked(m, NULL);
    text_error(s, "Hello is not sent through the viewer: send {\"token\": ...} instead");
    return;
  }
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *buf = malloc(n + WIRE_FRAME_HEADER_MAX);
  if (buf) {
    size_t h = wire_varint_encode(n, buf);
    protobuf_c_message_pack(m, buf + h);
    conn_feed(s->c, buf, h + n);   // on a broken stream it closes: http_conn_closing
  }
  free(buf);
  protobuf_c_message_free_unpacked(m, NULL);
  if (s->c)
    drain_conn(s);
}

// ---------------------------------------------------------------------------------------------
// Model information and pose frames

static json_object *info_json(sim *s) {
  Partita__V1__ModelInfo *mi = model_info_new(s);
  if (!mi)
    return NULL;
  json_object *j = pbjson_from_message(&mi->base);
  model_info_free(mi);
  return j;
}

static void send_models(session *s) {
  server *srv = s->v->srv;
  json_object *a = json_object_new_array();
  for (int i = 0; i < srv->nmodels; i++) {
    json_object *j = info_json(srv->models[i]);
    if (j)
      json_object_array_add(a, j);
  }
  text_push_obj(s, "models", a);
}

static size_t frame_bytes(const sim *m) {
  return sizeof(double) * (size_t)(FRAME_HEAD + 7 * m->nb + 2 * m->nc + m->ni + m->nsig);
}

static void watch(session *s, const char *name) {
  sim *m = registry_find(s->v->srv, name);
  if (!m) {
    text_error(s, "no such model");
    return;
  }
  if (ring_alloc(s, frame_bytes(m), s->v->srv->cfg.viewer.queue_frames)) {
    s->watch[0] = 0;   // watching nothing rather than a stale layout
    text_error(s, "out of memory");
    return;
  }
  if (s->watch != name)
    snprintf(s->watch, sizeof(s->watch), "%s", name);
  s->watch_serial = entry_of(m)->serial;
  s->drops_in_row = 0;
  json_object *j = info_json(m);
  if (j)
    text_push_obj(s, "info", j);
}

// Frame layout (little-endian doubles): version 1, time, step, kinetic, potential, overran,
// mode, nb, nc, ni; then per body x y z e0 e1 e2 e3; then q (nc), qd (nc), u (ni), then the
// control signals (ModelInfo.signals' count, docs/controls.md).
static size_t cut_frame(viewer *v, sim *m) {
  size_t n = frame_bytes(m);
  if (n > v->frame_cap) {
    unsigned char *f = realloc(v->frame, n);
    if (!f)
      return 0;
    v->frame = f;
    v->frame_cap = n;
  }
  snap_hdr *h = (snap_hdr *)sim_latest(m);
  double *d = (double *)(void *)v->frame;
  double head[FRAME_HEAD] = {1, h->time, (double)h->step, h->kinetic, h->potential,
                             h->overran, h->mode, m->nb, m->nc, m->ni};
  memcpy(d, head, sizeof(head));
  d += FRAME_HEAD;
  const double *body = snap_body(h, m->nc, m->ni);
  for (int b = 0; b < m->nb; b++)
    memcpy(d + 7 * b, body + 13 * b, 7 * sizeof(double));
  d += 7 * m->nb;
  memcpy(d, snap_q(h), sizeof(double) * (size_t)m->nc);
  memcpy(d + m->nc, snap_qd(h, m->nc), sizeof(double) * (size_t)m->nc);
  memcpy(d + 2 * m->nc, snap_u(h, m->nc), sizeof(double) * (size_t)m->ni);
  if (m->nsig)  // the latest record holds every field
    memcpy(d + 2 * m->nc + m->ni, snap_ctl(h, m->nc, m->ni, m->nb) + m->nx,
           sizeof(double) * (size_t)m->nsig);
  return n;
}

static void on_tick(uv_timer_t *t) {
  viewer *v = t->data;
  server *srv = v->srv;
  for (session *s = v->sessions; s; s = s->next)
    drain_conn(s);
  // A watched model unloaded: the page is told; unloaded and loaded again under the same
  // name (within a tick): the page gets the new model's info and frames of the new layout.
  for (session *s = v->sessions; s; s = s->next) {
    if (!s->watch[0] || s->closing)
      continue;
    sim *m = registry_find(srv, s->watch);
    if (!m) {
      s->watch[0] = 0;
      ring_free(s);
      text_push_obj(s, "unloaded", json_object_new_boolean(1));
    } else if (entry_of(m)->serial != s->watch_serial) {
      watch(s, s->watch);
    }
  }
  for (int i = 0; i < srv->nmodels; i++) {
    sim *m = srv->models[i];
    size_t n = 0;
    for (session *s = v->sessions; s; s = s->next) {
      if (s->closing || strcmp(s->watch, m->name))
        continue;
      if (n == 0 && (n = cut_frame(v, m)) == 0)
        break;
      ring_push(s, v->frame, n);
      v->frames++;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The WebSocket protocol

static void on_text(session *s, const char *text, size_t len) {
  server *srv = s->v->srv;
  json_tokener *tok = json_tokener_new_ex(16);
  json_object *j = tok ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
  if (tok)
    json_tokener_free(tok);
  if (!j || !json_object_is_type(j, json_type_object)) {
    text_error(s, "a JSON object expected");
    if (j)
      json_object_put(j);
    return;
  }
  json_object *val;
  if (json_object_object_get_ex(j, "token", &val)) {
    const char *tk = json_object_is_type(val, json_type_string) ? json_object_get_string(val)
                                                                 : "";
    if (!srv->cfg.auth_token[0] || text_equal_secret(tk ? tk : "", srv->cfg.auth_token)) {
      s->authed = 1;
      text_push_obj(s, "authed", json_object_new_boolean(1));
    } else {
      s->v->auth_failures++;
      srv->auth_failures++;
      log_warn("viewer: a browser gave a wrong token");
      text_error(s, "wrong token");
      s->closing = 1;
      lws_set_timeout(s->wsi, PENDING_TIMEOUT_USER_OK, 1);   // after the answer goes out
    }
  } else if (!s->authed) {
    text_push_obj(s, "need_token", json_object_new_boolean(1));
  } else if (json_object_object_get_ex(j, "models", &val)) {
    send_models(s);
  } else if (json_object_object_get_ex(j, "watch", &val)) {
    if (json_object_is_type(val, json_type_string))
      watch(s, json_object_get_string(val));
    else
      text_error(s, "watch: a model name expected");
  } else if (json_object_object_get_ex(j, "request", &val)) {
    if (json_object_is_type(val, json_type_object))
      do_request(s, val);
    else
      text_error(s, "request: an object expected");
  } else {
    text_error(s, "expected one of token, models, watch, request");
  }
  json_object_put(j);
}

// The server closed a session's connection (a limit, shutdown): the session forgets it, and
// makes a new one at its next request.
void http_conn_closing(viewer *v, conn *c) {
  for (session *s = v->sessions; s; s = s->next)
    if (s->c == c)
      s->c = NULL;
}

static void session_end(session *s) {
  viewer *v = s->v;
  v->nsessions--;
  if (s->prev)
    s->prev->next = s->next;
  else if (v->sessions == s)
    v->sessions = s->next;
  if (s->next)
    s->next->prev = s->prev;
  s->prev = s->next = NULL;
  if (s->c) {
    conn *c = s->c;
    s->c = NULL;
    conn_close(c, NULL);
  }
  if (s->dec_init)
    wire_frame_decoder_free(&s->dec);
  s->dec_init = 0;
  ring_free(s);
  while (s->text_head) {
    text_msg *t = s->text_head;
    s->text_head = t->next;
    free(t);
  }
  s->text_tail = NULL;
  free(s->rx);
  s->rx = NULL;
}

// A WebSocket from a page of another site is refused: browsers let any page open one to
// localhost, and this socket drives models. Browsers always send Origin; it must name the
// host the request was sent to (the page this port served). A client without Origin is not
// a browser page (the token, when set, still applies).
static int same_origin(struct lws *wsi) {
  char origin[CFG_STR + 16], host[CFG_STR + 16];
  if (lws_hdr_copy(wsi, origin, sizeof(origin), WSI_TOKEN_ORIGIN) <= 0)
    return 1;
  if (lws_hdr_copy(wsi, host, sizeof(host), WSI_TOKEN_HOST) <= 0)
    return 0;
  const char *o = !strncmp(origin, "http://", 7)    ? origin + 7
                  : !strncmp(origin, "https://", 8) ? origin + 8
                                                    : NULL;
  return o && !strcmp(o, host);
}

static int ws_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                 size_t len) {
  session *s = user;
  struct lws_context *ctx = lws_get_context(wsi);
  viewer *v = ctx ? lws_context_user(ctx) : NULL;
  if (reason == LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION) {
    if (same_origin(wsi))
      return 0;
    if (v)
      v->refused++;
    log_info("viewer: a WebSocket from another site's page refused (Origin is not this host)");
    return -1;
  }
  if (reason != LWS_CALLBACK_ESTABLISHED && (!s || !s->v))
    return 0;   // not established, or ended by http_stop
  switch (reason) {
    case LWS_CALLBACK_ESTABLISHED: {
      memset(s, 0, sizeof(*s));
      if (v->nsessions >= v->srv->cfg.viewer.max_browsers) {
        v->refused++;
        log_info("viewer: a browser refused: %d connected (viewer.max_browsers)", v->nsessions);
        return -1;
      }
      v->nsessions++;
      s->wsi = wsi;
      s->v = v;
      s->authed = v->srv->cfg.auth_token[0] == 0;
      s->next = v->sessions;
      if (v->sessions)
        v->sessions->prev = s;
      v->sessions = s;
      v->clients++;
      int sndbuf = SNDBUF_BYTES;
      setsockopt(lws_get_socket_fd(wsi), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
      json_object *hello = json_object_new_object();
      json_object_object_add(hello, "server", json_object_new_string("partitad " PT_VERSION));
      json_object_object_add(hello, "need_token", json_object_new_boolean(!s->authed));
      json_object_object_add(hello, "fps", json_object_new_int(v->srv->cfg.viewer.fps));
      text_push_obj(s, "hello", hello);
      return 0;
    }
    case LWS_CALLBACK_RECEIVE: {
      if (lws_frame_is_binary(wsi))
        return -1;   // the page sends text only
      if (s->rxlen + len > MAX_TEXT_IN) {
        text_error(s, "message too long");
        return -1;
      }
      char *rx = realloc(s->rx, s->rxlen + len + 1);
      if (!rx)
        return -1;
      s->rx = rx;
      memcpy(s->rx + s->rxlen, in, len);
      s->rxlen += len;
      if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi))
        return 0;
      s->rx[s->rxlen] = 0;
      on_text(s, s->rx, s->rxlen);
      s->rxlen = 0;
      return 0;
    }
    case LWS_CALLBACK_SERVER_WRITEABLE: {
      if (s->text_head) {
        text_msg *t = s->text_head;
        int rc = lws_write(wsi, t->buf + LWS_PRE, t->len, LWS_WRITE_TEXT);
        s->text_head = t->next;
        if (!s->text_head)
          s->text_tail = NULL;
        s->ntext--;
        free(t);
        if (rc < 0)
          return -1;
      } else if (s->count > 0) {
        unsigned char *f = s->ring + (size_t)s->head * s->cap;
        int rc = lws_write(wsi, f + LWS_PRE, s->len[s->head], LWS_WRITE_BINARY);
        s->head = (s->head + 1) % s->q;
        s->count--;
        s->drops_in_row = 0;
        if (rc < 0)
          return -1;
      }
      if (s->text_head || s->count > 0)
        lws_callback_on_writable(wsi);
      return 0;
    }
    case LWS_CALLBACK_CLOSED:
      session_end(s);
      s->v = NULL;
      return 0;
    default:
      return 0;
  }
}

// /mesh/MODEL/INDEX.EXT
static int serve_mesh(struct lws *wsi, viewer *v, const char *path) {
  char name[SIM_NAME];
  int index = -1;
  const char *p = path[0] == '/' ? path + 1 : path;
  if (!strncmp(p, "mesh/", 5))   // lws passes the whole path to a callback mount
    p += 5;
  const char *slash = strrchr(p, '/');
  if (slash && (size_t)(slash - p) < sizeof(name)) {
    memcpy(name, p, (size_t)(slash - p));
    name[slash - p] = 0;
    index = atoi(slash + 1);
  }
  sim *m = slash ? registry_find(v->srv, name) : NULL;
  const pt_visual *vis = m ? pt_model_visual(m->m, index) : NULL;
  if (!vis || vis->type != PT_VISUAL_MESH || !vis->mesh[0] || !pt_mesh_kind_ok(vis->mesh)) {
    if (lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL))
      return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
  }
  const char *dot = strrchr(vis->mesh, '.');
  const char *mime = (dot && (dot[1] | 0x20) == 'd') ? "model/vnd.collada+xml"
                     : (dot && (dot[1] | 0x20) == 'o') ? "text/plain"
                                                        : "model/stl";
  int rc = lws_serve_http_file(wsi, vis->mesh, mime, NULL, 0);
  if (rc < 0 || (rc > 0 && lws_http_transaction_completed(wsi)))
    return -1;
  return 0;
}

static int http_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                   size_t len) {
  struct lws_context *ctx = lws_get_context(wsi);
  viewer *v = ctx ? lws_context_user(ctx) : NULL;
  if (reason == LWS_CALLBACK_HTTP && v) {
    log_debug("viewer: GET mesh %s", (const char *)in);
    return serve_mesh(wsi, v, (const char *)in);
  }
  return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols protocols[] = {
    {"http", http_cb, 0, 0, 0, NULL, 0},
    {"partita-viewer", ws_cb, sizeof(session), 4096, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0}};

static void lws_to_log(int level, const char *line) {
  char buf[512];
  snprintf(buf, sizeof(buf), "%s", line);
  size_t n = strlen(buf);
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
    buf[--n] = 0;
  if (level & LLL_ERR)
    log_warn("viewer: libwebsockets: %s", buf);
  else
    log_debug("viewer: libwebsockets: %s", buf);
}

static int has_index(const char *dir) {
  char p[CFG_STR + 16];
  struct stat st;
  snprintf(p, sizeof(p), "%s/index.html", dir);
  return dir[0] && stat(p, &st) == 0;
}

// 1 when HOST:PORT can be bound now. libwebsockets creates a context even when its listening
// socket cannot be bound, and such a context cannot be destroyed safely on a foreign loop
// (its close callbacks use it after it is freed): the port is tried first.
static int can_bind(const char *host, int port) {
  struct sockaddr_storage ss;
  int v6 = strchr(host, ':') != NULL;
  if ((v6 ? uv_ip6_addr(host, port, (struct sockaddr_in6 *)&ss)
          : uv_ip4_addr(host, port, (struct sockaddr_in *)&ss)) != 0)
    return 1;   // a name: left to libwebsockets
  int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return 1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  int ok = bind(fd, (struct sockaddr *)&ss, v6 ? sizeof(struct sockaddr_in6)
                                               : sizeof(struct sockaddr_in)) == 0;
  close(fd);
  return ok;
}

// The context libwebsockets is still destroying: on a foreign loop the first
// lws_context_destroy() closes its handles, and the context is freed by a second call once the
// loop has run their close callbacks (libwebsockets writes NULL here when it is gone).
static struct lws_context *ctx_pending;

void http_finish(uv_loop_t *loop) {
  if (!ctx_pending)
    return;
  lws_context_destroy(ctx_pending);
  uv_run(loop, UV_RUN_DEFAULT);   // the close callbacks of that second stage
}

static void add_stats(stats_source *src, Partita__V1__ServerStats *st) {
  viewer *v = (viewer *)(void *)((char *)src - offsetof(viewer, stats));
  st->viewer_clients = (uint32_t)v->nsessions;
  st->viewer_refused_clients = v->refused;
  st->viewer_frames = v->frames;
  st->viewer_dropped_frames = v->dropped_frames;
  st->viewer_dropped_clients = v->dropped_clients;
}

int http_start(server *srv, viewer **out) {
  const config *cfg = &srv->cfg;
  *out = NULL;
  char host[128];
  int port;
  if (wire_split_addr(cfg->viewer.http, host, sizeof(host), &port)) {
    log_error("http: bad address '%s' (HOST:PORT)", cfg->viewer.http);
    return -1;
  }
  viewer *v = calloc(1, sizeof(*v));
  if (!v)
    return -1;
  v->srv = srv;
  const char *root = cfg->viewer.web_root[0]       ? cfg->viewer.web_root
                     : has_index(PD_WEB_INSTALLED) ? PD_WEB_INSTALLED
                                                   : PD_WEB_SRC;
  snprintf(v->web_root, sizeof(v->web_root), "%s", root);
  if (!has_index(v->web_root))
    log_warn("viewer: no index.html in '%s' (viewer.web_root): the page will not load",
             v->web_root);
  // mounts: "/" the page, "/three" three.js, "/mesh" meshes (callback)
  struct lws_http_mount *mt = v->mounts;
  mt[2].mountpoint = "/mesh";
  mt[2].mountpoint_len = 5;
  mt[2].origin = "http";
  mt[2].origin_protocol = LWSMPRO_CALLBACK;
  mt[1].mount_next = &mt[2];
  mt[1].mountpoint = "/three";
  mt[1].mountpoint_len = 6;
  mt[1].origin = cfg->viewer.three_root;
  mt[1].origin_protocol = LWSMPRO_FILE;
  mt[0].mount_next = &mt[1];
  mt[0].mountpoint = "/";
  mt[0].mountpoint_len = 1;
  mt[0].origin = v->web_root;
  mt[0].def = "index.html";
  mt[0].origin_protocol = LWSMPRO_FILE;
  lws_set_log_level(LLL_ERR | LLL_WARN, lws_to_log);
  // libwebsockets loads its libuv support as a plugin and unloads it when a context is
  // destroyed, while the close callbacks of its handles may still be pending on our loop:
  // keep the plugin mapped for the life of the process.
  static void *uv_plugin;
  if (!uv_plugin)
    uv_plugin = dlopen("libwebsockets-evlib_uv.so", RTLD_NOW | RTLD_NODELETE);
  struct lws_context_creation_info info;
  memset(&info, 0, sizeof(info));
  void *loops[1] = {srv->net.loop};
  info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_VALIDATE_UTF8 |
                 LWS_SERVER_OPTION_DISABLE_IPV6 * (strchr(host, ':') == NULL);
  info.foreign_loops = loops;
  info.port = port;
  info.iface = host;
  info.protocols = protocols;
  info.mounts = mt;
  info.user = v;
  info.vhost_name = "partitad";
  info.server_string = "partitad";
  info.pcontext = &ctx_pending;
  v->ctx = can_bind(host, port) ? lws_create_context(&info) : NULL;
  ctx_pending = v->ctx;
  struct lws_vhost *vh = v->ctx ? lws_get_vhost_by_name(v->ctx, "partitad") : NULL;
  if (v->ctx && (!vh || lws_get_vhost_listen_port(vh) <= 0)) {
    // taken between the try and the bind: this context is left as it is (see can_bind)
    v->ctx = NULL;
  }
  if (!v->ctx) {
    free(v);
    if (!cfg->viewer.http_set) {   // the default port taken (another daemon): go on without
      log_warn("viewer: could not serve http on %s (in use?); viewer off. Set http: or "
               "--http HOST:PORT, or --no-http", cfg->viewer.http);
      return 0;
    }
    log_error("http %s: cannot listen there (in use, or not an address of this host)",
              cfg->viewer.http);
    return -1;
  }
  v->port = lws_get_vhost_listen_port(vh);
  uv_timer_init(srv->net.loop, &v->timer);
  v->timer.data = v;
  v->timer_on = 1;
  uint64_t period = (uint64_t)(1000 / (cfg->viewer.fps > 0 ? cfg->viewer.fps : 60));
  uv_timer_start(&v->timer, on_tick, period, period ? period : 1);
  int v6 = strchr(host, ':') != NULL;
  snprintf(v->url, sizeof(v->url), "http://%s%s%s:%d/", v6 ? "[" : "", host, v6 ? "]" : "",
           v->port);
  v->stats.add = add_stats;
  srv->viewer_stats = &v->stats;
  srv->viewer_url = v->url;
  *out = v;
  log_info("viewer on %s", v->url);
  return 0;
}

static void timer_closed(uv_handle_t *h) {
  viewer *v = h->data;
  free(v->frame);
  free(v);
}

void http_stop(viewer *v) {
  if (!v)
    return;
  v->srv->viewer_stats = NULL;
  v->srv->viewer_url = "";
  // the sessions end here (their connections close); libwebsockets closes their sockets
  // as the context goes, and their callbacks then find nothing to do
  while (v->sessions) {
    session *s = v->sessions;
    session_end(s);
    s->v = NULL;
  }
  lws_context_destroy(v->ctx);
  uv_close((uv_handle_t *)&v->timer, timer_closed);
}

int http_port(const viewer *v) { return v ? v->port : 0; }
