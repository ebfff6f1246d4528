// server_harness.c: partitad's request handling without sockets (server_harness.h).
#include "server_harness.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

harness *harness_new(void) {
  harness *h = calloc(1, sizeof(*h));
  server *srv = calloc(1, sizeof(*srv));
  if (!h || !srv || uv_loop_init(&h->loop) != 0) {
    free(h);
    free(srv);
    return NULL;
  }
  h->srv = srv;
  config_defaults(&srv->cfg);
  srv->cfg.limits.max_models = 4;
  srv->cfg.realtime.sched_fifo = 0;
  h->c = dispatch_init(srv, &h->loop) == 0 ? conn_detached(&srv->net) : NULL;
  if (!h->c) {
    harness_free(h);
    return NULL;
  }
  return h;
}

// Runs the loop until nothing is in flight (a load, a command, a heavy request).
static void settle(harness *h, double timeout_s) {
  double end = now() + timeout_s;
  do {
    uv_run(&h->loop, UV_RUN_NOWAIT);
    if (h->c->inflight == 0 && h->srv->loading == 0)
      break;
    usleep(100);
  } while (now() < end);
  uv_run(&h->loop, UV_RUN_NOWAIT);
}

int harness_send(harness *h, const void *bytes, size_t n, double timeout_s,
                 Partita__V1__ServerMessage **out, int max) {
  if (!h->broken && conn_feed(h->c, bytes, n) != 0)
    h->broken = 1;
  settle(h, timeout_s);
  // decode the answers, then forget them
  wire_frame_decoder dec;
  wire_frame_decoder_init(&dec, 1u << 30);
  int k = 0, bad = 0;
  if (h->c->olen && wire_frame_feed(&dec, h->c->obuf, h->c->olen) != WIRE_FRAME_OK)
    bad = 1;
  const uint8_t *msg;
  size_t len;
  wire_frame_status st;
  while (!bad && (st = wire_frame_next(&dec, &msg, &len)) == WIRE_FRAME_OK) {
    Partita__V1__ServerMessage *m = partita__v1__server_message__unpack(NULL, len, msg);
    if (!m) {
      bad = 1;
    } else if (k < max) {
      out[k++] = m;
    } else {
      partita__v1__server_message__free_unpacked(m, NULL);
    }
  }
  bad = bad || (h->c->olen && wire_frame_pending(&dec) != 0);
  wire_frame_decoder_free(&dec);
  h->c->olen = 0;
  return bad ? -1 : k;
}

int harness_request(harness *h, Partita__V1__Request *rq, double timeout_s,
                    Partita__V1__ServerMessage **out, int max) {
  size_t n = partita__v1__request__get_packed_size(rq);
  uint8_t *buf = malloc(n + WIRE_FRAME_HEADER_MAX);
  if (!buf)
    return -1;
  size_t hdr = wire_varint_encode(n, buf);
  partita__v1__request__pack(rq, buf + hdr);
  int k = harness_send(h, buf, hdr + n, timeout_s, out, max);
  free(buf);
  return k;
}

void harness_free(harness *h) {
  if (!h)
    return;
  server *srv = h->srv;
  if (srv) {
    while (srv->nmodels > 0)
      models_unload(srv, srv->models[srv->nmodels - 1], NULL, 0);
    if (h->c) {
      settle(h, 10.0);
      conn_close(h->c, NULL);
    }
    for (int i = 0; i < 100 && uv_loop_alive(&h->loop); i++) {
      uv_run(&h->loop, UV_RUN_NOWAIT);
      usleep(100);
    }
    uv_loop_close(&h->loop);
    free(srv->models);
    free(srv);
  }
  free(h);
}
