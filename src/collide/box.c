// box.c: closed forms for a box (B) against a sphere or a capsule (A), and box against box, in
// the box's frame. Penetration by separating axes (Gottschalk, Lin and Manocha, "OBBTree: a
// hierarchical structure for rapid interference detection", 1996: the least overlap over the
// candidate axes is the penetration depth of two convex polyhedra); the contact points by
// clipping the facing features (manifold.c).
#include <math.h>

#include "collide_internal.h"
#include "ptu.h"
#include "tolerances.h"

static void to_world(double res[3], const pt_pose *p, const double x[3]) {
  double t[3];
  ptu_mul_mat_vec3(t, p->rot, x);
  ptu_add3(res, p->pos, t);
}

static void to_local(double res[3], const pt_pose *p, const double x[3]) {
  double d[3];
  ptu_sub3(d, x, p->pos);
  ptu_mul_matT_vec3(res, p->rot, d);
}

// The face of box h nearest to local point c inside it: its axis and side (+1 / -1), and depth.
static double nearest_face(int *axis, double *side, const double h[3], const double c[3]) {
  double best = INFINITY;
  for (int k = 0; k < 3; k++) {
    double d = h[k] - fabs(c[k]);
    if (d < best) best = d, *axis = k, *side = c[k] >= 0 ? 1 : -1;
  }
  return best;
}

// A sphere (A) against a box (B): the box point nearest to the centre; a centre inside the box
// leaves through the nearest face.
int collide_sphere_box(pt_contact *con, const pt_shape *a, const pt_pose *pa, const pt_shape *b,
                       const pt_pose *pb, double margin, pt_collide_work *w) {
  (void)w;
  const double *h = b->size;
  double c[3], q[3], nl[3], n[3], x[3];
  to_local(c, pb, pa->pos);
  int in = 1;
  for (int k = 0; k < 3; k++) {
    q[k] = fmin(fmax(c[k], -h[k]), h[k]);
    if (q[k] != c[k]) in = 0;
  }
  double dist;
  if (!in) {
    ptu_sub3(nl, q, c);
    dist = ptu_norm3(nl);
    ptu_scl3(nl, nl, 1 / dist);
  } else {   // the box moves away from the centre, through the nearest face
    int k = 0;
    double side = 1;
    dist = -nearest_face(&k, &side, h, c);
    ptu_zero(nl, 3);
    nl[k] = -side;
  }
  double g = dist - a->size[0];
  if (g >= margin) return 0;
  ptu_mul_mat_vec3(n, pb->rot, nl);
  for (int k = 0; k < 3; k++) x[k] = pa->pos[k] + a->size[0] * n[k];
  contact_set(con, x, n, g, PT_FEATURE(0, 0));
  return 1;
}

// ---------------------------------------------------------------------------------------------
// Capsule against box.

static double box_dist2(const double h[3], const double x[3]) {
  double s = 0;
  for (int k = 0; k < 3; k++) {
    double e = fabs(x[k]) - h[k];
    if (e > 0) s += e * e;
  }
  return s;
}

// The point of segment p0 + t d (t in [0, 1], box frame) nearest to box h: the squared distance
// is convex and piecewise quadratic in t, with pieces split where a coordinate crosses a face
// plane; the least of the pieces' minima (at most 7 pieces).
static double segment_box(const double p0[3], const double d[3], const double h[3]) {
  double ts[8] = {0, 1};
  int nt = 2;
  for (int k = 0; k < 3; k++)
    for (int s = -1; s <= 1 && d[k] != 0; s += 2) {
      double t = (s * h[k] - p0[k]) / d[k];
      if (t > 0 && t < 1) ts[nt++] = t;
    }
  for (int i = 1; i < nt; i++)   // insertion sort (at most 8)
    for (int j = i; j > 0 && ts[j] < ts[j - 1]; j--) {
      double t = ts[j];
      ts[j] = ts[j - 1], ts[j - 1] = t;
    }
  double best_t = 0, best = INFINITY, x[3];
  for (int i = 0; i + 1 < nt; i++) {
    double ta = ts[i], tb = ts[i + 1], tm = 0.5 * (ta + tb), A = 0, B = 0;
    for (int k = 0; k < 3; k++) {   // coordinate k clamped on this piece: (p0 + t d - c)^2
      double xm = p0[k] + tm * d[k];
      double c = xm > h[k] ? h[k] : xm < -h[k] ? -h[k] : NAN;
      if (isnan(c)) continue;
      A += d[k] * d[k];
      B += 2 * d[k] * (p0[k] - c);
    }
    double t = A > 0 ? fmin(fmax(-B / (2 * A), ta), tb) : ta;
    for (int k = 0; k < 3; k++) x[k] = p0[k] + t * d[k];
    double f = box_dist2(h, x);
    if (f < best) best = f, best_t = t;
  }
  return best_t;
}

// The least overlap of a segment (box frame) and box h over the separating axes of the pair
// (the box's three face normals, each crossed with the segment); its axis L (unit, the way the
// segment leaves) into nl. Returns the depth.
static double segment_box_sat(double nl[3], const double p0[3], const double p1[3],
                              const double h[3]) {
  double d[3], best = INFINITY;
  ptu_sub3(d, p1, p0);
  double ld = ptu_norm3(d);
  for (int q = 0; q < 6; q++) {
    double L[3] = {0, 0, 0};
    if (q < 3) {
      L[q] = 1;
    } else {
      double e[3] = {0, 0, 0};
      e[q - 3] = 1;
      ptu_cross3(L, e, d);
      double l = ptu_norm3(L);
      if (l < 1e-6 * ld) continue;   // parallel to a face axis: that one decides
      ptu_scl3(L, L, 1 / l);
    }
    double R = h[0] * fabs(L[0]) + h[1] * fabs(L[1]) + h[2] * fabs(L[2]);
    double a0 = ptu_dot3(p0, L), a1 = ptu_dot3(p1, L);
    double up = R - fmin(a0, a1), down = fmax(a0, a1) + R;   // to leave along +L, -L
    double depth = fmin(up, down);
    if (depth < best - 1e-12 * R) {   // face axes first: an edge axis must be clearly better
      best = depth;
      ptu_scl3(nl, L, up <= down ? 1 : -1);
    }
  }
  return best;
}

int collide_capsule_box(pt_contact *con, const pt_shape *a, const pt_pose *pa, const pt_shape *b,
                        const pt_pose *pb, double margin, pt_collide_work *w) {
  const double *h = b->size;
  double ax[3], p0[3], p1[3], d[3], x[3], q[3], nl[3], n[3], wa[3], wb[3];
  pose_axis(ax, pa, 2);
  for (int k = 0; k < 3; k++) {
    x[k] = pa->pos[k] - a->size[1] * ax[k];
    q[k] = pa->pos[k] + a->size[1] * ax[k];
  }
  to_local(p0, pb, x);
  to_local(p1, pb, q);
  ptu_sub3(d, p1, p0);
  double t = segment_box(p0, d, h);
  for (int k = 0; k < 3; k++) {
    x[k] = p0[k] + t * d[k];
    q[k] = fmin(fmax(x[k], -h[k]), h[k]);
  }
  ptu_sub3(nl, q, x);
  double dist = ptu_norm3(nl), g;
  if (dist > PT_TOL_COINCIDENT * b->rbound) {   // the segment is outside the box
    ptu_scl3(nl, nl, 1 / dist);
    g = dist - a->size[0];
    to_world(wa, pb, x);
    to_world(wb, pb, q);
  } else {   // it enters the box: it leaves along the separating axis of least overlap
    double L[3];
    double depth = segment_box_sat(L, p0, p1, h);
    ptu_scl3(nl, L, -1);   // the box moves the other way
    g = -depth - a->size[0];
    double dn = ptu_dot3(d, nl);
    ptu_copy(x, dn >= 0 ? p1 : p0, 3);   // A's core point deepest along n
    to_world(wa, pb, x);
    ptu_copy(wb, wa, 3);
  }
  if (g >= margin) return 0;
  ptu_mul_mat_vec3(n, pb->rot, nl);
  return manifold_clip(con, a, pa, b, pb, n, wa, wb, g, margin, w);
}

// ---------------------------------------------------------------------------------------------
// Box against box.

// Signed separation of boxes a and b along unit axis L (A's frame; t: b's centre, R: b's axes
// as columns), and the sign of t.L (+1: b lies along +L).
static double box_sep(double *sign, const double L[3], const double ha[3], const double hb[3],
                      const double t[3], const double R[9]) {
  double ra = ha[0] * fabs(L[0]) + ha[1] * fabs(L[1]) + ha[2] * fabs(L[2]), rb = 0;
  for (int j = 0; j < 3; j++)
    rb += hb[j] * fabs(L[0] * R[j] + L[1] * R[3 + j] + L[2] * R[6 + j]);
  double tl = ptu_dot3(t, L);
  *sign = tl >= 0 ? 1 : -1;
  return fabs(tl) - ra - rb;
}

int collide_box_box(pt_contact *con, const pt_shape *a, const pt_pose *pa, const pt_shape *b,
                    const pt_pose *pb, double margin, pt_collide_work *w) {
  double R[9], t[3], best_L[3] = {0, 0, 1}, best = -INFINITY, sign_best = 1;
  ptu_mul_matT_mat3(R, pa->rot, pb->rot);   // b's axes in a's frame (columns)
  to_local(t, pa, pb->pos);
  double scale = a->rbound + b->rbound;
  for (int q = 0; q < 15; q++) {   // a's faces, b's faces, then edge pairs
    double L[3] = {0, 0, 0}, sign;
    if (q < 3) {
      L[q] = 1;
    } else if (q < 6) {
      for (int k = 0; k < 3; k++) L[k] = R[3 * k + q - 3];
    } else {
      int i = (q - 6) / 3, j = (q - 6) % 3;
      double e[3] = {0, 0, 0}, f[3] = {R[j], R[3 + j], R[6 + j]};
      e[i] = 1;
      ptu_cross3(L, e, f);
      double l = ptu_norm3(L);
      if (l < 1e-6) continue;   // parallel edges: the face axes decide
      ptu_scl3(L, L, 1 / l);
    }
    double s = box_sep(&sign, L, a->size, b->size, t, R);
    if (s > margin) return 0;   // a separating axis with room to spare
    if (s > best + (q >= 6 ? 1e-9 * scale : 0)) {
      best = s;
      sign_best = sign;
      ptu_copy(best_L, L, 3);
    }
  }
  double n[3], wa[3], wb[3], mn[3];
  ptu_scl3(best_L, best_L, sign_best);   // from a towards b
  ptu_mul_mat_vec3(n, pa->rot, best_L);
  double g = best;
  if (g > 0) {   // separated: the axes bound the distance from below; GJK gives it exactly
    convex_result r;
    convex_query(&r, a, pa, b, pb, w);
    g = r.dist;
    if (g >= margin) return 0;
    ptu_copy(n, r.normal, 3);
    ptu_copy(wa, r.wa, 3);
  } else {   // b's deepest corner, and a's surface point over it
    ptu_scl3(mn, n, -1);
    shape_support(wb, b, pb, mn);
    for (int k = 0; k < 3; k++) wa[k] = wb[k] - g * n[k];
  }
  ptu_copy(wb, wa, 3);
  return manifold_clip(con, a, pa, b, pb, n, wa, wb, g, margin, w);
}
