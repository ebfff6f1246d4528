// bench_step: microseconds per RK4 step for revolute chains of 1..64 links and the fitted
// growth exponent (cost ~ n^k). Measured, never asserted: prints a table.
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
  double budget = argc > 1 ? atof(argv[1]) : 0.5;  // seconds of stepping per size
  const int sizes[] = {1, 2, 4, 8, 16, 32, 64};
  const int ns = sizeof(sizes) / sizeof(sizes[0]);
  double us[16], sx = 0, sy = 0, sxx = 0, sxy = 0;
  printf("| links | dof | constraints | us/step (RK4) | steps timed | repartitions |\n");
  printf("|---:|---:|---:|---:|---:|---:|\n");
  for (int s = 0; s < ns; s++) {
    char text[64 * 1024];
    pt_model *m = NULL;
    pt_error err;
    if (chain_yaml_text(text, sizeof(text), sizes[s], 0) ||
        pt_model_load_string(text, strlen(text), 1, "chain", NULL, &m, &err)) {
      fprintf(stderr, "chain %d: %s\n", sizes[s], err.msg);
      return 1;
    }
    pt_data *d = pt_data_new(m);
    pt_set_integrator(d, PT_INT_RK4);
    for (int i = 0; i < 20; i++) pt_step(m, d);  // warm up
    long steps = 0;
    double t0 = now(), t1;
    do {
      for (int i = 0; i < 50; i++) {
        if (pt_step(m, d)) {
          pt_data_reset(m, d);
        }
        steps++;
      }
      t1 = now();
    } while (t1 - t0 < budget);
    pt_counters c;
    pt_get_counters(d, &c);
    us[s] = 1e6 * (t1 - t0) / steps;
    printf("| %d | %d | %d | %.2f | %ld | %ld |\n", sizes[s], pt_model_ndof(m),
           pt_model_nconstraint(m), us[s], steps, (long)c.repartitions);
    if (sizes[s] >= 4) {  // fit on the larger sizes, where per-step overheads fade
      double x = log(sizes[s]), y = log(us[s]);
      sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    pt_data_free(d);
    pt_model_free(m);
  }
  const int nf = 5;
  double k = (nf * sxy - sx * sy) / (nf * sxx - sx * sx);
  printf("\nfitted growth exponent (4..64 links): cost ~ n^%.2f\n", k);
  return 0;
}
