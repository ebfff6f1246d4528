// Convergence orders (issue 2, test 7): on the double pendulum, the error at t = 1 s against a
// reference computed with a much smaller step shrinks by 13..19 when the step is halved for RK4
// and ABM4 (fourth order) and by about 2 for semi-implicit Euler (first order).
#include "check.h"

static const char *model =
    "model: dp\n"
    "bodies:\n"
    "  - {name: l1, mass: 1, inertia: [0.0833333333, 0.0833333333, 0.0001],\n"
    "     position: [0, 0, -0.5]}\n"
    "  - {name: l2, mass: 1, inertia: [0.0833333333, 0.0833333333, 0.0001],\n"
    "     position: [0, 0, -1.5]}\n"
    "joints:\n"
    "  - {name: j1, type: revolute, body1: ground, body2: l1, point: [0, 0, 0], axis: [0, 1, 0]}\n"
    "  - {name: j2, type: revolute, body1: l1, body2: l2, point: [0, 0, -1], axis: [0, 1, 0]}\n";

// Released from j1 = 0.6, j2 = -0.4 rad (hanging chain, moderate swing).
static pt_data *start(const pt_model *m) {
  pt_data *d = pt_data_new(m);
  pt_error e;
  pt_assign a[2] = {{0, 0.6}, {1, -0.4}};
  if (pt_set_state(m, d, a, 2, NULL, 0, &e)) CHECK(0, "set_state: %s", e.msg);
  return d;
}

#define NSAMPLE 16  // samples at t = k / 16 s, k = 1..16, common to every power-of-two step

// Coordinates (j1, j2) at the sample times.
static void run(const pt_model *m, pt_integrator it, double h, double out[NSAMPLE][2]) {
  pt_data *d = start(m);
  pt_set_dt(d, h);
  pt_set_integrator(d, it);
  const int per = (int)lround(1.0 / (NSAMPLE * h));
  for (int k = 0; k < NSAMPLE; k++) {
    for (int i = 0; i < per; i++) {
      int rc = pt_step(m, d);
      if (rc) {
        CHECK(0, "%s step failed: %s", pt_integrator_name(it), pt_strerror(rc));
        break;
      }
    }
    out[k][0] = pt_coords(d)[0];
    out[k][1] = pt_coords(d)[1];
  }
  pt_data_free(d);
}

// Largest deviation over the trajectory.
static double err(double a[NSAMPLE][2], double b[NSAMPLE][2]) {
  double e = 0;
  for (int k = 0; k < NSAMPLE; k++)
    e = fmax(e, fmax(fabs(a[k][0] - b[k][0]), fabs(a[k][1] - b[k][1])));
  return e;
}

static void order(const pt_model *m, pt_integrator it, double h0, double lo, double hi) {
  static double ref[NSAMPLE][2], a[NSAMPLE][2], b[NSAMPLE][2], c[NSAMPLE][2];
  run(m, PT_INT_RK4, 1.0 / 16384, ref);
  run(m, it, h0, a);
  run(m, it, h0 / 2, b);
  run(m, it, h0 / 4, c);
  const double r1 = err(a, ref) / err(b, ref), r2 = err(b, ref) / err(c, ref);
  printf("%-6s h=%.4g: errors %.3e %.3e %.3e, ratios %.2f %.2f\n", pt_integrator_name(it), h0,
         err(a, ref), err(b, ref), err(c, ref), r1, r2);
  CHECK(r2 >= lo && r2 <= hi, "%s ratio %.3f not in [%g, %g]", pt_integrator_name(it), r2, lo,
        hi);
  CHECK(r1 >= lo && r1 <= hi, "%s ratio %.3f not in [%g, %g]", pt_integrator_name(it), r1, lo,
        hi);
}

int main(void) {
  pt_model *m = load_yaml(model);
  order(m, PT_INT_RK4, 1.0 / 128, 13, 19);
  order(m, PT_INT_ABM4, 1.0 / 256, 13, 19);
  order(m, PT_INT_EULER, 1.0 / 1024, 1.7, 2.3);
  pt_model_free(m);
  return finish("convergence");
}
