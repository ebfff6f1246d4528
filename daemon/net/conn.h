// conn.h: the connection layer of partitad: client connections (TCP and Unix socket) with
// their framing, output buffers and limits, and the state they share (struct net). It calls
// nothing above itself: a whole request, a closing connection, a status to send and work that
// completed go up through the hooks the layers above set (api/dispatch.c, server.c).
#ifndef PD_CONN_H
#define PD_CONN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/config.h"
#include "frame.h"
#include "partita.pb-c.h"

#define PD_READ_CHUNK 65536
// Frames a connection may send before Hello succeeds, when a token is configured: nothing is
// unpacked for a stranger beyond this.
#define PD_UNAUTH_FRAME_BYTES 4096

typedef Partita__V1__Request pb_request;
typedef struct net net;

// A client connection. It owns its uv handle and is freed only in the close callback (or
// later, once the last request it has in flight completes).
typedef struct conn {
  union {
    uv_handle_t handle;
    uv_stream_t stream;
    uv_tcp_t tcp;
    uv_pipe_t pipe;
  } h;
  net *net;
  uint64_t id;
  char peer[64];
  struct sockaddr_storage addr;   // remote address (TCP); family AF_UNSPEC on a Unix socket
  struct conn *prev, *next;
  wire_frame_decoder dec;
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
  int detached;               // no socket (tests, fuzzing, the viewer): output stays in obuf
  int auth_pending;           // a wrong token, to be answered at auth_answer_ms (then closed)
  uint64_t auth_answer_ms, auth_answer_id;
  atomic_int gone;            // set at close: model threads drop its remaining work
  int close_when_flushed;     // after an error message or at shutdown
  uint64_t soft_since;        // ms when the backlog went over the soft limit (0: under)
  uint64_t event_mark;        // dedupes model events for connections with several subs
} conn;

// What the connections share: the listeners, the list, the counters, the hooks up.
struct net {
  uv_loop_t *loop;
  const config *cfg;
  uv_tcp_t tcp;
  uv_pipe_t pipe;
  int has_tcp, has_pipe;
  conn *conns;
  int nclients;
  uint64_t next_conn_id;
  uint64_t bytes_in, bytes_out, requests;
  uint64_t disconnects_slow, disconnects_protocol, refused_clients, disconnects_idle;
  int stopping;               // shutting down: answers still owed go out, then all close
  uint64_t stop_ms;
  char rbuf[PD_READ_CHUNK];   // read buffer: each read is consumed before the next
  // The hooks (set by the layer above before anything is accepted):
  void (*on_request)(conn *c, pb_request *req);   // a whole request arrived (takes it)
  void (*on_conn_closing)(conn *c);               // a connection starts closing
  void (*on_work_done)(net *n);   // a close or a load completed: shutdown may proceed
  int (*send_status)(conn *c, uint64_t id, int code, const char *fmt, ...)
      __attribute__((format(printf, 4, 5)));
};

uint64_t net_now_ms(void);
void conn_accept(uv_stream_t *listener, int status);   // a listener's connection callback
void conn_close(conn *c, const char *why);
void conn_send_msg(conn *c, const ProtobufCMessage *m);
// A StateFrame event: `body` (a packed StateFrame shared by several subscribers) with the
// subscription's own fields added.
void conn_send_frame(conn *c, const uint8_t *body, size_t len, uint64_t subscription,
                     uint64_t sequence, uint64_t dropped);
size_t conn_backlog(const conn *c);
void conn_request_done(conn *c);      // a request in flight finished (may free c)
void conn_resume(conn *c);            // process buffered frames, read again
// A connection without a socket (tests, fuzzing, the viewer's sessions): conn_feed processes
// request bytes, and the answers accumulate in c->obuf (c->olen bytes). conn_close frees it
// once nothing is in flight.
conn *conn_detached(net *n);
int conn_feed(conn *c, const void *data, size_t n);   // -1 once the stream is broken
// Open connections from c's network address, c included (limits.max_clients_per_peer); 0 for
// Unix socket and loopback connections, which the bound leaves alone.
int conn_count_from(net *n, const conn *c);

// Periodic: slow subscribers over the soft backlog too long, the delayed answer to a wrong
// token, connections without a first request, and at shutdown the connections whose answers
// went out (or after 1.5 s, all).
void net_tick(net *n);
// Shutdown: listeners closed, nothing more read; what is owed still goes out.
void net_shutdown(net *n);

#endif
