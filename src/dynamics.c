// dynamics.c: accelerations and Lagrange multipliers.
//
// The augmented system of seed gcp eq. 21 (r-omega form),
//   [M J^T; J 0] [xdd; lambda] = [Q; gamma],
// is solved through the local-dynamics matrix of the W seed (eq. 62-69 with h = 1):
//   W lambda = J M^-1 Q - gamma,   W = J M^-1 J^T,   xdd = M^-1 (Q - J^T lambda).
// M is block diagonal (m I, I_global) per body, so W is a sparse matrix of small dense
// blocks following the constraint graph: rows couple only through a shared body. Its pattern
// and a fill-reducing (AMD) LDL^T symbolic factorisation are computed once at load (compile.c);
// here only the numeric values change, so a step allocates nothing and the cost grows about
// linearly with the number of bodies on chains and trees.
// Euler-parameter accelerations follow from pdd = E^T wdot / 2 - |w|^2 p / 4 (seed gcp,
// after eq. 21, in global angular velocity).
// When W is singular (a singular configuration: rows of J lose rank) the accelerations are
// still unique; they then come from a rank-revealing dense solve (pt_acc_dense, issue 7).
#include <ldl.h>

#include "engine.h"
#include "ptu.h"
#include "qr_partition.h"

// W is called near singular (the integrator then prefers the QR partition, issue 7) when its
// smallest LDL pivot falls below this fraction of the largest; below 1e-14 it is singular and
// the accelerations come from the rank-revealing dense solve (qr_partition.c).
#define W_NEAR_SINGULAR 1e-9

// y = M_k^-1 v for body k (6-vectors).
static void minv_body(const pt_model *m, const pt_data *d, int k, const double *v, double *y) {
  const double im = 1 / m->body_mass[k];
  for (int i = 0; i < 3; i++) y[i] = v[i] * im;
  ptu_mul_mat_vec3(y + 3, d->inertia_ginv + 9 * k, v + 3);
}

// Eq. (64)/(69): W = J M^-1 J^T accumulated body by body over the pairs of rows that share it.
static void w_assemble(const pt_model *m, pt_data *d) {
  ptu_zero(d->w_val, m->w_nnz);
  for (int k = 0; k < m->nbody; k++) {
    const int *rows = m->body_rows + 2 * m->body_row_adr[k];
    const int n = m->body_row_adr[k + 1] - m->body_row_adr[k];
    const int *nz = m->body_pair_nz + m->body_pair_adr[k];
    for (int ia = 0; ia < n; ia++) {
      const double *Ja = d->row_jac + 12 * m->con_row[rows[2 * ia]] + 6 * rows[2 * ia + 1];
      double y[6];
      minv_body(m, d, k, Ja, y);
      for (int ib = 0; ib < n; ib++) {
        const double *Jb = d->row_jac + 12 * m->con_row[rows[2 * ib]] + 6 * rows[2 * ib + 1];
        double s = 0;
        for (int c = 0; c < 6; c++) s += Jb[c] * y[c];
        d->w_val[nz[ia * n + ib]] += s;
      }
    }
  }
}

int pt_w_factor(const pt_model *m, pt_data *d) {
  if (m->ncon == 0) return PT_OK;
  w_assemble(m, d);
  int ok = ldl_numeric(m->ncon, m->w_colptr, m->w_rowind, d->w_val, m->ldl_Lp, m->ldl_parent,
                       m->ldl_lnz, d->ldl_Li, d->ldl_Lx, d->ldl_D, d->ldl_Y, d->ldl_pattern,
                       d->ldl_flag, m->ldl_P, m->ldl_Pinv);
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
  if (!(dmin > W_NEAR_SINGULAR * dmax)) d->w_singular = 1;
  if (!(dmin > 1e-14 * dmax)) return PT_ESINGULAR;
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

int pt_accelerations(const pt_model *m, pt_data *d) {
  // outputs: xdd, lambda, qdd
  double *xdd = d->xdd, *lam = d->lambda;
  // inputs: rows (row_jac, row_gamma) and forces (qfrc) at the current state

  int rc = pt_w_factor(m, d);
  // at a singular configuration rows of J lose rank but the accelerations stay unique
  if (rc) return pt_acc_dense(m, d);
  // z = M^-1 Q, then Eq. (62): W lambda = J z - gamma
  for (int k = 0; k < m->nbody; k++) minv_body(m, d, k, d->qfrc + 6 * k, xdd + 6 * k);
  for (int a = 0; a < m->ncon; a++) {
    const int r = m->con_row[a];
    const int *body = m->row_body + 2 * r;
    double s = 0;
    for (int b = 0; b < 2; b++) {
      if (body[b] == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) s += d->row_jac[12 * r + 6 * b + c] * xdd[6 * body[b] + c];
    }
    lam[a] = s - d->row_gamma[r];
  }
  pt_w_solve(m, d, lam);
  // xdd = M^-1 Q - M^-1 J^T lambda
  for (int a = 0; a < m->ncon; a++) {
    const int r = m->con_row[a];
    const int *body = m->row_body + 2 * r;
    for (int b = 0; b < 2; b++) {
      if (body[b] == PT_GROUND) continue;
      double y[6];
      minv_body(m, d, body[b], d->row_jac + 12 * r + 6 * b, y);
      for (int c = 0; c < 6; c++) xdd[6 * body[b] + c] -= y[c] * lam[a];
    }
  }
  pt_qdd_from_xdd(m, d);
  return PT_OK;
}
