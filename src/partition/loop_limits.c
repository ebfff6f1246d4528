// loop_limits.c: joint limits on closed loops (issue 11, item 4), on the LU and QR partitions
// (partition.h) where the independent coordinates y (v or z) are integrated and the dependent
// part of the state is recovered from them.
//
// The tree partition's limits (core/limits.c) use the joint-space inertia H; here the joint
// coordinate c of a limit is a function of the bodies' state, with the Jacobian row J_c
// (pt_measure), and the local-dynamics matrix is the constrained one,
//   W = J_c P J_c^T,   P = M^-1 - M^-1 Phi_q^T (Phi_q M^-1 Phi_q^T)^-1 Phi_q M^-1,          (1)
// the coordinate's acceleration per unit force along it with the joints' reactions included
// (Koziara, Solfec documentation, "Local dynamics", eq. 62-64, W = H A^-1 H^T, with A^-1
// restricted to the constraint manifold); equivalently B^T M B in the partition's independent
// velocities, B = [I; -Phi_u^-1 Phi_v]. Its columns come from the partition itself, as the
// difference of two evaluations of the accelerations at the same state, with and without a
// unit force along the coordinate (the accelerations are affine in the applied forces):
//   col_s = ydd(Q + n_s J_s^T) - ydd(Q)   (ndof),   W_as = n_a J_a (xdd(Q + n_s J_s^T) - xdd(Q)),
// n = +1 at a lower bound, -1 at an upper one. An impulse p_s changes yd by p_s col_s, and
// moving y by x_s col_s moves coordinate a by n_a W_as x_s to first order.
// At the step's end: coordinates past their bounds are put back by Newton on y along the
// columns (W x = n (bound - c), then the partition's position recovery), the impulses of
// Newton's law of restitution follow as in core/limits.c (eq. 1 there, same LCP), and any
// potential energy the restoration added comes out of the kinetic energy. While a limit is
// held, every stage adds the reactions lambda >= 0 of the LCP E^T cdd >= 0 (eq. 2 there) to
// the applied forces and evaluates the accelerations again. Each problem costs ns + 1
// evaluations of the accelerations (one limit: two); everything lives in the data, sized at
// load (nlimit x ndof columns, nlimit^2 W): no allocation. Unlike a tree's, W can be singular
// here: two limits on coordinates that the loop ties together (a parallelogram's crank and
// rocker) are dependent, and the Cholesky factor of core/limits.c leaves such a limit to the
// others (its pivot below 1e-10 of its diagonal).
#include "engine.h"
#include "partition.h"
#include "ptu.h"

#define LL_POS_TOL 1e-9     // a coordinate this close to a bound is on it (rad or m)
#define LL_VEL_TOL 1e-9     // an approaching rate below this is at rest (rad/s or m/s)
#define LL_NEWTON_MAXIT 6   // chord iterations putting coordinates back on their bounds
#define LL_NEWTON_TOL 1e-13 // |c - bound| that ends them
#define LL_RECOVER_MAXIT 12 // Newton iterations of the partition's recovery

static double normal(const pt_data *d, int k) { return d->lim_state[k] < 0 ? 1.0 : -1.0; }

static double bound_of(const pt_model *m, const pt_data *d, int k) {
  const int j = d->lim_joint[k];
  return d->lim_state[k] < 0 ? m->joint_limit[2 * j] : m->joint_limit[2 * j + 1];
}

// Value, Jacobian row, rate and (xdd given) acceleration of limit k's coordinate.
static double coord_of(const pt_model *m, const pt_data *d, int k, double jac[12],
                       double *rate, double *acc) {
  const int c = m->joint_coord_adr[d->lim_joint[k]];
  const int *body = m->meas_body + 2 * c;
  double v, jdx;
  pt_measure(m, d, c, &v, jac, &jdx);
  if (rate) *rate = pt_jac_dot_x(d, body, jac);
  if (acc) {
    double a = jdx;
    for (int b = 0; b < 2; b++) {
      if (body[b] == PT_GROUND) continue;
      for (int i = 0; i < 6; i++) a += jac[6 * b + i] * d->xdd[6 * body[b] + i];
    }
    *acc = a;
  }
  return v;
}

// J_a (xdd - lim_xdd) for limit k.
static double jac_dxdd(const pt_model *m, const pt_data *d, int k, const double jac[12]) {
  const int c = m->joint_coord_adr[d->lim_joint[k]];
  const int *body = m->meas_body + 2 * c;
  double s = 0;
  for (int b = 0; b < 2; b++) {
    if (body[b] == PT_GROUND) continue;
    for (int i = 0; i < 6; i++)
      s += jac[6 * b + i] * (d->xdd[6 * body[b] + i] - d->lim_xdd[6 * body[b] + i]);
  }
  return s;
}

// At a state whose kinematics, rows, forces and accelerations (without limit reactions) are
// evaluated: the free ydd in lim_acc (ndof), n_a times the free acceleration of each limit's
// coordinate in lim_b, the columns col_s in lim_minv (ns x ndof) and W in lim_w (ns x ns).
// qfrc is left as found; xdd, qdd and the multipliers are a column's (the caller evaluates
// again). Returns PT_OK or the accelerations' error.
static int columns(const pt_model *m, pt_data *d, const pt_partition_class *p, const int *set,
                   int ns) {
  const int n = m->ndof;
  ptu_copy(d->lim_qfrc, d->qfrc, m->nv);
  ptu_copy(d->lim_xdd, d->xdd, m->nv);
  p->coords(m, d, NULL, NULL, d->lim_acc);
  for (int a = 0; a < ns; a++) {
    double jac[12], acc;
    coord_of(m, d, set[a], jac, NULL, &acc);
    d->lim_b[a] = normal(d, set[a]) * acc;
  }
  for (int s = 0; s < ns; s++) {
    const int k = set[s], c = m->joint_coord_adr[d->lim_joint[k]];
    double jac[12];
    pt_measure_jac(m, d, c, jac);
    ptu_copy(d->qfrc, d->lim_qfrc, m->nv);
    pt_apply_coord_force(d, m->meas_body[2 * c], m->meas_body[2 * c + 1], jac, normal(d, k),
                         d->qfrc);
    const int rc = p->accelerations(m, d);
    if (rc) {
      ptu_copy(d->qfrc, d->lim_qfrc, m->nv);
      return rc;
    }
    double *col = d->lim_minv + (size_t)s * n;
    p->coords(m, d, NULL, NULL, col);
    for (int i = 0; i < n; i++) col[i] -= d->lim_acc[i];
    for (int a = 0; a < ns; a++) {
      double ja[12];
      pt_measure_jac(m, d, m->joint_coord_adr[d->lim_joint[set[a]]], ja);
      d->lim_w[a * ns + s] = normal(d, set[a]) * jac_dxdd(m, d, set[a], ja);
    }
  }
  ptu_copy(d->qfrc, d->lim_qfrc, m->nv);
  for (int a = 0; a < ns; a++)  // symmetric in exact arithmetic: take the mean
    for (int s = 0; s < a; s++)
      d->lim_w[a * ns + s] = d->lim_w[s * ns + a] =
          0.5 * (d->lim_w[a * ns + s] + d->lim_w[s * ns + a]);
  return PT_OK;
}

// (2) of core/limits.c at an evaluated stage: the reactions of the held limits into qfrc and
// the accelerations again. Returns PT_OK or the accelerations' error.
int pt_loop_limits_hold(const pt_model *m, pt_data *d, const pt_partition_class *p) {
  int *set = d->lim_set, ns = 0;
  for (int k = 0; k < d->lim_n; k++)
    if (d->lim_state[k]) set[ns++] = k;
  if (!ns) return PT_OK;
  int rc = columns(m, d, p, set, ns);
  if (rc) return rc;
  pt_limits_lcp(d, ns, d->lim_b);
  for (int a = 0; a < ns; a++) {
    const double f = normal(d, set[a]) * d->lim_x[a];
    if (f == 0) continue;
    const int c = m->joint_coord_adr[d->lim_joint[set[a]]];
    double jac[12];
    pt_measure_jac(m, d, c, jac);
    pt_apply_coord_force(d, m->meas_body[2 * c], m->meas_body[2 * c + 1], jac, f, d->qfrc);
  }
  return p->accelerations(m, d);
}

static int evaluate(const pt_model *m, pt_data *d, const pt_partition_class *p) {
  pt_kin_bodies(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  pt_forces(m, d);
  return p->accelerations(m, d);
}

// (1) of core/limits.c at the end of a step of partition p, whose end state (q, qd) is
// evaluated. y (2 ndof) gets the independent coordinates and rates of the state the limits
// leave. Returns 1 if the state or the set of held limits changed (the caller evaluates the
// state y again and restarts a multistep integrator), 2 if limits rest on their bounds (the
// caller evaluates again: the evaluation was overwritten), 0 if nothing was touched, < 0 on
// a failed recovery or evaluation.
int pt_loop_limits_after_step(const pt_model *m, pt_data *d, const pt_partition_class *p,
                              double *y) {
  const int n = m->ndof;
  int *set = d->lim_set, ns = 0, changed = 0, clamped = 0, nactive = 0, rc;
  for (int k = 0; k < d->lim_n; k++) {
    const int j = d->lim_joint[k];
    const double lo = m->joint_limit[2 * j], hi = m->joint_limit[2 * j + 1];
    double jac[12], rate;
    const double v = coord_of(m, d, k, jac, &rate, NULL);
    const int was = d->lim_state[k];
    if (v < lo || v > hi) {
      d->lim_state[k] = v < lo ? -1 : 1;
      set[ns++] = k;
      clamped = changed = 1;
      continue;
    }
    if (!was) continue;
    if (fabs(v - bound_of(m, d, k)) <= LL_POS_TOL && normal(d, k) * rate <= LL_VEL_TOL) {
      set[ns++] = k;  // still resting on the bound
    } else {
      d->lim_state[k] = 0;  // moved away: released
      changed = 1;
    }
  }
  p->coords(m, d, y, y + n, NULL);
  if (!ns) {
    d->lim_nactive = 0;
    return changed;
  }
  const double e0 = pt_kinetic(m, d) + pt_potential(m, d);  // before the bounds are restored
  // the coordinates onto their bounds (those past them and those resting on them): chord
  // Newton on y along the columns, W x = n (bound - c), each iterate recovered
  if ((rc = columns(m, d, p, set, ns))) return rc;
  for (int it = 0; it < LL_NEWTON_MAXIT; it++) {
    double err = 0, jac[12];
    for (int a = 0; a < ns; a++) {
      const double r = bound_of(m, d, set[a]) - coord_of(m, d, set[a], jac, NULL, NULL);
      d->lim_u[a] = -normal(d, set[a]) * r;  // the right-hand side b of W x = -b
      err = fmax(err, fabs(r));
    }
    if (err <= LL_NEWTON_TOL) break;
    pt_limits_solve(d, ns, d->lim_u);
    for (int s = 0; s < ns; s++)
      for (int i = 0; i < n; i++) y[i] += d->lim_x[s] * d->lim_minv[(size_t)s * n + i];
    if ((rc = p->recover(m, d, y, LL_RECOVER_MAXIT)) < 0) return rc;
    pt_kin_bodies(m, d);
  }
  // the impulses at the restored state
  if ((rc = evaluate(m, d, p))) return rc;
  if ((rc = columns(m, d, p, set, ns))) return rc;
  double *b = d->lim_u;  // lim_b holds n_a times the free accelerations
  for (int a = 0; a < ns; a++) {
    const int k = set[a];
    double jac[12], rate;
    coord_of(m, d, k, jac, &rate, NULL);
    const double u = normal(d, k) * rate;
    // an impact slower than two steps of the free acceleration into the bound is a landing
    // (e = 0), as on trees (core/limits.c)
    const double landing = 2 * d->dt * fmax(0.0, -d->lim_b[a]);
    const double e = -u > landing ? m->restitution : 0.0;
    b[a] = u + e * fmin(u, 0.0);
    d->lim_b[a] = u;  // the approaching rate, for the bookkeeping below
  }
  pt_limits_lcp(d, ns, b);
  int impulse = 0;
  for (int a = 0; a < ns; a++) impulse |= d->lim_x[a] > 0;
  for (int s = 0; s < ns; s++)
    for (int i = 0; i < n; i++) y[n + i] += d->lim_x[s] * d->lim_minv[(size_t)s * n + i];
  if ((rc = p->recover(m, d, y, LL_RECOVER_MAXIT)) < 0) return rc;
  pt_kin_bodies(m, d);
  // restoring the bounds moved the bodies against the load that pushed them there: the
  // potential energy that added (O(h^2)) comes out of the kinetic energy (all rates by one
  // factor < 1): a step that restores a bound never raises the energy
  const double ek = pt_kinetic(m, d), e1 = ek + pt_potential(m, d);
  if (clamped && e1 > e0) {
    const double f = ek > 0 ? sqrt(fmax(0.0, (ek - (e1 - e0)) / ek)) : 0.0;
    for (int i = 0; i < n; i++) y[n + i] *= f;
    if ((rc = p->recover(m, d, y, LL_RECOVER_MAXIT)) < 0) return rc;
    pt_kin_bodies(m, d);
  }
  for (int a = 0; a < ns; a++) {
    const int k = set[a];
    double jac[12], rate;
    coord_of(m, d, k, jac, &rate, NULL);
    const double u = d->lim_b[a];
    if (u < -LL_VEL_TOL) {  // an impact (not a limit resting on its bound)
      d->lim_pre[k] = normal(d, k) * u;
      d->lim_post[k] = rate;
      d->counters.limit_impacts++;
    }
    if (normal(d, k) * rate > LL_VEL_TOL) {  // bouncing away (restitution): free
      d->lim_state[k] = 0;
      changed = 1;
    } else {
      nactive++;
    }
  }
  d->lim_nactive = nactive;
  d->lim_touched = changed || clamped || impulse;
  return d->lim_touched ? 1 : 2;
}
