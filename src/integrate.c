// integrate.c: fixed-step explicit integration of the state-space ODE vdd = f(t, v, vd)
// (seed gcp eq. 18, solved through eq. 21 and the partition) with classic RK4,
// Adams-Bashforth-Moulton 4 in PECE mode (started with RK4) and semi-implicit Euler.
// After each stage the dependent coordinates are recovered: u by Newton on Phi(u, v, t) = 0
// and udot from Phi_u udot = -Phi_v vdot - Phi_t (eq. 10-16).
#include "engine.h"
#include "ptu.h"

#define NEWTON_MAXIT 12
#define NEWTON_SUSPECT 4       // more iterations than this: rebuild the partition
#define RCOND_DEGRADED 0.02    // rcond(Phi_u) fallen below this fraction of its build value
#define PIVOT_DEGRADED 0.5     // a pivot of Phi_u fallen below this fraction of its build value

// Full evaluation at a consistent (q, qd, t): kinematics, rows, forces, accelerations.
int pt_eval(const pt_model *m, pt_data *d) {
  pt_kin_bodies(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  pt_forces(m, d);
  return pt_accelerations(m, d);
}

// f(t, y) for y = (v, vd): set the independent coordinates, recover the dependent ones, and
// evaluate the accelerations. f = (vd, vdd).
static int stage(const pt_model *m, pt_data *d, double t, const double *y, double *f) {
  const int n = m->ndof;
  d->time = t;
  for (int i = 0; i < n; i++) {
    d->q[d->indep[i]] = y[i];
    d->qd[d->indep[i]] = y[n + i];
  }
  int it = pt_solve_positions(m, d, NEWTON_MAXIT);
  if (it < 0) return it;
  if (it > NEWTON_SUSPECT) d->part_suspect = 1;
  int rc = pt_solve_velocities(m, d);
  if (rc) return rc;
  if (d->rcond < RCOND_DEGRADED * d->rcond_built || d->piv_ratio < PIVOT_DEGRADED)
    d->part_suspect = 1;
  rc = pt_eval(m, d);
  if (rc) return rc;
  for (int i = 0; i < n; i++) {
    f[i] = d->qd[d->indep[i]];
    f[n + i] = d->qdd[d->indep[i]];
  }
  d->acc_valid = 1;
  return PT_OK;
}

// y = a + h b (2 ndof)
static void axpy(double *y, const double *a, double h, const double *b, int n) {
  for (int i = 0; i < n; i++) y[i] = a[i] + h * b[i];
}

static void current_y(const pt_model *m, const pt_data *d, double *y) {
  const int n = m->ndof;
  for (int i = 0; i < n; i++) {
    y[i] = d->q[d->indep[i]];
    y[n + i] = d->qd[d->indep[i]];
  }
}

// f at the step start: reuse the accelerations of the last evaluation when still valid.
static int start_f(const pt_model *m, pt_data *d, const double *y0, double *f) {
  const int n = m->ndof;
  if (d->acc_valid) {
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
}

static void restore_state(const pt_model *m, pt_data *d, double t0) {
  ptu_copy(d->q, d->q_save, m->nq);
  ptu_copy(d->qd, d->qd_save, m->nq);
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

int pt_step(const pt_model *m, pt_data *d) {
  const double t0 = d->time, h = d->dt;
  int rc;
  if (!d->part_valid) {
    rc = pt_partition_build(m, d);
    if (rc) return rc;
  }
  save_state(m, d);
  d->part_suspect = 0;
  rc = try_step(m, d, t0, h);
  if (rc) {  // the partition may have degraded inside the step: rebuild at its start, retry
    restore_state(m, d, t0);
    rc = pt_partition_build(m, d);
    if (!rc) {
      d->counters.repartitions++;
      rc = try_step(m, d, t0, h);
    }
    if (rc) {
      restore_state(m, d, t0);
      d->counters.failures++;
      return rc;
    }
  }
  d->time = t0 + h;
  d->nstep++;
  pt_outputs(m, d);
  if (d->part_suspect) {
    rc = pt_partition_build(m, d);
    if (rc) {
      d->counters.failures++;
      return rc;
    }
    d->counters.repartitions++;
    // the rebuild re-evaluated rows only; accelerations at this state are still valid
  }
  return PT_OK;
}

int pt_forward(const pt_model *m, pt_data *d) {
  int rc;
  if (!d->part_valid) {
    rc = pt_partition_build(m, d);
    if (rc) return rc;
  }
  int it = pt_solve_positions(m, d, NEWTON_MAXIT);
  if (it < 0) return it;
  rc = pt_solve_velocities(m, d);
  if (rc) return rc;
  rc = pt_eval(m, d);
  if (rc) return rc;
  d->acc_valid = 1;
  pt_outputs(m, d);
  return PT_OK;
}
