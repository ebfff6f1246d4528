// bench_spikes: how bounded is one step? (issue 10, item 4) Over 3 s of a falling, swinging
// 7-DOF arm (panda.urdf released from a bent pose) and of the parallelogram four-bar through
// its singular positions (fourbar_singular.yaml), RK4 at dt = 1 ms: thread CPU time of every
// step (CLOCK_THREAD_CPUTIME_ID), each step the minimum over three identical runs so that
// machine noise drops out; prints the median and slowest step, their ratio, the partition
// rebuilds and LU/QR switches, and the allocations made inside pt_step (counting allocator).
// Measured, never asserted.
//   bench_spikes <configs/models> [seconds]
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "count_alloc.h"
#include "partita.h"

// MuJoCo runs with joint limits off (the engine issue's comparison): so does Partita here.
static const pt_load_options no_limits = {.no_joint_limits = 1};


static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

// One run from the model's initial state with `npos` joint angles set; per-step times in t.
static int run(const pt_model *m, const pt_assign *pos, int npos, int nstep, double *t,
               pt_counters *c, long *allocs, char *what) {
  pt_data *d = pt_data_new(m);
  pt_error err;
  if (npos > 0 && pt_set_state(m, d, pos, npos, NULL, 0, &err)) {
    printf("set_state: %s\n", err.msg);
    pt_data_free(d);
    return -1;
  }
  *allocs = 0;
  int done = 0;
  for (int i = 0; i < nstep; i++) {
    pt_counters c0, c1;
    pt_get_counters(d, &c0);
    count_alloc_n = 0;
    count_alloc_on = 1;
    const double t0 = cpu_now();
    const int rc = pt_step(m, d);
    const double t1 = cpu_now();
    count_alloc_on = 0;
    pt_get_counters(d, &c1);
    // what the step did besides integrating: R rebuild, Q to QR, L back to LU, q a QR step
    what[i] = c1.lu_switches != c0.lu_switches   ? 'L'
              : c1.qr_switches != c0.qr_switches ? 'Q'
              : c1.repartitions != c0.repartitions ? 'R'
              : c1.qr_steps != c0.qr_steps        ? 'q'
                                                  : '.';
    *allocs += count_alloc_n;
    if (rc) {
      printf("step %d failed: %s\n", i, pt_strerror(rc));
      break;
    }
    t[i] = t1 - t0;
    done++;
  }
  pt_get_counters(d, c);
  pt_data_free(d);
  return done;
}

static void bench(const char *dir, const char *file, const char *const *names,
                  const double *angles, int npos, double seconds) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  pt_model *m = NULL;
  pt_error err;
  if (pt_model_load_file(path, &no_limits, &m, &err)) {
    printf("| %s | load failed: %s |\n", file, err.msg);
    return;
  }
  pt_assign pos[8];
  for (int i = 0; i < npos; i++) {
    pos[i].coord = pt_coord_index(m, names[i]);
    pos[i].value = angles[i];
  }
  const int nstep = (int)lround(seconds / 1e-3);
  double *best = malloc(sizeof(double) * (size_t)nstep), *t = malloc(sizeof(double) * nstep);
  char *what = malloc((size_t)nstep + 1);
  pt_counters c;
  long allocs = 0;
  int done = nstep;
  for (int r = 0; r < 3; r++) {
    const int n = run(m, pos, npos, nstep, t, &c, &allocs, what);
    if (n < done) done = n;
    for (int i = 0; i < n; i++) best[i] = r == 0 || t[i] < best[i] ? t[i] : best[i];
  }
  if (done > 0) {
    double maxv = 0;
    int imax = 0;
    for (int i = 0; i < done; i++)
      if (best[i] > maxv) maxv = best[i], imax = i;
    // the five slowest steps and what they did
    double *order = malloc(sizeof(double) * (size_t)done);
    for (int i = 0; i < done; i++) order[i] = best[i];
    qsort(order, (size_t)done, sizeof(double), cmp_double);
    printf("<!-- %s slowest steps:", file);
    for (int r = 0; r < 5 && r < done; r++)
      for (int i = 0; i < done; i++)
        if (best[i] == order[done - 1 - r]) {
          printf(" %d%c %.1f us;", i, what[i], 1e6 * best[i]);
          break;
        }
    printf(" (R rebuild, Q to QR, L back to LU, q QR step) -->\n");
    free(order);
    qsort(best, (size_t)done, sizeof(double), cmp_double);
    const double med = best[done / 2];
    printf("| %s | %d | %.1f | %.1f (step %d) | %.2f | %lld | %lld / %lld | %ld |\n", file,
           done, 1e6 * med, 1e6 * maxv, imax, maxv / med, (long long)c.repartitions,
           (long long)c.qr_switches, (long long)c.lu_switches, allocs);
  }
  free(best);
  free(t);
  free(what);
  pt_model_free(m);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "configs/models";
  const double seconds = argc > 2 ? atof(argv[2]) : 3.0;
  printf("| model | steps | median step [us] | slowest step [us] | slowest / median | "
         "rebuilds | LU->QR / QR->LU | allocations in pt_step |\n"
         "|---|---:|---:|---:|---:|---:|---:|---:|\n");
  const char *arm[] = {"panda_joint1", "panda_joint2", "panda_joint3", "panda_joint4",
                       "panda_joint5", "panda_joint6", "panda_joint7"};
  const double arm_q[] = {0, 0.5, 0, -0.5, 0, 0.5, 0};
  bench(dir, "panda.urdf", arm, arm_q, 7, seconds);
  bench(dir, "fourbar_singular.yaml", NULL, NULL, 0, seconds);
  return 0;
}
