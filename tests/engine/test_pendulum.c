// Physical pendulum released at 1.0 rad: after half of the exact period it has swung to
// -1.0 rad (issue 2, test 1). The period is T = 4 sqrt(J_O / (m g d)) K(sin(theta0/2)), with
// the complete elliptic integral K from the arithmetic-geometric mean (K = pi / (2 agm(1, k'))).
#include "check.h"

static const char *model =
    "model: rod\n"
    "gravity: [0, 0, -9.81]\n"
    "bodies:\n"
    "  - name: rod\n"
    "    mass: 2.0\n"
    "    inertia: [0.16666666666666666, 0.16666666666666666, 0.001]\n"  // m L^2 / 12, L = 1
    "    position: [0, 0, -0.5]\n"
    "joints:\n"
    "  - name: hinge\n"
    "    type: revolute\n"
    "    body1: ground\n"
    "    body2: rod\n"
    "    point: [0, 0, 0]\n"
    "    axis: [0, 1, 0]\n";

static double agm(double a, double b) {
  for (int i = 0; i < 60; i++) {
    double t = 0.5 * (a + b);
    b = sqrt(a * b);
    a = t;
  }
  return a;
}

int main(void) {
  pt_model *m = load_yaml(model);
  pt_data *d = pt_data_new(m);
  pt_error err;
  pt_assign a = {pt_coord_index(m, "hinge"), 1.0};
  CHECK(pt_set_state(m, d, &a, 1, NULL, 0, &err) == PT_OK, "%s", err.msg);
  CHECK_CLOSE(pt_coords(d)[0], 1.0, 1e-12, "initial angle");

  const double mass = 2.0, g = 9.81, dist = 0.5;
  const double JO = 0.16666666666666666 + mass * dist * dist;
  const double k = sin(0.5);
  const double K = M_PI / (2 * agm(1, sqrt(1 - k * k)));
  const double T = 4 * sqrt(JO / (mass * g * dist)) * K;
  const int n = 1000;
  pt_set_dt(d, 0.5 * T / n);
  pt_set_integrator(d, PT_INT_RK4);
  double maxres = 0;
  for (int i = 0; i < n; i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "step %d: %s", i, pt_strerror(rc));
    if (rc) break;
    maxres = fmax(maxres, pt_residual_position(d));
  }
  double theta = pt_coords(d)[0];
  CHECK(fabs(theta + 1.0) <= 1e-6, "theta(T/2) = %.15g, relative error %.3g", theta,
        fabs(theta + 1.0));
  CHECK(fabs(pt_coord_rates(d)[0]) < 1e-5, "rate at the turning point %.3g",
        pt_coord_rates(d)[0]);
  CHECK(maxres <= 1e-10, "max position residual %.3g", maxres);
  printf("theta(T/2) = %.15f (error %.2e), max residual %.2e\n", theta, fabs(theta + 1), maxres);
  pt_data_free(d);
  pt_model_free(m);
  return finish("pendulum_half_period");
}
