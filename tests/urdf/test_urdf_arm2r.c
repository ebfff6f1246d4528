// test_urdf_arm2r.c: configs/models/arm2r.urdf, imported and run by the engine, against the
// closed-form equations of a planar two-link arm (argv[1] = the URDF file):
//   M(q) q'' + c(q, q') + g(q) + D q' = tau
// with absolute angles th1 = q1, th2 = q1 + q2 measured from +x towards +z, and
//   M11 = m1 lc1^2 + I1 + m2 (l1^2 + lc2^2 + 2 l1 lc2 cos q2) + I2
//   M12 = m2 (lc2^2 + l1 lc2 cos q2) + I2,  M22 = m2 lc2^2 + I2
//   c1 = -m2 l1 lc2 sin q2 (2 q1' q2' + q2'^2),  c2 = m2 l1 lc2 sin q2 q1'^2
//   g1 = (m1 lc1 + m2 l1) G cos th1 + m2 lc2 G cos th2,  g2 = m2 lc2 G cos th2
// I1, I2 are the moments about the CoM about the joint axis (URDF iyy); the CoM offsets along
// the axis and the products of inertia only load the joint reactions.
#include "partita.h"
#include "urdf_test.h"

// The numbers written in configs/models/arm2r.urdf.
static const double l1 = 0.5, lc1 = 0.22, m1 = 2.0, I1 = 0.05;
static const double lc2 = 0.18, m2 = 1.2, I2 = 0.02;
static const double D1 = 0.1, D2 = 0.05, G = 9.81;

static void closed_form(const double *q, const double *qd, double *M, double *c, double *g) {
  double c2 = cos(q[1]), s2 = sin(q[1]), t1 = q[0], t2 = q[0] + q[1];
  M[0] = m1 * lc1 * lc1 + I1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * c2) + I2;
  M[1] = M[2] = m2 * (lc2 * lc2 + l1 * lc2 * c2) + I2;
  M[3] = m2 * lc2 * lc2 + I2;
  c[0] = -m2 * l1 * lc2 * s2 * (2 * qd[0] * qd[1] + qd[1] * qd[1]);
  c[1] = m2 * l1 * lc2 * s2 * qd[0] * qd[0];
  g[0] = (m1 * lc1 + m2 * l1) * G * cos(t1) + m2 * lc2 * G * cos(t2);
  g[1] = m2 * lc2 * G * cos(t2);
}

typedef struct {
  const pt_model *m;
  pt_data *d;
  int q[2], u[2];  // coordinate and input indices of shoulder, elbow
} arm;

// q'' from the engine at (q, q', tau).
static int engine_accel(arm *a, const double *q, const double *qd, const double *tau,
                        double *qdd) {
  pt_assign pos[2] = {{a->q[0], q[0]}, {a->q[1], q[1]}};
  pt_assign vel[2] = {{a->q[0], qd[0]}, {a->q[1], qd[1]}};
  pt_error err = {0};
  int rc = pt_set_state(a->m, a->d, pos, 2, vel, 2, &err);
  CHECK(rc == PT_OK, "pt_set_state: %s", err.msg);
  for (int k = 0; k < 2 && !rc; k++) rc = pt_set_input(a->m, a->d, a->u[k], tau[k]);
  CHECK(rc == PT_OK, "pt_set_input: %d", rc);
  if (!rc) rc = pt_forward(a->m, a->d);
  CHECK(rc == PT_OK, "pt_forward: %d", rc);
  const double *x = pt_coords(a->d), *acc = pt_coord_accels(a->d);
  for (int k = 0; k < 2; k++) {
    CHECK_NEAR(x[a->q[k]], q[k], 1e-12, "coordinate set");
    qdd[k] = acc[a->q[k]];
  }
  return rc;
}

// tau with q'' = 0 at q' = 0: q'' = a0 + B tau is affine; B from unit torques.
static void check_gravity(arm *a, const double *q) {
  double zero[2] = {0, 0}, a0[2], B[4], col[2];
  engine_accel(a, q, zero, zero, a0);
  for (int j = 0; j < 2; j++) {
    double unit[2] = {j == 0, j == 1};
    engine_accel(a, q, zero, unit, col);
    B[j] = col[0] - a0[0];
    B[2 + j] = col[1] - a0[1];
  }
  double det = B[0] * B[3] - B[1] * B[2];
  double tau[2] = {(-a0[0] * B[3] + a0[1] * B[1]) / det, (-a0[1] * B[0] + a0[0] * B[2]) / det};
  double M[4], c[2], g[2];
  closed_form(q, zero, M, c, g);
  CHECK_NEAR(tau[0], g[0], 1e-10, "gravity torque shoulder");
  CHECK_NEAR(tau[1], g[1], 1e-10, "gravity torque elbow");
  printf("q = (%6.3f, %6.3f): gravity torques %.12f %.12f (closed form %.12f %.12f)\n", q[0],
         q[1], tau[0], tau[1], g[0], g[1]);
}

// q'' at (q, q', tau) against M^-1 (tau - c - g - D q').
static void check_accel(arm *a, const double *q, const double *qd, const double *tau) {
  double qdd[2], M[4], c[2], g[2];
  engine_accel(a, q, qd, tau, qdd);
  closed_form(q, qd, M, c, g);
  double r[2] = {tau[0] - c[0] - g[0] - D1 * qd[0], tau[1] - c[1] - g[1] - D2 * qd[1]};
  double det = M[0] * M[3] - M[1] * M[2];
  double ref[2] = {(M[3] * r[0] - M[1] * r[1]) / det, (M[0] * r[1] - M[2] * r[0]) / det};
  CHECK_NEAR(qdd[0], ref[0], 1e-10, "shoulder acceleration");
  CHECK_NEAR(qdd[1], ref[1], 1e-10, "elbow acceleration");
  printf("q'' = %.12f %.12f (closed form %.12f %.12f)\n", qdd[0], qdd[1], ref[0], ref[1]);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s arm2r.urdf\n", argv[0]);
    return 2;
  }
  pt_model *m = NULL;
  pt_error err = {0};
  int rc = pt_model_load_file(argv[1], NULL, &m, &err);
  CHECK(rc == PT_OK, "load %s: %s", argv[1], err.msg);
  if (rc) return 1;
  arm a = {.m = m, .d = pt_data_new(m)};
  CHECK(a.d != NULL, "pt_data_new");
  CHECK(pt_model_ndof(m) == 2, "ndof %d", pt_model_ndof(m));
  CHECK(pt_model_nbody(m) == 2, "nbody %d (tool0 vanished, base is ground)", pt_model_nbody(m));
  const char *names[2] = {"shoulder", "elbow"};
  for (int k = 0; k < 2; k++) {
    a.q[k] = pt_coord_index(m, names[k]);
    a.u[k] = pt_input_index(m, names[k]);
    CHECK(a.q[k] >= 0 && a.u[k] >= 0, "coordinate and input %s", names[k]);
  }
  CHECK_NEAR(pt_input_limit(m, a.u[0]), 100.0, 0, "shoulder effort limit");
  CHECK_NEAR(pt_input_limit(m, a.u[1]), 60.0, 0, "elbow effort limit");
  if (a.d && a.q[0] >= 0 && a.q[1] >= 0 && a.u[0] >= 0 && a.u[1] >= 0 && !nfail) {
    const double qs[3][2] = {{0, 0}, {0.7, -1.2}, {-2.1, 2.5}};
    for (int i = 0; i < 3; i++) check_gravity(&a, qs[i]);
    const double cases[3][6] = {{0.3, 0.4, 1.5, -2.0, 3.0, -1.5},
                                {-1.0, 2.0, -0.5, 0.8, 0.0, 0.0},
                                {2.5, -0.7, 4.0, 3.0, -7.0, 2.5}};
    for (int i = 0; i < 3; i++) check_accel(&a, cases[i], cases[i] + 2, cases[i] + 4);
  }
  pt_data_free(a.d);
  pt_model_free(m);
  if (nfail) fprintf(stderr, "%d check(s) failed\n", nfail);
  else printf("urdf arm2r: closed form matched\n");
  return nfail ? 1 : 0;
}
