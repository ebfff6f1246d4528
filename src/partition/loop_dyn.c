// loop_dyn.c: the equations of motion of a closed-loop model in joint coordinates (loop.h).
//
// With x = T(s) w + kappa on every body (kappa the velocity-product acceleration of the tree),
// the Newton-Euler equations M_b xdd_b = Q_b - (J^T lambda)_b (seed gcp eq. 21, dynamics.c)
// become, in the velocity coordinates w (the velocity transformation of the seed's eq. 8-9
// with the tree's joint coordinates as the state),
//   M wdd = Q - G_w^T lambda,   G_w wdd = gamma - J kappa,
//   M = T^T diag(M_b) T,   Q = T^T (Q_b - M_b kappa_b),
// the cut rows' multipliers from the Schur complement (the local-dynamics matrix of the W seed,
// eq. 62, in these coordinates):
//   S lambda = G_w M^-1 Q - gamma,   S = G_w M^-1 G_w^T,   wdd = M^-1 (Q - G_w^T lambda).
// M is the joint-space inertia of the tree, by composite rigid bodies (Featherstone, "Rigid
// Body Dynamics Algorithms", 2008, Table 6.2), with spatial inertias at the global origin held
// as 10 numbers (m, h = m c, the rotational inertia at the origin); a floating body's block is
// diag(m I, I_g). Entry (i, k) exists for k an ancestor of i, so M = L^T D L without fill
// (Featherstone's LTDL, ibid. Table 6.3), and Z = L^-T G_w^T keeps each row's support: S is
// Z^T D^-1 Z, coupled only where two rows' supports meet (banded along a chain of loops).
#include "loop.h"
#include "ptu.h"
#include "splu.h"
#include "partition.h"     // pt_lambda
#include "qr_partition.h"  // pt_acc_dense
#include "tolerances.h"

// V = (omega, v_c - omega x c) of a body from x (ground: 0)
static void spatial_velocity(const pt_data *d, int b, double V[6]) {
  if (b == PT_GROUND) {
    ptu_zero(V, 6);
    return;
  }
  const double *x = d->x + 6 * b;
  double t[3];
  ptu_copy(V, x + 3, 3);
  ptu_cross3(t, x + 3, d->q + 7 * b);
  ptu_sub3(V + 3, x, t);
}

// The classical (x space) acceleration of body b from its spatial acceleration A at the
// origin: omegadot = A^ang, a_c = A^lin + A^ang x c + omega x v_c.
static void classical(const pt_data *d, int b, const double A[6], double out[6]) {
  const double *x = d->x + 6 * b, *c = d->q + 7 * b;
  double t1[3], t2[3];
  ptu_cross3(t1, A, c);
  ptu_cross3(t2, x + 3, x);
  for (int k = 0; k < 3; k++) {
    out[k] = A[3 + k] + t1[k] + t2[k];
    out[3 + k] = A[k];
  }
}

// The body the axis of tree coordinate i is fixed in (its line moves with that body).
static int carrier(const pt_model *m, int i) {
  const int j = m->loop_cjoint[i];
  if (m->joint_type[j] == PT_JOINT_REVOLUTE) return m->joint_body[2 * j + (m->loop_child[j] ? 0 : 1)];
  return m->joint_body[2 * j + (m->loop_ck[i] ? 1 : 0)];  // h1 in body1, h2 in body2
}

// Spatial bias accelerations along the tree, parents first: A_child = A_parent + sum Sdot_i
// sd_i, Sdot_i = V_carrier x S_i (a motion vector fixed in the body carrying the axis).
void pt_loop_bias(const pt_model *m, pt_data *d) {
  static const double zero[6] = {0, 0, 0, 0, 0, 0};
  for (int t = 0; t < m->nlj; t++) {
    const int j = m->loop_joint[t], ch = m->loop_child[j];
    const int par = m->joint_body[2 * j + (ch ? 0 : 1)], kid = m->joint_body[2 * j + ch];
    double *A = d->loop_A + 6 * kid;
    ptu_copy(A, par == PT_GROUND ? zero : d->loop_A + 6 * par, 6);
    const int i0 = m->loop_jcoord[j];
    for (int k = 0; i0 >= 0 && k < m->joint_ncoord[j]; k++) {
      const int i = i0 + k;
      const double *S = d->loop_S + 6 * i, sd = d->loop_sd[i];
      double V[6], a[3], b[3], c[3];
      spatial_velocity(d, carrier(m, i), V);
      ptu_cross3(a, V, S);  // omega x S^ang
      ptu_cross3(b, V, S + 3);
      ptu_cross3(c, V + 3, S);
      for (int e = 0; e < 3; e++) {
        A[e] += a[e] * sd;
        A[3 + e] += (b[e] + c[e]) * sd;
      }
    }
    classical(d, kid, A, d->loop_kap + 6 * kid);
  }
  for (int f = 0; f < m->nlf; f++) ptu_zero(d->loop_kap + 6 * m->loop_float_body[f], 6);
}

// Spatial inertia I = (m, h, Ibar) at the origin applied to a motion (a, b): the momentum
// n = Ibar a + h x b, f = m b + a x h.
static void inertia_apply(const double *I, const double *S, double F[6]) {
  const double *h = I + 1, *Ib = I + 4;  // Ib: xx, yy, zz, xy, xz, yz
  const double *a = S, *b = S + 3;
  double t[3];
  F[0] = Ib[0] * a[0] + Ib[3] * a[1] + Ib[4] * a[2];
  F[1] = Ib[3] * a[0] + Ib[1] * a[1] + Ib[5] * a[2];
  F[2] = Ib[4] * a[0] + Ib[5] * a[1] + Ib[2] * a[2];
  ptu_cross3(t, h, b);
  ptu_add3(F, F, t);
  ptu_cross3(t, a, h);
  for (int k = 0; k < 3; k++) F[3 + k] = I[0] * b[k] + t[k];
}

static double dot6(const double *S, const double *F) {
  return ptu_dot3(S, F) + ptu_dot3(S + 3, F + 3);
}

// Composite rigid bodies (Table 6.2): Ic_b = I_b + sum of the children's; M(i, i) = S_i . Ic
// S_i and M(i, k) = S_k . Ic S_i up the ancestors, Ic the composite inertia of the body
// coordinate i moves (both coordinates of a universal joint move the same subtree).
void pt_loop_inertia(const pt_model *m, pt_data *d) {
  // outputs
  double *M = d->loop_m, *Ic = d->loop_Ic;
  // inputs: q, inertia_g, loop_S
  for (int b = 0; b < m->nbody; b++) {
    if (m->loop_body_float[b] >= 0) continue;
    const double *c = d->q + 7 * b, *Ig = d->inertia_g + 9 * b, mb = m->body_mass[b];
    double *I = Ic + 10 * b;
    const double cc = ptu_dot3(c, c);
    I[0] = mb;
    for (int k = 0; k < 3; k++) I[1 + k] = mb * c[k];
    I[4] = Ig[0] + mb * (cc - c[0] * c[0]);
    I[5] = Ig[4] + mb * (cc - c[1] * c[1]);
    I[6] = Ig[8] + mb * (cc - c[2] * c[2]);
    I[7] = Ig[1] - mb * c[0] * c[1];
    I[8] = Ig[2] - mb * c[0] * c[2];
    I[9] = Ig[5] - mb * c[1] * c[2];
  }
  for (int t = m->nlj - 1; t >= 0; t--) {
    const int j = m->loop_joint[t], ch = m->loop_child[j];
    const int par = m->joint_body[2 * j + (ch ? 0 : 1)], kid = m->joint_body[2 * j + ch];
    if (par == PT_GROUND) continue;
    for (int k = 0; k < 10; k++) Ic[10 * par + k] += Ic[10 * kid + k];
  }
  for (int i = 0; i < m->nlt; i++) {
    double F[6];
    inertia_apply(Ic + 10 * m->loop_cbody[i], d->loop_S + 6 * i, F);
    int p = m->loop_m_adr[i];
    M[p++] = dot6(d->loop_S + 6 * i, F);
    for (int k = m->loop_parent[i]; k >= 0; k = m->loop_parent[k]) M[p++] = dot6(d->loop_S + 6 * k, F);
  }
  for (int f = 0; f < m->nlf; f++) {  // diag(m I, I_g) along the chain of its 6 coordinates
    const int b = m->loop_float_body[f];
    const double *Ig = d->inertia_g + 9 * b;
    for (int c = 0; c < 6; c++) {
      int p = m->loop_m_adr[m->nlt + 6 * f + c];
      for (int k = c; k >= 0; k--)
        M[p++] = c < 3 ? (k == c ? m->body_mass[b] : 0) : (k < 3 ? 0 : Ig[3 * (c - 3) + k - 3]);
    }
  }
}

// Q = T^T (Q_b - M_b kappa_b): each body's residual wrench taken to the origin, summed from
// the leaves, projected on the subspaces. loop_F holds the subtree sums.
void pt_loop_gen_forces(const pt_model *m, pt_data *d) {
  double *F = d->loop_F, *Qb = d->loop_qb;
  for (int b = 0; b < m->nbody; b++) {
    if (m->loop_body_float[b] >= 0) continue;
    const double *k = d->loop_kap + 6 * b, *Q = d->qfrc + 6 * b, *c = d->q + 7 * b;
    double Iw[3], f[3], n[3], t[3];
    ptu_mul_mat_vec3(Iw, d->inertia_g + 9 * b, k + 3);
    for (int e = 0; e < 3; e++) {
      f[e] = Q[e] - m->body_mass[b] * k[e];
      n[e] = Q[3 + e] - Iw[e];
    }
    ptu_cross3(t, c, f);
    ptu_add3(F + 6 * b, n, t);
    ptu_copy(F + 6 * b + 3, f, 3);
  }
  for (int t = m->nlj - 1; t >= 0; t--) {
    const int j = m->loop_joint[t], ch = m->loop_child[j];
    const int par = m->joint_body[2 * j + (ch ? 0 : 1)], kid = m->joint_body[2 * j + ch];
    if (par == PT_GROUND) continue;
    for (int e = 0; e < 6; e++) F[6 * par + e] += F[6 * kid + e];
  }
  for (int i = 0; i < m->nlt; i++) Qb[i] = dot6(d->loop_S + 6 * i, F + 6 * m->loop_cbody[i]);
  for (int f = 0; f < m->nlf; f++)
    ptu_copy(Qb + m->nlt + 6 * f, d->qfrc + 6 * m->loop_float_body[f], 6);
  // the joint actuators on tree coordinates, left out of qfrc (pt_loop_forces): T^T J_c^T is
  // the unit vector of their coordinate, whose rate is the measured one (compile/loops.c checks)
  for (int a = 0; a < m->nactuator; a++) {
    const int t = m->actuator_type[a];
    if (t != PT_ACT_JOINT_TORQUE && t != PT_ACT_JOINT_FORCE) continue;
    const int i = m->loop_coord[m->actuator_coord[a]], k = m->actuator_input_adr[a];
    if (i >= 0) Qb[i] += m->input_gear[k] * d->input[k];
  }
  ptu_copy(d->loop_u, d->input, m->ninput);
}

void pt_loop_forces(const pt_model *m, pt_data *d) {
  d->loop_efforts = 1;
  pt_forces(m, d);
  d->loop_efforts = 0;
}

int pt_loop_inputs_on_tree(const pt_model *m, const pt_data *d) {
  // control elements (issue 26) drive inputs, and their own inputs act through them: the
  // forces are evaluated in full (pt_forces evaluates the signals first)
  if (m->ctl) return 0;
  for (int a = 0; a < m->nactuator; a++) {
    const int k = m->actuator_input_adr[a], t = m->actuator_type[a];
    const int n = t == PT_ACT_BODY_FORCE || t == PT_ACT_BODY_TORQUE ? 3 : 1;
    int changed = 0;
    for (int c = 0; c < n; c++) changed |= d->input[k + c] != d->loop_u[k + c];
    if (changed && (n == 3 || m->loop_coord[m->actuator_coord[a]] < 0)) return 0;
  }
  return 1;
}

// L D L^T of a dense symmetric A (n x n row-major, its lower triangle) in place: L below the
// diagonal (unit diagonal), D in dg. Returns n, or the column of a zero pivot.
static int dense_ldl(double *A, double *dg, int n) {
  for (int j = 0; j < n; j++) {
    double *aj = A + (size_t)j * n;
    double dj = aj[j];
    for (int k = 0; k < j; k++) {
      const double l = aj[k];
      aj[k] = l / dg[k];  // aj[0..k) holds L(j, .) from here; aj[k..j) still L D
      dj -= l * aj[k];
    }
    if (dj == 0 || !isfinite(dj)) return j;
    dg[j] = dj;
    for (int i = j + 1; i < n; i++) {
      double *ai = A + (size_t)i * n, s = ai[j];
      for (int k = 0; k < j; k++) s -= ai[k] * aj[k];
      ai[j] = s;  // L(i, j) D(j): divided when row i is reached
    }
  }
  return n;
}

static void dense_ldl_solve(const double *A, const double *dg, int n, double *b) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < i; k++) b[i] -= A[(size_t)i * n + k] * b[k];
  for (int i = 0; i < n; i++) b[i] /= dg[i];
  for (int i = n - 1; i >= 0; i--)
    for (int k = i + 1; k < n; k++) b[i] -= A[(size_t)k * n + i] * b[k];
}

static pt_sldl schur(const pt_model *m) {
  const pt_sldl f = {m->nlc, m->loop_su_colptr, m->loop_su_rowind, m->loop_ldl_Lp, m->loop_ldl_Li,
                     m->loop_ldl_rp, m->loop_ldl_rpat};
  return f;
}

// LTDL (Table 6.3) in place: M = L^T D L, L(k, i) for i an ancestor of k.
static int ltdl(const pt_model *m, double *M) {
  const int *adr = m->loop_m_adr, *par = m->loop_parent;
  for (int k = m->nlw - 1; k >= 0; k--) {
    const double dk = M[adr[k]];
    if (!(dk > 0)) return PT_ESINGULAR;
    int pk = adr[k] + 1;
    for (int i = par[k]; i >= 0; i = par[i], pk++) {
      const double a = M[pk] / dk;
      for (int q = 0, pi = adr[i]; pi < adr[i + 1]; q++, pi++) M[pi] -= M[pk + q] * a;
      M[pk] = a;
    }
  }
  return PT_OK;
}

int pt_loop_factor(const pt_model *m, pt_data *d) {
  const int nc = m->nlc;
  double *M = d->loop_m, *z = d->loop_z;
  const int *adr = m->loop_m_adr, *par = m->loop_parent;
  if (ltdl(m, M)) return PT_ESINGULAR;
  // Z = L^-T G_w^T, row by row on its support (decreasing: descendants first)
  int *pos = d->loop_iw;
  for (int a = 0; a < nc; a++) {
    const int z0 = m->loop_z_adr[a], z1 = m->loop_z_adr[a + 1];
    for (int e = z0; e < z1; e++) {
      pos[m->loop_z_idx[e]] = e;
      z[e] = d->loop_gval[e];
    }
    for (int e = z0; e < z1; e++) {
      const int i = m->loop_z_idx[e];
      const double zi = z[e];
      if (zi == 0) continue;
      int p = adr[i] + 1;
      for (int k = par[i]; k >= 0; k = par[k], p++) z[pos[k]] -= M[p] * zi;
    }
  }
  // S = Z^T D^-1 Z: the outer products of each coordinate's entries (each pair once, onto the
  // upper triangle in the AMD order)
  double *S = d->loop_sv;
  ptu_zero(S, m->nlsn);
  for (int i = 0; i < m->nlw; i++) {
    const int t0 = m->loop_zc_adr[i], c = m->loop_zc_adr[i + 1] - t0;
    const double inv = 1 / M[adr[i]];
    const int *pair = m->loop_pair + m->loop_pair_adr[i], *zc = m->loop_zc + t0;
    for (int ia = 0; ia < c; ia++) {
      const double za = z[zc[ia]] * inv;
      for (int ib = ia; ib < c; ib++) S[*pair++] += za * z[zc[ib]];
    }
  }
  if (nc == 0) {
    d->w_ratio = 1;
    return PT_OK;
  }
  const pt_sldl f = schur(m);
  const int ok = m->loop_s_dense ? dense_ldl(S, d->loop_D, nc)
                                 : pt_sldl_factor(&f, S, d->loop_Lx, d->loop_D, d->loop_Y, d->loop_lnz);
  if (ok != nc) {
    d->w_singular = 1;
    d->w_ratio = d->w_ratio_step = 0;
    return PT_ESINGULAR;
  }
  double dmax = 0, dmin = INFINITY;
  for (int a = 0; a < nc; a++) {
    const double v = fabs(d->loop_D[a]);
    dmax = fmax(dmax, v);
    dmin = fmin(dmin, v);
  }
  d->w_ratio = dmax > 0 ? dmin / dmax : 0;
  if (d->w_ratio < d->w_ratio_step) d->w_ratio_step = d->w_ratio;
  if (!(dmin > PT_TOL_W_NEAR_SINGULAR * dmax)) d->w_singular = 1;
  if (!(dmin > PT_TOL_PIVOT_W * dmax)) return PT_ESINGULAR;
  return PT_OK;
}

// M w = y - G^T lambda, G w = gamma (gamma NULL: 0) with the held factors; y is overwritten.
static void solve(const pt_model *m, pt_data *d, double *y, const double *gamma, double *w,
                  double *lam) {
  const int nw = m->nlw, nc = m->nlc, *adr = m->loop_m_adr, *par = m->loop_parent;
  const double *M = d->loop_m, *z = d->loop_z;
  // y = L^-T y (leaves first)
  for (int i = nw - 1; i >= 0; i--) {
    const double yi = y[i];
    if (yi == 0) continue;
    int p = adr[i] + 1;
    for (int k = par[i]; k >= 0; k = par[k], p++) y[k] -= M[p] * yi;
  }
  // S lambda = Z^T D^-1 y - gamma
  for (int a = 0; a < nc; a++) {
    double s = 0;
    for (int e = m->loop_z_adr[a]; e < m->loop_z_adr[a + 1]; e++) {
      const int i = m->loop_z_idx[e];
      s += z[e] * y[i] / M[adr[i]];
    }
    lam[a] = gamma ? s - gamma[a] : s;
  }
  if (nc > 0) {
    double *t = d->loop_Y;
    const pt_sldl f = schur(m);
    for (int k = 0; k < nc; k++) t[k] = lam[m->loop_ldl_P[k]];
    if (m->loop_s_dense)
      dense_ldl_solve(d->loop_sv, d->loop_D, nc, t);
    else
      pt_sldl_solve(&f, d->loop_Lx, d->loop_D, t);
    for (int k = 0; k < nc; k++) lam[m->loop_ldl_P[k]] = t[k];
  }
  // w = L^-1 D^-1 (y - Z lambda) (roots first)
  for (int a = 0; a < nc; a++)
    for (int e = m->loop_z_adr[a]; e < m->loop_z_adr[a + 1]; e++) y[m->loop_z_idx[e]] -= z[e] * lam[a];
  for (int i = 0; i < nw; i++) {
    double s = y[i] / M[adr[i]];
    int p = adr[i] + 1;
    for (int k = par[i]; k >= 0; k = par[k], p++) s -= M[p] * w[k];
    w[i] = s;
  }
}

void pt_loop_solve(const pt_model *m, pt_data *d) {
  solve(m, d, d->loop_qb, d->loop_gam, d->loop_wdd, d->loop_lam);
}

// loop_sdd from loop_wdd: the tree coordinates' as they are, a floating body's (rdd, pdd) with
// pdd = E^T omegadot / 2 - |omega|^2 p / 4 (as pt_qdd_from_xdd).
void pt_loop_sdd(const pt_model *m, pt_data *d) {
  ptu_copy(d->loop_sdd, d->loop_wdd, m->nlt);
  for (int f = 0; f < m->nlf; f++) {
    const double *w = d->loop_wdd + m->nlt + 6 * f, *p = d->loop_s + m->nlt + 7 * f + 3;
    const double *om = d->x + 6 * m->loop_float_body[f] + 3;
    double *o = d->loop_sdd + m->nlt + 7 * f, E[12];
    ptu_quat_E(E, p);
    ptu_copy(o, w, 3);
    const double w2 = ptu_dot3(om, om);
    for (int c = 0; c < 4; c++)
      o[3 + c] = 0.5 * (E[c] * w[3] + E[4 + c] * w[4] + E[8 + c] * w[5]) - 0.25 * w2 * p[c];
  }
}

// The change of Q since pt_loop_gen_forces (the tree coordinates' actuators whose inputs
// changed; pt_loop_inputs_on_tree said nothing else did) into dq (nlw); records the inputs.
void pt_loop_input_change(const pt_model *m, pt_data *d, double *dq) {
  ptu_zero(dq, m->nlw);
  for (int a = 0; a < m->nactuator; a++) {
    const int t = m->actuator_type[a];
    if (t != PT_ACT_JOINT_TORQUE && t != PT_ACT_JOINT_FORCE) continue;
    const int i = m->loop_coord[m->actuator_coord[a]], k = m->actuator_input_adr[a];
    if (i >= 0) dq[i] += m->input_gear[k] * (d->input[k] - d->loop_u[k]);
  }
  ptu_copy(d->loop_u, d->input, m->ninput);
}

// An inner stage at the held state whose inputs changed only on tree coordinates: wdd and
// sdd moved by the response to that change alone (the equations are linear in Q), with the
// factors held; xdd and qdd are left to the next full evaluation (nothing reads an inner
// stage's).
void pt_loop_solve_input_change(const pt_model *m, pt_data *d) {
  const int nw = m->nlw;
  double *dq = d->loop_rhs, *dw = d->loop_rhs + nw;  // (nls + nlw >= 2 nlw)
  pt_loop_input_change(m, d, dq);
  solve(m, d, dq, NULL, dw, d->loop_dlam);
  for (int i = 0; i < nw; i++) d->loop_wdd[i] += dw[i];
  for (int a = 0; a < m->nlc; a++) d->loop_lam[a] += d->loop_dlam[a];
  pt_loop_sdd(m, d);
}

void pt_loop_mul_m(const pt_model *m, const pt_data *d, const double *x, double *y) {
  const int *adr = m->loop_m_adr, *par = m->loop_parent;
  const double *M = d->loop_m;
  for (int i = 0; i < m->nlw; i++) {
    int p = adr[i];
    y[i] += M[p++] * x[i];
    for (int k = par[i]; k >= 0; k = par[k], p++) {
      y[i] += M[p] * x[k];
      y[k] += M[p] * x[i];
    }
  }
}

// Every body's xdd from wdd: the spatial accelerations along the tree, A_child = A_parent +
// (bias of the joint) + sum S_i wdd_i, in loop_F (the generalized forces are done with it);
// then qdd and loop_sdd.
void pt_loop_outputs(const pt_model *m, pt_data *d) {
  static const double zero[6] = {0, 0, 0, 0, 0, 0};
  const double *w = d->loop_wdd;
  double *At = d->loop_F;
  for (int t = 0; t < m->nlj; t++) {
    const int j = m->loop_joint[t], ch = m->loop_child[j];
    const int par = m->joint_body[2 * j + (ch ? 0 : 1)], kid = m->joint_body[2 * j + ch];
    const double *Ap = par == PT_GROUND ? zero : d->loop_A + 6 * par;
    const double *Atp = par == PT_GROUND ? zero : At + 6 * par, *Ak = d->loop_A + 6 * kid;
    double *A = At + 6 * kid;
    for (int e = 0; e < 6; e++) A[e] = Atp[e] + Ak[e] - Ap[e];
    const int i0 = m->loop_jcoord[j];
    for (int k = 0; i0 >= 0 && k < m->joint_ncoord[j]; k++)
      for (int e = 0; e < 6; e++) A[e] += d->loop_S[6 * (i0 + k) + e] * w[i0 + k];
    classical(d, kid, A, d->xdd + 6 * kid);
  }
  for (int f = 0; f < m->nlf; f++)
    ptu_copy(d->xdd + 6 * m->loop_float_body[f], w + m->nlt + 6 * f, 6);
  pt_qdd_from_xdd(m, d);
  pt_loop_sdd(m, d);
}

// The multipliers of the state held now, computed when asked for (the joint reactions): a
// tree's from its joint forces, a closed loop's in joint coordinates through W (every row is
// evaluated at a step's end, dynamics.c), and when W is singular the least-squares multipliers
// of the rank-revealing solve (pt_acc_dense), its accelerations put back.
void pt_lambda(const pt_model *m, pt_data *d) {
  if (!d->lambda_stale) return;
  if (pt_tree_active(d)) {
    pt_tree_lambda(m, d);
  } else if (pt_lambda_w(m, d) != PT_OK) {
    const double ratio = d->w_ratio, ratio_step = d->w_ratio_step;
    const int singular = d->w_singular;
    // (nv), (nv), (nq): scratch outside the stages
    double *qfrc = d->lim_qfrc, *xdd = d->lim_xdd, *qdd = d->rhs;
    ptu_copy(qfrc, d->qfrc, m->nv);
    ptu_copy(xdd, d->xdd, m->nv);
    ptu_copy(qdd, d->qdd, m->nq);
    pt_forces(m, d);  // the Cartesian forces (pt_lambda_w left the inverse inertias)
    if (pt_acc_dense(m, d)) ptu_zero(d->lambda, m->ncon);
    ptu_copy(d->xdd, xdd, m->nv);
    ptu_copy(d->qdd, qdd, m->nq);
    ptu_copy(d->qfrc, qfrc, m->nv);
    d->w_ratio = ratio;
    d->w_ratio_step = ratio_step;
    d->w_singular = singular;
  }
  d->lambda_stale = 0;
}
