// pt_step allocates nothing (issue 2, test 10; issue 10, item 4), partition rebuilds and LU/QR
// switches included, proven with a counting allocator: in a normal build malloc/calloc/realloc
// are interposed and forwarded to glibc; under AddressSanitizer the sanitizer's malloc hooks
// count instead. The counted runs must show rebuilds and switches happening (a swinging Panda
// released from a bent pose and a chain in LU mode, the parallelogram four-bar through its
// singular positions; the same arm and chain in hybrid mode never rebuild: their joint
// coordinates are the independent set); control elements of every type too (issue 26). A
// snapshot (pt_data_copy, issue 10, item 5) allocates nothing either, and the copy taken mid-run
// continues bit-identically to the original, in LU, QR and hybrid mode. Closed loops in joint
// coordinates (issue 23): the Stewart platform with its leg forces changed every step, the
// Delta robot, the five-cell chain through its singular positions (rebuilds and switches in
// joint coordinates), the four-bar with the Cartesian partitions standing in for a while.
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "chain_urdf.h"
#include "check.h"
#include "count_alloc.h"
#include "engine.h"  // the partition in use (loop.h)
#include "loop.h"
#include "partition_policy.h"


// Steps `n` times, all allocations counted; adds the partition events of those steps to c.
static long count_steps(const pt_model *m, pt_data *d, int n, pt_counters *c) {
  long total = 0;
  pt_counters before, after;
  pt_get_counters(d, &before);
  for (int i = 0; i < n; i++) {
    count_alloc_n = 0;
    count_alloc_on = 1;
    int rc = pt_step(m, d);
    count_alloc_on = 0;
    total += count_alloc_n;
    CHECK(rc == PT_OK, "step %d: %s", i, pt_strerror(rc));
    if (rc) break;
  }
  pt_get_counters(d, &after);
  c->repartitions = after.repartitions - before.repartitions;
  c->qr_switches = after.qr_switches - before.qr_switches;
  c->lu_switches = after.lu_switches - before.lu_switches;
  c->qr_steps = after.qr_steps - before.qr_steps;
  return total;
}

static pt_model *load(const char *root, const char *file) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/configs/models/%s", root, file);
  pt_model *m = NULL;
  pt_error err;
  if (pt_model_load_file(path, NULL, &m, &err)) {
    CHECK(0, "%s: %s", file, err.msg);
    return NULL;
  }
  return m;
}

// The Panda released from a bent pose: it falls and swings (its partition is rebuilt often).
static int panda_pose(const pt_model *m, pt_data *d) {
  const double q[7] = {0, 0.5, 0, -0.5, 0, 0.5, 0};
  pt_assign pos[7];
  char name[32];
  for (int j = 0; j < 7; j++) {
    snprintf(name, sizeof(name), "panda_joint%d", j + 1);
    pos[j].coord = pt_coord_index(m, name);
    pos[j].value = q[j];
  }
  pt_error err;
  int rc = pt_set_state(m, d, pos, 7, NULL, 0, &err);
  CHECK(rc == PT_OK, "panda pose: %s", err.msg);
  return rc;
}

// Same state, bit for bit: body poses and velocities, coordinates and rates, time.
static int same_state(const pt_model *m, const pt_data *a, const pt_data *b) {
  const size_t nc = (size_t)pt_model_ncoord(m);
  int same = pt_time(a) == pt_time(b) &&
             memcmp(pt_coords(a), pt_coords(b), sizeof(double) * nc) == 0 &&
             memcmp(pt_coord_rates(a), pt_coord_rates(b), sizeof(double) * nc) == 0;
  for (int k = 0; k < pt_model_nbody(m); k++)
    same = same && memcmp(pt_body_pose(a, k), pt_body_pose(b, k), 7 * sizeof(double)) == 0 &&
           memcmp(pt_body_velocity(a, k), pt_body_velocity(b, k), 6 * sizeof(double)) == 0;
  return same;
}

// A copy taken after n1 steps, then both stepped n2 steps: the copy's trajectory must be the
// original's, bit for bit, and the copy itself allocates nothing.
// With want_qr, stepping goes on past n1 until the hybrid mode is in QR.
// prep: the destination is set to the same mode first; without it, a tree's destination
// takes its dense Cartesian work in the copy (one allocation, data.c) when the source has it.
static void copy_continues(const char *root, const char *file, int mode, int pose, int n1,
                           int n2, int want_qr, int prep) {
  pt_model *m = load(root, file);
  if (!m) return;
  pt_data *d = pt_data_new(m), *c = pt_data_new(m);
  pt_set_partition_mode(d, mode);
  if (prep) pt_set_partition_mode(c, mode);  // a slot made for this mode
  if (pose && panda_pose(m, d)) goto done;
  for (int i = 0; i < n1 || (want_qr && !pt_partition_method(d) && i < 10000); i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "%s: step %d: %s", file, i, pt_strerror(rc));
    if (rc) goto done;
  }
  count_alloc_n = 0;
  count_alloc_on = 1;
  int rc = pt_data_copy(m, c, d);
  count_alloc_on = 0;
  CHECK(rc == PT_OK, "%s: copy: %s", file, pt_strerror(rc));
  CHECK(count_alloc_n == (prep ? 0 : 1), "%s: the copy made %ld allocations", file,
        count_alloc_n);
  const int method = pt_partition_method(d);
  const long long at = (long long)pt_nstep(d);
  CHECK(!want_qr || method == 1, "%s: hybrid never went to QR", file);
  double maxdiff = 0;
  int differ = 0;
  for (int i = 0; i < n2 && !differ; i++) {
    int r1 = pt_step(m, d), r2 = pt_step(m, c);
    CHECK(r1 == PT_OK && r2 == r1, "%s: step %d after the copy: %d %d", file, i, r1, r2);
    if (r1 || r2) break;
    const int nc = pt_model_ncoord(m);
    differ = !same_state(m, d, c);
    for (int k = 0; k < nc; k++) maxdiff = fmax(maxdiff, fabs(pt_coords(d)[k] - pt_coords(c)[k]));
  }
  pt_counters ca, cb;
  pt_get_counters(d, &ca);
  pt_get_counters(c, &cb);
  CHECK(!differ, "%s (mode %d): the copy left the original's trajectory (max diff %.3g)", file,
        mode, maxdiff);
  CHECK(memcmp(&ca, &cb, sizeof(ca)) == 0, "%s: counters differ after the copy", file);
  printf("copy of %-22s mode %d (method %s at the copy, step %lld), then %d steps: "
         "bit-identical %s, rebuilds %lld, QR switches %lld\n", file, mode,
         method ? "QR" : "LU", at, n2,
         differ ? "NO" : "yes", (long long)ca.repartitions, (long long)ca.qr_switches);
done:
  pt_data_free(c);
  pt_data_free(d);
  pt_model_free(m);
}

// Joint limits (limits.c): a pendulum released onto a limit with restitution 0.5 takes
// impulses, bounces, lands and is held there with gravity pushing into it, then a torque pulls
// it off; with RK4 and ABM4 (restarted after each impulse). No step allocates.
static void limits_run(pt_integrator integ) {
  static const char text[] =
      "model: rod\ngravity: [0, 0, -9.81]\nsimulation: {restitution: 0.5}\n"
      "bodies:\n  - {name: rod, mass: 2, inertia: [0.2, 0.2, 0.001], position: [0, 0, -0.5]}\n"
      "joints:\n  - {name: hinge, type: revolute, body1: ground, body2: rod, point: [0, 0, 0],\n"
      "     axis: [0, 1, 0], limits: [0.2, 1.2]}\n"
      "actuators:\n  - {name: tau, type: joint_torque, joint: hinge}\n";
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_string(text, strlen(text), 1, "rod.yaml", NULL, &m, &err)) {
    CHECK(0, "rod: %s", err.msg);
    return;
  }
  pt_data *d = pt_data_new(m);
  pt_set_integrator(d, integ);
  pt_assign a = {0, 1.0};
  pt_set_state(m, d, &a, 1, NULL, 0, &err);
  pt_counters c;
  long allocs = count_steps(m, d, 3000, &c);
  pt_get_counters(d, &c);
  const int held = pt_joint_limit_state(d, 0, NULL, NULL);
  pt_set_input(m, d, 0, 20.0);
  allocs += count_steps(m, d, 200, &c);
  printf("%-26s %s, 3200 steps: %ld allocations; %lld limit impacts, held %d, then pulled off\n",
         "rod with limits", pt_integrator_name(integ), allocs, (long long)c.limit_impacts, held);
  CHECK(allocs == 0, "limits: %ld allocations", allocs);
  CHECK(c.limit_impacts >= 2 && held == -1, "impacts %lld, held %d", (long long)c.limit_impacts,
        held);
  CHECK(pt_joint_limit_state(d, 0, NULL, NULL) == 0, "still held after the pull");
  pt_data_free(d);
  pt_model_free(m);
}

// Joint limits on a closed loop (partition/loop_limits.c): an upright parallelogram four-bar
// whose crank is limited to [0.1, 0.6], restitution 0.5, thrown toward the top onto 0.1: it
// bounces, gravity pulls it off, it falls onto 0.6, bounces, lands and is held there; in
// hybrid (LU) and QR partitioning, RK4 and ABM4. No step allocates.
static void loop_limits_run(pt_integrator integ, int mode) {
  static const char text[] =
      "model: fourbar\ngravity: [0, 0, -9.81]\nsimulation: {restitution: 0.5}\nbodies:\n"
      "  - {name: crank, mass: 1, inertia: [0.08, 0.08, 0.0001], position: [0, 0, 0.5]}\n"
      "  - {name: coupler, mass: 1, inertia: [0.0001, 0.08, 0.08], position: [0.5, 0, 1]}\n"
      "  - {name: rocker, mass: 1, inertia: [0.08, 0.08, 0.0001], position: [1, 0, 0.5]}\n"
      "joints:\n"
      "  - {name: A, type: revolute, body1: ground, body2: crank, point: [0, 0, 0],\n"
      "     axis: [0, 1, 0], limits: [0.1, 0.6]}\n"
      "  - {name: B, type: revolute, body1: crank, body2: coupler, point: [0, 0, 1],\n"
      "     axis: [0, 1, 0]}\n"
      "  - {name: C, type: revolute, body1: coupler, body2: rocker, point: [1, 0, 1],\n"
      "     axis: [0, 1, 0]}\n"
      "  - {name: D, type: revolute, body1: ground, body2: rocker, point: [1, 0, 0],\n"
      "     axis: [0, 1, 0]}\n";
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_string(text, strlen(text), 1, "fourbar.yaml", NULL, &m, &err)) {
    CHECK(0, "fourbar: %s", err.msg);
    return;
  }
  pt_data *d = pt_data_new(m);
  pt_set_integrator(d, integ);
  CHECK(pt_set_partition_mode(d, mode) == PT_OK, "partition mode");
  pt_assign a = {pt_coord_index(m, "A"), 0.5}, v = {a.coord, -2.0};
  CHECK(pt_set_state(m, d, &a, 1, &v, 1, &err) == PT_OK, "set state: %s", err.msg);
  CHECK(pt_step(m, d) == PT_OK, "first step");  // the partition's first build, outside the count
  pt_counters c;
  long allocs = count_steps(m, d, 3000, &c);
  pt_get_counters(d, &c);
  const int held = pt_joint_limit_state(d, 0, NULL, NULL);
  printf("%-26s %s %s, 3000 steps: %ld allocations; %lld limit impacts, held %d\n",
         "four-bar with limits", pt_integrator_name(integ), mode == PT_MODE_QR ? "QR" : "hybrid",
         allocs, (long long)c.limit_impacts, held);
  CHECK(allocs == 0, "loop limits: %ld allocations", allocs);
  CHECK(c.limit_impacts >= 3 && held == 1, "impacts %lld, held %d", (long long)c.limit_impacts,
        held);
  pt_data_free(d);
  pt_model_free(m);
}

// Couplers (coupler.c): a two-link arm whose elbow follows its shoulder (multiplier -2) and a
// third link on a hinge that follows the shoulder with an offset, the shoulder limited and
// driven onto its limit: coupler rows and limit rows held together, no allocation.
static void coupler_run(pt_integrator integ) {
  static const char text[] =
      "model: coupled\ngravity: [0, 0, -9.81]\n"
      "bodies:\n"
      "  - {name: a, mass: 1, inertia: [0.0001, 0.0208333, 0.0208333], position: [0.25, 0, 0]}\n"
      "  - {name: b, mass: 1, inertia: [0.0001, 0.0208333, 0.0208333], position: [0.75, 0, 0]}\n"
      "  - {name: c, mass: 0.5, inertia: [0.0001, 0.01, 0.01], position: [0.25, 0.3, 0]}\n"
      "joints:\n"
      "  - {name: shoulder, type: revolute, body1: ground, body2: a, point: [0, 0, 0],"
      " axis: [0, 1, 0], limits: [-0.4, 0.4]}\n"
      "  - {name: elbow, type: revolute, body1: a, body2: b, point: [0.5, 0, 0], axis: [0, 1, 0]}\n"
      "  - {name: side, type: revolute, body1: ground, body2: c, point: [0, 0.3, 0],"
      " axis: [0, 1, 0]}\n"
      "actuators:\n  - {name: tau, type: joint_torque, joint: shoulder}\n"
      "couplers:\n"
      "  - {name: k1, follower: elbow, leader: shoulder, multiplier: -2}\n"
      "  - {name: k2, follower: side, leader: shoulder, multiplier: 1, offset: 0.1}\n";
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_string(text, strlen(text), 1, "coupled.yaml", NULL, &m, &err)) {
    CHECK(0, "coupled: %s", err.msg);
    return;
  }
  pt_data *d = pt_data_new(m);
  pt_set_integrator(d, integ);
  pt_counters c;
  long allocs = count_steps(m, d, 2000, &c);
  pt_set_input(m, d, 0, -30.0);
  allocs += count_steps(m, d, 500, &c);
  pt_get_counters(d, &c);
  const double *q = pt_coords(d);
  printf("%-26s %s, 2500 steps: %ld allocations; %lld limit impacts, elbow + 2 shoulder %.2g\n",
         "arm with couplers", pt_integrator_name(integ), allocs, (long long)c.limit_impacts,
         q[1] + 2 * q[0]);
  CHECK(allocs == 0, "couplers: %ld allocations", allocs);
  CHECK(c.limit_impacts >= 1, "the shoulder never reached its limit");
  CHECK(fabs(q[1] + 2 * q[0]) < 1e-10 && fabs(q[2] - q[0] - 0.1) < 1e-10,
        "followers off their couplers: %g %g %g", q[0], q[1], q[2]);
  pt_data_free(d);
  pt_model_free(m);
}

// Control elements of every type (issue 26) on a pendulum, on its tree partition (hybrid) and
// on the Cartesian LU partition: evaluated in every stage and integrated beside the
// mechanism, an input and a gain changed between steps, no allocation.
static void controls_run(pt_integrator integ, int mode) {
  static const char text[] =
      "model: controlled\n"
      "bodies:\n"
      "  - {name: rod, mass: 1, inertia: [0.0833, 0.0833, 0.0001], position: [0, 0, -0.5]}\n"
      "joints:\n"
      "  - {name: hinge, type: revolute, body1: ground, body2: rod, point: [0, 0, 0],"
      " axis: [0, 1, 0]}\n"
      "forces:\n"
      "  - {name: drag, type: expression_force, body: rod, point: [0, 0, -1],"
      " direction: [1, 0, 0], expr: -0.1 * tip_v * abs(tip_v)}\n"
      "controls:\n"
      "  - {name: th, type: measure, coordinate: hinge}\n"
      "  - {name: w, type: measure, rate: hinge}\n"
      "  - {name: tip_v, type: measure, body: rod, quantity: velocity, axis: x}\n"
      "  - {name: wy, type: measure, body: rod, quantity: angular_velocity, axis: y}\n"
      "  - {name: zc, type: measure, body: rod, quantity: position, axis: z}\n"
      "  - {name: ref, type: input}\n"
      "  - {name: e, type: sum, inputs: [ref, th], signs: [+, -]}\n"
      "  - {name: c, type: pid, input: e, kp: 8, ki: 2, kd: 2, tf: 0.02, limit: 6}\n"
      "  - {name: g, type: gain, input: c, k: 0.5}\n"
      "  - {name: s, type: saturation, input: g, lower: -2, upper: 2}\n"
      "  - {name: f, type: transfer_function, input: s, num: [1], den: [0.01, 1]}\n"
      "  - {name: obs, type: state_space, inputs: [th, wy], A: [[-2, 0], [0, -3]],"
      " B: [[2, 0], [0, 3]], C: [[1, 0], [0, 1]]}\n"
      "  - {name: o, type: ode, states: [p], derivatives: ['zc + 0.5 - p + 0 * t']}\n"
      "  - {name: x, type: expression, expr: 'f + 0.01 * tanh(obs.y1) + 0 * o.p + 0 * w'}\n"
      "actuators:\n"
      "  - {name: tau, type: joint_torque, joint: hinge, limit: 5, source: x}\n";
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_string(text, strlen(text), 1, "controlled.yaml", NULL, &m, &err)) {
    CHECK(0, "controlled: %s", err.msg);
    return;
  }
  pt_data *d = pt_data_new(m);
  pt_set_integrator(d, integ);
  CHECK(pt_set_partition_mode(d, mode) == PT_OK, "mode %d", mode);
  pt_set_input(m, d, pt_input_index(m, "ref"), 0.6);
  pt_counters c;
  long allocs = count_steps(m, d, 1000, &c);
  CHECK(pt_set_param(m, d, pt_param_index(m, "c.kp"), 12.0, &err) == PT_OK, "%s", err.msg);
  pt_set_input(m, d, pt_input_index(m, "ref"), -0.3);
  allocs += count_steps(m, d, 1000, &c);
  const double th = pt_coords(d)[0];
  printf("%-26s %s mode %d, 2000 steps: %ld allocations; hinge %.4f (asked -0.3)\n",
         "controlled pendulum", pt_integrator_name(integ), mode, allocs, th);
  CHECK(allocs == 0, "controls: %ld allocations", allocs);
  CHECK(th < -0.05 && th > -0.4, "the loop did not take the pendulum towards -0.3: %g", th);
  pt_data_free(d);
  pt_model_free(m);
}

// Seven links falling onto limits [-0.3, 0.3] on every joint: several limits hit in one step
// and held together (the coupled complementarity problems), no allocation.
static void limits_chain(void) {
  char text[8192];
  CHECK(chain_yaml_text(text, sizeof(text), 7, 0.3) == 0, "chain text");   // tests/common
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_string(text, strlen(text), 1, "chain.yaml", NULL, &m, &err)) {
    CHECK(0, "chain: %s", err.msg);
    return;
  }
  pt_data *d = pt_data_new(m);
  pt_counters c;
  long allocs = count_steps(m, d, 2000, &c);
  pt_get_counters(d, &c);
  int held = 0;
  for (int j = 0; j < 7; j++) held += pt_joint_limit_state(d, j, NULL, NULL) != 0;
  printf("%-26s rk4, 2000 steps: %ld allocations; %lld limit impacts, %d held at the end\n",
         "chain of 7 with limits", allocs, (long long)c.limit_impacts, held);
  CHECK(allocs == 0, "limits chain: %ld allocations", allocs);
  CHECK(c.limit_lcp_unsolved == 0, "limits chain: %lld problems unsolved by the pivoting",
        (long long)c.limit_lcp_unsolved);
  CHECK(c.limit_impacts >= 10 && held >= 2, "impacts %lld, held %d", (long long)c.limit_impacts,
        held);
  pt_data_free(d);
  pt_model_free(m);
}

// The iiwa's fast spin (issue 10, item 8): RK4 steps taken as substeps allocate nothing.
static void spin_substeps(const char *root) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/configs/models/iiwa14.urdf", root);
  pt_load_options opt = {.no_joint_limits = 1};
  pt_model *m = NULL;
  pt_error err;
  if (pt_model_load_file(path, &opt, &m, &err)) {
    CHECK(0, "iiwa14.urdf: %s", err.msg);
    return;
  }
  int in[7];
  for (int j = 0; j < 7; j++) {
    char name[32];
    snprintf(name, sizeof(name), "iiwa_joint_%d", j + 1);
    in[j] = pt_input_index(m, name);
    CHECK(in[j] >= 0, "iiwa14: no input %s", name);
    if (in[j] < 0) {
      pt_model_free(m);
      return;
    }
  }
  pt_data *d = pt_data_new(m);
  pt_set_dt(d, 1e-3);
  pt_set_integrator(d, PT_INT_RK4);
  long total = 0;
  for (int i = 0; i < 2000; i++) {
    for (int j = 0; j < 7; j++) pt_set_input(m, d, in[j], 2 * sin(M_PI * i * 1e-3 + j));
    count_alloc_n = 0;
    count_alloc_on = 1;
    const int rc = pt_step(m, d);
    count_alloc_on = 0;
    total += count_alloc_n;
    CHECK(rc == PT_OK, "iiwa spin, step %d: %s", i, pt_strerror(rc));
    if (rc) break;
  }
  pt_counters c;
  pt_get_counters(d, &c);
  printf("iiwa spin: %lld RK4 substeps over 2000 steps, %ld allocations\n",
         (long long)c.spin_substeps, total);
  CHECK(c.spin_substeps > 0, "iiwa spin: no step was taken as substeps");
  CHECK(total == 0, "iiwa spin: %ld allocations in 2000 steps", total);
  pt_data_free(d);
  pt_model_free(m);
}

// Closed loops in joint coordinates: `steps` counted steps of `file` in the hybrid mode, with
// the inputs changed every step when `driven`, the model integrated in joint coordinates all
// along. expect: 1 rebuilds and LU/QR switches in the counted steps.
static void loop_run(const char *root, const char *file, int steps, int driven, int expect) {
  pt_model *m = load(root, file);
  if (!m) return;
  pt_data *d = pt_data_new(m);
  CHECK(pt_loop_on(d), "%s: not in joint coordinates", file);
  long allocs = 0;
  int off = 0;
  pt_counters c0, c1;
  pt_get_counters(d, &c0);
  for (int i = 0; i < steps; i++) {
    if (driven)
      for (int k = 0; k < pt_model_ninput(m); k++) pt_set_input(m, d, k, 50 * sin(0.01 * i + k));
    count_alloc_n = 0;
    count_alloc_on = 1;
    const int rc = pt_step(m, d);
    count_alloc_on = 0;
    allocs += count_alloc_n;
    off |= !pt_loop_on(d);
    CHECK(rc == PT_OK, "%s step %d: %s", file, i, pt_strerror(rc));
    if (rc) break;
  }
  pt_get_counters(d, &c1);
  printf("%-26s joint coordinates%s, %d steps: %ld allocations; %lld rebuilds, %lld LU->QR, "
         "%lld QR->LU\n", file, driven ? ", inputs changed every step" : "", steps, allocs,
         (long long)(c1.repartitions - c0.repartitions), (long long)(c1.qr_switches - c0.qr_switches),
         (long long)(c1.lu_switches - c0.lu_switches));
  CHECK(allocs == 0, "%s: %ld allocations", file, allocs);
  CHECK(!off && c1.cartesian_fallbacks == 0, "%s left its joint coordinates", file);
  if (expect)
    CHECK(c1.repartitions > c0.repartitions && c1.qr_switches > c0.qr_switches &&
              c1.lu_switches > c0.lu_switches,
          "%s: rebuilds and switches both ways expected", file);
  pt_data_free(d);
  pt_model_free(m);
}

// The Cartesian partitions standing in for a closed loop's joint-coordinate ones (as where
// neither can be built or a step fails with both: an exactly singular state) on the four-bar
// through its singular positions: they step, and after 1000 calm steps the joint coordinates
// come back; none of it allocates.
static void loop_fallback(const char *root) {
  pt_model *m = load(root, "fourbar_singular.yaml");
  if (!m) return;
  pt_data *d = pt_data_new(m);
  CHECK(pt_step(m, d) == PT_OK, "first step");
  count_alloc_n = 0;
  count_alloc_on = 1;
  const int rc = pt_policy_cartesian(m, d);
  count_alloc_on = 0;
  long allocs = count_alloc_n;
  const int stood_in = rc == PT_OK && !pt_loop_on(d);
  pt_counters c;
  allocs += count_steps(m, d, 1500, &c);
  pt_get_counters(d, &c);
  printf("four-bar: Cartesian stand-in %s, back in joint coordinates within 1500 steps %s, "
         "%ld allocations\n", stood_in ? "yes" : "NO", pt_loop_on(d) ? "yes" : "NO", allocs);
  CHECK(stood_in && c.cartesian_fallbacks == 1, "the Cartesian partitions did not stand in");
  CHECK(pt_loop_on(d), "the joint coordinates never came back");
  CHECK(allocs == 0, "fallback: %ld allocations", allocs);
  pt_data_free(d);
  pt_model_free(m);
}

int main(int argc, char **argv) {
  count_alloc_install();
  const char *root = argc > 1 ? argv[1] : ".";
  // what each counted run must show: 0 nothing asserted, 1 no rebuild (a tree in hybrid mode:
  // the joint coordinates are the independent set), 2 rebuilds (an arm in LU mode: Cartesian
  // independent coordinates), 3 rebuilds and switches both ways (the singular four-bar)
  const struct {
    const char *file;
    int mode, expect;
  } runs[] = {{"chain7.yaml", PT_MODE_HYBRID, 1},        {"chain7.yaml", PT_MODE_LU, 2},
              {"fourbar_parallelogram.yaml", PT_MODE_HYBRID, 0},
              {"double_pendulum.yaml", PT_MODE_HYBRID, 1}, {"slider_crank.yaml", PT_MODE_HYBRID, 0},
              {"door.yaml", PT_MODE_HYBRID, 0},           {"panda.urdf", PT_MODE_HYBRID, 1},
              {"panda.urdf", PT_MODE_LU, 2},              {"fourbar_singular.yaml", PT_MODE_HYBRID, 3}};
  // the counter must see an allocation at all (or this test could never fail)
  count_alloc_n = 0;
  count_alloc_on = 1;
  void *volatile probe = malloc(64);   // volatile: the call may not be optimised away
  count_alloc_on = 0;
  CHECK(count_alloc_n == 1, "the counting allocator did not count (%ld)", count_alloc_n);
  free(probe);
  limits_run(PT_INT_RK4);
  limits_run(PT_INT_ABM4);
  limits_chain();
  loop_limits_run(PT_INT_RK4, PT_MODE_HYBRID);
  loop_limits_run(PT_INT_ABM4, PT_MODE_HYBRID);
  loop_limits_run(PT_INT_RK4, PT_MODE_QR);
  coupler_run(PT_INT_RK4);
  coupler_run(PT_INT_ABM4);
  controls_run(PT_INT_RK4, PT_MODE_HYBRID);
  controls_run(PT_INT_ABM4, PT_MODE_HYBRID);
  controls_run(PT_INT_EULER, PT_MODE_HYBRID);
  controls_run(PT_INT_RK4, PT_MODE_LU);
  controls_run(PT_INT_ABM4, PT_MODE_QR);
  for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
    const char *file = runs[k].file;
    pt_model *m = load(root, file);
    if (!m) continue;
    pt_data *d = pt_data_new(m);
    pt_set_partition_mode(d, runs[k].mode);
    const int panda = strcmp(file, "panda.urdf") == 0;
    if (panda) panda_pose(m, d);
    pt_set_input(m, d, 0, 0.5);  // inputs change between steps too (if the model has any)
    const int n = panda || strcmp(file, "fourbar_singular.yaml") == 0 ? 3000 : 2000;
    pt_counters c;
    long allocs = count_steps(m, d, n, &c);
    printf("%-26s mode %d, %d steps: %ld allocations; %lld rebuilds, %lld LU->QR, %lld QR->LU, "
           "%lld QR steps\n", file, runs[k].mode, n, allocs, (long long)c.repartitions,
           (long long)c.qr_switches, (long long)c.lu_switches, (long long)c.qr_steps);
    CHECK(allocs == 0, "%s: %ld allocations in %d steps", file, allocs, n);
    if (runs[k].expect == 1)
      CHECK(c.repartitions == 0, "%s: %lld rebuilds of a tree's partition", file,
            (long long)c.repartitions);
    // the counted steps must contain what used to allocate
    if (runs[k].expect >= 2)
      CHECK(c.repartitions > 0, "%s: no partition rebuild in the counted steps", file);
    if (runs[k].expect == 3)
      CHECK(c.qr_switches > 0 && c.lu_switches > 0, "%s: LU->QR %lld, QR->LU %lld: both expected",
            file, (long long)c.qr_switches, (long long)c.lu_switches);
    pt_data_free(d);
    pt_model_free(m);
  }
  loop_run(root, "stewart.yaml", 2000, 1, 0);
  loop_run(root, "delta.yaml", 2000, 0, 0);
  loop_run(root, "fivebar_chain.yaml", 3000, 0, 1);
  loop_fallback(root);
  copy_continues(root, "fivebar_chain.yaml", PT_MODE_HYBRID, 0, 200, 1500, 0, 1);
  copy_continues(root, "fivebar_chain.yaml", PT_MODE_HYBRID, 0, 100, 1500, 1, 1);
  copy_continues(root, "stewart.yaml", PT_MODE_HYBRID, 0, 200, 1000, 0, 1);
  copy_continues(root, "fourbar_singular.yaml", PT_MODE_LU, 0, 300, 500, 0, 1);
  copy_continues(root, "fourbar_singular.yaml", PT_MODE_QR, 0, 300, 500, 0, 1);
  copy_continues(root, "fourbar_singular.yaml", PT_MODE_HYBRID, 0, 450, 1500, 0, 1);
  copy_continues(root, "fourbar_singular.yaml", PT_MODE_HYBRID, 0, 100, 1500, 1, 1);
  copy_continues(root, "panda.urdf", PT_MODE_HYBRID, 1, 500, 1000, 0, 1);
  copy_continues(root, "panda.urdf", PT_MODE_LU, 1, 500, 1000, 0, 1);
  copy_continues(root, "panda.urdf", PT_MODE_QR, 1, 500, 1000, 0, 1);
  copy_continues(root, "panda.urdf", PT_MODE_LU, 1, 500, 1000, 0, 0);
  spin_substeps(root);
  return finish("step_allocates_nothing");
}
