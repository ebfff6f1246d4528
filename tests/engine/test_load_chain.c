// test_load_chain: long chains compile by their block structure and come out right. A spatial
// chain of 400 revolute links (axes alternating y, x) loads with 400 degrees of freedom, every
// joint row kept, zero residuals and no warning; in the default mode its independent
// coordinates are its joint coordinates (a tree of any size steps on them, with no Newton
// iteration); in LU mode each body's independent coordinate is the Euler parameter of its own
// joint axis (e2 for y, e1 for x: the one a rotation about that axis moves), as on a 40-link
// chain; it steps while conserving energy. A long chain with a
// duplicated joint still has its redundant rows found and named (the dense decision decides
// where the blocks cannot). Times are the business of tests/bench/bench_load.c, not of this test.
#include "chain_urdf.h"
#include "check.h"

// n links (0.1 m, 0.1 kg rods along x) hanging from the ground; dup: a second hinge j<n-1>b
// on the last joint (5 redundant rows).
static char *chain_urdf(int n, int dup) {
  char *t = dup ? NULL : chain_urdf_rods(n);   // tests/common/chain_urdf.c
  if (!dup && !t) exit(1);
  size_t cap, k;
  if (dup) {  // YAML for the duplicate (URDF has one parent per link)
    cap = 512 + (size_t)(n + 1) * 400, k = 0;
    t = malloc(cap);
    if (!t) exit(1);
    k += (size_t)snprintf(t + k, cap - k, "model: dup%d\nbodies:\n", n);
    for (int i = 0; i < n; i++)
      k += (size_t)snprintf(t + k, cap - k,
                            "  - {name: l%d, mass: 0.1, inertia: [1e-5, 8.3e-5, 8.3e-5], "
                            "position: [%.3f, 0, 0]}\n", i, 0.1 * i + 0.05);
    k += (size_t)snprintf(t + k, cap - k, "joints:\n");
    for (int i = 0; i <= n; i++) {
      const int c = i < n ? i : n - 1;
      char parent[16] = "ground";
      if (c) snprintf(parent, sizeof(parent), "l%d", c - 1);
      k += (size_t)snprintf(t + k, cap - k,
                            "  - {name: j%d%s, type: revolute, body1: %s, body2: l%d, "
                            "point: [%.3f, 0, 0], axis: [%d, %d, 0]}\n",
                            c, i < n ? "" : "b", parent, c, 0.1 * c, c % 2, 1 - c % 2);
    }
  }
  return t;
}

static pt_model *load(const char *text, int format) {
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_string(text, strlen(text), format, "chain", NULL, &m, &err)) {
    printf("FAIL load: %s\n", err.msg);
    exit(1);
  }
  return m;
}

// every body's independent coordinate is l<i>.e1 (axis x, odd i) or l<i>.e2 (axis y, even i)
static void check_independent(const pt_model *m, const pt_data *d, int n, const char *what) {
  const char **names = calloc((size_t)n + 1, sizeof(char *));
  const int nd = pt_independent(m, d, names, n);
  CHECK(nd == n, "%s: %d independent coordinates", what, nd);
  int bad = 0;
  for (int i = 0; i < n && i < nd; i++) {
    char want[32];
    snprintf(want, sizeof(want), "l%d.e%d", i, i % 2 ? 1 : 2);
    if (!names[i] || strcmp(names[i], want) != 0) {
      if (bad++ < 3) CHECK(0, "%s: independent %d is %s, want %s", what, i, names[i], want);
    }
  }
  CHECK(bad == 0, "%s: %d independent coordinates differ from the joint axes", what, bad);
  free(names);
}

// in hybrid mode a tree is integrated in its joint coordinates, and those are named
static void check_joint_names(const pt_model *m, const pt_data *d, int n, const char *what) {
  const char **names = calloc((size_t)n + 1, sizeof(char *));
  const int nd = pt_independent(m, d, names, n);
  CHECK(nd == n, "%s: %d independent coordinates", what, nd);
  int bad = 0;
  for (int i = 0; i < n && i < nd; i++) {
    char want[32];
    snprintf(want, sizeof(want), "j%d", i);
    if ((!names[i] || strcmp(names[i], want) != 0) && bad++ < 3)
      CHECK(0, "%s: independent %d is %s, want %s", what, i, names[i], want);
  }
  CHECK(bad == 0, "%s: %d independent coordinates are not the joint coordinates", what, bad);
  free(names);
}

int main(void) {
  // 1. 400 links
  const int n = 400;
  char *text = chain_urdf(n, 0);
  pt_model *m = load(text, 2);
  free(text);
  CHECK(pt_model_ndof(m) == n, "dof %d", pt_model_ndof(m));
  CHECK(pt_model_nconstraint(m) == 5 * n, "constraint rows %d (every joint row kept)",
        pt_model_nconstraint(m));
  CHECK(strcmp(pt_model_warnings(m), "") == 0, "warnings: %s", pt_model_warnings(m));
  // a tree's data holds no dense Cartesian-partition work (nq x nq: 316 MB here before)
  CHECK(pt_data_bytes(m) < 20000 * (size_t)n, "data of %zu bytes for %d links",
        pt_data_bytes(m), n);
  pt_data *d = pt_data_new(m);
  CHECK(d != NULL, "data");
  CHECK(pt_residual_position(d) <= 1e-12, "position residual %.3g", pt_residual_position(d));
  CHECK(pt_residual_velocity(d) <= 1e-12, "velocity residual %.3g", pt_residual_velocity(d));
  check_joint_names(m, d, n, "400 links, hybrid");

  // the default (hybrid) mode integrates the tree in its joint coordinates whatever its
  // size: no Newton iteration, no rebuild, no QR switch; the chain falls from horizontal and
  // the energy stays (scale: m g L over the links)
  const double e0 = energy(d), escale = n * 0.1 * 9.81 * 0.1 * n / 2;
  {
    pt_data *t = pt_data_new(m);
    CHECK(t != NULL, "400 links: data");
    for (int s = 0; t && s < 10; s++) CHECK(pt_step(m, t) == 0, "tree step %d", s);
    pt_counters c;
    pt_get_counters(t, &c);
    CHECK(c.newton_iters == 0 && c.repartitions == 0 && c.qr_switches == 0 && c.method == 0,
          "400 links, hybrid: Newton %lld, rebuilds %lld, QR switches %lld",
          (long long)c.newton_iters, (long long)c.repartitions, (long long)c.qr_switches);
    CHECK(pt_residual_position(t) <= 1e-12, "tree: position residual %.3g",
          pt_residual_position(t));
    CHECK(fabs(energy(t) - e0) <= 1e-8 * escale, "tree: energy change %.3g (scale %.3g)",
          energy(t) - e0, escale);
    pt_data_free(t);
  }

  // a few steps on the Cartesian LU partition (Newton on the rows), built by body blocks
  CHECK(pt_set_partition_mode(d, PT_MODE_LU) == 0, "LU mode");
  CHECK(pt_forward(m, d) == 0, "LU mode: forward");
  check_independent(m, d, n, "400 links, LU mode");
  for (int s = 0; s < 10; s++) CHECK(pt_step(m, d) == 0, "step %d", s);
  CHECK(pt_time(d) > 0.009, "time %.4f", pt_time(d));
  CHECK(pt_residual_position(d) <= 1e-9, "position residual after steps %.3g",
        pt_residual_position(d));
  CHECK(pt_residual_velocity(d) <= 1e-9, "velocity residual after steps %.3g",
        pt_residual_velocity(d));
  CHECK(fabs(energy(d) - e0) <= 1e-8 * escale, "energy change %.3g (scale %.3g)",
        energy(d) - e0, escale);
  pt_data_free(d);
  pt_model_free(m);

  // 2. 40 links: the same choice per body
  text = chain_urdf(40, 0);
  m = load(text, 2);
  free(text);
  d = pt_data_new(m);
  check_joint_names(m, d, 40, "40 links, hybrid");
  CHECK(pt_set_partition_mode(d, PT_MODE_LU) == 0 && pt_forward(m, d) == 0, "40 links: LU");
  check_independent(m, d, 40, "40 links, LU mode");
  pt_data_free(d);
  pt_model_free(m);

  // 3. a 60-link chain with its last joint twice: 5 redundant rows named, 60 dof
  text = chain_urdf(60, 1);
  m = load(text, 1);
  free(text);
  CHECK(pt_model_ndof(m) == 60, "dup: dof %d", pt_model_ndof(m));
  CHECK(pt_model_nconstraint(m) == 5 * 60, "dup: constraint rows %d", pt_model_nconstraint(m));
  CHECK(strstr(pt_model_warnings(m), "removed 5 redundant constraint rows: j59") != NULL,
        "dup: warnings: %s", pt_model_warnings(m));
  d = pt_data_new(m);
  CHECK(pt_residual_position(d) <= 1e-12, "dup: position residual %.3g",
        pt_residual_position(d));
  for (int s = 0; s < 5; s++) CHECK(pt_step(m, d) == 0, "dup: step %d", s);
  pt_data_free(d);
  pt_model_free(m);
  return finish("load_chain");
}
