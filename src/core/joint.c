// joint.c: joints as constraint rows (Haug's basic constraints: spherical, dot-1, dot-2).
//
// Every row gives Phi, its Jacobian in (delta r, delta pi) per body (12 numbers, body1 then
// body2) and gamma, the acceleration right-hand side: Phi_q qddot = gamma, i.e. minus the
// quadratic velocity terms of Phi'' (seed gcp eq. 12; hybrid seed eq. 3). Joint geometry is
// stored body-fixed (joint_geom, pt_joint_vec in engine.h): v0 s1, v1 s2, v2 h1, v3 f1, v4 g1,
// v5 h2, v6 f2, v7 g2, then the other body's axis on each body (v8, v9).
//
// The class table below is the only place that says which basic constraints and which
// coordinates a joint type is made of: compile/joints.c copies the rows into the model (row_kind,
// row_vec) and the coordinates into its measures; the rows here, the partitions, assembly,
// inverse dynamics and linearization read those.
#include "engine.h"
#include "ptu.h"

#define SPH {PT_ROW_SPHERICAL, {0, 0}}, {PT_ROW_SPHERICAL, {1, 0}}, {PT_ROW_SPHERICAL, {2, 0}}
#define DOT1(a, b) {PT_ROW_DOT1, {PT_JV_##a, PT_JV_##b}}
#define DOT2(a) {PT_ROW_DOT2, {PT_JV_##a, 0}}
#define ANGLE(sfx) {sfx, PT_MEAS_ANGLE, {PT_JV_H1, PT_JV_F1, PT_JV_F2}}        // about h1, f1 -> f2
#define SLIDE(sfx, a) {sfx, PT_MEAS_SLIDE, {PT_JV_##a, PT_JV_S1, PT_JV_S2}}   // (p2 - p1) . a

const pt_joint_class pt_joint_classes[PT_JOINT_NTYPES] = {
    // spherical joint + f1.h2 = g1.h2 = 0
    [PT_JOINT_REVOLUTE] = {"revolute", 5, 1, {SPH, DOT1(F1, H2), DOT1(G1, H2)}, {ANGLE("")}, 0},
    // axes parallel, point on the axis line, no rotation about it (f1.g2 = 0)
    [PT_JOINT_PRISMATIC] = {"prismatic", 5, 1,
                            {DOT1(F1, H2), DOT1(G1, H2), DOT2(F1), DOT2(G1), DOT1(F1, G2)},
                            {SLIDE("", H1)}, 0},
    // axes parallel, point on the axis line
    [PT_JOINT_CYLINDRICAL] = {"cylindrical", 4, 2,
                              {DOT1(F1, H2), DOT1(G1, H2), DOT2(F1), DOT2(G1)},
                              {ANGLE("angle"), SLIDE("slide", H1)}, 0},
    [PT_JOINT_SPHERICAL] = {"spherical", 3, 0, {SPH}, {{0}}, 1},
    // spherical joint + h1.h2 = 0 (axis1 in body1, axis2 in body2)
    [PT_JOINT_UNIVERSAL] = {"universal", 4, 2, {SPH, DOT1(H1, H2)},
                            {{"angle1", PT_MEAS_UANGLE1, {PT_JV_H1, PT_JV_H2_ON1, PT_JV_H2}},
                             {"angle2", PT_MEAS_UANGLE2, {PT_JV_H2, PT_JV_H1, PT_JV_H1_ON2}}},
                            0},
    // spherical joint + f1.g2 = f1.h2 = g1.h2 = 0
    [PT_JOINT_FIXED] = {"fixed", 6, 0, {SPH, DOT1(F1, G2), DOT1(F1, H2), DOT1(G1, H2)}, {{0}}, 0},
    // normals parallel (f1.h2 = g1.h2 = 0), no motion along them (h1.d = 0); x, y along f1, g1
    [PT_JOINT_PLANAR] = {"planar", 3, 3, {DOT1(F1, H2), DOT1(G1, H2), DOT2(H1)},
                         {SLIDE("x", F1), SLIDE("y", G1), ANGLE("angle")}, 0},
};

// World quantities of one joint at the current state.
typedef struct {
  double v[8][3];     // joint_geom directions PT_JV_H1..PT_JV_G2 in global axes
  double w1[3], w2[3];
  double s1[3], s2[3], d[3], dd[3];
  double c1[3], c2[3];  // w1 x (w1 x s1), w2 x (w2 x s2)
} jctx;

static void world_vec(const pt_data *d, int body, const double *vbar, double out[3]) {
  if (body == PT_GROUND)
    ptu_copy(out, vbar, 3);
  else
    ptu_mul_mat_vec3(out, d->rot + 9 * body, vbar);
}

// w x (w x a)
static void centripetal(double out[3], const double w[3], const double a[3]) {
  double t[3];
  ptu_cross3(t, w, a);
  ptu_cross3(out, w, t);
}

// Spherical joint: component k of p2 - p1 = 0.
static void row_spherical(const jctx *c, int k, double *phi, double *J, double *gamma) {
  double e[3] = {0, 0, 0}, t[3];
  e[k] = 1;
  ptu_zero(J, 12);
  J[k] = -1;
  ptu_cross3(t, c->s1, e);
  ptu_scl3(J + 3, t, -1);
  J[6 + k] = 1;
  ptu_cross3(J + 9, c->s2, e);
  *phi = c->d[k];
  *gamma = -(c->c2[k] - c->c1[k]);
}

// Dot-1: a1 . a2 = 0, a1 fixed in body1, a2 fixed in body2.
static void row_dot1(const double a1[3], const double a2[3], const jctx *c, double *phi,
                     double *jac, double *gamma) {
  double u1[3], u2[3], c1[3], c2[3];
  ptu_zero(jac, 12);
  ptu_cross3(jac + 3, a1, a2);
  ptu_scl3(jac + 9, jac + 3, -1);
  *phi = ptu_dot3(a1, a2);
  centripetal(c1, c->w1, a1);
  centripetal(c2, c->w2, a2);
  ptu_cross3(u1, c->w1, a1);
  ptu_cross3(u2, c->w2, a2);
  *gamma = -(ptu_dot3(c1, a2) + 2 * ptu_dot3(u1, u2) + ptu_dot3(a1, c2));
}

// Dot-2: a1 . d = 0, d = p2 - p1.
void pt_row_dot2(const double a1[3], const double w1[3], const double w2[3], const double s1[3],
                 const double s2[3], const double d[3], const double dd[3], double *phi,
                 double *jac, double *gamma);
void pt_row_dot2(const double a1[3], const double w1[3], const double w2[3], const double s1[3],
                 const double s2[3], const double d[3], const double dd[3], double *phi,
                 double *jac, double *gamma) {
  double t[3], ca[3], c1[3], c2[3], ua[3];
  ptu_scl3(jac, a1, -1);
  ptu_add3(t, d, s1);
  ptu_cross3(jac + 3, a1, t);
  ptu_copy(jac + 6, a1, 3);
  ptu_cross3(jac + 9, s2, a1);
  *phi = ptu_dot3(a1, d);
  centripetal(ca, w1, a1);
  centripetal(c1, w1, s1);
  centripetal(c2, w2, s2);
  ptu_cross3(ua, w1, a1);
  ptu_sub3(t, c2, c1);
  *gamma = -(ptu_dot3(ca, d) + 2 * ptu_dot3(ua, dd) + ptu_dot3(a1, t));
}

static void row_dot2(const double a1[3], const jctx *c, double *phi, double *jac,
                     double *gamma) {
  pt_row_dot2(a1, c->w1, c->w2, c->s1, c->s2, c->d, c->dd, phi, jac, gamma);
}

// Every joint row from its kind and vectors (row_kind, row_vec), a joint's world quantities
// computed once (pt_joint_rows_list).
void pt_joint_rows(const pt_model *m, pt_data *d) {
  pt_joint_rows_list(m, d, NULL, 0, PT_ROWS_FULL);
}

// The listed rows only (all-rows numbering, joint rows grouped by joint; rows NULL: every
// joint row): values alone (PT_ROWS_PHI: Newton's residual checks need no Jacobian and no
// velocities), with the Jacobian (PT_ROWS_JAC: gamma left 0, no velocities read) or with
// Jacobian, gamma and nu (PT_ROWS_FULL). A joint's world quantities are computed once for its
// listed rows, the directions only those the rows read.
void pt_joint_rows_list(const pt_model *m, pt_data *d, const int *rows, int n, int what) {
  const int full = what != PT_ROWS_PHI;
  if (!rows) n = m->nrow_joint;
#define ROW(t) (rows ? rows[t] : (t))
  for (int t = 0; t < n;) {
    const int j = m->row_joint[ROW(t)];
    int t1 = t;
    unsigned need = 0;  // bit k: direction k
    while (t1 < n && m->row_joint[ROW(t1)] == j) {
      const int r = ROW(t1), *v = m->row_vec + 2 * r;
      t1++;
      if (m->row_kind[r] == PT_ROW_DOT1) need |= 1u << v[0] | 1u << v[1];
      else if (m->row_kind[r] == PT_ROW_DOT2) need |= 1u << v[0];
    }
    const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const double *g = m->joint_geom + PT_JOINT_GEOM * j;
    jctx c;
    double p1[3], p2[3];
    for (int k = PT_JV_H1; k <= PT_JV_G2; k++)
      if (need & (1u << k)) world_vec(d, k >= PT_JV_H2 ? b2 : b1, g + 3 * k, c.v[k]);
    pt_body_point(d, b1, g, p1, c.s1);
    pt_body_point(d, b2, g + 3, p2, c.s2);
    ptu_sub3(c.d, p2, p1);
    if (what == PT_ROWS_JAC) {  // no velocities: gamma comes out 0
      ptu_zero(c.w1, 3), ptu_zero(c.w2, 3), ptu_zero(c.dd, 3);
      ptu_zero(c.c1, 3), ptu_zero(c.c2, 3);
    } else if (full) {
      double v1[3], v2[3], u1[3], u2[3];
      pt_body_omega(d, b1, c.w1);
      pt_body_omega(d, b2, c.w2);
      pt_body_vel(d, b1, v1);
      pt_body_vel(d, b2, v2);
      ptu_cross3(u1, c.w1, c.s1);
      ptu_cross3(u2, c.w2, c.s2);
      for (int k = 0; k < 3; k++) c.dd[k] = v2[k] + u2[k] - v1[k] - u1[k];
      centripetal(c.c1, c.w1, c.s1);
      centripetal(c.c2, c.w2, c.s2);
    }
    for (; t < t1; t++) {
      const int r = ROW(t), *v = m->row_vec + 2 * r;
      double *phi = d->row_phi + r;
      if (!full) {
        switch ((pt_row_kind)m->row_kind[r]) {
        case PT_ROW_SPHERICAL:
          *phi = c.d[v[0]];
          break;
        case PT_ROW_DOT1:
          *phi = ptu_dot3(c.v[v[0]], c.v[v[1]]);
          break;
        case PT_ROW_DOT2:
          *phi = ptu_dot3(c.v[v[0]], c.d);
          break;
        }
        continue;
      }
      double *jac = d->row_jac + 12 * r, *gamma = d->row_gamma + r;
      switch ((pt_row_kind)m->row_kind[r]) {
      case PT_ROW_SPHERICAL:
        row_spherical(&c, v[0], phi, jac, gamma);
        break;
      case PT_ROW_DOT1:
        row_dot1(c.v[v[0]], c.v[v[1]], &c, phi, jac, gamma);
        break;
      case PT_ROW_DOT2:
        row_dot2(c.v[v[0]], &c, phi, jac, gamma);
        break;
      }
      d->row_nu[r] = 0;
    }
  }
#undef ROW
}
