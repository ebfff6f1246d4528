// dynamics.c: accelerations and Lagrange multipliers.
//
// The augmented system of seed gcp eq. 21 (r-omega form),
//   [M J^T; J 0] [xdd; lambda] = [Q; gamma],
// is solved through the local-dynamics matrix of the W seed (eq. 62-69 with h = 1):
//   W lambda = J M^-1 Q - gamma,   W = J M^-1 J^T,   xdd = M^-1 (Q - J^T lambda).
// M is block diagonal (m I, I_global) per body, so W is a sparse matrix of small dense
// blocks following the constraint graph: rows couple only through a shared body. Its pattern
// and a fill-reducing (AMD) LDL^T symbolic factorisation are computed once at load
// (compile/sparsity.c); here only the numeric values change, so a step allocates nothing and
// the cost grows about linearly with the number of bodies on chains and trees.
// Euler-parameter accelerations follow from pdd = E^T wdot / 2 - |w|^2 p / 4 (seed gcp,
// after eq. 21, in global angular velocity).
// When W is singular (a singular configuration: rows of J lose rank) the accelerations are
// still unique; pt_accelerations_w then fails and its caller, pt_accelerations in the partition
// layer, takes them from a rank-revealing dense solve (pt_acc_dense, qr_partition.c, issue 7).
#include <ldl.h>

#include "engine.h"
#include "tolerances.h"
#include "ptu.h"

// W is called near singular (the integrator then prefers the QR partition, issue 7) when its
// smallest LDL pivot falls below PT_TOL_W_NEAR_SINGULAR of the largest; below PT_TOL_PIVOT_W
// it is singular and the accelerations come from the rank-revealing dense solve
// (qr_partition.c).

// y = M_k^-1 v for body k (6-vectors).
static void minv_body(const pt_model *m, const pt_data *d, int k, const double *v, double *y) {
  const double im = 1 / m->body_mass[k];
  for (int i = 0; i < 3; i++) y[i] = v[i] * im;
  ptu_mul_mat_vec3(y + 3, d->inertia_ginv + 9 * k, v + 3);
}

// M^-1 J^T by row blocks (mjt), then eq. (64)/(69): W = J M^-1 J^T accumulated body by body
// over the pairs of rows that share it, each pair once (W is symmetric).
static void w_assemble(const pt_model *m, pt_data *d) {
  // outputs
  double *w = d->w_val, *mjt = d->mjt;
  // inputs: row_jac, inertia_ginv
  for (int a = 0; a < m->ncon; a++) {
    const int r = m->con_row[a];
    for (int s = 0; s < 2; s++) {
      const int b = m->row_body[2 * r + s];
      if (b != PT_GROUND) minv_body(m, d, b, d->row_jac + 12 * r + 6 * s, mjt + 12 * a + 6 * s);
    }
  }
  ptu_zero(w, m->w_nnz);
  for (int k = 0; k < m->nbody; k++) {
    const int *rows = m->body_rows + 2 * m->body_row_adr[k];
    const int n = m->body_row_adr[k + 1] - m->body_row_adr[k];
    const int *nz = m->body_pair_nz + m->body_pair_adr[k];
    for (int ia = 0; ia < n; ia++) {
      const double *y = mjt + 12 * rows[2 * ia] + 6 * rows[2 * ia + 1];
      for (int ib = ia; ib < n; ib++) {
        const double *Jb = d->row_jac + 12 * m->con_row[rows[2 * ib]] + 6 * rows[2 * ib + 1];
        double s = 0;
        for (int c = 0; c < 6; c++) s += Jb[c] * y[c];
        w[nz[ia * n + ib]] += s;
        if (ib != ia) w[nz[ib * n + ia]] += s;
      }
    }
  }
}

// The row patterns of L (up-looking LDL^T of W in the AMD order of compile/sparsity.c): for
// each row k the columns i < k with L(k, i) != 0, in topological order, found by walking the
// elimination tree from the nonzeros of W's column k. They depend on the model only: computed
// once per data instead of in every factorization (as ldl_numeric does).
void pt_ldl_pattern(const pt_model *m, pt_data *d) {
  const int n = m->ncon;
  int *flag = d->ldl_flag, *stack = d->iwork, *out = d->ldl_pattern, nz = 0;
  for (int k = 0; k < n; k++) {
    d->ldl_rowptr[k] = nz;
    flag[k] = k;
    int top = n;
    const int kk = m->ldl_P[k];
    for (int p = m->w_colptr[kk]; p < m->w_colptr[kk + 1]; p++) {
      int i = m->ldl_Pinv[m->w_rowind[p]], len = 0;
      if (i > k) continue;
      for (; flag[i] != k; i = m->ldl_parent[i]) {
        stack[len++] = i;
        flag[i] = k;
      }
      while (len > 0) out[--top] = stack[--len];
    }
    for (int t = top; t < n; t++) d->ldl_rowpat[nz++] = out[t];
  }
  d->ldl_rowptr[n] = nz;
}

// W = L D L^T (permuted), up-looking, on the patterns of pt_ldl_pattern. Returns n, or the
// row of a zero pivot.
static int ldl_factor(const pt_model *m, pt_data *d) {
  const int n = m->ncon;
  const int *Lp = m->ldl_Lp, *P = m->ldl_P, *Pinv = m->ldl_Pinv;
  int *Li = d->ldl_Li, *lnz = d->ldl_flag;
  double *Lx = d->ldl_Lx, *D = d->ldl_D, *Y = d->ldl_Y;
  for (int k = 0; k < n; k++) {
    Y[k] = 0;
    lnz[k] = 0;
  }
  for (int k = 0; k < n; k++) {
    const int kk = P[k];
    for (int p = m->w_colptr[kk]; p < m->w_colptr[kk + 1]; p++) {
      const int i = Pinv[m->w_rowind[p]];
      if (i <= k) Y[i] += d->w_val[p];
    }
    double dk = Y[k];
    Y[k] = 0;
    for (int t = d->ldl_rowptr[k]; t < d->ldl_rowptr[k + 1]; t++) {
      const int i = d->ldl_rowpat[t];
      const double yi = Y[i];
      Y[i] = 0;
      const int p2 = Lp[i] + lnz[i];
      for (int p = Lp[i]; p < p2; p++) Y[Li[p]] -= Lx[p] * yi;
      const double lki = yi / D[i];
      dk -= lki * yi;
      Li[p2] = k;
      Lx[p2] = lki;
      lnz[i]++;
    }
    if (dk == 0) return k;
    D[k] = dk;
  }
  return n;
}

int pt_w_factor(const pt_model *m, pt_data *d) {
  if (m->ncon == 0) return PT_OK;
  w_assemble(m, d);
  int ok = ldl_factor(m, d);
  if (ok != m->ncon) {
    d->w_singular = 1;
    d->w_ratio = 0;
    d->w_ratio_step = 0;
    return PT_ESINGULAR;
  }
  double dmax = 0, dmin = INFINITY;
  for (int i = 0; i < m->ncon; i++) {
    double a = fabs(d->ldl_D[i]);
    if (a > dmax) dmax = a;
    if (a < dmin) dmin = a;
  }
  d->w_ratio = dmax > 0 ? dmin / dmax : 0;
  if (d->w_ratio < d->w_ratio_step) d->w_ratio_step = d->w_ratio;
  if (!(dmin > PT_TOL_W_NEAR_SINGULAR * dmax)) d->w_singular = 1;
  if (!(dmin > PT_TOL_PIVOT_W * dmax)) return PT_ESINGULAR;
  return PT_OK;
}

// b <- W^-1 b with the current factor.
void pt_w_solve(const pt_model *m, pt_data *d, double *b) {
  const int n = m->ncon;
  if (n == 0) return;
  ldl_perm(n, d->ldl_rhs, b, m->ldl_P);
  ldl_lsolve(n, d->ldl_rhs, m->ldl_Lp, d->ldl_Li, d->ldl_Lx);
  ldl_dsolve(n, d->ldl_rhs, d->ldl_D);
  ldl_ltsolve(n, d->ldl_rhs, m->ldl_Lp, d->ldl_Li, d->ldl_Lx);
  ldl_permt(n, b, d->ldl_rhs, m->ldl_P);
}

// out = M^-1 J^T lam (nv), lam over the active rows.
void pt_minv_jt(const pt_model *m, const pt_data *d, const double *lam, double *out) {
  ptu_zero(out, m->nv);
  double *f = d->wrk6;
  ptu_zero(f, m->nv);
  for (int a = 0; a < m->ncon; a++) {
    const int r = m->con_row[a];
    const int *body = m->row_body + 2 * r;
    for (int b = 0; b < 2; b++) {
      if (body[b] == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) f[6 * body[b] + c] += d->row_jac[12 * r + 6 * b + c] * lam[a];
    }
  }
  for (int k = 0; k < m->nbody; k++) minv_body(m, d, k, f + 6 * k, out + 6 * k);
}

// rdd, and pdd = E^T wdot / 2 - |w|^2 p / 4
void pt_qdd_from_xdd(const pt_model *m, pt_data *d) {
  double *qdd = d->qdd;
  const double *xdd = d->xdd;
  for (int k = 0; k < m->nbody; k++) {
    const double *p = d->q + 7 * k + 3, *w = d->x + 6 * k + 3, *wd = xdd + 6 * k + 3;
    double E[12];
    ptu_quat_E(E, p);
    double w2 = ptu_dot3(w, w);
    ptu_copy(qdd + 7 * k, xdd + 6 * k, 3);
    for (int c = 0; c < 4; c++)
      qdd[7 * k + 3 + c] = 0.5 * (E[c] * wd[0] + E[4 + c] * wd[1] + E[8 + c] * wd[2]) -
                           0.25 * w2 * p[c];
  }
}

// z = M^-1 Q into z (nv) and lam = J z - gamma (ncon): eq. (62)'s right-hand side.
static void w_rhs(const pt_model *m, const pt_data *d, double *z, double *lam) {
  for (int k = 0; k < m->nbody; k++) minv_body(m, d, k, d->qfrc + 6 * k, z + 6 * k);
  for (int a = 0; a < m->ncon; a++) {
    const int r = m->con_row[a];
    const int *body = m->row_body + 2 * r;
    double s = 0;
    for (int b = 0; b < 2; b++) {
      if (body[b] == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) s += d->row_jac[12 * r + 6 * b + c] * z[6 * body[b] + c];
    }
    lam[a] = s - d->row_gamma[r];
  }
}

int pt_accelerations_w(const pt_model *m, pt_data *d) {
  // outputs: xdd, lambda, qdd
  double *xdd = d->xdd, *lam = d->lambda;
  // inputs: rows (row_jac, row_gamma) and forces (qfrc) at the current state

  int rc = pt_w_factor(m, d);
  // at a singular configuration rows of J lose rank: the caller's dense solve takes over
  if (rc) return rc;
  // z = M^-1 Q, then Eq. (62): W lambda = J z - gamma
  w_rhs(m, d, xdd, lam);
  pt_w_solve(m, d, lam);
  // xdd = M^-1 Q - M^-1 J^T lambda (M^-1 J^T from the assembly of W)
  for (int a = 0; a < m->ncon; a++) {
    const int *body = m->row_body + 2 * m->con_row[a];
    for (int b = 0; b < 2; b++) {
      if (body[b] == PT_GROUND) continue;
      const double *y = d->mjt + 12 * a + 6 * b;
      for (int c = 0; c < 6; c++) xdd[6 * body[b] + c] -= y[c] * lam[a];
    }
  }
  pt_qdd_from_xdd(m, d);
  return PT_OK;
}

// The multipliers of the active rows through W at an evaluated state whose accelerations came
// from elsewhere (a closed loop in joint coordinates, loop_dyn.c): W lambda = J M^-1 Q - gamma
// (eq. 62). PT_ESINGULAR, lambda not set, when W is singular: the caller (pt_lambda, the
// partition layer) then takes the least-squares multipliers of the rank-revealing solve.
// Neither the accelerations, the forces nor what the partition policy reads of W (w_ratio,
// w_singular) change.
int pt_lambda_w(const pt_model *m, pt_data *d) {
  const double ratio = d->w_ratio, ratio_step = d->w_ratio_step;
  const int singular = d->w_singular;
  double *qfrc = d->lim_qfrc;  // (nv): scratch outside the stages
  // the Cartesian quantities the joint-coordinate evaluation leaves out: the inverse inertias
  // and the actuators on tree coordinates (which it puts in Q directly); its qfrc put back
  ptu_copy(qfrc, d->qfrc, m->nv);
  pt_kin_inertias(m, d, 1);
  pt_forces(m, d);
  const int rc = pt_w_factor(m, d);
  if (rc == PT_OK) {
    w_rhs(m, d, d->wrk6, d->lambda);  // (wrk6: nv scratch; xdd stays)
    pt_w_solve(m, d, d->lambda);
  }
  d->w_ratio = ratio;
  d->w_ratio_step = ratio_step;
  d->w_singular = singular;
  ptu_copy(d->qfrc, qfrc, m->nv);
  return rc;
}
