// udp.c: the UDP fast path. InputFrame datagrams in (per model: a sequence number not above the
// last accepted one is stale and dropped, the latest wins), StateFrame datagrams out.
#include <math.h>
#include <string.h>

#include "log.h"
#include "server.h"

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  server *srv = h->data;
  (void)suggested;
  *buf = uv_buf_init(srv->rbuf, sizeof(srv->rbuf));
}

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
    log_debug("udp: malformed InputFrame (%zd bytes) dropped", n);
    return;
  }
  sim *s = server_find_model(srv, f->model);
  const char *why = NULL;
  int32_t idx[1024];
  double val[1024];
  size_t nv = f->n_values;
  if (srv->cfg.auth_token[0] && strcmp(f->token, srv->cfg.auth_token) != 0)
    why = "bad token";
  else if (!s)
    why = "unknown model";
  else if (nv > (size_t)s->ni || nv > 1024 || (f->n_index && f->n_index != nv))
    why = "wrong number of values";
  for (size_t i = 0; !why && i < nv; i++) {
    idx[i] = f->n_index ? (int32_t)f->index[i] : (int32_t)i;
    val[i] = f->values[i];
    if (f->n_index && f->index[i] >= (uint32_t)s->ni)
      why = "input index out of range";
    else if (!isfinite(val[i]))
      why = "non-finite value";
  }
  if (!why && f->sequence <= s->udp_seq && s->udp_inputs + s->stale_inputs > 0) {
    s->stale_inputs++;
    why = NULL;
  } else if (!why) {
    s->udp_seq = f->sequence;
    // duplicates of an index within one frame: the last one wins
    int m = 0;
    for (size_t i = 0; i < nv; i++) {
      int dup = 0;
      for (size_t j = i + 1; j < nv && !dup; j++)
        dup = idx[j] == idx[i];
      if (!dup) {
        idx[m] = idx[i];
        val[m++] = val[i];
      }
    }
    if (m > 0 && sim_input(s, idx, val, m))
      why = "input queue full";
    else
      s->udp_inputs++;
  }
  if (why)
    log_debug("udp: InputFrame for '%.64s' dropped: %s", f->model, why);
  partita__v1__input_frame__free_unpacked(f, NULL);
}

int udp_start(server *srv, const char *addr) {
  char host[128];
  int port;
  struct sockaddr_storage ss;
  if (config_split_addr(addr, host, sizeof(host), &port)) {
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

// Best effort, never queued: a frame the socket cannot take now is dropped and counted.
void udp_send(server *srv, const struct sockaddr *to, const uint8_t *data, size_t len, sub *sb) {
  if (!srv->has_udp) {
    sb->dropped++;
    sb->s->dropped_loop++;
    return;
  }
  uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);
  int rc = uv_udp_try_send(&srv->udp, &b, 1, to);
  if (rc < 0) {
    sb->dropped++;
    sb->s->dropped_loop++;
  } else {
    srv->bytes_out += len;
  }
}
