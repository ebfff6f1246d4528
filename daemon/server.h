// server.h: the loop-thread side of partitad: listeners, connections, models, subscriptions.
#ifndef PD_SERVER_H
#define PD_SERVER_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <uv.h>

#include "base/config.h"
#include "addr.h"
#include "envelope.h"
#include "frame.h"
#include "partita.pb-c.h"
#include "model/sim.h"

#define PD_PROTOCOL_VERSION 1
#define PD_READ_CHUNK 65536
// Frames a connection may send before Hello succeeds, when a token is configured: nothing is
// unpacked for a stranger beyond this.
#define PD_UNAUTH_FRAME_BYTES 4096

typedef Partita__V1__Request pb_request;
typedef Partita__V1__Response pb_response;
typedef Partita__V1__ServerMessage pb_server_message;

typedef struct server server;
typedef struct sub sub;

// A client connection. It owns its uv handle and is freed only in the close callback (or
// later, once the last request it has in flight completes).
typedef struct conn {
  union {
    uv_handle_t handle;
    uv_stream_t stream;
    uv_tcp_t tcp;
    uv_pipe_t pipe;
  } h;
  server *srv;
  uint64_t id;
  char peer[64];
  struct sockaddr_storage addr;   // remote address (TCP); family AF_UNSPEC on a Unix socket
  struct conn *prev, *next;
  ptc_frame_decoder dec;
  uint8_t *obuf;              // bytes not yet handed to uv_write (olen of ocap)
  size_t olen, ocap;
  uint8_t *wbuf;              // bytes of the write in flight (wlen)
  size_t wlen, wcap;
  uv_write_t wreq;
  int writing;
  int inflight;               // requests waiting for a model thread or the work pool
  int reading;                // uv_read_start active
  int authed;
  int identified;             // a first request was served (with a token: Hello succeeded)
  uint64_t accepted_ms;
  int closing;                // uv_close called
  int closed;                 // close callback ran
  int detached;               // no socket (tests, fuzzing): output stays in obuf
  int auth_pending;           // a wrong token, to be answered at auth_answer_ms (then closed)
  uint64_t auth_answer_ms, auth_answer_id;
  atomic_int gone;            // set at close: model threads drop its remaining work
  int close_when_flushed;     // after an error message or at shutdown
  uint64_t soft_since;        // ms when the backlog went over the soft limit (0: under)
  uint64_t event_mark;        // dedupes model events for connections with several subs
  void *viewer;               // the browser session using this socketless connection (http.c)
} conn;

// A subscription: frames of one model every k steps to a connection or a UDP peer.
struct sub {
  uint64_t id;
  conn *c;
  sim *s;
  uint32_t every_k, fields;
  int udp;
  struct sockaddr_storage peer;
  uint64_t seq, dropped;
  int dead;                   // its connection closed; freed at the next sweep
  sub *next;                  // in the model's list
};

struct server {
  uv_loop_t *loop;
  config cfg;
  uv_tcp_t tcp;
  uv_pipe_t pipe;
  uv_udp_t udp;
  int has_tcp, has_pipe, has_udp;
  uv_signal_t sigint, sigterm, sighup;
  uint64_t watchdog_usec;     // systemd's WatchdogSec (0: not asked), pinged from the timer
  uint64_t watchdog_ms;       // when the last ping went out
  uv_timer_t timer;
  conn *conns;
  int nclients;
  sim **models;               // (cfg.limits.max_models)
  int nmodels;
  uint64_t model_serial;      // the last sim.serial given
  int loading;                // LoadModel jobs in the work pool
  uint64_t bytes_in, bytes_out, requests;
  uint64_t disconnects_slow, disconnects_protocol, refused_clients, disconnects_idle;
  uint64_t auth_failures;
  uint64_t udp_malformed, udp_unknown_model;
  uint64_t next_sub_id, next_conn_id, event_mark;
  uint64_t start_ms, stop_ms;
  void *http;                 // the browser viewer (http.c), NULL when off
  int stopping;
  int abandoned;              // stopped with loads still compiling on the work pool
  char rbuf[PD_READ_CHUNK];   // read buffer: each read is consumed before the next
  // How the connection layer (conn.c) reaches the layers above it; set by server_init.
  void (*on_request)(conn *c, pb_request *req);   // a whole request arrived (takes it)
  void (*on_conn_closing)(conn *c);               // a connection starts closing
  void (*on_work_done)(server *srv);   // a close or a load completed: shutdown may proceed
  int (*send_status)(conn *c, uint64_t id, int code, const char *fmt, ...)
      __attribute__((format(printf, 4, 5)));
};

// The model registered under `name`, or NULL: the registry is the server's array of models.
static inline sim *server_find_model(server *srv, const char *name) {
  for (int i = 0; i < srv->nmodels; i++)
    if (strcmp(srv->models[i]->name, name) == 0)
      return srv->models[i];
  return NULL;
}

// conn.c: connections (nothing above it is called directly: see the callbacks in server)
void conn_accept(uv_stream_t *listener, int status);   // a listener's connection callback
void conn_close(conn *c, const char *why);
void conn_send_msg(conn *c, const ProtobufCMessage *m);
void conn_send_frame(conn *c, const uint8_t *body, size_t len, sub *sb);
size_t conn_backlog(const conn *c);
void conn_request_done(conn *c);      // a request in flight finished (may free c)
void conn_resume(conn *c);            // process buffered frames, read again
uint64_t server_now_ms(void);
// A connection without a socket (tests, fuzzing): conn_feed processes request bytes, and the
// answers accumulate in c->obuf (c->olen bytes). conn_close frees it once nothing is in flight.
conn *conn_detached(server *srv);
int conn_feed(conn *c, const void *data, size_t n);   // -1 once the stream is broken
// Open connections from c's network address, c included (limits.max_clients_per_peer); 0 for
// Unix socket and loopback connections, which the bound leaves alone.
int conn_count_from(server *srv, const conn *c);

// reply.c: answers
// A request waiting for a model command; the command's completion answers it.
typedef struct {
  conn *c;
  uint64_t id;
  int op;
  int gather_left;            // GetStats over every model
  Partita__V1__Stats *stats;
} req_ctx;
void reply(conn *c, uint64_t id, pb_response *r);   // r->status set by caller or OK
int reply_status(conn *c, uint64_t id, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int status_from_pt(int rc);
void reply_info(req_ctx *x, sim *s, int code, const char *msg);
void reply_latest(conn *c, uint64_t id, sim *s, uint32_t fields);   // GetState at once
int submit(conn *c, uint64_t id, int op, sim *s, sim_cmd *cmd);   // -1: answered with error
int reply_stats_request(conn *c, uint64_t id, const char *model);   // GetStats

// subs.c: subscriptions and the frames (stream and UDP) they get
void subs_on_async(sim *s);
int subs_add(conn *c, sim *s, const Partita__V1__Subscribe *rq, sub **out, char *err,
             size_t errlen);
int subs_remove(conn *c, uint64_t id);
void subs_drop_conn(conn *c);
void subs_drop_model(sim *s);

// models.c: the model registry, LoadModel, ListModels
int do_load(conn *c, uint64_t id, const Partita__V1__LoadModel *rq);
int do_list(conn *c, uint64_t id);
int server_add_model(server *srv, const char *name, pt_model *m, const sim_opts *o, sim **out,
                     char *err, size_t errlen);
// Unloads s. With c, the UnloadModel request id of c: returns 1 when its answer will come
// later (a recording finishing its file), 0 when the caller answers now.
int server_unload(server *srv, sim *s, conn *c, uint64_t id);
int parse_assigns(sim *s, Partita__V1__NamedValue **v, size_t n, pt_assign **out, int *nout,
                  char *err, size_t errlen);

// udp.c: UDP inputs
int udp_start(server *srv, const char *addr);

// heavy.c: Linearize, InverseDynamics, Equilibrium
int heavy_start(conn *c, sim *s, pb_request *req);   // takes ownership of req; 0 queued

// dispatch.c: the request table
void dispatch(conn *c, pb_request *req);   // takes ownership of req

// server.c: the whole (the only module that calls the ones above it all)
void server_init(server *srv);        // the connection layer's callbacks
int server_listen(server *srv);
void server_tick(server *srv);
void server_shutdown(server *srv);

// state.c
typedef struct {
  Partita__V1__StateFrame f;
  Partita__V1__Energy energy;
  Partita__V1__Residual residual;
  Partita__V1__BodyState *body;
  Partita__V1__BodyState **bodyp;
} state_msg;
void state_build(state_msg *m, sim *s, snap_hdr *h, uint32_t fields, int names);
void state_release(state_msg *m);
Partita__V1__ModelInfo *model_info_new(sim *s);
void model_info_free(Partita__V1__ModelInfo *mi);

#endif
