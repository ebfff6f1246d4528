// The broad phase and the real-time rules of src/collide: candidate pairs fixed at load and
// culled per step, no allocation in any per-step function (the counting allocator of
// tests/engine), the same bits from the same inputs, finite answers on degenerate input (every
// pair of shape types on one centre), bounded loops on non-finite input, refused shapes, and
// contact ids that stay put while a resting contact jitters.
#include "collide_test.h"
#include "count_alloc.h"

static void refusals(void) {
  struct {
    int type;
    double s[3];
    const char *msg;
  } bad[] = {{PT_SHAPE_SPHERE, {0, 0, 0}, "radius must be > 0"},
             {PT_SHAPE_SPHERE, {-1, 0, 0}, "radius must be > 0"},
             {PT_SHAPE_SPHERE, {NAN, 0, 0}, "finite"},
             {PT_SHAPE_CAPSULE, {0.1, -1, 0}, "length >= 0"},
             {PT_SHAPE_BOX, {1, 0, 1}, "every size must be > 0"},
             {PT_SHAPE_CYLINDER, {1, 0, 0}, "radius and length must be > 0"},
             {PT_SHAPE_HULL, {0, 0, 0}, "no hull"},
             {PT_SHAPE_NTYPES, {1, 1, 1}, "unknown shape type"}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    pt_shape s = {.type = bad[i].type, .size = {bad[i].s[0], bad[i].s[1], bad[i].s[2]},
                  .quat = {1, 0, 0, 0}};
    pt_error err = {0};
    CHECK(pt_shape_init(&s, &err) == PT_EINVAL && strstr(err.msg, bad[i].msg),
          "refusal %zu: \"%s\"", i, err.msg);
  }
  pt_shape s = {.type = PT_SHAPE_SPHERE, .size = {1, 0, 0}};   // quaternion zero
  pt_error err = {0};
  CHECK(pt_shape_init(&s, &err) == PT_EINVAL && strstr(err.msg, "quaternion"), "zero quat: %s",
        err.msg);
  pt_shape c = {.type = PT_SHAPE_CAPSULE, .size = {0.1, 0, 0}, .quat = {2, 0, 0, 0}};
  CHECK(pt_shape_init(&c, &err) == PT_OK && c.quat[0] == 1, "capsule of length 0 (a sphere)");
}

static void pairs(void) {
  // shapes: ground plane, body 0 twice, body 1, body 2, a ground box
  const int body[6] = {-1, 0, 0, 1, 2, -1};
  const int exclude[2] = {1, 0};   // bodies 0 and 1 (written the other way round)
  int pair[2 * 16];
  int n = pt_collide_pairs(pair, 16, body, 6, exclude, 1);
  const int want[][2] = {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 4}, {1, 5}, {2, 4}, {2, 5},
                         {3, 4}, {3, 5}, {4, 5}};
  int nw = (int)(sizeof(want) / sizeof(want[0]));
  CHECK(n == nw, "candidate pairs: %d, want %d", n, nw);
  for (int i = 0; i < n && i < nw; i++)
    CHECK(pair[2 * i] == want[i][0] && pair[2 * i + 1] == want[i][1], "pair %d: %d %d", i,
          pair[2 * i], pair[2 * i + 1]);
  CHECK(pt_collide_pairs(NULL, 0, body, 6, exclude, 1) == nw, "counting call");
  // culling: a plane against bounding spheres, spheres against each other
  pt_shape sh[6] = {shape(PT_SHAPE_PLANE, 0, 0, 0), shape(PT_SHAPE_SPHERE, 0.5, 0, 0),
                    shape(PT_SHAPE_BOX, 0.1, 0.1, 0.1), shape(PT_SHAPE_SPHERE, 0.5, 0, 0),
                    shape(PT_SHAPE_CAPSULE, 0.1, 1, 0), shape(PT_SHAPE_BOX, 1, 1, 1)};
  pt_pose ps[6] = {pose(0, 0, 0, 0, 0, 0, 0), pose(0, 0, 0.6, 0, 0, 0, 0),
                   pose(0, 0, 3, 0, 0, 0, 0), pose(0, 0, 10, 0, 0, 0, 0),
                   pose(0, 1.1, 0.6, 0, 0, 0, 0), pose(10, 10, 10, 0, 0, 0, 0)};
  int active[16];
  int na = pt_collide_broad(active, pair, n, sh, ps, 0.2);
  // near: plane-sphere1 (0.6 - 0.5 < 0.2), plane-capsule (0.6 - 1.1 < 0), sphere1-capsule
  // (distance 1.1 < 0.5 + 1.1 + 0.2)
  CHECK(na == 3 && active[0] == 0 && active[1] == 3 && active[2] == 4,
        "culled: %d active (%d %d %d)", na, active[0], active[1], active[2]);
  na = pt_collide_broad(active, pair, n, sh, ps, 0.05);
  CHECK(na == 2, "smaller margin: %d active", na);
}

// A scene: ground, boxes, spheres, capsules, cylinders and hulls tumbling over each other.
enum { NS = 12 };
static pt_shape sh[NS];
static int body[NS], pair[2 * NS * NS], npair;
static pt_hull *hulls[2];

static void scene_build(void) {
  const double hb[3] = {0.2, 0.15, 0.1};
  hulls[0] = box_hull(hb);
  double pts[3 * 60];
  for (int i = 0; i < 60; i++)
    for (int k = 0; k < 3; k++) pts[3 * i + k] = 0.2 * (2 * urand() - 1);
  pt_error err = {0};
  CHECK(pt_hull_build(&hulls[1], pts, 60, 0, &err) == PT_OK, "scene hull: %s", err.msg);
  sh[0] = shape(PT_SHAPE_PLANE, 0, 0, 0);
  body[0] = -1;
  for (int i = 1; i < NS; i++) {
    int t = 1 + (i - 1) % 5;
    sh[i] = t == PT_SHAPE_HULL ? hull_shape(hulls[i % 2])
                               : shape(t, 0.1 + 0.05 * (i % 3), 0.15, 0.12);
    body[i] = i - 1;
  }
  npair = pt_collide_pairs(pair, NS * NS, body, NS, NULL, 0);
}

static void scene_poses(pt_pose *p, int step) {
  p[0] = pose(0, 0, 0, 0, 0, 0, 0);
  for (int i = 1; i < NS; i++) {   // in a 0.8 m box above the ground, turning with the step
    double x = 0.3 * sin(0.1 * step + i), y = 0.3 * cos(0.07 * step + 2 * i);
    double z = 0.15 + 0.2 * fabs(sin(0.05 * step + 3 * i));
    p[i] = pose(x, y, z, sin(i), cos(i), 0.3, 0.02 * step + i);
  }
}

static void no_allocation(void) {
  pt_pose ps[NS];
  pt_contact con[64];
  int active[NS * NS];
  long allocs = 0, total = 0;
  count_alloc_install();
  for (int step = 0; step < 300; step++) {
    scene_poses(ps, step);
    count_alloc_n = 0;
    count_alloc_on = 1;
    int n = pt_collide_scene(con, 64, 4, active, pair, npair, sh, ps, 0.01, &work);
    pt_contact one[8];
    n += pt_collide(one, 8, &sh[1], &ps[1], &sh[5], &ps[5], 1, &work);   // hull, always GJK
    count_alloc_on = 0;
    allocs += count_alloc_n;
    total += n;
  }
  printf("scene: %d candidate pairs, %ld contacts in 300 steps, %ld allocations\n", npair,
         total, allocs);
  CHECK(total > 300, "the scene should touch: %ld contacts", total);
  CHECK(allocs == 0, "%ld allocations in the per-step functions", allocs);
}

static void deterministic(void) {
  static pt_collide_work w2;
  pt_collide_work_init(&w2);
  pt_pose ps[NS];
  pt_contact c1[64], c2[64];
  int active[NS * NS];
  for (int step = 0; step < 100; step++) {
    scene_poses(ps, step);
    memset(c1, 0, sizeof(c1));
    memset(c2, 0xab, sizeof(c2));   // different garbage: nothing unwritten may show through
    int n1 = pt_collide_scene(c1, 64, 4, active, pair, npair, sh, ps, 0.01, &work);
    int n2 = pt_collide_scene(c2, 64, 4, active, pair, npair, sh, ps, 0.01, &w2);
    CHECK(n1 == n2, "step %d: %d then %d contacts", step, n1, n2);
    int same = 1;
    for (int i = 0; i < n1 && i < 64; i++)
      same &= !memcmp(c1[i].pos, c2[i].pos, sizeof(c1[i].pos)) &&
              !memcmp(c1[i].normal, c2[i].normal, sizeof(c1[i].normal)) &&
              !memcmp(&c1[i].gap, &c2[i].gap, sizeof(double)) && c1[i].id == c2[i].id &&
              c1[i].pair == c2[i].pair;
    CHECK(same, "step %d: not the same bits", step);
  }
  // overflow: the count goes on past the buffer
  scene_poses(ps, 7);
  int all = pt_collide_scene(c1, 64, 4, active, pair, npair, sh, ps, 0.5, &work);
  int few = pt_collide_scene(c2, 2, 4, active, pair, npair, sh, ps, 0.5, &work);
  CHECK(all == few && all > 2, "overflow: %d found with room, %d without", all, few);
  CHECK(!memcmp(c1, c2, 2 * sizeof(pt_contact)), "overflow: the first contacts kept");
}

// Every pair of types on one centre (and one axis): finite contacts with unit normals.
static void degenerate(void) {
  const double hb[3] = {0.2, 0.2, 0.2};
  pt_hull *h = box_hull(hb);
  pt_shape all[6] = {shape(PT_SHAPE_PLANE, 0, 0, 0), shape(PT_SHAPE_SPHERE, 0.2, 0, 0),
                     shape(PT_SHAPE_CAPSULE, 0.1, 0.3, 0), shape(PT_SHAPE_BOX, 0.2, 0.2, 0.2),
                     shape(PT_SHAPE_CYLINDER, 0.2, 0.2, 0), hull_shape(h)};
  pt_shape zero_cap = shape(PT_SHAPE_CAPSULE, 0.2, 0, 0);
  pt_pose p = pose(0.1, 0.2, 0.3, 0, 0, 0, 0);
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) {
      pt_contact c[8];
      int n = collide(c, &all[i], &p, &all[j], &p, 0);
      char what[64];
      snprintf(what, sizeof(what), "%s on %s", pt_shape_type_name(all[i].type),
               pt_shape_type_name(all[j].type));
      CHECK(n >= 1 || (i == 0 && j == 0), "%s: no contact", what);
      check_sane(c, n, what);
      n = collide(c, &zero_cap, &p, &all[j], &p, 0);
      check_sane(c, n, "zero-length capsule");
    }
  // non-finite poses: the loops end (their caps), whatever comes out
  pt_pose bad = pose(NAN, 0, 0, 0, 0, 0, 0);
  for (int i = 1; i < 6; i++)
    for (int j = 1; j < 6; j++) {
      pt_contact c[8];
      int n = collide(c, &all[i], &p, &all[j], &bad, 0);
      CHECK(n >= 0 && n <= PT_COLLIDE_MAX_POINTS, "NaN pose: %d", n);
    }
  free(h);
}

// A box resting on a box, jittering by 1e-9 rad and 1e-9 m: the same four ids every step.
static void stable_ids(void) {
  pt_shape big = shape(PT_SHAPE_BOX, 1, 1, 0.5), small = shape(PT_SHAPE_BOX, 0.3, 0.2, 0.1);
  pt_pose pa = pose(0, 0, 0, 0, 0, 0, 0);
  uint32_t ids[4] = {0};
  int changed = 0;
  for (int step = 0; step < 50; step++) {
    double e = 1e-9 * sin(1.7 * step);
    pt_pose pb = pose(0.2 + e, 0.1, 0.599 + e, e, -e, 1, 0.5 + e);
    pt_contact c[8];
    int n = collide(c, &big, &pa, &small, &pb, 0);
    CHECK(n == 4, "step %d: %d contacts", step, n);
    for (int i = 0; i < 4 && i < n; i++) {
      if (step == 0) ids[i] = c[i].id;
      int found = 0;
      for (int j = 0; j < 4; j++) found |= c[i].id == ids[j];
      changed += !found;
    }
  }
  CHECK(changed == 0, "resting box: %d id changes", changed);
}

int main(void) {
  srand(21);
  pt_collide_work_init(&work);
  refusals();
  pairs();
  scene_build();
  no_allocation();
  deterministic();
  degenerate();
  stable_ids();
  free(hulls[0]);
  free(hulls[1]);
  return finish("collide scene");
}
