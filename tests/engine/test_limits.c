// test_limits.c: joint limits on a tree (issue 11, item 4; src/core/limits.c).
// A physical pendulum (rod of 2 kg, 1 m, hinge at its end) released toward a limit stops at it
// (restitution 0: no overshoot, energy never increases, then it swings between the bound and
// the mirror angle its remaining energy reaches); with restitution 0.5 the rate after the
// impulse is -0.5 x the rate before it; a pendulum resting on a limit with gravity pushing it
// in stays there, held with zero acceleration, and leaves when a torque pulls it away; a
// two-link arm whose two limits are hit in the same step stays on or inside both bounds with
// no approaching rate; a prismatic joint; the option that turns enforcement off; every
// refusal and warning with its message. The columns H^-1 e_i from the articulated inertias
// (pt_tree_minv) against the difference of two articulated-body passes, and a held stage's
// accelerations (pt_tree_dynamics) against a second pass with the reactions applied.
#include "chain_urdf.h"
#include "check.h"
#include "engine.h"
#include "ptu.h"

#define ROD                                                                                   \
  "model: rod\n"                                                                              \
  "gravity: [0, 0, -9.81]\n"                                                                  \
  "bodies:\n"                                                                                 \
  "  - name: rod\n"                                                                           \
  "    mass: 2.0\n"                                                                           \
  "    inertia: [0.16666666666666666, 0.16666666666666666, 0.001]\n"                          \
  "    position: [0, 0, -0.5]\n"                                                              \
  "joints:\n"                                                                                 \
  "  - name: hinge\n"                                                                         \
  "    type: revolute\n"                                                                      \
  "    body1: ground\n"                                                                       \
  "    body2: rod\n"                                                                          \
  "    point: [0, 0, 0]\n"                                                                    \
  "    axis: [0, 1, 0]\n"

static const double mass = 2.0, g = 9.81, dist = 0.5;
static const double JO = 0.16666666666666666 + 2.0 * 0.5 * 0.5;  // about the hinge

static pt_model *load_text(const char *text, pt_error *err) {
  pt_model *m = NULL;
  if (pt_model_load_string(text, strlen(text), 1, "test.yaml", NULL, &m, err)) return NULL;
  return m;
}

static pt_model *rod(const char *sim, const char *limits, const char *extra) {
  char text[4096];
  snprintf(text, sizeof(text), "%s    limits: %s\n%s%s", ROD, limits, extra, sim);
  pt_error err = {0};
  pt_model *m = load_text(text, &err);
  if (!m) {
    printf("FAIL load: %s\n", err.msg);
    exit(1);
  }
  return m;
}

static void set_angle(const pt_model *m, pt_data *d, double a, double rate) {
  pt_error err = {0};
  pt_assign p = {pt_coord_index(m, "hinge"), a}, v = {p.coord, rate};
  CHECK(pt_set_state(m, d, &p, 1, &v, 1, &err) == PT_OK, "set state: %s", err.msg);
}

// Released at 1 rad toward the lower bound -0.5 with restitution 0.
static void stop_at_limit(pt_integrator integ) {
  pt_model *m = rod("", "[-0.5, 1.2]", "");
  pt_data *d = pt_data_new(m);
  pt_set_integrator(d, integ);
  set_angle(m, d, 1.0, 0);
  CHECK(pt_model_limits_enforced(m), "limits not enforced");
  double e_prev = energy(d), rise = 0, over = 0, max_after = -1, res = 0;
  int hit = -1;
  for (int i = 0; i < 3000; i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "step %d: %s", i, pt_strerror(rc));
    if (rc) break;
    const double th = pt_coords(d)[0], e = energy(d);
    over = fmax(over, fmax(-0.5 - th, th - 1.2));
    rise = fmax(rise, e - e_prev);
    e_prev = e;
    res = fmax(res, pt_residual_position(d));
    if (hit < 0 && pt_joint_limit_state(d, 0, NULL, NULL) != 0) hit = i;
    if (hit >= 0 && i > hit) max_after = fmax(max_after, th);
  }
  pt_counters c;
  pt_get_counters(d, &c);
  CHECK(hit >= 0 && c.limit_impacts >= 1, "the limit was never hit (impacts %lld)",
        (long long)c.limit_impacts);
  CHECK(over <= 1e-6, "overshoot %.3g rad", over);
  CHECK(rise <= 1e-9, "energy rose by %.3g J in a step", rise);
  // after the impact the rod is at rest at -0.5: it swings up to +0.5 (same height)
  CHECK_CLOSE(max_after, 0.5, 1e-6, "swing after the impact");
  CHECK(res <= 1e-10, "position residual %.3g", res);
  printf("%s: restitution 0: overshoot %.3g rad, largest energy rise per step %.3g J, swing "
         "after impact to %.9f (0.5 expected), impacts %lld\n",
         pt_integrator_name(integ), over, rise, max_after, (long long)c.limit_impacts);
  pt_data_free(d);
  pt_model_free(m);
}

// Restitution 0.5: the rate after the impulse is -0.5 x the rate before it.
static void rebound(void) {
  pt_model *m = rod("simulation: {restitution: 0.5}\n", "[-0.5, 1.2]", "");
  CHECK(pt_model_restitution(m) == 0.5, "restitution %g", pt_model_restitution(m));
  pt_data *d = pt_data_new(m);
  set_angle(m, d, 1.0, 0);
  double pre = 0, post = 0;
  int i = 0;
  for (; i < 3000; i++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", i);
    pt_counters c;
    pt_get_counters(d, &c);
    if (c.limit_impacts) break;
  }
  pt_joint_limit_state(d, 0, &pre, &post);
  const double ratio = -post / pre;
  CHECK(pre < 0, "impact rate %g", pre);
  CHECK(fabs(ratio - 0.5) <= 1e-6, "rebound ratio %.17g", ratio);
  CHECK(pt_coord_rates(d)[0] == post, "rate after the step %.17g vs %.17g", pt_coord_rates(d)[0],
        post);
  CHECK(pt_joint_limit_state(d, 0, NULL, NULL) == 0, "limit held after a rebound");
  // the impact speed at the bound, from energy: J w^2 / 2 = m g d (cos(0.5) - cos(1)); the rate
  // taken is at the step's end, past the bound by at most one step's travel
  const double w = sqrt(2 * mass * g * dist * (cos(0.5) - cos(1.0)) / JO);
  CHECK(fabs(-pre - w) <= 2e-2 * w, "impact speed %.9f vs %.9f at the bound", -pre, w);
  printf("restitution 0.5: impact rate %.12f (at the bound from energy %.12f, rel. diff %.2e), "
         "after %.12f, ratio %.15f (|ratio - 0.5| = %.2e)\n",
         pre, -w, fabs(-pre - w) / w, post, ratio, fabs(ratio - 0.5));
  // then it swings away and comes back: no approaching rate ever survives a step's end
  double over = 0;
  for (int k = 0; k < 3000; k++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", k);
    over = fmax(over, -0.5 - pt_coords(d)[0]);
  }
  CHECK(over <= 1e-6, "overshoot after rebounds %.3g", over);
  pt_data_free(d);
  pt_model_free(m);
}

// Resting on the lower bound 0.2 with gravity pushing into it (the rod hangs at 0): held
// there with zero acceleration; a torque of 2 m g d sin(0.2) pulling away releases it.
static void rest_and_release(pt_integrator integ) {
  pt_model *m = rod("", "[0.2, 1.2]",
                    "actuators:\n  - {name: tau, type: joint_torque, joint: hinge}\n");
  pt_data *d = pt_data_new(m);
  pt_set_integrator(d, integ);
  set_angle(m, d, 0.5, 0);
  double dev = 0, acc = 0, rate = 0;
  for (int i = 0; i < 2000; i++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", i);
    if (i >= 1000) {  // well after the impact
      dev = fmax(dev, fabs(pt_coords(d)[0] - 0.2));
      acc = fmax(acc, fabs(pt_coord_accels(d)[0]));
      rate = fmax(rate, fabs(pt_coord_rates(d)[0]));
      CHECK(pt_joint_limit_state(d, 0, NULL, NULL) == -1, "not held at step %d", i);
    }
  }
  CHECK(dev <= 1e-9, "resting angle moved by %.3g", dev);
  CHECK(acc <= 1e-9, "held acceleration %.3g", acc);
  CHECK(rate <= 1e-9, "held rate %.3g", rate);
  // pulled away: released, accelerates as the free pendulum at 0.2 with the torque
  const double tau = 2 * mass * g * dist * sin(0.2);
  pt_set_input(m, d, 0, tau);
  CHECK(pt_step(m, d) == PT_OK, "step after the torque");
  const double a_free = (tau - mass * g * dist * sin(0.2)) / JO;
  CHECK(pt_joint_limit_state(d, 0, NULL, NULL) == 0, "still held with a torque pulling away");
  CHECK(pt_coords(d)[0] > 0.2, "did not move away: %.17g", pt_coords(d)[0]);
  CHECK(fabs(pt_coord_accels(d)[0] - a_free) <= 1e-3 * a_free, "acceleration away %.9g vs %.9g",
        pt_coord_accels(d)[0], a_free);
  for (int i = 0; i < 200; i++) CHECK(pt_step(m, d) == PT_OK, "step %d", i);
  CHECK(pt_coords(d)[0] > 0.25, "angle %.9g after 0.2 s pulled away", pt_coords(d)[0]);
  printf("%s: held at 0.2: max |angle - 0.2| %.3g, |acc| %.3g, |rate| %.3g; released, "
         "acceleration %.9f (free %.9f)\n",
         pt_integrator_name(integ), dev, acc, rate, a_free, a_free);
  pt_data_free(d);
  pt_model_free(m);
}

// Two links in the horizontal plane (no gravity), both limits hit in the same step.
static const char *arm2 =
    "model: arm2\n"
    "gravity: [0, 0, 0]\n"
    "bodies:\n"
    "  - {name: l1, mass: 1.0, inertia: [0.01, 0.1, 0.1], position: [0.5, 0, 0]}\n"
    "  - {name: l2, mass: 1.0, inertia: [0.01, 0.1, 0.1], position: [1.5, 0, 0]}\n"
    "joints:\n"
    "  - {name: j1, type: revolute, body1: ground, body2: l1, point: [0, 0, 0], axis: [0, 0, 1],\n"
    "     limits: [-0.3, 0.3]}\n"
    "  - {name: j2, type: revolute, body1: l1, body2: l2, point: [1, 0, 0], axis: [0, 0, 1],\n"
    "     limits: [-0.4, 0.4]}\n";

static void two_limits(void) {
  pt_model *m = load_yaml(arm2);
  pt_data *d = pt_data_new(m);
  pt_error err = {0};
  // 0.5 ms from both upper bounds, rates 1 and 2 rad/s into them (the step is 1 ms)
  pt_assign p[2] = {{0, 0.3 - 0.0005}, {1, 0.4 - 0.0005}}, v[2] = {{0, 1.0}, {1, 1.0}};
  CHECK(pt_set_state(m, d, p, 2, v, 2, &err) == PT_OK, "%s", err.msg);
  const double ke0 = pt_energy_kinetic(d);
  CHECK(pt_step(m, d) == PT_OK, "impact step");
  pt_counters c;
  pt_get_counters(d, &c);
  const double *th = pt_coords(d), *w = pt_coord_rates(d);
  CHECK(c.limit_impacts >= 1, "no impact");
  CHECK(th[0] <= 0.3 && th[1] <= 0.4, "beyond a bound: %.17g %.17g", th[0], th[1]);
  CHECK(w[0] <= 1e-12 && w[1] <= 1e-12, "approaching rates after the impact %.3g %.3g", w[0],
        w[1]);
  const double ke1 = pt_energy_kinetic(d);
  CHECK(ke1 <= ke0, "kinetic energy rose: %.17g -> %.17g", ke0, ke1);
  // complementarity: a limit that took an impulse ends at rest on its bound
  int held = 0;
  for (int j = 0; j < 2; j++) {
    double pre, post;
    int s = pt_joint_limit_state(d, j, &pre, &post);
    held += s != 0;
    if (s) CHECK(fabs(post) <= 1e-12, "joint %d held with rate %.3g", j, post);
  }
  CHECK(held >= 1, "no limit held");
  double e_prev = pt_energy_kinetic(d), rise = 0, over = 0, res = 0;
  for (int i = 0; i < 1000; i++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", i);
    over = fmax(over, fmax(th[0] - 0.3, th[1] - 0.4));
    over = fmax(over, fmax(-0.3 - th[0], -0.4 - th[1]));
    rise = fmax(rise, pt_energy_kinetic(d) - e_prev);
    e_prev = pt_energy_kinetic(d);
    res = fmax(res, pt_residual_position(d));
  }
  CHECK(over <= 1e-9, "overshoot %.3g", over);
  CHECK(rise <= 1e-12, "kinetic energy rose by %.3g", rise);
  CHECK(res <= 1e-10, "position residual %.3g", res);
  printf("two limits at once: rates after %.3g %.3g, KE %.9f -> %.9f, held %d, then overshoot "
         "%.3g, energy rise %.3g, residual %.3g\n",
         w[0], w[1], ke0, ke1, held, over, rise, res);
  pt_data_free(d);
  pt_model_free(m);
}

// Seven links released from horizontal, every joint limited to [-0.3, 0.3]: they fall onto
// their limits and several end held at once. Held limits keep their rates at zero (the
// coupled complementarity problems solved exactly, not to a sweep count), the energy never
// rises (putting coordinates back on their bounds would raise it by O(h^2): limits.c takes
// that out of the kinetic energy), and no bound is passed.
static void chain(void) {
  char text[8192];
  CHECK(chain_yaml_text(text, sizeof(text), 7, 0.3) == 0, "chain text");   // tests/common
  pt_model *m = load_yaml(text);
  pt_data *d = pt_data_new(m);
  // at 0.5 ms RK4's own energy error on this fast chain is below 1e-10 J per step (at 1 ms,
  // without limits, it reaches 2e-5 J)
  pt_set_dt(d, 0.0005);
  double e_prev = energy(d), rise = 0, held_rate = 0, over = 0;
  int held_max = 0;
  for (int i = 0; i < 6000; i++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", i);
    rise = fmax(rise, energy(d) - e_prev);
    e_prev = energy(d);
    int held = 0;
    for (int j = 0; j < 7; j++) {
      over = fmax(over, fabs(pt_coords(d)[j]) - 0.3);
      if (pt_joint_limit_state(d, j, NULL, NULL)) {
        held++;
        held_rate = fmax(held_rate, fabs(pt_coord_rates(d)[j]));
      }
    }
    held_max = held > held_max ? held : held_max;
  }
  pt_counters c;
  pt_get_counters(d, &c);
  CHECK(held_max >= 4, "at most %d limits held at once", held_max);
  CHECK(held_rate <= 1e-9, "a held limit moves at %.3g", held_rate);
  CHECK(rise <= 1e-9, "energy rose by %.3g J in a step", rise);
  CHECK(over <= 0, "a bound passed by %.3g", over);
  printf("chain of 7: up to %d limits held at once, their rates <= %.2e, energy rise per step "
         "<= %.2e J, %lld impacts in 3 s\n", held_max, held_rate, rise,
         (long long)c.limit_impacts);
  pt_data_free(d);
  pt_model_free(m);
}

// The chain of 7 falling onto its limits: at a step's end holding at least two limits, (a)
// each column H^-1 e_i of pt_tree_minv equals the difference of two articulated-body passes
// with and without a unit force on coordinate i (the way the columns were computed before
// issue 23), and H^-1 is symmetric; (b) pt_tree_dynamics (the free pass plus the columns times
// the reactions) gives the accelerations and xdd of a second pass with the reactions applied.
static void columns(void) {
  char text[8192];
  CHECK(chain_yaml_text(text, sizeof(text), 7, 0.3) == 0, "chain text");
  pt_model *m = load_yaml(text);
  pt_data *d = pt_data_new(m), *a = pt_data_new(m), *b = pt_data_new(m);
  const int n = m->ndof;
  int held = 0;
  for (int i = 0; i < 4000 && held < 2; i++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", i);
    held = 0;
    for (int j = 0; j < 7; j++) held += pt_joint_limit_state(d, j, NULL, NULL) != 0;
  }
  CHECK(held >= 2, "only %d limits held", held);
  double rate[7], acc0[7], diff[7][7], col[7][7], f0[64];
  pt_tree_coords(m, d, NULL, rate, NULL);
  pt_forces(m, d);  // the applied forces alone (the evaluation's include the reactions)
  ptu_copy(f0, d->qfrc, m->nv);
  pt_tree_aba(m, d, rate, acc0);
  for (int i = 0; i < n; i++) {  // the difference of two passes
    const int c = m->joint_coord_adr[i];
    double jac[12], val, jdx;
    pt_measure(m, d, c, &val, jac, &jdx);
    pt_apply_coord_force(d, m->meas_body[2 * c], m->meas_body[2 * c + 1], jac, 1.0, d->qfrc);
    pt_tree_aba(m, d, rate, diff[i]);
    for (int k = 0; k < n; k++) diff[i][k] -= acc0[k];
    ptu_copy(d->qfrc, f0, m->nv);
  }
  pt_tree_aba(m, d, rate, acc0);
  double err = 0, asym = 0, scale = 0;
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < n; k++) col[i][k] = k == i;
    pt_tree_minv(m, d, col[i], col[i]);
    for (int k = 0; k < n; k++) scale = fmax(scale, fabs(diff[i][k]));
  }
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++) {
      err = fmax(err, fabs(col[i][k] - diff[i][k]));
      asym = fmax(asym, fabs(col[i][k] - col[k][i]));
    }
  CHECK(err <= 1e-12 * scale, "columns differ by %.3g (scale %.3g)", err, scale);
  CHECK(asym <= 1e-12 * scale, "H^-1 asymmetric by %.3g", asym);
  // (b): the same stage both ways
  pt_data_copy(m, a, d);
  pt_data_copy(m, b, d);
  double tha[7], thb[7];
  CHECK(pt_tree_dynamics(m, a, rate, tha) == 0, "pt_tree_dynamics");
  CHECK(pt_tree_hold(m, b, rate) >= 1, "no limit pushes");
  pt_tree_aba(m, b, rate, thb);
  double dth = 0, dx = 0, sth = 0, sx = 0;
  for (int i = 0; i < n; i++) {
    dth = fmax(dth, fabs(tha[i] - thb[i]));
    sth = fmax(sth, fabs(thb[i]));
  }
  for (int i = 0; i < m->nv; i++) {
    dx = fmax(dx, fabs(a->xdd[i] - b->xdd[i]));
    sx = fmax(sx, fabs(b->xdd[i]));
  }
  CHECK(dth <= 1e-12 * sth && dx <= 1e-12 * sx, "held stage: thetadd %.3g, xdd %.3g", dth, dx);
  printf("columns of H^-1 (chain of 7, %d limits held): against two passes %.2e (scale %.2e), "
         "asymmetry %.2e; held stage against a second pass: thetadd %.2e, xdd %.2e\n", held,
         err, scale, asym, dth, dx);
  pt_data_free(a);
  pt_data_free(b);
  pt_data_free(d);
  pt_model_free(m);
}

// A slider falling along -z onto its lower bound, restitution 0.5: rebounds at half the speed,
// then rests on the bound.
static void prismatic(void) {
  const char *text =
      "model: slider\n"
      "gravity: [0, 0, -9.81]\n"
      "simulation: {restitution: 0.5}\n"
      "bodies:\n"
      "  - {name: s, mass: 1.0, inertia: [0.1, 0.1, 0.1], position: [0, 0, 0]}\n"
      "joints:\n"
      "  - {name: slide, type: prismatic, body1: ground, body2: s, point: [0, 0, 0],\n"
      "     axis: [0, 0, 1], limits: [-0.1, 0.1]}\n";
  pt_model *m = load_yaml(text);
  pt_data *d = pt_data_new(m);
  double pre = 0, post = 0, low = 0;
  for (int i = 0; i < 2000; i++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", i);
    low = fmin(low, pt_coords(d)[0]);
    pt_counters c;
    pt_get_counters(d, &c);
    if (c.limit_impacts == 1 && pre == 0) pt_joint_limit_state(d, 0, &pre, &post);
  }
  CHECK(pre < 0 && fabs(-post / pre - 0.5) <= 1e-9, "slider rebound %.17g / %.17g", post, pre);
  CHECK(low >= -0.1, "slider below its bound: %.17g", low);
  // the bounces die out: slower than two steps of free fall, an impact is a landing (e = 0)
  CHECK(pt_joint_limit_state(d, 0, NULL, NULL) == -1, "slider not resting after 2 s");
  CHECK(fabs(pt_coords(d)[0] + 0.1) <= 1e-12 && fabs(pt_coord_rates(d)[0]) <= 1e-12,
        "slider at %.17g, rate %.3g", pt_coords(d)[0], pt_coord_rates(d)[0]);
  pt_counters c;
  pt_get_counters(d, &c);
  printf("prismatic: lowest %.17g, first impact %.12f -> %.12f, %lld impacts before rest\n", low,
         pre, post, (long long)c.limit_impacts);
  pt_data_free(d);
  pt_model_free(m);
}

// simulation: {joint_limits: off}: kept (check shows them) but not enforced.
static void off(void) {
  pt_model *m = rod("simulation: {joint_limits: off}\n", "[-0.5, 1.2]", "");
  double lim[2];
  CHECK(pt_joint_limits(m, 0, lim) && lim[0] == -0.5 && lim[1] == 1.2, "limits kept");
  CHECK(!pt_model_limits_enforced(m), "enforced although off");
  pt_data *d = pt_data_new(m);
  set_angle(m, d, 1.0, 0);
  double low = 0;
  for (int i = 0; i < 1000; i++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", i);
    low = fmin(low, pt_coords(d)[0]);
  }
  CHECK(low < -0.9, "free pendulum reached only %.9g", low);
  pt_data_free(d);
  pt_model_free(m);
}

static void refused(const char *sim, const char *limits, const char *type, const char *msg) {
  char text[4096];
  snprintf(text, sizeof(text), "%s    limits: %s\n%s", ROD, limits, sim);
  if (type) {
    char *t = strstr(text, "type: revolute");
    memcpy(t + 6, type, strlen(type));  // same length as "revolute"
  }
  pt_error err = {0};
  pt_model *m = load_text(text, &err);
  CHECK(m == NULL, "accepted: %s", limits);
  CHECK(strstr(err.msg, msg) != NULL, "message \"%s\", expected \"%s\"", err.msg, msg);
  printf("refused: %s\n", err.msg);
  pt_model_free(m);
}

static void errors(void) {
  refused("", "[1, 1]", NULL,
          "test.yaml:15: joints[0] \"hinge\": limits: lower must be less than upper "
          "(lower = 1, upper = 1)");
  refused("", "[0.5, -0.5]", NULL, "limits: lower must be less than upper");
  refused("", "[-.inf, 1]", NULL, "test.yaml:15: joints[0] \"hinge\": limits: non-finite number");
  refused("", "[-1, 0, 1]", NULL, "limits: [lower, upper] expected, got more values");
  refused("", "[1]", NULL, "limits: [lower, upper] expected, got 1");
  refused("", "1.0", NULL, "limits: [lower, upper] expected, got");
  refused("simulation: {restitution: 1.5}\n", "[-1, 1]", NULL,
          "test.yaml:16: simulation: restitution: must be in [0, 1], got 1.5");
  refused("simulation: {restitution: -0.1}\n", "[-1, 1]", NULL, "restitution: must be in [0, 1]");
  refused("simulation: {joint_limits: maybe}\n", "[-1, 1]", NULL,
          "joint_limits: invalid value \"maybe\", expected one of on, off");
  // on a joint type without a single coordinate
  const char *sph =
      "model: s\nbodies:\n  - {name: b, mass: 1, inertia: [1, 1, 1], position: [0, 0, -1]}\n"
      "joints:\n  - {name: ball, type: spherical, body1: ground, body2: b, point: [0, 0, 0],\n"
      "     limits: [-1, 1]}\n";
  pt_error err = {0};
  pt_model *m = load_text(sph, &err);
  CHECK(m == NULL && strstr(err.msg, "key \"limits\" does not apply to type spherical"),
        "spherical: %s", err.msg);
  printf("refused: %s\n", err.msg);
  pt_model_free(m);
}

// A closed loop (a four-bar) with a limit: loads and the limit is enforced, without a warning
// (the closed loops' limits are tested in test_loop_limits.c).
static void not_a_tree(void) {
  const char *text =
      "model: fourbar\n"
      "gravity: [0, 0, -9.81]\n"
      "bodies:\n"
      "  - {name: crank, mass: 1, inertia: [0.01, 0.01, 0.01], position: [0, 0, 0.5]}\n"
      "  - {name: coupler, mass: 1, inertia: [0.01, 0.01, 0.01], position: [0.5, 0, 1]}\n"
      "  - {name: rocker, mass: 1, inertia: [0.01, 0.01, 0.01], position: [1, 0, 0.5]}\n"
      "joints:\n"
      "  - {name: a, type: revolute, body1: ground, body2: crank, point: [0, 0, 0],\n"
      "     axis: [0, 1, 0], limits: [-1, 1]}\n"
      "  - {name: b, type: revolute, body1: crank, body2: coupler, point: [0, 0, 1],\n"
      "     axis: [0, 1, 0]}\n"
      "  - {name: c, type: revolute, body1: coupler, body2: rocker, point: [1, 0, 1],\n"
      "     axis: [0, 1, 0]}\n"
      "  - {name: d, type: revolute, body1: rocker, body2: ground, point: [1, 0, 0],\n"
      "     axis: [0, 1, 0]}\n";
  pt_error err = {0};
  pt_model *m = load_text(text, &err);
  CHECK(m != NULL, "four-bar: %s", err.msg);
  if (!m) return;
  const char *w = pt_model_warnings(m);
  CHECK(strstr(w, "not enforced") == NULL, "warning: %s", w);
  CHECK(pt_model_limits_enforced(m), "not enforced on a loop");
  pt_model_free(m);
}

// URDF <limit lower upper>: a revolute's and a prismatic's become their limits; lower >= upper
// gives none and a warning; a continuous joint has none.
static void urdf(void) {
  static const char xml[] =
      "<robot name=\"r\"><link name=\"world\"/>\n"
      "<link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"0.1\" iyy=\"0.1\" "
      "izz=\"0.1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
      "<link name=\"b\"><inertial><mass value=\"1\"/><inertia ixx=\"0.1\" iyy=\"0.1\" "
      "izz=\"0.1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
      "<link name=\"c\"><inertial><mass value=\"1\"/><inertia ixx=\"0.1\" iyy=\"0.1\" "
      "izz=\"0.1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
      "<joint name=\"j1\" type=\"revolute\"><parent link=\"world\"/><child link=\"a\"/>"
      "<axis xyz=\"0 1 0\"/><limit effort=\"5\" lower=\"0.1\" upper=\"1.5\"/></joint>\n"
      "<joint name=\"j2\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>"
      "<axis xyz=\"0 1 0\"/><limit effort=\"5\" lower=\"0.5\" upper=\"0.5\"/></joint>\n"
      "<joint name=\"j3\" type=\"prismatic\"><parent link=\"b\"/><child link=\"c\"/>"
      "<axis xyz=\"0 0 1\"/><limit effort=\"5\" upper=\"0.2\"/></joint>\n"
      "</robot>\n";
  pt_model *m = NULL;
  pt_error err = {0};
  CHECK(pt_model_load_string(xml, strlen(xml), 2, "r.urdf", NULL, &m, &err) == PT_OK, "%s",
        err.msg);
  if (!m) return;
  double lim[2] = {0, 0};
  CHECK(pt_joint_limits(m, 0, lim) && lim[0] == 0.1 && lim[1] == 1.5, "j1 [%g, %g]", lim[0],
        lim[1]);
  CHECK(!pt_joint_limits(m, 1, lim), "j2 has limits");
  CHECK(pt_joint_limits(m, 2, lim) && lim[0] == 0 && lim[1] == 0.2, "j3 [%g, %g]", lim[0],
        lim[1]);
  const char *w = pt_model_warnings(m);
  CHECK(strstr(w, "r.urdf:6: joint \"j2\": <limit lower=\"0.5\" upper=\"0.5\">: lower is not "
                  "below upper; no position limits on this joint\n") != NULL,
        "warnings: %s", w);
  CHECK(strstr(w, "joint j1 starts outside its limits [0.1, 1.5] (coordinate 0); where limits "
                  "are enforced it is put on the nearest bound at the first step\n") != NULL,
        "warnings: %s", w);
  CHECK(pt_model_limits_enforced(m), "URDF limits not enforced");
  pt_data *d = pt_data_new(m);
  CHECK(pt_step(m, d) == PT_OK && pt_coords(d)[0] == 0.1, "j1 after a step: %.17g",
        pt_coords(d)[0]);
  pt_data_free(d);
  printf("urdf: %s", w);
  pt_model_free(m);
}

// Equilibrium with the limits as constraints (equilibrium.c): the rod started on its upper
// bound 1.2, where the limit would have to pull to hold it, is released, falls past the
// lower bound 0.4 and is held there, the limit carrying m g d sin(0.4); started inside the
// range with limits [-0.5, 1.2], it hangs free at 0 and no limit is held.
static void equilibrium_on_limit(void) {
  pt_model *m = rod("", "[0.4, 1.2]", "");
  pt_data *d = pt_data_new(m);
  set_angle(m, d, 1.2, 0);
  pt_equilibrium_result *res = pt_equilibrium_result_new(m);
  pt_error err = {0};
  int rc = pt_equilibrium(m, d, NULL, res, &err);
  CHECK(rc == PT_OK, "equilibrium: %s", err.msg);
  CHECK_CLOSE(res->coord[0], 0.4, 1e-12, "rests on the lower bound");
  CHECK(res->limit_held[0] == -1, "held %d", res->limit_held[0]);
  CHECK_CLOSE(res->limit_reaction[0], mass * g * dist * sin(0.4), 1e-9,
              "limit reaction = m g d sin(0.4)");
  CHECK(res->stable == 1, "stable %d", res->stable);
  CHECK(strstr(res->limit_notes, "joint hinge at its lower limit 0.4: held by the limit, "
                                 "treated as a constraint (reaction 3.82019") != NULL,
        "notes: %s", res->limit_notes);
  printf("equilibrium on a limit: %.15g rad, reaction %.12g N m (closed form %.12g)\n",
         res->coord[0], res->limit_reaction[0], mass * g * dist * sin(0.4));
  pt_equilibrium_result_free(res);
  pt_data_free(d);
  pt_model_free(m);
  m = rod("", "[-0.5, 1.2]", "");
  d = pt_data_new(m);
  set_angle(m, d, 1.0, 0);
  res = pt_equilibrium_result_new(m);
  rc = pt_equilibrium(m, d, NULL, res, &err);
  CHECK(rc == PT_OK && fabs(res->coord[0]) < 1e-9 && res->limit_held[0] == 0 &&
            res->limit_notes[0] == 0, "free: %s %g held %d notes %s", err.msg, res->coord[0],
        res->limit_held[0], res->limit_notes);
  pt_equilibrium_result_free(res);
  pt_data_free(d);
  pt_model_free(m);
}

// Linearization with a limit held (linearize.c, linearize_tree.c): a double pendulum whose
// upper link rests on its lower bound 0.4 (gravity pushes it there) and whose lower link
// hangs straight down (theta2 = -0.4): the upper link's coordinate is a constraint, not a
// state, and the lower link swings about a fixed pivot: A = [0 1; -m2 g d2 / J2 0] with
// J2 = I2 + m2 d2^2; the note says so; naming the held coordinate as a state is refused.
static void linearize_on_limit(void) {
  static const char text[] =
      "model: dp\ngravity: [0, 0, -9.81]\n"
      "bodies:\n"
      "  - {name: a, mass: 2, inertia: [0.16666666666666666, 0.16666666666666666, 0.001],"
      " position: [0, 0, -0.5]}\n"
      "  - {name: b, mass: 1, inertia: [0.03, 0.03, 0.001], position: [0, 0, -1.3]}\n"
      "joints:\n"
      "  - {name: shoulder, type: revolute, body1: ground, body2: a, point: [0, 0, 0],"
      " axis: [0, 1, 0], limits: [0.4, 1.2]}\n"
      "  - {name: elbow, type: revolute, body1: a, body2: b, point: [0, 0, -1], axis: [0, 1, 0]}\n"
      "actuators:\n  - {name: tau, type: joint_torque, joint: elbow}\n";
  pt_error err = {0};
  pt_model *m = load_text(text, &err);
  CHECK(m != NULL, "load: %s", err.msg);
  if (!m) return;
  pt_data *d = pt_data_new(m);
  pt_assign p[2] = {{0, 0.4}, {1, -0.4}};
  CHECK(pt_set_state(m, d, p, 2, NULL, 0, &err) == PT_OK, "state: %s", err.msg);
  pt_linearization *lin = NULL;
  int rc = pt_linearize(m, d, NULL, &lin, &err);
  CHECK(rc == PT_OK, "linearize: %s", err.msg);
  if (!rc) {
    const double J2 = 0.03 + 1 * 0.3 * 0.3, a10 = -1 * 9.81 * 0.3 / J2;
    CHECK(lin->nz == 1 && strcmp(lin->state_name[0], "elbow") == 0, "states %d %s", lin->nz,
          lin->nz ? lin->state_name[0] : "");
    if (lin->nz == 1) {
      CHECK_CLOSE(lin->A[2], a10, 1e-9, "A: -m2 g d2 / J2");
      CHECK_CLOSE(lin->M[0], J2, 1e-12, "M = J2");
      CHECK_CLOSE(lin->B[1], 1 / J2, 1e-12, "B = 1 / J2");
    }
    CHECK(strstr(lin->notes, "joint shoulder at its lower limit 0.4: held by the limit, treated "
                             "as a constraint (reaction ") != NULL, "notes: %s", lin->notes);
    printf("linearize on a limit: A = [0 1; %.12g 0] (closed form %.12g), M = %.12g\n",
           lin->nz == 1 ? lin->A[2] : 0.0, a10, lin->nz == 1 ? lin->M[0] : 0.0);
  }
  pt_linearization_free(lin);
  lin = NULL;
  const char *st[] = {"shoulder", "elbow"};
  pt_linearize_options o = {.states = st, .nstates = 2};
  rc = pt_linearize(m, d, &o, &lin, &err);
  CHECK(rc == PT_EINVAL && strstr(err.msg, "state \"shoulder\" is held on its lower limit"),
        "held state: %s", err.msg);
  pt_linearization_free(lin);
  pt_data_free(d);
  pt_model_free(m);
}

// Inverse dynamics with a limit held (inverse.c, issue 11 item 4): a two-link pendulum in the
// vertical x-z plane (hinges about y, gravity -z), the shoulder unactuated and limited to
// [0.3, 1.0], the elbow driven by a torque actuator. Hand computation (angles from hanging,
// theta1 absolute, theta2 relative; link 1 of mass m1, length L1, CoM at L1/2, I1 about its
// CoM; link 2 of mass m2, CoM d2 past the elbow, I2):
//   gravity forces  Q1 = -g (m1 L1/2 sin t1 + m2 (L1 sin t1 + d2 sin(t1 + t2)))
//                   Q2 = -g m2 d2 sin(t1 + t2)
//   inertia         H12 = I2 + m2 d2^2 + m2 L1 d2 cos t2,  H22 = I2 + m2 d2^2.
// At rest on the lower bound with the elbow asked for a2, the shoulder held (t1'' = 0): the
// limit's reaction is R1 = H12 a2 - Q1 (the gravity torque about the shoulder, the elbow
// link's included) and the elbow's effort tau2 = H22 a2 - Q2. On the upper bound gravity
// pulls the shoulder away: the limit would have to pull, so it is released and the answer
// equals that of the same model without limits.
static const char *arm_v =
    "model: arm_v\n"
    "gravity: [0, 0, -9.81]\n"
    "bodies:\n"
    "  - {name: l1, mass: 1.0, inertia: [0.1, 0.1, 0.01], position: [0, 0, -0.5]}\n"
    "  - {name: l2, mass: 2.0, inertia: [0.05, 0.05, 0.01], position: [0, 0, -1.4]}\n"
    "joints:\n"
    "  - {name: shoulder, type: revolute, body1: ground, body2: l1, point: [0, 0, 0],\n"
    "     axis: [0, 1, 0]%s}\n"
    "  - {name: elbow, type: revolute, body1: l1, body2: l2, point: [0, 0, -1], axis: [0, 1, 0]}\n"
    "actuators:\n"
    "  - {name: tau2, type: joint_torque, joint: elbow}\n";

static pt_model *arm_v_model(const char *limits) {
  char text[2048];
  snprintf(text, sizeof(text), arm_v, limits);
  return load_yaml(text);
}

static void inverse_on_limit(void) {
  const double m1 = 1, L1 = 1, m2 = 2, d2 = 0.4, I2 = 0.05, t2 = 0.5, a2 = 1.5;
  pt_model *m = arm_v_model(", limits: [0.3, 1.0]");
  pt_model *mfree = arm_v_model("");
  pt_data *d = pt_data_new(m), *dfree = pt_data_new(mfree);
  pt_inverse_result *res = pt_inverse_result_new(m, 1);
  pt_inverse_result *rfree = pt_inverse_result_new(mfree, 1);
  pt_error err = {0};
  const int c1 = pt_coord_index(m, "shoulder"), c2 = pt_coord_index(m, "elbow");
  const pt_assign acc = {c2, a2};
  // held on the lower bound
  double t1 = 0.3;
  pt_assign p[2] = {{c1, t1}, {c2, t2}}, v[2] = {{c1, 0}, {c2, 0}};
  CHECK(pt_set_state(m, d, p, 2, v, 2, &err) == PT_OK, "set state: %s", err.msg);
  CHECK(pt_inverse_request(m, d, &acc, 1, res, &err) == PT_OK, "request: %s", err.msg);
  double Q1 = -g * (m1 * L1 / 2 * sin(t1) + m2 * (L1 * sin(t1) + d2 * sin(t1 + t2)));
  double Q2 = -g * m2 * d2 * sin(t1 + t2);
  const double H12 = I2 + m2 * d2 * d2 + m2 * L1 * d2 * cos(t2), H22 = I2 + m2 * d2 * d2;
  const double R1 = H12 * a2 - Q1, tau2 = H22 * a2 - Q2;
  CHECK(res->limit_held[0] == -1 && res->limit_held[1] == 0, "held %d %d", res->limit_held[0],
        res->limit_held[1]);
  CHECK_CLOSE(res->limit_reaction[0], R1, 1e-10 * fabs(R1), "shoulder limit reaction");
  CHECK(R1 > 0, "the hand computation pushes: %g", R1);
  CHECK(res->nreq == 1 && res->req_coord[0] == c2, "one request: %d", res->nreq);
  CHECK_CLOSE(res->req_effort[0], tau2, 1e-10 * fabs(tau2), "elbow effort");
  CHECK(fabs(res->coord_acc[c1]) <= 1e-12 && fabs(res->coord_acc[c2] - a2) <= 1e-12,
        "accelerations %.3g %.3g", res->coord_acc[c1], res->coord_acc[c2]);
  char want[160];
  snprintf(want, sizeof(want), "joint shoulder at its lower limit 0.3: held by the limit, "
           "treated as a constraint (reaction %.9g)\n", res->limit_reaction[0]);
  CHECK(strcmp(res->limit_notes, want) == 0, "notes: %s", res->limit_notes);
  printf("inverse dynamics on a limit: reaction %.15g N m (hand %.15g), elbow %.15g N m "
         "(hand %.15g)\n", res->limit_reaction[0], R1, res->req_effort[0], tau2);
  // the general path (Schur complement on W's factor) holds it the same way
  CHECK(res->method == PT_INVERSE_TREE, "method %d", res->method);
  res->schur_only = 1;
  CHECK(pt_inverse_request(m, d, &acc, 1, res, &err) == PT_OK, "schur: %s", err.msg);
  CHECK(res->method == PT_INVERSE_SCHUR && res->limit_held[0] == -1, "schur: method %d held %d",
        res->method, res->limit_held[0]);
  CHECK_CLOSE(res->limit_reaction[0], R1, 1e-10 * fabs(R1), "schur: shoulder limit reaction");
  CHECK_CLOSE(res->req_effort[0], tau2, 1e-10 * fabs(tau2), "schur: elbow effort");
  res->schur_only = 0;
  // the same at rest, asked through the holding efforts: R1 = -Q1, tau2 = -Q2
  CHECK(pt_inverse_holding(m, d, res, &err) == PT_OK, "holding: %s", err.msg);
  CHECK_CLOSE(res->limit_reaction[0], -Q1, 1e-10 * fabs(Q1), "holding: limit reaction");
  CHECK_CLOSE(res->req_effort[0], -Q2, 1e-10 * fabs(Q2), "holding: elbow");
  // moving away from the bound: free, and said so
  v[0].value = 0.2;
  CHECK(pt_set_state(m, d, p, 2, v, 2, &err) == PT_OK, "set state: %s", err.msg);
  CHECK(pt_inverse_request(m, d, &acc, 1, res, &err) == PT_OK, "request: %s", err.msg);
  CHECK(res->limit_held[0] == 0 && strstr(res->limit_notes, "free: moving on the bound"),
        "moving: held %d notes %s", res->limit_held[0], res->limit_notes);
  // on the upper bound gravity pulls it away: released, as if there were no limit
  t1 = 1.0;
  p[0].value = t1, v[0].value = 0;
  CHECK(pt_set_state(m, d, p, 2, v, 2, &err) == PT_OK, "set state: %s", err.msg);
  CHECK(pt_set_state(mfree, dfree, p, 2, v, 2, &err) == PT_OK, "set state: %s", err.msg);
  CHECK(pt_inverse_request(m, d, &acc, 1, res, &err) == PT_OK, "request: %s", err.msg);
  CHECK(pt_inverse_request(mfree, dfree, &acc, 1, rfree, &err) == PT_OK, "free: %s", err.msg);
  CHECK(res->limit_held[0] == 0 && res->limit_reaction[0] == 0, "released: held %d",
        res->limit_held[0]);
  CHECK(strstr(res->limit_notes, "joint shoulder at its upper limit 1 (coordinate 1): free: "
                                 "released, its limit's reaction would pull\n") != NULL,
        "notes: %s", res->limit_notes);
  CHECK_CLOSE(res->req_effort[0], rfree->req_effort[0], 1e-12 * fabs(rfree->req_effort[0]),
              "released: elbow effort as without limits");
  CHECK_CLOSE(res->coord_acc[c1], rfree->coord_acc[c1], 1e-12 * fabs(rfree->coord_acc[c1]),
              "released: shoulder acceleration as without limits");
  CHECK(rfree->coord_acc[c1] < 0, "falls away from the upper bound: %g", rfree->coord_acc[c1]);
  pt_inverse_result_free(res);
  pt_inverse_result_free(rfree);
  pt_data_free(d);
  pt_data_free(dfree);
  pt_model_free(m);
  pt_model_free(mfree);
}

int main(void) {
  inverse_on_limit();
  linearize_on_limit();
  equilibrium_on_limit();
  urdf();
  stop_at_limit(PT_INT_RK4);
  stop_at_limit(PT_INT_ABM4);
  rebound();
  rest_and_release(PT_INT_RK4);
  rest_and_release(PT_INT_ABM4);
  two_limits();
  chain();
  columns();
  prismatic();
  off();
  errors();
  not_a_tree();
  return finish("test_limits");
}
