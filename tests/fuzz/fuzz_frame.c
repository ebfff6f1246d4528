// fuzz_frame.c: libFuzzer target for the stream frame codec (wire/frame.c).
//
// Input: two bytes choosing max_frame (1..4096), then the stream. The stream is fed three
// ways: in chunks whose sizes are read from the input itself (1..4096 bytes), one byte at a
// time, and in reads of WIRE_FRAME_READ_MAX; after every feed all waiting messages are taken
// out, as the daemon does. Each way must give exactly the messages of an independent reading
// of the stream (varint length, then body), each within max_frame, and a broken stream (bad
// varint, a length over max_frame) must be reported broken after the same messages.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
  size_t nmsg;
  size_t *off, *len;  // body of message i: stream[off[i] .. off[i] + len[i]) (nmsg)
  int broken;         // a bad header follows the last message
} reading;

// The reference reading: the complete messages of the stream, then broken or incomplete.
static void read_reference(const uint8_t *s, size_t n, size_t max_frame, reading *r) {
  size_t pos = 0;
  for (;;) {
    uint64_t len = 0;
    int used = wire_varint_decode(s + pos, n - pos, &len);
    if (used < 0 || (used > 0 && len > max_frame)) {
      r->broken = 1;
      return;
    }
    if (used == 0 || len > n - pos - (size_t)used) return;
    r->off[r->nmsg] = pos + (size_t)used;
    r->len[r->nmsg++] = (size_t)len;
    pos += (size_t)used + (size_t)len;
  }
}

typedef struct {
  const uint8_t *s;
  const reading *ref;
  size_t taken;
  int broken;
} run;

// Takes every waiting message out; each must be the next one of the reference.
static void drain(wire_frame_decoder *d, run *r) {
  for (;;) {
    const uint8_t *msg = NULL;
    size_t len = 0;
    wire_frame_status st = wire_frame_next(d, &msg, &len);
    if (st == WIRE_FRAME_ERROR) r->broken = 1;
    if (st != WIRE_FRAME_OK) return;
    if (len > d->max_frame) abort();
    if (r->taken >= r->ref->nmsg || len != r->ref->len[r->taken]) abort();
    if (len && memcmp(msg, r->s + r->ref->off[r->taken], len)) abort();
    r->taken++;
  }
}

// mode 0: chunk sizes from the stream's own bytes; 1: one byte at a time; 2: whole reads.
static void feed_all(const uint8_t *s, size_t n, size_t max_frame, int mode, const reading *ref) {
  wire_frame_decoder d;
  wire_frame_decoder_init(&d, max_frame);
  run r = {s, ref, 0, 0};
  size_t pos = 0;
  for (size_t k = 0; pos < n && !r.broken; k++) {
    size_t chunk = mode == 1 ? 1 : WIRE_FRAME_READ_MAX;
    if (mode == 0) chunk = 1 + (size_t)s[k % n] * (1 + s[(k + 1) % n] % 16) % 4096;
    if (chunk > n - pos) chunk = n - pos;
    if (wire_frame_feed(&d, s + pos, chunk) == WIRE_FRAME_ERROR) r.broken = 1;
    pos += chunk;
    drain(&d, &r);
  }
  if (r.taken != ref->nmsg || r.broken != ref->broken) abort();
  if (!r.broken && wire_frame_pending(&d) != n - (ref->nmsg ? ref->off[ref->nmsg - 1] +
                                                                  ref->len[ref->nmsg - 1]
                                                            : 0))
    abort();  // an unbroken stream keeps exactly its incomplete tail
  wire_frame_decoder_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  size_t max_frame = 1 + (size_t)(data[0] | data[1] << 8) % 4096;
  const uint8_t *s = data + 2;
  size_t n = size - 2;
  // at most one message per byte (a zero-length message is one byte)
  reading ref = {0, malloc((n + 1) * sizeof(size_t)), malloc((n + 1) * sizeof(size_t)), 0};
  if (!ref.off || !ref.len) abort();
  read_reference(s, n, max_frame, &ref);
  for (int mode = 0; mode < 3 && n > 0; mode++) feed_all(s, n, max_frame, mode, &ref);
  free(ref.off);
  free(ref.len);
  return 0;
}
