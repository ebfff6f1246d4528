// test_expr.c: the control elements' formulas (src/control/expr.c): values against the same
// formulas written in C (precedence, associativity, unary minus, functions), exact derivatives
// against central differences on fixed and on randomly generated formulas, and parse errors
// with their columns.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/check.h"
#include "expr.h"

// The signals the formulas read, by index.
static const char *const names[] = {"a", "b", "c", "x", "y", "motor.y1", "pid_1"};
#define NSIG ((int)(sizeof(names) / sizeof(names[0])))
static double sig[NSIG] = {0.7, -1.3, 2.1, 0.35, 1.6, -0.45, 3.0};

static int lookup(void *ctx, const char *name, size_t len) {
  (void)ctx;
  for (int i = 0; i < NSIG; i++)
    if (strlen(names[i]) == len && !memcmp(names[i], name, len)) return i;
  return -1;
}

static double stack[4096];

static double value_of(const char *text, double t) {
  pt_expr e;
  char msg[256];
  if (pt_expr_parse(&e, text, lookup, NULL, msg, sizeof(msg))) {
    CHECK(0, "\"%s\" does not parse: %s", text, msg);
    return NAN;
  }
  CHECK(e.depth >= 1 && e.depth <= 64, "\"%s\": depth %d", text, e.depth);
  double v = pt_expr_eval(&e, sig, t, stack);
  double grad[NSIG];
  double v2 = pt_expr_grad(&e, sig, t, grad, stack);
  CHECK(v == v2 || (isnan(v) && isnan(v2)), "\"%s\": eval %.17g, grad's value %.17g", text, v,
        v2);
  pt_expr_free(&e);
  return v;
}

static void test_values(void) {
  double a = sig[0], b = sig[1], c = sig[2], x = sig[3], y = sig[4], m = sig[5], p = sig[6];
  double t = 0.25;
  struct {
    const char *text;
    double want;
  } cases[] = {
    {"1 + 2 * 3", 7},
    {"(1 + 2) * 3", 9},
    {"1 - 2 - 3", -4},
    {"8 / 2 / 2", 2},
    {"2 ^ 3 ^ 2", 512},
    {"-2 ^ 2", -4},
    {"(-2) ^ 2", 4},
    {"2 ^ -1", 0.5},
    {"-a ^ 2", -(a * a)},
    {"--a", a},
    {"+a - -b", a + b},
    {"2 * 3 ^ 2", 18},
    {".5 + 1.5e2 + 2E-3 + 3.", 0.5 + 150 + 0.002 + 3},
    {"a * b + c", a * b + c},
    {"a - b * c / x", a - b * c / x},
    {"a / b / c", a / b / c},
    {"x ^ 2 + y ^ 0.5", x * x + sqrt(y)},
    {"sin(a) * cos(b) - tan(x)", sin(a) * cos(b) - tan(x)},
    {"exp(-a * t) + log(c)", exp(-a * t) + log(c)},
    {"sqrt(a * a + b * b)", sqrt(a * a + b * b)},
    {"abs(b) + tanh(y)", fabs(b) + tanh(y)},
    {"atan2(b, a)", atan2(b, a)},
    {"min(a, b) + max(a, c)", (b < a ? b : a) + (c > a ? c : a)},
    {"motor.y1 * 2 + pid_1", m * 2 + p},
    {"pi * t", M_PI * t},
    {"t", t},
    {"  a\t+\n b ", a + b},
    {"max(min(a, b), min(c, x))", fmax(fmin(a, b), fmin(c, x))},
    {"(a + b) * (c - a) / (1 + b ^ 2)", (a + b) * (c - a) / (1 + b * b)},
    {"a ^ b", pow(a, b)},
    {"sin(cos(tan(x)))", sin(cos(tan(x)))},
    {"-(a + b)", -(a + b)},
    {"a * -b", a * -b},
    {"2 ^ a ^ 0.5", pow(2, pow(a, 0.5))},
  };
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    double v = value_of(cases[k].text, t);
    CHECK(fabs(v - cases[k].want) <= 1e-14 * fmax(1, fabs(cases[k].want)),
          "\"%s\" = %.17g, want %.17g", cases[k].text, v, cases[k].want);
  }
}

// d/d(sig) of `text` by the forward mode against central differences; returns the largest
// relative difference.
static double grad_vs_fd(const char *text, const double *at, int quiet) {
  pt_expr e;
  char msg[256];
  if (pt_expr_parse(&e, text, lookup, NULL, msg, sizeof(msg))) {
    CHECK(0, "\"%s\" does not parse: %s", text, msg);
    return 1;
  }
  double s[NSIG], grad[NSIG], worst = 0;
  memcpy(s, at, sizeof(s));
  double v = pt_expr_grad(&e, s, 0.3, grad, stack);
  CHECK((size_t)(e.depth * (1 + e.nref)) <= sizeof(stack) / sizeof(stack[0]), "stack");
  for (int k = 0; k < e.nref; k++) {
    int i = e.ref[k];
    double h = 1e-6 * fmax(1, fabs(s[i])), save = s[i];
    s[i] = save + h;
    double vp = pt_expr_eval(&e, s, 0.3, stack);
    s[i] = save - h;
    double vm = pt_expr_eval(&e, s, 0.3, stack);
    s[i] = save;
    double fd = (vp - vm) / (2 * h);
    double scale = fmax(1, fmax(fabs(fd), fabs(v)));
    double diff = fabs(fd - grad[k]) / scale;
    if (diff > worst) worst = diff;
    if (!quiet)
      CHECK(diff < 1e-7, "\"%s\": d/d%s = %.12g, differences %.12g", text, names[i], grad[k], fd);
  }
  pt_expr_free(&e);
  return worst;
}

static void test_derivatives(void) {
  const char *formulas[] = {
    "a * b + c", "a - b * c / x", "a / b / c", "x ^ 2 + y ^ 0.5", "a ^ b", "a ^ 3", "b ^ 2",
    "b ^ 3", "2 ^ a", "y ^ x", "sin(a) * cos(b) - tan(x)", "exp(-a * t) + log(c)",
    "sqrt(a * a + b * b)", "abs(b) + tanh(y)", "abs(a)", "atan2(b, a)", "atan2(a * y, b - x)",
    "min(a, b) + max(a, c)", "max(min(a, b), min(c, x))", "motor.y1 * 2 + pid_1",
    "(a + b) * (c - a) / (1 + b ^ 2)", "sin(cos(tan(x)))", "-(a + b) * a", "a * -b",
    "exp(sin(a) * b) / (1 + c ^ 2)", "log(1 + x ^ 2) * sqrt(y)", "tanh(a * b * c)",
    "a * a * a - 3 * a * b + b / c", "(x - y) ^ 2 / (x * y)", "a ^ c ^ 0.5",
    "pi * a * t", "max(a, a)", "min(a ^ 2, b ^ 2) * 2", "sqrt(abs(b))", "-a ^ 2 + -b",
  };
  for (size_t k = 0; k < sizeof(formulas) / sizeof(formulas[0]); k++)
    grad_vs_fd(formulas[k], sig, 0);
  // and at a second point, every signal positive
  double other[NSIG] = {1.9, 0.6, 0.8, 1.2, 0.45, 2.5, 0.9};
  for (size_t k = 0; k < sizeof(formulas) / sizeof(formulas[0]); k++)
    grad_vs_fd(formulas[k], other, 0);
}

// ---- random formulas -------------------------------------------------------------------------

static unsigned long long rng = 88172645463325252ull;
static unsigned next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng >> 11);
}

// The formula being generated.
static char gtext[8192];
static size_t glen;

static void put(const char *p) {
  size_t n = strlen(p);
  if (glen + n < sizeof(gtext)) {
    memcpy(gtext + glen, p, n + 1);
    glen += n;
  }
}

// A random formula smooth near the test point: operations whose domain is everything (or
// guarded: division by 1 + u^2, log and sqrt of 1 + u^2, powers of 1 + u^2).
static void gen(int depth) {
  static const char *const pre[12] = {"", "(", "(", "", "", "sin(", "-cos(", "tanh(",
                                      "log(1 + (", "sqrt(1 + ", "atan2(", "(1 + "};
  static const char *const mid[12] = {"", " + ", " - ", " * ", " / (1 + (", "", "", "", "",
                                      "", ", 2 + tanh(", " ^ 2) ^ (0.5 * tanh("};
  static const char *const post[12] = {"", ")", ")", "", ") ^ 2)", ")", ")", ")", ") ^ 2)",
                                       " ^ 2)", "))", "))"};
  int kind = depth <= 0 ? 0 : (int)(next_rand() % 12);
  if (kind == 0) {
    char leaf[32];
    if (next_rand() % 4 == 0)
      snprintf(leaf, sizeof(leaf), "%.3g", (double)(next_rand() % 2000) / 1000 - 1);
    else
      snprintf(leaf, sizeof(leaf), "%s", names[next_rand() % NSIG]);
    put(leaf);
    return;
  }
  int binary = kind <= 4 || kind >= 10;
  put(pre[kind]);
  gen(depth - 1);
  if (binary) {
    put(mid[kind]);
    gen(depth - 1);
  }
  put(post[kind]);
}

static void test_random(void) {
  double worst = 0;
  const char *text = gtext;
  int n = 0;
  for (int k = 0; k < 600; k++) {
    glen = 0;
    gtext[0] = 0;
    gen(1 + k % 4);
    if (glen > 8000) continue;
    double d = grad_vs_fd(text, sig, 1);
    if (d > worst) worst = d;
    CHECK(d < 1e-6, "random formula \"%s\": derivative off by %.3g", text, d);
    n++;
  }
  printf("random formulas: %d, largest relative difference from central differences %.2e\n", n,
         worst);
  CHECK(n > 500, "%d random formulas", n);
}

// ---- errors ----------------------------------------------------------------------------------

static void expect_error(const char *text, int column, const char *words) {
  pt_expr e;
  char msg[256] = "", want[32];
  int rc = pt_expr_parse(&e, text, lookup, NULL, msg, sizeof(msg));
  CHECK(rc == -1, "\"%s\" parsed (rc %d)", text, rc);
  if (rc == 0) pt_expr_free(&e);
  snprintf(want, sizeof(want), "column %d: ", column);
  CHECK(strncmp(msg, want, strlen(want)) == 0, "\"%s\": message \"%s\", want column %d", text, msg,
        column);
  CHECK(strstr(msg, words) != NULL, "\"%s\": message \"%s\" lacks \"%s\"", text, msg, words);
  CHECK(e.code == NULL && e.ncode == 0, "\"%s\": a refused formula keeps nothing", text);
}

static void test_errors(void) {
  expect_error("", 1, "empty formula");
  expect_error("   ", 1, "empty formula");
  expect_error("a +", 4, "found end of expression");
  expect_error("a + * b", 5, "found \"*\"");
  expect_error("sin(a", 6, "expected \",\" or \")\"");
  expect_error("(a + b", 7, "expected \")\" to close the \"(\" of column 1");
  expect_error("a + b)", 6, "unmatched \")\"");
  expect_error("foo + 1", 1, "unknown signal \"foo\"");
  expect_error("a * motor.y2", 5, "unknown signal \"motor.y2\"");
  expect_error("sinn(a)", 1, "unknown function \"sinn\"");
  expect_error("1 + atan2(a)", 5, "atan2 takes 2 arguments, got 1");
  expect_error("sin(a, b)", 1, "sin takes 1 argument, got 2");
  expect_error("max()", 5, "max takes 2 arguments, got none");
  expect_error("2a", 2, "after the number 2");
  expect_error("a b", 3, "unexpected \"b\"");
  expect_error("a $ b", 3, "unexpected \"$\"");
  expect_error("sin + 1", 1, "sin is a function");
  expect_error("1e999", 1, "out of range");
  expect_error("a ^", 4, "found end of expression");
  expect_error(".", 1, "a number needs digits");
  char deep[1000];
  size_t k = 0;
  for (int i = 0; i < 300; i++) deep[k++] = '(';
  deep[k++] = 'a';
  for (int i = 0; i < 300; i++) deep[k++] = ')';
  deep[k] = 0;
  expect_error(deep, 201, "nested deeper than 200");
  // at the limit, a formula still parses
  k = 0;
  for (int i = 0; i < 150; i++) deep[k++] = '(';
  deep[k++] = 'a';
  for (int i = 0; i < 150; i++) deep[k++] = ')';
  deep[k] = 0;
  CHECK(value_of(deep, 0) == sig[0], "150 parentheses");
  // the stack is sized by the parse: a right-leaning sum needs one entry per term
  pt_expr e;
  char msg[128];
  CHECK(pt_expr_parse(&e, "a + (b + (c + (x + y)))", lookup, NULL, msg, sizeof(msg)) == 0, "%s",
        msg);
  CHECK(e.depth == 5 && e.nref == 5, "depth %d nref %d", e.depth, e.nref);
  pt_expr_free(&e);
  CHECK(pt_expr_parse(&e, "a + b + c + x + y + a * a", lookup, NULL, msg, sizeof(msg)) == 0, "%s",
        msg);
  CHECK(e.depth == 3 && e.nref == 5, "depth %d nref %d (a read twice is one reference)", e.depth,
        e.nref);
  pt_expr_free(&e);
}

int main(void) {
  test_values();
  test_derivatives();
  test_random();
  test_errors();
  return finish("expr");
}
