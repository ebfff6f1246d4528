// test_urdf_models.c: the URDF files shipped in configs/models load and behave.
// For every file given: it imports, compiles, has one coordinate, input and actuator per
// movable joint named after it, with the effort limit as input limit. For panda.urdf, the
// gravity torques from the engine (tau with q'' = 0 at q' = 0) must equal those computed here
// from the published modified-DH table and the CoMs of Gaz et al. 2019, independently of the
// URDF text: tau_i = -sum_{j>=i} m_j g . (z_i x (c_j - o_i)).
#include "partita.h"
#include "urdf_test.h"

#define NJ 7

// Franka docs: a_(i-1), d_i, alpha_(i-1); Gaz et al. 2019 masses and CoMs in link frame i.
static const double dh[NJ][3] = {{0, 0.333, 0},       {0, 0, -M_PI / 2},      {0, 0.316, M_PI / 2},
                                 {0.0825, 0, M_PI / 2}, {-0.0825, 0.384, -M_PI / 2},
                                 {0, 0, M_PI / 2},      {0.088, 0, M_PI / 2}};
static const double mass[NJ] = {4.970684, 0.646926, 3.228604, 3.587895,
                                1.225946, 1.666555, 0.735522};
static const double com[NJ][3] = {
    {3.875e-03, 2.081e-03, 0},           {-3.141e-03, -2.872e-02, 3.495e-03},
    {2.7518e-02, 3.9252e-02, -6.6502e-02}, {-5.317e-02, 1.04419e-01, 2.7454e-02},
    {-1.1953e-02, 4.1065e-02, -3.8437e-02}, {6.0149e-02, -1.4117e-02, -1.0517e-02},
    {1.0517e-02, -4.252e-03, 6.1597e-02}};

// T <- T Rx(alpha) Tx(a) Rz(theta) Tz(d) (modified DH), T = {R row-major, o}.
static void dh_step(double *R, double *o, double a, double d, double alpha, double theta) {
  double ca = cos(alpha), sa = sin(alpha), ct = cos(theta), st = sin(theta);
  double A[9] = {ct, -st, 0, st * ca, ct * ca, -sa, st * sa, ct * sa, ca};
  double p[3] = {a, -sa * d, ca * d}, Rn[9];
  for (int r = 0; r < 3; r++) {
    o[r] += R[3 * r] * p[0] + R[3 * r + 1] * p[1] + R[3 * r + 2] * p[2];
    for (int c = 0; c < 3; c++)
      Rn[3 * r + c] = R[3 * r] * A[c] + R[3 * r + 1] * A[3 + c] + R[3 * r + 2] * A[6 + c];
  }
  memcpy(R, Rn, sizeof(Rn));
}

static void panda_gravity(const double *q, double *tau) {
  double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, o[3] = {0, 0, 0}, z[NJ][3], org[NJ][3], c[NJ][3];
  for (int i = 0; i < NJ; i++) {
    dh_step(R, o, dh[i][0], dh[i][1], dh[i][2], q[i]);
    for (int k = 0; k < 3; k++) {
      z[i][k] = R[3 * k + 2];
      org[i][k] = o[k];
      c[i][k] = o[k] + R[3 * k] * com[i][0] + R[3 * k + 1] * com[i][1] + R[3 * k + 2] * com[i][2];
    }
  }
  for (int i = 0; i < NJ; i++) {
    tau[i] = 0;
    for (int j = i; j < NJ; j++) {
      double r[3] = {c[j][0] - org[i][0], c[j][1] - org[i][1], c[j][2] - org[i][2]};
      double zxr_z = z[i][0] * r[1] - z[i][1] * r[0];  // (z x r) . e_z; gravity is -9.81 e_z
      tau[i] += mass[j] * 9.81 * zxr_z;
    }
  }
}

// Solves A x = b (n x n, row-major, destroyed) by Gaussian elimination with partial pivoting.
static void solve(double *A, double *b, int n) {
  for (int k = 0; k < n; k++) {
    int p = k;
    for (int i = k + 1; i < n; i++)
      if (fabs(A[i * n + k]) > fabs(A[p * n + k])) p = i;
    for (int j = 0; j < n; j++) {
      double t = A[k * n + j];
      A[k * n + j] = A[p * n + j], A[p * n + j] = t;
    }
    double t = b[k];
    b[k] = b[p], b[p] = t;
    for (int i = k + 1; i < n; i++) {
      double f = A[i * n + k] / A[k * n + k];
      for (int j = k; j < n; j++) A[i * n + j] -= f * A[k * n + j];
      b[i] -= f * b[k];
    }
  }
  for (int k = n - 1; k >= 0; k--) {
    for (int j = k + 1; j < n; j++) b[k] -= A[k * n + j] * b[j];
    b[k] /= A[k * n + k];
  }
}

// The engine's q'' at (q, q' = 0, tau) for the coordinates qi and inputs ui.
static void accel(const pt_model *m, pt_data *d, const int *qi, const int *ui, const double *q,
                  const double *tau, double *qdd) {
  pt_assign pos[NJ], vel[NJ];
  for (int k = 0; k < NJ; k++) pos[k] = (pt_assign){qi[k], q[k]}, vel[k] = (pt_assign){qi[k], 0};
  pt_error err = {0};
  CHECK(pt_set_state(m, d, pos, NJ, vel, NJ, &err) == PT_OK, "set state: %s", err.msg);
  for (int k = 0; k < NJ; k++) CHECK(pt_set_input(m, d, ui[k], tau[k]) == PT_OK, "set input");
  CHECK(pt_forward(m, d) == PT_OK, "forward");
  for (int k = 0; k < NJ; k++) qdd[k] = pt_coord_accels(d)[qi[k]];
}

static void check_panda_gravity(const pt_model *m) {
  char name[32];
  int qi[NJ], ui[NJ];
  for (int k = 0; k < NJ; k++) {
    snprintf(name, sizeof(name), "panda_joint%d", k + 1);
    qi[k] = pt_coord_index(m, name);
    ui[k] = pt_input_index(m, name);
    if (qi[k] < 0 || ui[k] < 0) return;  // reported by check_model
  }
  pt_data *d = pt_data_new(m);
  CHECK(d != NULL, "pt_data_new");
  const double qs[2][NJ] = {{0, 0, 0, 0, 0, 0, 0}, {0.3, -0.5, 0.2, -1.8, 0.4, 1.2, -0.6}};
  for (int c = 0; d && c < 2; c++) {
    double zero[NJ] = {0}, a0[NJ], B[NJ * NJ], col[NJ], tau[NJ], ref[NJ];
    accel(m, d, qi, ui, qs[c], zero, a0);
    for (int j = 0; j < NJ; j++) {  // q'' = a0 + B tau: B column j from a unit torque
      double unit[NJ] = {0};
      unit[j] = 1.0;
      accel(m, d, qi, ui, qs[c], unit, col);
      for (int i = 0; i < NJ; i++) B[i * NJ + j] = col[i] - a0[i];
    }
    for (int i = 0; i < NJ; i++) tau[i] = -a0[i];
    solve(B, tau, NJ);
    panda_gravity(qs[c], ref);
    for (int i = 0; i < NJ; i++) {
      CHECK_NEAR(tau[i], ref[i], 1e-9, "panda gravity torque");
      printf("panda q set %d joint %d: gravity torque %12.8f (DH table %12.8f)\n", c, i + 1,
             tau[i], ref[i]);
    }
  }
  pt_data_free(d);
}

static void check_model(const char *path) {
  pt_spec *s = NULL;
  pt_error err = {0};
  int rc = pt_spec_from_file(path, NULL, &s, &err);
  CHECK(rc == PT_OK, "%s: %s", path, err.msg);
  if (rc) return;
  pt_model *m = NULL;
  rc = pt_model_compile(s, &m, &err);
  CHECK(rc == PT_OK, "%s: compile: %s", path, err.msg);
  if (!rc) {
    int nmov = 0;
    for (int i = 0; i < s->njoint; i++) {
      const pt_spec_joint *j = &s->joints[i];
      if (j->type == PT_JOINT_FIXED) continue;
      nmov++;
      int u = pt_input_index(m, j->name);
      CHECK(pt_coord_index(m, j->name) >= 0 && u >= 0, "%s: coordinate and input %s", path,
            j->name);
      for (int a = 0; a < s->nactuator && u >= 0; a++)
        if (!strcmp(s->actuators[a].joint, j->name))
          CHECK_NEAR(pt_input_limit(m, u), s->actuators[a].limit, 0, "input limit");
    }
    CHECK(pt_model_ndof(m) == nmov, "%s: ndof %d, movable joints %d", path, pt_model_ndof(m),
          nmov);
    CHECK(pt_model_nactuator(m) == nmov, "%s: actuators %d", path, pt_model_nactuator(m));
    printf("%s: %s, %d bodies, %d dof\n", path, pt_model_name(m), pt_model_nbody(m),
           pt_model_ndof(m));
    if (!strcmp(pt_model_name(m), "panda")) {
      CHECK(nmov == NJ && pt_model_nbody(m) == NJ, "panda: 7 joints, 7 bodies");
      check_panda_gravity(m);
    }
    pt_model_free(m);
  }
  pt_spec_free(s);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) check_model(argv[i]);
  CHECK(argc > 1, "no model files given");
  if (nfail) fprintf(stderr, "%d check(s) failed\n", nfail);
  else printf("urdf models: %d files checked\n", argc - 1);
  return nfail ? 1 : 0;
}
