// Inverse dynamics (issue 5, tests 1, 3, 4, 5 and bad requests), against closed forms derived
// here. argv[1] = the source root (for configs/models).
#include "check.h"

static char root[1024] = ".";

static char *read_model(const char *name, const char *extra) {
  char path[1200];
  snprintf(path, sizeof(path), "%s/configs/models/%s", root, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    printf("FAIL cannot open %s\n", path);
    exit(1);
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + strlen(extra) + 2);
  n = fread(buf, 1, cap, f);
  fclose(f);
  buf[n] = '\0';
  if (n > 0 && buf[n - 1] != '\n') strcat(buf, "\n");
  strcat(buf, extra);
  return buf;
}

static pt_model *load_file_extra(const char *name, const char *extra) {
  char *text = read_model(name, extra);
  pt_model *m = load_yaml(text);
  free(text);
  return m;
}

static double rel_err(double a, double b) { return fabs(a - b) / fmax(1e-300, fabs(b)); }

// ---------------------------------------------------------------------------------------------
// 1. The lecture's door: m = 30, J' = 2.5 about the CoM (vertical), K = 8, C = 1,
// phi(t) = pi/2 sin(pi t / 4), CoM at d = 0.5 from the vertical hinge. About the fixed hinge
// axis: J_O phi'' = tau - K phi - C phi', J_O = J' + m d^2 (gravity is along the axis).
// Reaction on the door at the hinge point P (origin): m a_c = F + m g and
// dH_P/dt = T + (tau - K phi - C phi') e_z + rho x m g with H_P = J' phi' e_z + m rho x v_c,
// so T = m rho x (a_c - g) + (J' phi'' + K phi + C phi' - tau) e_z, rho = r_c - P.
static void door(void) {
  const double mass = 30, Jp = 2.5, K = 8, C = 1, d = 0.5, g = 9.81, w = M_PI / 4;
  char text[2048];
  snprintf(text, sizeof(text),
           "model: door\n"
           "gravity: [0, 0, %.17g]\n"
           "bodies:\n"
           "  - {name: door, mass: %.17g, inertia: [10.004, 12.5, %.17g],\n"
           "     position: [%.17g, 0, 1.0]}\n"
           "joints:\n"
           "  - {name: hinge, type: revolute, body1: ground, body2: door, point: [0, 0, 0],\n"
           "     axis: [0, 0, 1]}\n"
           "motions:\n"
           "  - {name: door_motor, joint: hinge, profile: sine, offset: 0,\n"
           "     amplitude: %.17g, omega: %.17g, phase: 0}\n"
           "forces:\n"
           "  - {name: door_spring, type: torsion_spring, joint: hinge, stiffness: %.17g,\n"
           "     damping: %.17g, free_angle: 0}\n",
           -g, mass, Jp, d, M_PI / 2, w, K, C);
  pt_model *m = load_yaml(text);
  pt_data *dd = pt_data_new(m);
  pt_inverse_result *res = pt_inverse_result_new(m, 0);
  CHECK(pt_model_ndof(m) == 0, "door dof %d", pt_model_ndof(m));
  const int hinge = pt_coord_index(m, "hinge");
  double worst = 0;
  for (int k = 0; k < 10; k++) {
    const double t = 0.05 + 0.37 * k;  // through the opening and back
    pt_error err = {0};
    int rc = pt_inverse_kinematic(m, dd, t, res, &err);
    CHECK(rc == PT_OK, "door t=%g: %s", t, err.msg);
    if (rc) continue;
    const double phi = M_PI / 2 * sin(w * t), phid = M_PI / 2 * w * cos(w * t);
    const double phidd = -M_PI / 2 * w * w * sin(w * t);
    const double tau = (Jp + mass * d * d) * phidd + C * phid + K * phi;
    CHECK_CLOSE(res->coord[hinge], phi, 1e-12, "door angle");
    CHECK_CLOSE(res->coord_acc[hinge], phidd, 1e-10, "door angular acceleration");
    CHECK(rel_err(res->motion_effort[0], tau) <= 1e-9, "door motor torque t=%g: %.17g vs %.17g",
          t, res->motion_effort[0], tau);
    worst = fmax(worst, rel_err(res->motion_effort[0], tau));
    // hinge reaction
    const double rho[3] = {d * cos(phi), d * sin(phi), 1.0};
    const double ac[3] = {d * (-phidd * sin(phi) - phid * phid * cos(phi)),
                          d * (phidd * cos(phi) - phid * phid * sin(phi)), 0};
    const double a_g[3] = {ac[0], ac[1], ac[2] + g};
    double T[3] = {mass * (rho[1] * a_g[2] - rho[2] * a_g[1]),
                   mass * (rho[2] * a_g[0] - rho[0] * a_g[2]),
                   mass * (rho[0] * a_g[1] - rho[1] * a_g[0])};
    T[2] += Jp * phidd + K * phi + C * phid - tau;
    for (int c = 0; c < 3; c++) {
      CHECK_CLOSE(res->reaction[c], mass * a_g[c], 1e-9 * mass * g, "hinge force");
      CHECK_CLOSE(res->reaction[3 + c], T[c], 1e-9 * mass * g, "hinge torque");
    }
  }
  printf("door: motor torque at 10 times, worst relative error %.3g\n", worst);
  // the caller's data is untouched
  CHECK(pt_time(dd) == 0, "door data time moved to %g", pt_time(dd));
  pt_inverse_result_free(res);
  pt_data_free(dd);
  pt_model_free(m);
}

// A motor at constant speed (configs/models/slider_crank.yaml, angle = 2 pi t): kinematic
// inverse dynamics is periodic, also many turns away from the data's configuration.
static void periodic_motor(void) {
  char *text = read_model("slider_crank.yaml", "");
  pt_model *m = load_yaml(text);
  free(text);
  pt_data *d = pt_data_new(m);
  pt_inverse_result *a = pt_inverse_result_new(m, 0), *b = pt_inverse_result_new(m, 0);
  pt_error err = {0};
  const double ts[3] = {0.3, 0.77, 0.05};
  for (int i = 0; i < 3; i++) {
    int rc = pt_inverse_kinematic(m, d, ts[i], a, &err);
    rc |= pt_inverse_kinematic(m, d, ts[i] + 37.0, b, &err);
    CHECK(rc == PT_OK, "slider-crank: %s", err.msg);
    if (rc) continue;
    CHECK_CLOSE(b->motion_effort[0], a->motion_effort[0], 1e-9 * fmax(1, fabs(a->motion_effort[0])),
                "motor torque 37 turns later");
    for (int k = 0; k < 6 * pt_model_njoint(m); k++)
      CHECK_CLOSE(b->reaction[k], a->reaction[k], 1e-8, "reactions 37 turns later");
  }
  pt_inverse_result_free(a);
  pt_inverse_result_free(b);
  pt_data_free(d);
  pt_model_free(m);
}

// 5. No prescribed motions: kinematic inverse dynamics is refused clearly.
static void no_motions(void) {
  char *text = read_model("chain7.yaml", "");
  pt_model *m = load_yaml(text);
  free(text);
  pt_data *d = pt_data_new(m);
  pt_inverse_result *res = pt_inverse_result_new(m, 0);
  pt_error err = {0};
  int rc = pt_inverse_kinematic(m, d, 0.0, res, &err);
  CHECK(rc == PT_EPRECOND, "kinematic inverse on a 7-dof chain: rc %d", rc);
  CHECK(strstr(err.msg, "degree") != NULL, "message: %s", err.msg);
  printf("no motions: \"%s\"\n", err.msg);
  pt_inverse_result_free(res);
  pt_data_free(d);
  pt_model_free(m);
}

// ---------------------------------------------------------------------------------------------
// 3. The 2R arm of configs/models/arm2r.urdf: tau = M(q) q'' + c(q, q') + g(q) + D q' with the
// two-link equations (absolute angles th1 = q1, th2 = q1 + q2 from +x towards +z).
static void arm2r(void) {
  const double l1 = 0.5, lc1 = 0.22, m1 = 2.0, I1 = 0.05, lc2 = 0.18, m2 = 1.2, I2 = 0.02;
  const double D[2] = {0.1, 0.05}, G = 9.81;
  char path[1200];
  snprintf(path, sizeof(path), "%s/configs/models/arm2r.urdf", root);
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_file(path, NULL, &m, &err)) {
    printf("FAIL load %s: %s\n", path, err.msg);
    check_failures++;
    return;
  }
  pt_data *d = pt_data_new(m);
  pt_inverse_result *res = pt_inverse_result_new(m, 2);
  const int c[2] = {pt_coord_index(m, "shoulder"), pt_coord_index(m, "elbow")};
  const int u[2] = {pt_input_index(m, "shoulder"), pt_input_index(m, "elbow")};
  const double cases[4][6] = {{0.3, 0.4, 1.5, -2.0, 3.0, -1.5},
                              {-1.0, 2.0, -0.5, 0.8, 0.0, 0.0},
                              {2.5, -0.7, 4.0, 3.0, -7.0, 2.5},
                              {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}};
  for (int i = 0; i < 4; i++) {
    const double *q = cases[i], *qd = cases[i] + 2, *qdd = cases[i] + 4;
    pt_assign pos[2] = {{c[0], q[0]}, {c[1], q[1]}}, vel[2] = {{c[0], qd[0]}, {c[1], qd[1]}};
    CHECK(pt_set_state(m, d, pos, 2, vel, 2, &err) == PT_OK, "arm state: %s", err.msg);
    pt_set_input(m, d, u[0], 7.0 * (i - 1));  // current inputs must not matter
    pt_set_input(m, d, u[1], -3.0);
    pt_assign acc[2] = {{c[0], qdd[0]}, {c[1], qdd[1]}};
    int rc = pt_inverse_request(m, d, acc, 2, res, &err);
    CHECK(rc == PT_OK, "arm request: %s", err.msg);
    const double c2 = cos(q[1]), s2 = sin(q[1]), t1 = q[0], t2 = q[0] + q[1];
    const double M11 = m1 * lc1 * lc1 + I1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * c2) + I2;
    const double M12 = m2 * (lc2 * lc2 + l1 * lc2 * c2) + I2, M22 = m2 * lc2 * lc2 + I2;
    const double h1 = -m2 * l1 * lc2 * s2 * (2 * qd[0] * qd[1] + qd[1] * qd[1]);
    const double h2 = m2 * l1 * lc2 * s2 * qd[0] * qd[0];
    const double g1 = (m1 * lc1 + m2 * l1) * G * cos(t1) + m2 * lc2 * G * cos(t2);
    const double g2 = m2 * lc2 * G * cos(t2);
    const double tau[2] = {M11 * qdd[0] + M12 * qdd[1] + h1 + g1 + D[0] * qd[0],
                           M12 * qdd[0] + M22 * qdd[1] + h2 + g2 + D[1] * qd[1]};
    for (int k = 0; k < 2; k++) {
      CHECK(res->req_coord[k] == c[k], "request order");
      CHECK_CLOSE(res->req_effort[k], tau[k], 1e-10, "2R arm torque");
      CHECK_CLOSE(res->coord_acc[c[k]], qdd[k], 1e-10, "2R arm resulting acceleration");
    }
    printf("arm2r: tau = %.12f %.12f (closed form %.12f %.12f)\n", res->req_effort[0],
           res->req_effort[1], tau[0], tau[1]);
  }
  // one joint requested, the other follows the dynamics with its held input
  {
    pt_assign pos[2] = {{c[0], 0.4}, {c[1], -0.3}};
    pt_set_state(m, d, pos, 2, NULL, 0, &err);
    pt_set_input(m, d, u[1], 1.5);
    pt_assign acc[1] = {{c[0], 2.0}};
    CHECK(pt_inverse_request(m, d, acc, 1, res, &err) == PT_OK, "arm single: %s", err.msg);
    // forward dynamics with the answer reproduces the request
    pt_set_input(m, d, u[0], res->req_effort[0]);
    pt_forward(m, d);
    CHECK_CLOSE(pt_coord_accels(d)[c[0]], 2.0, 1e-10, "shoulder acceleration forward");
    CHECK_CLOSE(pt_coord_accels(d)[c[1]], res->coord_acc[c[1]], 1e-10, "elbow follows");
  }
  pt_inverse_result_free(res);
  pt_data_free(d);
  pt_model_free(m);
}

// ---------------------------------------------------------------------------------------------
// 4. Round trips: forward dynamics with efforts tau gives accelerations a; a torque request for
// a gives tau back.
static void round_trip(const char *what, pt_model *m, const char *const *act, int nact,
                       const pt_assign *pos, int npos, const pt_assign *vel, int nvel) {
  pt_data *d = pt_data_new(m);
  pt_inverse_result *res = pt_inverse_result_new(m, nact);
  pt_error err = {0};
  CHECK(pt_set_state(m, d, pos, npos, vel, nvel, &err) == PT_OK, "%s state: %s", what, err.msg);
  double tau[16];
  pt_assign acc[16];
  for (int k = 0; k < nact; k++) {
    tau[k] = 2.5 * sin(1.3 * k + 0.4) + 0.7;
    CHECK(pt_set_input(m, d, pt_input_index(m, act[k]), tau[k]) == 0, "input %s", act[k]);
  }
  CHECK(pt_forward(m, d) == PT_OK, "%s forward", what);
  double all[64];
  const int nc = pt_model_ncoord(m);
  memcpy(all, pt_coord_accels(d), sizeof(double) * (size_t)nc);
  for (int k = 0; k < nact; k++) {
    acc[k].coord = pt_coord_index(m, act[k]);  // actuators are named after their joints here
    acc[k].value = all[acc[k].coord];
    pt_set_input(m, d, pt_input_index(m, act[k]), 0.0);
  }
  int rc = pt_inverse_request(m, d, acc, nact, res, &err);
  CHECK(rc == PT_OK, "%s request: %s", what, err.msg);
  double worst = 0;
  for (int k = 0; k < nact && !rc; k++) {
    CHECK_CLOSE(res->req_effort[k], tau[k], 1e-9, what);
    worst = fmax(worst, fabs(res->req_effort[k] - tau[k]));
  }
  for (int i = 0; i < nc && !rc; i++) CHECK_CLOSE(res->coord_acc[i], all[i], 1e-9, "all accels");
  printf("%s round trip: %d efforts, worst error %.3g\n", what, nact, worst);
  pt_inverse_result_free(res);
  pt_data_free(d);
}

static void chain7(void) {
  const char *act[7] = {"j1", "j2", "j3", "j4", "j5", "j6", "j7"};
  char extra[1024] = "actuators:\n";
  for (int k = 0; k < 7; k++)
    snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
             "  - {name: %s, type: joint_torque, joint: %s}\n", act[k], act[k]);
  pt_model *m = load_file_extra("chain7.yaml", extra);
  pt_assign pos[7], vel[7];
  for (int k = 0; k < 7; k++) {
    pos[k] = (pt_assign){pt_coord_index(m, act[k]), 0.3 * sin(k + 1.0)};
    vel[k] = (pt_assign){pt_coord_index(m, act[k]), 0.8 * cos(2.0 * k)};
  }
  round_trip("chain7", m, act, 7, pos, 7, vel, 7);
  // a subset: the others are free and follow the dynamics
  round_trip("chain7 (3 of 7 actuated)", m, act + 2, 3, pos, 7, vel, 7);
  pt_model_free(m);
}

static void fourbar(void) {
  pt_model *m = load_file_extra("fourbar_parallelogram.yaml",
                                "actuators:\n"
                                "  - {name: A, type: joint_torque, joint: A}\n"
                                "  - {name: D, type: joint_torque, joint: D}\n");
  const char *act[1] = {"A"};
  const pt_assign pos[1] = {{pt_coord_index(m, "A"), 0.3}};
  const pt_assign vel[1] = {{pt_coord_index(m, "A"), -0.7}};
  round_trip("four-bar (crank)", m, act, 1, pos, 1, vel, 1);
  const char *rocker[1] = {"D"};
  round_trip("four-bar (rocker)", m, rocker, 1, pos, 1, vel, 1);
  pt_model_free(m);
}

// ---------------------------------------------------------------------------------------------
// Bad requests: clear errors, nothing changed.
static int snapshot(const pt_model *m, const pt_data *d, double *out) {
  int n = 0;
  out[n++] = pt_time(d);
  for (int i = 0; i < pt_model_ncoord(m); i++) {
    out[n++] = pt_coords(d)[i];
    out[n++] = pt_coord_rates(d)[i];
    out[n++] = pt_coord_accels(d)[i];
  }
  for (int i = 0; i < pt_model_ninput(m); i++) out[n++] = pt_inputs(d)[i];
  for (int b = 0; b < pt_model_nbody(m); b++)
    for (int k = 0; k < 7; k++) out[n++] = pt_body_pose(d, b)[k];
  return n;
}

static void bad_requests(void) {
  pt_model *m = load_file_extra("fourbar_parallelogram.yaml",
                                "actuators:\n"
                                "  - {name: A, type: joint_torque, joint: A}\n"
                                "  - {name: D, type: joint_torque, joint: D}\n");
  pt_data *d = pt_data_new(m);
  pt_inverse_result *res = pt_inverse_result_new(m, 4);
  pt_set_input(m, d, pt_input_index(m, "A"), 0.25);
  pt_forward(m, d);
  double before[256], after[256];
  const int nsnap = snapshot(m, d, before);
  CHECK(nsnap <= 256, "snapshot size");
  const int A = pt_coord_index(m, "A"), B = pt_coord_index(m, "B"), D = pt_coord_index(m, "D");
  struct {
    const char *what, *msg;
    pt_assign acc[2];
    int n;
  } cases[] = {
      {"unknown coordinate", "unknown", {{99, 1.0}}, 1},
      {"NaN", "finite", {{A, NAN}}, 1},
      {"infinite", "finite", {{A, INFINITY}}, 1},
      {"unactuated", "no joint actuator", {{B, 1.0}}, 1},
      {"twice", "twice", {{A, 1.0}, {A, 2.0}}, 2},
      {"fixed by the loop", "fix", {{A, 1.0}, {D, 2.0}}, 2},
      {"none", "no accel", {{A, 0}}, 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    pt_error err = {0};
    int rc = pt_inverse_request(m, d, cases[i].acc, cases[i].n, res, &err);
    CHECK(rc == PT_EINVAL, "%s: rc %d", cases[i].what, rc);
    CHECK(strstr(err.msg, cases[i].msg) != NULL, "%s: message \"%s\"", cases[i].what, err.msg);
    snapshot(m, d, after);
    CHECK(memcmp(before, after, sizeof(double) * (size_t)nsnap) == 0, "%s changed the data",
          cases[i].what);
    printf("bad request (%s): %s\n", cases[i].what, err.msg);
  }
  // a good request does not change the data either
  pt_error err = {0};
  pt_assign ok[1] = {{A, 1.0}};
  CHECK(pt_inverse_request(m, d, ok, 1, res, &err) == PT_OK, "good request: %s", err.msg);
  snapshot(m, d, after);
  CHECK(memcmp(before, after, sizeof(double) * (size_t)nsnap) == 0,
        "a good request changed the data");
  // a step after it matches a step without it
  pt_data *d2 = pt_data_new(m);
  pt_data_copy(m, d2, d);
  pt_step(m, d);
  pt_step(m, d2);
  CHECK(memcmp(pt_coords(d), pt_coords(d2), sizeof(double) * (size_t)pt_model_ncoord(m)) == 0,
        "stepping after a request differs");
  pt_data_free(d2);
  pt_inverse_result_free(res);
  pt_data_free(d);
  pt_model_free(m);
}

// A coordinate driven by a motion cannot be requested.
static void motion_request(void) {
  pt_model *m = load_file_extra("door.yaml", "actuators:\n"
                                             "  - {name: tau, type: joint_torque, "
                                             "joint: hinge}\n");
  pt_data *d = pt_data_new(m);
  pt_inverse_result *res = pt_inverse_result_new(m, 1);
  pt_error err = {0};
  pt_assign acc[1] = {{pt_coord_index(m, "hinge"), 1.0}};
  int rc = pt_inverse_request(m, d, acc, 1, res, &err);
  CHECK(rc == PT_EINVAL && strstr(err.msg, "door_motor"), "motion-driven: %d %s", rc, err.msg);
  pt_inverse_result_free(res);
  pt_data_free(d);
  pt_model_free(m);
}

// ---------------------------------------------------------------------------------------------
// The recursive pass on trees (issue 10) against the Schur complement on W: two independent
// solutions of the same equations, at random states, accelerations and inputs.

static double urand(unsigned *seed) {  // uniform in [-1, 1)
  *seed = *seed * 1664525u + 1013904223u;
  return (double)(*seed >> 8) / (double)(1u << 23) - 1.0;
}

static double max_abs(const double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(a[i]));
  return s;
}

// Largest |a - b| relative to max |b| (at least 1e-300).
static double max_rel(const double *a, const double *b, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i]));
  return e / fmax(1e-300, max_abs(b, n));
}

// Every actuated coordinate requested at ntrial random states; returns the worst difference.
static double tree_vs_schur(const char *what, pt_model *m, int ntrial, double amp,
                            unsigned seed) {
  const int nact = pt_model_nactuator(m), nc = pt_model_ncoord(m), nj = pt_model_njoint(m);
  pt_data *d = pt_data_new(m);
  pt_inverse_result *fast = pt_inverse_result_new(m, nact);
  pt_inverse_result *slow = pt_inverse_result_new(m, nact);
  slow->schur_only = 1;
  pt_assign *pos = calloc((size_t)nact, sizeof(*pos));
  pt_assign *vel = calloc((size_t)nact, sizeof(*vel));
  pt_assign *acc = calloc((size_t)nact, sizeof(*acc));
  int *coord_of_act = calloc((size_t)nact, sizeof(int));
  for (int a = 0; a < nact; a++) {
    // actuators are named after their coordinate, or coordinate + "_act" here
    char name[128];
    snprintf(name, sizeof(name), "%s", pt_actuator_name(m, a));
    char *suffix = strstr(name, "_act");
    if (suffix) *suffix = '\0';
    coord_of_act[a] = pt_coord_index(m, name);
    CHECK(coord_of_act[a] >= 0, "%s: actuator %s has no coordinate", what, name);
  }
  double worst = 0;
  for (int t = 0; t < ntrial; t++) {
    pt_error err = {0};
    for (int a = 0; a < nact; a++) {  // the joint coordinates (user coordinates follow)
      const int i = coord_of_act[a];
      const int slide = strstr(pt_coord_name(m, i), "slide") || strstr(pt_coord_name(m, i),
                                                                         "prism");
      pos[a] = (pt_assign){i, (slide ? 0.2 : amp) * urand(&seed)};
      vel[a] = (pt_assign){i, (slide ? 0.5 : 2.0) * urand(&seed)};
    }
    pt_data_reset(m, d);  // assembled from the initial state: no long jumps
    CHECK(pt_set_state(m, d, pos, nact, vel, nact, &err) == PT_OK, "%s state: %s", what, err.msg);
    for (int i = 0; i < pt_model_ninput(m); i++) pt_set_input(m, d, i, 3 * urand(&seed));
    for (int a = 0; a < nact; a++) acc[a] = (pt_assign){coord_of_act[a], 4 * urand(&seed)};
    double before[512], after[512];
    const int nsnap = snapshot(m, d, before);
    CHECK(nsnap <= 512, "snapshot size");
    int rf = pt_inverse_request(m, d, acc, nact, fast, &err);
    snapshot(m, d, after);
    CHECK(memcmp(before, after, sizeof(double) * (size_t)nsnap) == 0,
          "%s: the recursive pass changed the data", what);
    CHECK(rf == PT_OK, "%s fast: %s", what, err.msg);
    int rs = pt_inverse_request(m, d, acc, nact, slow, &err);
    CHECK(rs == PT_OK, "%s general: %s", what, err.msg);
    CHECK(fast->method == PT_INVERSE_TREE, "%s: the recursive pass was not taken", what);
    CHECK(slow->method == PT_INVERSE_SCHUR, "%s: schur_only ignored", what);
    if (rf || rs) continue;
    const double e_eff = max_rel(fast->req_effort, slow->req_effort, nact);
    const double e_rea = max_rel(fast->reaction, slow->reaction, 6 * nj);
    const double e_acc = max_rel(fast->coord_acc, slow->coord_acc, nc);
    const double e_crd = max_rel(fast->coord, slow->coord, nc);
    const double e_rat = max_rel(fast->coord_rate, slow->coord_rate, nc);
    CHECK(e_eff <= 1e-10, "%s trial %d: efforts differ by %.3g", what, t, e_eff);
    CHECK(e_rea <= 1e-10, "%s trial %d: reactions differ by %.3g", what, t, e_rea);
    CHECK(e_acc <= 1e-10, "%s trial %d: accelerations differ by %.3g", what, t, e_acc);
    CHECK(e_crd == 0 && e_rat == 0, "%s trial %d: coordinates differ", what, t);
    // the request itself: the requested accelerations come out
    for (int a = 0; a < nact; a++)
      CHECK_CLOSE(fast->coord_acc[acc[a].coord], acc[a].value, 1e-9, "requested acceleration");
    worst = fmax(worst, fmax(e_eff, fmax(e_rea, e_acc)));
  }
  printf("%s: recursive pass vs Schur complement, %d random states: worst relative difference "
         "%.3g\n", what, ntrial, worst);
  free(pos);
  free(vel);
  free(acc);
  free(coord_of_act);
  pt_inverse_result_free(fast);
  pt_inverse_result_free(slow);
  pt_data_free(d);
  return worst;
}

// A branched tree with every actuable joint class: revolute, prismatic, cylindrical (both
// coordinates), a revolute given child first (body1 = the child), a fixed joint, a spring, a
// damper and an applied force.
static const char tree_yaml[] =
    "model: tree\n"
    "bodies:\n"
    "  - {name: base, mass: 3.0, inertia: [0.05, 0.04, 0.03], position: [0, 0, 0.1]}\n"
    "  - {name: slider, mass: 1.2, inertia: [0.01, 0.012, 0.008], position: [0.3, 0, 0.1]}\n"
    "  - {name: sleeve, mass: 0.8, inertia: [0.004, 0.002, 0.004], position: [0.3, 0.2, 0.1]}\n"
    "  - {name: side, mass: 0.6, inertia: [0.003, 0.005, 0.006], position: [-0.2, 0.1, 0.1]}\n"
    "  - {name: welded, mass: 0.5, inertia: [0.002, 0.002, 0.001], position: [0.3, 0.4, 0.2]}\n"
    "  - {name: tip, mass: 0.3, inertia: [0.001, 0.0015, 0.0008], position: [0.5, 0.4, 0.2]}\n"
    "joints:\n"
    "  - {name: yaw, type: revolute, body1: ground, body2: base, point: [0, 0, 0],\n"
    "     axis: [0, 0, 1], damping: 0.3}\n"
    "  - {name: prism, type: prismatic, body1: base, body2: slider, point: [0.3, 0, 0.1],\n"
    "     axis: [1, 0, 0]}\n"
    "  - {name: cyl, type: cylindrical, body1: slider, body2: sleeve, point: [0.3, 0.1, 0.1],\n"
    "     axis: [0, 1, 0]}\n"
    "  - {name: rev, type: revolute, body1: side, body2: base, point: [-0.1, 0.1, 0.1],\n"
    "     axis: [1, 1, 0]}\n"
    "  - {name: weld, type: fixed, body1: sleeve, body2: welded, point: [0.3, 0.3, 0.15]}\n"
    "  - {name: wrist, type: revolute, body1: welded, body2: tip, point: [0.4, 0.4, 0.2],\n"
    "     axis: [0, 0.6, 0.8]}\n"
    "forces:\n"
    "  - {name: spring, type: torsion_spring, joint: wrist, stiffness: 2.0, damping: 0.1,\n"
    "     free_angle: 0.2}\n"
    "  - {name: push, type: force, body: tip, point: [0.05, 0, 0], value: [0.5, -1.0, 2.0]}\n"
    "actuators:\n"
    "  - {name: yaw, type: joint_torque, joint: yaw}\n"
    "  - {name: prism, type: joint_force, joint: prism}\n"
    "  - {name: cyl.angle_act, type: joint_torque, joint: cyl}\n"
    "  - {name: cyl.slide_act, type: joint_force, joint: cyl}\n"
    "  - {name: rev, type: joint_torque, joint: rev}\n"
    "  - {name: wrist, type: joint_torque, joint: wrist}\n";

static void tree_pass(void) {
  char path[1200];
  snprintf(path, sizeof(path), "%s/configs/models/panda.urdf", root);
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_file(path, NULL, &m, &err)) {
    printf("FAIL load %s: %s\n", path, err.msg);
    check_failures++;
    return;
  }
  tree_vs_schur("panda", m, 20, 1.2, 7u);
  // a request on only some joints is not a square block system: the general path answers
  {
    pt_data *d = pt_data_new(m);
    pt_inverse_result *res = pt_inverse_result_new(m, 7);
    pt_assign acc[3] = {{pt_coord_index(m, "panda_joint1"), 1.0},
                        {pt_coord_index(m, "panda_joint4"), -0.5},
                        {pt_coord_index(m, "panda_joint6"), 2.0}};
    CHECK(pt_inverse_request(m, d, acc, 3, res, &err) == PT_OK, "panda subset: %s", err.msg);
    CHECK(res->method == PT_INVERSE_SCHUR, "panda subset went the recursive way");
    for (int k = 0; k < 3; k++)
      CHECK_CLOSE(res->coord_acc[acc[k].coord], acc[k].value, 1e-9, "panda subset acceleration");
    pt_inverse_result_free(res);
    pt_data_free(d);
  }
  pt_model_free(m);

  char extra[4096] = "actuators:\n";
  for (int k = 1; k <= 7; k++)
    snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
             "  - {name: j%d, type: joint_torque, joint: j%d}\n", k, k);
  m = load_file_extra("chain7.yaml", extra);
  tree_vs_schur("chain7", m, 20, 1.2, 11u);
  pt_model_free(m);

  m = load_yaml(tree_yaml);
  tree_vs_schur("branched tree (revolute, prismatic, cylindrical, fixed)", m, 20, 1.2, 13u);
  pt_model_free(m);

  // a closed loop: the general path, with the same answer as before
  m = load_file_extra("fourbar_parallelogram.yaml",
                      "actuators:\n  - {name: A, type: joint_torque, joint: A}\n");
  {
    pt_data *d = pt_data_new(m);
    pt_inverse_result *res = pt_inverse_result_new(m, 1);
    CHECK(res->tree == NULL, "four-bar taken for a tree");
    pt_assign acc[1] = {{pt_coord_index(m, "A"), 1.0}};
    CHECK(pt_inverse_request(m, d, acc, 1, res, &err) == PT_OK, "four-bar: %s", err.msg);
    CHECK(res->method == PT_INVERSE_SCHUR, "four-bar went the recursive way");
    pt_inverse_result_free(res);
    pt_data_free(d);
  }
  pt_model_free(m);
}

int main(int argc, char **argv) {
  if (argc > 1) snprintf(root, sizeof(root), "%s", argv[1]);
  door();
  periodic_motor();
  no_motions();
  arm2r();
  chain7();
  fourbar();
  bad_requests();
  motion_request();
  tree_pass();
  return finish("inverse");
}
