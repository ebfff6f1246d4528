// test_urdf_inertia.c: inertias that are not physical (issue 11, item 2). By default a URDF
// link whose principal moments are negative or break A + B >= C is refused; with
// balance_inertia it is repaired to the nearest physical inertia (Frobenius norm) and listed
// in the warnings. The repair is checked against the closed form for a diagonal tensor, its
// rotation invariance, and a brute-force search: no sampled physical inertia is nearer.
#include "inertia.h"
#include "partita.h"
#include "urdf_test.h"

static double urand(unsigned *seed) {  // uniform in [-1, 1)
  *seed = *seed * 1664525u + 1013904223u;
  return (double)(*seed >> 8) / (double)(1u << 23) - 1.0;
}

static double dist(const double *a, const double *b) {  // Frobenius, [xx yy zz xy xz yz]
  double d = 0;
  for (int k = 0; k < 6; k++) d += (k < 3 ? 1 : 2) * (a[k] - b[k]) * (a[k] - b[k]);
  return sqrt(d);
}

// J = R diag(l) R^T from a quaternion.
static void rotated(double *J, const double *q, const double *l) {
  double R[9], M[9];
  quat_matrix(R, q);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++)
      M[3 * r + c] = R[3 * r] * l[0] * R[3 * c] + R[3 * r + 1] * l[1] * R[3 * c + 1] +
                     R[3 * r + 2] * l[2] * R[3 * c + 2];
  J[0] = M[0], J[1] = M[4], J[2] = M[8], J[3] = M[1], J[4] = M[2], J[5] = M[5];
}

static void check_balance(void) {
  // (1, 1, 3): the nearest point of A + B >= C is (4/3, 4/3, 8/3) (projection onto the plane).
  double J[6] = {1, 1, 3, 0, 0, 0}, lam[3];
  CHECK(pt_inertia_check(J, lam) == PT_INERTIA_TRIANGLE, "(1,1,3) is not physical");
  CHECK(pt_inertia_balance(J, 0) == 0, "balance");
  CHECK_NEAR(J[0], 4.0 / 3, 1e-14, "A");
  CHECK_NEAR(J[1], 4.0 / 3, 1e-14, "B");
  CHECK_NEAR(J[2], 8.0 / 3, 1e-14, "C");
  CHECK(pt_inertia_check(J, lam) == PT_INERTIA_OK, "repaired is physical");
  // (-1, 2, 2): the nearest is (0, 2, 2) (negative moment to zero, the triangle then holds).
  double K[6] = {-1, 2, 2, 0, 0, 0};
  CHECK(pt_inertia_check(K, lam) == PT_INERTIA_NOT_PSD, "(-1,2,2) is not PSD");
  pt_inertia_balance(K, 0);
  CHECK_NEAR(K[0], 0, 1e-14, "A");
  CHECK_NEAR(K[1], 2, 1e-14, "B");
  // the same in rotated axes: the repair turns with the tensor
  const double q[4] = {0.8, 0.1, -0.4, 0.3}, l[3] = {1, 1, 3}, want[3] = {4.0 / 3, 4.0 / 3,
                                                                           8.0 / 3};
  double Jr[6], Wr[6];
  rotated(Jr, q, l);
  rotated(Wr, q, want);
  pt_inertia_balance(Jr, 0);
  CHECK(dist(Jr, Wr) < 1e-13, "rotated repair off by %.3g", dist(Jr, Wr));
  // random tensors: the repair is physical and no sampled physical tensor is nearer
  unsigned seed = 11u;
  for (int t = 0; t < 200; t++) {
    double I0[6], R0[6];
    for (int k = 0; k < 6; k++) I0[k] = (k < 3 ? 1.0 : 0.6) * urand(&seed) + (k < 3 ? 0.5 : 0);
    memcpy(R0, I0, sizeof(I0));
    pt_inertia_balance(R0, 0);
    CHECK(pt_inertia_check(R0, lam) == PT_INERTIA_OK, "trial %d: repaired not physical", t);
    const double d0 = dist(R0, I0);
    for (int s = 0; s < 300; s++) {
      double C[6];
      for (int k = 0; k < 6; k++) C[k] = R0[k] + 0.05 * urand(&seed);
      if (pt_inertia_check(C, lam) != PT_INERTIA_OK || lam[0] < 0 || lam[0] + lam[1] < lam[2])
        continue;
      CHECK(dist(C, I0) >= d0 - 1e-12, "trial %d: a nearer physical tensor (%.6g < %.6g)", t,
            dist(C, I0), d0);
    }
  }
  // the floor makes it positive definite
  double Z[6] = {0, 0, 0, 0, 0, 0};
  pt_inertia_balance(Z, 1e-6);
  CHECK_NEAR(Z[0], 1e-6, 1e-20, "floor");
  CHECK_NEAR(Z[2], 1e-6, 1e-20, "floor");
}

#define LINK(name, in)                                                                \
  "<link name=\"" name "\"><inertial><mass value=\"2\"/><inertia " in "/></inertial></link>"
#define GOOD "ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" ixz=\"0\" iyz=\"0\""

static const char robot_xml[] =
    "<robot name=\"bad_inertias\"><link name=\"world\"/>\n"
    LINK("a", "ixx=\"0.001\" iyy=\"0.001\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"") "\n"
    LINK("b", GOOD) "\n"
    LINK("c", "ixx=\"1e-6\" iyy=\"1e-6\" izz=\"1e-6\" ixy=\"1e-6\" ixz=\"1e-6\" iyz=\"1e-6\"") "\n"
    "<joint name=\"ja\" type=\"revolute\"><parent link=\"world\"/><child link=\"a\"/>"
    "<axis xyz=\"0 0 1\"/></joint>\n"
    "<joint name=\"jb\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>"
    "<origin xyz=\"1 0 0\"/><axis xyz=\"0 0 1\"/></joint>\n"
    "<joint name=\"jc\" type=\"revolute\"><parent link=\"b\"/><child link=\"c\"/>"
    "<origin xyz=\"1 0 0\"/><axis xyz=\"0 1 0\"/></joint>\n"
    "</robot>\n";

static void check_import(void) {
  pt_model *m = NULL;
  pt_error err = {0};
  // refused by default, naming the first bad link and the option
  int rc = pt_model_load_string(robot_xml, strlen(robot_xml), 2, "b.urdf", NULL, &m, &err);
  CHECK(rc == PT_EMODEL, "default: rc %d", rc);
  CHECK(strstr(err.msg, "b.urdf:2: link \"a\": inertia is not physical") &&
            strstr(err.msg, "--balance-inertia"),
        "default message: %s", err.msg);
  // repaired with balance_inertia: links a and c listed, b not; a: (1, 1, 10) mg m^2 moves
  // by (a . l) / 3 = -8/3 along (1, 1, -1), to (11/3, 11/3, 22/3)
  pt_load_options opt = {.balance_inertia = 1};
  rc = pt_model_load_string(robot_xml, strlen(robot_xml), 2, "b.urdf", &opt, &m, &err);
  CHECK(rc == PT_OK, "balance: %s", err.msg);
  if (rc) return;
  const char *w = pt_model_warnings(m);
  printf("%s", w);
  CHECK(strstr(w, "b.urdf:2: link \"a\": inertia repaired (balance_inertia): ixx=0.001 ixy=0 "
                  "ixz=0 iyy=0.001 iyz=0 izz=0.01 -> ixx=0.00366667 ixy=0 ixz=0 iyy=0.00366667 iyz=0 "
                  "izz=0.00733333"),
        "link a's repair: %s", w);
  CHECK(strstr(w, "b.urdf:4: link \"c\": inertia repaired (balance_inertia)"), "link c: %s", w);
  CHECK(!strstr(w, "link \"b\""), "link b listed: %s", w);
  CHECK(pt_model_ndof(m) == 3, "ndof");
  pt_data *d = pt_data_new(m);
  for (int k = 0; k < 100; k++) pt_step(m, d);
  CHECK(isfinite(pt_coords(d)[0]) && pt_nstep(d) == 100, "steps");
  pt_data_free(d);
  pt_model_free(m);
}

int main(void) {
  check_balance();
  check_import();
  if (nfail) fprintf(stderr, "%d failures\n", nfail);
  else printf("urdf_inertia: all checks passed\n");
  return nfail ? 1 : 0;
}
