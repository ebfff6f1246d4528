// linearize_select.c: names of linearization coordinates and the choice of the states S
// (seed linearization eq. 20-22).
//
// A candidate state is an engine coordinate (joint coordinate, point_position, distance) or an
// internal coordinate of a body ("BODY.x|y|z" its CoM, "BODY.rx|ry|rz" the rotation vector
// of its attitude relative to the operating point, global axes). The states are picked by
// Gaussian elimination with full pivoting on eq. 22,
//   J = [C_q 0; -s_q I],
// weighted so that the columns of the candidates are pivoted last (the limit of the seed's
// small diagonal weights): first full pivoting over the q columns only; the rows left then
// pivot in the candidates' columns, the last-listed first. Pivot columns are dependent; the
// rest are the states: candidates kept in their order, then internal coordinates promoted.
#include <stdio.h>
#include <stdlib.h>

#include "linearize_internal.h"
#include "loop.h"
#include "ptu.h"
#include "tolerances.h"


static const char *const internal_suffix[9] = {"x", "y", "z", "rx", "ry", "rz", "wx", "wy",
                                               "wz"};

void ptd_coord_name(const pt_model *m, const ptd_coord *c, char *out, size_t cap) {
  if (c->meas >= 0) {  // a plain copy (this runs for every state and output of every call)
    const char *nm = m->coord_name[c->meas];
    size_t n = 0;
    if (!cap) return;
    while (n + 1 < cap && nm[n]) n++;
    memcpy(out, nm, n);
    out[n] = '\0';
  } else
    snprintf(out, cap, "%s.%s", m->body_name[c->body], internal_suffix[c->comp]);
}

int ptd_coord_parse(const pt_model *m, const char *name, ptd_coord *out) {
  int c = pt_coord_index(m, name);
  if (c >= 0) {
    out->meas = c, out->body = -1, out->comp = -1;
    return 0;
  }
  const char *dot = strrchr(name, '.');
  if (!dot || dot == name) return -1;
  char body[PT_NAME_MAX];
  size_t n = (size_t)(dot - name);
  if (n >= sizeof(body)) return -1;
  memcpy(body, name, n);
  body[n] = '\0';
  int b = pt_body_index(m, body);
  if (b < 0) return -1;
  for (int k = 0; k < 6; k++)
    if (strcmp(dot + 1, internal_suffix[k]) == 0) {
      out->meas = -1, out->body = b, out->comp = k;
      return 0;
    }
  return -1;
}

// Dense row (nv) of s_q for a coordinate at d's state.
void ptd_coord_jac(const pt_model *m, const pt_data *d, const ptd_coord *c, double *row) {
  ptu_zero(row, m->nv);
  if (c->meas < 0) {
    row[6 * c->body + (c->comp < 6 ? c->comp : c->comp - 3)] = 1;
    return;
  }
  double val, jac[12], jdx;
  const int *b = m->meas_body + 2 * c->meas;
  pt_measure(m, d, c->meas, &val, jac, &jdx);
  for (int s = 0; s < 2; s++)
    if (b[s] != PT_GROUND)
      for (int k = 0; k < 6; k++) row[6 * b[s] + k] += jac[6 * s + k];
}

// Eq. 22 with exactly z candidates: the matrix [C_q; s_q] (nv x nv) is then square, and if it
// is well conditioned the full pivoting of phase 1 takes every q column (all of its pivots
// stay far above PT_TOL_SELECT_PIVOT), so every candidate is kept. That is decided here by a sparse LU
// and its condition estimate, in time near linear in bodies; 0 leaves the decision to the
// dense elimination (a singular or badly conditioned choice), 1 all kept, PT_ENOMEM.
#define FAST_CONDEST_MAX 1e6

static int all_kept_sparse(const pt_model *m, const pt_data *d, const ptd_coord *cand, int ncand) {
  const int nv = m->nv, nc = m->ncon;
  const size_t cap = 12 * (size_t)(nc + ncand) + 1;
  int *Ap = calloc((size_t)nv + 2, sizeof(int)), *Ai = malloc(sizeof(int) * cap);
  int *ti = malloc(sizeof(int) * cap), *tj = malloc(sizeof(int) * cap);
  double *Ax = malloc(sizeof(double) * cap), *tv = malloc(sizeof(double) * cap);
  int rc = PT_ENOMEM;
  if (!Ap || !Ai || !ti || !tj || !Ax || !tv) goto done;
  size_t nt = 0;   // triplets (row, q column, value)
  for (int i = 0; i < nc + ncand; i++) {
    double jac[12], val, jdx;
    const int *b;
    if (i < nc) {
      const int r = m->con_row[i];
      b = m->row_body + 2 * r;
      ptu_copy(jac, d->row_jac + 12 * r, 12);
    } else if (cand[i - nc].meas >= 0) {
      b = m->meas_body + 2 * cand[i - nc].meas;
      pt_measure(m, d, cand[i - nc].meas, &val, jac, &jdx);
    } else {
      ti[nt] = i, tj[nt] = 6 * cand[i - nc].body + cand[i - nc].comp, tv[nt++] = 1;
      continue;
    }
    for (int s = 0; s < 2; s++)
      if (b[s] != PT_GROUND && (s == 0 || b[1] != b[0]))
        for (int k = 0; k < 6; k++)
          if (jac[6 * s + k] != 0) ti[nt] = i, tj[nt] = 6 * b[s] + k, tv[nt++] = jac[6 * s + k];
  }
  for (size_t t = 0; t < nt; t++) Ap[tj[t] + 2]++;
  for (int j = 0; j < nv; j++) Ap[j + 2] += Ap[j + 1];
  for (size_t t = 0; t < nt; t++) {
    const int p = Ap[tj[t] + 1]++;
    Ai[p] = ti[t], Ax[p] = tv[t];
  }
  klu_common c;
  klu_defaults(&c);
  klu_symbolic *sym = klu_analyze(nv, Ap, Ai, &c);
  klu_numeric *num = sym ? klu_factor(Ap, Ai, Ax, sym, &c) : NULL;
  rc = num && klu_condest(Ap, Ax, sym, num, &c) && c.condest < FAST_CONDEST_MAX;
  if (num) klu_free_numeric(&num, &c);
  if (sym) klu_free_symbolic(&sym, &c);
  if (c.status == KLU_OUT_OF_MEMORY) rc = PT_ENOMEM;
done:
  free(Ap), free(Ai), free(ti), free(tj), free(Ax), free(tv);
  return rc;
}

static void eliminate(double *G, int nr, int ncol, const int *done, int pr, int pc) {
  const double piv = G[(size_t)pr * ncol + pc];
  for (int i = 0; i < nr; i++) {
    if (done[i] || i == pr) continue;
    const double f = G[(size_t)i * ncol + pc] / piv;
    if (f == 0) continue;
    for (int j = 0; j < ncol; j++) G[(size_t)i * ncol + j] -= f * G[(size_t)pr * ncol + j];
  }
}

int ptd_select_states(const pt_model *m, const pt_data *d, const ptd_coord *cand, int ncand,
                      ptd_coord *states, int *kept, pt_error *err) {
  const int nv = m->nv, nc = m->ncon, nr = nc + ncand, ncol = nv + ncand;
  const int z = nv - nc;
  if (ncand == z) {
    const int fast = all_kept_sparse(m, d, cand, ncand);
    if (fast < 0) return pt_error_set(err, PT_ENOMEM, "out of memory");
    if (fast == 1) {
      for (int i = 0; i < ncand; i++) kept[i] = 1, states[i] = cand[i];
      return PT_OK;
    }
  }
  double *G = calloc((size_t)nr * ncol + 1, sizeof(double));
  int *done = calloc((size_t)nr + 1, sizeof(int));
  int *dep = calloc((size_t)ncol + 1, sizeof(int));
  if (!G || !done || !dep) {
    free(G), free(done), free(dep);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  for (int a = 0; a < nc; a++) {
    const int r = m->con_row[a];
    for (int s = 0; s < 2; s++) {
      const int b = m->row_body[2 * r + s];
      if (b == PT_GROUND) continue;
      for (int k = 0; k < 6; k++) G[(size_t)a * ncol + 6 * b + k] += d->row_jac[12 * r + 6 * s + k];
    }
  }
  for (int i = 0; i < ncand; i++) {
    double *row = G + (size_t)(nc + i) * ncol;
    ptd_coord_jac(m, d, cand + i, row);
    for (int j = 0; j < nv; j++) row[j] = -row[j];
    row[nv + i] = 1;
  }
  double gmax = 0;
  for (size_t i = 0; i < (size_t)nr * ncol; i++) gmax = fmax(gmax, fabs(G[i]));
  int npiv = 0, rc = PT_OK;
  // phase 1: full pivoting over the q columns
  for (;;) {
    int pr = -1, pc = -1;
    double best = PT_TOL_SELECT_PIVOT * gmax;
    for (int i = 0; i < nr; i++) {
      if (done[i]) continue;
      for (int j = 0; j < nv; j++) {
        double v = fabs(G[(size_t)i * ncol + j]);
        if (!dep[j] && v > best) best = v, pr = i, pc = j;
      }
    }
    if (pr < 0) break;
    eliminate(G, nr, ncol, done, pr, pc);
    done[pr] = 1, dep[pc] = 1, npiv++;
  }
  // phase 2: the rows left pivot in the candidates' columns, the last-listed first
  while (npiv < nr) {
    int pr = -1, pc = -1;
    double smax = 0;
    for (int i = 0; i < nr; i++)
      if (!done[i])
        for (int j = nv; j < ncol; j++) smax = fmax(smax, fabs(G[(size_t)i * ncol + j]));
    for (int j = ncol - 1; j >= nv && pc < 0; j--) {
      if (dep[j]) continue;
      double best = PT_TOL_SELECT_BLOCK * smax;
      for (int i = 0; i < nr; i++) {
        double v = fabs(G[(size_t)i * ncol + j]);
        if (!done[i] && v > best) best = v, pr = i, pc = j;
      }
    }
    if (pc < 0) {
      rc = pt_error_set(err, PT_ESINGULAR,
                        "the constraint Jacobian is rank deficient at t = %.17g "
                        "(a lock-up or singular configuration)", d->time);
      break;
    }
    eliminate(G, nr, ncol, done, pr, pc);
    done[pr] = 1, dep[pc] = 1, npiv++;
  }
  if (!rc) {
    int nz = 0;
    for (int i = 0; i < ncand; i++) {
      kept[i] = !dep[nv + i];
      if (kept[i] && nz < z) states[nz++] = cand[i];
    }
    for (int j = 0; j < nv && nz < z; j++)
      if (!dep[j]) {
        states[nz].meas = -1, states[nz].body = j / 6, states[nz].comp = j % 6;
        nz++;
      }
    if (nz != z)
      rc = pt_error_set(err, PT_ESINGULAR,
                        "found %d states for %d degrees of freedom (singular "
                        "constraints at t = %.17g)", nz, z, d->time);
  }
  free(G), free(done), free(dep);
  return rc;
}

// Eq. 22 on a closed loop integrated in joint coordinates (issue 23): the states are the first
// candidates, in their order, whose gradients are independent on the constraint manifold,
// i.e. whose rows s_q N are independent with N a basis of the manifold's tangent space (the
// null space of the joint-coordinate Jacobian from a sparse LU partition, loop.h): the
// lexicographically first basis among the candidates that the weighted full pivoting below
// picks, found in O(candidates x ndof) after O(bodies) sparse work instead of O(n^3) dense
// elimination (132 ms on the A02 chain with N = 40). A candidate is independent when the
// part of its row that the rows kept before do not explain is above PT_TOL_SELECT_BLOCK of
// the row. Returns PT_OK with z states, or not (ESINGULAR: fewer than z candidates qualify,
// or the partition cannot be built): ptd_select_states decides then. d is the work data the
// partition is built on (its state: w's).
int ptd_select_states_loop(const pt_model *m, pt_data *d, const pt_data *w, const ptd_coord *cand,
                           int ncand, ptd_coord *states, int *kept) {
  const int z = m->ndof, ns = m->nls;
  if (!m->loop_ok) return PT_ESINGULAR;
  ptu_copy(d->q, w->q, m->nq);
  ptu_copy(d->qd, w->qd, m->nq);
  ptu_copy(d->coord_ref, w->coord_ref, m->ncoord);
  d->time = w->time;
  if (pt_loop_null_space(m, d)) return PT_ESINGULAR;
  double *jx = malloc(sizeof(double) * ((size_t)m->nv + 1));
  double *gs = malloc(sizeof(double) * ((size_t)ns + 1));
  double *Q = malloc(sizeof(double) * ((size_t)z * z + 1)), *r = malloc(sizeof(double) * ((size_t)z + 1));
  int nz = 0, rc = PT_ESINGULAR;
  if (!jx || !gs || !Q || !r) goto done;
  for (int i = 0; i < ncand; i++) {
    kept[i] = 0;
    if (nz == z) continue;
    const int t = cand[i].meas >= 0 ? m->loop_coord[cand[i].meas] : -1;
    if (t >= 0) {  // a tree coordinate: its row of N
      for (int k = 0; k < z; k++) r[k] = d->loop_n[t + (size_t)k * ns];
    } else {
      ptd_coord_jac(m, d, cand + i, jx);
      pt_loop_grad_s(m, d, jx, gs);
      for (int k = 0; k < z; k++) {
        const double *n = d->loop_n + (size_t)k * ns;
        double s = 0;
        for (int j = 0; j < ns; j++) s += gs[j] * n[j];
        r[k] = s;
      }
    }
    double rn = 0;
    for (int k = 0; k < z; k++) rn += r[k] * r[k];
    for (int pass = 0; pass < 2; pass++)  // Gram-Schmidt against the rows kept, twice
      for (int l = 0; l < nz; l++) {
        double s = 0;
        for (int k = 0; k < z; k++) s += Q[(size_t)l * z + k] * r[k];
        for (int k = 0; k < z; k++) r[k] -= s * Q[(size_t)l * z + k];
      }
    double en = 0;
    for (int k = 0; k < z; k++) en += r[k] * r[k];
    if (!(rn > 0) || !(en > PT_TOL_SELECT_BLOCK * PT_TOL_SELECT_BLOCK * rn)) continue;
    en = 1 / sqrt(en);
    for (int k = 0; k < z; k++) Q[(size_t)nz * z + k] = r[k] * en;
    kept[i] = 1;
    states[nz++] = cand[i];
  }
  rc = nz == z ? PT_OK : PT_ESINGULAR;
done:
  free(jx), free(gs), free(Q), free(r);
  return rc;
}
