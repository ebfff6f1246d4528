// collide.h: collision detection between convex shapes (issue 22, "Geometry"). A self-contained
// layer: it knows shapes, poses and contact points, nothing of bodies, joints or models. The
// loader builds the shapes and the candidate pairs once; each step the engine sets the world
// poses and calls pt_collide_scene() (or pt_collide() per pair) into buffers it owns.
//
// Real-time rules: every per-step function (pt_shape_world, pt_collide, pt_collide_broad,
// pt_collide_scene) allocates nothing, has a fixed iteration cap on every loop, is
// deterministic (same inputs, same bits) and returns finite numbers for finite input.
// pt_hull_build and pt_collide_pairs are load-time functions and allocate.
//
// Conventions (docs/collision.md):
// - A pose maps shape-local to world: x_world = rot x_local + pos (rot row-major 3x3).
// - Shape frames: a sphere, box, capsule or cylinder is centred on its origin; capsules and
//   cylinders lie along their local z; a plane is the local z = 0 plane, its solid side z <= 0
//   (normal +z); a hull's vertices are given in its frame.
// - A contact's normal is a unit vector from shape A towards shape B (moving B along it
//   separates them); gap is the signed distance between the surfaces along it (negative:
//   penetration depth); pos is the point midway between the two surfaces, so the surface
//   points are pos -/+ gap/2 normal on A / B.
#ifndef PT_COLLIDE_H
#define PT_COLLIDE_H

#include <stdint.h>

#include "partita.h"   // pt_error only

typedef enum {
  PT_SHAPE_PLANE = 0,   // size unused; local z = 0, solid below (the ground only)
  PT_SHAPE_SPHERE,      // size[0]: radius
  PT_SHAPE_CAPSULE,     // size[0]: radius, size[1]: half-length of the segment (along z)
  PT_SHAPE_BOX,         // size: half-lengths along x, y, z
  PT_SHAPE_CYLINDER,    // size[0]: radius, size[1]: half-length (along z)
  PT_SHAPE_HULL,        // a convex hull (pt_hull); size unused
  PT_SHAPE_NTYPES
} pt_shape_type;

// Caps. A hull beyond the first two is refused at load (pt_hull_build); the others bound the
// per-call loops and the work buffer.
#define PT_HULL_MAX_VERT 1024        // hull vertices
#define PT_HULL_MAX_FACE_VERT 128    // vertices of one hull face (a merged coplanar polygon)
#define PT_HULL_MAX_INPUT 1000000    // points given to pt_hull_build (mesh vertices)
#define PT_GJK_MAX_ITER 64           // GJK iterations
#define PT_EPA_MAX_VERT 64           // EPA polytope vertices (its iterations: this minus 4)
#define PT_EPA_MAX_FACE 512          // EPA polytope faces made (replaced ones included)
#define PT_COLLIDE_MAX_POINTS 8      // contact points one pair can give (pt_collide's `max`)
#define PT_CYL_RIM 8                 // rim points of a cylinder cap seen as a face

// A convex hull: vertices, and its faces as convex polygons (coplanar triangles merged). A view
// onto arrays owned by whoever built it (pt_hull_build's block, or a model).
typedef struct {
  int nvert, nface;
  const double *vert;        // vertices in the shape frame (nvert x 3)
  const double *face_plane;  // outward unit normal n and offset d, n.x = d on the face (nface x 4)
  const int *face_adr;       // first entry of each face in face_vert (nface)
  const int *face_num;       // vertex count of each face (nface)
  const int *face_vert;      // vertex indices, counter-clockwise seen from outside (nfacevert)
  int nfacevert;             // sum of face_num
  int max_face_num;          // largest face_num
  double center[3];          // centroid of the vertices (inside the hull)
} pt_hull;

typedef struct {
  int type;                  // pt_shape_type
  double size[3];            // see pt_shape_type
  const pt_hull *hull;       // PT_SHAPE_HULL: its hull (not owned)
  double pos[3];             // shape origin in its body's frame
  double quat[4];            // shape axes in its body's frame (unit Euler parameters)
  double rbound;             // bounding sphere radius about the shape origin (pt_shape_init)
} pt_shape;

typedef struct {
  double pos[3];             // origin, world
  double rot[9];             // axes, world (row-major; columns are the shape's x, y, z)
} pt_pose;

typedef struct {
  double pos[3];             // midway between the surfaces, world
  double normal[3];          // unit, from A towards B
  double gap;                // signed distance along normal; < 0: penetration
  uint32_t id;               // feature pair: PT_FEATURE(feature on A, feature on B)
  int pair;                  // candidate pair index (pt_collide_scene), -1 from pt_collide
} pt_contact;

// A contact's identity: the feature of each shape that made it (a box corner, a face, a rim
// point...), each below 65536. The same touching situation gives the same id on every step; two
// contacts of one pair in one call never share an id.
#define PT_FEATURE(fa, fb) (((uint32_t)(fa) << 16) | (uint32_t)(fb))
#define PT_FEATURE_A(id) ((int)((id) >> 16))
#define PT_FEATURE_B(id) ((int)((id) & 0xffffu))

// Scratch for one collision call: fixed size (the caps above), owned by the caller (one per
// thread; a model data holds one). Nothing in it survives a call.
typedef struct {
  // EPA polytope: support points of the Minkowski difference and their witnesses on A and B
  double epa_w[PT_EPA_MAX_VERT][3], epa_a[PT_EPA_MAX_VERT][3], epa_b[PT_EPA_MAX_VERT][3];
  // its faces, ever made (a face replaced stays, dead): vertices counter-clockwise from
  // outside, the neighbour across edge k (from vertex k to k + 1) and that edge's index there
  int epa_face[PT_EPA_MAX_FACE][3], epa_adj[PT_EPA_MAX_FACE][3], epa_adje[PT_EPA_MAX_FACE][3];
  double epa_plane[PT_EPA_MAX_FACE][4];   // unit normal, distance from the origin
  char epa_alive[PT_EPA_MAX_FACE];
  int epa_heap[PT_EPA_MAX_FACE], epa_nheap;   // faces by distance (a min-heap; dead ones too)
  int epa_edge[3 * PT_EPA_MAX_FACE][2];   // horizon: (face, edge) pairs
  int epa_stack[3 * PT_EPA_MAX_FACE][2];  // the silhouette walk's (face, edge) to visit
  // facing features of the two shapes (shape_feature)
  double feat_p[2][PT_HULL_MAX_FACE_VERT][3];
  int feat_id[2][PT_HULL_MAX_FACE_VERT];
  // polygon clipping (two ping-pong polygons, each point with its feature id)
  double clip[2][2 * PT_HULL_MAX_FACE_VERT + 8][3];
  int clip_id[2][2 * PT_HULL_MAX_FACE_VERT + 8];
  int clip_max;                           // size of clip[0] in points
  // counters since the caller last cleared them
  long epa_capped;                        // EPA stopped by a cap before converging
  long gjk_capped;                        // GJK stopped by its iteration cap
} pt_collide_work;

void pt_collide_work_init(pt_collide_work *w);   // sizes and zeroed counters

// ---------------------------------------------------------------------------------------------
// Shapes (load time).

const char *pt_shape_type_name(int type);   // "plane", "sphere", ..., "unknown"

// Checks s (finite positive sizes, a hull for PT_SHAPE_HULL, a unit-able quaternion) and sets
// rbound; normalises quat. PT_EINVAL with a message naming the bad field.
int pt_shape_init(pt_shape *s, pt_error *err);

// World pose of shape s on a body at body_pos / body_rot (NULL, NULL: the ground, identity).
void pt_shape_world(pt_pose *res, const pt_shape *s, const double body_pos[3],
                    const double body_rot[9]);

// The convex hull of pts (npts x 3), as a newly allocated block freed by free(): the hull view
// and its arrays. Refused with PT_EMODEL and a message: fewer than 4 points, points all on a
// plane or a line, non-finite coordinates, more than PT_HULL_MAX_INPUT points, a hull of more
// than max_vert vertices (0: PT_HULL_MAX_VERT) or a face of more than PT_HULL_MAX_FACE_VERT.
// Quickhull (Barber, Dobkin and Huhdanpaa, "The Quickhull algorithm for convex hulls", 1996)
// through the qhull library.
int pt_hull_build(pt_hull **out, const double *pts, int npts, int max_vert, pt_error *err);

// Volume of a hull (divergence theorem over its faces): for tests and inertia checks.
double pt_hull_volume(const pt_hull *h);

// ---------------------------------------------------------------------------------------------
// Narrow phase (per step).

// Contacts between shape a at pose pa and shape b at pose pb whose gap is below margin, at most
// max (1..PT_COLLIDE_MAX_POINTS; the deepest kept when there are more), into con (max). Returns
// the number written, 0 when the shapes are farther apart than margin. Which pairs are closed
// forms and which go through GJK/EPA: docs/collision.md and the table in collide.c.
int pt_collide(pt_contact *con, int max, const pt_shape *a, const pt_pose *pa,
               const pt_shape *b, const pt_pose *pb, double margin, pt_collide_work *w);

// ---------------------------------------------------------------------------------------------
// Broad phase.

// Candidate pairs, fixed at load: every two shapes of different bodies (body -1 is the ground;
// shape_body (nshape)) except the body pairs in exclude (nexclude x 2, either order), and no
// pair of two planes. Writes up to maxpair pairs (shape indices, lower first, in index order)
// into pair (maxpair x 2) and returns how many there are (may exceed maxpair: call with
// maxpair 0 to size the buffer).
int pt_collide_pairs(int *pair, int maxpair, const int *shape_body, int nshape,
                     const int *exclude, int nexclude);

// Of the npair candidate pairs, those whose bounding spheres (a plane: its half-space) come
// within margin: their indices into active (npair), in order. Returns the count.
int pt_collide_broad(int *active, const int *pair, int npair, const pt_shape *shape,
                     const pt_pose *pose, double margin);

// Broad and narrow phase over the candidate pairs: up to `max` contacts into con (max), each
// with its pair index, at most max_per_pair per pair. Returns the number of contacts found,
// which may exceed max (the contacts past max are dropped: the caller counts an overflow).
// active (npair) is scratch.
int pt_collide_scene(pt_contact *con, int max, int max_per_pair, int *active, const int *pair,
                     int npair, const pt_shape *shape, const pt_pose *pose, double margin,
                     pt_collide_work *w);

#endif
