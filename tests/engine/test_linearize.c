// test_linearize.c: linearization against closed forms (issue 6, tests 1, 2, 3 and 5):
// physical pendulum, double pendulum, mass-spring-damper, user coordinates.
#include "test_linearize_util.h"

static const char *pendulum_yaml =
    "model: pend\n"
    "gravity: [0, 0, -9.81]\n"
    "bodies:\n"
    "  - name: rod\n"
    "    mass: 1.3\n"
    "    inertia: [0.1, 0.11, 0.02]\n"
    "    position: [0, 0, -0.6]\n"
    "joints:\n"
    "  - name: hinge\n"
    "    type: revolute\n"
    "    body1: ground\n"
    "    body2: rod\n"
    "    point: [0, 0, 0]\n"
    "    axis: [0, 1, 0]\n"
    "actuators:\n"
    "  - name: tau\n"
    "    type: joint_torque\n"
    "    joint: hinge\n"
    "coordinates:\n"
    "  - name: tip_z\n"
    "    type: point_position\n"
    "    body: rod\n"
    "    point: [0, 0, -1.2]\n"
    "    component: z\n";

// Test 1: omega^2 = m g d cos(theta) / J_O about the hinge (y axis), at rest at the bottom and
// at a tilted, moving, non-equilibrium point (theta'' does not depend on theta').
static void test_pendulum(void) {
  const double mass = 1.3, dist = 0.6, g = 9.81, JO = 0.11 + mass * dist * dist;
  pt_model *m = load_yaml(pendulum_yaml);
  pt_data *d = pt_data_new(m);
  const char *hinge[] = {"hinge"};
  const double th[2] = {0, 0.4}, rate[2] = {0, 0.7};
  for (int c = 0; c < 2; c++) {
    set_named(m, d, hinge, th + c, rate + c, 1);
    pt_linearization *r = linearize(m, d, NULL, 0, NULL, 0);
    const double w2 = mass * g * dist * cos(th[c]) / JO, w = sqrt(w2);
    CHECK(r->nz == 1 && strcmp(r->state_name[0], "hinge") == 0, "state %s", r->state_name[0]);
    CHECK(strcmp(r->state_name[1], "hinge.rate") == 0, "rate name %s", r->state_name[1]);
    CHECK_CLOSE(r->A[0], 0, 1e-12, "A00");
    CHECK_CLOSE(r->A[1], 1, 1e-12, "A01");
    CHECK_CLOSE(r->A[2] / w2, -1, 1e-9, "A10 = -m g d cos / J_O");
    CHECK_CLOSE(r->A[3], 0, 1e-9 * w, "A11");
    for (int i = 0; i < 2; i++) {
      CHECK_CLOSE(fabs(r->eig[i].im) / w, 1, 1e-9, "omega");
      CHECK_CLOSE(r->eig[i].re / w, 0, 1e-9, "no damping");
      CHECK_CLOSE(r->eig[i].freq_hz * 2 * M_PI / w, 1, 1e-9, "frequency in Hz");
    }
    // M C K: M = J_O, K = m g d cos(theta), C = 0
    CHECK_CLOSE(r->M[0] / JO, 1, 1e-9, "M = J_O");
    CHECK_CLOSE(r->K[0] / (JO * w2), 1, 1e-9, "K");
    CHECK_CLOSE(r->Cmat[0], 0, 1e-9, "C");
    // B: a torque tau gives theta'' = tau / J_O; default outputs = states: C = I, D = 0
    CHECK(r->nu == 1 && strcmp(r->input_name[0], "tau") == 0, "input");
    CHECK_CLOSE(r->B[0], 0, 1e-12, "B0");
    CHECK_CLOSE(r->B[1] * JO, 1, 1e-9, "B1 = 1 / J_O");
    CHECK(r->ny == 2, "outputs %d", r->ny);
    CHECK_CLOSE(r->C[0], 1, 1e-12, "C00");
    CHECK_CLOSE(r->C[1], 0, 1e-12, "C01");
    CHECK_CLOSE(r->C[2], 0, 1e-12, "C10");
    CHECK_CLOSE(r->C[3], 1, 1e-12, "C11");
    CHECK_CLOSE(r->D[0], 0, 1e-12, "D0");
    pt_linearization_free(r);
  }
  pt_data_free(d);
  pt_model_free(m);
}

// Test 2: double pendulum, point masses at the link ends plus a small inertia I about each
// mass: at the bottom M = [2ml^2 + I, ml^2; ml^2, ml^2 + I], K = diag(2mgl, mgl) in absolute
// angles; the frequencies solve det(K - w^2 M) = 0. With I -> 0, w^2 = (2 -+ sqrt 2) g / l.
static void test_double_pendulum(void) {
  const double ms = 1.0, l = 0.8, g = 9.81;
  const double inert[2] = {1e-3, 1e-12};
  for (int c = 0; c < 2; c++) {
    const double I = inert[c];
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "model: dp\n"
             "gravity: [0, 0, %.17g]\n"
             "bodies:\n"
             "  - {name: a, mass: %.17g, inertia: [%.17g, %.17g, %.17g], position: [0, 0, %.17g]}\n"
             "  - {name: b, mass: %.17g, inertia: [%.17g, %.17g, %.17g], position: [0, 0, %.17g]}\n"
             "joints:\n"
             "  - {name: j1, type: revolute, body1: ground, body2: a, point: [0, 0, 0], "
             "axis: [0, 1, 0]}\n"
             "  - {name: j2, type: revolute, body1: a, body2: b, point: [0, 0, %.17g], "
             "axis: [0, 1, 0]}\n",
             -g, ms, I, I, I, -l, ms, I, I, I, -2 * l, -l);
    pt_model *m = load_yaml(yaml);
    pt_data *d = pt_data_new(m);
    pt_forward(m, d);
    pt_linearization *r = linearize(m, d, NULL, 0, NULL, 0);
    CHECK(r->nz == 2, "nz %d", r->nz);
    // det([k1 - w2 m11, -w2 m12; -w2 m12, k2 - w2 m22]) = a w2^2 + b w2 + c
    const double m11 = 2 * ms * l * l + I, m12 = ms * l * l, m22 = ms * l * l + I;
    const double k1 = 2 * ms * g * l, k2 = ms * g * l;
    const double a = m11 * m22 - m12 * m12, b = -(k1 * m22 + k2 * m11), cc = k1 * k2;
    const double disc = sqrt(b * b - 4 * a * cc);
    const double w2[2] = {(-b - disc) / (2 * a), (-b + disc) / (2 * a)};
    // eigenvalues sorted by frequency: (-i w1, +i w1, -i w2, +i w2)
    for (int k = 0; k < 2; k++)
      for (int s = 0; s < 2; s++) {
        const pt_eigenvalue *e = r->eig + 2 * k + s;
        CHECK_CLOSE(fabs(e->im) / sqrt(w2[k]), 1, 1e-9, "double pendulum frequency (exact)");
        CHECK_CLOSE(e->re, 0, 1e-9, "no damping");
      }
    if (I < 1e-9) {  // point masses: the textbook frequencies
      const double p[2] = {(2 - sqrt(2)) * g / l, (2 + sqrt(2)) * g / l};
      for (int k = 0; k < 2; k++)
        CHECK_CLOSE(fabs(r->eig[2 * k].im) / sqrt(p[k]), 1, 1e-8, "sqrt((2 -+ sqrt 2) g / l)");
    }
    pt_linearization_free(r);
    pt_data_free(d);
    pt_model_free(m);
  }
}

// Test 3: a body on a prismatic joint along x with a spring-damper along the same line.
static void test_msd(void) {
  const double mass = 2.5, k = 40, c = 3, L0 = 0.7;
  char yaml[2048];
  snprintf(yaml, sizeof(yaml),
           "model: msd\n"
           "bodies:\n"
           "  - {name: cart, mass: %.17g, inertia: [0.1, 0.2, 0.3], position: [%.17g, 0, 0]}\n"
           "joints:\n"
           "  - {name: slider, type: prismatic, body1: ground, body2: cart, point: [%.17g, 0, 0],"
           " axis: [1, 0, 0]}\n"
           "forces:\n"
           "  - {name: spring, type: spring_damper, body1: ground, point1: [0, 0, 0], "
           "body2: cart, point2: [%.17g, 0, 0], stiffness: %.17g, damping: %.17g, "
           "free_length: %.17g}\n"
           "actuators:\n"
           "  - {name: push, type: joint_force, joint: slider}\n",
           mass, L0, L0, L0, k, c, L0);
  pt_model *m = load_yaml(yaml);
  pt_data *d = pt_data_new(m);
  pt_forward(m, d);
  const char *outs[] = {"slider", "slider.rate", "slider.acc"};
  pt_linearization *r = linearize(m, d, NULL, 0, outs, 3);
  const double wn = sqrt(k / mass), zeta = c / (2 * sqrt(k * mass));
  const double wd = wn * sqrt(1 - zeta * zeta);
  CHECK(r->nz == 1, "nz");
  for (int i = 0; i < 2; i++) {
    CHECK_CLOSE(r->eig[i].re, -zeta * wn, 1e-10, "Re = -zeta wn");
    CHECK_CLOSE(fabs(r->eig[i].im), wd, 1e-10, "Im = wd");
    CHECK_CLOSE(r->eig[i].damping_ratio, zeta, 1e-10, "damping ratio");
    CHECK_CLOSE(r->eig[i].freq_hz, wn / (2 * M_PI), 1e-10, "natural frequency");
  }
  // A = [0 1; -k/m -c/m], B = [0; 1/m]; y = (x, x', x'') -> C = [1 0; 0 1; -k/m -c/m],
  // D = [0; 0; 1/m]
  const double A[4] = {0, 1, -k / mass, -c / mass}, B[2] = {0, 1 / mass};
  const double C[6] = {1, 0, 0, 1, -k / mass, -c / mass}, D[3] = {0, 0, 1 / mass};
  for (int i = 0; i < 4; i++) CHECK_CLOSE(r->A[i], A[i], 1e-10, "A");
  for (int i = 0; i < 2; i++) CHECK_CLOSE(r->B[i], B[i], 1e-10, "B");
  for (int i = 0; i < 6; i++) CHECK_CLOSE(r->C[i], C[i], 1e-10, "C");
  for (int i = 0; i < 3; i++) CHECK_CLOSE(r->D[i], D[i], 1e-10, "D");
  CHECK_CLOSE(r->M[0], mass, 1e-10, "M");
  CHECK_CLOSE(r->Cmat[0], c, 1e-10, "C");
  CHECK_CLOSE(r->K[0], k, 1e-10, "K");
  CHECK(strcmp(r->output_name[2], "slider.acc") == 0, "output name %s", r->output_name[2]);
  pt_linearization_free(r);
  pt_data_free(d);
  pt_model_free(m);
}

// Test 5: the pendulum held at a tilted equilibrium by its motor (tau = m g d sin theta):
// linearized in the tip height instead of the angle it has the same eigenvalues. Asking for
// both drops the second and says so.
static void test_user_coordinates(void) {
  const double mass = 1.3, dist = 0.6, g = 9.81, th = 0.5;
  pt_model *m = load_yaml(pendulum_yaml);
  pt_data *d = pt_data_new(m);
  const char *hinge[] = {"hinge"}, *tip[] = {"tip_z"}, *both[] = {"hinge", "tip_z"};
  set_named(m, d, hinge, &th, NULL, 1);
  CHECK(pt_set_input(m, d, 0, mass * g * dist * sin(th)) == 0, "input");
  pt_forward(m, d);
  CHECK(fabs(pt_coord_accels(d)[0]) < 1e-10, "held at equilibrium: %g", pt_coord_accels(d)[0]);
  pt_linearization *ra = linearize(m, d, hinge, 1, NULL, 0);
  pt_linearization *rz = linearize(m, d, tip, 1, NULL, 0);
  CHECK(strcmp(rz->state_name[0], "tip_z") == 0, "tip state %s", rz->state_name[0]);
  const double scale = max_abs_eig(ra);
  for (int i = 0; i < 2; i++) {
    CHECK_CLOSE(rz->eig[i].re, ra->eig[i].re, 1e-9 * scale, "same eigenvalues (re)");
    CHECK_CLOSE(rz->eig[i].im, ra->eig[i].im, 1e-9 * scale, "same eigenvalues (im)");
  }
  // in the tip height z = -L cos(theta): B scales by dz/dtheta = L sin(theta)
  CHECK_CLOSE(rz->B[1], ra->B[1] * 1.2 * sin(th), 1e-9, "B in tip coordinates");
  pt_linearization *rb = linearize(m, d, both, 2, NULL, 0);
  CHECK(rb->nz == 1 && strcmp(rb->state_name[0], "hinge") == 0, "kept %s", rb->state_name[0]);
  CHECK(strstr(rb->notes, "dropped tip_z") != NULL, "notes: %s", rb->notes);
  for (int i = 0; i < 2; i++) CHECK_CLOSE(rb->eig[i].im, ra->eig[i].im, 1e-9 * scale, "eig");
  pt_linearization_free(ra);
  pt_linearization_free(rz);
  pt_linearization_free(rb);
  // hanging straight down the tip height alone is a singular choice (dz/dtheta = 0): as many
  // candidates as degrees of freedom, but the sparse check must hand over to the elimination,
  // which drops it and completes the states from internal coordinates
  const double th0 = 0;
  set_named(m, d, hinge, &th0, NULL, 1);
  CHECK(pt_set_input(m, d, 0, 0) == 0, "input");
  pt_forward(m, d);
  pt_linearization *r0 = linearize(m, d, tip, 1, NULL, 0);
  CHECK(r0->nz == 1 && strcmp(r0->state_name[0], "tip_z") != 0, "singular tip_z kept: %s",
        r0->state_name[0]);
  CHECK(strstr(r0->notes, "dropped tip_z") != NULL, "notes: %s", r0->notes);
  pt_linearization_free(r0);
  // unknown and repeated names are refused
  pt_linearization *bad = NULL;
  pt_error err = {0};
  const char *unknown[] = {"nope"}, *twice[] = {"hinge", "hinge"};
  pt_linearize_options o1 = {unknown, 1, NULL, 0, NULL, 0, PT_LIN_SPARSE};
  pt_linearize_options o2 = {twice, 2, NULL, 0, NULL, 0, PT_LIN_SPARSE};
  CHECK(pt_linearize(m, d, &o1, &bad, &err) == PT_EINVAL && !bad, "unknown state refused");
  CHECK(strstr(err.msg, "nope") != NULL, "message names it: %s", err.msg);
  CHECK(pt_linearize(m, d, &o2, &bad, &err) == PT_EINVAL && !bad, "repeated state refused");
  pt_data_free(d);
  pt_model_free(m);
}

// Too few states: a free body on a bushing with one user state is completed from its internal
// coordinates, and the notes say which were added.
static void test_too_few(void) {
  const char *yaml =
      "model: few\n"
      "gravity: [0, 0, 0]\n"
      "bodies:\n"
      "  - {name: blk, mass: 2, inertia: [0.1, 0.2, 0.3], position: [0, 0, 0]}\n"
      "forces:\n"
      "  - {name: mount, type: bushing, body1: ground, body2: blk, point: [0, 0, 0],\n"
      "     stiffness: [100, 220, 340, 10, 30, 60], damping: [0, 0, 0, 0, 0, 0]}\n"
      "coordinates:\n"
      "  - {name: bx, type: point_position, body: blk, point: [0, 0, 0], component: x}\n";
  pt_model *m = load_yaml(yaml);
  pt_data *d = pt_data_new(m);
  pt_forward(m, d);
  const char *st[] = {"bx"};
  pt_linearization *r = linearize(m, d, st, 1, NULL, 0);
  CHECK(r->nz == 6, "nz %d", r->nz);
  CHECK(strcmp(r->state_name[0], "bx") == 0, "first state %s", r->state_name[0]);
  CHECK(strstr(r->notes, "added blk.") != NULL, "notes: %s", r->notes);
  // uncoupled: w^2 = k / m for translations, kt / I for rotations
  const double w2[6] = {100 / 2.0, 220 / 2.0, 340 / 2.0, 10 / 0.1, 30 / 0.2, 60 / 0.3};
  double want[6];
  for (int i = 0; i < 6; i++) want[i] = sqrt(w2[i]);
  for (int i = 0; i < 6; i++)  // sort
    for (int j = i + 1; j < 6; j++)
      if (want[j] < want[i]) {
        double t = want[i];
        want[i] = want[j], want[j] = t;
      }
  for (int i = 0; i < 6; i++)
    CHECK_CLOSE(fabs(r->eig[2 * i].im), want[i], 1e-8 * want[i], "bushing frequencies");
  pt_linearization_free(r);
  pt_data_free(d);
  pt_model_free(m);
}

int main(void) {
  test_pendulum();
  test_double_pendulum();
  test_msd();
  test_user_coordinates();
  test_too_few();
  return finish("linearize");
}
