// test_urdf_merge.c: fixed-joint merging, massless links, the root and the floating base, on
// the pt_spec from pt_spec_from_urdf, against an independent computation: frames composed
// with quaternions, inertias combined through second-moment matrices (not the parallel-axis
// form the loader uses).
#include "partita.h"
#include "urdf_test.h"

// torso + arm_mount + sensor (+ the massless tool0) are joined by fixed joints: one body.
static const char robot_xml[] =
    "<?xml version=\"1.0\"?>\n"
    "<robot name=\"merge_test\">\n"
    "  <link name=\"base\"/>\n"
    "  <joint name=\"j0\" type=\"revolute\">\n"
    "    <parent link=\"base\"/><child link=\"torso\"/>\n"
    "    <origin xyz=\"0 0 0.3\" rpy=\"0.1 0.2 0.3\"/><axis xyz=\"0 0 1\"/>\n"
    "    <limit effort=\"40\" velocity=\"1\"/>\n"
    "  </joint>\n"
    "  <link name=\"torso\"><inertial><origin xyz=\"0.02 -0.01 0.1\" rpy=\"0.3 -0.2 0.5\"/>\n"
    "    <mass value=\"5\"/>\n"
    "    <inertia ixx=\"0.1\" iyy=\"0.12\" izz=\"0.08\" ixy=\"0.01\" ixz=\"-0.005\" "
    "iyz=\"0.002\"/>\n"
    "  </inertial></link>\n"
    "  <joint name=\"f1\" type=\"fixed\">\n"
    "    <parent link=\"torso\"/><child link=\"arm_mount\"/>\n"
    "    <origin xyz=\"0.1 0.2 0.3\" rpy=\"-0.7 0.4 1.3\"/>\n"
    "  </joint>\n"
    "  <link name=\"arm_mount\"><inertial><origin xyz=\"0.05 0 0.02\" rpy=\"1.0 0.5 -0.3\"/>\n"
    "    <mass value=\"1.2\"/>\n"
    "    <inertia ixx=\"0.01\" iyy=\"0.02\" izz=\"0.015\" ixy=\"0.001\" ixz=\"0\" "
    "iyz=\"-0.002\"/>\n"
    "  </inertial></link>\n"
    "  <joint name=\"f2\" type=\"fixed\">\n"
    "    <parent link=\"arm_mount\"/><child link=\"sensor\"/>\n"
    "    <origin xyz=\"0 0.05 0.1\" rpy=\"0 0 0.9\"/>\n"
    "  </joint>\n"
    "  <link name=\"sensor\"><inertial><origin xyz=\"0.01 0.01 0.01\" rpy=\"0.2 0.2 0.2\"/>\n"
    "    <mass value=\"0.3\"/>\n"
    "    <inertia ixx=\"0.0005\" iyy=\"0.0006\" izz=\"0.0007\" ixy=\"0\" ixz=\"0\" "
    "iyz=\"0.0001\"/>\n"
    "  </inertial></link>\n"
    "  <joint name=\"f3\" type=\"fixed\"><parent link=\"torso\"/><child link=\"tool0\"/>\n"
    "    <origin xyz=\"0 0 0.5\"/></joint>\n"
    "  <link name=\"tool0\"/>\n"
    "  <joint name=\"j4\" type=\"prismatic\">\n"
    "    <parent link=\"sensor\"/><child link=\"finger\"/>\n"
    "    <origin xyz=\"0.03 0 0.04\" rpy=\"0.5 -0.4 0.3\"/><axis xyz=\"0 2 0\"/>\n"
    "    <dynamics damping=\"0.7\"/>\n"
    "  </joint>\n"
    "  <link name=\"finger\"><inertial><origin xyz=\"0 0.01 0.02\"/><mass value=\"0.1\"/>\n"
    "    <inertia ixx=\"1e-4\" iyy=\"2e-4\" izz=\"1.5e-4\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>\n"
    "  </inertial></link>\n"
    "</robot>\n";

typedef struct {
  double xyz[3], rpy[3];
} origin;

typedef struct {
  double m;
  origin o;
  double I[6];  // ixx iyy izz ixy ixz iyz
} inertial;

static const origin O_j0 = {{0, 0, 0.3}, {0.1, 0.2, 0.3}};
static const origin O_f1 = {{0.1, 0.2, 0.3}, {-0.7, 0.4, 1.3}};
static const origin O_f2 = {{0, 0.05, 0.1}, {0, 0, 0.9}};
static const origin O_j4 = {{0.03, 0, 0.04}, {0.5, -0.4, 0.3}};
static const inertial In_torso = {5, {{0.02, -0.01, 0.1}, {0.3, -0.2, 0.5}},
                                  {0.1, 0.12, 0.08, 0.01, -0.005, 0.002}};
static const inertial In_mount = {1.2, {{0.05, 0, 0.02}, {1.0, 0.5, -0.3}},
                                  {0.01, 0.02, 0.015, 0.001, 0, -0.002}};
static const inertial In_sensor = {0.3, {{0.01, 0.01, 0.01}, {0.2, 0.2, 0.2}},
                                   {0.0005, 0.0006, 0.0007, 0, 0, 0.0001}};

static const pt_spec_body *find_body(const pt_spec *s, const char *name) {
  for (int i = 0; i < s->nbody; i++)
    if (strcmp(s->bodies[i].name, name) == 0) return &s->bodies[i];
  return NULL;
}

static const pt_spec_joint *find_joint(const pt_spec *s, const char *name) {
  for (int i = 0; i < s->njoint; i++)
    if (strcmp(s->joints[i].name, name) == 0) return &s->joints[i];
  return NULL;
}

// Adds a link's mass, first moment m c and second moment S = sum m r r^T (about the global
// origin) given its inertial frame f: S_cm = tr(I)/2 E - I in the inertial axes.
static void accumulate(const inertial *in, tframe link, double *m, double *mc, double *S) {
  tframe f = tframe_mul(link, in->o.xyz, in->o.rpy);
  const double *I = in->I;
  double Icm[9] = {I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2]};
  double tr = 0.5 * (I[0] + I[1] + I[2]);
  for (int c = 0; c < 3; c++) {  // rotate each column of S_cm: R S R^T = (R (R S)^T)^T
    double col[3] = {(c == 0) * tr - Icm[c], (c == 1) * tr - Icm[3 + c],
                     (c == 2) * tr - Icm[6 + c]}, rc[3];
    quat_rotate(rc, f.q, col);
    Icm[c] = rc[0], Icm[3 + c] = rc[1], Icm[6 + c] = rc[2];  // now R S_cm, column c
  }
  for (int r = 0; r < 3; r++) {  // rows of (R S_cm) rotated: R (R S_cm)^T = R S_cm R^T
    double row[3] = {Icm[3 * r], Icm[3 * r + 1], Icm[3 * r + 2]}, rr[3];
    quat_rotate(rr, f.q, row);
    for (int c = 0; c < 3; c++) S[3 * r + c] += rr[c] + in->m * f.p[r] * f.p[c];
  }
  *m += in->m;
  for (int k = 0; k < 3; k++) mc[k] += in->m * f.p[k];
}

static void test_merged_body(const pt_spec *s) {
  tframe ground = {{0, 0, 0}, {1, 0, 0, 0}};
  tframe torso = tframe_mul(ground, O_j0.xyz, O_j0.rpy);
  tframe mount = tframe_mul(torso, O_f1.xyz, O_f1.rpy);
  tframe sensor = tframe_mul(mount, O_f2.xyz, O_f2.rpy);
  double m = 0, mc[3] = {0}, S[9] = {0};
  accumulate(&In_torso, torso, &m, mc, S);
  accumulate(&In_mount, mount, &m, mc, S);
  accumulate(&In_sensor, sensor, &m, mc, S);
  double C[3] = {mc[0] / m, mc[1] / m, mc[2] / m};
  // About the CoM: S_c = S - m C C^T, and I = tr(S_c) E - S_c.
  double Sc[9], Iw[9];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) Sc[3 * r + c] = S[3 * r + c] - m * C[r] * C[c];
  double tr = Sc[0] + Sc[4] + Sc[8];
  for (int k = 0; k < 9; k++) Iw[k] = (k % 4 == 0 ? tr : 0.0) - Sc[k];

  const pt_spec_body *b = find_body(s, "torso");
  CHECK(b != NULL, "no body \"torso\"");
  if (!b) return;
  CHECK_NEAR(b->mass, 6.5, 1e-12, "merged mass");
  for (int k = 0; k < 3; k++) CHECK_NEAR(b->position[k], C[k], 1e-12, "merged CoM");
  // The spec inertia is in body axes: bring it to global axes with the body orientation.
  double R[9], Ib[9] = {b->inertia[0], b->inertia[3], b->inertia[4], b->inertia[3],
                        b->inertia[1], b->inertia[5], b->inertia[4], b->inertia[5],
                        b->inertia[2]};
  quat_matrix(R, b->quat);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      double v = 0;
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) v += R[3 * r + i] * Ib[3 * i + j] * R[3 * c + j];
      CHECK_NEAR(v, Iw[3 * r + c], 1e-12, "merged inertia about the CoM (global axes)");
    }

  // The prismatic joint j4 hangs from sensor, i.e. from body torso; its frame is the finger.
  tframe finger = tframe_mul(sensor, O_j4.xyz, O_j4.rpy);
  const pt_spec_joint *j = find_joint(s, "j4");
  CHECK(j != NULL, "no joint j4");
  if (!j) return;
  double ax[3], y[3] = {0, 1, 0};
  quat_rotate(ax, finger.q, y);
  CHECK(j->type == PT_JOINT_PRISMATIC, "j4 type %d", (int)j->type);
  CHECK(strcmp(j->body1, "torso") == 0 && strcmp(j->body2, "finger") == 0, "j4 bodies %s %s",
        j->body1, j->body2);
  for (int k = 0; k < 3; k++) {
    CHECK_NEAR(j->point[k], finger.p[k], 1e-12, "j4 point");
    CHECK_NEAR(j->axis[k], ax[k], 1e-12, "j4 axis (normalised)");
  }
  CHECK_NEAR(j->damping, 0.7, 0, "j4 damping");
  const pt_spec_body *f = find_body(s, "finger");
  CHECK(f != NULL, "no body finger");
  if (f) {
    double c[3], off[3] = {0, 0.01, 0.02};
    quat_rotate(c, finger.q, off);
    for (int k = 0; k < 3; k++) CHECK_NEAR(f->position[k], finger.p[k] + c[k], 1e-12, "finger CoM");
    double dq = 0;  // same rotation up to sign
    for (int k = 0; k < 4; k++) dq += f->quat[k] * finger.q[k];
    CHECK_NEAR(fabs(dq), 1.0, 1e-12, "finger orientation");
    CHECK_NEAR(f->inertia[1], 2e-4, 0, "finger inertia copied");
  }
}

// Which bodies, joints and actuators exist: massless root = ground, merged and vanished links.
static void test_structure(const pt_spec *s) {
  CHECK(strcmp(s->model, "merge_test") == 0, "model name %s", s->model);
  CHECK(s->nbody == 2, "nbody %d (torso, finger)", s->nbody);
  CHECK(s->njoint == 2, "njoint %d (j0, j4; no weld for a massless root)", s->njoint);
  CHECK(s->nactuator == 2, "nactuator %d", s->nactuator);
  CHECK_NEAR(s->gravity[2], -9.81, 0, "gravity");
  const pt_spec_joint *j0 = find_joint(s, "j0");
  CHECK(j0 && strcmp(j0->body1, "ground") == 0, "j0 attaches torso to ground directly");
  for (int i = 0; i < s->nactuator; i++) {
    const pt_spec_actuator *a = &s->actuators[i];
    CHECK(strcmp(a->name, a->joint) == 0, "actuator %s named after its joint", a->name);
    int torque = strcmp(a->joint, "j0") == 0;
    CHECK(a->type == (torque ? PT_ACT_JOINT_TORQUE : PT_ACT_JOINT_FORCE), "actuator %s type",
          a->name);
    CHECK_NEAR(a->limit, torque ? 40.0 : 0.0, 0, "actuator limit (effort; none = 0)");
  }
  for (int i = 0; i < s->nbody; i++)
    CHECK(strcmp(s->bodies[i].name, "tool0") && strcmp(s->bodies[i].name, "sensor"),
          "link %s should not be a body", s->bodies[i].name);
}

// A massive root is welded to ground, or left free with floating_base.
static void test_root(void) {
  static const char xml[] =
      "<robot name=\"r\">\n"
      "  <link name=\"chassis\"><inertial><origin xyz=\"0.1 0 0\"/><mass value=\"10\"/>\n"
      "    <inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n"
      "  </link>\n"
      "  <joint name=\"hinge\" type=\"continuous\"><parent link=\"chassis\"/>\n"
      "    <child link=\"flap\"/><origin xyz=\"1 0 0\"/><axis xyz=\"0 1 0\"/></joint>\n"
      "  <link name=\"flap\"><inertial><mass value=\"1\"/>\n"
      "    <inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" ixz=\"0\" "
      "iyz=\"0\"/></inertial>\n"
      "  </link>\n"
      "  <joint name=\"drop\" type=\"floating\"><parent link=\"chassis\"/>\n"
      "    <child link=\"ball\"/><origin xyz=\"0 0 2\"/></joint>\n"
      "  <link name=\"ball\"><inertial><mass value=\"1\"/>\n"
      "    <inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" ixz=\"0\" "
      "iyz=\"0\"/></inertial>\n"
      "  </link>\n"
      "</robot>\n";
  for (int floating = 0; floating <= 1; floating++) {
    pt_load_options opt = {.floating_base = floating};
    pt_spec *s = NULL;
    pt_error err = {0};
    int rc = pt_spec_from_urdf(xml, sizeof(xml) - 1, "root.urdf", &opt, &s, &err);
    CHECK(rc == PT_OK, "root test: %s", err.msg);
    if (rc) continue;
    CHECK(s->nbody == 3, "chassis, flap and the free ball: %d bodies", s->nbody);
    const pt_spec_joint *w = find_joint(s, "chassis_to_ground");
    CHECK((w != NULL) == !floating, "weld joint present iff not floating");
    if (w)
      CHECK(w->type == PT_JOINT_FIXED && !strcmp(w->body1, "ground") &&
                !strcmp(w->body2, "chassis"), "weld joint shape");
    CHECK(s->njoint == 2 - floating, "joints: %d", s->njoint);
    CHECK(s->nactuator == 1, "one actuator (hinge): %d", s->nactuator);
    const pt_spec_joint *h = find_joint(s, "hinge");
    CHECK(h && h->type == PT_JOINT_REVOLUTE, "continuous is revolute");
    const pt_spec_body *ball = find_body(s, "ball");
    CHECK(ball && ball->position[2] == 2.0, "floating child placed at its origin");
    pt_spec_free(s);
  }
  // A massless root cannot float.
  static const char massless[] =
      "<robot name=\"r\"><link name=\"world\"/><joint name=\"j\" type=\"revolute\">\n"
      "<parent link=\"world\"/><child link=\"a\"/></joint><link name=\"a\"><inertial>\n"
      "<mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>\n"
      "</inertial></link></robot>";
  pt_load_options opt = {.floating_base = 1};
  pt_spec *s = NULL;
  pt_error err = {0};
  int rc = pt_spec_from_urdf(massless, sizeof(massless) - 1, NULL, &opt, &s, &err);
  CHECK(rc != PT_OK && s == NULL, "massless floating root refused");
  CHECK(strstr(err.msg, "<string>:1: link \"world\": root link has no mass") != NULL, "msg: %s",
        err.msg);
}

int main(void) {
  pt_spec *s = NULL;
  pt_error err = {0};
  int rc = pt_spec_from_urdf(robot_xml, sizeof(robot_xml) - 1, "merge.urdf", NULL, &s, &err);
  CHECK(rc == PT_OK, "load: %s", err.msg);
  if (s) {
    test_structure(s);
    test_merged_body(s);
    pt_spec_free(s);
  }
  test_root();
  if (nfail) fprintf(stderr, "%d check(s) failed\n", nfail);
  else printf("urdf merge: all checks passed\n");
  return nfail ? 1 : 0;
}
