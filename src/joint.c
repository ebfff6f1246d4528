// joint.c: joints as constraint rows (Haug's basic constraints: spherical, dot-1, dot-2).
//
// Every row gives Phi, its Jacobian in (delta r, delta pi) per body (12 numbers, body1 then
// body2) and gamma, the acceleration right-hand side: Phi_q qddot = gamma, i.e. minus the
// quadratic velocity terms of Phi'' (seed gcp eq. 12; hybrid seed eq. 3). Joint geometry is
// stored body-fixed (joint_geom): v0 s1, v1 s2, v2 h1, v3 f1, v4 g1, v5 h2, v6 f2, v7 g2.
#include "engine.h"
#include "ptu.h"

const pt_joint_class pt_joint_classes[PT_JOINT_NTYPES] = {
    [PT_JOINT_REVOLUTE] = {"revolute", 5, 1},
    [PT_JOINT_PRISMATIC] = {"prismatic", 5, 1},
    [PT_JOINT_CYLINDRICAL] = {"cylindrical", 4, 2},
    [PT_JOINT_SPHERICAL] = {"spherical", 3, 0},
    [PT_JOINT_UNIVERSAL] = {"universal", 4, 2},
    [PT_JOINT_FIXED] = {"fixed", 6, 0},
    [PT_JOINT_PLANAR] = {"planar", 3, 3},
};

// World quantities of one joint at the current state.
typedef struct {
  double v[8][3];     // joint_geom vectors rotated to global axes
  double w1[3], w2[3];
  double s1[3], s2[3], d[3], dd[3];
} jctx;

static void world_vec(const pt_data *d, int body, const double *vbar, double out[3]) {
  if (body == PT_GROUND)
    ptu_copy(out, vbar, 3);
  else
    ptu_mul_mat_vec3(out, d->rot + 9 * body, vbar);
}

static void ctx_init(const pt_model *m, const pt_data *d, int j, jctx *c) {
  const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
  const double *g = m->joint_geom + PT_JOINT_GEOM * j;
  for (int k = 0; k < 8; k++) {
    int on2 = (k == 1 || k >= 5);
    world_vec(d, on2 ? b2 : b1, g + 3 * k, c->v[k]);
  }
  double p1[3], p2[3], v1[3], v2[3], t1[3], t2[3];
  pt_body_point(d, b1, g, p1, c->s1);
  pt_body_point(d, b2, g + 3, p2, c->s2);
  pt_body_omega(d, b1, c->w1);
  pt_body_omega(d, b2, c->w2);
  pt_body_vel(d, b1, v1);
  pt_body_vel(d, b2, v2);
  ptu_sub3(c->d, p2, p1);
  ptu_cross3(t1, c->w1, c->s1);
  ptu_cross3(t2, c->w2, c->s2);
  for (int k = 0; k < 3; k++) c->dd[k] = v2[k] + t2[k] - v1[k] - t1[k];
}

// w x (w x a)
static void centripetal(double out[3], const double w[3], const double a[3]) {
  double t[3];
  ptu_cross3(t, w, a);
  ptu_cross3(out, w, t);
}

// Spherical joint: p2 - p1 = 0, 3 rows.
static void row_spherical(const jctx *c, double *phi, double *jac, double *gamma) {
  double c1[3], c2[3];
  centripetal(c1, c->w1, c->s1);
  centripetal(c2, c->w2, c->s2);
  for (int k = 0; k < 3; k++) {
    double e[3] = {0, 0, 0}, t[3];
    e[k] = 1;
    double *J = jac + 12 * k;
    ptu_zero(J, 12);
    J[k] = -1;
    ptu_cross3(t, c->s1, e);
    ptu_scl3(J + 3, t, -1);
    J[6 + k] = 1;
    ptu_cross3(J + 9, c->s2, e);
    phi[k] = c->d[k];
    gamma[k] = -(c2[k] - c1[k]);
  }
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

void pt_joint_rows(const pt_model *m, pt_data *d) {
  for (int j = 0; j < m->njoint; j++) {
    const int r = m->joint_row_adr[j];
    // outputs
    double *phi = d->row_phi + r;
    double *jac = d->row_jac + 12 * r;
    double *gamma = d->row_gamma + r;
    // inputs
    jctx c;
    ctx_init(m, d, j, &c);
    const double *h1 = c.v[2], *f1 = c.v[3], *g1 = c.v[4];
    const double *h2 = c.v[5], *g2 = c.v[7];

    switch ((pt_joint_type)m->joint_type[j]) {
    case PT_JOINT_REVOLUTE:  // SJ + f1.h2 = g1.h2 = 0
      row_spherical(&c, phi, jac, gamma);
      row_dot1(f1, h2, &c, phi + 3, jac + 36, gamma + 3);
      row_dot1(g1, h2, &c, phi + 4, jac + 48, gamma + 4);
      break;
    case PT_JOINT_CYLINDRICAL:  // axes parallel, point on the axis line
    case PT_JOINT_PRISMATIC:    // ... and no rotation about it: f1.g2 = 0
      row_dot1(f1, h2, &c, phi, jac, gamma);
      row_dot1(g1, h2, &c, phi + 1, jac + 12, gamma + 1);
      row_dot2(f1, &c, phi + 2, jac + 24, gamma + 2);
      row_dot2(g1, &c, phi + 3, jac + 36, gamma + 3);
      if (m->joint_type[j] == PT_JOINT_PRISMATIC)
        row_dot1(f1, g2, &c, phi + 4, jac + 48, gamma + 4);
      break;
    case PT_JOINT_SPHERICAL:
      row_spherical(&c, phi, jac, gamma);
      break;
    case PT_JOINT_UNIVERSAL:  // SJ + h1.h2 = 0 (axis1 in body1, axis2 in body2)
      row_spherical(&c, phi, jac, gamma);
      row_dot1(h1, h2, &c, phi + 3, jac + 36, gamma + 3);
      break;
    case PT_JOINT_PLANAR:  // normals parallel (f1.h2 = g1.h2 = 0), no motion along it (h1.d = 0)
      row_dot1(f1, h2, &c, phi, jac, gamma);
      row_dot1(g1, h2, &c, phi + 1, jac + 12, gamma + 1);
      row_dot2(h1, &c, phi + 2, jac + 24, gamma + 2);
      break;
    case PT_JOINT_FIXED:  // SJ + f1.g2 = f1.h2 = g1.h2 = 0
      row_spherical(&c, phi, jac, gamma);
      row_dot1(f1, g2, &c, phi + 3, jac + 36, gamma + 3);
      row_dot1(f1, h2, &c, phi + 4, jac + 48, gamma + 4);
      row_dot1(g1, h2, &c, phi + 5, jac + 60, gamma + 5);
      break;
    default:
      break;
    }
    for (int k = 0; k < pt_joint_classes[m->joint_type[j]].nrow; k++) d->row_nu[r + k] = 0;
  }
}
