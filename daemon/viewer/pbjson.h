// pbjson.h: protobuf-c messages to and from json-c objects, by their descriptors (pbjson.c).
#ifndef PD_PBJSON_H
#define PD_PBJSON_H

#include <json-c/json.h>
#include <protobuf-c/protobuf-c.h>

// A new JSON object for m (NULL on out of memory): .proto field names, enums by name, unset
// oneof members and unset proto3 `optional` scalars left out.
json_object *pbjson_from_message(const ProtobufCMessage *m);
// A new message of type d from JSON object j (free with protobuf_c_message_free_unpacked).
// -1 with a message in err for unknown fields, wrong types, bytes fields, or nesting > 8.
int pbjson_to_message(const ProtobufCMessageDescriptor *d, json_object *j,
                      ProtobufCMessage **out, char *err, size_t errlen);
int pbjson_to_message_depth(const ProtobufCMessageDescriptor *d, json_object *j,
                            ProtobufCMessage **out, int depth, char *err, size_t errlen);

#endif
