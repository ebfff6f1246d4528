// pbjson.c: protobuf-c messages to and from JSON (json-c), driven by the generated
// descriptors, for the viewer's WebSocket (http.c). Field names are the .proto names
// (snake_case), enums travel by name (numbers accepted), 64-bit integers as JSON numbers.
// Only what a JSON text can say is accepted: bytes fields are refused, depth is bounded.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewer/pbjson.h"

#define MAX_DEPTH 8
#define MAX_REPEATED 100000

// ---------------------------------------------------------------------------------------------
// protobuf to JSON

static json_object *scalar_to_json(const ProtobufCFieldDescriptor *f, const void *p) {
  switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
      return json_object_new_int(*(const int32_t *)p);
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
      return json_object_new_int64(*(const uint32_t *)p);
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
      return json_object_new_int64(*(const int64_t *)p);
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
      return json_object_new_uint64(*(const uint64_t *)p);
    case PROTOBUF_C_TYPE_FLOAT:
      return json_object_new_double(*(const float *)p);
    case PROTOBUF_C_TYPE_DOUBLE:
      return json_object_new_double(*(const double *)p);
    case PROTOBUF_C_TYPE_BOOL:
      return json_object_new_boolean(*(const protobuf_c_boolean *)p);
    case PROTOBUF_C_TYPE_ENUM: {
      const ProtobufCEnumValue *ev =
          protobuf_c_enum_descriptor_get_value(f->descriptor, *(const int *)p);
      return ev ? json_object_new_string(ev->name) : json_object_new_int(*(const int *)p);
    }
    case PROTOBUF_C_TYPE_STRING: {
      const char *s = *(char *const *)p;
      return json_object_new_string(s ? s : "");
    }
    case PROTOBUF_C_TYPE_BYTES:
      return NULL;   // none in the messages the viewer sees
    case PROTOBUF_C_TYPE_MESSAGE: {
      const ProtobufCMessage *m = *(const ProtobufCMessage *const *)p;
      return m ? pbjson_from_message(m) : NULL;
    }
  }
  return NULL;
}

static size_t elem_size(const ProtobufCFieldDescriptor *f) {
  switch (f->type) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
      return 8;
    case PROTOBUF_C_TYPE_BOOL:
      return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_ENUM:
      return sizeof(int);
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE:
      return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
      return sizeof(ProtobufCBinaryData);
    default:
      return 4;
  }
}

json_object *pbjson_from_message(const ProtobufCMessage *m) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  json_object *o = json_object_new_object();
  if (!o) return NULL;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    const char *base = (const char *)m;
    const void *p = base + f->offset;
    json_object *v = NULL;
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
      if (*(const uint32_t *)(const void *)(base + f->quantifier_offset) != f->id) continue;
      v = scalar_to_json(f, p);
    } else if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t n = *(const size_t *)(const void *)(base + f->quantifier_offset);
      const char *arr = *(const char *const *)p;
      v = json_object_new_array_ext((int)n);
      for (size_t k = 0; v && k < n; k++) {
        json_object *e = scalar_to_json(f, arr + k * elem_size(f));
        json_object_array_add(v, e ? e : json_object_new_null());
      }
    } else {
      if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type != PROTOBUF_C_TYPE_MESSAGE &&
          f->type != PROTOBUF_C_TYPE_STRING &&
          !*(const protobuf_c_boolean *)(const void *)(base + f->quantifier_offset))
        continue;
      v = scalar_to_json(f, p);
    }
    if (v) json_object_object_add(o, f->name, v);
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// JSON to protobuf

static int fail(char *err, size_t errlen, const char *fmt, const char *a, const char *b) {
  snprintf(err, errlen, fmt, a, b);
  return -1;
}

// A JSON value in a message: "null" for JSON's null (a NULL object in json-c).
static const char *jstr(json_object *j) {
  const char *s = j ? json_object_get_string(j) : NULL;
  return s ? s : "null";
}

// An integer: a JSON integer, or a double with an integral value in int64's range.
static int64_t as_int(json_object *j, int *ok) {
  if (json_object_is_type(j, json_type_int)) {
    *ok = 1;
    return json_object_get_int64(j);
  }
  double d = json_object_is_type(j, json_type_double) ? json_object_get_double(j) : 0.5;
  *ok = d == floor(d) && fabs(d) < 9.2e18;
  return *ok ? (int64_t)d : 0;
}

static int set_scalar(const ProtobufCFieldDescriptor *f, void *p, json_object *j, int depth,
                      char *err, size_t errlen) {
  int ok = 1;
  switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: {
      int64_t v = as_int(j, &ok);
      if (!ok || v < INT32_MIN || v > INT32_MAX) break;
      *(int32_t *)p = (int32_t)v;
      return 0;
    }
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32: {
      int64_t v = as_int(j, &ok);
      if (!ok || v < 0 || v > UINT32_MAX) break;
      *(uint32_t *)p = (uint32_t)v;
      return 0;
    }
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
      *(int64_t *)p = as_int(j, &ok);
      if (!ok) break;
      return 0;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64: {
      int64_t v = as_int(j, &ok);
      if (!ok || v < 0) break;
      *(uint64_t *)p = (uint64_t)v;
      return 0;
    }
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE: {
      if (!json_object_is_type(j, json_type_double) && !json_object_is_type(j, json_type_int))
        break;
      double v = json_object_get_double(j);
      if (f->type == PROTOBUF_C_TYPE_FLOAT)
        *(float *)p = (float)v;
      else
        *(double *)p = v;
      return 0;
    }
    case PROTOBUF_C_TYPE_BOOL:
      if (!json_object_is_type(j, json_type_boolean)) break;
      *(protobuf_c_boolean *)p = json_object_get_boolean(j);
      return 0;
    case PROTOBUF_C_TYPE_ENUM: {
      const ProtobufCEnumValue *ev = NULL;
      if (json_object_is_type(j, json_type_string))
        ev = protobuf_c_enum_descriptor_get_value_by_name(f->descriptor,
                                                           json_object_get_string(j));
      else if (json_object_is_type(j, json_type_int))
        ev = protobuf_c_enum_descriptor_get_value(f->descriptor, json_object_get_int(j));
      if (!ev) return fail(err, errlen, "field %s: unknown value %.60s", f->name, jstr(j));
      *(int *)p = ev->value;
      return 0;
    }
    case PROTOBUF_C_TYPE_STRING: {
      if (!json_object_is_type(j, json_type_string)) break;
      char *s = strdup(json_object_get_string(j));
      if (!s) return fail(err, errlen, "%s%s", "out of memory", "");
      *(char **)p = s;
      return 0;
    }
    case PROTOBUF_C_TYPE_BYTES:
      return fail(err, errlen, "field %s: bytes are not accepted here%s", f->name, "");
    case PROTOBUF_C_TYPE_MESSAGE: {
      if (!json_object_is_type(j, json_type_object)) break;
      ProtobufCMessage *sub = NULL;
      if (pbjson_to_message_depth(f->descriptor, j, &sub, depth + 1, err, errlen)) return -1;
      *(ProtobufCMessage **)p = sub;
      return 0;
    }
  }
  return fail(err, errlen, "field %s: a value of the wrong type (%.60s)", f->name, jstr(j));
}

int pbjson_to_message_depth(const ProtobufCMessageDescriptor *d, json_object *j,
                            ProtobufCMessage **out, int depth, char *err, size_t errlen) {
  *out = NULL;
  if (depth > MAX_DEPTH) return fail(err, errlen, "nested deeper than %s%s", "8", "");
  if (!json_object_is_type(j, json_type_object))
    return fail(err, errlen, "%s: an object expected%s", d->short_name, "");
  ProtobufCMessage *m = calloc(1, d->sizeof_message);
  if (!m) return fail(err, errlen, "%s%s", "out of memory", "");
  protobuf_c_message_init(d, m);
  char *base = (char *)m;
  json_object_object_foreach(j, key, val) {
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, key);
    if (!f) {
      fail(err, errlen, "%s has no field %.60s", d->short_name, key);
      goto bad;
    }
    void *p = base + f->offset;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      if (!json_object_is_type(val, json_type_array)) {
        fail(err, errlen, "field %s: a list expected%s", f->name, "");
        goto bad;
      }
      size_t n = json_object_array_length(val);
      if (n > MAX_REPEATED || *(void **)p) {
        fail(err, errlen, "field %s: too many values or given twice%s", f->name, "");
        goto bad;
      }
      size_t es = elem_size(f);
      char *arr = calloc(n ? n : 1, es);
      if (!arr) {
        fail(err, errlen, "%s%s", "out of memory", "");
        goto bad;
      }
      *(void **)p = arr;
      size_t *np = (size_t *)(void *)(base + f->quantifier_offset);
      for (size_t k = 0; k < n; k++) {
        if (set_scalar(f, arr + k * es, json_object_array_get_idx(val, k), depth, err, errlen))
          goto bad;
        *np = k + 1;   // the elements set so far are freed with the message
      }
      continue;
    }
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
      uint32_t *cs = (uint32_t *)(void *)(base + f->quantifier_offset);
      if (*cs) {
        fail(err, errlen, "%s: more than one of a oneof (%.60s)", d->short_name, key);
        goto bad;
      }
      if (set_scalar(f, p, val, depth, err, errlen)) goto bad;
      *cs = f->id;
      continue;
    }
    if ((f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING) &&
        *(void **)p && *(void **)p != f->default_value) {
      fail(err, errlen, "field %s given twice%s", f->name, "");
      goto bad;
    }
    if (set_scalar(f, p, val, depth, err, errlen)) goto bad;
    if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type != PROTOBUF_C_TYPE_MESSAGE &&
        f->type != PROTOBUF_C_TYPE_STRING)
      *(protobuf_c_boolean *)(void *)(base + f->quantifier_offset) = 1;
  }
  *out = m;
  return 0;
bad:
  protobuf_c_message_free_unpacked(m, NULL);
  return -1;
}

int pbjson_to_message(const ProtobufCMessageDescriptor *d, json_object *j,
                      ProtobufCMessage **out, char *err, size_t errlen) {
  return pbjson_to_message_depth(d, j, out, 0, err, errlen);
}
