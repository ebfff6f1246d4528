// loops.c: at load, the joint coordinates of a closed-loop model (partition/loop.h).
//
// A spanning tree, breadth first from the ground over revolute, prismatic, universal and fixed
// joints (either body may be the child); bodies it does not reach float. The other joints'
// rows and the motion rows are cut rows; their Jacobian in the tree's coordinates G_w is
// ranked at the assembled initial state (pivoted QR of G_w^T, as compile.c ranks the rows of
// the Cartesian J), and an independent subset is kept: as many as the Cartesian formulation
// leaves degrees of freedom, or the model keeps the Cartesian partitions. Then the patterns the
// step needs, all fixed from here on: the joint-space inertia's (each coordinate and its
// ancestors), each kept row's support (the coordinates whose motion it sees, closed under
// ancestors: the pattern of L^-T G_w^T), the Schur complement S = G_w M^-1 G_w^T's (rows whose
// supports meet) with its AMD order and symbolic LDL^T, and the CSC patterns of G_s, G_s^T and
// B = [G_s; Q2^T]. A self-check at a displaced, moving state (the tree's rows satisfied, the
// measured joint coordinates reproduced, G_w sd equal to J x for every cut row) must pass.
#include <amd.h>
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "loop.h"
#include "splu.h"
#include "ptu.h"
#include "tolerances.h"

static int treeable(int type) {
  return type == PT_JOINT_REVOLUTE || type == PT_JOINT_PRISMATIC ||
         type == PT_JOINT_UNIVERSAL || type == PT_JOINT_FIXED;
}

// S is factored dense up to this size when its L fills at least this share of the triangle.
#define LOOP_DENSE_S_MAX 64
#define LOOP_DENSE_S_FILL 0.6

#define ALLOC(field, n) ((m->field = pt_model_alloc(m, (size_t)(n), sizeof(*m->field))) != NULL)

static int cmp_desc(const void *a, const void *b) {
  const int x = *(const int *)a, y = *(const int *)b;
  return (x < y) - (x > y);
}

static int cmp_asc(const void *a, const void *b) {
  const int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

// The spanning tree: loop_joint (parents first), loop_child, loop_jcoord, the coordinates'
// parents and bodies, the floating bodies. Returns 0 when no joint can be a tree joint.
static int spanning_tree(pt_model *m) {
  const int nb = m->nbody, nj = m->njoint;
  int *placed = calloc((size_t)nb + 1, sizeof(int)), *queue = calloc((size_t)nb + 1, sizeof(int));
  int ok = placed && queue && ALLOC(loop_joint, nj) && ALLOC(loop_child, nj) &&
           ALLOC(loop_jcoord, nj) && ALLOC(loop_body_coord, nb) && ALLOC(loop_body_float, nb);
  if (!ok) {
    free(placed), free(queue);
    return -1;
  }
  for (int j = 0; j < nj; j++) m->loop_child[j] = m->loop_jcoord[j] = -1;
  int nt = 0, head = 0, tail = 0;
  // from the ground (body -1), then from each placed body in turn
  for (int p = PT_GROUND;;) {
    for (int j = 0; j < nj; j++) {
      if (m->loop_child[j] >= 0 || !treeable(m->joint_type[j])) continue;
      const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
      int ch = -1;
      if (b1 == p && b2 != PT_GROUND && !placed[b2]) ch = 1;
      else if (b2 == p && b1 != PT_GROUND && !placed[b1]) ch = 0;
      if (ch < 0) continue;
      const int kid = ch ? b2 : b1;
      placed[kid] = 1;
      queue[tail++] = kid;
      m->loop_child[j] = ch;
      m->loop_joint[nt++] = j;
    }
    if (head == tail) break;
    p = queue[head++];
  }
  m->nlj = nt;
  // the joints in depth-first preorder of that (breadth-first, shallow) tree: still parents
  // first, and each subtree's coordinates together, so that a chain of loops gives banded
  // matrices in the natural order (G_s, B: little fill in their sparse LU)
  int *kids = calloc((size_t)nt + 1, sizeof(int)), *stack = calloc((size_t)nt + 1, sizeof(int));
  int *kid_adr = calloc((size_t)nb + 2, sizeof(int)), *order = calloc((size_t)nt + 1, sizeof(int));
  if (!kids || !stack || !kid_adr || !order) {
    free(kids), free(stack), free(kid_adr), free(order), free(placed), free(queue);
    return -1;
  }
  for (int t = 0; t < nt; t++) {  // joints by parent body (ground: slot 0)
    const int j = m->loop_joint[t], ch = m->loop_child[j];
    kid_adr[m->joint_body[2 * j + (ch ? 0 : 1)] + 2]++;
  }
  for (int b = 0; b <= nb; b++) kid_adr[b + 1] += kid_adr[b];
  for (int t = 0; t < nt; t++) {
    const int j = m->loop_joint[t], ch = m->loop_child[j];
    kids[kid_adr[m->joint_body[2 * j + (ch ? 0 : 1)] + 1]++] = j;
  }
  // (filled, the ground's joints are kids[0 .. kid_adr[0]), body b's kids[kid_adr[b] ..
  // kid_adr[b + 1]))
  int sp = 0, no = 0;
  for (int k = kid_adr[0] - 1; k >= 0; k--) stack[sp++] = kids[k];
  while (sp > 0) {
    const int j = stack[--sp], kid = m->joint_body[2 * j + m->loop_child[j]];
    order[no++] = j;
    for (int k = kid_adr[kid + 1] - 1; k >= kid_adr[kid]; k--) stack[sp++] = kids[k];
  }
  memcpy(m->loop_joint, order, sizeof(int) * (size_t)nt);
  free(kids), free(stack), free(kid_adr), free(order);
  // coordinates, parents first
  int nc = 0;
  for (int b = 0; b < nb; b++) m->loop_body_coord[b] = -1;
  for (int t = 0; t < nt; t++) {
    const int j = m->loop_joint[t];
    if (m->joint_type[j] != PT_JOINT_FIXED) m->loop_jcoord[j] = nc;
    nc += m->joint_type[j] == PT_JOINT_FIXED ? 0 : m->joint_ncoord[j];
  }
  m->nlt = nc;
  m->nlf = 0;
  for (int b = 0; b < nb; b++) m->loop_body_float[b] = placed[b] ? -1 : m->nlf++;
  m->nlw = m->nlt + 6 * m->nlf;
  m->nls = m->nlt + 7 * m->nlf;
  ok = ALLOC(loop_parent, m->nlw) && ALLOC(loop_cbody, m->nlw) && ALLOC(loop_cjoint, m->nlt + 1) &&
       ALLOC(loop_ck, m->nlt + 1) && ALLOC(loop_meas, m->nlt + 1) &&
       ALLOC(loop_float_body, m->nlf + 1);
  if (!ok) {
    free(placed), free(queue);
    return -1;
  }
  for (int t = 0; t < nt; t++) {
    const int j = m->loop_joint[t], ch = m->loop_child[j];
    const int par = m->joint_body[2 * j + (ch ? 0 : 1)], kid = m->joint_body[2 * j + ch];
    int above = par == PT_GROUND ? -1 : m->loop_body_coord[par];
    const int i0 = m->loop_jcoord[j];
    for (int k = 0; i0 >= 0 && k < m->joint_ncoord[j]; k++) {
      const int i = i0 + k;
      // the axis fixed in the parent comes first: h1 when the child is body2
      m->loop_ck[i] = ch ? k : m->joint_ncoord[j] - 1 - k;
      m->loop_cjoint[i] = j;
      m->loop_cbody[i] = kid;
      m->loop_meas[i] = m->joint_coord_adr[j] + m->loop_ck[i];
      m->loop_parent[i] = above;
      above = i;
    }
    m->loop_body_coord[kid] = above;
  }
  if (!ALLOC(loop_coord, m->ncoord + 1)) {
    free(placed), free(queue);
    return -1;
  }
  for (int c = 0; c < m->ncoord; c++) m->loop_coord[c] = -1;
  for (int i = 0; i < m->nlt; i++) m->loop_coord[m->loop_meas[i]] = i;
  for (int b = 0; b < nb; b++) {
    const int f = m->loop_body_float[b];
    if (f < 0) continue;
    m->loop_float_body[f] = b;
    for (int c = 0; c < 6; c++) {
      const int i = m->nlt + 6 * f + c;
      m->loop_parent[i] = c ? i - 1 : -1;
      m->loop_cbody[i] = b;
    }
    m->loop_body_coord[b] = m->nlt + 6 * f + 5;
  }
  free(placed), free(queue);
  return nt > 0;
}

// Reference of every tree joint at the state held in d (q, rot evaluated): A1^T A2, A1^T (r2 -
// r1) and the coordinates measured there.
static int reference(pt_model *m, pt_data *d) {
  const int nj = m->njoint;
  if (!ALLOC(loop_pref, 4 * nj) || !ALLOC(loop_tref, 3 * nj) || !ALLOC(loop_sref0, m->nlt + 1))
    return -1;
  static const double eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, origin[3] = {0, 0, 0};
  for (int t = 0; t < m->nlj; t++) {
    const int j = m->loop_joint[t], b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const double *A1 = b1 == PT_GROUND ? eye : d->rot + 9 * b1, *A2 = b2 == PT_GROUND ? eye : d->rot + 9 * b2;
    const double *r1 = b1 == PT_GROUND ? origin : d->q + 7 * b1, *r2 = b2 == PT_GROUND ? origin : d->q + 7 * b2;
    double R[9], dr[3];
    ptu_mul_matT_mat3(R, A1, A2);
    ptu_mat2quat(m->loop_pref + 4 * j, R);
    ptu_sub3(dr, r2, r1);
    ptu_mul_matT_vec3(m->loop_tref + 3 * j, A1, dr);
  }
  for (int i = 0; i < m->nlt; i++) {
    double v, jac[12], jdx;
    pt_measure(m, d, m->loop_meas[i], &v, jac, &jdx);
    m->loop_sref0[i] = v;
  }
  return 0;
}

// Row r of G_w (nlw) at the state held in d (subspaces evaluated), dense.
static void dense_row(const pt_model *m, const pt_data *d, int r, double *g) {
  ptu_zero(g, m->nlw);
  for (int sl = 0; sl < 2; sl++) {
    const int b = m->row_body[2 * r + sl];
    if (b == PT_GROUND) continue;
    const double *J = d->row_jac + 12 * r + 6 * sl;
    const int f = m->loop_body_float[b];
    if (f >= 0) {
      for (int c = 0; c < 6; c++) g[m->nlt + 6 * f + c] += J[c];
      continue;
    }
    double n[3], t3[3];
    ptu_cross3(t3, d->q + 7 * b, J);
    ptu_add3(n, J + 3, t3);
    for (int i = m->loop_body_coord[b]; i >= 0; i = m->loop_parent[i])
      g[i] += ptu_dot3(n, d->loop_S + 6 * i) + ptu_dot3(J, d->loop_S + 6 * i + 3);
  }
}

// Independent rows among rows[0..n) by pivoted QR of G_w^T (dense, at load); keep[row] = 1 for
// them. Returns the rank, or -1.
static int rank_rows(const pt_model *m, const pt_data *d, const int *rows, int n, int *keep) {
  const int nw = m->nlw;
  if (n == 0) return 0;
  double *Gt = calloc((size_t)nw * n, sizeof(double)), *g = calloc((size_t)nw + 1, sizeof(double));
  double *tau = calloc((size_t)(n < nw ? n : nw) + 1, sizeof(double));
  lapack_int *jpvt = calloc((size_t)n, sizeof(lapack_int));
  int rank = -1;
  if (Gt && g && tau && jpvt) {
    for (int k = 0; k < n; k++) {
      dense_row(m, d, rows[k], g);
      for (int i = 0; i < nw; i++) Gt[(size_t)i * n + k] = g[i];
    }
    if (LAPACKE_dgeqp3(LAPACK_ROW_MAJOR, nw, n, Gt, n, jpvt, tau) == 0) {
      const int kmax = n < nw ? n : nw;
      const double r0 = fabs(Gt[0]);
      rank = 0;
      for (int k = 0; k < kmax; k++)
        if (r0 > 0 && fabs(Gt[(size_t)k * n + k]) > PT_TOL_RANK_ROWS * r0) rank++;
      for (int k = 0; k < n; k++) keep[rows[k]] = 0;
      for (int k = 0; k < rank; k++) keep[rows[jpvt[k] - 1]] = 1;
    }
  }
  free(Gt), free(g), free(tau), free(jpvt);
  return rank;
}

// The self-check at a displaced, moving state (as pt_tree_init's): forward kinematics keeps
// every tree joint's rows, measures the coordinates it was given, and G_w sd = J x on every
// cut row. 1 when it holds.
static int self_check(const pt_model *m, pt_data *d) {
  const int nt = m->nlt;
  double *g = calloc((size_t)m->nlw + 1, sizeof(double));
  if (!g) return 0;
  for (int i = 0; i < nt; i++) {
    d->loop_s[i] = m->loop_sref0[i] + 0.3 + 0.1 * (i % 7);
    d->loop_sd[i] = 0.7 - 0.2 * (i % 7);
  }
  for (int f = 0; f < m->nlf; f++) {
    const int b = m->loop_float_body[f];
    ptu_copy(d->loop_s + nt + 7 * f, m->q0 + 7 * b, 7);
    ptu_zero(d->loop_sd + nt + 7 * f, 7);
  }
  pt_loop_positions(m, d);
  pt_loop_subspaces(m, d);
  pt_loop_velocities(m, d);
  pt_kin_inertias(m, d, 1);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  double scale = 1;
  for (int k = 0; k < m->nbody; k++)
    for (int c = 0; c < 3; c++) scale = fmax(scale, fabs(d->q[7 * k + c]));
  double err = 0, verr = 0, gerr = 0, gmax = 0;
  for (int r = 0; r < m->nrow; r++) {
    const int j = r < m->nrow_joint ? m->row_joint[r] : -1;
    const double jx = pt_jac_dot_x(d, m->row_body + 2 * r, d->row_jac + 12 * r);
    if (j >= 0 && m->loop_child[j] >= 0) {  // a tree joint's row
      err = fmax(err, fabs(d->row_phi[r]));
      verr = fmax(verr, fabs(jx - d->row_nu[r]));
      continue;
    }
    dense_row(m, d, r, g);
    double gs = 0;
    for (int i = 0; i < m->nlw; i++) gs += g[i] * (i < nt ? d->loop_sd[i] : 0);
    gerr = fmax(gerr, fabs(gs - jx));
    gmax = fmax(gmax, fabs(jx));
  }
  for (int i = 0; i < nt; i++) {
    double v, jac[12], jdx, rate = 0;
    const int c = m->loop_meas[i];
    pt_measure(m, d, c, &v, jac, &jdx);
    for (int sl = 0; sl < 2; sl++) {
      const int b = m->meas_body[2 * c + sl];
      if (b != PT_GROUND)
        for (int k = 0; k < 6; k++) rate += jac[6 * sl + k] * d->x[6 * b + k];
    }
    double dz = fabs(v - d->loop_s[i]);
    dz = fmin(dz, fabs(dz - 2 * M_PI));
    err = fmax(err, dz / scale);
    verr = fmax(verr, fabs(rate - d->loop_sd[i]));
  }
  free(g);
  return err < PT_TOL_TREE_POS * scale && verr < PT_TOL_TREE_VEL * scale &&
         gerr <= PT_TOL_TREE_VEL * (1 + gmax);
}

// Supports of the kept rows (ancestor-closed, decreasing), the lists by coordinate, the pairs
// and S's pattern.
static int supports(pt_model *m) {
  const int nw = m->nlw, nc = m->nlc;
  int *mark = malloc(sizeof(int) * ((size_t)nw + 1)), *tmp = malloc(sizeof(int) * ((size_t)nw + 1));
  int ok = mark && tmp && ALLOC(loop_z_adr, nc + 1) && ALLOC(loop_zc_adr, nw + 1) &&
           ALLOC(loop_m_adr, nw + 1) && ALLOC(loop_pair_adr, nw + 1);
  if (!ok) goto fail;
  for (int i = 0; i < nw; i++) mark[i] = -1;
  int nz = 0;
  for (int pass = 0; pass < 2; pass++) {
    nz = 0;
    for (int a = 0; a < nc; a++) {
      const int r = m->loop_row[a];
      int n = 0;
      for (int sl = 0; sl < 2; sl++) {
        const int b = m->row_body[2 * r + sl];
        if (b == PT_GROUND) continue;
        for (int i = m->loop_body_coord[b]; i >= 0 && mark[i] != a + pass * nc; i = m->loop_parent[i]) {
          mark[i] = a + pass * nc;
          tmp[n++] = i;
        }
      }
      qsort(tmp, (size_t)n, sizeof(int), cmp_desc);
      if (pass == 0) m->loop_z_adr[a] = nz;
      else
        for (int k = 0; k < n; k++) m->loop_z_idx[nz + k] = tmp[k];
      nz += n;
    }
    if (pass == 0) {
      m->loop_z_adr[nc] = nz;
      m->nlz = nz;
      if (!ALLOC(loop_z_idx, nz + 1) || !ALLOC(loop_zc, nz + 1) || !ALLOC(loop_zc_row, nz + 1))
        goto fail;
      for (int i = 0; i < nw; i++) mark[i] = -1;
    }
  }
  // by coordinate
  for (int e = 0; e < nz; e++) m->loop_zc_adr[m->loop_z_idx[e] + 1]++;
  for (int i = 0; i < nw; i++) m->loop_zc_adr[i + 1] += m->loop_zc_adr[i];
  for (int i = 0; i < nw; i++) tmp[i] = m->loop_zc_adr[i];
  for (int a = 0; a < nc; a++)
    for (int e = m->loop_z_adr[a]; e < m->loop_z_adr[a + 1]; e++) {
      const int i = m->loop_z_idx[e];
      m->loop_zc[tmp[i]] = e;
      m->loop_zc_row[tmp[i]++] = a;
    }
  // the inertia's rows: the coordinate and its ancestors
  for (int i = 0; i < nw; i++) {
    int n = 1;
    for (int k = m->loop_parent[i]; k >= 0; k = m->loop_parent[k]) n++;
    m->loop_m_adr[i + 1] = m->loop_m_adr[i] + n;
  }
  m->nlm = m->loop_m_adr[nw];
  // S: rows a, b are coupled when a coordinate is in both supports. Its full pattern (local)
  // for the AMD order, then the upper triangle of P S P^T by columns, the pair map onto it and
  // the symbolic LDL^T (splu.h)
  int *cp = calloc((size_t)nc + 1, sizeof(int)), *cm = malloc(sizeof(int) * ((size_t)nc + 1));
  int *list = NULL;
  if (!cp || !cm) {
    free(cp), free(cm);
    goto fail;
  }
  for (int a = 0; a < nc; a++) cm[a] = -1;
  for (int pass = 0; pass < 2; pass++) {
    int nn = 0;
    for (int a = 0; a < nc; a++) {
      if (pass == 0) cp[a] = nn;
      for (int e = m->loop_z_adr[a]; e < m->loop_z_adr[a + 1]; e++) {
        const int i = m->loop_z_idx[e];
        for (int t = m->loop_zc_adr[i]; t < m->loop_zc_adr[i + 1]; t++) {
          const int b = m->loop_zc_row[t];
          if (cm[b] == a + pass * nc) continue;
          cm[b] = a + pass * nc;
          if (pass) list[nn] = b;
          nn++;
        }
      }
    }
    if (pass == 0) {
      cp[nc] = nn;
      if (!(list = malloc(sizeof(int) * ((size_t)nn + 1)))) {
        free(cp), free(cm);
        goto fail;
      }
      for (int a = 0; a < nc; a++) cm[a] = -1;
    }
  }
  ok = ALLOC(loop_ldl_P, nc + 1) && ALLOC(loop_ldl_Pinv, nc + 1) && ALLOC(loop_su_colptr, nc + 1) &&
       ALLOC(loop_ldl_Lp, nc + 1) && ALLOC(loop_ldl_rp, nc + 1);
  int *parent = malloc(sizeof(int) * ((size_t)nc + 1)), *work = malloc(sizeof(int) * (4 * (size_t)nc + 1));
  if (!ok || !parent || !work || (nc > 0 && amd_order(nc, cp, list, m->loop_ldl_P, NULL, NULL) < AMD_OK)) {
    free(cp), free(cm), free(list), free(parent), free(work);
    goto fail;
  }
  for (int k = 0; k < nc; k++) m->loop_ldl_Pinv[m->loop_ldl_P[k]] = k;
  // upper triangle of P S P^T: column k holds the permuted rows i <= k of S's column P[k]
  int nu = 0;
  for (int k = 0; k < nc; k++) {
    m->loop_su_colptr[k] = nu;
    const int c = m->loop_ldl_P[k];
    for (int p = cp[c]; p < cp[c + 1]; p++) nu += m->loop_ldl_Pinv[list[p]] <= k;
  }
  m->loop_su_colptr[nc] = nu;
  m->nlsn = nu;
  if (!ALLOC(loop_su_rowind, nu + 1)) {
    free(cp), free(cm), free(list), free(parent), free(work);
    goto fail;
  }
  for (int k = 0, q = 0; k < nc; k++) {
    const int c = m->loop_ldl_P[k], q0 = q;
    for (int p = cp[c]; p < cp[c + 1]; p++)
      if (m->loop_ldl_Pinv[list[p]] <= k) m->loop_su_rowind[q++] = m->loop_ldl_Pinv[list[p]];
    qsort(m->loop_su_rowind + q0, (size_t)(q - q0), sizeof(int), cmp_asc);
  }
  free(cp), free(cm), free(list);
  // each unordered pair of rows through a coordinate, (ia <= ib), onto its entry of the upper
  // triangle
  for (int i = 0; i < nw; i++) {
    const int c = m->loop_zc_adr[i + 1] - m->loop_zc_adr[i];
    m->loop_pair_adr[i + 1] = m->loop_pair_adr[i] + c * (c + 1) / 2;
  }
  m->nlpair = m->loop_pair_adr[nw];
  if (!ALLOC(loop_pair, m->nlpair + 1)) {
    free(parent), free(work);
    goto fail;
  }
  for (int i = 0; i < nw; i++) {
    const int t0 = m->loop_zc_adr[i], c = m->loop_zc_adr[i + 1] - t0;
    int *pair = m->loop_pair + m->loop_pair_adr[i];
    for (int ia = 0; ia < c; ia++)
      for (int ib = ia; ib < c; ib++) {
        int ra = m->loop_ldl_Pinv[m->loop_zc_row[t0 + ia]], rb = m->loop_ldl_Pinv[m->loop_zc_row[t0 + ib]];
        if (ra > rb) {
          const int x = ra;
          ra = rb;
          rb = x;
        }
        int lo = m->loop_su_colptr[rb], hi = m->loop_su_colptr[rb + 1] - 1, at = -1;
        while (lo <= hi) {
          const int mid = (lo + hi) / 2;
          if (m->loop_su_rowind[mid] == ra) {
            at = mid;
            break;
          }
          if (m->loop_su_rowind[mid] < ra) lo = mid + 1;
          else hi = mid - 1;
        }
        *pair++ = at;
      }
  }
  pt_sldl_symbolic(nc, m->loop_su_colptr, m->loop_su_rowind, m->loop_ldl_Lp, parent, NULL, NULL,
                   NULL, work);
  m->nlsl = m->loop_ldl_Lp[nc];
  // a small S whose factor fills most of its triangle (the rows of a parallel robot all meet
  // at its platform): factored dense, row-major lower triangle in the same order, the pairs
  // onto it
  if (nc <= LOOP_DENSE_S_MAX && 2 * m->nlsl >= LOOP_DENSE_S_FILL * nc * (nc - 1)) {
    m->loop_s_dense = 1;
    m->nlsn = nc * nc;
    m->nlsl = 0;
    for (int i = 0; i < nw; i++) {
      const int t0 = m->loop_zc_adr[i], c = m->loop_zc_adr[i + 1] - t0;
      int *pair = m->loop_pair + m->loop_pair_adr[i];
      for (int ia = 0; ia < c; ia++)
        for (int ib = ia; ib < c; ib++) {
          const int ra = m->loop_ldl_Pinv[m->loop_zc_row[t0 + ia]];
          const int rb = m->loop_ldl_Pinv[m->loop_zc_row[t0 + ib]];
          *pair++ = ra > rb ? ra * nc + rb : rb * nc + ra;
        }
    }
    free(parent), free(work);
    free(mark), free(tmp);
    return 0;
  }
  if (!ALLOC(loop_ldl_Li, m->nlsl + 1) || !ALLOC(loop_ldl_rpat, m->nlsl + 1)) {
    free(parent), free(work);
    goto fail;
  }
  pt_sldl_symbolic(nc, m->loop_su_colptr, m->loop_su_rowind, m->loop_ldl_Lp, parent,
                   m->loop_ldl_rp, m->loop_ldl_rpat, m->loop_ldl_Li, work);
  free(parent), free(work);
  free(mark), free(tmp);
  return 0;
fail:
  free(mark), free(tmp);
  return -1;
}

// The CSC patterns of G_s (nlcs x nls), G_s^T and B = [G_s; Q2^T], with their sources.
static int patterns(pt_model *m) {
  const int ns = m->nls, nc = m->nlc, nt = m->nlt, ncs = m->nlcs, nd = m->ndof;
  if (!ALLOC(loop_g_colptr, ns + 1)) return -1;
  for (int pass = 0; pass < 2; pass++) {
    int nz = 0;
    for (int j = 0; j < ns; j++) {
      if (pass == 0) m->loop_g_colptr[j] = nz;
      if (j < nt) {  // rows whose support holds tree coordinate j
        for (int t = m->loop_zc_adr[j]; t < m->loop_zc_adr[j + 1]; t++, nz++)
          if (pass) {
            m->loop_g_rowind[nz] = m->loop_zc_row[t];
            m->loop_g_src[nz] = m->loop_zc[t];
          }
        continue;
      }
      const int f = (j - nt) / 7, c = (j - nt) % 7, b = m->loop_float_body[f];
      const int w0 = nt + 6 * f;  // rows touching body b: those through its first coordinate
      for (int t = m->loop_zc_adr[w0]; t < m->loop_zc_adr[w0 + 1]; t++, nz++)
        if (pass) {
          const int a = m->loop_zc_row[t], r = m->loop_row[a];
          const int sl = m->row_body[2 * r] == b ? 0 : 1;
          m->loop_g_rowind[nz] = a;
          m->loop_g_src[nz] = m->nlz + 14 * a + 7 * sl + c;
        }
      if (c >= 3) {  // the normalisation row
        if (pass) {
          m->loop_g_rowind[nz] = nc + f;
          m->loop_g_src[nz] = m->nlz + 14 * nc + 4 * f + c - 3;
        }
        nz++;
      }
    }
    if (pass == 0) {
      m->loop_g_colptr[ns] = nz;
      m->nlg = nz;
      if (!ALLOC(loop_g_rowind, nz + 1) || !ALLOC(loop_g_src, nz + 1)) return -1;
    }
  }
  // G_s^T: by rows of G_s
  if (!ALLOC(loop_gt_colptr, ncs + 1) || !ALLOC(loop_gt_rowind, m->nlg + 1) ||
      !ALLOC(loop_gt_src, m->nlg + 1))
    return -1;
  for (int e = 0; e < m->nlg; e++) m->loop_gt_colptr[m->loop_g_rowind[e] + 1]++;
  for (int a = 0; a < ncs; a++) m->loop_gt_colptr[a + 1] += m->loop_gt_colptr[a];
  int *fill = calloc((size_t)ncs + 1, sizeof(int));
  if (!fill) return -1;
  for (int j = 0; j < ns; j++)
    for (int e = m->loop_g_colptr[j]; e < m->loop_g_colptr[j + 1]; e++) {
      const int a = m->loop_g_rowind[e], p = m->loop_gt_colptr[a] + fill[a]++;
      m->loop_gt_rowind[p] = j;
      m->loop_gt_src[p] = e;
    }
  free(fill);
  // B: G_s's column, then Q2's row (the ndof tangent rows)
  m->nlb = m->nlg + ns * nd;
  if (!ALLOC(loop_b_colptr, ns + 1) || !ALLOC(loop_b_rowind, m->nlb + 1) ||
      !ALLOC(loop_b_src, m->nlb + 1))
    return -1;
  int nz = 0;
  for (int j = 0; j < ns; j++) {
    m->loop_b_colptr[j] = nz;
    for (int e = m->loop_g_colptr[j]; e < m->loop_g_colptr[j + 1]; e++, nz++) {
      m->loop_b_rowind[nz] = m->loop_g_rowind[e];
      m->loop_b_src[nz] = e;
    }
    for (int k = 0; k < nd; k++, nz++) {
      m->loop_b_rowind[nz] = ncs + k;
      m->loop_b_src[nz] = -(1 + k);
    }
  }
  m->loop_b_colptr[ns] = nz;
  return 0;
}

static void counts_zero(pt_model *m) {
  m->loop_ok = 0;
  m->loop_s_dense = 0;
  m->nlt = m->nlf = m->nlw = m->nls = m->nlj = m->nlc = m->nlcs = 0;
  m->nlm = m->nlz = m->nlg = m->nlb = m->nlpair = m->nlsn = m->nlsl = 0;
}

// The spanning tree, its coordinates, the kept cut rows and every sparsity pattern, from the
// model's assembled initial state (m->q0), once the model is otherwise complete. Sets
// m->loop_ok (0 when the model does not qualify or the self-check at a displaced state fails).
static int loops_build(pt_model *m) {
  counts_zero(m);
  // closed loops only (trees have their own partition); joint limits on loops stay with the
  // Cartesian partitions (loop_limits.c)
  if (m->nbody == 0 || pt_tree_qualifies(m) || (m->limits_on && m->nlimit > 0)) return PT_OK;
  const int st = spanning_tree(m);
  if (st < 0) return PT_ENOMEM;
  if (st == 0) {
    counts_zero(m);
    return PT_OK;
  }
  const int nlw = m->nlw, nls = m->nls, nlt = m->nlt, nlf = m->nlf;
  int *rows = calloc((size_t)m->nrow + 1, sizeof(int));
  int *keep = calloc((size_t)m->nrow + 1, sizeof(int));
  pt_data *d = pt_data_new(m);  // at the assembled initial state, with loop_s and loop_S
  int rc = PT_ENOMEM, ok = 0, n = 0;
  if (!d || !rows || !keep) goto done;
  pt_kin_bodies(m, d);
  if (reference(m, d)) goto done;
  // forward kinematics at the reference reproduces the initial state
  for (int i = 0; i < nlt; i++) {
    d->loop_s[i] = m->loop_sref0[i];
    d->loop_sd[i] = 0;
  }
  for (int f = 0; f < nlf; f++) {
    ptu_copy(d->loop_s + nlt + 7 * f, m->q0 + 7 * m->loop_float_body[f], 7);
    ptu_zero(d->loop_sd + nlt + 7 * f, 7);
  }
  pt_loop_positions(m, d);
  double moved = 0;  // positions, and Euler parameters up to their sign
  for (int b = 0; b < m->nbody; b++) {
    const double *q = d->q + 7 * b, *q0 = m->q0 + 7 * b;
    double dp = 0, dm = 0;
    for (int c = 0; c < 3; c++) moved = fmax(moved, fabs(q[c] - q0[c]));
    for (int c = 3; c < 7; c++) {
      dp = fmax(dp, fabs(q[c] - q0[c]));
      dm = fmax(dm, fabs(q[c] + q0[c]));
    }
    moved = fmax(moved, fmin(dp, dm));
  }
  pt_loop_subspaces(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  // cut joints and the independent cut rows: the joints' first, then the motions, which must
  // all stay independent (compile.c refused a model whose motions are not)
  for (int j = 0; j < m->njoint; j++)
    if (m->loop_child[j] < 0) {
      for (int r = m->joint_row_adr[j]; r < m->joint_row_adr[j] + m->joint_nrow[j]; r++) rows[n++] = r;
    }
  const int rank = rank_rows(m, d, rows, n, keep);
  int nk = 0;
  for (int k = 0; k < n; k++)
    if (keep[rows[k]]) rows[nk++] = rows[k];
  for (int i = 0; i < m->nmotion; i++) rows[nk++] = m->nrow_joint + i;
  const int rank2 = rank < 0 ? -1 : rank_rows(m, d, rows, nk, keep);
  rc = PT_OK;
  if (!(moved < PT_TOL_TREE_POS) || rank2 != nk || nlw - nk != m->ndof || nls - nk - nlf != m->ndof)
    goto done;
  m->nlc = nk;
  m->nlcs = nk + nlf;
  rc = PT_ENOMEM;
  if (!ALLOC(loop_row, nk + 1)) goto done;
  for (int k = 0; k < nk; k++) m->loop_row[k] = rows[k];
  ok = self_check(m, d);
  if (ok && (supports(m) || patterns(m))) goto done;
  rc = PT_OK;
done:
  pt_data_free(d);
  free(rows), free(keep);
  if (rc || !ok) {
    counts_zero(m);
    return rc;
  }
  m->loop_ok = 1;
  return PT_OK;
}

int pt_compile_loops(pt_model *m, pt_error *err) {
  return loops_build(m) ? pt_error_set(err, PT_ENOMEM, "out of memory") : PT_OK;
}
