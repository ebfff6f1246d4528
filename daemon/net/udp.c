// udp.c: the UDP fast path. InputFrame datagrams in (per model and sender session, sequence
// numbers only go up: an older one is stale and dropped, the latest wins), StateFrame
// datagrams out.
#include <math.h>
#include <openssl/crypto.h>
#include <string.h>

#include "base/log.h"
#include "digest.h"
#include "server.h"
#include "base/text.h"

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  server *srv = h->data;
  (void)suggested;
  *buf = uv_buf_init(srv->rbuf, sizeof(srv->rbuf));
}

// Sequence numbers a session may jump ahead by; and the highest first sequence of a new
// session (a sender that restarts begins again near 1). Frames beyond either are dropped, not
// adopted, so one forged number cannot make every later input stale.
#define UDP_WINDOW 65536u

typedef enum { UDP_APPLY, UDP_STALE } udp_order;

// The ordering of one model's UDP inputs: per session, sequence numbers only go up.
static udp_order order(sim *s, const Partita__V1__InputFrame *f) {
  if (s->udp_open && f->session == s->udp_session) {
    if (f->sequence <= s->udp_seq || f->sequence - s->udp_seq > UDP_WINDOW)
      return UDP_STALE;
  } else if (f->sequence > UDP_WINDOW) {
    return UDP_STALE;   // a new session starts low
  }
  s->udp_open = 1;
  s->udp_session = f->session;
  s->udp_seq = f->sequence;
  return UDP_APPLY;
}

// Checks the values of f against the model; NULL when they can be applied. Fills idx/val
// with the last value given for each index.
static const char *check_values(sim *s, const Partita__V1__InputFrame *f, int32_t *idx,
                                double *val, int *m) {
  size_t nv = f->n_values;
  if (nv > (size_t)s->ni || nv > 1024 || (f->n_index && f->n_index != nv))
    return "wrong number of values";
  for (size_t i = 0; i < nv; i++) {
    idx[i] = f->n_index ? (int32_t)f->index[i] : (int32_t)i;
    val[i] = f->values[i];
    if (f->n_index && f->index[i] >= (uint32_t)s->ni)
      return "input index out of range";
    if (!isfinite(val[i]))
      return "non-finite value";
  }
  *m = 0;
  for (size_t i = 0; i < nv; i++) {
    int dup = 0;
    for (size_t j = i + 1; j < nv && !dup; j++)
      dup = idx[j] == idx[i];
    if (!dup) {
      idx[*m] = idx[i];
      val[(*m)++] = val[i];
    }
  }
  return NULL;
}

// With a token, a frame must carry the HMAC-SHA256 of its contents under it (the token itself
// never travels); the digest covers the session, so a frame cannot be replayed into another.
static int authentic(const Partita__V1__InputFrame *f, const char *token) {
  uint8_t want[32];
  return f->digest.len == sizeof(want) &&
         wire_input_digest(token, f->model, f->session, f->sequence, f->values, f->n_values,
                           f->index, f->n_index, want) == 0 &&
         CRYPTO_memcmp(want, f->digest.data, sizeof(want)) == 0;
}

// Every datagram is either applied or counted by why it was not (stats): nothing vanishes.
static void on_recv(uv_udp_t *u, ssize_t n, const uv_buf_t *buf, const struct sockaddr *from,
                    unsigned flags) {
  server *srv = u->data;
  (void)flags;
  if (n <= 0 || !from)
    return;
  srv->bytes_in += (uint64_t)n;
  Partita__V1__InputFrame *f =
      partita__v1__input_frame__unpack(NULL, (size_t)n, (const uint8_t *)buf->base);
  if (!f) {
    srv->udp_malformed++;
    log_debug("udp: malformed InputFrame (%zd bytes) dropped", n);
    return;
  }
  sim *s = server_find_model(srv, f->model);
  int32_t idx[1024];
  double val[1024];
  int m = 0;
  const char *why = NULL;
  if (!s) {
    srv->udp_unknown_model++;
    why = "unknown model";
  } else if (srv->cfg.auth_token[0] && !authentic(f, srv->cfg.auth_token)) {
    s->unauthorized_inputs++;
    why = "missing or wrong digest";
  } else if ((why = check_values(s, f, idx, val, &m))) {
    s->malformed_inputs++;
  } else if (order(s, f) == UDP_STALE) {
    s->stale_inputs++;
    why = "stale or out-of-window sequence";
  } else if (m > 0 && sim_input(s, idx, val, m, f->session, f->sequence)) {
    s->dropped_inputs++;
    why = "input queue full";
  } else {
    s->udp_inputs++;
  }
  if (why)
    log_debug("udp: InputFrame dropped: %s", why);
  partita__v1__input_frame__free_unpacked(f, NULL);
}

int udp_start(server *srv, const char *addr) {
  char host[128];
  int port;
  struct sockaddr_storage ss;
  if (wire_split_addr(addr, host, sizeof(host), &port)) {
    log_error("udp: bad address '%s' (HOST:PORT)", addr);
    return -1;
  }
  int rc = strchr(host, ':') ? uv_ip6_addr(host, port, (struct sockaddr_in6 *)&ss)
                             : uv_ip4_addr(host, port, (struct sockaddr_in *)&ss);
  if (rc == 0)
    rc = uv_udp_init(srv->loop, &srv->udp);
  if (rc == 0) {
    srv->has_udp = 1;
    srv->udp.data = srv;
    rc = uv_udp_bind(&srv->udp, (struct sockaddr *)&ss, 0);
  }
  if (rc == 0)
    rc = uv_udp_recv_start(&srv->udp, on_alloc, on_recv);
  if (rc < 0) {
    log_error("udp %s: %s", addr, uv_strerror(rc));
    return -1;
  }
  int len = sizeof(ss);
  uv_udp_getsockname(&srv->udp, (struct sockaddr *)&ss, &len);
  int actual = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
  log_info("listening on udp %s port %d", host, actual);
  return 0;
}
