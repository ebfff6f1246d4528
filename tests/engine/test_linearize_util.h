// test_linearize_util.h: helpers shared by the linearization tests.
#ifndef PT_TEST_LINEARIZE_UTIL_H
#define PT_TEST_LINEARIZE_UTIL_H

#include "check.h"

// Sets coordinate values and rates by name (rates may be NULL); exits on failure.
static inline void set_named(const pt_model *m, pt_data *d, const char *const *names,
                             const double *pos, const double *vel, int n) {
  pt_assign p[16], v[16];
  for (int i = 0; i < n && i < 16; i++) {
    p[i].coord = v[i].coord = pt_coord_index(m, names[i]);
    if (p[i].coord < 0) {
      printf("FAIL: no coordinate %s\n", names[i]);
      exit(1);
    }
    p[i].value = pos[i];
    v[i].value = vel ? vel[i] : 0;
  }
  pt_error err = {0};
  if (pt_set_state(m, d, p, n, v, n, &err)) {
    printf("FAIL set_state: %s\n", err.msg);
    exit(1);
  }
}

// pt_linearize with these options; exits on failure.
static inline pt_linearization *linearize_with(const pt_model *m, const pt_data *d,
                                               const pt_linearize_options *o) {
  pt_linearization *r = NULL;
  pt_error err = {0};
  if (pt_linearize(m, d, o, &r, &err)) {
    printf("FAIL linearize: %s\n", err.msg);
    exit(1);
  }
  return r;
}

static inline pt_linearization *linearize(const pt_model *m, const pt_data *d,
                                          const char *const *states, int ns,
                                          const char *const *outputs, int ny) {
  const pt_linearize_options o = {states, ns, NULL, 0, outputs, ny, PT_LIN_SPARSE};
  return linearize_with(m, d, &o);
}

static inline double max_abs_eig(const pt_linearization *r) {
  double s = 0;
  for (int i = 0; i < 2 * r->nz; i++) s = fmax(s, hypot(r->eig[i].re, r->eig[i].im));
  return s;
}

#endif
