// test_controls.c: control elements in the model (issue 26, item 5), integrated with the
// mechanism by every integrator:
// - a first-order lag and a second-order transfer function fed by an input signal: their
//   analytic step responses (RK4, ABM4; Euler to its first order);
// - a DC motor (state_space: L di/dt = V - R i - k w, torque k i) on a flywheel with a PI speed
//   loop: the simulated speed, current and integral against the exact solution of the linear
//   system (matrix exponential written in the test);
// - an ode written to equal a transfer_function, both fed by a moving pendulum's angle: the
//   same trajectory to rounding;
// - expression_force (eq. 10c): a joint effort and a body torque equal to a torsion spring
//   give the spring's trajectory;
// - snapshots continue bit for bit, reset restores the control states, control states and
//   parameters set between steps, driven inputs refused to clients.
#include <math.h>
#include <string.h>

#include "check.h"

static pt_data *data(const pt_model *m) {
  pt_data *d = pt_data_new(m);
  if (!d) {
    printf("FAIL pt_data_new\n");
    exit(1);
  }
  return d;
}

static double signal(const pt_model *m, const pt_data *d, const char *name) {
  const int s = pt_signal_index(m, name);
  CHECK(s >= 0, "no signal %s", name);
  return s >= 0 ? pt_signals(d)[s] : NAN;
}

static double cstate(const pt_model *m, const pt_data *d, const char *name) {
  const int s = pt_control_state_index(m, name);
  CHECK(s >= 0, "no control state %s", name);
  return s >= 0 ? pt_control_states(d)[s] : NAN;
}

static void set_input(const pt_model *m, pt_data *d, const char *name, double v) {
  const int i = pt_input_index(m, name);
  CHECK(i >= 0 && pt_set_input(m, d, i, v) == 0, "set %s", name);
}

static int step(const pt_model *m, pt_data *d) {
  const int rc = pt_step(m, d);
  CHECK(rc == PT_OK, "step at t = %g: %s", pt_time(d), pt_strerror(rc));
  return rc;
}

// ---- step responses in a model ------------------------------------------------------------------

static const char lag_controls[] =
    "controls:\n"
    "  - {name: u, type: input}\n"
    "  - {name: lag, type: transfer_function, input: u, num: [1], den: [0.2, 1]}\n"
    "  - {name: g2, type: transfer_function, input: u, num: [16], den: [1, 2.4, 16]}\n";

static double lag(double t) { return 1 - exp(-t / 0.2); }
static double second_order(double t) {
  const double wn = 4, z = 0.3, wd = wn * sqrt(1 - z * z);
  return 1 - exp(-z * wn * t) * (cos(wd * t) + z / sqrt(1 - z * z) * sin(wd * t));
}

static void test_lags(pt_integrator integ, double tol) {
  pt_model *m = rod_model(ROD_INERTIA, "", lag_controls);
  pt_data *d = data(m);
  pt_set_integrator(d, integ);
  CHECK(pt_model_ncontrol_state(m) == 3 && pt_model_nsignal(m) == 3, "sizes %d %d",
        pt_model_ncontrol_state(m), pt_model_nsignal(m));
  CHECK(pt_model_ninput(m) == 1 && pt_model_ncontrol_input(m) == 1 &&
        pt_input_source(m, 0) == NULL, "the input u is a client's");
  set_input(m, d, "u", 1);
  double worst[2] = {0, 0};
  for (int k = 1; k <= 2000; k++) {
    if (step(m, d)) break;
    const double t = pt_time(d);
    worst[0] = fmax(worst[0], fabs(signal(m, d, "lag") - lag(t)));
    worst[1] = fmax(worst[1], fabs(signal(m, d, "g2") - second_order(t)));
  }
  printf("%s: lag %.2e, second order %.2e from their step responses\n",
         pt_integrator_name(integ), worst[0], worst[1]);
  CHECK(worst[0] < tol && worst[1] < tol, "%s: lag %.3g, second order %.3g (tol %.3g)",
        pt_integrator_name(integ), worst[0], worst[1], tol);
  pt_data_free(d);
  pt_model_free(m);
}

// ---- DC motor on a flywheel with a PI speed loop ------------------------------------------------

// J = 0.02 (about the shaft), b = 0.001 (joint damping), k = 0.05, R = 1, L = 0.01,
// kp = 0.5, ki = 5 (the pid's integral state is its term's value: x' = ki e)
// configs/models/dc_motor_flywheel.yaml (its header has the numbers)
static const char *root = ".";  // the project root (argv[1])

static pt_model *load_example(const char *file) { return load_config(root, file); }

// e^{A t} of a 3 x 3 matrix by scaling and squaring of its Taylor series.
static void expm3(double E[9], const double A[9], double t) {
  double s = 0;
  for (int i = 0; i < 9; i++) s = fmax(s, fabs(A[i] * t));
  int sq = 0;
  while (s > 0.5) s /= 2, sq++;
  double B[9], T[9], R[9];
  for (int i = 0; i < 9; i++) B[i] = A[i] * t / ldexp(1, sq);
  for (int i = 0; i < 9; i++) E[i] = T[i] = (i % 4 == 0);
  for (int k = 1; k <= 20; k++) {  // T = B^k / k!
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        R[3 * i + j] = (T[3 * i] * B[j] + T[3 * i + 1] * B[3 + j] + T[3 * i + 2] * B[6 + j]) / k;
    memcpy(T, R, sizeof(T));
    for (int i = 0; i < 9; i++) E[i] += T[i];
  }
  for (int q = 0; q < sq; q++) {
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        R[3 * i + j] = E[3 * i] * E[j] + E[3 * i + 1] * E[3 + j] + E[3 * i + 2] * E[6 + j];
    memcpy(E, R, sizeof(R));
  }
}

// tol: on the speed (rad/s); the current (A) and the integral (V), faster, get 50 tol
static void test_motor(pt_integrator integ, double tol) {
  const double J = 0.02, b = 0.001, k = 0.05, R = 1, L = 0.01, kp = 0.5, ki = 5, r = 1;
  // x = (w, i, xI): J w' = k i - b w; L i' = kp (r - w) + xI - R i - k w; xI' = ki (r - w)
  const double A[9] = {-b / J, k / J, 0, -(k + kp) / L, -R / L, 1 / L, -ki, 0, 0};
  // the equilibrium: w = r, i = b r / k, xI = R i + k r
  const double xs[3] = {r, b * r / k, R * b * r / k + k * r};
  pt_model *m = load_example("dc_motor_flywheel.yaml");
  pt_data *d = data(m);
  pt_set_integrator(d, integ);
  set_input(m, d, "ref", r);
  const int shaft = pt_coord_index(m, "shaft");
  CHECK(pt_input_source(m, pt_input_index(m, "drive")) &&
        !strcmp(pt_input_source(m, pt_input_index(m, "drive")), "motor.y1"), "drive's source");
  CHECK(pt_set_input(m, d, pt_input_index(m, "drive"), 1) == PT_EPRECOND, "a driven input is "
        "not a client's");
  double worst = 0, worst_i = 0;
  for (int n = 1; n <= 4000; n++) {  // 2 s
    if (step(m, d)) break;
    if (n % 20) continue;
    double E[9], x[3];
    expm3(E, A, pt_time(d));
    for (int i = 0; i < 3; i++)
      x[i] = xs[i] - (E[3 * i] * xs[0] + E[3 * i + 1] * xs[1] + E[3 * i + 2] * xs[2]);
    worst = fmax(worst, fabs(pt_coord_rates(d)[shaft] - x[0]));
    worst_i = fmax(worst_i, fabs(cstate(m, d, "motor.x1") - x[1]));
    worst_i = fmax(worst_i, fabs(cstate(m, d, "pic.integral") - x[2]));
    // the drive's torque is k i, the motor's output
    CHECK(fabs(pt_inputs(d)[pt_input_index(m, "drive")] - k * cstate(m, d, "motor.x1")) < 1e-15,
          "drive = k i");
  }
  printf("%s: DC motor speed %.2e rad/s, current and integral %.2e from the exact solution "
         "(speed %.4f at 2 s)\n", pt_integrator_name(integ), worst, worst_i,
         pt_coord_rates(d)[shaft]);
  CHECK(worst < tol && worst_i < 50 * tol, "%s: %.3g, %.3g (tol %.3g)", pt_integrator_name(integ),
        worst, worst_i, tol);
  pt_data_free(d);
  pt_model_free(m);
}

// ---- ode == transfer function -----------------------------------------------------------------

static void test_ode_tf(pt_integrator integ) {
  pt_model *m = rod_model(ROD_INERTIA, "",
      "controls:\n"
      "  - {name: th, type: measure, coordinate: hinge}\n"
      "  - {name: g, type: transfer_function, input: th, num: [1, 3], den: [1, 2, 5]}\n"
      "  - {name: o, type: ode, states: [p, v], derivatives: [v, th - 2 * v - 5 * p]}\n"
      "  - {name: y, type: expression, expr: 3 * o.p + o.v}\n");
  pt_data *d = data(m);
  pt_set_integrator(d, integ);
  pt_assign a = {pt_coord_index(m, "hinge"), 1.2};
  pt_error err;
  CHECK(pt_set_state(m, d, &a, 1, NULL, 0, &err) == PT_OK, "%s", err.msg);
  double worst = 0, big = 0;
  for (int n = 0; n < 3000; n++) {
    if (step(m, d)) break;
    worst = fmax(worst, fabs(signal(m, d, "g") - signal(m, d, "y")));
    big = fmax(big, fabs(signal(m, d, "g")));
  }
  printf("%s: ode vs transfer_function on a swinging pendulum: %.2e (|y| up to %.2f)\n",
         pt_integrator_name(integ), worst, big);
  CHECK(worst < 1e-13 && big > 0.1, "ode vs tf: %.3g", worst);
  pt_data_free(d);
  pt_model_free(m);
}

// ---- expression_force ------------------------------------------------------------------------

// A pendulum with a torsion spring k = 3, c = 0.2 about its hinge, or the same as a formula
// (turned: the rod's body z axis along the hinge, for a torque given in the body frame).
static pt_model *spring_pendulum(const char *force, int turned) {
  char rest[1024];
  snprintf(rest, sizeof(rest),
           "controls:\n"
           "  - {name: th, type: measure, coordinate: hinge}\n"
           "  - {name: w, type: measure, rate: hinge}\n"
           "forces:\n%s\n", force);
  return turned ? rod_model("[0.1, 0.01, 0.1]",
                            ", orientation: {axis: [1, 0, 0], angle: -1.5707963267948966}", rest)
                : rod_model(ROD_INERTIA, "", rest);
}

static void test_expression_force(void) {
  static const char *const forces[] = {
      "  - {name: s, type: torsion_spring, joint: hinge, stiffness: 3, damping: 0.2}",
      "  - {name: s, type: expression_force, joint: hinge, expr: -3 * th - 0.2 * w}",
      "  - {name: s, type: expression_force, body: rod, axis: [0, 1, 0], expr: -3 * th - 0.2 * w}",
      "  - {name: s, type: expression_force, body: rod, axis: [0, 0, 1], frame: body,"
      " expr: -3 * th - 0.2 * w}",
  };
  // the rod's body z axis is the global y axis when it is turned so (frame: body)
  double end[4] = {0};
  for (int f = 0; f < 4; f++) {
    pt_model *m = spring_pendulum(forces[f], f == 3);
    pt_data *d = data(m);
    pt_assign a = {pt_coord_index(m, "hinge"), 0.8};
    pt_error err;
    CHECK(pt_set_state(m, d, &a, 1, NULL, 0, &err) == PT_OK, "%s", err.msg);
    for (int n = 0; n < 2000; n++)
      if (step(m, d)) break;
    end[f] = pt_coords(d)[pt_coord_index(m, "hinge")];
    if (f > 0) {
      CHECK(signal(m, d, "s") == pt_inputs(d)[0] || f >= 2, "the force's value is its signal");
      CHECK(pt_input_source(m, 0) && !strcmp(pt_input_source(m, 0), "s"), "driven by s");
    }
    pt_data_free(d);
    pt_model_free(m);
  }
  printf("expression_force: hinge angle at 2 s %.15f (spring), %.15f (joint), %.15f (body "
         "torque), %.15f (body frame)\n", end[0], end[1], end[2], end[3]);
  for (int f = 1; f < 4; f++)
    CHECK(fabs(end[f] - end[0]) < 1e-11, "expression_force %d: %.17g vs %.17g", f, end[f],
          end[0]);
  CHECK(fabs(end[0] - 0.8) > 0.05, "the pendulum moved");
}

// ---- snapshots, reset, states and parameters set between steps ------------------------------

static void test_state_ops(void) {
  pt_model *m = load_example("dc_motor_flywheel.yaml");
  pt_data *d = data(m), *c = data(m);
  set_input(m, d, "ref", 2);
  for (int n = 0; n < 300; n++) step(m, d);
  CHECK(pt_data_copy(m, c, d) == PT_OK, "copy");
  for (int n = 0; n < 300; n++) step(m, d), step(m, c);
  const int nx = pt_model_ncontrol_state(m), ns = pt_model_nsignal(m);
  CHECK(memcmp(pt_control_states(c), pt_control_states(d), sizeof(double) * nx) == 0 &&
        memcmp(pt_signals(c), pt_signals(d), sizeof(double) * ns) == 0 &&
        pt_coord_rates(c)[0] == pt_coord_rates(d)[0], "a snapshot continues bit for bit");
  CHECK(cstate(m, d, "pic.integral") != 0, "integral moved");
  // a parameter changed between steps acts from the next step, on this data only
  pt_error err;
  const int kp = pt_param_index(m, "pic.kp"), kd = pt_param_index(m, "pic.kd");
  CHECK(kp >= 0 && pt_params(d)[kp] == 0.5, "pic.kp");
  CHECK(pt_set_param(m, d, kp, 2.0, &err) == PT_OK, "%s", err.msg);
  CHECK(pt_set_param(m, d, kd, 1.0, &err) == PT_EINVAL && strstr(err.msg, "no derivative term"),
        "kd refused: %s", err.msg);
  CHECK(pt_set_param(m, d, kp, NAN, &err) == PT_EINVAL, "NaN refused");
  CHECK(pt_params(d)[kp] == 2.0 && pt_params(c)[kp] == 0.5, "tuned on d only");
  step(m, d), step(m, c);
  const double e = signal(m, d, "err"), xi = cstate(m, d, "pic.integral");
  CHECK(fabs(signal(m, d, "pic") - (2.0 * e + xi)) < 1e-14, "pic = 2 e + xI after the change");
  CHECK(signal(m, d, "pic") != signal(m, c, "pic"), "the copy kept its gain");
  // control states set: re-evaluated at once
  const int ix = pt_control_state_index(m, "motor.x1");
  const double v = 3.0;
  CHECK(pt_set_control_states(m, d, &ix, &v, 1, &err) == PT_OK, "%s", err.msg);
  CHECK(cstate(m, d, "motor.x1") == 3 && signal(m, d, "motor.y1") == 0.05 * 3, "motor.y1 %g",
        signal(m, d, "motor.y1"));
  const int bad = 99;
  CHECK(pt_set_control_states(m, d, &bad, &v, 1, &err) == PT_EINVAL, "bad index refused");
  // reset: states back to the model's, tuned parameters kept, inputs 0
  pt_data_reset(m, d);
  CHECK(cstate(m, d, "motor.x1") == 0 && cstate(m, d, "pic.integral") == 0 &&
        signal(m, d, "ref") == 0 && pt_params(d)[kp] == 2.0, "reset");
  pt_data_free(d);
  pt_data_free(c);
  pt_model_free(m);
}

// ---- equilibrium with control states ------------------------------------------------------

// A hanging pendulum (J_O = 1/3, m g l = 4.905) held at target 0.3 by a PI (with a lag on the
// measured angle): at the equilibrium the angle is the target, the integral term carries the
// gravity torque m g l sin(0.3), the lag's state equals its input; the closed loop is stable.
static void test_equilibrium(void) {
  pt_model *m = rod_model(SLENDER_INERTIA, "",
      "controls:\n"
      "  - {name: angle, type: measure, coordinate: hinge}\n"
      "  - {name: seen, type: transfer_function, input: angle, num: [1], den: [0.05, 1]}\n"
      "  - {name: target, type: input}\n"
      "  - {name: e, type: sum, inputs: [target, seen], signs: [+, -]}\n"
      "  - {name: c, type: pid, input: e, kp: 20, ki: 15, kd: 3, tf: 0.02}\n"
      "actuators:\n"
      "  - {name: tau, type: joint_torque, joint: hinge, source: c}\n");
  pt_data *d = data(m);
  set_input(m, d, "target", 0.3);
  pt_forward(m, d);
  pt_equilibrium_result *res = pt_equilibrium_result_new(m);
  pt_error err = {0};
  const int rc = pt_equilibrium(m, d, NULL, res, &err);
  CHECK(rc == PT_OK, "equilibrium: %s", err.msg);
  const int hinge = pt_coord_index(m, "hinge");
  const int xi = pt_control_state_index(m, "c.integral"), xl = pt_control_state_index(m, "seen.x1");
  const int xf = pt_control_state_index(m, "c.filter");
  const double mgl = 9.81 * 0.5;
  printf("equilibrium of the PI-held pendulum: angle %.15f (target 0.3), integral %.15f "
         "(m g l sin 0.3 = %.15f), stable %d\n", res->coord[hinge], res->control_state[xi],
         mgl * sin(0.3), res->stable);
  CHECK(fabs(res->coord[hinge] - 0.3) < 1e-10, "angle %.17g", res->coord[hinge]);
  CHECK(fabs(res->control_state[xi] - mgl * sin(0.3)) < 1e-9, "integral %.17g",
        res->control_state[xi]);
  // the lag's output equals its input: x1 / 0.05 = angle (num 1 / (0.05 s + 1): y = x1 / 0.05)
  CHECK(fabs(res->control_state[xl] * 20 - 0.3) < 1e-10, "lag state %.17g",
        res->control_state[xl]);
  CHECK(fabs(res->control_state[xf] - 0) < 1e-10, "filter at the error 0: %.17g",
        res->control_state[xf]);
  CHECK(res->stable == 1, "the closed loop is stable");
  CHECK(fabs(res->input[pt_input_index(m, "tau")] - mgl * sin(0.3)) < 1e-9, "the drive supplies "
        "the gravity torque: %.17g", res->input[pt_input_index(m, "tau")]);
  // applied, it stays there
  CHECK(pt_equilibrium_apply(m, d, res, &err) == PT_OK, "%s", err.msg);
  for (int n = 0; n < 1000; n++) step(m, d);
  CHECK(fabs(pt_coords(d)[hinge] - 0.3) < 1e-9 &&
        fabs(pt_control_states(d)[xi] - mgl * sin(0.3)) < 1e-9, "held after 1 s: %.17g",
        pt_coords(d)[hinge]);
  // inverse dynamics there: the hinge held (acceleration 0) takes m g l sin(0.3), all of it
  // supplied by the drive; at another state the drive supplies what its signal gives
  pt_inverse_result *inv = pt_inverse_result_new(m, 1);
  pt_assign acc = {hinge, 0};
  CHECK(pt_inverse_request(m, d, &acc, 1, inv, &err) == PT_OK, "%s", err.msg);
  const int tau = pt_input_index(m, "tau");
  CHECK(fabs(inv->req_effort[0] - mgl * sin(0.3)) < 1e-9 &&
        fabs(inv->input[tau] - mgl * sin(0.3)) < 1e-9, "inverse: effort %.17g, drive %.17g",
        inv->req_effort[0], inv->input[tau]);
  pt_assign a = {hinge, 0.5};
  CHECK(pt_set_state(m, d, &a, 1, NULL, 0, &err) == PT_OK, "%s", err.msg);
  CHECK(pt_inverse_request(m, d, &acc, 1, inv, &err) == PT_OK, "%s", err.msg);
  CHECK(fabs(inv->req_effort[0] - mgl * sin(0.5)) < 1e-9 &&
        inv->input[tau] == signal(m, d, "c") && inv->input[tau] != inv->req_effort[0],
        "inverse at 0.5: effort %.17g, drive %.17g (c %.17g)", inv->req_effort[0],
        inv->input[tau], signal(m, d, "c"));
  pt_inverse_result_free(inv);
  // with a negative integral gain the loop is unstable at the same point
  CHECK(pt_set_param(m, d, pt_param_index(m, "c.ki"), -15, &err) == PT_OK, "%s", err.msg);
  pt_equilibrium_options o = {0, 0, 0, 1, 1};  // Newton only, unstable accepted
  CHECK(pt_equilibrium(m, d, &o, res, &err) == PT_OK && res->stable == 0, "unstable: rc %s, "
        "stable %d", err.msg, res->stable);
  pt_equilibrium_result_free(res);
  pt_data_free(d);
  pt_model_free(m);
}

int main(int argc, char **argv) {
  if (argc > 1) root = argv[1];
  test_lags(PT_INT_RK4, 1e-9);
  test_lags(PT_INT_ABM4, 1e-8);
  test_lags(PT_INT_EULER, 5e-3);
  test_motor(PT_INT_RK4, 1e-9);
  test_motor(PT_INT_ABM4, 4e-9);
  test_motor(PT_INT_EULER, 4e-3);
  test_ode_tf(PT_INT_RK4);
  test_ode_tf(PT_INT_ABM4);
  test_ode_tf(PT_INT_EULER);
  test_expression_force();
  test_state_ops();
  test_equilibrium();
  return finish("controls");
}
