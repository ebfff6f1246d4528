// equilibrium.c: static equilibrium (seed: inverse-dynamics-equilibrium-integration lecture,
// "Equilibrium Analysis").
//
// At rest (x = xdd = 0) the equations of motion reduce to the lecture's force balance with
// multipliers, written here in the r-omega form (the lecture: "it doesn't matter what
// formulation you use"), together with the constraints:
//   R1(q, lambda) = J(q)^T lambda - Q(q) = 0      (6 nbody, forces at the CoM and torques)
//   R2(q)         = Phi(q, t_frozen)     = 0      (ncon active rows)
// Unknowns: the body displacements z = (delta r, delta pi) (6 nbody; Euler parameters are
// updated by a rotation, so their normalisation holds by construction) and lambda (ncon):
// as many unknowns as equations (the lecture's count, less the normalisation rows).
// Approach 1: Newton on (z, lambda) with the tangent [K J^T; J 0], K = dR1/dz by central
// differences, and a backtracking line search on |R|^2 with a rotation step limit.
// Approach 2: when Newton fails (or lands on an unstable equilibrium), damped dynamics on the
// copy: semi-implicit Euler on the partitioned coordinates with added mass-proportional
// damping -c M x (c = 0.002 / h, treated implicitly so any c is stable) and kinetic damping
// (velocities are zeroed whenever the kinetic energy starts to fall: the energy is taken out
// at each swing through the bottom of a potential well, whatever the frequencies).
// Approach 4: once the damped motion has slowed down, Newton finishes from there.
// Time-dependent motions are frozen at the data's time: Phi = c(q) - f(t0), nu = 0,
// gamma = -Jdot_c x.
// Control elements (issue 26): their states X are unknowns after the multipliers, with the
// equations Xdot(q, X) = 0 at rest (the residual's last nx rows), differentiated by central
// differences like K; the damped dynamics carry them by explicit Euler; the stability of a
// model with controls is its closed loop's (the linearization's eigenvalues).
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"
#include "partition.h"
#include "tolerances.h"
#include "ptu.h"

#define EQ_MAXIT 50
#define EQ_DAMPED_STEPS 200000
#define EQ_ROT_STEP 0.5        // largest rotation of a body in one Newton step (rad)
#define EQ_FD_STEP 1e-6        // central-difference step (m, rad)
#define EQ_TRY_EVERY 200       // damped steps between Newton attempts once slow
#define EQ_TRY_MAX 12          // Newton attempts during the damped dynamics, at most
#define EQ_TRY_MAXIT 25        // iterations of each

void pt_reactions_from(const pt_model *m, const pt_data *d, const double *lam, double *out);

typedef struct {
  const pt_model *m;
  pt_data *w;         // the work copy
  int nz, n, nl;      // nv, nv + nl + nx, ncon + ncoupler + nhold
  int nx;             // control states (the last nx unknowns and residuals)
  double *xsave;      // (nx)
  int nhold;          // joint limits held (at a bound, as constraints)
  int *hold_joint;    // (nlimit) joint of each held limit
  int *hold_side;     // (nlimit) -1 lower, +1 upper
  double *A;          // (n x n) column-major tangent
  double *A2;         // (n x n) its copy for the least-squares step
  double *sv;         // (n) singular values
  lapack_int *piv;    // (n)
  double *R, *Rp, *Rm;// (n) residuals
  double *dx;         // (n) Newton step
  double *qsave;      // (nq)
  double *q0, *qd0;   // (nq) dynamics state while Newton is tried
  double *lam;        // (nl) the rows', then the couplers' (coupler.c)
  double *lam_try;    // (nl)
  double fscale, pscale, tol;
  int iterations;
} eq_work;

// Rows with the motions frozen at w->time: velocity and acceleration right-hand sides of a
// motion lose their f'(t), f''(t) parts.
static void frozen_rows(const pt_model *m, pt_data *d) {
  pt_kin_bodies(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  for (int i = 0; i < m->nmotion; i++) {
    double f[3];
    pt_motion_eval(m, i, d->time, f);
    d->row_nu[m->nrow_joint + i] = 0;
    d->row_gamma[m->nrow_joint + i] -= f[2];
  }
}

static void coupler_rows(eq_work *e, int k, double jac[2][12], double lam, double *R, int col);
static void hold_rows(eq_work *e, int c, const double *jac, double lam, double *R, int col);

// R = [J^T lambda - Q; Phi; G q - offset] at w's positions, at rest, with the couplers' rows
// (coupler.c) after the active rows. Returns max |R1| and max |R2|.
static void residual(eq_work *e, const double *lam, double *R, double *r1, double *r2) {
  const pt_model *m = e->m;
  pt_data *w = e->w;
  ptu_zero(w->qd, m->nq);
  frozen_rows(m, w);
  pt_forces(m, w);
  for (int i = 0; i < e->nz; i++) R[i] = -w->qfrc[i];
  for (int a = 0; a < m->ncon; a++) {
    const int r = m->con_row[a];
    for (int s = 0; s < 2; s++) {
      const int b = m->row_body[2 * r + s];
      if (b == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) R[6 * b + c] += w->row_jac[12 * r + 6 * s + c] * lam[a];
    }
    R[e->nz + a] = w->row_phi[r];
  }
  for (int k = 0; k < m->ncoupler; k++) {  // q_f - mult q_l - offset = 0, its J^T lambda
    double v[2], jac[2][12], jdx;
    for (int s = 0; s < 2; s++)
      pt_measure(m, w, m->joint_coord_adr[m->coupler_joint[2 * k + s]], v + s, jac[s], &jdx);
    R[e->nz + m->ncon + k] = v[0] - m->coupler_mult[k] * v[1] - m->coupler_offset[k];
    coupler_rows(e, k, jac, lam[m->ncon + k], R, -1);
  }
  for (int h = 0; h < e->nhold; h++) {  // a held limit: q_i - bound = 0, its J^T lambda
    const int j = e->hold_joint[h], c = m->joint_coord_adr[j], row = m->ncon + m->ncoupler + h;
    double v, jac[12], jdx;
    pt_measure(m, w, c, &v, jac, &jdx);
    R[e->nz + row] = v - m->joint_limit[2 * j + (e->hold_side[h] > 0)];
    hold_rows(e, c, jac, lam[row], R, -1);
  }
  for (int i = 0; i < e->nx; i++) R[e->n - e->nx + i] = w->ctl_xdot[i];  // Xdot = 0 at rest
  double a1 = 0, a2 = 0;
  for (int i = 0; i < e->nz; i++) a1 = fmax(a1, fabs(R[i]));
  for (int i = e->nz; i < e->n; i++) a2 = fmax(a2, fabs(R[i]));
  *r1 = isfinite(a1) ? a1 : INFINITY;
  *r2 = isfinite(a2) ? a2 : INFINITY;
}

// Coupler k's row J_c = J_f - mult J_l (jac: the follower's and the leader's measure
// Jacobians): J_c^T lam added to R (col < 0), or J_c and J_c^T into the tangent's column and
// row col.
static void coupler_rows(eq_work *e, int k, double jac[2][12], double lam, double *R, int col) {
  const pt_model *m = e->m;
  const int n = e->n;
  for (int s = 0; s < 2; s++) {
    const int c = m->joint_coord_adr[m->coupler_joint[2 * k + s]];
    const double f = s ? -m->coupler_mult[k] : 1.0;
    for (int sl = 0; sl < 2; sl++) {
      const int b = m->meas_body[2 * c + sl];
      if (b == PT_GROUND) continue;
      for (int i = 0; i < 6; i++) {
        const double v = f * jac[s][6 * sl + i];
        if (col < 0) {
          R[6 * b + i] += v * lam;
        } else {
          e->A[(size_t)(6 * b + i) * n + col] += v;
          e->A[(size_t)col * n + 6 * b + i] += v;
        }
      }
    }
  }
}

// A held limit's row (the Jacobian jac of coordinate c): J^T lam into R (col < 0), or J and
// J^T into the tangent's column and row col.
static void hold_rows(eq_work *e, int c, const double *jac, double lam, double *R, int col) {
  const pt_model *m = e->m;
  const int n = e->n;
  for (int sl = 0; sl < 2; sl++) {
    const int b = m->meas_body[2 * c + sl];
    if (b == PT_GROUND) continue;
    for (int i = 0; i < 6; i++) {
      const double v = jac[6 * sl + i];
      if (col < 0) {
        R[6 * b + i] += v * lam;
      } else {
        e->A[(size_t)(6 * b + i) * n + col] += v;
        e->A[(size_t)col * n + 6 * b + i] += v;
      }
    }
  }
}

// q <- q (+) s dz: r += s dr, p <- rot(s dpi) p (a global rotation; exact, stays unit).
static void displace(const pt_model *m, pt_data *w, const double *dz, double s) {
  for (int k = 0; k < m->nbody; k++) {
    double *r = w->q + 7 * k, *p = r + 3;
    for (int c = 0; c < 3; c++) r[c] += s * dz[6 * k + c];
    double t[3], ang;
    ptu_scl3(t, dz + 6 * k + 3, s);
    ang = ptu_norm3(t);
    if (ang == 0) continue;
    const double h0 = cos(ang / 2), sf = sin(ang / 2) / ang;
    const double a0 = h0, a[3] = {t[0] * sf, t[1] * sf, t[2] * sf};
    double e[3], cr[3];
    ptu_cross3(cr, a, p + 1);
    const double e0 = a0 * p[0] - ptu_dot3(a, p + 1);
    for (int c = 0; c < 3; c++) e[c] = a0 * p[1 + c] + p[0] * a[c] + cr[c];
    const double nrm = sqrt(e0 * e0 + ptu_dot3(e, e));
    p[0] = e0 / nrm;
    for (int c = 0; c < 3; c++) p[1 + c] = e[c] / nrm;
  }
}

// Track angle unwrapping along the path (steps are limited to EQ_ROT_STEP).
static void track_coords(const pt_model *m, pt_data *w) {
  for (int i = 0; i < m->ncoord; i++) {
    double v, jac[12], jdx;
    pt_measure(m, w, i, &v, jac, &jdx);
    w->coord_ref[i] = v;
  }
}

// Tangent [K J^T; J 0] at (q, lambda), K = dR1/dz by central differences.
static void tangent(eq_work *e, const double *lam) {
  const pt_model *m = e->m;
  pt_data *w = e->w;
  const int n = e->n, nz = e->nz;
  double r1, r2;
  ptu_zero(e->A, n * n);
  ptu_copy(e->qsave, w->q, m->nq);
  for (int j = 0; j < nz; j++) {
    double dz[6] = {0, 0, 0, 0, 0, 0};
    const int k = j / 6;
    const double h = (j % 6) < 3 ? EQ_FD_STEP * e->pscale : EQ_FD_STEP;
    dz[j % 6] = h;
    // displace() works on all bodies: use a vector that is zero except body k
    double *full = e->dx;
    ptu_zero(full, nz);
    ptu_copy(full + 6 * k, dz, 6);
    displace(m, w, full, 1);
    residual(e, lam, e->Rp, &r1, &r2);
    ptu_copy(w->q, e->qsave, m->nq);
    displace(m, w, full, -1);
    residual(e, lam, e->Rm, &r1, &r2);
    ptu_copy(w->q, e->qsave, m->nq);
    for (int i = 0; i < nz; i++) e->A[(size_t)j * n + i] = (e->Rp[i] - e->Rm[i]) / (2 * h);
    for (int i = n - e->nx; i < n; i++)
      e->A[(size_t)j * n + i] = (e->Rp[i] - e->Rm[i]) / (2 * h);
  }
  // the control states' columns: d(R1, Xdot)/dX (the rows' do not depend on X)
  for (int j = 0; j < e->nx; j++) {
    const int col = n - e->nx + j;
    const double x = w->ctl_x[j], h = EQ_FD_STEP * fmax(1, fabs(x));
    w->ctl_x[j] = x + h;
    residual(e, lam, e->Rp, &r1, &r2);
    w->ctl_x[j] = x - h;
    residual(e, lam, e->Rm, &r1, &r2);
    w->ctl_x[j] = x;
    for (int i = 0; i < nz; i++) e->A[(size_t)col * n + i] = (e->Rp[i] - e->Rm[i]) / (2 * h);
    for (int i = n - e->nx; i < n; i++)
      e->A[(size_t)col * n + i] = (e->Rp[i] - e->Rm[i]) / (2 * h);
  }
  // rows and J^T columns at the unperturbed point
  residual(e, lam, e->R, &r1, &r2);
  for (int a = 0; a < m->ncon; a++) {
    const int r = m->con_row[a];
    for (int s = 0; s < 2; s++) {
      const int b = m->row_body[2 * r + s];
      if (b == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) {
        const double v = w->row_jac[12 * r + 6 * s + c];
        e->A[(size_t)(6 * b + c) * n + nz + a] += v;   // J
        e->A[(size_t)(nz + a) * n + 6 * b + c] += v;   // J^T
      }
    }
  }
  for (int k = 0; k < m->ncoupler; k++) {
    double v[2], jac[2][12], jdx;
    for (int s = 0; s < 2; s++)
      pt_measure(m, w, m->joint_coord_adr[m->coupler_joint[2 * k + s]], v + s, jac[s], &jdx);
    coupler_rows(e, k, jac, 0, NULL, nz + m->ncon + k);
  }
  for (int h = 0; h < e->nhold; h++) {
    const int c = m->joint_coord_adr[e->hold_joint[h]];
    double v, jac[12], jdx;
    pt_measure(m, w, c, &v, jac, &jdx);
    hold_rows(e, c, jac, 0, NULL, nz + m->ncon + m->ncoupler + h);
  }
}

static double merit(const eq_work *e, const double *R) {
  double s = 0;
  for (int i = 0; i < e->n; i++) s += R[i] * R[i];
  return 0.5 * s;
}

static int converged(const eq_work *e, double r1, double r2) {
  return r1 <= e->tol * e->fscale && r2 <= PT_TOL_EQ_POS * e->pscale;
}

// Approach 1: Newton with a line search from w's positions; lambda in e->lam. 1 = converged.
static int newton(eq_work *e, int maxit) {
  const pt_model *m = e->m;
  pt_data *w = e->w;
  const int n = e->n, nz = e->nz;
  double r1, r2;
  for (int it = 0;; it++) {
    residual(e, e->lam, e->R, &r1, &r2);
    if (converged(e, r1, r2)) return 1;
    if (it >= maxit || !isfinite(r1) || !isfinite(r2)) return 0;
    e->iterations++;
    tangent(e, e->lam);
    double *dx = e->dx;
    for (int i = 0; i < n; i++) dx[i] = -e->R[i];
    ptu_copy(e->A2, e->A, n * n);
    int info = LAPACKE_dgesv(LAPACK_COL_MAJOR, n, 1, e->A, n, e->piv, dx, n);
    double rot = 0;
    for (int k = 0; k < m->nbody && info == 0; k++) rot = fmax(rot, ptu_norm3(dx + 6 * k + 3));
    if (info != 0 || rot > EQ_ROT_STEP) {
      // singular or nearly (a neutral direction: a spin about a symmetry axis, a free
      // rotation): the minimum-norm least-squares step leaves those directions alone
      lapack_int rank;
      for (int i = 0; i < n; i++) dx[i] = -e->R[i];
      if (LAPACKE_dgelsd(LAPACK_COL_MAJOR, n, n, 1, e->A2, n, dx, n, e->sv, PT_TOL_EQ_LSQ_RCOND, &rank) != 0)
        return 0;
      rot = 0;
      for (int k = 0; k < m->nbody; k++) rot = fmax(rot, ptu_norm3(dx + 6 * k + 3));
    }
    double alpha = rot > EQ_ROT_STEP ? EQ_ROT_STEP / rot : 1;
    const double phi0 = merit(e, e->R);
    ptu_copy(e->qsave, w->q, m->nq);
    ptu_copy(e->xsave, w->ctl_x, e->nx);
    int ok = 0;
    for (int ls = 0; ls < 40 && !ok; ls++, alpha *= 0.5) {
      ptu_copy(w->q, e->qsave, m->nq);
      displace(m, w, dx, alpha);
      for (int a = 0; a < e->nl; a++) e->lam_try[a] = e->lam[a] + alpha * dx[nz + a];
      for (int i = 0; i < e->nx; i++) w->ctl_x[i] = e->xsave[i] + alpha * dx[n - e->nx + i];
      double t1, t2;
      residual(e, e->lam_try, e->Rp, &t1, &t2);
      if (merit(e, e->Rp) <= (1 - 1e-4 * alpha) * phi0 || converged(e, t1, t2)) ok = 1;
    }
    if (!ok) {  // no decrease: at the rounding floor, or stuck at a minimum of |R|
      ptu_copy(w->q, e->qsave, m->nq);
      ptu_copy(w->ctl_x, e->xsave, e->nx);
      return r1 <= PT_TOL_EQ_FORCE_STUCK * e->fscale && r2 <= PT_TOL_EQ_POS_STUCK * e->pscale;
    }
    ptu_copy(e->lam, e->lam_try, e->nl);
    track_coords(m, w);
  }
}

// Multipliers that best balance the loads at the current positions: W lambda = J M^-1 Q.
static int initial_multipliers(eq_work *e) {
  const pt_model *m = e->m;
  pt_data *w = e->w;
  ptu_zero(w->qd, m->nq);
  frozen_rows(m, w);
  pt_forces(m, w);
  ptu_zero(e->lam, e->nl);  // the couplers' start at 0
  if (pt_w_factor(m, w)) {
    return PT_OK;  // Newton will find them (or report the singularity)
  }
  double *z = w->wrk6;
  for (int k = 0; k < m->nbody; k++) {
    for (int c = 0; c < 3; c++) z[6 * k + c] = w->qfrc[6 * k + c] / m->body_mass[k];
    ptu_mul_mat_vec3(z + 6 * k + 3, w->inertia_ginv + 9 * k, w->qfrc + 6 * k + 3);
  }
  for (int a = 0; a < m->ncon; a++) {
    const int r = m->con_row[a];
    double s = 0;
    for (int sl = 0; sl < 2; sl++) {
      const int b = m->row_body[2 * r + sl];
      if (b == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) s += w->row_jac[12 * r + 6 * sl + c] * z[6 * b + c];
    }
    e->lam[a] = s;
  }
  pt_w_solve(m, w, e->lam);
  return PT_OK;
}

// Stability of a converged equilibrium: the KKT matrix [K J^T; J 0] (K symmetrised) has
// exactly ncon negative eigenvalues plus one per direction of the constraint manifold along
// which the potential decreases (inertia of the reduced stiffness Z^T K Z, Z spanning the
// null space of J). Counted from the D blocks of a Bunch-Kaufman LDL^T. 1 = unstable.
static int closed_loop_unstable(eq_work *e);

static int unstable(eq_work *e) {
  if (e->m->ctl) return closed_loop_unstable(e);
  const int n = e->n;
  tangent(e, e->lam);
  double amax = 0;
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) {
      double v = 0.5 * (e->A[(size_t)j * n + i] + e->A[(size_t)i * n + j]);
      e->A[(size_t)j * n + i] = v;  // lower triangle, column-major
      amax = fmax(amax, fabs(v));
    }
  if (LAPACKE_dsytrf(LAPACK_COL_MAJOR, 'L', n, e->A, n, e->piv) < 0) return 0;
  const double thr = PT_TOL_EQ_STABILITY * amax;
  int neg = 0;
  for (int k = 0; k < n; k++) {
    const double a = e->A[(size_t)k * n + k];
    if (e->piv[k] > 0 || k + 1 == n) {
      neg += a < -thr;
      continue;
    }
    const double b = e->A[(size_t)k * n + k + 1], c = e->A[(size_t)(k + 1) * n + k + 1];
    const double mid = 0.5 * (a + c), rad = sqrt(0.25 * (a - c) * (a - c) + b * b);
    neg += (mid - rad < -thr) + (mid + rad < -thr);
    k++;
  }
  return neg > e->nl;
}

// With control elements the tangent is not symmetric and says nothing of the loop's dynamics:
// the equilibrium is unstable when its closed-loop linearization (linearize_control.c) has an
// eigenvalue with a positive real part (beyond rounding: 1e-9 of the largest modulus).
static int closed_loop_unstable(eq_work *e) {
  const pt_model *m = e->m;
  pt_data *d = pt_data_new(m);
  if (!d) return 0;
  ptu_copy(d->q, e->w->q, m->nq);
  ptu_zero(d->qd, m->nq);
  ptu_copy(d->ctl_x, e->w->ctl_x, m->nctlx);
  ptu_copy(d->ctl_par, e->w->ctl_par, m->nctlpar);
  ptu_copy(d->input, e->w->input, m->ninput);
  ptu_copy(d->coord_ref, e->w->coord_ref, m->ncoord);
  d->time = e->w->time;
  pt_error err;
  pt_linearization *lin = NULL;
  int bad = 0;
  if (pt_set_state(m, d, NULL, 0, NULL, 0, &err) == PT_OK &&
      pt_linearize(m, d, NULL, &lin, &err) == PT_OK) {
    const int n = 2 * lin->nz + lin->nd;
    double big = 0;
    for (int i = 0; i < n; i++) big = fmax(big, hypot(lin->eig[i].re, lin->eig[i].im));
    for (int i = 0; i < n; i++) bad |= lin->eig[i].re > 1e-9 * fmax(1, big);
  }
  pt_linearization_free(lin);
  pt_data_free(d);
  return bad;
}

// Dependent coordinates and velocities after the independent ones moved (seed gcp eq. 10-11).
// When Newton for u fails, the partition is rebuilt at the last good state qprev and the
// predicted independent values are tried again; when it struggles, the partition is rebuilt
// at the new state for the next step (as the integrator does).
static int recover(eq_work *e, const double *qprev) {
  const pt_model *m = e->m;
  pt_data *w = e->w;
  double *qpred = e->qsave;
  ptu_copy(qpred, w->q, m->nq);
  int it = pt_solve_positions(m, w, 20);
  if (it < 0) {
    ptu_copy(w->q, qprev, m->nq);
    if (pt_partition_build(m, w)) return PT_ESINGULAR;
    for (int i = 0; i < m->ndof; i++) w->q[w->indep[i]] = qpred[w->indep[i]];
    it = pt_solve_positions(m, w, 20);
    if (it < 0) return PT_EDIVERGED;
  }
  if (it > 4 || w->piv_ratio < 0.5) {
    if (pt_partition_build(m, w)) return PT_ESINGULAR;
  }
  for (int i = 0; i < m->nmotion; i++) w->row_nu[m->nrow_joint + i] = 0;
  return pt_solve_velocities(m, w);
}

static double kinetic(const pt_model *m, pt_data *w) {
  pt_kin_bodies(m, w);
  return pt_kinetic(m, w);
}

#define EQ_LIM_POS_TOL 1e-9  // a coordinate this close to a bound is on it (rad or m)

static int is_follower(const pt_model *m, int j);

// How many enforced limits' coordinates are strictly past their bounds at w's positions.
static int past_bound(const pt_model *m, const pt_data *w) {
  int n = 0;
  for (int j = 0; j < m->njoint && m->limits_on; j++) {
    const int c = m->joint_coord_adr[j];
    if (!m->joint_limited[j] || c < 0 || is_follower(m, j)) continue;
    double v, jac[12], jdx;
    pt_measure(m, w, c, &v, jac, &jdx);
    const double lo = m->joint_limit[2 * j], hi = m->joint_limit[2 * j + 1];
    n += v < lo - EQ_LIM_POS_TOL || v > hi + EQ_LIM_POS_TOL;
  }
  return n;
}

// Approach 2 (damped dynamics) and 4 (Newton from where it has slowed down). 1 = converged,
// 2 = stopped where an enforced limit's coordinate went past its bound (the caller holds it;
// only when stop_at_limits, and not for coordinates past their bounds at the start).
// kick: start with a small velocity (the start is an unstable equilibrium).
static int damped(eq_work *e, int maxsteps, int maxit, int kick, int *steps,
                  int stop_at_limits) {
  const pt_model *m = e->m;
  pt_data *w = e->w;
  *steps = 0;
  if (m->ndof <= 0) return 0;
  const int past0 = stop_at_limits ? past_bound(m, w) : 0;
  ptu_zero(w->qd, m->nq);
  if (pt_partition_build(m, w)) return 0;
  if (kick) {  // along the independent coordinates, alternating signs
    for (int i = 0; i < m->ndof; i++) w->qd[w->indep[i]] = (i % 2 ? -1e-3 : 1e-3);
    pt_kin_bodies(m, w);
    ptu_copy(e->q0, w->q, m->nq);
    if (recover(e, e->q0)) return 0;
  }
  const double h = w->dt > 0 ? w->dt : 1e-3;
  const double c = 0.002 / h;  // 2/s at h = 1 ms; the kinetic damping does the rest
  double ke_prev = 0, acc0 = -1;
  double *qprev = e->q0;
  int tries = 0;
  for (int s = 1; s <= maxsteps && tries < EQ_TRY_MAX; s++) {
    *steps = s;
    frozen_rows(m, w);
    pt_forces(m, w);
    if (pt_accelerations(m, w)) return 0;
    for (int i = 0; i < e->nx; i++) w->ctl_x[i] += h * w->ctl_xdot[i];  // the control states
    double amax = 0;
    for (int i = 0; i < m->ndof; i++) amax = fmax(amax, fabs(w->qdd[w->indep[i]]));
    if (!isfinite(amax)) return 0;
    if (acc0 < 0) acc0 = amax;
    // semi-implicit Euler with the damping -c M x treated implicitly
    ptu_copy(qprev, w->q, m->nq);
    for (int i = 0; i < m->ndof; i++) {
      const int j = w->indep[i];
      w->qd[j] = (w->qd[j] + h * w->qdd[j]) / (1 + h * c);
      w->q[j] += h * w->qd[j];
    }
    if (recover(e, qprev)) {  // back to the last good state
      ptu_copy(w->q, qprev, m->nq);
      return 0;
    }
    double ke = kinetic(m, w);
    if (ke < ke_prev) {  // kinetic damping: stop at the peak of the kinetic energy
      ptu_zero(w->qd, m->nq);
      ke = 0;
    }
    ke_prev = ke;
    track_coords(m, w);
    if (stop_at_limits && past_bound(m, w) > past0) {  // a limit in the way: held (caller)
      initial_multipliers(e);
      return 2;
    }
    if (s % EQ_TRY_EVERY == 0 && (amax <= 0.05 * acc0 || s % (20 * EQ_TRY_EVERY) == 0)) {
      ptu_copy(e->q0, w->q, m->nq);
      ptu_copy(e->qd0, w->qd, m->nq);
      initial_multipliers(e);
      tries++;
      if (newton(e, maxit < EQ_TRY_MAXIT ? maxit : EQ_TRY_MAXIT) && !unstable(e)) return 1;
      ptu_copy(w->q, e->q0, m->nq);
      ptu_copy(w->qd, e->qd0, m->nq);
      ke_prev = 0;
    }
  }
  return 0;
}

pt_equilibrium_result *pt_equilibrium_result_new(const pt_model *m) {
  pt_equilibrium_result *r = calloc(1, sizeof(*r));
  if (!r) return NULL;
  r->nq = m->nq;
  r->ncoord = m->ncoord;
  r->njoint = m->njoint;
  r->nmotion = m->nmotion;
  r->q = calloc((size_t)m->nq + 1, sizeof(double));
  r->coord = calloc((size_t)m->ncoord + 1, sizeof(double));
  r->reaction = calloc(6 * (size_t)m->njoint + 1, sizeof(double));
  r->motion_effort = calloc((size_t)m->nmotion + 1, sizeof(double));
  r->lambda = calloc((size_t)m->ncon + 1, sizeof(double));
  r->ncoupler = m->ncoupler;
  r->coupler_effort = calloc((size_t)m->ncoupler + 1, sizeof(double));
  r->limit_held = calloc((size_t)m->njoint + 1, sizeof(int));
  r->limit_reaction = calloc((size_t)m->njoint + 1, sizeof(double));
  r->limit_notes = calloc(PT_LIMIT_NOTE_MAX * (size_t)m->njoint + 1, 1);
  r->ncontrol_state = m->nctlx;
  r->control_state = calloc((size_t)m->nctlx + 1, sizeof(double));
  r->ninput = m->ninput;
  r->input = calloc((size_t)m->ninput + 1, sizeof(double));
  if (!r->q || !r->coord || !r->reaction || !r->motion_effort || !r->lambda ||
      !r->coupler_effort || !r->limit_held || !r->limit_reaction || !r->limit_notes ||
      !r->control_state || !r->input) {
    pt_equilibrium_result_free(r);
    return NULL;
  }
  return r;
}

void pt_equilibrium_result_free(pt_equilibrium_result *r) {
  if (!r) return;
  free(r->q);
  free(r->coord);
  free(r->reaction);
  free(r->motion_effort);
  free(r->lambda);
  free(r->coupler_effort);
  free(r->limit_held);
  free(r->limit_reaction);
  free(r->limit_notes);
  free(r->control_state);
  free(r->input);
  free(r);
}

static void work_free(eq_work *e) {
  pt_data_free(e->w);
  free(e->hold_joint);
  free(e->A);
  free(e->A2);
  free(e->piv);
  free(e->R);
}

static int work_alloc(const pt_model *m, const pt_data *d, eq_work *e) {
  memset(e, 0, sizeof(*e));
  e->m = m;
  e->nz = m->nv;
  // multipliers: the active rows', the couplers', then the held limits' (sized for all)
  const int nlmax = m->ncon + m->ncoupler + (m->limits_on ? m->nlimit : 0);
  e->nhold = 0;
  e->nl = m->ncon + m->ncoupler;
  e->nx = m->nctlx;
  e->n = m->nv + e->nl + e->nx;
  const size_t n = (size_t)(m->nv + nlmax + e->nx), nq = (size_t)m->nq, nc = (size_t)nlmax;
  e->hold_joint = malloc(sizeof(int) * (2 * (size_t)m->nlimit + 2));
  e->hold_side = e->hold_joint ? e->hold_joint + m->nlimit + 1 : NULL;
  e->w = pt_data_new(m);
  e->A = malloc(sizeof(double) * n * n + 8);
  e->A2 = malloc(sizeof(double) * n * n + 8);
  e->piv = malloc(sizeof(lapack_int) * n + 8);
  e->R = malloc(sizeof(double) * (5 * n + 4 * nq + 2 * nc + 2 * (size_t)e->nx) + 8);
  if (!e->w || !e->A || !e->A2 || !e->piv || !e->R || !e->hold_joint) return PT_ENOMEM;
  e->Rp = e->R + n;
  e->Rm = e->Rp + n;
  e->dx = e->Rm + n;
  e->qsave = e->dx + n;
  e->q0 = e->qsave + nq;
  e->qd0 = e->q0 + nq;
  e->lam = e->qd0 + 2 * nq;  // 4 nq reserved: qsave, q0, qd0 and one spare
  e->lam_try = e->lam + nc;
  e->sv = e->lam_try + nc;
  e->xsave = e->sv + n;  // then the control states at the start (pt_equilibrium)
  return pt_data_copy(m, e->w, d);
}

// Load and length scales of the convergence test.
static void scales(eq_work *e) {
  const pt_model *m = e->m;
  pt_data *w = e->w;
  double r1, r2;
  ptu_zero(e->lam_try, e->nl);
  residual(e, e->lam_try, e->R, &r1, &r2);  // R1 = -Q here
  e->fscale = fmax(1, isfinite(r1) ? r1 : 1);
  for (int k = 0; k < m->nbody; k++)
    e->fscale = fmax(e->fscale, m->body_mass[k] * ptu_norm3(m->gravity));
  e->pscale = 1;
  for (int k = 0; k < m->nbody; k++)
    for (int c = 0; c < 3; c++) e->pscale = fmax(e->pscale, fabs(w->q[7 * k + c]));
}

#define EQ_HOLD_ROUNDS 8     // active-set rounds at most

// The result's notes: a held limit treated as a constraint with its reaction; a coordinate
// on a bound but free (its limit's reaction would pull: released, or the analysis did not
// hold it), said as such.
static void limit_notes(const pt_model *m, pt_equilibrium_result *res, int dropped) {
  size_t n = 0;
  const size_t cap = PT_LIMIT_NOTE_MAX * (size_t)m->njoint + 1;
  res->limit_notes[0] = '\0';
  for (int j = 0; j < m->njoint; j++) {
    const int c = m->joint_coord_adr[j];
    if (!m->joint_limited[j] || c < 0 || is_follower(m, j)) continue;
    const double v = res->coord[c], lo = m->joint_limit[2 * j], hi = m->joint_limit[2 * j + 1];
    const int side = res->limit_held[j] ? res->limit_held[j]
                     : v <= lo + EQ_LIM_POS_TOL ? -1 : v >= hi - EQ_LIM_POS_TOL ? 1 : 0;
    if (!side || n + 1 >= cap) continue;
    const int k = res->limit_held[j]
        ? snprintf(res->limit_notes + n, cap - n,
                   "joint %s at its %s limit %.6g: held by the limit, treated as a constraint "
                   "(reaction %.9g)\n", m->joint_name[j], side < 0 ? "lower" : "upper",
                   side < 0 ? lo : hi, res->limit_reaction[j])
        : snprintf(res->limit_notes + n, cap - n,
                   "joint %s at its %s limit %.6g (coordinate %.9g): free, its limit does not "
                   "push%s\n", m->joint_name[j], side < 0 ? "lower" : "upper",
                   side < 0 ? lo : hi, v,
                   !m->limits_on ? " (limits not enforced)"
                   : dropped ? " (no equilibrium was found with the limits held: every limit "
                               "was then treated as free)" : "");
    if (k > 0) n = n + (size_t)k < cap ? n + (size_t)k : cap - 1;
  }
}

static int is_follower(const pt_model *m, int j) { return pt_coupler_of_joint(m, j) >= 0; }

// The joint limits at or beyond a bound (beyond: strictly past it) at w's positions join the
// held set (multiplier 0). Returns how many joined.
static int hold_new(eq_work *e, int beyond) {
  const pt_model *m = e->m;
  int added = 0;
  for (int j = 0; j < m->njoint && m->limits_on; j++) {
    const int c = m->joint_coord_adr[j];
    if (!m->joint_limited[j] || c < 0 || is_follower(m, j)) continue;
    int held = 0;
    for (int h = 0; h < e->nhold; h++) held |= e->hold_joint[h] == j;
    if (held) continue;
    double v, jac[12], jdx;
    pt_measure(m, e->w, c, &v, jac, &jdx);
    const double lo = m->joint_limit[2 * j], hi = m->joint_limit[2 * j + 1];
    const double tol = beyond ? -EQ_LIM_POS_TOL : EQ_LIM_POS_TOL;
    const int side = v <= lo + tol ? -1 : v >= hi - tol ? 1 : 0;
    if (!side) continue;
    e->hold_joint[e->nhold] = j;
    e->hold_side[e->nhold] = side;
    e->lam[m->ncon + m->ncoupler + e->nhold] = 0;
    e->nhold++;
    added++;
  }
  e->nl = m->ncon + m->ncoupler + e->nhold;
  e->n = e->nz + e->nl + e->nx;
  return added;
}

// Held limits whose reaction pulls (the limit would release) leave the set. The joint force
// of held limit h on its coordinate is -lambda (R1 = J^T lambda - Q = 0). Returns how many.
static int hold_release(eq_work *e) {
  const pt_model *m = e->m;
  const int base = m->ncon + m->ncoupler;
  int k = 0, released = 0;
  for (int h = 0; h < e->nhold; h++) {
    const double f = -e->lam[base + h];
    if (e->hold_side[h] * f > 1e-9 * e->fscale) {  // pulls
      released++;
      continue;
    }
    e->hold_joint[k] = e->hold_joint[h];
    e->hold_side[k] = e->hold_side[h];
    e->lam[base + k] = e->lam[base + h];
    k++;
  }
  e->nhold = k;
  e->nl = base + k;
  e->n = e->nz + e->nl + e->nx;
  return released;
}

// The active set after a Newton solve (ok its result): release the held limits that pull and
// solve again; hold the coordinates that went past a bound and solve again; until the set
// settles. Returns whether the last solve converged with the set settled (a set still
// changing after EQ_HOLD_ROUNDS rounds is no equilibrium with the limits held: the caller
// then treats the limits as free and says so).
static int settle(eq_work *e, int ok, int maxit) {
  if (!e->m->limits_on) return ok;
  for (int round = 0; ok && round < EQ_HOLD_ROUNDS; round++) {
    const int released = hold_release(e);
    if (released) ok = newton(e, maxit);
    const int added = ok ? hold_new(e, 1) : 0;
    if (added) ok = newton(e, maxit);
    if (!released && !added) return ok;
  }
  return 0;
}

int pt_equilibrium(const pt_model *m, const pt_data *d, const pt_equilibrium_options *opt,
                   pt_equilibrium_result *res, pt_error *err) {
  if (!res || res->nq != m->nq || res->ncoord != m->ncoord || res->njoint != m->njoint ||
      res->nmotion != m->nmotion || res->ncoupler != m->ncoupler ||
      res->ncontrol_state != m->nctlx || res->ninput != m->ninput)
    return pt_error_set(err, PT_EINVAL, "equilibrium: result not made for model \"%s\"",
                        m->name);
  if (m->nbody == 0) return pt_error_set(err, PT_EPRECOND, "model has no moving body");
  pt_equilibrium_options o = {0, 0, 0, 0, 0};
  if (opt) o = *opt;
  if (o.max_iterations <= 0) o.max_iterations = EQ_MAXIT;
  if (!(o.tolerance > 0 && isfinite(o.tolerance))) o.tolerance = PT_TOL_EQ_FORCE;
  if (o.max_damped_steps <= 0) o.max_damped_steps = EQ_DAMPED_STEPS;
  eq_work e;
  int rc = work_alloc(m, d, &e);
  if (rc) {
    work_free(&e);
    return pt_error_set(err, rc, "equilibrium: %s", pt_strerror(rc));
  }
  e.tol = o.tolerance;
  scales(&e);
  pt_data *w = e.w;
  double *qstart = e.q0;
  ptu_copy(qstart, w->q, m->nq);
  double *xstart = e.xsave + e.nx;  // (the buffer's spare nx)
  ptu_copy(xstart, w->ctl_x, e.nx);
  initial_multipliers(&e);
  hold_new(&e, 0);  // limits at or beyond a bound at the start: held there
  int steps = 0, ok = settle(&e, newton(&e, o.max_iterations), o.max_iterations);
  // not found with the limits held: solved as before with every limit free (and said so)
  int dropped = !ok && e.nhold > 0;
  if (dropped) {
    e.nhold = 0;
    e.nl = m->ncon + m->ncoupler;
    e.n = e.nz + e.nl + e.nx;
    ptu_copy(w->q, qstart, m->nq);
    ptu_copy(w->ctl_x, xstart, e.nx);
    track_coords(m, w);
    initial_multipliers(&e);
    ok = newton(&e, o.max_iterations);
  }
  int stable = ok ? !unstable(&e) : 0;
  // the damped dynamics run on the Cartesian partitions, which do not hold couplers: Newton
  // alone on a model with couplers
  if ((!ok || (!stable && !o.allow_unstable)) && !o.no_damped && m->ndof > 0 &&
      !m->ncoupler && !e.nhold) {
    // a start that is itself an unstable equilibrium needs a kick to leave it
    const int kick = ok && e.iterations == 0;
    ptu_copy(w->q, qstart, m->nq);
    ptu_copy(w->ctl_x, xstart, e.nx);
    track_coords(m, w);
    ok = damped(&e, o.max_damped_steps, o.max_iterations, kick, &steps, 1);
    stable = ok == 1;
    // the damped motion stopped where a limit's coordinate went past its bound (or found an
    // equilibrium past one): held on that bound and solved again (the active set as above);
    // if that fails, the damped result stands with every limit free, and the notes say so
    if (ok && m->limits_on) {
      ptu_copy(e.q0, w->q, m->nq);
      if (hold_new(&e, 1)) {
        ok = settle(&e, newton(&e, o.max_iterations), o.max_iterations);
        if (ok) {
          stable = !unstable(&e);
        } else {
          dropped = 1;
          e.nhold = 0;
          e.nl = m->ncon + m->ncoupler;
          e.n = e.nz + e.nl + e.nx;
          ptu_copy(w->q, e.q0, m->nq);
          track_coords(m, w);
          initial_multipliers(&e);
          if (stable) {  // the damped dynamics' equilibrium, with every limit free
            ok = newton(&e, o.max_iterations);
            stable = ok;
          } else {  // stopped at a limit: the damped dynamics go on without stopping
            int more = 0;
            ok = damped(&e, o.max_damped_steps, o.max_iterations, 0, &more, 0) == 1;
            steps += more;
            stable = ok;
          }
        }
      }
    }
  }
  // the result at the final positions (rows evaluated there by residual())
  double r1, r2;
  residual(&e, e.lam, e.R, &r1, &r2);
  double rn = 0;
  for (int k = 0; k < m->nbody; k++) {
    const double *p = w->q + 7 * k + 3;
    rn = fmax(rn, fabs(p[0] * p[0] + ptu_dot3(p + 1, p + 1) - 1));
  }
  res->time = w->time;
  ptu_copy(res->q, w->q, m->nq);
  ptu_copy(res->control_state, w->ctl_x, m->nctlx);
  ptu_copy(res->input, w->input, m->ninput);
  for (int i = 0; i < m->ncoord; i++) {
    double jac[12], jdx;
    pt_measure(m, w, i, res->coord + i, jac, &jdx);
  }
  ptu_copy(res->lambda, e.lam, m->ncon);
  // R1 = J^T lambda - Q = 0: the constraint force is -J^T lambda, -lambda_c on the follower
  for (int k = 0; k < m->ncoupler; k++) res->coupler_effort[k] = 0.0 - e.lam[m->ncon + k];
  for (int j = 0; j < m->njoint; j++) res->limit_held[j] = 0, res->limit_reaction[j] = 0;
  for (int h = 0; h < e.nhold; h++) {
    res->limit_held[e.hold_joint[h]] = e.hold_side[h];
    res->limit_reaction[e.hold_joint[h]] = 0.0 - e.lam[m->ncon + m->ncoupler + h];
  }
  limit_notes(m, res, dropped);
  pt_reactions_from(m, w, e.lam, res->reaction);
  for (int i = 0; i < m->nmotion; i++) {
    const int a = m->row_active[m->nrow_joint + i];
    res->motion_effort[i] = a >= 0 ? 0.0 - e.lam[a] : 0;
  }
  res->iterations = e.iterations;
  res->damped_steps = steps;
  res->stable = ok ? stable : -1;
  res->residual_force = r1;
  res->residual_position = fmax(r2, rn);
  res->residual = fmax(r1, res->residual_position);
  rc = PT_OK;
  if (!ok)
    rc = pt_error_set(err, PT_EASSEMBLY,
                      "equilibrium not found for model \"%s\": force residual %.3g, position "
                      "residual %.3g after %d Newton iterations and %d damped steps%s",
                      m->name, r1, res->residual_position, e.iterations, steps,
                      m->ncoupler ? " (a model with couplers: Newton only, from the given "
                                    "state; start nearer)" : "");
  work_free(&e);
  return rc;
}

int pt_equilibrium_apply(const pt_model *m, pt_data *d, const pt_equilibrium_result *res,
                         pt_error *err) {
  if (!res || res->nq != m->nq || res->ncoord != m->ncoord)
    return pt_error_set(err, PT_EINVAL, "equilibrium: result not made for model \"%s\"",
                        m->name);
  for (int i = 0; i < m->nq; i++)
    if (!isfinite(res->q[i]))
      return pt_error_set(err, PT_EINVAL, "equilibrium: result not finite");
  if (res->ncontrol_state != m->nctlx)
    return pt_error_set(err, PT_EINVAL, "equilibrium: result not made for model \"%s\"",
                        m->name);
  for (int i = 0; i < m->nctlx; i++)
    if (!isfinite(res->control_state[i]))
      return pt_error_set(err, PT_EINVAL, "equilibrium: result not finite");
  const size_t nq = (size_t)m->nq;
  double *save = malloc(sizeof(double) * (2 * nq + (size_t)m->ncoord + (size_t)m->nctlx) + 8);
  if (!save) return pt_error_set(err, PT_ENOMEM, "equilibrium: out of memory");
  double *xsave = save + 2 * nq + m->ncoord;
  ptu_copy(save, d->q, m->nq);
  ptu_copy(save + nq, d->qd, m->nq);
  ptu_copy(save + 2 * nq, d->coord_ref, m->ncoord);
  ptu_copy(xsave, d->ctl_x, m->nctlx);
  ptu_copy(d->ctl_x, res->control_state, m->nctlx);
  ptu_copy(d->q, res->q, m->nq);
  ptu_zero(d->qd, m->nq);
  ptu_copy(d->coord_ref, res->coord, m->ncoord);
  // at rest: positions already consistent; velocities from the constraints (motions' rates)
  int rc = pt_set_state(m, d, NULL, 0, NULL, 0, err);
  if (rc) {
    ptu_copy(d->q, save, m->nq);
    ptu_copy(d->qd, save + nq, m->nq);
    ptu_copy(d->coord_ref, save + 2 * nq, m->ncoord);
    ptu_copy(d->ctl_x, xsave, m->nctlx);
    pt_partition_free(d);
    d->acc_valid = 0;
    pt_forward(m, d);
  }
  free(save);
  return rc;
}
