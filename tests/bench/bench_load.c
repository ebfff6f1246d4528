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

#include "chain_urdf.h"
#include "partita.h"
#ifdef HAVE_MUJOCO
#include <mujoco/mujoco.h>
#include <unistd.h>
#endif

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
    char *text = chain_urdf_rods(n);
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
      printf("| %d | %d | %.2f | %.2f | %.2f | %.2f | %.2fx |\n", n, dof, best_load, best_data,
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
