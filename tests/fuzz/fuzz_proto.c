// fuzz_proto.c: libFuzzer target for the protobuf decoders of what the daemon takes from the
// network, built twice: FUZZ_REQUEST (partita.v1.Request, TCP/Unix frames) and
// FUZZ_INPUT_FRAME (partita.v1.InputFrame, UDP datagrams). A message that decodes must
// re-encode, and the re-encoded bytes must decode and re-encode to the same bytes (the first
// encoding may differ from the input: packed fields, field order).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "partita.pb-c.h"

#if defined(FUZZ_REQUEST)
#define MSG Partita__V1__Request
#define MSG_UNPACK partita__v1__request__unpack
#define MSG_PACK partita__v1__request__pack
#define MSG_SIZE partita__v1__request__get_packed_size
#define MSG_FREE partita__v1__request__free_unpacked
#elif defined(FUZZ_INPUT_FRAME)
#define MSG Partita__V1__InputFrame
#define MSG_UNPACK partita__v1__input_frame__unpack
#define MSG_PACK partita__v1__input_frame__pack
#define MSG_SIZE partita__v1__input_frame__get_packed_size
#define MSG_FREE partita__v1__input_frame__free_unpacked
#else
#error "define FUZZ_REQUEST or FUZZ_INPUT_FRAME"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// Encodes m into a new buffer (*n bytes).
static uint8_t *encode(const MSG *m, size_t *n) {
  *n = MSG_SIZE(m);
  uint8_t *b = malloc(*n ? *n : 1);
  if (!b) abort();
  if (MSG_PACK(m, b) != *n) abort();
  return b;
}

// protobuf-c accepts field number 0 when its tag is written as an overlong varint (`82 00`),
// keeps it as an unknown field and writes it back as `02`, which its own decoder refuses. No
// field of ours has number 0 and the daemon ignores unknown fields: such messages are decoded
// and encoded, but their round trip is not checked. 1 if m or a message inside it has one.
static int has_field_zero(const ProtobufCMessage *m) {
  for (unsigned i = 0; i < m->n_unknown_fields; i++)
    if (m->unknown_fields[i].tag == 0) return 1;
  const ProtobufCMessageDescriptor *d = m->descriptor;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (f->type != PROTOBUF_C_TYPE_MESSAGE) continue;
    const char *base = (const char *)m;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t n = *(const size_t *)(const void *)(base + f->quantifier_offset);
      const void *at = base + f->offset;
      ProtobufCMessage *const *v = *(ProtobufCMessage *const *const *)at;
      for (size_t k = 0; k < n; k++)
        if (has_field_zero(v[k])) return 1;
      continue;
    }
    if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
        *(const uint32_t *)(const void *)(base + f->quantifier_offset) != f->id)
      continue;
    const ProtobufCMessage *sub = *(ProtobufCMessage *const *)(const void *)(base + f->offset);
    if (sub && has_field_zero(sub)) return 1;
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MSG *a = MSG_UNPACK(NULL, size, data);
  if (!a) return 0;
  size_t n1 = 0, n2 = 0;
  uint8_t *b1 = encode(a, &n1);
  if (has_field_zero(&a->base)) {
    free(b1);
    MSG_FREE(a, NULL);
    return 0;
  }
  MSG *b = MSG_UNPACK(NULL, n1, b1);
  if (!b) abort();  // what was encoded must decode
  uint8_t *b2 = encode(b, &n2);
  if (n1 != n2 || memcmp(b1, b2, n1) != 0) abort();
  free(b1);
  free(b2);
  MSG_FREE(a, NULL);
  MSG_FREE(b, NULL);
  return 0;
}
