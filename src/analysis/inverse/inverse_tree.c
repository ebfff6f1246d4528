// inverse_tree.c: torque requests on a tree by one recursive pass over the bodies (issue 10).
//
// The torque request solves the augmented system of the forward dynamics with one extra row
// per requested coordinate (inverse.c, seed gcp eq. 21):
//   M xdd + J^T lambda + J_c^T mu = Q,   J xdd = gamma,   J_c xdd = a - Jdot_c x.
// On a tree (no closed loop, no motion) whose every joint has all its coordinates requested,
// the rows of the joint between body k and its parent p (its constraint rows, then its
// requested coordinates) are exactly six and touch only k and p: [J; J_c] is square and block
// lower triangular in an order that puts parents first, with the 6 x 6 block A_k (columns of
// k) on the diagonal and B_k (columns of p) below it. The system then falls apart into
//   forward   A_k xdd_k = rhs_k - B_k xdd_p              (root to leaves: body accelerations)
//   backward  A_k^T y_k = Q_k - M_k xdd_k - sum_c B_c^T y_c  (leaves to root, c the children)
// with y_k = (lambda of the joint's rows, mu of its coordinates): the Newton-Euler equations
// in the Cartesian r-omega form of the lecture ("Inverse Dynamics: The Math"), the wrench a
// joint transmits being what its rows and its actuator carry. Same unknowns and equations as
// the general path (Schur complement on W), so the same solution, in O(n) with no W factor.
#include <stdlib.h>

#include "engine.h"
#include "inverse_internal.h"
#include "ptu.h"

#define BLOCK_PIVOT_MIN 1e-12  // |LU pivot| / max |A_k| below this: the general path decides

// Tree layout of m, or NULL when m has a closed loop, a motion, or removed rows.
// Layout: order (nbody, parents first), joint to the parent, parent (PT_GROUND for a root),
// slot of the body in that joint (0 body1, 1 body2): 4 nbody ints.
int *pt_inverse_tree_new(const pt_model *m) {
  const int nb = m->nbody;
  if (nb == 0 || m->nmotion != 0 || m->njoint != nb || m->ncon != m->nrow_joint) return NULL;
  int *t = malloc(sizeof(int) * (4 * (size_t)nb + 1));
  if (!t) return NULL;
  int *order = t, *joint = t + nb, *parent = t + 2 * nb, *slot = t + 3 * nb;
  for (int k = 0; k < nb; k++) joint[k] = -1;
  // breadth first from the ground: a joint reached from a placed body places the other one
  int nplaced = 0;
  for (int head = -1; head < nplaced; head++) {
    const int from = head < 0 ? PT_GROUND : order[head];
    for (int j = 0; j < m->njoint; j++) {
      const int *b = m->joint_body + 2 * j;
      for (int s = 0; s < 2; s++) {
        if (b[1 - s] != from || b[s] == from || b[s] == PT_GROUND || joint[b[s]] >= 0) continue;
        joint[b[s]] = j;
        parent[b[s]] = from;
        slot[b[s]] = s;
        order[nplaced++] = b[s];
      }
    }
  }
  // njoint == nbody and every body reached through its own joint: a spanning tree, no loop
  if (nplaced != nb) {
    free(t);
    return NULL;
  }
  return t;
}

// inv = a^-1 (3 x 3, row-major) by the adjugate; 0 when |det a| is below BLOCK_PIVOT_MIN times
// the product of the row norms (Hadamard's bound: the rows are nearly dependent).
static int inv3(double inv[9], const double a[9]) {
  inv[0] = a[4] * a[8] - a[5] * a[7];
  inv[3] = a[5] * a[6] - a[3] * a[8];
  inv[6] = a[3] * a[7] - a[4] * a[6];
  const double det = a[0] * inv[0] + a[1] * inv[3] + a[2] * inv[6];
  const double bound2 = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]) *
                        (a[3] * a[3] + a[4] * a[4] + a[5] * a[5]) *
                        (a[6] * a[6] + a[7] * a[7] + a[8] * a[8]);
  if (!(det * det > BLOCK_PIVOT_MIN * BLOCK_PIVOT_MIN * bound2)) return 0;
  inv[1] = a[2] * a[7] - a[1] * a[8];
  inv[4] = a[0] * a[8] - a[2] * a[6];
  inv[7] = a[1] * a[6] - a[0] * a[7];
  inv[2] = a[1] * a[5] - a[2] * a[4];
  inv[5] = a[2] * a[3] - a[0] * a[5];
  inv[8] = a[0] * a[4] - a[1] * a[3];
  const double s = 1 / det;
  for (int i = 0; i < 9; i++) inv[i] *= s;
  return 1;
}

int pt_inverse_tree_applies(const pt_model *m, const int *tree, const pt_assign *acc, int nacc,
                            int *jreq) {
  if (!tree || nacc != m->ndof) return 0;
  for (int i = 0; i < 6 * m->njoint; i++) jreq[i] = -1;
  for (int q = 0; q < nacc; q++) {
    const int j = m->meas_joint[acc[q].coord];
    if (j < 0) return 0;  // a user coordinate: not a row of one joint's block
    int i = 0;
    while (i < 6 && jreq[6 * j + i] >= 0) i++;
    if (i == 6) return 0;
    jreq[6 * j + i] = q;
  }
  for (int j = 0; j < m->njoint; j++) {
    int n = pt_joint_classes[m->joint_type[j]].nrow;
    for (int i = 0; i < 6 && jreq[6 * j + i] >= 0; i++) n++;
    if (n != 6) return 0;
  }
  return 1;
}

// Splits A_k (rows a[i], 6 numbers each: the child's columns) into the block-triangular form
// every joint class has: rows without translational part (orientation rows, angles:
// perm[3..5]) and the others (perm[0..2]), so that A_k = [T R1; 0 R2] after ordering the rows.
// Stores T^-1, R2^-1, R1. 0 when the split is not 3 + 3 or T or R2 is singular.
static int block_factor(const double *const a[6], int perm[6], double *Ti, double *R2i,
                        double *R1) {
  int nt = 0, nz = 3;
  for (int i = 0; i < 6; i++) {
    if (a[i][0] == 0 && a[i][1] == 0 && a[i][2] == 0) {
      if (nz == 6) return 0;
      perm[nz++] = i;
    } else {
      if (nt == 3) return 0;
      perm[nt++] = i;
    }
  }
  double T[9], R2[9];
  for (int i = 0; i < 3; i++)
    for (int c = 0; c < 3; c++) {
      T[3 * i + c] = a[perm[i]][c];
      R1[3 * i + c] = a[perm[i]][3 + c];
      R2[3 * i + c] = a[perm[3 + i]][3 + c];
    }
  // the rows of a joint point (spherical part) give T = +-I, its own inverse
  const int signs = (T[0] == 1 || T[0] == -1) && T[0] == T[4] && T[0] == T[8];
  if (signs && T[1] == 0 && T[2] == 0 && T[3] == 0 && T[5] == 0 && T[6] == 0 && T[7] == 0)
    ptu_copy(Ti, T, 9);
  else if (!inv3(Ti, T))
    return 0;
  return inv3(R2i, R2);
}

int pt_inverse_tree_solve(const pt_model *m, const pt_data *d, const int *tree,
                          const int *jreq, const pt_assign *acc, const double *meas_jac,
                          const double *meas_jdx, double *wrk, int *iwrk, const double **pb,
                          double *xdd, double *lam, double *mu) {
  const int nb = m->nbody;
  const int *order = tree, *joint = tree + nb, *parent = tree + 2 * nb, *slot = tree + 3 * nb;
  // work: per body T^-1, R2^-1, R1 (27) and forces (6): nb x 33; per body the row order (6)
  // and what each row solves for (6: lambda index a >= 0, or request q as -1 - q): nb x 12
  // ints; per body the parent's columns of each row (pb: nb x 6 pointers)
  double *F = wrk, *f = F + 27 * (size_t)nb;
  int *perms = iwrk, *act = iwrk + 6 * (size_t)nb;
  // the blocks, independent of each other: A_k = [T R1; 0 R2] factored, rhs_k into xdd_k
  for (int k = 0; k < nb; k++) {
    const int j = joint[k], sk = slot[k];
    const int r0 = m->joint_row_adr[j], nr = pt_joint_classes[m->joint_type[j]].nrow;
    const double *a[6], **b = pb + 6 * k;  // child and parent columns of each row
    double *rhs = xdd + 6 * k, *Ti = F + 27 * k;
    int *ak = act + 6 * k;
    for (int i = 0; i < nr; i++) {
      const int r = r0 + i;
      a[i] = d->row_jac + 12 * r + 6 * sk;
      b[i] = d->row_jac + 12 * r + 6 * (1 - sk);
      rhs[i] = d->row_gamma[r];
      ak[i] = m->row_active[r];
    }
    for (int i = nr; i < 6; i++) {
      const int q = jreq[6 * j + i - nr], c = acc[q].coord;
      const int s = m->meas_body[2 * c + 1] == k ? 1 : 0;
      a[i] = meas_jac + 12 * c + 6 * s;
      b[i] = meas_jac + 12 * c + 6 * (1 - s);
      rhs[i] = acc[q].value - meas_jdx[c];
      ak[i] = -1 - q;
    }
    if (!block_factor(a, perms + 6 * k, Ti, Ti + 9, Ti + 18)) return 0;
  }
  // forward: A_k xdd_k = rhs_k - B_k xdd_p, as R2 w = rhs_z, T v = rhs_t - R1 w; then
  // f_k = Q_k - M_k xdd_k for the backward pass
  for (int o = 0; o < nb; o++) {
    const int k = order[o], p = parent[k];
    const int *pk = perms + 6 * k;
    const double *Ti = F + 27 * k, *R2i = Ti + 9, *R1 = Ti + 18;
    double *x = xdd + 6 * k, bt[3], bz[3], t[3];
    if (p != PT_GROUND) {
      const double *xp = xdd + 6 * p, *const *b = pb + 6 * k;
      double xpl[6];
      for (int c = 0; c < 6; c++) xpl[c] = xp[c];
      for (int i = 0; i < 6; i++) {
        const double *bi = b[i];
        double s = 0;
        for (int c = 0; c < 6; c++) s += bi[c] * xpl[c];
        x[i] -= s;
      }
    }
    for (int i = 0; i < 3; i++) {
      bt[i] = x[pk[i]];
      bz[i] = x[pk[3 + i]];
    }
    ptu_mul_mat_vec3(x + 3, R2i, bz);
    ptu_mul_mat_vec3(t, R1, x + 3);
    ptu_sub3(bt, bt, t);
    ptu_mul_mat_vec3(x, Ti, bt);
    double Iw[3];
    ptu_mul_mat_vec3(Iw, d->inertia_g + 9 * k, x + 3);
    for (int c = 0; c < 3; c++) {
      f[6 * k + c] = d->qfrc[6 * k + c] - m->body_mass[k] * x[c];
      f[6 * k + 3 + c] = d->qfrc[6 * k + 3 + c] - Iw[c];
    }
  }
  // backward: A_k^T y_k = Q_k - M_k xdd_k - sum_c B_c^T y_c (f_k accumulating the children),
  // as y_t = T^-T f_v, y_z = R2^-T (f_w - R1^T y_t)
  for (int o = nb - 1; o >= 0; o--) {
    const int k = order[o], p = parent[k];
    const int *ak = act + 6 * k, *pk = perms + 6 * k;
    const double *Ti = F + 27 * k, *R2i = Ti + 9, *R1 = Ti + 18;
    const double *fk = f + 6 * k;
    double y[6], yt[3], yz[3], t[3];
    ptu_mul_matT_vec3(yt, Ti, fk);
    ptu_mul_matT_vec3(t, R1, yt);
    ptu_sub3(t, fk + 3, t);
    ptu_mul_matT_vec3(yz, R2i, t);
    for (int i = 0; i < 3; i++) {
      y[pk[i]] = yt[i];
      y[pk[3 + i]] = yz[i];
    }
    for (int i = 0; i < 6; i++) {
      if (ak[i] >= 0)
        lam[ak[i]] = y[i];
      else
        mu[-1 - ak[i]] = y[i];
    }
    if (p == PT_GROUND) continue;
    const double *const *b = pb + 6 * k;
    double fp[6];
    for (int c = 0; c < 6; c++) fp[c] = f[6 * p + c];
    for (int i = 0; i < 6; i++) {
      const double *bi = b[i], yi = y[i];
      for (int c = 0; c < 6; c++) fp[c] -= bi[c] * yi;
    }
    for (int c = 0; c < 6; c++) f[6 * p + c] = fp[c];
  }
  return 1;
}
