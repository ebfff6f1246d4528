// partita_client.h: libpartita-client, a small blocking client of partitad (docs/protocol.md).
//
//   char err[256];
//   ptc_client *c = ptc_connect_tcp("127.0.0.1", PTC_DEFAULT_PORT, 2000, err, sizeof(err));
//   Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
//   Partita__V1__ListModels lm = PARTITA__V1__LIST_MODELS__INIT;
//   rq.op_case = PARTITA__V1__REQUEST__OP_LIST_MODELS;
//   rq.list_models = &lm;
//   Partita__V1__ServerMessage *m;
//   if (ptc_call(c, &rq, &m, 2000) == PTC_OK) { ... m->response ...; ptc_free(m); }
//   ptc_close(c);
//
// Events (subscription frames, model events) that arrive while ptc_call waits are queued and
// returned by ptc_next_event. One client is used by one thread at a time.
#ifndef PARTITA_CLIENT_H
#define PARTITA_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "partita.pb-c.h"

#define PTC_DEFAULT_HOST "127.0.0.1"
#define PTC_DEFAULT_PORT 7450
#define PTC_EVENT_QUEUE_MAX 4096    // events kept while waiting for a response; oldest dropped

enum {
  PTC_OK = 0,
  PTC_ERR_IO = -1,         // socket error (connect, read, write)
  PTC_ERR_TIMEOUT = -2,
  PTC_ERR_CLOSED = -3,     // the server closed the connection
  PTC_ERR_PROTO = -4,      // malformed frame or message from the server
  PTC_ERR_NOMEM = -5,
  PTC_ERR_ARG = -6,
};

typedef struct ptc_client ptc_client;

// Connect; timeout_ms < 0 waits forever. NULL on failure with a message in err.
ptc_client *ptc_connect_tcp(const char *host, int port, int timeout_ms, char *err,
                            size_t errlen);
ptc_client *ptc_connect_unix(const char *path, int timeout_ms, char *err, size_t errlen);
// "HOST:PORT" ("[v6]:PORT" too) over TCP.
ptc_client *ptc_connect_addr(const char *hostport, int timeout_ms, char *err, size_t errlen);
void ptc_close(ptc_client *c);
// Splits "HOST:PORT" ("[v6]:PORT") into host (hostlen bytes) and port; PTC_ERR_ARG with a
// message in err when it is not one.
int ptc_split_addr(const char *hostport, char *host, size_t hostlen, int *port, char *err,
                   size_t errlen);

int ptc_fd(const ptc_client *c);
const char *ptc_error(const ptc_client *c);          // text of the last failure
uint64_t ptc_dropped_events(const ptc_client *c);    // events lost to the queue bound

// Send one request. An id of 0 is replaced by the next id of this client (written back).
int ptc_send(ptc_client *c, Partita__V1__Request *req);
// The next message from the server, in arrival order (queued events first).
int ptc_recv(ptc_client *c, Partita__V1__ServerMessage **out, int timeout_ms);
// Send and wait for the response with the same id (*out->response is set).
int ptc_call(ptc_client *c, Partita__V1__Request *req, Partita__V1__ServerMessage **out,
             int timeout_ms);
// The next event (*out->event is set).
int ptc_next_event(ptc_client *c, Partita__V1__ServerMessage **out, int timeout_ms);
void ptc_free(Partita__V1__ServerMessage *m);

// UDP inputs (docs/protocol.md, "UDP fast path"): one sender is one session, with a random
// 64-bit id picked at creation, numbering its frames 1, 2, ... A restarted sender is a new
// session, so the daemon does not take its frames for stale ones of its predecessor.
typedef struct ptc_udp_sender ptc_udp_sender;
// "HOST:PORT" of the daemon's UDP port; token "" when the server has none. NULL on failure.
ptc_udp_sender *ptc_udp_open(const char *hostport, const char *model, const char *token,
                             char *err, size_t errlen);
// Inputs 0..n-1 (ModelInfo.inputs order) as one frame with the next sequence number.
int ptc_udp_send(ptc_udp_sender *u, const double *values, size_t n);
uint64_t ptc_udp_session(const ptc_udp_sender *u);
// The keyed digest of an input frame: HMAC-SHA256 under `key` (the server's token) of
//   "partita-input-v1" NUL model NUL session(u64) sequence(u64) n_values(u32) values(f64...)
//   n_index(u32) index(u32...)
// all little-endian. It covers the session, so a frame cannot be replayed into another one.
// PTC_OK, or PTC_ERR_NOMEM when libcrypto could not compute it.
int ptc_input_digest(const Partita__V1__InputFrame *f, const char *key, uint8_t out[32]);
void ptc_udp_close(ptc_udp_sender *u);

const char *ptc_status_name(int code);   // "OK", "NOT_FOUND", ...
const char *ptc_strerror(int rc);        // text of a PTC_ERR_* code

#endif
