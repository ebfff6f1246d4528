// test_urdf_rpy.c: URDF rpy conventions. A chain whose joint origins and inertial frames all
// carry non-trivial roll-pitch-yaw must move exactly like the same robot written by hand in
// YAML (global geometry at t = 0). The YAML numbers were worked out separately, by composing
// quaternions q = qz(yaw) qy(pitch) qx(roll) link by link (with a calculator), not by the
// loader; axes there are the joint-frame axes rotated to global and normalised.
// Both models get the same inputs; the joint coordinates must agree to 1e-10 after 1 s.
#include "partita.h"
#include "urdf_test.h"

static const char urdf_text[] =
    "<robot name=\"rpy_chain\">\n"
    "  <link name=\"base\"><inertial><origin xyz=\"0.1 0 0.05\" rpy=\"0.3 0.2 0.1\"/><mass "
    "value=\"3\"/>\n"
    "    <inertia ixx=\"0.05\" iyy=\"0.06\" izz=\"0.07\" ixy=\"0.001\" ixz=\"0.002\" "
    "iyz=\"0.003\"/></inertial></link>\n"
    "  <joint name=\"j1\" type=\"revolute\"><parent link=\"base\"/><child link=\"l1\"/>\n"
    "    <origin xyz=\"0.1 -0.2 0.5\" rpy=\"0.4 -0.3 0.7\"/><axis xyz=\"0 0 1\"/>\n"
    "    <limit effort=\"50\" velocity=\"2\"/><dynamics damping=\"0.05\"/></joint>\n"
    "  <link name=\"l1\"><inertial><origin xyz=\"0.3 0.05 -0.02\" rpy=\"-0.5 0.25 1.1\"/><mass "
    "value=\"2\"/>\n"
    "    <inertia ixx=\"0.03\" iyy=\"0.05\" izz=\"0.04\" ixy=\"0.002\" ixz=\"-0.003\" "
    "iyz=\"0.001\"/></inertial></link>\n"
    "  <joint name=\"j2\" type=\"continuous\"><parent link=\"l1\"/><child link=\"l2\"/>\n"
    "    <origin xyz=\"0.6 0 0.1\" rpy=\"1.2 0.3 -0.4\"/><axis xyz=\"0.3 0.5 0.8\"/>\n"
    "    <dynamics damping=\"0.02\"/></joint>\n"
    "  <link name=\"l2\"><inertial><origin xyz=\"0.2 -0.1 0.05\" rpy=\"0.7 -0.6 0.2\"/><mass "
    "value=\"1.5\"/>\n"
    "    <inertia ixx=\"0.02\" iyy=\"0.025\" izz=\"0.015\" ixy=\"-0.001\" ixz=\"0.002\" "
    "iyz=\"0.0015\"/></inertial></link>\n"
    "  <joint name=\"j3\" type=\"prismatic\"><parent link=\"l2\"/><child link=\"l3\"/>\n"
    "    <origin xyz=\"0.4 0.1 0\" rpy=\"-0.8 0.5 0.9\"/><axis xyz=\"1 0 0\"/>\n"
    "    <limit effort=\"100\" velocity=\"1\"/><dynamics damping=\"0.5\"/></joint>\n"
    "  <link name=\"l3\"><inertial><origin xyz=\"0.05 0 0.02\" rpy=\"0.1 0.2 0.3\"/><mass "
    "value=\"0.8\"/>\n"
    "    <inertia ixx=\"0.004\" iyy=\"0.005\" izz=\"0.006\" ixy=\"0.0003\" ixz=\"0\" "
    "iyz=\"-0.0002\"/></inertial></link>\n"
    "</robot>\n";

static const char yaml_text[] =
    "model: rpy_chain_yaml\n"
    "gravity: [0, 0, -9.81]\n"
    "bodies:\n"
    "  - name: base\n"
    "    mass: 3.0\n"
    "    inertia: [0.05, 0.06, 0.07, 0.001, 0.002, 0.003]\n"
    "    position: [0.1, 0.0, 0.05]\n"
    "    orientation: [0.9833474432563555, 0.14357217502739186, 0.10602051106179562, "
    "0.03427079855048208]\n"
    "  - name: l1\n"
    "    mass: 2.0\n"
    "    inertia: [0.03, 0.05, 0.04, 0.002, -0.003, 0.001]\n"
    "    position: [0.28428164293104624, 0.02561374519412249, 0.5896588760698898]\n"
    "    orientation: [0.594927796714888, -0.08460745079396423, -0.3014612591587914, "
    "0.7402861643935479]\n"
    "  - name: l2\n"
    "    mass: 1.5\n"
    "    inertia: [0.02, 0.025, 0.015, -0.001, 0.002, 0.0015]\n"
    "    position: [0.7239762587757628, 0.17018927796680114, 0.6337616200200842]\n"
    "    orientation: [0.36352165541954995, 0.9285631229826183, -0.0674623779256987, "
    "-0.03273163977569883]\n"
    "  - name: l3\n"
    "    mass: 0.8\n"
    "    inertia: [0.004, 0.005, 0.006, 0.0003, 0.0, -0.0002]\n"
    "    position: [0.9345108225307566, 0.3149338880874918, 0.8546316847152975]\n"
    "    orientation: [0.6777926713439077, 0.28961134671460287, -0.14061995325696625, "
    "0.6610207192461148]\n"
    "joints:\n"
    "  - name: base_to_ground\n"
    "    type: fixed\n"
    "    body1: ground\n"
    "    body2: base\n"
    "    point: [0, 0, 0]\n"
    "  - name: j1\n"
    "    type: revolute\n"
    "    body1: base\n"
    "    body2: l1\n"
    "    point: [0.1, -0.2, 0.5]\n"
    "    axis: [0.0426861557290211, -0.47319456458435927, 0.8799231762812566]\n"
    "    damping: 0.05\n"
    "  - name: j2\n"
    "    type: revolute\n"
    "    body1: l1\n"
    "    body2: l2\n"
    "    point: [0.5426776055342092, 0.12194734167652799, 0.7653044416249293]\n"
    "    axis: [0.706321040957377, -0.6049178660297096, 0.36767507728828797]\n"
    "    damping: 0.02\n"
    "  - name: j3\n"
    "    type: prismatic\n"
    "    body1: l2\n"
    "    body2: l3\n"
    "    point: [0.9134213696220206, 0.29714165754821775, 0.8083859118441741]\n"
    "    axis: [0.3919320886344934, 0.6478642688796882, 0.6531930243102639]\n"
    "    damping: 0.5\n"
    "actuators:\n"
    "  - name: j1\n"
    "    type: joint_torque\n"
    "    joint: j1\n"
    "    limit: 50\n"
    "  - name: j2\n"
    "    type: joint_torque\n"
    "    joint: j2\n"
    "  - name: j3\n"
    "    type: joint_force\n"
    "    joint: j3\n"
    "    limit: 100\n";

static const char *const coord_names[3] = {"j1", "j2", "j3"};
static const double inputs[3] = {2.0, 0.5, -3.0};

static pt_model *load(const char *text, size_t len, int format, const char *source) {
  pt_model *m = NULL;
  pt_error err = {0};
  int rc = pt_model_load_string(text, len, format, source, NULL, &m, &err);
  CHECK(rc == PT_OK, "load %s: %s", source, err.msg);
  return rc ? NULL : m;
}

// Runs 1 s with constant inputs; returns the data (NULL on failure).
static pt_data *run(const pt_model *m, const char *what) {
  pt_data *d = pt_data_new(m);
  CHECK(d != NULL, "%s: pt_data_new", what);
  if (!d) return NULL;
  for (int k = 0; k < 3; k++) {
    int u = pt_input_index(m, coord_names[k]);
    CHECK(u >= 0, "%s: input %s", what, coord_names[k]);
    if (u >= 0) CHECK(pt_set_input(m, d, u, inputs[k]) == PT_OK, "%s: set input", what);
  }
  int nstep = (int)lround(1.0 / pt_model_dt(m));
  for (int i = 0; i < nstep; i++) {
    int rc = pt_step(m, d);
    if (rc) {
      CHECK(rc == PT_OK, "%s: pt_step %d failed: %d", what, i, rc);
      break;
    }
  }
  CHECK(fabs(pt_time(d) - 1.0) < 1e-9, "%s: time %.17g", what, pt_time(d));
  return d;
}

int main(void) {
  pt_model *mu = load(urdf_text, sizeof(urdf_text) - 1, 2, "rpy.urdf");
  pt_model *my = load(yaml_text, sizeof(yaml_text) - 1, 1, "rpy.yaml");
  if (mu && my) {
    CHECK(pt_model_ndof(mu) == 3 && pt_model_ndof(my) == 3, "ndof %d %d", pt_model_ndof(mu),
          pt_model_ndof(my));
    CHECK_NEAR(pt_model_dt(mu), pt_model_dt(my), 0, "same step size");
    pt_data *du = run(mu, "urdf"), *dy = run(my, "yaml");
    if (du && dy) {
      double moved = 0;
      for (int k = 0; k < 3; k++) {
        int iu = pt_coord_index(mu, coord_names[k]), iy = pt_coord_index(my, coord_names[k]);
        CHECK(iu >= 0 && iy >= 0, "coordinate %s", coord_names[k]);
        if (iu < 0 || iy < 0) continue;
        double qu = pt_coords(du)[iu], qy = pt_coords(dy)[iy];
        CHECK_NEAR(qu, qy, 1e-10, coord_names[k]);
        CHECK_NEAR(pt_coord_rates(du)[iu], pt_coord_rates(dy)[iy], 1e-10, "rate");
        printf("%s after 1 s: urdf %.15f yaml %.15f\n", coord_names[k], qu, qy);
        moved += fabs(qu);
      }
      CHECK(moved > 0.1, "the chain should have moved (sum |q| = %g)", moved);
      for (int b = 0; b < pt_model_nbody(mu); b++) {
        int by = pt_body_index(my, pt_body_name(mu, b));
        CHECK(by >= 0, "body %s in the YAML model", pt_body_name(mu, b));
        if (by < 0) continue;
        for (int k = 0; k < 3; k++)
          CHECK_NEAR(pt_body_pose(du, b)[k], pt_body_pose(dy, by)[k], 1e-10, "body position");
      }
    }
    pt_data_free(du);
    pt_data_free(dy);
  }
  pt_model_free(mu);
  pt_model_free(my);
  if (nfail) fprintf(stderr, "%d check(s) failed\n", nfail);
  else printf("urdf rpy: URDF and hand-written YAML agree\n");
  return nfail ? 1 : 0;
}
