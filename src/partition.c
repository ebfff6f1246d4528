// partition.c: generalized coordinate partitioning (seed gcp eq. 4-16).
//
// Phi^F_q, the Jacobian of the joint and motion rows plus the Euler-parameter normalisation
// in q = (r, p), is factored by Gaussian elimination with full pivoting (eq. 4-6); the pivot
// columns are the dependent coordinates u, the rest the independent v (eq. 7). The partition
// is cached: Phi_u keeps its sparsity pattern and KLU pivot order, so each Newton iteration for
// u (eq. 10, 14) and each velocity recovery (eq. 11, 15) is a klu_refactor + klu_solve that
// allocates nothing. It is rebuilt only when it degrades (Newton struggles, or the condition
// estimate of Phi_u falls), and every rebuild is counted.
#include <float.h>

#include "engine.h"
#include "ptu.h"

// Body of slot s (0, 1) of row a of Phi^F (active rows, then normalisation rows).
static int jq_body(const pt_model *m, int a, int s) {
  if (a < m->ncon) return m->row_body[2 * m->con_row[a] + s];
  return s == 0 ? a - m->ncon : PT_GROUND;
}

// Phi^F and its Jacobian in q by body blocks: jq row = [r 3, p 4] x 2 slots, with the p part
// Phi_pi 2 E(p) (because omega = 2 E pdot) and the normalisation row 2 p^T.
void pt_jq_rows(const pt_model *m, pt_data *d) {
  for (int a = 0; a < m->ncon; a++) {
    const int r = m->con_row[a];
    double *out = d->jq + 14 * a;
    d->phiF[a] = d->row_phi[r];
    for (int s = 0; s < 2; s++) {
      const int b = m->row_body[2 * r + s];
      const double *J = d->row_jac + 12 * r + 6 * s;
      double *o = out + 7 * s;
      if (b == PT_GROUND) {
        ptu_zero(o, 7);
        continue;
      }
      double E[12];
      ptu_quat_E(E, d->q + 7 * b + 3);
      ptu_copy(o, J, 3);
      for (int c = 0; c < 4; c++) o[3 + c] = 2 * (J[3] * E[c] + J[4] * E[4 + c] + J[5] * E[8 + c]);
    }
  }
  for (int k = 0; k < m->nbody; k++) {
    const double *p = d->q + 7 * k + 3;
    double *o = d->jq + 14 * (m->ncon + k);
    ptu_zero(o, 14);
    for (int c = 0; c < 4; c++) o[3 + c] = 2 * p[c];
    d->phiF[m->ncon + k] = ptu_dot3(p + 1, p + 1) + p[0] * p[0] - 1;
  }
}

// Constraint values and Jacobians at the current q. Only rotations are refreshed: velocities
// and global inertias are not needed here (gamma is recomputed by pt_eval before use).
static void eval_rows(const pt_model *m, pt_data *d) {
  pt_kin_positions(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  pt_jq_rows(m, d);
}

// Eq. (4)-(6): complete pivoting on the dense Phi^F_q picks the dependent columns.
static int choose_dependent(const pt_model *m, pt_data *d) {
  const int nr = m->ncq, nc = m->nq;
  double *G = d->qr_work;  // (nr x nc) row-major
  if (nr > nc) return PT_ESINGULAR;  // more rows than coordinates (redundant rows still in)
  int *colperm = d->iwork;
  ptu_zero(G, nr * nc);
  for (int a = 0; a < nr; a++)
    for (int s = 0; s < 2; s++) {
      const int b = jq_body(m, a, s);
      if (b == PT_GROUND) continue;
      for (int c = 0; c < 7; c++) G[a * nc + 7 * b + c] += d->jq[14 * a + 7 * s + c];
    }
  for (int j = 0; j < nc; j++) colperm[j] = j;
  double gmax = 0;
  for (int i = 0; i < nr * nc; i++) gmax = fmax(gmax, fabs(G[i]));
  for (int k = 0; k < nr; k++) {
    int pi = k, pj = k;
    double best = -1;
    for (int i = k; i < nr; i++)
      for (int j = k; j < nc; j++) {
        double v = fabs(G[i * nc + colperm[j]]);
        if (v > best) {
          best = v;
          pi = i;
          pj = j;
        }
      }
    if (!(best > 1e-10 * gmax)) return PT_ESINGULAR;
    if (pi != k)
      for (int j = 0; j < nc; j++) {
        double t = G[k * nc + j];
        G[k * nc + j] = G[pi * nc + j];
        G[pi * nc + j] = t;
      }
    int t = colperm[k];
    colperm[k] = colperm[pj];
    colperm[pj] = t;
    const int ck = colperm[k];
    const double piv = G[k * nc + ck];
    for (int i = k + 1; i < nr; i++) {
      const double f = G[i * nc + ck] / piv;
      if (f == 0) continue;
      for (int j = k; j < nc; j++) G[i * nc + colperm[j]] -= f * G[k * nc + colperm[j]];
    }
  }
  for (int j = 0; j < nc; j++) d->q_dep[j] = 0;
  for (int k = 0; k < nr; k++) d->q_dep[colperm[k]] = 1;
  int nd = 0, ni = 0;
  for (int j = 0; j < nc; j++) {
    if (d->q_dep[j])
      d->dep[nd++] = j;
    else
      d->indep[ni++] = j;
  }
  return PT_OK;
}

// CSC pattern of Phi_u: column i = dependent coordinate dep[i]; rows = active rows touching
// its body (sorted), then the body's normalisation row for Euler parameters.
static void build_lu_pattern(const pt_model *m, pt_data *d) {
  int nz = 0;
  for (int i = 0; i < m->ncq; i++) {
    const int qi = d->dep[i], k = qi / 7, l = qi % 7;
    d->lu_colptr[i] = nz;
    const int *rows = m->body_rows + 2 * m->body_row_adr[k];
    const int n = m->body_row_adr[k + 1] - m->body_row_adr[k];
    for (int t = 0; t < n; t++) {
      d->lu_rowind[nz] = rows[2 * t];
      d->lu_src[nz] = 14 * rows[2 * t] + 7 * rows[2 * t + 1] + l;
      nz++;
    }
    if (l >= 3) {
      d->lu_rowind[nz] = m->ncon + k;
      d->lu_src[nz] = 14 * (m->ncon + k) + l;
      nz++;
    }
  }
  d->lu_colptr[m->ncq] = nz;
  d->lu_nnz = nz;
}

static void lu_values(pt_data *d) {
  for (int i = 0; i < d->lu_nnz; i++) d->lu_val[i] = d->jq[d->lu_src[i]];
}

void pt_partition_free(pt_data *d) {
  if (d->klu_num) klu_free_numeric(&d->klu_num, &d->klu);
  if (d->klu_sym) klu_free_symbolic(&d->klu_sym, &d->klu);
  d->klu_num = NULL;
  d->klu_sym = NULL;
  d->lu_current = 0;
  d->part_valid = 0;
}

// Rebuild at the current (consistent) configuration. Allocates (KLU analysis); counted.
int pt_partition_build(const pt_model *m, pt_data *d) {
  pt_partition_free(d);
  if (m->ncq == 0) {
    d->part_valid = 1;
    return PT_OK;
  }
  eval_rows(m, d);
  int rc = choose_dependent(m, d);
  if (rc) return rc;
  build_lu_pattern(m, d);
  lu_values(d);
  d->klu_sym = klu_analyze(m->ncq, d->lu_colptr, d->lu_rowind, &d->klu);
  if (!d->klu_sym) return PT_ENOMEM;
  d->klu_num = klu_factor(d->lu_colptr, d->lu_rowind, d->lu_val, d->klu_sym, &d->klu);
  d->lu_current = d->klu_num != NULL;
  if (!d->klu_num) {
    pt_partition_free(d);
    return PT_ESINGULAR;
  }
  klu_rcond(d->klu_sym, d->klu_num, &d->klu);
  d->rcond_built = d->rcond = d->klu.rcond;
  const double *ud = d->klu_num->Udiag;
  for (int i = 0; i < m->ncq; i++) d->piv_built[i] = fabs(ud[i]);
  d->piv_ratio = 1;
  d->part_valid = 1;
  d->part_method = PT_PART_LU;
  d->abm_count = 0;
  return PT_OK;
}

static int refactor(const pt_model *m, pt_data *d) {
  if (!d->klu_sym || !d->klu_num) return PT_ESINGULAR;  // no LU partition (QR mode, failed build)
  lu_values(d);
  if (!klu_refactor(d->lu_colptr, d->lu_rowind, d->lu_val, d->klu_sym, d->klu_num, &d->klu))
    return PT_ESINGULAR;
  klu_rcond(d->klu_sym, d->klu_num, &d->klu);
  d->rcond = d->klu.rcond;
  d->lu_current = 1;
  if (!(d->rcond > 1e-14)) return PT_ESINGULAR;
  // A pivot that has shrunk much below its size at build means u = g(v) is getting steep
  // (|H| of eq. 15 growing): a better partition exists.
  const double *ud = d->klu_num->Udiag;
  double ratio = 1;
  for (int i = 0; i < m->ncq; i++) ratio = fmin(ratio, fabs(ud[i]) / d->piv_built[i]);
  d->piv_ratio = ratio;
  return PT_OK;
}

static double newton_tol(const pt_model *m, const pt_data *d) {
  double scale = 1;
  for (int k = 0; k < m->nbody; k++)
    for (int c = 0; c < 3; c++) scale = fmax(scale, fabs(d->q[7 * k + c]));
  return 1e-12 * scale;
}

// Eq. (10)/(14): Newton for u with v fixed, Phi_u du = -Phi. Returns iterations or < 0.
// A chord iteration: Phi_u is the factor of the last velocity solve (one stage back, a
// configuration O(h) away), refactored here only when the residual does not shrink by 100x per
// iteration. One refactor per stage (in pt_solve_velocities) instead of one per iteration.
int pt_solve_positions(const pt_model *m, pt_data *d, int maxit) {
  const double tol = newton_tol(m, d);
  double prev = INFINITY;
  for (int it = 0;; it++) {
    eval_rows(m, d);
    double err = 0;
    for (int i = 0; i < m->ncq; i++) err = fmax(err, fabs(d->phiF[i]));
    if (!isfinite(err)) return PT_EDIVERGED;
    if (err <= tol) {
      d->newton_last = it;
      d->counters.newton_iters += it;
      return it;
    }
    if (it >= maxit) return PT_EDIVERGED;
    if (!d->lu_current || err > 0.01 * prev) {
      int rc = refactor(m, d);
      if (rc) return rc;
    }
    d->lu_current = 1;
    prev = err;
    for (int i = 0; i < m->ncq; i++) d->rhs[i] = -d->phiF[i];
    if (!klu_solve(d->klu_sym, d->klu_num, m->ncq, 1, d->rhs, &d->klu)) return PT_ESINGULAR;
    for (int i = 0; i < m->ncq; i++) d->q[d->dep[i]] += d->rhs[i];
  }
}

// Eq. (11)/(15): Phi_u udot = nu - Phi_v vdot at the current positions (rows evaluated there).
int pt_solve_velocities(const pt_model *m, pt_data *d) {
  if (m->ncq == 0) return PT_OK;
  int rc = refactor(m, d);
  if (rc) return rc;
  for (int i = 0; i < m->ncq; i++) d->qd[d->dep[i]] = 0;
  for (int a = 0; a < m->ncq; a++) {
    double s = 0;
    for (int sl = 0; sl < 2; sl++) {
      const int b = jq_body(m, a, sl);
      if (b == PT_GROUND) continue;
      for (int c = 0; c < 7; c++) s += d->jq[14 * a + 7 * sl + c] * d->qd[7 * b + c];
    }
    const double nu = a < m->ncon ? d->row_nu[m->con_row[a]] : 0;
    d->rhs[a] = nu - s;
  }
  if (!klu_solve(d->klu_sym, d->klu_num, m->ncq, 1, d->rhs, &d->klu)) return PT_ESINGULAR;
  for (int i = 0; i < m->ncq; i++) d->qd[d->dep[i]] = d->rhs[i];
  d->counters.last_rcond = d->rcond;
  return PT_OK;
}
