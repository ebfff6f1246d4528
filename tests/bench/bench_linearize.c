// bench_linearize.c: cost of one linearization (pt_linearize: the default, which is the tree
// method on these trees, and the augmented sensitivity system by sparse and dense LU)
// beside central finite differences of the forward dynamics by the same engine in the same
// run (every state value and rate moved by +-h with pt_set_state on a copy, pt_forward).
// Measured, never asserted; prints a table (microseconds per linearization) and the largest
// difference between the two A matrices.
//   usage: bench_linearize [MODELS_DIR] [SECONDS_PER_CELL]
// Models: revolute chains of 1, 2, 4, ..., 64 links hanging at an angle, and panda.urdf.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partita.h"

#define FD_H 1e-5
#define MAX_LINKS 64

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// A chain of n slender links (0.5 m, 0.5 kg) on revolute joints about y, along +x.
static char *chain_yaml(int n) {
  size_t cap = 512 + 400 * (size_t)n;
  char *s = malloc(cap);
  if (!s) return NULL;
  size_t len = (size_t)snprintf(s, cap, "model: chain%d\nbodies:\n", n);
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(s + len, cap - len,
                            "  - {name: l%d, mass: 0.5, inertia: [0.000025, 0.0104292, "
                            "0.0104292], position: [%.17g, 0, 0]}\n", i, 0.5 * i + 0.25);
  len += (size_t)snprintf(s + len, cap - len, "joints:\n");
  for (int i = 0; i < n; i++) {
    char parent[32];
    if (i) snprintf(parent, sizeof(parent), "l%d", i - 1);
    else snprintf(parent, sizeof(parent), "ground");
    len += (size_t)snprintf(s + len, cap - len,
                            "  - {name: j%d, type: revolute, body1: %s, body2: l%d, "
                            "point: [%.17g, 0, 0], axis: [0, 1, 0]}\n", i, parent, i, 0.5 * i);
  }
  return s;
}

// Central differences of the forward dynamics in the linearization's own states.
static int fd_matrix(const pt_model *m, const pt_data *d0, pt_data *c, const int *idx, int z,
                     double *A) {
  const int n2 = 2 * z;
  pt_assign pos[MAX_LINKS], vel[MAX_LINKS];
  for (int j = 0; j < n2; j++) {
    double acc[2][MAX_LINKS];
    for (int s = 0; s < 2; s++) {
      for (int i = 0; i < z; i++) {
        pos[i].coord = vel[i].coord = idx[i];
        pos[i].value = pt_coords(d0)[idx[i]] + (j == i ? (s ? -FD_H : FD_H) : 0);
        vel[i].value = pt_coord_rates(d0)[idx[i]] + (j == z + i ? (s ? -FD_H : FD_H) : 0);
      }
      pt_data_copy(m, c, d0);
      if (pt_set_state(m, c, pos, z, vel, z, NULL)) return -1;
      for (int i = 0; i < z; i++) acc[s][i] = pt_coord_accels(c)[idx[i]];
    }
    for (int i = 0; i < z; i++) {
      A[(size_t)i * n2 + j] = (j == z + i);
      A[(size_t)(z + i) * n2 + j] = (acc[0][i] - acc[1][i]) / (2 * FD_H);
    }
  }
  return 0;
}

static void bench(const char *label, pt_model *m, double budget) {
  pt_data *d = pt_data_new(m), *c = pt_data_new(m);
  if (!d || !c) return;
  // an operating point away from equilibrium: every joint coordinate at 0.2, rate 0.3
  const int nc = pt_model_ncoord(m);
  pt_assign pos[MAX_LINKS], vel[MAX_LINKS];
  int np = 0;
  for (int i = 0; i < nc && np < MAX_LINKS; i++, np++) {
    pos[np] = (pt_assign){i, 0.2};
    vel[np] = (pt_assign){i, 0.3};
  }
  if (pt_set_state(m, d, pos, np, vel, np, NULL) != 0) {
    // long chains: the engine's velocity assembly may refuse all rates at once; keep the angles
    printf("%-12s (operating point: joint rates not assembled, at rest instead)\n", label);
    pt_set_state(m, d, pos, np, NULL, 0, NULL);
  }
  pt_linearization *r = NULL;
  double t_lin[3];
  static const pt_lin_solver order[3] = {PT_LIN_DENSE, PT_LIN_AUGMENTED, PT_LIN_SPARSE};
  for (int k = 0; k < 3; k++) {  // the default last: its r is kept
    const pt_lin_solver solver = order[k];
    pt_linearize_options o = {NULL, 0, NULL, 0, NULL, 0, solver};
    pt_error err = {0, {0}};
    int reps = 0;
    double t0 = now();
    do {
      pt_linearization_free(r);
      r = NULL;
      if (pt_linearize(m, d, &o, &r, &err)) {
        printf("%-12s linearize failed: %s\n", label, err.msg);
        pt_data_free(d), pt_data_free(c);
        return;
      }
      reps++;
    } while (now() - t0 < budget || reps < 3);
    t_lin[solver] = (now() - t0) / reps;
  }
  const int z = r->nz, n2 = 2 * z;
  int idx[MAX_LINKS];
  for (int i = 0; i < z; i++) idx[i] = pt_coord_index(m, r->state_name[i]);
  double *A = malloc(sizeof(double) * (size_t)(n2 * n2 + 1));
  int fd_reps = 0, ok = A != NULL;
  for (int i = 0; i < z; i++) ok = ok && idx[i] >= 0;
  double t0 = now();
  while (ok && (now() - t0 < budget || fd_reps < 1)) {
    ok = fd_matrix(m, d, c, idx, z, A) == 0;
    fd_reps++;
  }
  const double t_fd = fd_reps ? (now() - t0) / fd_reps : 0;
  double diff = 0, amax = 0;
  for (int i = 0; ok && i < n2 * n2; i++) {
    diff = fmax(diff, fabs(A[i] - r->A[i]));
    amax = fmax(amax, fabs(r->A[i]));
  }
  if (ok)
    printf("%-12s %4d %6d %12.1f %12.1f %12.1f %14.1f %8.1f %10.2g %9.3g\n", label, z, r->size,
           1e6 * t_lin[PT_LIN_SPARSE], 1e6 * t_lin[PT_LIN_AUGMENTED], 1e6 * t_lin[PT_LIN_DENSE],
           1e6 * t_fd, t_fd / t_lin[PT_LIN_SPARSE], diff, amax);
  else
    printf("%-12s %4d %6d %12.1f %12.1f %12.1f %14s\n", label, z, r->size,
           1e6 * t_lin[PT_LIN_SPARSE], 1e6 * t_lin[PT_LIN_AUGMENTED], 1e6 * t_lin[PT_LIN_DENSE],
           "(failed)");
  free(A);
  pt_linearization_free(r);
  pt_data_free(d);
  pt_data_free(c);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "configs/models";
  const double budget = argc > 2 ? atof(argv[2]) : 0.3;
  printf("linearization: the default (the tree method on these trees; order = that of the "
         "system it solves), the augmented sensitivity system by sparse KLU and by dense LAPACK "
         "LU, vs central differences of the forward dynamics (pt_set_state + pt_forward), same "
         "engine, same run; microseconds per linearization\n");
  printf("%-12s %4s %6s %12s %12s %12s %14s %8s %10s %9s\n", "model", "dof", "order",
         "default_us", "augmented_us", "dense_us", "fd_forward_us", "fd/def", "max|dA|",
         "max|A|");
  for (int n = 1; n <= MAX_LINKS; n *= 2) {
    char *y = chain_yaml(n), label[32];
    pt_model *m = NULL;
    pt_error err = {0, {0}};
    snprintf(label, sizeof(label), "chain%d", n);
    if (!y || pt_model_load_string(y, strlen(y), 1, label, NULL, &m, &err)) {
      printf("%-12s load failed: %s\n", label, err.msg);
    } else {
      bench(label, m, budget);
    }
    pt_model_free(m);
    free(y);
  }
  char path[1024];
  snprintf(path, sizeof(path), "%s/panda.urdf", dir);
  pt_model *m = NULL;
  pt_error err = {0, {0}};
  if (pt_model_load_file(path, NULL, &m, &err)) {
    printf("%-12s load failed: %s\n", "panda", err.msg);
  } else {
    bench("panda", m, budget);
  }
  pt_model_free(m);
  return 0;
}
