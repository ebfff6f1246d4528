// collide_test.h: shapes, poses and checks shared by the collision tests.
#ifndef TEST_COLLIDE_TEST_H
#define TEST_COLLIDE_TEST_H

#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "collide.h"
#include "ptu.h"

static pt_collide_work work;   // big: static, as a model data holds it

static inline pt_shape shape(int type, double s0, double s1, double s2) {
  pt_shape s = {.type = type, .size = {s0, s1, s2}, .quat = {1, 0, 0, 0}};
  pt_error err = {0};
  if (pt_shape_init(&s, &err)) {
    printf("FAIL shape: %s\n", err.msg);
    exit(1);
  }
  return s;
}

static inline pt_shape hull_shape(const pt_hull *h) {
  pt_shape s = {.type = PT_SHAPE_HULL, .hull = h, .quat = {1, 0, 0, 0}};
  pt_error err = {0};
  if (pt_shape_init(&s, &err)) {
    printf("FAIL hull shape: %s\n", err.msg);
    exit(1);
  }
  return s;
}

// The 8 corners of box h as a hull (caller frees).
static inline pt_hull *box_hull(const double h[3]) {
  double p[24];
  for (int c = 0; c < 8; c++)
    for (int k = 0; k < 3; k++) p[3 * c + k] = (c >> k & 1) ? h[k] : -h[k];
  pt_hull *hl = NULL;
  pt_error err = {0};
  if (pt_hull_build(&hl, p, 8, 0, &err)) {
    printf("FAIL box hull: %s\n", err.msg);
    exit(1);
  }
  return hl;
}

// Pose at x, turned by angle about axis (any length).
static inline pt_pose pose(double x, double y, double z, double ax, double ay, double az,
                           double angle) {
  pt_pose p = {.pos = {x, y, z}};
  double l = sqrt(ax * ax + ay * ay + az * az), q[4] = {1, 0, 0, 0};
  if (l > 0) {
    q[0] = cos(angle / 2);
    for (int k = 0; k < 3; k++) q[k + 1] = sin(angle / 2) * (k == 0 ? ax : k == 1 ? ay : az) / l;
  }
  ptu_quat2mat(p.rot, q);
  return p;
}

// Turns pose p by R (applied after: world = R p).
static inline pt_pose turned(pt_pose p, const double R[9]) {
  pt_pose t;
  ptu_mul_mat_vec3(t.pos, R, p.pos);
  ptu_mul_mat3(t.rot, R, p.rot);
  return t;
}

static inline double urand(void) { return (double)rand() / RAND_MAX; }

// A random rotation (uniform Euler parameters by normalised Gaussian-ish components).
static inline void random_rot(double R[9]) {
  double q[4], n = 0;
  for (int k = 0; k < 4; k++) q[k] = 2 * urand() - 1, n += q[k] * q[k];
  n = sqrt(n);
  for (int k = 0; k < 4; k++) q[k] /= n;
  ptu_quat2mat(R, q);
}

static inline int collide(pt_contact *c, const pt_shape *a, const pt_pose *pa, const pt_shape *b,
                          const pt_pose *pb, double margin) {
  return pt_collide(c, PT_COLLIDE_MAX_POINTS, a, pa, b, pb, margin, &work);
}

static inline int deepest(const pt_contact *c, int n) {
  int k = 0;
  for (int i = 1; i < n; i++)
    if (c[i].gap < c[k].gap) k = i;
  return k;
}

#define CHECK_VEC(v, x, y, z, tol, what)                                                   \
  do {                                                                                     \
    double e_[3] = {(x), (y), (z)};                                                       \
    double d_ = fmax(fmax(fabs((v)[0] - e_[0]), fabs((v)[1] - e_[1])), fabs((v)[2] - e_[2])); \
    CHECK(d_ <= (tol), "%s: (%.15g %.15g %.15g) vs (%.15g %.15g %.15g), diff %.3g", what,   \
          (v)[0], (v)[1], (v)[2], e_[0], e_[1], e_[2], d_);                               \
  } while (0)

// Every contact: unit normal, finite numbers, the surface points pos -/+ gap/2 n.
static inline void check_sane(const pt_contact *c, int n, const char *what) {
  for (int i = 0; i < n; i++) {
    CHECK(isfinite(c[i].gap) && isfinite(c[i].pos[0]) && isfinite(c[i].pos[1]) &&
              isfinite(c[i].pos[2]),
          "%s: contact %d not finite", what, i);
    CHECK(fabs(ptu_norm3(c[i].normal) - 1) < 1e-12, "%s: contact %d normal not unit", what, i);
    for (int j = 0; j < i; j++)
      CHECK(c[i].id != c[j].id, "%s: contacts %d and %d share id %08x", what, i, j, c[i].id);
  }
}

#endif
