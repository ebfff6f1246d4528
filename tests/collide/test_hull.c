// Quickhull (pt_hull_build) on known solids, and the convex path (GJK/EPA plus clipping) on a
// box given as an 8-vertex hull against the box's closed forms: the same contacts to 1e-9, in
// chosen poses and in random ones.
#include "collide_internal.h"
#include "collide_test.h"

static void check_hull(const pt_hull *h, const double *pts, int npts, const char *what) {
  int e2 = 0;
  for (int f = 0; f < h->nface; f++) {
    const double *pl = h->face_plane + 4 * f;
    const int *fv = h->face_vert + h->face_adr[f];
    e2 += h->face_num[f];
    CHECK(fabs(ptu_norm3(pl) - 1) < 1e-12, "%s: face %d normal not unit", what, f);
    double nn[3] = {0, 0, 0};   // Newell: the loop turns counter-clockwise about the normal
    for (int i = 0; i < h->face_num[f]; i++) {
      const double *p = h->vert + 3 * fv[i], *q = h->vert + 3 * fv[(i + 1) % h->face_num[f]];
      nn[0] += (p[1] - q[1]) * (p[2] + q[2]);
      nn[1] += (p[2] - q[2]) * (p[0] + q[0]);
      nn[2] += (p[0] - q[0]) * (p[1] + q[1]);
      CHECK(fabs(ptu_dot3(pl, p) - pl[3]) < 1e-12, "%s: face %d vertex %d off its plane (%g)",
            what, f, i, ptu_dot3(pl, p) - pl[3]);
    }
    CHECK(ptu_dot3(nn, pl) > 0, "%s: face %d turns clockwise", what, f);
    for (int i = 0; i < npts; i++)   // every point inside or on
      CHECK(ptu_dot3(pl, pts + 3 * i) - pl[3] < 1e-12, "%s: point %d outside face %d by %g",
            what, i, f, ptu_dot3(pl, pts + 3 * i) - pl[3]);
  }
  CHECK(e2 % 2 == 0, "%s: odd edge count", what);
  CHECK(h->nvert - e2 / 2 + h->nface == 2, "%s: Euler: V %d - E %d + F %d != 2", what, h->nvert,
        e2 / 2, h->nface);
  for (int v = 0; v < h->nvert; v++) {   // every vertex is an input point
    int found = 0;
    for (int i = 0; i < npts && !found; i++)
      found = !memcmp(h->vert + 3 * v, pts + 3 * i, sizeof(double[3]));
    CHECK(found, "%s: vertex %d is no input point", what, v);
  }
}

static void cube(void) {
  // the corners, points inside, on the faces and on the edges
  double p[3 * 80];
  int n = 0;
  const double h[3] = {0.5, 0.75, 1.25};
  for (int c = 0; c < 8; c++, n++)
    for (int k = 0; k < 3; k++) p[3 * n + k] = (c >> k & 1) ? h[k] : -h[k];
  for (int i = 0; i < 40; i++, n++)
    for (int k = 0; k < 3; k++) p[3 * n + k] = (2 * urand() - 1) * h[k];
  for (int i = 0; i < 20; i++, n++) {   // on a face
    int k = i % 3;
    for (int j = 0; j < 3; j++) p[3 * n + j] = (2 * urand() - 1) * h[j];
    p[3 * n + k] = (i & 1) ? h[k] : -h[k];
  }
  for (int i = 0; i < 12; i++, n++) {   // edge midpoints
    int k = i % 3;
    for (int j = 0; j < 3; j++) p[3 * n + j] = ((i / 3 + j) & 1) ? h[j] : -h[j];
    p[3 * n + k] = 0;
  }
  pt_hull *hl = NULL;
  pt_error err = {0};
  CHECK(pt_hull_build(&hl, p, n, 0, &err) == PT_OK, "cube hull: %s", err.msg);
  if (!hl) return;
  CHECK(hl->nvert == 8 && hl->nface == 6 && hl->nfacevert == 24, "cube: V %d F %d, %d loop "
        "entries", hl->nvert, hl->nface, hl->nfacevert);
  CHECK_CLOSE(pt_hull_volume(hl), 8 * h[0] * h[1] * h[2], 1e-15, "cube volume");
  check_hull(hl, p, n, "cube");
  free(hl);
}

static void icosahedron(void) {
  double phi = (1 + sqrt(5)) / 2, p[36];
  int n = 0;
  for (int c = 0; c < 3; c++)   // (0, +-1, +-phi) and its cyclic permutations
    for (int s = 0; s < 4; s++, n++) {
      double v[3] = {0, s & 1 ? 1 : -1, s & 2 ? phi : -phi};
      for (int k = 0; k < 3; k++) p[3 * n + (k + c) % 3] = v[k];
    }
  pt_hull *hl = NULL;
  pt_error err = {0};
  CHECK(pt_hull_build(&hl, p, n, 0, &err) == PT_OK, "icosahedron: %s", err.msg);
  if (!hl) return;
  CHECK(hl->nvert == 12 && hl->nface == 20 && hl->nfacevert == 60, "icosahedron: V %d F %d",
        hl->nvert, hl->nface);
  double a = 2;   // edge length
  CHECK_CLOSE(pt_hull_volume(hl), 5.0 / 12 * (3 + sqrt(5)) * a * a * a, 1e-12,
              "icosahedron volume");
  check_hull(hl, p, n, "icosahedron");
  free(hl);
}

static void random_points(void) {
  enum { N = 500 };
  static double p[3 * N];
  for (int i = 0; i < N; i++) {
    double v[3], r;
    do {
      for (int k = 0; k < 3; k++) v[k] = 2 * urand() - 1;
      r = ptu_norm3(v);
    } while (r > 1);
    ptu_copy(p + 3 * i, v, 3);
  }
  pt_hull *hl = NULL;
  pt_error err = {0};
  CHECK(pt_hull_build(&hl, p, N, 0, &err) == PT_OK, "random hull: %s", err.msg);
  if (!hl) return;
  CHECK(hl->nvert > 20 && hl->nvert < N, "random hull: %d vertices", hl->nvert);
  check_hull(hl, p, N, "random points");
  free(hl);
}

static void refusals(void) {
  pt_hull *hl = NULL;
  pt_error err = {0};
  double three[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  CHECK(pt_hull_build(&hl, three, 3, 0, &err) == PT_EMODEL && strstr(err.msg, "4 points"),
        "three points: %s", err.msg);
  double flat[3 * 16];
  for (int i = 0; i < 16; i++) flat[3 * i] = i % 4, flat[3 * i + 1] = i / 4, flat[3 * i + 2] = 1;
  err.msg[0] = 0;
  CHECK(pt_hull_build(&hl, flat, 16, 0, &err) == PT_EMODEL && strstr(err.msg, "flat"),
        "flat points: %s", err.msg);
  double bad[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, NAN};
  CHECK(pt_hull_build(&hl, bad, 4, 0, &err) == PT_EMODEL && strstr(err.msg, "not finite"),
        "NaN point: %s", err.msg);
  enum { N = 400 };
  static double s[3 * N];
  for (int i = 0; i < N; i++) {   // a Fibonacci sphere: every point a vertex
    double z = 1 - 2 * (i + 0.5) / N, r = sqrt(1 - z * z), th = i * M_PI * (3 - sqrt(5));
    s[3 * i] = r * cos(th), s[3 * i + 1] = r * sin(th), s[3 * i + 2] = z;
  }
  CHECK(pt_hull_build(&hl, s, N, 100, &err) == PT_EMODEL && strstr(err.msg, "cap of 100"),
        "over the vertex cap: %s", err.msg);
  CHECK(hl == NULL, "a refused hull is not returned");
  CHECK(pt_hull_build(&hl, s, N, 0, &err) == PT_OK && hl && hl->nvert == N,
        "sphere hull under the default cap: %s", err.msg);
  free(hl);
}

// ---------------------------------------------------------------------------------------------
// The box as a hull.

// Contacts of the pair by the closed form (box) and by the convex path (hull) agree: count,
// gaps, points and normals to tol. Returns 1 when they do.
static int same(const pt_contact *c1, int n1, const pt_contact *c2, int n2, double tol,
                const char *what, int verbose) {
  int ok = n1 == n2;
  for (int i = 0; i < n1 && ok; i++) {
    int match = 0;
    for (int j = 0; j < n2 && !match; j++) {
      double d = fabs(c1[i].gap - c2[j].gap);
      for (int k = 0; k < 3; k++)
        d = fmax(d, fmax(fabs(c1[i].pos[k] - c2[j].pos[k]),
                         fabs(c1[i].normal[k] - c2[j].normal[k])));
      match = d <= tol;
    }
    ok = match;
  }
  if (!ok && verbose) {
    printf("  %s: box %d contacts, hull %d\n", what, n1, n2);
    for (int i = 0; i < n1; i++)
      printf("   box  gap %.15g pos %.12g %.12g %.12g n %.12g %.12g %.12g\n", c1[i].gap,
             c1[i].pos[0], c1[i].pos[1], c1[i].pos[2], c1[i].normal[0], c1[i].normal[1],
             c1[i].normal[2]);
    for (int i = 0; i < n2; i++)
      printf("   hull gap %.15g pos %.12g %.12g %.12g n %.12g %.12g %.12g\n", c2[i].gap,
             c2[i].pos[0], c2[i].pos[1], c2[i].pos[2], c2[i].normal[0], c2[i].normal[1],
             c2[i].normal[2]);
  }
  return ok;
}

static void box_as_hull_fixed(void) {
  const double ha[3] = {1, 0.5, 0.25}, hb[3] = {0.3, 0.2, 0.1};
  pt_hull *hla = box_hull(ha), *hlb = box_hull(hb);
  pt_shape ba = shape(PT_SHAPE_BOX, ha[0], ha[1], ha[2]), bb = shape(PT_SHAPE_BOX, hb[0], hb[1],
                                                                    hb[2]);
  pt_shape xa = hull_shape(hla), xb = hull_shape(hlb);
  pt_shape sph = shape(PT_SHAPE_SPHERE, 0.2, 0, 0), cap = shape(PT_SHAPE_CAPSULE, 0.1, 0.4, 0);
  pt_shape pl = shape(PT_SHAPE_PLANE, 0, 0, 0);
  pt_pose pa = pose(0.5, -1, 2, 0, 0, 1, 0.3);
  pt_contact c1[8], c2[8];
  // sphere at points around and inside the box (box frame)
  const double sp[6][3] = {{0.3, 0.1, 0.4}, {1.3, 0.1, 0.65}, {1.1, 0.7, 0.45}, {0.9, 0.1, 0},
                           {0.2, -0.3, 0.1}, {-1.05, 0.52, -0.2}};
  for (int i = 0; i < 6; i++) {
    pt_pose ps = pose(0, 0, 0, 0, 0, 0, 0);
    ptu_mul_mat_vec3(ps.pos, pa.rot, sp[i]);
    ptu_add3(ps.pos, ps.pos, pa.pos);
    int n1 = collide(c1, &sph, &ps, &ba, &pa, 1), n2 = collide(c2, &sph, &ps, &xa, &pa, 1);
    CHECK(same(c1, n1, c2, n2, 1e-9, "sphere", 1), "sphere-hull differs at point %d", i);
  }
  // capsules: lying on the top, over an edge, upright above, along an edge, through the box
  const double cc[5][3] = {{0.2, 0.1, 0.34}, {0.9, 0.1, 0.34}, {0.2, 0.1, 0.77},
                           {1.3, 0, 0.65}, {0, 0, 0.2}};
  const int axis[5] = {0, 0, 2, 1, 0};
  for (int i = 0; i < 5; i++) {
    pt_pose pl_ = pose(cc[i][0], cc[i][1], cc[i][2], axis[i] == 0 ? 0 : 1, axis[i] == 0, 0,
                       axis[i] == 2 ? 0 : M_PI / 2), pc;
    ptu_mul_mat_vec3(pc.pos, pa.rot, pl_.pos);
    ptu_add3(pc.pos, pc.pos, pa.pos);
    ptu_mul_mat3(pc.rot, pa.rot, pl_.rot);
    int n1 = collide(c1, &cap, &pc, &ba, &pa, 0.5), n2 = collide(c2, &cap, &pc, &xa, &pa, 0.5);
    CHECK(same(c1, n1, c2, n2, 1e-9, "capsule", 1), "capsule-hull differs in pose %d", i);
  }
  // boxes: resting turned, apart within the margin, edge on edge, corner to corner, deep
  double e = sqrt(0.5);
  pt_pose pairs[5][2] = {
      {pose(0, 0, 0, 0, 0, 0, 0), pose(0.2, 0.1, 0.349, 0, 0, 1, 0.5)},
      {pose(0, 0, 0, 0, 0, 0, 0), pose(0.2, 0.1, 0.37, 0, 0, 1, 0.5)},
      {pose(0, 0, 0, 1, 0, 0, M_PI / 4), pose(0, 0, 0.25 * e + 0.2 * e + 0.1 * e, 0, 1, 0,
                                              M_PI / 4)},
      {pose(0, 0, 0, 0, 0, 0, 0), pose(1.35, 0.75, 0.4, 0, 0, 0, 0)},
      {pose(0.3, 0.2, 0.1, 1, 2, 3, 0.4), pose(0.6, 0.1, 0.05, 3, -1, 2, 1.1)}};
  for (int i = 0; i < 5; i++) {
    int n1 = collide(c1, &ba, &pairs[i][0], &bb, &pairs[i][1], 0.05);
    int n2 = collide(c2, &xa, &pairs[i][0], &xb, &pairs[i][1], 0.05);
    CHECK(same(c1, n1, c2, n2, 1e-9, "box-box", 1), "hull-hull differs in pose %d", i);
    n2 = collide(c2, &ba, &pairs[i][0], &xb, &pairs[i][1], 0.05);
    CHECK(same(c1, n1, c2, n2, 1e-9, "box-hull", 1), "box-hull differs in pose %d", i);
    CHECK(n1 > 0 || i == 3, "box pair %d: no contact", i);
  }
  // on the ground
  pt_pose pz = pose(0, 0, 0, 0, 0, 0, 0), pr = pose(1, 1, 0.249, 0, 0, 1, 0.7);
  int n1 = collide(c1, &pl, &pz, &ba, &pr, 0), n2 = collide(c2, &pl, &pz, &xa, &pr, 0);
  CHECK(n1 == 4 && same(c1, n1, c2, n2, 1e-12, "plane", 1), "plane-hull differs");
  free(hla);
  free(hlb);
}

// Random poses near contact: the closed forms and the convex path agree.
static void box_as_hull_random(void) {
  int trials = 0, touching = 0, differ = 0;
  for (int t = 0; t < 3000; t++) {
    double ha[3], hb[3];
    for (int k = 0; k < 3; k++) ha[k] = 0.1 + urand(), hb[k] = 0.1 + urand();
    pt_hull *hla = box_hull(ha), *hlb = box_hull(hb);
    pt_shape ba = shape(PT_SHAPE_BOX, ha[0], ha[1], ha[2]);
    pt_shape bb = shape(PT_SHAPE_BOX, hb[0], hb[1], hb[2]);
    pt_shape xa = hull_shape(hla), xb = hull_shape(hlb);
    pt_shape other[3] = {bb, shape(PT_SHAPE_SPHERE, hb[0], 0, 0),
                         shape(PT_SHAPE_CAPSULE, hb[0], hb[1], 0)};
    pt_shape other_hull[3] = {xb, other[1], other[2]};
    int kind = t % 3;
    pt_pose pa = pose(0, 0, 0, 0, 0, 0, 0), pb;
    random_rot(pa.rot);
    random_rot(pb.rot);
    double dir[3];
    for (int k = 0; k < 3; k++) dir[k] = 2 * urand() - 1;
    ptu_scl3(dir, dir, (0.2 + 0.8 * urand()) * (ba.rbound + other[kind].rbound) /
                           ptu_norm3(dir));
    ptu_copy(pb.pos, dir, 3);
    pt_contact c1[8], c2[8];
    int n1 = collide(c1, &ba, &pa, &other[kind], &pb, 0.05);
    int n2 = collide(c2, &xa, &pa, &other_hull[kind], &pb, 0.05);
    trials++;
    touching += n1 > 0;
    check_sane(c1, n1, "random closed form");
    check_sane(c2, n2, "random convex");
    if (!same(c1, n1, c2, n2, 1e-9, "random", differ < 3)) {
      differ++;
      if (differ <= 3) printf("  (trial %d, kind %d)\n", t, kind);
    }
    free(hla);
    free(hlb);
  }
  printf("random poses: %d trials, %d touching, %d differ\n", trials, touching, differ);
  CHECK(touching > trials / 3, "too few touching poses: %d", touching);
  CHECK(differ == 0, "%d of %d random poses differ", differ, trials);
}

// The closed forms against the convex path (GJK/EPA on the cores, then the same clipping) on the
// same primitive shapes in random poses: the deepest contact's gap and normal agree (polytope
// cores to 1e-9; a cylinder's curved surface, where EPA converges linearly, gap to 1e-9 and
// normal to 1e-4: a normal off by t moves the depth by about t^2), and so does the number of
// contacts.
static void closed_vs_convex(void) {
  static const struct {
    int a, b;
    double tol, ntol;
  } pairs[] = {{PT_SHAPE_SPHERE, PT_SHAPE_SPHERE, 1e-9, 1e-9},
               {PT_SHAPE_SPHERE, PT_SHAPE_CAPSULE, 1e-9, 1e-9},
               {PT_SHAPE_SPHERE, PT_SHAPE_BOX, 1e-9, 1e-9},
               {PT_SHAPE_CAPSULE, PT_SHAPE_CAPSULE, 1e-9, 1e-9},
               {PT_SHAPE_CAPSULE, PT_SHAPE_BOX, 1e-9, 1e-9},
               {PT_SHAPE_BOX, PT_SHAPE_BOX, 1e-9, 1e-9},
               {PT_SHAPE_SPHERE, PT_SHAPE_CYLINDER, 1e-9, 1e-4}};
  int differ = 0, touching = 0, trials = 0;
  for (size_t q = 0; q < sizeof(pairs) / sizeof(pairs[0]); q++)
    for (int t = 0; t < 500; t++) {
      pt_shape a = shape(pairs[q].a, 0.1 + urand(), 0.1 + urand(), 0.1 + urand());
      pt_shape b = shape(pairs[q].b, 0.1 + urand(), 0.1 + urand(), 0.1 + urand());
      pt_pose pa = pose(0, 0, 0, 0, 0, 0, 0), pb;
      random_rot(pa.rot);
      random_rot(pb.rot);
      double dir[3];
      for (int k = 0; k < 3; k++) dir[k] = 2 * urand() - 1;
      ptu_scl3(pb.pos, dir, (0.3 + 0.8 * urand()) * (a.rbound + b.rbound) / ptu_norm3(dir));
      pt_contact c1[8], c2[8];
      int n1 = collide(c1, &a, &pa, &b, &pb, 0.05);
      int n2 = collide_convex(c2, &a, &pa, &b, &pb, 0.05, &work);
      trials++;
      if (!n1 && !n2) continue;
      touching++;
      int ok = n1 == n2 && n1 > 0;
      if (ok) {
        int i = deepest(c1, n1), j = deepest(c2, n2);
        double d = fabs(c1[i].gap - c2[j].gap), dn = 0;
        for (int k = 0; k < 3; k++) dn = fmax(dn, fabs(c1[i].normal[k] - c2[j].normal[k]));
        ok = d <= pairs[q].tol && dn <= pairs[q].ntol;
        d = fmax(d, dn);
        if (!ok && differ < 3)
          printf("  %s-%s trial %d: gap %.15g vs %.15g, normal diff %.3g\n",
                 pt_shape_type_name(a.type), pt_shape_type_name(b.type), t, c1[i].gap, c2[j].gap,
                 d);
      } else if (differ < 3) {
        printf("  %s-%s trial %d: %d contacts closed, %d convex\n", pt_shape_type_name(a.type),
               pt_shape_type_name(b.type), t, n1, n2);
      }
      differ += !ok;
    }
  printf("closed forms vs convex path: %d trials, %d touching, %d differ\n", trials, touching,
         differ);
  CHECK(touching > trials / 3, "too few touching poses: %d", touching);
  CHECK(differ == 0, "%d of %d poses differ", differ, touching);
}

int main(void) {
  srand(22);
  pt_collide_work_init(&work);
  cube();
  icosahedron();
  random_points();
  refusals();
  box_as_hull_fixed();
  box_as_hull_random();
  closed_vs_convex();
  return finish("hulls and the convex path");
}
