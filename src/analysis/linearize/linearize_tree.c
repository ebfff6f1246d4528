// linearize_tree.c: the linearization of a tree in its joint coordinates by differentiated
// recursive Newton-Euler passes (issue 10), in place of the augmented sensitivity system.
//
// On a tree of revolute, prismatic and fixed joints (the tree partition of tree.c) with the
// joint coordinates theta as states, the equations of motion are the joint residuals of the
// recursive Newton-Euler algorithm (Featherstone, "Rigid Body Dynamics Algorithms", 2008,
// Table 5.1), written in the engine's body variables like tree.c's articulated-body pass:
//   x_k = X x_p + S thetadot,  xdd_k = X xdd_p + S thetadd + c      (tree.c, 7.1-7.2)
//   f_k = M_k xdd_k - Q_k(q, x, u),  F_k = f_k + sum_children X^T F_c,  tau_j = S^T F_k
// and tau(theta, thetadot, thetadd, u) = 0 (every applied force, actuators included, is in Q).
// Differentiating tau = 0 at the operating point gives
//   H thetadd_X = -dtau/dX,   X = theta_j, thetadot_j, input c,   H = dtau/dthetadd
// (H the joint-space mass matrix). Each dtau/dX is a directional derivative of the two passes
// (forward mode: every body's delta q = (delta r, delta pi), delta x, delta xdd root to leaves,
// then delta F leaves to root), O(n) per column; the identity H thetadd_X = -tau_X is the one
// behind Carpentier and Mansard's "Analytical Derivatives of Rigid Body Dynamics Algorithms"
// (RSS 2018). The applied forces enter through their partials Q_q, Q_u, Q_input
// (linearize_forces.c, the augmented path's own), kept as the non-zero 6 x 6 body blocks.
// One Cholesky factor of H serves all 2n + nu columns. Then, with the states S = theta:
//   A = [0 I; thetadd_theta thetadd_thetadot],  B = [0; thetadd_u],
//   M = H (eq. 30: u_W^T M u_W = J^T M J),  C = dtau/dthetadot,  K = dtau/dtheta (eq. 29).
// Chart: delta A = delta pi~ A (pi global), velocities (rdot, omega) held, as the augmented
// path and the engine's Jacobians. Outputs other than joint coordinates read the body
// sensitivities q_X, u_X, udot_X (ptd_tree_cartesian) with the augmented path's partials.
#include <lapacke.h>
#include <stdlib.h>

#include "linearize_internal.h"
#include "ptu.h"
#include "tolerances.h"

typedef struct {      // one joint, parent-first order, at the operating point
  int kid, par, dof;  // child body, parent body (or PT_GROUND), independent coordinate or -1
  int type, b1par;    // joint type; 1 if body1 (the axis's body) is the parent
  double sg;          // +1 when the child is body2 (theta moves body2 relative to body1)
  double d[3];        // r_kid - r_par
  double h[3], s[3];  // axis (global); child's arm from its CoM to the joint point
  double S[6];        // motion subspace at the child's CoM
  double thd, thdd;   // joint rate and acceleration
} node;

typedef struct {      // one body's directional derivatives
  double dq[6];       // (delta r, delta pi)
  double dx[6];       // (delta rdot, delta omega)
  double da[6];       // (delta rddot, delta omegadot)
  double df[6];       // delta f, then delta F (children added)
  double dd[3];       // delta (r_kid - r_par) of the joint to the parent
  double dS[6];       // delta S of that joint
  int live;           // 0: every delta of this body is zero (outside the moved subtree)
} dirv;

struct ptd_tree {
  int nb, n, nv, nin;  // bodies, degrees of freedom, 6 nb, model inputs
  int *dof_of_meas;    // (ncoord) tree dof of each coordinate, -1
  node *nd;            // (nb) parent-first
  dirv *dv;            // (nb) by body
  double *F;           // (nb x 6) constraint wrench each joint passes to its child
  double *thd, *thdd;  // (n), (n) joint rates and accelerations at the operating point
  double *Qq, *Qu;     // (nv x nv) force partials, row-major; zero outside the pairs below
  int *pair;           // (2 x npair) body pairs whose block a force element can fill
                       // (ptd_force_pairs)
  int npair;
  double *Qin;         // (nv x nin) input partials of the inputs asked for, row-major
  int *blk;            // (2 x blk_cap) body pairs (row, column) with a non-zero block
  double *bqu;         // (blk_cap x 72) those blocks: Qq then Qu, 6 x 6 row-major
  int nblk, blk_cap;
  double *H;           // (n x n) column-major
  double *L;           // (n x n) its Cholesky factor
  double *T;           // (n x (2n + nin)) dtau by columns: theta, thetadot, inputs
  double *Y;           // (n x (2n + nin)) thetadd by the same columns
  // couplers (coupler.c): theta = Tm theta_r, the followers eliminated. Tm has one entry per
  // row: rcoef[i] in column ridx[i] (1 in its own for an independent dof, the multiplier in
  // its leader's for a follower). The results are then the reduced ones (nr dofs).
  int nf, nr;          // followers, independent dofs
  int *ridx;           // (n) reduced dof of each dof's column of Tm
  int *fol;            // (n) 1 for a follower (or a coordinate held on its limit)
  int *held;           // (n) scratch: dofs held on a limit
  double *rcoef;       // (n)
  double *Hr, *Lr;     // (nr x nr) Tm^T H Tm and its Cholesky factor
  double *Tr, *Yr;     // (nr x (2 nr + nin)) Tm^T dtau Tm by columns, thetadd_r
};

enum { POS, VEL, ACC, INPUT };

void ptd_tree_free(ptd_tree *t) {
  if (!t) return;
  free(t->dof_of_meas), free(t->thd), free(t->nd), free(t->dv), free(t->F);
  free(t->Qq), free(t->Qu), free(t->pair);
  free(t->Qin), free(t->blk), free(t->bqu), free(t->H), free(t->L), free(t->T), free(t->Y);
  free(t->ridx), free(t->fol), free(t->held), free(t->rcoef), free(t->Hr), free(t->Lr), free(t->Tr), free(t->Yr);
  free(t);
}

static int couplers_new(const pt_model *m, const pt_data *w, ptd_tree *t);
static void map_build(const pt_model *m, const pt_data *w, ptd_tree *t, const int *held);

ptd_tree *ptd_tree_new(const pt_model *m, const pt_data *w) {
  if (!w->tree_ok || m->nbody == 0) return NULL;
  ptd_tree *t = calloc(1, sizeof(*t));
  if (!t) return NULL;
  const int nb = m->nbody, n = m->ndof, nv = m->nv, ncol = 2 * n + m->ninput;
  t->nb = nb, t->n = n, t->nv = nv, t->nin = m->ninput;
  t->dof_of_meas = malloc(sizeof(int) * ((size_t)m->ncoord + 1));
  t->nd = calloc((size_t)nb, sizeof(node));
  t->dv = calloc((size_t)nb, sizeof(dirv));
  t->F = malloc(sizeof(double) * 6 * (size_t)nb);
  t->thd = malloc(sizeof(double) * (2 * (size_t)n + 1));
  t->Qq = calloc((size_t)nv * nv, sizeof(double));
  t->Qu = calloc((size_t)nv * nv, sizeof(double));
  t->pair = malloc(sizeof(int) * (size_t)PTD_FORCE_PAIRS_MAX(m));
  t->Qin = malloc(sizeof(double) * ((size_t)nv * m->ninput + 1));
  t->H = malloc(sizeof(double) * ((size_t)n * n + 1));
  t->L = malloc(sizeof(double) * ((size_t)n * n + 1));
  t->T = malloc(sizeof(double) * ((size_t)n * ncol + 1));
  t->Y = malloc(sizeof(double) * ((size_t)n * ncol + 1));
  if (!t->dof_of_meas || !t->thd || !t->nd || !t->dv || !t->F || !t->Qq || !t->Qu || !t->pair ||
      !t->Qin || !t->H || !t->L || !t->T || !t->Y) {
    ptd_tree_free(t);
    return NULL;
  }
  t->thdd = t->thd + n;
  for (int c = 0; c < m->ncoord; c++) t->dof_of_meas[c] = -1;
  for (int i = 0; i < n; i++) t->dof_of_meas[w->tree_coord[i]] = i;
  t->npair = ptd_force_pairs(m, t->pair);
  for (int o = 0; o < nb; o++) {
    const int j = w->tree_joint[o], ch = w->tree_child[j];
    const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    node *e = t->nd + o;
    e->kid = ch == 1 ? b2 : b1, e->par = ch == 1 ? b1 : b2;
    e->dof = w->tree_dof[j], e->type = m->joint_type[j], e->b1par = ch == 1;
    e->sg = ch == 1 ? 1 : -1;
  }
  if ((m->ncoupler > 0 || (w->lim_on && m->nlimit > 0)) && !couplers_new(m, w, t)) {
    ptd_tree_free(t);
    return NULL;
  }
  return t;
}

// The reduced coordinates of a model with couplers (the struct's Tm).
static int couplers_new(const pt_model *m, const pt_data *w, ptd_tree *t) {
  const int n = t->n, nr = n - m->ncoupler, ncol = 2 * nr + m->ninput;
  t->nf = m->ncoupler, t->nr = nr;
  t->ridx = malloc(sizeof(int) * ((size_t)n + 1));
  t->fol = calloc((size_t)n + 1, sizeof(int));
  t->held = calloc((size_t)n + 1, sizeof(int));
  t->rcoef = malloc(sizeof(double) * ((size_t)n + 1));
  t->Hr = malloc(sizeof(double) * ((size_t)nr * nr + 1));
  t->Lr = malloc(sizeof(double) * ((size_t)nr * nr + 1));
  t->Tr = malloc(sizeof(double) * ((size_t)nr * ncol + 1));
  t->Yr = malloc(sizeof(double) * ((size_t)nr * ncol + 1));
  if (!t->ridx || !t->fol || !t->held || !t->rcoef || !t->Hr || !t->Lr || !t->Tr || !t->Yr) return 0;
  map_build(m, w, t, NULL);
  return 1;
}

// Tm for the couplers and the limits held (held[dof] != 0: the coordinate stays on its
// bound, rcoef 0); a follower of a held leader is held too.
static void map_build(const pt_model *m, const pt_data *w, ptd_tree *t, const int *held) {
  const int n = t->n;
  for (int i = 0; i < n; i++) t->fol[i] = held && held[i], t->rcoef[i] = held && held[i] ? 0 : 1;
  for (int k = 0; w->cpl_on && k < m->ncoupler; k++) t->fol[w->cpl_dof[2 * k]] = 1;
  int r = 0;
  for (int i = 0; i < n; i++) t->ridx[i] = t->fol[i] ? 0 : r++;
  for (int k = 0; w->cpl_on && k < m->ncoupler; k++) {
    const int f = w->cpl_dof[2 * k], l = w->cpl_dof[2 * k + 1];
    t->ridx[f] = t->ridx[l];
    t->rcoef[f] = t->rcoef[l] == 0 ? 0 : m->coupler_mult[k];
  }
  t->nf = n - r;
  t->nr = r;
}

// The limits held at w's state (set, not evaluated): every enforced limit whose coordinate
// is on a bound (within PT_TOL_LIMIT_POS) is tried as held, and those whose reaction pushes (the complementarity
// problem of limits.c, couplers included) stay held; w keeps them held for ptd_tree_eval.
// side[j] (njoint): -1 / +1 held at the lower / upper bound, 0 otherwise; reaction[j]: the
// limit's joint force (or, for a limit on a bound that would pull, 0). Returns how many.
int ptd_tree_hold_limits(const pt_model *m, pt_data *w, ptd_tree *t, int *side,
                         double *reaction) {
  for (int j = 0; j < m->njoint; j++) side[j] = 0, reaction[j] = 0;
  if (!t->ridx) return 0;
  pt_limits_clear(w);
  int nheld = 0;
  if (w->lim_on) {
    pt_kin_bodies(m, w);
    pt_forces(m, w);
    pt_tree_coords(m, w, NULL, t->thd, NULL);
    for (int k = 0; k < w->lim_n; k++) {
      const int j = w->lim_joint[k], c = m->joint_coord_adr[j];
      double v, jac[12], jdx;
      pt_measure(m, w, c, &v, jac, &jdx);
      const double lo = m->joint_limit[2 * j], hi = m->joint_limit[2 * j + 1];
      // on a bound (a coordinate beyond one is not a state the limit holds: free, noted)
      w->lim_state[k] = fabs(v - lo) <= PT_TOL_LIMIT_POS   ? -1
                         : fabs(v - hi) <= PT_TOL_LIMIT_POS ? 1
                                                             : 0;
      w->lim_nactive += w->lim_state[k] != 0;
    }
    if (w->lim_nactive) {
      ptu_copy(t->F, w->qfrc, m->nv);
      pt_tree_hold(m, w, t->thd);  // the limits' problem, the couplers' rows with it
      ptu_copy(w->qfrc, t->F, m->nv);
      for (int k = 0, a = 0; k < w->lim_n; k++) {
        if (!w->lim_state[k]) continue;
        const int j = w->lim_joint[k];
        const double x = w->lim_x[a++];
        if (x > 0) {
          side[j] = w->lim_state[k];
          reaction[j] = w->lim_state[k] < 0 ? x : -x;
          nheld++;
        } else {
          w->lim_state[k] = 0;  // would pull: free
          w->lim_nactive--;
        }
      }
    }
  }
  int *held = t->held;
  for (int i = 0; i < t->n; i++) held[i] = 0;
  for (int j = 0; j < m->njoint; j++)
    if (side[j]) held[w->tree_dof[j]] = 1;
  map_build(m, w, t, held);
  return nheld;
}

// Hr = Tm^T H Tm, Tr = Tm^T dtau [Tm, Tm, I] and Yr = -Hr^-1 Tr: the equations of motion
// H thetadd + ... = tau_applied + G^T lambda projected on the couplers' null space
// (G Tm = 0 removes lambda), theta = Tm theta_r.
static int reduce(ptd_tree *t, int nu) {
  const int n = t->n, r = t->nr, ncol = 2 * r + nu;
  ptu_zero(t->Hr, r * r);
  ptu_zero(t->Tr, r * ncol);
  for (int j = 0; j < n; j++) {
    const int b = t->ridx[j];
    const double cj = t->rcoef[j];
    for (int i = 0; i < n; i++) {
      const int a = t->ridx[i];
      const double ci = t->rcoef[i] * cj;
      t->Hr[(size_t)b * r + a] += ci * t->H[(size_t)j * n + i];
      t->Tr[(size_t)b * r + a] += ci * t->T[(size_t)j * n + i];
      t->Tr[(size_t)(r + b) * r + a] += ci * t->T[(size_t)(n + j) * n + i];
    }
  }
  for (int c = 0; c < nu; c++)
    for (int i = 0; i < n; i++)
      t->Tr[(size_t)(2 * r + c) * r + t->ridx[i]] += t->rcoef[i] * t->T[(size_t)(2 * n + c) * n + i];
  for (int i = 0; i < r * ncol; i++) t->Yr[i] = -t->Tr[i];
  if (r == 0) return PT_OK;  // everything held: no state left
  ptu_copy(t->Lr, t->Hr, r * r);
  lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', r, t->Lr, r);
  if (info == 0) info = LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', r, ncol, t->Lr, r, t->Yr, r);
  for (int i = 0; i < r * ncol; i++) t->Yr[i] += 0.0, t->Tr[i] += 0.0;
  return info == 0 ? PT_OK : PT_ESINGULAR;
}

// With couplers the dofs are the reduced ones: a follower has none (ptd_tree_follower).
int ptd_tree_dof(const ptd_tree *t, int meas) {
  const int i = meas < 0 ? -1 : t->dof_of_meas[meas];
  if (i < 0 || !t->nf) return i;
  return t->fol[i] ? -1 : t->ridx[i];
}
int ptd_tree_follower(const ptd_tree *t, int meas, double *mult) {
  const int i = meas < 0 || !t->nf ? -1 : t->dof_of_meas[meas];
  if (i < 0 || !t->fol[i]) return -1;
  *mult = t->rcoef[i];
  return t->ridx[i];
}
int ptd_tree_ndof(const ptd_tree *t) { return t->nf ? t->nr : t->n; }
const double *ptd_tree_H(const ptd_tree *t) { return t->nf ? t->Hr : t->H; }
const double *ptd_tree_dtau(const ptd_tree *t) { return t->nf ? t->Tr : t->T; }
const double *ptd_tree_thdd(const ptd_tree *t) { return t->nf ? t->Yr : t->Y; }

static const double zero6[6] = {0, 0, 0, 0, 0, 0};

int ptd_tree_eval(const pt_model *m, pt_data *w, ptd_tree *t) {
  if (w->cpl_on || w->lim_nactive) {
    // the accelerations with the couplers and the held limits (coupler.c, limits.c); the
    // applied forces stay the elements' alone: the joint residuals are those of the
    // elements, and the couplers' and limits' efforts drop out of the reduced equations
    // (reduce)
    pt_kin_bodies(m, w);
    pt_forces(m, w);
    pt_tree_coords(m, w, NULL, t->thd, NULL);
    ptu_copy(t->F, w->qfrc, m->nv);
    pt_tree_dynamics(m, w, t->thd, t->thdd);
    ptu_copy(w->qfrc, t->F, m->nv);
    return PT_OK;
  }
  if (!w->tree_aba) {
    const int rc = pt_eval(m, w);
    if (!rc) pt_tree_coords(m, w, NULL, t->thd, t->thdd);
    return rc;
  }
  pt_kin_bodies(m, w);
  pt_forces(m, w);
  pt_tree_coords(m, w, NULL, t->thd, NULL);
  pt_tree_aba(m, w, t->thd, t->thdd);
  return PT_OK;
}

// The operating point's joint quantities (S, arms, rates) and the constraint wrenches F of the
// Newton-Euler backward pass (f_k = M_k xdd_k - Q_k), from w's evaluated state.
static void op_point(const pt_model *m, const pt_data *w, ptd_tree *t) {
  const int nb = t->nb;
  const double *thd = t->thd, *thdd = t->thdd;
  for (int o = 0; o < nb; o++) {
    node *e = t->nd + o;
    const int j = w->tree_joint[o];
    const double *g = m->joint_geom + PT_JOINT_GEOM * j;
    const double *rp = e->par == PT_GROUND ? zero6 : w->q + 7 * e->par;
    const int b1 = e->b1par ? e->par : e->kid;
    ptu_sub3(e->d, w->q + 7 * e->kid, rp);
    ptu_zero(e->S, 6);
    ptu_zero(e->s, 3);
    e->thd = e->dof >= 0 ? thd[e->dof] : 0;
    e->thdd = e->dof >= 0 ? thdd[e->dof] : 0;
    if (e->dof < 0) continue;
    if (b1 == PT_GROUND) ptu_copy(e->h, g + 6, 3);
    else ptu_mul_mat_vec3(e->h, w->rot + 9 * b1, g + 6);
    if (e->type == PT_JOINT_REVOLUTE) {
      ptu_mul_mat_vec3(e->s, w->rot + 9 * e->kid, g + (e->b1par ? 3 : 0));
      ptu_cross3(e->S, e->s, e->h);
      ptu_copy(e->S + 3, e->h, 3);
    } else {
      ptu_copy(e->S, e->h, 3);
    }
    for (int k = 0; k < 6; k++) e->S[k] *= e->sg;
  }
  for (int k = 0; k < nb; k++) {
    const double *a = w->xdd + 6 * k, *Q = w->qfrc + 6 * k;
    double Ia[3];
    ptu_mul_mat_vec3(Ia, w->inertia_g + 9 * k, a + 3);
    for (int c = 0; c < 3; c++) {
      t->F[6 * k + c] = m->body_mass[k] * a[c] - Q[c];
      t->F[6 * k + 3 + c] = Ia[c] - Q[3 + c];
    }
  }
  for (int o = nb - 1; o >= 0; o--) {
    const node *e = t->nd + o;
    if (e->par == PT_GROUND) continue;
    const double *f = t->F + 6 * e->kid;
    double *fp = t->F + 6 * e->par, tq[3];
    ptu_cross3(tq, e->d, f);
    for (int c = 0; c < 3; c++) fp[c] += f[c], fp[3 + c] += f[3 + c] + tq[c];
  }
}

// The non-zero 6 x 6 body blocks of Q_q and Q_u, among the pairs.
static int collect_blocks(ptd_tree *t) {
  const int nb = t->nb, nv = t->nv;
  t->nblk = 0;
  for (int p = 0; p < t->npair; p++) {
    const int K = t->pair[2 * p], L = t->pair[2 * p + 1];
    int nz = 0;
    for (int r = 0; r < 6 && !nz; r++) {
      const size_t at = (size_t)(6 * K + r) * nv + 6 * L;
      for (int c = 0; c < 6; c++) nz |= t->Qq[at + c] != 0 || t->Qu[at + c] != 0;
    }
    if (!nz) continue;
    if (t->nblk == t->blk_cap) {
      const int cap = 2 * t->blk_cap + 2 * nb;
      int *b = realloc(t->blk, sizeof(int) * 2 * (size_t)cap);
      if (!b) return PT_ENOMEM;
      t->blk = b;
      double *v = realloc(t->bqu, sizeof(double) * 72 * (size_t)cap);
      if (!v) return PT_ENOMEM;
      t->bqu = v;
      t->blk_cap = cap;
    }
    double *v = t->bqu + 72 * (size_t)t->nblk;
    for (int r = 0; r < 6; r++)
      for (int c = 0; c < 6; c++) {
        const size_t at = (size_t)(6 * K + r) * nv + 6 * L + c;
        v[6 * r + c] = t->Qq[at];
        v[36 + 6 * r + c] = t->Qu[at];
      }
    t->blk[2 * t->nblk] = K, t->blk[2 * t->nblk + 1] = L;
    t->nblk++;
  }
  return PT_OK;
}

// Forward pass of one direction (kind POS, VEL or ACC along dof idx): every body's delta q,
// delta x and delta xdd, root to leaves, from the recursions of tree.c (7.1-7.2) differentiated:
//   q_k:   delta pi_k = delta pi_p + S_ang [POS],  delta r_k = delta r_p + delta pi_p x d + S_lin
//   x_k:   delta v_k = delta v_p + delta w_p x d + w_p x delta d + delta S_lin thd + S_lin [VEL]
//   xdd_k: delta a_k = delta a_p + delta al_p x d + al_p x delta d + delta S thdd + delta c
//          (+ S [ACC])
// with delta h = delta pi_1 x h, delta s = delta pi_k x s and c of tree.c differentiated.
// ydd (n, or NULL): a change of every thetadd as well (S ydd added to delta xdd).
static void forward(const pt_data *w, ptd_tree *t, int kind, int idx, const double *ydd) {
  for (int o = 0; o < t->nb; o++) {
    const node *e = t->nd + o;
    dirv *K = t->dv + e->kid;
    const dirv *P = e->par == PT_GROUND ? NULL : t->dv + e->par;
    const double *dqP = P ? P->dq : zero6, *dxP = P ? P->dx : zero6, *daP = P ? P->da : zero6;
    const double *xP = P ? w->x + 6 * e->par : zero6, *aP = P ? w->xdd + 6 * e->par : zero6;
    const double *xK = w->x + 6 * e->kid;
    const double on = e->dof >= 0 && e->dof == idx;
    double t3[3], u3[3];
    const double yd = ydd && e->dof >= 0 ? ydd[e->dof] : 0;
    K->live = on || (P && P->live) || ydd;
    if (!K->live) {  // outside the subtree of dof idx: nothing moves
      ptu_zero(K->dq, 6), ptu_zero(K->dx, 6), ptu_zero(K->da, 6);
      ptu_zero(K->dd, 3), ptu_zero(K->dS, 6);
      continue;
    }
    if (kind == ACC) {  // delta xdd = J e_idx: positions and velocities held
      ptu_cross3(t3, daP + 3, e->d);
      for (int c = 0; c < 3; c++) {
        K->da[c] = daP[c] + t3[c] + (on + yd) * e->S[c];
        K->da[3 + c] = daP[3 + c] + (on + yd) * e->S[3 + c];
      }
      continue;
    }
    const double sp = kind == POS ? on : 0, sv = kind == VEL ? on : 0;
    // positions: the child moves rigidly with the parent, and along S for its own theta
    ptu_cross3(t3, dqP + 3, e->d);
    for (int c = 0; c < 3; c++) {
      K->dq[c] = dqP[c] + t3[c] + sp * e->S[c];
      K->dq[3 + c] = dqP[3 + c] + sp * e->S[3 + c];
      K->dd[c] = K->dq[c] - dqP[c];
    }
    // delta S
    double dh[3] = {0, 0, 0}, ds[3] = {0, 0, 0};
    ptu_zero(K->dS, 6);
    if (e->dof >= 0) {
      ptu_cross3(dh, e->b1par ? dqP + 3 : K->dq + 3, e->h);
      if (e->type == PT_JOINT_REVOLUTE) {
        ptu_cross3(ds, K->dq + 3, e->s);
        ptu_cross3(t3, ds, e->h);
        ptu_cross3(u3, e->s, dh);
        for (int c = 0; c < 3; c++) {
          K->dS[c] = e->sg * (t3[c] + u3[c]);
          K->dS[3 + c] = e->sg * dh[c];
        }
      } else {
        for (int c = 0; c < 3; c++) K->dS[c] = e->sg * dh[c];
      }
    }
    // velocities
    ptu_cross3(t3, dxP + 3, e->d);
    ptu_cross3(u3, xP + 3, K->dd);
    for (int c = 0; c < 3; c++) {
      K->dx[c] = dxP[c] + t3[c] + u3[c] + K->dS[c] * e->thd + sv * e->S[c];
      K->dx[3 + c] = dxP[3 + c] + K->dS[3 + c] * e->thd + sv * e->S[3 + c];
    }
    // bias c = (w_p x (v_k - v_p) + ..., ...) of tree.c, differentiated
    double dc[6], vr[3], dvr[3];
    ptu_sub3(vr, xK, xP);
    ptu_sub3(dvr, K->dx, dxP);
    ptu_cross3(t3, dxP + 3, vr);
    ptu_cross3(u3, xP + 3, dvr);
    for (int c = 0; c < 3; c++) dc[c] = t3[c] + u3[c], dc[3 + c] = 0;
    if (e->dof >= 0) {
      const double td = e->sg * e->thd, dtd = e->sg * sv;
      double wxh[3], dwxh[3];
      ptu_cross3(wxh, xP + 3, e->h);
      ptu_cross3(t3, dxP + 3, e->h);
      ptu_cross3(u3, xP + 3, dh);
      ptu_add3(dwxh, t3, u3);
      if (e->type == PT_JOINT_REVOLUTE) {
        // c_lin += td ((w_k x s) x h + s x (w_p x h)),  c_ang = td w_p x h
        double wxs[3], dwxs[3], b[3], db[3];
        ptu_cross3(wxs, xK + 3, e->s);
        ptu_cross3(t3, K->dx + 3, e->s);
        ptu_cross3(u3, xK + 3, ds);
        ptu_add3(dwxs, t3, u3);
        ptu_cross3(b, wxs, e->h);
        ptu_cross3(t3, e->s, wxh);
        ptu_add3(b, b, t3);  // (w_k x s) x h + s x (w_p x h)
        ptu_cross3(db, dwxs, e->h);
        ptu_cross3(t3, wxs, dh);
        ptu_add3(db, db, t3);
        ptu_cross3(t3, ds, wxh);
        ptu_add3(db, db, t3);
        ptu_cross3(t3, e->s, dwxh);
        ptu_add3(db, db, t3);
        for (int c = 0; c < 3; c++) {
          dc[c] += dtd * b[c] + td * db[c];
          dc[3 + c] = dtd * wxh[c] + td * dwxh[c];
        }
      } else {
        for (int c = 0; c < 3; c++) dc[c] += dtd * wxh[c] + td * dwxh[c];
      }
    }
    // accelerations
    ptu_cross3(t3, daP + 3, e->d);
    ptu_cross3(u3, aP + 3, K->dd);
    for (int c = 0; c < 3; c++) {
      K->da[c] = daP[c] + t3[c] + u3[c] + K->dS[c] * e->thdd + dc[c] + yd * e->S[c];
      K->da[3 + c] = daP[3 + c] + K->dS[3 + c] * e->thdd + dc[3 + c] + yd * e->S[3 + c];
    }
  }
}

// delta f_k = M_k delta a_k + delta(I_g) al_k - delta Q_k, delta(I_g) al = dpi x (I al) -
// I (dpi x al); delta Q = Q_q delta q + Q_u delta x (POS, VEL), Q_u(input col) (INPUT).
static void body_forces(const pt_model *m, const pt_data *w, ptd_tree *t, int kind, int col,
                        int nu) {
  for (int k = 0; k < t->nb; k++) {
    dirv *K = t->dv + k;
    const double *Ig = w->inertia_g + 9 * k;
    if (kind == INPUT) {
      for (int c = 0; c < 6; c++) K->df[c] = -t->Qin[(size_t)(6 * k + c) * nu + col];
      continue;
    }
    double Ida[3];
    ptu_mul_mat_vec3(Ida, Ig, K->da + 3);
    for (int c = 0; c < 3; c++) {
      K->df[c] = m->body_mass[k] * K->da[c];
      K->df[3 + c] = Ida[c];
    }
    if (kind == ACC) continue;
    const double *al = w->xdd + 6 * k + 3;
    double Ial[3], t3[3], u3[3], v3[3];
    ptu_mul_mat_vec3(Ial, Ig, al);
    ptu_cross3(t3, K->dq + 3, Ial);
    ptu_cross3(u3, K->dq + 3, al);
    ptu_mul_mat_vec3(v3, Ig, u3);
    for (int c = 0; c < 3; c++) K->df[3 + c] += t3[c] - v3[c];
  }
  if (kind == ACC || kind == INPUT) return;
  for (int b = 0; b < t->nblk; b++) {
    const double *v = t->bqu + 72 * (size_t)b;
    dirv *K = t->dv + t->blk[2 * b];
    const dirv *L = t->dv + t->blk[2 * b + 1];
    if (!L->live) continue;
    for (int r = 0; r < 6; r++) {
      double s = 0;
      if (kind == POS)
        for (int c = 0; c < 6; c++) s += v[6 * r + c] * L->dq[c];
      for (int c = 0; c < 6; c++) s += v[36 + 6 * r + c] * L->dx[c];
      K->df[r] -= s;
    }
  }
}

// Backward pass: delta F_p += X^T delta F_k + delta X^T F_k, delta tau = dS . F + S . delta F.
static void backward(ptd_tree *t, int kind, double *dtau) {
  for (int o = t->nb - 1; o >= 0; o--) {
    const node *e = t->nd + o;
    dirv *K = t->dv + e->kid;
    const double *F = t->F + 6 * e->kid;
    if (e->dof >= 0) {
      double s = 0;
      for (int c = 0; c < 6; c++) s += e->S[c] * K->df[c];
      if (kind == POS)
        for (int c = 0; c < 6; c++) s += K->dS[c] * F[c];
      dtau[e->dof] = s;
    }
    if (e->par == PT_GROUND) continue;
    dirv *P = t->dv + e->par;
    double t3[3], u3[3] = {0, 0, 0};
    ptu_cross3(t3, e->d, K->df);
    if (kind == POS) ptu_cross3(u3, K->dd, F);
    for (int c = 0; c < 3; c++) {
      P->df[c] += K->df[c];
      P->df[3 + c] += K->df[3 + c] + t3[c] + u3[c];
    }
  }
}

int ptd_tree_solve(const pt_model *m, pt_data *w, ptd_tree *t, const int *inputs, int nu) {
  const int n = t->n, nv = t->nv, ncol = 2 * n + nu;
  ptd_zero_pairs(t->Qq, t->Qu, t->nv, t->pair, t->npair);
  ptu_zero(t->Qin, nv * nu);
  int rc = ptd_force_partials(m, w, w, t->Qq, t->Qu, t->Qin, inputs, nu);
  if (!rc) rc = collect_blocks(t);
  if (rc) return rc;
  op_point(m, w, t);
  // H by columns (thetadd = e_j), then dtau along theta_j, thetadot_j and each input
  for (int j = 0; j < n; j++) {
    forward(w, t, ACC, j, NULL);
    body_forces(m, w, t, ACC, 0, nu);
    backward(t, ACC, t->H + (size_t)j * n);
  }
  for (int j = 0; j < n; j++) {
    forward(w, t, POS, j, NULL);
    body_forces(m, w, t, POS, 0, nu);
    backward(t, POS, t->T + (size_t)j * n);
    forward(w, t, VEL, j, NULL);
    body_forces(m, w, t, VEL, 0, nu);
    backward(t, VEL, t->T + (size_t)(n + j) * n);
  }
  for (int c = 0; c < nu; c++) {
    body_forces(m, w, t, INPUT, c, nu);
    backward(t, INPUT, t->T + (size_t)(2 * n + c) * n);
  }
  // H thetadd_X = -dtau_X: one Cholesky factor (H symmetric positive definite)
  for (int i = 0; i < n * ncol; i++) t->Y[i] = -t->T[i];
  // (H's columns come out symmetric to rounding; M reports the upper triangle, mirrored)
  for (int j = 0; j < n; j++)
    for (int i = j + 1; i < n; i++) t->H[(size_t)j * n + i] = t->H[(size_t)i * n + j];
  ptu_copy(t->L, t->H, n * n);
  lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, t->L, n);
  if (info == 0) info = LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, ncol, t->L, n, t->Y, n);
  for (int i = 0; i < n * ncol; i++) t->Y[i] += 0.0, t->T[i] += 0.0;   // no -0 in the results
  if (info != 0) return PT_ESINGULAR;
  return t->nf ? reduce(t, nu) : PT_OK;
}

void ptd_tree_cartesian(const pt_data *w, ptd_tree *t, const int *sdof, int nu, double *R) {
  const int n = t->n, nv = t->nv, N = 3 * nv;
  for (int col = 0; col < 2 * n + nu; col++) {
    // the column's own direction, and its thetadd (solved) moving every body's xdd
    if (col < n) {
      forward(w, t, VEL, sdof[col], t->Y + (size_t)(n + sdof[col]) * n);
    } else if (col < 2 * n) {
      forward(w, t, POS, sdof[col - n], t->Y + (size_t)sdof[col - n] * n);
    } else {
      forward(w, t, ACC, -1, t->Y + (size_t)col * n);
    }
    double *X = R + (size_t)col * N;
    for (int k = 0; k < t->nb; k++) {
      const dirv *K = t->dv + k;
      ptu_copy(X + 6 * k, K->da, 6);
      if (col < 2 * n) {
        ptu_copy(X + nv + 6 * k, K->dx, 6);
        ptu_copy(X + 2 * nv + 6 * k, K->dq, 6);
      } else {
        ptu_zero(X + nv + 6 * k, 6);
        ptu_zero(X + 2 * nv + 6 * k, 6);
      }
    }
  }
}
