// bench_spin: diagnosis of the fast spin of issue 10, item 8 (iiwa14 under tau_j = 2 sin(pi t
// + j) N m, j = 0..6, torques held over each step, no damping, no limits, RK4 at dt 1 ms).
// Usage: bench_spin URDF [seconds = 300] [substep cap = 8 (1: none)] [event threshold J = 1]
// Prints, every 10 s, the largest kinetic energy and joint rates of those 10 s, the energy
// balance error |E - E0 - work| so far (work = sum tau (theta(t + h) - theta(t)), exact for
// held torques) and the linearization at that instant (pt_linearize, tree method): the
// largest |lambda| h against RK4's stability bound (2.8 on the imaginary axis, 2.78 on the
// real one) and the largest real part (a physically unstable mode of the motion). Then every
// "event": a step whose balance error changed by more than the threshold, with joints 2 and 4
// (wrapped: both near 0 is the stretched arm, joints 1, 3, 5 and 7 coaxial), the largest
// joint rate and acceleration, the substep rule's omega h (integrate.c, spin_substeps) and
// |lambda| h there. Measured, never asserted.
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "partita.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

// largest |lambda| and largest real part of the linearization at d's state
static void lin_eig(const pt_model *m, const pt_data *d, double *lmax, double *remax) {
  pt_linearization *lin = NULL;
  pt_error err;
  *lmax = *remax = NAN;
  if (pt_linearize(m, d, NULL, &lin, &err)) return;
  *lmax = 0;
  *remax = -INFINITY;
  for (int e = 0; e < 2 * lin->nz; e++) {
    *lmax = fmax(*lmax, hypot(lin->eig[e].re, lin->eig[e].im));
    *remax = fmax(*remax, lin->eig[e].re);
  }
  pt_linearization_free(lin);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_spin URDF [seconds] [substep cap] [event threshold J]\n");
    return 2;
  }
  const double horizon = argc > 2 ? atof(argv[2]) : 300, h = 1e-3;
  const int cap = argc > 3 ? atoi(argv[3]) : 8;
  const double thresh = argc > 4 ? atof(argv[4]) : 1;
  pt_load_options opt = {.no_joint_limits = 1};
  pt_model *m = NULL;
  pt_error err;
  if (pt_model_load_file(argv[1], &opt, &m, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  if (pt_set_spin_substeps(m, cap)) {
    fprintf(stderr, "substep cap must be in 1..64\n");
    return 2;
  }
  int in[7], co[7];
  for (int j = 0; j < 7; j++) {
    char name[32];
    snprintf(name, sizeof(name), "iiwa_joint_%d", j + 1);
    in[j] = pt_input_index(m, name);
    co[j] = pt_coord_index(m, name);
    if (in[j] < 0 || co[j] < 0) {
      fprintf(stderr, "no joint %s\n", name);
      return 1;
    }
  }
  pt_data *d = pt_data_new(m);
  pt_set_dt(d, h);
  pt_set_integrator(d, PT_INT_RK4);
  const long n = lround(horizon / h), every = lround(10 / h);
  const double e0 = pt_energy_kinetic(d) + pt_energy_potential(d);
  double work = 0, bal = 0, prev = 0, ke_max = 0, w_max[7] = {0}, lmax, remax;
  long nevent = 0;
  printf("RK4 1 ms, substeps <= %d, %s\n", cap, argv[1]);
  for (long i = 0; i < n; i++) {
    const double t = i * h;
    double th[7], w0 = 0, a0 = 0;
    for (int j = 0; j < 7; j++) {
      pt_set_input(m, d, in[j], 2 * sin(M_PI * t + j));
      th[j] = pt_coords(d)[co[j]];
      w0 = fmax(w0, fabs(pt_coord_rates(d)[co[j]]));
      a0 = fmax(a0, fabs(pt_coord_accels(d)[co[j]]));
    }
    // the state at the step's start, for an event's linearization (kept only when needed)
    const int rc = pt_step(m, d);
    if (rc) {
      printf("t %.3f: %s (balance error so far %.3g J)\n", t, pt_strerror(rc), bal);
      break;
    }
    for (int j = 0; j < 7; j++)
      work += 2 * sin(M_PI * t + j) * remainder(pt_coords(d)[co[j]] - th[j], 2 * M_PI);
    const double ke = pt_energy_kinetic(d), b = ke + pt_energy_potential(d) - e0 - work;
    bal = fmax(bal, fabs(b));
    ke_max = fmax(ke_max, ke);
    for (int j = 0; j < 7; j++) w_max[j] = fmax(w_max[j], fabs(pt_coord_rates(d)[co[j]]));
    if (fabs(b - prev) > thresh && nevent++ < 200) {
      pt_counters c;
      pt_get_counters(d, &c);
      lin_eig(m, d, &lmax, &remax);
      printf("  event t %.3f: balance %+.3g J, KE %.4g J, joints 2, 4 at %+.2f %+.2f rad; "
             "max rate %.0f rad/s, max accel %.3g rad/s^2 (omega h %.2f, %d substeps); "
             "after it max |lambda| h %.2f, max Re lambda %.3g 1/s\n",
             t, b - prev, ke, remainder(th[1], 2 * M_PI), remainder(th[3], 2 * M_PI), w0, a0,
             (w0 + sqrt(a0)) * h, c.spin_substeps_last, lmax * h, remax);
    }
    prev = b;
    if ((i + 1) % every == 0) {
      lin_eig(m, d, &lmax, &remax);
      printf("t %5.0f s: KE max %8.4g J, balance error %8.3g J, max rates", t + h, ke_max, bal);
      for (int j = 0; j < 7; j++) printf(" %5.0f", w_max[j]);
      printf(" rad/s; now max |lambda| h %.3f, max Re lambda %.3g 1/s\n", lmax * h, remax);
      ke_max = 0;
      for (int j = 0; j < 7; j++) w_max[j] = 0;
    }
  }
  pt_counters c;
  pt_get_counters(d, &c);
  printf("%ld events over %g J; %.3f RK4 substeps per step\n", nevent, thresh,
         1 + (double)c.spin_substeps / (double)(pt_nstep(d) > 0 ? pt_nstep(d) : 1));
  pt_data_free(d);
  pt_model_free(m);
  return 0;
}
