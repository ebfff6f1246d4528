// test_planar.c: the planar joint (issue 11: URDF `planar`, as three coordinates), against
// the closed form of a rigid body moving in a plane. A body of mass m, its CoM at r from the
// joint point, on a plane normal to z, under in-plane gravity (gx, gy) and, at rest,
// actuator inputs Fx, Fy (at the joint point, along x, y) and tau (about z):
//   alpha = (tau + (d x F)_z) / Izz,  d = joint point - CoM,
//   x'' = gx + Fx / m + (alpha z x d)_x,  y'' = gy + Fy / m + (alpha z x d)_y,  angle'' = alpha.
// Released with rates, the energy is conserved and the motion stays in the plane.
#include "check.h"

#define MASS 2.0
#define IZZ 0.3
#define RX 0.3   // CoM at (RX, 0, 0) from the joint point at t=0

static const char yaml[] =
    "model: puck\n"
    "gravity: [1.5, -2, -9.81]\n"
    "simulation: {dt: 0.001, integrator: rk4}\n"
    "bodies:\n"
    "  - {name: puck, mass: 2, inertia: [0.1, 0.2, 0.3], position: [0.3, 0, 0]}\n"
    "joints:\n"
    "  - {name: p, type: planar, body1: ground, body2: puck, point: [0, 0, 0], axis: [0, 0, 1],\n"
    "     axis1: [1, 0, 0]}\n"
    "actuators:\n"
    "  - {name: fx, type: joint_force, joint: p, coordinate: x}\n"
    "  - {name: fy, type: joint_force, joint: p, coordinate: y}\n"
    "  - {name: tau, type: joint_torque, joint: p}\n";

static void check_accelerations(void) {
  pt_model *m = load_yaml(yaml);
  CHECK(pt_model_ndof(m) == 3, "ndof %d", pt_model_ndof(m));
  const int cx = pt_coord_index(m, "p.x"), cy = pt_coord_index(m, "p.y");
  const int ca = pt_coord_index(m, "p.angle");
  CHECK(cx >= 0 && cy >= 0 && ca >= 0, "coordinates p.x, p.y, p.angle");
  pt_data *d = pt_data_new(m);
  const double F[2] = {0.7, -1.1}, tau = 0.25, g[2] = {1.5, -2};
  pt_set_input(m, d, pt_input_index(m, "fx"), F[0]);
  pt_set_input(m, d, pt_input_index(m, "fy"), F[1]);
  pt_set_input(m, d, pt_input_index(m, "tau"), tau);
  CHECK(pt_forward(m, d) == PT_OK, "forward");
  const double dx = -RX, dy = 0;  // joint point - CoM
  const double alpha = (tau + dx * F[1] - dy * F[0]) / IZZ;
  const double ax = g[0] + F[0] / MASS - alpha * dy, ay = g[1] + F[1] / MASS + alpha * dx;
  CHECK_CLOSE(pt_coord_accels(d)[cx], ax, 1e-10, "x''");
  CHECK_CLOSE(pt_coord_accels(d)[cy], ay, 1e-10, "y''");
  CHECK_CLOSE(pt_coord_accels(d)[ca], alpha, 1e-10, "angle''");
  printf("planar at rest: x'' %.12g (closed form %.12g), y'' %.12g (%.12g), angle'' %.12g "
         "(%.12g)\n", pt_coord_accels(d)[cx], ax, pt_coord_accels(d)[cy], ay,
         pt_coord_accels(d)[ca], alpha);
  // inverse dynamics: the efforts that give these accelerations are the inputs
  pt_inverse_result *res = pt_inverse_result_new(m, 3);
  pt_assign acc[3] = {{cx, ax}, {cy, ay}, {ca, alpha}};
  pt_data_reset(m, d);
  pt_error err = {0};
  CHECK(pt_inverse_request(m, d, acc, 3, res, &err) == PT_OK, "inverse: %s", err.msg);
  CHECK_CLOSE(res->req_effort[0], F[0], 1e-10, "inverse fx");
  CHECK_CLOSE(res->req_effort[1], F[1], 1e-10, "inverse fy");
  CHECK_CLOSE(res->req_effort[2], tau, 1e-10, "inverse tau");
  pt_inverse_result_free(res);
  pt_data_free(d);
  pt_model_free(m);
}

static void check_free_motion(void) {
  pt_model *m = load_yaml(yaml);
  pt_data *d = pt_data_new(m);
  const pt_assign vel[3] = {{pt_coord_index(m, "p.x"), 0.4}, {pt_coord_index(m, "p.y"), -0.3},
                            {pt_coord_index(m, "p.angle"), 3.0}};
  pt_error err = {0};
  CHECK(pt_set_state(m, d, NULL, 0, vel, 3, &err) == PT_OK, "%s", err.msg);
  const double e0 = pt_energy_kinetic(d) + pt_energy_potential(d);
  double de = 0, dz = 0, tilt = 0;
  for (int k = 0; k < 2000; k++) {
    CHECK(pt_step(m, d) == PT_OK, "step %d", k);
    const double *pose = pt_body_pose(d, 0);  // r, e0..e3
    de = fmax(de, fabs(pt_energy_kinetic(d) + pt_energy_potential(d) - e0));
    dz = fmax(dz, fabs(pose[2]));
    tilt = fmax(tilt, fabs(pose[4]) + fabs(pose[5]));  // e1, e2: rotation off the z axis
  }
  printf("planar free motion, 2 s: |energy drift| %.3g J, |z| %.3g m, |e1| + |e2| %.3g, "
         "angle %.6g rad\n", de, dz, tilt, pt_coords(d)[pt_coord_index(m, "p.angle")]);
  CHECK(de <= 1e-8 * fmax(1, fabs(e0)), "energy drift %.3g", de);
  CHECK(dz <= 1e-10 && tilt <= 1e-10, "left the plane: z %.3g, tilt %.3g", dz, tilt);
  pt_data_free(d);
  pt_model_free(m);
}

static void check_refused(void) {
  static const char *const bad[][2] = {
      {"axis: [0, 0, 1], axis1: [0.5, 0, 1]", "axis1 (the x direction) must be perpendicular"},
      {"axis1: [1, 0, 0]", "missing required field \"axis\" (type planar)"},
  };
  for (int k = 0; k < 2; k++) {
    char text[512];
    snprintf(text, sizeof(text),
             "model: bad\nbodies:\n  - {name: b, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}"
             "\njoints:\n  - {name: j, type: planar, body1: ground, body2: b, point: [0, 0, 0], "
             "%s}\n", bad[k][0]);
    pt_model *m = NULL;
    pt_error err = {0};
    int rc = pt_model_load_string(text, strlen(text), 1, "bad.yaml", NULL, &m, &err);
    CHECK(rc != PT_OK && strstr(err.msg, bad[k][1]), "%s: rc %d %s", bad[k][0], rc, err.msg);
    printf("refused: %s -> %s\n", bad[k][0], err.msg);
    pt_model_free(m);
  }
}

int main(void) {
  check_accelerations();
  check_free_motion();
  check_refused();
  return finish("planar");
}
