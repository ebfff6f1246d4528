// digest.h: the keyed digest of a UDP input frame (docs/protocol.md, "UDP fast path"), computed
// by the senders (the C client, libpartita-client) and checked by partitad: one implementation.
#ifndef WIRE_DIGEST_H
#define WIRE_DIGEST_H

#include <stddef.h>
#include <stdint.h>

// HMAC-SHA256 under `key` (the server's token) of
//   "partita-input-v1" NUL model NUL session(u64) sequence(u64) n_values(u32) values(f64...)
//   n_index(u32) index(u32...)
// all little-endian: the InputFrame's fields. It covers the session, so a frame cannot be
// replayed into another one. 0, or -1 when libcrypto could not compute it.
int wire_input_digest(const char *key, const char *model, uint64_t session, uint64_t sequence,
                      const double *values, size_t n_values, const uint32_t *index,
                      size_t n_index, uint8_t out[32]);

#endif
