// control.c: building the control model of a spec's `controls:` (issue 26): names, the
// elements' structure and constants (a transfer function's controllable canonical form), the
// formulas, and the evaluation order, a topological sort of the direct-feedthrough graph in
// which an algebraic loop is refused with its signals named.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"

static const char *const type_names[PT_CONTROL_NTYPES] = {
  "measure", "input", "gain", "sum", "saturation", "expression", "pid", "transfer_function",
  "state_space", "ode"};

const char *pt_ctl_type_name(int type) {
  return type >= 0 && type < PT_CONTROL_NTYPES ? type_names[type] : "?";
}

static const char *const gain_pars[] = {"k"};
static const char *const sat_pars[] = {"lower", "upper"};
static const char *const pid_pars[] = {"kp", "ki", "kd", "tf", "limit"};

// The elements being built: the model's controls, then one expression element per
// expression_force (its value is a signal named after the force).
typedef struct {
  const char *source;    // file name for messages
  int n, ncontrol;       // elements; the first ncontrol are controls[]
  pt_spec_control *e;    // (n) the controls (shallow copies), then the forces' formulas
  int *index;            // (n) index in controls[] or forces[]
} blist;

// `FILE:LINE: controls[i] "name": what` (or forces[j] for an expression_force's formula)
static int fail(pt_error *err, const blist *s, int i, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(pt_error *err, const blist *s, int i, const char *fmt, ...) {
  char what[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  const pt_spec_control *e = &s->e[i];
  return pt_error_set(err, PT_EMODEL, "%s:%d: %s[%d] \"%s\": %s", s->source, e->line,
                      i < s->ncontrol ? "controls" : "forces", s->index[i], e->name, what);
}

static void *alloc(pt_ctl *c, size_t n, size_t size) {
  if (c->nalloc == c->maxalloc) {
    int nm = c->maxalloc ? 2 * c->maxalloc : 32;
    void **a = realloc(c->allocs, (size_t)nm * sizeof(*a));
    if (!a) return NULL;
    c->allocs = a;
    c->maxalloc = nm;
  }
  void *p = calloc(n ? n : 1, size);
  if (p) c->allocs[c->nalloc++] = p;
  return p;
}

void pt_ctl_free(pt_ctl *c) {
  if (!c) return;
  for (int i = 0; i < c->nexpr; i++)
    if (c->expr) pt_expr_free(&c->expr[i]);
  for (int i = 0; i < c->nalloc; i++) free(c->allocs[i]);
  free(c->allocs);
  free(c);
}

static int is_identifier(const char *n) {
  if (!((n[0] >= 'A' && n[0] <= 'Z') || (n[0] >= 'a' && n[0] <= 'z') || n[0] == '_')) return 0;
  for (const char *p = n; *p; p++)
    if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
          *p == '_'))
      return 0;
  return 1;
}

static int is_reserved(const char *n) { return !strcmp(n, "t") || !strcmp(n, "pi"); }

// ---- the sizes of one element, and its checks ------------------------------------------------

typedef struct {
  int nsig, nx, npar, nin, ndata, nexpr, flags;
  int tf_off, tf_num_off;  // transfer function: leading zeros stripped from den and num
} esize;

static int check_finite(const double *v, int n) {
  for (int k = 0; k < n; k++)
    if (!isfinite(v[k])) return 0;
  return 1;
}

static int size_tf(pt_error *err, const blist *s, int i, esize *z) {
  const pt_spec_control *e = &s->e[i];
  if (e->nden < 1 || !e->den) return fail(err, s, i, "den: at least one coefficient is needed");
  if (e->nnum < 1 || !e->num) return fail(err, s, i, "num: at least one coefficient is needed");
  if (!check_finite(e->den, e->nden) || !check_finite(e->num, e->nnum))
    return fail(err, s, i, "num and den must be finite numbers");
  int d0 = 0, n0 = 0;
  while (d0 < e->nden && e->den[d0] == 0) d0++;
  if (d0 == e->nden) return fail(err, s, i, "den: all coefficients are 0");
  while (n0 < e->nnum - 1 && e->num[n0] == 0) n0++;
  int n = e->nden - d0 - 1, m = e->nnum - n0 - 1;
  if (m > n)
    return fail(err, s, i, "improper transfer function: the numerator has degree %d, the "
                "denominator %d (num and den are written highest power first; a transfer "
                "function must be proper: degree of num <= degree of den)", m, n);
  z->tf_off = d0;
  z->tf_num_off = n0;
  z->nsig = 1;
  z->nx = n;
  z->nin = 1;
  z->ndata = 2 * n + 1;
  // b0, the direct feedthrough, is non-zero only when num and den have the same degree
  z->flags = (m == n && e->num[n0] != 0) ? 1 : 0;
  return 0;
}

// A state_space: x' = A x + B u, y = C x + D u; without A, B and C a static gain y = D u.
static int size_ss(pt_error *err, const blist *s, int i, esize *z) {
  const pt_spec_control *e = &s->e[i];
  static const char *const mn[4] = {"A", "B", "C", "D"};
  for (int k = 0; k < 4; k++)
    if (e->mat[k].v && !check_finite(e->mat[k].v, e->mat[k].rows * e->mat[k].cols))
      return fail(err, s, i, "%s: entries must be finite numbers", mn[k]);
  int m = e->ninput;
  if (m < 1) return fail(err, s, i, "inputs: at least one signal is needed");
  int given = (e->mat[0].v != NULL) + (e->mat[1].v != NULL) + (e->mat[2].v != NULL);
  if (given == 0) {  // a static gain
    if (!e->mat[3].v) return fail(err, s, i, "A, B and C (or D alone, a static gain) are needed");
    if (e->mat[3].cols != m)
      return fail(err, s, i, "D must have %d columns (one per input), got %d x %d", m,
                  e->mat[3].rows, e->mat[3].cols);
    if (e->initial) return fail(err, s, i, "initial: a static gain (D alone) has no state");
    z->nsig = e->mat[3].rows;
    z->nin = m;
    z->ndata = z->nsig * m;
    return 0;
  }
  for (int k = 0; k < 3; k++)
    if (!e->mat[k].v)
      return fail(err, s, i, "%s is required with %s (or D alone, a static gain)", mn[k],
                  k == 0 ? "B and C" : k == 1 ? "A and C" : "A and B");
  int n = e->mat[0].rows, p = e->mat[2].rows;
  if (n < 1 || e->mat[0].cols != n)
    return fail(err, s, i, "A must be square with at least one row, got %d x %d",
                e->mat[0].rows, e->mat[0].cols);
  if (e->mat[1].rows != n || e->mat[1].cols != m)
    return fail(err, s, i, "B must be %d x %d (states x inputs), got %d x %d", n, m,
                e->mat[1].rows, e->mat[1].cols);
  if (p < 1 || e->mat[2].cols != n)
    return fail(err, s, i, "C must have %d columns (one per state) and at least one row, got "
                "%d x %d", n, e->mat[2].rows, e->mat[2].cols);
  if (e->mat[3].v && (e->mat[3].rows != p || e->mat[3].cols != m))
    return fail(err, s, i, "D must be %d x %d (outputs x inputs), got %d x %d", p, m,
                e->mat[3].rows, e->mat[3].cols);
  if (e->initial && e->ninitial != n)
    return fail(err, s, i, "initial: %d values given for %d states", e->ninitial, n);
  if (e->initial && !check_finite(e->initial, e->ninitial))
    return fail(err, s, i, "initial: values must be finite");
  z->nsig = p;
  z->nx = n;
  z->nin = m;
  z->ndata = n * n + n * m + p * n + p * m;
  return 0;
}

static int size_ode(pt_error *err, const blist *s, int i, esize *z) {
  const pt_spec_control *e = &s->e[i];
  if (e->nstate < 1 || !e->states) return fail(err, s, i, "states: at least one is needed");
  for (int k = 0; k < e->nstate; k++) {
    if (!is_identifier(e->states[k]) || is_reserved(e->states[k]))
      return fail(err, s, i, "states[%d] \"%s\": a state's name is a letter or '_' followed "
                  "by letters, digits and '_', not t or pi", k, e->states[k]);
    for (int j = 0; j < k; j++)
      if (!strcmp(e->states[j], e->states[k]))
        return fail(err, s, i, "states: \"%s\" is named twice", e->states[k]);
  }
  if (e->nderivative != e->nstate || !e->derivatives)
    return fail(err, s, i, "derivatives: %d formulas given for %d states", e->nderivative,
                e->nstate);
  if (e->initial && e->ninitial != e->nstate)
    return fail(err, s, i, "initial: %d values given for %d states", e->ninitial, e->nstate);
  if (e->initial && !check_finite(e->initial, e->ninitial))
    return fail(err, s, i, "initial: values must be finite");
  z->nsig = e->nstate;
  z->nx = e->nstate;
  z->nexpr = e->nstate;
  return 0;
}

static int size_pid(pt_error *err, const blist *s, int i, esize *z) {
  const pt_spec_control *e = &s->e[i];
  double g[4] = {e->kp, e->ki, e->kd, e->tf};
  if (!check_finite(g, 4)) return fail(err, s, i, "kp, ki, kd and tf must be finite");
  if (e->kp == 0 && e->ki == 0 && e->kd == 0)
    return fail(err, s, i, "kp, ki and kd are all 0: the pid would output 0 (a gain that is 0 "
                "in the model cannot be tuned at run time: give the terms you want)");
  if (e->kd != 0 && !(e->tf > 0))
    return fail(err, s, i, "tf: a derivative term (kd != 0) needs its filter time constant "
                "tf > 0 (kd s / (tf s + 1)), got %g", e->tf);
  if (e->tf < 0) return fail(err, s, i, "tf must be >= 0, got %g", e->tf);
  if (e->has_limit && !(e->limit > 0 && isfinite(e->limit)))
    return fail(err, s, i, "limit must be > 0, got %g", e->limit);
  z->flags = (e->kp != 0 ? PT_PID_P : 0) | (e->ki != 0 ? PT_PID_I : 0) |
             (e->kd != 0 ? PT_PID_D : 0);
  z->nsig = 1;
  z->nx = (e->ki != 0) + (e->kd != 0);
  z->npar = 5;
  z->nin = 1;
  return 0;
}

static int size_element(pt_error *err, const blist *s, int i, esize *z) {
  const pt_spec_control *e = &s->e[i];
  memset(z, 0, sizeof(*z));
  if (!is_identifier(e->name) || is_reserved(e->name))
    return fail(err, s, i, "a signal's name (a control element's, an expression_force's) is a "
                "letter or '_' followed by letters, digits and '_' (formulas use it), not t or "
                "pi");
  int one_input = e->type == PT_CONTROL_GAIN || e->type == PT_CONTROL_SATURATION ||
                  e->type == PT_CONTROL_PID || e->type == PT_CONTROL_TRANSFER_FUNCTION;
  if (one_input && (e->ninput != 1 || !e->inputs))
    return fail(err, s, i, "input: one signal is needed");
  switch (e->type) {
    case PT_CONTROL_MEASURE:
    case PT_CONTROL_INPUT:
      z->nsig = 1;
      return 0;
    case PT_CONTROL_GAIN:
      if (!isfinite(e->k)) return fail(err, s, i, "k must be finite");
      z->nsig = 1, z->npar = 1, z->nin = 1;
      return 0;
    case PT_CONTROL_SUM:
      if (e->ninput < 1 || !e->inputs) return fail(err, s, i, "inputs: at least one signal");
      if (e->signs)
        for (int k = 0; k < e->ninput; k++)
          if (e->signs[k] != 1 && e->signs[k] != -1)
            return fail(err, s, i, "signs[%d]: each sign is 1 or -1 (+ or -), got %g", k,
                        e->signs[k]);
      z->nsig = 1, z->nin = e->ninput, z->ndata = e->ninput;
      return 0;
    case PT_CONTROL_SATURATION:
      if (!e->has_lower && !e->has_upper)
        return fail(err, s, i, "lower, upper or both are needed");
      if ((e->has_lower && !isfinite(e->lower)) || (e->has_upper && !isfinite(e->upper)))
        return fail(err, s, i, "lower and upper must be finite");
      if (e->has_lower && e->has_upper && !(e->lower < e->upper))
        return fail(err, s, i, "lower (%g) must be below upper (%g)", e->lower, e->upper);
      z->nsig = 1, z->npar = 2, z->nin = 1;
      return 0;
    case PT_CONTROL_EXPRESSION:
      if (!e->expr) return fail(err, s, i, "expr is required");
      z->nsig = 1, z->nexpr = 1;
      return 0;
    case PT_CONTROL_PID:
      return size_pid(err, s, i, z);
    case PT_CONTROL_TRANSFER_FUNCTION:
      return size_tf(err, s, i, z);
    case PT_CONTROL_STATE_SPACE:
      return size_ss(err, s, i, z);
    case PT_CONTROL_ODE:
      return size_ode(err, s, i, z);
    default:
      return fail(err, s, i, "unknown type %d", (int)e->type);
  }
}

// ---- names -----------------------------------------------------------------------------------

typedef struct {
  const char *name;
  int index;
} named;

static int cmp_named(const void *a, const void *b) {
  return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

// sig_sorted: the signals in strcmp order of their names.
static int sort_names(pt_ctl *c) {
  named *v = malloc(sizeof(*v) * ((size_t)c->nsig + 1));
  if (!v) return -1;
  for (int k = 0; k < c->nsig; k++) v[k] = (named){c->sig_name[k], k};
  qsort(v, (size_t)c->nsig, sizeof(*v), cmp_named);
  for (int k = 0; k < c->nsig; k++) c->sig_sorted[k] = v[k].index;
  free(v);
  return 0;
}

// The signal named by (name, len), by bisection of sig_sorted; -1 if none.
static int find_signal(const pt_ctl *c, const char *name, size_t len) {
  int lo = 0, hi = c->nsig - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    const char *sn = c->sig_name[c->sig_sorted[mid]];
    int r = strncmp(name, sn, len);
    if (r == 0) r = sn[len] == 0 ? 0 : -1;
    if (r == 0) return c->sig_sorted[mid];
    if (r < 0)
      hi = mid - 1;
    else
      lo = mid + 1;
  }
  return -1;
}

int pt_ctl_signal(const pt_ctl *c, const char *name) {
  return c ? find_signal(c, name, strlen(name)) : -1;
}

int pt_ctl_element(const pt_ctl *c, const char *name) {
  for (int i = 0; c && i < c->nelem; i++)
    if (!strcmp(c->elem_name[i], name)) return i;
  return -1;
}

int pt_ctl_param(const pt_ctl *c, int elem, const char *name) {
  for (int k = 0; k < c->elem_npar[elem]; k++)
    if (!strcmp(c->par_name[c->elem_par_adr[elem] + k], name)) return c->elem_par_adr[elem] + k;
  return -1;
}

// A formula's names: an ode's own states by their bare names, then every signal.
typedef struct {
  const pt_ctl *c;
  const pt_spec_control *e;  // the ode whose derivatives are parsed, or NULL
  int first;                 // its first output signal
} lookup_ctx;

static int lookup(void *ctx, const char *name, size_t len) {
  const lookup_ctx *l = ctx;
  if (l->e && l->e->type == PT_CONTROL_ODE)
    for (int k = 0; k < l->e->nstate; k++)
      if (strlen(l->e->states[k]) == len && !memcmp(l->e->states[k], name, len))
        return l->first + k;
  return find_signal(l->c, name, len);
}

// ---- the element's arrays ------------------------------------------------------------------

static void fill_tf(const pt_spec_control *e, const esize *z, double *data) {
  // Controllable canonical form of num(s)/den(s), den = a0 s^n + ..., normalised by a0:
  // x1' = x2, ..., xn' = u - a1 xn - ... - an x1,  y = sum_i (b_{n+1-i} - a_{n+1-i} b0) x_i
  // + b0 u, with num padded to b0 s^n + ... + bn.
  int n = z->nx;
  const double *den = e->den + z->tf_off, *num = e->num + z->tf_num_off;
  int nb = e->nnum - z->tf_num_off;  // num's coefficients left, <= n + 1
  double a0 = den[0];
  for (int j = 1; j <= n; j++) data[j - 1] = den[j] / a0;          // a_j
  double b0 = (nb == n + 1) ? num[0] / a0 : 0;
  for (int i = 1; i <= n; i++) {
    int j = n + 1 - i;                                              // b_j, a_j
    int kb = j - (n + 1 - nb);                                      // index in num, or < 0
    double bj = kb >= 0 ? num[kb] / a0 : 0;
    data[n + i - 1] = bj - data[j - 1] * b0;
  }
  data[2 * n] = b0;
}

static int alloc_arrays(pt_ctl *c, int nin_total, int ndata) {
  int ne = c->nelem, ns = c->nsig, nx = c->nx, np = c->npar;
#define A(field, n) (c->field = alloc(c, (size_t)(n), sizeof(*c->field))) == NULL
  if (A(elem_name, ne) || A(elem_type, ne) || A(elem_line, ne) || A(elem_sig_adr, ne) ||
      A(elem_nsig, ne) || A(elem_x_adr, ne) || A(elem_nx, ne) || A(elem_par_adr, ne) ||
      A(elem_npar, ne) || A(elem_in_adr, ne) || A(elem_nin, ne) || A(elem_data_adr, ne) ||
      A(elem_expr_adr, ne) || A(elem_flags, ne) || A(elem_aux, ne) || A(in_sig, nin_total) ||
      A(data, ndata) || A(expr, c->nexpr) || A(sig_name, ns) || A(sig_elem, ns) ||
      A(sig_out, ns) || A(dep_adr, ns + 1) || A(order, ns) || A(sig_sorted, ns) ||
      A(x_name, nx) || A(x_elem, nx) || A(x0, nx) || A(par_name, np) || A(par_elem, np) ||
      A(par0, np) || A(meas_elem, c->nmeas) || A(input_elem, c->nin))
    return -1;
#undef A
  return 0;
}

// Names, structure and constants of element i (sizes z), at the addresses already set.
static void fill_element(pt_ctl *c, const pt_spec_control *e, int i, const esize *z) {
  snprintf(c->elem_name[i], PT_NAME_MAX, "%s", e->name);
  c->elem_type[i] = e->type;
  c->elem_line[i] = e->line;
  c->elem_flags[i] = z->flags;
  int s0 = c->elem_sig_adr[i], x0 = c->elem_x_adr[i], p0 = c->elem_par_adr[i];
  double *data = c->data + c->elem_data_adr[i];
  for (int k = 0; k < z->nsig; k++) {
    c->sig_elem[s0 + k] = i;
    c->sig_out[s0 + k] = k;
    if (e->type == PT_CONTROL_STATE_SPACE)
      snprintf(c->sig_name[s0 + k], PT_SIGNAL_NAME_MAX, "%s.y%d", e->name, k + 1);
    else if (e->type == PT_CONTROL_ODE)
      snprintf(c->sig_name[s0 + k], PT_SIGNAL_NAME_MAX, "%s.%s", e->name, e->states[k]);
    else
      snprintf(c->sig_name[s0 + k], PT_SIGNAL_NAME_MAX, "%s", e->name);
  }
  for (int k = 0; k < z->nx; k++) {
    c->x_elem[x0 + k] = i;
    if (e->type == PT_CONTROL_ODE)
      snprintf(c->x_name[x0 + k], PT_SIGNAL_NAME_MAX, "%s.%s", e->name, e->states[k]);
    else if (e->type == PT_CONTROL_PID)
      snprintf(c->x_name[x0 + k], PT_SIGNAL_NAME_MAX, "%s.%s", e->name,
               (k == 0 && (z->flags & PT_PID_I)) ? "integral" : "filter");
    else
      snprintf(c->x_name[x0 + k], PT_SIGNAL_NAME_MAX, "%s.x%d", e->name, k + 1);
    c->x0[x0 + k] = e->initial ? e->initial[k] : 0;
  }
  const char *const *names = e->type == PT_CONTROL_GAIN ? gain_pars
                             : e->type == PT_CONTROL_SATURATION ? sat_pars : pid_pars;
  for (int k = 0; k < z->npar; k++) {
    snprintf(c->par_name[p0 + k], PT_PAR_NAME_MAX, "%s", names[k]);
    c->par_elem[p0 + k] = i;
  }
  double *par = c->par0 + p0;
  switch (e->type) {
    case PT_CONTROL_GAIN:
      par[PT_PAR_GAIN_K] = e->k;
      break;
    case PT_CONTROL_SATURATION:
      par[PT_PAR_SAT_LOWER] = e->has_lower ? e->lower : -HUGE_VAL;
      par[PT_PAR_SAT_UPPER] = e->has_upper ? e->upper : HUGE_VAL;
      break;
    case PT_CONTROL_PID:
      par[PT_PAR_PID_KP] = e->kp;
      par[PT_PAR_PID_KI] = e->ki;
      par[PT_PAR_PID_KD] = e->kd;
      par[PT_PAR_PID_TF] = e->tf;
      par[PT_PAR_PID_LIMIT] = e->has_limit ? e->limit : HUGE_VAL;
      break;
    case PT_CONTROL_SUM:
      for (int k = 0; k < e->ninput; k++) data[k] = e->signs ? e->signs[k] : 1;
      break;
    case PT_CONTROL_TRANSFER_FUNCTION:
      fill_tf(e, z, data);
      break;
    case PT_CONTROL_STATE_SPACE: {
      int n = z->nx, m = z->nin, p = z->nsig;
      if (n) {
        memcpy(data, e->mat[0].v, sizeof(double) * (size_t)(n * n));
        memcpy(data + n * n, e->mat[1].v, sizeof(double) * (size_t)(n * m));
        memcpy(data + n * n + n * m, e->mat[2].v, sizeof(double) * (size_t)(p * n));
      }
      if (e->mat[3].v)
        memcpy(data + n * n + n * m + p * n, e->mat[3].v, sizeof(double) * (size_t)(p * m));
      break;
    }
    default:
      break;
  }
}

// The signals each signal reads in the same instant (direct feedthrough): the graph whose
// topological order is the evaluation order. Structural: a pid term or a transfer function's
// b0 that is zero in the model is no edge (and stays zero: pt_ctl_param_check).
static int deps_of(const pt_ctl *c, int s, int *out) {
  int i = c->sig_elem[s], n = 0;
  const int *in = c->in_sig + c->elem_in_adr[i];
  int nin = c->elem_nin[i];
  switch (c->elem_type[i]) {
    case PT_CONTROL_GAIN:
    case PT_CONTROL_SUM:
    case PT_CONTROL_SATURATION:
      for (int k = 0; k < nin; k++) out[n++] = in[k];
      break;
    case PT_CONTROL_PID:
      if (c->elem_flags[i] & (PT_PID_P | PT_PID_D)) out[n++] = in[0];
      break;
    case PT_CONTROL_TRANSFER_FUNCTION:
      if (c->elem_flags[i]) out[n++] = in[0];
      break;
    case PT_CONTROL_STATE_SPACE: {
      int nx = c->elem_nx[i], p = c->elem_nsig[i], o = c->sig_out[s];
      const double *D = c->data + c->elem_data_adr[i] + nx * nx + nx * nin + p * nx;
      for (int k = 0; k < nin; k++)
        if (D[o * nin + k] != 0) out[n++] = in[k];
      break;
    }
    case PT_CONTROL_EXPRESSION: {
      const pt_expr *x = &c->expr[c->elem_expr_adr[i]];
      for (int k = 0; k < x->nref; k++) out[n++] = x->ref[k];
      break;
    }
    default:
      break;  // measure, input, ode: none
  }
  return n;
}

// The algebraic loop through stack[k..sp-1] closed by the edge stack[sp-1] -> stack[k], in the
// direction signals flow, starting at the loop's first element in the model.
static int loop_error(const pt_ctl *c, const blist *s, const int *stack, int k, int sp,
                      pt_error *err) {
  int len = sp - k, first = 0;
  for (int j = 1; j < len; j++)
    if (stack[k + j] < stack[k + first]) first = j;
  // flow: a signal's value goes to the one that reads it, i.e. down the stack
  char path[600];
  size_t used = 0;
  for (int j = 0; j <= len; j++) {
    int idx = k + ((first - j) % len + len) % len;
    int w = snprintf(path + used, sizeof(path) - used, "%s%s", j ? " -> " : "",
                     c->sig_name[stack[idx]]);
    if (w < 0 || (size_t)w >= sizeof(path) - used) {
      snprintf(path + sizeof(path) - 5, 5, "...");
      break;
    }
    used += (size_t)w;
  }
  return fail(err, s, c->sig_elem[stack[k + first]], "algebraic loop %s: each of these signals "
              "needs the others at the same instant; put a state in the loop (a "
              "transfer_function or state_space without direct feedthrough, an ode, a pid "
              "without kp and kd)", path);
}

// Depth-first topological sort with an explicit stack (long chains need no recursion).
static int sort_signals(pt_ctl *c, const blist *s, pt_error *err) {
  int ns = c->nsig, norder = 0, rc = 0;
  int *color = calloc((size_t)ns + 1, sizeof(int));
  int *next = calloc((size_t)ns + 1, sizeof(int));
  int *stack = calloc((size_t)ns + 1, sizeof(int));
  if (!color || !next || !stack) {
    rc = pt_error_set(err, PT_ENOMEM, "out of memory");
    goto done;
  }
  for (int s0 = 0; s0 < ns; s0++) {
    if (color[s0]) continue;
    int sp = 0;
    stack[sp++] = s0;
    color[s0] = 1;
    next[s0] = c->dep_adr[s0];
    while (sp) {
      int v = stack[sp - 1];
      if (next[v] < c->dep_adr[v + 1]) {
        int w = c->dep[next[v]++];
        if (color[w] == 0) {
          color[w] = 1;
          next[w] = c->dep_adr[w];
          stack[sp++] = w;
        } else if (color[w] == 1) {
          int k = sp - 1;
          while (stack[k] != w) k--;
          rc = loop_error(c, s, stack, k, sp, err);
          goto done;
        }
      } else {
        color[v] = 2;
        c->order[norder++] = v;
        sp--;
      }
    }
  }
done:
  free(color);
  free(next);
  free(stack);
  return rc;
}

static int build_graph(pt_ctl *c, const blist *s, pt_error *err) {
  int maxdeg = 0, nedge = 0;
  for (int k = 0; k < c->nsig; k++) {
    int i = c->sig_elem[k];
    int deg = c->elem_type[i] == PT_CONTROL_EXPRESSION ? c->expr[c->elem_expr_adr[i]].nref
                                                       : c->elem_nin[i];
    if (deg > maxdeg) maxdeg = deg;
  }
  int *tmp = malloc(sizeof(int) * ((size_t)maxdeg + 1));
  if (!tmp) return pt_error_set(err, PT_ENOMEM, "out of memory");
  for (int k = 0; k < c->nsig; k++) {
    c->dep_adr[k] = nedge;
    nedge += deps_of(c, k, tmp);
  }
  free(tmp);
  c->dep_adr[c->nsig] = nedge;
  c->nedge = nedge;
  c->dep = alloc(c, (size_t)nedge, sizeof(int));
  if (!c->dep) return pt_error_set(err, PT_ENOMEM, "out of memory");
  for (int k = 0; k < c->nsig; k++) deps_of(c, k, c->dep + c->dep_adr[k]);
  return sort_signals(c, s, err);
}

// Signals read by name (`input`, `inputs`) and the formulas, now that every name is known.
static int resolve(pt_ctl *c, const blist *s, pt_error *err) {
  for (int i = 0; i < c->nelem; i++) {
    const pt_spec_control *e = &s->e[i];
    for (int k = 0; k < c->elem_nin[i]; k++) {
      int sig = find_signal(c, e->inputs[k], strlen(e->inputs[k]));
      if (sig < 0) {
        if (e->type == PT_CONTROL_SUM || e->type == PT_CONTROL_STATE_SPACE)
          return fail(err, s, i, "inputs[%d]: no signal named \"%s\"", k, e->inputs[k]);
        return fail(err, s, i, "input: no signal named \"%s\"", e->inputs[k]);
      }
      c->in_sig[c->elem_in_adr[i] + k] = sig;
    }
    int ne = e->type == PT_CONTROL_EXPRESSION ? 1 : e->type == PT_CONTROL_ODE ? e->nstate : 0;
    lookup_ctx l = {c, e, c->elem_sig_adr[i]};
    for (int k = 0; k < ne; k++) {
      const char *text = e->type == PT_CONTROL_EXPRESSION ? e->expr : e->derivatives[k];
      char msg[400];
      pt_expr *x = &c->expr[c->elem_expr_adr[i] + k];
      int rc = pt_expr_parse(x, text ? text : "", lookup, &l, msg, sizeof(msg));
      if (rc == -2) return pt_error_set(err, PT_ENOMEM, "out of memory");
      if (rc) {
        if (e->type == PT_CONTROL_EXPRESSION) return fail(err, s, i, "expr: %s", msg);
        return fail(err, s, i, "derivatives[%d] (of %s): %s", k, e->states[k], msg);
      }
      int need = x->depth > 0 ? x->depth : 1;
      if (need > c->nstack) c->nstack = need;
      int grad = x->depth * (1 + x->nref) + x->nref;
      if (grad > c->ngrad) c->ngrad = grad;
    }
  }
  return 0;
}

// The elements of spec sp (blist), or -1 out of memory.
static int elements_of(const pt_spec *sp, blist *b) {
  b->source = sp->source;
  b->ncontrol = sp->ncontrol;
  b->n = sp->ncontrol;
  for (int j = 0; j < sp->nforce; j++) b->n += sp->forces[j].type == PT_FORCE_EXPRESSION;
  b->e = calloc((size_t)b->n + 1, sizeof(*b->e));
  b->index = calloc((size_t)b->n + 1, sizeof(int));
  if (!b->e || !b->index) return -1;
  for (int i = 0; i < sp->ncontrol; i++) b->e[i] = sp->controls[i], b->index[i] = i;
  int i = sp->ncontrol;
  for (int j = 0; j < sp->nforce; j++) {
    const pt_spec_force *f = &sp->forces[j];
    if (f->type != PT_FORCE_EXPRESSION) continue;
    memcpy(b->e[i].name, f->name, PT_NAME_MAX);
    b->e[i].line = f->line;
    b->e[i].type = PT_CONTROL_EXPRESSION;
    b->e[i].expr = f->expr;
    b->index[i++] = j;
  }
  return 0;
}

// Element names are unique (sorted, then neighbours compared): the second of a pair is named.
static int unique_names(const blist *s, pt_error *err) {
  named *v = malloc(sizeof(*v) * ((size_t)s->n + 1));
  if (!v) return pt_error_set(err, PT_ENOMEM, "out of memory");
  for (int i = 0; i < s->n; i++) v[i] = (named){s->e[i].name, i};
  qsort(v, (size_t)s->n, sizeof(*v), cmp_named);
  int rc = 0;
  for (int k = 1; k < s->n && !rc; k++)
    if (!strcmp(v[k - 1].name, v[k].name)) {
      int a = v[k - 1].index < v[k].index ? v[k - 1].index : v[k].index;
      int b = v[k - 1].index + v[k].index - a;
      rc = fail(err, s, b, "the name is used twice (%s[%d])",
                a < s->ncontrol ? "controls" : "forces", s->index[a]);
    }
  free(v);
  return rc;
}

int pt_ctl_build(const pt_spec *sp, pt_ctl **out, pt_error *err) {
  *out = NULL;
  blist list = {0}, *s = &list;
  pt_ctl *c = NULL;
  esize *z = NULL;
  int rc = PT_ENOMEM, nin_total = 0, ndata = 0;
  if (elements_of(sp, s)) goto fail_mem;
  if (s->n == 0) {
    rc = PT_OK;
    goto done;
  }
  c = calloc(1, sizeof(*c));
  z = calloc((size_t)s->n, sizeof(*z));
  if (!c || !z) goto fail_mem;
  c->nelem = s->n;
  for (int i = 0; i < s->n; i++) {
    if ((rc = size_element(err, s, i, &z[i]))) goto done;
    c->nsig += z[i].nsig;
    c->nx += z[i].nx;
    c->npar += z[i].npar;
    c->nexpr += z[i].nexpr;
    nin_total += z[i].nin;
    ndata += z[i].ndata;
    c->nmeas += s->e[i].type == PT_CONTROL_MEASURE;
    c->nin += s->e[i].type == PT_CONTROL_INPUT;
  }
  if ((rc = unique_names(s, err))) goto done;
  if (alloc_arrays(c, nin_total, ndata)) goto fail_mem;
  int sa = 0, xa = 0, pa = 0, ia = 0, da = 0, ea = 0, nm = 0, ni = 0;
  for (int i = 0; i < c->nelem; i++) {
    c->elem_sig_adr[i] = sa, c->elem_nsig[i] = z[i].nsig, sa += z[i].nsig;
    c->elem_x_adr[i] = xa, c->elem_nx[i] = z[i].nx, xa += z[i].nx;
    c->elem_par_adr[i] = pa, c->elem_npar[i] = z[i].npar, pa += z[i].npar;
    c->elem_in_adr[i] = ia, c->elem_nin[i] = z[i].nin, ia += z[i].nin;
    c->elem_data_adr[i] = da, da += z[i].ndata;
    c->elem_expr_adr[i] = ea, ea += z[i].nexpr;
    if (s->e[i].type == PT_CONTROL_MEASURE) c->meas_elem[nm] = i, c->elem_aux[i] = nm++;
    if (s->e[i].type == PT_CONTROL_INPUT) c->input_elem[ni] = i, c->elem_aux[i] = ni++;
    fill_element(c, &s->e[i], i, &z[i]);
  }
  if (sort_names(c)) goto fail_mem;
  c->nstack = 1;
  if ((rc = resolve(c, s, err)) || (rc = build_graph(c, s, err))) goto done;
  *out = c;
  c = NULL;
  rc = PT_OK;
  goto done;
fail_mem:
  rc = pt_error_set(err, PT_ENOMEM, "out of memory");
done:
  free(z);
  free(s->e);
  free(s->index);
  pt_ctl_free(c);
  return rc;
}

// ---- run-time parameters ---------------------------------------------------------------------

int pt_ctl_param_check(const pt_ctl *c, const double *par, int p, double value, char *msg,
                       size_t msgsize) {
  int i = c->par_elem[p], k = p - c->elem_par_adr[i];
  const char *name = c->elem_name[i];
  if (!isfinite(value)) {
    snprintf(msg, msgsize, "%s.%s: the value must be finite", name, c->par_name[p]);
    return -1;
  }
  const double *ep = par + c->elem_par_adr[i];
  if (c->elem_type[i] == PT_CONTROL_SATURATION) {
    double lo = k == PT_PAR_SAT_LOWER ? value : ep[PT_PAR_SAT_LOWER];
    double hi = k == PT_PAR_SAT_UPPER ? value : ep[PT_PAR_SAT_UPPER];
    if (!(lo < hi)) {
      snprintf(msg, msgsize, "%s: lower (%g) must stay below upper (%g)", name, lo, hi);
      return -1;
    }
  } else if (c->elem_type[i] == PT_CONTROL_PID) {
    static const int term[3] = {PT_PID_P, PT_PID_I, PT_PID_D};
    if (k <= PT_PAR_PID_KD && !(c->elem_flags[i] & term[k]) && value != 0) {
      snprintf(msg, msgsize, "%s.%s: the model gives this pid no %s term (%s = 0): it has no "
               "state or direct path for it; give a non-zero %s in the model to tune it", name,
               c->par_name[p], k == 0 ? "proportional" : k == 1 ? "integral" : "derivative",
               c->par_name[p], c->par_name[p]);
      return -1;
    }
    if (k == PT_PAR_PID_TF && (c->elem_flags[i] & PT_PID_D) && !(value > 0)) {
      snprintf(msg, msgsize, "%s.tf: the derivative filter's time constant must stay > 0", name);
      return -1;
    }
    if (k == PT_PAR_PID_TF && value < 0) {
      snprintf(msg, msgsize, "%s.tf must be >= 0", name);
      return -1;
    }
    if (k == PT_PAR_PID_LIMIT && !(value > 0)) {
      snprintf(msg, msgsize, "%s.limit must be > 0", name);
      return -1;
    }
  }
  return 0;
}
