// expr.c: the formulas of control elements: a recursive-descent parser that emits postfix
// code (expr.h has the grammar), a value evaluator and a forward-mode evaluator of the exact
// partial derivatives (each stack entry carries its gradient with respect to the signals the
// formula reads). These are the user-defined variables and the right-hand sides of the
// control differential equations of Negrut & Ortiz's eq. (10a, 10b); the linearization needs
// their partials, so they are differentiated analytically, never by differences.
#include "expr.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name;
  int op;
  int nargs;
} func_def;

static const func_def funcs[] = {
  {"sin", PT_OP_SIN, 1},   {"cos", PT_OP_COS, 1},   {"tan", PT_OP_TAN, 1},
  {"exp", PT_OP_EXP, 1},   {"log", PT_OP_LOG, 1},   {"sqrt", PT_OP_SQRT, 1},
  {"abs", PT_OP_ABS, 1},   {"tanh", PT_OP_TANH, 1}, {"atan2", PT_OP_ATAN2, 2},
  {"min", PT_OP_MIN, 2},   {"max", PT_OP_MAX, 2},
};
#define NFUNC ((int)(sizeof(funcs) / sizeof(funcs[0])))

typedef struct {
  const char *s;
  size_t n, pos;
  pt_expr *e;
  int cur, nest;
  pt_expr_lookup lookup;
  void *ctx;
  char *msg;
  size_t msgsize;
} parser;

static int perr(parser *p, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(parser *p, size_t pos, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  if (p->msg && p->msgsize) snprintf(p->msg, p->msgsize, "column %zu: %s", pos + 1, what);
  return -1;
}

static void skip_space(parser *p) {
  while (p->pos < p->n && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                           p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
    p->pos++;
}

static int peek(parser *p) {
  skip_space(p);
  return p->pos < p->n ? (unsigned char)p->s[p->pos] : -1;
}

static int is_name_start(int c) { return isalpha(c) || c == '_'; }
static int is_name_char(int c) { return isalnum(c) || c == '_' || c == '.'; }

// What stands at pos, for messages: `end of expression`, `"x"`, `")"`.
static const char *what_at(parser *p, char *buf, size_t size) {
  if (p->pos >= p->n) return "end of expression";
  size_t k = p->pos;
  if (is_name_char((unsigned char)p->s[k])) {
    size_t len = 0;
    while (k + len < p->n && is_name_char((unsigned char)p->s[k + len]) && len < 40) len++;
    snprintf(buf, size, "\"%.*s\"", (int)len, p->s + k);
  } else if (isprint((unsigned char)p->s[k])) {
    snprintf(buf, size, "\"%c\"", p->s[k]);
  } else {
    snprintf(buf, size, "byte 0x%02x", (unsigned char)p->s[k]);
  }
  return buf;
}

static void emit(parser *p, int op, int arg) {
  pt_expr *e = p->e;
  e->code[e->ncode].op = op;
  e->code[e->ncode].arg = arg;
  e->ncode++;
  if (op == PT_OP_CONST || op == PT_OP_VAR || op == PT_OP_TIME)
    p->cur++;
  else if (op >= PT_OP_ADD && op <= PT_OP_POW)
    p->cur--;
  else if (op == PT_OP_ATAN2 || op == PT_OP_MIN || op == PT_OP_MAX)
    p->cur--;
  if (p->cur > e->depth) e->depth = p->cur;
}

static void emit_const(parser *p, double v) {
  pt_expr *e = p->e;
  e->konst[e->nconst] = v;
  emit(p, PT_OP_CONST, e->nconst++);
}

static int parse_expr(parser *p);
static int parse_unary(parser *p);

static int parse_number(parser *p) {
  size_t start = p->pos, k = p->pos;
  int digits = 0;
  while (k < p->n && isdigit((unsigned char)p->s[k])) k++, digits++;
  if (k < p->n && p->s[k] == '.') {
    k++;
    while (k < p->n && isdigit((unsigned char)p->s[k])) k++, digits++;
  }
  if (!digits) return perr(p, start, "a number needs digits");
  if (k < p->n && (p->s[k] == 'e' || p->s[k] == 'E')) {
    size_t j = k + 1;
    if (j < p->n && (p->s[j] == '+' || p->s[j] == '-')) j++;
    if (j < p->n && isdigit((unsigned char)p->s[j])) {
      while (j < p->n && isdigit((unsigned char)p->s[j])) j++;
      k = j;
    }
  }
  if (k < p->n && (is_name_char((unsigned char)p->s[k]))) {
    p->pos = k;
    char buf[64];
    return perr(p, k, "unexpected %s after the number %.*s (write the operator: 2*x)",
                what_at(p, buf, sizeof(buf)), (int)(k - start), p->s + start);
  }
  char num[64];
  if (k - start >= sizeof(num)) return perr(p, start, "number too long");
  memcpy(num, p->s + start, k - start);
  num[k - start] = 0;
  double v = strtod(num, NULL);
  if (!isfinite(v)) return perr(p, start, "number %s out of range", num);
  p->pos = k;
  emit_const(p, v);
  return 0;
}

static int find_func(const char *name, size_t len) {
  for (int i = 0; i < NFUNC; i++)
    if (strlen(funcs[i].name) == len && memcmp(funcs[i].name, name, len) == 0) return i;
  return -1;
}

static int parse_call(parser *p, int f, size_t start) {
  p->pos++;  // '('
  int nargs = 0;
  if (peek(p) == ')') return perr(p, p->pos, "%s takes %d argument%s, got none", funcs[f].name,
                                  funcs[f].nargs, funcs[f].nargs > 1 ? "s" : "");
  for (;;) {
    if (parse_expr(p)) return -1;
    nargs++;
    int c = peek(p);
    if (c == ',') {
      p->pos++;
      continue;
    }
    if (c == ')') break;
    char buf[64];
    return perr(p, p->pos, "expected \",\" or \")\" in the call of %s, found %s", funcs[f].name,
                what_at(p, buf, sizeof(buf)));
  }
  if (nargs != funcs[f].nargs)
    return perr(p, start, "%s takes %d argument%s, got %d", funcs[f].name, funcs[f].nargs,
                funcs[f].nargs > 1 ? "s" : "", nargs);
  p->pos++;  // ')'
  emit(p, funcs[f].op, 0);
  return 0;
}

static int parse_name(parser *p) {
  size_t start = p->pos;
  while (p->pos < p->n && is_name_char((unsigned char)p->s[p->pos])) p->pos++;
  const char *name = p->s + start;
  size_t len = p->pos - start;
  int f = find_func(name, len);
  if (peek(p) == '(') {
    if (f < 0) return perr(p, start, "unknown function \"%.*s\" (functions: sin cos tan exp log "
                           "sqrt abs tanh atan2 min max)", (int)(len > 64 ? 64 : len), name);
    return parse_call(p, f, start);
  }
  if (len == 1 && name[0] == 't') {
    p->e->uses_t = 1;
    emit(p, PT_OP_TIME, 0);
    return 0;
  }
  if (len == 2 && memcmp(name, "pi", 2) == 0) {
    emit_const(p, 3.14159265358979323846);
    return 0;
  }
  int sig = p->lookup ? p->lookup(p->ctx, name, len) : -1;
  if (sig >= 0) {
    pt_expr *e = p->e;
    int slot = 0;
    while (slot < e->nref && e->ref[slot] != sig) slot++;
    if (slot == e->nref) e->ref[e->nref++] = sig;
    emit(p, PT_OP_VAR, slot);
    return 0;
  }
  if (f >= 0) return perr(p, start, "%s is a function: write %s(...)", funcs[f].name,
                          funcs[f].name);
  return perr(p, start, "unknown signal \"%.*s\"", (int)(len > 64 ? 64 : len), name);
}

static int parse_primary(parser *p) {
  int c = peek(p);
  if (c == '(') {
    size_t open = p->pos;
    p->pos++;
    if (parse_expr(p)) return -1;
    if (peek(p) != ')') {
      char buf[64];
      return perr(p, p->pos, "expected \")\" to close the \"(\" of column %zu, found %s",
                  open + 1, what_at(p, buf, sizeof(buf)));
    }
    p->pos++;
    return 0;
  }
  if (c >= 0 && (isdigit(c) || c == '.')) return parse_number(p);
  if (c >= 0 && is_name_start(c)) return parse_name(p);
  char buf[64];
  return perr(p, p->pos, "expected a number, a name or \"(\", found %s",
              what_at(p, buf, sizeof(buf)));
}

static int parse_power(parser *p) {
  if (parse_primary(p)) return -1;
  if (peek(p) == '^') {
    p->pos++;
    if (parse_unary(p)) return -1;  // right-associative, and 2^-1 allowed
    emit(p, PT_OP_POW, 0);
  }
  return 0;
}

static int parse_unary(parser *p) {
  int c = peek(p);
  if (c == '-' || c == '+') {
    if (++p->nest > PT_EXPR_MAX_NEST)
      return perr(p, p->pos, "nested deeper than %d levels", PT_EXPR_MAX_NEST);
    p->pos++;
    if (parse_unary(p)) return -1;
    if (c == '-') emit(p, PT_OP_NEG, 0);
    p->nest--;
    return 0;
  }
  return parse_power(p);
}

static int parse_term(parser *p) {
  if (parse_unary(p)) return -1;
  for (;;) {
    int c = peek(p);
    if (c != '*' && c != '/') return 0;
    p->pos++;
    if (parse_unary(p)) return -1;
    emit(p, c == '*' ? PT_OP_MUL : PT_OP_DIV, 0);
  }
}

static int parse_expr(parser *p) {
  if (++p->nest > PT_EXPR_MAX_NEST)
    return perr(p, p->pos, "nested deeper than %d levels", PT_EXPR_MAX_NEST);
  if (parse_term(p)) return -1;
  for (;;) {
    int c = peek(p);
    if (c != '+' && c != '-') break;
    p->pos++;
    if (parse_term(p)) return -1;
    emit(p, c == '+' ? PT_OP_ADD : PT_OP_SUB, 0);
  }
  p->nest--;
  return 0;
}

void pt_expr_free(pt_expr *e) {
  if (!e) return;
  free(e->code);
  free(e->konst);
  free(e->ref);
  memset(e, 0, sizeof(*e));
}

int pt_expr_parse(pt_expr *e, const char *text, pt_expr_lookup lookup, void *ctx, char *msg,
                  size_t msgsize) {
  memset(e, 0, sizeof(*e));
  parser p = {.s = text, .n = text ? strlen(text) : 0, .e = e, .lookup = lookup, .ctx = ctx,
              .msg = msg, .msgsize = msgsize};
  if (p.n > PT_EXPR_MAX_TEXT) return perr(&p, 0, "longer than %d bytes", PT_EXPR_MAX_TEXT);
  if (peek(&p) < 0) return perr(&p, 0, "empty formula");
  // every token emits at most one instruction and one constant or reference
  size_t cap = p.n + 2;
  e->code = malloc(cap * sizeof(*e->code));
  e->konst = malloc(cap * sizeof(*e->konst));
  e->ref = malloc(cap * sizeof(*e->ref));
  if (!e->code || !e->konst || !e->ref) {
    pt_expr_free(e);
    if (msg && msgsize) snprintf(msg, msgsize, "out of memory");
    return -2;
  }
  int rc = parse_expr(&p);
  if (!rc && peek(&p) >= 0) {
    char buf[64];
    int c = peek(&p);
    rc = perr(&p, p.pos, c == ')' ? "unmatched %s" : "unexpected %s (an operator missing?)",
              what_at(&p, buf, sizeof(buf)));
  }
  if (rc) {
    pt_expr_free(e);
    return -1;
  }
  return 0;
}

// ---- evaluation ------------------------------------------------------------------------------

static double unary_value(int op, double a) {
  switch (op) {
    case PT_OP_NEG: return -a;
    case PT_OP_SIN: return sin(a);
    case PT_OP_COS: return cos(a);
    case PT_OP_TAN: return tan(a);
    case PT_OP_EXP: return exp(a);
    case PT_OP_LOG: return log(a);
    case PT_OP_SQRT: return sqrt(a);
    case PT_OP_ABS: return fabs(a);
    default: return tanh(a);  // PT_OP_TANH
  }
}

static double binary_value(int op, double a, double b) {
  switch (op) {
    case PT_OP_ADD: return a + b;
    case PT_OP_SUB: return a - b;
    case PT_OP_MUL: return a * b;
    case PT_OP_DIV: return a / b;
    case PT_OP_POW: return pow(a, b);
    case PT_OP_ATAN2: return atan2(a, b);
    case PT_OP_MIN: return b < a ? b : a;
    default: return b > a ? b : a;  // PT_OP_MAX
  }
}

static int is_binary(int op) {
  return (op >= PT_OP_ADD && op <= PT_OP_POW) || op == PT_OP_ATAN2 || op == PT_OP_MIN ||
         op == PT_OP_MAX;
}

double pt_expr_eval(const pt_expr *e, const double *sig, double t, double *stack) {
  int sp = 0;
  for (int i = 0; i < e->ncode; i++) {
    int op = e->code[i].op, arg = e->code[i].arg;
    if (op == PT_OP_CONST) {
      stack[sp++] = e->konst[arg];
    } else if (op == PT_OP_VAR) {
      stack[sp++] = sig[e->ref[arg]];
    } else if (op == PT_OP_TIME) {
      stack[sp++] = t;
    } else if (is_binary(op)) {
      sp--;
      stack[sp - 1] = binary_value(op, stack[sp - 1], stack[sp]);
    } else {
      stack[sp - 1] = unary_value(op, stack[sp - 1]);
    }
  }
  return stack[0];
}

// g = a * ga (n entries); a zero differential stays zero where the slope is infinite
// (sqrt at 0 of a constant).
static void scale(double *g, const double *ga, double a, int n) {
  for (int k = 0; k < n; k++) g[k] = ga[k] != 0 ? a * ga[k] : 0;
}

static int all_zero(const double *g, int n) {
  for (int k = 0; k < n; k++)
    if (g[k] != 0) return 0;
  return 1;
}

// The derivative of one unary operation: d f(a) = f'(a) da, with v = f(a).
static double unary_slope(int op, double a, double v) {
  switch (op) {
    case PT_OP_NEG: return -1;
    case PT_OP_SIN: return cos(a);
    case PT_OP_COS: return -sin(a);
    case PT_OP_TAN: return 1 + v * v;
    case PT_OP_EXP: return v;
    case PT_OP_LOG: return 1 / a;
    case PT_OP_SQRT: return 0.5 / v;
    case PT_OP_ABS: return a > 0 ? 1 : (a < 0 ? -1 : 0);
    default: return 1 - v * v;  // PT_OP_TANH
  }
}

// The derivative of one binary operation into (va, ga): v = f(a, b), dv = fa da + fb db.
static void binary_grad(int op, double *va, double *ga, double b, const double *gb, int n) {
  double a = *va, v = binary_value(op, a, b), fa, fb;
  switch (op) {
    case PT_OP_ADD: fa = 1, fb = 1; break;
    case PT_OP_SUB: fa = 1, fb = -1; break;
    case PT_OP_MUL: fa = b, fb = a; break;
    case PT_OP_DIV: fa = 1 / b, fb = -a / (b * b); break;
    case PT_OP_POW:
      // d a^b = b a^(b-1) da + a^b ln(a) db; a term whose differential is zero is left out
      // (x^2 at x < 0 has no ln, and 0^b at a constant b needs none)
      fa = all_zero(ga, n) ? 0 : b * pow(a, b - 1);
      fb = all_zero(gb, n) ? 0 : v * log(a);
      break;
    case PT_OP_ATAN2: {
      double r2 = a * a + b * b;  // atan2(y = a, x = b)
      fa = b / r2, fb = -a / r2;
      break;
    }
    case PT_OP_MIN: fa = b < a ? 0 : 1, fb = 1 - fa; break;
    default: fa = b > a ? 0 : 1, fb = 1 - fa; break;  // PT_OP_MAX
  }
  for (int k = 0; k < n; k++)
    ga[k] = (ga[k] != 0 ? fa * ga[k] : 0) + (gb[k] != 0 ? fb * gb[k] : 0);
  *va = v;
}

double pt_expr_grad(const pt_expr *e, const double *sig, double t, double *grad, double *stack) {
  int n = e->nref, w = 1 + n, sp = 0;
  for (int i = 0; i < e->ncode; i++) {
    int op = e->code[i].op, arg = e->code[i].arg;
    double *top = stack + (size_t)sp * (size_t)w;
    if (op == PT_OP_CONST || op == PT_OP_VAR || op == PT_OP_TIME) {
      top[0] = op == PT_OP_CONST ? e->konst[arg] : op == PT_OP_VAR ? sig[e->ref[arg]] : t;
      memset(top + 1, 0, sizeof(double) * (size_t)n);
      if (op == PT_OP_VAR) top[1 + arg] = 1;
      sp++;
    } else if (is_binary(op)) {
      double *a = top - 2 * w, *b = top - w;
      binary_grad(op, a, a + 1, b[0], b + 1, n);
      sp--;
    } else {
      double *a = top - w, v = unary_value(op, a[0]);
      scale(a + 1, a + 1, unary_slope(op, a[0], v), n);
      a[0] = v;
    }
  }
  memcpy(grad, stack + 1, sizeof(double) * (size_t)n);
  return stack[0];
}
