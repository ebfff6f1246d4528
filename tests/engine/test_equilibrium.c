// Static equilibrium (issue 5, test 2 and more), against closed forms derived here.
// argv[1] = the source root (for configs/models).
#include "check.h"

static char root[1024] = ".";

// The lecture's pendulum with a rotational spring: a rod of m = 10, L = 1 hinged at its lower
// end to the ground about y, upright at angle 0, CoM at d = L/2; spring k = 25, free angle 0;
// gravity -z. Tilted by theta about y the CoM is at d (sin theta, 0, cos theta), gravity's
// moment about the hinge is m g d sin theta (+y) and the spring's -k theta:
//   k theta = m g d sin theta,
// solved here by a scalar Newton. At rest the hinge carries the weight: F = (0, 0, m g) on the
// rod, and no moment about the hinge point (spring and gravity balance).
static const double K = 25, MASS = 10, L = 1, G = 9.81;

static double closed_form_angle(double guess) {
  const double a = MASS * G * L / 2;
  double th = guess;
  for (int i = 0; i < 100; i++) {
    double f = K * th - a * sin(th), fp = K - a * cos(th);
    double step = f / fp;
    th -= step;
    if (fabs(step) < 1e-16) break;
  }
  return th;
}

static pt_model *pendulum_model(void) {
  char text[1024];
  snprintf(text, sizeof(text),
           "model: spring_pendulum\n"
           "gravity: [0, 0, %.17g]\n"
           "bodies:\n"
           "  - {name: rod, mass: %.17g, inertia: [%.17g, %.17g, 0.001],\n"
           "     position: [0, 0, %.17g]}\n"
           "joints:\n"
           "  - {name: hinge, type: revolute, body1: ground, body2: rod, point: [0, 0, 0],\n"
           "     axis: [0, 1, 0]}\n"
           "forces:\n"
           "  - {name: spring, type: torsion_spring, joint: hinge, stiffness: %.17g,\n"
           "     damping: 0, free_angle: 0}\n",
           -G, MASS, MASS * L * L / 12, MASS * L * L / 12, L / 2, K);
  return load_yaml(text);
}

static void check_pendulum_result(const pt_model *m, const pt_equilibrium_result *r,
                                  double theta, const char *what) {
  const int h = pt_coord_index(m, "hinge");
  CHECK_CLOSE(r->coord[h], theta, 1e-10, what);
  const double F[3] = {0, 0, MASS * G};
  for (int c = 0; c < 3; c++) {
    CHECK_CLOSE(r->reaction[c], F[c], 1e-9 * MASS * G, "hinge force = weight");
    CHECK_CLOSE(r->reaction[3 + c], 0, 1e-9 * MASS * G, "hinge moment");
  }
  CHECK(r->residual < 1e-8, "%s: residual %.3g", what, r->residual);
}

static void pendulum(void) {
  pt_model *m = pendulum_model();
  pt_data *d = pt_data_new(m);
  pt_equilibrium_result *r = pt_equilibrium_result_new(m);
  const int h = pt_coord_index(m, "hinge");
  const double theta = closed_form_angle(2.0);
  pt_error err = {0};

  // Newton alone (approach 1) from 1.7 rad
  pt_assign pos[1] = {{h, 1.7}};
  CHECK(pt_set_state(m, d, pos, 1, NULL, 0, &err) == PT_OK, "set: %s", err.msg);
  int rc = pt_equilibrium(m, d, NULL, r, &err);
  CHECK(rc == PT_OK, "pendulum from 1.7 rad: %s", err.msg);
  check_pendulum_result(m, r, theta, "angle from 1.7 rad");
  CHECK(r->stable == 1 && r->damped_steps == 0, "stable %d, damped steps %d", r->stable,
        r->damped_steps);
  CHECK_CLOSE(pt_coords(d)[h], 1.7, 1e-12, "caller's data untouched");
  printf("pendulum: theta %.15f (closed form %.15f), %d iterations\n", r->coord[h], theta,
         r->iterations);

  // from 1 rad Newton slides to the unstable upright equilibrium; the damped dynamics
  // (approach 2) and Newton from where they slowed down (approach 4) find the stable one
  pos[0].value = 1.0;
  pt_set_state(m, d, pos, 1, NULL, 0, &err);
  rc = pt_equilibrium(m, d, NULL, r, &err);
  CHECK(rc == PT_OK, "pendulum from 1 rad: %s", err.msg);
  check_pendulum_result(m, r, theta, "angle from 1 rad");
  CHECK(r->stable == 1, "stable %d", r->stable);
  printf("pendulum from 1 rad: theta %.15f, %d iterations, %d damped steps\n", r->coord[h],
         r->iterations, r->damped_steps);

  // near the unstable upright position: Newton alone finds the unstable one ...
  pos[0].value = 0.05;
  pt_set_state(m, d, pos, 1, NULL, 0, &err);
  pt_equilibrium_options o = {0};
  o.allow_unstable = 1;
  rc = pt_equilibrium(m, d, &o, r, &err);
  CHECK(rc == PT_OK && fabs(r->coord[h]) < 1e-10 && r->stable == 0,
        "allow_unstable: rc %d angle %g stable %d", rc, r->coord[h], r->stable);
  // ... and by default the damped dynamics (approach 2) take it to the stable one (approach 4)
  rc = pt_equilibrium(m, d, NULL, r, &err);
  CHECK(rc == PT_OK, "pendulum from 0.05 rad: %s", err.msg);
  check_pendulum_result(m, r, theta, "angle from 0.05 rad (damped)");
  CHECK(r->damped_steps > 0 && r->stable == 1, "damped steps %d stable %d", r->damped_steps,
        r->stable);
  printf("pendulum from 0.05: theta %.15f, %d iterations, %d damped steps\n", r->coord[h],
         r->iterations, r->damped_steps);

  // exactly upright: an equilibrium, unstable; a kick leaves it
  pos[0].value = 0;
  pt_set_state(m, d, pos, 1, NULL, 0, &err);
  rc = pt_equilibrium(m, d, NULL, r, &err);
  CHECK(rc == PT_OK, "pendulum upright: %s", err.msg);
  check_pendulum_result(m, r, r->coord[h] > 0 ? theta : -theta, "angle from upright");

  // Newton only from upright with allow_unstable: 0 iterations
  o.no_damped = 1;
  rc = pt_equilibrium(m, d, &o, r, &err);
  CHECK(rc == PT_OK && r->iterations == 0, "upright newton-only: %d its %d", rc, r->iterations);

  // apply: the data moves there and stays at rest
  pos[0].value = 1.0;
  pt_set_state(m, d, pos, 1, NULL, 0, &err);
  rc = pt_equilibrium(m, d, NULL, r, &err);
  CHECK(rc == PT_OK, "again: %s", err.msg);
  rc = pt_equilibrium_apply(m, d, r, &err);
  CHECK(rc == PT_OK, "apply: %s", err.msg);
  CHECK_CLOSE(pt_coords(d)[h], theta, 1e-10, "applied angle");
  CHECK_CLOSE(pt_coord_accels(d)[h], 0, 1e-9, "at rest after apply");
  for (int i = 0; i < 100; i++) pt_step(m, d);
  CHECK_CLOSE(pt_coords(d)[h], theta, 1e-9, "still there after 100 steps");
  pt_equilibrium_result_free(r);
  pt_data_free(d);
  pt_model_free(m);
}

// Motions frozen: the door of the lecture held by its motor at t0 = 1: the hinge at
// phi(t0) and the motor holding the spring, effort K_door phi(t0).
static void frozen_motion(void) {
  char path[1200];
  snprintf(path, sizeof(path), "%s/configs/models/door.yaml", root);
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_file(path, NULL, &m, &err)) {
    printf("FAIL load %s: %s\n", path, err.msg);
    check_failures++;
    return;
  }
  pt_data *d = pt_data_new(m);
  pt_equilibrium_result *r = pt_equilibrium_result_new(m);
  CHECK(pt_inverse_set_time(m, d, 1.0, &err) == PT_OK, "set time: %s", err.msg);
  const double phi = M_PI / 2 * sin(M_PI / 4);
  int rc = pt_equilibrium(m, d, NULL, r, &err);
  CHECK(rc == PT_OK, "door equilibrium: %s", err.msg);
  CHECK_CLOSE(r->coord[pt_coord_index(m, "hinge")], phi, 1e-12, "door frozen angle");
  CHECK_CLOSE(r->motion_effort[0], 8.0 * phi, 1e-9 * 8.0 * phi, "motor holds the spring");
  CHECK_CLOSE(r->time, 1.0, 0, "frozen time");
  pt_equilibrium_result_free(r);
  pt_data_free(d);
  pt_model_free(m);
}

// A 7-link chain released horizontally hangs straight down: j1 = pi/2 (about y, +x towards
// -z), the others 0; the top joint carries the whole weight. Newton from far away may fail;
// the damped dynamics bring it close.
static void chain(void) {
  char path[1200];
  snprintf(path, sizeof(path), "%s/configs/models/chain7.yaml", root);
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_file(path, NULL, &m, &err)) {
    printf("FAIL load %s: %s\n", path, err.msg);
    check_failures++;
    return;
  }
  pt_data *d = pt_data_new(m);
  pt_equilibrium_result *r = pt_equilibrium_result_new(m);
  int rc = pt_equilibrium(m, d, NULL, r, &err);
  CHECK(rc == PT_OK, "chain equilibrium: %s", err.msg);
  const char *names[7] = {"j1", "j2", "j3", "j4", "j5", "j6", "j7"};
  for (int k = 0; k < 7; k++) {
    double v = r->coord[pt_coord_index(m, names[k])];
    double want = k == 0 ? M_PI / 2 : 0;
    v = want + remainder(v - want, 2 * M_PI);
    CHECK_CLOSE(v, want, 1e-9, names[k]);
  }
  CHECK_CLOSE(r->reaction[2], 7 * 0.5 * 9.81, 1e-9 * 35, "top joint carries the weight");
  CHECK(r->stable == 1, "chain stable %d", r->stable);
  printf("chain7: hangs down after %d Newton iterations, %d damped steps, residual %.3g\n",
         r->iterations, r->damped_steps, r->residual);
  pt_equilibrium_result_free(r);
  pt_data_free(d);
  pt_model_free(m);
}

// The parallelogram four-bar (configs/models/fourbar_parallelogram.yaml: three 1 kg rods,
// crank and rocker up) starts at its unstable equilibrium; the stable one has both hanging
// (A = D = pi), on the way through the flat, singular positions. The two ground pivots carry
// the whole weight, 3 m g, however the redundant loop splits it between them.
static void parallelogram(void) {
  char path[1200];
  snprintf(path, sizeof(path), "%s/configs/models/fourbar_parallelogram.yaml", root);
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_file(path, NULL, &m, &err)) {
    printf("FAIL load %s: %s\n", path, err.msg);
    check_failures++;
    return;
  }
  pt_data *d = pt_data_new(m);
  pt_equilibrium_result *r = pt_equilibrium_result_new(m);
  int rc = pt_equilibrium(m, d, NULL, r, &err);
  CHECK(rc == PT_OK, "parallelogram equilibrium: %s", err.msg);
  const char *names[2] = {"A", "D"};
  for (int k = 0; k < 2; k++) {
    double v = r->coord[pt_coord_index(m, names[k])];
    CHECK_CLOSE(fabs(remainder(v, 2 * M_PI)), M_PI, 1e-9, names[k]);
  }
  const double fz = r->reaction[2] + r->reaction[6 * 3 + 2];  // joints A (0) and D (3)
  CHECK_CLOSE(fz, 3 * 9.81, 1e-9 * 30, "ground pivots carry the weight");
  CHECK(r->stable == 1, "stable %d", r->stable);
  printf("parallelogram: A = %.12f after %d iterations, %d damped steps\n",
         r->coord[pt_coord_index(m, "A")], r->iterations, r->damped_steps);
  pt_equilibrium_result_free(r);
  pt_data_free(d);
  pt_model_free(m);
}

int main(int argc, char **argv) {
  if (argc > 1) snprintf(root, sizeof(root), "%s", argv[1]);
  pendulum();
  frozen_motion();
  chain();
  parallelogram();
  return finish("equilibrium");
}
