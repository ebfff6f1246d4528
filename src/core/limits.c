// limits.c: joint limits as unilateral constraints on a tree's joint coordinates (issue 11,
// item 4), in the tree partition (tree.c) where the joint coordinates theta are integrated.
//
// Impact (at the end of a step, after the integrator's update): a coordinate beyond a bound
// is put back on it, and the limits at their bounds take impulses P >= 0 along their normals
// n (+1 at a lower bound, -1 at an upper one) so that Newton's law of restitution holds,
//   thetadot+ = thetadot- + H^-1 E P,   u+ = E^T thetadot+ >= -e min(u-, 0),
//   P >= 0,   P . (u+ + e min(u-, 0)) = 0                                          (1)
// with E the columns n_k e_{i_k}. E^T H^-1 E is the local-dynamics matrix W of the limits
// (Koziara, Solfec documentation, "Local dynamics", eq. 62-64: U = B + W R, W = H A^-1 H^T,
// the velocity of a constraint per unit impulse), here in joint coordinates, with the
// joint-space inertia H of the tree as A and E as the constraint operator.
// Hold (in every integrator stage while a limit is active, at its bound with zero approaching
// rate): the joint forces lambda >= 0 along the normals make the constrained accelerations
//   thetadd = thetadd_free + H^-1 E lambda,   E^T thetadd >= 0,   lambda . E^T thetadd = 0  (2)
// and are added to the applied forces before the accelerations are computed, so every result
// of the stage (xdd, qdd, outputs) includes them. A limit whose lambda is 0 accelerates away
// and is released at the step's end.
// The columns H^-1 e_i come from the articulated inertias of the stage's articulated-body pass
// (tree.c, pt_tree_minv: passes 2 and 3 for a unit joint force alone, a few multiply-adds per
// joint), and the accelerations are affine in the applied forces, so a stage's thetadd in (2)
// is thetadd_free plus the columns times lambda, with no second pass (pt_tree_dynamics). At a
// step's end whose limits only rest on their bounds, (1) reuses the columns and the free
// accelerations of the step's last evaluation, at the same state, and touches nothing when no
// impulse is needed. (1) and (2) are small linear complementarity problems solved exactly by
// principal pivoting on a dense Cholesky factor of W (one limit: one division).
// Two practical rules keep the discrete version honest: an impact slower than two steps of
// the free acceleration into the bound is a landing (e = 0), and the potential energy that
// putting coordinates back on their bounds adds (O(h^2)) is taken out of the kinetic energy,
// so that no step that restores a bound raises the energy. Everything lives in the data,
// sized at load (data.c): no allocation.
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "ptu.h"
#include "tolerances.h"

#define LIM_POS_TOL PT_TOL_LIMIT_POS  // a coordinate this close to a bound is on it
#define LIM_VEL_TOL 1e-9   // an approaching rate below this is at rest (rad/s or m/s)
#define LIM_PIVOT_MAXIT 200  // principal pivots of the LCP (bounded step)
#define LIM_LCP_TOL 1e-13    // relative tolerance of the complementarity tests
#define LIM_PIVOT_DEP 1e-10  // a Cholesky pivot this small relative to its diagonal: dependent

void pt_limits_init(const pt_model *m, pt_data *d) {
  d->lim_on = 0;
  d->lim_nactive = 0;
  if (!m->limits_on) return;
  int k = 0;
  if (!d->tree_ok) {  // closed loops: on the LU/QR partitions (partition/loop_limits.c)
    for (int j = 0; j < m->njoint; j++) {
      if (!m->joint_limited[j] || m->joint_coord_adr[j] < 0) continue;
      d->lim_joint[k] = j;
      d->lim_dof[k] = -1;
      d->lim_state[k] = 0;
      d->lim_pre[k] = d->lim_post[k] = 0;
      k++;
    }
    d->lim_n = k;
    d->lim_on = k > 0;
    return;
  }
  for (int j = 0; j < m->njoint; j++) {
    if (!m->joint_limited[j] || d->tree_dof[j] < 0) continue;
    int follower = 0;  // a follower's limits are not enforced: its leader's are (coupler.c)
    for (int c = 0; c < m->ncoupler; c++) follower |= m->coupler_joint[2 * c] == j;
    if (follower) continue;
    d->lim_joint[k] = j;
    d->lim_dof[k] = d->tree_dof[j];
    d->lim_state[k] = 0;
    d->lim_pre[k] = d->lim_post[k] = 0;
    k++;
  }
  d->lim_n = k;
  d->lim_on = k > 0;
}

void pt_limits_clear(pt_data *d) {
  for (int k = 0; k < d->lim_n; k++) d->lim_state[k] = 0;
  d->lim_nactive = 0;
  d->lim_cols_ok = 0;
}

// Columns H^-1 e_i (ndof) of the limits set[0..ns-1] at the current state (inertia_g, x and
// qfrc evaluated), and the free accelerations acc0 (ndof): one articulated-body pass, then
// the columns from its articulated inertias. xdd (the free pass's) and the ABA scratch are
// overwritten.
static void minv_columns(const pt_model *m, pt_data *d, const double *rate, const int *set,
                         int ns, double *acc0) {
  const int n = m->ndof;
  pt_tree_aba(m, d, rate, acc0);
  for (int s = 0; s < ns; s++) {
    double *col = d->lim_minv + (size_t)s * n;
    ptu_zero(col, n);
    col[d->lim_dof[set[s]]] = 1;
    pt_tree_minv(m, d, col, col);
  }
  if (d->cpl_on) {  // the coupled dynamics (coupler.c, prepared at this state): P H^-1 e_i
    pt_couplers_project(m, d, acc0, n, 1);
    pt_couplers_project(m, d, d->lim_minv, n, ns);
  }
}

static double normal(const pt_data *d, int k) { return d->lim_state[k] < 0 ? 1.0 : -1.0; }

// x_A = -W_AA^-1 b_A for the limits in A (in[a] = 1), by a dense Cholesky factor (W is
// symmetric positive definite on a tree: E selects distinct coordinates of H^-1); the others
// 0. On a closed loop two limits can be dependent (a parallelogram's crank and rocker turn
// alike): a pivot below LIM_PIVOT_DEP of its diagonal takes that limit out of A (its rate
// follows the others').
static void solve_active(pt_data *d, int ns, const double *b) {
  const double *W = d->lim_w;
  double *L = d->lim_l, *x = d->lim_x;
  int *in = d->lim_in;
  for (int a = 0; a < ns; a++) {
    x[a] = 0;
    if (!in[a]) continue;
    for (int c = 0; c <= a; c++) {
      if (!in[c]) continue;
      double v = W[a * ns + c];
      for (int e = 0; e < c; e++)
        if (in[e]) v -= L[a * ns + e] * L[c * ns + e];
      if (c == a && !(v > LIM_PIVOT_DEP * W[a * ns + a])) {
        in[a] = 0;  // dependent on the limits before it
        break;
      }
      L[a * ns + c] = c == a ? sqrt(v) : v / L[c * ns + c];
    }
  }
  for (int a = 0; a < ns; a++) {  // L y = -b
    if (!in[a]) continue;
    double v = -b[a];
    for (int e = 0; e < a; e++)
      if (in[e]) v -= L[a * ns + e] * x[e];
    x[a] = v / L[a * ns + a];
  }
  for (int a = ns - 1; a >= 0; a--) {  // L^T x = y
    if (!in[a]) continue;
    double v = x[a];
    for (int e = a + 1; e < ns; e++)
      if (in[e]) v -= L[e * ns + a] * x[e];
    x[a] = v / L[a * ns + a];
  }
}

// The LCP w = W x + b >= 0, x >= 0, x . w = 0 for the ns limits of set, with
// W_kl = n_k n_l (H^-1)_{i_k i_l} from the columns; x in lim_x. Solved exactly by Murty's
// least-index principal pivoting ("Note on a Bard-type scheme for solving the
// complementarity problem", 1974), finite for the positive definite W: the pushing set A is
// flipped at the first limit that pulls (x < 0 in A) or penetrates (w < 0 outside A). One
// limit: one division. Bounded by LIM_PIVOT_MAXIT flips.
static void lcp(pt_data *d, const int *set, int ns, const double *b, int n) {
  double *W = d->lim_w;
  for (int a = 0; a < ns; a++)
    for (int c = 0; c < ns; c++)
      W[a * ns + c] = normal(d, set[a]) * normal(d, set[c]) *
                      d->lim_minv[(size_t)c * n + d->lim_dof[set[a]]];
  pt_limits_lcp(d, ns, b);
}

// The LCP w = W x + b >= 0, x >= 0, x . w = 0 with W (ns x ns, symmetric positive definite)
// already in lim_w; x in lim_x (the closed loops' W comes from partition/loop_limits.c).
void pt_limits_lcp(pt_data *d, int ns, const double *b) {
  double *W = d->lim_w, *x = d->lim_x;
  int *in = d->lim_in;
  double scale = 0;
  for (int a = 0; a < ns; a++) scale = fmax(scale, fabs(b[a]));
  if (ns == 1) {  // a limit the loop locks (W = 0, partition/loop_limits.c) takes no impulse
    x[0] = W[0] > 0 ? fmax(0.0, -b[0] / W[0]) : 0.0;
    return;
  }
  const double tol = LIM_LCP_TOL * scale;
  for (int a = 0; a < ns; a++) in[a] = b[a] < 0;
  int solved = 0;
  for (int it = 0; it < LIM_PIVOT_MAXIT && !solved; it++) {
    solve_active(d, ns, b);
    int flip = -1;
    for (int a = 0; a < ns && flip < 0; a++) {
      if (in[a]) {
        if (x[a] < -tol / W[a * ns + a]) flip = a;
      } else {
        double w = b[a];
        for (int c = 0; c < ns; c++) w += W[a * ns + c] * x[c];
        if (w < -tol) flip = a;
      }
    }
    if (flip < 0) {
      solved = 1;
      break;
    }
    in[flip] = !in[flip];
  }
  if (!solved) d->counters.limit_lcp_unsolved++;  // not silent: pt_get_counters
  for (int a = 0; a < ns; a++) x[a] = fmax(0.0, x[a]);
}

// W x = -b (W in lim_w, ns x ns, symmetric positive definite), x in lim_x.
void pt_limits_solve(pt_data *d, int ns, const double *b) {
  for (int a = 0; a < ns; a++) d->lim_in[a] = 1;
  solve_active(d, ns, b);
}

// (2): the reactions of the active limits at this stage's state (inertia_g, x and qfrc
// evaluated), added to qfrc; the free accelerations in lim_acc, the columns in lim_minv and
// the reactions in lim_x for the ns limits of lim_set, and the state they belong to (lim_y,
// the stage's tree_y) for the step's end. Returns the number of limits that push.
static int hold(const pt_model *m, pt_data *d, const double *rate, int *nset) {
  const int n = m->ndof;
  int *set = d->lim_set, ns = 0;
  for (int k = 0; k < d->lim_n; k++)
    if (d->lim_state[k]) set[ns++] = k;
  *nset = ns;
  if (!ns) return 0;
  double *acc0 = d->lim_acc, *b = d->lim_b;
  minv_columns(m, d, rate, set, ns, acc0);
  d->lim_cols_ok = d->tree_y_valid && !d->cpl_on;
  if (d->lim_cols_ok) {
    ptu_copy(d->lim_y, d->tree_y, 2 * n);
    d->lim_cols_t = d->time;
    d->lim_cols_ns = ns;
  }
  for (int a = 0; a < ns; a++) b[a] = normal(d, set[a]) * acc0[d->lim_dof[set[a]]];
  lcp(d, set, ns, b, n);
  int npush = 0;
  for (int a = 0; a < ns; a++) {
    const double f = normal(d, set[a]) * d->lim_x[a];
    if (f == 0) continue;
    const int c = m->joint_coord_adr[d->lim_joint[set[a]]];
    double jac[12], val, jdx;
    pt_measure(m, d, c, &val, jac, &jdx);
    pt_apply_coord_force(d, m->meas_body[2 * c], m->meas_body[2 * c + 1], jac, f, d->qfrc);
    npush++;
  }
  return npush;
}

int pt_limits_hold(const pt_model *m, pt_data *d, const double *rate) {
  int ns;
  return hold(m, d, rate, &ns);
}

// The reactions of the couplers (coupler.c) and of the held limits at this stage's state, added
// to qfrc: the tree partition's hold. The limits see the coupled dynamics, so they sit above the
// couplers (limits.c calls coupler.c, never the other way). Returns the number of limits that
// push, or -1 when the couplers' W is not positive definite (the stage then fails: nothing is
// held silently wrong).
int pt_tree_hold(const pt_model *m, pt_data *d, const double *rate) {
  if (!d->cpl_on) return d->lim_nactive ? pt_limits_hold(m, d, rate) : 0;
  if (pt_couplers_prepare(m, d, rate)) return -1;
  int npush = 0;
  if (d->lim_nactive) {
    npush = pt_limits_hold(m, d, rate);  // projected columns (minv_columns)
    if (npush) pt_tree_aba(m, d, rate, d->cpl_acc);  // with the limits' forces
  }
  pt_couplers_hold(m, d, rate, d->cpl_acc);
  return npush;
}

int pt_tree_dynamics(const pt_model *m, pt_data *d, const double *rate, double *thetadd) {
  if (d->cpl_on || !d->lim_nactive) {
    if (pt_tree_hold(m, d, rate) < 0) return -1;
    pt_tree_aba(m, d, rate, thetadd);
    return 0;
  }
  // limits alone: (2)'s thetadd = thetadd_free + H^-1 E lambda from the hold's free pass and
  // columns, every body's xdd from it (without a reaction the free pass's xdd stand)
  const int n = m->ndof;
  int ns;
  const int npush = hold(m, d, rate, &ns);
  ptu_copy(thetadd, d->lim_acc, n);
  if (!npush) return 0;
  for (int a = 0; a < ns; a++) {
    const double f = normal(d, d->lim_set[a]) * d->lim_x[a];
    if (f == 0) continue;
    const double *col = d->lim_minv + (size_t)a * n;
    for (int i = 0; i < n; i++) thetadd[i] += f * col[i];
  }
  pt_tree_accelerations(m, d, thetadd);
  return 0;
}


static double energy(const pt_model *m, const pt_data *d) {
  return pt_kinetic(m, d) + pt_potential(m, d);
}

// (1) at the end of a step: y = (theta, thetadot) of the state held now (tree_y). Clamps,
// takes the impulses, updates the limits' states and y. Returns 1 if y or the set of held limits
// changed (the caller evaluates the state again and restarts a multistep integrator), 2 if
// only the evaluation was overwritten (limits resting: the caller evaluates again), 0 if
// nothing was touched.
int pt_limits_after_step(const pt_model *m, pt_data *d, double *y) {
  const int n = m->ndof;
  int *set = d->lim_set, ns = 0, changed = 0, nactive = 0, clamped = 0;
  double e0 = 0;
  for (int k = 0; k < d->lim_n; k++) {
    const int i = d->lim_dof[k], j = d->lim_joint[k];
    clamped |= y[i] < m->joint_limit[2 * j] || y[i] > m->joint_limit[2 * j + 1];
  }
  if (clamped) e0 = energy(m, d);  // the step's end state, before the bounds are restored
  for (int k = 0; k < d->lim_n; k++) {
    const int i = d->lim_dof[k], j = d->lim_joint[k];
    const double lo = m->joint_limit[2 * j], hi = m->joint_limit[2 * j + 1];
    const int was = d->lim_state[k];
    if (y[i] < lo || y[i] > hi) {
      d->lim_state[k] = y[i] < lo ? -1 : 1;
      y[i] = y[i] < lo ? lo : hi;
      set[ns++] = k;
      changed = 1;
      continue;
    }
    if (!was) continue;
    const double bound = was < 0 ? lo : hi;
    if (fabs(y[i] - bound) <= LIM_POS_TOL && normal(d, k) * y[n + i] <= LIM_VEL_TOL) {
      set[ns++] = k;  // still resting on the bound
    } else {
      d->lim_state[k] = 0;  // moved away: released
      changed = 1;
    }
  }
  if (!ns) {
    d->lim_nactive = 0;
    return changed;
  }
  // limits resting on their bounds, none clamped or released: the step's last evaluation held
  // the same limits at this very state, and its free accelerations and columns stand
  const int reuse = !clamped && !changed && d->lim_cols_ok && d->lim_cols_ns == ns &&
                    d->lim_cols_t == d->time && memcmp(y, d->lim_y, sizeof(double) * 2 * n) == 0;
  double *acc0 = d->lim_acc, *b = d->lim_b;
  if (!reuse) {
    // the clamped state's bodies and forces, for the columns of H^-1; a clamped leader takes
    // its followers along
    if (d->cpl_on) pt_couplers_fix(m, y, n, d->cpl_dof);
    pt_tree_positions(m, d, y);
    pt_tree_velocities(m, d, y + n);
    pt_kin_inertias(m, d, 0);
    pt_forces(m, d);
    if (d->cpl_on) pt_couplers_prepare(m, d, y + n);
    minv_columns(m, d, y + n, set, ns, acc0);
    d->lim_cols_ok = 0;
  }
  double impulse = 0;
  for (int a = 0; a < ns; a++) {
    const int k = set[a];
    const double u = normal(d, k) * y[n + d->lim_dof[k]];
    // u+ >= -e min(u-, 0); an impact slower than what the free acceleration into the bound
    // gives in two steps is a landing (e = 0): a bouncing ball's infinitely many ever smaller
    // bounces end in a rest instead of one bounce per step
    const double landing = 2 * d->dt * fmax(0.0, -normal(d, k) * acc0[d->lim_dof[k]]);
    const double e = -u > landing ? m->restitution : 0.0;
    b[a] = u + e * fmin(u, 0.0);
    d->lim_u[a] = u;
  }
  lcp(d, set, ns, b, n);
  for (int a = 0; a < ns; a++) {
    const double p = normal(d, set[a]) * d->lim_x[a];
    if (p == 0) continue;
    impulse = fmax(impulse, fabs(p));
    const double *col = d->lim_minv + (size_t)a * n;
    for (int i = 0; i < n; i++) y[n + i] += p * col[i];
  }
  // Putting a coordinate back on its bound moves the bodies: against the load that pushes it
  // there, that raises the potential energy by O(h^2) (a joint landing on its bound in a
  // chain under gravity: up to 0.07 J at 1 ms), which the impulse need not take away. The
  // excess comes out of the kinetic energy (all rates scaled by one factor < 1, which keeps
  // every limit's rate sign): a step that restores a bound never raises the energy.
  if (clamped) {
    pt_tree_velocities(m, d, y + n);
    const double e1 = energy(m, d);
    if (e1 > e0) {
      const double ek = pt_kinetic(m, d);
      const double f = ek > 0 ? sqrt(fmax(0.0, (ek - (e1 - e0)) / ek)) : 0.0;
      for (int i = 0; i < n; i++) y[n + i] *= f;
    }
  }
  for (int a = 0; a < ns; a++) {
    const int k = set[a], i = d->lim_dof[k];
    if (d->lim_u[a] < -LIM_VEL_TOL) {  // an impact (not a limit resting on its bound)
      d->lim_pre[k] = normal(d, k) * d->lim_u[a];
      d->lim_post[k] = y[n + i];
      d->counters.limit_impacts++;
    }
    // bouncing away (restitution): free; otherwise resting on the bound, held from now on
    if (normal(d, k) * y[n + i] > LIM_VEL_TOL) {
      d->lim_state[k] = 0;
      changed = 1;
    } else {
      nactive++;
    }
  }
  d->lim_nactive = nactive;
  // with the columns reused nothing of the evaluation was overwritten
  return changed || impulse > 0 ? 1 : reuse ? 0 : 2;
}

int pt_joint_limit_state(const pt_data *d, int joint, double *pre, double *post) {
  for (int k = 0; k < d->lim_n; k++) {
    if (d->lim_joint[k] != joint) continue;
    if (pre) *pre = d->lim_pre[k];
    if (post) *post = d->lim_post[k];
    return d->lim_state[k];
  }
  return 0;
}

int pt_limit_at(const pt_model *m, const pt_data *d, int j, double v, double w, int *side) {
  const double lo = m->joint_limit[2 * j], hi = m->joint_limit[2 * j + 1];
  *side = !m->joint_limited[j] ? 0 : v <= lo + LIM_POS_TOL ? -1 : v >= hi - LIM_POS_TOL ? 1 : 0;
  for (int k = 0; d->lim_on && k < d->lim_n; k++) {
    if (d->lim_joint[k] != j) continue;
    if (!*side) return 0;
    return d->lim_state[k] == *side || fabs(w) <= LIM_VEL_TOL;
  }
  return -1;
}

// Lines "joint NAME at its lower limit -0.5 (coordinate -0.5): HOW" for each limited joint whose
// coordinate (coord, ncoord) is on or beyond a bound, appended to buf (NUL-terminated, size n).
// The analyses name with it the limits they treat as free.
int pt_joint_limits_note(const pt_model *m, const double *coord, const char *how, char *buf,
                         size_t n) {
  int count = 0;
  for (int j = 0; j < m->njoint; j++) {
    const int c = m->joint_coord_adr[j];
    if (!m->joint_limited[j] || c < 0) continue;
    int follower = 0;  // a follower's limits are not enforced (coupler.c): nothing to say
    for (int k = 0; k < m->ncoupler; k++) follower |= m->coupler_joint[2 * k] == j;
    if (follower) continue;
    const double v = coord[c], lo = m->joint_limit[2 * j], hi = m->joint_limit[2 * j + 1];
    const int side = v <= lo + LIM_POS_TOL ? -1 : v >= hi - LIM_POS_TOL ? 1 : 0;
    if (!side) continue;
    const size_t k = strlen(buf);
    if (k + 1 < n)
      snprintf(buf + k, n - k, "joint %s at its %s limit %.6g (coordinate %.9g): %s\n",
               m->joint_name[j], side < 0 ? "lower" : "upper", side < 0 ? lo : hi, v, how);
    count++;
  }
  return count;
}
