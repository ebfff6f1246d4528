// digest.c: the keyed digest of a UDP input frame (digest.h), with libcrypto's HMAC.
#include "digest.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <string.h>

static void put_u32(EVP_MAC_CTX *h, uint32_t v) {
  uint8_t b[4];
  for (int i = 0; i < 4; i++)
    b[i] = (uint8_t)(v >> (8 * i));
  EVP_MAC_update(h, b, 4);
}

static void put_u64(EVP_MAC_CTX *h, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; i++)
    b[i] = (uint8_t)(v >> (8 * i));
  EVP_MAC_update(h, b, 8);
}

int wire_input_digest(const char *key, const char *model, uint64_t session, uint64_t sequence,
                      const double *values, size_t n_values, const uint32_t *index,
                      size_t n_index, uint8_t out[32]) {
  static const char tag[] = "partita-input-v1";
  EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
  EVP_MAC_CTX *h = mac ? EVP_MAC_CTX_new(mac) : NULL;
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0),
                         OSSL_PARAM_construct_end()};
  size_t len = 0;
  int ok = h && EVP_MAC_init(h, (const uint8_t *)key, strlen(key), params);
  if (ok) {
    EVP_MAC_update(h, (const uint8_t *)tag, sizeof(tag));   // with its NUL
    EVP_MAC_update(h, (const uint8_t *)model, strlen(model) + 1);
    put_u64(h, session);
    put_u64(h, sequence);
    put_u32(h, (uint32_t)n_values);
    for (size_t i = 0; i < n_values; i++) {
      uint64_t bits;
      memcpy(&bits, &values[i], 8);
      put_u64(h, bits);
    }
    put_u32(h, (uint32_t)n_index);
    for (size_t i = 0; i < n_index; i++)
      put_u32(h, index[i]);
    ok = EVP_MAC_final(h, out, &len, 32) && len == 32;
  }
  EVP_MAC_CTX_free(h);
  EVP_MAC_free(mac);
  return ok ? 0 : -1;
}
