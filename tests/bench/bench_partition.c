// bench_partition.c: CPU time of the coordinate partitionings (prints a table, asserts
// nothing), as the hybrid seed's Table 1: LU only, QR only and hybrid on the four-bar
// released 10 degrees above its flat position, 10 s with RK4 at dt = 1e-3, and on the
// five-cell chain. Each run is repeated and the fastest time is kept.
//   usage: bench_partition MODELS_DIR [REPEATS]
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "partita.h"

typedef struct {
  int rc;
  long steps;
  double cpu, drift;
  pt_counters c;
} outcome;

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static outcome run(const pt_model *m, int mode, double T) {
  outcome o = {0, 0, 0, 0, {0}};
  pt_data *d = pt_data_new(m);
  if (!d) {
    o.rc = -1;
    return o;
  }
  pt_set_partition_mode(d, mode);
  const double e0 = pt_energy_kinetic(d) + pt_energy_potential(d);
  const long n = (long)(T / pt_model_dt(m) + 0.5);
  const double t0 = cpu_now();
  for (long i = 0; i < n && !o.rc; i++) {
    o.rc = pt_step(m, d);
    if (!o.rc) o.steps++;
    double e = pt_energy_kinetic(d) + pt_energy_potential(d) - e0;
    if (e < 0) e = -e;
    if (e > o.drift) o.drift = e;
  }
  o.cpu = cpu_now() - t0;
  pt_get_counters(d, &o.c);
  pt_data_free(d);
  return o;
}

static void bench_model(const char *dir, const char *file, double T, int repeats) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  pt_model *m = NULL;
  pt_error err;
  if (pt_model_load_file(path, NULL, &m, &err)) {
    printf("%s: %s\n", path, err.msg);
    return;
  }
  const int modes[3] = {PT_MODE_LU, PT_MODE_QR, PT_MODE_HYBRID};
  const char *names[3] = {"LU only", "QR only", "hybrid"};
  printf("\n%s, %.0f s, RK4, dt = %g (best of %d)\n", file, T, pt_model_dt(m), repeats);
  printf("%-8s %9s %10s %9s %7s %9s %7s\n", "method", "cpu [s]", "us/step", "drift[J]",
         "rebuild", "QR steps", "->QR");
  for (int k = 0; k < 3; k++) {
    outcome best = {0, 0, 1e300, 0, {0}};
    for (int r = 0; r < repeats; r++) {
      outcome o = run(m, modes[k], T);
      if (o.cpu < best.cpu) best = o;
    }
    printf("%-8s %9.3f %10.1f %9.2e %7lld %9lld %7lld", names[k], best.cpu,
           1e6 * best.cpu / (double)(best.steps > 0 ? best.steps : 1), best.drift,
           (long long)best.c.repartitions, (long long)best.c.qr_steps,
           (long long)best.c.qr_switches);
    if (best.rc) printf("  (stopped at t = %.3f: %s)", (double)best.steps * pt_model_dt(m),
                        pt_strerror(best.rc));
    printf("\n");
  }
  pt_model_free(m);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODELS_DIR [REPEATS]\n", argv[0]);
    return 2;
  }
  int repeats = argc > 2 ? atoi(argv[2]) : 3;
  if (repeats < 1 || repeats > 100) repeats = 3;
  bench_model(argv[1], "fourbar_singular.yaml", 10, repeats);
  bench_model(argv[1], "fivebar_chain.yaml", 10, 1);
  return 0;
}
