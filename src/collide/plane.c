// plane.c: the ground plane (shape A, normal +z of its frame) against each shape (B), in closed
// form: every point of B's core below margin plus B's radius, measured along the plane normal.
#include <math.h>

#include "collide_internal.h"
#include "ptu.h"
#include "tolerances.h"

// Point x of B's core (radius r) against plane (o, n): one contact if its gap is below margin.
static int plane_point(pt_contact *c, const double o[3], const double n[3], const double x[3],
                       double r, double margin, int id) {
  double d[3], pa[3];
  ptu_sub3(d, x, o);
  double dist = ptu_dot3(d, n), g = dist - r;
  if (g >= margin) return 0;
  for (int k = 0; k < 3; k++) pa[k] = x[k] - dist * n[k];   // its projection on the plane
  contact_set(c, pa, n, g, PT_FEATURE(0, id));
  return 1;
}

int collide_plane_sphere(pt_contact *con, const pt_shape *a, const pt_pose *pa,
                         const pt_shape *b, const pt_pose *pb, double margin,
                         pt_collide_work *w) {
  (void)a, (void)w;
  double n[3];
  pose_axis(n, pa, 2);
  return plane_point(con, pa->pos, n, pb->pos, b->size[0], margin, 0);
}

// A capsule: its two segment ends (a capsule lying flat gives two contacts).
int collide_plane_capsule(pt_contact *con, const pt_shape *a, const pt_pose *pa,
                          const pt_shape *b, const pt_pose *pb, double margin,
                          pt_collide_work *w) {
  (void)a, (void)w;
  double n[3], ax[3], x[3];
  pose_axis(n, pa, 2);
  pose_axis(ax, pb, 2);
  int count = 0;
  for (int e = 0; e < 2; e++) {
    for (int k = 0; k < 3; k++) x[k] = pb->pos[k] + (e ? b->size[1] : -b->size[1]) * ax[k];
    count += plane_point(con + count, pa->pos, n, x, b->size[0], margin, e);
  }
  return count;
}

// A box: its corners (id: bit k set for +size[k]); a box resting on a face gives those four.
int collide_plane_box(pt_contact *con, const pt_shape *a, const pt_pose *pa, const pt_shape *b,
                      const pt_pose *pb, double margin, pt_collide_work *w) {
  (void)a, (void)w;
  double n[3];
  pose_axis(n, pa, 2);
  int count = 0;
  for (int c = 0; c < 8; c++) {
    double xl[3], x[3];
    for (int k = 0; k < 3; k++) xl[k] = (c >> k & 1) ? b->size[k] : -b->size[k];
    ptu_mul_mat_vec3(x, pb->rot, xl);
    ptu_add3(x, pb->pos, x);
    count += plane_point(con + count, pa->pos, n, x, 0, margin, c);
  }
  return manifold_reduce(con, count);
}

// A cylinder: on each cap the rim point deepest below the plane and the two at +-120 degrees
// from it (a tilted cylinder rests on its rim, one lying down on its side line, and one standing
// on a cap on a triangle of its rim). Standing (axis within PT_TOL_COLLIDE_TILT of the normal)
// the deepest point is not defined: the triangle is then fixed in the cylinder's frame, from
// its x axis, so that a resting cylinder keeps the same points. id: 3 cap + k.
int collide_plane_cylinder(pt_contact *con, const pt_shape *a, const pt_pose *pa,
                           const pt_shape *b, const pt_pose *pb, double margin,
                           pt_collide_work *w) {
  (void)a, (void)w;
  double n[3], ax[3], u[3], v[3], t[3];
  pose_axis(n, pa, 2);
  pose_axis(ax, pb, 2);
  double r = b->size[0], h = b->size[1];
  ptu_scl3(t, ax, -ptu_dot3(n, ax));   // u: -n across the axis (down the plane, on the rim)
  for (int k = 0; k < 3; k++) u[k] = -n[k] - t[k];
  double un = ptu_norm3(u);
  if (un > PT_TOL_COLLIDE_TILT)
    ptu_scl3(u, u, 1 / un);
  else
    pose_axis(u, pb, 0);
  ptu_cross3(v, ax, u);
  static const double cs[3] = {1, -0.5, -0.5};
  static const double sn[3] = {0, 0.86602540378443864676, -0.86602540378443864676};
  int count = 0;
  for (int cap = 0; cap < 2; cap++)
    for (int k = 0; k < 3; k++) {
      double x[3];
      for (int i = 0; i < 3; i++)
        x[i] = pb->pos[i] + (cap ? h : -h) * ax[i] + r * (cs[k] * u[i] + sn[k] * v[i]);
      count += plane_point(con + count, pa->pos, n, x, 0, margin, 3 * cap + k);
    }
  return manifold_reduce(con, count);
}

typedef struct {
  const pt_hull *hull;
  const pt_pose *pose;
  const double *o, *n;
} hull_ctx;

static void hull_get(const void *c, int i, double p[3], double *gap) {
  const hull_ctx *ctx = c;
  double d[3];
  ptu_mul_mat_vec3(p, ctx->pose->rot, ctx->hull->vert + 3 * i);
  ptu_add3(p, ctx->pose->pos, p);
  ptu_sub3(d, p, ctx->o);
  *gap = ptu_dot3(d, ctx->n);
}

// A hull: its vertices below margin, at most four (the deepest and the widest; id: vertex).
int collide_plane_hull(pt_contact *con, const pt_shape *a, const pt_pose *pa,
                       const pt_shape *b, const pt_pose *pb, double margin,
                       pt_collide_work *w) {
  (void)a, (void)w;
  double n[3];
  pose_axis(n, pa, 2);
  hull_ctx ctx = {b->hull, pb, pa->pos, n};
  int keep[4];
  int k = reduce4(keep, b->hull->nvert, hull_get, &ctx, n, margin);
  int count = 0;
  for (int j = 0; j < k; j++) {
    double x[3], g;
    hull_get(&ctx, keep[j], x, &g);
    count += plane_point(con + count, pa->pos, n, x, 0, margin, keep[j]);
  }
  return count;
}
