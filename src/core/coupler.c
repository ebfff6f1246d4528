// coupler.c: couplers between two joint coordinates of a tree (issue 11, item 3: URDF
// <mimic>, YAML couplers:), theta_f = mult theta_l + offset, in the tree partition (tree.c)
// where the joint coordinates theta are integrated.
//
// A coupler is an always-active bilateral row of the joint-space dynamics,
//   G theta = offset,   G = e_f - mult e_l  (one row per coupler, ncoupler x ndof),
// held by a joint force lambda on the follower and -mult lambda on the leader (the coupler's
// effort: what it transmits, power-consistent with G^T lambda). In every integrator stage
//   H thetadd = tau + G^T lambda,   G thetadd = 0                                     (1)
// (G is constant: no velocity term), so with the columns C = H^-1 G^T and W = G C,
//   lambda = -W^-1 G thetadd_free,   thetadd = thetadd_free + C lambda               (2)
// the same local-dynamics form as the joint limits (limits.c; Koziara, Solfec documentation,
// "Local dynamics": W = H A^-1 H^T, here in joint coordinates). C comes from the
// articulated inertias of the stage's articulated-body pass (pt_tree_minv: passes 2 and 3 for
// a joint force alone, a few multiply-adds per joint per coupler); W is factored by a dense
// Cholesky (it is positive definite: the rows are independent since no joint follows twice
// and no leader follows). lambda is added to the applied forces before the stage's
// accelerations are computed, so every result of the stage (xdd, qdd, outputs, joint
// reactions) includes it.
// The joint limits of the same stage see the coupled dynamics: their columns H^-1 e_i are
// projected, P H^-1 e_i with P = I - C W^-1 G (G P = 0), so limit forces and impulses never
// break a coupler; a limit on a follower is not enforced (the leader's is).
// Runge-Kutta, Adams and semi-implicit Euler steps preserve the linear invariants G theta and
// G thetadot, so the couplers hold to roundoff; the step's end puts the followers back when
// the drift exceeds CPL_DRIFT (a projection, then the state is evaluated again).
// Everything lives in the data, sized at load (data.c): no allocation.
#include <string.h>

#include "engine.h"
#include "ptu.h"

#define CPL_DRIFT 1e-11  // follower drift (rad or m, rad/s or m/s) that is corrected

void pt_couplers_init(const pt_model *m, pt_data *d) {
  d->cpl_on = 0;
  if (!m->ncoupler || !d->tree_ok) return;
  for (int k = 0; k < m->ncoupler; k++) {
    d->cpl_dof[2 * k] = d->tree_dof[m->coupler_joint[2 * k]];
    d->cpl_dof[2 * k + 1] = d->tree_dof[m->coupler_joint[2 * k + 1]];
    if (d->cpl_dof[2 * k] < 0 || d->cpl_dof[2 * k + 1] < 0) return;
    d->cpl_force[k] = 0;
  }
  d->cpl_on = 1;
}

// y = (theta, thetadot) (2 n): each follower from its leader.
void pt_couplers_fix(const pt_model *m, double *y, int n, const int *dof) {
  for (int k = 0; k < m->ncoupler; k++) {
    const int f = dof[2 * k], l = dof[2 * k + 1];
    y[f] = m->coupler_mult[k] * y[l] + m->coupler_offset[k];
    y[n + f] = m->coupler_mult[k] * y[n + l];
  }
}

// Adds the joint force f on the follower and -mult f on the leader of coupler k to qfrc.
static void apply(const pt_model *m, pt_data *d, int k, double f) {
  for (int s = 0; s < 2; s++) {
    const int c = m->joint_coord_adr[m->coupler_joint[2 * k + s]];
    double jac[12], val, jdx;
    pt_measure(m, d, c, &val, jac, &jdx);
    pt_apply_coord_force(d, m->meas_body[2 * c], m->meas_body[2 * c + 1], jac,
                         s ? -m->coupler_mult[k] * f : f, d->qfrc);
  }
}

// r = G v (ncoupler)
static void g_mul(const pt_model *m, const pt_data *d, const double *v, double *r) {
  for (int k = 0; k < m->ncoupler; k++)
    r[k] = v[d->cpl_dof[2 * k]] - m->coupler_mult[k] * v[d->cpl_dof[2 * k + 1]];
}

// r = W^-1 r by the Cholesky factor in cpl_w (lower triangle).
static void w_solve(const pt_model *m, const pt_data *d, double *r) {
  const int nk = m->ncoupler;
  const double *L = d->cpl_w;
  for (int a = 0; a < nk; a++) {
    double v = r[a];
    for (int e = 0; e < a; e++) v -= L[a * nk + e] * r[e];
    r[a] = v / L[a * nk + a];
  }
  for (int a = nk - 1; a >= 0; a--) {
    double v = r[a];
    for (int e = a + 1; e < nk; e++) v -= L[e * nk + a] * r[e];
    r[a] = v / L[a * nk + a];
  }
}

// At this stage's state (inertia_g, x and qfrc evaluated): the free accelerations cpl_acc,
// the columns C = H^-1 G^T (cpl_minv) and the Cholesky factor of W = G C (cpl_w). Leaves qfrc
// as it found it; xdd and the ABA scratch are overwritten. Returns 0, or -1 if W is not
// positive definite (a coupler that cannot move its coordinates: never on a valid tree).
int pt_couplers_prepare(const pt_model *m, pt_data *d, const double *rate) {
  const int n = m->ndof, nk = m->ncoupler;
  pt_tree_aba(m, d, rate, d->cpl_acc);
  for (int k = 0; k < nk; k++) {  // G_k^T = e_f - mult e_l, then H^-1 G_k^T in place
    double *col = d->cpl_minv + (size_t)k * n;
    ptu_zero(col, n);
    col[d->cpl_dof[2 * k]] = 1;
    col[d->cpl_dof[2 * k + 1]] -= m->coupler_mult[k];
    pt_tree_minv(m, d, col, col);
  }
  double *L = d->cpl_w;
  for (int a = 0; a < nk; a++) {
    double *r = d->cpl_rhs;
    for (int c = 0; c <= a; c++) {  // W_ac = G_a C_c, then the factor in place
      const double *col = d->cpl_minv + (size_t)c * n;
      r[c] = col[d->cpl_dof[2 * a]] - m->coupler_mult[a] * col[d->cpl_dof[2 * a + 1]];
    }
    for (int c = 0; c <= a; c++) {
      double v = r[c];
      for (int e = 0; e < c; e++) v -= L[a * nk + e] * L[c * nk + e];
      if (c < a) {
        L[a * nk + c] = v / L[c * nk + c];
      } else {
        if (!(v > 0)) return -1;
        L[a * nk + a] = sqrt(v);
      }
    }
  }
  return 0;
}

// v <- P v = v - C W^-1 G v for ncol vectors of length ndof, stride apart (after prepare):
// the part of an acceleration or a rate change that the couplers let through.
void pt_couplers_project(const pt_model *m, const pt_data *d, double *v, int stride,
                         int ncol) {
  const int n = m->ndof, nk = m->ncoupler;
  double *r = d->cpl_rhs;
  for (int j = 0; j < ncol; j++) {
    double *vj = v + (size_t)j * stride;
    g_mul(m, d, vj, r);
    w_solve(m, d, r);
    for (int k = 0; k < nk; k++) {
      const double *col = d->cpl_minv + (size_t)k * n;
      for (int i = 0; i < n; i++) vj[i] -= col[i] * r[k];
    }
  }
}

// (2): lambda = -W^-1 G acc for the accelerations acc that the current qfrc gives without
// the couplers (after prepare); lambda into qfrc and cpl_force.
void pt_couplers_hold(const pt_model *m, pt_data *d, const double *rate, const double *acc) {
  (void)rate;
  double *r = d->cpl_rhs;
  g_mul(m, d, acc, r);
  w_solve(m, d, r);
  for (int k = 0; k < m->ncoupler; k++) {
    d->cpl_force[k] = -r[k];
    apply(m, d, k, -r[k]);
  }
}

// At the step's end, y = (theta, thetadot) of the state held now: followers put back on their
// couplers if they drifted by more than CPL_DRIFT. Returns 1 if y changed.
int pt_couplers_after_step(const pt_model *m, pt_data *d, double *y) {
  if (!d->cpl_on) return 0;
  const int n = m->ndof;
  double drift = 0;
  for (int k = 0; k < m->ncoupler; k++) {
    const int f = d->cpl_dof[2 * k], l = d->cpl_dof[2 * k + 1];
    const double mu = m->coupler_mult[k];
    drift = fmax(drift, fabs(y[f] - mu * y[l] - m->coupler_offset[k]));
    drift = fmax(drift, fabs(y[n + f] - mu * y[n + l]));
  }
  if (!(drift > CPL_DRIFT)) return 0;
  pt_couplers_fix(m, y, n, d->cpl_dof);
  return 1;
}

// ---- public accessors --------------------------------------------------------------------

int pt_model_ncoupler(const pt_model *m) { return m->ncoupler; }

const char *pt_coupler_name(const pt_model *m, int k) {
  return k >= 0 && k < m->ncoupler ? m->coupler_name[k] : NULL;
}

// The coupler whose follower is joint j, or -1 (a joint follows one coupler at most:
// compile/couplers.c).
int pt_coupler_of_joint(const pt_model *m, int j) {
  for (int k = 0; j >= 0 && k < m->ncoupler; k++)
    if (m->coupler_joint[2 * k] == j) return k;
  return -1;
}

int pt_coupler_info(const pt_model *m, int k, int *follower, int *leader, double *multiplier,
                    double *offset) {
  if (k < 0 || k >= m->ncoupler) return PT_EINVAL;
  if (follower) *follower = m->coupler_joint[2 * k];
  if (leader) *leader = m->coupler_joint[2 * k + 1];
  if (multiplier) *multiplier = m->coupler_mult[k];
  if (offset) *offset = m->coupler_offset[k];
  return PT_OK;
}

double pt_coupler_force(const pt_data *d, int k) {
  const pt_model *m = d->model;
  return d->cpl_on && k >= 0 && k < m->ncoupler ? d->cpl_force[k] : 0.0;
}
