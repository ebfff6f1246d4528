// test_linearize_fd.c: A from the augmented sensitivities (analytic partials) against central
// differences of the engine's own forward dynamics (issue 6, test 4): every state value and
// rate is moved by +-h with pt_set_state on a copy, pt_forward gives the state accelerations.
// The dense and sparse solutions of the augmented system are compared too, and a reused
// linearizer (pt_linearize_with) against pt_linearize.
// Models: a 7-link chain, a body on a bushing carrying a link (springs, dampers, forces,
// actuators), the parallelogram four-bar (closed loop), a mixed chain of every joint with
// coordinates plus a fixed joint, a chain driven by a motion, and the rotor-stator spinning.
// argv[1]: the project root (for configs/models).
#include "engine.h"
#include "linearize_internal.h"
#include "test_linearize_util.h"

#define FD_H 1e-5
#define FD_TOL 1e-6

static int fd_check(const pt_model *m, const pt_data *d0, const char *const *states, int ns,
                    const char *what) {
  pt_linearization *r = linearize(m, d0, states, ns, NULL, 0);
  const int z = r->nz, n2 = 2 * z;
  int idx[16];
  CHECK(z <= 16, "%s: too many states", what);
  for (int i = 0; i < z; i++) {
    idx[i] = pt_coord_index(m, r->state_name[i]);
    CHECK(idx[i] >= 0, "%s: state %s is not a coordinate", what, r->state_name[i]);
    if (idx[i] < 0) return 1;
  }
  pt_data *c = pt_data_new(m);
  double amax = 1, err = 0;
  for (int i = 0; i < n2 * n2; i++) amax = fmax(amax, fabs(r->A[i]));
  for (int j = 0; j < n2; j++) {
    double acc[2][16];
    for (int s = 0; s < 2; s++) {
      pt_assign pos[16], vel[16];
      for (int i = 0; i < z; i++) {
        pos[i].coord = vel[i].coord = idx[i];
        pos[i].value = pt_coords(d0)[idx[i]] + (j == i ? (s ? -FD_H : FD_H) : 0);
        vel[i].value = pt_coord_rates(d0)[idx[i]] + (j == z + i ? (s ? -FD_H : FD_H) : 0);
      }
      pt_error e = {0};
      pt_data_copy(m, c, d0);
      int rc = pt_set_state(m, c, pos, z, vel, z, &e);
      CHECK(rc == 0, "%s: set_state: %s", what, e.msg);
      for (int i = 0; i < z; i++) acc[s][i] = pt_coord_accels(c)[idx[i]];
    }
    for (int i = 0; i < z; i++) {
      const double fd = (acc[0][i] - acc[1][i]) / (2 * FD_H);
      const double an = r->A[(size_t)(z + i) * n2 + j];
      err = fmax(err, fabs(fd - an));
      CHECK(fabs(fd - an) <= FD_TOL * fmax(1, fabs(an)),
            "%s: A[%s.acc][%s] augmented %.12g vs FD %.12g", what, r->state_name[i],
            r->state_name[j], an, fd);
      CHECK_CLOSE(r->A[(size_t)i * n2 + j], j == z + i, 1e-12, "Sdot = W");
    }
  }
  // the dense LU of the same augmented system gives the same A (and B, M, K)
  pt_linearize_options od = {states, ns, NULL, 0, NULL, 0, PT_LIN_DENSE};
  pt_linearization *rd = NULL;
  pt_error e0 = {0};
  CHECK(pt_linearize(m, d0, &od, &rd, &e0) == 0, "%s: dense: %s", what, e0.msg);
  double dmax = 0;
  for (int i = 0; rd && i < n2 * n2; i++) {
    dmax = fmax(dmax, fabs(rd->A[i] - r->A[i]));
    CHECK(fabs(rd->A[i] - r->A[i]) <= 1e-9 * fmax(1, fabs(r->A[i])), "%s: sparse vs dense A",
          what);
  }
  for (int i = 0; rd && i < z * z; i++) {
    CHECK(fabs(rd->M[i] - r->M[i]) <= 1e-9 * fmax(1, fabs(r->M[i])), "%s: dense M", what);
    CHECK(fabs(rd->K[i] - r->K[i]) <= 1e-9 * fmax(1, fabs(r->K[i])), "%s: dense K", what);
  }
  pt_linearization_free(rd);
  // a linearizer used first at another state (the model's initial one), then twice at d0,
  // gives the same numbers as pt_linearize, bit for bit; without PT_LIN_EIGEN the eigenvalues are left zeroed
  pt_linearizer *lz = pt_linearizer_new(m);
  pt_data *d1 = pt_data_new(m);
  pt_linearize_options o = {states, ns, NULL, 0, NULL, 0, PT_LIN_SPARSE};
  pt_linearization *r1 = NULL, *r2 = NULL;
  CHECK(lz && d1 && pt_linearize_with(lz, d1, &o, 0, &r1, &e0) == 0, "%s: linearizer at the "
        "initial state: %s", what, e0.msg);
  for (int i = 0; r1 && i < 2 * r1->nz; i++)
    CHECK(r1->eig[i].re == 0 && r1->eig[i].im == 0, "%s: eigenvalues not asked for", what);
  CHECK(lz && pt_linearize_with(lz, d0, &o, PT_LIN_EIGEN, &r2, &e0) == 0, "%s: linearizer: %s",
        what, e0.msg);
  // twice at d0: the second call reuses the sparse LU's analysis of the same pattern
  for (int again = 0; again < 2 && r2; again++) {
    if (again) {
      pt_linearization_free(r2);
      r2 = NULL;
      CHECK(pt_linearize_with(lz, d0, &o, PT_LIN_EIGEN, &r2, &e0) == 0, "%s: again: %s", what,
            e0.msg);
      if (!r2) break;
    }
    CHECK(r2->nz == z && r2->nu == r->nu && r2->ny == r->ny, "%s: linearizer sizes", what);
    CHECK(!memcmp(r2->A, r->A, sizeof(double) * (size_t)(n2 * n2)) &&
          !memcmp(r2->B, r->B, sizeof(double) * (size_t)(n2 * r->nu)) &&
          !memcmp(r2->C, r->C, sizeof(double) * (size_t)(r->ny * n2)) &&
          !memcmp(r2->M, r->M, sizeof(double) * (size_t)(z * z)) &&
          !memcmp(r2->K, r->K, sizeof(double) * (size_t)(z * z)) &&
          !memcmp(r2->eig, r->eig, sizeof(pt_eigenvalue) * (size_t)n2),
          "%s: a reused linearizer differs from pt_linearize", what);
  }
  pt_linearization_free(r1), pt_linearization_free(r2);
  pt_linearizer_free(lz);
  pt_data_free(d1);
  printf("%s: %d states, max |A - A_fd| = %.3g (max |A| %.3g), sparse vs dense %.3g\n", what,
         z, err, amax, dmax);
  pt_data_free(c);
  pt_linearization_free(r);
  return 0;
}

static void test_chain7(const char *root) {
  pt_model *m = load_config(root, "chain7.yaml");
  pt_data *d = pt_data_new(m);
  const char *j[] = {"j1", "j2", "j3", "j4", "j5", "j6", "j7"};
  const double q[] = {-0.4, 0.3, -0.2, 0.5, 0.1, -0.6, 0.25};
  const double v[] = {0.5, -0.7, 0.3, 0.9, -0.4, 0.2, 1.1};
  set_named(m, d, j, q, v, 7);
  fd_check(m, d, NULL, 0, "chain7");
  pt_data_free(d);
  pt_model_free(m);
}

static const char *bushing_yaml =
    "model: bushed\n"
    "gravity: [0, 0, -9.81]\n"
    "bodies:\n"
    "  - {name: base, mass: 3, inertia: [0.2, 0.25, 0.3], position: [0, 0, 0],\n"
    "     orientation: {axis: [1, 2, 3], angle: 0.3}, angular_velocity: [0.4, -0.3, 0.8],\n"
    "     velocity: [0.1, 0.2, -0.1]}\n"
    "  - {name: arm, mass: 1, inertia: [0.05, 0.06, 0.02], position: [0.1, 0, -0.4],\n"
    "     angular_velocity: [0.2, 0.5, -0.3]}\n"
    "joints:\n"
    "  - {name: hinge, type: revolute, body1: base, body2: arm, point: [0, 0, -0.1],\n"
    "     axis: [0, 1, 0.2], damping: 0.3}\n"
    "forces:\n"
    "  - {name: mount, type: bushing, body1: ground, body2: base, point: [0.05, 0, 0.1],\n"
    "     stiffness: [500, 600, 700, 80, 90, 100], damping: [2, 3, 4, 0.5, 0.6, 0.7],\n"
    "     axes: [[0.8, 0.6, 0], [-0.6, 0.8, 0], [0, 0, 1]]}\n"
    "  - {name: strut, type: spring_damper, body1: ground, point1: [0.5, 0.2, 0.3],\n"
    "     body2: arm, point2: [0.1, 0.05, -0.6], stiffness: 50, damping: 1.5,\n"
    "     free_length: 0.5, preload: 2}\n"
    "  - {name: coil, type: torsion_spring, joint: hinge, stiffness: 4, damping: 0.2,\n"
    "     free_angle: 0.3, preload: 0.1}\n"
    "  - {name: wind, type: force, body: arm, point: [0.1, 0.1, -0.5], value: [1, -2, 0.5]}\n"
    "actuators:\n"
    "  - {name: motor, type: joint_torque, joint: hinge}\n"
    "  - {name: jet, type: body_force, body: arm, point: [0.2, 0, -0.5], frame: body}\n"
    "  - {name: spin, type: body_torque, body: base, frame: body}\n"
    "coordinates:\n"
    "  - {name: cx, type: point_position, body: base, point: [0, 0, 0], component: x}\n"
    "  - {name: cy, type: point_position, body: base, point: [0, 0, 0], component: y}\n"
    "  - {name: cz, type: point_position, body: base, point: [0, 0, 0], component: z}\n"
    "  - {name: ay, type: point_position, body: base, point: [1, 0, 0], component: y}\n"
    "  - {name: az, type: point_position, body: base, point: [1, 0, 0], component: z}\n"
    "  - {name: bz, type: point_position, body: base, point: [0, 1, 0], component: z}\n"
    "  - {name: gap, type: distance, body1: arm, point1: [0.1, 0, -0.6], body2: ground,\n"
    "     point2: [1, 1, -1]}\n";

static void test_bushing(void) {
  pt_model *m = load_yaml(bushing_yaml);
  pt_data *d = pt_data_new(m);
  const double u[7] = {0.7, 1.5, -0.5, 2.0, 0.3, -0.2, 0.4};
  for (int i = 0; i < pt_model_ninput(m); i++) pt_set_input(m, d, i, u[i]);
  pt_forward(m, d);
  const char *st[] = {"cx", "cy", "cz", "ay", "az", "bz", "hinge"};
  fd_check(m, d, st, 7, "bushing");
  const char *st2[] = {"cx", "cy", "cz", "ay", "az", "bz", "gap"};  // a distance as a state
  fd_check(m, d, st2, 7, "bushing, distance state");
  pt_data_free(d);
  pt_model_free(m);
}

static void test_fourbar(const char *root) {
  pt_model *m = load_config(root, "fourbar_parallelogram.yaml");
  pt_data *d = pt_data_new(m);
  const char *a[] = {"A"};
  const double q = 0.35, v = -0.8;
  set_named(m, d, a, &q, &v, 1);
  fd_check(m, d, NULL, 0, "fourbar");
  const char *c[] = {"C"};  // a state on the other side of the loop
  fd_check(m, d, c, 1, "fourbar in C");
  pt_data_free(d);
  pt_model_free(m);
}

static const char *mixed_yaml =
    "model: mixed\n"
    "gravity: [0.5, -1, -9.81]\n"
    "bodies:\n"
    "  - {name: a, mass: 1, inertia: [0.02, 0.03, 0.04], position: [0, 0, -0.3]}\n"
    "  - {name: b, mass: 1.2, inertia: [0.03, 0.03, 0.02], position: [0.1, 0, -0.7]}\n"
    "  - {name: c, mass: 0.8, inertia: [0.01, 0.02, 0.02], position: [0.2, 0.1, -1.1]}\n"
    "  - {name: e, mass: 0.6, inertia: [0.01, 0.01, 0.015], position: [0.3, 0.1, -1.5]}\n"
    "  - {name: f, mass: 0.3, inertia: [0.004, 0.005, 0.006], position: [0.35, 0.2, -1.6]}\n"
    "joints:\n"
    "  - {name: r, type: revolute, body1: ground, body2: a, point: [0, 0, 0], "
    "axis: [0.1, 0.2, 1]}\n"
    "  - {name: u, type: universal, body1: a, body2: b, point: [0, 0, -0.5], "
    "axis1: [1, 0, 0], axis2: [0, 1, 0]}\n"
    "  - {name: cy, type: cylindrical, body1: b, body2: c, point: [0.1, 0, -0.9], "
    "axis: [0.2, 0.1, 1]}\n"
    "  - {name: pr, type: prismatic, body1: c, body2: e, point: [0.2, 0.1, -1.3], "
    "axis: [1, 0.3, -0.2]}\n"
    "  - {name: weld, type: fixed, body1: e, body2: f, point: [0.3, 0.15, -1.55]}\n"
    "forces:\n"
    "  - {name: s, type: spring_damper, body1: ground, point1: [1, 0, -1], body2: e,\n"
    "     point2: [0.3, 0.1, -1.5], stiffness: 20, damping: 0.5, free_length: 0.6}\n";

static void test_mixed(void) {
  pt_model *m = load_yaml(mixed_yaml);
  pt_data *d = pt_data_new(m);
  const char *n[] = {"r", "u.angle1", "u.angle2", "cy.angle", "cy.slide", "pr"};
  const double q[] = {0.3, -0.2, 0.25, 0.4, 0.05, -0.03};
  const double v[] = {0.6, -0.4, 0.7, -0.9, 0.2, 0.3};
  set_named(m, d, n, q, v, 6);
  fd_check(m, d, NULL, 0, "mixed joints");
  pt_data_free(d);
  pt_model_free(m);
}

// Joint damping and regularised Coulomb friction (issue 11) on every joint with coordinates,
// at rates where tanh is well away from its linear part.
static const char *friction_yaml =
    "model: friction\n"
    "bodies:\n"
    "  - {name: a, mass: 1, inertia: [0.02, 0.03, 0.04], position: [0, 0, -0.3]}\n"
    "  - {name: b, mass: 1.2, inertia: [0.03, 0.03, 0.02], position: [0.1, 0, -0.7]}\n"
    "  - {name: c, mass: 0.8, inertia: [0.01, 0.02, 0.02], position: [0.2, 0.1, -1.1]}\n"
    "  - {name: e, mass: 0.6, inertia: [0.01, 0.01, 0.015], position: [0.3, 0.1, -1.5]}\n"
    "joints:\n"
    "  - {name: r, type: revolute, body1: ground, body2: a, point: [0, 0, 0], "
    "axis: [0.1, 0.2, 1], damping: 0.3, friction: 0.4, friction_velocity: 0.5}\n"
    "  - {name: u, type: universal, body1: a, body2: b, point: [0, 0, -0.5], "
    "axis1: [1, 0, 0], axis2: [0, 1, 0], friction: 0.2, friction_velocity: 0.3}\n"
    "  - {name: cy, type: cylindrical, body1: b, body2: c, point: [0.1, 0, -0.9], "
    "axis: [0.2, 0.1, 1], damping: 0.1, friction: 0.3}\n"
    "  - {name: pr, type: prismatic, body1: c, body2: e, point: [0.2, 0.1, -1.3], "
    "axis: [1, 0.3, -0.2], friction: 1.5, friction_velocity: 0.2}\n";

static void test_friction(void) {
  pt_model *m = load_yaml(friction_yaml);
  pt_data *d = pt_data_new(m);
  const char *n[] = {"r", "u.angle1", "u.angle2", "cy.angle", "cy.slide", "pr"};
  const double q[] = {0.3, -0.2, 0.25, 0.4, 0.05, -0.03};
  const double v[] = {0.6, -0.4, 0.7, -0.9, 0.2, 0.3};
  set_named(m, d, n, q, v, 6);
  fd_check(m, d, NULL, 0, "damping and friction");
  pt_data_free(d);
  pt_model_free(m);
}

// A planar joint (issue 11) carrying a pendulum, damped, off its plane's axes.
static const char *planar_yaml =
    "model: planar\n"
    "gravity: [0.5, -1, -9.81]\n"
    "bodies:\n"
    "  - {name: a, mass: 1, inertia: [0.02, 0.03, 0.04], position: [0.2, 0.1, 0]}\n"
    "  - {name: b, mass: 0.7, inertia: [0.01, 0.02, 0.02], position: [0.2, 0.1, -0.5]}\n"
    "joints:\n"
    "  - {name: p, type: planar, body1: ground, body2: a, point: [0, 0, 0], "
    "axis: [0.2, -0.3, 1], damping: 0.2}\n"
    "  - {name: r, type: revolute, body1: a, body2: b, point: [0.2, 0.1, -0.2], "
    "axis: [1, 0.2, 0]}\n";

static void test_planar(void) {
  pt_model *m = load_yaml(planar_yaml);
  pt_data *d = pt_data_new(m);
  const char *n[] = {"p.x", "p.y", "p.angle", "r"};
  const double q[] = {0.1, -0.05, 0.4, 0.3};
  const double v[] = {0.5, -0.2, 1.1, -0.7};
  set_named(m, d, n, q, v, 4);
  fd_check(m, d, NULL, 0, "planar joint");
  pt_data_free(d);
  pt_model_free(m);
}

// The analytic partials of every coordinate's Jdot x against central differences of
// measure.c's own (s: a copy of d used as scratch).
static void check_meas_partials(const pt_model *m, const pt_data *d, pt_data *s,
                                const char *what) {
  int nan = 0;
  double emax = 0;
  for (int c = 0; c < m->ncoord; c++) {
    double jq[12], ju[12], val, jac[12], jp, jm;
    if (!ptd_meas_quadratic_partials(m, d, c, jq, ju)) continue;
    nan++;
    const int *b = m->meas_body + 2 * c;
    for (int sl = 0; sl < 2; sl++) {
      if (b[sl] == PT_GROUND) continue;
      for (int x = 0; x < 12; x++) {
        const double h = ptd_fd_step(x);
        ptd_perturb(m, s, d->q, d->x, b[sl], x, h);
        pt_measure(m, s, c, &val, jac, &jp);
        ptd_perturb(m, s, d->q, d->x, b[sl], x, -h);
        pt_measure(m, s, c, &val, jac, &jm);
        ptd_perturb(m, s, d->q, d->x, b[sl], x, 0);
        const double fd = (jp - jm) / (2 * h), an = x < 6 ? jq[6 * sl + x] : ju[6 * sl + x - 6];
        emax = fmax(emax, fabs(fd - an));
        CHECK(fabs(fd - an) <= 1e-6 * fmax(1, fabs(an)), "%s: Jdot x of %s, body %d, variable "
              "%d: analytic %.12g vs FD %.12g", what, pt_coord_name(m, c), b[sl], x, an, fd);
      }
    }
  }
  CHECK(nan > 0, "%s: no analytic coordinate", what);
  printf("%s: Jdot x partials of %d of %d coordinates, max |analytic - FD| = %.3g\n", what,
         nan, m->ncoord, emax);
}

// The analytic gamma partials of every joint row (revolute, universal, cylindrical, prismatic,
// fixed) against central differences of joint.c's own gamma, each body variable moved by the
// local step (positions 1e-5, velocities 1e-3: exact for a quadratic), at a moving state.
static void test_gamma_partials(void) {
  pt_model *m = load_yaml(mixed_yaml);
  pt_data *d = pt_data_new(m), *s = pt_data_new(m);
  const char *n[] = {"r", "u.angle1", "u.angle2", "cy.angle", "cy.slide", "pr"};
  const double q[] = {0.3, -0.2, 0.25, 0.4, 0.05, -0.03};
  const double v[] = {0.6, -0.4, 0.7, -0.9, 0.2, 0.3};
  set_named(m, d, n, q, v, 6);
  pt_data_copy(m, s, d);
  int nrow = 0;
  double emax = 0;
  for (int a = 0; a < m->ncon; a++) {
    double gq[12], gu[12];
    if (!ptd_gamma_partials(m, d, a, gq, gu)) continue;
    nrow++;
    const int r = m->con_row[a], *b = m->row_body + 2 * r;
    for (int sl = 0; sl < 2; sl++) {
      if (b[sl] == PT_GROUND) continue;
      for (int x = 0; x < 12; x++) {
        const double h = ptd_fd_step(x);
        ptd_perturb(m, s, d->q, d->x, b[sl], x, h);
        pt_joint_rows(m, s);
        const double gp = s->row_gamma[r];
        ptd_perturb(m, s, d->q, d->x, b[sl], x, -h);
        pt_joint_rows(m, s);
        const double fd = (gp - s->row_gamma[r]) / (2 * h);
        ptd_perturb(m, s, d->q, d->x, b[sl], x, 0);
        const double an = x < 6 ? gq[6 * sl + x] : gu[6 * sl + x - 6];
        emax = fmax(emax, fabs(fd - an));
        CHECK(fabs(fd - an) <= 1e-6 * fmax(1, fabs(an)), "gamma of row %d, body %d, variable "
              "%d: analytic %.12g vs FD %.12g", a, b[sl], x, an, fd);
      }
    }
  }
  CHECK(nrow == m->ncon, "%d of %d rows analytic", nrow, m->ncon);
  printf("gamma partials: %d joint rows, max |analytic - FD| = %.3g\n", nrow, emax);
  check_meas_partials(m, d, s, "mixed joints");   // angles, universal angles, slides
  pt_data_free(s);
  pt_data_free(d);
  pt_model_free(m);
  // point positions on a moving body (and a distance, left to the local differences)
  m = load_yaml(bushing_yaml);
  d = pt_data_new(m);
  s = pt_data_new(m);
  pt_forward(m, d);
  pt_data_copy(m, s, d);
  check_meas_partials(m, d, s, "bushing");
  pt_data_free(s);
  pt_data_free(d);
  pt_model_free(m);
}

static const char *driven_yaml =
    "model: driven\n"
    "bodies:\n"
    "  - {name: a, mass: 1, inertia: [0.02, 0.08, 0.08], position: [0.25, 0, 0]}\n"
    "  - {name: b, mass: 1, inertia: [0.02, 0.08, 0.08], position: [0.75, 0, 0]}\n"
    "joints:\n"
    "  - {name: j1, type: revolute, body1: ground, body2: a, point: [0, 0, 0], axis: [0, 1, 0]}\n"
    "  - {name: j2, type: revolute, body1: a, body2: b, point: [0.5, 0, 0], axis: [0, 1, 0]}\n"
    "motions:\n"
    "  - {name: drive, joint: j1, profile: sine, offset: 0.2, amplitude: 0.5, omega: 3,"
    " phase: 0.1}\n";

static void test_driven(void) {
  pt_model *m = load_yaml(driven_yaml);
  pt_data *d = pt_data_new(m);
  for (int i = 0; i < 300; i++) pt_step(m, d);  // t = 0.3, the motion moving
  fd_check(m, d, NULL, 0, "motion-driven");
  pt_data_free(d);
  pt_model_free(m);
}

// The rotor-stator of the seed with the rotor spinning (gyroscopic partials), stator at rest.
static void test_rotor(const char *root) {
  pt_model *m = load_config(root, "rotor_stator.yaml");
  pt_data *d = pt_data_new(m);
  const char *st[] = {"stator_x", "stator_y", "stator_z", "stator_ax_y", "stator_ax_z",
                      "stator_ay_z", "spin"};
  const double q[7] = {0.01, -0.02, 0.005, 0.02, -0.01, 0.015, 0.3};
  const double v[7] = {0.01, 0.02, -0.03, 0.05, 0.02, -0.04, 6.0};
  set_named(m, d, st, q, v, 7);
  fd_check(m, d, st, 7, "rotor-stator spinning");
  pt_data_free(d);
  pt_model_free(m);
}

// ---------------------------------------------------------------------------------------------
// Internal states of a free body (BODY.x|y|z|rx|ry|rz): phi is the rotation vector of the
// attitude relative to the operating point, A = exp(phi~) A0, so omega = J_l(phi) phi' with
// J_l = I + (1 - cos t) / t^2 phi~ + (t - sin t) / t^3 phi~^2 (t = |phi|). The reference here
// sets (phi, phi') directly on the data (white box), takes omega' from pt_forward and
// phi'' = J_l^-1 (omega' - J_l' phi'), J_l' by a directional difference of J_l.

static void jl(double J[9], const double f[3]) {
  const double t = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
  const double a = t > 1e-6 ? (1 - cos(t)) / (t * t) : 0.5 - t * t / 24;
  const double b = t > 1e-6 ? (t - sin(t)) / (t * t * t) : 1.0 / 6 - t * t / 120;
  const double S[9] = {0, -f[2], f[1], f[2], 0, -f[0], -f[1], f[0], 0};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double s2 = 0;
      for (int k = 0; k < 3; k++) s2 += S[3 * i + k] * S[3 * k + j];
      J[3 * i + j] = (i == j) + a * S[3 * i + j] + b * s2;
    }
}

static void solve3(double x[3], const double A[9], const double b[3]) {  // Cramer
  const double det = A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
                     A[2] * (A[3] * A[7] - A[4] * A[6]);
  for (int c = 0; c < 3; c++) {
    double M[9];
    memcpy(M, A, sizeof(M));
    for (int r = 0; r < 3; r++) M[3 * r + c] = b[r];
    x[c] = (M[0] * (M[4] * M[8] - M[5] * M[7]) - M[1] * (M[3] * M[8] - M[5] * M[6]) +
            M[2] * (M[3] * M[7] - M[4] * M[6])) / det;
  }
}

// Accelerations (r'', phi'') of body 0 at (r, phi, r', phi') around the base data d0.
static void chart_acc(const pt_model *m, const pt_data *d0, pt_data *c, const double y[12],
                      double out[6]) {
  pt_data_copy(m, c, d0);
  const double *f = y + 3, *fd = y + 9;
  double J[9], w[3], p[4], dq[4];
  const double t = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
  dq[0] = cos(t / 2);
  for (int i = 0; i < 3; i++) dq[1 + i] = t > 0 ? sin(t / 2) * f[i] / t : 0;
  const double *p0 = d0->q + 3;
  p[0] = dq[0] * p0[0] - dq[1] * p0[1] - dq[2] * p0[2] - dq[3] * p0[3];
  p[1] = dq[0] * p0[1] + p0[0] * dq[1] + dq[2] * p0[3] - dq[3] * p0[2];
  p[2] = dq[0] * p0[2] + p0[0] * dq[2] + dq[3] * p0[1] - dq[1] * p0[3];
  p[3] = dq[0] * p0[3] + p0[0] * dq[3] + dq[1] * p0[2] - dq[2] * p0[1];
  jl(J, f);
  for (int i = 0; i < 3; i++) w[i] = J[3 * i] * fd[0] + J[3 * i + 1] * fd[1] + J[3 * i + 2] * fd[2];
  for (int i = 0; i < 3; i++) c->q[i] = y[i], c->x[i] = y[6 + i], c->x[3 + i] = w[i];
  memcpy(c->q + 3, p, sizeof(p));
  pt_qd_from_x(m, c);
  CHECK(pt_forward(m, c) == 0, "forward");
  // J_l' phi' by a directional difference of J_l along phi'
  const double e = 1e-6;
  double fp[3], fm[3], Jp[9], Jm[9], rhs[3];
  for (int i = 0; i < 3; i++) fp[i] = f[i] + e * fd[i], fm[i] = f[i] - e * fd[i];
  jl(Jp, fp);
  jl(Jm, fm);
  for (int i = 0; i < 3; i++) {
    double s = 0;
    for (int k = 0; k < 3; k++) s += (Jp[3 * i + k] - Jm[3 * i + k]) / (2 * e) * fd[k];
    rhs[i] = c->xdd[3 + i] - s;
    out[i] = c->xdd[i];
  }
  solve3(out + 3, J, rhs);
}

static void test_internal_states(void) {
  pt_model *m = load_yaml(
      "model: free\n"
      "gravity: [0, 0, -9.81]\n"
      "bodies:\n"
      "  - {name: box, mass: 2, inertia: [0.1, 0.2, 0.25], position: [0.1, 0.2, 0.3],\n"
      "     orientation: {axis: [1, 1, 0], angle: 0.4}, velocity: [0.3, -0.2, 0.1],\n"
      "     angular_velocity: [1.5, -0.8, 2.2]}\n"
      "forces:\n"
      "  - {name: mount, type: bushing, body1: ground, body2: box, point: [0, 0, 0.5],\n"
      "     stiffness: [100, 200, 300, 10, 20, 30], damping: [1, 2, 3, 0.1, 0.2, 0.3]}\n");
  pt_data *d = pt_data_new(m), *c = pt_data_new(m);
  pt_forward(m, d);
  pt_linearization *r = linearize(m, d, NULL, 0, NULL, 0);
  CHECK(r->nz == 6 && strcmp(r->state_name[3], "box.rx") == 0, "internal states");
  double y0[12], err = 0;
  for (int i = 0; i < 3; i++) y0[i] = d->q[i], y0[3 + i] = 0, y0[6 + i] = d->x[i];
  for (int i = 0; i < 3; i++) y0[9 + i] = d->x[3 + i];  // phi' = omega at phi = 0
  for (int j = 0; j < 12; j++) {
    double y[12], ap[6], am[6];
    memcpy(y, y0, sizeof(y));
    y[j] += FD_H;
    chart_acc(m, d, c, y, ap);
    y[j] -= 2 * FD_H;
    chart_acc(m, d, c, y, am);
    for (int i = 0; i < 6; i++) {
      const double fd = (ap[i] - am[i]) / (2 * FD_H), an = r->A[(6 + i) * 12 + j];
      err = fmax(err, fabs(fd - an));
      CHECK(fabs(fd - an) <= FD_TOL * fmax(1, fabs(an)), "internal: A[%s][%s] %.12g vs %.12g",
            r->state_name[6 + i], r->state_name[j], an, fd);
    }
  }
  printf("internal states of a tumbling body: max |A - A_fd| = %.3g\n", err);
  pt_linearization_free(r);
  pt_data_free(d);
  pt_data_free(c);
  pt_model_free(m);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  test_chain7(root);
  test_bushing();
  test_fourbar(root);
  test_mixed();
  test_friction();
  test_planar();
  test_gamma_partials();
  test_driven();
  test_rotor(root);
  test_internal_states();
  return finish("linearize_fd");
}
