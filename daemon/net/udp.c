// udp.c: the UDP port (udp.h). InputFrame datagrams in, StateFrame datagrams out; what an
// input does to a model (its session order, its values, the digest) is api/inputs.c's.
#include <string.h>

#include "addr.h"
#include "base/log.h"
#include "net/udp.h"

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  udp_port *u = h->data;
  (void)suggested;
  *buf = uv_buf_init(u->rbuf, sizeof(u->rbuf));
}

// Every datagram is either handed up or counted as malformed: nothing vanishes.
static void on_recv(uv_udp_t *h, ssize_t n, const uv_buf_t *buf, const struct sockaddr *from,
                    unsigned flags) {
  udp_port *u = h->data;
  (void)flags;
  if (n <= 0 || !from)
    return;
  u->bytes_in += (uint64_t)n;
  Partita__V1__InputFrame *f =
      partita__v1__input_frame__unpack(NULL, (size_t)n, (const uint8_t *)buf->base);
  if (!f) {
    u->malformed++;
    log_debug("udp: malformed InputFrame (%zd bytes) dropped", n);
    return;
  }
  u->on_input(u, f);
  partita__v1__input_frame__free_unpacked(f, NULL);
}

int udp_start(udp_port *u, uv_loop_t *loop, const char *addr) {
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
    rc = uv_udp_init(loop, &u->h);
  if (rc == 0) {
    u->open = 1;
    u->h.data = u;
    rc = uv_udp_bind(&u->h, (struct sockaddr *)&ss, 0);
  }
  if (rc == 0)
    rc = uv_udp_recv_start(&u->h, on_alloc, on_recv);
  if (rc < 0) {
    log_error("udp %s: %s", addr, uv_strerror(rc));
    return -1;
  }
  int len = sizeof(ss);
  uv_udp_getsockname(&u->h, (struct sockaddr *)&ss, &len);
  int actual = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
  log_info("listening on udp %s port %d", host, actual);
  return 0;
}

int udp_send(udp_port *u, const struct sockaddr *to, const uint8_t *data, size_t len) {
  if (!u->open)
    return -1;
  uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);
  if (uv_udp_try_send(&u->h, &b, 1, to) < 0)
    return -1;
  u->bytes_out += len;
  return 0;
}

void udp_close(udp_port *u) {
  if (u->open)
    uv_close((uv_handle_t *)&u->h, NULL);
  u->open = 0;
}
