// frame.h: the I/O-free codec of the partitad stream framing, shared by the daemon, the C
// client and the tests. Each message is preceded by its length as a base-128 varint (protobuf
// "delimited" framing). Feed bytes in as they arrive, take whole messages out.
#ifndef WIRE_FRAME_H
#define WIRE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define WIRE_FRAME_HEADER_MAX 10                // bytes of the longest varint
#define WIRE_FRAME_MAX_DEFAULT (16u << 20)      // 16 MiB
// Callers feed at most this many bytes at once (one socket read). While whole messages wait
// to be taken, a decoder buffers up to twice the larger of this and max_frame: the rest of a
// read that ended a large frame and carried pipelined requests after it always fits.
#define WIRE_FRAME_READ_MAX (64u << 10)

typedef enum {
  WIRE_FRAME_OK = 0,          // a whole message is available
  WIRE_FRAME_INCOMPLETE = 1,  // more bytes are needed
  WIRE_FRAME_ERROR = -1,      // the stream is broken (bad varint, oversize, out of memory)
} wire_frame_status;

typedef struct {
  uint8_t *buf;           // buffered bytes (cap)
  size_t cap;
  size_t start;           // first unconsumed byte
  size_t end;             // one past the last buffered byte
  size_t max_frame;       // largest accepted message length
  int failed;             // sticky: once broken, always ERROR
  char error[96];         // why the stream broke
} wire_frame_decoder;

void wire_frame_decoder_init(wire_frame_decoder *d, size_t max_frame);
void wire_frame_decoder_free(wire_frame_decoder *d);

// Append n bytes. The header of the pending message is checked before the buffer grows for
// its body: a length beyond max_frame is an ERROR and nothing is allocated for it.
wire_frame_status wire_frame_feed(wire_frame_decoder *d, const void *data, size_t n);

// Take the next whole message: *msg points into the decoder's buffer and stays valid until
// the next feed or free. Call until it returns INCOMPLETE after every feed.
wire_frame_status wire_frame_next(wire_frame_decoder *d, const uint8_t **msg, size_t *len);

// Bytes buffered but not yet returned.
size_t wire_frame_pending(const wire_frame_decoder *d);

// Varint helpers. Encode returns the number of bytes written (1..10).
size_t wire_varint_encode(uint64_t v, uint8_t out[WIRE_FRAME_HEADER_MAX]);
// Decode from p[0..n): returns bytes used, 0 if incomplete, -1 if malformed (over 10 bytes or
// over 64 bits).
int wire_varint_decode(const uint8_t *p, size_t n, uint64_t *v);

#endif
