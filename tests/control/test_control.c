// test_control.c: the control elements (src/control/control.c, control_eval.c) on their own:
// step responses of a first-order lag, transfer functions and state-space and ode elements
// against their closed forms (the elements' states integrated by RK4 in the test); pid terms,
// output limit and anti-windup; saturation; the evaluation order; algebraic loops and unknown
// names refused with their file:line; run-time parameter rules; the exact partial derivatives
// of a graph of every element type against central differences; no allocation when
// evaluating.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/check.h"
#include "../engine/count_alloc.h"
#include "control.h"

// ---- building specs --------------------------------------------------------------------------

static double *dup(const double *v, int n) {
  double *p = malloc(sizeof(double) * (size_t)n);
  memcpy(p, v, sizeof(double) * (size_t)n);
  return p;
}

static char *sdup(const char *s) {
  char *p = malloc(strlen(s) + 1);
  strcpy(p, s);
  return p;
}

static pt_spec *spec(void) {
  pt_spec *s = pt_spec_new();
  snprintf(s->source, sizeof(s->source), "ctl.yaml");
  return s;
}

static pt_spec_control *add(pt_spec *s, const char *name, pt_control_type type) {
  pt_spec_control *c = pt_spec_add_control(s);
  snprintf(c->name, sizeof(c->name), "%s", name);
  c->type = type;
  c->line = 10 + s->ncontrol;  // controls[i] at line 11 + i
  return c;
}

static void inputs(pt_spec_control *c, int n, const char *const *names) {
  c->ninput = n;
  c->inputs = calloc((size_t)n, sizeof(*c->inputs));
  for (int k = 0; k < n; k++) snprintf(c->inputs[k], sizeof(c->inputs[k]), "%s", names[k]);
}

static pt_spec_control *add1(pt_spec *s, const char *name, pt_control_type type,
                             const char *input) {
  pt_spec_control *c = add(s, name, type);
  inputs(c, 1, &input);
  return c;
}

static void tf(pt_spec_control *c, int nnum, const double *num, int nden, const double *den) {
  c->nnum = nnum, c->num = dup(num, nnum);
  c->nden = nden, c->den = dup(den, nden);
}

static void mat(pt_spec_control *c, int k, int rows, int cols, const double *v) {
  c->mat[k].v = dup(v, rows * cols);
  c->mat[k].rows = rows;
  c->mat[k].cols = cols;
}

static void ode(pt_spec_control *c, int n, const char *const *states, const char *const *ders) {
  c->nstate = n;
  c->states = calloc((size_t)n, sizeof(*c->states));
  c->nderivative = n;
  c->derivatives = calloc((size_t)n, sizeof(char *));
  for (int k = 0; k < n; k++) {
    snprintf(c->states[k], sizeof(c->states[k]), "%s", states[k]);
    c->derivatives[k] = sdup(ders[k]);
  }
}

// ---- a control model with its arrays ----------------------------------------------------------

typedef struct {
  pt_ctl *c;
  double *par, *meas, *in, *x, *sig, *xdot, *stack, *work, *sig_z, *xdot_z;
  double *y0, *k[4];  // RK4
  pt_ctl_io io;
} rig;

static int build(pt_spec *s, pt_ctl **out, pt_error *err) {
  int rc = pt_ctl_build(s, out, err);
  pt_spec_free(s);
  return rc;
}

static double *zalloc(int n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

static void rig_make(rig *r, pt_spec *s) {
  memset(r, 0, sizeof(*r));
  pt_error err = {0};
  if (build(s, &r->c, &err)) {
    printf("FAIL build: %s\n", err.msg);
    exit(1);
  }
  pt_ctl *c = r->c;
  int nz = c->nmeas + c->nx + c->nin;
  r->par = zalloc(c->npar), r->meas = zalloc(c->nmeas), r->in = zalloc(c->nin);
  r->x = zalloc(c->nx), r->sig = zalloc(c->nsig), r->xdot = zalloc(c->nx);
  r->stack = zalloc(c->nstack), r->work = zalloc(c->ngrad);
  r->sig_z = zalloc(c->nsig * nz), r->xdot_z = zalloc(c->nx * nz), r->y0 = zalloc(c->nx);
  for (int k = 0; k < 4; k++) r->k[k] = zalloc(c->nx);
  memcpy(r->par, c->par0, sizeof(double) * (size_t)c->npar);
  memcpy(r->x, c->x0, sizeof(double) * (size_t)c->nx);
  r->io = (pt_ctl_io){0, r->par, r->meas, r->in, r->x, r->sig, r->xdot, r->stack};
}

static void rig_free(rig *r) {
  pt_ctl_free(r->c);
  double *all[] = {r->par, r->meas, r->in, r->x, r->sig, r->xdot, r->stack, r->work, r->sig_z,
                   r->xdot_z, r->y0, r->k[0], r->k[1], r->k[2], r->k[3]};
  for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) free(all[k]);
}

static void rig_eval(rig *r, double t) {
  r->io.t = t;
  pt_ctl_signals(r->c, &r->io);
  pt_ctl_derivatives(r->c, &r->io);
}

// One RK4 step of the control states (measures and inputs held).
static void rig_rk4(rig *r, double t, double h) {
  int n = r->c->nx;
  static const double a[4] = {0, 0.5, 0.5, 1};
  memcpy(r->y0, r->x, sizeof(double) * (size_t)n);
  for (int s = 0; s < 4; s++) {
    for (int i = 0; i < n; i++) r->x[i] = r->y0[i] + (s ? a[s] * h * r->k[s - 1][i] : 0);
    rig_eval(r, t + a[s] * h);
    memcpy(r->k[s], r->xdot, sizeof(double) * (size_t)n);
  }
  for (int i = 0; i < n; i++)
    r->x[i] = r->y0[i] + h / 6 * (r->k[0][i] + 2 * r->k[1][i] + 2 * r->k[2][i] + r->k[3][i]);
}

static double sig(const rig *r, const char *name) {
  int s = pt_ctl_signal(r->c, name);
  CHECK(s >= 0, "no signal %s", name);
  return s >= 0 ? r->sig[s] : NAN;
}

static void expect_error(pt_spec *s, const char *words) {
  pt_ctl *c = NULL;
  pt_error err = {0};
  int rc = build(s, &c, &err);
  CHECK(rc == PT_EMODEL, "built (rc %d), wanted an error with \"%s\"", rc, words);
  CHECK(c == NULL, "no model on failure");
  CHECK(strstr(err.msg, words) != NULL, "message \"%s\" lacks \"%s\"", err.msg, words);
  if (c) pt_ctl_free(c);
}

// ---- step responses against closed forms -----------------------------------------------------

// The element `out` of s (input element "u" set to 1 at t = 0) integrated by RK4 for `tend`
// seconds, against want(t) at every 50th step; returns the largest error.
static double step_response(pt_spec *s, const char *out, double (*want)(double), double tend) {
  rig r;
  rig_make(&r, s);
  r.in[0] = 1;
  double h = 1e-3, worst = 0;
  int n = (int)lround(tend / h);
  rig_eval(&r, 0);
  worst = fabs(sig(&r, out) - want(0));
  for (int k = 1; k <= n; k++) {
    rig_rk4(&r, (k - 1) * h, h);
    if (k % 50) continue;
    rig_eval(&r, k * h);
    double e = fabs(sig(&r, out) - want(k * h));
    if (e > worst) worst = e;
  }
  rig_free(&r);
  return worst;
}

static double lag(double t) { return 1 - exp(-t / 0.2); }
static double second_order(double t) {
  double wn = 4, z = 0.3, wd = wn * sqrt(1 - z * z);
  return 1 - exp(-z * wn * t) * (cos(wd * t) + z / sqrt(1 - z * z) * sin(wd * t));
}
static double lead(double t) { return 3 - 2 * exp(-t); }
static double third_order(double t) {
  return 5.0 / 6 - 2 * exp(-t) + 2.5 * exp(-2 * t) - 4.0 / 3 * exp(-3 * t);
}

static void test_step_responses(void) {
  // first-order lag 1 / (0.2 s + 1) as a transfer function, an ode and a state space
  pt_spec *s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  tf(add1(s, "lag", PT_CONTROL_TRANSFER_FUNCTION, "u"), 1, (double[]){1}, 2,
     (double[]){0.2, 1});
  double e = step_response(s, "lag", lag, 1.0);
  printf("lag as transfer_function: largest error %.2e\n", e);
  CHECK(e < 1e-10, "lag: %.3g", e);

  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  ode(add(s, "lag", PT_CONTROL_ODE), 1, (const char *[]){"y"}, (const char *[]){"(u - y) / 0.2"});
  e = step_response(s, "lag.y", lag, 1.0);
  CHECK(e < 1e-10, "lag as ode: %.3g", e);

  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  pt_spec_control *c = add(s, "lag", PT_CONTROL_STATE_SPACE);
  inputs(c, 1, (const char *[]){"u"});
  mat(c, 0, 1, 1, (double[]){-5});
  mat(c, 1, 1, 1, (double[]){5});
  mat(c, 2, 1, 1, (double[]){1});
  e = step_response(s, "lag.y1", lag, 1.0);
  CHECK(e < 1e-10, "lag as state_space: %.3g", e);

  // wn^2 / (s^2 + 2 zeta wn s + wn^2), wn = 4, zeta = 0.3
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  tf(add1(s, "g", PT_CONTROL_TRANSFER_FUNCTION, "u"), 1, (double[]){16}, 3,
     (double[]){1, 2.4, 16});
  e = step_response(s, "g", second_order, 3.0);
  printf("second order: largest error %.2e\n", e);
  CHECK(e < 1e-9, "second order: %.3g", e);

  // (2 s + 6) / (2 s + 2) = 1 + 2 / (s + 1), written with a leading zero: direct feedthrough
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  tf(add1(s, "g", PT_CONTROL_TRANSFER_FUNCTION, "u"), 3, (double[]){0, 2, 6}, 2,
     (double[]){2, 2});
  e = step_response(s, "g", lead, 2.0);
  CHECK(e < 1e-10, "lead (feedthrough): %.3g", e);

  // (s^2 + 2 s + 5) / ((s + 1)(s + 2)(s + 3)): partial fractions in third_order()
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  tf(add1(s, "g", PT_CONTROL_TRANSFER_FUNCTION, "u"), 3, (double[]){1, 2, 5}, 4,
     (double[]){1, 6, 11, 6});
  e = step_response(s, "g", third_order, 4.0);
  printf("third order with zeros: largest error %.2e\n", e);
  CHECK(e < 1e-10, "third order: %.3g", e);

  // a pure gain as a transfer function of order 0: no state
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  tf(add1(s, "g", PT_CONTROL_TRANSFER_FUNCTION, "u"), 1, (double[]){3}, 1, (double[]){2});
  rig r;
  rig_make(&r, s);
  r.in[0] = 1;
  rig_eval(&r, 0);
  CHECK(r.c->nx == 0 && sig(&r, "g") == 1.5, "3/2: nx %d, %g", r.c->nx, sig(&r, "g"));
  rig_free(&r);
}

// An ode written to equal a transfer function gives the same trajectory to rounding.
static void test_ode_equals_tf(void) {
  pt_spec *s = spec();
  pt_spec_control *u = add(s, "u", PT_CONTROL_EXPRESSION);
  u->expr = sdup("sin(3 * t) + 0.5");
  tf(add1(s, "g", PT_CONTROL_TRANSFER_FUNCTION, "u"), 2, (double[]){1, 3}, 3,
     (double[]){1, 2, 5});
  ode(add(s, "o", PT_CONTROL_ODE), 2, (const char *[]){"p", "v"},
      (const char *[]){"v", "u - 2 * v - 5 * p"});
  add(s, "y", PT_CONTROL_EXPRESSION)->expr = sdup("3 * o.p + o.v");
  rig r;
  rig_make(&r, s);
  double worst = 0, h = 1e-3;
  for (int k = 0; k < 5000; k++) {
    rig_rk4(&r, k * h, h);
    rig_eval(&r, (k + 1) * h);
    double d = fabs(sig(&r, "g") - sig(&r, "y"));
    if (d > worst) worst = d;
  }
  printf("ode vs transfer_function over 5 s: largest difference %.2e (|y| ~ %.2f)\n", worst,
         fabs(sig(&r, "g")));
  CHECK(worst < 1e-14, "ode vs tf: %.3g", worst);
  rig_free(&r);
}

// ---- pid, saturation ----------------------------------------------------------------------------

static void test_pid(void) {
  // e = 1 from rest: kp + ki t + kd / tf exp(-t / tf)
  pt_spec *s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  pt_spec_control *p = add1(s, "c", PT_CONTROL_PID, "u");
  p->kp = 2, p->ki = 3, p->kd = 0.5, p->tf = 0.1;
  rig r;
  rig_make(&r, s);
  CHECK(r.c->nx == 2 && !strcmp(r.c->x_name[0], "c.integral") &&
        !strcmp(r.c->x_name[1], "c.filter"), "pid states %d %s", r.c->nx, r.c->x_name[0]);
  r.in[0] = 1;
  double h = 1e-3, worst = 0;
  for (int k = 0; k <= 1000; k++) {
    rig_eval(&r, k * h);
    double t = k * h, want = 2 + 3 * t + 0.5 / 0.1 * exp(-t / 0.1);
    if (fabs(sig(&r, "c") - want) > worst) worst = fabs(sig(&r, "c") - want);
    rig_rk4(&r, t, h);
  }
  CHECK(worst < 1e-9, "pid step response: %.3g", worst);
  rig_free(&r);

  // output limit 2 with anti-windup: kp 1, ki 2 on e = 1 reaches the limit at t = 0.5, where
  // the integral stops; e = -1 then brings the output straight back (it would stay at the
  // limit for seconds with a wound-up integral)
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  p = add1(s, "c", PT_CONTROL_PID, "u");
  p->kp = 1, p->ki = 2, p->has_limit = 1, p->limit = 2;
  rig_make(&r, s);
  CHECK(r.c->nx == 1, "no filter state without kd");
  r.in[0] = 1;
  for (int k = 0; k < 2000; k++) rig_rk4(&r, k * h, h);
  rig_eval(&r, 2);
  double v;
  CHECK(sig(&r, "c") == 2, "held at its limit: %g", sig(&r, "c"));
  CHECK(pt_ctl_limit_side(r.c, &r.io, 1, &v) == 1 && fabs(v - 2) < 3 * h, "side, raw %g", v);
  CHECK(fabs(r.x[0] - 1) < 3 * h && r.xdot[0] == 0, "integral stopped at 1: %g, x' %g", r.x[0],
        r.xdot[0]);
  r.in[0] = -1;
  rig_eval(&r, 2);
  CHECK(fabs(sig(&r, "c")) < 3 * h && r.xdot[0] == -2, "unwound at once: %g, x' %g",
        sig(&r, "c"), r.xdot[0]);
  CHECK(pt_ctl_limit_side(r.c, &r.io, 1, &v) == 0, "within");
  r.in[0] = -5;
  rig_eval(&r, 2);
  CHECK(sig(&r, "c") == -2 && r.xdot[0] == 0, "lower limit: %g", sig(&r, "c"));
  rig_free(&r);

  // saturation
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  pt_spec_control *q = add1(s, "sat", PT_CONTROL_SATURATION, "u");
  q->has_lower = q->has_upper = 1, q->lower = -0.5, q->upper = 2;
  add1(s, "lo", PT_CONTROL_SATURATION, "u")->has_lower = 1;  // lower 0 only
  rig_make(&r, s);
  double want[][3] = {{-3, -0.5, 0}, {-0.5, -0.5, 0}, {1, 1, 1}, {2, 2, 2}, {7, 2, 7}};
  for (int k = 0; k < 5; k++) {
    r.in[0] = want[k][0];
    rig_eval(&r, 0);
    CHECK(sig(&r, "sat") == want[k][1] && sig(&r, "lo") == want[k][2], "sat(%g) = %g, lo %g",
          want[k][0], sig(&r, "sat"), sig(&r, "lo"));
    pt_ctl_partials(r.c, &r.io, r.sig_z, r.xdot_z, r.work);
    int inside = want[k][0] >= -0.5 && want[k][0] <= 2;
    CHECK(r.sig_z[1 * 1 + 0] == inside, "slope of sat at %g: %g", want[k][0], r.sig_z[1]);
  }
  rig_free(&r);
}

// ---- evaluation order, errors, parameters ------------------------------------------------------

static void test_order(void) {
  // declared against the flow: each reads the next one down
  pt_spec *s = spec();
  add1(s, "d", PT_CONTROL_GAIN, "c")->k = 2;
  add(s, "c", PT_CONTROL_EXPRESSION)->expr = sdup("b + 1");
  inputs(add(s, "b", PT_CONTROL_SUM), 2, (const char *[]){"a", "a"});
  add(s, "a", PT_CONTROL_INPUT);
  rig r;
  rig_make(&r, s);
  r.in[0] = 1.5;
  rig_eval(&r, 0);
  CHECK(sig(&r, "d") == 8, "d = 2 (2 a + 1) = %g", sig(&r, "d"));
  CHECK(r.c->order[0] == 3 && r.c->order[3] == 0, "order %d %d %d %d", r.c->order[0],
        r.c->order[1], r.c->order[2], r.c->order[3]);
  rig_free(&r);
}

// A state_space of D alone: a static matrix gain (an LQR's u = -K x), no state.
static void test_static_gain(void) {
  pt_spec *s = spec();
  add(s, "a", PT_CONTROL_INPUT);
  add(s, "b", PT_CONTROL_INPUT);
  pt_spec_control *k = add(s, "K", PT_CONTROL_STATE_SPACE);
  inputs(k, 2, (const char *[]){"a", "b"});
  mat(k, 3, 2, 2, (double[]){1, 2, 3, 4});
  rig r;
  rig_make(&r, s);
  r.in[0] = 0.5, r.in[1] = -2;
  rig_eval(&r, 0);
  CHECK(r.c->nx == 0 && sig(&r, "K.y1") == -3.5 && sig(&r, "K.y2") == -6.5, "K.y %g %g",
        sig(&r, "K.y1"), sig(&r, "K.y2"));
  pt_ctl_partials(r.c, &r.io, r.sig_z, r.xdot_z, r.work);
  CHECK(r.sig_z[2 * 2 + 0] == 1 && r.sig_z[2 * 2 + 1] == 2 && r.sig_z[3 * 2 + 1] == 4, "D");
  rig_free(&r);
  s = spec();
  add(s, "a", PT_CONTROL_INPUT);
  k = add(s, "K", PT_CONTROL_STATE_SPACE);
  inputs(k, 1, (const char *[]){"a"});
  mat(k, 0, 1, 1, (double[]){-1});
  mat(k, 3, 1, 1, (double[]){2});
  expect_error(s, "B is required with A and C (or D alone, a static gain)");
}

static void test_errors(void) {
  // algebraic loops, named in the direction signals flow, at the first element of the loop
  pt_spec *s = spec();
  add(s, "r", PT_CONTROL_INPUT);
  inputs(add(s, "e", PT_CONTROL_SUM), 2, (const char *[]){"r", "y"});
  add1(s, "k", PT_CONTROL_GAIN, "e");
  add(s, "y", PT_CONTROL_EXPRESSION)->expr = sdup("2 * k");
  expect_error(s, "ctl.yaml:12: controls[1] \"e\": algebraic loop e -> k -> y -> e");

  // through a pid with a proportional term, and a transfer function with feedthrough
  s = spec();
  add(s, "r", PT_CONTROL_INPUT);
  inputs(add(s, "e", PT_CONTROL_SUM), 2, (const char *[]){"r", "y"});
  add1(s, "c", PT_CONTROL_PID, "e")->kp = 1;
  tf(add1(s, "y", PT_CONTROL_TRANSFER_FUNCTION, "c"), 2, (double[]){1, 1}, 2, (double[]){1, 2});
  expect_error(s, "algebraic loop e -> c -> y -> e");

  // a state in the loop breaks it: an integral-only pid, a strictly proper transfer function
  s = spec();
  add(s, "r", PT_CONTROL_INPUT);
  inputs(add(s, "e", PT_CONTROL_SUM), 2, (const char *[]){"r", "y"});
  add1(s, "c", PT_CONTROL_PID, "e")->ki = 1;
  tf(add1(s, "y", PT_CONTROL_TRANSFER_FUNCTION, "c"), 1, (double[]){1}, 2, (double[]){1, 2});
  rig r;
  rig_make(&r, s);
  rig_free(&r);
  // a state_space whose D does not feed the looped input through
  s = spec();
  add(s, "r", PT_CONTROL_INPUT);
  inputs(add(s, "e", PT_CONTROL_SUM), 2, (const char *[]){"r", "ss.y1"});
  pt_spec_control *ss = add(s, "ss", PT_CONTROL_STATE_SPACE);
  inputs(ss, 2, (const char *[]){"e", "r"});
  mat(ss, 0, 1, 1, (double[]){-1});
  mat(ss, 1, 1, 2, (double[]){1, 0});
  mat(ss, 2, 1, 1, (double[]){1});
  mat(ss, 3, 1, 2, (double[]){0, 4});
  rig_make(&r, s);
  rig_free(&r);
  // ... and one whose D does
  s = spec();
  add(s, "r", PT_CONTROL_INPUT);
  inputs(add(s, "e", PT_CONTROL_SUM), 2, (const char *[]){"r", "ss.y1"});
  ss = add(s, "ss", PT_CONTROL_STATE_SPACE);
  inputs(ss, 2, (const char *[]){"e", "r"});
  mat(ss, 0, 1, 1, (double[]){-1});
  mat(ss, 1, 1, 2, (double[]){1, 0});
  mat(ss, 2, 1, 1, (double[]){1});
  mat(ss, 3, 1, 2, (double[]){0.1, 4});
  expect_error(s, "algebraic loop e -> ss.y1 -> e");
  // a formula reading itself
  s = spec();
  add(s, "x", PT_CONTROL_EXPRESSION)->expr = sdup("1 + x");
  expect_error(s, "controls[0] \"x\": algebraic loop x -> x");

  // unknown names, with the element's line
  s = spec();
  add(s, "a", PT_CONTROL_INPUT);
  add1(s, "g", PT_CONTROL_GAIN, "nope");
  expect_error(s, "ctl.yaml:12: controls[1] \"g\": input: no signal named \"nope\"");
  s = spec();
  add(s, "a", PT_CONTROL_INPUT);
  inputs(add(s, "g", PT_CONTROL_SUM), 2, (const char *[]){"a", "b"});
  expect_error(s, "controls[1] \"g\": inputs[1]: no signal named \"b\"");
  s = spec();
  add(s, "a", PT_CONTROL_INPUT);
  add(s, "f", PT_CONTROL_EXPRESSION)->expr = sdup("a * sin(bb)");
  expect_error(s, "controls[1] \"f\": expr: column 9: unknown signal \"bb\"");
  s = spec();
  add(s, "a", PT_CONTROL_INPUT);
  ode(add(s, "o", PT_CONTROL_ODE), 2, (const char *[]){"p", "v"},
      (const char *[]){"v", "a - p - w"});
  expect_error(s, "controls[1] \"o\": derivatives[1] (of v): column 9: unknown signal \"w\"");

  // names
  s = spec();
  add(s, "a", PT_CONTROL_INPUT);
  add(s, "a", PT_CONTROL_INPUT);
  expect_error(s, "controls[1] \"a\": the name is used twice (controls[0])");
  s = spec();
  add(s, "t", PT_CONTROL_INPUT);
  expect_error(s, "not t or pi");
  s = spec();
  add(s, "my signal", PT_CONTROL_INPUT);
  expect_error(s, "a letter or '_' followed by letters, digits and '_'");

  // elements
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  tf(add1(s, "g", PT_CONTROL_TRANSFER_FUNCTION, "u"), 3, (double[]){1, 0, 0}, 2,
     (double[]){1, 1});
  expect_error(s, "improper transfer function: the numerator has degree 2, the denominator 1");
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  tf(add1(s, "g", PT_CONTROL_TRANSFER_FUNCTION, "u"), 1, (double[]){1}, 2, (double[]){0, 0});
  expect_error(s, "den: all coefficients are 0");
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  add1(s, "c", PT_CONTROL_PID, "u")->kd = 1;
  expect_error(s, "needs its filter time constant tf > 0");
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  add1(s, "c", PT_CONTROL_PID, "u");
  expect_error(s, "kp, ki and kd are all 0");
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  add1(s, "c", PT_CONTROL_SATURATION, "u");
  expect_error(s, "lower, upper or both");
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  pt_spec_control *q = add1(s, "c", PT_CONTROL_SATURATION, "u");
  q->has_lower = q->has_upper = 1, q->lower = 1, q->upper = 1;
  expect_error(s, "lower (1) must be below upper (1)");
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  ss = add(s, "ss", PT_CONTROL_STATE_SPACE);
  inputs(ss, 1, (const char *[]){"u"});
  mat(ss, 0, 2, 2, (double[]){0, 1, -1, 0});
  mat(ss, 1, 1, 1, (double[]){1});
  mat(ss, 2, 1, 2, (double[]){1, 0});
  expect_error(s, "B must be 2 x 1 (states x inputs), got 1 x 1");
  s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  q = add(s, "sgn", PT_CONTROL_SUM);
  inputs(q, 2, (const char *[]){"u", "u"});
  q->signs = dup((double[]){1, 2}, 2);
  expect_error(s, "signs[1]: each sign is 1 or -1");
  s = spec();
  ode(add(s, "o", PT_CONTROL_ODE), 2, (const char *[]){"p", "p"}, (const char *[]){"1", "1"});
  expect_error(s, "states: \"p\" is named twice");
}

static void test_params(void) {
  pt_spec *s = spec();
  add(s, "u", PT_CONTROL_INPUT);
  add1(s, "k", PT_CONTROL_GAIN, "u")->k = 3;
  pt_spec_control *p = add1(s, "c", PT_CONTROL_PID, "u");
  p->kp = 1, p->ki = 2;
  pt_spec_control *q = add1(s, "sat", PT_CONTROL_SATURATION, "u");
  q->has_lower = q->has_upper = 1, q->lower = -1, q->upper = 1;
  rig r;
  rig_make(&r, s);
  const pt_ctl *c = r.c;
  char msg[256];
  int kk = pt_ctl_param(c, 1, "k"), kp = pt_ctl_param(c, 2, "kp"), ki = pt_ctl_param(c, 2, "ki");
  int kd = pt_ctl_param(c, 2, "kd"), lim = pt_ctl_param(c, 2, "limit");
  int lo = pt_ctl_param(c, 3, "lower");
  CHECK(kk >= 0 && kp >= 0 && ki >= 0 && kd >= 0 && lim >= 0 && lo >= 0, "parameters found");
  CHECK(pt_ctl_param(c, 1, "kp") == -1 && pt_ctl_param(c, 0, "k") == -1, "no such parameter");
  CHECK(r.par[kk] == 3 && r.par[ki] == 2 && isinf(r.par[lim]), "initial values");
  CHECK(pt_ctl_param_check(c, r.par, kk, -7.5, msg, sizeof(msg)) == 0, "%s", msg);
  CHECK(pt_ctl_param_check(c, r.par, kk, NAN, msg, sizeof(msg)) == -1 &&
        strstr(msg, "finite"), "NaN refused: %s", msg);
  CHECK(pt_ctl_param_check(c, r.par, kp, 0, msg, sizeof(msg)) == 0, "kp to 0: %s", msg);
  CHECK(pt_ctl_param_check(c, r.par, kd, 0.1, msg, sizeof(msg)) == -1 &&
        strstr(msg, "c.kd: the model gives this pid no derivative term"), "kd refused: %s", msg);
  CHECK(pt_ctl_param_check(c, r.par, kd, 0, msg, sizeof(msg)) == 0, "kd stays 0");
  CHECK(pt_ctl_param_check(c, r.par, lim, 0, msg, sizeof(msg)) == -1, "limit 0 refused");
  CHECK(pt_ctl_param_check(c, r.par, lim, 4, msg, sizeof(msg)) == 0, "limit 4: %s", msg);
  CHECK(pt_ctl_param_check(c, r.par, lo, 1, msg, sizeof(msg)) == -1 &&
        strstr(msg, "lower (1) must stay below upper (1)"), "lower refused: %s", msg);
  // a changed gain acts at the next evaluation; a changed ki keeps the integral term's value
  r.in[0] = 0.5;
  r.x[0] = 0.25;
  rig_eval(&r, 0);
  CHECK(sig(&r, "k") == 1.5 && sig(&r, "c") == 0.75, "k %g c %g", sig(&r, "k"), sig(&r, "c"));
  r.par[kk] = -2;
  r.par[ki] = 10;
  rig_eval(&r, 0);
  CHECK(sig(&r, "k") == -1 && sig(&r, "c") == 0.75 && r.xdot[0] == 5, "k %g c %g x' %g",
        sig(&r, "k"), sig(&r, "c"), r.xdot[0]);
  rig_free(&r);
}

// ---- partial derivatives -----------------------------------------------------------------------

// Every element type in one graph (a loop through states included).
static pt_spec *graph(double pid_limit) {
  pt_spec *s = spec();
  add(s, "m1", PT_CONTROL_MEASURE);
  add(s, "m2", PT_CONTROL_MEASURE);
  add(s, "r", PT_CONTROL_INPUT);
  pt_spec_control *e = add(s, "e", PT_CONTROL_SUM);
  inputs(e, 2, (const char *[]){"r", "m1"});
  e->signs = dup((double[]){1, -1}, 2);
  add1(s, "g", PT_CONTROL_GAIN, "e")->k = 2.5;
  pt_spec_control *p = add1(s, "ctl", PT_CONTROL_PID, "e");
  p->kp = 3, p->ki = 1.5, p->kd = 0.4, p->tf = 0.05;
  p = add1(s, "lim", PT_CONTROL_PID, "e");
  p->kp = 2, p->ki = 1, p->has_limit = 1, p->limit = pid_limit;
  pt_spec_control *q = add1(s, "sat", PT_CONTROL_SATURATION, "g");
  q->has_lower = q->has_upper = 1, q->lower = -1, q->upper = 10;
  add(s, "f", PT_CONTROL_EXPRESSION)->expr =
      sdup("sin(m1) * ctl + m2 ^ 2 / (1 + sat ^ 2) + tanh(filt) * t");
  tf(add1(s, "filt", PT_CONTROL_TRANSFER_FUNCTION, "f"), 2, (double[]){1, 2}, 3,
     (double[]){1, 3, 2});
  pt_spec_control *ss = add(s, "ss", PT_CONTROL_STATE_SPACE);
  inputs(ss, 2, (const char *[]){"f", "m2"});
  mat(ss, 0, 2, 2, (double[]){-1, 0.5, -0.3, -2});
  mat(ss, 1, 2, 2, (double[]){1, 0.2, 0, 1});
  mat(ss, 2, 2, 2, (double[]){1, 0, 0.4, 1});
  mat(ss, 3, 2, 2, (double[]){0, 0.5, 0, 0});
  ss->ninitial = 2, ss->initial = dup((double[]){0.3, -0.1}, 2);
  pt_spec_control *o = add(s, "od", PT_CONTROL_ODE);
  ode(o, 2, (const char *[]){"p", "q"},
      (const char *[]){"q", "-sin(p) + ss.y1 * q - 0.3 * m1 + lim"});
  o->ninitial = 2, o->initial = dup((double[]){0.1, -0.2}, 2);
  add(s, "out", PT_CONTROL_EXPRESSION)->expr = sdup("od.p * ss.y2 + ctl * lim");
  return s;
}

// sig_z and xdot_z against central differences in every z = (meas, x, in); returns the largest
// relative difference.
static double partials_vs_fd(rig *r) {
  pt_ctl *c = r->c;
  int nz = c->nmeas + c->nx + c->nin;
  double t = 0.7;
  rig_eval(r, t);
  pt_ctl_partials(c, &r->io, r->sig_z, r->xdot_z, r->work);
  double *sp = zalloc(c->nsig), *sm = zalloc(c->nsig), *xp = zalloc(c->nx), *xm = zalloc(c->nx);
  double worst = 0;
  for (int j = 0; j < nz; j++) {
    double *v = j < c->nmeas ? &r->meas[j]
                : j < c->nmeas + c->nx ? &r->x[j - c->nmeas] : &r->in[j - c->nmeas - c->nx];
    double save = *v, h = 1e-6 * fmax(1, fabs(save));
    *v = save + h;
    rig_eval(r, t);
    memcpy(sp, r->sig, sizeof(double) * (size_t)c->nsig);
    memcpy(xp, r->xdot, sizeof(double) * (size_t)c->nx);
    *v = save - h;
    rig_eval(r, t);
    memcpy(sm, r->sig, sizeof(double) * (size_t)c->nsig);
    memcpy(xm, r->xdot, sizeof(double) * (size_t)c->nx);
    *v = save;
    for (int i = 0; i < c->nsig + c->nx; i++) {
      int is_sig = i < c->nsig, row = is_sig ? i : i - c->nsig;
      double fd = is_sig ? (sp[row] - sm[row]) / (2 * h) : (xp[row] - xm[row]) / (2 * h);
      double an = is_sig ? r->sig_z[row * nz + j] : r->xdot_z[row * nz + j];
      double d = fabs(fd - an) / fmax(1, fabs(fd));
      if (d > worst) worst = d;
      CHECK(d < 1e-7, "d %s%s / dz%d: %.12g, differences %.12g", is_sig ? "" : "xdot ",
            is_sig ? c->sig_name[row] : c->x_name[row], j, an, fd);
    }
  }
  rig_eval(r, t);
  free(sp), free(sm), free(xp), free(xm);
  return worst;
}

static void test_partials(void) {
  rig r;
  rig_make(&r, graph(50));
  const pt_ctl *c = r.c;
  CHECK(c->nmeas == 2 && c->nin == 1 && c->nx == 2 + 1 + 2 + 2 + 2 && c->nsig == 15,
        "sizes: nmeas %d nin %d nx %d nsig %d", c->nmeas, c->nin, c->nx, c->nsig);
  r.meas[0] = 0.4, r.meas[1] = -0.8, r.in[0] = 1.1;
  for (int k = 0; k < c->nx; k++) r.x[k] = 0.1 * (k + 1) * (k % 2 ? -1 : 1);
  double w = partials_vs_fd(&r);
  printf("partials of a graph of every element: largest relative difference %.2e\n", w);
  // the limited pid within its limit: slope kp on e; at its limit: 0, and its integral stops
  int lim = pt_ctl_signal(c, "lim"), e = pt_ctl_signal(c, "e");
  int nz = c->nmeas + c->nx + c->nin, r_col = c->nmeas + c->nx;
  CHECK(fabs(r.sig_z[lim * nz + r_col] - 2 * r.sig_z[e * nz + r_col] - 0) < 1e-15,
        "d lim / dr = kp: %g", r.sig_z[lim * nz + r_col]);
  rig_free(&r);

  rig_make(&r, graph(0.05));
  c = r.c;
  r.meas[0] = 0.4, r.meas[1] = -0.8, r.in[0] = 1.1;
  for (int k = 0; k < c->nx; k++) r.x[k] = 0.1 * (k + 1) * (k % 2 ? -1 : 1);
  partials_vs_fd(&r);
  lim = pt_ctl_signal(c, "lim");
  double v;
  CHECK(pt_ctl_limit_side(c, &r.io, pt_ctl_element(c, "lim"), &v) == 1, "at its limit (%g)", v);
  for (int j = 0; j < nz; j++) CHECK(r.sig_z[lim * nz + j] == 0, "held: d lim / dz%d = 0", j);
  int xi = c->elem_x_adr[pt_ctl_element(c, "lim")];
  for (int j = 0; j < nz; j++) CHECK(r.xdot_z[xi * nz + j] == 0, "wound: d xI' / dz%d = 0", j);

  // no allocation when evaluating or differentiating
  count_alloc_install();
  count_alloc_on = 1;
  long before = count_alloc_n;
  for (int k = 0; k < 100; k++) {
    rig_eval(&r, 0.01 * k);
    pt_ctl_partials(c, &r.io, r.sig_z, r.xdot_z, r.work);
  }
  count_alloc_on = 0;
  CHECK(count_alloc_n == before, "%ld allocations while evaluating", count_alloc_n - before);
  rig_free(&r);
}

int main(void) {
  test_step_responses();
  test_ode_equals_tf();
  test_pid();
  test_order();
  test_static_gain();
  test_errors();
  test_params();
  test_partials();
  return finish("control");
}
