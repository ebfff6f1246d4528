// linearize_control.c: the linearization of a model with control elements (issue 26): the
// closed loop of the mechanism and its controllers, drives and user equations.
//
// Negrut & Ortiz's eq. (10) enters their sensitivity system (eq. 17, 25b) as extra rows and
// columns: the control states X with Xdot = d(X, V, q, u) (10a), the signals V = v(...) (10b)
// and the forces they drive (10c, here the driven actuator inputs). The extra blocks are
// eliminated by block substitution: the signals depend on the mechanism only through measured
// quantities of q and u (never through accelerations or multipliers, so there is no algebraic
// loop through the mechanism), and the mechanism depends on the signals only through its
// driven inputs. So the mechanism's sensitivity system is solved once (the tree method or the
// augmented system, linearize.c) with the driven inputs as extra input columns and the
// measured quantities as extra output rows, and with the exact partials of the signal graph
// (src/control: sig_z, xdot_z w.r.t. z = (measures, X, control inputs)) the closed loop is
//   V_x = sig_z,meas Cm,  V_X = sig_z,X,  V_r = sig_z,in          (signals)
//   A = [A_m + B_drv V_x (drv)   B_drv V_X (drv)]                  (mechanism rows)
//       [Xd_meas Cm              Xd_X           ]                  (control rows)
// with (drv) the driven inputs' rows of V scaled by their slope (0 at an actuator's limit),
// B's columns the free actuator inputs and the control `input` signals, and any signal an
// output row. Saturations and pid limits contribute the slope of the side they are on.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linearize_internal.h"
#include "ptu.h"

typedef struct {
  int nfree;       // user inputs that are actuator inputs (mechanism columns)
  int *user_in;    // (nu) the model's input index of each user input
  int *mech_in;    // (nfree + ndrv) mechanism call's inputs: free ones, then the driven ones
  int ndrv;
  int *drv;        // (ndrv) the driven inputs
  ptd_output *outs;  // mechanism call's outputs: the user's mechanism outputs, then measures
  int nmout;       // user outputs that are the mechanism's
  int *out_kind;   // (ny) 0 mechanism (row in the call), 1 signal, 2 control state
  int *out_ref;    // (ny) row of the mechanism call, signal or control state
  char (*out_name)[PT_LIN_NAME_MAX];   // (ny)
  double *sig_z, *xdot_z, *work, *V, *S;
} cwork;

static void cwork_free(cwork *c) {
  free(c->user_in), free(c->mech_in), free(c->drv), free(c->outs), free(c->out_kind);
  free(c->out_ref), free(c->out_name), free(c->sig_z), free(c->xdot_z), free(c->work);
  free(c->V), free(c->S);
}

static void name80(char *dst, const char *src) { snprintf(dst, PT_LIN_NAME_MAX, "%s", src); }

// The user's inputs: actuator inputs that are not driven, and control input signals.
static int resolve_inputs(const pt_model *m, const pt_linearize_options *o, cwork *c, int *nu,
                          pt_error *err) {
  const int given = o->ninputs > 0 && o->inputs;
  int n = 0;
  for (int i = 0; i < m->ninput; i++) n += m->input_source[i] < 0;
  *nu = given ? o->ninputs : n;
  c->ndrv = m->ninput - n;
  c->user_in = calloc((size_t)*nu + 1, sizeof(int));
  c->mech_in = calloc((size_t)m->ninput + 1, sizeof(int));
  c->drv = calloc((size_t)c->ndrv + 1, sizeof(int));
  if (!c->user_in || !c->mech_in || !c->drv) return pt_error_set(err, PT_ENOMEM, "out of memory");
  for (int i = 0, k = 0, d = 0; i < m->ninput; i++) {
    if (m->input_source[i] >= 0) c->drv[d++] = i;
    else if (!given) c->user_in[k++] = i;
  }
  for (int i = 0; given && i < *nu; i++) {
    const char *nm = o->inputs[i] ? o->inputs[i] : "";
    const int in = pt_input_index(m, nm);
    if (in < 0)
      return pt_error_set(err, PT_EINVAL, "model \"%s\" has no input \"%s\" (actuator inputs "
                          "and control input signals)", m->name, nm);
    if (m->input_source[in] >= 0)
      return pt_error_set(err, PT_EINVAL, "input \"%s\" is driven by signal \"%s\": part of the "
                          "closed loop, not an input of it", nm, pt_input_source(m, in));
    for (int j = 0; j < i; j++)
      if (c->user_in[j] == in) return pt_error_set(err, PT_EINVAL, "input \"%s\" given twice", nm);
    c->user_in[i] = in;
  }
  for (int i = 0; i < *nu; i++)
    if (c->user_in[i] < m->ctl_input_adr) c->mech_in[c->nfree++] = c->user_in[i];
  for (int d = 0; d < c->ndrv; d++) c->mech_in[c->nfree + d] = c->drv[d];
  return PT_OK;
}

// A measured quantity as an output of the mechanism's linearization.
static ptd_output measure_output(const pt_model *m, int k) {
  ptd_output o = {{-1, -1, -1}, 0};
  const int ref = m->ctl_meas_ref[k], axis = m->ctl_meas_axis[k];
  switch ((pt_measure_kind)m->ctl_meas_kind[k]) {
    case PT_MEASURE_COORDINATE: o.c.meas = ref; break;
    case PT_MEASURE_RATE: o.c.meas = ref, o.kind = 1; break;
    case PT_MEASURE_POSITION: o.c.body = ref, o.c.comp = axis; break;
    case PT_MEASURE_VELOCITY: o.c.body = ref, o.c.comp = axis, o.kind = 1; break;
    case PT_MEASURE_ANGULAR_VELOCITY: o.c.body = ref, o.c.comp = 6 + axis, o.kind = 1; break;
  }
  return o;
}

static int parse_mech_output(const pt_model *m, const char *name, ptd_output *o) {
  static const char *const suf[3] = {"", ".rate", ".acc"};
  for (int k = 0; k < 3; k++) {
    const size_t n = strlen(name), ks = strlen(suf[k]);
    char buf[PT_LIN_NAME_MAX];
    if (n <= ks || n - ks >= sizeof(buf) || strcmp(name + n - ks, suf[k])) continue;
    memcpy(buf, name, n - ks);
    buf[n - ks] = '\0';
    if (ptd_coord_parse(m, buf, &o->c) == 0) {
      o->kind = k;
      return 0;
    }
  }
  return -1;
}

// The user's outputs (the mechanism's, signals, control states), and the measures after them.
static int resolve_outputs(const pt_model *m, const pt_linearize_options *o, cwork *c, int *ny,
                           pt_error *err) {
  const pt_ctl *ctl = m->ctl;
  const int given = o->noutputs > 0 && o->outputs;
  *ny = given ? o->noutputs : 0;
  c->outs = calloc((size_t)*ny + (size_t)ctl->nmeas + 1, sizeof(ptd_output));
  c->out_kind = calloc((size_t)*ny + 1, sizeof(int));
  c->out_ref = calloc((size_t)*ny + 1, sizeof(int));
  c->out_name = calloc((size_t)*ny + 1, sizeof(*c->out_name));
  if (!c->outs || !c->out_kind || !c->out_ref || !c->out_name)
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  for (int i = 0; i < *ny; i++) {
    const char *nm = o->outputs[i] ? o->outputs[i] : "";
    name80(c->out_name[i], nm);
    int s = pt_ctl_signal(ctl, nm);
    if (s >= 0) {
      c->out_kind[i] = 1, c->out_ref[i] = s;
      continue;
    }
    if ((s = pt_control_state_index(m, nm)) >= 0) {
      c->out_kind[i] = 2, c->out_ref[i] = s;
      continue;
    }
    if (parse_mech_output(m, nm, &c->outs[c->nmout]) != 0)
      return pt_error_set(err, PT_EINVAL, "model \"%s\" has no output \"%s\" (a coordinate, "
                          "NAME.rate, NAME.acc, a signal or a control state)", m->name, nm);
    c->out_kind[i] = 0, c->out_ref[i] = c->nmout++;
  }
  for (int k = 0; k < ctl->nmeas; k++) c->outs[c->nmout + k] = measure_output(m, k);
  return PT_OK;
}

// The slope of driven input i on its signal at w: its scale, or 0 when its actuator's limit
// clips it (*clipped set).
static double drive_slope(const pt_model *m, const pt_data *w, int i, int *clipped) {
  const double v = m->input_scale[i] * w->ctl_sig[m->input_source[i]], lim = m->input_limit[i];
  *clipped = lim > 0 && fabs(v) > lim;
  return *clipped ? 0 : m->input_scale[i];
}

static void control_notes(const pt_model *m, const pt_data *w, const pt_ctl_io *io, int nz,
                          char **notes) {
  const pt_ctl *c = m->ctl;
  size_t len = *notes ? strlen(*notes) : 0, cap = len + 4096;
  char *buf = malloc(cap);
  if (!buf) return;
  if (len) memcpy(buf, *notes, len);
  buf[len] = '\0';
#define ADD(...)                                                                 \
  do {                                                                           \
    int w_ = snprintf(buf + len, cap - len, __VA_ARGS__);                        \
    if (w_ > 0 && (size_t)w_ < cap - len) len += (size_t)w_;                     \
    else if (cap - len > 1) buf[cap - 2] = '\n';                                 \
  } while (0)
  ADD("closed loop: %d control states after the mechanism's %d (A has 2 nz + nd = %d rows); "
      "M, C, K are the mechanism's rows with the control states held\n", c->nx, 2 * nz,
      2 * nz + c->nx);
  for (int e = 0; e < c->nelem && len + 400 < cap; e++) {
    double raw;
    const int side = pt_ctl_limit_side(c, io, e, &raw);
    if (!side) continue;
    if (c->elem_type[e] == PT_CONTROL_SATURATION)
      ADD("saturation %s at its %s bound (input %.9g): linearized on that side, slope 0\n",
          c->elem_name[e], side < 0 ? "lower" : "upper", raw);
    else
      ADD("pid %s held at its %s limit (unclipped %.9g): linearized on that side, output "
          "slope 0%s\n", c->elem_name[e], side < 0 ? "lower" : "upper", raw,
          c->elem_flags[e] & PT_PID_I ? "; its integral is stopped there when the error "
          "drives it further (anti-windup)" : "");
  }
  for (int i = 0; i < m->ninput && len + 300 < cap; i++) {
    int clipped;
    if (m->input_source[i] < 0) continue;
    drive_slope(m, w, i, &clipped);
    if (clipped)
      ADD("input %s (driven by %s) at its actuator's limit %.9g: linearized on that side, "
          "slope 0\n", m->input_name[i], pt_input_source(m, i), m->input_limit[i]);
  }
#undef ADD
  free(*notes);
  *notes = buf;
}

// B_drv (mechanism rows 2z x ndrv, from the call's B) times the driven inputs' rows of a
// matrix G (nsig rows of stride ldg, the first ncols read through the sources):
// out (2z x ncols, stride ldo) += B_drv slope G_src.
static void add_drive(const pt_model *m, const pt_data *w, const cwork *c, const double *Bm,
                      int nu_m, int n2, const double *G, int ldg, int ncols, double *out,
                      int ldo) {
  for (int d = 0; d < c->ndrv; d++) {
    int clipped;
    const int in = c->drv[d];
    const double slope = drive_slope(m, w, in, &clipped);
    if (slope == 0) continue;
    const double *g = G + (size_t)m->input_source[in] * ldg;
    for (int i = 0; i < n2; i++) {
      const double b = Bm[(size_t)i * nu_m + c->nfree + d] * slope;
      if (b == 0) continue;
      for (int j = 0; j < ncols; j++) out[(size_t)i * ldo + j] += b * g[j];
    }
  }
}

static pt_linearization *result_alloc(int nz, int nd, int nu, int ny) {
  pt_linearization *r = calloc(1, sizeof(*r));
  if (!r) return NULL;
  const size_t n = 2 * (size_t)nz + (size_t)nd, z = (size_t)nz;
  r->nz = nz, r->nd = nd, r->nu = nu, r->ny = ny;
  r->state_name = calloc(n + 1, sizeof(*r->state_name));
  r->input_name = calloc((size_t)nu + 1, sizeof(*r->input_name));
  r->output_name = calloc((size_t)ny + 1, sizeof(*r->output_name));
  r->A = calloc(n * n + 1, sizeof(double));
  r->B = calloc(n * (size_t)nu + 1, sizeof(double));
  r->C = calloc((size_t)ny * n + 1, sizeof(double));
  r->D = calloc((size_t)ny * (size_t)nu + 1, sizeof(double));
  r->M = calloc(z * z + 1, sizeof(double));
  r->Cmat = calloc(z * z + 1, sizeof(double));
  r->K = calloc(z * z + 1, sizeof(double));
  r->eig = calloc(n + 1, sizeof(pt_eigenvalue));
  if (!r->state_name || !r->input_name || !r->output_name || !r->A || !r->B || !r->C ||
      !r->D || !r->M || !r->Cmat || !r->K || !r->eig) {
    pt_linearization_free(r);
    return NULL;
  }
  return r;
}

// The closed loop from the mechanism's result rm (inputs: free, then driven; outputs: the
// user's mechanism outputs, then the measures) and the control partials at w.
static int compose(const pt_model *m, const pt_data *w, cwork *c, const pt_linearization *rm,
                   int nu, int ny, int default_outputs, pt_linearization **out) {
  const pt_ctl *ctl = m->ctl;
  const int z = rm->nz, n2 = 2 * z, nd = ctl->nx, n = n2 + nd, num = rm->nu;
  const int nmeas = ctl->nmeas, nin = ctl->nin, nzc = nmeas + nd + nin, nsig = ctl->nsig;
  if (default_outputs) ny = n;
  pt_linearization *r = result_alloc(z, nd, nu, ny);
  // V: d(signal)/d(closed-loop state, control inputs) (nsig x (n + nin)): [V_x V_X V_r]
  c->V = calloc((size_t)nsig * (size_t)(n + nin) + 1, sizeof(double));
  if (!r || !c->V) {
    pt_linearization_free(r);
    return PT_ENOMEM;
  }
  const int ldv = n + nin;
  const double *Cm = rm->C + (size_t)c->nmout * n2;  // the measures' rows (nmeas x 2z)
  for (int s = 0; s < nsig; s++) {
    const double *gz = c->sig_z + (size_t)s * nzc;
    double *v = c->V + (size_t)s * ldv;
    for (int k = 0; k < nmeas; k++)
      if (gz[k] != 0)
        for (int j = 0; j < n2; j++) v[j] += gz[k] * Cm[(size_t)k * n2 + j];
    for (int j = 0; j < nd; j++) v[n2 + j] = gz[nmeas + j];
    for (int j = 0; j < nin; j++) v[n + j] = gz[nmeas + nd + j];
  }
  // A: mechanism rows, then control rows
  for (int i = 0; i < n2; i++)
    for (int j = 0; j < n2; j++) r->A[(size_t)i * n + j] = rm->A[(size_t)i * n2 + j];
  add_drive(m, w, c, rm->B, num, n2, c->V, ldv, n, r->A, n);
  for (int i = 0; i < nd; i++) {
    const double *xz = c->xdot_z + (size_t)i * nzc;
    double *a = r->A + (size_t)(n2 + i) * n;
    for (int k = 0; k < nmeas; k++)
      if (xz[k] != 0)
        for (int j = 0; j < n2; j++) a[j] += xz[k] * Cm[(size_t)k * n2 + j];
    for (int j = 0; j < nd; j++) a[n2 + j] = xz[nmeas + j];
  }
  // B: the user's inputs
  for (int u = 0; u < nu; u++) {
    const int in = c->user_in[u];
    name80(r->input_name[u], m->input_name[in]);
    if (in < m->ctl_input_adr) {  // a free actuator input: the mechanism's column
      int col = 0;
      while (c->mech_in[col] != in) col++;
      for (int i = 0; i < n2; i++) r->B[(size_t)i * nu + u] = rm->B[(size_t)i * num + col];
      continue;
    }
    const int k = in - m->ctl_input_adr;  // a control input: through the signals
    for (int d = 0; d < c->ndrv; d++) {
      int clipped;
      const double slope = drive_slope(m, w, c->drv[d], &clipped);
      const double g = slope * c->V[(size_t)m->input_source[c->drv[d]] * ldv + n + k];
      if (g != 0)
        for (int i = 0; i < n2; i++)
          r->B[(size_t)i * nu + u] += rm->B[(size_t)i * num + c->nfree + d] * g;
    }
    for (int i = 0; i < nd; i++)
      r->B[(size_t)(n2 + i) * nu + u] = c->xdot_z[(size_t)i * nzc + nmeas + nd + k];
  }
  // names: the mechanism's states, then the control states
  for (int i = 0; i < n2; i++) memcpy(r->state_name[i], rm->state_name[i], PT_LIN_NAME_MAX);
  for (int i = 0; i < nd; i++) name80(r->state_name[n2 + i], ctl->x_name[i]);
  // C, D
  for (int y = 0; y < ny; y++) {
    double *cy = r->C + (size_t)y * n, *dy = r->D + (size_t)y * nu;
    if (default_outputs) {
      cy[y] = 1;
      memcpy(r->output_name[y], r->state_name[y], PT_LIN_NAME_MAX);
      continue;
    }
    memcpy(r->output_name[y], c->out_name[y], PT_LIN_NAME_MAX);
    const int ref = c->out_ref[y];
    if (c->out_kind[y] == 2) {  // a control state
      cy[n2 + ref] = 1;
      continue;
    }
    if (c->out_kind[y] == 1) {  // a signal
      const double *v = c->V + (size_t)ref * ldv;
      memcpy(cy, v, sizeof(double) * (size_t)n);
      for (int u = 0; u < nu; u++)
        if (c->user_in[u] >= m->ctl_input_adr) dy[u] = v[n + c->user_in[u] - m->ctl_input_adr];
      continue;
    }
    // a mechanism output: its row, and its inputs' columns (the driven ones through V)
    const double *cm = rm->C + (size_t)ref * n2, *dm = rm->D + (size_t)ref * num;
    memcpy(cy, cm, sizeof(double) * (size_t)n2);
    for (int d = 0; d < c->ndrv; d++) {
      int clipped;
      const double g = dm[c->nfree + d] * drive_slope(m, w, c->drv[d], &clipped);
      if (g == 0) continue;
      const double *v = c->V + (size_t)m->input_source[c->drv[d]] * ldv;
      for (int j = 0; j < n; j++) cy[j] += g * v[j];
      for (int u = 0; u < nu; u++)
        if (c->user_in[u] >= m->ctl_input_adr) dy[u] += g * v[n + c->user_in[u] - m->ctl_input_adr];
    }
    for (int u = 0, col = 0; u < nu; u++)
      if (c->user_in[u] < m->ctl_input_adr) {
        while (c->mech_in[col] != c->user_in[u]) col++;
        dy[u] += dm[col];
      }
  }
  // eq. 29 on the closed loop's mechanism rows (control states held): K = -M Wdot_S,
  // C = -M Wdot_W; M is the mechanism's (eq. 30)
  memcpy(r->M, rm->M, sizeof(double) * (size_t)z * z);
  for (int i = 0; i < z; i++)
    for (int j = 0; j < z; j++) {
      double cc = 0, kk = 0;
      for (int l = 0; l < z; l++) {
        kk -= rm->M[(size_t)i * z + l] * r->A[(size_t)(z + l) * n + j];
        cc -= rm->M[(size_t)i * z + l] * r->A[(size_t)(z + l) * n + z + j];
      }
      r->K[(size_t)i * z + j] = kk;
      r->Cmat[(size_t)i * z + j] = cc;
    }
  r->time = rm->time;
  r->size = rm->size;
  *out = r;
  return PT_OK;
}

int ptd_linearize_controls(pt_linearizer *lz, const pt_data *d, const pt_linearize_options *opt,
                           int flags, pt_linearization **out, pt_error *err) {
  static const pt_linearize_options none;
  if (!out) return pt_error_set(err, PT_EINVAL, "no result pointer");
  *out = NULL;
  if (!opt) opt = &none;
  const pt_model *m = ptd_linearizer_model(lz);
  const pt_ctl *ctl = m->ctl;
  cwork c;
  memset(&c, 0, sizeof(c));
  int nu = 0, ny = 0;
  pt_linearization *rm = NULL;
  int rc = resolve_inputs(m, opt, &c, &nu, err);
  if (!rc) rc = resolve_outputs(m, opt, &c, &ny, err);
  if (rc) goto done;
  // the mechanism, every input held (the driven ones as extra columns), the measures as
  // extra outputs (default outputs: none of the user's, the states are named by the result)
  const int default_outputs = !(opt->noutputs > 0 && opt->outputs);
  const ptd_request req = {c.mech_in, c.nfree + c.ndrv, c.outs, c.nmout + ctl->nmeas};
  rc = ptd_linearize_mechanism(lz, d, opt, &req, 0, &rm, err);
  if (rc) goto done;
  // the signal graph's partials at the operating point (its measures, signals and driven
  // inputs evaluated again on the work data, whose kinematics are the operating point's)
  pt_data *w = ptd_linearizer_work(lz);
  pt_control_eval(m, w);
  const int nzc = ctl->nmeas + ctl->nx + ctl->nin;
  c.sig_z = calloc((size_t)ctl->nsig * nzc + 1, sizeof(double));
  c.xdot_z = calloc((size_t)ctl->nx * nzc + 1, sizeof(double));
  c.work = calloc((size_t)ctl->ngrad + 1, sizeof(double));
  if (!c.sig_z || !c.xdot_z || !c.work) {
    rc = pt_error_set(err, PT_ENOMEM, "out of memory");
    goto done;
  }
  pt_ctl_io io = {w->time, w->ctl_par, w->ctl_meas, w->input + m->ctl_input_adr,
                  w->ctl_x, w->ctl_sig, w->ctl_xdot, w->ctl_stack};
  pt_ctl_partials(ctl, &io, c.sig_z, c.xdot_z, c.work);
  rc = compose(m, w, &c, rm, nu, ny, default_outputs, out);
  if (rc) {
    pt_error_set(err, rc, "out of memory");
    goto done;
  }
  (*out)->notes = rm->notes;
  rm->notes = NULL;
  control_notes(m, w, &io, rm->nz, &(*out)->notes);
  if (flags & PT_LIN_EIGEN) {
    rc = ptd_eigenvalues(*out);
    if (rc) {
      pt_error_set(err, rc, "the eigenvalue computation failed");
      pt_linearization_free(*out);
      *out = NULL;
    }
  }
done:
  pt_linearization_free(rm);
  cwork_free(&c);
  return rc;
}
