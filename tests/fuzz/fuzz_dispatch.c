// fuzz_dispatch.c: bytes from the fuzzer as a client's stream to a server without sockets
// (tests/daemon/server_harness.c): framed requests of every operation, LoadModel with hostile
// model text included, are decoded and dispatched; every answer must decode. A crash, a
// sanitizer report, a hang or an undecodable answer is a finding.
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/log.h"
#include "server_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  log_set_level(LOG_ERROR);   // a model loaded per input is not news
  harness *h = harness_new();
  if (!h)
    return 0;
  Partita__V1__ServerMessage *out[64];
  // the stream in two pieces, cut where its first byte says, as reads would cut it
  size_t cut = size ? (size_t)data[0] % (size + 1) : 0;
  int n1 = harness_send(h, data, cut, 10.0, out, 64);
  for (int i = 0; i < n1; i++)
    partita__v1__server_message__free_unpacked(out[i], NULL);
  int n2 = harness_send(h, data + cut, size - cut, 10.0, out, 64);
  for (int i = 0; i < n2; i++)
    partita__v1__server_message__free_unpacked(out[i], NULL);
  if (n1 < 0 || n2 < 0)
    abort();   // the daemon wrote something a client cannot decode
  harness_free(h);
  return 0;
}
