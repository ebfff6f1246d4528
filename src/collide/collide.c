// collide.c: which routine answers which pair of shapes, the convex path for the pairs without a
// closed form, and the broad phase over the candidate pairs fixed at load.
#include <math.h>
#include <string.h>

#include "collide_internal.h"
#include "ptu.h"

// Pairs by type (the first not above the second). Closed forms where the geometry gives one;
// GJK/EPA on the cores (convex) for the rest: sphere-hull, capsule-cylinder, capsule-hull,
// box-cylinder, box-hull, cylinder-cylinder, cylinder-hull, hull-hull. Two planes never touch.
static const collide_fn table[PT_SHAPE_NTYPES][PT_SHAPE_NTYPES] = {
  [PT_SHAPE_PLANE] = {NULL, collide_plane_sphere, collide_plane_capsule, collide_plane_box,
                      collide_plane_cylinder, collide_plane_hull},
  [PT_SHAPE_SPHERE] = {[PT_SHAPE_SPHERE] = collide_sphere_sphere,
                       [PT_SHAPE_CAPSULE] = collide_sphere_capsule,
                       [PT_SHAPE_BOX] = collide_sphere_box,
                       [PT_SHAPE_CYLINDER] = collide_sphere_cylinder,
                       [PT_SHAPE_HULL] = collide_convex},
  [PT_SHAPE_CAPSULE] = {[PT_SHAPE_CAPSULE] = collide_capsule_capsule,
                        [PT_SHAPE_BOX] = collide_capsule_box,
                        [PT_SHAPE_CYLINDER] = collide_convex,
                        [PT_SHAPE_HULL] = collide_convex},
  [PT_SHAPE_BOX] = {[PT_SHAPE_BOX] = collide_box_box,
                    [PT_SHAPE_CYLINDER] = collide_convex,
                    [PT_SHAPE_HULL] = collide_convex},
  [PT_SHAPE_CYLINDER] = {[PT_SHAPE_CYLINDER] = collide_convex,
                         [PT_SHAPE_HULL] = collide_convex},
  [PT_SHAPE_HULL] = {[PT_SHAPE_HULL] = collide_convex},
};

// Any two shapes but planes: GJK/EPA on the cores, less the radii, then the facing features
// clipped (manifold.c).
int collide_convex(pt_contact *con, const pt_shape *a, const pt_pose *pa, const pt_shape *b,
                   const pt_pose *pb, double margin, pt_collide_work *w) {
  convex_result r;
  convex_query(&r, a, pa, b, pb, w);
  double g = r.dist - shape_radius(a) - shape_radius(b);
  if (g >= margin) return 0;
  return manifold_clip(con, a, pa, b, pb, r.normal, r.wa, r.wb, g, margin, w);
}

int pt_collide(pt_contact *con, int max, const pt_shape *a, const pt_pose *pa,
               const pt_shape *b, const pt_pose *pb, double margin, pt_collide_work *w) {
  if (max < 1 || a->type < 0 || a->type >= PT_SHAPE_NTYPES || b->type < 0 ||
      b->type >= PT_SHAPE_NTYPES)
    return 0;
  int swap = a->type > b->type;
  if (swap) {
    const pt_shape *s = a;
    const pt_pose *p = pa;
    a = b, b = s, pa = pb, pb = p;
  }
  collide_fn fn = table[a->type][b->type];
  if (!fn) return 0;
  pt_contact buf[PT_COLLIDE_MAX_POINTS];
  int n = fn(buf, a, pa, b, pb, margin, w);
  for (int i = 0; i < n; i++) {
    pt_contact *c = buf + i;
    if (swap) {
      ptu_scl3(c->normal, c->normal, -1);
      c->id = PT_FEATURE(PT_FEATURE_B(c->id), PT_FEATURE_A(c->id));
    }
    c->pair = -1;
  }
  if (n > max) {   // the `max` deepest, in their order (ties: the earlier)
    int keep[PT_COLLIDE_MAX_POINTS] = {0};
    for (int k = 0; k < max; k++) {
      int best = -1;
      for (int i = 0; i < n; i++)
        if (!keep[i] && (best < 0 || buf[i].gap < buf[best].gap)) best = i;
      keep[best] = 1;
    }
    int m = 0;
    for (int i = 0; i < n; i++)
      if (keep[i]) buf[m++] = buf[i];
    n = max;
  }
  memcpy(con, buf, sizeof(pt_contact) * (size_t)n);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Broad phase.

static int excluded(int b1, int b2, const int *exclude, int nexclude) {
  for (int e = 0; e < nexclude; e++)
    if ((exclude[2 * e] == b1 && exclude[2 * e + 1] == b2) ||
        (exclude[2 * e] == b2 && exclude[2 * e + 1] == b1))
      return 1;
  return 0;
}

int pt_collide_pairs(int *pair, int maxpair, const int *shape_body, int nshape,
                     const int *exclude, int nexclude) {
  int n = 0;
  for (int i = 0; i < nshape; i++)
    for (int j = i + 1; j < nshape; j++) {
      if (shape_body[i] == shape_body[j]) continue;
      if (excluded(shape_body[i], shape_body[j], exclude, nexclude)) continue;
      if (n < maxpair) pair[2 * n] = i, pair[2 * n + 1] = j;
      n++;
    }
  return n;
}

// Bounding spheres within margin; a plane against the other's bounding sphere.
static int near(const pt_shape *a, const pt_pose *pa, const pt_shape *b, const pt_pose *pb,
                double margin) {
  double d[3], n[3];
  if (a->type == PT_SHAPE_PLANE || b->type == PT_SHAPE_PLANE) {
    if (a->type == PT_SHAPE_PLANE && b->type == PT_SHAPE_PLANE) return 0;
    if (b->type == PT_SHAPE_PLANE) {
      const pt_shape *s = a;
      const pt_pose *p = pa;
      a = b, b = s, pa = pb, pb = p;
    }
    pose_axis(n, pa, 2);
    ptu_sub3(d, pb->pos, pa->pos);
    return ptu_dot3(d, n) - b->rbound < margin;
  }
  ptu_sub3(d, pb->pos, pa->pos);
  double r = a->rbound + b->rbound + margin;
  return ptu_dot3(d, d) < r * r;
}

int pt_collide_broad(int *active, const int *pair, int npair, const pt_shape *shape,
                     const pt_pose *pose, double margin) {
  int n = 0;
  for (int k = 0; k < npair; k++) {
    int i = pair[2 * k], j = pair[2 * k + 1];
    if (near(shape + i, pose + i, shape + j, pose + j, margin)) active[n++] = k;
  }
  return n;
}

int pt_collide_scene(pt_contact *con, int max, int max_per_pair, int *active, const int *pair,
                     int npair, const pt_shape *shape, const pt_pose *pose, double margin,
                     pt_collide_work *w) {
  int nact = pt_collide_broad(active, pair, npair, shape, pose, margin), total = 0;
  if (max_per_pair > PT_COLLIDE_MAX_POINTS) max_per_pair = PT_COLLIDE_MAX_POINTS;
  for (int k = 0; k < nact; k++) {
    int p = active[k], i = pair[2 * p], j = pair[2 * p + 1];
    pt_contact buf[PT_COLLIDE_MAX_POINTS];
    int n = pt_collide(buf, max_per_pair, shape + i, pose + i, shape + j, pose + j, margin, w);
    for (int c = 0; c < n; c++, total++) {
      if (total >= max) continue;
      con[total] = buf[c];
      con[total].pair = p;
    }
  }
  return total;
}
