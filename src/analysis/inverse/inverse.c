// inverse.c: inverse dynamics (seed: inverse-dynamics-equilibrium-integration lecture).
//
// Kinematic inverse dynamics, the lecture's three steps, in the r-omega form the lecture
// demonstrates ("Inverse Dynamics: The Math"): with zero degrees of freedom the constraint
// Jacobian J (active rows, ncon = 6 nbody) is square, so
//   positions      Phi(q, t) = 0               (Newton at time t)
//   velocities     J x = nu
//   step 1         J xdd = gamma               (accelerations from the constraints alone)
//   step 2         J^T lambda = Q - M xdd      (multipliers from the Newton-Euler equations)
//   step 3         reactions -J_i^T lambda     (per body), motion efforts -lambda_motion
// One LU factorisation of J serves the velocity, acceleration and multiplier solves.
//
// Torque requests: the augmented system of the forward dynamics (seed gcp eq. 21) with one
// extra row per requested coordinate c_k'' = a_k, i.e. J_c xdd = a - Jdot_c x:
//   [M J^T J_c^T; J 0 0; J_c 0 0] [xdd; lambda; mu] = [Q; gamma; a - Jdot_c x].
// The row's multiplier is the force the actuator must add: effort = input - mu. The system is
// solved by a Schur complement on top of the sparse W = J M^-1 J^T factor (dynamics.c):
//   W lambda0 = J M^-1 Q - gamma,  G = W^-1 B,  B = J M^-1 J_c^T,
//   S mu = J_c M^-1 Q - (a - Jdot_c x) - B^T lambda0,  S = J_c M^-1 J_c^T - B^T G,
//   lambda = lambda0 - G mu,  xdd = M^-1 (Q - J^T lambda - J_c^T mu).
// S is singular exactly when the constraints fix a requested coordinate.
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"
#include "partition.h"
#include "tolerances.h"
#include "inverse_internal.h"
#include "ptu.h"


void pt_reactions_from(const pt_model *m, const pt_data *d, const double *lam, double *out);

// y = M_k^-1 v for body k (6-vectors).
static void minv6(const pt_model *m, const pt_data *d, int k, const double *v, double *y) {
  for (int i = 0; i < 3; i++) y[i] = v[i] / m->body_mass[k];
  ptu_mul_mat_vec3(y + 3, d->inertia_ginv + 9 * k, v + 3);
}

// Step 3 (lecture: F_i = -Phi_ri^T lambda, n_i = -Pi_i^T lambda) summed over a joint's rows:
// the force and torque on body2, the torque moved from its CoM to the joint point.
void pt_reactions_from(const pt_model *m, const pt_data *d, const double *lam, double *out) {
  for (int j = 0; j < m->njoint; j++) {
    // outputs
    double *F = out + 6 * j, *T = out + 6 * j + 3;
    // inputs
    const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const int slot = b2 != PT_GROUND ? 1 : 0;  // ground side: the other body, then negate
    const int body = slot ? b2 : b1;
    const int r0 = m->joint_row_adr[j], nr = m->joint_nrow[j];

    double f[6] = {0, 0, 0, 0, 0, 0};
    for (int r = r0; r < r0 + nr; r++) {
      const int a = m->row_active[r];
      if (a < 0) continue;
      for (int c = 0; c < 6; c++) f[c] -= d->row_jac[12 * r + 6 * slot + c] * lam[a];
    }
    double P[3], s[3], arm[3], t[3];
    pt_body_point(d, b2, m->joint_geom + PT_JOINT_GEOM * j + 3, P, s);
    if (body == PT_GROUND) {  // cannot happen (b1 != b2), kept for safety
      ptu_zero(out + 6 * j, 6);
      continue;
    }
    ptu_sub3(arm, P, d->q + 7 * body);
    ptu_cross3(t, arm, f);
    const double sign = slot ? 1 : -1;
    for (int c = 0; c < 3; c++) {
      F[c] = sign * f[c];
      T[c] = sign * (f[3 + c] - t[c]);
    }
  }
}

void pt_joint_reactions(const pt_model *m, const pt_data *d, double *reaction) {
  if (d->lambda_stale && pt_tree_active(d)) {
    // a tree's step end: from the joint forces, without the multipliers
    pt_tree_reactions(m, d, reaction);
    return;
  }
  // a closed loop's step end in joint coordinates: the multipliers computed now, a cache of
  // the state held (pt_lambda changes nothing the step reads)
  if (d->lambda_stale) pt_lambda(m, (pt_data *)d);
  pt_reactions_from(m, d, d->lambda, reaction);
}

// ---------------------------------------------------------------------------------------------
// Results

static int actuator_of(const pt_model *m, int c);

// How a torque request treated a limit on a bound (limit_why).
enum { LIM_NONE, LIM_HELD, LIM_RELEASED, LIM_REQUESTED, LIM_MOVING, LIM_OFF, LIM_DROPPED };

pt_inverse_result *pt_inverse_result_new(const pt_model *m, int maxreq) {
  if (maxreq < 0) maxreq = 0;
  pt_inverse_result *r = calloc(1, sizeof(*r));
  if (!r) return NULL;
  // the followers and the held limits join a request
  const size_t nr = (size_t)maxreq + (size_t)m->ncoupler + (size_t)m->nlimit;
  r->maxreq = maxreq;
  r->ninput = m->ninput;
  r->input = calloc((size_t)m->ninput + 1, sizeof(double));
  r->ncoupler = m->ncoupler;
  r->coupler_effort = calloc((size_t)m->ncoupler + 1, sizeof(double));
  r->cpl_req = calloc(nr + 1, sizeof(pt_assign));
  r->nmotion = m->nmotion;
  r->ncoord = m->ncoord;
  r->njoint = m->njoint;
  // Schur work: z (nv), lambda0 (ncon), B (sparse values) and G (ncon x nr), S (nr^2), rhs,
  // mu, jdx (nr), J_c (12 nr); ints: row marks (ncon), B's row lists (ncon x nr), counts (nr)
  r->nwrk = (size_t)m->nv + (size_t)m->ncon + 2 * (size_t)m->ncon * nr + nr * nr + 3 * nr +
            12 * nr + 1;
  r->niwrk = (size_t)m->ncon + (size_t)m->ncon * nr + nr + 1;
  r->req_coord = calloc(nr + 1, sizeof(int));
  r->req_actuator = calloc(nr + 1, sizeof(int));
  r->req_effort = calloc(nr + 1, sizeof(double));
  r->motion_effort = calloc((size_t)m->nmotion + 1, sizeof(double));
  r->coord = calloc((size_t)m->ncoord + 1, sizeof(double));
  r->coord_rate = calloc((size_t)m->ncoord + 1, sizeof(double));
  r->coord_acc = calloc((size_t)m->ncoord + 1, sizeof(double));
  r->reaction = calloc(6 * (size_t)m->njoint + 1, sizeof(double));
  r->xdd = calloc((size_t)m->nv + 1, sizeof(double));
  r->lambda = calloc((size_t)m->ncon + 1, sizeof(double));
  r->wrk = calloc(r->nwrk, sizeof(double));
  r->iwrk = calloc(r->niwrk, sizeof(int));
  r->coord_actuator = calloc((size_t)m->ncoord + 1, sizeof(int));
  r->limit_held = calloc((size_t)m->njoint + 1, sizeof(int));
  r->limit_reaction = calloc((size_t)m->njoint + 1, sizeof(double));
  r->limit_notes = calloc(PT_LIMIT_NOTE_MAX * (size_t)m->njoint + 1, 1);
  r->limit_why = calloc((size_t)m->njoint + 1, sizeof(int));
  if (r->coord_actuator)
    for (int c = 0; c < m->ncoord; c++) r->coord_actuator[c] = actuator_of(m, c);
  r->tree = pt_inverse_tree_new(m);  // NULL: not a tree, the general path only
  if (r->tree) {
    r->tree_wrk = calloc(PT_INVERSE_TREE_NWRK(m), sizeof(double));
    r->tree_iwrk = calloc(PT_INVERSE_TREE_NIWRK(m), sizeof(int));
    r->tree_ptr = calloc(PT_INVERSE_TREE_NPTR(m), sizeof(*r->tree_ptr));
    if (!r->tree_wrk || !r->tree_iwrk || !r->tree_ptr) {
      pt_inverse_result_free(r);
      return NULL;
    }
  }
  if (!r->limit_held || !r->limit_reaction || !r->limit_notes || !r->limit_why || !r->input ||
      !r->coupler_effort || !r->cpl_req || !r->iwrk || !r->coord_actuator || !r->req_coord || !r->req_actuator || !r->req_effort || !r->motion_effort ||
      !r->coord ||
      !r->coord_rate || !r->coord_acc || !r->reaction || !r->xdd || !r->lambda || !r->wrk) {
    pt_inverse_result_free(r);
    return NULL;
  }
  return r;
}

void pt_inverse_result_free(pt_inverse_result *r) {
  if (!r) return;
  free(r->input);
  free(r->req_coord);
  free(r->req_actuator);
  free(r->req_effort);
  free(r->motion_effort);
  free(r->coord);
  free(r->coord_rate);
  free(r->coord_acc);
  free(r->reaction);
  free(r->xdd);
  free(r->lambda);
  free(r->wrk);
  free(r->iwrk);
  free(r->coord_actuator);
  free(r->tree);
  free(r->tree_wrk);
  free(r->tree_iwrk);
  free((void *)r->tree_ptr);
  free(r->coupler_effort);
  free(r->cpl_req);
  free(r->limit_held);
  free(r->limit_reaction);
  free(r->limit_notes);
  free(r->limit_why);
  free(r);
}

// No limit held, nothing to say.
static void limits_clear(const pt_model *m, pt_inverse_result *res) {
  for (int j = 0; j < m->njoint; j++)
    res->limit_held[j] = 0, res->limit_reaction[j] = 0, res->limit_why[j] = LIM_NONE;
  res->limit_notes[0] = '\0';
}

static int result_fits(const pt_model *m, const pt_inverse_result *res, pt_error *err) {
  if (!res || res->ncoord != m->ncoord || res->njoint != m->njoint ||
      res->nmotion != m->nmotion || res->ncoupler != m->ncoupler || res->ninput != m->ninput)
    return pt_error_set(err, PT_EINVAL, "inverse dynamics: result not made for model \"%s\"",
                        m->name);
  return PT_OK;
}

// A coordinate's value, Jacobian and Jdot x at d's state (kinematics evaluated): the value
// from the tree partition's joint coordinates when it holds them (no atan2; the value d's
// outputs report, pt_tree_outputs), else measured.
static void measure(const pt_model *m, const pt_data *d, int c, double *value, double jac[12],
                    double *jdx) {
  if (pt_tree_coord_value(d, c, value, NULL))
    pt_measure_jd(m, d, c, jac, jdx);
  else
    pt_measure(m, d, c, value, jac, jdx);
}

// Value, rate and second derivative of coordinate i from its measure (value, jac, jdx) and
// the solved body accelerations res->xdd.
static void coord_outputs(const pt_model *m, const pt_data *d, int i, double value,
                          const double jac[12], double jdx, pt_inverse_result *res) {
  const int *body = m->meas_body + 2 * i;
  res->coord[i] = value;
  res->coord_rate[i] = pt_jac_dot_x(d, body, jac);
  double acc = jdx;
  for (int b = 0; b < 2; b++) {
    if (body[b] == PT_GROUND) continue;
    for (int k = 0; k < 6; k++) acc += jac[6 * b + k] * res->xdd[6 * body[b] + k];
  }
  res->coord_acc[i] = acc;
}

// Motion efforts and reactions of a solved (xdd, lambda) at d's state.
static void fill_forces(const pt_model *m, const pt_data *d, pt_inverse_result *res) {
  // a motion row's constraint force is -J_c^T lambda: the motor applies -lambda along c
  for (int i = 0; i < m->nmotion; i++) {
    const int a = m->row_active[m->nrow_joint + i];
    res->motion_effort[i] = a >= 0 ? 0.0 - res->lambda[a] : 0;  // 0 - x: no -0
  }
  pt_reactions_from(m, d, res->lambda, res->reaction);
  ptu_copy(res->input, d->input, m->ninput);  // the drives' supplies as evaluated (pt_forces)
  res->time = d->time;
}

// Coordinates, motion efforts and reactions of a solved (xdd, lambda) at d's state.
static void fill_outputs(const pt_model *m, const pt_data *d, pt_inverse_result *res) {
  for (int i = 0; i < m->ncoord; i++) {
    double value, jac[12], jdx;
    measure(m, d, i, &value, jac, &jdx);
    coord_outputs(m, d, i, value, jac, jdx, res);
  }
  fill_forces(m, d, res);
}

// Angles are unwrapped against coord_ref: aim each driven coordinate's branch at its value at
// time t, so that a motor many turns away is reached by the nearest rotation.
static void aim_motions(const pt_model *m, pt_data *d, double t) {
  for (int i = 0; i < m->nmotion; i++) {
    double f[3];
    pt_motion_eval(m, i, t, f);
    d->coord_ref[m->motion_coord[i]] = f[0];
  }
}

// ---------------------------------------------------------------------------------------------
// Kinematic inverse dynamics

// Dense J (ncon x nv, column-major for LAPACK) of the active rows.
static void dense_jac(const pt_model *m, const pt_data *d, double *J) {
  const int n = m->ncon;
  ptu_zero(J, n * m->nv);
  for (int a = 0; a < n; a++) {
    const int r = m->con_row[a];
    for (int s = 0; s < 2; s++) {
      const int b = m->row_body[2 * r + s];
      if (b == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) J[(6 * b + c) * n + a] += d->row_jac[12 * r + 6 * s + c];
    }
  }
}

static int lu_solve(char trans, int n, const double *LU, const lapack_int *piv, double *b) {
  return LAPACKE_dgetrs(LAPACK_COL_MAJOR, trans, n, 1, LU, n, piv, b, n) == 0 ? PT_OK
                                                                              : PT_ESINGULAR;
}

// The three steps on the work copy w, already at its positions for time t.
static int three_steps(const pt_model *m, pt_data *w, pt_inverse_result *res, double *J,
                       lapack_int *piv, pt_error *err) {
  const int n = m->ncon;
  pt_kin_bodies(m, w);
  pt_joint_rows(m, w);
  pt_motion_rows(m, w);
  dense_jac(m, w, J);
  double jmax = 0;
  for (int i = 0; i < n * n; i++) jmax = fmax(jmax, fabs(J[i]));
  int info = LAPACKE_dgetrf(LAPACK_COL_MAJOR, n, n, J, n, piv);
  double umin = INFINITY;
  for (int i = 0; i < n && info == 0; i++) umin = fmin(umin, fabs(J[i * n + i]));
  if (info != 0 || !(umin > PT_TOL_KINEMATIC_PIVOT * jmax))
    return pt_error_set(err, PT_ESINGULAR,
                        "kinematic inverse dynamics: the constraint Jacobian is singular at "
                        "t = %.17g (a lock-up or dead-centre position)", w->time);
  // velocities: J x = nu
  double *x = w->x;
  for (int a = 0; a < n; a++) x[a] = w->row_nu[m->con_row[a]];
  if (lu_solve('N', n, J, piv, x)) return PT_ESINGULAR;
  pt_qd_from_x(m, w);
  // gamma depends on the velocities: re-evaluate the rows at (q, x)
  pt_kin_bodies(m, w);
  pt_joint_rows(m, w);
  pt_motion_rows(m, w);
  // step 1: J xdd = gamma
  double *xdd = res->xdd;
  for (int a = 0; a < n; a++) xdd[a] = w->row_gamma[m->con_row[a]];
  if (lu_solve('N', n, J, piv, xdd)) return PT_ESINGULAR;
  // step 2: J^T lambda = Q - M xdd
  pt_forces(m, w);
  double *lam = res->lambda;
  for (int k = 0; k < m->nbody; k++) {
    double Iw[3];
    ptu_mul_mat_vec3(Iw, w->inertia_g + 9 * k, xdd + 6 * k + 3);
    for (int c = 0; c < 3; c++) {
      lam[6 * k + c] = w->qfrc[6 * k + c] - m->body_mass[k] * xdd[6 * k + c];
      lam[6 * k + 3 + c] = w->qfrc[6 * k + 3 + c] - Iw[c];
    }
  }
  if (lu_solve('T', n, J, piv, lam)) return PT_ESINGULAR;
  // step 3
  ptu_copy(w->xdd, xdd, m->nv);
  fill_outputs(m, w, res);
  return PT_OK;
}

int pt_inverse_kinematic(const pt_model *m, const pt_data *d, double t, pt_inverse_result *res,
                         pt_error *err) {
  int rc = result_fits(m, res, err);
  if (rc) return rc;
  if (m->ndof != 0)
    return pt_error_set(err, PT_EPRECOND,
                        "kinematic inverse dynamics needs prescribed motions that remove every "
                        "degree of freedom; model \"%s\" has %d (%d motions): ask for actuator "
                        "efforts with accelerations (torque requests) instead",
                        m->name, m->ndof, m->nmotion);
  if (!isfinite(t)) return pt_error_set(err, PT_EINVAL, "inverse dynamics: time not finite");
  if (m->nbody == 0) return pt_error_set(err, PT_EPRECOND, "model has no moving body");
  pt_data *w = pt_data_new(m);
  double *J = malloc(sizeof(double) * (size_t)m->ncon * (size_t)m->nv + 8);
  lapack_int *piv = malloc(sizeof(lapack_int) * (size_t)m->ncon + 8);
  if (!w || !J || !piv) {
    rc = pt_error_set(err, PT_ENOMEM, "inverse dynamics: out of memory");
    goto done;
  }
  rc = pt_data_copy(m, w, d);
  if (rc) {
    pt_error_set(err, rc, "inverse dynamics: copying the state failed: %s", pt_strerror(rc));
    goto done;
  }
  // positions at t from the constraints alone (Newton, starting from d's configuration)
  w->time = t;
  aim_motions(m, w, t);
  double moved;
  rc = pt_assemble(m, w, NULL, 0, NULL, 0, &moved, err);
  if (rc) goto done;
  res->nreq = 0;
  limits_clear(m, res);  // the motions fix every coordinate: no limit takes part
  rc = three_steps(m, w, res, J, piv, err);
  if (!rc)
    pt_joint_limits_note(m, res->coord, "free: the prescribed motions fix every coordinate "
                         "(kinematic inverse dynamics)", res->limit_notes,
                         PT_LIMIT_NOTE_MAX * (size_t)m->njoint + 1);
done:
  free(J);
  free(piv);
  pt_data_free(w);
  return rc;
}

// ---------------------------------------------------------------------------------------------
// Torque requests

static int actuator_of(const pt_model *m, int c) {
  for (int a = 0; a < m->nactuator; a++)
    if ((m->actuator_type[a] == PT_ACT_JOINT_TORQUE || m->actuator_type[a] == PT_ACT_JOINT_FORCE)
        && m->actuator_coord[a] == c)
      return a;
  return -1;
}

// Everything that can be checked without evaluating: names, values, actuators, motions.
static int check_requests(const pt_model *m, const pt_assign *acc, int nacc,
                          pt_inverse_result *res, pt_error *err) {
  if (nacc <= 0 || !acc)
    return pt_error_set(err, PT_EINVAL, "torque request: no accelerations requested");
  if (nacc > res->maxreq)
    return pt_error_set(err, PT_EINVAL, "torque request: %d accelerations, at most %d", nacc,
                        res->maxreq);
  for (int k = 0; k < nacc; k++) {
    const int c = acc[k].coord;
    if (c < 0 || c >= m->ncoord)
      return pt_error_set(err, PT_EINVAL, "torque request: unknown coordinate (index %d)", c);
    if (!isfinite(acc[k].value))
      return pt_error_set(err, PT_EINVAL, "torque request: acceleration of \"%s\" not finite",
                          m->coord_name[c]);
    for (int l = 0; l < k; l++)
      if (acc[l].coord == c)
        return pt_error_set(err, PT_EINVAL, "torque request: \"%s\" requested twice",
                            m->coord_name[c]);
    for (int i = 0; i < m->nmotion; i++)
      if (m->motion_coord[i] == c)
        return pt_error_set(err, PT_EINVAL,
                            "torque request: \"%s\" is driven by motion \"%s\"; its effort is "
                            "the motion's", m->coord_name[c], m->motion_name[i]);
    if (res->coord_actuator[c] < 0)
      return pt_error_set(err, PT_EINVAL,
                          "torque request: coordinate \"%s\" has no joint actuator (an "
                          "unactuated coordinate follows the dynamics)", m->coord_name[c]);
  }
  return PT_OK;
}

// The nonzeros of b = J v, v given on two bodies only (12 numbers, bodies bb[0], bb[1]):
// the active rows touching those bodies (listed once, mark[] holds tag for the rows seen).
static int jac_times_pair(const pt_model *m, const pt_data *d, const int bb[2],
                          const double v[12], int *mark, int tag, int *rows, double *b) {
  int cnt = 0;
  for (int s = 0; s < 2; s++) {
    if (bb[s] == PT_GROUND) continue;
    const int *br = m->body_rows + 2 * m->body_row_adr[bb[s]];
    const int nbr = m->body_row_adr[bb[s] + 1] - m->body_row_adr[bb[s]];
    for (int t = 0; t < nbr; t++) {
      const int a = br[2 * t];
      if (mark[a] == tag) continue;
      mark[a] = tag;
      const int r = m->con_row[a];
      double sum = 0;
      for (int rs = 0; rs < 2; rs++) {
        const int rb = m->row_body[2 * r + rs];
        if (rb == PT_GROUND) continue;
        for (int vs = 0; vs < 2; vs++)
          if (bb[vs] == rb)
            for (int c = 0; c < 6; c++) sum += d->row_jac[12 * r + 6 * rs + c] * v[6 * vs + c];
      }
      rows[cnt] = a;
      b[cnt++] = sum;
    }
  }
  return cnt;
}

// u^T M^-1 v for two coordinate rows (12 numbers each over their bodies).
static double pair_minv_pair(const pt_model *m, const pt_data *d, const int bu[2],
                             const double *u, const int bv[2], const double *v) {
  double s = 0;
  for (int i = 0; i < 2; i++) {
    if (bu[i] == PT_GROUND) continue;
    for (int j = 0; j < 2; j++) {
      if (bv[j] != bu[i]) continue;
      double y[6];
      minv6(m, d, bu[i], v + 6 * j, y);
      for (int c = 0; c < 6; c++) s += u[6 * i + c] * y[c];
    }
  }
  return s;
}

// Efforts from the request multipliers: the actuator adds -mu on top of what it applies.
static void request_efforts(const pt_model *m, const pt_data *d, const pt_assign *acc,
                            int nacc, const double *mu, pt_inverse_result *res) {
  res->nreq = nacc;
  for (int k = 0; k < nacc; k++) {
    const int a = res->coord_actuator[acc[k].coord];
    res->req_coord[k] = acc[k].coord;
    res->req_actuator[k] = a;
    if (a < 0) {  // a coupler's follower without an actuator: what the coupler must give
      res->req_effort[k] = -mu[k];
      continue;
    }
    const int in = m->actuator_input_adr[a];  // the joint effort: through the gear
    res->req_effort[k] = m->input_gear[in] * d->input[in] - mu[k];
  }
}

// The recursive pass on a tree (inverse_tree.c); 0 when a joint block is singular. Every
// coordinate is measured once, for the requested rows and for the outputs.
static int request_tree(const pt_model *m, pt_data *d, const pt_assign *acc, int nacc,
                        pt_inverse_result *res) {
  // work
  double *mu = res->wrk;  // (nacc)
  double *mjac = res->tree_wrk + PT_INVERSE_TREE_NWRK_PASS(m);  // (ncoord x 12)
  double *mjdx = mjac + 12 * (size_t)m->ncoord;          // (ncoord)
  double *mval = mjdx + m->ncoord;                       // (ncoord)
  // (kinematics evaluated: pt_inverse_request)
  pt_joint_rows(m, d);
  pt_forces(m, d);
  for (int i = 0; i < m->ncoord; i++) measure(m, d, i, mval + i, mjac + 12 * i, mjdx + i);
  if (!pt_inverse_tree_solve(m, d, res->tree, res->tree_iwrk, acc, mjac, mjdx, res->tree_wrk,
                             res->tree_iwrk + 6 * m->njoint, res->tree_ptr, res->xdd,
                             res->lambda, mu))
    return 0;
  request_efforts(m, d, acc, nacc, mu, res);
  for (int i = 0; i < m->ncoord; i++)
    coord_outputs(m, d, i, mval[i], mjac + 12 * i, mjdx[i], res);
  fill_forces(m, d, res);
  return 1;
}

// The coupler whose follower has coordinate c, or -1.
static int follower_of(const pt_model *m, int c) {
  return pt_coupler_of_joint(m, c >= 0 && c < m->ncoord ? m->meas_joint[c] : -1);
}

// The request with every coupler's follower added (multiplier x its leader's acceleration):
// in res->cpl_req. A requested follower, or a leader not requested, is refused.
static int no_follower(const pt_model *m, const pt_assign *acc, int nacc, pt_error *err) {
  for (int q = 0; acc && q < nacc; q++) {
    const int k = follower_of(m, acc[q].coord);
    if (k >= 0)
      return pt_error_set(err, PT_EINVAL,
                          "torque request: \"%s\" follows coupler \"%s\" (%s = %g x %s + %g): "
                          "request its leader \"%s\"; the coupler's effort is reported",
                          m->coord_name[acc[q].coord], m->coupler_name[k],
                          m->joint_name[m->coupler_joint[2 * k]], m->coupler_mult[k],
                          m->joint_name[m->coupler_joint[2 * k + 1]], m->coupler_offset[k],
                          m->joint_name[m->coupler_joint[2 * k + 1]]);
  }
  return PT_OK;
}

static int coupler_request(const pt_model *m, const pt_assign *acc, int nacc,
                           pt_inverse_result *res, pt_error *err) {
  for (int q = 0; q < nacc; q++) res->cpl_req[q] = acc[q];
  for (int k = 0; k < m->ncoupler; k++) {
    const int cl = m->joint_coord_adr[m->coupler_joint[2 * k + 1]];
    int q = 0;
    while (q < nacc && acc[q].coord != cl) q++;
    if (q == nacc)
      return pt_error_set(err, PT_EINVAL,
                          "torque request: leader \"%s\" of coupler \"%s\" is not requested "
                          "(with couplers, a request names every leader: the followers' "
                          "accelerations follow from theirs)", m->coord_name[cl],
                          m->coupler_name[k]);
    res->cpl_req[nacc + k].coord = m->joint_coord_adr[m->coupler_joint[2 * k]];
    res->cpl_req[nacc + k].value = m->coupler_mult[k] * acc[q].value;
  }
  return PT_OK;
}


static int request_solve(const pt_model *m, pt_data *d, const pt_assign *acc, int nacc,
                         pt_inverse_result *res, pt_error *err);

// What a request adds on top of the input of coordinate c's actuator at position q of the
// full request (req_effort less the actuator's own effort): a coupler's or a limit's force.
static double extra_effort(const pt_model *m, const pt_data *d, const pt_inverse_result *res,
                           int q) {
  const int a = res->coord_actuator[res->req_coord[q]];
  double f = res->req_effort[q];
  if (a >= 0) {
    const int in = m->actuator_input_adr[a];
    f -= m->input_gear[in] * d->input[in];
  }
  return f;
}

// The limits a request holds (issue 11, item 4): every limited joint whose coordinate is on a
// bound, not requested and not a follower, held there by d (pt_limit_at), joins the request
// at acceleration 0 (res->cpl_req from nbase). Sets limit_held and limit_why; returns how many.
static int limits_select(const pt_model *m, pt_data *d, const pt_assign *acc, int nacc,
                         int nbase, pt_inverse_result *res) {
  limits_clear(m, res);
  int nh = 0;
  for (int j = 0; j < m->njoint; j++) {
    const int c = m->joint_coord_adr[j];
    if (!m->joint_limited[j] || c < 0 || follower_of(m, c) >= 0) continue;
    double v, w;  // the coordinate and its rate (the tree partition's when it holds them)
    if (!pt_tree_coord_value(d, c, &v, &w)) {
      double jac[12], jdx;
      pt_measure(m, d, c, &v, jac, &jdx);
      w = pt_jac_dot_x(d, m->meas_body + 2 * c, jac);
    }
    int side;
    const int holds = pt_limit_at(m, d, j, v, w, &side);
    if (!side) continue;
    int requested = 0;
    for (int q = 0; q < nacc; q++) requested |= acc[q].coord == c;
    res->limit_why[j] = requested ? LIM_REQUESTED : holds < 0 ? LIM_OFF
                      : holds == 0 ? LIM_MOVING : LIM_HELD;
    if (res->limit_why[j] != LIM_HELD) continue;
    res->limit_held[j] = side;
    res->cpl_req[nbase + nh++] = (pt_assign){c, 0.0};
  }
  return nh;
}

// The reactions of the held limits (at cpl_req[nbase..nbase+nh-1]) of a solved request; the
// one that pulls hardest is released (removed from the request): returns 1 then, else 0.
static int limits_release(const pt_model *m, const pt_data *d, int nbase, int *nh,
                          pt_inverse_result *res) {
  int worst = -1;
  double pull_max = PT_INVERSE_LIMIT_PULL;
  for (int h = 0; h < *nh; h++) {
    const int j = m->meas_joint[res->cpl_req[nbase + h].coord];
    const double f = extra_effort(m, d, res, nbase + h);
    res->limit_reaction[j] = 0.0 + f;
    const double pull = res->limit_held[j] * f;  // > 0: away from the bound
    if (pull > pull_max) pull_max = pull, worst = h;
  }
  if (worst < 0) return 0;
  const int j = m->meas_joint[res->cpl_req[nbase + worst].coord];
  res->limit_held[j] = 0;
  res->limit_reaction[j] = 0;
  res->limit_why[j] = LIM_RELEASED;
  for (int h = worst; h + 1 < *nh; h++) res->cpl_req[nbase + h] = res->cpl_req[nbase + h + 1];
  (*nh)--;
  return 1;
}

// One line per limit on a bound, in joint order (res->coord holds the solved coordinates).
static void limits_notes(const pt_model *m, pt_inverse_result *res) {
  char *buf = res->limit_notes;
  const size_t cap = PT_LIMIT_NOTE_MAX * (size_t)m->njoint + 1;
  size_t n = 0;
  buf[0] = '\0';
  for (int j = 0; j < m->njoint; j++) {
    const int why = res->limit_why[j];
    if (why == LIM_NONE) continue;
    const int c = m->joint_coord_adr[j];
    const double v = res->coord[c], lo = m->joint_limit[2 * j], hi = m->joint_limit[2 * j + 1];
    const int lower = res->limit_held[j] ? res->limit_held[j] < 0 : v <= 0.5 * (lo + hi);
    const char *how =
        why == LIM_RELEASED ? "free: released, its limit's reaction would pull"
        : why == LIM_REQUESTED ? "requested, treated as free (the actuator's effort and the "
                                 "limit's reaction cannot be separated)"
        : why == LIM_MOVING ? "free: moving on the bound, not held by its limit"
        : why == LIM_OFF ? "free: limits not enforced"
        : why == LIM_DROPPED ? "free: the request has no solution with the limits held"
        : "";
    int k;
    if (why == LIM_HELD)
      k = snprintf(buf + n, cap - n, "joint %s at its %s limit %.6g: held by the limit, treated "
                   "as a constraint (reaction %.9g)\n", m->joint_name[j],
                   lower ? "lower" : "upper", lower ? lo : hi, res->limit_reaction[j]);
    else
      k = snprintf(buf + n, cap - n, "joint %s at its %s limit %.6g (coordinate %.9g): %s\n",
                   m->joint_name[j], lower ? "lower" : "upper", lower ? lo : hi, v, how);
    if (k > 0 && (size_t)k < cap - n) n += (size_t)k;
  }
}

int pt_inverse_request(const pt_model *m, pt_data *d, const pt_assign *acc, int nacc,
                       pt_inverse_result *res, pt_error *err) {
  int rc = result_fits(m, res, err);
  if (!rc && m->ncoupler) rc = no_follower(m, acc, nacc, err);
  if (!rc) rc = check_requests(m, acc, nacc, res, err);
  // The full request in res->cpl_req: the requested coordinates, then the couplers' followers
  // at multiplier x their leaders' accelerations, then the held limits at 0.
  if (!rc) rc = coupler_request(m, acc, nacc, res, err);
  if (rc) return rc;
  const int nbase = nacc + m->ncoupler;
  // d's kinematics (rot, x, the inertias and their inverses), once for the limits' choice and
  // the solve: those of the tree partition's last evaluation when they are its state's (its
  // forward kinematics), else from q and qd
  if (!(pt_tree_active(d) && d->tree_y_valid && d->tree_kin_held)) pt_kin_bodies(m, d);
  int nh = limits_select(m, d, acc, nacc, nbase, res);
  // Active set: solve with the held limits; release the one that pulls hardest and solve
  // again until every held limit pushes (at most one round per limit). A request with no
  // solution with the limits held is answered with them free (and said so).
  for (;;) {
    rc = request_solve(m, d, res->cpl_req, nbase + nh, res, err);
    if (rc && nh > 0) {
      for (int h = 0; h < nh; h++) {
        const int j = m->meas_joint[res->cpl_req[nbase + h].coord];
        res->limit_held[j] = 0, res->limit_reaction[j] = 0, res->limit_why[j] = LIM_DROPPED;
      }
      nh = 0;
      if (err) err->code = 0, err->msg[0] = '\0';  // the retry's outcome is the answer
      continue;
    }
    if (rc) return rc;
    if (!limits_release(m, d, nbase, &nh, res)) break;
  }
  // Couplers: the followers' request multipliers are the couplers' efforts lambda (the extra
  // force along e_f is the coupler's alone: a follower's actuator keeps its input), and the
  // leaders carry multiplier x lambda more than their own coordinates need (G^T lambda,
  // G = e_f - mult e_l).
  for (int k = 0; k < m->ncoupler; k++) {
    const double lam = extra_effort(m, d, res, nacc + k);
    res->coupler_effort[k] = lam;
    const int cl = m->joint_coord_adr[m->coupler_joint[2 * k + 1]];
    for (int q = 0; q < nacc; q++)
      if (res->req_coord[q] == cl) res->req_effort[q] += m->coupler_mult[k] * lam;
  }
  res->nreq = nacc;
  limits_notes(m, res);
  return PT_OK;
}

static int request_solve(const pt_model *m, pt_data *d, const pt_assign *acc, int nacc,
                         pt_inverse_result *res, pt_error *err) {
  int rc;
  res->method = PT_INVERSE_TREE;
  if (!res->schur_only && pt_inverse_tree_applies(m, res->tree, acc, nacc, res->tree_iwrk) &&
      request_tree(m, d, acc, nacc, res))
    return PT_OK;
  res->method = PT_INVERSE_SCHUR;
  const int n = m->ncon, nr = nacc;
  // outputs
  double *xdd = res->xdd, *lam = res->lambda;
  // work
  double *z = res->wrk, *lam0 = z + m->nv, *B = lam0 + n, *G = B + (size_t)n * nr;
  double *S = G + (size_t)n * nr, *rhs = S + nr * nr, *mu = rhs + nr, *jdx = mu + nr;
  double *Jc = jdx + nr;
  int *mark = res->iwrk, *brows = mark + n, *bcnt = brows + (size_t)n * nr;
  for (int a = 0; a < n; a++) mark[a] = 0;

  // the forward-dynamics quantities at d's own state (same values d already holds)
  pt_kin_bodies(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  pt_forces(m, d);
  rc = pt_w_factor(m, d);
  if (rc)
    return pt_error_set(err, rc, "torque request: the constraints are singular at this state");
  for (int k = 0; k < m->nbody; k++) minv6(m, d, k, d->qfrc + 6 * k, z + 6 * k);
  // W lambda0 = J M^-1 Q - gamma
  for (int a = 0; a < n; a++) {
    const int r = m->con_row[a];
    double s = 0;
    for (int b = 0; b < 2; b++) {
      const int body = m->row_body[2 * r + b];
      if (body == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) s += d->row_jac[12 * r + 6 * b + c] * z[6 * body + c];
    }
    lam0[a] = s - d->row_gamma[r];
  }
  pt_w_solve(m, d, lam0);
  // B = J M^-1 J_c^T and G = W^-1 B, column by column
  for (int k = 0; k < nr; k++) {
    const int c = acc[k].coord;
    double value, v[12];
    pt_measure(m, d, c, &value, Jc + 12 * k, jdx + k);
    const int *bk = m->meas_body + 2 * c;
    for (int s = 0; s < 2; s++) {
      if (bk[s] == PT_GROUND)
        ptu_zero(v + 6 * s, 6);
      else
        minv6(m, d, bk[s], Jc + 12 * k + 6 * s, v + 6 * s);
    }
    int *rk = brows + (size_t)n * k;
    double *bv = B + (size_t)n * k, *gk = G + (size_t)n * k;
    bcnt[k] = jac_times_pair(m, d, bk, v, mark, k + 1, rk, bv);
    ptu_zero(gk, n);
    for (int t = 0; t < bcnt[k]; t++) gk[rk[t]] = bv[t];
    pt_w_solve(m, d, gk);
  }
  // S = J_c M^-1 J_c^T - B^T G; rhs = J_c M^-1 Q - (a - Jdot_c x) - B^T lambda0
  for (int k = 0; k < nr; k++) {
    const int *bk = m->meas_body + 2 * acc[k].coord;
    for (int l = 0; l <= k; l++) {
      const int *bl = m->meas_body + 2 * acc[l].coord;
      double s = pair_minv_pair(m, d, bk, Jc + 12 * k, bl, Jc + 12 * l);
      for (int t = 0; t < bcnt[k]; t++)
        s -= B[(size_t)n * k + t] * G[(size_t)n * l + brows[(size_t)n * k + t]];
      S[k * nr + l] = S[l * nr + k] = s;
    }
    double s = 0;
    for (int b = 0; b < 2; b++) {
      if (bk[b] == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) s += Jc[12 * k + 6 * b + c] * z[6 * bk[b] + c];
    }
    for (int t = 0; t < bcnt[k]; t++) s -= B[(size_t)n * k + t] * lam0[brows[(size_t)n * k + t]];
    rhs[k] = s - (acc[k].value - jdx[k]);
  }
  // S mu = rhs by Cholesky; a vanishing pivot names the coordinate the constraints fix
  for (int k = 0; k < nr; k++) {
    const int *bk = m->meas_body + 2 * acc[k].coord;
    const double ckk = pair_minv_pair(m, d, bk, Jc + 12 * k, bk, Jc + 12 * k);
    double dk = S[k * nr + k];
    for (int l = 0; l < k; l++) dk -= S[k * nr + l] * S[k * nr + l];
    if (!(dk > PT_TOL_SCHUR_PIVOT * ckk))
      return pt_error_set(err, PT_EINVAL,
                          "torque request: the constraints fix coordinate \"%s\"%s; its "
                          "acceleration cannot be chosen", m->coord_name[acc[k].coord],
                          k > 0 ? " (given the other requested coordinates)" : "");
    dk = sqrt(dk);
    S[k * nr + k] = dk;
    for (int i = k + 1; i < nr; i++) {
      double s = S[i * nr + k];
      for (int l = 0; l < k; l++) s -= S[i * nr + l] * S[k * nr + l];
      S[i * nr + k] = s / dk;
    }
  }
  for (int k = 0; k < nr; k++) {  // L y = rhs
    double s = rhs[k];
    for (int l = 0; l < k; l++) s -= S[k * nr + l] * mu[l];
    mu[k] = s / S[k * nr + k];
  }
  for (int k = nr - 1; k >= 0; k--) {  // L^T mu = y
    double s = mu[k];
    for (int l = k + 1; l < nr; l++) s -= S[l * nr + k] * mu[l];
    mu[k] = s / S[k * nr + k];
  }
  // lambda = lambda0 - G mu; xdd = M^-1 (Q - J^T lambda - J_c^T mu)
  ptu_copy(lam, lam0, n);
  for (int k = 0; k < nr; k++)
    for (int a = 0; a < n; a++) lam[a] -= G[(size_t)n * k + a] * mu[k];
  double *f = d->wrk6;
  ptu_copy(f, d->qfrc, m->nv);
  for (int a = 0; a < n; a++) {
    const int r = m->con_row[a];
    for (int b = 0; b < 2; b++) {
      const int body = m->row_body[2 * r + b];
      if (body == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) f[6 * body + c] -= d->row_jac[12 * r + 6 * b + c] * lam[a];
    }
  }
  for (int k = 0; k < nr; k++) {
    const int *bk = m->meas_body + 2 * acc[k].coord;
    pt_apply_coord_force(d, bk[0], bk[1], Jc + 12 * k, -mu[k], f);
  }
  for (int k = 0; k < m->nbody; k++) minv6(m, d, k, f + 6 * k, xdd + 6 * k);
  request_efforts(m, d, acc, nr, mu, res);
  // fill_outputs measures with d->x: coordinate accelerations from res->xdd
  fill_outputs(m, d, res);
  return PT_OK;
}

int pt_inverse_set_time(const pt_model *m, pt_data *d, double t, pt_error *err) {
  if (!isfinite(t)) return pt_error_set(err, PT_EINVAL, "time not finite");
  const double t0 = d->time;
  double *save = malloc(sizeof(double) * (size_t)(2 * m->nq + m->ncoord) + 8);
  if (!save) return pt_error_set(err, PT_ENOMEM, "out of memory");
  ptu_copy(save, d->q, m->nq);
  ptu_copy(save + m->nq, d->qd, m->nq);
  ptu_copy(save + 2 * m->nq, d->coord_ref, m->ncoord);
  d->time = t;
  aim_motions(m, d, t);
  int rc = pt_set_state(m, d, NULL, 0, NULL, 0, err);
  if (rc) {
    d->time = t0;
    ptu_copy(d->q, save, m->nq);
    ptu_copy(d->qd, save + m->nq, m->nq);
    ptu_copy(d->coord_ref, save + 2 * m->nq, m->ncoord);
    pt_partition_free(d);
    d->acc_valid = 0;
    pt_forward(m, d);
  }
  free(save);
  return rc;
}

// ---------------------------------------------------------------------------------------------
// Conveniences over torque requests: every actuated coordinate at once, and holding efforts.

int pt_actuated_coords(const pt_model *m, int *coords, int max) {
  int n = 0;
  for (int c = 0; c < m->ncoord; c++) {
    if (actuator_of(m, c) < 0 || follower_of(m, c) >= 0) continue;  // followers: by leaders
    int driven = 0;
    for (int i = 0; i < m->nmotion; i++) driven |= m->motion_coord[i] == c;
    if (driven) continue;
    if (coords && n < max) coords[n] = c;
    n++;
  }
  return n;
}

int pt_inverse_holding(const pt_model *m, pt_data *d, pt_inverse_result *res, pt_error *err) {
  const int na = pt_actuated_coords(m, NULL, 0);
  if (na == 0)
    return pt_error_set(err, PT_EINVAL, "holding efforts: model '%s' has no joint actuator "
                        "that a torque request can name", pt_model_name(m));
  if (na > res->maxreq)
    return pt_error_set(err, PT_EINVAL, "holding efforts: %d actuated coordinates, the result "
                        "holds at most %d", na, res->maxreq);
  // At rest: every coordinate rate zero (the velocities assembled from them are zero).
  pt_assign *vel = calloc((size_t)m->ncoord + 1, sizeof(*vel));
  pt_assign *acc = calloc((size_t)na + 1, sizeof(*acc));
  int *coords = calloc((size_t)na + 1, sizeof(*coords));
  int rc = PT_ENOMEM;
  if (!vel || !acc || !coords) {
    pt_error_set(err, PT_ENOMEM, "holding efforts: out of memory");
    goto done;
  }
  for (int c = 0; c < m->ncoord; c++) vel[c] = (pt_assign){c, 0.0};
  pt_actuated_coords(m, coords, na);
  for (int k = 0; k < na; k++) acc[k] = (pt_assign){coords[k], 0.0};
  rc = pt_set_state(m, d, NULL, 0, vel, m->ncoord, err);
  if (rc == PT_OK) rc = pt_inverse_request(m, d, acc, na, res, err);
done:
  free(vel);
  free(acc);
  free(coords);
  return rc;
}
