// fuzz_model.c: libFuzzer target for the model loaders, built twice: FUZZ_FORMAT 1 (YAML,
// src/load/load_yaml.c) and 2 (URDF, src/load/load_urdf.c). The input is the model text; a text that
// loads is compiled and stepped (20 steps): every path must end in a model or a message, never
// a crash, a leak or undefined behaviour. A refused text must say where (`SOURCE:`).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "partita.h"

#ifndef FUZZ_FORMAT
#error "FUZZ_FORMAT must be 1 (YAML) or 2 (URDF)"
#endif
#define NSTEPS 20

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Small limits keep each input fast (a few dozen bodies compile in milliseconds); the
  // limits themselves are exercised on the way.
  pt_load_options opt = {.max_bodies = 40, .max_joints = 60, .max_text_bytes = 1 << 16};
  opt.floating_base = size > 0 && (data[size - 1] & 1);
  pt_model *m = NULL;
  pt_error err = {0};
  int rc = pt_model_load_string((const char *)data, size, FUZZ_FORMAT, "fuzz", &opt, &m, &err);
  if (rc != PT_OK) {
    if (m || err.code != rc || strncmp(err.msg, "fuzz", 4) != 0) abort();
    return 0;
  }
  if (!m) abort();
  pt_data *d = pt_data_new(m);
  if (d) {
    for (int i = 0; i < NSTEPS; i++)
      if (pt_step(m, d) != PT_OK) break;
    pt_data_free(d);
  }
  pt_model_free(m);
  return 0;
}
