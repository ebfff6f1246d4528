// test_joint_friction.c: joint damping and regularised Coulomb friction (issue 11, item 3),
// against closed forms, on the tree path (articulated-body algorithm) and the Cartesian path.
//
// Damped pendulum (small amplitude, so linear to ~theta0^2): I theta'' + c theta' + m g l
// theta = 0 has sigma = c / (2 I), and the amplitude A(t)^2 = theta^2 + ((theta' + sigma
// theta) / omega_d)^2 = A0^2 exp(-2 sigma t) exactly, so -ln(A(t) / A0) / t measures sigma.
// Linearized about the hanging position the damping ratio is c / (2 sqrt(I m g l)); with
// friction F (scale v) instead, at rest it acts as c = F / v: the analytic partial of tanh.
// Slider on a rail with friction only: m v' = -F tanh(v / vs) has the exact solution
// sinh(v / vs) = sinh(v0 / vs) exp(-F t / (m vs)).
#include "check.h"

#define M 1.3
#define L 0.4          // hinge to CoM
#define IC 0.02        // about the CoM, about the hinge axis
#define IH (IC + M * L * L)
#define G 9.81

static pt_model *pendulum(double damping, double friction, double fv) {
  char text[2048];
  snprintf(text, sizeof(text),
           "model: damped\n"
           "simulation: {dt: 0.001, integrator: rk4}\n"
           "bodies:\n"
           "  - {name: rod, mass: %.17g, inertia: [%.17g, %.17g, 0.01], position: [0, 0, %.17g]}\n"
           "joints:\n"
           "  - {name: hinge, type: revolute, body1: ground, body2: rod, point: [0, 0, 0],\n"
           "     axis: [0, 1, 0], damping: %.17g, friction: %.17g, friction_velocity: %.17g}\n",
           M, IC, IC, -L, damping, friction, fv);
  return load_yaml(text);
}

static void check_decay(int cartesian) {
  const double c = 0.05, theta0 = 1e-3;
  pt_model *m = pendulum(c, 0, 1);
  pt_data *d = pt_data_new(m);
  if (cartesian) pt_set_partition_mode(d, PT_MODE_LU);  // the tree path runs in hybrid mode
  pt_assign a = {pt_coord_index(m, "hinge"), theta0};
  pt_error err = {0};
  CHECK(pt_set_state(m, d, &a, 1, NULL, 0, &err) == PT_OK, "%s", err.msg);
  const double sigma = c / (2 * IH), wn2 = M * G * L / IH, wd = sqrt(wn2 - sigma * sigma);
  double worst = 0, sig_meas = 0;
  for (int k = 1; k <= 5000; k++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", k);
    const double t = pt_time(d), th = pt_coords(d)[a.coord], thd = pt_coord_rates(d)[a.coord];
    const double ref = theta0 * exp(-sigma * t) * (cos(wd * t) + sigma / wd * sin(wd * t));
    worst = fmax(worst, fabs(th - ref) / theta0);
    if (k == 5000) {
      const double amp = sqrt(th * th + pow((thd + sigma * th) / wd, 2));
      sig_meas = -log(amp / (theta0 * sqrt(1 + sigma * sigma / (wd * wd)))) / t;  // A0
    }
  }
  printf("damped pendulum (%s): decay rate measured %.10g, closed form c / 2I = %.10g, "
         "max |theta - closed form| / theta0 = %.3g\n",
         cartesian ? "Cartesian" : "tree", sig_meas, sigma, worst);
  CHECK(fabs(sig_meas - sigma) <= 1e-5 * sigma, "decay rate %.10g vs %.10g", sig_meas, sigma);
  CHECK(worst <= 1e-5, "trajectory off by %.3g", worst);
  pt_data_free(d);
  pt_model_free(m);
}

// The linearized damping ratio about the hanging position.
static void check_ratio(double damping, double friction, double fv, double c_eff) {
  pt_model *m = pendulum(damping, friction, fv);
  pt_data *d = pt_data_new(m);
  pt_forward(m, d);
  pt_linearization *lin = NULL;
  pt_error err = {0};
  CHECK(pt_linearize(m, d, NULL, &lin, &err) == PT_OK, "%s", err.msg);
  if (lin) {
    const double zeta = c_eff / (2 * sqrt(IH * M * G * L)), wn = sqrt(M * G * L / IH);
    CHECK(lin->nz == 1, "nz %d", lin->nz);
    for (int i = 0; i < 2 * lin->nz; i++) {
      printf("linearized (damping %g, friction %g / %g): lambda %.12g%+.12gi, zeta %.12g "
             "(closed form %.12g)\n", damping, friction, fv, lin->eig[i].re, lin->eig[i].im,
             lin->eig[i].damping_ratio, zeta);
      CHECK_CLOSE(lin->eig[i].damping_ratio, zeta, 1e-9 * zeta, "damping ratio");
      CHECK_CLOSE(hypot(lin->eig[i].re, lin->eig[i].im), wn, 1e-9 * wn, "natural frequency");
    }
    CHECK_CLOSE(lin->Cmat[0], c_eff, 1e-9 * c_eff, "C matrix");
  }
  pt_linearization_free(lin);
  pt_data_free(d);
  pt_model_free(m);
}

static void check_slider(int cartesian) {
  const double mass = 1.5, F = 3, vs = 0.05, v0 = 2;
  char text[1024];
  snprintf(text, sizeof(text),
           "model: slider\n"
           "simulation: {dt: 0.001, integrator: rk4}\n"
           "bodies:\n"
           "  - {name: block, mass: %g, inertia: [0.1, 0.1, 0.1], position: [0, 0, 0]}\n"
           "joints:\n"
           "  - {name: rail, type: prismatic, body1: ground, body2: block, point: [0, 0, 0],\n"
           "     axis: [1, 0, 0], friction: %g, friction_velocity: %g}\n",
           mass, F, vs);
  pt_model *m = load_yaml(text);
  pt_data *d = pt_data_new(m);
  if (cartesian) pt_set_partition_mode(d, PT_MODE_LU);
  pt_assign a = {pt_coord_index(m, "rail"), v0};
  pt_error err = {0};
  CHECK(pt_set_state(m, d, NULL, 0, &a, 1, &err) == PT_OK, "%s", err.msg);
  double worst = 0, e_prev = pt_energy_kinetic(d) + pt_energy_potential(d);
  int rising = 0;
  for (int k = 1; k <= 1000; k++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", k);
    const double t = pt_time(d), v = pt_coord_rates(d)[a.coord];
    const double ref = vs * asinh(sinh(v0 / vs) * exp(-F * t / (mass * vs)));
    worst = fmax(worst, fabs(v - ref));
    const double e = pt_energy_kinetic(d) + pt_energy_potential(d);
    rising += e > e_prev + 1e-15;
    e_prev = e;
  }
  printf("slider with friction (%s): max |v - closed form| = %.3g m/s over 1 s (stops at "
         "%.4g s)\n", cartesian ? "Cartesian" : "tree", worst, mass * v0 / F);
  CHECK(worst <= 1e-7, "velocity off by %.3g", worst);
  CHECK(rising == 0, "energy rose in %d steps", rising);
  pt_data_free(d);
  pt_model_free(m);
}

static void check_refused(void) {
  static const char *const bad[] = {"friction: -1", "friction_velocity: 0",
                                    "friction_velocity: -0.1"};
  for (int k = 0; k < 3; k++) {
    char text[512];
    snprintf(text, sizeof(text),
             "model: bad\nbodies:\n  - {name: b, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}"
             "\njoints:\n  - {name: j, type: revolute, body1: ground, body2: b, point: [0, 0, 0],"
             " axis: [0, 0, 1], %s}\n", bad[k]);
    pt_model *m = NULL;
    pt_error err = {0};
    int rc = pt_model_load_string(text, strlen(text), 1, "bad.yaml", NULL, &m, &err);
    CHECK(rc != PT_OK && strstr(err.msg, "friction"), "%s: rc %d %s", bad[k], rc, err.msg);
    printf("refused: %s -> %s\n", bad[k], err.msg);
    pt_model_free(m);
  }
}

int main(void) {
  check_decay(0);
  check_decay(1);
  check_ratio(0.05, 0, 1, 0.05);
  check_ratio(0, 0.2, 0.5, 0.2 / 0.5);     // friction at rest: c = F / v
  check_ratio(0.05, 0.2, 0.5, 0.05 + 0.4);
  check_slider(0);
  check_slider(1);
  check_refused();
  return finish("joint_friction");
}
