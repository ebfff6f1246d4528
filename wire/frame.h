// frame.h: the I/O-free codec of the partitad stream framing, shared by the daemon, the C
// client and the tests. Each message is preceded by its length as a base-128 varint (protobuf
// "delimited" framing). Feed bytes in as they arrive, take whole messages out.
#ifndef PTC_FRAME_H
#define PTC_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define PTC_FRAME_HEADER_MAX 10                 // bytes of the longest varint
#define PTC_FRAME_MAX_DEFAULT (16u << 20)       // 16 MiB
// Callers feed at most this many bytes at once (one socket read). While whole messages wait
// to be taken, a decoder buffers up to twice the larger of this and max_frame: the rest of a
// read that ended a large frame and carried pipelined requests after it always fits.
#define PTC_FRAME_READ_MAX (64u << 10)

typedef enum {
  PTC_FRAME_OK = 0,           // a whole message is available
  PTC_FRAME_INCOMPLETE = 1,   // more bytes are needed
  PTC_FRAME_ERROR = -1,       // the stream is broken (bad varint, oversize, out of memory)
} ptc_frame_status;

typedef struct {
  uint8_t *buf;           // buffered bytes (cap)
  size_t cap;
  size_t start;           // first unconsumed byte
  size_t end;             // one past the last buffered byte
  size_t max_frame;       // largest accepted message length
  int failed;             // sticky: once broken, always ERROR
  char error[96];         // why the stream broke
} ptc_frame_decoder;

void ptc_frame_decoder_init(ptc_frame_decoder *d, size_t max_frame);
void ptc_frame_decoder_free(ptc_frame_decoder *d);

// Append n bytes. The header of the pending message is checked before the buffer grows for
// its body: a length beyond max_frame is an ERROR and nothing is allocated for it.
ptc_frame_status ptc_frame_feed(ptc_frame_decoder *d, const void *data, size_t n);

// Take the next whole message: *msg points into the decoder's buffer and stays valid until
// the next feed or free. Call until it returns INCOMPLETE after every feed.
ptc_frame_status ptc_frame_next(ptc_frame_decoder *d, const uint8_t **msg, size_t *len);

// Bytes buffered but not yet returned.
size_t ptc_frame_pending(const ptc_frame_decoder *d);

// Varint helpers. Encode returns the number of bytes written (1..10).
size_t ptc_varint_encode(uint64_t v, uint8_t out[PTC_FRAME_HEADER_MAX]);
// Decode from p[0..n): returns bytes used, 0 if incomplete, -1 if malformed (over 10 bytes or
// over 64 bits).
int ptc_varint_decode(const uint8_t *p, size_t n, uint64_t *v);

#endif
