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

#include "chain_urdf.h"  // chain_yaml_text: n links of 0.5 m released from horizontal
#include "partita.h"

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
      char text[64 * 1024];
      pt_load_options opt = {0};
      opt.no_joint_limits = c == 2;   // the limits kept, not enforced
      pt_model *m = NULL;
      pt_error err;
      if (chain_yaml_text(text, sizeof(text), sizes[s], c > 0 ? 0.3 : 0) ||
          pt_model_load_string(text, strlen(text), 1, "chain", &opt, &m, &err)) {
        fprintf(stderr, "chain %d: %s\n", sizes[s], err.msg);
        return 1;
      }
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
