// tree.c: joint coordinates as the independent coordinates of a tree (issue 10, "Directions").
//
// The linearization paper (Negrut and Ortiz, eq. 21-22) weights the full-pivoting selection so
// that user coordinates become the independent set wherever they are valid. On a tree of
// revolute, prismatic and fixed joints the joint coordinates are always valid: the partition
// is theta (the joint coordinates, integrated) and q (every body's r and p, dependent), and
// u = g(v) of seed gcp eq. (10) is forward kinematics, exact and in one pass from the root:
//   A2 = A1 Rot(h1, theta - theta_ref) A1^T A2|ref,  r2 = r1 + A1 s1 - A2 s2     (revolute)
//   A2 = A1 A1^T A2|ref,  r2 = r1 + A1 (t_ref + h1 (theta - theta_ref))          (prismatic)
// with the reference taken at the model's assembled initial state; velocities likewise
// (eq. 11: omega2 = omega1 + h thetadot, ...), accelerations from the joint coordinates'
// second derivatives, thetadd = J_theta xdd + Jdot_theta x. No Newton, no partition rebuild,
// no singular Phi_u: a serial arm never leaves this partition. Closed loops keep the LU/QR
// partitions (partition.c, qr_partition.c).
#include <string.h>

#include "engine.h"
#include "tolerances.h"
#include "ptu.h"

// Euler parameters of Rot(h, a) for unit h
static void quat_axis(double p[4], const double h[3], double a) {
  const double s = sin(0.5 * a);
  p[0] = cos(0.5 * a);
  for (int k = 0; k < 3; k++) p[1 + k] = s * h[k];
}

static const double ground_q[7] = {0, 0, 0, 1, 0, 0, 0};
static const double ground_rot[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
static const double ground_x[6] = {0, 0, 0, 0, 0, 0};

static const double *body_q(const pt_data *d, int b) { return b == PT_GROUND ? ground_q : d->q + 7 * b; }
static const double *body_A(const pt_data *d, int b) {
  return b == PT_GROUND ? ground_rot : d->rot + 9 * b;
}
static const double *body_x(const pt_data *d, int b) { return b == PT_GROUND ? ground_x : d->x + 6 * b; }

// Joint coordinate i: value (as measured), rate and acceleration at the current state.
static void coord_state(const pt_model *m, const pt_data *d, int c, double *val, double *rate,
                        double *acc) {
  double jac[12], jdotx;
  pt_measure(m, d, c, val, jac, &jdotx);
  const int *b = m->meas_body + 2 * c;
  double r = 0, a = jdotx;
  for (int s = 0; s < 2; s++) {
    if (b[s] == PT_GROUND) continue;
    for (int k = 0; k < 6; k++) {
      r += jac[6 * s + k] * d->x[6 * b[s] + k];
      a += jac[6 * s + k] * d->xdd[6 * b[s] + k];
    }
  }
  if (rate) *rate = r;
  if (acc) *acc = a;
}

// thetadd of joint coordinate c alone. An angle (measure.c) has J = (-h on omega1, h on
// omega2) and Jdot x = (omega1 x h) . (omega2 - omega1): no need to evaluate the angle itself.
static double coord_acc(const pt_model *m, const pt_data *d, int c) {
  if (m->meas_type[c] != PT_MEAS_ANGLE) {
    double a;
    coord_state(m, d, c, &a, NULL, &a);
    return a;
  }
  const int *b = m->meas_body + 2 * c;
  double h[3], hd[3], w1[3], w2[3], dw[3], dwd[3];
  ptu_mul_mat_vec3(h, body_A(d, b[0]), m->meas_geom + PT_MEAS_GEOM * c);
  pt_body_omega(d, b[0], w1);
  pt_body_omega(d, b[1], w2);
  ptu_cross3(hd, w1, h);
  ptu_sub3(dw, w2, w1);
  for (int k = 0; k < 3; k++)
    dwd[k] = (b[1] == PT_GROUND ? 0 : d->xdd[6 * b[1] + 3 + k]) -
             (b[0] == PT_GROUND ? 0 : d->xdd[6 * b[0] + 3 + k]);
  return ptu_dot3(h, dwd) + ptu_dot3(hd, dw);
}

// Places joint j's child (ch: 1 body2, 0 body1) from its other body: A1^T A2 = rel (Euler
// parameters) and, with point, the joint point common to both bodies (a revolute or universal
// joint), else A1^T (r2 - r1) = w (prismatic, fixed). rot and q of the child.
void pt_joint_place(const pt_model *m, pt_data *d, int j, int ch, const double rel[4],
                    int point, const double w[3]) {
  const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
  const double *g = m->joint_geom + PT_JOINT_GEOM * j;
  if (ch == 1) {  // child body2: A2 = A1 rel
    const double *q1 = body_q(d, b1), *A1 = body_A(d, b1);
    double *q2 = d->q + 7 * b2, *A2 = d->rot + 9 * b2, a[3], b[3];
    ptu_quat_mul(q2 + 3, q1 + 3, rel);
    ptu_quat2mat(A2, q2 + 3);
    if (point) {
      ptu_mul_mat_vec3(a, A1, g);
      ptu_mul_mat_vec3(b, A2, g + 3);
      for (int k = 0; k < 3; k++) q2[k] = q1[k] + a[k] - b[k];
    } else {
      ptu_mul_mat_vec3(a, A1, w);
      for (int k = 0; k < 3; k++) q2[k] = q1[k] + a[k];
    }
  } else {  // child body1: A1 = A2 rel^T
    const double *q2 = body_q(d, b2), *A2 = body_A(d, b2);
    double *q1 = d->q + 7 * b1, *A1 = d->rot + 9 * b1, a[3], b[3], inv[4];
    inv[0] = rel[0];
    for (int k = 1; k < 4; k++) inv[k] = -rel[k];
    ptu_quat_mul(q1 + 3, q2 + 3, inv);
    ptu_quat2mat(A1, q1 + 3);
    if (point) {
      ptu_mul_mat_vec3(a, A1, g);
      ptu_mul_mat_vec3(b, A2, g + 3);
      for (int k = 0; k < 3; k++) q1[k] = q2[k] + b[k] - a[k];
    } else {
      ptu_mul_mat_vec3(a, A1, w);
      for (int k = 0; k < 3; k++) q1[k] = q2[k] - a[k];
    }
  }
}

// Eq. (10) for a tree: every body's r and p from the joint coordinates theta (ndof), parents
// first; rot follows.
void pt_tree_positions(const pt_model *m, pt_data *d, const double *theta) {
  for (int t = 0; t < m->njoint; t++) {
    const int j = d->tree_joint[t], ch = d->tree_child[j], i = d->tree_dof[j];
    const int type = m->joint_type[j];
    const double *g = m->joint_geom + PT_JOINT_GEOM * j;
    const double dth = i >= 0 ? theta[i] - d->tree_theta_ref[j] : 0;
    double rel[4], qa[4];  // Euler parameters of A1^T A2
    if (type == PT_JOINT_REVOLUTE) {
      quat_axis(qa, g + 6, dth);
      ptu_quat_mul(rel, qa, d->tree_pref + 4 * j);
    } else {
      ptu_copy(rel, d->tree_pref + 4 * j, 4);
    }
    double w[3];  // A1^T (r2 - r1) for prismatic and fixed joints
    for (int k = 0; k < 3; k++) w[k] = d->tree_tref[3 * j + k] + (i >= 0 ? g[6 + k] * dth : 0);
    pt_joint_place(m, d, j, ch, rel, type == PT_JOINT_REVOLUTE, w);
  }
}

// Eq. (11) for a tree: every body's x = (rdot, omega) from the joint rates (ndof) at the
// positions of pt_tree_positions, then qd (not in an ABA-only stage, d->tree_fast).
void pt_tree_velocities(const pt_model *m, pt_data *d, const double *rate) {
  for (int t = 0; t < m->njoint; t++) {
    const int j = d->tree_joint[t], ch = d->tree_child[j], i = d->tree_dof[j];
    const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const int type = m->joint_type[j];
    const double *g = m->joint_geom + PT_JOINT_GEOM * j;
    const double td = i >= 0 ? rate[i] : 0;
    double h[3], a[3], b[3];
    ptu_mul_mat_vec3(h, body_A(d, b1), g + 6);  // joint axis, global
    const int par = ch == 1 ? b1 : b2, kid = ch == 1 ? b2 : b1;
    const double sg = ch == 1 ? 1 : -1;  // theta moves body2 relative to body1
    const double *xp = body_x(d, par);
    double *xc = d->x + 6 * kid;
    if (type == PT_JOINT_REVOLUTE) {
      // omega_kid = omega_par +- h thetadot; the joint point moves with both bodies
      for (int k = 0; k < 3; k++) xc[3 + k] = xp[3 + k] + sg * td * h[k];
      double sp[3], sk[3];
      ptu_mul_mat_vec3(sp, body_A(d, par), g + (ch == 1 ? 0 : 3));
      ptu_mul_mat_vec3(sk, body_A(d, kid), g + (ch == 1 ? 3 : 0));
      ptu_cross3(a, xp + 3, sp);
      ptu_cross3(b, xc + 3, sk);
      for (int k = 0; k < 3; k++) xc[k] = xp[k] + a[k] - b[k];
    } else {
      // same rotation; r_kid - r_par turns with the bodies and slides along h
      double dr[3];
      ptu_sub3(dr, body_q(d, kid), body_q(d, par));
      for (int k = 0; k < 3; k++) xc[3 + k] = xp[3 + k];
      ptu_cross3(a, xp + 3, dr);
      for (int k = 0; k < 3; k++) xc[k] = xp[k] + a[k] + sg * td * h[k];
    }
  }
  if (!d->tree_fast) pt_qd_from_x(m, d);  // an ABA-only stage reads x alone
}

// The joint coordinates of the current state: theta, thetadot and (if acc) thetadd from xdd.
// Any of the outputs may be NULL.
void pt_tree_coords(const pt_model *m, const pt_data *d, double *theta, double *rate,
                    double *acc) {
  if (!theta && !rate && acc) {
    for (int i = 0; i < m->ndof; i++) acc[i] = coord_acc(m, d, d->tree_coord[i]);
    return;
  }
  for (int i = 0; i < m->ndof; i++) {
    double v;
    coord_state(m, d, d->tree_coord[i], theta ? &theta[i] : &v, rate ? &rate[i] : NULL,
                acc ? &acc[i] : NULL);
  }
}

// The joint coordinates' values, rates and accelerations for the outputs, when the state held
// now is the tree partition's (theta, thetadot in tree_y, integrated): no atan2 and no
// Jacobian per coordinate. Returns the number of leading coordinates filled (ndof), or 0 when
// the caller has to measure them all.
int pt_tree_outputs(const pt_model *m, pt_data *d) {
  if (!pt_tree_active(d) || !d->tree_coords_first || !d->tree_y_valid) return 0;
  const int n = m->ndof;
  for (int i = 0; i < n; i++) {
    const int c = d->tree_coord[i];
    d->coord[c] = d->tree_y[i];
    d->coord_rate[c] = d->tree_y[n + i];
    d->coord_acc[c] = coord_acc(m, d, c);
  }
  return n;
}

int pt_tree_coord_value(const pt_data *d, int c, double *value, double *rate) {
  if (!pt_tree_active(d) || !d->tree_coords_first || !d->tree_y_valid || c >= d->model->ndof)
    return 0;
  *value = d->tree_y[c];
  if (rate) *rate = d->tree_y[d->model->ndof + c];
  return 1;
}

// The model's side of the qualification: joints as many as bodies, revolute, prismatic and
// fixed only, each moving joint with its coordinate, these coordinates the degrees of freedom,
// no motions and every joint row kept.
int pt_tree_qualifies(const pt_model *m) {
  if (m->nbody == 0 || m->nmotion > 0 || m->njoint != m->nbody || m->ncon != m->nrow_joint)
    return 0;
  int nd = 0;
  for (int j = 0; j < m->njoint; j++) {
    const int type = m->joint_type[j];
    if (type != PT_JOINT_REVOLUTE && type != PT_JOINT_PRISMATIC && type != PT_JOINT_FIXED)
      return 0;
    if (type == PT_JOINT_FIXED) continue;
    if (m->joint_coord_adr[j] < 0) return 0;
    nd++;
  }
  return nd == m->ndof;
}

// Qualifies the model (a tree of revolute, prismatic and fixed joints without motions whose
// joint coordinates are the degrees of freedom), orders its joints from the root and takes
// the reference at the current (assembled) state. Then checks itself at a displaced state:
// rows satisfied, joint coordinates reproduced, velocity rows satisfied; otherwise the tree
// partition stays off. Returns 1 if it is on.
int pt_tree_init(const pt_model *m, pt_data *d) {
  d->tree_ok = 0;
  d->tree_aba = 0;
  d->tree_fast = 0;
  d->tree_coords_first = 0;
  if (!pt_tree_qualifies(m)) return 0;
  int nd = 0;
  for (int j = 0; j < m->njoint; j++) {
    d->tree_dof[j] = -1;
    if (m->joint_type[j] != PT_JOINT_FIXED) {
      d->tree_coord[nd] = m->joint_coord_adr[j];
      d->tree_dof[j] = nd++;
    }
  }
  d->tree_coords_first = 1;
  for (int i = 0; i < nd; i++)
    if (d->tree_coord[i] >= nd) d->tree_coords_first = 0;
  // parent-first order: a joint is placed once one of its bodies is placed (ground first)
  int *placed = d->iwork;  // (nbody)
  for (int k = 0; k < m->nbody; k++) placed[k] = 0;
  int nt = 0;
  for (int pass = 0; pass < m->njoint && nt < m->njoint; pass++)
    for (int j = 0; j < m->njoint; j++) {
      const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
      const int p1 = b1 == PT_GROUND || placed[b1], p2 = b2 == PT_GROUND || placed[b2];
      if (p1 == p2) continue;  // not reached yet, or already placed
      d->tree_child[j] = p1 ? 1 : 0;
      placed[p1 ? b2 : b1] = 1;
      d->tree_body_joint[p1 ? b2 : b1] = j;
      d->tree_joint[nt++] = j;
    }
  if (nt != m->njoint) return 0;
  // reference at the current state
  pt_kin_bodies(m, d);
  for (int j = 0; j < m->njoint; j++) {
    const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    double R[9], dr[3];
    ptu_mul_matT_mat3(R, body_A(d, b1), body_A(d, b2));
    ptu_mat2quat(d->tree_pref + 4 * j, R);
    ptu_sub3(dr, body_q(d, b2), body_q(d, b1));
    ptu_mul_matT_vec3(d->tree_tref + 3 * j, body_A(d, b1), dr);
    double v = 0;
    if (d->tree_dof[j] >= 0) coord_state(m, d, m->joint_coord_adr[j], &v, NULL, NULL);
    d->tree_theta_ref[j] = v;
  }
  // self-check at a displaced, moving state; the state is restored afterwards
  const int nq = m->nq, n = m->ndof;
  ptu_copy(d->q_save, d->q, nq);
  ptu_copy(d->qd_save, d->qd, nq);
  double *y = d->ystage, *yd = d->ystage + n, *z = d->ysum, *zd = d->ysum + n;
  for (int i = 0; i < n; i++) {
    coord_state(m, d, d->tree_coord[i], &y[i], NULL, NULL);
    y[i] += 0.3 + 0.1 * (i % 7);  // below pi: a measured angle comes back within one wrap
    yd[i] = 0.7 - 0.2 * (i % 7);
  }
  pt_tree_positions(m, d, y);
  pt_tree_velocities(m, d, yd);
  pt_kin_bodies(m, d);
  pt_joint_rows(m, d);
  double scale = 1;
  for (int k = 0; k < m->nbody; k++)
    for (int c = 0; c < 3; c++) scale = fmax(scale, fabs(d->q[7 * k + c]));
  double err = 0, verr = 0;
  for (int r = 0; r < m->nrow_joint; r++) {
    err = fmax(err, fabs(d->row_phi[r]));
    const int *b = m->row_body + 2 * r;
    double s = -d->row_nu[r];
    for (int sl = 0; sl < 2; sl++)
      if (b[sl] != PT_GROUND)
        for (int k = 0; k < 6; k++) s += d->row_jac[12 * r + 6 * sl + k] * d->x[6 * b[sl] + k];
    verr = fmax(verr, fabs(s));
  }
  for (int i = 0; i < n; i++) {
    coord_state(m, d, d->tree_coord[i], &z[i], &zd[i], NULL);
    // angles may come back wrapped
    double dz = fabs(z[i] - y[i]);
    dz = fmin(dz, fabs(dz - 2 * M_PI));
    err = fmax(err, dz / scale);
    verr = fmax(verr, fabs(zd[i] - yd[i]));
  }
  ptu_copy(d->q, d->q_save, nq);
  ptu_copy(d->qd, d->qd_save, nq);
  pt_kin_bodies(m, d);
  pt_joint_rows(m, d);
  d->tree_ok = err < PT_TOL_TREE_POS * scale && verr < PT_TOL_TREE_VEL * scale;
  d->tree_aba = d->tree_ok && pt_tree_aba_fits(m) && pt_tree_lambda_fits(m);
  d->tree_fast = 0;
  return d->tree_ok;
}

// ---------------------------------------------------------------------------------------------
// Joint accelerations by the articulated-body algorithm (Featherstone, "Rigid Body Dynamics
// Algorithms", Springer 2008, section 7.3 and Table 7.1), O(n) on the tree, in place of
// W = J M^-1 J^T (dynamics.c) for the tree partition.
//
// Body k's motion is x_k = (rdot, omega) at its CoM (global axes) and its force (F, n) at the
// CoM, with power F . rdot + n . omega: M_k = diag(m I, I_global) is block diagonal. Across
// the joint from parent p to child k, with d = r_k - r_p and the joint rate thetadot,
//   x_k = X x_p + S thetadot,    X = [I -[d]x; 0 I],    f_p = X^T f_k                  (7.1)
//   S = sg (s_k x h, h) (revolute, s_k = A_k s_k' from the child's CoM to the joint point),
//   S = sg (h, 0) (prismatic), no S (fixed); sg = +1 when the child is body2, -1 otherwise;
//   xdd_k = X xdd_p + S thetadd + c,  c = Xdot x_p + Sdot thetadot                      (7.2)
//   c = (omega_p x (v_k - v_p) + sg thetadot ((omega_k x s_k) x h + s_k x (omega_p x h)),
//        sg thetadot omega_p x h)                                      (revolute)
//   c = (omega_p x (v_k - v_p) + sg thetadot omega_p x h, 0)           (prismatic)
// All applied forces, gravity, gyroscopic torques and joint actuators are in qfrc (force.c),
// so the joint force tau of Table 7.1 is 0 and the bias force starts at p_k = -qfrc_k.
// Pass 2 (leaves to root):  U = I^A S, D = S^T U, u = -S^T p^A,
//   I^a = I^A - U U^T / D,  p^a = p^A + I^a c + U u / D,  I^A_p += X^T I^a X, p^A_p += X^T p^a
// Pass 3 (root to leaves):  a' = X a_p + c,  thetadd = (u - U^T a') / D,  a_k = a' + S thetadd.
// The articulated inertias are symmetric, I = [A B; B^T C] with A, C symmetric 3x3: they are
// kept packed (21 numbers, below), so the rank-1 update and the transform to the parent touch
// each entry once. Scratch per body (ABA_STRIDE doubles: I^A packed, p^A then U / D, S, c,
// u / D, 1 / D, and pt_tree_minv's own bias force, u / D and acceleration) is taken from mjt
// (12 ncon >= 54 nbody on a tree: every joint has at least 5 rows), which the W path does not
// need between its own evaluations.

#define ABA_STRIDE 54  // I^A (21), p^A then U / D (6), S (6), c (6), u / D, 1 / D, then minv's
#define ABA_P 21       // offsets in a body's slot
#define ABA_S 27
#define ABA_C 33
#define ABA_UD 39
#define ABA_ID 40
#define ABA_MU 41      // pt_tree_minv: u / D,
#define ABA_MP 42      // the bias force p (6),
#define ABA_MA 48      // the acceleration a (6)

int pt_tree_aba_fits(const pt_model *m) { return 12 * m->ncon >= ABA_STRIDE * m->nbody; }

// Packed symmetric 6x6 I = [A B; B^T C]: A upper triangle (6), B row-major (9), C upper
// triangle (6). S3(r, k) is the index of (r, k), r <= k, in a packed symmetric 3x3.
#define S3(r, k) ((r) * (5 - (r)) / 2 + (k))
#define PK_A 0
#define PK_B 6
#define PK_C 15

static inline double sym3_at(const double *P, int r, int k) {
  return r <= k ? P[S3(r, k)] : P[S3(k, r)];
}

// y = I x for packed I
static inline void sym6_mul(double y[6], const double *restrict I, const double x[6]) {
  const double *A = I + PK_A, *B = I + PK_B, *C = I + PK_C;
  for (int r = 0; r < 3; r++) {
    double t = 0, b = 0;
    for (int k = 0; k < 3; k++) {
      t += sym3_at(A, r, k) * x[k] + B[3 * r + k] * x[3 + k];
      b += B[3 * k + r] * x[k] + sym3_at(C, r, k) * x[3 + k];
    }
    y[r] = t;
    y[3 + r] = b;
  }
}

// out += X^T Ia X for X = [I -[d]x; 0 I], both packed. With B' = B - A [d]x (row i:
// B_i + d x A_i):  X^T Ia X = [A  B'; B'^T  C + [d]x B' + ([d]x B)^T]  (symmetric).
static void add_xt_i_x(double *restrict out, const double *restrict Ia, const double dv[3]) {
  const double *A = Ia + PK_A, *B = Ia + PK_B, *C = Ia + PK_C;
  double Bp[9], P[9], Qm[9];  // B', [d]x B', [d]x B (3x3 row-major)
  for (int i = 0; i < 3; i++) {
    const double ai[3] = {sym3_at(A, i, 0), sym3_at(A, i, 1), sym3_at(A, i, 2)};
    double t[3];
    ptu_cross3(t, dv, ai);
    for (int c = 0; c < 3; c++) Bp[3 * i + c] = B[3 * i + c] + t[c];
  }
  for (int c = 0; c < 3; c++) {
    const double bpc[3] = {Bp[c], Bp[3 + c], Bp[6 + c]};
    const double bc[3] = {B[c], B[3 + c], B[6 + c]};
    double t[3], u[3];
    ptu_cross3(t, dv, bpc);
    ptu_cross3(u, dv, bc);
    for (int r = 0; r < 3; r++) {
      P[3 * r + c] = t[r];
      Qm[3 * r + c] = u[r];
    }
  }
  for (int e = 0; e < 6; e++) out[PK_A + e] += A[e];
  for (int e = 0; e < 9; e++) out[PK_B + e] += Bp[e];
  for (int r = 0; r < 3; r++)
    for (int c = r; c < 3; c++)
      out[PK_C + S3(r, c)] += C[S3(r, c)] + P[3 * r + c] + Qm[3 * c + r];
}

// Pass 3, root to leaves: a' = X a_p + c, thetadd = (u - U^T a') / D (or the known one),
// a = a' + S thetadd, every body's a in xdd.
static void aba_pass3(const pt_model *m, pt_data *d, const double *known, double *thetadd) {
  const double *buf = d->mjt;
  for (int t = 0; t < m->njoint; t++) {
    const int j = d->tree_joint[t], ch = d->tree_child[j], i = d->tree_dof[j];
    const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const int par = ch == 1 ? b1 : b2, kid = ch == 1 ? b2 : b1;
    const double *slot = buf + ABA_STRIDE * kid, *S = slot + ABA_S, *c = slot + ABA_C;
    double *ak = d->xdd + 6 * kid;
    if (par == PT_GROUND) {
      ptu_copy(ak, c, 6);
    } else {
      const double *ap = d->xdd + 6 * par;
      double dv[3], dxw[3];
      ptu_sub3(dv, d->q + 7 * kid, d->q + 7 * par);
      ptu_cross3(dxw, dv, ap + 3);
      for (int k = 0; k < 3; k++) {
        ak[k] = ap[k] - dxw[k] + c[k];
        ak[3 + k] = ap[3 + k] + c[3 + k];
      }
    }
    if (i < 0) continue;
    double s;
    if (known) {
      s = known[i];
    } else {
      s = slot[ABA_UD];
      for (int k = 0; k < 6; k++) s -= slot[ABA_P + k] * ak[k];
      thetadd[i] = s;
    }
    for (int k = 0; k < 6; k++) ak[k] += S[k] * s;
  }
}

void pt_tree_aba(const pt_model *m, pt_data *d, const double *rate, double *thetadd) {
  double *buf = d->mjt;
  // pass 1: articulated inertias start as the bodies' own, bias forces as -qfrc; S and c
  for (int k = 0; k < m->nbody; k++) {
    double *IA = buf + ABA_STRIDE * k, *pA = IA + ABA_P;
    const double *Ig = d->inertia_g + 9 * k;
    const double mk = m->body_mass[k];
    for (int r = 0; r < 3; r++)
      for (int c = r; c < 3; c++) {
        IA[PK_A + S3(r, c)] = r == c ? mk : 0;
        IA[PK_C + S3(r, c)] = Ig[3 * r + c];
      }
    for (int e = 0; e < 9; e++) IA[PK_B + e] = 0;
    for (int c = 0; c < 6; c++) pA[c] = -d->qfrc[6 * k + c];
  }
  for (int t = 0; t < m->njoint; t++) {
    const int j = d->tree_joint[t], ch = d->tree_child[j], i = d->tree_dof[j];
    const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const int par = ch == 1 ? b1 : b2, kid = ch == 1 ? b2 : b1;
    const int type = m->joint_type[j];
    const double *g = m->joint_geom + PT_JOINT_GEOM * j;
    double *S = buf + ABA_STRIDE * kid + ABA_S, *c = buf + ABA_STRIDE * kid + ABA_C;
    const double *xp = body_x(d, par), *xk = d->x + 6 * kid;
    double dvel[3];
    ptu_sub3(dvel, xk, xp);
    ptu_cross3(c, xp + 3, dvel);
    c[3] = c[4] = c[5] = 0;
    ptu_zero(S, 6);
    if (i < 0) continue;
    const double sg = ch == 1 ? 1 : -1, td = sg * rate[i];
    double h[3], wxh[3];
    ptu_mul_mat_vec3(h, body_A(d, b1), g + 6);
    ptu_cross3(wxh, xp + 3, h);
    if (type == PT_JOINT_REVOLUTE) {
      double sk[3], a[3], b[3], e[3];
      ptu_mul_mat_vec3(sk, body_A(d, kid), g + (ch == 1 ? 3 : 0));
      ptu_cross3(S, sk, h);
      for (int k = 0; k < 3; k++) S[3 + k] = h[k];
      ptu_cross3(a, xk + 3, sk);
      ptu_cross3(b, a, h);
      ptu_cross3(e, sk, wxh);
      for (int k = 0; k < 3; k++) {
        c[k] += td * (b[k] + e[k]);
        c[3 + k] = td * wxh[k];
      }
    } else {
      for (int k = 0; k < 3; k++) {
        S[k] = h[k];
        c[k] += td * wxh[k];
      }
    }
    for (int k = 0; k < 6; k++) S[k] *= sg;
  }
  // pass 2: leaves to root (restrict: the child's slot is not the parent's)
  for (int t = m->njoint - 1; t >= 0; t--) {
    const int j = d->tree_joint[t], ch = d->tree_child[j], i = d->tree_dof[j];
    const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const int par = ch == 1 ? b1 : b2, kid = ch == 1 ? b2 : b1;
    double *restrict slot = buf + ABA_STRIDE * kid;
    double *restrict Ia = slot, *restrict pa = slot + ABA_P;
    const double *restrict S = slot + ABA_S, *restrict c = slot + ABA_C;
    double Uv[6], Ic[6];
    if (i >= 0) {
      double D = 0, u = 0;
      sym6_mul(Uv, Ia, S);
      for (int r = 0; r < 6; r++) {
        D += S[r] * Uv[r];
        u -= S[r] * pa[r];
      }
      const double iD = 1 / D, uD = u * iD;
      double W[6];  // U / D
      for (int r = 0; r < 6; r++) W[r] = Uv[r] * iD;
      // I^a = I^A - U U^T / D (symmetric: each packed entry once)
      for (int r = 0; r < 3; r++)
        for (int k = r; k < 3; k++) {
          Ia[PK_A + S3(r, k)] -= W[r] * Uv[k];
          Ia[PK_C + S3(r, k)] -= W[3 + r] * Uv[3 + k];
        }
      for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) Ia[PK_B + 3 * r + k] -= W[r] * Uv[3 + k];
      // p^a = p^A + I^a c + U u / D
      sym6_mul(Ic, Ia, c);
      for (int r = 0; r < 6; r++) pa[r] += Ic[r] + uD * Uv[r];
      slot[ABA_UD] = uD;
      slot[ABA_ID] = iD;
      // U / D for pass 3 goes where p^A was, once the parent has taken p^a
      ptu_copy(Uv, W, 6);
    } else {
      sym6_mul(Ic, Ia, c);
      for (int r = 0; r < 6; r++) pa[r] += Ic[r];
    }
    if (par != PT_GROUND) {
      double dv[3], tq[3];
      ptu_sub3(dv, d->q + 7 * kid, d->q + 7 * par);
      double *IAp = buf + ABA_STRIDE * par, *pAp = IAp + ABA_P;
      add_xt_i_x(IAp, Ia, dv);
      ptu_cross3(tq, dv, pa);
      for (int k = 0; k < 3; k++) {
        pAp[k] += pa[k];
        pAp[3 + k] += pa[3 + k] + tq[k];
      }
    }
    if (i >= 0) ptu_copy(pa, Uv, 6);
  }
  aba_pass3(m, d, NULL, thetadd);
}

// out = H^-1 tau for a joint-space force tau (ndof), H the tree's joint-space inertia at the
// state of the last pt_tree_aba: passes 2 and 3 of the articulated-body algorithm on the
// articulated inertias that call left (Featherstone, "Rigid Body Dynamics Algorithms", 2008,
// Table 7.1) with no velocity and no applied force (c = 0, p starts at 0), so that each column
// costs a few multiply-adds per joint instead of a whole ABA:
//   pass 2 (leaves to root):  u = tau_i - S^T p^A,  p^a = p^A + (U / D) u,  p^A_p += X^T p^a
//   pass 3 (root to leaves):  a' = X a_p,  thetadd_i = u / D - (U / D)^T a',  a = a' + S thetadd_i
// tau and out may be one array. Touches neither xdd, qfrc nor what pt_tree_aba left for
// pt_tree_accelerations.
void pt_tree_minv(const pt_model *m, pt_data *d, const double *tau, double *out) {
  double *buf = d->mjt;
  for (int k = 0; k < m->nbody; k++) ptu_zero(buf + ABA_STRIDE * k + ABA_MP, 6);
  for (int t = m->njoint - 1; t >= 0; t--) {
    const int j = d->tree_joint[t], ch = d->tree_child[j], i = d->tree_dof[j];
    const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const int par = ch == 1 ? b1 : b2, kid = ch == 1 ? b2 : b1;
    double *slot = buf + ABA_STRIDE * kid, pa[6];
    const double *p = slot + ABA_MP;
    ptu_copy(pa, p, 6);
    if (i >= 0) {
      const double *S = slot + ABA_S, *W = slot + ABA_P;  // W = U / D
      double u = tau[i];
      for (int r = 0; r < 6; r++) u -= S[r] * p[r];
      slot[ABA_MU] = u * slot[ABA_ID];
      for (int r = 0; r < 6; r++) pa[r] += W[r] * u;
    }
    if (par != PT_GROUND) {
      double dv[3], tq[3], *pp = buf + ABA_STRIDE * par + ABA_MP;
      ptu_sub3(dv, d->q + 7 * kid, d->q + 7 * par);
      ptu_cross3(tq, dv, pa);
      for (int k = 0; k < 3; k++) {
        pp[k] += pa[k];
        pp[3 + k] += pa[3 + k] + tq[k];
      }
    }
  }
  for (int t = 0; t < m->njoint; t++) {
    const int j = d->tree_joint[t], ch = d->tree_child[j], i = d->tree_dof[j];
    const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const int par = ch == 1 ? b1 : b2, kid = ch == 1 ? b2 : b1;
    double *slot = buf + ABA_STRIDE * kid, *ak = slot + ABA_MA;
    if (par == PT_GROUND) {
      ptu_zero(ak, 6);
    } else {
      const double *ap = buf + ABA_STRIDE * par + ABA_MA;
      double dv[3], dxw[3];
      ptu_sub3(dv, d->q + 7 * kid, d->q + 7 * par);
      ptu_cross3(dxw, dv, ap + 3);
      for (int k = 0; k < 3; k++) {
        ak[k] = ap[k] - dxw[k];
        ak[3 + k] = ap[3 + k];
      }
    }
    if (i < 0) continue;
    const double *S = slot + ABA_S, *W = slot + ABA_P;
    double s = slot[ABA_MU];
    for (int k = 0; k < 6; k++) s -= W[k] * ak[k];
    out[i] = s;
    for (int k = 0; k < 6; k++) ak[k] += S[k] * s;
  }
}

// Every body's xdd from given joint accelerations thetadd at the state of the last
// pt_tree_aba (its S and c): pass 3 with thetadd known.
void pt_tree_accelerations(const pt_model *m, pt_data *d, const double *thetadd) {
  aba_pass3(m, d, thetadd, NULL);
}

// The multipliers after pt_tree_aba (xdd and qfrc at this state, rows evaluated): the
// constraint force on body k is M_k xdd_k - Q_k = -(J^T lambda)_k (dynamics.c: M xdd + J^T
// lambda = Q). Leaves to root, the force f_j that joint j passes from the parent to the child
// is the child's constraint force plus what it passes on to its own children (moved to its
// CoM by X^T, as in pass 2 of the ABA; Featherstone 2008, eq. 5.20 of the recursive
// Newton-Euler algorithm); then J_{j,kid}^T lambda_j = -f_j for the joint's rows alone, a
// consistent 6 x nr system solved by its normal equations (J J^T, nr <= 6, LDL^T).
// Requires the active rows to be all joint rows in order (pt_tree_lambda_fits).
//
// pt_step does not compute them at a tree's step end (no integrator stage needs them): they
// are computed when asked for, by pt_lambda or, for the joint reactions, by
// pt_tree_reactions from the forces f_j alone.
int pt_tree_lambda_fits(const pt_model *m) {
  if (m->ncon != m->nrow || m->nmotion > 0) return 0;
  for (int a = 0; a < m->ncon; a++)
    if (m->con_row[a] != a) return 0;
  for (int j = 0; j < m->njoint; j++) {
    const int r1 = j + 1 < m->njoint ? m->joint_row_adr[j + 1] : m->nrow_joint;
    if (r1 - m->joint_row_adr[j] > 6 || r1 < m->joint_row_adr[j]) return 0;
  }
  return 1;
}

// F (njoint x 6): the force f_j (at the child's CoM, global axes) that joint j passes from
// its parent to its child.
static void joint_forces(const pt_model *m, const pt_data *d, double *F) {
  for (int j = 0; j < m->njoint; j++) {
    const int kid = d->tree_child[j] == 1 ? m->joint_body[2 * j + 1] : m->joint_body[2 * j];
    const double *a = d->xdd + 6 * kid, *Q = d->qfrc + 6 * kid;
    double Ia[3];
    ptu_mul_mat_vec3(Ia, d->inertia_g + 9 * kid, a + 3);
    for (int c = 0; c < 3; c++) {
      F[6 * j + c] = m->body_mass[kid] * a[c] - Q[c];
      F[6 * j + 3 + c] = Ia[c] - Q[3 + c];
    }
  }
  for (int t = m->njoint - 1; t >= 0; t--) {
    const int j = d->tree_joint[t], ch = d->tree_child[j];
    const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const int par = ch == 1 ? b1 : b2, kid = ch == 1 ? b2 : b1;
    if (par == PT_GROUND) continue;
    const double *f = F + 6 * j;
    double *fp = F + 6 * d->tree_body_joint[par];
    double dv[3], tq[3];
    ptu_sub3(dv, d->q + 7 * kid, d->q + 7 * par);
    ptu_cross3(tq, dv, f);
    for (int c = 0; c < 3; c++) {
      fp[c] += f[c];
      fp[3 + c] += f[3 + c] + tq[c];
    }
  }
}

// Joint reactions (pt_reactions_from's convention: the force on body2 and its torque about
// the joint point) from f_j: the joint's rows put f_j on the child; the wrench about the
// joint point on the other body is its opposite.
void pt_tree_reactions(const pt_model *m, const pt_data *d, double *reaction) {
  joint_forces(m, d, reaction);
  for (int j = 0; j < m->njoint; j++) {
    double *F = reaction + 6 * j;
    const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const int kid = d->tree_child[j] == 1 ? b2 : b1;
    double P[3], s[3], arm[3], t[3];
    pt_body_point(d, b2, m->joint_geom + PT_JOINT_GEOM * j + 3, P, s);
    ptu_sub3(arm, P, d->q + 7 * kid);
    ptu_cross3(t, arm, F);
    const double sign = kid == b2 ? 1 : -1;
    for (int c = 0; c < 3; c++) {
      F[c] *= sign;
      F[3 + c] = sign * (F[3 + c] - t[c]);
    }
  }
}

void pt_tree_lambda(const pt_model *m, pt_data *d) {
  double *F = d->wrk6;  // (njoint x 6) joint forces f_j
  joint_forces(m, d, F);
  for (int j = 0; j < m->njoint; j++) {
    const int kid = d->tree_child[j] == 1 ? m->joint_body[2 * j + 1] : m->joint_body[2 * j];
    const double *f = F + 6 * j;
    // J_kid^T lambda_j = -f: (J_kid J_kid^T) lambda_j = -J_kid f
    const int r0 = m->joint_row_adr[j];
    const int nr = (j + 1 < m->njoint ? m->joint_row_adr[j + 1] : m->nrow_joint) - r0;
    const double *Jr[6];
    double G[36], b[6];
    for (int i = 0; i < nr; i++) {
      const int r = r0 + i, slot = m->row_body[2 * r + 1] == kid ? 1 : 0;
      Jr[i] = d->row_jac + 12 * r + 6 * slot;
      double s = 0;
      for (int c = 0; c < 6; c++) s -= Jr[i][c] * f[c];
      b[i] = s;
    }
    for (int i = 0; i < nr; i++)
      for (int k = 0; k <= i; k++) {
        double s = 0;
        for (int c = 0; c < 6; c++) s += Jr[i][c] * Jr[k][c];
        G[6 * i + k] = s;
      }
    // G = L D L^T in place (unit lower L below the diagonal), then the three solves
    double iDg[6];
    for (int i = 0; i < nr; i++) {
      for (int k = 0; k < i; k++) {
        double v = G[6 * i + k];
        for (int l = 0; l < k; l++) v -= G[6 * i + l] * G[6 * k + l] * G[6 * l + l];
        G[6 * i + k] = v * iDg[k];
      }
      double v = G[6 * i + i];
      for (int l = 0; l < i; l++) v -= G[6 * i + l] * G[6 * i + l] * G[6 * l + l];
      G[6 * i + i] = v;
      iDg[i] = 1 / v;
    }
    for (int i = 0; i < nr; i++)
      for (int l = 0; l < i; l++) b[i] -= G[6 * i + l] * b[l];
    for (int i = 0; i < nr; i++) b[i] *= iDg[i];
    for (int i = nr - 1; i >= 0; i--)
      for (int l = i + 1; l < nr; l++) b[i] -= G[6 * l + i] * b[l];
    for (int i = 0; i < nr; i++) d->lambda[r0 + i] = b[i];
  }
}
