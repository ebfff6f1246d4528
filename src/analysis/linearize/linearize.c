// linearize.c: linearization of the constrained equations of motion by augmented
// sensitivities (seed linearization: Negrut and Ortiz, eq. 23a-k, Table 1, eq. 25b-30).
//
// No state-space reduction: the augmented equations
//   M(q) udot + P(q) lambda - Q(u, q, t) = 0      (23a)   P = J^T, u = x = (rdot, omega)
//   T(q) qdot - u = 0                             (23b)
//   Cddot = J udot - gamma(u, q) = 0              (23c)   active rows (joints + motions)
//   Cdot = J u - nu(t) = 0                        (23d)
//   C(q, t) = 0                                   (23e)
//   S - s(q) = 0,  Sdot - W = 0                   (23f, g)
//   W - sdot(u, q) = 0,  Wdot - sddot = 0         (23h, i)
//   W = Wbar,  S = Sbar                           (23j, k)
// are differentiated with respect to (Wbar, Sbar) and the actuator inputs, and the one
// multiple right-hand-side system A X = B of eq. 25b (assembled dense, linearize_system.c) is
// solved by a sparse LU (KLU), or by LAPACK's dense dgesv on request
// (pt_linearize_options.solver). A, B, C, D are read from the sensitivities Sdot_, Wdot_;
// M = u_Wbar^T M u_Wbar (eq. 30), C and K from eq. 29.
//
// Coordinates of the sensitivities: delta q = (delta r, delta pi) per body (6 numbers, pi the
// global rotation vector: the chart delta A = delta pi~ A), so the Euler-parameter
// normalisation disappears and C_q = J. In that chart u = T(q) qdot with T = I at the
// operating point and [T qdot]_q = -omega~ / 2 on the rotation block (left Jacobian of the
// rotation vector); qdot appears in no other equation, so its sensitivities are not read.
// Partials: linearize_partials.c (Jacobian derivatives, quadratic terms), linearize_forces.c.
//
// On a tree partition whose states are its joint coordinates (the default there), the same
// matrices come from linearize_tree.c instead (differentiated Newton-Euler passes, one
// Cholesky factor of the joint-space mass matrix; tree_results below); PT_LIN_AUGMENTED and
// PT_LIN_DENSE keep this file's augmented system.
#include <lapacke.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linearize_internal.h"
#include "ptu.h"

#define MAX_ORDER 6000   // the augmented system is assembled dense: 288 MB at most

typedef struct {
  char *buf;
  size_t len, cap;
} notes;

static void note(notes *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(notes *n, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(line, sizeof(line) - 1, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  size_t l = strlen(line);
  line[l++] = '\n';
  if (n->len + l + 1 > n->cap) {
    size_t cap = (n->cap + l + 1) * 2;
    char *b = realloc(n->buf, cap);
    if (!b) return;
    n->buf = b, n->cap = cap;
  }
  memcpy(n->buf + n->len, line, l);
  n->len += l;
  n->buf[n->len] = '\0';
}

void pt_linearization_free(pt_linearization *lin) {
  if (!lin) return;
  free(lin->state_name), free(lin->input_name), free(lin->output_name);
  free(lin->A), free(lin->B), free(lin->C), free(lin->D);
  free(lin->M), free(lin->Cmat), free(lin->K), free(lin->eig), free(lin->notes);
  free(lin);
}

static pt_linearization *result_new(int nz, int nu, int ny) {
  pt_linearization *r = calloc(1, sizeof(*r));
  if (!r) return NULL;
  const size_t n2 = 2 * (size_t)nz, z = (size_t)nz;
  r->nz = nz, r->nu = nu, r->ny = ny;
  r->state_name = calloc(n2 + 1, sizeof(*r->state_name));
  r->input_name = calloc((size_t)nu + 1, sizeof(*r->input_name));
  r->output_name = calloc((size_t)ny + 1, sizeof(*r->output_name));
  r->A = calloc(n2 * n2 + 1, sizeof(double));
  r->B = calloc(n2 * (size_t)nu + 1, sizeof(double));
  r->C = calloc((size_t)ny * n2 + 1, sizeof(double));
  r->D = calloc((size_t)ny * (size_t)nu + 1, sizeof(double));
  r->M = calloc(z * z + 1, sizeof(double));
  r->Cmat = calloc(z * z + 1, sizeof(double));
  r->K = calloc(z * z + 1, sizeof(double));
  r->eig = calloc(n2 + 1, sizeof(pt_eigenvalue));
  if (!r->state_name || !r->input_name || !r->output_name || !r->A || !r->B || !r->C ||
      !r->D || !r->M || !r->Cmat || !r->K || !r->eig) {
    pt_linearization_free(r);
    return NULL;
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Partials of one coordinate (state or output) at the operating point w.

// v^T D (12) scattered into a dense row (nv).
static void add_vD(double *row, const int b[2], const double v[12], const double D[144]) {
  for (int s = 0; s < 2; s++) {
    if (b[s] == PT_GROUND) continue;
    for (int k = 0; k < 6; k++) {
      double t = 0;
      for (int i = 0; i < 12; i++) t += v[i] * D[12 * i + 6 * s + k];
      row[6 * b[s] + k] += t;
    }
  }
}

static void add12(double *row, const int b[2], const double v[12]) {
  for (int s = 0; s < 2; s++)
    if (b[s] != PT_GROUND)
      for (int k = 0; k < 6; k++) row[6 * b[s] + k] += v[6 * s + k];
}

// jq, ju: the local differences of this coordinate's Jdot x (measures only).
static void coord_ptd_grads(const pt_model *m, const pt_data *w, const ptd_coord *c,
                        const double *jq, const double *ju, ptd_grads *g) {
  const int nv = m->nv;
  ptu_zero(g->sdq, nv);
  ptu_zero(g->sddq, nv);
  ptu_zero(g->sddu, nv);
  ptd_coord_jac(m, w, c, g->sq);
  if (c->meas < 0) {
    g->body[0] = c->body, g->body[1] = PT_GROUND;
    if (c->comp < 3 || c->comp >= 6) return;  // a position; an angular velocity (rate only)
    // rotation vector phi of the attitude: phidot = J_l^-1(phi) omega, at phi = 0:
    // sdot_q = omega~ / 2, sddot_q = omegadot~ / 2 + omega~ omega~ / 6, sddot_u = 0
    const int k = c->body, i = c->comp - 3;
    const double *wv = w->x + 6 * k + 3, *wd = w->xdd + 6 * k + 3;
    double W[9], Wd[9], WW[9];
    W[0] = 0, W[1] = -wv[2], W[2] = wv[1], W[3] = wv[2], W[4] = 0, W[5] = -wv[0];
    W[6] = -wv[1], W[7] = wv[0], W[8] = 0;
    Wd[0] = 0, Wd[1] = -wd[2], Wd[2] = wd[1], Wd[3] = wd[2], Wd[4] = 0, Wd[5] = -wd[0];
    Wd[6] = -wd[1], Wd[7] = wd[0], Wd[8] = 0;
    ptu_mul_mat3(WW, W, W);
    for (int j = 0; j < 3; j++) {
      g->sdq[6 * k + 3 + j] = 0.5 * W[3 * i + j];
      g->sddq[6 * k + 3 + j] = 0.5 * Wd[3 * i + j] + WW[3 * i + j] / 6;
    }
    return;
  }
  const int *b = m->meas_body + 2 * c->meas;
  g->body[0] = b[0], g->body[1] = b[1];
  double D[144], x[12], xdd[12];
  ptd_meas_jac_deriv(m, w, c->meas, D);
  ptd_local12(b, w->x, x);
  ptd_local12(b, w->xdd, xdd);
  add_vD(g->sdq, b, x, D);     // sdot = J x
  add_vD(g->sddq, b, xdd, D);  // sddot = J xdd + Jdot x
  add12(g->sddq, b, jq);
  add12(g->sddu, b, ju);
}

// ---------------------------------------------------------------------------------------------
// Eigenvalues of A (LAPACK dgeev), sorted by frequency then imaginary part.

static int eig_cmp(const void *pa, const void *pb) {
  const pt_eigenvalue *a = pa, *b = pb;
  if (a->freq_hz != b->freq_hz) return a->freq_hz < b->freq_hz ? -1 : 1;
  if (a->im != b->im) return a->im < b->im ? -1 : 1;
  return (a->re > b->re) - (a->re < b->re);
}

static int eigenvalues(pt_linearization *r) {
  const int n = 2 * r->nz + r->nd;
  if (n == 0) return PT_OK;
  double *a = malloc(sizeof(double) * (size_t)(n * n + 2 * n));
  if (!a) return PT_ENOMEM;
  double *wr = a + n * n, *wi = wr + n, dummy = 0;
  ptu_copy(a, r->A, n * n);
  int info = LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'N', n, a, n, wr, wi, &dummy, 1, &dummy, 1);
  if (info == 0)
    for (int i = 0; i < n; i++) {
      const double mag = hypot(wr[i], wi[i]);
      r->eig[i].re = wr[i];
      r->eig[i].im = wi[i];
      r->eig[i].freq_hz = mag / (2 * M_PI);
      r->eig[i].damping_ratio = (mag > 0 ? -wr[i] / mag : 0) + 0.0;  // no -0
    }
  free(a);
  if (info != 0) return PT_ESINGULAR;
  qsort(r->eig, (size_t)n, sizeof(pt_eigenvalue), eig_cmp);
  return PT_OK;
}

int ptd_eigenvalues(pt_linearization *r) { return eigenvalues(r); }

// ---------------------------------------------------------------------------------------------
// Names

typedef ptd_output output;

static int ends_with(const char *s, const char *suf, size_t *stem) {
  size_t n = strlen(s), k = strlen(suf);
  if (n <= k || strcmp(s + n - k, suf) != 0) return 0;
  *stem = n - k;
  return 1;
}

static int parse_output(const pt_model *m, const char *name, output *o) {
  static const char *const suf[3] = {"", ".rate", ".acc"};
  if (ptd_coord_parse(m, name, &o->c) == 0) {
    o->kind = 0;
    return 0;
  }
  for (int k = 1; k < 3; k++) {
    size_t stem;
    char buf[PT_LIN_NAME_MAX];
    if (!ends_with(name, suf[k], &stem) || stem >= sizeof(buf)) continue;
    memcpy(buf, name, stem);
    buf[stem] = '\0';
    if (ptd_coord_parse(m, buf, &o->c) == 0) {
      o->kind = k;
      return 0;
    }
  }
  return -1;
}

static int same_coord(const ptd_coord *a, const ptd_coord *b) {
  return a->meas == b->meas && a->body == b->body && a->comp == b->comp;
}

// ---------------------------------------------------------------------------------------------

struct pt_linearizer {
  const pt_model *m;
  pt_data *w;              // work data: the operating point, scratch of the local differences
  ptd_trip T;              // the augmented matrix as triplets (grown as needed)
  ptd_csc A;               // and by compressed columns
  ptd_tree *tree;          // the tree method's workspace (linearize_tree.c); NULL off a tree
  pt_data *wl;             // a closed loop's joint-coordinate partition (the states' choice)
  double *Qq, *Qu;         // (nv x nv) the augmented system's force partials, row-major, zero
  int *pair;               // outside the body pairs' blocks (ptd_force_pairs; at first use)
  int npair;
};

pt_linearizer *pt_linearizer_new(const pt_model *m) {
  pt_linearizer *lz = calloc(1, sizeof(*lz));
  if (!lz) return NULL;
  lz->m = m;
  lz->w = pt_data_new(m);
  if (!lz->w) {
    free(lz);
    return NULL;
  }
  lz->tree = ptd_tree_new(m, lz->w);   // NULL off a tree (or short of memory: general path)
  lz->wl = m->loop_ok ? pt_data_new(m) : NULL;  // (short of memory: the dense choice)
  return lz;
}

void pt_linearizer_free(pt_linearizer *lz) {
  if (!lz) return;
  pt_data_free(lz->w);
  pt_data_free(lz->wl);
  free(lz->Qq), free(lz->Qu), free(lz->pair);
  ptd_trip_free(&lz->T);
  ptd_csc_free(&lz->A);
  ptd_tree_free(lz->tree);
  free(lz);
}

typedef struct {           // everything one linearization allocates
  pt_data *w;              // the linearizer's
  ptd_coord *cand, *states;
  int *kept, *inputs, *meas, *tdof;
  output *outs;
  double *Qin, *gq, *gu, *jq, *ju, *gbuf, *dense, *R, *mu, *wd;
  ptd_grads *g;
  lapack_int *piv;
  double *held;            // (njoint) tree method: reaction of each limit held, or 0
  int *held_side;          // (njoint) -1 / +1 held at the lower / upper bound, 0 free
  notes nt;
} work;

static void work_free(work *k) {
  free(k->held), free(k->held_side);
  free(k->cand), free(k->states), free(k->kept), free(k->inputs), free(k->meas), free(k->tdof);
  free(k->outs), free(k->Qin), free(k->gq), free(k->gu);
  free(k->jq), free(k->ju), free(k->gbuf), free(k->dense), free(k->R), free(k->mu), free(k->wd);
  free(k->g), free(k->piv);
  free(k->nt.buf);
}

// The coupler whose follower has coordinate c (coupler.c), or -1; the followers' count.
static int follower_k(const pt_model *m, int c) {
  return pt_coupler_of_joint(m, c >= 0 && c < m->ncoord ? m->meas_joint[c] : -1);
}
static int nfollow(const pt_model *m) { return m->ncoupler; }

static int resolve(const pt_model *m, const pt_linearize_options *o, const ptd_request *req,
                   work *k, int *ncand, int *nu, int *ny, pt_error *err) {
  const int nst = o->nstates > 0 && o->states ? o->nstates : 0;
  *ncand = nst ? nst : m->njcoord - nfollow(m);
  *nu = req ? req->nu : o->ninputs > 0 && o->inputs ? o->ninputs : m->ninput;
  *ny = req ? req->ny : o->noutputs > 0 && o->outputs ? o->noutputs : 0;
  const int ncoords = m->ncoord + 6 * m->nbody;  // names there are: more must repeat one
  if (nst > ncoords || *nu > m->ninput || *ny > 3 * ncoords)
    return pt_error_set(err, PT_EINVAL, "%d states, %d inputs, %d outputs requested: model "
                        "\"%s\" has %d coordinates (with internal ones) and %d inputs", nst,
                        *nu, *ny, m->name, ncoords, m->ninput);
  k->cand = calloc((size_t)*ncand + 1, sizeof(ptd_coord));
  k->kept = calloc((size_t)*ncand + 1, sizeof(int));
  k->inputs = calloc((size_t)*nu + 1, sizeof(int));
  k->outs = calloc((size_t)*ny + 1, sizeof(output));
  if (!k->cand || !k->kept || !k->inputs || !k->outs)
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  for (int i = 0, c = 0; i < *ncand; i++) {
    if (!nst) {  // the joint coordinates, couplers' followers apart
      while (follower_k(m, c) >= 0) c++;
      k->cand[i].meas = c++, k->cand[i].body = -1, k->cand[i].comp = -1;
      continue;
    }
    const char *nm = o->states[i] ? o->states[i] : "";
    if (ptd_coord_parse(m, nm, k->cand + i) != 0)
      return pt_error_set(err, PT_EINVAL,
                          "model \"%s\" has no coordinate \"%s\" (states are "
                          "coordinates or BODY.x|y|z|rx|ry|rz)", m->name, nm);
    for (int j = 0; j < i; j++)
      if (same_coord(k->cand + j, k->cand + i))
        return pt_error_set(err, PT_EINVAL, "state \"%s\" given twice", nm);
    const int f = follower_k(m, k->cand[i].meas);
    if (f >= 0)
      return pt_error_set(err, PT_EINVAL, "state \"%s\" follows coupler \"%s\": name its "
                          "leader \"%s\" (the follower's motion follows from it)", nm,
                          m->coupler_name[f], m->joint_name[m->coupler_joint[2 * f + 1]]);
  }
  if (req) {  // resolved by the caller (linearize_control.c)
    if (*nu) memcpy(k->inputs, req->inputs, sizeof(int) * (size_t)*nu);
    if (*ny) memcpy(k->outs, req->outs, sizeof(output) * (size_t)*ny);
    return PT_OK;
  }
  for (int i = 0; i < *nu; i++) {
    if (o->ninputs > 0 && o->inputs) {
      const char *nm = o->inputs[i] ? o->inputs[i] : "";
      k->inputs[i] = pt_input_index(m, nm);
      if (k->inputs[i] < 0)
        return pt_error_set(err, PT_EINVAL, "model \"%s\" has no actuator input "
                            "\"%s\"", m->name, nm);
      for (int j = 0; j < i; j++)
        if (k->inputs[j] == k->inputs[i])
          return pt_error_set(err, PT_EINVAL, "input \"%s\" given twice", nm);
    } else {
      k->inputs[i] = i;
    }
  }
  for (int i = 0; i < *ny; i++) {
    const char *nm = o->outputs[i] ? o->outputs[i] : "";
    if (parse_output(m, nm, k->outs + i) != 0)
      return pt_error_set(err, PT_EINVAL,
                          "model \"%s\" has no output \"%s\" (a coordinate, "
                          "NAME.rate or NAME.acc)", m->name, nm);
  }
  return PT_OK;
}

static void make_notes(const pt_model *m, const pt_linearize_options *o, work *k, int ncand,
                       int z) {
  char nm[PT_LIN_NAME_MAX];
  const int given = o->nstates > 0 && o->states;
  note(&k->nt, "operating point: t = %.17g, %d degrees of freedom", k->w->time, z);
  if (!given)
    note(&k->nt, "states: none given, the joint coordinates are the candidates%s",
         m->ncoupler ? " (couplers' followers apart: theirs follow their leaders')" : "");
  // joints at a limit (measured at the operating point: the copy's outputs are not updated)
  char lim[1024] = "";
  double *cv = calloc((size_t)m->ncoord + 1, sizeof(double)), jac[12], jdx;
  for (int i = 0; cv && i < m->ncoord; i++) pt_measure(m, k->w, i, cv + i, jac, &jdx);
  if (cv && k->held_side) {  // the tree method: held limits are constraints
    for (int j = 0; j < m->njoint; j++) {
      const int c = m->joint_coord_adr[j];
      if (!m->joint_limited[j] || c < 0) continue;
      int follower = 0;
      for (int q = 0; q < m->ncoupler; q++) follower |= m->coupler_joint[2 * q] == j;
      const double lo = m->joint_limit[2 * j], hi = m->joint_limit[2 * j + 1];
      const int side = k->held_side[j] ? k->held_side[j]
                       : cv[c] <= lo + 1e-9 ? -1 : cv[c] >= hi - 1e-9 ? 1 : 0;
      if (!side || follower) continue;
      if (k->held_side[j])
        note(&k->nt, "joint %s at its %s limit %.6g: held by the limit, treated as a "
             "constraint (reaction %.9g): not a state", m->joint_name[j],
             side < 0 ? "lower" : "upper", side < 0 ? lo : hi, k->held[j]);
      else if (fabs(cv[c] - (side < 0 ? lo : hi)) <= 1e-9)
        note(&k->nt, "joint %s at its %s limit %.6g (coordinate %.9g): free, its limit's "
             "reaction would pull (the limit releases)", m->joint_name[j],
             side < 0 ? "lower" : "upper", side < 0 ? lo : hi, cv[c]);
      else
        note(&k->nt, "joint %s at its %s limit %.6g (coordinate %.9g): linearized as free "
             "(a limit is not a constraint of the linearization)", m->joint_name[j],
             side < 0 ? "lower" : "upper", side < 0 ? lo : hi, cv[c]);  // beyond it
    }
  } else if (cv && pt_joint_limits_note(m, cv, "linearized as free (a limit is not a constraint "
                                        "of the linearization)", lim, sizeof(lim)))
    for (char *line = lim, *nl; *line && (nl = strchr(line, '\n')); line = nl + 1) {
      *nl = '\0';
      note(&k->nt, "%s", line);
    }
  free(cv);
  for (int i = 0; i < ncand; i++)
    if (!k->kept[i]) {
      ptd_coord_name(m, k->cand + i, nm, sizeof(nm));
      note(&k->nt, "dropped %s: fixed by the constraints and the states kept (more candidates "
           "than degrees of freedom, or a singular choice at this configuration)", nm);
    }
  for (int i = 0; i < z; i++) {
    int from_cand = 0;
    for (int c = 0; c < ncand; c++) from_cand |= same_coord(k->states + i, k->cand + c);
    if (from_cand) continue;
    ptd_coord_name(m, k->states + i, nm, sizeof(nm));
    note(&k->nt, "added %s: internal coordinate of body \"%s\" (too few independent %s)", nm,
         m->body_name[k->states[i].body], given ? "states given" : "joint coordinates");
  }
}

static void grads_of(const pt_model *m, work *k, const ptd_coord *c, int nmeas, ptd_grads *g) {
  const double *jq = NULL, *ju = NULL;
  for (int i = 0; i < nmeas; i++)
    if (k->meas[i] == c->meas) jq = k->jq + 12 * i, ju = k->ju + 12 * i;
  coord_ptd_grads(m, k->w, c, jq, ju, g);
}

// Column col of X, the sensitivities to one of Wbar, Sbar or an input, dotted with a ptd_grads.
static double dotx(const work *k, const ptd_layout *L, int col, const ptd_grads *g, int kind) {
  const double *X = k->R + (size_t)col * L->N;
  const double *gq = kind == 0 ? g->sq : kind == 1 ? g->sdq : g->sddq;
  const double *gu = kind == 1 ? g->sq : kind == 2 ? g->sddu : NULL;
  double s = 0;
  const int b0 = g->body[0], b1 = g->body[1];
  const int lo = b0 < b1 ? b0 : b1, hi = b0 < b1 ? b1 : b0;   // index order, as a dense sum
  for (int t = 0; t < 2; t++) {   // the partials are zero outside the coordinate's bodies
    const int b = t ? hi : lo;
    if (b == PT_GROUND || (t == 1 && b == lo)) continue;
    for (int i = 6 * b; i < 6 * b + 6; i++) {
      s += gq[i] * X[L->q + i];
      if (gu) s += gu[i] * X[L->u + i];
      if (kind == 2) s += g->sq[i] * X[L->ud + i];
    }
  }
  return s;
}

// dst = stem (at most max_stem characters of it) then suf, within PT_LIN_NAME_MAX: what
// snprintf(dst, PT_LIN_NAME_MAX, "%.70s%s", ...) writes, without the format parsing.
static void put_name(char *dst, const char *stem, size_t max_stem, const char *suf) {
  size_t n = 0, k = strlen(suf);
  while (n < max_stem && stem[n]) n++;
  if (n > PT_LIN_NAME_MAX - 1) n = PT_LIN_NAME_MAX - 1;
  if (n + k > PT_LIN_NAME_MAX - 1) k = PT_LIN_NAME_MAX - 1 - n;
  memcpy(dst, stem, n);
  memcpy(dst + n, suf, k);
  dst[n + k] = '\0';
}

static void name_result(const pt_model *m, const work *k, pt_linearization *r) {
  const int z = r->nz, nu = r->nu, ny = r->ny;
  char nm[PT_LIN_NAME_MAX];
  static const char *const suf[3] = {"", ".rate", ".acc"};
  for (int i = 0; i < z; i++) {
    ptd_coord_name(m, k->states + i, nm, sizeof(nm));
    put_name(r->state_name[i], nm, PT_LIN_NAME_MAX, "");
    put_name(r->state_name[z + i], nm, 70, ".rate");
  }
  for (int c = 0; c < nu; c++)
    put_name(r->input_name[c], m->input_name[k->inputs[c]], PT_LIN_NAME_MAX, "");
  for (int y = 0; y < ny; y++) {
    ptd_coord_name(m, &k->outs[y].c, nm, sizeof(nm));
    put_name(r->output_name[y], nm, 70, suf[k->outs[y].kind]);
  }
}

static void read_results(const pt_model *m, work *k, const ptd_layout *L, pt_linearization *r) {
  const int z = L->z, n2 = 2 * z, nu = r->nu, ny = r->ny, N = L->N;
  const double *X = k->R;
  name_result(m, k, r);
  // Wdot_X = sddot (23i) read off each column: wd (z x (2z + nu)), column-major
  const int ncol = n2 + nu;
  for (int col = 0; col < ncol; col++)
    for (int i = 0; i < z; i++) k->wd[(size_t)col * z + i] = dotx(k, L, col, k->g + i, 2);
  // state (S_j, W_j) -> column of X: W_j is column j, S_j column z + j. Sdot_X = W_X (23g)
  // and W_X = Wbar_X (23j): the first block row is [0 I], and Sdot_u = 0
  for (int i = 0; i < z; i++)
    for (int j = 0; j < n2; j++) {
      const int col = j < z ? z + j : j - z;
      r->A[(size_t)i * n2 + j] = j == z + i;
      r->A[(size_t)(z + i) * n2 + j] = k->wd[(size_t)col * z + i];
    }
  for (int i = 0; i < z; i++)
    for (int c = 0; c < nu; c++) {
      r->B[(size_t)i * nu + c] = 0;
      r->B[(size_t)(z + i) * nu + c] = k->wd[(size_t)(n2 + c) * z + i];
    }
  for (int y = 0; y < ny; y++) {
    const ptd_grads *g = k->g + z + y;
    for (int j = 0; j < n2; j++)
      r->C[(size_t)y * n2 + j] = dotx(k, L, j < z ? z + j : j - z, g, k->outs[y].kind);
    for (int c = 0; c < nu; c++) r->D[(size_t)y * nu + c] = dotx(k, L, n2 + c, g, k->outs[y].kind);
  }
  // eq. 30: M = u_Wbar^T M(q) u_Wbar (symmetric: the upper triangle, mirrored), through
  // mu = M(q) u_Wbar (nv x z, column j for state j); eq. 29: C = -M Wdot_Wbar, K = -M Wdot_Sbar
  for (int j = 0; j < z; j++) {
    const double *uj = X + (size_t)j * N + L->u;
    double *mj = k->mu + (size_t)j * L->n;
    for (int b = 0; b < m->nbody; b++) {
      const double *Ig = k->w->inertia_g + 9 * b;
      for (int c = 0; c < 3; c++) mj[6 * b + c] = m->body_mass[b] * uj[6 * b + c];
      ptu_mul_mat_vec3(mj + 6 * b + 3, Ig, uj + 6 * b + 3);
    }
  }
  for (int i = 0; i < z; i++) {
    const double *ui = X + (size_t)i * N + L->u;
    for (int j = i; j < z; j++) {
      const double *mj = k->mu + (size_t)j * L->n;
      double s = 0;
      for (int v = 0; v < L->n; v++) s += ui[v] * mj[v];
      r->M[(size_t)i * z + j] = r->M[(size_t)j * z + i] = s;
    }
  }
  for (int i = 0; i < z; i++)
    for (int j = 0; j < z; j++) {
      double c = 0, kk = 0;
      for (int l = 0; l < z; l++) {
        c -= r->M[(size_t)i * z + l] * k->wd[(size_t)j * z + l];
        kk -= r->M[(size_t)i * z + l] * k->wd[(size_t)(z + j) * z + l];
      }
      r->Cmat[(size_t)i * z + j] = c;
      r->K[(size_t)i * z + j] = kk;
    }
  r->time = k->w->time;
  r->size = N;
}

// ---------------------------------------------------------------------------------------------
// The tree method (linearize_tree.c): a tree partition whose states are its joint coordinates,
// each once in any order.

static int tree_applies(const ptd_tree *t, const work *k, int ncand) {
  if (!t || ncand != ptd_tree_ndof(t)) return 0;
  for (int i = 0; i < ncand; i++)
    if (ptd_tree_dof(t, k->cand[i].meas) < 0) return 0;
  return 1;
}

// C and D rows of the outputs that are not joint coordinates (user coordinates, a body's
// internal coordinates): their partials dotted with the body sensitivities, as read_results
// does with the augmented path's solution.
static int tree_other_outputs(const pt_model *m, pt_linearizer *lz, work *k, int nu, int ny,
                              pt_linearization *r) {
  const int z = r->nz, n2 = 2 * z, nv = m->nv;
  k->meas = calloc((size_t)ny + 1, sizeof(int));
  if (!k->meas) return PT_ENOMEM;
  int nmeas = 0;
  for (int y = 0; y < ny; y++) {
    const int c = k->outs[y].c.meas;
    int seen = c < 0 || ptd_tree_dof(lz->tree, c) >= 0;
    for (int j = 0; j < nmeas && !seen; j++) seen = k->meas[j] == c;
    if (!seen) k->meas[nmeas++] = c;
  }
  k->gq = calloc(12 * (size_t)m->ncon + 1, sizeof(double));
  k->gu = calloc(12 * (size_t)m->ncon + 1, sizeof(double));
  k->jq = calloc(12 * (size_t)nmeas + 1, sizeof(double));
  k->ju = calloc(12 * (size_t)nmeas + 1, sizeof(double));
  k->g = calloc((size_t)ny + 1, sizeof(ptd_grads));
  k->gbuf = malloc(sizeof(double) * (4 * (size_t)nv * (size_t)ny + 1));
  k->R = malloc(sizeof(double) * (3 * (size_t)nv * (size_t)(n2 + nu) + 1));
  if (!k->gq || !k->gu || !k->jq || !k->ju || !k->g || !k->gbuf || !k->R) return PT_ENOMEM;
  pt_joint_rows(m, k->w);   // the articulated-body evaluation left the rows out
  int rc = ptd_fd_quadratic(m, k->w, k->gq, k->gu, k->meas, nmeas, k->jq, k->ju);
  if (rc) return rc;
  ptd_tree_cartesian(k->w, lz->tree, k->tdof, nu, k->R);
  const ptd_layout L = {.n = nv, .z = z, .N = 3 * nv, .ud = 0, .u = nv, .q = 2 * nv};
  for (int y = 0; y < ny; y++) {
    if (ptd_tree_dof(lz->tree, k->outs[y].c.meas) >= 0) continue;
    ptd_grads *g = k->g + y;
    double *b = k->gbuf + 4 * (size_t)nv * y;
    g->sq = b, g->sdq = b + nv, g->sddq = b + 2 * nv, g->sddu = b + 3 * nv;
    grads_of(m, k, &k->outs[y].c, nmeas, g);
    for (int j = 0; j < n2; j++)
      r->C[(size_t)y * n2 + j] = dotx(k, &L, j < z ? z + j : j - z, g, k->outs[y].kind);
    for (int c = 0; c < nu; c++)
      r->D[(size_t)y * nu + c] = dotx(k, &L, n2 + c, g, k->outs[y].kind);
  }
  return PT_OK;
}

// Result from the tree method: state i is dof p[i]; thetadd_X, dtau_X and H read by dofs.
static int tree_results(const pt_model *m, pt_linearizer *lz, work *k, int nu, int ny,
                        pt_linearization **out, pt_error *err) {
  const ptd_tree *t = lz->tree;
  const int z = ptd_tree_ndof(t), n2 = 2 * z;
  int rc = ptd_tree_solve(m, k->w, lz->tree, k->inputs, nu);
  if (rc == PT_ENOMEM) return pt_error_set(err, PT_ENOMEM, "out of memory");
  if (rc)
    return pt_error_set(err, PT_ESINGULAR, "the joint-space mass matrix is singular (a "
                        "massless branch?)");
  pt_linearization *r = result_new(z, nu, ny);
  k->tdof = malloc(sizeof(int) * (2 * (size_t)z + 1));   // dof of each state, state of each dof
  if (!r || !k->tdof) {
    pt_linearization_free(r);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  int *p = k->tdof, *s = k->tdof + z;
  for (int i = 0; i < z; i++) p[i] = ptd_tree_dof(t, k->states[i].meas), s[p[i]] = i;
  name_result(m, k, r);
  const double *Y = ptd_tree_thdd(t), *T = ptd_tree_dtau(t), *H = ptd_tree_H(t);
  for (int i = 0; i < z; i++) {
    double *Av = r->A + (size_t)(z + i) * n2;
    r->A[(size_t)i * n2 + z + i] = 1;
    for (int j = 0; j < z; j++) {
      Av[j] = Y[(size_t)p[j] * z + p[i]];
      Av[z + j] = Y[(size_t)(z + p[j]) * z + p[i]];
      // eq. 30: M = u_W^T M u_W = H; eq. 29: K = -M Wdot_S = dtau/dtheta, C = dtau/dthetadot
      r->M[(size_t)i * z + j] = H[(size_t)p[j] * z + p[i]];
      r->K[(size_t)i * z + j] = T[(size_t)p[j] * z + p[i]];
      r->Cmat[(size_t)i * z + j] = T[(size_t)(z + p[j]) * z + p[i]];
    }
    for (int c = 0; c < nu; c++)
      r->B[(size_t)(z + i) * nu + c] = Y[(size_t)(n2 + c) * z + p[i]];
  }
  int nother = 0;
  for (int y = 0; y < ny; y++) {
    double mu = 1;  // a coupler's follower: multiplier x its leader's row
    int dof = ptd_tree_dof(t, k->outs[y].c.meas);
    if (dof < 0) dof = ptd_tree_follower(t, k->outs[y].c.meas, &mu);
    if (dof < 0) {
      nother++;
      continue;
    }
    if (mu == 0) continue;  // held on its limit (or following one that is): a zero row
    const int i = s[dof];
    double *Cy = r->C + (size_t)y * n2, *Dy = r->D + (size_t)y * nu;
    if (k->outs[y].kind < 2) {
      Cy[k->outs[y].kind ? z + i : i] = mu;
      continue;
    }
    for (int j = 0; j < n2; j++) Cy[j] = mu * r->A[(size_t)(z + i) * n2 + j];
    for (int c = 0; c < nu; c++) Dy[c] = mu * r->B[(size_t)(z + i) * nu + c];
  }
  if (nother && lz->tree && ptd_tree_ndof(t) != m->ndof) {
    pt_linearization_free(r);
    return pt_error_set(err, PT_EPRECOND, "outputs other than joint coordinates are not "
                        "available on a model with couplers or limits held yet");
  }
  rc = nother ? tree_other_outputs(m, lz, k, nu, ny, r) : PT_OK;
  if (rc) {
    pt_linearization_free(r);
    return pt_error_set(err, rc, "partials of the outputs failed: %s", pt_strerror(rc));
  }
  r->time = k->w->time;
  r->size = z;
  *out = r;
  return PT_OK;
}

int pt_linearize(const pt_model *m, const pt_data *d, const pt_linearize_options *opt,
                 pt_linearization **out, pt_error *err) {
  if (out) *out = NULL;
  if (!m || !d || d->model != m) return pt_error_set(err, PT_EINVAL, "bad data");
  if (m->nbody == 0) return pt_error_set(err, PT_EPRECOND, "no moving body");
  pt_linearizer *lz = pt_linearizer_new(m);
  if (!lz) return pt_error_set(err, PT_ENOMEM, "out of memory");
  int rc = pt_linearize_with(lz, d, opt, PT_LIN_EIGEN, out, err);
  pt_linearizer_free(lz);
  return rc;
}

// ---- pt_linearize_with, step by step ----------------------------------------------------------

// The operating point: d's state (consistent after pt_step, pt_forward or pt_set_state) on
// the linearizer's work data. The state alone is copied (no partition is needed here); it is
// evaluated once the method is chosen (choose_states).
static int operating_point(pt_linearizer *lz, const pt_data *d, work *k, int z, pt_error *err) {
  const pt_model *m = lz->m;
  k->w = lz->w;
  k->states = calloc((size_t)z + 1, sizeof(ptd_coord));
  if (!k->states) return pt_error_set(err, PT_ENOMEM, "out of memory");
  ptu_copy(k->w->q, d->q, m->nq);
  ptu_copy(k->w->qd, d->qd, m->nq);
  ptu_copy(k->w->input, d->input, m->ninput);
  ptu_copy(k->w->ctl_x, d->ctl_x, m->nctlx);      // the control elements' state and gains:
  ptu_copy(k->w->ctl_par, d->ctl_par, m->nctlpar);  // the signals driving inputs follow them
  ptu_copy(k->w->coord_ref, d->coord_ref, m->ncoord);
  k->w->time = d->time;
  return PT_OK;
}

// Joint limits on a bound whose reaction pushes are held: constraints of the linearization,
// their coordinates eliminated like couplers' followers (linearize_tree.c) and taken out of
// the candidate states (a state the caller asked for that is held is refused). *nheld: how
// many.
static int hold_limits(const pt_model *m, pt_linearizer *lz, const pt_linearize_options *opt,
                       work *k, int *ncand, int *nheld, pt_error *err) {
  k->held = calloc(2 * (size_t)m->njoint + 1, sizeof(double));
  k->held_side = calloc((size_t)m->njoint + 1, sizeof(int));
  if (!k->held || !k->held_side) return pt_error_set(err, PT_ENOMEM, "out of memory");
  *nheld = ptd_tree_hold_limits(m, k->w, lz->tree, k->held_side, k->held);
  int o = 0;
  for (int i = 0; i < *ncand; i++) {
    const int c = k->cand[i].meas, j = c >= 0 ? m->meas_joint[c] : -1;
    if (j >= 0 && k->held_side[j] && m->joint_coord_adr[j] == c) {
      if (opt->nstates > 0 && opt->states)
        return pt_error_set(err, PT_EINVAL, "state \"%s\" is held on its %s limit at the "
                            "operating point (a constraint of the linearization): not a state",
                            m->coord_name[c], k->held_side[j] < 0 ? "lower" : "upper");
      continue;
    }
    k->cand[o++] = k->cand[i];
  }
  *ncand = o;
  return PT_OK;
}

// The method: the tree's (*tree: differentiated Newton-Euler passes, with the held limits) or
// the augmented system (every limit free, said in the notes). *z: the degrees of freedom less
// the limits held.
static int choose_method(const pt_model *m, pt_linearizer *lz, const pt_linearize_options *opt,
                         work *k, int *ncand, int *z, int *tree, pt_error *err) {
  int nheld = 0;
  if (opt->solver == PT_LIN_SPARSE && lz->tree && m->limits_on) {
    const int rc = hold_limits(m, lz, opt, k, ncand, &nheld, err);
    if (rc) return rc;
    *z -= nheld;
  }
  *tree = opt->solver == PT_LIN_SPARSE && tree_applies(lz->tree, k, *ncand);
  if (!*tree && k->held_side) {  // the general path keeps every limit free (and says so)
    free(k->held_side), free(k->held);
    k->held_side = NULL, k->held = NULL;
    pt_limits_clear(k->w);
    *z += nheld;
  }
  if (m->ncoupler > 0 && !*tree)
    return pt_error_set(err, PT_EPRECOND,
                        "model \"%s\" has couplers: it is linearized by the tree method only, "
                        "with its independent joint coordinates as the states (the followers "
                        "excluded, every other joint coordinate once) and the default solver",
                        m->name);
  return PT_OK;
}

// The operating point evaluated by the chosen method, and the states: a tree's joint
// coordinates are always independent (tree.c); otherwise the candidates are checked
// (linearize_select.c), sparsely on a closed loop in joint coordinates.
static int choose_states(const pt_model *m, pt_linearizer *lz, work *k, int ncand, int tree,
                         pt_error *err) {
  const int rc = tree ? ptd_tree_eval(m, k->w, lz->tree) : pt_eval(m, k->w);
  if (rc) {
    pt_error_set(err, rc, "evaluating the operating point failed: %s", pt_strerror(rc));
    return rc;
  }
  if (tree) {
    for (int i = 0; i < ncand; i++) k->states[i] = k->cand[i], k->kept[i] = 1;
    return PT_OK;
  }
  if (lz->wl &&
      ptd_select_states_loop(m, lz->wl, k->w, k->cand, ncand, k->states, k->kept) == PT_OK)
    return PT_OK;
  return ptd_select_states(m, k->w, k->cand, ncand, k->states, k->kept, err);
}

// Without outputs asked for: the states and their rates (*ny = 2 z).
static int default_outputs(work *k, int z, int *ny, pt_error *err) {
  if (*ny) return PT_OK;
  *ny = 2 * z;
  free(k->outs);
  k->outs = calloc((size_t)*ny + 1, sizeof(output));
  if (!k->outs) return pt_error_set(err, PT_ENOMEM, "out of memory");
  for (int i = 0; i < *ny; i++) k->outs[i].c = k->states[i % (z ? z : 1)], k->outs[i].kind = i >= z;
  return PT_OK;
}

// The result (with its eigenvalues when asked, and the notes) taken by *out, or freed.
static int finish(work *k, pt_linearization *r, int flags, pt_linearization **out,
                  pt_error *err) {
  const int rc = flags & PT_LIN_EIGEN ? eigenvalues(r) : PT_OK;
  if (rc) {
    pt_linearization_free(r);
    return pt_error_set(err, rc, "the eigenvalue computation failed");
  }
  r->notes = k->nt.buf ? k->nt.buf : calloc(1, 1);
  k->nt.buf = NULL;
  *out = r;
  return PT_OK;
}

// The tree method (linearize_tree.c, tree_results).
static int linearize_by_tree(const pt_model *m, pt_linearizer *lz, work *k, int nu, int ny,
                             int flags, pt_linearization **out, pt_error *err) {
  pt_linearization *r = NULL;
  const int rc = tree_results(m, lz, k, nu, ny, &r, err);
  if (rc) return rc;
  return finish(k, r, flags, out, err);
}

// The augmented system's work: the coordinates whose quadratic terms need local differences
// (the states' and outputs', *nmeas), the partials and the right-hand sides.
static int augmented_alloc(const pt_model *m, pt_linearizer *lz, work *k, int z, int nu,
                           int ny, const ptd_layout *L, int *nmeas, pt_error *err) {
  const int nv = m->nv;
  k->meas = calloc((size_t)(z + ny) + 1, sizeof(int));
  *nmeas = 0;
  for (int i = 0; k->meas && i < z + ny; i++) {
    const int c = i < z ? k->states[i].meas : k->outs[i - z].c.meas;
    int seen = c < 0;
    for (int j = 0; j < *nmeas && !seen; j++) seen = k->meas[j] == c;
    if (!seen) k->meas[(*nmeas)++] = c;
  }
  if (!lz->Qq) {  // once per linearizer: a call zeroes the pairs' blocks only
    lz->Qq = calloc((size_t)nv * nv + 1, sizeof(double));
    lz->Qu = calloc((size_t)nv * nv + 1, sizeof(double));
    lz->pair = malloc(sizeof(int) * (size_t)PTD_FORCE_PAIRS_MAX(m));
    if (!lz->Qq || !lz->Qu || !lz->pair) {
      free(lz->Qq), free(lz->Qu), free(lz->pair);
      lz->Qq = lz->Qu = NULL, lz->pair = NULL;
      return pt_error_set(err, PT_ENOMEM, "out of memory (augmented system of order %d)", L->N);
    }
    lz->npair = ptd_force_pairs(m, lz->pair);
  }
  ptd_zero_pairs(lz->Qq, lz->Qu, nv, lz->pair, lz->npair);
  k->Qin = calloc((size_t)nv * nu + 1, sizeof(double));
  k->gq = calloc(12 * (size_t)m->ncon + 1, sizeof(double));
  k->gu = calloc(12 * (size_t)m->ncon + 1, sizeof(double));
  k->jq = calloc(12 * (size_t)*nmeas + 1, sizeof(double));
  k->ju = calloc(12 * (size_t)*nmeas + 1, sizeof(double));
  k->g = calloc((size_t)(z + ny) + 1, sizeof(ptd_grads));
  k->gbuf = malloc(sizeof(double) * (4 * (size_t)nv * (size_t)(z + ny) + 1));  // filled later
  k->R = malloc(sizeof(double) * (size_t)L->N * (size_t)(2 * z + nu) + 8);
  k->mu = malloc(sizeof(double) * ((size_t)nv * (size_t)z + 1));
  k->wd = malloc(sizeof(double) * ((size_t)z * (size_t)(2 * z + nu) + 1));
  if (!k->meas || !k->Qin || !k->gq || !k->gu || !k->jq || !k->ju ||
      !k->g || !k->gbuf || !k->R || !k->mu || !k->wd)
    return pt_error_set(err, PT_ENOMEM, "out of memory (augmented system of order %d)", L->N);
  return PT_OK;
}

// Eq. 25b's matrix and right-hand sides: the partials of the forces and of the quadratic
// terms, each state's and output's gradients, assembled (linearize_system.c).
static int augmented_system(const pt_model *m, pt_linearizer *lz, work *k, int z, int nu,
                            int ny, int nmeas, const ptd_layout *L, pt_error *err) {
  const int nv = m->nv;
  // (the work data doubles as the scratch data of the local differences)
  int rc = ptd_force_partials(m, k->w, k->w, lz->Qq, lz->Qu, k->Qin, k->inputs, nu);
  if (!rc) rc = ptd_fd_quadratic(m, k->w, k->gq, k->gu, k->meas, nmeas, k->jq, k->ju);
  if (rc) {
    pt_error_set(err, rc, "partials failed: %s", pt_strerror(rc));
    return rc;
  }
  for (int i = 0; i < z + ny; i++) {
    double *b = k->gbuf + 4 * (size_t)nv * i;
    k->g[i].sq = b, k->g[i].sdq = b + nv, k->g[i].sddq = b + 2 * nv, k->g[i].sddu = b + 3 * nv;
    grads_of(m, k, i < z ? k->states + i : &k->outs[i - z].c, nmeas, k->g + i);
  }
  rc = ptd_fill_system(m, k->w, L, &lz->T, k->R, lz->Qq, lz->Qu, lz->pair, lz->npair, k->Qin,
                       nu, k->gq, k->gu, k->g);
  if (!rc) rc = ptd_csc_build(&lz->A, &lz->T, L->N);
  if (rc)
    return pt_error_set(err, PT_ENOMEM, "out of memory (augmented system of order %d)", L->N);
  return PT_OK;
}

// Eq. 25b: one LU factorisation, 2z + nu right-hand sides (k->R), by KLU or LAPACK's dgesv.
static int augmented_solve(pt_linearizer *lz, const pt_linearize_options *opt, work *k, int z,
                           int nu, const ptd_layout *L, pt_error *err) {
  int info = 0;
  if (opt->solver == PT_LIN_DENSE) {
    k->dense = calloc((size_t)L->N * (size_t)L->N, sizeof(double));
    k->piv = malloc(sizeof(lapack_int) * (size_t)L->N);
    if (!k->dense || !k->piv)
      return pt_error_set(err, PT_ENOMEM, "out of memory (augmented system of order %d)", L->N);
    const ptd_csc *A = &lz->A;
    for (int j = 0; j < L->N; j++)
      for (int p = A->Ap[j]; p < A->Ap[j + 1]; p++)
        k->dense[(size_t)j * L->N + A->Ai[p]] = A->Ax[p];
    info = LAPACKE_dgesv(LAPACK_COL_MAJOR, L->N, 2 * z + nu, k->dense, L->N, k->piv, k->R, L->N);
  } else {
    info = ptd_solve_sparse(&lz->A, k->R, 2 * z + nu);
  }
  if (info == PT_ENOMEM)
    return pt_error_set(err, PT_ENOMEM, "out of memory (sparse LU of order %d)", L->N);
  if (info != 0)
    return pt_error_set(err, PT_ESINGULAR,
                        "the augmented sensitivity system is singular: a lock-up, or the states "
                        "cannot describe the motion here");
  return PT_OK;
}

// The augmented sensitivity method (this file's header): work, system, solve, result.
static int linearize_by_augmented(const pt_model *m, pt_linearizer *lz,
                                  const pt_linearize_options *opt, work *k, int z, int nu,
                                  int ny, const ptd_layout *L, int flags,
                                  pt_linearization **out, pt_error *err) {
  int nmeas = 0;
  int rc = augmented_alloc(m, lz, k, z, nu, ny, L, &nmeas, err);
  if (!rc) rc = augmented_system(m, lz, k, z, nu, ny, nmeas, L, err);
  if (!rc) rc = augmented_solve(lz, opt, k, z, nu, L, err);
  if (rc) return rc;
  pt_linearization *r = result_new(z, nu, ny);
  if (!r) return pt_error_set(err, PT_ENOMEM, "out of memory");
  read_results(m, k, L, r);
  return finish(k, r, flags, out, err);
}

const pt_model *ptd_linearizer_model(const pt_linearizer *lz) { return lz->m; }
pt_data *ptd_linearizer_work(pt_linearizer *lz) { return lz->w; }

int pt_linearize_with(pt_linearizer *lz, const pt_data *d, const pt_linearize_options *opt,
                      int flags, pt_linearization **out, pt_error *err) {
  if (lz && lz->m->ctl)  // with the control elements: the closed loop (linearize_control.c)
    return ptd_linearize_controls(lz, d, opt, flags, out, err);
  return ptd_linearize_mechanism(lz, d, opt, NULL, flags, out, err);
}

int ptd_linearize_mechanism(pt_linearizer *lz, const pt_data *d, const pt_linearize_options *opt,
                            const ptd_request *req, int flags, pt_linearization **out,
                            pt_error *err) {
  static const pt_linearize_options none;
  if (!out) return pt_error_set(err, PT_EINVAL, "no result pointer");
  *out = NULL;
  if (!opt) opt = &none;
  if (!lz) return pt_error_set(err, PT_EINVAL, "no linearizer");
  const pt_model *m = lz->m;
  if (!d || d->model != m) return pt_error_set(err, PT_EINVAL, "bad data");
  if (m->nbody == 0) return pt_error_set(err, PT_EPRECOND, "no moving body");
  int z = m->nv - m->ncon - m->ncoupler;  // degrees of freedom (less the limits held)
  const ptd_layout L = ptd_layout_of(m, z);
  if (L.N > MAX_ORDER)
    return pt_error_set(err, PT_EINVAL, "the augmented system would have order %d "
                        "(at most %d)", L.N, MAX_ORDER);
  work k;
  memset(&k, 0, sizeof(k));
  int ncand = 0, nu = 0, ny = 0, tree = 0;
  int rc = resolve(m, opt, req, &k, &ncand, &nu, &ny, err);
  if (!rc) rc = operating_point(lz, d, &k, z, err);
  if (!rc) rc = choose_method(m, lz, opt, &k, &ncand, &z, &tree, err);
  if (!rc) rc = choose_states(m, lz, &k, ncand, tree, err);
  if (!rc) {
    make_notes(m, opt, &k, ncand, z);
    rc = default_outputs(&k, z, &ny, err);
  }
  if (!rc)
    rc = tree ? linearize_by_tree(m, lz, &k, nu, ny, flags, out, err)
              : linearize_by_augmented(m, lz, opt, &k, z, nu, ny, &L, flags, out, err);
  work_free(&k);
  return rc;
}
