// integrate.c: fixed-step explicit integration of the state-space ODE vdd = f(t, v, vd)
// (seed gcp eq. 18, solved through eq. 21 and the partition) with classic RK4,
// Adams-Bashforth-Moulton 4 in PECE mode (started with RK4) and semi-implicit Euler.
// After each stage the dependent coordinates are recovered: u by Newton on Phi(u, v, t) = 0
// and udot from Phi_u udot = -Phi_v vdot - Phi_t (eq. 10-16).
//
// The integrated variables are v of the cached LU partition, the tangent coordinates z of
// the QR partition (qr_partition.c, eq. 4-9), or a tree's joint coordinates (tree.c); when to
// rebuild a partition or switch between LU and QR is partition_policy.c's decision.
#include "engine.h"
#include "partition_policy.h"
#include "ptu.h"
#include "qr_partition.h"

#define NEWTON_MAXIT 12    // Newton iterations for u (LU) or q (QR) before a stage fails
#define QR_SUBSTEPS_MAX 8  // a QR step that jumped is retaken as 2, 4, 8 substeps

// Full evaluation at a consistent (q, qd, t): kinematics, rows, forces, accelerations.
int pt_eval(const pt_model *m, pt_data *d) {
  d->lambda_stale = 0;
  pt_kin_bodies(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  pt_forces(m, d);
  return pt_accelerations(m, d);
}

// QR stage: z, zd -> q (Newton), qd (eq. 6), accelerations (eq. 7-9). f = (zd, zdd).
static int stage_qr(const pt_model *m, pt_data *d, const double *y, double *f) {
  const int n = m->ndof;
  int it = pt_qr_positions(m, d, y, NEWTON_MAXIT);
  if (it < 0) return it;
  pt_policy_note_qr_stage(d, it);
  int rc = pt_qr_velocities(m, d, y + n);
  if (rc) return rc;
  pt_kin_bodies(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  pt_forces(m, d);
  d->lambda_stale = 0;
  rc = pt_qr_accelerations(m, d);
  if (rc) return rc;
  pt_qr_coords(m, d, f, f + n, f + n);  // f = (z, zdd): z is overwritten next
  ptu_copy(f, y + n, n);
  return PT_OK;
}

// The tree partition (tree.c) is the LU method's partition on a tree in hybrid mode: theta
// integrated, q by forward kinematics.
static int tree_active(const pt_data *d) { return pt_tree_active(d); }

// Tree stage: theta, thetadot -> q, qd exactly (eq. 10-11 by forward kinematics), then the
// accelerations and thetadd. f = (thetadot, thetadd).
static int stage_tree(const pt_model *m, pt_data *d, const double *y, double *f) {
  const int n = m->ndof;
  if (d->tree_fast && d->tree_y_valid && d->tree_kin_held &&
      memcmp(y, d->tree_y, sizeof(double) * 2 * n) == 0) {
    // the state held now (a step's first stage after the inputs changed): its kinematics
    // and inertias stand, only the forces are new
    pt_forces(m, d);
    pt_tree_hold(m, d, y + n);  // couplers and held limits into qfrc (coupler.c)
    pt_tree_aba(m, d, y + n, f + n);
    ptu_copy(f, y + n, n);
    return PT_OK;
  }
  pt_tree_positions(m, d, y);
  pt_tree_velocities(m, d, y + n);
  ptu_copy(d->tree_y, y, 2 * n);
  d->tree_y_valid = 1;
  d->tree_kin_held = 1;  // the inertias follow in either branch below
  if (d->tree_fast) {
    // an intermediate stage needs thetadd only: no rows, no multipliers (tree.c)
    pt_kin_inertias(m, d, 0);
    pt_forces(m, d);
    pt_tree_hold(m, d, y + n);  // reactions of couplers and held limits into qfrc
    pt_tree_aba(m, d, y + n, f + n);
    ptu_copy(f, y + n, n);
    return PT_OK;
  }
  if (d->tree_aba) {
    // a state a caller reads: rows (residuals), xdd and qdd by the articulated-body algorithm
    // instead of W (tree.c); rot and x are forward kinematics. The multipliers wait until
    // someone asks (pt_lambda, pt_joint_reactions).
    pt_kin_inertias(m, d, 1);
    pt_joint_rows(m, d);
    pt_forces(m, d);
    pt_tree_hold(m, d, y + n);
    pt_tree_aba(m, d, y + n, f + n);
    d->lambda_stale = 1;
    pt_qdd_from_xdd(m, d);
    ptu_copy(f, y + n, n);
    return PT_OK;
  }
  int rc;
  if (d->lim_nactive || d->cpl_on) {  // pt_eval with the held reactions added to the forces
    d->lambda_stale = 0;
    pt_kin_bodies(m, d);
    pt_joint_rows(m, d);
    pt_motion_rows(m, d);
    pt_forces(m, d);
    pt_tree_hold(m, d, y + n);
    rc = pt_accelerations(m, d);
  } else {
    rc = pt_eval(m, d);
  }
  if (rc) return rc;
  ptu_copy(f, y + n, n);
  pt_tree_coords(m, d, NULL, NULL, f + n);
  return PT_OK;
}

// f(t, y) for y = (v, vd) or (z, zd): set the independent coordinates, recover the dependent
// ones, and evaluate the accelerations. f = (vd, vdd).
static int stage(const pt_model *m, pt_data *d, double t, const double *y, double *f) {
  const int n = m->ndof;
  const double tau = t - d->time;  // from the state held now to the stage's time
  d->time = t;
  if (tree_active(d)) {
    int rc = stage_tree(m, d, y, f);
    if (rc) return rc;
  } else if (d->part_method == PT_PART_QR) {
    // the same Taylor start as on the LU side below, for all of q (Newton then fixes z)
    if (tau != 0) {
      const double t2 = d->acc_valid ? 0.5 * tau * tau : 0;
      for (int k = 0; k < m->nq; k++) d->q[k] += tau * d->qd[k] + t2 * d->qdd[k];
    }
    int rc = stage_qr(m, d, y, f);
    if (rc) return rc;
  } else {
    // Newton starts from u predicted by its Taylor expansion (u + tau u' + tau^2 u''/2 at the
    // state held now): an O(tau^3) guess instead of O(tau), a stage half a step away on a fast
    // arm then converges in one or two iterations instead of five.
    if (tau != 0) {
      const double t2 = d->acc_valid ? 0.5 * tau * tau : 0;
      for (int i = 0; i < m->ncq; i++) {
        const int k = d->dep[i];
        d->q[k] += tau * d->qd[k] + t2 * d->qdd[k];
      }
    }
    for (int i = 0; i < n; i++) {
      d->q[d->indep[i]] = y[i];
      d->qd[d->indep[i]] = y[n + i];
    }
    int it = pt_solve_positions(m, d, NEWTON_MAXIT);
    if (it < 0) return it;
    int rc = pt_solve_velocities(m, d);
    if (rc) return rc;
    pt_policy_note_lu_stage(d, it);
    rc = pt_eval(m, d);
    if (rc) return rc;
    for (int i = 0; i < n; i++) {
      f[i] = d->qd[d->indep[i]];
      f[n + i] = d->qdd[d->indep[i]];
    }
  }
  for (int i = 0; i < 2 * n; i++)
    if (!isfinite(f[i])) return PT_EDIVERGED;
  d->acc_valid = 1;
  return PT_OK;
}

// y = a + h b (2 ndof)
static void axpy(double *y, const double *a, double h, const double *b, int n) {
  for (int i = 0; i < n; i++) y[i] = a[i] + h * b[i];
}

static void current_y(const pt_model *m, const pt_data *d, double *y) {
  const int n = m->ndof;
  if (tree_active(d)) {
    if (d->tree_y_valid)
      ptu_copy(y, d->tree_y, 2 * n);
    else
      pt_tree_coords(m, d, y, y + n, NULL);
    return;
  }
  if (d->part_method == PT_PART_QR) {
    pt_qr_coords(m, d, y, y + n, NULL);
    return;
  }
  for (int i = 0; i < n; i++) {
    y[i] = d->q[d->indep[i]];
    y[n + i] = d->qd[d->indep[i]];
  }
}

// f at the step start: reuse the accelerations of the last evaluation when still valid.
static int start_f(const pt_model *m, pt_data *d, const double *y0, double *f) {
  const int n = m->ndof;
  if (d->acc_valid) {
    if (tree_active(d)) {
      ptu_copy(f, y0 + n, n);
      pt_tree_coords(m, d, NULL, NULL, f + n);
      return PT_OK;
    }
    if (d->part_method == PT_PART_QR) {
      pt_qr_coords(m, d, f + n, f, f + n);  // zd, then zdd over the z slot we do not need
      return PT_OK;
    }
    for (int i = 0; i < n; i++) {
      f[i] = d->qd[d->indep[i]];
      f[n + i] = d->qdd[d->indep[i]];
    }
    return PT_OK;
  }
  return stage(m, d, d->time, y0, f);
}
static int step_rk4(const pt_model *m, pt_data *d, double t0, double h, double *fnew) {
  const int n2 = 2 * m->ndof;
  double *y0 = d->y, *ys = d->ystage, *k1 = d->k, *k2 = k1 + n2, *k3 = k2 + n2, *k4 = k3 + n2;
  // k1 (when inputs changed since the last evaluation) to k4 by the articulated-body
  // algorithm alone on a tree; the step's end point in full (rows, qdd: what a caller reads)
  d->tree_fast = d->tree_aba;
  int rc = start_f(m, d, y0, k1);
  if (!rc) {
    axpy(ys, y0, h / 2, k1, n2);
    rc = stage(m, d, t0 + h / 2, ys, k2);
  }
  if (!rc) {
    axpy(ys, y0, h / 2, k2, n2);
    rc = stage(m, d, t0 + h / 2, ys, k3);
  }
  if (!rc) {
    axpy(ys, y0, h, k3, n2);
    rc = stage(m, d, t0 + h, ys, k4);
  }
  d->tree_fast = 0;
  if (rc) return rc;
  for (int i = 0; i < n2; i++) ys[i] = y0[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  return stage(m, d, t0 + h, ys, fnew);
}

// Adams-Bashforth-Moulton 4, PECE: history f_n .. f_n-3 in k[4..7].
static int step_abm4(const pt_model *m, pt_data *d, double t0, double h) {
  const int n2 = 2 * m->ndof;
  double *hist = d->k + 4 * n2, *f0 = hist, *f1 = hist + n2, *f2 = hist + 2 * n2,
         *f3 = hist + 3 * n2, *fp = d->ysum;
  double *y0 = d->y, *ys = d->ystage;
  int rc;
  if (d->abm_count < 4) {  // starter: RK4, recording f at each new point
    if (d->abm_count == 0) {
      rc = start_f(m, d, y0, f0);
      if (rc) return rc;
      d->abm_count = 1;
    }
    rc = step_rk4(m, d, t0, h, fp);
    if (rc) return rc;
  } else {
    // f_n when inputs changed since it was computed, and the predictor's evaluation: the
    // articulated-body algorithm alone on a tree (as RK4's intermediate stages)
    d->tree_fast = d->tree_aba;
    if (!d->acc_valid) rc = start_f(m, d, y0, f0);
    else rc = PT_OK;
    if (!rc) {
      for (int i = 0; i < n2; i++)
        ys[i] = y0[i] + h / 24 * (55 * f0[i] - 59 * f1[i] + 37 * f2[i] - 9 * f3[i]);
      rc = stage(m, d, t0 + h, ys, fp);  // predict, evaluate
    }
    d->tree_fast = 0;
    if (rc) return rc;
    for (int i = 0; i < n2; i++)
      ys[i] = y0[i] + h / 24 * (9 * fp[i] + 19 * f0[i] - 5 * f1[i] + f2[i]);
    rc = stage(m, d, t0 + h, ys, fp);  // correct, evaluate
    if (rc) return rc;
  }
  memmove(f1, f0, sizeof(double) * (size_t)(3 * n2));
  ptu_copy(f0, fp, n2);
  if (d->abm_count < 4) d->abm_count++;
  return PT_OK;
}

// Semi-implicit (symplectic) Euler: vd += h vdd; v += h vd.
static int step_euler(const pt_model *m, pt_data *d, double t0, double h) {
  const int n = m->ndof;
  double *y0 = d->y, *ys = d->ystage, *f = d->k;
  d->tree_fast = d->tree_aba;  // as RK4's first stage
  int rc = start_f(m, d, y0, f);
  d->tree_fast = 0;
  if (rc) return rc;
  for (int i = 0; i < n; i++) {
    ys[n + i] = y0[n + i] + h * f[n + i];
    ys[i] = y0[i] + h * ys[n + i];
  }
  return stage(m, d, t0 + h, ys, d->k + 2 * n);
}

static void save_state(const pt_model *m, pt_data *d) {
  ptu_copy(d->q_save, d->q, m->nq);
  ptu_copy(d->qd_save, d->qd, m->nq);
  if (d->tree_y_valid) ptu_copy(d->tree_y_save, d->tree_y, 2 * m->ndof);
}

static void restore_state(const pt_model *m, pt_data *d, double t0) {
  d->tree_kin_held = 0;  // rot, x, inertia_g are a failed stage's
  ptu_copy(d->q, d->q_save, m->nq);
  ptu_copy(d->qd, d->qd_save, m->nq);
  if (d->tree_y_valid) ptu_copy(d->tree_y, d->tree_y_save, 2 * m->ndof);
  d->time = t0;
  d->acc_valid = 0;
}

static int try_step(const pt_model *m, pt_data *d, double t0, double h) {
  current_y(m, d, d->y);
  switch (d->integrator) {
  case PT_INT_ABM4:
    return step_abm4(m, d, t0, h);
  case PT_INT_EULER:
    return step_euler(m, d, t0, h);
  case PT_INT_RK4:
  default:
    return step_rk4(m, d, t0, h, d->ysum);
  }
}

// One attempt at the step with the active partition, with one retry after rebuilding it at
// the step start; in hybrid mode an LU failure retries with QR.
static int attempt(const pt_model *m, pt_data *d, double t0, double h, int *retried) {
  d->part_suspect = 0;
  d->w_singular = 0;
  d->w_ratio_step = INFINITY;
  int rc = try_step(m, d, t0, h);
  if (!rc) return PT_OK;
  restore_state(m, d, t0);
  if (tree_active(d)) return rc;  // a tree in its joint coordinates: no partition to retry with
  *retried = 1;
  rc = pt_policy_retry(m, d);
  if (!rc) {
    d->part_suspect = 0;
    rc = try_step(m, d, t0, h);
  }
  if (rc) restore_state(m, d, t0);
  return rc;
}

static int finish_step(const pt_model *m, pt_data *d, double t0, double h) {
  for (int i = 0; i < m->nq; i++)
    if (!isfinite(d->qd[i]) || !isfinite(d->qdd[i])) return PT_EDIVERGED;
  // time = base + n h rather than repeated addition (which drifts: 8000 steps of 1 ms gave
  // 8.0000000000010054); rebase when the step size or the time was changed in between
  if (d->time_base + (double)(d->nstep - d->nstep_base) * h != t0 || h != d->dt_base) {
    d->time_base = t0;
    d->nstep_base = d->nstep;
    d->dt_base = h;
  }
  d->nstep++;
  d->time = d->time_base + (double)(d->nstep - d->nstep_base) * h;
  pt_outputs(m, d);
  return PT_OK;
}

// A QR step that failed or made the total energy jump has crossed the bifurcation of a
// singular position onto the other branch (the parallelogram four-bar folding: with ABM4 at
// 1 ms after about 312 s, 60 % more energy, then divergence). It is taken again from the step
// start as 2, then 4, then 8 substeps, each a restarted multistep (RK4: a multistep method
// restarts whenever its coordinates or its step change, as it does after every LU or QR
// build), until one passes without a jump; the multistep restarts once more after them (its
// history would hold substeps). Allocates nothing. Returns the last attempt's code.
static int qr_substeps(const pt_model *m, pt_data *d, double t0, double h, int64_t nstep0,
                       int *retried) {
  int rc = PT_OK;
  d->counters.qr_retakes++;
  for (int ns = 2; ns <= QR_SUBSTEPS_MAX; ns *= 2) {
    restore_state(m, d, t0);
    d->nstep = nstep0;
    rc = PT_OK;
    for (int k = 0; k < ns && !rc; k++) {
      d->abm_count = 0;
      rc = attempt(m, d, t0 + k * (h / ns), h / ns, retried);
    }
    d->abm_count = 0;
    if (!rc) rc = finish_step(m, d, t0, h);
    if (!rc && !pt_policy_energy_jump(d)) return PT_OK;
  }
  return rc;
}

// Joint limits at the step's end (limits.c): a coordinate beyond a bound is put back on it with
// the impulse of Newton's restitution law; the state is then evaluated again (outputs, and f
// for the next step) and a multistep integrator restarts, its history being from before the
// impulse (as after a partition change).
// Couplers (coupler.c) first: a follower that drifted is put back on its coupler.
static int limits_after_step(const pt_model *m, pt_data *d) {
  if ((!d->lim_on && !d->cpl_on) || !tree_active(d) || !d->tree_y_valid) return PT_OK;
  double *y = d->ystage;
  ptu_copy(y, d->tree_y, 2 * m->ndof);
  int what = pt_couplers_after_step(m, d, y) ? 2 : 0;
  if (d->lim_on) {
    const int lw = pt_limits_after_step(m, d, y);
    if (lw) what = lw;
  }
  if (!what) return PT_OK;
  if (what == 1) d->abm_count = 0;
  d->tree_fast = 0;
  return stage(m, d, d->time, y, d->ysum);
}

int pt_step(const pt_model *m, pt_data *d) {
  const double t0 = d->time, h = d->dt;
  int rc, retried = 0;
  if (!d->part_valid) {
    rc = pt_policy_build_initial(m, d);
    if (rc) return rc;
  }
  save_state(m, d);
  const int64_t nstep0 = d->nstep;
  rc = attempt(m, d, t0, h, &retried);
  if (!rc) rc = limits_after_step(m, d);
  if (!rc) rc = finish_step(m, d, t0, h);
  // an energy jump taken with LU: redo the step with QR (hybrid)
  if (!rc && d->part_mode == PT_MODE_HYBRID && d->part_method == PT_PART_LU &&
      !tree_active(d) && pt_policy_energy_jump(d)) {
    restore_state(m, d, t0);
    d->nstep = nstep0;
    rc = pt_policy_to_qr(m, d);
    if (!rc) rc = attempt(m, d, t0, h, &retried);
    if (!rc) rc = finish_step(m, d, t0, h);
  }
  if (d->part_method == PT_PART_QR && (rc || pt_policy_energy_jump(d)))
    rc = qr_substeps(m, d, t0, h, nstep0, &retried);
  if (rc) {
    restore_state(m, d, t0);
    d->nstep = nstep0;
    d->counters.failures++;
    return rc;
  }
  rc = pt_policy_after_step(m, d, retried);
  // the rebuilds re-evaluated rows only; accelerations at this state are still valid
  d->counters.method = d->part_method == PT_PART_QR;
  if (rc) d->counters.failures++;
  return rc;
}

int pt_forward(const pt_model *m, pt_data *d) {
  int rc;
  if (!d->part_valid) {
    rc = pt_policy_build_initial(m, d);
    if (rc) return rc;
  }
  if (tree_active(d)) {
    // as Newton and the velocity solve do for LU: the dependent coordinates from the
    // independent ones (the joint coordinates measured in the state held now)
    const int n = m->ndof;
    double *y = d->ystage;
    pt_kin_bodies(m, d);
    pt_tree_coords(m, d, y, y + n, NULL);
    if (d->cpl_on) {  // followers from their leaders, then a stage with the couplers held
      pt_couplers_fix(m, y, n, d->cpl_dof);
      d->tree_fast = 0;
      rc = stage_tree(m, d, y, d->ysum);
    } else {
      pt_tree_positions(m, d, y);
      pt_tree_velocities(m, d, y + n);
      ptu_copy(d->tree_y, y, 2 * n);
      d->tree_y_valid = 1;
      rc = pt_eval(m, d);  // rot, x, inertias at tree_y
    }
    d->tree_kin_held = rc == PT_OK;
  } else if (d->part_method == PT_PART_QR) {
    double *z = d->ystage, *zd = z + m->ndof;
    pt_qr_coords(m, d, z, zd, NULL);
    int it = pt_qr_positions(m, d, z, NEWTON_MAXIT);
    if (it < 0) return it;
    rc = pt_qr_velocities(m, d, zd);
    if (rc) return rc;
    pt_kin_bodies(m, d);
    pt_joint_rows(m, d);
    pt_motion_rows(m, d);
    pt_forces(m, d);
    d->lambda_stale = 0;
    rc = pt_qr_accelerations(m, d);
  } else {
    int it = pt_solve_positions(m, d, NEWTON_MAXIT);
    if (it < 0) return it;
    rc = pt_solve_velocities(m, d);
    if (!rc) rc = pt_eval(m, d);
  }
  if (rc) return rc;
  d->acc_valid = 1;
  d->counters.method = d->part_method == PT_PART_QR;
  pt_outputs(m, d);
  d->energy_prev = d->energy_kin + d->energy_pot;
  return PT_OK;
}

// ---- public settings ------------------------------------------------------------------------

int pt_partition_method(const pt_data *d) { return d->part_method == PT_PART_QR; }

int pt_set_partition_mode(pt_data *d, int mode) {
  if (mode != PT_MODE_HYBRID && mode != PT_MODE_LU && mode != PT_MODE_QR) return PT_EINVAL;
  // couplers are held on the tree partition only (coupler.c)
  if (mode != PT_MODE_HYBRID && d->model->ncoupler > 0) return PT_EPRECOND;
  // a tree's data takes its dense Cartesian work now, outside the step
  if (mode != PT_MODE_HYBRID && pt_data_dense(d->model, d)) return PT_ENOMEM;
  if (mode != d->part_mode && d->tree_ok) {
    // the tree partition starts or stops: the next step builds the active one afresh; joint
    // limits are enforced on the tree partition only (limits.c)
    d->part_valid = 0;
    d->tree_y_valid = 0;
    pt_limits_clear(d);
  }
  d->part_mode = mode;
  if ((mode == PT_MODE_LU && d->part_method == PT_PART_QR) ||
      (mode == PT_MODE_QR && d->part_method == PT_PART_LU))
    d->part_valid = 0;  // rebuilt with the forced method at the next step
  return PT_OK;
}

int pt_set_switch_back(pt_model *m, int steps) {
  if (steps < 1 || steps > 100000) return PT_EINVAL;
  m->switch_back_steps = steps;
  return PT_OK;
}
