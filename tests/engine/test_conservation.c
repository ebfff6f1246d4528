// Conservation laws (issue 2, tests 2-4): double pendulum energy and residuals, torque-free
// asymmetric body (angular momentum vector and energy), heavy symmetric top on a spherical
// joint (energy and vertical angular momentum about the pivot).
#include "check.h"

// Angular momentum of all bodies about the origin, global frame: sum I_g w + m r x v.
static void momentum(const pt_model *m, const pt_data *d, const double inertia[][3],
                     const double *mass, double L[3]) {
  L[0] = L[1] = L[2] = 0;
  for (int b = 0; b < pt_model_nbody(m); b++) {
    const double *pose = pt_body_pose(d, b), *vel = pt_body_velocity(d, b);
    const double e0 = pose[3], e1 = pose[4], e2 = pose[5], e3 = pose[6];
    const double A[9] = {2 * (e0 * e0 + e1 * e1) - 1, 2 * (e1 * e2 - e0 * e3),
                         2 * (e1 * e3 + e0 * e2),     2 * (e1 * e2 + e0 * e3),
                         2 * (e0 * e0 + e2 * e2) - 1, 2 * (e2 * e3 - e0 * e1),
                         2 * (e1 * e3 - e0 * e2),     2 * (e2 * e3 + e0 * e1),
                         2 * (e0 * e0 + e3 * e3) - 1};
    const double *w = vel + 3;
    double wb[3], hb[3];  // body-frame omega and I omega (principal inertia)
    for (int i = 0; i < 3; i++) wb[i] = A[i] * w[0] + A[3 + i] * w[1] + A[6 + i] * w[2];
    for (int i = 0; i < 3; i++) hb[i] = inertia[b][i] * wb[i];
    for (int i = 0; i < 3; i++) {
      L[i] += A[3 * i] * hb[0] + A[3 * i + 1] * hb[1] + A[3 * i + 2] * hb[2];
    }
    const double *r = pose, *v = vel;
    L[0] += mass[b] * (r[1] * v[2] - r[2] * v[1]);
    L[1] += mass[b] * (r[2] * v[0] - r[0] * v[2]);
    L[2] += mass[b] * (r[0] * v[1] - r[1] * v[0]);
  }
}

static void double_pendulum(void) {
  // two rods of 1 kg and 1 m, hinges about y, released from 1.2 and 2.0 rad off the vertical
  char text[2048];
  const double a1 = 1.2, a2 = 2.0;
  const double ux = sin(a1), uz = -cos(a1), vx = sin(a2), vz = -cos(a2);
  snprintf(text, sizeof(text),
           "model: dp\n"
           "bodies:\n"
           "  - {name: l1, mass: 1, inertia: [0.0833333333, 0.0833333333, 0.0001],\n"
           "     position: [%.17g, 0, %.17g], orientation: {axis: [0, 1, 0], angle: %.17g}}\n"
           "  - {name: l2, mass: 1, inertia: [0.0833333333, 0.0833333333, 0.0001],\n"
           "     position: [%.17g, 0, %.17g], orientation: {axis: [0, 1, 0], angle: %.17g}}\n"
           "joints:\n"
           "  - {name: j1, type: revolute, body1: ground, body2: l1, point: [0, 0, 0],\n"
           "     axis: [0, 1, 0]}\n"
           "  - {name: j2, type: revolute, body1: l1, body2: l2, point: [%.17g, 0, %.17g],\n"
           "     axis: [0, 1, 0]}\n",
           0.5 * ux, 0.5 * uz, -a1, ux + 0.5 * vx, uz + 0.5 * vz, -a2, ux, uz);
  pt_model *m = load_yaml(text);
  pt_data *d = pt_data_new(m);
  pt_set_dt(d, 1e-3);
  const double e0 = energy(d);
  double maxres = 0, maxdrift = 0;
  for (int i = 0; i < 10000; i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "double pendulum step %d: %s", i, pt_strerror(rc));
    if (rc) break;
    maxres = fmax(maxres, pt_residual_position(d));
    maxdrift = fmax(maxdrift, fabs(energy(d) - e0) / fabs(e0));
  }
  pt_counters c;
  pt_get_counters(d, &c);
  printf("double pendulum 10 s: energy drift %.2e, max residual %.2e, repartitions %ld\n",
         maxdrift, maxres, (long)c.repartitions);
  CHECK(maxdrift <= 1e-6, "relative energy drift %.3g", maxdrift);
  CHECK(maxres <= 1e-10, "position residual %.3g", maxres);
  pt_data_free(d);
  pt_model_free(m);
}

static void tumbling(void) {
  static const char *text =
      "model: tumble\n"
      "gravity: [0, 0, 0]\n"
      "bodies:\n"
      "  - name: box\n"
      "    mass: 4.0\n"
      "    inertia: [0.15, 0.2, 0.25]\n"
      "    position: [0.3, -0.2, 0.1]\n"
      "    orientation: {axis: [1, 2, 3], angle: 0.7}\n"
      "    velocity: [0.1, 0.2, -0.3]\n"
      "    angular_velocity: [0.4, 3.0, -1.1]\n";
  pt_model *m = load_yaml(text);
  pt_data *d = pt_data_new(m);
  const double inertia[1][3] = {{0.15, 0.2, 0.25}}, mass[1] = {4.0};
  double L0[3], L[3];
  momentum(m, d, inertia, mass, L0);
  const double e0 = energy(d), l0 = sqrt(L0[0] * L0[0] + L0[1] * L0[1] + L0[2] * L0[2]);
  pt_set_dt(d, 5e-4);
  double de = 0, dl = 0;
  for (int i = 0; i < 10000; i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "tumbling step %d: %s", i, pt_strerror(rc));
    if (rc) break;
    momentum(m, d, inertia, mass, L);
    de = fmax(de, fabs(energy(d) - e0) / e0);
    for (int k = 0; k < 3; k++) dl = fmax(dl, fabs(L[k] - L0[k]) / l0);
  }
  pt_counters c;
  pt_get_counters(d, &c);
  printf("tumbling body 5 s: energy %.2e, angular momentum %.2e, repartitions %ld\n", de, dl,
         (long)c.repartitions);
  CHECK(de <= 1e-9, "energy drift %.3g", de);
  CHECK(dl <= 1e-9, "angular momentum drift %.3g", dl);
  pt_data_free(d);
  pt_model_free(m);
}

static void heavy_top(void) {
  // symmetric top (transverse 0.003, axial 0.004), CoM 0.2 m up its axis tilted 30 degrees,
  // spin 50 rad/s about the axis; pivot at the origin on a spherical joint
  const double tilt = M_PI / 6, spin = 50, l = 0.2;
  const double ax = sin(tilt), az = cos(tilt);
  char text[1024];
  snprintf(text, sizeof(text),
           "model: top\n"
           "bodies:\n"
           "  - name: top\n"
           "    mass: 1.0\n"
           "    inertia: [0.003, 0.003, 0.004]\n"
           "    position: [%.17g, 0, %.17g]\n"
           "    orientation: {axis: [0, 1, 0], angle: %.17g}\n"
           "    angular_velocity: [%.17g, 0, %.17g]\n"
           "joints:\n"
           "  - {name: pivot, type: spherical, body1: ground, body2: top, point: [0, 0, 0]}\n",
           l * ax, l * az, tilt, spin * ax, spin * az);
  pt_model *m = load_yaml(text);
  pt_data *d = pt_data_new(m);
  const double inertia[1][3] = {{0.003, 0.003, 0.004}}, mass[1] = {1.0};
  double L0[3], L[3];
  momentum(m, d, inertia, mass, L0);
  const double e0 = energy(d);
  pt_set_dt(d, 1e-4);
  double de = 0, dl = 0;
  for (int i = 0; i < 20000; i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "top step %d: %s", i, pt_strerror(rc));
    if (rc) break;
    momentum(m, d, inertia, mass, L);
    de = fmax(de, fabs(energy(d) - e0) / fabs(e0));
    dl = fmax(dl, fabs(L[2] - L0[2]) / fabs(L0[2]));
  }
  pt_counters c;
  pt_get_counters(d, &c);
  printf("heavy top 2 s: energy %.2e, vertical angular momentum %.2e, repartitions %ld\n", de,
         dl, (long)c.repartitions);
  CHECK(de <= 1e-7, "energy drift %.3g", de);
  CHECK(dl <= 1e-7, "vertical angular momentum drift %.3g", dl);
  pt_data_free(d);
  pt_model_free(m);
}

int main(void) {
  double_pendulum();
  tumbling();
  heavy_top();
  return finish("conservation");
}
