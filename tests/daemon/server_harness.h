// server_harness.h: partitad's request handling without sockets, for tests and the fuzzer. A
// server with its own event loop and no listeners; requests go in as framed bytes through a
// detached connection, the loop runs until they are answered, and the answers come back
// decoded. Models load, step and answer on their own threads as in the daemon.
#ifndef TEST_SERVER_HARNESS_H
#define TEST_SERVER_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "api/dispatch.h"
#include "api/models.h"

typedef struct {
  server *srv;
  uv_loop_t loop;
  conn *c;
  int broken;                       // the connection closed on a protocol error
} harness;

// A server with default config (max_models 4) and one detached connection. NULL on failure.
harness *harness_new(void);
// Feeds bytes (any framing, even broken) and runs the loop until every request in flight is
// answered or `timeout_s` passes. Returns the number of ServerMessages decoded from the output
// (stored in out[0..max), caller frees each with partita__v1__server_message__free_unpacked),
// or -1 when the output could not be decoded.
int harness_send(harness *h, const void *bytes, size_t n, double timeout_s,
                 Partita__V1__ServerMessage **out, int max);
// Packs and frames one request, then harness_send.
int harness_request(harness *h, Partita__V1__Request *rq, double timeout_s,
                    Partita__V1__ServerMessage **out, int max);
// Unloads every model, closes the connection, runs the loop until everything is closed.
void harness_free(harness *h);

#endif
