// bench_controls: what control elements (issue 26) cost per step. Chains of N revolute links
// (tests/common's chain), RK4 at 1 ms, stepped three ways, interleaved in chunks of 50 steps
// (thread CPU time, best of three runs of 1 s each, so a change of machine load hits all alike):
//   plain:  a joint_torque actuator per joint, held inputs (no controls);
//   pid:    per joint a measured angle and rate, an error sum and a pid (kp, ki, kd with its
//           derivative filter) driving the joint's actuator: 5 signals, 2 states per joint;
//   motor:  the same with a DC motor's current dynamics (a state_space) between the pid and the
//           actuator: 6 signals, 3 states per joint.
// Printed: us per step of each and the ratios to plain. Measured, never asserted.
// Usage: bench_controls [SECONDS per run, default 1]
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chain_urdf.h"
#include "partita.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// The chain with an actuator per joint and, by kind (0 plain, 1 pid, 2 pid + motor), the
// control loop of each joint.
static pt_model *chain_model(int n, int kind) {
  size_t cap = 4096 + 1200 * (size_t)n;
  char *text = malloc(cap);
  if (!text || chain_yaml_text(text, cap, n, 0)) {
    free(text);
    return NULL;
  }
  size_t k = strlen(text);
  k += (size_t)snprintf(text + k, cap - k, "actuators:\n");
  for (int i = 0; i < n; i++) {
    const char *src = kind == 0 ? "" : kind == 1 ? ", source: c%d" : ", source: m%d.y1";
    char s[64];
    snprintf(s, sizeof(s), src, i);
    k += (size_t)snprintf(text + k, cap - k,
                          "  - {name: t%d, type: joint_torque, joint: j%d%s}\n", i, i, s);
  }
  if (kind > 0) {
    k += (size_t)snprintf(text + k, cap - k, "controls:\n");
    for (int i = 0; i < n; i++) {
      k += (size_t)snprintf(text + k, cap - k,
                            "  - {name: q%d, type: measure, coordinate: j%d}\n"
                            "  - {name: w%d, type: measure, rate: j%d}\n"
                            "  - {name: e%d, type: sum, inputs: [q%d], signs: [-1]}\n"
                            "  - {name: c%d, type: pid, input: e%d, kp: 50, ki: 5, kd: 2,"
                            " tf: 0.01}\n", i, i, i, i, i, i, i, i);
      if (kind == 2)
        k += (size_t)snprintf(text + k, cap - k,
                              "  - {name: m%d, type: state_space, inputs: [c%d, w%d],"
                              " A: [[-100]], B: [[100, -5]], C: [[0.05]]}\n", i, i, i);
    }
  }
  pt_model *m = NULL;
  pt_error err;
  if (pt_model_load_string(text, k, 1, "chain.yaml", NULL, &m, &err)) {
    printf("load: %s\n", err.msg);
    m = NULL;
  }
  free(text);
  return m;
}

static void bench(int n, double seconds) {
  pt_model *m[3];
  pt_data *d[3];
  for (int k = 0; k < 3; k++) {
    m[k] = chain_model(n, k);
    if (!m[k]) return;
    d[k] = pt_data_new(m[k]);
    pt_assign a = {0, 0.3};   // the chain off its rest (it swings; the loops pull it back)
    pt_error err;
    pt_set_state(m[k], d[k], &a, 1, NULL, 0, &err);
  }
  for (int i = 0; i < pt_model_ninput(m[0]); i++) pt_set_input(m[0], d[0], i, 0.1);
  const int steps = (int)lround(seconds / 1e-3), chunk = 50;
  double best[3] = {INFINITY, INFINITY, INFINITY};
  for (int rep = 0; rep < 3; rep++) {
    double t[3] = {0, 0, 0};
    pt_data *c[3];
    for (int k = 0; k < 3; k++) {
      c[k] = pt_data_new(m[k]);
      pt_data_copy(m[k], c[k], d[k]);
    }
    for (int s = 0; s < steps; s += chunk)
      for (int k = 0; k < 3; k++) {
        const double t0 = now();
        for (int j = 0; j < chunk; j++) pt_step(m[k], c[k]);
        t[k] += now() - t0;
      }
    for (int k = 0; k < 3; k++) {
      best[k] = fmin(best[k], 1e6 * t[k] / steps);
      pt_data_free(c[k]);
    }
  }
  printf("%-8d %10.2f %10.2f %10.2f %10.2f %10.2f %6d %6d\n", n, best[0], best[1], best[2],
         best[1] / best[0], best[2] / best[0], pt_model_ncontrol_state(m[1]),
         pt_model_ncontrol_state(m[2]));
  for (int k = 0; k < 3; k++) {
    pt_data_free(d[k]);
    pt_model_free(m[k]);
  }
}

int main(int argc, char **argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 1.0;
  printf("chain links: us per RK4 step (1 ms), best of 3 interleaved runs of %g s\n", seconds);
  printf("%-8s %10s %10s %10s %10s %10s %6s %6s\n", "links", "plain_us", "pid_us", "motor_us",
         "pid/pl", "motor/pl", "nx", "nx");
  const int sizes[] = {1, 7, 16, 64};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) bench(sizes[i], seconds);
  return 0;
}
