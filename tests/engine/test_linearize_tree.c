// test_linearize_tree.c: the tree method of the linearization (differentiated Newton-Euler
// passes, linearize_tree.c) against the general augmented sensitivity system solved by KLU
// (PT_LIN_AUGMENTED) at the same operating point: A, B, C, D, M, C, K and the eigenvalues to
// 1e-8 relative to each matrix's largest entry. Models: the Panda and the iiwa14 URDFs (joint
// torque actuators, gravity) and a branched tree of revolute, prismatic and fixed joints with
// joint damping and Coulomb friction, a torsion spring, a spring-damper between two branches, a
// bushing, a constant force and joint-torque (one geared), joint-force and body-force actuators.
// Outputs in user order (values, rates, accelerations of joint coordinates, a point position,
// a distance and body internal coordinates), states permuted; a state that is not a joint
// coordinate falls back to the general path. Also: A of the tree method against central
// differences of the engine's forward dynamics on the branched tree.
// argv[1]: the project root (for configs/models).
#include "test_linearize_util.h"

#define TOL 1e-8
#define FD_H 1e-5
#define FD_TOL 1e-6

static double max_abs(const double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(a[i]));
  return s;
}

// |a - b| <= TOL * max(1e-300, max |b|) elementwise; returns the largest relative difference
static double compare(const double *a, const double *b, int n, const char *what,
                      const char *mat) {
  const double scale = fmax(max_abs(b, n), 1e-300);
  double worst = 0;
  for (int i = 0; i < n; i++) {
    const double e = fabs(a[i] - b[i]) / scale;
    worst = fmax(worst, e);
    CHECK(e <= TOL, "%s: %s[%d] tree %.15g vs augmented %.15g", what, mat, i, a[i], b[i]);
  }
  return worst;
}

static pt_linearization *run(const pt_model *m, const pt_data *d, const char *const *states,
                             int ns, const char *const *outputs, int ny, pt_lin_solver s) {
  pt_linearize_options o = {states, ns, NULL, 0, outputs, ny, s};
  pt_linearization *r = NULL;
  pt_error err = {0};
  if (pt_linearize(m, d, &o, &r, &err)) {
    printf("FAIL linearize: %s\n", err.msg);
    exit(1);
  }
  return r;
}

// Tree method (default solver) against the augmented system; tree: whether the default solver
// must have taken the tree method (the order solved is then nz).
static void same(const pt_model *m, const pt_data *d, const char *const *states, int ns,
                 const char *const *outputs, int ny, int tree, const char *what) {
  pt_linearization *t = run(m, d, states, ns, outputs, ny, PT_LIN_SPARSE);
  pt_linearization *g = run(m, d, states, ns, outputs, ny, PT_LIN_AUGMENTED);
  const int z = g->nz, n2 = 2 * z, nu = g->nu, y = g->ny;
  CHECK(t->nz == z && t->nu == nu && t->ny == y, "%s: sizes", what);
  CHECK(tree ? t->size == z : t->size == g->size, "%s: order %d (tree method: %d)", what,
        t->size, tree);
  CHECK(g->size > z, "%s: the general path solved order %d", what, g->size);
  for (int i = 0; i < n2; i++)
    CHECK(strcmp(t->state_name[i], g->state_name[i]) == 0, "%s: state %s vs %s", what,
          t->state_name[i], g->state_name[i]);
  for (int i = 0; i < y; i++)
    CHECK(strcmp(t->output_name[i], g->output_name[i]) == 0, "%s: output %s vs %s", what,
          t->output_name[i], g->output_name[i]);
  CHECK(strcmp(t->notes, g->notes) == 0, "%s: notes\n%s\nvs\n%s", what, t->notes, g->notes);
  double w = 0;
  w = fmax(w, compare(t->A, g->A, n2 * n2, what, "A"));
  w = fmax(w, compare(t->B, g->B, n2 * nu, what, "B"));
  w = fmax(w, compare(t->C, g->C, y * n2, what, "C"));
  w = fmax(w, compare(t->D, g->D, y * nu, what, "D"));
  w = fmax(w, compare(t->M, g->M, z * z, what, "M"));
  w = fmax(w, compare(t->Cmat, g->Cmat, z * z, what, "Cmat"));
  w = fmax(w, compare(t->K, g->K, z * z, what, "K"));
  double emax = 0, ediff = 0;
  for (int i = 0; i < n2; i++) {
    emax = fmax(emax, hypot(g->eig[i].re, g->eig[i].im));
    ediff = fmax(ediff, hypot(t->eig[i].re - g->eig[i].re, t->eig[i].im - g->eig[i].im));
  }
  CHECK(ediff <= 1e-7 * emax, "%s: eigenvalues differ by %.3g (largest %.3g)", what, ediff,
        emax);
  for (int i = 0; i < z; i++)
    for (int j = 0; j < z; j++)
      CHECK(t->M[i * z + j] == t->M[j * z + i], "%s: M not symmetric", what);
  printf("%s: %d states, %d inputs, %d outputs, order %d vs %d: max rel. diff %.3g, "
         "eigenvalues %.3g of %.3g\n", what, z, nu, y, t->size, g->size, w, ediff, emax);
  pt_linearization_free(t);
  pt_linearization_free(g);
}

// Joint coordinate i (the first ndof coordinates on a tree) at q0 + 0.1 i, rate v0 - 0.2 i;
// inputs 0.5 - 0.3 i.
static void set_all(const pt_model *m, pt_data *d, double q0, double v0) {
  const int n = pt_model_ndof(m);
  pt_assign p[32], v[32];
  for (int i = 0; i < n && i < 32; i++) {
    p[i] = (pt_assign){i, q0 + 0.1 * i};
    v[i] = (pt_assign){i, v0 - 0.2 * i};
  }
  pt_error err = {0};
  if (pt_set_state(m, d, p, n, v, n, &err)) {
    printf("FAIL set_state: %s\n", err.msg);
    exit(1);
  }
  for (int i = 0; i < pt_model_ninput(m); i++) pt_set_input(m, d, i, 0.5 - 0.3 * i);
  pt_forward(m, d);
}

static void test_arm(const char *root, const char *file, const char *const *j, int nj,
                     const char *hand) {
  pt_model *m = load_config(root, file);
  pt_data *d = pt_data_new(m);
  set_all(m, d, 0.2, 0.3);
  same(m, d, NULL, 0, NULL, 0, 1, file);
  // states permuted, outputs in user order: values, rates and accelerations
  const char *st[8], *out[6];
  char buf[6][64];
  for (int i = 0; i < nj; i++) st[i] = j[(i * 3) % nj];
  snprintf(buf[0], 64, "%s.acc", j[1]);
  snprintf(buf[1], 64, "%s", j[4]);
  snprintf(buf[2], 64, "%s.rate", j[0]);
  snprintf(buf[3], 64, "%s.acc", j[nj - 1]);
  snprintf(buf[4], 64, "%s.rate", j[nj - 1]);
  snprintf(buf[5], 64, "%s", j[2]);
  for (int i = 0; i < 6; i++) out[i] = buf[i];
  char what[128];
  snprintf(what, sizeof(what), "%s, states permuted, outputs", file);
  same(m, d, st, nj, out, 6, 1, what);
  // the hand's internal coordinates (CoM position, rotation vector) as outputs
  const char *sfx[6] = {".x", ".y.rate", ".z.acc", ".rx", ".ry.rate", ".rz.acc"};
  for (int i = 0; i < 6; i++) {
    snprintf(buf[i], 64, "%s%s", hand, sfx[i]);
    out[i] = buf[i];
  }
  snprintf(what, sizeof(what), "%s, the hand's internal coordinates as outputs", file);
  same(m, d, NULL, 0, out, 6, 1, what);
  pt_data_free(d);
  pt_model_free(m);
}

static const char *tree_yaml =
    "model: branched\n"
    "gravity: [0.5, -1, -9.81]\n"
    "bodies:\n"
    "  - {name: hub, mass: 4, inertia: [0.3, 0.2, 0.25], position: [0, 0, 0.5]}\n"
    "  - {name: left, mass: 1.2, inertia: [0.02, 0.05, 0.04], position: [0.3, 0.2, 0.5]}\n"
    "  - {name: lefttip, mass: 0.4, inertia: [0.004, 0.006, 0.005], position: [0.6, 0.3, 0.4]}\n"
    "  - {name: cart, mass: 2, inertia: [0.03, 0.04, 0.05], position: [-0.3, 0, 0.5]}\n"
    "  - {name: pole, mass: 0.7, inertia: [0.01, 0.012, 0.003], position: [-0.4, 0, 0.8]}\n"
    "  - {name: weight, mass: 0.5, inertia: [0.001, 0.001, 0.001], position: [-0.4, 0.1, 1.1]}\n"
    "  - {name: slide2, mass: 0.3, inertia: [0.002, 0.003, 0.002], position: [0.6, 0.3, 0.2]}\n"
    "joints:\n"
    "  - {name: yaw, type: revolute, body1: ground, body2: hub, point: [0, 0, 0.5],\n"
    "     axis: [0.1, 0, 1], damping: 0.4}\n"
    "  - {name: shoulder, type: revolute, body1: hub, body2: left, point: [0.1, 0.1, 0.5],\n"
    "     axis: [0, 1, 0.3], friction: 0.2, friction_velocity: 0.5}\n"
    "  - {name: elbow, type: revolute, body1: lefttip, body2: left, point: [0.5, 0.25, 0.45],\n"
    "     axis: [1, 0, 0.2], damping: 0.1}\n"
    "  - {name: rail, type: prismatic, body1: hub, body2: cart, point: [-0.3, 0, 0.5],\n"
    "     axis: [1, 0.2, 0], damping: 0.5}\n"
    "  - {name: hinge, type: revolute, body1: cart, body2: pole, point: [-0.35, 0, 0.6],\n"
    "     axis: [0, 1, 0]}\n"
    "  - {name: weld, type: fixed, body1: pole, body2: weight, point: [-0.4, 0.05, 1.0]}\n"
    "  - {name: telescope, type: prismatic, body1: slide2, body2: lefttip,\n"
    "     point: [0.6, 0.3, 0.3], axis: [0.2, 0.1, 1]}\n"
    "forces:\n"
    "  - {name: coil, type: torsion_spring, joint: hinge, stiffness: 6, damping: 0.3,\n"
    "     free_angle: 0.2, preload: 0.1}\n"
    "  - {name: strut, type: spring_damper, body1: pole, point1: [-0.4, 0, 0.9],\n"
    "     body2: lefttip, point2: [0.6, 0.3, 0.45], stiffness: 40, damping: 1.2,\n"
    "     free_length: 0.8, preload: 1}\n"
    "  - {name: mount, type: bushing, body1: ground, body2: slide2, point: [0.6, 0.3, 0.2],\n"
    "     stiffness: [50, 60, 70, 8, 9, 10], damping: [2, 3, 4, 0.5, 0.6, 0.7]}\n"
    "  - {name: wind, type: force, body: weight, point: [-0.4, 0.1, 1.15], value: [1, -2, 0.5]}\n"
    "actuators:\n"
    "  - {name: m_yaw, type: joint_torque, joint: yaw}\n"
    "  - {name: m_rail, type: joint_force, joint: rail, gear: -7.5}\n"
    "  - {name: m_tele, type: joint_force, joint: telescope}\n"
    "  - {name: jet, type: body_force, body: pole, point: [-0.4, 0.05, 0.9], frame: body}\n"
    "  - {name: spin, type: body_torque, body: left, frame: body}\n"
    "coordinates:\n"
    "  - {name: tipz, type: point_position, body: weight, point: [-0.4, 0.1, 1.2],\n"
    "     component: z}\n"
    "  - {name: reach, type: distance, body1: weight, point1: [-0.4, 0.1, 1.2],\n"
    "     body2: lefttip, point2: [0.65, 0.3, 0.4]}\n";

// A of the default linearization against central differences of the forward dynamics.
static void fd_check(const pt_model *m, const pt_data *d0, const char *what) {
  pt_linearization *r = run(m, d0, NULL, 0, NULL, 0, PT_LIN_SPARSE);
  const int z = r->nz, n2 = 2 * z;
  CHECK(r->size == z && z <= 16, "%s: tree method, %d states", what, z);
  if (z > 16) {   // failed above: nothing more to compare within the arrays below
    pt_linearization_free(r);
    return;
  }
  int idx[16];
  for (int i = 0; i < z; i++) {
    idx[i] = pt_coord_index(m, r->state_name[i]);
    CHECK(idx[i] >= 0, "%s: state %s is not a coordinate", what, r->state_name[i]);
    if (idx[i] < 0) {
      pt_linearization_free(r);
      return;
    }
  }
  pt_data *c = pt_data_new(m);
  double err = 0;
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
      CHECK(pt_set_state(m, c, pos, z, vel, z, &e) == 0, "%s: set_state: %s", what, e.msg);
      for (int i = 0; i < z; i++) acc[s][i] = pt_coord_accels(c)[idx[i]];
    }
    for (int i = 0; i < z; i++) {
      const double fd = (acc[0][i] - acc[1][i]) / (2 * FD_H);
      const double an = r->A[(size_t)(z + i) * n2 + j];
      err = fmax(err, fabs(fd - an));
      CHECK(fabs(fd - an) <= FD_TOL * fmax(1, fabs(an)), "%s: A[%s.acc][%s] %.12g vs FD %.12g",
            what, r->state_name[i], r->state_name[j], an, fd);
    }
  }
  printf("%s: max |A - A_fd| = %.3g (max |A| %.3g)\n", what, err, max_abs(r->A, n2 * n2));
  pt_data_free(c);
  pt_linearization_free(r);
}

static void test_branched(void) {
  pt_model *m = load_yaml(tree_yaml);
  pt_data *d = pt_data_new(m);
  set_all(m, d, 0.15, 0.4);
  same(m, d, NULL, 0, NULL, 0, 1, "branched");
  const char *st[] = {"telescope", "hinge", "yaw", "elbow", "rail", "shoulder"};
  const char *out[] = {"rail.acc", "hinge", "telescope.rate", "yaw.acc", "elbow.acc"};
  same(m, d, st, 6, out, 5, 1, "branched, states permuted, outputs");
  const char *out2[] = {"tipz", "tipz.rate", "tipz.acc", "hinge.acc", "reach", "reach.rate",
                        "reach.acc", "pole.rx", "pole.ry.rate", "cart.z.acc", "weight.rz.acc"};
  same(m, d, st, 6, out2, 11, 1, "branched, user and internal coordinates as outputs");
  const char *st2[] = {"yaw", "shoulder", "elbow", "rail", "hinge", "tipz"};
  same(m, d, st2, 6, NULL, 0, 0, "branched, a point position state (general path)");
  fd_check(m, d, "branched");
  // a linearizer used at another state first, then twice here, gives pt_linearize's numbers
  // bit for bit (nothing of the other call's partials is left in its buffers)
  pt_data *d2 = pt_data_new(m);
  set_all(m, d2, -0.3, 1.1);
  pt_linearizer *lz = pt_linearizer_new(m);
  pt_linearization *r0 = NULL, *r1 = NULL, *r2 = NULL;
  pt_error e = {0};
  const char *o3[] = {"reach.acc", "tipz", "yaw.rate"};
  pt_linearize_options o = {NULL, 0, NULL, 0, o3, 3, PT_LIN_SPARSE};
  CHECK(pt_linearize_with(lz, d2, &o, PT_LIN_EIGEN, &r0, &e) == 0, "reuse: %s", e.msg);
  CHECK(pt_linearize_with(lz, d, &o, PT_LIN_EIGEN, &r1, &e) == 0, "reuse: %s", e.msg);
  CHECK(pt_linearize_with(lz, d, &o, PT_LIN_EIGEN, &r2, &e) == 0, "reuse: %s", e.msg);
  pt_linearization *rf = run(m, d, NULL, 0, o3, 3, PT_LIN_SPARSE);
  const int n2 = 2 * rf->nz;
  for (int k = 0; k < 2; k++) {
    const pt_linearization *r = k ? r2 : r1;
    CHECK(r && memcmp(r->A, rf->A, sizeof(double) * n2 * n2) == 0 &&
              memcmp(r->B, rf->B, sizeof(double) * n2 * rf->nu) == 0 &&
              memcmp(r->C, rf->C, sizeof(double) * 3 * n2) == 0 &&
              memcmp(r->K, rf->K, sizeof(double) * rf->nz * rf->nz) == 0,
          "branched: a reused linearizer differs from pt_linearize (call %d)", k + 1);
  }
  CHECK(r0 && memcmp(r0->A, rf->A, sizeof(double) * n2 * n2) != 0, "another state, same A");
  pt_linearization_free(r0), pt_linearization_free(r1), pt_linearization_free(r2);
  pt_linearization_free(rf);
  pt_linearizer_free(lz);
  pt_data_free(d2);
  pt_data_free(d);
  pt_model_free(m);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  const char *panda[] = {"panda_joint1", "panda_joint2", "panda_joint3", "panda_joint4",
                         "panda_joint5", "panda_joint6", "panda_joint7"};
  const char *iiwa[] = {"iiwa_joint_1", "iiwa_joint_2", "iiwa_joint_3", "iiwa_joint_4",
                        "iiwa_joint_5", "iiwa_joint_6", "iiwa_joint_7"};
  test_arm(root, "panda.urdf", panda, 7, "panda_link7");
  test_arm(root, "iiwa14.urdf", iiwa, 7, "iiwa_link_7");
  test_branched();
  if (check_failures) printf("linearize_tree: FAILED (%d failures)\n", check_failures);
  else printf("linearize_tree: ok\n");
  return check_failures != 0;
}
