// fuzz_viewer_json: what a browser sends the viewer's WebSocket (daemon/viewer/http.c): JSON
// parsed by json-c (depth 16, as the daemon does), turned into a Request by the descriptor-
// driven converter (daemon/viewer/pbjson.c), packed and unpacked, and written back as JSON.
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "partita.pb-c.h"
#include "viewer/pbjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 65536)
    return 0;
  json_tokener *tok = json_tokener_new_ex(16);
  if (!tok)
    return 0;
  json_object *j = json_tokener_parse_ex(tok, (const char *)data, (int)size);
  json_tokener_free(tok);
  if (!j)
    return 0;
  char err[256];
  ProtobufCMessage *m = NULL;
  if (pbjson_to_message(&partita__v1__request__descriptor, j, &m, err, sizeof(err)) == 0) {
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(n ? n : 1);
    if (buf) {
      protobuf_c_message_pack(m, buf);
      Partita__V1__Request *back = partita__v1__request__unpack(NULL, n, buf);
      if (back) {
        json_object *again = pbjson_from_message(&back->base);
        if (again) {
          (void)json_object_to_json_string_ext(again, JSON_C_TO_STRING_PLAIN);
          json_object_put(again);
        }
        partita__v1__request__free_unpacked(back, NULL);
      }
      free(buf);
    }
    protobuf_c_message_free_unpacked(m, NULL);
  }
  json_object_put(j);
  return 0;
}
