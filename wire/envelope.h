// envelope.h: a state frame sent to many subscribers is packed once; what differs per
// subscriber (subscription, sequence, dropped) and the ServerMessage{event{frame}} envelope
// around it are written here by hand, as protobuf's encoding defines them.
#ifndef WIRE_ENVELOPE_H
#define WIRE_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

typedef struct {
  uint8_t head[3 * (1 + WIRE_FRAME_HEADER_MAX)];   // frame length, ServerMessage.event, Event.frame
  size_t nhead;
  uint8_t tail[3 * (2 + WIRE_FRAME_HEADER_MAX)];   // StateFrame subscription, sequence, dropped
  size_t ntail;
} wire_envelope;

// head + body + tail is one length-prefixed ServerMessage whose event is the StateFrame of
// `body_len` packed bytes (without fields 2, 3 and 16) with those three fields added.
void wire_state_envelope(wire_envelope *e, size_t body_len, uint64_t subscription,
                         uint64_t sequence, uint64_t dropped);

#endif
