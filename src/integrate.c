// integrate.c: fixed-step explicit integration of the state-space ODE vdd = f(t, v, vd)
// (seed gcp eq. 18, solved through eq. 21 and the partition) with classic RK4,
// Adams-Bashforth-Moulton 4 in PECE mode (started with RK4) and semi-implicit Euler.
// After each stage the dependent coordinates are recovered: u by Newton on Phi(u, v, t) = 0
// and udot from Phi_u udot = -Phi_v vdot - Phi_t (eq. 10-16).
//
// Hybrid partitioning (seed hybrid, section 3, adapted to fixed steps): the integrated
// variables are either v of the cached LU partition or the tangent coordinates z of the QR
// partition (qr_partition.c, eq. 4-9). In the default hybrid mode the integrator goes to QR
// when the LU side shows a singular configuration coming (two LU rebuilds within a few steps,
// Newton for u struggling, rcond(Phi_u) collapsing, W near singular, a failed step or a jump
// of the total energy; the last two redo the step with QR) and back to LU after
// m->switch_back_steps unremarkable QR steps, if a fresh LU partition is well conditioned.
#include "engine.h"
#include "ptu.h"
#include "qr_partition.h"

#define NEWTON_MAXIT 12
#define NEWTON_SUSPECT 4       // more iterations than this: rebuild the partition
#define RCOND_DEGRADED 0.02    // rcond(Phi_u) fallen below this fraction of its build value
#define PIVOT_DEGRADED 0.85    // a pivot of Phi_u fallen below this fraction of its build value
#define NEWTON_STRUGGLE 8      // more iterations than this: Newton struggles, go QR (hybrid)
#define SUSPECT_PIVOT 1        // part_suspect bits
#define SUSPECT_NEWTON 2
#define SUSPECT_STRUGGLE 4
#define REBUILD_WINDOW 20      // two LU rebuilds within this many steps: go QR
#define RCOND_LU_BAD 1e-3     // rcond(Phi_u) below this fraction of the best seen: go QR
#define RCOND_LU_GOOD 0.1      // a fresh LU partition must reach this fraction to switch back
#define BACKOFF_WINDOW 50      // back in QR within this many steps of leaving: wait longer
#define W_DEGRADED 1e-2        // W's pivot ratio this far below its healthy value: rank is going
#define W_RECOVERED 1e-1       // ... and back within this fraction: the singularity is behind
#define ALPHA_MIN 0.98         // re-reference the QR tangent when less velocity lies in it
#define ENERGY_JUMP 50         // |dE| over a step this many times its running mean ...
#define ENERGY_FLOOR 1e-9      // ... and above this fraction of the energy scale
#define QR_SUBSTEPS_MAX 8      // a QR step that jumped is retaken as 2, 4, 8 substeps

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
  if (it > NEWTON_SUSPECT) d->part_suspect |= SUSPECT_NEWTON;
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
  pt_tree_positions(m, d, y);
  pt_tree_velocities(m, d, y + n);
  ptu_copy(d->tree_y, y, 2 * n);
  d->tree_y_valid = 1;
  if (d->tree_fast) {
    // an intermediate stage needs thetadd only: no rows, no multipliers (tree.c)
    pt_kin_inertias(m, d, 0);
    pt_forces(m, d);
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
    pt_tree_aba(m, d, y + n, f + n);
    d->lambda_stale = 1;
    pt_qdd_from_xdd(m, d);
    ptu_copy(f, y + n, n);
    return PT_OK;
  }
  int rc = pt_eval(m, d);
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
    if (it > NEWTON_SUSPECT) d->part_suspect |= SUSPECT_NEWTON;
    if (it > NEWTON_STRUGGLE) d->part_suspect |= SUSPECT_STRUGGLE;
    int rc = pt_solve_velocities(m, d);
    if (rc) return rc;
    if (d->rcond < RCOND_DEGRADED * d->rcond_built || d->piv_ratio < PIVOT_DEGRADED)
      d->part_suspect |= SUSPECT_PIVOT;
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
  int rc = start_f(m, d, y0, k1);
  // k2..k4 by the articulated-body algorithm on a tree; the step's end point in full (rows,
  // multipliers, qdd: the results a caller reads)
  d->tree_fast = d->tree_aba;
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
    if (!d->acc_valid) {  // inputs changed since f_n was computed
      rc = start_f(m, d, y0, f0);
      if (rc) return rc;
    }
    for (int i = 0; i < n2; i++)
      ys[i] = y0[i] + h / 24 * (55 * f0[i] - 59 * f1[i] + 37 * f2[i] - 9 * f3[i]);
    rc = stage(m, d, t0 + h, ys, fp);  // predict, evaluate
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
  int rc = start_f(m, d, y0, f);
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

// ---- partition management -----------------------------------------------------------------

// An LU build; rcond_healthy keeps the best conditioning seen, the scale against which
// "collapsing" and "well conditioned again" are judged (rcond depends on the model's units).
static int lu_build(const pt_model *m, pt_data *d) {
  int rc = pt_partition_build(m, d);
  if (!rc) d->rcond_healthy = fmax(d->rcond_healthy, d->rcond_built);
  return rc;
}

static int lu_rebuild(const pt_model *m, pt_data *d) {
  int rc = lu_build(m, d);
  if (rc) return rc;
  d->counters.repartitions++;
  d->lu_rebuild_step[0] = d->lu_rebuild_step[1];
  d->lu_rebuild_step[1] = d->nstep;
  return PT_OK;
}

// LU -> QR. Coming back to QR soon after leaving it doubles the stable stretch required
// before the next switch back (up to 64 times), so a long troubled stretch does not
// alternate between the methods every few steps; a long LU stretch resets it.
static int to_qr(const pt_model *m, pt_data *d) {
  int rc = pt_qr_build(m, d);
  if (rc) return rc;
  d->counters.qr_switches++;
  d->qr_stable = 0;
  if (d->qr_backoff < 1) d->qr_backoff = 1;
  if (d->counters.lu_switches > 0 && d->nstep - d->lu_back_step <= BACKOFF_WINDOW)
    d->qr_backoff = d->qr_backoff < 64 ? 2 * d->qr_backoff : 64;
  else
    d->qr_backoff = 1;
  return PT_OK;
}

// QR -> LU when a fresh LU partition is well conditioned; otherwise QR stays active with its
// reference tangent (the LU build touches nothing of the QR partition but the method flag).
static void try_back_to_lu(const pt_model *m, pt_data *d) {
  d->qr_stable = 0;
  const int rc = lu_build(m, d);
  d->counters.repartitions++;  // a build either way
  const int w_recovered = d->w_ratio_step >= W_RECOVERED * d->w_healthy;
  if (rc == PT_OK && (d->rcond_built >= RCOND_LU_GOOD * d->rcond_healthy || w_recovered)) {
    d->counters.lu_switches++;
    d->lu_back_step = d->nstep;
    d->lu_rebuild_step[0] = d->lu_rebuild_step[1] = -REBUILD_WINDOW - 1;
    return;
  }
  d->part_method = PT_PART_QR;
  d->part_valid = 1;
}

// First use (or after pt_set_state / reset / copy): LU unless QR only; QR if LU cannot. A
// tree in hybrid mode has its partition already: the joint coordinates (tree.c).
static int build_initial(const pt_model *m, pt_data *d) {
  if (d->tree_ok && d->part_mode == PT_MODE_HYBRID) {
    pt_partition_free(d);
    d->part_method = PT_PART_LU;
    d->part_valid = 1;
    d->abm_count = 0;
    return PT_OK;
  }
  if (d->part_mode != PT_MODE_QR) {
    int rc = lu_build(m, d);
    if (!rc || d->part_mode == PT_MODE_LU) return rc;
  }
  return pt_qr_build(m, d);
}

// Total energy jump against its running mean (seed section 3: "the total energy of the
// system changes suddenly").
static int energy_jump(pt_data *d) {
  const double e = d->energy_kin + d->energy_pot;
  const double de = fabs(e - d->energy_prev);
  const double scale = fabs(d->energy_kin) + fabs(d->energy_pot) + 1e-300;
  int jump = d->nstep > 3 && de > ENERGY_JUMP * d->energy_davg && de > ENERGY_FLOOR * scale;
  return jump;
}

static void energy_accept(pt_data *d) {
  const double e = d->energy_kin + d->energy_pot;
  const double de = fabs(e - d->energy_prev);
  d->energy_davg = d->nstep <= 1 ? de : 0.9 * d->energy_davg + 0.1 * de;
  d->energy_prev = e;
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
  if (!d->dense) return rc;  // a tree's data: no Cartesian partition to retry with
  *retried = 1;
  if (d->part_method == PT_PART_QR) {
    rc = pt_qr_build(m, d);
  } else if (d->part_mode == PT_MODE_HYBRID) {
    rc = to_qr(m, d);
  } else {
    rc = lu_rebuild(m, d);
  }
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

// LU side after an accepted step: does it see a singular configuration coming?
// Frequent rebuilds and a falling rcond(Phi_u) also happen away from any singularity (a
// swinging body changes its best independent coordinate); they count only while W itself
// shows the constraint Jacobian losing rank, so a serial arm never leaves LU for nothing.
static int lu_wants_qr(const pt_data *d, int retried) {
  const double rcond_bad = RCOND_LU_BAD * d->rcond_healthy;
  const int rebuild_now = d->part_suspect != 0;
  const int64_t last = d->lu_rebuild_step[1];
  const int w_degraded = d->w_ratio_step < W_DEGRADED * d->w_healthy;
  return retried || d->w_singular || (d->part_suspect & SUSPECT_STRUGGLE) ||
         (w_degraded && (d->rcond < rcond_bad ||
                         (rebuild_now && d->nstep - last <= REBUILD_WINDOW)));
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
    if (!rc && !energy_jump(d)) return PT_OK;
  }
  return rc;
}

int pt_step(const pt_model *m, pt_data *d) {
  const double t0 = d->time, h = d->dt;
  int rc, retried = 0;
  if (!d->part_valid) {
    rc = build_initial(m, d);
    if (rc) return rc;
  }
  save_state(m, d);
  const int64_t nstep0 = d->nstep;
  rc = attempt(m, d, t0, h, &retried);
  if (!rc) rc = finish_step(m, d, t0, h);
  // an energy jump taken with LU: redo the step with QR (hybrid)
  if (!rc && d->part_mode == PT_MODE_HYBRID && d->part_method == PT_PART_LU &&
      !tree_active(d) && energy_jump(d)) {
    restore_state(m, d, t0);
    d->nstep = nstep0;
    rc = to_qr(m, d);
    if (!rc) rc = attempt(m, d, t0, h, &retried);
    if (!rc) rc = finish_step(m, d, t0, h);
  }
  if (d->part_method == PT_PART_QR && (rc || energy_jump(d)))
    rc = qr_substeps(m, d, t0, h, nstep0, &retried);
  if (rc) {
    restore_state(m, d, t0);
    d->nstep = nstep0;
    d->counters.failures++;
    return rc;
  }
  energy_accept(d);
  if (isfinite(d->w_ratio_step) && d->w_ratio_step > d->w_healthy)
    d->w_healthy = d->w_ratio_step;
  if (d->part_method == PT_PART_QR) {
    d->counters.qr_steps++;
    d->counters.last_rcond = d->qr_rcond;
    const int calm = !retried && !(d->part_suspect & SUSPECT_NEWTON);
    d->qr_stable = calm ? d->qr_stable + 1 : 0;
    const int64_t need = (int64_t)m->switch_back_steps * (d->qr_backoff > 1 ? d->qr_backoff : 1);
    if (d->part_mode == PT_MODE_HYBRID && d->qr_stable >= need)
      try_back_to_lu(m, d);
    else if (!calm || pt_qr_alpha(m, d) < ALPHA_MIN)
      pt_qr_build(m, d);  // seed step 12: a new tangent here (on failure the old one stays)
  } else if (!d->dense) {
    // a tree's data in its joint coordinates: no partition to judge
  } else if (d->part_mode == PT_MODE_HYBRID && lu_wants_qr(d, retried)) {
    rc = to_qr(m, d);
    if (rc) rc = lu_rebuild(m, d);
  } else if (d->part_suspect) {
    rc = lu_rebuild(m, d);
  }
  // the rebuilds re-evaluated rows only; accelerations at this state are still valid
  d->counters.method = d->part_method == PT_PART_QR;
  if (rc) d->counters.failures++;
  return rc;
}

int pt_forward(const pt_model *m, pt_data *d) {
  int rc;
  if (!d->part_valid) {
    rc = build_initial(m, d);
    if (rc) return rc;
  }
  if (tree_active(d)) {
    // as Newton and the velocity solve do for LU: the dependent coordinates from the
    // independent ones (the joint coordinates measured in the state held now)
    const int n = m->ndof;
    double *y = d->ystage;
    pt_kin_bodies(m, d);
    pt_tree_coords(m, d, y, y + n, NULL);
    pt_tree_positions(m, d, y);
    pt_tree_velocities(m, d, y + n);
    ptu_copy(d->tree_y, y, 2 * n);
    d->tree_y_valid = 1;
    rc = pt_eval(m, d);
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
  // a tree's data takes its dense Cartesian work now, outside the step
  if (mode != PT_MODE_HYBRID && pt_data_dense(d->model, d)) return PT_ENOMEM;
  if (mode != d->part_mode && d->tree_ok) {
    // the tree partition starts or stops: the next step builds the active one afresh
    d->part_valid = 0;
    d->tree_y_valid = 0;
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
