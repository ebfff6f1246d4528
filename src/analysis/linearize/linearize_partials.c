// linearize_partials.c: the partial derivatives of the augmented equations (seed
// linearization, Table 1): Upsilon_q, Upsilon_u, Cddot_q/u, Cdot_q and the user-state partials.
//
// Analytic: the derivative of every constraint-row and coordinate Jacobian (so
// d(J^T lambda)/dq, d(J xdd)/dq and d(J x)/dq), gravity (none), gyroscopic terms, springs and
// dampers (TSDA, torsion, joint damping), constant forces and actuators.
// Forward-mode derivatives of joint.c's formulas: the quadratic-velocity terms gamma of every
// joint row, in q and u (ptd_gamma_partials).
// Local central differences of ONE element's function, at the element's two bodies only:
//   - gamma of each motion row and Jdot x of each coordinate (ptd_fd_quadratic), in q and u;
//   - each bushing's generalized force (its rotation-vector deflection makes the analytic
//     derivative long), in q and u.
// A position perturbation of a body is a global rotation delta pi applied to its Euler
// parameters (p <- exp(delta pi) p) with rdot and omega held fixed: the engine's chart.
#include <stdlib.h>
#include <string.h>

#include "linearize_internal.h"
#include "ptu.h"
#include "tolerances.h"

#define FD_H_POS 1e-5   // position / rotation step (m, rad) for the local differences
#define FD_H_VEL 1e-3   // velocity step: gamma and Jdot x are quadratic in u, so exact

// Local block indices in the 12-layout: r1, pi1, r2, pi2.
enum { R1 = 0, P1 = 1, R2 = 2, P2 = 3 };

static void skew(double M[9], const double v[3]) {
  M[0] = 0, M[1] = -v[2], M[2] = v[1];
  M[3] = v[2], M[4] = 0, M[5] = -v[0];
  M[6] = -v[1], M[7] = v[0], M[8] = 0;
}

// D[block rb][block cb] += s * M (3x3)
static void put(double D[144], int rb, int cb, const double M[9], double s) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) D[(3 * rb + i) * 12 + 3 * cb + j] += s * M[3 * i + j];
}

// D[rb][cb] += s * skew(a) skew(b)
static void put_ss(double D[144], int rb, int cb, const double a[3], const double b[3],
                   double s) {
  double A[9], B[9], AB[9];
  skew(A, a);
  skew(B, b);
  ptu_mul_mat3(AB, A, B);
  put(D, rb, cb, AB, s);
}

static void put_s(double D[144], int rb, int cb, const double a[3], double s) {
  double A[9];
  skew(A, a);
  put(D, rb, cb, A, s);
}

// Dot-1 a1 . a2: J_pi1 = a1 x a2, J_pi2 = -(a1 x a2);
// delta(a1 x a2) = a2~ a1~ dpi1 - a1~ a2~ dpi2.
static void deriv_dot1(double D[144], const double a1[3], const double a2[3]) {
  put_ss(D, P1, P1, a2, a1, 1);
  put_ss(D, P1, P2, a1, a2, -1);
  put_ss(D, P2, P1, a2, a1, -1);
  put_ss(D, P2, P2, a1, a2, 1);
}

// Dot-2 a1 . d, d = p2 - p1: J = [-a1, a1 x (d + s1), a1, s2 x a1] (a1 on body1).
static void deriv_dot2(double D[144], const double a1[3], const double s2[3],
                       const double d[3], const double s1[3]) {
  double e[3];
  ptu_add3(e, d, s1);  // r2 + s2 - r1: its change is dr2 - dr1 - s2~ dpi2
  put_s(D, R1, P1, a1, 1);
  put_s(D, R2, P1, a1, -1);
  put_ss(D, P1, P1, e, a1, 1);
  put_s(D, P1, R2, a1, 1);
  put_s(D, P1, R1, a1, -1);
  put_ss(D, P1, P2, a1, s2, -1);
  put_ss(D, P2, P2, a1, s2, 1);
  put_ss(D, P2, P1, s2, a1, -1);
}

// Spherical component k: J_pi1 = e~ s1, J_pi2 = -e~ s2.
static void deriv_sph(double D[144], int k, const double s1[3], const double s2[3]) {
  double e[3] = {0, 0, 0};
  e[k] = 1;
  put_ss(D, P1, P1, e, s1, -1);
  put_ss(D, P2, P2, e, s2, 1);
}

// Angle about h fixed on body slot hb: J_pi1 = -h, J_pi2 = h, delta h = -h~ dpi_hb.
static void deriv_angle(double D[144], const double h[3], int hb) {
  const int cb = hb ? P2 : P1;
  put_s(D, P1, cb, h, 1);
  put_s(D, P2, cb, h, -1);
}

// Distance |p2 - p1|: J = [-u, u~ s1, u, s2~ u], du = P (dr2 - dr1 - s2~ dpi2 + s1~ dpi1).
void ptd_distance_deriv(double D[144], const double s1[3], const double s2[3],
                        const double dv[3]) {
  const double l = ptu_norm3(dv);
  if (l < PT_TOL_COINCIDENT) return;  // the engine takes the Jacobian as zero there
  double u[3], P[9], S1[9], S2[9], U[9], Du[4][9], T[9];
  ptu_scl3(u, dv, 1 / l);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) P[3 * i + j] = ((i == j) - u[i] * u[j]) / l;
  skew(S1, s1);
  skew(S2, s2);
  skew(U, u);
  for (int i = 0; i < 9; i++) {
    Du[R1][i] = -P[i];
    Du[R2][i] = P[i];
  }
  ptu_mul_mat3(Du[P1], P, S1);
  ptu_mul_mat3(Du[P2], P, S2);
  for (int i = 0; i < 9; i++) Du[P2][i] = -Du[P2][i];
  for (int cb = 0; cb < 4; cb++) {
    put(D, R1, cb, Du[cb], -1);
    put(D, R2, cb, Du[cb], 1);
    ptu_mul_mat3(T, S1, Du[cb]);
    put(D, P1, cb, T, -1);
    ptu_mul_mat3(T, S2, Du[cb]);
    put(D, P2, cb, T, 1);
  }
  put_ss(D, P1, P1, u, s1, -1);
  put_ss(D, P2, P2, u, s2, 1);
}

static void world(const pt_data *d, int body, const double *vbar, double out[3]) {
  if (body == PT_GROUND)
    ptu_copy(out, vbar, 3);
  else
    ptu_mul_mat_vec3(out, d->rot + 9 * body, vbar);
}

void ptd_meas_jac_deriv(const pt_model *m, const pt_data *d, int c, double D[144]) {
  const int *body = m->meas_body + 2 * c;
  const double *g = m->meas_geom + PT_MEAS_GEOM * c;
  double h[3], p1[3], p2[3], s1[3], s2[3], dv[3];
  ptu_zero(D, 144);
  switch ((pt_meas_type)m->meas_type[c]) {
  case PT_MEAS_ANGLE:
  case PT_MEAS_UANGLE1:
    world(d, body[0], g, h);
    deriv_angle(D, h, 0);
    return;
  case PT_MEAS_UANGLE2:
    world(d, body[1], g, h);
    deriv_angle(D, h, 1);
    return;
  case PT_MEAS_SLIDE:
    world(d, body[0], g, h);
    pt_body_point(d, body[0], g + 3, p1, s1);
    pt_body_point(d, body[1], g + 6, p2, s2);
    ptu_sub3(dv, p2, p1);
    deriv_dot2(D, h, s2, dv, s1);
    return;
  case PT_MEAS_POINT: {  // J_pi = -e~ s, delta = e~ s~ dpi
    double e[3] = {0, 0, 0};
    e[m->meas_comp[c]] = 1;
    pt_body_point(d, body[0], g, p1, s1);
    put_ss(D, P1, P1, e, s1, 1);
    return;
  }
  case PT_MEAS_DISTANCE:
    pt_body_point(d, body[0], g, p1, s1);
    pt_body_point(d, body[1], g + 3, p2, s2);
    ptu_sub3(dv, p2, p1);
    ptd_distance_deriv(D, s1, s2, dv);
    return;
  }
}

// Joint rows by their kind and vectors (row_kind, row_vec from the joint class table, joint.c).
void ptd_row_jac_deriv(const pt_model *m, const pt_data *d, int a, double D[144]) {
  const int r = m->con_row[a];
  ptu_zero(D, 144);
  if (r >= m->nrow_joint) {  // motion row: the Jacobian of its coordinate
    ptd_meas_jac_deriv(m, d, m->motion_coord[r - m->nrow_joint], D);
    return;
  }
  const int j = m->row_joint[r];
  const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
  const double *g = m->joint_geom + PT_JOINT_GEOM * j;
  const int *vec = m->row_vec + 2 * r;
  double v[8][3], p1[3], p2[3], s1[3], s2[3], dv[3];
  for (int i = PT_JV_H1; i <= PT_JV_G2; i++) world(d, (i >= PT_JV_H2) ? b2 : b1, g + 3 * i, v[i]);
  pt_body_point(d, b1, g, p1, s1);
  pt_body_point(d, b2, g + 3, p2, s2);
  ptu_sub3(dv, p2, p1);
  switch ((pt_row_kind)m->row_kind[r]) {
  case PT_ROW_SPHERICAL:
    deriv_sph(D, vec[0], s1, s2);
    return;
  case PT_ROW_DOT1:
    deriv_dot1(D, v[vec[0]], v[vec[1]]);
    return;
  case PT_ROW_DOT2:
    deriv_dot2(D, v[vec[0]], s2, dv, s1);
    return;
  }
}

void ptd_scatter12(double *G, int nv, const int b[2], const double *L, double scale) {
  for (int s = 0; s < 2; s++) {
    if (b[s] == PT_GROUND) continue;
    for (int t = 0; t < 2; t++) {
      if (b[t] == PT_GROUND) continue;
      for (int i = 0; i < 6; i++)
        for (int k = 0; k < 6; k++)
          G[(size_t)(6 * b[s] + i) * nv + 6 * b[t] + k] += scale * L[(6 * s + i) * 12 + 6 * t + k];
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Local perturbations of bodies on the scratch data.

// p <- exp(h e_c) p: a global rotation of body k by h about axis c.
static void rotate_body(double *p, int c, double h) {
  double a0 = cos(h / 2), a[3] = {0, 0, 0}, b0 = p[0], b[3] = {p[1], p[2], p[3]}, t[3];
  a[c] = sin(h / 2);
  ptu_cross3(t, a, b);
  p[0] = a0 * b0 - ptu_dot3(a, b);
  for (int i = 0; i < 3; i++) p[1 + i] = a0 * b[i] + b0 * a[i] + t[i];
}

// q, x and qd of body k set to the base state (q0, x0) moved in local variable v (0-2 r, 3-5
// pi, 6-8 rdot, 9-11 omega) by h; rdot and omega held unless perturbed. No kinematics.
static void perturb_body(pt_data *s, const double *q0, const double *x0, int k, int v,
                         double h) {
  double *q = s->q + 7 * k, *x = s->x + 6 * k, *qd = s->qd + 7 * k;
  ptu_copy(q, q0 + 7 * k, 7);
  ptu_copy(x, x0 + 6 * k, 6);
  if (v < 3) q[v] += h;
  else if (v < 6) rotate_body(q + 3, v - 3, h);
  else x[v - 6] += h;
  double E[12];
  ptu_quat_E(E, q + 3);
  ptu_copy(qd, x, 3);
  for (int c = 0; c < 4; c++) qd[3 + c] = 0.5 * (E[c] * x[3] + E[4 + c] * x[4] + E[8 + c] * x[5]);
}

// State of body k perturbed in local variable v by h, the other bodies at the base state.
void ptd_perturb(const pt_model *m, pt_data *s, const double *q0, const double *x0, int k,
                 int v, double h) {
  perturb_body(s, q0, x0, k, v, h);
  pt_kin_bodies(m, s);
}

double ptd_fd_step(int v) { return v < 6 ? FD_H_POS : FD_H_VEL; }

// ---------------------------------------------------------------------------------------------
// Analytic partials of a joint row's gamma (joint.c's formulas in forward-mode derivatives).
// A row's 24 local variables: q = (r1, pi1, r2, pi2) at 0-11 (the gq layout), then
// u = (rdot1, omega1, rdot2, omega2) at 12-23 (the gu layout). In the engine's chart a vector
// fixed on body s moves as da = dpi_s x a = -a~ dpi_s, and rdot, omega are held.
#define NV 24

typedef struct {
  double v[3];
  double d[3][NV];   // d[i][k] = dv_i / dvar_k
} dvec;

typedef struct {
  double v;
  double d[NV];
} dsca;

static void dv_const(dvec *o, const double v[3]) {
  memset(o, 0, sizeof(*o));
  ptu_copy(o->v, v, 3);
}

// a vector fixed on body slot sl (ground: constant)
static void dv_fixed(dvec *o, const double v[3], int body, int sl) {
  dv_const(o, v);
  if (body == PT_GROUND) return;
  const int c = 6 * sl + 3;   // -a~ in the pi columns
  o->d[0][c + 1] = v[2], o->d[0][c + 2] = -v[1];
  o->d[1][c + 0] = -v[2], o->d[1][c + 2] = v[0];
  o->d[2][c + 0] = v[1], o->d[2][c + 1] = -v[0];
}

// a velocity variable of body slot sl: off 0 rdot, 3 omega
static void dv_var(dvec *o, const double v[3], int body, int sl, int off) {
  dv_const(o, v);
  if (body == PT_GROUND) return;
  for (int i = 0; i < 3; i++) o->d[i][12 + 6 * sl + off + i] = 1;
}

static void dv_cross(dvec *o, const dvec *a, const dvec *b) {
  dvec t;
  ptu_cross3(t.v, a->v, b->v);
  for (int k = 0; k < NV; k++) {
    const double da[3] = {a->d[0][k], a->d[1][k], a->d[2][k]};
    const double db[3] = {b->d[0][k], b->d[1][k], b->d[2][k]};
    double x[3], y[3];
    ptu_cross3(x, da, b->v);
    ptu_cross3(y, a->v, db);
    for (int i = 0; i < 3; i++) t.d[i][k] = x[i] + y[i];
  }
  *o = t;
}

static void dv_axpy(dvec *o, double s, const dvec *a) {   // o += s a
  for (int i = 0; i < 3; i++) {
    o->v[i] += s * a->v[i];
    for (int k = 0; k < NV; k++) o->d[i][k] += s * a->d[i][k];
  }
}

static void ds_dot(dsca *o, const dvec *a, const dvec *b) {
  o->v = ptu_dot3(a->v, b->v);
  for (int k = 0; k < NV; k++) {
    double t = 0;
    for (int i = 0; i < 3; i++) t += a->d[i][k] * b->v[i] + a->v[i] * b->d[i][k];
    o->d[k] = t;
  }
}

static void ds_axpy(dsca *o, double s, const dsca *a) {
  o->v += s * a->v;
  for (int k = 0; k < NV; k++) o->d[k] += s * a->d[k];
}

static void dv_centripetal(dvec *o, const dvec *w, const dvec *a) {   // w x (w x a)
  dvec t;
  dv_cross(&t, w, a);
  dv_cross(o, w, &t);
}

typedef struct {      // a joint's row context with derivatives (joint.c's jctx)
  dvec w1, w2, s1, s2, d, dd;
} djctx;

// bodies b1, b2 with the points sbar1 on b1 and sbar2 on b2 (body axes)
static void djctx_init(const pt_data *dt, int b1, int b2, const double sbar1[3],
                       const double sbar2[3], djctx *c) {
  double p1[3], p2[3], s1[3], s2[3], w[3], v[3];
  pt_body_point(dt, b1, sbar1, p1, s1);
  pt_body_point(dt, b2, sbar2, p2, s2);
  dv_fixed(&c->s1, s1, b1, 0);
  dv_fixed(&c->s2, s2, b2, 1);
  pt_body_omega(dt, b1, w);
  dv_var(&c->w1, w, b1, 0, 3);
  pt_body_omega(dt, b2, w);
  dv_var(&c->w2, w, b2, 1, 3);
  // d = r2 + s2 - r1 - s1
  ptu_sub3(v, p2, p1);
  dv_const(&c->d, v);
  dv_axpy(&c->d, 1, &c->s2);
  dv_axpy(&c->d, -1, &c->s1);
  ptu_sub3(c->d.v, p2, p1);
  for (int i = 0; i < 3; i++) {
    if (b1 != PT_GROUND) c->d.d[i][i] -= 1;
    if (b2 != PT_GROUND) c->d.d[i][6 + i] += 1;
  }
  // dd = v2 + w2 x s2 - v1 - w1 x s1
  dvec t;
  pt_body_vel(dt, b2, v);
  dv_var(&c->dd, v, b2, 1, 0);
  dv_cross(&t, &c->w2, &c->s2);
  dv_axpy(&c->dd, 1, &t);
  pt_body_vel(dt, b1, v);
  dv_var(&t, v, b1, 0, 0);
  dv_axpy(&c->dd, -1, &t);
  dv_cross(&t, &c->w1, &c->s1);
  dv_axpy(&c->dd, -1, &t);
}

// gamma of the spherical row k: -(w2 x (w2 x s2) - w1 x (w1 x s1))_k
static void dgamma_sph(const djctx *c, int k, dsca *g) {
  dvec c1, c2;
  dv_centripetal(&c1, &c->w1, &c->s1);
  dv_centripetal(&c2, &c->w2, &c->s2);
  g->v = -(c2.v[k] - c1.v[k]);
  for (int v = 0; v < NV; v++) g->d[v] = -(c2.d[k][v] - c1.d[k][v]);
}

// dot-1 a1 . a2: -(w1 x (w1 x a1) . a2 + 2 (w1 x a1) . (w2 x a2) + a1 . w2 x (w2 x a2))
static void dgamma_dot1(const djctx *c, const dvec *a1, const dvec *a2, dsca *g) {
  dvec c1, c2, u1, u2;
  dsca t;
  dv_centripetal(&c1, &c->w1, a1);
  dv_centripetal(&c2, &c->w2, a2);
  dv_cross(&u1, &c->w1, a1);
  dv_cross(&u2, &c->w2, a2);
  memset(g, 0, sizeof(*g));
  ds_dot(&t, &c1, a2);
  ds_axpy(g, -1, &t);
  ds_dot(&t, &u1, &u2);
  ds_axpy(g, -2, &t);
  ds_dot(&t, a1, &c2);
  ds_axpy(g, -1, &t);
}

// dot-2 a1 . d: -(w1 x (w1 x a1) . d + 2 (w1 x a1) . dd + a1 . (w2 x (w2 x s2) - w1 x (w1 x s1)))
static void dgamma_dot2(const djctx *c, const dvec *a1, dsca *g) {
  dvec ca, c1, c2, ua;
  dsca t;
  dv_centripetal(&ca, &c->w1, a1);
  dv_centripetal(&c1, &c->w1, &c->s1);
  dv_centripetal(&c2, &c->w2, &c->s2);
  dv_cross(&ua, &c->w1, a1);
  dv_axpy(&c2, -1, &c1);
  memset(g, 0, sizeof(*g));
  ds_dot(&t, &ca, &c->d);
  ds_axpy(g, -1, &t);
  ds_dot(&t, &ua, &c->dd);
  ds_axpy(g, -2, &t);
  ds_dot(&t, a1, &c2);
  ds_axpy(g, -1, &t);
}

typedef struct {   // the derivative vectors of the joint last set up (rows come joint by joint)
  int j;           // -1: none
  djctx c;
  dvec v[8];       // joint_geom vectors 2-7 in global axes (2-4 on body 1, 5-7 on body 2)
} jcache;

// (the row's kind and vectors, row_kind and row_vec, as joint.c evaluates them)
static int gamma_partials(const pt_model *m, const pt_data *dt, int a, jcache *jc,
                          double gq[12], double gu[12]) {
  const int r = m->con_row[a];
  if (r >= m->nrow_joint) return 0;
  const int j = m->row_joint[r];
  if (jc->j != j) {
    const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const double *geo = m->joint_geom + PT_JOINT_GEOM * j;
    djctx_init(dt, b1, b2, geo, geo + 3, &jc->c);
    for (int i = 2; i < 8; i++) {
      double w[3];
      world(dt, i >= 5 ? b2 : b1, geo + 3 * i, w);
      dv_fixed(jc->v + i, w, i >= 5 ? b2 : b1, i >= 5);
    }
    jc->j = j;
  }
  const djctx *c = &jc->c;
  const dvec *v = jc->v;
  const int *vec = m->row_vec + 2 * r;
  dsca g;
  switch ((pt_row_kind)m->row_kind[r]) {
  case PT_ROW_SPHERICAL:
    dgamma_sph(c, vec[0], &g);
    break;
  case PT_ROW_DOT1:
    dgamma_dot1(c, v + vec[0], v + vec[1], &g);
    break;
  case PT_ROW_DOT2:
    dgamma_dot2(c, v + vec[0], &g);
    break;
  default:
    return 0;
  }
  ptu_copy(gq, g.d, 12);
  ptu_copy(gu, g.d + 12, 12);
  return 1;
}

int ptd_gamma_partials(const pt_model *m, const pt_data *dt, int a, double gq[12],
                       double gu[12]) {
  jcache jc;
  jc.j = -1;
  return gamma_partials(m, dt, a, &jc, gq, gu);
}

// d(Jdot x)/dq (12) and d(Jdot x)/du (12) of coordinate c from measure.c's formulas: angles
// (hdot . (w2 - w1), hdot = w_h x h with h on body h), slides (a dot-2 row: -gamma), point
// positions (w x (w x s))_k. 0 for a distance (local differences).
int ptd_meas_quadratic_partials(const pt_model *m, const pt_data *dt, int c, double jq[12],
                                double ju[12]) {
  const int *body = m->meas_body + 2 * c;
  const double *g = m->meas_geom + PT_MEAS_GEOM * c;
  djctx x;
  dsca r;
  dvec h, t;
  double v[3];
  switch ((pt_meas_type)m->meas_type[c]) {
  case PT_MEAS_ANGLE:
  case PT_MEAS_UANGLE1:
  case PT_MEAS_UANGLE2: {
    const int hs = m->meas_type[c] == PT_MEAS_UANGLE2;   // slot of the axis's body
    djctx_init(dt, body[0], body[1], g, g, &x);
    world(dt, body[hs], g, v);
    dv_fixed(&h, v, body[hs], hs);
    dv_cross(&t, hs ? &x.w2 : &x.w1, &h);   // hdot
    dvec dw = x.w2;
    dv_axpy(&dw, -1, &x.w1);
    ds_dot(&r, &t, &dw);
    break;
  }
  case PT_MEAS_SLIDE:
    djctx_init(dt, body[0], body[1], g + 3, g + 6, &x);
    world(dt, body[0], g, v);
    dv_fixed(&h, v, body[0], 0);
    dgamma_dot2(&x, &h, &r);
    for (int k = 0; k < NV; k++) r.d[k] = -r.d[k];
    break;
  case PT_MEAS_POINT: {
    const double zero[3] = {0, 0, 0};
    djctx_init(dt, body[0], PT_GROUND, g, zero, &x);
    dv_centripetal(&t, &x.w1, &x.s1);
    const int k = m->meas_comp[c];
    for (int i = 0; i < NV; i++) r.d[i] = t.d[k][i];
    break;
  }
  default:
    return 0;
  }
  ptu_copy(jq, r.d, 12);
  ptu_copy(ju, r.d + 12, 12);
  return 1;
}
#undef NV

// Colours of the bodies such that no active row and no listed coordinate joins two bodies of
// one colour (greedy, bodies in order: 2 colours on a tree, 3 on most loops). Bodies of one
// colour are then perturbed together: each row or coordinate sees at most one of them move,
// so one evaluation of all rows serves them all and the cost grows linearly in bodies.
// Returns the number of colours, -1 out of memory.
static int colour_bodies(const pt_model *m, const int *meas, int nmeas, int *colour) {
  const int nb = m->nbody, nc = m->ncon, npair = nc + nmeas;
  int *adr = calloc((size_t)nb + 1, sizeof(int));     // (nb + 1) neighbour list of body k
  int *fill = calloc((size_t)nb + 1, sizeof(int));    // (nb) degree, then next free slot
  int *adj = malloc(sizeof(int) * (2 * (size_t)npair + 1));
  int *used = calloc((size_t)nb + 2, sizeof(int));    // (nb + 1) colour -> stamp
  int ncol = -1;
  if (!adr || !fill || !adj || !used) goto done;
  // body pairs: of the active rows, then of the coordinates
#define PAIR(i) ((i) < nc ? m->row_body + 2 * m->con_row[i] : m->meas_body + 2 * meas[(i) - nc])
#define SKIP(b) ((b)[0] == PT_GROUND || (b)[1] == PT_GROUND || (b)[0] == (b)[1])
  for (int i = 0; i < npair; i++) {
    const int *b = PAIR(i);
    if (!SKIP(b)) fill[b[0]]++, fill[b[1]]++;
  }
  for (int k = 0; k < nb; k++) adr[k + 1] = adr[k] + fill[k], fill[k] = adr[k];
  for (int i = 0; i < npair; i++) {
    const int *b = PAIR(i);
    if (!SKIP(b)) adj[fill[b[0]]++] = b[1], adj[fill[b[1]]++] = b[0];
  }
#undef PAIR
#undef SKIP
  ncol = 0;
  for (int k = 0; k < nb; k++) {
    for (int e = adr[k]; e < adr[k + 1]; e++)
      if (adj[e] < k) used[colour[adj[e]]] = k + 1;   // colours taken by earlier neighbours
    int c = 0;
    while (used[c] == k + 1) c++;
    colour[k] = c;
    if (c + 1 > ncol) ncol = c + 1;
  }
done:
  free(adr), free(fill), free(adj), free(used);
  return ncol;
}

// Slot of the pair's body of colour c, or -1.
static int slot_of_colour(const int *b, const int *colour, int c) {
  for (int s = 0; s < 2; s++)
    if (b[s] != PT_GROUND && colour[b[s]] == c) return s;
  return -1;
}

int ptd_fd_quadratic(const pt_model *m, pt_data *s, double *gq, double *gu, const int *meas,
                     int nmeas, double *jq, double *ju) {
  const int nb = m->nbody, nc = m->ncon;
  double *q0 = malloc(sizeof(double) * (size_t)(7 * nb + 7 * nb + 6 * nb + 2 * nc + 2 * nmeas));
  int *colour = malloc(sizeof(int) * ((size_t)nb + 1));
  const int ncol = q0 && colour ? colour_bodies(m, meas, nmeas, colour) : -1;
  if (ncol < 0) {
    free(q0), free(colour);
    return PT_ENOMEM;
  }
  double *qd0 = q0 + 7 * nb, *x0 = qd0 + 7 * nb, *gp = x0 + 6 * nb, *mp = gp + nc;
  ptu_copy(q0, s->q, 7 * nb);
  ptu_copy(qd0, s->qd, 7 * nb);
  ptu_copy(x0, s->x, 6 * nb);
  ptu_zero(gq, 12 * nc);
  ptu_zero(gu, 12 * nc);
  ptu_zero(jq, 12 * nmeas);
  ptu_zero(ju, 12 * nmeas);
  // joint rows: analytic; motion rows and coordinates: local differences
  int nfd = 0;
  char *fd = calloc((size_t)nc + 1, 1);
  if (!fd) {
    free(q0), free(colour);
    return PT_ENOMEM;
  }
  jcache *jc = malloc(sizeof(jcache));
  if (!jc) {
    free(q0), free(colour), free(fd);
    return PT_ENOMEM;
  }
  jc->j = -1;
  for (int a = 0; a < nc; a++) {
    fd[a] = !gamma_partials(m, s, a, jc, gq + 12 * a, gu + 12 * a);
    nfd += fd[a];
  }
  free(jc);
  int nmfd = 0;
  char *mfd = calloc((size_t)nmeas + 1, 1);
  if (!mfd) {
    free(q0), free(colour), free(fd);
    return PT_ENOMEM;
  }
  for (int i = 0; i < nmeas; i++) {
    mfd[i] = !ptd_meas_quadratic_partials(m, s, meas[i], jq + 12 * i, ju + 12 * i);
    nmfd += mfd[i];
  }
  for (int c = 0; c < ncol && nfd + nmfd > 0; c++) {
    for (int v = 0; v < 12; v++) {
      const double h = ptd_fd_step(v);
      for (int sign = 1; sign >= -1; sign -= 2) {
        for (int k = 0; k < nb; k++)
          if (colour[k] == c) perturb_body(s, q0, x0, k, v, sign * h);
        pt_kin_bodies(m, s);
        if (nfd) {
          pt_joint_rows(m, s);
          pt_motion_rows(m, s);
        }
        for (int a = 0; a < nc && nfd; a++) {
          const int r = m->con_row[a];
          const int sl = slot_of_colour(m->row_body + 2 * r, colour, c);
          if (!fd[a] || sl < 0) continue;
          if (sign > 0) gp[a] = s->row_gamma[r];
          else {
            double *out = v < 6 ? gq + 12 * a + 6 * sl + v : gu + 12 * a + 6 * sl + v - 6;
            *out = (gp[a] - s->row_gamma[r]) / (2 * h);
          }
        }
        for (int i = 0; i < nmeas; i++) {
          const int sl = slot_of_colour(m->meas_body + 2 * meas[i], colour, c);
          if (!mfd[i] || sl < 0) continue;
          double val, jac[12], jdx;
          pt_measure(m, s, meas[i], &val, jac, &jdx);
          if (sign > 0) mp[i] = jdx;
          else {
            double *out = v < 6 ? jq + 12 * i + 6 * sl + v : ju + 12 * i + 6 * sl + v - 6;
            *out = (mp[i] - jdx) / (2 * h);
          }
        }
      }
    }
    for (int k = 0; k < nb; k++)
      if (colour[k] == c) {
        ptu_copy(s->q + 7 * k, q0 + 7 * k, 7);
        ptu_copy(s->qd + 7 * k, qd0 + 7 * k, 7);
        ptu_copy(s->x + 6 * k, x0 + 6 * k, 6);
      }
  }
  if (nfd + nmfd > 0) {
    pt_kin_bodies(m, s);
    pt_joint_rows(m, s);
    pt_motion_rows(m, s);
  }
  free(q0), free(colour), free(fd), free(mfd);
  return PT_OK;
}
