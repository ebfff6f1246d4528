// test_linearize_controls.c: the linearization of closed loops with control elements
// (issue 26, items 3 and 5), by the tree method and by the augmented system:
// - the DC motor on a flywheel with a PI speed loop: A and B against the hand-derived
//   matrices, the eigenvalues against the roots of the hand-derived characteristic
//   polynomial J L s^3 + (J R + b L) s^2 + (b R + k^2 + k kp) s + k ki;
// - a pendulum held by a PID with a filtered derivative: the closed-loop poles against the
//   roots of J tf s^4 + J s^3 + (mgl tf + kp tf + kd) s^2 + (mgl + kp + ki tf) s + ki;
// - the tutorial's cart-pole with its LQR inside the model: A = A_open - B_open K;
// - a model with every element type, away from equilibrium: A and B against central
//   differences of the engine's own closed-loop dynamics (pt_forward);
// - signals and control states as outputs, saturations and limits on their side with notes,
//   driven inputs refused as inputs.
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "test_linearize_util.h"

static pt_linearization *lin(const pt_model *m, const pt_data *d, pt_lin_solver solver,
                             const char *const *inputs, int nu, const char *const *outputs,
                             int ny) {
  const pt_linearize_options o = {NULL, 0, inputs, nu, outputs, ny, solver};
  return linearize_with(m, d, &o);
}

static int state_of(const pt_linearization *r, const char *name) {
  for (int i = 0; i < 2 * r->nz + r->nd; i++)
    if (!strcmp(r->state_name[i], name)) return i;
  CHECK(0, "no state %s", name);
  return 0;
}

// Roots of a real polynomial c[0] s^n + ... + c[n] (companion matrix, LAPACK), sorted as the
// linearization's eigenvalues (by modulus, then imaginary part).
static int cmp_root(const void *pa, const void *pb) {
  const double *a = pa, *b = pb;
  double ma = hypot(a[0], a[1]), mb = hypot(b[0], b[1]);
  if (ma != mb) return ma < mb ? -1 : 1;
  return (a[1] > b[1]) - (a[1] < b[1]);
}

static void roots(const double *c, int n, double (*r)[2]) {
  double A[64] = {0}, wr[8], wi[8], dummy;
  for (int j = 0; j < n; j++) A[j] = -c[j + 1] / c[0];
  for (int i = 1; i < n; i++) A[i * n + i - 1] = 1;
  LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'N', n, A, n, wr, wi, &dummy, 1, &dummy, 1);
  for (int i = 0; i < n; i++) r[i][0] = wr[i], r[i][1] = wi[i];
  qsort(r, (size_t)n, sizeof(r[0]), cmp_root);
}

// The linearization's eigenvalues without `skip` zero ones, against the roots.
static void eig_vs_roots(const pt_linearization *r, double (*want)[2], int n, int skip,
                         double tol, const char *what) {
  const int N = 2 * r->nz + r->nd;
  CHECK(N == n + skip, "%s: %d eigenvalues, want %d + %d", what, N, n, skip);
  int k = 0, zeros = 0;
  for (int i = 0; i < N && k < n; i++) {
    if (zeros < skip && hypot(r->eig[i].re, r->eig[i].im) < 1e-9) {
      zeros++;
      continue;
    }
    const double scale = fmax(1, hypot(want[k][0], want[k][1]));
    CHECK(fabs(r->eig[i].re - want[k][0]) < tol * scale &&
          fabs(fabs(r->eig[i].im) - fabs(want[k][1])) < tol * scale,
          "%s: eigenvalue %g%+gi, root %g%+gi", what, r->eig[i].re, r->eig[i].im, want[k][0],
          want[k][1]);
    k++;
  }
  CHECK(zeros == skip, "%s: %d zero eigenvalues, want %d", what, zeros, skip);
}

// ---- the DC motor on a flywheel -----------------------------------------------------------------

// configs/models/dc_motor_flywheel.yaml (its header has the numbers)
static const char *root = ".";  // the project root (argv[1])

static pt_model *load_example(const char *file) { return load_config(root, file); }

static void test_motor(pt_lin_solver solver) {
  const double J = 0.02, b = 0.001, k = 0.05, R = 1, L = 0.01, kp = 0.5, ki = 5;
  pt_model *m = load_example("dc_motor_flywheel.yaml");
  pt_data *d = pt_data_new(m);
  const char *outs[] = {"motor.y1", "err", "pic.integral", "shaft.acc"};
  pt_linearization *r = lin(m, d, solver, NULL, 0, outs, 4);
  CHECK(r->nz == 1 && r->nd == 2 && r->nu == 1 && !strcmp(r->input_name[0], "ref"),
        "nz %d nd %d nu %d", r->nz, r->nd, r->nu);
  const int n = 4, th = state_of(r, "shaft"), w = state_of(r, "shaft.rate");
  const int xi = state_of(r, "pic.integral"), cur = state_of(r, "motor.x1");
  // hand-derived: w' = (k i - b w) / J; xI' = ki (r - w); i' = (kp (r - w) + xI - R i - k w) / L
  double A[16] = {0}, B[4] = {0};
  A[th * n + w] = 1;
  A[w * n + w] = -b / J, A[w * n + cur] = k / J;
  A[xi * n + w] = -ki;
  A[cur * n + w] = -(kp + k) / L, A[cur * n + xi] = 1 / L, A[cur * n + cur] = -R / L;
  B[xi] = ki, B[cur] = kp / L;
  double worst = 0;
  for (int i = 0; i < 16; i++) worst = fmax(worst, fabs(r->A[i] - A[i]) / fmax(1, fabs(A[i])));
  for (int i = 0; i < 4; i++) worst = fmax(worst, fabs(r->B[i] - B[i]) / fmax(1, fabs(B[i])));
  CHECK(worst < 1e-12, "motor A, B: %.3g from the hand-derived matrices", worst);
  // outputs: motor.y1 = k i; err = ref - w (D = 1); pic.integral; shaft.acc = row of A, B
  CHECK(r->C[0 * n + cur] == k && r->C[1 * n + w] == -1 && r->D[1] == 1 &&
        r->C[2 * n + xi] == 1, "signal and control state outputs");
  double acc = 0;
  for (int j = 0; j < n; j++) acc = fmax(acc, fabs(r->C[3 * n + j] - A[w * n + j]));
  CHECK(acc < 1e-12 && fabs(r->D[3]) < 1e-15, "shaft.acc row %g", acc);
  double want[3][2];
  roots((double[]){J * L, J * R + b * L, b * R + k * k + k * kp, k * ki}, 3, want);
  eig_vs_roots(r, want, 3, 1, 1e-10, "DC motor PI loop");
  printf("%s: DC motor PI loop: A, B %.1e from hand-derived; poles %.6f, %.6f%+.6fi "
         "(and the angle's 0)\n", solver == PT_LIN_SPARSE ? "tree" : "augmented", worst,
         want[0][0], want[1][0], want[1][1]);
  CHECK(strstr(r->notes, "closed loop: 2 control states"), "notes: %s", r->notes);
  pt_linearization_free(r);
  // a driven input is not an input of the closed loop
  const char *bad[] = {"drive"};
  pt_linearize_options o = {NULL, 0, bad, 1, NULL, 0, solver};
  pt_error err = {0};
  CHECK(pt_linearize(m, d, &o, &r, &err) == PT_EINVAL &&
        strstr(err.msg, "driven by signal \"motor.y1\""), "%s", err.msg);
  pt_data_free(d);
  pt_model_free(m);
}

// ---- a pendulum held by a PID -------------------------------------------------------------------

static void test_pid_pendulum(pt_lin_solver solver) {
  // a 1 kg, 1 m rod hanging from its end: J = 1/3, m g l = 4.905
  const double J = 1.0 / 3, mgl = 9.81 * 0.5, kp = 30, ki = 20, kd = 4, tf = 0.05;
  pt_model *m = rod_model(SLENDER_INERTIA, "",
      "controls:\n"
      "  - {name: angle, type: measure, coordinate: hinge}\n"
      "  - {name: target, type: input}\n"
      "  - {name: e, type: sum, inputs: [target, angle], signs: [+, -]}\n"
      "  - {name: c, type: pid, input: e, kp: 30, ki: 20, kd: 4, tf: 0.05}\n"
      "actuators:\n"
      "  - {name: tau, type: joint_torque, joint: hinge, source: c}\n");
  pt_data *d = pt_data_new(m);
  pt_linearization *r = lin(m, d, solver, NULL, 0, NULL, 0);
  CHECK(r->nz == 1 && r->nd == 2, "nz %d nd %d", r->nz, r->nd);
  double want[4][2];
  roots((double[]){J * tf, J, mgl * tf + kp * tf + kd, mgl + kp + ki * tf, ki}, 4, want);
  eig_vs_roots(r, want, 4, 0, 1e-9, "PID pendulum");
  printf("%s: PID-held pendulum: poles %.6f%+.6fi, %.6f%+.6fi, ... match the polynomial's\n",
         solver == PT_LIN_SPARSE ? "tree" : "augmented", want[0][0], want[0][1], want[2][0],
         want[2][1]);
  // the default outputs: every state, C = I
  CHECK(r->ny == 4 && r->C[0] == 1 && r->C[5] == 1 && r->C[10] == 1 && r->C[15] == 1 &&
        !strcmp(r->output_name[2], "c.integral") && !strcmp(r->state_name[3], "c.filter"),
        "default outputs");
  // K of the closed loop (control states held): the mechanism's stiffness plus the
  // controller's direct path kp + kd / tf; M the pendulum's
  CHECK(fabs(r->M[0] - J) < 1e-9 && fabs(r->K[0] - (mgl + kp + kd / tf)) < 1e-9, "M %g K %g",
        r->M[0], r->K[0]);
  pt_linearization_free(r);
  pt_data_free(d);
  pt_model_free(m);
}

// ---- the cart-pole and its LQR ------------------------------------------------------------------

static void test_cartpole(pt_lin_solver solver) {
  pt_model *m = load_example("cartpole_lqr.yaml");
  // the open loop: the same mechanism with the push a client's input
  static const char open[] =
      "model: cartpole\n"
      "bodies:\n"
      "  - {name: cart, mass: 1.0, inertia: [0.01, 0.02, 0.02], position: [0, 0, 0]}\n"
      "  - {name: pole, mass: 0.2, inertia: [0.016668, 0.016668, 0.00001], position: [0, 0, 0.5]}\n"
      "joints:\n"
      "  - {name: rail, type: prismatic, body1: ground, body2: cart, point: [0, 0, 0],"
      " axis: [1, 0, 0]}\n"
      "  - {name: hinge, type: revolute, body1: cart, body2: pole, point: [0, 0, 0],"
      " axis: [0, 1, 0]}\n"
      "actuators:\n"
      "  - {name: push, type: joint_force, joint: rail, limit: 20.0}\n";
  pt_model *mo = load_yaml(open);
  pt_data *d = pt_data_new(m), *dopen = pt_data_new(mo);
  pt_linearization *r = lin(m, d, solver, NULL, 0, NULL, 0);
  pt_linearization *ro = lin(mo, dopen, solver, NULL, 0, NULL, 0);
  const double K[4] = {-3.162, -44.364, -4.692, -10.913};  // the tutorial's u = -K x
  double worst = 0;
  CHECK(r->nz == 2 && r->nd == 0 && r->nu == 0 && ro->nu == 1, "sizes");
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      worst = fmax(worst, fabs(r->A[i * 4 + j] - (ro->A[i * 4 + j] - ro->B[i] * K[j])));
  CHECK(worst < 1e-12, "A_cl vs A - B K: %.3g", worst);
  // the tutorial's closed-loop eigenvalues (python, printed to 3 decimals)
  const double want[4][2] = {{-1.076, 0.913}, {-1.076, -0.913}, {-4.485, 1.465}, {-4.485, -1.465}};
  for (int i = 0; i < 4; i++) {
    int found = 0;
    for (int j = 0; j < 4; j++)
      found |= fabs(r->eig[j].re - want[i][0]) < 2e-3 && fabs(r->eig[j].im - want[i][1]) < 2e-3;
    CHECK(found, "cart-pole eigenvalue %g%+gi not found", want[i][0], want[i][1]);
  }
  printf("%s: cart-pole with its LQR in the model: A - (A_open - B K) %.1e; eigenvalues "
         "%.3f%+.3fi, %.3f%+.3fi\n", solver == PT_LIN_SPARSE ? "tree" : "augmented", worst,
         r->eig[0].re, r->eig[0].im, r->eig[2].re, r->eig[2].im);
  pt_linearization_free(r);
  pt_linearization_free(ro);
  pt_data_free(d);
  pt_data_free(dopen);
  pt_model_free(mo);
  pt_model_free(m);
}

// ---- every element type, against central differences of the closed loop -------------------------

static const char every_model[] =
    "model: every_element\n"
    "bodies:\n"
    "  - {name: a, mass: 1, inertia: [0.0833, 0.0833, 0.001], position: [0, 0, -0.5]}\n"
    "  - {name: b, mass: 0.5, inertia: [0.02, 0.02, 0.001], position: [0, 0, -1.25]}\n"
    "joints:\n"
    "  - {name: j1, type: revolute, body1: ground, body2: a, point: [0, 0, 0], axis: [0, 1, 0]}\n"
    "  - {name: j2, type: revolute, body1: a, body2: b, point: [0, 0, -1], axis: [1, 0, 0]}\n"
    "forces:\n"
    "  - {name: drag, type: expression_force, body: b, point: [0, 0, -1.5], direction: [1, 1, 0],"
    " expr: -0.3 * vx * abs(vx) + 0.1 * sin(t)}\n"
    "  - {name: twist, type: expression_force, body: a, axis: [0, 0, 1], frame: body,"
    " expr: -0.2 * wz - 0.05 * o.p}\n"
    "controls:\n"
    "  - {name: th1, type: measure, coordinate: j1}\n"
    "  - {name: w2, type: measure, rate: j2}\n"
    "  - {name: vx, type: measure, body: b, quantity: velocity, axis: x}\n"
    "  - {name: wz, type: measure, body: a, quantity: angular_velocity, axis: z}\n"
    "  - {name: zb, type: measure, body: b, quantity: position, axis: z}\n"
    "  - {name: ref, type: input}\n"
    "  - {name: ref2, type: input}\n"
    "  - {name: e, type: sum, inputs: [ref, th1], signs: [+, -]}\n"
    "  - {name: c, type: pid, input: e, kp: 8, ki: 2, kd: 0.5, tf: 0.05, limit: 50}\n"
    "  - {name: g, type: gain, input: c, k: 0.7}\n"
    "  - {name: s, type: saturation, input: g, lower: -20, upper: 20}\n"
    "  - {name: f, type: transfer_function, input: w2, num: [2, 1], den: [0.1, 1]}\n"
    "  - {name: obs, type: state_space, inputs: [th1, wz, ref2], A: [[-2, 0.5], [0, -3]],"
    " B: [[2, 0, 1], [0, 3, 0]], C: [[1, 0], [0.5, 1]], D: [[0, 0, 0.2], [0, 0, 0]]}\n"
    "  - {name: o, type: ode, states: [p, q], derivatives: [q, 'zb + 1.2 - 4 * p - q + ref2'],"
    " initial: [0.1, 0]}\n"
    "  - {name: x2, type: expression, expr: '-f * 0.1 + tanh(obs.y2) * 0.2 - 0.5 * o.q'}\n"
    "actuators:\n"
    "  - {name: tau1, type: joint_torque, joint: j1, limit: 15, source: s}\n"
    "  - {name: tau2, type: joint_torque, joint: j2, source: x2}\n"
    "  - {name: free, type: joint_torque, joint: j2}\n";

// The closed loop's state derivative at d's state: (S', W', X') for S the joint coordinates.
static void closed_derivative(const pt_model *m, const pt_data *d, const int *co, int z,
                              double *f) {
  for (int i = 0; i < z; i++) f[i] = pt_coord_rates(d)[co[i]];
  for (int i = 0; i < z; i++) f[z + i] = pt_coord_accels(d)[co[i]];
  for (int i = 0; i < pt_model_ncontrol_state(m); i++) f[2 * z + i] = pt_control_state_rates(d)[i];
}

static void test_every_element(pt_lin_solver solver) {
  pt_model *m = load_yaml(every_model);
  pt_data *d = pt_data_new(m), *p = pt_data_new(m);
  const char *names[2] = {"j1", "j2"};
  const int co[2] = {pt_coord_index(m, "j1"), pt_coord_index(m, "j2")};
  // away from equilibrium: moving, the control states off zero
  pt_assign pos[2] = {{co[0], 0.4}, {co[1], -0.3}}, vel[2] = {{co[0], 0.7}, {co[1], -1.1}};
  pt_error err = {0};
  CHECK(pt_set_state(m, d, pos, 2, vel, 2, &err) == PT_OK, "%s", err.msg);
  pt_set_input(m, d, pt_input_index(m, "ref"), 0.2);
  pt_set_input(m, d, pt_input_index(m, "ref2"), -0.4);
  pt_set_input(m, d, pt_input_index(m, "free"), 0.3);
  const int nd = pt_model_ncontrol_state(m);
  int idx[16];
  double xs[16];
  for (int i = 0; i < nd; i++) idx[i] = i, xs[i] = 0.05 * (i + 1) * (i % 2 ? -1 : 1);
  CHECK(pt_set_control_states(m, d, idx, xs, nd, &err) == PT_OK, "%s", err.msg);
  const char *inputs[] = {"free", "ref", "ref2"};
  pt_linearization *r = lin(m, d, solver, inputs, 3, NULL, 0);
  const int z = 2, n = 2 * z + nd;
  CHECK(r->nz == z && r->nd == nd && !strcmp(r->state_name[0], names[0]), "states %s",
        r->state_name[0]);
  // central differences of (S', W', X') in each state and input, on copies of d
  double fp[32], fm[32], worst = 0;
  for (int j = 0; j < n + 3; j++) {
    for (int sgn = 1; sgn >= -1; sgn -= 2) {
      pt_data_copy(m, p, d);
      const double h = 1e-5 * sgn;
      if (j < 2 * z) {
        pt_assign a[2] = {{co[0], pt_coords(d)[co[0]]}, {co[1], pt_coords(d)[co[1]]}};
        pt_assign v[2] = {{co[0], pt_coord_rates(d)[co[0]]}, {co[1], pt_coord_rates(d)[co[1]]}};
        if (j < z) a[j].value += h; else v[j - z].value += h;
        CHECK(pt_set_state(m, p, a, 2, v, 2, &err) == PT_OK, "%s", err.msg);
      } else if (j < n) {
        const int k = j - 2 * z;
        const double x = pt_control_states(d)[k] + h;
        CHECK(pt_set_control_states(m, p, &k, &x, 1, &err) == PT_OK, "%s", err.msg);
      } else {
        const int in = pt_input_index(m, inputs[j - n]);
        pt_set_input(m, p, in, pt_inputs(d)[in] + h);
        pt_forward(m, p);
      }
      closed_derivative(m, p, co, z, sgn > 0 ? fp : fm);
    }
    for (int i = 0; i < n; i++) {
      const double fd = (fp[i] - fm[i]) / 2e-5;
      const double an = j < n ? r->A[i * n + j] : r->B[i * 3 + (j - n)];
      const double diff = fabs(fd - an) / fmax(1, fabs(an));
      worst = fmax(worst, diff);
      CHECK(diff < 1e-6, "%s: d %s' / d %s: %.10g, differences %.10g", solver == PT_LIN_SPARSE
            ? "tree" : "augmented", r->state_name[i], j < n ? r->state_name[j] : inputs[j - n],
            an, fd);
    }
  }
  printf("%s: every element type, moving, off equilibrium: A and B (%d x %d, %d inputs) %.1e "
         "from central differences of the closed loop\n",
         solver == PT_LIN_SPARSE ? "tree" : "augmented", n, n, 3, worst);
  pt_linearization_free(r);
  pt_data_free(p);
  pt_data_free(d);
  pt_model_free(m);
}

// ---- limits on their side -----------------------------------------------------------------------

static void test_limits(void) {
  pt_model *m = load_yaml(every_model);
  pt_data *d = pt_data_new(m);
  // a large reference error: the pid at its limit 50, the saturation at 20 and tau1 at 30
  pt_set_input(m, d, pt_input_index(m, "ref"), 40);
  pt_forward(m, d);
  const char *ins[] = {"ref"}, *outs[] = {"c", "s", "g"};
  pt_linearization *r = lin(m, d, PT_LIN_SPARSE, ins, 1, outs, 3);
  CHECK(r->D[0] == 0 && r->D[1] == 0 && r->D[2] == 0, "held: no slope on ref (%g %g %g)",
        r->D[0], r->D[1], r->D[2]);
  CHECK(strstr(r->notes, "pid c held at its upper limit") &&
        strstr(r->notes, "saturation s at its upper bound") &&
        strstr(r->notes, "input tau1 (driven by s) at its actuator's limit"), "notes:\n%s",
        r->notes);
  pt_linearization_free(r);
  pt_data_free(d);
  pt_model_free(m);
}

int main(int argc, char **argv) {
  if (argc > 1) root = argv[1];
  for (int s = 0; s < 2; s++) {
    const pt_lin_solver solver = s ? PT_LIN_AUGMENTED : PT_LIN_SPARSE;
    test_motor(solver);
    test_pid_pendulum(solver);
    test_cartpole(solver);
    test_every_element(solver);
  }
  test_limits();
  return finish("linearize_controls");
}
