// bench_limits: microseconds per RK4 step of revolute chains (n links released from
// horizontal, as bench_step) without limits, with limits [-0.3, 0.3] on every joint that are
// hit and then held (src/core/limits.c), and with the same limits switched off. Measured, never
// asserted: prints a table.
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partita.h"

static char *chain_yaml(int n, int limits, int off) {
  size_t cap = 512 + (size_t)n * 400;
  char *t = malloc(cap);
  if (!t) return NULL;
  size_t k = (size_t)snprintf(t, cap, "model: chain%d\n%sbodies:\n", n,
                              off ? "simulation: {joint_limits: off}\n" : "");
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(t + k, cap - k,
                          "  - {name: l%d, mass: 1, inertia: [0.0001, 0.0208333, 0.0208333], "
                          "position: [%.3f, 0, 0]}\n", i, 0.5 * i + 0.25);
  k += (size_t)snprintf(t + k, cap - k, "joints:\n");
  for (int i = 0; i < n; i++) {
    char parent[16] = "ground";
    if (i) snprintf(parent, sizeof(parent), "l%d", i - 1);
    k += (size_t)snprintf(t + k, cap - k,
                          "  - {name: j%d, type: revolute, body1: %s, body2: l%d, "
                          "point: [%.3f, 0, 0], axis: [0, 1, 0]%s}\n",
                          i, parent, i, 0.5 * i, limits ? ", limits: [-0.3, 0.3]" : "");
  }
  return t;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv) {
  double budget = argc > 1 ? atof(argv[1]) : 0.3;  // seconds of stepping per case
  const int sizes[] = {7, 32};
  const char *names[3] = {"no limits", "limits, enforced", "limits, off"};
  printf("| links | case | us/step (RK4) | steps timed | impacts | held at the end |\n");
  printf("|---:|---|---:|---:|---:|---:|\n");
  for (int s = 0; s < 2; s++)
    for (int c = 0; c < 3; c++) {
      char *text = chain_yaml(sizes[s], c > 0, c == 2);
      pt_model *m = NULL;
      pt_error err;
      if (!text || pt_model_load_string(text, strlen(text), 1, "chain", NULL, &m, &err)) {
        fprintf(stderr, "chain %d: %s\n", sizes[s], text ? err.msg : "out of memory");
        return 1;
      }
      free(text);
      pt_data *d = pt_data_new(m);
      pt_set_integrator(d, PT_INT_RK4);
      for (int i = 0; i < 500; i++) pt_step(m, d);  // falls onto its limits
      long steps = 0;
      double t0 = now(), t1;
      do {
        for (int i = 0; i < 50; i++, steps++)
          if (pt_step(m, d)) pt_data_reset(m, d);
        t1 = now();
      } while (t1 - t0 < budget);
      pt_counters ct;
      pt_get_counters(d, &ct);
      int held = 0;
      for (int j = 0; j < pt_model_njoint(m); j++) held += pt_joint_limit_state(d, j, NULL, NULL) != 0;
      printf("| %d | %s | %.2f | %ld | %lld | %d |\n", sizes[s], names[c],
             1e6 * (t1 - t0) / steps, steps, (long long)ct.limit_impacts, held);
      pt_data_free(d);
      pt_model_free(m);
    }
  return 0;
}
