// test_loops.c: closed loops in joint coordinates (issue 23; src/partition/loop_*.c) against
// the Cartesian formulation, an independent computation of the same equations of motion.
//   usage: test_loops MODELS_DIR
// For each closed-loop model (planar four-bars and a chain of them, the spatial slider-crank
// with its motion and a universal joint whose tree child is its body1, the Stewart platform
// with a floating platform and leg forces changed every step, the Delta robot, the IFToMM A02
// chain with N = 10):
//   - the hybrid mode integrates it in joint coordinates (pt_independent names joint
//     coordinates);
//   - at the initial state and after 300 steps the body accelerations equal those of the
//     Cartesian solve W lambda = J M^-1 Q - gamma at the same state (pt_eval) to 1e-9
//     relative, and so do the joint reactions (the Cartesian multipliers a loop's step end
//     computes when asked: pt_lambda through W);
//   - over 0.3 s the trajectory follows the Cartesian LU partition's (the same RK4 at 1 ms on
//     other integrated variables: the difference is the integrators' truncation error) to 1e-7,
//     with constraint residuals of round-off; asking for the reactions after every step changes
//     nothing of it (bit for bit).
// Control elements (issue 26) on a loop: the singular four-bar held by a PID on its crank,
// the PID's target stepped twice, follows the Cartesian QR partition (the LU partition jumps
// near the flat position the PID drives it through) to 1e-7 over 2 s.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "fourbar_chain.h"
#include "loop.h"
#include "partition.h"  // pt_eval
#include "pt_inverse.h"

static double maxabs(const double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(a[i]));
  return s;
}

// xdd and the joint reactions of d against the Cartesian solve at the same state.
static void accelerations(const char *name, const pt_model *m, pt_data *d, const char *when) {
  pt_data *c = pt_data_new(m);
  pt_set_partition_mode(c, PT_MODE_LU);
  pt_data_copy(m, c, d);
  const int rc = pt_eval(m, c);  // kinematics from q, qd, every row, W (dynamics.c)
  const int nv = m->nv, nr = 6 * m->njoint;
  double ex = 0;
  for (int k = 0; k < nv; k++) ex = fmax(ex, fabs(c->xdd[k] - d->xdd[k]));
  const double xs = maxabs(c->xdd, nv) + 1;
  double *ra = calloc((size_t)nr + 1, sizeof(double)), *rb = calloc((size_t)nr + 1, sizeof(double));
  pt_joint_reactions(m, d, ra);  // d: a loop's step end, multipliers computed now
  pt_joint_reactions(m, c, rb);
  double er = 0;
  for (int k = 0; k < nr; k++) er = fmax(er, fabs(ra[k] - rb[k]));
  const double rs = maxabs(rb, nr) + 1;
  printf("  %-26s %s: xdd vs W %.1e, joint reactions %.1e (relative)\n", name, when, ex / xs,
         er / rs);
  CHECK(rc == 0, "%s %s: the Cartesian evaluation failed: %s", name, when, pt_strerror(rc));
  CHECK(ex <= 1e-9 * xs, "%s %s: xdd differs from the Cartesian solve by %.3e", name, when, ex);
  CHECK(er <= 1e-9 * rs, "%s %s: joint reactions differ by %.3e", name, when, er);
  free(ra), free(rb);
  pt_data_free(c);
}

// The inputs of a driven run at step i: amplitude a.
static void drive(const pt_model *m, pt_data *d, int i, double a) {
  for (int k = 0; k < pt_model_ninput(m); k++) pt_set_input(m, d, k, a * sin(0.02 * i + k));
}

static void check_model(const char *name, pt_model *m, double driven) {
  pt_data *d = pt_data_new(m), *lu = pt_data_new(m), *asks = pt_data_new(m);
  pt_set_partition_mode(lu, PT_MODE_LU);
  double *reaction = calloc(6 * (size_t)m->njoint + 1, sizeof(double));
  CHECK(pt_loop_on(d), "%s: the hybrid mode does not use its joint coordinates", name);
  const char *names[64];
  const int nd = pt_independent(m, d, names, 64);
  int joint = 0;
  for (int i = 0; i < nd && i < 64; i++) joint += pt_coord_index(m, names[i]) >= 0;
  CHECK(nd == 0 || joint > 0, "%s: no joint coordinate among the independent ones", name);
  accelerations(name, m, d, "initial state");
  const int n = 300;
  double diff = 0, res = 0;
  int rc = 0;
  for (int i = 0; i < n && !rc; i++) {
    if (driven > 0) {
      drive(m, d, i, driven);
      drive(m, lu, i, driven);
      drive(m, asks, i, driven);
    }
    rc = pt_step(m, d);
    const int rl = pt_step(m, lu);
    rc |= pt_step(m, asks);
    pt_joint_reactions(m, asks, reaction);
    CHECK(rc == 0 && rl == 0, "%s step %d: %s / %s", name, i, pt_strerror(rc), pt_strerror(rl));
    rc |= rl;
    for (int k = 0; k < pt_model_ncoord(m); k++)
      diff = fmax(diff, fabs(pt_coords(d)[k] - pt_coords(lu)[k]));
    res = fmax(res, pt_residual_position(d));
  }
  accelerations(name, m, d, "after 0.3 s");
  printf("  %-26s 0.3 s: joint coordinates vs the Cartesian LU partition %.1e, max residual "
         "%.1e\n", name, diff, res);
  CHECK(diff <= 1e-7, "%s: trajectory off the Cartesian LU partition's by %.3e", name, diff);
  CHECK(res <= 1e-11, "%s: position residual %.3e", name, res);
  int same = 1;
  for (int b = 0; b < m->nbody; b++)
    same &= memcmp(pt_body_pose(d, b), pt_body_pose(asks, b), 7 * sizeof(double)) == 0 &&
            memcmp(pt_body_velocity(d, b), pt_body_velocity(asks, b), 6 * sizeof(double)) == 0;
  CHECK(same, "%s: asking for the reactions changed the trajectory", name);
  free(reaction);
  pt_data_free(asks);
  pt_data_free(lu);
  pt_data_free(d);
}

// The singular four-bar with a PID on its crank (control elements drive the crank's actuator;
// a step start at the held state must evaluate them, not take the input-change shortcut):
// joint coordinates against the Cartesian QR partition.
static void controlled(const char *dir) {
  char path[4096], text[1 << 14];
  snprintf(path, sizeof(path), "%s/fourbar_singular.yaml", dir);
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(text, 1, sizeof(text) - 1024, f) : 0;
  if (f) fclose(f);
  CHECK(n > 0, "%s unreadable", path);
  text[n] = '\0';
  strcat(text,
         "\ncontrols:\n"
         "  - {name: angle, type: measure, coordinate: A}\n"
         "  - {name: target, type: input}\n"
         "  - {name: error, type: sum, inputs: [target, angle], signs: [+, -]}\n"
         "  - {name: u, type: pid, input: error, kp: 60, ki: 20, kd: 5, tf: 0.01}\n"
         "actuators:\n"
         "  - {name: drive, type: joint_torque, joint: A, gear: 1, source: u}\n");
  pt_model *m = NULL;
  pt_error err;
  if (pt_model_load_string(text, strlen(text), 1, "fourbar_pid", NULL, &m, &err)) {
    CHECK(0, "four-bar with a PID: %s", err.msg);
    return;
  }
  pt_data *a = pt_data_new(m), *b = pt_data_new(m);
  CHECK(pt_set_partition_mode(b, PT_MODE_QR) == PT_OK, "QR mode");
  const int target = pt_input_index(m, "target");
  double diff = 0;
  for (int s = 0; s < 2000; s++) {
    if (s == 500 || s == 1200) {
      pt_set_input(m, a, target, s == 500 ? 0.5 : -0.3);
      pt_set_input(m, b, target, s == 500 ? 0.5 : -0.3);
    }
    CHECK(pt_step(m, a) == PT_OK && pt_step(m, b) == PT_OK, "step %d", s);
    diff = fmax(diff, fabs(pt_coords(a)[0] - pt_coords(b)[0]));
  }
  CHECK(pt_loop_on(a), "not in joint coordinates");
  CHECK(diff <= 1e-7, "PID four-bar: joint coordinates vs QR differ by %.3g", diff);
  printf("four-bar held by a PID (target stepped twice), 2 s: crank angle %.9f, joint "
         "coordinates vs the Cartesian QR partition %.2e\n", pt_coords(a)[0], diff);
  pt_data_free(a);
  pt_data_free(b);
  pt_model_free(m);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "configs/models";
  const struct {
    const char *file;
    double driven;  // > 0: the inputs' amplitude (N, N m), changed every step
  } files[] = {{"fourbar_parallelogram.yaml", 0}, {"fourbar_singular.yaml", 0},
               {"fivebar_chain.yaml", 0},         {"slider_crank.yaml", 0},
               {"stewart.yaml", 40},              {"delta.yaml", 0},
               {"delta.yaml", 2}};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, files[i].file);
    pt_model *m = NULL;
    pt_error err;
    if (pt_model_load_file(path, NULL, &m, &err)) {
      CHECK(0, "%s: %s", path, err.msg);
      continue;
    }
    printf("%s%s:\n", files[i].file, files[i].driven > 0 ? " (inputs changed every step)" : "");
    check_model(files[i].file, m, files[i].driven);
    pt_model_free(m);
  }
  static char text[1 << 16];
  pt_model *m = NULL;
  pt_error err;
  if (fourbar_chain_yaml(text, sizeof(text), 10) < 0 ||
      pt_model_load_string(text, strlen(text), 1, "a02_10", NULL, &m, &err)) {
    CHECK(0, "A02 N = 10");
  } else {
    printf("IFToMM A02 chain, N = 10:\n");
    check_model("A02 N = 10", m, 0);
    pt_model_free(m);
  }
  controlled(dir);
  return finish("loops");
}
