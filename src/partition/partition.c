// partition.c: generalized coordinate partitioning (seed gcp eq. 4-16).
//
// Phi^F_q, the Jacobian of the joint and motion rows plus the Euler-parameter normalisation
// in q = (r, p), is factored by Gaussian elimination with full pivoting (eq. 4-6); the pivot
// columns are the dependent coordinates u, the rest the independent v (eq. 7). The partition
// is cached: Phi_u keeps its sparsity pattern and pivot order, so each Newton iteration for
// u (eq. 10, 14) and each velocity recovery (eq. 11, 15) is a numeric refactorization on that
// pattern and two triangular solves. It is rebuilt only when it degrades (Newton struggles, or
// the condition estimate of Phi_u falls), and every rebuild is counted. Phi_u is factored by a
// left-looking sparse LU with partial pivoting (Gilbert-Peierls, splu.c) on arrays sized at
// load for the dense worst case, so neither a rebuild nor pt_data_copy allocates.
#include <float.h>

#include "engine.h"
#include "partition.h"
#include "splu.h"
#include "tolerances.h"
#include "ptu.h"

// Body of slot s (0, 1) of row a of Phi^F (active rows, then normalisation rows).
static int jq_body(const pt_model *m, int a, int s) {
  if (a < m->ncon) return m->row_body[2 * m->con_row[a] + s];
  return s == 0 ? a - m->ncon : PT_GROUND;
}

// Phi^F and its Jacobian in q by body blocks: jq row = [r 3, p 4] x 2 slots, with the p part
// Phi_pi 2 E(p) (because omega = 2 E pdot) and the normalisation row 2 p^T.
void pt_jq_rows(const pt_model *m, pt_data *d) {
  for (int a = 0; a < m->ncon; a++) {
    const int r = m->con_row[a];
    double *out = d->jq + 14 * a;
    d->phiF[a] = d->row_phi[r];
    for (int s = 0; s < 2; s++) {
      const int b = m->row_body[2 * r + s];
      const double *J = d->row_jac + 12 * r + 6 * s;
      double *o = out + 7 * s;
      if (b == PT_GROUND) {
        ptu_zero(o, 7);
        continue;
      }
      double E[12];
      ptu_quat_E(E, d->q + 7 * b + 3);
      ptu_copy(o, J, 3);
      for (int c = 0; c < 4; c++) o[3 + c] = 2 * (J[3] * E[c] + J[4] * E[4 + c] + J[5] * E[8 + c]);
    }
  }
  for (int k = 0; k < m->nbody; k++) {
    const double *p = d->q + 7 * k + 3;
    double *o = d->jq + 14 * (m->ncon + k);
    ptu_zero(o, 14);
    for (int c = 0; c < 4; c++) o[3 + c] = 2 * p[c];
    d->phiF[m->ncon + k] = ptu_dot3(p + 1, p + 1) + p[0] * p[0] - 1;
  }
}

// Constraint values and Jacobians at the current q. Only rotations are refreshed: velocities
// and global inertias are not needed here (gamma is recomputed by pt_eval before use).
static void eval_rows(const pt_model *m, pt_data *d) {
  pt_kin_positions(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  pt_jq_rows(m, d);
}

// Bodies in breadth-first order from the ground over the active rows (a body no row ties to
// the ground or to an ordered body starts a new search): order[b] = position, queue = bodies.
static void body_order(const pt_model *m, int *queue, int *order) {
  const int nb = m->nbody;
  for (int b = 0; b < nb; b++) order[b] = -1;
  int head = 0, tail = 0;
  for (int b = 0; b < nb; b++)  // bodies tied to the ground first
    for (int t = m->body_row_adr[b]; t < m->body_row_adr[b + 1] && order[b] < 0; t++) {
      const int a = m->body_rows[2 * t], s = m->body_rows[2 * t + 1];
      if (jq_body(m, a, 1 - s) == PT_GROUND) order[b] = tail, queue[tail++] = b;
    }
  int seed = 0;
  while (head < tail || tail < nb) {
    if (head == tail) {  // a new component
      while (order[seed] >= 0) seed++;
      order[seed] = tail, queue[tail++] = seed;
    }
    const int b = queue[head++];
    for (int t = m->body_row_adr[b]; t < m->body_row_adr[b + 1]; t++) {
      const int a = m->body_rows[2 * t], s = m->body_rows[2 * t + 1], o = jq_body(m, a, 1 - s);
      if (o != PT_GROUND && order[o] < 0) order[o] = tail, queue[tail++] = o;
    }
  }
}

// The same choice by body blocks, in O(nbody): with the bodies in breadth-first order, each
// active row belongs to the later of its two bodies, and a body's block is those rows plus its
// normalisation row over its 7 coordinates. When every block has at most 7 rows and complete
// pivoting on it finds a full set of pivots (the test of eq. 6 on the block), Phi_u is block
// lower triangular with regular diagonal blocks: a valid partition, each body's dependent
// coordinates chosen by complete pivoting on its own block (on a chain of hinges the Euler
// parameter along each body's joint axis stays independent). Returns 0 when some block fails
// (closed loops put more rows on a body, degenerate joints give small pivots): the dense
// elimination decides then.
static int choose_dependent_blocks(const pt_model *m, pt_data *d, double gmax) {
  const int nb = m->nbody;
  int *queue = d->iwork, *order = d->iwork + nb;
  body_order(m, queue, order);
  for (int j = 0; j < m->nq; j++) d->q_dep[j] = 0;
  for (int k = 0; k < nb; k++) {
    const int b = queue[k];
    double G[8 * 7];  // (rows x 7) block, rows = owned active rows then the normalisation row
    int nr = 0;
    for (int t = m->body_row_adr[b]; t < m->body_row_adr[b + 1]; t++) {
      const int a = m->body_rows[2 * t], s = m->body_rows[2 * t + 1], o = jq_body(m, a, 1 - s);
      if (o != PT_GROUND && order[o] > k) continue;  // the later body owns it
      if (nr == 7) return 0;
      ptu_copy(G + 7 * nr++, d->jq + 14 * a + 7 * s, 7);
    }
    ptu_copy(G + 7 * nr++, d->jq + 14 * (m->ncon + b), 7);  // slot 0 of the norm row
    int colperm[7] = {0, 1, 2, 3, 4, 5, 6};
    for (int r = 0; r < nr; r++) {
      int pi = r, pj = r;
      double best = -1;
      for (int i = r; i < nr; i++)
        for (int j = r; j < 7; j++) {
          const double v = fabs(G[7 * i + colperm[j]]);
          if (v > best) best = v, pi = i, pj = j;
        }
      if (!(best > PT_TOL_PIVOT * gmax)) return 0;
      for (int j = 0; j < 7 && pi != r; j++) {
        const double t = G[7 * r + j];
        G[7 * r + j] = G[7 * pi + j];
        G[7 * pi + j] = t;
      }
      const int t = colperm[r];
      colperm[r] = colperm[pj];
      colperm[pj] = t;
      const int cr = colperm[r];
      for (int i = r + 1; i < nr; i++) {
        const double f = G[7 * i + cr] / G[7 * r + cr];
        if (f == 0) continue;
        for (int j = r; j < 7; j++) G[7 * i + colperm[j]] -= f * G[7 * r + colperm[j]];
      }
    }
    for (int r = 0; r < nr; r++) d->q_dep[7 * b + colperm[r]] = 1;
  }
  return 1;
}

// Up to this many bodies the dense elimination over the whole Phi^F_q decides (a few ms at
// most); above it the body blocks do whenever they can, in O(nbody) instead of O(nbody^3).
// Both choose a valid, well-pivoted partition; on small models the dense choice is kept so
// that their results stay exactly as they were.
#define PT_DENSE_CHOICE_MAX_BODIES 32

// Eq. (4)-(6): complete pivoting on Phi^F_q picks the dependent columns: by body blocks when
// the structure allows (trees) on large models, otherwise on the dense Phi^F_q.
static int choose_dependent(const pt_model *m, pt_data *d) {
  const int nr = m->ncq, nc = m->nq;
  double *G = d->qr_work;  // (nr x nc) row-major
  if (nr > nc) return PT_ESINGULAR;  // more rows than coordinates (redundant rows still in)
  double jmax = 0;
  for (int i = 0; i < 14 * nr; i++) jmax = fmax(jmax, fabs(d->jq[i]));
  if (m->nbody > PT_DENSE_CHOICE_MAX_BODIES && choose_dependent_blocks(m, d, jmax)) {
    int nd = 0, ni = 0;
    for (int j = 0; j < nc; j++) {
      if (d->q_dep[j])
        d->dep[nd++] = j;
      else
        d->indep[ni++] = j;
    }
    return PT_OK;
  }
  int *colperm = d->iwork;
  ptu_zero(G, nr * nc);
  for (int a = 0; a < nr; a++)
    for (int s = 0; s < 2; s++) {
      const int b = jq_body(m, a, s);
      if (b == PT_GROUND) continue;
      for (int c = 0; c < 7; c++) G[a * nc + 7 * b + c] += d->jq[14 * a + 7 * s + c];
    }
  for (int j = 0; j < nc; j++) colperm[j] = j;
  double gmax = 0;
  for (int i = 0; i < nr * nc; i++) gmax = fmax(gmax, fabs(G[i]));
  for (int k = 0; k < nr; k++) {
    int pi = k, pj = k;
    double best = -1;
    for (int i = k; i < nr; i++)
      for (int j = k; j < nc; j++) {
        double v = fabs(G[i * nc + colperm[j]]);
        if (v > best) {
          best = v;
          pi = i;
          pj = j;
        }
      }
    if (!(best > PT_TOL_PIVOT * gmax)) return PT_ESINGULAR;
    if (pi != k)
      for (int j = 0; j < nc; j++) {
        double t = G[k * nc + j];
        G[k * nc + j] = G[pi * nc + j];
        G[pi * nc + j] = t;
      }
    int t = colperm[k];
    colperm[k] = colperm[pj];
    colperm[pj] = t;
    const int ck = colperm[k];
    const double piv = G[k * nc + ck];
    for (int i = k + 1; i < nr; i++) {
      const double f = G[i * nc + ck] / piv;
      if (f == 0) continue;
      for (int j = k; j < nc; j++) G[i * nc + colperm[j]] -= f * G[k * nc + colperm[j]];
    }
  }
  for (int j = 0; j < nc; j++) d->q_dep[j] = 0;
  for (int k = 0; k < nr; k++) d->q_dep[colperm[k]] = 1;
  int nd = 0, ni = 0;
  for (int j = 0; j < nc; j++) {
    if (d->q_dep[j])
      d->dep[nd++] = j;
    else
      d->indep[ni++] = j;
  }
  return PT_OK;
}

// CSC pattern of Phi_u: column i = dependent coordinate dep[i]; rows = active rows touching
// its body (sorted), then the body's normalisation row for Euler parameters.
static void build_lu_pattern(const pt_model *m, pt_data *d) {
  int nz = 0;
  for (int i = 0; i < m->ncq; i++) {
    const int qi = d->dep[i], k = qi / 7, l = qi % 7;
    d->lu_colptr[i] = nz;
    const int *rows = m->body_rows + 2 * m->body_row_adr[k];
    const int n = m->body_row_adr[k + 1] - m->body_row_adr[k];
    for (int t = 0; t < n; t++) {
      d->lu_rowind[nz] = rows[2 * t];
      d->lu_src[nz] = 14 * rows[2 * t] + 7 * rows[2 * t + 1] + l;
      nz++;
    }
    if (l >= 3) {
      d->lu_rowind[nz] = m->ncon + k;
      d->lu_src[nz] = 14 * (m->ncon + k) + l;
      nz++;
    }
  }
  d->lu_colptr[m->ncq] = nz;
  d->lu_nnz = nz;
}

static void lu_values(pt_data *d) {
  for (int i = 0; i < d->lu_nnz; i++) d->lu_val[i] = d->jq[d->lu_src[i]];
}

// ---- sparse LU of Phi_u (ncq x ncq, CSC lu_colptr / lu_rowind / lu_val) ------------------

// Phi_u's factor in the data's lu_* arrays (splu.c; L and U at most the dense triangle).
static pt_splu phi_u(const pt_model *m, pt_data *d) {
  const int n = m->ncq;
  const pt_splu f = {n,         n,         n * (n > 0 ? n - 1 : 0) / 2,
                     d->lu_Lp,  d->lu_Li,  d->lu_Lx,
                     d->lu_Up,  d->lu_Ui,  d->lu_Ux,
                     d->lu_Ud,  d->lu_prow, d->lu_pinv,
                     d->lu_x,   d->lu_stack, d->lu_mark,
                     d->lu_y};
  return f;
}

// ---- the partition ------------------------------------------------------------------------

void pt_partition_free(pt_data *d) {
  d->loop_s_valid = 0;  // a closed loop's joint coordinates (loop.h) come from q again
  d->loop_held = 0;
  d->loop_lu_ready = d->loop_lu_current = 0;
  d->loop_qr_ready = d->loop_qr_current = d->loop_qr_exact = 0;
  d->loop_off = 0;
  d->tree_y_valid = 0;
  d->tree_kin_held = 0;
  d->lu_ready = 0;
  d->lu_current = 0;
  d->part_valid = 0;
}

// Rebuild at the current (consistent) configuration. Allocates nothing (but the dense work
// of a tree's data the first time); counted by the caller.
int pt_partition_build(const pt_model *m, pt_data *d) {
  // a tree's data gets its dense work here, outside any step (equilibrium, pt_set_state in
  // LU mode); pt_step reaches this on a tree only once pt_set_partition_mode has given it
  if (pt_data_dense(m, d)) return PT_ENOMEM;
  const int loop_off = d->loop_off;  // (a closed loop's Cartesian stand-in stays one)
  pt_partition_free(d);
  d->loop_off = loop_off;
  if (m->ncq == 0) {
    d->part_valid = 1;
    return PT_OK;
  }
  eval_rows(m, d);
  int rc = choose_dependent(m, d);
  if (rc) return rc;
  build_lu_pattern(m, d);
  lu_values(d);
  pt_splu f = phi_u(m, d);
  if (pt_splu_factor(&f, m->ncq, m->ncq, d->lu_colptr, d->lu_rowind, d->lu_val, m->ncq, 1))
    return PT_ESINGULAR;
  d->lu_ready = 1;
  d->lu_current = 1;
  d->rcond_built = d->rcond = pt_splu_rcond(&f);
  for (int i = 0; i < m->ncq; i++) d->piv_built[i] = fabs(d->lu_Ud[i]);
  d->piv_ratio = 1;
  d->part_valid = 1;
  d->part_method = PT_PART_LU;
  d->abm_count = 0;
  return PT_OK;
}

static int refactor(const pt_model *m, pt_data *d) {
  if (!d->lu_ready) return PT_ESINGULAR;  // no LU partition (QR mode, failed build)
  lu_values(d);
  pt_splu f = phi_u(m, d);
  pt_splu_refactor(&f, d->lu_colptr, d->lu_rowind, d->lu_val);  // a zero pivot: in rcond
  d->rcond = pt_splu_rcond(&f);
  d->lu_current = 1;
  if (!(d->rcond > PT_TOL_RCOND_LU)) return PT_ESINGULAR;
  // A pivot that has shrunk much below its size at build means u = g(v) is getting steep
  // (|H| of eq. 15 growing): a better partition exists.
  const double *ud = d->lu_Ud;
  double ratio = 1;
  for (int i = 0; i < m->ncq; i++) ratio = fmin(ratio, fabs(ud[i]) / d->piv_built[i]);
  d->piv_ratio = ratio;
  return PT_OK;
}

double pt_newton_tol(const pt_model *m, const pt_data *d) {
  double scale = 1;
  for (int k = 0; k < m->nbody; k++)
    for (int c = 0; c < 3; c++) scale = fmax(scale, fabs(d->q[7 * k + c]));
  return PT_TOL_NEWTON * scale;
}

int pt_newton_done(pt_data *d, double err, double tol, int it, int maxit, int *rc) {
  if (!isfinite(err)) {
    *rc = PT_EDIVERGED;
    return 1;
  }
  if (err <= tol) {
    d->newton_last = it;
    d->counters.newton_iters += it;
    *rc = it;
    return 1;
  }
  *rc = PT_EDIVERGED;
  return it >= maxit;
}

// Eq. (10)/(14): Newton for u with v fixed, Phi_u du = -Phi. Returns iterations or < 0.
// A chord iteration: Phi_u is the factor of the last velocity solve (one stage back, a
// configuration O(h) away), refactored here only when the residual does not shrink by 100x per
// iteration. One refactor per stage (in pt_solve_velocities) instead of one per iteration.
int pt_solve_positions(const pt_model *m, pt_data *d, int maxit) {
  const double tol = pt_newton_tol(m, d);
  double prev = INFINITY;
  for (int it = 0;; it++) {
    eval_rows(m, d);
    double err = 0;
    for (int i = 0; i < m->ncq; i++) err = fmax(err, fabs(d->phiF[i]));
    int done;
    if (pt_newton_done(d, err, tol, it, maxit, &done)) return done;
    if (!d->lu_current || err > 0.01 * prev) {
      int rc = refactor(m, d);
      if (rc) return rc;
    }
    d->lu_current = 1;
    prev = err;
    for (int i = 0; i < m->ncq; i++) d->rhs[i] = -d->phiF[i];
    pt_splu f = phi_u(m, d);
    pt_splu_solve(&f, d->rhs);
    for (int i = 0; i < m->ncq; i++) d->q[d->dep[i]] += d->rhs[i];
  }
}

// Eq. (11)/(15): Phi_u udot = nu - Phi_v vdot at the current positions (rows evaluated there).
int pt_solve_velocities(const pt_model *m, pt_data *d) {
  if (m->ncq == 0) return PT_OK;
  int rc = refactor(m, d);
  if (rc) return rc;
  for (int i = 0; i < m->ncq; i++) d->qd[d->dep[i]] = 0;
  for (int a = 0; a < m->ncq; a++) {
    double s = 0;
    for (int sl = 0; sl < 2; sl++) {
      const int b = jq_body(m, a, sl);
      if (b == PT_GROUND) continue;
      for (int c = 0; c < 7; c++) s += d->jq[14 * a + 7 * sl + c] * d->qd[7 * b + c];
    }
    const double nu = a < m->ncon ? d->row_nu[m->con_row[a]] : 0;
    d->rhs[a] = nu - s;
  }
  pt_splu f = phi_u(m, d);
  pt_splu_solve(&f, d->rhs);
  for (int i = 0; i < m->ncq; i++) d->qd[d->dep[i]] = d->rhs[i];
  d->counters.last_rcond = d->rcond;
  return PT_OK;
}

// ---- the LU partition behind the interface of partition.h -----------------------------------

// Eq. (10)-(11): v and vdot from y, then u and udot.
static int lu_recover(const pt_model *m, pt_data *d, const double *y, int maxit) {
  const int n = m->ndof;
  for (int i = 0; i < n; i++) {
    d->q[d->indep[i]] = y[i];
    d->qd[d->indep[i]] = y[n + i];
  }
  const int it = pt_solve_positions(m, d, maxit);
  if (it < 0) return it;
  const int rc = pt_solve_velocities(m, d);
  return rc ? rc : it;
}

static void lu_coords(const pt_model *m, const pt_data *d, double *v, double *vd, double *vdd) {
  for (int i = 0; i < m->ndof; i++) {
    const int k = d->indep[i];
    if (v) v[i] = d->q[k];
    if (vd) vd[i] = d->qd[k];
    if (vdd) vdd[i] = d->qdd[k];
  }
}

const pt_partition_class pt_partition_lu = {
    .name = "LU",
    .build = pt_partition_build,
    .recover = lu_recover,
    .accelerations = pt_accelerations,
    .coords = lu_coords,
};
