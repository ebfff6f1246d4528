// measure.c: coordinates (joint coordinates and user coordinates) as functions of q.
//
// Each coordinate c(q) gives its value, its Jacobian row in (delta r, delta pi) per body and
// the quadratic term Jdot x, so that c' = J x and c'' = J xdd + Jdot x. Motions drive them
// (Phi = c - f(t)), torsion springs, dampers and joint actuators act along them (Q += J^T f),
// and the linearizer uses them as user states (seed linearization eq. 20-22).
// Angles use the rate h . (w2 - w1) about the joint axis, exact on the constraint manifold;
// their values come from atan2 and are unwrapped against coord_ref (continuous, not limited
// to (-pi, pi]).
#include "engine.h"
#include "tolerances.h"
#include "ptu.h"

static void world(const pt_data *d, int body, const double *vbar, double out[3]) {
  if (body == PT_GROUND)
    ptu_copy(out, vbar, 3);
  else
    ptu_mul_mat_vec3(out, d->rot + 9 * body, vbar);
}

static double unwrap(double raw, double ref) {
  const double two_pi = 2 * M_PI;
  return raw + two_pi * nearbyint((ref - raw) / two_pi);
}

// Angle about axis h (global) between reference vector a (on one body) and b (on the other):
// atan2((a x b) . h, a . b); rate h . (w2 - w1); jdotx = hdot . (w2 - w1).
static void angle(const pt_data *d, const int *body, const double h[3], const double a[3],
                  const double b[3], const double hdot[3], double ref, double *value,
                  double jac[12], double *jdotx) {
  double t[3], w1[3], w2[3], dw[3];
  ptu_cross3(t, a, b);
  *value = unwrap(atan2(ptu_dot3(t, h), ptu_dot3(a, b)), ref);
  ptu_zero(jac, 12);
  ptu_scl3(jac + 3, h, -1);
  ptu_copy(jac + 9, h, 3);
  pt_body_omega(d, body[0], w1);
  pt_body_omega(d, body[1], w2);
  ptu_sub3(dw, w2, w1);
  *jdotx = ptu_dot3(hdot, dw);
}

void pt_row_dot2(const double a1[3], const double w1[3], const double w2[3], const double s1[3],
                 const double s2[3], const double d[3], const double dd[3], double *phi,
                 double *jac, double *gamma);

void pt_measure(const pt_model *m, const pt_data *d, int i, double *value, double jac[12],
                double *jdotx) {
  const int *body = m->meas_body + 2 * i;
  const double *g = m->meas_geom + PT_MEAS_GEOM * i;
  const double ref = d->coord_ref[i];
  double w1[3], w2[3], v0[3], v1[3], v2[3], hdot[3];
  pt_body_omega(d, body[0], w1);
  pt_body_omega(d, body[1], w2);

  switch ((pt_meas_type)m->meas_type[i]) {
  case PT_MEAS_ANGLE:  // h, f on body1; f copy on body2
    world(d, body[0], g, v0);
    world(d, body[0], g + 3, v1);
    world(d, body[1], g + 6, v2);
    ptu_cross3(hdot, w1, v0);
    angle(d, body, v0, v1, v2, hdot, ref, value, jac, jdotx);
    return;
  case PT_MEAS_UANGLE1:  // h1 on body1, axis2 copy on body1, h2 on body2
    world(d, body[0], g, v0);
    world(d, body[0], g + 3, v1);
    world(d, body[1], g + 6, v2);
    ptu_cross3(hdot, w1, v0);
    angle(d, body, v0, v1, v2, hdot, ref, value, jac, jdotx);
    return;
  case PT_MEAS_UANGLE2:  // h2 on body2, h1 on body1, axis1 copy on body2
    world(d, body[1], g, v0);
    world(d, body[0], g + 3, v1);
    world(d, body[1], g + 6, v2);
    ptu_cross3(hdot, w2, v0);
    angle(d, body, v0, v1, v2, hdot, ref, value, jac, jdotx);
    return;
  case PT_MEAS_SLIDE: {  // h . (p2 - p1): a dot-2 row
    double p1[3], p2[3], s1[3], s2[3], vb1[3], vb2[3], t1[3], t2[3], dv[3], dd[3], gam;
    world(d, body[0], g, v0);
    pt_body_point(d, body[0], g + 3, p1, s1);
    pt_body_point(d, body[1], g + 6, p2, s2);
    pt_body_vel(d, body[0], vb1);
    pt_body_vel(d, body[1], vb2);
    ptu_sub3(dv, p2, p1);
    ptu_cross3(t1, w1, s1);
    ptu_cross3(t2, w2, s2);
    for (int k = 0; k < 3; k++) dd[k] = vb2[k] + t2[k] - vb1[k] - t1[k];
    pt_row_dot2(v0, w1, w2, s1, s2, dv, dd, value, jac, &gam);
    *jdotx = -gam;
    return;
  }
  case PT_MEAS_POINT: {  // component k of r + A s
    int k = m->meas_comp[i];
    double p[3], s[3], e[3] = {0, 0, 0}, t[3];
    e[k] = 1;
    pt_body_point(d, body[0], g, p, s);
    *value = p[k];
    ptu_zero(jac, 12);
    if (body[0] != PT_GROUND) {
      jac[k] = 1;
      ptu_cross3(jac + 3, s, e);
    }
    ptu_cross3(t, w1, s);
    ptu_cross3(t, w1, t);
    *jdotx = t[k];
    return;
  }
  case PT_MEAS_DISTANCE: {  // |p2 - p1|
    double p1[3], p2[3], s1[3], s2[3], vb1[3], vb2[3], t1[3], t2[3], dv[3], dd[3], c1[3],
        c2[3], u[3];
    pt_body_point(d, body[0], g, p1, s1);
    pt_body_point(d, body[1], g + 3, p2, s2);
    pt_body_vel(d, body[0], vb1);
    pt_body_vel(d, body[1], vb2);
    ptu_sub3(dv, p2, p1);
    ptu_cross3(t1, w1, s1);
    ptu_cross3(t2, w2, s2);
    for (int k = 0; k < 3; k++) dd[k] = vb2[k] + t2[k] - vb1[k] - t1[k];
    double l = ptu_norm3(dv);
    *value = l;
    ptu_zero(jac, 12);
    if (l < PT_TOL_COINCIDENT) {  // direction undefined: rate and Jacobian taken as zero
      *jdotx = 0;
      return;
    }
    ptu_scl3(u, dv, 1 / l);
    ptu_scl3(jac, u, -1);
    ptu_cross3(jac + 3, s1, u);
    ptu_scl3(jac + 3, jac + 3, -1);
    ptu_copy(jac + 6, u, 3);
    ptu_cross3(jac + 9, s2, u);
    ptu_cross3(c1, w1, t1);
    ptu_cross3(c2, w2, t2);
    double ud = ptu_dot3(u, dd);
    *jdotx = ptu_dot3(u, c2) - ptu_dot3(u, c1) + (ptu_dot3(dd, dd) - ud * ud) / l;
    return;
  }
  }
  *value = 0;
  *jdotx = 0;
  ptu_zero(jac, 12);
}

// The Jacobian row alone (what a force along the coordinate needs, Q += J^T f): for an angle
// about h, (0, -h) on body1 and (0, h) on body2, without the atan2 of its value.
void pt_measure_jac(const pt_model *m, const pt_data *d, int i, double jac[12]) {
  if (m->meas_type[i] != PT_MEAS_ANGLE) {
    double value, jdotx;
    pt_measure(m, d, i, &value, jac, &jdotx);
    return;
  }
  double h[3];
  world(d, m->meas_body[2 * i], m->meas_geom + PT_MEAS_GEOM * i, h);
  ptu_zero(jac, 12);
  ptu_scl3(jac + 3, h, -1);
  ptu_copy(jac + 9, h, 3);
}

// The Jacobian row and Jdot x without the value (an angle's atan2 spared: a caller that knows
// the value already, as the tree partition's integrated joint coordinates).
void pt_measure_jd(const pt_model *m, const pt_data *d, int i, double jac[12], double *jdotx) {
  const int t = m->meas_type[i];
  if (t != PT_MEAS_ANGLE && t != PT_MEAS_UANGLE1 && t != PT_MEAS_UANGLE2) {
    double value;
    pt_measure(m, d, i, &value, jac, jdotx);
    return;
  }
  const int *body = m->meas_body + 2 * i, on = t == PT_MEAS_UANGLE2;  // h fixed in body[on]
  double h[3], hdot[3], w1[3], w2[3], dw[3];
  world(d, body[on], m->meas_geom + PT_MEAS_GEOM * i, h);
  pt_body_omega(d, body[0], w1);
  pt_body_omega(d, body[1], w2);
  ptu_cross3(hdot, on ? w2 : w1, h);
  ptu_sub3(dw, w2, w1);
  ptu_zero(jac, 12);
  ptu_scl3(jac + 3, h, -1);
  ptu_copy(jac + 9, h, 3);
  *jdotx = ptu_dot3(hdot, dw);
}

// J x for a row with bodies body[0], body[1].
double pt_jac_dot_x(const pt_data *d, const int body[2], const double jac[12]) {
  double s = 0;
  for (int b = 0; b < 2; b++) {
    if (body[b] == PT_GROUND) continue;
    const double *xv = d->x + 6 * body[b];
    for (int k = 0; k < 6; k++) s += jac[6 * b + k] * xv[k];
  }
  return s;
}

// Values, rates and (when accelerations are valid) second derivatives of every coordinate.
void pt_measure_all(const pt_model *m, pt_data *d) { pt_measure_from(m, d, 0); }

// The same for the coordinates first..ncoord-1.
void pt_measure_from(const pt_model *m, pt_data *d, int first) {
  for (int i = first; i < m->ncoord; i++) {
    double jac[12], jdx;
    const int *body = m->meas_body + 2 * i;
    pt_measure(m, d, i, d->coord + i, jac, &jdx);
    d->coord_rate[i] = pt_jac_dot_x(d, body, jac);
    double acc = jdx;
    for (int b = 0; b < 2; b++) {
      if (body[b] == PT_GROUND) continue;
      for (int k = 0; k < 6; k++) acc += jac[6 * b + k] * d->xdd[6 * body[b] + k];
    }
    d->coord_acc[i] = acc;
  }
}
