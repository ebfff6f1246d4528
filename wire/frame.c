// frame.c: varint length-delimited framing (see frame.h). No I/O, no protobuf.
#include "frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wire_frame_decoder_init(wire_frame_decoder *d, size_t max_frame) {
  memset(d, 0, sizeof(*d));
  d->max_frame = max_frame ? max_frame : WIRE_FRAME_MAX_DEFAULT;
}

void wire_frame_decoder_free(wire_frame_decoder *d) {
  free(d->buf);
  d->buf = NULL;
  d->cap = d->start = d->end = 0;
}

size_t wire_frame_pending(const wire_frame_decoder *d) {
  return d->end - d->start;
}

size_t wire_varint_encode(uint64_t v, uint8_t out[WIRE_FRAME_HEADER_MAX]) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  out[n++] = (uint8_t)v;
  return n;
}

int wire_varint_decode(const uint8_t *p, size_t n, uint64_t *v) {
  uint64_t x = 0;
  for (size_t i = 0; i < WIRE_FRAME_HEADER_MAX; i++) {
    if (i == n)
      return 0;
    uint64_t b = p[i] & 0x7f;
    // the tenth byte may only carry the top bit of a 64-bit value
    if (i == 9 && (p[i] & 0xfe))
      return -1;
    x |= b << (7 * i);
    if (!(p[i] & 0x80)) {
      *v = x;
      return (int)i + 1;
    }
  }
  return -1;
}

static wire_frame_status fail(wire_frame_decoder *d, const char *why, uint64_t len) {
  d->failed = 1;
  if (len)
    snprintf(d->error, sizeof(d->error), "%s (%llu bytes, limit %llu)", why,
             (unsigned long long)len, (unsigned long long)d->max_frame);
  else
    snprintf(d->error, sizeof(d->error), "%s", why);
  return WIRE_FRAME_ERROR;
}

// Parse the header of the pending message. Returns OK with *hdr/*len, INCOMPLETE or ERROR.
static wire_frame_status header(wire_frame_decoder *d, size_t *hdr, uint64_t *len) {
  if (d->end == d->start)
    return WIRE_FRAME_INCOMPLETE;   // nothing buffered (buf may still be NULL)
  int used = wire_varint_decode(d->buf + d->start, d->end - d->start, len);
  if (used < 0)
    return fail(d, "malformed length prefix", 0);
  if (used == 0)
    return WIRE_FRAME_INCOMPLETE;
  if (*len > d->max_frame)
    return fail(d, "frame too large", *len);
  *hdr = (size_t)used;
  return WIRE_FRAME_OK;
}

// Make room for `need` more bytes, moving the unconsumed tail to the front first.
static int reserve(wire_frame_decoder *d, size_t need) {
  if (d->start > 0 && d->end + need > d->cap) {
    memmove(d->buf, d->buf + d->start, d->end - d->start);
    d->end -= d->start;
    d->start = 0;
  }
  if (d->end + need <= d->cap)
    return 0;
  size_t cap = d->cap ? d->cap : 4096;
  while (cap < d->end + need)
    cap *= 2;
  uint8_t *buf = realloc(d->buf, cap);
  if (!buf)
    return -1;
  d->buf = buf;
  d->cap = cap;
  return 0;
}

// How many of the next bytes may be buffered: the rest of the pending header, or the rest of
// the pending body once its header has passed the size check. Never a declared length that
// was not checked.
static wire_frame_status room(wire_frame_decoder *d, size_t *want) {
  size_t have = d->end - d->start, hdr;
  uint64_t len;
  wire_frame_status st = header(d, &hdr, &len);
  if (st == WIRE_FRAME_INCOMPLETE)
    *want = WIRE_FRAME_HEADER_MAX - have;
  else if (st == WIRE_FRAME_OK && have < hdr + (size_t)len)
    *want = hdr + (size_t)len - have;
  else if (st == WIRE_FRAME_OK)
    *want = 0;  // a whole message waits: the caller has not drained yet
  return st;
}

wire_frame_status wire_frame_feed(wire_frame_decoder *d, const void *data, size_t n) {
  const uint8_t *p = data;
  if (d->failed)
    return WIRE_FRAME_ERROR;
  while (n > 0) {
    size_t want = 0;
    if (room(d, &want) == WIRE_FRAME_ERROR)
      return WIRE_FRAME_ERROR;
    if (want == 0) {
      // Whole messages are waiting. Buffer the rest too (the caller drains after this feed),
      // but never more than one maximal frame of look-ahead.
      size_t unit = d->max_frame > WIRE_FRAME_READ_MAX ? d->max_frame : WIRE_FRAME_READ_MAX;
      if (d->end - d->start + n > 2 * (unit + WIRE_FRAME_HEADER_MAX))
        return fail(d, "input not drained", (uint64_t)(d->end - d->start + n));
      want = n;
    }
    size_t take = n < want ? n : want;
    if (reserve(d, take) < 0)
      return fail(d, "out of memory", 0);
    memcpy(d->buf + d->end, p, take);
    d->end += take;
    p += take;
    n -= take;
  }
  size_t want;
  return room(d, &want) == WIRE_FRAME_ERROR ? WIRE_FRAME_ERROR : WIRE_FRAME_OK;
}

wire_frame_status wire_frame_next(wire_frame_decoder *d, const uint8_t **msg, size_t *len) {
  if (d->failed)
    return WIRE_FRAME_ERROR;
  size_t hdr;
  uint64_t n;
  wire_frame_status st = header(d, &hdr, &n);
  if (st != WIRE_FRAME_OK)
    return st;
  if (d->end - d->start < hdr + (size_t)n)
    return WIRE_FRAME_INCOMPLETE;
  *msg = d->buf + d->start + hdr;
  *len = (size_t)n;
  d->start += hdr + (size_t)n;
  if (d->start == d->end)
    d->start = d->end = 0;
  return WIRE_FRAME_OK;
}
