// test_coupler.c: couplers between joint coordinates (issue 11, item 3; src/core/coupler.c).
// A two-finger gripper (two prismatic fingers sliding apart, the right one following the
// left) opens symmetrically under one input, with the closed-form acceleration
// F / (m_l + mult^2 m_f) and the coupler's effort mult m_f F / (m_l + mult^2 m_f) (the joint
// force that keeps the follower on it); a follower that starts off its coupler is put on it
// at load with a warning; two coupled pendulums keep their energy (the coupler does no work)
// and stay coupled over 5 s with RK4, ABM4 and Euler; a leader stopped by its limit takes
// its follower along; the same gripper from URDF <mimic>; the Panda with hand (corpus) has
// 8 degrees of freedom and its fingers move together; every refusal with its own message.
#include "check.h"

static pt_model *load_text(const char *text, int format, pt_error *err) {
  pt_model *m = NULL;
  if (pt_model_load_string(text, strlen(text), format, format == 2 ? "test.urdf" : "test.yaml",
                           NULL, &m, err))
    return NULL;
  return m;
}

// Left finger (leader, 0.3 kg) slides along +y, right finger (follower, 0.2 kg) along -y;
// gravity along -z is taken by the joints' rows.
static pt_model *gripper(double mult, double offset, const char *extra) {
  char text[4096];
  snprintf(text, sizeof(text),
           "model: gripper\n"
           "gravity: [0, 0, -9.81]\n"
           "bodies:\n"
           "  - {name: left, mass: 0.3, inertia: [1e-4, 1e-4, 1e-4], position: [0, 0.02, 0]}\n"
           "  - {name: right, mass: 0.2, inertia: [1e-4, 1e-4, 1e-4], position: [0, -0.02, 0]}\n"
           "joints:\n"
           "  - {name: slide_l, type: prismatic, body1: ground, body2: left, point: [0, 0.02, 0],"
           " axis: [0, 1, 0]%s}\n"
           "  - {name: slide_r, type: prismatic, body1: ground, body2: right,"
           " point: [0, -0.02, 0], axis: [0, -1, 0]}\n"
           "actuators:\n"
           "  - {name: drive, type: joint_force, joint: slide_l}\n"
           "couplers:\n"
           "  - {name: fingers, follower: slide_r, leader: slide_l, multiplier: %.17g,"
           " offset: %.17g}\n",
           extra, mult, offset);
  pt_error err = {0};
  pt_model *m = load_text(text, 1, &err);
  if (!m) printf("FAIL load: %s\n", err.msg), exit(1);
  return m;
}

static void gripper_opens(double mult, double offset, pt_integrator integ) {
  pt_model *m = gripper(mult, offset, "");
  CHECK(pt_model_ndof(m) == 1, "gripper dof %d", pt_model_ndof(m));
  CHECK(pt_model_ncoupler(m) == 1, "couplers %d", pt_model_ncoupler(m));
  int fol = -1, lead = -1;
  double mu = 0, off = 0;
  CHECK(pt_coupler_info(m, 0, &fol, &lead, &mu, &off) == PT_OK && fol == 1 && lead == 0 &&
            mu == mult && off == offset, "coupler info %d %d %g %g", fol, lead, mu, off);
  CHECK(strcmp(pt_coupler_name(m, 0), "fingers") == 0, "name %s", pt_coupler_name(m, 0));
  if (offset != 0)
    CHECK(strstr(pt_model_warnings(m), "coupler fingers: follower slide_r starts at 0") != NULL,
          "no warning that the follower was moved: %s", pt_model_warnings(m));
  pt_data *d = pt_data_new(m);
  CHECK(d != NULL, "no data");
  if (!d) return;
  pt_set_integrator(d, integ);
  const int cl = pt_coord_index(m, "slide_l"), cr = pt_coord_index(m, "slide_r");
  CHECK_CLOSE(pt_coords(d)[cr], offset, 1e-14, "follower at its offset at load");
  const double F = 1.5, ml = 0.3, mf = 0.2;
  const double acc = F / (ml + mult * mult * mf), lam = mult * mf * acc;
  pt_set_input(m, d, pt_input_index(m, "drive"), F);
  double drift = 0, fmax_err = 0;
  const int nstep = 500;
  for (int i = 0; i < nstep; i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "step %d: %s", i, pt_strerror(rc));
    if (rc) break;
    const double *q = pt_coords(d), *qd = pt_coord_rates(d);
    drift = fmax(drift, fabs(q[cr] - mult * q[cl] - offset));
    drift = fmax(drift, fabs(qd[cr] - mult * qd[cl]));
    fmax_err = fmax(fmax_err, fabs(pt_coupler_force(d, 0) - lam));
  }
  const double t = pt_time(d);
  CHECK(drift <= 1e-12, "follower off its coupler by %.3g", drift);
  CHECK(fmax_err <= 1e-10 * fabs(lam), "coupler effort %.17g vs the hand computation %.17g",
        pt_coupler_force(d, 0), lam);
  // constant acceleration: every integrator here is exact up to roundoff but Euler
  const double tol = integ == PT_INT_EULER ? 1e-3 : 1e-10;
  CHECK_CLOSE(pt_coord_accels(d)[cl], acc, 1e-10, "leader acceleration F / (ml + mult^2 mf)");
  CHECK_CLOSE(pt_coords(d)[cl], 0.5 * acc * t * t, tol, "leader position");
  CHECK_CLOSE(pt_coords(d)[cr], mult * 0.5 * acc * t * t + offset, tol, "follower position");
  if (mult == 1 && offset == 0) {  // symmetric: the fingers' y are opposite, x and z equal
    const double *pl = pt_body_pose(d, 0), *pr = pt_body_pose(d, 1);
    CHECK(fabs(pl[1] + pr[1]) <= 1e-12 && fabs(pl[0] - pr[0]) <= 1e-12 &&
              fabs(pl[2] - pr[2]) <= 1e-12,
          "not symmetric: left (%g %g %g) right (%g %g %g)", pl[0], pl[1], pl[2], pr[0], pr[1],
          pr[2]);
    CHECK(pl[1] > 0.02 + 1e-3, "the gripper did not open: left at y %g", pl[1]);
  }
  printf("gripper mult %g offset %g integrator %d: after %.3f s leader %.9g m (closed form "
         "%.9g), coupler effort %.12g N (hand %.12g), max drift %.2g\n",
         mult, offset, (int)integ, t, pt_coords(d)[cl], 0.5 * acc * t * t,
         pt_coupler_force(d, 0), lam, drift);
  // the Cartesian partitions do not hold couplers: refused
  CHECK(pt_set_partition_mode(d, PT_MODE_LU) == PT_EPRECOND, "LU mode accepted");
  pt_data_free(d);
  pt_model_free(m);
}

// Two rods on parallel hinges, the second (2 kg, 0.6 m) following the first (1 kg, 1 m) with
// multiplier 0.5: kinetic plus potential energy stays constant.
static void pendulums(pt_integrator integ, double tol) {
  static const char text[] =
      "model: pair\n"
      "gravity: [0, 0, -9.81]\n"
      "bodies:\n"
      "  - {name: a, mass: 1, inertia: [0.0833333, 0.0833333, 0.001], position: [0, 0, -0.5]}\n"
      "  - {name: b, mass: 2, inertia: [0.06, 0.06, 0.002], position: [0.3, 0, -0.3],"
      " orientation: [1, 0, 0, 0]}\n"
      "joints:\n"
      "  - {name: ha, type: revolute, body1: ground, body2: a, point: [0, 0, 0], axis: [0, 1, 0]}\n"
      "  - {name: hb, type: revolute, body1: ground, body2: b, point: [0.3, 0, 0],"
      " axis: [0, 1, 0]}\n"
      "actuators:\n  - {name: tau, type: joint_torque, joint: ha}\n"
      "couplers:\n"
      "  - {name: link, follower: hb, leader: ha, multiplier: 0.5}\n";
  pt_error err = {0};
  pt_model *m = load_text(text, 1, &err);
  CHECK(m != NULL, "load: %s", err.msg);
  if (!m) return;
  pt_data *d = pt_data_new(m);
  pt_set_integrator(d, integ);
  pt_assign p = {pt_coord_index(m, "ha"), 1.2};
  CHECK(pt_set_state(m, d, &p, 1, NULL, 0, &err) == PT_OK, "set state: %s", err.msg);
  CHECK_CLOSE(pt_coords(d)[1], 0.6, 1e-12, "follower set from its leader");
  const double e0 = pt_energy_kinetic(d) + pt_energy_potential(d);
  double de = 0, drift = 0, fmaxv = 0;
  for (int i = 0; i < 5000; i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "step %d: %s", i, pt_strerror(rc));
    if (rc) break;
    de = fmax(de, fabs(pt_energy_kinetic(d) + pt_energy_potential(d) - e0));
    drift = fmax(drift, fabs(pt_coords(d)[1] - 0.5 * pt_coords(d)[0]));
    fmaxv = fmax(fmaxv, fabs(pt_coupler_force(d, 0)));
  }
  CHECK(de <= tol, "energy changed by %.3g J", de);
  CHECK(drift <= 1e-11, "follower off by %.3g rad", drift);
  CHECK(fmaxv > 0.1, "the coupler never pulled (max %.3g N m)", fmaxv);
  printf("pendulum pair integrator %d: 5 s, energy error %.3g J, drift %.2g rad, max coupler "
         "torque %.4g N m\n", (int)integ, de, drift, fmaxv);
  pt_data_free(d);
  pt_model_free(m);
}

// The leader limited to [0, 0.01] m, driven outward: it stops at 0.01 and the follower
// (multiplier 2) at 0.02; the follower's own limits are not enforced (a warning says so).
static void leader_limit(void) {
  pt_model *m = gripper(2, 0, ", limits: [-0.01, 0.01]");
  pt_data *d = pt_data_new(m);
  pt_set_input(m, d, 0, 3.0);
  double over = 0, drift = 0;
  for (int i = 0; i < 400; i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "step %d: %s", i, pt_strerror(rc));
    if (rc) break;
    over = fmax(over, pt_coords(d)[0] - 0.01);
    drift = fmax(drift, fabs(pt_coords(d)[1] - 2 * pt_coords(d)[0]));
  }
  CHECK(over <= 1e-9, "leader beyond its limit by %.3g", over);
  CHECK(drift <= 1e-12, "follower off its coupler by %.3g", drift);
  CHECK_CLOSE(pt_coords(d)[0], 0.01, 1e-9, "leader on its limit");
  CHECK(pt_joint_limit_state(d, 0, NULL, NULL) == 1, "leader not held at its upper limit");
  CHECK(fabs(pt_coord_rates(d)[1]) <= 1e-9, "follower still moving at %.3g m/s",
        pt_coord_rates(d)[1]);
  // held: the coupler's effort is what keeps the follower at rest (0)
  CHECK(fabs(pt_coupler_force(d, 0)) <= 1e-9, "coupler effort at rest %.3g",
        pt_coupler_force(d, 0));
  printf("leader limit: leader %.12g m, follower %.12g m, overshoot %.2g\n", pt_coords(d)[0],
         pt_coords(d)[1], over);
  pt_data_free(d);
  pt_model_free(m);
}

static const char urdf_gripper[] =
    "<robot name=\"g\">\n"
    "  <link name=\"base\"/>\n"
    "  <link name=\"fl\"><inertial><mass value=\"0.3\"/>"
    "<inertia ixx=\"1e-4\" iyy=\"1e-4\" izz=\"1e-4\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
    "  <link name=\"fr\"><inertial><mass value=\"0.2\"/>"
    "<inertia ixx=\"1e-4\" iyy=\"1e-4\" izz=\"1e-4\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
    "  <joint name=\"j1\" type=\"prismatic\"><parent link=\"base\"/><child link=\"fl\"/>"
    "<origin xyz=\"0 0.02 0\"/><axis xyz=\"0 1 0\"/><limit effort=\"10\" lower=\"-1\" upper=\"1\"/>"
    "</joint>\n"
    "  <joint name=\"j2\" type=\"prismatic\"><parent link=\"base\"/><child link=\"fr\"/>"
    "<origin xyz=\"0 -0.02 0\"/><axis xyz=\"0 -1 0\"/><limit effort=\"10\" lower=\"-1\" upper=\"1\"/>"
    "%s</joint>\n"
    "</robot>\n";

static pt_model *urdf_with(const char *mimic, pt_error *err) {
  char text[4096];
  snprintf(text, sizeof(text), urdf_gripper, mimic);
  return load_text(text, 2, err);
}

static void urdf_mimic(void) {
  pt_error err = {0};
  pt_model *m = urdf_with("<mimic joint=\"j1\"/>", &err);
  CHECK(m != NULL, "urdf: %s", err.msg);
  if (!m) return;
  CHECK(pt_model_ndof(m) == 1, "urdf dof %d", pt_model_ndof(m));
  CHECK(strstr(pt_model_warnings(m), "mimic") == NULL, "a warning about mimic remains: %s",
        pt_model_warnings(m));
  pt_data *d = pt_data_new(m);
  pt_set_input(m, d, pt_input_index(m, "j1"), 1.5);
  for (int i = 0; i < 300; i++) pt_step(m, d);
  const double t = pt_time(d), acc = 1.5 / 0.5;
  CHECK_CLOSE(pt_coords(d)[0], 0.5 * acc * t * t, 1e-10, "urdf leader");
  CHECK_CLOSE(pt_coords(d)[1], 0.5 * acc * t * t, 1e-10, "urdf follower");
  CHECK_CLOSE(pt_coupler_force(d, 0), 0.2 * acc, 1e-10, "urdf coupler effort");
  pt_data_free(d);
  pt_model_free(m);
  // an input on the follower moves both: the coupler passes it to the leader
  m = urdf_with("<mimic joint=\"j1\" multiplier=\"-1\" offset=\"0.01\"/>", &err);
  CHECK(m != NULL, "urdf: %s", err.msg);
  if (!m) return;
  d = pt_data_new(m);
  CHECK_CLOSE(pt_coords(d)[1], 0.01, 1e-14, "urdf follower at its offset");
  pt_set_input(m, d, pt_input_index(m, "j2"), 1.0);
  for (int i = 0; i < 300; i++) pt_step(m, d);
  CHECK_CLOSE(pt_coords(d)[0], -0.5 * (1.0 / 0.5) * pt_time(d) * pt_time(d), 1e-10,
              "urdf leader driven through the follower");
  CHECK_CLOSE(pt_coords(d)[1], -pt_coords(d)[0] + 0.01, 1e-12, "urdf follower, multiplier -1");
  pt_data_free(d);
  pt_model_free(m);
}

static void inverse_roundtrip(pt_model *m, pt_data *d, const char *what);

// The Panda with hand: 8 degrees of freedom; a force on finger 1 opens both fingers together.
static void panda(const char *dir) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/ex_panda_panda.urdf", dir);
  FILE *f = fopen(path, "r");
  if (!f) {
    printf("panda: skipped (no %s)\n", path);
    return;
  }
  fclose(f);
  pt_model *m = NULL;
  pt_error err = {0};
  CHECK(pt_model_load_file(path, NULL, &m, &err) == PT_OK, "panda: %s", err.msg);
  if (!m) return;
  CHECK(pt_model_ndof(m) == 8, "panda dof %d", pt_model_ndof(m));
  CHECK(pt_model_ncoupler(m) == 1, "panda couplers %d", pt_model_ncoupler(m));
  pt_data *d = pt_data_new(m);
  const char *names[16];
  CHECK(pt_independent(m, d, names, 16) == 8, "panda independent %d",
        pt_independent(m, d, names, 16));
  const int c1 = pt_coord_index(m, "panda_finger_joint1"), c2 = pt_coord_index(m, "panda_finger_joint2");
  pt_set_input(m, d, pt_input_index(m, "panda_finger_joint1"), 5.0);
  double drift = 0;
  for (int i = 0; i < 200; i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "panda step %d: %s", i, pt_strerror(rc));
    if (rc) break;
    drift = fmax(drift, fabs(pt_coords(d)[c1] - pt_coords(d)[c2]));
  }
  CHECK(pt_coords(d)[c1] > 1e-3, "panda fingers did not open: %g", pt_coords(d)[c1]);
  CHECK(drift <= 1e-12, "panda fingers apart by %.3g", drift);
  // the torque request missing the leader is refused
  pt_inverse_result *res = pt_inverse_result_new(m, 8);
  pt_assign one = {0, 1.0};
  CHECK(pt_inverse_request(m, d, &one, 1, res, &err) == PT_EINVAL &&
            strstr(err.msg, "leader \"panda_finger_joint1\" of coupler \"panda_finger_joint2\" "
                            "is not requested"),
        "panda missing leader: %s", err.msg);
  printf("refused: %s\n", err.msg);
  pt_inverse_result_free(res);
  pt_assign mid = {pt_coord_index(m, "panda_joint4"), -1.5};
  pt_set_state(m, d, &mid, 1, NULL, 0, &err);
  inverse_roundtrip(m, d, "panda");
  printf("panda: 8 dof, after %.2f s finger1 %.9g m finger2 %.9g m, coupler %.6g N\n",
         pt_time(d), pt_coords(d)[c1], pt_coords(d)[c2], pt_coupler_force(d, 0));
  pt_data_free(d);
  pt_model_free(m);
}

// Inverse dynamics (inverse.c) with couplers: a request names the leaders; on the gripper the
// leader's effort is (m_l + mult^2 m_f) a and the coupler's mult m_f a, by the recursive pass
// and by the Schur complement; on the Panda, the efforts of a request put back as inputs give
// the requested accelerations in the forward dynamics (ABA with the coupler held).
static void inverse_gripper(double mult, int schur) {
  pt_model *m = gripper(mult, 0.005, "");
  pt_data *d = pt_data_new(m);
  pt_inverse_result *res = pt_inverse_result_new(m, 2);
  res->schur_only = schur;
  const double a = 2.5, ml = 0.3, mf = 0.2;
  pt_set_input(m, d, 0, 0.7);  // the current input does not matter: the effort is the total
  pt_assign req = {pt_coord_index(m, "slide_l"), a};
  pt_error err = {0};
  int rc = pt_inverse_request(m, d, &req, 1, res, &err);
  CHECK(rc == PT_OK, "inverse: %s", err.msg);
  if (!rc) {
    CHECK(res->method == (schur ? PT_INVERSE_SCHUR : PT_INVERSE_TREE), "method %d", res->method);
    CHECK(res->nreq == 1, "nreq %d", res->nreq);
    CHECK_CLOSE(res->req_effort[0], (ml + mult * mult * mf) * a, 1e-12, "leader effort");
    CHECK_CLOSE(res->coupler_effort[0], mult * mf * a, 1e-12, "coupler effort");
    CHECK_CLOSE(res->coord_acc[1], mult * a, 1e-12, "follower acceleration");
    printf("inverse gripper mult %g (%s): leader %.15g N (hand %.15g), coupler %.15g N (hand "
           "%.15g)\n", mult, schur ? "schur" : "tree", res->req_effort[0],
           (ml + mult * mult * mf) * a, res->coupler_effort[0], mult * mf * a);
  }
  pt_assign bad = {pt_coord_index(m, "slide_r"), a};
  rc = pt_inverse_request(m, d, &bad, 1, res, &err);
  CHECK(rc == PT_EINVAL && strstr(err.msg, "torque request: \"slide_r\" follows coupler "
                                           "\"fingers\" (slide_r = "),
        "follower requested: %s", err.msg);
  printf("refused: %s\n", err.msg);
  pt_inverse_result_free(res);
  pt_data_free(d);
  pt_model_free(m);
}

static void inverse_roundtrip(pt_model *m, pt_data *d, const char *what) {
  const int nc = pt_model_ncoord(m), nd = pt_model_ndof(m);
  const char *names[64];
  const int ni = pt_independent(m, d, names, 64);
  CHECK(ni == nd, "%s: %d independent, %d dof", what, ni, nd);
  pt_inverse_result *res = pt_inverse_result_new(m, nd);
  pt_assign req[64];
  for (int i = 0; i < ni; i++) req[i] = (pt_assign){pt_coord_index(m, names[i]), 0.3 - 0.17 * i};
  pt_error err = {0};
  int rc = pt_inverse_request(m, d, req, ni, res, &err);
  CHECK(rc == PT_OK, "%s inverse: %s", what, err.msg);
  if (rc) goto done;
  for (int i = 0; i < ni; i++) {
    const int a = res->req_actuator[i];
    CHECK(a >= 0, "%s: no actuator", what);
    if (a < 0) goto done;
    pt_set_input(m, d, pt_input_index(m, pt_input_name(m, a)), res->req_effort[i]);
  }
  rc = pt_forward(m, d);
  CHECK(rc == PT_OK, "%s forward: %s", what, pt_strerror(rc));
  double e = 0, scale = 1;
  for (int i = 0; i < ni; i++) {
    e = fmax(e, fabs(pt_coord_accels(d)[req[i].coord] - req[i].value));
    scale = fmax(scale, fabs(res->req_effort[i]));
  }
  for (int c = 0; c < nc; c++) e = fmax(e, fabs(pt_coord_accels(d)[c] - res->coord_acc[c]));
  CHECK(e <= 1e-9, "%s: forward accelerations off the request by %.3g", what, e);
  CHECK_CLOSE(pt_coupler_force(d, 0), res->coupler_effort[0], 1e-9 * scale,
              "coupler effort, inverse vs forward");
  printf("%s: inverse then forward, max acceleration error %.3g, coupler %.9g (forward "
         "%.9g)\n", what, e, res->coupler_effort[0], pt_coupler_force(d, 0));
done:
  pt_inverse_result_free(res);
}

// Linearization (linearize_tree.c) of the coupled pendulum pair at a moving, non-equilibrium
// state, states = the leader: A and B against central differences of the forward dynamics
// (pt_set_state moves the follower with its leader; pt_forward holds the coupler); the
// follower's outputs are multiplier x the leader's; naming the follower as a state, or the
// augmented solver, is refused.
static const char pair_text[] =
    "model: pair\n"
    "gravity: [0, 0, -9.81]\n"
    "bodies:\n"
    "  - {name: a, mass: 1, inertia: [0.0833333, 0.0833333, 0.001], position: [0, 0, -0.5]}\n"
    "  - {name: b, mass: 2, inertia: [0.06, 0.06, 0.002], position: [0.3, 0, -0.3]}\n"
    "joints:\n"
    "  - {name: ha, type: revolute, body1: ground, body2: a, point: [0, 0, 0], axis: [0, 1, 0],"
    " damping: 0.3}\n"
    "  - {name: hb, type: revolute, body1: ground, body2: b, point: [0.3, 0, 0],"
    " axis: [0, 1, 0]}\n"
    "forces:\n"
    "  - {name: spring, type: torsion_spring, joint: hb, stiffness: 4}\n"
    "actuators:\n  - {name: tau, type: joint_torque, joint: ha}\n"
    "  - {name: tau_b, type: joint_torque, joint: hb}\n"
    "couplers:\n"
    "  - {name: link, follower: hb, leader: ha, multiplier: -0.5, offset: 0.1}\n";

static double fd_acc(pt_model *m, pt_data *d, double th, double rate, double u, double ub) {
  pt_error err = {0};
  pt_assign p = {0, th}, v = {0, rate};
  pt_set_state(m, d, &p, 1, &v, 1, &err);
  pt_set_input(m, d, 0, u);
  pt_set_input(m, d, 1, ub);
  pt_forward(m, d);
  return pt_coord_accels(d)[0];
}

static void linearize_pair(void) {
  pt_error err = {0};
  pt_model *m = load_text(pair_text, 1, &err);
  CHECK(m != NULL, "load: %s", err.msg);
  if (!m) return;
  pt_data *d = pt_data_new(m);
  const double th = 0.7, rate = -1.1, u = 0.4, ub = -0.2, h = 1e-6;
  fd_acc(m, d, th, rate, u, ub);
  const char *outs[] = {"ha", "hb", "hb.rate", "hb.acc"};
  pt_linearize_options o = {.outputs = outs, .noutputs = 4};
  pt_linearization *lin = NULL;
  int rc = pt_linearize(m, d, &o, &lin, &err);
  CHECK(rc == PT_OK, "linearize: %s", err.msg);
  if (rc) goto done;
  CHECK(lin->nz == 1 && strcmp(lin->state_name[0], "ha") == 0, "states %d %s", lin->nz,
        lin->state_name[0]);
  const double dth = (fd_acc(m, d, th + h, rate, u, ub) - fd_acc(m, d, th - h, rate, u, ub)) / (2 * h);
  const double drt = (fd_acc(m, d, th, rate + h, u, ub) - fd_acc(m, d, th, rate - h, u, ub)) / (2 * h);
  const double du = (fd_acc(m, d, th, rate, u + h, ub) - fd_acc(m, d, th, rate, u - h, ub)) / (2 * h);
  const double dub = (fd_acc(m, d, th, rate, u, ub + h) - fd_acc(m, d, th, rate, u, ub - h)) / (2 * h);
  CHECK_CLOSE(lin->A[2], dth, 1e-7 * fmax(1, fabs(dth)), "A: dthetadd/dtheta vs differences");
  CHECK_CLOSE(lin->A[3], drt, 1e-7 * fmax(1, fabs(drt)), "A: dthetadd/dthetadot");
  CHECK_CLOSE(lin->B[2], du, 1e-7, "B: tau");
  CHECK_CLOSE(lin->B[3], dub, 1e-7, "B: tau_b (through the coupler)");
  // by hand: M = J_a + mult^2 J_b about the hinges (0.0833333 + 1 x 0.5^2, 0.06 + 2 x 0.3^2)
  const double Mr = 0.0833333 + 0.25 + 0.25 * (0.06 + 2 * 0.09);
  CHECK_CLOSE(lin->M[0], Mr, 1e-12, "M = J_a + mult^2 J_b");
  CHECK_CLOSE(lin->B[2], 1 / Mr, 1e-12, "B tau = 1 / M");
  CHECK_CLOSE(lin->B[3], -0.5 / Mr, 1e-12, "B tau_b = mult / M");
  CHECK(lin->C[0] == 1 && lin->C[1] == 0, "C ha");
  CHECK(lin->C[2] == -0.5 && lin->C[3] == 0, "C hb");
  CHECK(lin->C[4] == 0 && lin->C[5] == -0.5, "C hb.rate");
  CHECK_CLOSE(lin->C[6], -0.5 * lin->A[2], 1e-15, "C hb.acc");
  CHECK_CLOSE(lin->D[6 + 1], -0.5 * lin->B[3], 1e-15, "D hb.acc");
  printf("linearize pair: A = [0 1; %.10g %.10g] (differences %.10g %.10g), B = [%.10g %.10g] "
         "(differences %.10g %.10g), M = %.10g\n", lin->A[2], lin->A[3], dth, drt, lin->B[2],
         lin->B[3], du, dub, lin->M[0]);
  pt_linearization_free(lin);
  lin = NULL;
  const char *bad[] = {"hb"};
  pt_linearize_options ob = {.states = bad, .nstates = 1};
  rc = pt_linearize(m, d, &ob, &lin, &err);
  CHECK(rc == PT_EINVAL && strstr(err.msg, "state \"hb\" follows coupler \"link\": name its "
                                           "leader \"ha\""), "follower state: %s", err.msg);
  printf("refused: %s\n", err.msg);
  pt_linearization_free(lin);
  lin = NULL;
  pt_linearize_options oa = {.solver = PT_LIN_AUGMENTED};
  rc = pt_linearize(m, d, &oa, &lin, &err);
  CHECK(rc == PT_EPRECOND && strstr(err.msg, "has couplers: it is linearized by the tree method"),
        "augmented: %s", err.msg);
  printf("refused: %s\n", err.msg);
done:
  pt_linearization_free(lin);
  pt_data_free(d);
  pt_model_free(m);
}

// Equilibrium (equilibrium.c) of the coupled pendulum pair with its spring: Newton with the
// coupler's row finds a rest state where the coupled forward dynamics has zero accelerations
// (an independent check), the follower is on its coupler, and the coupler's effort equals the
// one the forward dynamics holds there; by hand, the leader's balance T^T Q = 0:
// tau_a + mult tau_b = 0 with the effort then lambda = -tau_b (what the follower needs).
static void equilibrium_pair(void) {
  pt_error err = {0};
  pt_model *m = load_text(pair_text, 1, &err);
  CHECK(m != NULL, "load: %s", err.msg);
  if (!m) return;
  pt_data *d = pt_data_new(m);
  pt_assign p = {0, 0.3};
  pt_set_state(m, d, &p, 1, NULL, 0, &err);
  pt_equilibrium_result *res = pt_equilibrium_result_new(m);
  int rc = pt_equilibrium(m, d, NULL, res, &err);
  CHECK(rc == PT_OK, "equilibrium: %s", err.msg);
  if (!rc) {
    const double th = res->coord[0], thb = res->coord[1];
    CHECK_CLOSE(thb, -0.5 * th + 0.1, 1e-10, "follower on its coupler at the equilibrium");
    // gravity torques about +y of rods hanging along -z: -m g d sin(theta); spring -4 thb
    const double ta = -1 * 9.81 * 0.5 * sin(th), tb = -2 * 9.81 * 0.3 * sin(thb) - 4 * thb;
    CHECK(fabs(ta - 0.5 * tb) <= 1e-9, "leader balance tau_a + mult tau_b = %.3g",
          ta - 0.5 * tb);
    CHECK_CLOSE(res->coupler_effort[0], -tb, 1e-9, "coupler effort = -tau_b by hand");
    CHECK(res->stable == 1, "stable %d", res->stable);
    rc = pt_equilibrium_apply(m, d, res, &err);
    CHECK(rc == PT_OK, "apply: %s", err.msg);
    double amax = 0;
    for (int c = 0; c < 2; c++) amax = fmax(amax, fabs(pt_coord_accels(d)[c]));
    CHECK(amax <= 1e-9, "accelerations at the equilibrium %.3g", amax);
    CHECK_CLOSE(pt_coupler_force(d, 0), res->coupler_effort[0], 1e-9, "coupler effort vs forward");
    printf("equilibrium pair: leader %.12g rad, follower %.12g rad, coupler %.10g N m (hand "
           "%.10g), accelerations %.2g, %d iterations\n", th, thb, res->coupler_effort[0], -tb,
           amax, res->iterations);
  }
  pt_equilibrium_result_free(res);
  pt_data_free(d);
  pt_model_free(m);
}

static void refused(const char *text, int format, const char *want) {
  pt_error err = {0};
  pt_model *m = load_text(text, format, &err);
  CHECK(m == NULL, "accepted, expected \"%s\"", want);
  if (m) {
    pt_model_free(m);
    return;
  }
  CHECK(strstr(err.msg, want) != NULL, "message \"%s\", expected \"%s\"", err.msg, want);
  printf("refused: %s\n", err.msg);
}

#define THREE                                                                                 \
  "model: three\n"                                                                            \
  "bodies:\n"                                                                                 \
  "  - {name: a, mass: 1, inertia: [0.1, 0.1, 0.1], position: [0, 0, 0]}\n"                   \
  "  - {name: b, mass: 1, inertia: [0.1, 0.1, 0.1], position: [1, 0, 0]}\n"                   \
  "  - {name: c, mass: 1, inertia: [0.1, 0.1, 0.1], position: [2, 0, 0]}\n"                   \
  "joints:\n"                                                                                 \
  "  - {name: ja, type: revolute, body1: ground, body2: a, point: [0, 0, 0], axis: [0, 0, 1]}\n" \
  "  - {name: jb, type: revolute, body1: ground, body2: b, point: [1, 0, 0], axis: [0, 0, 1]}\n" \
  "  - {name: jc, type: %s, body1: ground, body2: c, point: [2, 0, 0]%s}\n"

static void refusals(void) {
  char text[4096];
  const char *rev = ", axis: [0, 0, 1]";
#define R(jc, jcx, rest, want)                        \
  do {                                                \
    snprintf(text, sizeof(text), THREE, jc, jcx);     \
    strncat(text, rest, sizeof(text) - strlen(text) - 1); \
    refused(text, 1, want);                           \
  } while (0)
  R("revolute", rev, "couplers:\n  - {name: k, follower: jb, leader: nope}\n",
    "couplers[0] \"k\": leader: no joint named \"nope\"");
  R("revolute", rev, "couplers:\n  - {name: k, follower: nope, leader: ja}\n",
    "follower: no joint named \"nope\"");
  R("spherical", "", "couplers:\n  - {name: k, follower: jc, leader: ja}\n",
    "follower \"jc\" is a spherical joint: a coupler joins the coordinates of two revolute or "
    "prismatic joints");
  R("spherical", "", "couplers:\n  - {name: k, follower: ja, leader: jc}\n",
    "leader \"jc\" is a spherical joint");
  R("revolute", rev, "couplers:\n  - {name: k, follower: jb, leader: jb}\n",
    "follower and leader are the same joint \"jb\"");
  R("revolute", rev,
    "couplers:\n  - {name: k, follower: jb, leader: ja}\n  - {name: l, follower: jc, leader: jb}\n",
    "leader \"jb\" is itself the follower of coupler \"k\": chained couplers are not supported");
  R("revolute", rev,
    "couplers:\n  - {name: k, follower: jc, leader: jb}\n  - {name: l, follower: jb, leader: ja}\n",
    "couplers[0] \"k\": leader \"jb\" is itself the follower of coupler \"l\"");
  R("revolute", rev,
    "couplers:\n  - {name: k, follower: jc, leader: ja}\n  - {name: l, follower: jc, leader: jb}\n",
    "joint \"jc\" already follows coupler \"k\"");
  R("revolute", rev,
    "couplers:\n  - {name: k, follower: jc, leader: ja}\n  - {name: k, follower: jb, leader: ja}\n",
    "duplicate coupler name");
  R("revolute", rev, "couplers:\n  - {name: k, follower: jb, leader: ja, multiplier: 0}\n",
    "multiplier: must be a finite number other than 0, got 0");
  R("revolute", rev, "couplers:\n  - {name: k, follower: jb, leader: ja, multiplier: .nan}\n",
    "multiplier");
  R("revolute", rev, "couplers:\n  - {name: k, leader: ja}\n",
    "missing required field \"follower\"");
  R("revolute", rev, "couplers:\n  - {name: k, follower: jb, leader: ja, gear: 2}\n",
    "unknown key \"gear\"");
  R("revolute", rev,
    "motions:\n  - {name: drive, joint: jc, profile: constant, value: 0}\n"
    "couplers:\n  - {name: k, follower: jb, leader: ja}\n",
    "couplers[0] \"k\": couplers are held on trees of revolute, prismatic and fixed joints "
    "without motions");
#undef R
  pt_error err = {0};
  pt_model *m = urdf_with("<mimic joint=\"nope\"/>", &err);
  CHECK(!m && strstr(err.msg, "leader: no joint named \"nope\""), "urdf unknown leader: %s",
        err.msg);
  pt_model_free(m);
  m = urdf_with("<mimic joint=\"\"/>", &err);
  CHECK(!m && strstr(err.msg, "<mimic joint=\"\">: the leader's name is empty"),
        "urdf empty leader: %s", err.msg);
  pt_model_free(m);
  m = urdf_with("<mimic multiplier=\"2\"/>", &err);
  CHECK(!m && strstr(err.msg, "<mimic> has no attribute joint"), "urdf no joint: %s", err.msg);
  pt_model_free(m);
  m = urdf_with("<mimic joint=\"j1\" multiplier=\"two\"/>", &err);
  CHECK(!m && strstr(err.msg, "<mimic multiplier=\"two\">: expected 1 finite number"),
        "urdf bad multiplier: %s", err.msg);
  pt_model_free(m);
  m = urdf_with("<mimic joint=\"j1\" multiplier=\"0\"/>", &err);
  CHECK(!m && strstr(err.msg, "multiplier must be a finite number other than 0"),
        "urdf multiplier 0: %s", err.msg);
  pt_model_free(m);
  printf("urdf refusals: %s\n", err.msg);
}

int main(int argc, char **argv) {
  const char *env = getenv("PARTITA_URDF_CORPUS");
  const char *dir = env && env[0] ? env : argc > 1 ? argv[1] : ".";
  gripper_opens(1, 0, PT_INT_RK4);
  gripper_opens(2, 0.01, PT_INT_RK4);
  gripper_opens(-0.5, 0, PT_INT_ABM4);
  gripper_opens(1, 0, PT_INT_EULER);
  pendulums(PT_INT_RK4, 1e-6);
  pendulums(PT_INT_ABM4, 1e-6);
  inverse_gripper(1, 0);
  inverse_gripper(1, 1);
  inverse_gripper(-2, 0);
  inverse_gripper(-2, 1);
  leader_limit();
  linearize_pair();
  equilibrium_pair();
  urdf_mimic();
  panda(dir);
  refusals();
  if (check_failures) {
    printf("%d check(s) failed\n", check_failures);
    return 1;
  }
  printf("all coupler checks passed\n");
  return 0;
}
