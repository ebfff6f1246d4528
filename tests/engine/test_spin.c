// Robust where the physics is fast (issue 10, item 8): the iiwa-class arm
// (configs/models/iiwa14.urdf) driven by bounded joint torques tau_j = 2 sin(pi t + j) N m
// (j = 0..6, no damping, no limits, gravity on) spins its light distal link to 2000 rad/s and
// its wrist to 1000 rad/s and more. With the joint coordinates as the integrated variables (the
// tree partition, src/core/tree.c) RK4 at dt = 1 ms must run through the horizon (argv[2] seconds:
// 300 in the release build, 5 under the sanitizers) without divergence.
//
// Without substeps this fails on this arm (both engines; tests/bench/bench_mujoco): the arm
// keeps passing its stretched configuration with the distal links spinning, where joint
// accelerations reach 1e5-3e5 rad/s^2 for a few steps; each such passage leaves an energy
// error of joules to hundreds of joules, and one of them (at 107-226 s depending on round-off)
// throws the state out of RK4's stability region. RK4 on the tree partition therefore takes a
// fast step as substeps, by the rule omega h <= 0.5 with omega = max |thetadot| +
// sqrt(max |thetadd|) over the angles, at most 8 (integrate.c, spin_substeps).
//
// Correctness check, independent of the integrator: the torques are held over each step, so
// the work they do in a step is exactly sum_j tau_j (theta_j(t + h) - theta_j(t)) and the
// energy balance E(t + h) - E(t) = W holds for the exact solution; RK4's local error shows as
// a mismatch. The accumulated mismatch, relative to the largest kinetic energy reached, must
// stay small while the arm spins up (first 2 s, before the motion turns chaotic) and within 2 %
// over the whole run (0.64 % measured over 300 s), and the constraint rows (recovered by forward
// kinematics) hold to round-off.
#include "check.h"

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  const double horizon = argc > 2 ? atof(argv[2]) : 300;
  char path[1024];
  snprintf(path, sizeof(path), "%s/configs/models/iiwa14.urdf", root);
  pt_model *m = NULL;
  pt_error err;
  // the energy balance of free motion: the iiwa's joint limits would take impulses
  pt_load_options opt = {.no_joint_limits = 1};
  if (pt_model_load_file(path, &opt, &m, &err)) {
    CHECK(0, "iiwa14.urdf: %s", err.msg);
    return finish("spin");
  }
  const int n = pt_model_ndof(m);
  CHECK(n == 7 && pt_model_ninput(m) == 7, "iiwa14: %d dof, %d inputs", n, pt_model_ninput(m));
  int in[7], co[7];
  for (int j = 0; j < 7; j++) {
    char name[32];
    snprintf(name, sizeof(name), "iiwa_joint_%d", j + 1);
    in[j] = pt_input_index(m, name);
    co[j] = pt_coord_index(m, name);
    CHECK(in[j] >= 0 && co[j] >= 0, "no input or coordinate %s", name);
    if (in[j] < 0 || co[j] < 0) return finish("spin");
  }
  pt_data *d = pt_data_new(m);
  pt_set_dt(d, 1e-3);
  pt_set_integrator(d, PT_INT_RK4);
  const double h = 1e-3;
  const long nstep = lround(horizon / h);
  double th0[7], tau[7];
  double e0 = pt_energy_kinetic(d) + pt_energy_potential(d), work = 0, ke_max = 0;
  double wmax = 0, res = 0, bal_max = 0, bal_early = 0, ke_early = 0;
  const double early = 2;  // s: the energy balance is checked tightly over this first stretch
  long done = 0;
  for (long i = 0; i < nstep; i++) {
    const double t = i * h;
    for (int j = 0; j < 7; j++) {
      tau[j] = 2 * sin(M_PI * t + j);
      pt_set_input(m, d, in[j], tau[j]);
      th0[j] = pt_coords(d)[co[j]];
    }
    int rc = pt_step(m, d);
    if (rc) {
      CHECK(0, "step %ld (t = %.3f s): %s", i, t, pt_strerror(rc));
      break;
    }
    done++;
    // angles come back wrapped to (-pi, pi]; a step moves a joint by less than pi
    for (int j = 0; j < 7; j++) work += tau[j] * remainder(pt_coords(d)[co[j]] - th0[j], 2 * M_PI);
    const double ke = pt_energy_kinetic(d);
    const double bal = fabs(ke + pt_energy_potential(d) - e0 - work);
    ke_max = fmax(ke_max, ke);
    bal_max = fmax(bal_max, bal);
    if (t + h <= early + 1e-9) {
      ke_early = ke_max;
      bal_early = bal_max;
    }
    wmax = fmax(wmax, fabs(pt_coord_rates(d)[co[6]]));
    res = fmax(res, pt_residual_position(d));
  }
  pt_counters c;
  pt_get_counters(d, &c);
  printf("iiwa14 under tau_j = 2 sin(pi t + j), RK4 dt 1 ms: %ld of %ld steps (%.1f s); "
         "joint 7 up to %.0f rad/s; kinetic energy up to %.3g J; energy balance off by %.3g J "
         "over the first %.0f s (%.2e of the kinetic energy), %.3g J over the run (%.2e); "
         "residual %.1e; rebuilds %lld, QR switches %lld; %.3f RK4 substeps per step\n",
         done, nstep, done * h, wmax, ke_max, bal_early, fmin(early, horizon), bal_early / ke_early,
         bal_max, bal_max / ke_max, res, (long long)c.repartitions, (long long)c.qr_switches,
         1 + (double)c.spin_substeps / (double)(done > 0 ? done : 1));
  CHECK(done == nstep, "the run stopped at t = %.3f s", done * h);
  // RK4's error per step grows with (omega h)^5 even in joint coordinates: tight while the
  // arm spins up, then bounded over the chaotic run
  CHECK(bal_early <= 1e-5 * ke_early, "energy balance off by %.3g J over the first %.0f s "
        "(kinetic energy up to %.3g J)", bal_early, early, ke_early);
  CHECK(bal_max <= 0.02 * ke_max, "energy balance off by %.3g J (kinetic energy up to %.3g J)",
        bal_max, ke_max);
  CHECK(res < 1e-12, "constraint residual %.3g", res);
  CHECK(c.repartitions == 0 && c.qr_switches == 0, "the tree partition was left");
  // the wrist passes omega h = 0.5 within the first second: the rule must have cut steps
  CHECK(horizon < 1 || c.spin_substeps > 0, "no step was taken as substeps");
  pt_data_free(d);
  pt_model_free(m);
  return finish("spin");
}
