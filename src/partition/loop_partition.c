// loop_partition.c: the LU and QR partitions of partition.h in the joint coordinates of a
// closed loop (loop.h).
//
// LU (Wehage and Haug, seed gcp eq. 4-16, in the coordinates s): the dependent coordinates u
// are chosen by a sparse LU with partial pivoting of G_s^T (each cut row, in turn, takes the
// coordinate with the largest remaining entry: the rows of G_s^T are the coordinates), not by
// dense full pivoting on the whole matrix; G_u is then factored sparsely on its own (splu.c)
// and refactored on the same pattern and pivots. Newton for u with v fixed (eq. 10, 14) runs
// on the cut rows' values alone, with G_u's factor of the last velocity solve as a chord;
// velocities from G_u ud = nu - G_v vd (eq. 11, 15) after one evaluation of the cut rows'
// Jacobian; accelerations from loop_dyn.c.
// QR (Yoo, Lee and Kim, seed hybrid eq. 4-9): z = Q2^T (s - s_ref), Q2 an orthonormal basis of
// G_s's null space at s_ref, taken from the factor at hand (the LU partition's N = [-G_u^-1 G_v;
// I], or the updated null space B^-1 [0; I] of the QR partition itself) and orthonormalised:
// no dense QR of the whole Jacobian. B = [G_s; Q2^T] is sparse but for its ndof last rows and is
// factored sparsely, preferring pivots in the sparse rows. Newton for s with z fixed, B sd =
// [nu; zd] (eq. 6), B sdd_p = [gamma; 0] (eq. 7) and eq. (8) in the velocity coordinates with
// the joint-space inertia: (N^T M N) zdd = N^T (Q - M wdd_p), N = B^-1 [0; I].
#include <string.h>

#include "loop.h"
#include "partition.h"
#include "ptu.h"
#include "tolerances.h"

#define FRESH_FACTOR 1e-2    // refactor with new pivots when the pivots' spread fell this far
#define B_PREFER 0.1         // B's pivots: a sparse row within this of the largest is preferred

pt_splu pt_loop_lu_view(const pt_model *m, pt_data *d) {
  const int ns = m->nls;
  pt_splu f = {0, 0, ns * (ns + 1) / 2, d->loop_lu_lp, d->loop_lu_li, d->loop_lu_lx,
               d->loop_lu_up, d->loop_lu_ui, d->loop_lu_ux, d->loop_lu_ud, d->loop_lu_prow,
               d->loop_lu_pinv, d->loop_lu_x, d->loop_lu_stack, d->loop_lu_mark, d->loop_lu_y};
  return f;
}

pt_splu pt_loop_qr_view(const pt_model *m, pt_data *d) {
  const int ns = m->nls;
  pt_splu f = {ns, ns, ns * (ns + 1) / 2, d->loop_qr_lp, d->loop_qr_li, d->loop_qr_lx,
               d->loop_qr_up, d->loop_qr_ui, d->loop_qr_ux, d->loop_qr_ud, d->loop_qr_prow,
               d->loop_qr_pinv, d->loop_qr_x, d->loop_qr_stack, d->loop_qr_mark, d->loop_qr_y};
  return f;
}

static pt_splu gu_view(const pt_model *m, pt_data *d) {
  pt_splu f = pt_loop_lu_view(m, d);
  f.nr = f.nc = m->nlcs;
  return f;
}

// The cut rows with their Jacobian and G at the kinematics evaluated (loop_s's positions).
static void jacobian_here(const pt_model *m, pt_data *d) {
  pt_loop_subspaces(m, d);
  pt_loop_rows(m, d, 1);
  pt_loop_jacobian(m, d);
}

// Kinematics, the cut rows with their Jacobian and G at the positions loop_s.
static void positions_and_jacobian(const pt_model *m, pt_data *d) {
  pt_loop_positions(m, d);
  jacobian_here(m, d);
}

// The held factors stand for this state (y as the integrator asks for it, at the same time).
static int held(const pt_model *m, const pt_data *d, const double *y, const double *cur) {
  return d->loop_held && d->loop_held_time == d->time &&
         memcmp(y, cur, sizeof(double) * 2 * (size_t)m->ndof) == 0;
}

// ---- LU ---------------------------------------------------------------------------------------

// G_u's values from G_s, then its factor: the pattern and pivots kept, or new pivots when they
// have degraded (the columns, the partition, stay). Sets d->rcond.
static int gu_factor(const pt_model *m, pt_data *d, int fresh) {
  pt_splu f = gu_view(m, d);
  const int n = m->nlcs;
  for (int e = 0; e < d->loop_gu_colptr[n]; e++) d->loop_guv[e] = d->loop_gs[d->loop_gu_src[e]];
  if (!fresh) {
    pt_splu_refactor(&f, d->loop_gu_colptr, d->loop_gu_rowind, d->loop_guv);
    d->rcond = pt_splu_rcond(&f);
    if (d->rcond >= FRESH_FACTOR * d->rcond_built) return PT_OK;
  }
  if (pt_splu_factor(&f, n, n, d->loop_gu_colptr, d->loop_gu_rowind, d->loop_guv, n, 1))
    return PT_ESINGULAR;
  d->rcond = pt_splu_rcond(&f);
  return PT_OK;
}

// Eq. (4)-(6) sparsely: P G_s^T = L U with partial pivoting; the pivot rows of G_s^T are the
// dependent coordinates (loop_dep[0 .. nlcs)), the others independent (loop_dep[nlcs ..)).
// Then G_u's pattern (the dependent columns of G_s) and its factor.
static int choose(const pt_model *m, pt_data *d) {
  const int ns = m->nls, ncs = m->nlcs;
  for (int e = 0; e < m->nlg; e++) d->loop_gtv[e] = d->loop_gs[m->loop_gt_src[e]];
  pt_splu f = pt_loop_lu_view(m, d);
  if (pt_splu_factor(&f, ns, ncs, m->loop_gt_colptr, m->loop_gt_rowind, d->loop_gtv, ns, 1))
    return PT_ESINGULAR;
  int *isdep = d->loop_iw, ni = ncs;
  for (int j = 0; j < ns; j++) isdep[j] = 0;
  for (int k = 0; k < ncs; k++) {
    d->loop_dep[k] = f.prow[k];
    isdep[f.prow[k]] = 1;
  }
  for (int j = 0; j < ns; j++)
    if (!isdep[j]) d->loop_dep[ni++] = j;
  int nz = 0;
  for (int k = 0; k < ncs; k++) {
    const int j = d->loop_dep[k];
    d->loop_gu_colptr[k] = nz;
    for (int e = m->loop_g_colptr[j]; e < m->loop_g_colptr[j + 1]; e++, nz++) {
      d->loop_gu_rowind[nz] = m->loop_g_rowind[e];
      d->loop_gu_src[nz] = e;
    }
  }
  d->loop_gu_colptr[ncs] = nz;
  d->rcond_built = 1;  // gu_factor compares with it
  if (gu_factor(m, d, 1)) return PT_ESINGULAR;
  d->rcond_built = d->rcond;
  return PT_OK;
}

static int lu_build(const pt_model *m, pt_data *d) {
  if (!d->loop_s_valid) pt_loop_sync(m, d);
  d->loop_held = 0;
  d->loop_lu_ready = d->loop_lu_current = 0;
  positions_and_jacobian(m, d);
  if (choose(m, d)) return PT_ESINGULAR;
  d->loop_lu_ready = d->loop_lu_current = 1;
  d->piv_ratio = 1;
  d->part_valid = 1;
  d->part_method = PT_PART_LU;
  d->abm_count = 0;
  return PT_OK;
}

// G_u again at the current positions (rows' Jacobian and G evaluated): values on the pattern.
static int lu_refactor(const pt_model *m, pt_data *d) {
  if (!d->loop_lu_ready) return PT_ESINGULAR;
  if (gu_factor(m, d, 0)) return PT_ESINGULAR;
  d->loop_lu_current = 1;
  if (!(d->rcond > PT_TOL_RCOND_LU)) return PT_ESINGULAR;
  // the spread of G_u's pivots against the build's: u = g(v) getting steep
  d->piv_ratio = d->rcond / d->rcond_built;
  return PT_OK;
}

// Eq. (10)/(14): Newton for u with v fixed, G_u du = -Phi, on the cut rows' values only; a
// chord iteration on the last factor, refactored when the residual does not shrink 100x.
static int lu_positions(const pt_model *m, pt_data *d, int maxit) {
  const double tol = pt_newton_tol(m, d);
  const int ncs = m->nlcs;
  double *r = d->loop_rhs, prev = INFINITY;
  for (int it = 0;; it++) {
    pt_loop_positions(m, d);
    pt_loop_rows(m, d, 0);
    const double err = pt_loop_residual(m, d, r);
    int done;
    if (pt_newton_done(d, err, tol, it, maxit, &done)) return done;
    if (!d->loop_lu_current || err > 0.01 * prev) {
      jacobian_here(m, d);
      const int rc = lu_refactor(m, d);
      if (rc) return rc;
    }
    prev = err;
    for (int i = 0; i < ncs; i++) r[i] = -r[i];
    pt_splu f = gu_view(m, d);
    pt_splu_solve(&f, r);
    for (int i = 0; i < ncs; i++) d->loop_s[d->loop_dep[i]] += r[i];
  }
}

// Eq. (11)/(15): G_u ud = nu - G_v vd at the converged positions; then every body's x, qd.
static int lu_velocities(const pt_model *m, pt_data *d) {
  const int ns = m->nls, ncs = m->nlcs;
  jacobian_here(m, d);
  int rc = lu_refactor(m, d);
  if (rc) return rc;
  double *r = d->loop_rhs;
  for (int a = 0; a < m->nlc; a++) r[a] = d->row_nu[m->loop_row[a]];
  for (int a = m->nlc; a < ncs; a++) r[a] = 0;
  for (int k = ncs; k < ns; k++) {
    const int j = d->loop_dep[k];
    const double v = d->loop_sd[j];
    for (int e = m->loop_g_colptr[j]; e < m->loop_g_colptr[j + 1]; e++)
      r[m->loop_g_rowind[e]] -= d->loop_gs[e] * v;
  }
  pt_splu f = gu_view(m, d);
  pt_splu_solve(&f, r);
  for (int i = 0; i < ncs; i++) d->loop_sd[d->loop_dep[i]] = r[i];
  pt_loop_velocities(m, d);
  d->counters.last_rcond = d->rcond;
  return PT_OK;
}

static void lu_coords(const pt_model *m, const pt_data *d, double *v, double *vd, double *vdd) {
  for (int i = 0; i < m->ndof; i++) {
    const int k = d->loop_dep[m->nlcs + i];
    if (v) v[i] = d->loop_s[k];
    if (vd) vd[i] = d->loop_sd[k];
    if (vdd) vdd[i] = d->loop_sdd[k];
  }
}

static int lu_recover(const pt_model *m, pt_data *d, const double *y, int maxit) {
  const int n = m->ndof;
  double *cur = d->loop_ycur;
  lu_coords(m, d, cur, cur + n, NULL);
  if (held(m, d, y, cur)) return 0;
  d->loop_held = 0;
  for (int i = 0; i < n; i++) {
    const int k = d->loop_dep[m->nlcs + i];
    d->loop_s[k] = y[i];
    d->loop_sd[k] = y[n + i];
  }
  const int it = lu_positions(m, d, maxit);
  if (it < 0) return it;
  const int rc = lu_velocities(m, d);
  return rc ? rc : it;
}

static int lu_accelerations(const pt_model *m, pt_data *d) {
  pt_loop_gen_forces(m, d);
  pt_loop_solve(m, d);
  pt_loop_outputs(m, d);
  return PT_OK;
}

// Rows (every row when a caller reads the state: the residuals; the cut rows otherwise),
// kappa and the right-hand sides, forces, inertia and its factors, then the accelerations.
static int evaluate_common(const pt_model *m, pt_data *d) {
  d->lambda_stale = 1;  // the Cartesian multipliers when asked for (pt_lambda)
  if (d->stage_inner) {
    pt_loop_rows(m, d, 1);
  } else {
    pt_joint_rows(m, d);
    pt_motion_rows(m, d);
  }
  pt_kin_inertias(m, d, 0);
  pt_loop_bias(m, d);
  pt_loop_rhs(m, d);
  pt_loop_forces(m, d);
  pt_loop_inertia(m, d);
  return PT_OK;
}

// The state's factors held (only inputs changed). An inner stage (nobody reads its xdd or
// residuals) whose changed inputs all drive tree coordinates: the response to their change
// alone (returns 1). Otherwise the rows a caller reads with this state (its residuals; an
// inner stage may have evaluated the cut rows alone), and the forces unless qfrc stands (the
// changed inputs enter Q directly); returns 0 for the accelerations in full.
static int held_inputs(const pt_model *m, pt_data *d) {
  const int on_tree = pt_loop_inputs_on_tree(m, d);
  if (d->stage_inner && on_tree) return 1;
  if (!d->stage_inner) {
    pt_joint_rows(m, d);
    pt_motion_rows(m, d);
  }
  if (!on_tree) pt_loop_forces(m, d);
  return 0;
}

static int lu_evaluate(const pt_model *m, pt_data *d) {
  if (d->loop_held && d->loop_held_time == d->time) {  // the inputs changed, nothing else
    if (!held_inputs(m, d)) return lu_accelerations(m, d);
    pt_loop_solve_input_change(m, d);
    return PT_OK;
  }
  evaluate_common(m, d);
  const int rc = pt_loop_factor(m, d);
  if (rc) return rc;
  d->loop_held = 1;
  d->loop_held_time = d->time;
  return lu_accelerations(m, d);
}

static void predict(const pt_model *m, pt_data *d, double tau) {
  const double t2 = d->acc_valid ? 0.5 * tau * tau : 0;
  for (int k = 0; k < m->nls; k++) d->loop_s[k] += tau * d->loop_sd[k] + t2 * d->loop_sdd[k];
  d->loop_held = 0;
}

const pt_partition_class pt_partition_loop_lu = {
    .name = "LU",
    .build = lu_build,
    .recover = lu_recover,
    .accelerations = lu_accelerations,
    .coords = lu_coords,
    .evaluate = lu_evaluate,
    .predict = predict,
    .sync = pt_loop_sync,
};

// ---- QR ---------------------------------------------------------------------------------------

static void s_to_w(const pt_model *m, const pt_data *d, const double *vs, double *vw);

// B = [G_s; Q2^T] (G_s evaluated): values, then the factor on the pattern and pivots, or new
// pivots (fresh, or degraded). Sets d->qr_rcond.
static int b_factor(const pt_model *m, pt_data *d, int fresh) {
  const int ns = m->nls;
  for (int j = 0; j < ns; j++)
    for (int e = m->loop_b_colptr[j]; e < m->loop_b_colptr[j + 1]; e++) {
      const int s = m->loop_b_src[e];
      d->loop_bv[e] = s >= 0 ? d->loop_gs[s] : d->loop_r[j + (size_t)(-s - 1) * ns];
    }
  pt_splu f = pt_loop_qr_view(m, d);
  d->loop_qr_exact = 0;
  if (!fresh && d->loop_qr_ready) {
    pt_splu_refactor(&f, m->loop_b_colptr, m->loop_b_rowind, d->loop_bv);
    d->qr_rcond = pt_splu_rcond(&f);
    if (d->qr_rcond >= FRESH_FACTOR * d->loop_rcond0) goto done;
  }
  d->loop_qr_ready = 0;
  if (pt_splu_factor(&f, ns, ns, m->loop_b_colptr, m->loop_b_rowind, d->loop_bv, m->nlcs,
                     B_PREFER))
    return PT_ESINGULAR;
  d->loop_qr_ready = 1;
  d->qr_rcond = d->loop_rcond0 = pt_splu_rcond(&f);
done:
  d->loop_qr_current = 1;
  return d->qr_rcond > PT_TOL_RCOND_QR ? PT_OK : PT_ESINGULAR;
}

// Q2 (ns x nd, column-major) from nd columns spanning the null space: orthonormalised by
// modified Gram-Schmidt, twice.
static int orthonormalise(const pt_model *m, pt_data *d, const double *N) {
  const int ns = m->nls, nd = m->ndof;
  double *Q = d->loop_q2;
  ptu_copy(Q, N, ns * nd);
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < nd; k++) {
      double *q = Q + (size_t)k * ns;
      for (int l = 0; l < k; l++) {
        const double *p = Q + (size_t)l * ns;
        double s = 0;
        for (int i = 0; i < ns; i++) s += p[i] * q[i];
        for (int i = 0; i < ns; i++) q[i] -= s * p[i];
      }
      double nn = 0;
      for (int i = 0; i < ns; i++) nn += q[i] * q[i];
      if (!(nn > 0) || !isfinite(nn)) return PT_ESINGULAR;
      nn = 1 / sqrt(nn);
      for (int i = 0; i < ns; i++) q[i] *= nn;
    }
  return PT_OK;
}

// N = [-G_u^-1 G_v; I] (in s's numbering) from the LU partition's factor, into loop_n.
static void lu_null_space(const pt_model *m, pt_data *d) {
  const int ns = m->nls, ncs = m->nlcs, nd = m->ndof;
  pt_splu f = gu_view(m, d);
  double *r = d->loop_rhs;
  for (int k = 0; k < nd; k++) {
    double *col = d->loop_n + (size_t)k * ns;
    const int j = d->loop_dep[ncs + k];
    for (int a = 0; a < ncs; a++) r[a] = 0;
    for (int e = m->loop_g_colptr[j]; e < m->loop_g_colptr[j + 1]; e++)
      r[m->loop_g_rowind[e]] = -d->loop_gs[e];
    pt_splu_solve(&f, r);
    for (int i = 0; i < ns; i++) col[i] = 0;
    for (int a = 0; a < ncs; a++) col[d->loop_dep[a]] = r[a];
    col[j] = 1;
  }
}

// The tangent rows R = W Q2 of B, W the kinetic metric at s_ref: the joint-space inertia M on
// the velocity coordinates, pulled back to s (a floating body's omega = 2 E(p) pd), plus c p p^T
// along each floating body's Euler parameters (4 I_g's mean moment), where M sees nothing.
// Near a singular position, B's nearly null direction then is M-orthogonal to the tangent
// coordinates, and the error that the ill-conditioned particular accelerations (eq. 7) carry
// along it does not reach zdd through eq. (8) (with Euclidean rows it did: 1e-5 J jumps on the
// parallelogram four-bar's passages).
static void tangent_rows(const pt_model *m, pt_data *d) {
  const int ns = m->nls, nw = m->nlw, nt = m->nlt;
  pt_kin_inertias(m, d, 0);
  pt_loop_inertia(m, d);
  double *xw = d->loop_rhs, *yw = d->loop_rhs + nw;  // (nls + nlw >= 2 nlw)
  for (int k = 0; k < m->ndof; k++) {
    const double *q = d->loop_q2 + (size_t)k * ns;
    double *r = d->loop_r + (size_t)k * ns;
    s_to_w(m, d, q, xw);
    ptu_zero(yw, nw);
    pt_loop_mul_m(m, d, xw, yw);
    ptu_copy(r, yw, nt);
    for (int f = 0; f < m->nlf; f++) {
      const double *p = d->loop_s + nt + 7 * f + 3, *y = yw + nt + 6 * f, *qp = q + nt + 7 * f + 3;
      const double *Ig = d->inertia_g + 9 * m->loop_float_body[f];
      double E[12], *o = r + nt + 7 * f;
      ptu_quat_E(E, p);
      ptu_copy(o, y, 3);
      const double c = 4 * (Ig[0] + Ig[4] + Ig[8]) / 3;
      const double pq = p[0] * qp[0] + ptu_dot3(p + 1, qp + 1);
      for (int e = 0; e < 4; e++)
        o[3 + e] = 2 * (E[e] * y[3] + E[4 + e] * y[4] + E[8 + e] * y[5]) + c * p[e] * pq;
    }
  }
}

// Eq. (4)-(5): the tangent basis at the current state and s_ref = s. From the null space at
// hand when a factor of this state is (B's updated null space in QR, G_u's in LU); otherwise
// from a fresh sparse choice of dependent coordinates.
static int qr_build(const pt_model *m, pt_data *d) {
  const int ns = m->nls;
  if (!d->loop_s_valid) pt_loop_sync(m, d);
  const int have_b = d->part_valid && d->part_method == PT_PART_QR && d->loop_held &&
                     d->loop_qr_exact;
  const int have_lu = d->part_valid && d->part_method == PT_PART_LU && d->loop_held &&
                      d->loop_lu_ready;
  if (!have_b && !have_lu) {
    positions_and_jacobian(m, d);
    d->loop_lu_ready = 0;
    if (choose(m, d)) return PT_ESINGULAR;
  }
  if (!have_b) lu_null_space(m, d);
  // (have_b: loop_n holds B^-1 [0; I] of this state, G_s is this state's)
  // from here on the old tangent is gone: a failure leaves no partition (the next step builds
  // one afresh at a consistent state)
  d->loop_lu_ready = d->loop_lu_current = 0;  // choose and the switch leave no LU partition
  d->loop_held = 0;
  int rc = orthonormalise(m, d, d->loop_n);
  if (!rc) {
    ptu_copy(d->loop_sref, d->loop_s, ns);
    tangent_rows(m, d);
    rc = b_factor(m, d, 1);
  }
  if (rc) {
    d->part_valid = 0;
    return rc;
  }
  d->loop_qr_exact = 1;  // G_s is of the current positions
  d->part_method = PT_PART_QR;
  d->part_valid = 1;
  d->abm_count = 0;
  return PT_OK;
}

static void qr_coords(const pt_model *m, const pt_data *d, double *z, double *zd, double *zdd) {
  const int ns = m->nls;
  for (int k = 0; k < m->ndof; k++) {
    const double *q2 = d->loop_r + (size_t)k * ns;
    double a = 0, b = 0, c = 0;
    for (int j = 0; j < ns; j++) {
      a += q2[j] * (d->loop_s[j] - d->loop_sref[j]);
      b += q2[j] * d->loop_sd[j];
      if (zdd) c += q2[j] * d->loop_sdd[j];
    }
    if (z) z[k] = a;
    if (zd) zd[k] = b;
    if (zdd) zdd[k] = c;
  }
}

// Newton for s with z fixed: [Phi(s); Q2^T (s - s_ref) - z] = 0, B as the chord; the floating
// bodies' Euler parameters back on |p| = 1 after each update (as qr_partition.c).
static int qr_positions(const pt_model *m, pt_data *d, const double *z, int maxit) {
  const double tol = pt_newton_tol(m, d);
  const int ns = m->nls, ncs = m->nlcs, nd = m->ndof;
  double *r = d->loop_rhs, prev = INFINITY;
  for (int it = 0;; it++) {
    pt_loop_positions(m, d);
    pt_loop_rows(m, d, 0);
    double err = pt_loop_residual(m, d, r);
    for (int k = 0; k < nd; k++) {
      const double *q2 = d->loop_r + (size_t)k * ns;
      double s = 0;
      for (int j = 0; j < ns; j++) s += q2[j] * (d->loop_s[j] - d->loop_sref[j]);
      r[ncs + k] = z[k] - s;
      err = fmax(err, fabs(r[ncs + k]));
    }
    int done;
    if (pt_newton_done(d, err, tol, it, maxit, &done)) return done;
    if (!d->loop_qr_current || err > 0.01 * prev) {
      jacobian_here(m, d);
      const int rc = b_factor(m, d, 0);
      if (rc) return rc;
    }
    prev = err;
    for (int i = 0; i < ncs; i++) r[i] = -r[i];
    pt_splu f = pt_loop_qr_view(m, d);
    pt_splu_solve(&f, r);
    for (int j = 0; j < ns; j++) d->loop_s[j] += r[j];
    d->loop_qr_exact = 0;
    for (int fl = 0; fl < m->nlf; fl++) {
      double *p = d->loop_s + m->nlt + 7 * fl + 3;
      const double s = 1 / sqrt(p[0] * p[0] + ptu_dot3(p + 1, p + 1));
      for (int c = 0; c < 4; c++) p[c] *= s;
    }
  }
}

// Eq. (6): B sd = [nu; zd] at the converged positions; then every body's x, qd.
static int qr_velocities(const pt_model *m, pt_data *d, const double *zd) {
  jacobian_here(m, d);
  const int rc = b_factor(m, d, 0);
  if (rc) return rc;
  d->loop_qr_exact = 1;
  double *r = d->loop_sd;
  for (int a = 0; a < m->nlc; a++) r[a] = d->row_nu[m->loop_row[a]];
  for (int a = m->nlc; a < m->nlcs; a++) r[a] = 0;
  for (int k = 0; k < m->ndof; k++) r[m->nlcs + k] = zd[k];
  pt_splu f = pt_loop_qr_view(m, d);
  pt_splu_solve(&f, r);
  pt_loop_velocities(m, d);
  return PT_OK;
}

static int qr_recover(const pt_model *m, pt_data *d, const double *y, int maxit) {
  const int n = m->ndof;
  double *cur = d->loop_ycur;
  qr_coords(m, d, cur, cur + n, NULL);
  if (held(m, d, y, cur)) return 0;
  d->loop_held = 0;
  const int it = qr_positions(m, d, y, maxit);
  if (it < 0) return it;
  const int rc = qr_velocities(m, d, y + n);
  return rc ? rc : it;
}

// s-space vector (tree coordinates, then r, p per floating body) to w (r, omega = 2 E(p) p)
static void s_to_w(const pt_model *m, const pt_data *d, const double *vs, double *vw) {
  ptu_copy(vw, vs, m->nlt);
  for (int f = 0; f < m->nlf; f++) {
    const double *a = vs + m->nlt + 7 * f;
    double *o = vw + m->nlt + 6 * f, E[12];
    ptu_quat_E(E, d->loop_s + m->nlt + 7 * f + 3);
    ptu_copy(o, a, 3);
    for (int i = 0; i < 3; i++)
      o[3 + i] = 2 * (E[4 * i] * a[3] + E[4 * i + 1] * a[4] + E[4 * i + 2] * a[5] +
                      E[4 * i + 3] * a[6]);
  }
}

// L L^T x = b in place (L row-major, n x n, lower)
static void chol_solve(const double *L, int n, double *b) {
  for (int i = 0; i < n; i++) {
    double s = b[i];
    for (int k = 0; k < i; k++) s -= L[i * n + k] * b[k];
    b[i] = s / L[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double s = b[i];
    for (int k = i + 1; k < n; k++) s -= L[k * n + i] * b[k];
    b[i] = s / L[i * n + i];
  }
}

// Eq. (8): zdd = (N^T M N)^-1 N^T (Q - M wdd_p), wdd = wdd_p + N zdd. The factor of N^T M N and
// N^T M wdd_p (loop_nmw) are the evaluation's.
static int qr_accelerations(const pt_model *m, pt_data *d) {
  const int nw = m->nlw, nd = m->ndof;
  pt_loop_gen_forces(m, d);
  double *b = d->loop_rhs, *L = d->loop_nmn;
  const double *c = d->loop_nmw;
  for (int k = 0; k < nd; k++) {
    const double *n = d->loop_nw + (size_t)k * nw;
    double s = 0;
    for (int i = 0; i < nw; i++) s += n[i] * d->loop_qb[i];
    b[k] = s - c[k];
  }
  chol_solve(L, nd, b);
  ptu_copy(d->loop_wdd, d->loop_wddp, nw);
  for (int k = 0; k < nd; k++) {
    const double *n = d->loop_nw + (size_t)k * nw;
    for (int i = 0; i < nw; i++) d->loop_wdd[i] += n[i] * b[k];
  }
  pt_loop_outputs(m, d);
  return PT_OK;
}

// The same for QR: zdd moves by (N^T M N)^-1 N^T dQ, wdd by N dzdd.
static void qr_input_change(const pt_model *m, pt_data *d) {
  const int nw = m->nlw, nd = m->ndof;
  double *dq = d->loop_rhs, *b = d->loop_rhs + nw;  // (nls + nlw >= nlw + nd)
  const double *L = d->loop_nmn;
  pt_loop_input_change(m, d, dq);
  for (int k = 0; k < nd; k++) {
    const double *n = d->loop_nw + (size_t)k * nw;
    double s = 0;
    for (int i = 0; i < nw; i++) s += n[i] * dq[i];
    b[k] = s;
  }
  chol_solve(L, nd, b);
  for (int k = 0; k < nd; k++) {
    const double *n = d->loop_nw + (size_t)k * nw;
    for (int i = 0; i < nw; i++) d->loop_wdd[i] += n[i] * b[k];
  }
  pt_loop_sdd(m, d);
}

static int qr_evaluate(const pt_model *m, pt_data *d) {
  const int ns = m->nls, nw = m->nlw, nd = m->ndof, ncs = m->nlcs;
  if (d->loop_held && d->loop_held_time == d->time) {
    if (!held_inputs(m, d)) return qr_accelerations(m, d);
    qr_input_change(m, d);
    return PT_OK;
  }
  if (!d->loop_qr_exact) return PT_ESINGULAR;  // recover leaves B factored at the state
  evaluate_common(m, d);
  pt_splu f = pt_loop_qr_view(m, d);
  // eq. (7): particular accelerations, B sdd_p = [gamma; 0]
  double *v = d->loop_rhs;
  ptu_copy(v, d->loop_gam, ncs);
  for (int k = 0; k < nd; k++) v[ncs + k] = 0;
  pt_splu_solve(&f, v);
  s_to_w(m, d, v, d->loop_wddp);
  // the updated null space N = B^-1 [0; I], in w; M N; N^T M N and its Cholesky factor
  for (int k = 0; k < nd; k++) {
    double *n = d->loop_n + (size_t)k * ns;
    for (int j = 0; j < ns; j++) n[j] = 0;
    n[ncs + k] = 1;
    pt_splu_solve(&f, n);
    s_to_w(m, d, n, d->loop_nw + (size_t)k * nw);
    double *mn = d->loop_mn + (size_t)k * nw;
    ptu_zero(mn, nw);
    pt_loop_mul_m(m, d, d->loop_nw + (size_t)k * nw, mn);
  }
  double *L = d->loop_nmn;
  for (int i = 0; i < nd; i++)
    for (int k = 0; k <= i; k++) {
      double s = 0;
      const double *a = d->loop_nw + (size_t)i * nw, *b = d->loop_mn + (size_t)k * nw;
      for (int e = 0; e < nw; e++) s += a[e] * b[e];
      for (int l = 0; l < k; l++) s -= L[i * nd + l] * L[k * nd + l];
      if (i == k) {
        if (!(s > 0)) return PT_ESINGULAR;
        L[i * nd + i] = sqrt(s);
      } else {
        L[i * nd + k] = s / L[k * nd + k];
      }
    }
  // N^T M wdd_p
  double *mw = d->loop_rhs, *c = d->loop_nmw;
  ptu_zero(mw, nw);
  pt_loop_mul_m(m, d, d->loop_wddp, mw);
  for (int k = 0; k < nd; k++) {
    const double *n = d->loop_nw + (size_t)k * nw;
    double s = 0;
    for (int i = 0; i < nw; i++) s += n[i] * mw[i];
    c[k] = s;
  }
  d->loop_held = 1;
  d->loop_held_time = d->time;
  return qr_accelerations(m, d);
}

static double qr_alpha(const pt_model *m, const pt_data *d) {
  const int ns = m->nls;
  double qq = 0, zz = 0;
  for (int j = 0; j < ns; j++) qq += d->loop_sd[j] * d->loop_sd[j];
  if (m->ndof == 0 || !(qq > PT_TOL_AT_REST_QD2)) return 1;
  for (int k = 0; k < m->ndof; k++) {
    const double *q2 = d->loop_q2 + (size_t)k * ns;
    double b = 0;
    for (int j = 0; j < ns; j++) b += q2[j] * d->loop_sd[j];
    zz += b * b;
  }
  return zz / qq;
}

const pt_partition_class pt_partition_loop_qr = {
    .name = "QR",
    .build = qr_build,
    .recover = qr_recover,
    .accelerations = qr_accelerations,
    .coords = qr_coords,
    .evaluate = qr_evaluate,
    .predict = predict,
    .sync = pt_loop_sync,
    .alpha = qr_alpha,
};

int pt_loop_independent(const pt_model *m, const pt_data *d, const char **names, int max) {
  for (int i = 0; i < m->ndof && i < max; i++) {
    const int j = d->loop_dep[m->nlcs + i];
    if (j < m->nlt)
      names[i] = m->coord_name[m->loop_meas[j]];
    else
      names[i] = m->q_name[7 * m->loop_float_body[(j - m->nlt) / 7] + (j - m->nlt) % 7];
  }
  return m->ndof;
}

int pt_loop_null_space(const pt_model *m, pt_data *d) {
  pt_partition_free(d);  // a partition of d's state, whatever d held
  const int rc = lu_build(m, d);
  if (rc) return rc;
  lu_null_space(m, d);
  return PT_OK;
}

void pt_loop_grad_s(const pt_model *m, const pt_data *d, const double *jx, double *gs) {
  const int nt = m->nlt;
  ptu_zero(gs, m->nls);
  for (int b = 0; b < m->nbody; b++) {
    const double *J = jx + 6 * b;
    if (J[0] == 0 && J[1] == 0 && J[2] == 0 && J[3] == 0 && J[4] == 0 && J[5] == 0) continue;
    const int f = m->loop_body_float[b];
    if (f >= 0) {  // (r, p): J_v, 2 J_w E(p)
      double E[12], *o = gs + nt + 7 * f;
      ptu_quat_E(E, d->loop_s + nt + 7 * f + 3);
      for (int c = 0; c < 3; c++) o[c] += J[c];
      for (int c = 0; c < 4; c++) o[3 + c] += 2 * (J[3] * E[c] + J[4] * E[4 + c] + J[5] * E[8 + c]);
      continue;
    }
    double n[3], t3[3];  // the force-like pair of loop_kin.c, up the body's ancestors
    ptu_cross3(t3, d->q + 7 * b, J);
    ptu_add3(n, J + 3, t3);
    for (int i = m->loop_body_coord[b]; i >= 0; i = m->loop_parent[i])
      gs[i] += ptu_dot3(n, d->loop_S + 6 * i) + ptu_dot3(J, d->loop_S + 6 * i + 3);
  }
}
