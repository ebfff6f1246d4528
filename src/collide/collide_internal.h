// collide_internal.h: what the files of src/collide share (not part of the engine's API).
#ifndef PT_COLLIDE_INTERNAL_H
#define PT_COLLIDE_INTERNAL_H

#include "collide.h"

// A pair routine: the contacts of a (at pa) against b (at pb) with gap below margin into con,
// at most PT_COLLIDE_MAX_POINTS; returns their count. The dispatcher (collide.c) orders pairs
// so that a's type is not above b's, and flips the result back when it swapped them.
typedef int (*collide_fn)(pt_contact *con, const pt_shape *a, const pt_pose *pa,
                          const pt_shape *b, const pt_pose *pb, double margin,
                          pt_collide_work *w);

// plane.c
int collide_plane_sphere(pt_contact *, const pt_shape *, const pt_pose *, const pt_shape *,
                         const pt_pose *, double, pt_collide_work *);
int collide_plane_capsule(pt_contact *, const pt_shape *, const pt_pose *, const pt_shape *,
                          const pt_pose *, double, pt_collide_work *);
int collide_plane_box(pt_contact *, const pt_shape *, const pt_pose *, const pt_shape *,
                      const pt_pose *, double, pt_collide_work *);
int collide_plane_cylinder(pt_contact *, const pt_shape *, const pt_pose *, const pt_shape *,
                           const pt_pose *, double, pt_collide_work *);
int collide_plane_hull(pt_contact *, const pt_shape *, const pt_pose *, const pt_shape *,
                       const pt_pose *, double, pt_collide_work *);
// round.c
int collide_sphere_sphere(pt_contact *, const pt_shape *, const pt_pose *, const pt_shape *,
                          const pt_pose *, double, pt_collide_work *);
int collide_sphere_capsule(pt_contact *, const pt_shape *, const pt_pose *, const pt_shape *,
                           const pt_pose *, double, pt_collide_work *);
int collide_sphere_cylinder(pt_contact *, const pt_shape *, const pt_pose *, const pt_shape *,
                            const pt_pose *, double, pt_collide_work *);
int collide_capsule_capsule(pt_contact *, const pt_shape *, const pt_pose *, const pt_shape *,
                            const pt_pose *, double, pt_collide_work *);
// box.c
int collide_sphere_box(pt_contact *, const pt_shape *, const pt_pose *, const pt_shape *,
                       const pt_pose *, double, pt_collide_work *);
int collide_capsule_box(pt_contact *, const pt_shape *, const pt_pose *, const pt_shape *,
                        const pt_pose *, double, pt_collide_work *);
int collide_box_box(pt_contact *, const pt_shape *, const pt_pose *, const pt_shape *,
                    const pt_pose *, double, pt_collide_work *);
// convex.c: any two shapes but planes
int collide_convex(pt_contact *, const pt_shape *, const pt_pose *, const pt_shape *,
                   const pt_pose *, double, pt_collide_work *);

// ---------------------------------------------------------------------------------------------
// Shape geometry (shape.c). A shape is its core (a point for a sphere, a segment for a capsule,
// the solid itself otherwise) swept by a sphere of radius shape_radius().

double shape_radius(const pt_shape *s);
// The core's point farthest along d (world, any length), and its feature id.
int shape_support(double res[3], const pt_shape *s, const pt_pose *p, const double d[3]);

// The core's feature facing along unit u (world): a face (n >= 3 points, counter-clockwise seen
// along u), an edge (2) or a point (1), with each point's feature id. Faces and edges are those
// within PT_COLLIDE_FEATURE_SIN of facing u.
typedef struct {
  int n;
  double (*p)[3];            // points (n x 3), in the caller's buffer
  int *id;                   // feature ids (n)
  double normal[3];          // a face's outward unit normal
  int face;                  // a face's id (box 2 axis + positive, cylinder cap, hull face)
  double radius;             // the shape's radius (sphere, capsule)
} feature;
void shape_feature(feature *f, const pt_shape *s, const pt_pose *p, const double u[3]);

// ---------------------------------------------------------------------------------------------
// Contact manifolds (manifold.c).

// Writes one contact from surface points pa on A and pb on B, normal n (A to B), gap g.
void contact_set(pt_contact *c, const double pa[3], const double n[3], double g, uint32_t id);

// The contacts of A and B touching along n (unit, A to B) with core witnesses wa, wb and gap g:
// their facing features clipped against each other (a face against a face, an edge or a point),
// points with gap below margin, at most 4 (deepest and widest). Returns the count (>= 1 when
// g < margin).
int manifold_clip(pt_contact *con, const pt_shape *a, const pt_pose *pa, const pt_shape *b,
                  const pt_pose *pb, const double n[3], const double wa[3], const double wb[3],
                  double g, double margin, pt_collide_work *w);

// Keeps at most 4 of the n contacts (the deepest, then the widest spread), in place and in
// their order; returns the count kept.
int manifold_reduce(pt_contact *con, int n);

// Of n points (get(ctx, i, point, gap)), the at most 4 with gap below margin that span the
// contact best: the deepest, the farthest from it, then the farthest on each side of their line
// (normal n). Their indices into out (4), ascending; returns the count.
int reduce4(int out[4], int n, void (*get)(const void *ctx, int i, double p[3], double *gap),
            const void *ctx, const double n3[3], double margin);

// Contacts of two segments p (p0 to p1, radius ra, on A) and q (radius rb, on B): their closest
// points, and when they are near parallel and overlap, the two ends of the overlap as well (a
// capsule lying on a capsule or on a box edge). fallback: the normal when the segments meet;
// along: measure every gap along it instead (edges of solids, which may cross each other).
// ids: PT_FEATURE(base + 0..2, base + 0..2). Returns the count (0..3) with gap below margin.
int segment_pair(pt_contact *con, const double p0[3], const double p1[3], double ra,
                 const double q0[3], const double q1[3], double rb, const double fallback[3],
                 int along, double margin, int base);

// Closest points of segments p0p1 and q0q1: parameters s, t in [0, 1] (Ericson, "Real-Time
// Collision Detection", 5.1.9); zero-length segments allowed.
void segment_closest(double *s, double *t, const double p0[3], const double p1[3],
                     const double q0[3], const double q1[3]);

// ---------------------------------------------------------------------------------------------
// GJK and EPA on the cores (gjk.c).

typedef struct {
  double dist;       // core distance (>= 0), or minus the penetration depth of the cores
  double normal[3];  // unit, from A towards B
  double wa[3];      // witness point on A's core
  double wb[3];      // witness point on B's core
} convex_result;

// Closest points or penetration of the cores of a and b (Gilbert, Johnson and Keerthi, "A fast
// procedure for computing the distance between complex objects in three-dimensional space",
// 1988; van den Bergen's expanding polytope for the penetration). Returns 0, or 1 when a cap
// stopped it (the result is then the best found).
int convex_query(convex_result *r, const pt_shape *a, const pt_pose *pa, const pt_shape *b,
                 const pt_pose *pb, pt_collide_work *w);

// ---------------------------------------------------------------------------------------------
// Small helpers.

// A unit vector perpendicular to unit n (deterministic).
void perp_unit(double res[3], const double n[3]);
// Column k of a pose's rotation (the shape's axis k in world).
static inline void pose_axis(double res[3], const pt_pose *p, int k) {
  res[0] = p->rot[k];
  res[1] = p->rot[3 + k];
  res[2] = p->rot[6 + k];
}

#endif
