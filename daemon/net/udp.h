// udp.h: the UDP port: InputFrame datagrams in (each decoded one goes up through on_input; what
// does not decode is counted), StateFrame datagrams out for UDP subscriptions, best effort.
#ifndef PD_UDP_H
#define PD_UDP_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "partita.pb-c.h"

typedef struct udp_port udp_port;
struct udp_port {
  uv_udp_t h;
  int open;
  uint64_t bytes_in, bytes_out, malformed;
  // a well-formed InputFrame arrived (the layer above sets it; f is freed after)
  void (*on_input)(udp_port *u, const Partita__V1__InputFrame *f);
  char rbuf[65536];           // each datagram is consumed before the next
};

// Binds "HOST:PORT" on loop (port 0: any free one; the port taken is logged). 0, or -1 logged.
int udp_start(udp_port *u, uv_loop_t *loop, const char *addr);
// Sends a datagram now or not at all (-1: the port is off or the socket cannot take it).
int udp_send(udp_port *u, const struct sockaddr *to, const uint8_t *data, size_t len);
void udp_close(udp_port *u);

#endif
