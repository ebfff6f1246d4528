// envelope.c: the hand-written envelope of a shared state frame (envelope.h).
#include "envelope.h"

#include <string.h>

void wire_state_envelope(wire_envelope *e, size_t body_len, uint64_t subscription,
                         uint64_t sequence, uint64_t dropped) {
  size_t t = 0;
  e->tail[t++] = 0x10;   // StateFrame.subscription = 2, varint
  t += wire_varint_encode(subscription, e->tail + t);
  e->tail[t++] = 0x18;   // StateFrame.sequence = 3, varint
  t += wire_varint_encode(sequence, e->tail + t);
  if (dropped) {
    e->tail[t++] = 0x80;   // StateFrame.dropped = 16, varint: tag 128 as a two-byte varint
    e->tail[t++] = 0x01;
    t += wire_varint_encode(dropped, e->tail + t);
  }
  e->ntail = t;
  uint8_t h1[WIRE_FRAME_HEADER_MAX], h2[WIRE_FRAME_HEADER_MAX], h3[WIRE_FRAME_HEADER_MAX];
  size_t frame_len = body_len + t;
  size_t n3 = wire_varint_encode(frame_len, h3);
  size_t event_len = 1 + n3 + frame_len;
  size_t n2 = wire_varint_encode(event_len, h2);
  size_t msg_len = 1 + n2 + event_len;
  size_t n1 = wire_varint_encode(msg_len, h1);
  size_t k = 0;
  memcpy(e->head + k, h1, n1);   // the stream's length prefix
  k += n1;
  e->head[k++] = 0x12;   // ServerMessage.event = 2, length-delimited
  memcpy(e->head + k, h2, n2);
  k += n2;
  e->head[k++] = 0x0a;   // Event.frame = 1, length-delimited
  memcpy(e->head + k, h3, n3);
  k += n3;
  e->nhead = k;
}
