// test_loop_limits.c: joint limits on a closed loop (issue 11, item 4; src/partition/
// loop_limits.c). A parallelogram four-bar standing upright in the x-z plane (crank, coupler
// and rocker rods of 1 kg and 1 m, every joint about y) has one degree of freedom, the crank
// angle theta from the vertical; its energy is
//   T = (2 J_O + m L^2) thetadot^2 / 2,   V = 2 m g L cos(theta)
// (crank and rocker about their pivots with J_O = m L^2 / 3 + the rods' small axial term, the
// coupler translating with the crank's tip). Falling from near the top onto a limit with
// restitution 0, it stops there (overshoot <= 1e-6 rad, energy never increases) and is held;
// with restitution 0.5 the rate after the impulse is -0.5 x the rate before it; thrown toward
// the top onto a lower limit it stops, gravity pulls it away and it is released, falls and is
// held on the upper limit; in LU, QR and hybrid partitioning, RK4 and ABM4; and a limit met
// just past the singular position, where the hybrid method has switched to QR.
#include "check.h"
#include "pt_inverse.h"

static const char *fourbar_fmt =
    "model: fourbar\n"
    "gravity: [0, 0, -9.81]\n"
    "simulation: {dt: 0.001%s}\n"
    "bodies:\n"
    "  - {name: crank, mass: 1, inertia: [0.0833583, 0.0833583, 0.00005], position: [0, 0, 0.5]}\n"
    "  - {name: coupler, mass: 1, inertia: [0.00005, 0.0833583, 0.0833583],\n"
    "     position: [0.5, 0, 1]}\n"
    "  - {name: rocker, mass: 1, inertia: [0.0833583, 0.0833583, 0.00005], position: [1, 0, 0.5]}\n"
    "joints:\n"
    "  - {name: A, type: revolute, body1: ground, body2: crank, point: [0, 0, 0],\n"
    "     axis: [0, 1, 0], limits: [%s]}\n"
    "  - {name: B, type: revolute, body1: crank, body2: coupler, point: [0, 0, 1],\n"
    "     axis: [0, 1, 0]}\n"
    "  - {name: C, type: revolute, body1: coupler, body2: rocker, point: [1, 0, 1],\n"
    "     axis: [0, 1, 0]}\n"
    "  - {name: D, type: revolute, body1: ground, body2: rocker, point: [1, 0, 0],\n"
    "     axis: [0, 1, 0]%s}\n";

static const double g = 9.81, JO = 0.0833583 + 0.25, MEFF = 2 * 0.3333583 + 1.0;

static pt_model *fourbar_d(const char *sim, const char *limits, const char *d_extra) {
  char text[4096];
  snprintf(text, sizeof(text), fourbar_fmt, sim, limits, d_extra);
  pt_error err = {0};
  pt_model *m = NULL;
  if (pt_model_load_string(text, strlen(text), 1, "test.yaml", NULL, &m, &err)) {
    printf("FAIL load: %s\n", err.msg);
    exit(1);
  }
  return m;
}

static pt_model *fourbar(const char *sim, const char *limits) {
  return fourbar_d(sim, limits, "");
}

static void set_angle(const pt_model *m, pt_data *d, double a, double rate) {
  pt_error err = {0};
  pt_assign p = {pt_coord_index(m, "A"), a}, v = {p.coord, rate};
  CHECK(pt_set_state(m, d, &p, 1, &v, 1, &err) == PT_OK, "set state: %s", err.msg);
}

static double theta(const pt_model *m, const pt_data *d) {
  return pt_coords(d)[pt_coord_index(m, "A")];
}
static double rate(const pt_model *m, const pt_data *d) {
  return pt_coord_rates(d)[pt_coord_index(m, "A")];
}

static const char *mode_name(int mode) {
  return mode == PT_MODE_LU ? "LU" : mode == PT_MODE_QR ? "QR" : "hybrid";
}

// Released at 0.05 rad (near the top) toward the upper bound 0.6, restitution 0: stops at it
// and rests there, held (gravity pushes into it).
static void stop_at_limit(pt_integrator integ, int mode) {
  pt_model *m = fourbar("", "-0.6, 0.6");
  CHECK(pt_model_limits_enforced(m), "limits not enforced on the four-bar");
  CHECK(strstr(pt_model_warnings(m), "not enforced") == NULL, "warning: %s",
        pt_model_warnings(m));
  pt_data *d = pt_data_new(m);
  pt_set_integrator(d, integ);
  CHECK(pt_set_partition_mode(d, mode) == PT_OK, "mode");
  set_angle(m, d, 0.05, 0);
  double e_prev = energy(d), rise = 0, over = 0, res = 0, pre = 0, post = 0, dev = 0;
  int hit = -1;
  for (int i = 0; i < 3000; i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "step %d: %s", i, pt_strerror(rc));
    if (rc) break;
    const double th = theta(m, d), e = energy(d);
    over = fmax(over, fmax(-0.6 - th, th - 0.6));
    rise = fmax(rise, e - e_prev);
    e_prev = e;
    res = fmax(res, pt_residual_position(d));
    if (hit < 0 && pt_joint_limit_state(d, 0, &pre, &post) != 0) hit = i;
    if (hit >= 0 && i > hit + 10) {
      dev = fmax(dev, fabs(th - 0.6) + fabs(rate(m, d)));
      CHECK(pt_joint_limit_state(d, 0, NULL, NULL) == 1, "not held at step %d", i);
    }
  }
  pt_counters c;
  pt_get_counters(d, &c);
  CHECK(hit >= 0 && c.limit_impacts == 1, "impacts %lld", (long long)c.limit_impacts);
  CHECK(over <= 1e-6, "overshoot %.3g rad", over);
  CHECK(rise <= 1e-9, "energy rose by %.3g J in a step", rise);
  CHECK(dev <= 1e-8, "resting: |theta - 0.6| + |rate| up to %.3g", dev);
  CHECK(res <= 1e-9, "position residual %.3g", res);
  // the impact rate from energy: (MEFF/2) w^2 = 2 g (cos 0.05 - cos 0.6); the rate taken is
  // at the step's end, past the bound by at most one step's travel
  const double w = sqrt(4 * g * (cos(0.05) - cos(0.6)) / MEFF);
  CHECK(fabs(pre - w) <= 2e-2 * w, "impact rate %.9f vs %.9f", pre, w);
  CHECK(fabs(post) <= 1e-9, "rate after the impulse %.3g", post);
  printf("%s %s: restitution 0: overshoot %.3g rad, largest energy rise per step %.3g J, impact "
         "rate %.9f (from energy %.9f), after %.3g, resting deviation %.3g, residual %.3g\n",
         pt_integrator_name(integ), mode_name(mode), over, rise, pre, w, post, dev, res);
  pt_data_free(d);
  pt_model_free(m);
}

// Restitution 0.5: the rate after the impulse is -0.5 x the rate before it.
static void rebound(int mode) {
  pt_model *m = fourbar(", restitution: 0.5", "-0.6, 0.6");
  pt_data *d = pt_data_new(m);
  CHECK(pt_set_partition_mode(d, mode) == PT_OK, "mode");
  set_angle(m, d, 0.05, 0);
  double pre = 0, post = 0;
  for (int i = 0; i < 3000; i++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", i);
    pt_counters c;
    pt_get_counters(d, &c);
    if (c.limit_impacts) break;
  }
  pt_joint_limit_state(d, 0, &pre, &post);
  const double ratio = -post / pre;
  CHECK(pre > 0, "impact rate %g", pre);
  CHECK(fabs(ratio - 0.5) <= 1e-6, "rebound ratio %.17g", ratio);
  CHECK(fabs(rate(m, d) - post) <= 1e-12, "rate after the step %.17g vs %.17g", rate(m, d), post);
  CHECK(pt_joint_limit_state(d, 0, NULL, NULL) == 0, "limit held after a rebound");
  double over = 0, e_prev = energy(d), rise = 0;
  for (int k = 0; k < 3000; k++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", k);
    over = fmax(over, theta(m, d) - 0.6);
    rise = fmax(rise, energy(d) - e_prev);
    e_prev = energy(d);
  }
  CHECK(over <= 1e-6, "overshoot after rebounds %.3g", over);
  CHECK(rise <= 1e-9, "energy rose by %.3g J in a step after the rebound", rise);
  printf("%s: restitution 0.5: impact rate %.12f, after %.12f, ratio %.15f (|ratio - 0.5| = "
         "%.2e); 3 s later overshoot %.3g, largest energy rise %.3g J\n",
         mode_name(mode), pre, post, ratio, fabs(ratio - 0.5), over, rise);
  pt_data_free(d);
  pt_model_free(m);
}

// Thrown from 0.5 toward the top onto the lower bound 0.1 (restitution 0): stopped there,
// gravity pulls it away (the top is at 0): released, it falls onto 0.6 and rests there.
static void release(pt_integrator integ) {
  pt_model *m = fourbar("", "0.1, 0.6");
  pt_data *d = pt_data_new(m);
  pt_set_integrator(d, integ);
  set_angle(m, d, 0.5, -2.0);
  int held_low = 0, released = 0, i = 0;
  double low_rate = 0;
  for (; i < 3000; i++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", i);
    const int s = pt_joint_limit_state(d, 0, NULL, NULL);
    if (s == -1) {
      held_low++;
      low_rate = rate(m, d);
    }
    if (held_low && s == 0 && !released) {
      released = i;
      CHECK(theta(m, d) >= 0.1 && rate(m, d) > 0, "released at %.12f rate %.3g", theta(m, d),
            rate(m, d));
    }
    if (released && s == 1) break;
  }
  CHECK(held_low >= 1 && held_low <= 2, "held on the lower bound %d steps", held_low);
  CHECK(released > 0, "never released from the lower bound");
  CHECK(pt_joint_limit_state(d, 0, NULL, NULL) == 1, "not on the upper bound");
  for (int k = 0; k < 500; k++) CHECK(pt_step(m, d) == PT_OK, "step %d", k);
  CHECK(fabs(theta(m, d) - 0.6) <= 1e-9 && pt_joint_limit_state(d, 0, NULL, NULL) == 1,
        "not resting on 0.6: %.12f", theta(m, d));
  printf("%s: thrown onto 0.1: held %d step(s) (rate %.3g), released at step %d, resting on "
         "0.6 at %.12f\n",
         pt_integrator_name(integ), held_low, low_rate, released, theta(m, d));
  pt_data_free(d);
  pt_model_free(m);
}

// A tree integrated on the LU or QR partition (pt_set_partition_mode) takes the same path: a
// rod pendulum (2 kg, 1 m, hinge at its end) released at 1 rad onto its lower bound -0.5 stops
// there (restitution 0), then swings to +0.5, the angle of the same height.
static void tree_on_partition(int mode) {
  static const char text[] =
      "model: rod\ngravity: [0, 0, -9.81]\n"
      "bodies:\n  - {name: rod, mass: 2, inertia: [0.16666666666666666, 0.16666666666666666,"
      " 0.001], position: [0, 0, -0.5]}\n"
      "joints:\n  - {name: hinge, type: revolute, body1: ground, body2: rod, point: [0, 0, 0],\n"
      "     axis: [0, 1, 0], limits: [-0.5, 1.2]}\n";
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_string(text, strlen(text), 1, "rod.yaml", NULL, &m, &err)) {
    CHECK(0, "rod: %s", err.msg);
    return;
  }
  pt_data *d = pt_data_new(m);
  CHECK(pt_set_partition_mode(d, mode) == PT_OK, "mode");
  pt_assign a = {pt_coord_index(m, "hinge"), 1.0};
  CHECK(pt_set_state(m, d, &a, 1, NULL, 0, &err) == PT_OK, "set state: %s", err.msg);
  double over = 0, max_after = -1, e_prev = energy(d), rise = 0;
  int hit = -1;
  for (int i = 0; i < 3000; i++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", i);
    const double th = pt_coords(d)[a.coord];
    over = fmax(over, -0.5 - th);
    rise = fmax(rise, energy(d) - e_prev);
    e_prev = energy(d);
    if (hit < 0 && pt_joint_limit_state(d, 0, NULL, NULL) != 0) hit = i;
    if (hit >= 0 && i > hit) max_after = fmax(max_after, th);
  }
  CHECK(hit >= 0, "the limit was never hit");
  CHECK(over <= 1e-6, "overshoot %.3g rad", over);
  CHECK(rise <= 1e-9, "energy rose by %.3g J in a step", rise);
  CHECK_CLOSE(max_after, 0.5, 1e-6, "swing after the impact");
  printf("tree pendulum on %s: overshoot %.3g rad, largest energy rise %.3g J, swing after the "
         "impact to %.9f (0.5 expected)\n",
         mode_name(mode), over, rise, max_after);
  pt_data_free(d);
  pt_model_free(m);
}

// The rocker limited to the same range as the crank: in a parallelogram the two turn alike,
// so the two limits are hit in the same step and are dependent (W singular): one impulse
// serves both, the crank and the rocker stop on 0.6, no complementarity problem is left
// unsolved.
static void dependent_limits(int mode) {
  pt_model *m = fourbar_d("", "-0.6, 0.6", ", limits: [-0.6, 0.6]");
  pt_data *d = pt_data_new(m);
  CHECK(pt_set_partition_mode(d, mode) == PT_OK, "mode");
  set_angle(m, d, 0.05, 0);
  const int cd = pt_coord_index(m, "D");
  double over = 0, e_prev = energy(d), rise = 0;
  for (int i = 0; i < 2000; i++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", i);
    over = fmax(over, fmax(theta(m, d), pt_coords(d)[cd]) - 0.6);
    rise = fmax(rise, energy(d) - e_prev);
    e_prev = energy(d);
  }
  pt_counters c;
  pt_get_counters(d, &c);
  CHECK(over <= 1e-6, "overshoot %.3g rad", over);
  CHECK(rise <= 1e-9, "energy rose by %.3g J in a step", rise);
  CHECK(c.limit_lcp_unsolved == 0, "%lld problems unsolved", (long long)c.limit_lcp_unsolved);
  CHECK(fabs(theta(m, d) - 0.6) <= 1e-9 && fabs(pt_coords(d)[cd] - 0.6) <= 1e-9,
        "resting at %.12f, %.12f", theta(m, d), pt_coords(d)[cd]);
  CHECK(fabs(rate(m, d)) <= 1e-9, "resting rate %.3g", rate(m, d));
  printf("%s: crank and rocker both limited (dependent): overshoot %.3g rad, largest energy "
         "rise %.3g J, resting at %.12f / %.12f, impacts %lld, unsolved %lld\n",
         mode_name(mode), over, rise, theta(m, d), pt_coords(d)[cd],
         (long long)c.limit_impacts, (long long)c.limit_lcp_unsolved);
  pt_data_free(d);
  pt_model_free(m);
}

// Equilibrium of the four-bar started at 0.3 inside [-0.6, 0.6]: Newton finds the upright
// position, unstable; the damped dynamics then fall onto the bound 0.6, where the limit is held
// with the reaction that balances gravity, -dV/dtheta = -2 m g L sin(0.6) (the joint force on
// the crank, pushing it back).
static void equilibrium(void) {
  pt_model *m = fourbar("", "-0.6, 0.6");
  pt_data *d = pt_data_new(m);
  set_angle(m, d, 0.3, 0);
  pt_equilibrium_result *r = pt_equilibrium_result_new(m);
  pt_error err = {0};
  CHECK(pt_equilibrium(m, d, NULL, r, &err) == PT_OK, "equilibrium: %s", err.msg);
  const int c = pt_coord_index(m, "A");
  const double want = -2 * g * sin(0.6);
  CHECK(r->stable == 1, "stable %d", r->stable);
  CHECK(fabs(r->coord[c] - 0.6) <= 1e-9, "angle %.12f", r->coord[c]);
  CHECK(r->limit_held[0] == 1, "limit held %d", r->limit_held[0]);
  CHECK(fabs(r->limit_reaction[0] - want) <= 1e-6, "reaction %.9f vs %.9f",
        r->limit_reaction[0], want);
  CHECK(strstr(r->limit_notes, "joint A at its upper limit 0.6: held by the limit") != NULL,
        "notes: %s", r->limit_notes);
  printf("equilibrium from 0.3: angle %.12f, held on the upper bound, reaction %.9f (-2 m g L "
         "sin 0.6 = %.9f), %d Newton iterations + %d damped steps\n",
         r->coord[c], r->limit_reaction[0], want, r->iterations, r->damped_steps);
  pt_equilibrium_result_free(r);
  pt_data_free(d);
  pt_model_free(m);
}

// Through the singular position: released at 0.05 rad, the crank passes the horizontal
// (pi/2, where the parallelogram's Jacobian loses rank and the hybrid method switches to QR
// or retakes a step) and meets its upper limit 1.62 just beyond it. The limit is enforced
// on whichever partition the step ends on, retaken steps included: no overshoot, no energy
// rise, held at the end (gravity pushes into it there).
static void through_singular(pt_integrator integ) {
  pt_model *m = fourbar("", "-3, 1.62");
  pt_data *d = pt_data_new(m);
  pt_set_integrator(d, integ);
  set_angle(m, d, 0.05, 0);
  double over = 0, e_prev = energy(d), rise = 0;
  for (int i = 0; i < 3000; i++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", i);
    over = fmax(over, theta(m, d) - 1.62);
    rise = fmax(rise, energy(d) - e_prev);
    e_prev = energy(d);
  }
  pt_counters c;
  pt_get_counters(d, &c);
  CHECK(c.qr_switches + c.qr_retakes > 0, "never switched to QR near the singular position");
  CHECK(c.limit_impacts > 0, "the limit was never hit");
  CHECK(over <= 1e-6, "overshoot %.3g rad", over);
  CHECK(rise <= 1e-9, "energy rose by %.3g J in a step", rise);
  CHECK(pt_joint_limit_state(d, 0, NULL, NULL) == 1 && fabs(theta(m, d) - 1.62) <= 1e-8,
        "not held on 1.62: %.12f", theta(m, d));
  printf("%s through the singular position: %lld QR switches, %lld retakes, %lld impacts, "
         "overshoot %.3g rad, largest energy rise %.3g J\n", pt_integrator_name(integ),
         (long long)c.qr_switches, (long long)c.qr_retakes, (long long)c.limit_impacts, over,
         rise);
  pt_data_free(d);
  pt_model_free(m);
}

int main(void) {
  (void)JO;
  stop_at_limit(PT_INT_RK4, PT_MODE_HYBRID);
  stop_at_limit(PT_INT_ABM4, PT_MODE_HYBRID);
  stop_at_limit(PT_INT_RK4, PT_MODE_LU);
  stop_at_limit(PT_INT_RK4, PT_MODE_QR);
  rebound(PT_MODE_HYBRID);
  rebound(PT_MODE_QR);
  release(PT_INT_RK4);
  release(PT_INT_ABM4);
  tree_on_partition(PT_MODE_LU);
  tree_on_partition(PT_MODE_QR);
  dependent_limits(PT_MODE_HYBRID);
  dependent_limits(PT_MODE_QR);
  through_singular(PT_INT_RK4);
  through_singular(PT_INT_ABM4);
  equilibrium();
  return finish("test_loop_limits");
}
