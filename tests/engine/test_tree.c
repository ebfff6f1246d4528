// The tree partition (src/core/tree.c, issue 10): on a tree of revolute, prismatic and fixed joints
// the joint coordinates are the independent set and q follows by forward kinematics. Checked
// against the Cartesian LU partition (Newton on the rows, an independent computation of the
// same ODE): the two trajectories agree to the integration error, the tree partition holds the
// constraints to round-off, never rebuilds and needs no Newton iteration, and the energy is
// conserved as well as with LU. The accelerations of the tree partition by the articulated-body
// algorithm (tree.c) and by W = J M^-1 J^T (dynamics.c) give the same trajectory and the same
// multipliers to round-off.
#include "check.h"
#include "engine.h"
#include "partition.h"  // pt_lambda

// The double pendulum with every joint's bodies swapped (the child is body1, ground is body2):
// the tree's other orientation (tree_child 0), where signs differ.
static const char reversed_yaml[] =
    "model: double_pendulum_reversed\n"
    "bodies:\n"
    "  - {name: upper, mass: 1.0, inertia: [0.0833583, 0.0833583, 0.00005],"
    " position: [0, 0, -0.5]}\n"
    "  - {name: lower, mass: 1.0, inertia: [0.0833583, 0.0833583, 0.00005],"
    " position: [0.5, 0, -1.0], orientation: {axis: [0, 1, 0], angle: 1.5707963267948966}}\n"
    "joints:\n"
    "  - {name: shoulder, type: revolute, body1: upper, body2: ground, point: [0, 0, 0],"
    " axis: [0, 1, 0]}\n"
    "  - {name: elbow, type: revolute, body1: lower, body2: upper, point: [0, 0, -1.0],"
    " axis: [0, 1, 0]}\n";

static pt_model *load(const char *root, const char *file) {
  if (!strcmp(file, "double_pendulum_reversed")) {
    pt_model *m = NULL;
    pt_error err;
    if (pt_model_load_string(reversed_yaml, sizeof(reversed_yaml) - 1, 1, file, NULL, &m, &err)) {
      CHECK(0, "%s: %s", file, err.msg);
      return NULL;
    }
    return m;
  }
  char path[1024];
  snprintf(path, sizeof(path), "%s/configs/models/%s", root, file);
  pt_model *m = NULL;
  pt_error err;
  // the free dynamics of both partitions: joint limits are enforced on the tree partition
  // only (limits.c; tests/engine/test_limits.c tests them)
  pt_load_options opt = {.no_joint_limits = 1};
  if (pt_model_load_file(path, &opt, &m, &err)) {
    CHECK(0, "%s: %s", file, err.msg);
    return NULL;
  }
  return m;
}

// Runs `n` steps in `mode`; returns the largest energy change and fills the final coordinates.
static double run(const pt_model *m, int mode, int n, double *coord, pt_counters *c,
                  double *res) {
  pt_data *d = pt_data_new(m);
  pt_set_partition_mode(d, mode);
  const double e0 = pt_energy_kinetic(d) + pt_energy_potential(d);
  double de = 0;
  *res = 0;
  for (int i = 0; i < n; i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "mode %d step %d: %s", mode, i, pt_strerror(rc));
    if (rc) break;
    de = fmax(de, fabs(pt_energy_kinetic(d) + pt_energy_potential(d) - e0));
    *res = fmax(*res, fmax(pt_residual_position(d), pt_residual_velocity(d)));
  }
  for (int i = 0; i < pt_model_ncoord(m); i++) coord[i] = pt_coords(d)[i];
  pt_get_counters(d, c);
  pt_data_free(d);
  return de;
}

// Hybrid mode with the articulated-body algorithm on (aba = 1) or off (W in every stage):
// the largest coordinate difference between the two over n steps, of the multipliers (asked
// for after the step: pt_lambda) and of the joint reactions (from the joint forces, before the
// multipliers are asked for, against W's multipliers).
static void aba_vs_w(const pt_model *m, int n, double *dcoord, double *dlam, double *lam_scale,
                     double *dreac, double *reac_scale) {
  pt_data *a = pt_data_new(m), *b = pt_data_new(m);
  CHECK(a->tree_aba, "%s: the articulated-body algorithm is off", pt_model_name(m));
  b->tree_aba = 0;
  *dcoord = *dlam = *dreac = 0;
  *lam_scale = *reac_scale = 1e-300;
  const int nj = m->njoint;
  double *ra6 = calloc(6 * (size_t)nj + 1, sizeof(double));
  double *rb6 = calloc(6 * (size_t)nj + 1, sizeof(double));
  for (int i = 0; i < n; i++) {
    // inputs change every step (a controller at the step rate): the step's first stage then
    // runs again at the state held, with the articulated-body algorithm on a
    for (int k = 0; k < pt_model_ninput(m); k++) {
      pt_set_input(m, a, k, 0.5 * sin(0.01 * i + k));
      pt_set_input(m, b, k, 0.5 * sin(0.01 * i + k));
    }
    int ra = pt_step(m, a), rb = pt_step(m, b);
    CHECK(ra == PT_OK && rb == PT_OK, "step %d: %s / %s", i, pt_strerror(ra), pt_strerror(rb));
    if (ra || rb) break;
    for (int c = 0; c < pt_model_ncoord(m); c++)
      *dcoord = fmax(*dcoord, fabs(pt_coords(a)[c] - pt_coords(b)[c]));
    CHECK(a->lambda_stale && !b->lambda_stale, "step %d: multipliers computed by the step", i);
    pt_joint_reactions(m, a, ra6);
    pt_joint_reactions(m, b, rb6);
    for (int k = 0; k < 6 * nj; k++) {
      *dreac = fmax(*dreac, fabs(ra6[k] - rb6[k]));
      *reac_scale = fmax(*reac_scale, fabs(rb6[k]));
    }
    pt_lambda(m, a);
    CHECK(!a->lambda_stale, "step %d: pt_lambda left the multipliers stale", i);
    for (int r = 0; r < m->ncon; r++) {
      *dlam = fmax(*dlam, fabs(a->lambda[r] - b->lambda[r]));
      *lam_scale = fmax(*lam_scale, fabs(b->lambda[r]));
    }
  }
  free(ra6);
  free(rb6);
  pt_data_free(a);
  pt_data_free(b);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  // model, steps, agreement with LU (rad or m): the Panda and the chain are chaotic, so short
  const struct {
    const char *file;
    int n;
    double tol;
  } cases[] = {{"pendulum.yaml", 2000, 1e-8},   {"double_pendulum.yaml", 2000, 1e-7},
               {"double_pendulum_reversed", 2000, 1e-7},
               {"chain7.yaml", 1000, 1e-6},     {"panda.urdf", 500, 1e-6},
               {"arm2r.urdf", 2000, 1e-7},      {"joint_prismatic.yaml", 2000, 1e-8},
               {"joint_revolute.yaml", 2000, 1e-8}};
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    pt_model *m = load(root, cases[k].file);
    if (!m) continue;
    const int nc = pt_model_ncoord(m);
    double *a = calloc((size_t)nc + 1, sizeof(double)), *b = calloc((size_t)nc + 1, sizeof(double));
    pt_counters ct, cl;
    double rt, rl;
    const double det = run(m, PT_MODE_HYBRID, cases[k].n, a, &ct, &rt);
    const double del = run(m, PT_MODE_LU, cases[k].n, b, &cl, &rl);
    double diff = 0;
    for (int i = 0; i < nc; i++) diff = fmax(diff, fabs(a[i] - b[i]));
    printf("%-22s %d steps: |tree - LU| %.2e; energy change tree %.2e, LU %.2e; residual tree "
           "%.1e; rebuilds tree %lld (LU %lld); Newton iterations tree %lld (LU %lld)\n",
           cases[k].file, cases[k].n, diff, det, del, rt, (long long)ct.repartitions,
           (long long)cl.repartitions, (long long)ct.newton_iters, (long long)cl.newton_iters);
    CHECK(diff < cases[k].tol, "%s: tree and LU partitions differ by %.3g", cases[k].file, diff);
    CHECK(ct.repartitions == 0 && ct.newton_iters == 0 && ct.qr_switches == 0,
          "%s: the tree partition was not used (rebuilds %lld, Newton %lld, QR %lld)",
          cases[k].file, (long long)ct.repartitions, (long long)ct.newton_iters,
          (long long)ct.qr_switches);
    CHECK(rt < 1e-12, "%s: constraint residual %.3g with the tree partition", cases[k].file, rt);
    CHECK(det <= 2 * del + 1e-12, "%s: energy change %.3g with the tree partition, %.3g with LU",
          cases[k].file, det, del);
    double dc, dl, ls, dr, rs;
    aba_vs_w(m, cases[k].n, &dc, &dl, &ls, &dr, &rs);
    printf("%-22s articulated-body algorithm vs W: coordinates %.2e, multipliers %.2e (of %.2e), "
           "joint reactions %.2e (of %.2e)\n", cases[k].file, dc, dl, ls, dr, rs);
    CHECK(dc < 1e-9, "%s: ABA and W trajectories differ by %.3g", cases[k].file, dc);
    CHECK(dl < 1e-9 * ls, "%s: ABA and W multipliers differ by %.3g", cases[k].file, dl);
    CHECK(dr < 1e-9 * rs, "%s: ABA and W joint reactions differ by %.3g", cases[k].file, dr);
    free(a);
    free(b);
    pt_model_free(m);
  }
  return finish("tree_partition");
}
