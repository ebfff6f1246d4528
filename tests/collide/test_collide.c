// The closed-form pairs of src/collide against hand computations: gap, normal (A to B) and
// point (midway between the surfaces) in several poses each, rotated, touching, separated within
// the margin, deep, and in the degenerate alignments (parallel capsules, face-face boxes,
// coincident centres). Then the pairs that go through GJK/EPA on shapes with known answers.
#include "collide_test.h"

static const double T = 1e-12;   // closed forms: rounding only

static void plane_sphere(void) {
  pt_shape pl = shape(PT_SHAPE_PLANE, 0, 0, 0), s = shape(PT_SHAPE_SPHERE, 0.5, 0, 0);
  pt_pose pp = pose(0, 0, 0, 0, 0, 0, 0), ps = pose(1, 2, 0.4, 0, 0, 0, 0);
  pt_contact c[8];
  int n = collide(c, &pl, &pp, &s, &ps, 0);
  CHECK(n == 1, "plane-sphere: %d contacts", n);
  CHECK_CLOSE(c[0].gap, -0.1, T, "plane-sphere gap");
  CHECK_VEC(c[0].normal, 0, 0, 1, T, "plane-sphere normal");
  CHECK_VEC(c[0].pos, 1, 2, -0.05, T, "plane-sphere pos");
  // a plane through (0, 0, 1) turned 30 degrees about x: normal (0, -1/2, sqrt3/2)
  pp = pose(0, 0, 1, 1, 0, 0, M_PI / 6);
  ps = pose(0.3, -1, 2, 0, 0, 0, 0);
  double g = 0.5 + sqrt(3) / 2 - 0.5;
  n = collide(c, &pl, &pp, &s, &ps, 1);
  CHECK(n == 1, "tilted plane-sphere within margin: %d", n);
  CHECK_CLOSE(c[0].gap, g, T, "tilted plane-sphere gap");
  CHECK_VEC(c[0].normal, 0, -0.5, sqrt(3) / 2, T, "tilted plane normal");
  CHECK(collide(c, &pl, &pp, &s, &ps, 0.5) == 0, "beyond the margin: no contact");
  // the sphere first, the plane second: the normal from the sphere to the plane
  n = collide(c, &s, &ps, &pl, &pp, 1);
  CHECK(n == 1 && fabs(c[0].normal[2] + sqrt(3) / 2) < T, "sphere-plane normal flips");
  check_sane(c, n, "plane-sphere");
}

static void plane_capsule(void) {
  pt_shape pl = shape(PT_SHAPE_PLANE, 0, 0, 0), s = shape(PT_SHAPE_CAPSULE, 0.1, 0.4, 0);
  pt_pose pp = pose(0, 0, 0, 0, 0, 0, 0), ps = pose(0, 0, 0.09, 0, 1, 0, M_PI / 2);
  pt_contact c[8];
  int n = collide(c, &pl, &pp, &s, &ps, 0);   // lying flat along x: its two ends
  CHECK(n == 2, "capsule lying flat: %d contacts", n);
  for (int i = 0; i < n; i++) {
    CHECK_CLOSE(c[i].gap, -0.01, T, "flat capsule gap");
    double x = PT_FEATURE_B(c[i].id) ? 0.4 : -0.4;   // end 1 at +half-length along its z
    CHECK_VEC(c[i].pos, x, 0, -0.005, T, "flat capsule pos");
  }
  check_sane(c, n, "plane-capsule");
  ps = pose(0, 0, 1, 0, 1, 0, M_PI / 3);   // 60 degrees from upright: its lower end
  n = collide(c, &pl, &pp, &s, &ps, 1);
  CHECK(n == 1, "tilted capsule: %d contacts", n);
  CHECK_CLOSE(c[0].gap, 1 - 0.4 * 0.5 - 0.1, T, "tilted capsule gap");
  CHECK_VEC(c[0].pos, -0.4 * sin(M_PI / 3), 0, (1 - 0.2 - 0.1) / 2, T, "tilted capsule pos");
}

static void plane_box(void) {
  pt_shape pl = shape(PT_SHAPE_PLANE, 0, 0, 0), b = shape(PT_SHAPE_BOX, 0.5, 0.3, 0.2);
  pt_pose pp = pose(0, 0, 0, 0, 0, 0, 0), pb = pose(1, 1, 0.199, 0, 0, 1, 0.7);
  pt_contact c[8];
  int n = collide(c, &pl, &pp, &b, &pb, 0);
  CHECK(n == 4, "resting box: %d contacts", n);
  for (int i = 0; i < n; i++) {
    int id = PT_FEATURE_B(c[i].id);
    CHECK(id < 4, "resting box: corner %d is not a bottom one", id);
    double xl[3] = {id & 1 ? 0.5 : -0.5, id & 2 ? 0.3 : -0.3, -0.2}, x[3];
    ptu_mul_mat_vec3(x, pb.rot, xl);
    CHECK_CLOSE(c[i].gap, -0.001, T, "resting box gap");
    CHECK_VEC(c[i].pos, 1 + x[0], 1 + x[1], -0.0005, T, "resting box corner");
  }
  check_sane(c, n, "plane-box");
  // on an edge: turned 45 degrees about x, the edge (y, z) = (-0.3, -0.2) lowest
  pb = pose(0, 0, 0.35, 1, 0, 0, M_PI / 4);
  n = collide(c, &pl, &pp, &b, &pb, 0.01);
  CHECK(n == 2, "box on an edge: %d contacts", n);
  for (int i = 0; i < n; i++) CHECK_CLOSE(c[i].gap, 0.35 - 0.5 * sqrt(0.5), T, "edge gap");
}

static void plane_cylinder(void) {
  pt_shape pl = shape(PT_SHAPE_PLANE, 0, 0, 0), s = shape(PT_SHAPE_CYLINDER, 0.3, 0.5, 0);
  pt_pose pp = pose(0, 0, 0, 0, 0, 0, 0), ps = pose(0, 0, 0.499, 0, 0, 1, 0.4);
  pt_contact c[8], c2[8];
  int n = collide(c, &pl, &pp, &s, &ps, 0);   // standing: three rim points of its bottom cap
  CHECK(n == 3, "standing cylinder: %d contacts", n);
  for (int i = 0; i < n; i++) {
    int k = PT_FEATURE_B(c[i].id);
    CHECK(k < 3, "standing cylinder: rim point %d not of the bottom cap", k);
    double th = 0.4 + (k == 1 ? 2 * M_PI / 3 : k == 2 ? -2 * M_PI / 3 : 0);
    CHECK_CLOSE(c[i].gap, -0.001, T, "standing cylinder gap");
    CHECK_VEC(c[i].pos, 0.3 * cos(th), 0.3 * sin(th), -0.0005, T, "standing cylinder rim");
  }
  check_sane(c, n, "plane-cylinder");
  // tilted by 1e-8 rad: the same points, the same ids
  double Rt[9];
  pt_pose tilt = pose(0, 0, 0, 1, 0, 0, 1e-8);
  ptu_copy(Rt, tilt.rot, 9);
  pt_pose ps2 = ps;
  ptu_mul_mat3(ps2.rot, Rt, ps.rot);
  int n2 = collide(c2, &pl, &pp, &s, &ps2, 0);
  CHECK(n2 == n, "nearly standing: %d contacts, %d standing", n2, n);
  for (int i = 0; i < n && i < n2; i++) {
    CHECK(c2[i].id == c[i].id, "nearly standing: id %08x, %08x standing", c2[i].id, c[i].id);
    for (int k = 0; k < 3; k++) CHECK_CLOSE(c2[i].pos[k], c[i].pos[k], 1e-8, "rim point moved");
  }
  // lying on its side (axis along -y): the side line, one point at each cap
  ps = pose(0, 0, 0.299, 1, 0, 0, M_PI / 2);
  n = collide(c, &pl, &pp, &s, &ps, 0);
  CHECK(n == 2, "cylinder on its side: %d contacts", n);
  for (int i = 0; i < n; i++) {
    CHECK_CLOSE(c[i].gap, -0.001, T, "side gap");
    CHECK_CLOSE(fabs(c[i].pos[1]), 0.5, T, "side point at a cap");
  }
  // tilted 30 degrees about x: on its rim, the lowest point of the bottom cap
  ps = pose(0, 0, 1, 1, 0, 0, M_PI / 6);
  n = collide(c, &pl, &pp, &s, &ps, 0.5);
  CHECK(n == 1, "cylinder on its rim: %d contacts", n);
  CHECK_CLOSE(c[0].gap, 1 - 0.5 * cos(M_PI / 6) - 0.3 * sin(M_PI / 6), T, "rim gap");
  // its axis is (0, -1/2, sqrt3/2): the bottom cap's centre at y = +1/4, and the cap's plane
  // falls towards -y: the lowest rim point at y - 0.3 cos 30
  CHECK_CLOSE(c[0].pos[1], 0.25 - 0.3 * cos(M_PI / 6), T, "rim point y");
}

static void sphere_sphere(void) {
  pt_shape a = shape(PT_SHAPE_SPHERE, 0.3, 0, 0), b = shape(PT_SHAPE_SPHERE, 0.2, 0, 0);
  pt_pose pa = pose(0, 0, 0, 0, 0, 0, 0), pb = pose(1, 2, 2, 0, 0, 0, 0);
  pt_contact c[8];
  int n = collide(c, &a, &pa, &b, &pb, 3);
  CHECK(n == 1, "spheres within margin: %d", n);
  CHECK_CLOSE(c[0].gap, 2.5, T, "spheres gap");
  CHECK_VEC(c[0].normal, 1. / 3, 2. / 3, 2. / 3, T, "spheres normal");
  CHECK_VEC(c[0].pos, 1.55 / 3, 3.1 / 3, 3.1 / 3, T, "spheres pos");
  CHECK(collide(c, &a, &pa, &b, &pb, 2.5) == 0, "spheres beyond margin");
  pb = pose(0.4, 0, 0, 0, 0, 0, 0);
  n = collide(c, &a, &pa, &b, &pb, 0);
  CHECK(n == 1 && fabs(c[0].gap + 0.1) < T, "spheres overlapping");
  CHECK_VEC(c[0].pos, 0.25, 0, 0, T, "spheres overlapping pos");
  pb = pose(0.5, 0, 0, 0, 0, 0, 0);
  n = collide(c, &a, &pa, &b, &pb, 1e-9);
  CHECK(n == 1 && fabs(c[0].gap) < T, "spheres touching");
  pb = pa;   // coincident centres: a finite normal, the full depth
  n = collide(c, &a, &pa, &b, &pb, 0);
  CHECK(n == 1 && fabs(c[0].gap + 0.5) < T, "coincident spheres");
  check_sane(c, n, "coincident spheres");
}

static void sphere_capsule(void) {
  pt_shape a = shape(PT_SHAPE_SPHERE, 0.2, 0, 0), b = shape(PT_SHAPE_CAPSULE, 0.1, 1, 0);
  pt_pose pb = pose(0, 0, 0, 0, 1, 0, M_PI / 2), pa = pose(0.5, 0, 0.5, 0, 0, 0, 0);
  pt_contact c[8];
  int n = collide(c, &a, &pa, &b, &pb, 1);
  CHECK(n == 1 && fabs(c[0].gap - 0.2) < T, "sphere over a capsule's side: gap %g", c[0].gap);
  CHECK_VEC(c[0].normal, 0, 0, -1, T, "sphere-capsule normal");
  CHECK_VEC(c[0].pos, 0.5, 0, 0.2, T, "sphere-capsule pos");
  pa = pose(1.3, 0, 0.4, 0, 0, 0, 0);   // past the end: to the end's centre (1, 0, 0)
  n = collide(c, &a, &pa, &b, &pb, 1);
  CHECK(n == 1 && fabs(c[0].gap - 0.2) < T, "sphere past a capsule's end");
  CHECK_VEC(c[0].normal, -0.6, 0, -0.8, T, "sphere-capsule end normal");
  // the capsule first: the normal turns round
  n = collide(c, &b, &pb, &a, &pa, 1);
  CHECK_VEC(c[0].normal, 0.6, 0, 0.8, T, "capsule-sphere normal");
  pa = pose(0.3, 0, 0, 0, 0, 0, 0);   // centre on the axis: a normal across it
  n = collide(c, &a, &pa, &b, &pb, 0);
  CHECK(n == 1 && fabs(c[0].gap + 0.3) < T && fabs(c[0].normal[0]) < T,
        "sphere centred on a capsule's axis: gap %g", c[0].gap);
}

static void capsule_capsule(void) {
  pt_shape a = shape(PT_SHAPE_CAPSULE, 0.1, 1, 0), b = shape(PT_SHAPE_CAPSULE, 0.15, 1, 0);
  pt_pose pa = pose(0, 0, 0, 0, 1, 0, M_PI / 2);   // along x
  pt_pose pb = pose(0.2, 0.3, 0.5, 1, 0, 0, M_PI / 2);   // along y, above
  pt_contact c[8];
  int n = collide(c, &a, &pa, &b, &pb, 1);
  CHECK(n == 1, "crossing capsules: %d", n);
  CHECK_CLOSE(c[0].gap, 0.25, T, "crossing capsules gap");
  CHECK_VEC(c[0].normal, 0, 0, 1, T, "crossing capsules normal");
  CHECK_VEC(c[0].pos, 0.2, 0, 0.1 + 0.125, T, "crossing capsules pos");
  // parallel, overlapping over x in [-0.5, 1]: the two ends of the overlap
  pb = pose(0.5, 0, 0.2, 0, 1, 0, M_PI / 2);
  n = collide(c, &a, &pa, &b, &pb, 0);
  CHECK(n == 2, "parallel capsules: %d contacts", n);
  double xs[2] = {INFINITY, -INFINITY};
  for (int i = 0; i < n; i++) {
    CHECK_CLOSE(c[i].gap, -0.05, T, "parallel capsules gap");
    CHECK_VEC(c[i].normal, 0, 0, 1, T, "parallel capsules normal");
    CHECK_CLOSE(c[i].pos[2], 0.075, T, "parallel capsules pos z");
    xs[0] = fmin(xs[0], c[i].pos[0]), xs[1] = fmax(xs[1], c[i].pos[0]);
  }
  CHECK_CLOSE(xs[0], -0.5, T, "overlap start");
  CHECK_CLOSE(xs[1], 1, T, "overlap end");
  check_sane(c, n, "parallel capsules");
  // end to end on one line: the ends only
  pb = pose(2.3, 0, 0, 0, 1, 0, M_PI / 2);
  n = collide(c, &a, &pa, &b, &pb, 0.1);
  CHECK(n == 1 && fabs(c[0].gap - 0.05) < T, "collinear capsules: %d, gap %g", n, c[0].gap);
  CHECK_VEC(c[0].normal, 1, 0, 0, T, "collinear capsules normal");
  // axes meeting: the common perpendicular, full depth
  pb = pose(0, 0, 0, 1, 0, 0, M_PI / 2);
  n = collide(c, &a, &pa, &b, &pb, 0);
  CHECK(n == 1 && fabs(c[0].gap + 0.25) < T, "capsules through each other: gap %g", c[0].gap);
  CHECK(fabs(fabs(c[0].normal[2]) - 1) < T, "their normal: the common perpendicular");
}

// Box B: half sizes (1, 0.5, 0.25) turned 0.3 about z at (1, 2, 3); a sphere of radius 0.2 at
// local point cl: expected gap and local normal.
static void sphere_box_case(const double cl[3], double g, const double nl[3], const char *what) {
  pt_shape a = shape(PT_SHAPE_SPHERE, 0.2, 0, 0), b = shape(PT_SHAPE_BOX, 1, 0.5, 0.25);
  pt_pose pb = pose(1, 2, 3, 0, 0, 1, 0.3), pa = pose(0, 0, 0, 0, 0, 0, 0);
  ptu_mul_mat_vec3(pa.pos, pb.rot, cl);
  ptu_add3(pa.pos, pa.pos, pb.pos);
  pt_contact c[8];
  int n = collide(c, &a, &pa, &b, &pb, 1);
  CHECK(n == 1, "%s: %d contacts", what, n);
  double nw[3];
  ptu_mul_mat_vec3(nw, pb.rot, nl);
  CHECK_CLOSE(c[0].gap, g, T, what);
  CHECK_VEC(c[0].normal, nw[0], nw[1], nw[2], T, what);
  // the point: the sphere's surface point moved half the gap along the normal
  CHECK_VEC(c[0].pos, pa.pos[0] + (0.2 + g / 2) * nw[0], pa.pos[1] + (0.2 + g / 2) * nw[1],
            pa.pos[2] + (0.2 + g / 2) * nw[2], T, what);
}

static void sphere_box(void) {
  sphere_box_case((double[]){0.3, 0.1, 0.4}, -0.05, (double[]){0, 0, -1}, "sphere on a face");
  sphere_box_case((double[]){1.3, 0.1, 0.65}, 0.3, (double[]){-0.6, 0, -0.8}, "sphere by an edge");
  double s3 = 1 / 3.0;
  sphere_box_case((double[]){1.1, 0.7, 0.45}, 0.1, (double[]){-s3, -2 * s3, -2 * s3},
                  "sphere by a corner");
  sphere_box_case((double[]){0.9, 0.1, 0}, -0.3, (double[]){-1, 0, 0}, "sphere centre inside");
  sphere_box_case((double[]){0, 0, 0}, -0.45, (double[]){0, 0, -1}, "sphere centre at centre");
}

// Capsule (radius 0.1) on box B: half sizes (1, 0.5, 0.25) at pb; local centre, local axis.
static int capsule_box_case(pt_contact *c, const double cl[3], int axis, double half,
                            double margin) {
  pt_shape a = shape(PT_SHAPE_CAPSULE, 0.1, half, 0), b = shape(PT_SHAPE_BOX, 1, 0.5, 0.25);
  pt_pose pb = pose(0.5, -1, 2, 0, 0, 1, 0.3);
  pt_pose pl = pose(cl[0], cl[1], cl[2], axis == 0 ? 0 : 1, axis == 0 ? 1 : 0, 0,
                    axis == 2 ? 0 : M_PI / 2);   // z turned onto local x (about y) or y (about x)
  pt_pose pa;
  ptu_mul_mat_vec3(pa.pos, pb.rot, pl.pos);
  ptu_add3(pa.pos, pa.pos, pb.pos);
  ptu_mul_mat3(pa.rot, pb.rot, pl.rot);
  int n = collide(c, &a, &pa, &b, &pb, margin);
  for (int i = 0; i < n; i++) {   // back into the box frame
    double d[3];
    ptu_sub3(d, c[i].pos, pb.pos);
    ptu_mul_matT_vec3(c[i].pos, pb.rot, d);
    ptu_mul_matT_vec3(d, pb.rot, c[i].normal);
    ptu_copy(c[i].normal, d, 3);
  }
  check_sane(c, n, "capsule-box");
  return n;
}

static void capsule_box(void) {
  pt_contact c[8];
  int n = capsule_box_case(c, (double[]){0.2, 0.1, 0.34}, 0, 0.4, 0);   // lying on the top
  CHECK(n == 2, "capsule lying on a box: %d", n);
  for (int i = 0; i < n; i++) {
    CHECK_CLOSE(c[i].gap, -0.01, T, "lying capsule gap");
    CHECK_VEC(c[i].normal, 0, 0, -1, T, "lying capsule normal");
    CHECK_CLOSE(fabs(c[i].pos[0] - 0.2), 0.4, T, "lying capsule end");
    CHECK_CLOSE(c[i].pos[2], 0.245, T, "lying capsule pos z");
  }
  n = capsule_box_case(c, (double[]){0.9, 0.1, 0.34}, 0, 0.4, 0);   // over the edge x = 1
  CHECK(n == 2, "capsule over a box's edge: %d", n);
  double xs[2] = {INFINITY, -INFINITY};
  for (int i = 0; i < n; i++) xs[0] = fmin(xs[0], c[i].pos[0]), xs[1] = fmax(xs[1], c[i].pos[0]);
  CHECK(fabs(xs[0] - 0.5) < T && fabs(xs[1] - 1) < T, "overhang clipped: %g %g", xs[0], xs[1]);
  n = capsule_box_case(c, (double[]){0.2, 0.1, 0.77}, 2, 0.4, 0.05);   // upright, just above
  CHECK(n == 1 && fabs(c[0].gap - 0.02) < T, "upright capsule: %d, gap %g", n, c[0].gap);
  CHECK_VEC(c[0].pos, 0.2, 0.1, 0.26, T, "upright capsule pos");
  n = capsule_box_case(c, (double[]){1.3, 0, 0.65}, 1, 0.4, 0.5);   // along the edge, off it
  CHECK(n == 2, "capsule along a box edge: %d", n);
  for (int i = 0; i < n; i++) {
    CHECK_CLOSE(c[i].gap, 0.4, T, "capsule along an edge gap");
    CHECK_VEC(c[i].normal, -0.6, 0, -0.8, T, "capsule along an edge normal");
  }
  n = capsule_box_case(c, (double[]){0, 0, 0.2}, 0, 2, 0);   // its core through the box
  CHECK(n == 2, "capsule through a box: %d", n);
  for (int i = 0; i < n; i++) {
    CHECK_CLOSE(c[i].gap, -0.15, T, "capsule through a box: gap");
    CHECK_VEC(c[i].normal, 0, 0, -1, T, "capsule through a box: normal");
    CHECK_CLOSE(fabs(c[i].pos[0]), 1, T, "capsule through a box: clipped at the faces");
  }
}

static void sphere_cylinder_case(const double cl[3], double g, const double nl[3],
                                 const char *what) {
  pt_shape a = shape(PT_SHAPE_SPHERE, 0.1, 0, 0), b = shape(PT_SHAPE_CYLINDER, 0.3, 0.5, 0);
  pt_pose pb = pose(-1, 0.5, 0.2, 1, 1, 0, 0.8), pa = pose(0, 0, 0, 0, 0, 0, 0);
  ptu_mul_mat_vec3(pa.pos, pb.rot, cl);
  ptu_add3(pa.pos, pa.pos, pb.pos);
  pt_contact c[8];
  int n = collide(c, &a, &pa, &b, &pb, 1);
  double nw[3];
  ptu_mul_mat_vec3(nw, pb.rot, nl);
  CHECK(n == 1, "%s: %d contacts", what, n);
  CHECK_CLOSE(c[0].gap, g, T, what);
  CHECK_VEC(c[0].normal, nw[0], nw[1], nw[2], T, what);
}

static void sphere_cylinder(void) {
  sphere_cylinder_case((double[]){0.5, 0, 0.1}, 0.1, (double[]){-1, 0, 0}, "by the side");
  sphere_cylinder_case((double[]){0.1, 0.1, 0.7}, 0.1, (double[]){0, 0, -1}, "over the cap");
  sphere_cylinder_case((double[]){0.6, 0, 0.9}, 0.4, (double[]){-0.6, 0, -0.8}, "by the rim");
  sphere_cylinder_case((double[]){0.25, 0, 0}, -0.15, (double[]){-1, 0, 0}, "inside, side");
  sphere_cylinder_case((double[]){0, 0.1, 0.45}, -0.15, (double[]){0, 0, -1}, "inside, cap");
  sphere_cylinder_case((double[]){0, 0, 0}, -0.4, (double[]){-1, 0, 0}, "at the centre");
}

static void box_box(void) {
  pt_shape big = shape(PT_SHAPE_BOX, 1, 1, 0.5), small = shape(PT_SHAPE_BOX, 0.3, 0.2, 0.1);
  pt_pose pa = pose(0, 0, 0, 0, 0, 0, 0), pb = pose(0.2, 0.1, 0.599, 0, 0, 1, 0.5);
  pt_contact c[8];
  int n = collide(c, &big, &pa, &small, &pb, 0);   // a small box resting on a big one
  CHECK(n == 4, "box on a box: %d contacts", n);
  for (int i = 0; i < n; i++) {
    int id = PT_FEATURE_B(c[i].id) & 7;
    double xl[3] = {id & 1 ? 0.3 : -0.3, id & 2 ? 0.2 : -0.2, -0.1}, x[3];
    ptu_mul_mat_vec3(x, pb.rot, xl);
    CHECK_CLOSE(c[i].gap, -0.001, T, "box on a box gap");
    CHECK_VEC(c[i].normal, 0, 0, 1, T, "box on a box normal");
    CHECK_VEC(c[i].pos, 0.2 + x[0], 0.1 + x[1], 0.4995, T, "box on a box corner");
  }
  check_sane(c, n, "box on a box");
  // the big one on the small one: the small one's top corners, clipped out of the big face
  pt_pose pc = pose(0, 0, 0.598, 0, 0, 0, 0);
  n = collide(c, &small, &pa, &big, &pc, 0);
  CHECK(n == 4, "big box on a small one: %d contacts", n);
  for (int i = 0; i < n; i++) {
    CHECK_CLOSE(c[i].gap, -0.002, T, "big on small gap");
    CHECK_CLOSE(fabs(c[i].pos[0]), 0.3, T, "big on small corner x");
    CHECK_CLOSE(fabs(c[i].pos[1]), 0.2, T, "big on small corner y");
    CHECK_CLOSE(c[i].pos[2], 0.099, T, "big on small corner z");
  }
  check_sane(c, n, "big on small");
  // within the margin, face to face: the same four points with a positive gap
  pb = pose(0.2, 0.1, 0.62, 0, 0, 1, 0.5);
  n = collide(c, &big, &pa, &small, &pb, 0.05);
  CHECK(n == 4, "boxes 0.02 apart: %d contacts", n);
  for (int i = 0; i < n; i++) CHECK_CLOSE(c[i].gap, 0.02, T, "boxes apart gap");
  CHECK(collide(c, &big, &pa, &small, &pb, 0.01) == 0, "boxes beyond the margin");
  // edge on edge, crossed: cubes of side 1 turned 45 degrees about x and about y
  pt_shape cube = shape(PT_SHAPE_BOX, 0.5, 0.5, 0.5);
  double e = sqrt(0.5);
  pa = pose(0, 0, 0, 1, 0, 0, M_PI / 4);
  pb = pose(0, 0, 2 * e - 0.01, 0, 1, 0, M_PI / 4);
  n = collide(c, &cube, &pa, &cube, &pb, 0);
  CHECK(n == 1, "crossed edges: %d contacts", n);
  CHECK_CLOSE(c[0].gap, -0.01, T, "crossed edges gap");
  CHECK_VEC(c[0].normal, 0, 0, 1, T, "crossed edges normal");
  CHECK_VEC(c[0].pos, 0, 0, e - 0.005, T, "crossed edges pos");
  // corner to corner, apart along the diagonal: the true distance (not the axes' bound 0.1)
  pa = pose(0, 0, 0, 0, 0, 0, 0);
  pb = pose(1.1, 1.1, 1.1, 0, 0, 0, 0);
  n = collide(c, &cube, &pa, &cube, &pb, 0.2);
  CHECK(n == 1 && fabs(c[0].gap - 0.1 * sqrt(3)) < 1e-12, "corners apart: %d, gap %.15g", n,
        c[0].gap);
  CHECK_VEC(c[0].normal, 1 / sqrt(3), 1 / sqrt(3), 1 / sqrt(3), 1e-12, "corners apart normal");
  CHECK(collide(c, &cube, &pa, &cube, &pb, 0.15) == 0, "corners beyond the margin");
  // deep: overlapping by 0.7 along x
  pb = pose(0.3, 0, 0, 0, 0, 0, 0);
  n = collide(c, &cube, &pa, &cube, &pb, 0);
  CHECK(n == 4, "deep boxes: %d", n);
  for (int i = 0; i < n; i++) {
    CHECK_CLOSE(c[i].gap, -0.7, T, "deep boxes gap");
    CHECK_VEC(c[i].normal, 1, 0, 0, T, "deep boxes normal");
  }
  pb = pa;   // coincident
  n = collide(c, &cube, &pa, &cube, &pb, 0);
  CHECK(n >= 1, "coincident boxes: %d", n);
  check_sane(c, n, "coincident boxes");
  for (int i = 0; i < n; i++) CHECK_CLOSE(c[i].gap, -1, T, "coincident boxes gap");
}

// Through GJK/EPA: cylinders against boxes, capsules and each other.
static void convex_pairs(void) {
  pt_shape box = shape(PT_SHAPE_BOX, 1, 1, 0.5), cyl = shape(PT_SHAPE_CYLINDER, 0.3, 0.4, 0);
  pt_pose pa = pose(0, 0, 0, 0, 0, 0, 0), pb = pose(0.1, 0.2, 0.899, 0, 0, 1, 0.2);
  pt_contact c[8];
  int n = collide(c, &box, &pa, &cyl, &pb, 0);   // standing on the box: rim points
  CHECK(n == 4, "cylinder standing on a box: %d contacts", n);
  for (int i = 0; i < n; i++) {
    CHECK_CLOSE(c[i].gap, -0.001, 1e-12, "standing cylinder gap");
    CHECK_VEC(c[i].normal, 0, 0, 1, 1e-12, "standing cylinder normal");
    double dx = c[i].pos[0] - 0.1, dy = c[i].pos[1] - 0.2;
    CHECK_CLOSE(sqrt(dx * dx + dy * dy), 0.3, 1e-12, "standing cylinder: on the rim");
  }
  check_sane(c, n, "cylinder on a box");
  pb = pose(0.1, 0.2, 0.799, 0, 1, 0, M_PI / 2);   // lying along x
  n = collide(c, &box, &pa, &cyl, &pb, 0);
  CHECK(n == 2, "cylinder lying on a box: %d contacts", n);
  for (int i = 0; i < n; i++) {
    CHECK_CLOSE(c[i].gap, -0.001, 1e-12, "lying cylinder gap");
    CHECK_CLOSE(fabs(c[i].pos[0] - 0.1), 0.4, 1e-12, "lying cylinder: its ends");
  }
  // a capsule across the top of a cylinder: the segment clipped by the cap's rim polygon
  pt_shape cap = shape(PT_SHAPE_CAPSULE, 0.1, 0.5, 0);
  pt_pose pc = pose(0, 0, 1, 1, 0, 0, M_PI / 2), pz = pose(0, 0, 0, 0, 0, 0, 0);
  n = collide(c, &cap, &pc, &cyl, &pz, 0.6);
  CHECK(n == 2, "capsule across a cylinder: %d", n);
  for (int i = 0; i < n; i++) {
    CHECK_CLOSE(c[i].gap, 1 - 0.4 - 0.1, 1e-12, "capsule across a cylinder: gap");
    CHECK_VEC(c[i].normal, 0, 0, -1, 1e-12, "capsule across a cylinder: normal");
    CHECK_CLOSE(fabs(c[i].pos[1]), 0.3, 1e-12, "capsule across a cylinder: at the rim");
  }
  // two cylinders stacked on their caps
  pt_pose pd = pose(0.05, 0, 0.799, 0, 0, 1, 0.1);
  n = collide(c, &cyl, &pz, &cyl, &pd, 0);
  CHECK(n >= 3, "stacked cylinders: %d contacts", n);
  for (int i = 0; i < n; i++) CHECK_CLOSE(c[i].gap, -0.001, 1e-12, "stacked cylinders gap");
  check_sane(c, n, "stacked cylinders");
  // crossed on their sides (axes x and y): one point, the depth by EPA on curved surfaces
  pt_pose px = pose(0, 0, 0, 0, 1, 0, M_PI / 2), py = pose(0, 0, 0.598, 1, 0, 0, M_PI / 2);
  n = collide(c, &cyl, &px, &cyl, &py, 0);
  CHECK(n == 1, "crossed cylinders: %d", n);
  CHECK_CLOSE(c[0].gap, -0.002, 1e-6, "crossed cylinders gap");
  CHECK_VEC(c[0].normal, 0, 0, 1, 1e-3, "crossed cylinders normal");
  n = collide(c, &cyl, &px, &cyl, &py, 0);
  // apart by 0.01 within the margin: GJK on curved surfaces
  py = pose(0, 0, 0.61, 1, 0, 0, M_PI / 2);
  n = collide(c, &cyl, &px, &cyl, &py, 0.05);
  CHECK(n == 1 && fabs(c[0].gap - 0.01) < 1e-9, "crossed cylinders apart: %d, gap %.12g", n,
        c[0].gap);
}

// Touching: each closed-form pair placed so that its surfaces just meet (gap 0), reported
// within a margin of 1e-9 with gap 0 to rounding, and not without a margin when 1e-9 apart.
static void touching(void) {
  pt_shape pl = shape(PT_SHAPE_PLANE, 0, 0, 0), sp = shape(PT_SHAPE_SPHERE, 0.3, 0, 0);
  pt_shape ca = shape(PT_SHAPE_CAPSULE, 0.1, 0.5, 0), bx = shape(PT_SHAPE_BOX, 0.5, 0.4, 0.3);
  pt_shape cy = shape(PT_SHAPE_CYLINDER, 0.2, 0.25, 0);
  const pt_pose I0 = pose(0, 0, 0, 0, 0, 0, 0);
  const struct {
    const pt_shape *a, *b;
    pt_pose pa, pb;
    int n;   // contacts when touching
    const char *what;
  } cases[] = {
      {&pl, &ca, I0, pose(0, 0, 0.1, 0, 1, 0, M_PI / 2), 2, "plane-capsule flat"},
      {&pl, &cy, I0, pose(0, 0, 0.25, 0, 0, 1, 0.3), 3, "plane-cylinder standing"},
      {&sp, &ca, I0, pose(0, 0, 0.4, 0, 1, 0, M_PI / 2), 1, "sphere-capsule side"},
      {&ca, &ca, pose(0, 0, 0, 1, 0, 0, M_PI / 2), pose(0, 0, 0.2, 0, 1, 0, M_PI / 2), 1,
       "crossed capsules"},
      {&sp, &bx, I0, pose(0.1, 0.1, 0.6, 0, 0, 0, 0), 1, "sphere-box face"},
      {&bx, &ca, I0, pose(0.1, 0, 0.4, 0, 1, 0, M_PI / 2), 2,
       "capsule lying on a box"},
      {&bx, &bx, pose(0, 0, 0, 0, 0, 0, 0), pose(0.2, 0.1, 0.6, 0, 0, 0, 0), 4,
       "box on a box"},
      {&sp, &cy, I0, pose(0, 0, 0.55, 0, 0, 0, 0), 1, "sphere on a cylinder's cap"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    pt_pose pa = cases[i].pa, pb = cases[i].pb;
    pt_contact c[8];
    int n = collide(c, cases[i].a, &pa, cases[i].b, &pb, 1e-9);
    CHECK(n == cases[i].n, "%s: %d contacts touching, want %d", cases[i].what, n, cases[i].n);
    for (int k = 0; k < n; k++) CHECK_CLOSE(c[k].gap, 0, T, cases[i].what);
    check_sane(c, n, cases[i].what);
    pb.pos[2] += 1e-9;   // apart by 1e-9 (every case's B sits above A)
    n = collide(c, cases[i].a, &pa, cases[i].b, &pb, 0);
    CHECK(n == 0, "%s: %d contacts 1e-9 apart without a margin", cases[i].what, n);
  }
}

int main(void) {
  pt_collide_work_init(&work);
  plane_sphere();
  plane_capsule();
  plane_box();
  plane_cylinder();
  sphere_sphere();
  sphere_capsule();
  capsule_capsule();
  sphere_box();
  capsule_box();
  sphere_cylinder();
  box_box();
  convex_pairs();
  touching();
  CHECK(work.epa_capped == 0 && work.gjk_capped == 0, "caps hit: EPA %ld, GJK %ld",
        work.epa_capped, work.gjk_capped);
  return finish("collide closed forms");
}
