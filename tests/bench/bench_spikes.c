// bench_spikes: how bounded is one step? (issue 10, item 4) Over 3 s of a falling, swinging
// 7-DOF arm (panda.urdf released from a bent pose) and of the parallelogram four-bar through
// its singular positions (fourbar_singular.yaml), RK4 at dt = 1 ms: thread CPU time of every
// step (CLOCK_THREAD_CPUTIME_ID), each step the minimum over three identical runs so that
// machine noise drops out; prints the median and slowest step, their ratio, the partition
// rebuilds and LU/QR switches, and the allocations made inside pt_step (counting allocator).
// Then the joint limits on a tree (issue 23, item 8): the iiwa14-class arm released from a
// bent pose falls onto its URDF limits, and the steps that impact or hold a limit are set
// beside the free ones (the same arm with the limits off). Measured, never asserted.
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
    // what the step did besides integrating: R rebuild, Q to QR, L back to LU, q a QR step,
    // I a limit's impact, H a limit held
    int held = 0;
    for (int j = 0; j < pt_model_njoint(m); j++) held |= pt_joint_limit_state(d, j, NULL, NULL);
    what[i] = c1.lu_switches != c0.lu_switches     ? 'L'
              : c1.qr_switches != c0.qr_switches   ? 'Q'
              : c1.repartitions != c0.repartitions ? 'R'
              : c1.qr_steps != c0.qr_steps         ? 'q'
              : c1.limit_impacts != c0.limit_impacts ? 'I'
              : held                               ? 'H'
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

// The median of the steps marked `kind` in what (0 when there are none); n of them in *count.
static double median_of(const double *t, const char *what, int n, char kind, int *count) {
  double *v = malloc(sizeof(double) * (size_t)(n + 1));
  int k = 0;
  for (int i = 0; i < n; i++)
    if (what[i] == kind) v[k++] = t[i];
  qsort(v, (size_t)k, sizeof(double), cmp_double);
  const double med = k ? v[k / 2] : 0;
  free(v);
  *count = k;
  return med;
}

static void bench(const char *dir, const char *file, const char *label, int limits,
                  const char *const *names, const double *angles, int npos, double seconds) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  pt_model *m = NULL;
  pt_error err;
  const pt_load_options with_limits = {0};
  if (pt_model_load_file(path, limits ? &with_limits : &no_limits, &m, &err)) {
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
    printf(" (R rebuild, Q to QR, L back to LU, q QR step, I limit impact, H limit held) -->\n");
    free(order);
    if (limits) {  // the steps with a limit beside the free ones
      int nfree, nheld, nimp;
      const double mf = median_of(best, what, done, '.', &nfree);
      const double mh = median_of(best, what, done, 'H', &nheld);
      const double mi = median_of(best, what, done, 'I', &nimp);
      double maxi = 0;
      for (int i = 0; i < done; i++)
        if (what[i] == 'I' && best[i] > maxi) maxi = best[i];
      printf("<!-- %s: free steps %d, median %.1f us; holding a limit %d, median %.1f us "
             "(%.2fx); impacts %d, median %.1f us (%.2fx), slowest %.1f us (%.2fx) -->\n",
             label, nfree, 1e6 * mf, nheld, 1e6 * mh, mf > 0 ? mh / mf : 0, nimp, 1e6 * mi,
             mf > 0 ? mi / mf : 0, 1e6 * maxi, mf > 0 ? maxi / mf : 0);
    }
    qsort(best, (size_t)done, sizeof(double), cmp_double);
    const double med = best[done / 2];
    printf("| %s | %d | %.1f | %.1f (step %d) | %.2f | %lld | %lld / %lld | %ld |\n", label,
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
  bench(dir, "panda.urdf", "panda.urdf", 0, arm, arm_q, 7, seconds);
  bench(dir, "fourbar_singular.yaml", "fourbar_singular.yaml", 0, NULL, NULL, 0, seconds);
  // a falling iiwa-class arm onto its URDF limits, and the same arm with them off
  const char *iiwa[] = {"iiwa_joint_1", "iiwa_joint_2", "iiwa_joint_3", "iiwa_joint_4",
                        "iiwa_joint_5", "iiwa_joint_6", "iiwa_joint_7"};
  const double iiwa_q[] = {0, 0.5, 0, -0.5, 0, 0.5, 0};
  bench(dir, "iiwa14.urdf", "iiwa14.urdf, URDF limits", 1, iiwa, iiwa_q, 7, seconds);
  bench(dir, "iiwa14.urdf", "iiwa14.urdf, limits off", 0, iiwa, iiwa_q, 7, seconds);
  return 0;
}
