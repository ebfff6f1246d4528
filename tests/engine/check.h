// check.h: a minimal test vocabulary for the engine tests (no framework needed).
#ifndef PT_TEST_CHECK_H
#define PT_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partita.h"

static int check_failures;

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      check_failures++;                                                    \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);               \
      printf(__VA_ARGS__);                                                 \
      printf("\n");                                                        \
    }                                                                      \
  } while (0)

// |a - b| <= tol * max(1, |b|) when rel, else |a - b| <= tol
#define CHECK_CLOSE(a, b, tol, what)                                               \
  do {                                                                             \
    double a_ = (a), b_ = (b);                                                     \
    CHECK(fabs(a_ - b_) <= (tol), "%s: %.17g vs %.17g (diff %.3g, tol %.3g)", what, \
          a_, b_, fabs(a_ - b_), (double)(tol));                                   \
  } while (0)

static inline pt_model *load_yaml(const char *text) {
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_string(text, strlen(text), 1, "test.yaml", NULL, &m, &err)) {
    printf("FAIL load: %s\n", err.msg);
    exit(1);
  }
  return m;
}

// ROOT/configs/models/NAME loaded (ROOT: the project root); exits on failure.
static inline pt_model *load_config(const char *root, const char *name) {
  char path[2048];
  snprintf(path, sizeof(path), "%.1000s/configs/models/%.900s", root, name);
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_file(path, NULL, &m, &err)) {
    printf("FAIL load %s: %s\n", path, err.msg);
    exit(1);
  }
  return m;
}

// A 1 kg rod of CoM 0.5 m below a y-axis hinge at the origin, with the inertia (and
// orientation: YAML keys, or "") given, then `rest` (the model's other sections).
static inline pt_model *rod_model(const char *inertia, const char *orientation, const char *rest) {
  char text[4096];
  snprintf(text, sizeof(text),
           "model: rod\n"
           "bodies:\n"
           "  - {name: rod, mass: 1, inertia: %s, position: [0, 0, -0.5]%s}\n"
           "joints:\n"
           "  - {name: hinge, type: revolute, body1: ground, body2: rod, point: [0, 0, 0],"
           " axis: [0, 1, 0]}\n%s", inertia, orientation, rest);
  return load_yaml(text);
}

#define ROD_INERTIA "[0.1, 0.1, 0.01]"  // inertia of the tests' rod
#define SLENDER_INERTIA "[0.0833333333333333, 0.0833333333333333, 1e-4]"  // a 1 m rod: J_O = 1/3

static inline double energy(const pt_data *d) {
  return pt_energy_kinetic(d) + pt_energy_potential(d);
}

static inline int finish(const char *name) {
  printf("%s: %s (%d failures)\n", name, check_failures ? "FAILED" : "ok", check_failures);
  return check_failures ? 1 : 0;
}

#endif
