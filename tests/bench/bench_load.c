// bench_load: milliseconds to load (parse + compile: assembly, redundancy check, initial
// partition) and to make a pt_data for spatial revolute chains of 50..800 links, the fitted
// growth exponent (cost ~ n^k), and MuJoCo loading the same URDF beside it when MuJoCo is
// built in. Process CPU time (the loads are single-threaded; run with OPENBLAS_NUM_THREADS=1).
// Measured, never asserted: prints a table. Argument: the largest chain (800).
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partita.h"
#ifdef HAVE_MUJOCO
#include <mujoco/mujoco.h>
#include <unistd.h>
#endif

// A spatial chain of n links (0.1 m, 0.1 kg rods along x) hanging from the ground, joint axes
// alternating y and x (as bench_mujoco's chains), as URDF text.
static char *chain_urdf(int n) {
  size_t cap = 256 + (size_t)n * 700, k = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  k += (size_t)snprintf(t + k, cap - k,
                        "<?xml version=\"1.0\"?>\n<robot name=\"chain%d\">\n"
                        "  <link name=\"base\"/>\n", n);
  for (int i = 0; i < n; i++) {
    char parent[32] = "base";
    if (i > 0) snprintf(parent, sizeof(parent), "l%d", i - 1);
    k += (size_t)snprintf(t + k, cap - k,
                          "  <joint name=\"j%d\" type=\"revolute\">\n    <parent link=\"%s\"/>\n"
                          "    <child link=\"l%d\"/>\n    <origin xyz=\"%g 0 0\" rpy=\"0 0 0\"/>\n"
                          "    <axis xyz=\"%d %d 0\"/>\n"
                          "    <limit lower=\"-3.14\" upper=\"3.14\" effort=\"10\" "
                          "velocity=\"10\"/>\n  </joint>\n",
                          i, parent, i, i == 0 ? 0.0 : 0.1, i % 2, 1 - i % 2);
    k += (size_t)snprintf(t + k, cap - k,
                          "  <link name=\"l%d\">\n    <inertial>\n      <origin xyz=\"0.05 0 0\"/>\n"
                          "      <mass value=\"0.1\"/>\n      <inertia ixx=\"1e-5\" ixy=\"0\" "
                          "ixz=\"0\" iyy=\"8.3e-5\" iyz=\"0\" izz=\"8.3e-5\"/>\n    </inertial>\n"
                          "  </link>\n", i);
  }
  snprintf(t + k, cap - k, "</robot>\n");
  return t;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);  // CPU time: the machine is shared
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

#ifdef HAVE_MUJOCO
// ms for MuJoCo to compile the URDF (from a temporary file) and make its mjData; -1 if not.
static double mujoco_ms(const char *text, int *nv) {
  char path[] = "/tmp/bench_load_XXXXXX.urdf";
  int fd = mkstemps(path, 5);
  if (fd < 0) return -1;
  FILE *f = fdopen(fd, "w");
  if (!f) return -1;
  fputs(text, f);
  fclose(f);
  char err[1000] = "";
  double t0 = now();
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof(err));
  mjData *md = mm ? mj_makeData(mm) : NULL;
  double t1 = now();
  remove(path);
  if (!mm) {
    fprintf(stderr, "mujoco: %s\n", err);
    return -1;
  }
  *nv = mm->nv;
  mj_deleteData(md);
  mj_deleteModel(mm);
  return 1e3 * (t1 - t0);
}
#endif

int main(int argc, char **argv) {
  const int nmax = argc > 1 ? atoi(argv[1]) : 800;
  const int sizes[] = {50, 100, 200, 400, 800};
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int nf = 0;
  printf("| links | dof | load ms (parse+compile) | pt_data_new ms | total ms | MuJoCo ms "
         "| ratio |\n|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int s = 0; s < 5 && sizes[s] <= nmax; s++) {
    const int n = sizes[s];
    char *text = chain_urdf(n);
    if (!text) return 1;
    // the fastest of a few runs (one for the long ones: they are seconds before the fix)
    double best_load = INFINITY, best_data = INFINITY;
    int dof = 0;
    for (int rep = 0; rep < 3; rep++) {
      pt_model *m = NULL;
      pt_error err;
      double t0 = now();
      if (pt_model_load_string(text, strlen(text), 2, "chain", NULL, &m, &err)) {
        fprintf(stderr, "chain %d: %s\n", n, err.msg);
        return 1;
      }
      double t1 = now();
      pt_data *d = pt_data_new(m);
      double t2 = now();
      if (!d) return 1;
      dof = pt_model_ndof(m);
      best_load = fmin(best_load, 1e3 * (t1 - t0));
      best_data = fmin(best_data, 1e3 * (t2 - t1));
      pt_data_free(d);
      pt_model_free(m);
      if (t2 - t0 > 2) break;
    }
    const double total = best_load + best_data;
    double mj = -1;
#ifdef HAVE_MUJOCO
    int mnv = 0;
    for (int rep = 0; rep < 3; rep++) {
      double t = mujoco_ms(text, &mnv);
      if (t >= 0 && (mj < 0 || t < mj)) mj = t;
    }
#endif
    if (mj >= 0)
      printf("| %d | %d | %.2f | %.2f | %.2f | %.2f | %.1fx |\n", n, dof, best_load, best_data,
             total, mj, total / mj);
    else
      printf("| %d | %d | %.2f | %.2f | %.2f | - | - |\n", n, dof, best_load, best_data, total);
    fflush(stdout);
    const double x = log(n), y = log(total);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
    nf++;
    free(text);
  }
  if (nf >= 2) {
    const double k = (nf * sxy - sx * sy) / (nf * sxx - sx * sx);
    printf("\nfitted growth exponent (load + pt_data_new): cost ~ n^%.2f\n", k);
  }
  return 0;
}
