// qr_partition.c: the QR tangent-space partition of the hybrid seed (eq. 4-9), used near
// singular configurations where every LU partition of Phi_q degrades.
//
// The QR is taken of the dense Phi^F_q (joint and motion rows plus the Euler-parameter
// normalisation, in q = (r, p)), not of the velocity Jacobian in (rdot, omega): the tangent
// coordinates z = Q2^T (q - q_ref) must parametrise positions, and omega is not the rate of
// any coordinate. Q2 (eq. 5) spans the null space of Phi^F_q at q_ref. Away from q_ref the
// seed's updated null space Q2bar = Q2 - Q1bar Phi_q Q2 is the solution of B Q2bar = [0; I]
// with the bordered matrix B = [Phi^F_q(q); Q2^T]; the same dense LU of B gives the Newton
// steps for q with z fixed, the velocities (eq. 6: B qd = [nu; zd]) and the particular
// accelerations (eq. 7: B qdd_p = [gamma; 0]). zdd follows from eq. (8) with the mass matrix
// applied in (rdot, omega), and lambda from eq. (9) as B^T [lambda; 0] = T^T (Q - M xdd).
// B's condition grows like 1/distance to the singularity, W's like its square: that is why
// this path survives where the LDL of W and the LU of Phi_u give up.
//
// All LAPACK calls are the column-major *_work variants on arrays sized at load: nothing is
// allocated here.
#include <lapacke.h>

#include "engine.h"
#include "partition.h"
#include "tolerances.h"
#include "ptu.h"
#include "qr_partition.h"

_Static_assert(sizeof(lapack_int) == sizeof(int), "LAPACK with 32-bit integers expected");

static int jq_body(const pt_model *m, int a, int s) {
  if (a < m->ncon) return m->row_body[2 * m->con_row[a] + s];
  return s == 0 ? a - m->ncon : PT_GROUND;
}

static void eval_rows(const pt_model *m, pt_data *d) {
  pt_kin_bodies(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  pt_jq_rows(m, d);
}

static double dotn(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

static int lwork(const pt_model *m) { return 64 * m->nq + 64; }

// Dense Phi^F_q into the first ncq rows (transpose = 0) or columns (transpose = 1) of the
// column-major (nq x nq) array A.
static void dense_jq(const pt_model *m, const pt_data *d, double *A, int transpose) {
  const int nq = m->nq;
  ptu_zero(A, nq * nq);
  for (int a = 0; a < m->ncq; a++)
    for (int s = 0; s < 2; s++) {
      const int b = jq_body(m, a, s);
      if (b == PT_GROUND) continue;
      for (int c = 0; c < 7; c++) {
        const int j = 7 * b + c;
        A[transpose ? j + a * nq : a + j * nq] += d->jq[14 * a + 7 * s + c];
      }
    }
}

int pt_qr_build(const pt_model *m, pt_data *d) {
  const int nq = m->nq, ncq = m->ncq, nd = m->ndof;
  if (ncq > nq) return PT_ESINGULAR;  // redundant rows not removed yet (model compilation)
  if (pt_data_dense(m, d)) return PT_ENOMEM;  // a tree's data, first time (as partition.c)
  eval_rows(m, d);
  d->qr_b_valid = d->qr_b_chord = 0;  // qr_b is the work array of the QR below
  double *A = d->qr_b, *tau = d->qr_vec;
  dense_jq(m, d, A, 1);  // Phi^T (nq x ncq)
  if (ncq > 0) {
    if (LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, nq, ncq, A, nq, tau, d->qr_lwork, lwork(m)))
      return PT_ESINGULAR;
    // a rank-deficient Phi^T (R with a vanishing diagonal) leaves Q2 short of a direction
    double rmax = 0, rmin = INFINITY;
    for (int i = 0; i < ncq; i++) {
      rmax = fmax(rmax, fabs(A[i + i * nq]));
      rmin = fmin(rmin, fabs(A[i + i * nq]));
    }
    if (!(rmin > PT_TOL_RANK_QR * rmax)) return PT_ESINGULAR;
  }
  // Eq. (5): the full Q = [Q1 Q2]; columns ncq.. are the tangent basis
  if (LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, nq, nq, ncq, A, nq, tau, d->qr_lwork, lwork(m)))
    return PT_ESINGULAR;
  ptu_copy(d->qr_q2, A + (size_t)ncq * nq, nq * nd);
  ptu_copy(d->qr_ref, d->q, nq);
  d->part_method = PT_PART_QR;
  d->part_valid = 1;
  d->abm_count = 0;  // the integrated variables changed meaning
  return PT_OK;
}

// B = [Phi^F_q; Q2^T] at the current rows, LU-factored in place. With check, B is refused
// when its pivots span more than 1e15; that spread, min |U_ii| / max |U_ii|, is the rcond
// estimate kept (the one the LU partition uses for Phi_u; LAPACK's dgecon cost a third of a
// QR step).
static int factor_b(const pt_model *m, pt_data *d, int check) {
  const int nq = m->nq, ncq = m->ncq, nd = m->ndof;
  double *B = d->qr_b;
  dense_jq(m, d, B, 0);
  for (int k = 0; k < nd; k++)
    for (int j = 0; j < nq; j++) B[(ncq + k) + j * nq] = d->qr_q2[j + k * nq];
  d->qr_b_valid = d->qr_b_chord = 0;
  if (LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, nq, nq, B, nq, d->qr_ipiv)) return PT_ESINGULAR;
  if (check) {
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < nq; i++) {
      lo = fmin(lo, fabs(B[i + i * nq]));
      hi = fmax(hi, fabs(B[i + i * nq]));
    }
    d->qr_rcond = hi > 0 ? lo / hi : 0;
    if (!(d->qr_rcond > PT_TOL_RCOND_QR)) return PT_ESINGULAR;
  }
  d->qr_b_valid = d->qr_b_chord = 1;
  return PT_OK;
}

static int solve_b(const pt_model *m, pt_data *d, char trans, double *x, int nrhs) {
  const int nq = m->nq;
  if (LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, trans, nq, nrhs, d->qr_b, nq, d->qr_ipiv, x, nq))
    return PT_ESINGULAR;
  return PT_OK;
}

// z - Q2^T (q - q_ref) (nd)
static void tangent_residual(const pt_model *m, const pt_data *d, const double *z, double *t) {
  const int nq = m->nq;
  for (int k = 0; k < m->ndof; k++) {
    const double *q2 = d->qr_q2 + (size_t)k * nq;
    double s = 0;
    for (int j = 0; j < nq; j++) s += q2[j] * (d->q[j] - d->qr_ref[j]);
    t[k] = z[k] - s;
  }
}

// A chord iteration, as on the LU side (partition.c): B is the factor of the last velocity
// solve (one stage back), refactored here only when the residual does not shrink by 100x.
int pt_qr_positions(const pt_model *m, pt_data *d, const double *z, int maxit) {
  const double tol = pt_newton_tol(m, d);
  const int ncq = m->ncq;
  double *v = d->qr_vec;
  double prev = INFINITY;
  for (int it = 0;; it++) {
    eval_rows(m, d);
    double err = 0;
    for (int i = 0; i < ncq; i++) err = fmax(err, fabs(d->phiF[i]));
    tangent_residual(m, d, z, v + ncq);
    for (int k = 0; k < m->ndof; k++) err = fmax(err, fabs(v[ncq + k]));
    int done;
    if (pt_newton_done(d, err, tol, it, maxit, &done)) {
      if (done >= 0) d->qr_b_valid = 0;
      return done;
    }
    if (!d->qr_b_chord || err > 0.01 * prev) {
      int rc = factor_b(m, d, 0);
      if (rc) return rc;
    }
    prev = err;
    for (int i = 0; i < ncq; i++) v[i] = -d->phiF[i];
    int rc = solve_b(m, d, 'N', v, 1);
    if (rc) return rc;
    d->qr_b_valid = 0;  // q moves: the factor is one for chord steps only
    for (int j = 0; j < m->nq; j++) d->q[j] += v[j];
    // back onto |p| = 1: A(p) is evaluated with the unit-sphere formula, whose change along
    // p the Jacobian (Phi_pi 2 E(p), exact for rotations only) does not see; off the sphere
    // Newton would converge only linearly
    for (int k = 0; k < m->nbody; k++) {
      double *p = d->q + 7 * k + 3;
      const double s = 1 / sqrt(p[0] * p[0] + ptu_dot3(p + 1, p + 1));
      for (int c = 0; c < 4; c++) p[c] *= s;
    }
  }
}

int pt_qr_velocities(const pt_model *m, pt_data *d, const double *zd) {
  int rc = factor_b(m, d, 1);
  if (rc) return rc;
  double *v = d->qr_vec;
  for (int a = 0; a < m->ncq; a++) v[a] = a < m->ncon ? d->row_nu[m->con_row[a]] : 0;
  for (int k = 0; k < m->ndof; k++) v[m->ncq + k] = zd[k];
  rc = solve_b(m, d, 'N', v, 1);
  if (rc) return rc;
  ptu_copy(d->qd, v, m->nq);
  return PT_OK;
}

// x-space image of a q-space vector: (r, p) -> (r, omega = 2 E(p) p)
static void q_to_x(const pt_model *m, const pt_data *d, const double *vq, double *vx) {
  for (int k = 0; k < m->nbody; k++) {
    double E[12];
    ptu_quat_E(E, d->q + 7 * k + 3);
    ptu_copy(vx + 6 * k, vq + 7 * k, 3);
    for (int i = 0; i < 3; i++) {
      double s = 0;
      for (int c = 0; c < 4; c++) s += E[4 * i + c] * vq[7 * k + 3 + c];
      vx[6 * k + 3 + i] = 2 * s;
    }
  }
}

// u^T M v in (rdot, omega) with the global inertia
static double m_dot(const pt_model *m, const pt_data *d, const double *u, const double *v) {
  double s = 0;
  for (int k = 0; k < m->nbody; k++) {
    double Iv[3];
    ptu_mul_mat_vec3(Iv, d->inertia_g + 9 * k, v + 6 * k + 3);
    s += m->body_mass[k] * ptu_dot3(u + 6 * k, v + 6 * k) + ptu_dot3(u + 6 * k + 3, Iv);
  }
  return s;
}

// out = Q - M x (nv)
static void force_residual(const pt_model *m, const pt_data *d, const double *x, double *out) {
  for (int k = 0; k < m->nbody; k++) {
    double Iw[3];
    ptu_mul_mat_vec3(Iw, d->inertia_g + 9 * k, x + 6 * k + 3);
    for (int c = 0; c < 3; c++) {
      out[6 * k + c] = d->qfrc[6 * k + c] - m->body_mass[k] * x[6 * k + c];
      out[6 * k + 3 + c] = d->qfrc[6 * k + 3 + c] - Iw[c];
    }
  }
}

// Eq. (8) on a basis N (nv x k, column-major, leading dimension nv) of the velocity null
// space: xdd = xdd_p + N zdd with (N^T M N) zdd = N^T (Q - M xdd_p). S: (k x k) work.
static int null_space_acc(const pt_model *m, pt_data *d, const double *N, int k, double *S,
                          double *b) {
  const int nv = m->nv;
  double *s = d->wrk6;
  force_residual(m, d, d->xdd, s);
  for (int i = 0; i < k; i++) {
    b[i] = dotn(N + (size_t)i * nv, s, nv);
    for (int j = 0; j <= i; j++)
      S[i + j * k] = S[j + i * k] = m_dot(m, d, N + (size_t)i * nv, N + (size_t)j * nv);
  }
  if (k > 0 && LAPACKE_dposv_work(LAPACK_COL_MAJOR, 'L', k, 1, S, k, b, k)) return PT_ESINGULAR;
  for (int i = 0; i < k; i++)
    for (int j = 0; j < nv; j++) d->xdd[j] += N[j + (size_t)i * nv] * b[i];
  return PT_OK;
}

int pt_qr_accelerations(const pt_model *m, pt_data *d) {
  const int nq = m->nq, ncq = m->ncq, nd = m->ndof, nv = m->nv;
  if (!d->qr_b_valid) {
    pt_jq_rows(m, d);
    int rc = factor_b(m, d, 0);
    if (rc) return rc;
  }
  // Eq. (7): particular accelerations, B qdd_p = [gamma; -2 pd.pd; 0]
  double *v = d->qr_vec;
  for (int a = 0; a < m->ncon; a++) v[a] = d->row_gamma[m->con_row[a]];
  for (int k = 0; k < m->nbody; k++) {
    const double *pd = d->qd + 7 * k + 3;
    v[m->ncon + k] = -2 * (pd[0] * pd[0] + ptu_dot3(pd + 1, pd + 1));
  }
  for (int k = 0; k < nd; k++) v[ncq + k] = 0;
  int rc = solve_b(m, d, 'N', v, 1);
  if (rc) return rc;
  q_to_x(m, d, v, d->xdd);  // omega-dot = 2 E pdd exactly, since E(pd) pd = 0
  // the updated null space Q2bar = B^-1 [0; I], mapped to x
  ptu_zero(d->qr_n, nq * nd);
  for (int k = 0; k < nd; k++) d->qr_n[(ncq + k) + (size_t)k * nq] = 1;
  if (nd > 0) {
    rc = solve_b(m, d, 'N', d->qr_n, nd);
    if (rc) return rc;
  }
  for (int k = 0; k < nd; k++) q_to_x(m, d, d->qr_n + (size_t)k * nq, d->qr_nx + (size_t)k * nv);
  // Eq. (8)
  rc = null_space_acc(m, d, d->qr_nx, nd, d->fb_b, v);
  if (rc) return rc;
  pt_qdd_from_xdd(m, d);
  // Eq. (9): Phi^F_q^T lambda^F = T^T (Q - M xdd); the normalisation and tangent rows get 0
  double *s = d->wrk6;
  force_residual(m, d, d->xdd, s);
  for (int k = 0; k < m->nbody; k++) {
    double E[12];
    ptu_quat_E(E, d->q + 7 * k + 3);
    ptu_copy(v + 7 * k, s + 6 * k, 3);
    for (int c = 0; c < 4; c++)
      v[7 * k + 3 + c] =
          2 * (E[c] * s[6 * k + 3] + E[4 + c] * s[6 * k + 4] + E[8 + c] * s[6 * k + 5]);
  }
  rc = solve_b(m, d, 'T', v, 1);
  if (rc) return rc;
  ptu_copy(d->lambda, v, m->ncon);
  return PT_OK;
}

void pt_qr_coords(const pt_model *m, const pt_data *d, double *z, double *zd, double *zdd) {
  const int nq = m->nq;
  for (int k = 0; k < m->ndof; k++) {
    const double *q2 = d->qr_q2 + (size_t)k * nq;
    double a = 0, b = 0, c = 0;
    for (int j = 0; j < nq; j++) {
      a += q2[j] * (d->q[j] - d->qr_ref[j]);
      b += q2[j] * d->qd[j];
      if (zdd) c += q2[j] * d->qdd[j];
    }
    if (z) z[k] = a;
    if (zd) zd[k] = b;
    if (zdd) zdd[k] = c;
  }
}

double pt_qr_alpha(const pt_model *m, const pt_data *d) {
  const int nq = m->nq;
  double qq = dotn(d->qd, d->qd, nq), zz = 0;
  if (m->ndof == 0 || !(qq > PT_TOL_AT_REST_QD2)) return 1;
  for (int k = 0; k < m->ndof; k++) {
    double b = dotn(d->qr_q2 + (size_t)k * nq, d->qd, nq);
    zz += b * b;
  }
  return zz / qq;
}

// Rank-revealing solve of [M J^T; J 0] [xdd; lambda] = [Q; gamma] for a singular W: J^T P =
// Q R (dgeqp3), rank r from R's diagonal; Q1 (r columns) spans the rows of J, Q2 its null
// space. xdd_p = Q1 y with y the least-squares solution of R^T y = P^T gamma (at a branch
// point gamma need not lie in the range of J), then eq. (8) on Q2, and lambda from
// R11 w = Q1^T (Q - M xdd), lambda = P w (zero on the dependent rows).
int pt_acc_dense(const pt_model *m, pt_data *d) {
  const int nv = m->nv, nc = m->ncon;
  double *A = d->fb_a, *tau = d->qr_vec;
  int *jpvt = d->fb_jpvt;
  if (nc > nv) return PT_ESINGULAR;  // redundant rows not removed yet (model compilation)
  if (!d->dense) return PT_ESINGULAR;  // a tree's data: its W is never singular
  ptu_zero(A, nv * nv);
  for (int a = 0; a < nc; a++) {
    const int r = m->con_row[a];
    for (int s = 0; s < 2; s++) {
      const int b = m->row_body[2 * r + s];
      if (b == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) A[6 * b + c + (size_t)a * nv] += d->row_jac[12 * r + 6 * s + c];
    }
    jpvt[a] = 0;
  }
  int rank = 0;
  double *R = d->fb_b, *Rt = d->qr_b;  // R11 (r x r); R^T (nc x r), then its QR
  d->qr_b_valid = 0;
  if (nc > 0) {
    if (LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, nv, nc, A, nv, jpvt, tau, d->qr_lwork, lwork(m)))
      return PT_ESINGULAR;
    const double r0 = fabs(A[0]);
    while (rank < nc && rank < nv && fabs(A[rank + (size_t)rank * nv]) > PT_TOL_PIVOT * r0)
      rank++;
    for (int j = 0; j < rank; j++)
      for (int i = 0; i < rank; i++) R[i + j * rank] = i <= j ? A[i + (size_t)j * nv] : 0;
    for (int i = 0; i < rank; i++)
      for (int j = 0; j < nc; j++) Rt[j + (size_t)i * nc] = j >= i ? A[i + (size_t)j * nv] : 0;
  }
  if (LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, nv, nv, nc < nv ? nc : nv, A, nv, tau, d->qr_lwork,
                          lwork(m)))
    return PT_ESINGULAR;
  // particular solution: min |R^T y - P^T gamma| by the QR of R^T (nc x r), xdd_p = Q1 y
  double *y = d->wrk6;
  for (int j = 0; j < nc; j++) y[j] = d->row_gamma[m->con_row[jpvt[j] - 1]];
  if (rank > 0) {
    if (LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, nc, rank, Rt, nc, tau, d->qr_lwork, lwork(m)) ||
        LAPACKE_dormqr_work(LAPACK_COL_MAJOR, 'L', 'T', nc, 1, rank, Rt, nc, tau, y, nc,
                            d->qr_lwork, lwork(m)))
      return PT_ESINGULAR;
    for (int i = rank - 1; i >= 0; i--) {
      double t = y[i];
      for (int j = i + 1; j < rank; j++) t -= Rt[i + (size_t)j * nc] * y[j];
      y[i] = t / Rt[i + (size_t)i * nc];
    }
  }
  ptu_zero(d->xdd, nv);
  for (int i = 0; i < rank; i++)
    for (int j = 0; j < nv; j++) d->xdd[j] += A[j + (size_t)i * nv] * y[i];
  y = d->qr_vec;
  const int k = nv - rank;
  double *S = R + rank * rank, *b = d->qr_vec + rank;
  int rc = null_space_acc(m, d, A + (size_t)rank * nv, k, S, b);
  if (rc) return rc;
  pt_qdd_from_xdd(m, d);
  // least-squares multipliers on the independent rows
  double *s = d->wrk6;
  force_residual(m, d, d->xdd, s);
  for (int i = 0; i < rank; i++) y[i] = dotn(A + (size_t)i * nv, s, nv);
  for (int i = rank - 1; i >= 0; i--) {
    double t = y[i];
    for (int j = i + 1; j < rank; j++) t -= R[i + j * rank] * y[j];
    y[i] = t / R[i + i * rank];
  }
  ptu_zero(d->lambda, nc);
  for (int i = 0; i < rank; i++) d->lambda[jpvt[i] - 1] = y[i];
  return PT_OK;
}

// The accelerations of the LU partition and of a tree's full evaluation: through W's LDL^T
// (dynamics.c), or, at a singular configuration where rows of J lose rank but the
// accelerations stay unique, by the rank-revealing dense solve above.
int pt_accelerations(const pt_model *m, pt_data *d) {
  const int rc = pt_accelerations_w(m, d);
  return rc ? pt_acc_dense(m, d) : PT_OK;
}

// ---- the QR partition behind the interface of partition.h -----------------------------------

// q with the tangent coordinates z fixed, then eq. (6) for qd.
static int qr_recover(const pt_model *m, pt_data *d, const double *y, int maxit) {
  const int it = pt_qr_positions(m, d, y, maxit);
  if (it < 0) return it;
  const int rc = pt_qr_velocities(m, d, y + m->ndof);
  return rc ? rc : it;
}

const pt_partition_class pt_partition_qr = {
    .name = "QR",
    .build = pt_qr_build,
    .recover = qr_recover,
    .accelerations = pt_qr_accelerations,
    .coords = pt_qr_coords,
    .alpha = pt_qr_alpha,
};
