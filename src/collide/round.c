// round.c: closed forms for spheres and capsules against each other and a sphere against a
// cylinder: closest points of their cores (point, segment), less the radii.
#include <math.h>

#include "collide_internal.h"
#include "ptu.h"
#include "tolerances.h"

// The normal when two centres coincide: from A's centre to B's if they differ, else world z.
static void fallback_normal(double n[3], const double ca[3], const double cb[3]) {
  double d[3];
  ptu_sub3(d, cb, ca);
  double l = ptu_norm3(d);
  if (l > PT_TOL_COINCIDENT) {
    ptu_scl3(n, d, 1 / l);
  } else {
    n[0] = n[1] = 0;
    n[2] = 1;
  }
}

static void segment_ends(double p0[3], double p1[3], const pt_shape *s, const pt_pose *p) {
  double ax[3];
  pose_axis(ax, p, 2);
  for (int k = 0; k < 3; k++) {
    p0[k] = p->pos[k] - s->size[1] * ax[k];
    p1[k] = p->pos[k] + s->size[1] * ax[k];
  }
}

int collide_sphere_sphere(pt_contact *con, const pt_shape *a, const pt_pose *pa,
                          const pt_shape *b, const pt_pose *pb, double margin,
                          pt_collide_work *w) {
  (void)w;
  double n[3];
  fallback_normal(n, pa->pos, pb->pos);
  return segment_pair(con, pa->pos, pa->pos, a->size[0], pb->pos, pb->pos, b->size[0], n, 0,
                      margin, 0);
}

int collide_sphere_capsule(pt_contact *con, const pt_shape *a, const pt_pose *pa,
                           const pt_shape *b, const pt_pose *pb, double margin,
                           pt_collide_work *w) {
  (void)w;
  double q0[3], q1[3], n[3], ax[3];
  segment_ends(q0, q1, b, pb);
  fallback_normal(n, pa->pos, pb->pos);
  pose_axis(ax, pb, 2);
  if (fabs(ptu_dot3(n, ax)) > 1 - PT_TOL_COLLIDE_FEATURE) perp_unit(n, ax);   // centre on axis
  return segment_pair(con, pa->pos, pa->pos, a->size[0], q0, q1, b->size[0], n, 0, margin, 0);
}

// Two capsules: the closest points of their segments, and the ends of their overlap when they
// lie parallel (Ericson, "Real-Time Collision Detection", 5.1.9). Crossing axes that meet have
// no closest direction: the normal is then their common perpendicular, oriented from A to B.
int collide_capsule_capsule(pt_contact *con, const pt_shape *a, const pt_pose *pa,
                            const pt_shape *b, const pt_pose *pb, double margin,
                            pt_collide_work *w) {
  (void)w;
  double p0[3], p1[3], q0[3], q1[3], n[3], aa[3], ab[3], d[3];
  segment_ends(p0, p1, a, pa);
  segment_ends(q0, q1, b, pb);
  pose_axis(aa, pa, 2);
  pose_axis(ab, pb, 2);
  ptu_cross3(n, aa, ab);
  double l = ptu_norm3(n);
  if (l > PT_TOL_COLLIDE_FEATURE) {
    ptu_scl3(n, n, 1 / l);
  } else {   // parallel: across A's axis towards B's centre, or any perpendicular
    ptu_sub3(d, pb->pos, pa->pos);
    double t[3];
    ptu_scl3(t, aa, ptu_dot3(d, aa));
    ptu_sub3(n, d, t);
    l = ptu_norm3(n);
    if (l > PT_TOL_COINCIDENT)
      ptu_scl3(n, n, 1 / l);
    else
      perp_unit(n, aa);
  }
  ptu_sub3(d, pb->pos, pa->pos);
  if (ptu_dot3(d, n) < 0) ptu_scl3(n, n, -1);
  return segment_pair(con, p0, p1, a->size[0], q0, q1, b->size[0], n, 0, margin, 0);
}

// A sphere (A) against a cylinder (B), in the cylinder's frame: the closest point of the solid
// cylinder to the sphere's centre (clamped radially and axially), or, with the centre inside,
// the nearest of the side and the two caps.
int collide_sphere_cylinder(pt_contact *con, const pt_shape *a, const pt_pose *pa,
                            const pt_shape *b, const pt_pose *pb, double margin,
                            pt_collide_work *w) {
  (void)w;
  double r = b->size[0], h = b->size[1], ra = a->size[0];
  double d[3], c[3], q[3], nl[3], n[3], pA[3];
  ptu_sub3(d, pa->pos, pb->pos);
  ptu_mul_matT_vec3(c, pb->rot, d);   // sphere centre, cylinder frame
  double rho = sqrt(c[0] * c[0] + c[1] * c[1]);
  double ux = 1, uy = 0;              // radial direction (fixed on the axis)
  if (rho > PT_TOL_COINCIDENT) ux = c[0] / rho, uy = c[1] / rho;
  double dist;
  if (rho <= r && fabs(c[2]) <= h) {   // inside: out through the side or the nearer cap
    double side = r - rho, cap = h - fabs(c[2]);
    if (side < cap) {
      nl[0] = -ux, nl[1] = -uy, nl[2] = 0;   // the cylinder moves inwards, away from the centre
      dist = -side;
    } else {
      nl[0] = nl[1] = 0, nl[2] = c[2] >= 0 ? -1 : 1;
      dist = -cap;
    }
  } else {
    q[0] = rho > r ? r * ux : c[0];
    q[1] = rho > r ? r * uy : c[1];
    q[2] = fmin(fmax(c[2], -h), h);
    ptu_sub3(nl, q, c);
    dist = ptu_norm3(nl);
    ptu_scl3(nl, nl, 1 / dist);   // dist > 0: the centre is outside
  }
  double g = dist - ra;
  if (g >= margin) return 0;
  ptu_mul_mat_vec3(n, pb->rot, nl);
  for (int k = 0; k < 3; k++) pA[k] = pa->pos[k] + ra * n[k];
  contact_set(con, pA, n, g, PT_FEATURE(0, 0));
  return 1;
}
