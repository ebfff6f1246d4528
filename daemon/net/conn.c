// conn.c: client connections: accepting, reading frames, the output buffer and its backlog
// limits, closing, the periodic checks. It calls nothing above itself: requests, closes and
// status replies go through the hooks of struct net (conn.h), which the layer above sets.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "envelope.h"
#include "net/conn.h"

uint64_t net_now_ms(void) { return uv_hrtime() / 1000000; }

static void conn_free(conn *c) {
  wire_frame_decoder_free(&c->dec);
  free(c->obuf);
  free(c->wbuf);
  free(c);
}

static void closed(conn *c) {
  net *n = c->net;
  c->closed = 1;
  if (c->prev)
    c->prev->next = c->next;
  else
    n->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  n->nclients--;
  if (c->inflight == 0)
    conn_free(c);
  if (n->on_work_done)
    n->on_work_done(n);
}

static void on_close(uv_handle_t *h) { closed(h->data); }

void conn_close(conn *c, const char *why) {
  if (c->closing)
    return;
  c->closing = 1;
  atomic_store(&c->gone, 1);
  if (why)   // an ordinary goodbye is not news; anything else is
    log_msg(strcmp(why, "peer closed") ? LOG_INFO : LOG_DEBUG, "client %s: closed: %s", c->peer,
            why);
  if (c->net->on_conn_closing)
    c->net->on_conn_closing(c);
  if (c->detached) {
    closed(c);
    return;
  }
  if (c->reading)
    uv_read_stop(&c->h.stream);
  c->reading = 0;
  uv_close(&c->h.handle, on_close);
}

void conn_request_done(conn *c) {
  c->inflight--;
  if (c->closed) {
    if (c->inflight == 0)
      conn_free(c);
    return;
  }
  if (c->closing)
    return;
  if (!c->reading && !c->close_when_flushed && !c->net->stopping &&
      c->inflight < c->net->cfg->limits.max_in_flight)
    conn_resume(c);
  if ((c->close_when_flushed || c->net->stopping) && c->inflight == 0 && !c->writing &&
      c->olen == 0)
    conn_close(c, c->net->stopping ? NULL : "after error");
}

size_t conn_backlog(const conn *c) {
  return c->olen + (c->detached ? 0 : uv_stream_get_write_queue_size(&c->h.stream));
}

static void start_write(conn *c);

static void on_write(uv_write_t *w, int status) {
  conn *c = w->data;
  c->writing = 0;
  c->net->bytes_out += status == 0 ? c->wlen : 0;
  c->wlen = 0;
  if (c->closing)
    return;
  if (status < 0) {
    conn_close(c, uv_strerror(status));
    return;
  }
  if (c->olen) {
    start_write(c);
  } else if ((c->close_when_flushed || c->net->stopping) && c->inflight == 0) {
    conn_close(c, c->net->stopping ? NULL : "after error");
  }
}

static void start_write(conn *c) {
  if (c->writing || c->olen == 0 || c->closing || c->detached)
    return;
  // swap buffers: the output buffer becomes the write in flight
  uint8_t *b = c->wbuf;
  size_t cap = c->wcap;
  c->wbuf = c->obuf;
  c->wcap = c->ocap;
  c->wlen = c->olen;
  c->obuf = b;
  c->ocap = cap;
  c->olen = 0;
  uv_buf_t buf = uv_buf_init((char *)c->wbuf, (unsigned)c->wlen);
  c->wreq.data = c;
  int rc = uv_write(&c->wreq, &c->h.stream, &buf, 1, on_write);
  if (rc < 0) {
    conn_close(c, uv_strerror(rc));
    return;
  }
  c->writing = 1;
}

// Room for n more bytes in the output buffer; closes the connection past the hard limit.
static uint8_t *reserve(conn *c, size_t n) {
  if (c->closing)
    return NULL;
  if (conn_backlog(c) + n > c->net->cfg->limits.backlog_hard_bytes) {
    c->net->disconnects_slow++;
    conn_close(c, "output backlog over the hard limit");
    return NULL;
  }
  if (c->olen + n > c->ocap) {
    size_t cap = c->ocap ? c->ocap : 4096;
    while (cap < c->olen + n)
      cap *= 2;
    uint8_t *b = realloc(c->obuf, cap);
    if (!b) {
      conn_close(c, "out of memory");
      return NULL;
    }
    c->obuf = b;
    c->ocap = cap;
  }
  return c->obuf + c->olen;
}

void conn_send_msg(conn *c, const ProtobufCMessage *m) {
  size_t len = protobuf_c_message_get_packed_size(m);
  uint8_t hdr[WIRE_FRAME_HEADER_MAX];
  size_t h = wire_varint_encode(len, hdr);
  uint8_t *p = reserve(c, h + len);
  if (!p)
    return;
  memcpy(p, hdr, h);
  protobuf_c_message_pack(m, p + h);
  c->olen += h + len;
  start_write(c);
}

// A StateFrame event from a body shared by every subscriber of the same field selection. The
// per-subscription fields are appended after the body (protobuf merges repeated occurrences
// of a message's fields, so body + tail is one StateFrame) and the two envelopes
// (ServerMessage.event = 2, Event.frame = 1) are written by hand around it.
void conn_send_frame(conn *c, const uint8_t *body, size_t len, uint64_t subscription,
                     uint64_t sequence, uint64_t dropped) {
  wire_envelope e;
  wire_state_envelope(&e, len, subscription, sequence, dropped);
  uint8_t *p = reserve(c, e.nhead + len + e.ntail);
  if (!p)
    return;
  memcpy(p, e.head, e.nhead);
  memcpy(p + e.nhead, body, len);
  memcpy(p + e.nhead + len, e.tail, e.ntail);
  c->olen += e.nhead + len + e.ntail;
  start_write(c);
}

// Broken framing: say why (request id 0) and close once that is written.
static void protocol_error(conn *c, const char *why) {
  c->net->disconnects_protocol++;
  log_info("client %s: protocol error: %s", c->peer, why);
  c->net->send_status(c, 0, PARTITA__V1__STATUS__CODE__INVALID_ARGUMENT,
                     "protocol error: %s; closing", why);
  c->close_when_flushed = 1;
  if (c->reading)
    uv_read_stop(&c->h.stream);
  c->reading = 0;
  if (!c->writing && c->olen == 0 && c->inflight == 0)
    conn_close(c, NULL);
}

static void process(conn *c) {
  while (!c->closing && !c->close_when_flushed && !c->auth_pending &&
         c->inflight < c->net->cfg->limits.max_in_flight) {
    const uint8_t *msg;
    size_t len;
    wire_frame_status st = wire_frame_next(&c->dec, &msg, &len);
    if (st == WIRE_FRAME_INCOMPLETE)
      return;
    if (st == WIRE_FRAME_ERROR) {
      protocol_error(c, c->dec.error);
      return;
    }
    pb_request *req = partita__v1__request__unpack(NULL, len, msg);
    if (!req) {
      protocol_error(c, "malformed Request message");
      return;
    }
    c->net->requests++;
    c->net->on_request(c, req);
    if (c->authed)
      c->identified = 1;
  }
  // Too many requests in flight: stop reading until some complete (backpressure).
  if (!c->closing && c->reading && c->inflight >= c->net->cfg->limits.max_in_flight) {
    uv_read_stop(&c->h.stream);
    c->reading = 0;
  }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  conn *c = h->data;
  (void)suggested;
  *buf = uv_buf_init(c->net->rbuf, sizeof(c->net->rbuf));
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
  conn *c = st->data;
  if (n < 0) {
    conn_close(c, n == UV_EOF ? "peer closed" : uv_strerror((int)n));
    return;
  }
  if (n == 0)
    return;
  c->net->bytes_in += (uint64_t)n;
  if (wire_frame_feed(&c->dec, buf->base, (size_t)n) != WIRE_FRAME_OK) {
    protocol_error(c, c->dec.error);
    return;
  }
  process(c);
}

void conn_resume(conn *c) {
  if (c->closing || c->reading)
    return;
  process(c);   // frames already buffered first
  if (c->detached)
    return;
  if (!c->closing && !c->close_when_flushed && !c->auth_pending &&
      c->inflight < c->net->cfg->limits.max_in_flight &&
      uv_read_start(&c->h.stream, on_alloc, on_read) == 0)
    c->reading = 1;
}

// At the client limit, the oldest connection that has not sent a first request (or, with a
// token, completed Hello) makes room: idle sockets cannot lock real clients out.
static int evict_idle(net *n) {
  conn *oldest = NULL;
  for (conn *c = n->conns; c; c = c->next)
    if (!c->closing && !c->identified && c->inflight == 0 &&
        (!oldest || c->accepted_ms <= oldest->accepted_ms))
      oldest = c;
  if (oldest && oldest != n->conns) {   // n->conns is the one just accepted
    n->disconnects_idle++;
    conn_close(oldest, "no request yet; room made for a new client");
    return 1;   // counted in nclients until its close callback has run
  }
  return 0;
}

// Connections open from c's address (c included); 0 for a Unix socket or a loopback
// connection (a local process can open as many as it likes anyway; the bound is for peers on
// the network, which need a token too).
int conn_count_from(net *n, const conn *c) {
  static const uint8_t v6_loopback[16] = {[15] = 1};
  if (c->addr.ss_family == AF_INET &&
      (ntohl(((const struct sockaddr_in *)&c->addr)->sin_addr.s_addr) >> 24) == 127)
    return 0;
  if (c->addr.ss_family == AF_INET6 &&
      memcmp(&((const struct sockaddr_in6 *)&c->addr)->sin6_addr, v6_loopback, 16) == 0)
    return 0;
  if (c->addr.ss_family != AF_INET && c->addr.ss_family != AF_INET6)
    return 0;
  int count = 0;
  for (const conn *o = n->conns; o; o = o->next) {
    if (o->closing || o->addr.ss_family != c->addr.ss_family)
      continue;
    if (c->addr.ss_family == AF_INET)
      count += ((const struct sockaddr_in *)&o->addr)->sin_addr.s_addr ==
           ((const struct sockaddr_in *)&c->addr)->sin_addr.s_addr;
    else
      count += memcmp(&((const struct sockaddr_in6 *)&o->addr)->sin6_addr,
                  &((const struct sockaddr_in6 *)&c->addr)->sin6_addr, 16) == 0;
  }
  return count;
}

void conn_accept(uv_stream_t *listener, int status) {
  net *n = listener->data;
  if (status < 0) {
    log_warn("accept: %s", uv_strerror(status));
    return;
  }
  conn *c = calloc(1, sizeof(*c));
  if (!c)
    return;
  c->net = n;
  c->id = ++n->next_conn_id;
  c->accepted_ms = net_now_ms();
  c->authed = n->cfg->auth_token[0] == 0;
  // a stranger's frames are not unpacked beyond a few KiB until Hello succeeds
  wire_frame_decoder_init(&c->dec, c->authed ? n->cfg->limits.max_frame_bytes
                                            : PD_UNAUTH_FRAME_BYTES);
  int rc = listener == (uv_stream_t *)&n->tcp ? uv_tcp_init(n->loop, &c->h.tcp)
                                                 : uv_pipe_init(n->loop, &c->h.pipe, 0);
  if (rc < 0) {
    conn_free(c);
    return;
  }
  c->h.handle.data = c;
  c->next = n->conns;
  if (n->conns)
    n->conns->prev = c;
  n->conns = c;
  n->nclients++;
  if (uv_accept(listener, &c->h.stream) < 0) {
    conn_close(c, "accept failed");
    return;
  }
  snprintf(c->peer, sizeof(c->peer), "#%llu", (unsigned long long)c->id);
  if (listener == (uv_stream_t *)&n->tcp) {
    struct sockaddr_storage ss;
    int len = sizeof(ss);
    char ip[48] = "?";
    uv_tcp_nodelay(&c->h.tcp, 1);   // small responses must not wait for Nagle
    if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &len) == 0) {
      c->addr = ss;
      if (ss.ss_family == AF_INET6) {
        uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof(ip));
        snprintf(c->peer, sizeof(c->peer), "#%llu [%s]:%d", (unsigned long long)c->id, ip,
                 ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
      } else {
        uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof(ip));
        snprintf(c->peer, sizeof(c->peer), "#%llu %s:%d", (unsigned long long)c->id, ip,
                 ntohs(((struct sockaddr_in *)&ss)->sin_port));
      }
    }
  }
  int full = n->nclients > n->cfg->limits.max_clients;
  if (full && !n->stopping && evict_idle(n))
    full = 0;
  int same_peer = conn_count_from(n, c) > n->cfg->limits.max_clients_per_peer;
  if (n->stopping || full || same_peer) {
    n->refused_clients++;
    n->send_status(c, 0, PARTITA__V1__STATUS__CODE__RESOURCE_EXHAUSTED, "%s (limit %d)",
                     n->stopping ? "server shutting down"
                     : same_peer   ? "too many connections from this address"
                                   : "too many clients",
                     same_peer ? n->cfg->limits.max_clients_per_peer
                               : n->cfg->limits.max_clients);
    c->close_when_flushed = 1;
    if (!c->writing)
      conn_close(c, "refused");
    return;
  }
  log_debug("client %s: connected", c->peer);
  conn_resume(c);
}


// ---------------------------------------------------------------------------------------------
// Connections without a socket, for tests and the fuzzer: requests are fed in as bytes and
// the answers stay in the output buffer (obuf, olen) for the caller to read.

conn *conn_detached(net *n) {
  conn *c = calloc(1, sizeof(*c));
  if (!c)
    return NULL;
  c->net = n;
  c->id = ++n->next_conn_id;
  c->detached = 1;
  c->accepted_ms = net_now_ms();
  c->authed = n->cfg->auth_token[0] == 0;
  wire_frame_decoder_init(&c->dec, c->authed ? n->cfg->limits.max_frame_bytes
                                            : PD_UNAUTH_FRAME_BYTES);
  snprintf(c->peer, sizeof(c->peer), "#%llu (detached)", (unsigned long long)c->id);
  c->next = n->conns;
  if (n->conns)
    n->conns->prev = c;
  n->conns = c;
  n->nclients++;
  return c;
}

int conn_feed(conn *c, const void *data, size_t n) {
  if (c->closing)
    return -1;
  c->net->bytes_in += n;
  if (wire_frame_feed(&c->dec, data, n) != WIRE_FRAME_OK) {
    protocol_error(c, c->dec.error);
    return -1;
  }
  process(c);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The periodic checks and the shutdown.

void net_tick(net *n) {
  uint64_t now = net_now_ms();
  for (conn *c = n->conns, *next; c; c = next) {
    next = c->next;
    if (c->closing)
      continue;
    if (conn_backlog(c) > n->cfg->limits.backlog_soft_bytes) {
      if (!c->soft_since)
        c->soft_since = now;
      else if (now - c->soft_since > (uint64_t)n->cfg->limits.slow_timeout_ms) {
        n->disconnects_slow++;
        conn_close(c, "output backlog over the soft limit for too long");
        continue;
      }
    } else {
      c->soft_since = 0;
    }
    if (c->auth_pending && now >= c->auth_answer_ms) {   // the delayed answer to a wrong token
      c->auth_pending = 0;
      c->close_when_flushed = 1;
      n->send_status(c, c->auth_answer_id, PARTITA__V1__STATUS__CODE__UNAUTHENTICATED,
                     "bad or missing token; closing");
      continue;
    }
    if (!c->identified && !c->auth_pending && !n->stopping &&
        now - c->accepted_ms > (uint64_t)n->cfg->limits.hello_timeout_ms) {
      n->disconnects_idle++;
      conn_close(c, n->cfg->auth_token[0] ? "no Hello with the token in time"
                                          : "no request in time");
      continue;
    }
    // at shutdown, give in-flight answers 1.5 s to drain, then close regardless
    if (n->stopping && (now - n->stop_ms > 1500 ||
                        (c->inflight == 0 && !c->writing && c->olen == 0)))
      conn_close(c, NULL);
  }
}

void net_shutdown(net *n) {
  n->stopping = 1;
  n->stop_ms = net_now_ms();
  if (n->has_tcp)
    uv_close((uv_handle_t *)&n->tcp, NULL);
  if (n->has_pipe) {
    uv_close((uv_handle_t *)&n->pipe, NULL);
    unlink(n->cfg->socket);
  }
  n->has_tcp = n->has_pipe = 0;
  for (conn *c = n->conns; c; c = c->next) {
    if (c->reading && !c->closing)
      uv_read_stop(&c->h.stream);
    c->reading = 0;
  }
}
