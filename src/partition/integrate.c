// integrate.c: fixed-step explicit integration of the state-space ODE vdd = f(t, v, vd)
// (seed gcp eq. 18, solved through eq. 21 and the partition) with classic RK4,
// Adams-Bashforth-Moulton 4 in PECE mode (started with RK4) and semi-implicit Euler.
// After each stage the dependent coordinates are recovered: u by Newton on Phi(u, v, t) = 0
// and udot from Phi_u udot = -Phi_v vdot - Phi_t (eq. 10-16).
//
// The integrated variables are v of the cached LU partition, the tangent coordinates z of
// the QR partition (qr_partition.c, eq. 4-9), both behind one interface (partition.h), or a
// tree's joint coordinates (tree.c); when to rebuild a partition or switch between LU and QR
// is partition_policy.c's decision. The control elements' states (issue 26) follow them in
// y = (v, vdot, X), their derivatives in f = (vdot, vddot, Xdot): every stage of every
// integrator carries them (control_stage.c evaluates Xdot with the forces of each stage).
#include "engine.h"
#include "partition.h"
#include "loop.h"
#include "partition_policy.h"
#include "ptu.h"
#include "tolerances.h"

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

// Evaluation at a consistent (q, qd, t) with the accelerations of partition p: kinematics,
// rows, forces, then W (LU, pt_eval) or B (QR, eq. 7-9); the partitions in joint coordinates
// of a closed loop evaluate their own way (loop_partition.c).
static int eval_partition(const pt_partition_class *p, const pt_model *m, pt_data *d) {
  if (p->evaluate) return p->evaluate(m, d);
  d->lambda_stale = 0;
  pt_kin_bodies(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  pt_forces(m, d);
  return p->accelerations(m, d);
}

// Stage of a Cartesian partition: y = (v, vd) or (z, zd) -> q (Newton), qd (eq. 10-11 or
// hybrid eq. 6), accelerations. f = (yd, ydd).
static int stage_partition(const pt_model *m, pt_data *d, const double *y, double *f) {
  const pt_partition_class *p = pt_partition_of(d);
  const int n = m->ndof;
  const int it = p->recover(m, d, y, NEWTON_MAXIT);
  if (it < 0) return it;
  pt_policy_note_stage(d, it);
  int rc = eval_partition(p, m, d);
  if (!rc && d->lim_nactive) rc = pt_loop_limits_hold(m, d, p);  // (loop_limits.c)
  if (rc) return rc;
  ptu_copy(f, y + n, n);
  p->coords(m, d, NULL, NULL, f + n);
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
    // couplers, held limits
    if (pt_tree_dynamics(m, d, y + n, f + n) < 0) return PT_ESINGULAR;
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
    // couplers, held limits
    if (pt_tree_dynamics(m, d, y + n, f + n) < 0) return PT_ESINGULAR;
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
    if (pt_tree_dynamics(m, d, y + n, f + n) < 0) return PT_ESINGULAR;
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
    if (pt_tree_hold(m, d, y + n) < 0) return PT_ESINGULAR;
    rc = pt_accelerations(m, d);
  } else {
    rc = pt_eval(m, d);
  }
  if (rc) return rc;
  ptu_copy(f, y + n, n);
  pt_tree_coords(m, d, NULL, NULL, f + n);
  return PT_OK;
}

// The control states' part of y (after the mechanism's 2 ndof): into the data, out of it.
static void ctl_from_y(const pt_model *m, pt_data *d, const double *y) {
  if (m->nctlx) ptu_copy(d->ctl_x, y + 2 * m->ndof, m->nctlx);
}
static void ctl_to_y(const pt_model *m, const pt_data *d, double *y) {
  if (m->nctlx) ptu_copy(y + 2 * m->ndof, d->ctl_x, m->nctlx);
}

// f(t, y) for y = (v, vd, X) or (z, zd, X): set the independent coordinates and the control
// states, recover the dependent coordinates, and evaluate the accelerations (the forces
// evaluate the signals and Xdot). f = (vd, vdd, Xdot).
static int stage(const pt_model *m, pt_data *d, double t, const double *y, double *f) {
  const int n = m->ndof;
  const double tau = t - d->time;  // from the state held now to the stage's time
  d->time = t;
  ctl_from_y(m, d, y);
  if (tree_active(d)) {
    int rc = stage_tree(m, d, y, f);
    if (rc) return rc;
  } else {
    // Newton starts from q predicted by its Taylor expansion (q + tau q' + tau^2 q''/2 at the
    // state held now): an O(tau^3) guess instead of O(tau), a stage half a step away on a fast
    // arm then converges in one or two iterations instead of five. (The LU partition then
    // sets v from y; the QR partition's Newton fixes z.)
    const pt_partition_class *p = pt_partition_of(d);
    if (tau != 0 && p->predict) {
      p->predict(m, d, tau);
    } else if (tau != 0) {
      const double t2 = d->acc_valid ? 0.5 * tau * tau : 0;
      for (int k = 0; k < m->nq; k++) d->q[k] += tau * d->qd[k] + t2 * d->qdd[k];
    }
    int rc = stage_partition(m, d, y, f);
    if (rc) return rc;
  }
  if (m->nctlx) ptu_copy(f + 2 * n, d->ctl_xdot, m->nctlx);
  for (int i = 0; i < pt_ny(m); i++)
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
  ctl_to_y(m, d, y);
  if (tree_active(d)) {
    if (d->tree_y_valid)
      ptu_copy(y, d->tree_y, 2 * n);
    else
      pt_tree_coords(m, d, y, y + n, NULL);
    return;
  }
  pt_partition_of(d)->coords(m, d, y, y + n, NULL);
}

// f at the step start: reuse the accelerations of the last evaluation when still valid.
static int start_f(const pt_model *m, pt_data *d, const double *y0, double *f) {
  const int n = m->ndof;
  if (d->acc_valid) {
    if (m->nctlx) ptu_copy(f + 2 * n, d->ctl_xdot, m->nctlx);
    if (tree_active(d)) {
      ptu_copy(f, y0 + n, n);
      pt_tree_coords(m, d, NULL, NULL, f + n);
      return PT_OK;
    }
    pt_partition_of(d)->coords(m, d, NULL, f, f + n);
    return PT_OK;
  }
  return stage(m, d, d->time, y0, f);
}
// One RK4 step from y0 = d->y with k1 = f(t0, y0) already in d->k (the first n2 entries).
static int rk4_from_k1(const pt_model *m, pt_data *d, double t0, double h, double *fnew) {
  const int n2 = pt_ny(m);
  double *y0 = d->y, *ys = d->ystage, *k1 = d->k, *k2 = k1 + n2, *k3 = k2 + n2, *k4 = k3 + n2;
  // k2 to k4 by the articulated-body algorithm alone on a tree (and without the rows nobody
  // reads on a closed loop); the step's end point in full (rows, qdd: what a caller reads)
  d->tree_fast = d->tree_aba;
  d->stage_inner = 1;
  axpy(ys, y0, h / 2, k1, n2);
  int rc = stage(m, d, t0 + h / 2, ys, k2);
  if (!rc) {
    axpy(ys, y0, h / 2, k2, n2);
    rc = stage(m, d, t0 + h / 2, ys, k3);
  }
  if (!rc) {
    axpy(ys, y0, h, k3, n2);
    rc = stage(m, d, t0 + h, ys, k4);
  }
  d->tree_fast = 0;
  d->stage_inner = 0;
  if (rc) return rc;
  for (int i = 0; i < n2; i++) ys[i] = y0[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  return stage(m, d, t0 + h, ys, fnew);
}

// k1 = f(t0, y0) into d->k: by the articulated-body algorithm alone on a tree when the inputs
// changed since the last evaluation, else the accelerations held.
static int rk4_k1(const pt_model *m, pt_data *d) {
  d->tree_fast = d->tree_aba;
  d->stage_inner = 1;
  const int rc = start_f(m, d, d->y, d->k);
  d->tree_fast = 0;
  d->stage_inner = 0;
  return rc;
}

static int step_rk4(const pt_model *m, pt_data *d, double t0, double h, double *fnew) {
  const int rc = rk4_k1(m, d);
  return rc ? rc : rk4_from_k1(m, d, t0, h, fnew);
}

// How many equal substeps an RK4 step on the tree partition takes (issue 10, item 8). RK4's
// local error in an angle grows with the fifth power of the angle it turns through in one
// step, and its region of absolute stability ends near |lambda h| = 2.8: a wrist spinning at
// 2000 rad/s turns 2 rad per 1 ms step, and an arm passing its stretched configuration with
// its distal links spinning exchanges angular momentum between the aligned joints with joint
// accelerations of 1e5 rad/s^2 or more for a few steps (thetadd h^2 = 0.1-0.3 rad) while the
// rates stay moderate. Both are measured at the step start in the integrated variables
// themselves (y0 = (theta, thetadot), k1 = (thetadot, thetadd)):
//   omega = max |thetadot_i| + sqrt(max |thetadd_i|)   over the angle coordinates,
// and the step is taken as ceil(omega h / PT_SPIN_OMEGA_H) substeps of h / k with the inputs
// held, at most m->spin_substeps_max (fixed at load). Ordinary motion (omega h below 0.5:
// under 500 rad/s and 2.5e5 rad/s^2 at 1 ms) takes one step, as before, at the cost of this
// one pass over the coordinates. Not for ABM4 (its history is at the step h) or Euler.
// Joint limits and couplers act through their hold forces in every substep's stages; a bound
// crossed, an impact and the couplers' drift correction are resolved at the end of the whole
// step (limits_after_step), as for an unsplit step.
static int spin_substeps(const pt_model *m, const pt_data *d, const double *y0,
                         const double *k1, double h) {
  if (m->spin_substeps_max <= 1 || !tree_active(d)) return 1;
  const int n = m->ndof;
  double w = 0, a = 0;
  for (int i = 0; i < n; i++) {
    if (m->meas_type[d->tree_coord[i]] != PT_MEAS_ANGLE) continue;
    w = fmax(w, fabs(y0[n + i]));
    a = fmax(a, fabs(k1[n + i]));
  }
  const double wh = (w + sqrt(a)) * h;
  if (!(wh > PT_SPIN_OMEGA_H)) return 1;  // (not finite: the stage that sees it fails)
  const double k = ceil(wh / PT_SPIN_OMEGA_H);
  return k >= m->spin_substeps_max ? m->spin_substeps_max : (int)k;
}

// RK4 as the integrator: on the tree partition a fast step is taken as substeps
// (spin_substeps); each substep after the first starts from the previous one's full end
// point, whose accelerations start_f reuses.
static int step_rk4_sub(const pt_model *m, pt_data *d, double t0, double h, double *fnew) {
  int rc = rk4_k1(m, d);
  if (rc) return rc;
  const int ns = spin_substeps(m, d, d->y, d->k, h);
  d->counters.spin_substeps += ns - 1;
  d->counters.spin_substeps_last = ns;
  if (ns == 1) return rk4_from_k1(m, d, t0, h, fnew);
  const double hs = h / ns;
  for (int s = 0; s < ns && !rc; s++) {
    if (s > 0) {
      current_y(m, d, d->y);
      rc = rk4_k1(m, d);
    }
    if (!rc) rc = rk4_from_k1(m, d, t0 + s * hs, hs, fnew);
  }
  return rc;
}

// Adams-Bashforth-Moulton 4, PECE: history f_n .. f_n-3 in k[4..7].
static int step_abm4(const pt_model *m, pt_data *d, double t0, double h) {
  const int n2 = pt_ny(m);
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
    d->stage_inner = 1;
    if (!d->acc_valid) rc = start_f(m, d, y0, f0);
    else rc = PT_OK;
    if (!rc) {
      for (int i = 0; i < n2; i++)
        ys[i] = y0[i] + h / 24 * (55 * f0[i] - 59 * f1[i] + 37 * f2[i] - 9 * f3[i]);
      rc = stage(m, d, t0 + h, ys, fp);  // predict, evaluate
    }
    d->tree_fast = 0;
    d->stage_inner = 0;
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

// Semi-implicit (symplectic) Euler: vd += h vdd; v += h vd; the control states X += h Xdot.
static int step_euler(const pt_model *m, pt_data *d, double t0, double h) {
  const int n = m->ndof, ny = pt_ny(m);
  double *y0 = d->y, *ys = d->ystage, *f = d->k;
  d->tree_fast = d->tree_aba;  // as RK4's first stage
  d->stage_inner = 1;
  int rc = start_f(m, d, y0, f);
  d->tree_fast = 0;
  d->stage_inner = 0;
  if (rc) return rc;
  for (int i = 0; i < n; i++) {
    ys[n + i] = y0[n + i] + h * f[n + i];
    ys[i] = y0[i] + h * ys[n + i];
  }
  for (int i = 2 * n; i < ny; i++) ys[i] = y0[i] + h * f[i];
  return stage(m, d, t0 + h, ys, d->k + ny);
}

static void save_state(const pt_model *m, pt_data *d) {
  ptu_copy(d->q_save, d->q, m->nq);
  ptu_copy(d->qd_save, d->qd, m->nq);
  ptu_copy(d->loop_s_save, d->loop_s, m->nls);  // a closed loop's joint coordinates (loop.h)
  ptu_copy(d->loop_s_save + m->nls, d->loop_sd, m->nls);
  ptu_copy(d->ctl_x_save, d->ctl_x, m->nctlx);
  if (d->tree_y_valid) ptu_copy(d->tree_y_save, d->tree_y, 2 * m->ndof);
  for (int k = 0; k < d->lim_n; k++) d->lim_state_save[k] = d->lim_state[k];
  d->lim_nactive_save = d->lim_nactive;
}

static void restore_state(const pt_model *m, pt_data *d, double t0) {
  d->tree_kin_held = 0;  // rot, x, inertia_g are a failed stage's
  ptu_copy(d->q, d->q_save, m->nq);
  ptu_copy(d->qd, d->qd_save, m->nq);
  ptu_copy(d->loop_s, d->loop_s_save, m->nls);
  ptu_copy(d->loop_sd, d->loop_s_save + m->nls, m->nls);
  d->loop_held = 0;       // factors of a failed or discarded stage
  d->loop_qr_exact = 0;
  ptu_copy(d->ctl_x, d->ctl_x_save, m->nctlx);
  if (d->tree_y_valid) ptu_copy(d->tree_y, d->tree_y_save, 2 * m->ndof);
  for (int k = 0; k < d->lim_n; k++) d->lim_state[k] = d->lim_state_save[k];  // held limits
  d->lim_nactive = d->lim_nactive_save;
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
    return step_rk4_sub(m, d, t0, h, d->ysum);
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
  if (rc && pt_loop_on(d)) {  // a closed loop in joint coordinates: the Cartesian partitions
    rc = pt_policy_cartesian(m, d);
    if (!rc) rc = try_step(m, d, t0, h);
    if (rc) restore_state(m, d, t0);
  }
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

static int limits_after_step(const pt_model *m, pt_data *d);

// A QR step that failed or made the total energy jump has crossed the bifurcation of a
// singular position onto the other branch (the parallelogram four-bar folding: with ABM4 at
// 1 ms after about 312 s, 60 % more energy, then divergence). It is taken again from the step
// start as 2, then 4, then 8 substeps, each a restarted multistep (RK4: a multistep method
// restarts whenever its coordinates or its step change, as it does after every LU or QR
// build), until one passes without a jump; the multistep restarts once more after them (its
// history would hold substeps). Allocates nothing. Returns the last attempt's code. As with
// spin_substeps, a bound crossed inside a substep is resolved at the end of the whole step.
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
    if (!rc) rc = limits_after_step(m, d);
    if (!rc) rc = finish_step(m, d, t0, h);
    if (!rc && (d->lim_touched || !pt_policy_energy_jump(d))) return PT_OK;
  }
  return rc;
}

// Joint limits at the step's end (limits.c): a coordinate beyond a bound is put back on it with
// the impulse of Newton's restitution law; the state is then evaluated again (outputs, and f
// for the next step) and a multistep integrator restarts, its history being from before the
// impulse (as after a partition change).
// Couplers (coupler.c) first: a follower that drifted is put back on its coupler.
static int limits_after_step(const pt_model *m, pt_data *d) {
  d->lim_touched = 0;
  if (d->lim_on && !tree_active(d)) {  // the LU/QR partitions (loop_limits.c)
    double *y = d->ystage;
    const int what = pt_loop_limits_after_step(m, d, pt_partition_of(d), y);
    if (what <= 0) return what;
    if (what == 1) d->abm_count = 0;
    ctl_to_y(m, d, y);
    return stage(m, d, d->time, y, d->ysum);
  }
  if ((!d->lim_on && !d->cpl_on) || !tree_active(d) || !d->tree_y_valid) return PT_OK;
  double *y = d->ystage;
  ptu_copy(y, d->tree_y, 2 * m->ndof);
  ctl_to_y(m, d, y);
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
  // (not when joint limits changed the state: an impact takes energy out at once)
  if (!rc && d->part_mode == PT_MODE_HYBRID && d->part_method == PT_PART_LU &&
      !tree_active(d) && !d->lim_touched && pt_policy_energy_jump(d)) {
    restore_state(m, d, t0);
    d->nstep = nstep0;
    rc = pt_policy_to_qr(m, d);
    if (!rc) rc = attempt(m, d, t0, h, &retried);
    if (!rc) rc = limits_after_step(m, d);
    if (!rc) rc = finish_step(m, d, t0, h);
  }
  if (d->part_method == PT_PART_QR && (rc || (!d->lim_touched && pt_policy_energy_jump(d))))
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

// pt_forward on a Cartesian or joint-coordinate partition: the independent coordinates
// measured in the state held now, the rest recovered, then evaluated.
static int forward_partition(const pt_model *m, pt_data *d) {
  const pt_partition_class *p = pt_partition_of(d);
  double *y = d->ystage;
  if (p->sync) p->sync(m, d);
  p->coords(m, d, y, y + m->ndof, NULL);
  const int it = p->recover(m, d, y, NEWTON_MAXIT);
  if (it < 0) return it;
  int rc = eval_partition(p, m, d);
  if (!rc && d->lim_nactive) rc = pt_loop_limits_hold(m, d, p);  // as stage_partition
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
    if (d->cpl_on || d->lim_nactive) {  // a stage with the couplers and held limits' reactions
      if (d->cpl_on) pt_couplers_fix(m, y, n, d->cpl_dof);  // followers from their leaders
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
  } else {
    rc = forward_partition(m, d);
    // a closed loop that its joint coordinates cannot evaluate here (exactly singular): the
    // Cartesian partitions, with their dense fallback for a singular W
    if (rc && pt_loop_on(d)) {
      rc = pt_policy_cartesian(m, d);
      if (!rc) rc = forward_partition(m, d);
    }
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
  if (mode != d->part_mode && d->model->loop_ok) {
    // a closed loop leaves or takes its joint coordinates: the next step builds afresh
    d->part_valid = 0;
    d->loop_s_valid = 0;
  }
  if (mode != d->part_mode && d->tree_ok) {
    // the tree partition starts or stops: the next step builds the active one afresh; joint
    // limits start free (limits.c on the tree partition, loop_limits.c on LU/QR)
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

int pt_set_spin_substeps(pt_model *m, int max) {
  if (max < 1 || max > 64) return PT_EINVAL;
  m->spin_substeps_max = max;
  return PT_OK;
}
