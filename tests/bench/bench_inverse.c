// bench_inverse.c: microseconds per torque request (every joint actuated, every joint
// acceleration requested) on the 7-DOF arm of configs/models/panda.urdf (argv[1]) and on
// revolute chains of 8 to 64 links, next to one forward-dynamics evaluation (pt_forward), with
// the path that answered (tree: the recursive pass; schur: the general path).
// Measured, not asserted. Each request is also checked against forward dynamics once (a
// round trip), so the numbers are of a computation that works.
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partita.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// A chain of n slender links (0.3 m, 0.4 kg) along +x, joint axes alternating y and z so the
// chain is spatial, every joint with a torque actuator named after it.
static char *chain_yaml(int n) {
  size_t cap = 512 + (size_t)n * 600;
  char *s = malloc(cap);
  if (!s) return NULL;
  size_t k = (size_t)snprintf(s, cap, "model: chain%d\nbodies:\n", n);
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(s + k, cap - k,
                          "  - {name: l%d, mass: 0.4, inertia: [0.00002, 0.003, 0.003], "
                          "position: [%.3f, 0, 0]}\n", i, 0.3 * i + 0.15);
  k += (size_t)snprintf(s + k, cap - k, "joints:\n");
  for (int i = 0; i < n; i++) {
    char parent[16] = "ground";
    if (i > 0) snprintf(parent, sizeof(parent), "l%d", i - 1);
    k += (size_t)snprintf(s + k, cap - k,
                          "  - {name: j%d, type: revolute, body1: %s, body2: l%d, "
                          "point: [%.3f, 0, 0], axis: [0, %d, %d]}\n",
                          i, parent, i, 0.3 * i, i % 2 == 0, i % 2 == 1);
  }
  k += (size_t)snprintf(s + k, cap - k, "actuators:\n");
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(s + k, cap - k, "  - {name: j%d, type: joint_torque, joint: j%d}\n",
                          i, i);
  return s;
}

// Times requests for every actuated joint coordinate; prints one table row.
static int bench(const char *label, pt_model *m) {
  const int nact = pt_model_nactuator(m);
  pt_data *d = pt_data_new(m);
  pt_inverse_result *res = pt_inverse_result_new(m, nact);
  pt_assign *acc = calloc((size_t)nact + 1, sizeof(*acc));
  pt_assign *pos = calloc((size_t)nact + 1, sizeof(*pos));
  if (!d || !res || !acc || !pos) return 1;
  int n = 0;
  for (int a = 0; a < nact; a++) {
    const int c = pt_coord_index(m, pt_actuator_name(m, a));
    if (c < 0) continue;
    pos[n] = (pt_assign){c, 0.2 * sin(1.7 * n + 0.3)};
    acc[n] = (pt_assign){c, 1.5 * cos(0.9 * n)};
    n++;
  }
  pt_error err = {0};
  if (pt_set_state(m, d, pos, n, NULL, 0, &err)) {
    fprintf(stderr, "%s: state: %s\n", label, err.msg);
    return 1;
  }
  if (pt_inverse_request(m, d, acc, n, res, &err)) {
    fprintf(stderr, "%s: request: %s\n", label, err.msg);
    return 1;
  }
  // round trip once: the efforts reproduce the requested accelerations
  double worst = 0;
  for (int k = 0; k < n; k++)
    pt_set_input(m, d, pt_input_index(m, pt_actuator_name(m, res->req_actuator[k])),
                 res->req_effort[k]);
  pt_forward(m, d);
  for (int k = 0; k < n; k++)
    worst = fmax(worst, fabs(pt_coord_accels(d)[acc[k].coord] - acc[k].value));
  double t0 = now(), t1;
  long reps = 0;
  do {
    pt_inverse_request(m, d, acc, n, res, &err);
    reps++;
    t1 = now();
  } while (t1 - t0 < 0.3 && reps < 1000000);
  const double us_req = 1e6 * (t1 - t0) / (double)reps;
  t0 = now();
  long freps = 0;
  do {
    pt_forward(m, d);
    freps++;
    t1 = now();
  } while (t1 - t0 < 0.3 && freps < 1000000);
  const double us_fwd = 1e6 * (t1 - t0) / (double)freps;
  printf("| %-12s | %6d | %4d | %-6s | %10.1f | %10.1f | %10.2g |\n", label, pt_model_nbody(m),
         pt_model_ndof(m), res->method == PT_INVERSE_TREE ? "tree" : "schur", us_req, us_fwd,
         worst);
  free(acc);
  free(pos);
  pt_inverse_result_free(res);
  pt_data_free(d);
  return 0;
}

int main(int argc, char **argv) {
  printf("| model        | bodies |  dof | path   | request us | forward us | round trip |\n");
  printf("|--------------|-------:|-----:|--------|-----------:|-----------:|-----------:|\n");
  int rc = 0;
  if (argc > 1) {
    pt_model *m = NULL;
    pt_error err = {0};
    if (pt_model_load_file(argv[1], NULL, &m, &err)) {
      fprintf(stderr, "%s: %s\n", argv[1], err.msg);
      rc = 1;
    } else {
      rc |= bench("panda (7R)", m);
      pt_model_free(m);
    }
  }
  const int sizes[4] = {8, 16, 32, 64};
  for (int i = 0; i < 4; i++) {
    char *text = chain_yaml(sizes[i]), label[32];
    pt_model *m = NULL;
    pt_error err = {0};
    if (!text || pt_model_load_string(text, strlen(text), 1, "chain", NULL, &m, &err)) {
      fprintf(stderr, "chain %d: %s\n", sizes[i], err.msg);
      free(text);
      rc = 1;
      continue;
    }
    snprintf(label, sizeof(label), "chain %d", sizes[i]);
    rc |= bench(label, m);
    pt_model_free(m);
    free(text);
  }
  return rc;
}
