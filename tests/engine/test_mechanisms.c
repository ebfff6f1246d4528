// Closed loops (issue 2, tests 5, 6, 8): a spatial slider-crank driven at constant speed
// against its closed-form kinematics; a planar crank-rocker four-bar built from four spatial
// revolute joints (three redundant rows removed at load) conserving energy; assembly of a
// model given 1 cm / 0.05 rad off its constraints.
#include "check.h"

// Rod of mass m and length L from a to b (x-z plane): body at the midpoint, inertia tensor
// in global axes m L^2/12 (I - u u^T) plus a small axial term, as 6 values.
static int rod(char *out, size_t n, const char *name, double m, const double a[3],
               const double b[3]) {
  double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  double L = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  for (int i = 0; i < 3; i++) u[i] /= L;
  double k = m * L * L / 12, ax = 1e-4 * m;
  double I[6] = {k * (1 - u[0] * u[0]) + ax * u[0] * u[0], k * (1 - u[1] * u[1]) + ax * u[1] * u[1],
                 k * (1 - u[2] * u[2]) + ax * u[2] * u[2], (ax - k) * u[0] * u[1],
                 (ax - k) * u[0] * u[2], (ax - k) * u[1] * u[2]};
  return snprintf(out, n,
                  "  - {name: %s, mass: %.17g, position: [%.17g, %.17g, %.17g],\n"
                  "     inertia: [%.17g, %.17g, %.17g, %.17g, %.17g, %.17g]}\n",
                  name, m, 0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]), 0.5 * (a[2] + b[2]), I[0],
                  I[1], I[2], I[3], I[4], I[5]);
}

static void slider_crank(void) {
  // Haug's spatial slider-crank: crank about x at the origin (pin at radius R), rod of length
  // L to a slider pin moving on the line (x, 0.1, 0.12).
  const double R = 0.08, L = 0.3, y0 = 0.1, z0 = 0.12, w = 2 * M_PI;
  const double pin[3] = {0, R, 0}, spin[3] = {sqrt(L * L - (y0 - R) * (y0 - R) - z0 * z0), y0, z0};
  const double dr[3] = {spin[0] - pin[0], spin[1] - pin[1], spin[2] - pin[2]};
  const double a1[3] = {-dr[1] / L, dr[0] / L, 0};  // unit(z x d), perpendicular to z
  const double n1 = sqrt(a1[0] * a1[0] + a1[1] * a1[1]);
  char text[4096], *p = text;
  size_t left = sizeof(text);
  int k = snprintf(p, left, "model: slider_crank\nbodies:\n");
  p += k, left -= (size_t)k;
  const double o[3] = {0, 0, 0};
  k = rod(p, left, "crank", 0.12, o, pin);
  p += k, left -= (size_t)k;
  k = rod(p, left, "rod", 0.5, pin, spin);
  p += k, left -= (size_t)k;
  k = snprintf(p, left,
               "  - {name: slider, mass: 2, inertia: [0.01, 0.01, 0.01], position: [%.17g, %.17g, "
               "%.17g]}\n"
               "joints:\n"
               "  - {name: crank_pivot, type: revolute, body1: ground, body2: crank, point: [0, 0, "
               "0], axis: [1, 0, 0]}\n"
               "  - {name: ball, type: spherical, body1: crank, body2: rod, point: [0, %.17g, 0]}\n"
               "  - {name: cross, type: universal, body1: rod, body2: slider, point: [%.17g, "
               "%.17g, %.17g], axis1: [%.17g, %.17g, 0], axis2: [0, 0, 1]}\n"
               "  - {name: guide, type: prismatic, body1: ground, body2: slider, point: [%.17g, "
               "%.17g, %.17g], axis: [1, 0, 0]}\n"
               "motions:\n"
               "  - {name: motor, joint: crank_pivot, profile: polynomial, coefficients: [0, "
               "%.17g]}\n",
               spin[0], spin[1], spin[2], R, spin[0], spin[1], spin[2], a1[0] / n1, a1[1] / n1,
               spin[0], spin[1], spin[2], w);
  if (getenv("PT_DUMP")) fputs(text, stderr);
  pt_model *m = load_yaml(text);
  CHECK(pt_model_ndof(m) == 0, "slider-crank driven: dof %d", pt_model_ndof(m));
  pt_data *d = pt_data_new(m);
  pt_set_dt(d, 1e-3);
  const int guide = pt_coord_index(m, "guide"), crank = pt_coord_index(m, "crank_pivot");
  double maxerr = 0, maxrate = 0;
  for (int i = 0; i < 2500; i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "slider-crank step %d: %s", i, pt_strerror(rc));
    if (rc) break;
    const double th = w * pt_time(d);
    const double cy = y0 - R * cos(th), cz = z0 - R * sin(th);
    const double x = sqrt(L * L - cy * cy - cz * cz);
    // dx/dt from x^2 + cy^2 + cz^2 = L^2
    const double xd = -(cy * R * sin(th) * w - cz * R * cos(th) * w) / x;
    maxerr = fmax(maxerr, fabs(pt_coords(d)[guide] - (x - spin[0])));
    maxrate = fmax(maxrate, fabs(pt_coord_rates(d)[guide] - xd));
    CHECK(fabs(pt_coords(d)[crank] - th) < 1e-9, "crank angle %.12g vs %.12g", pt_coords(d)[crank], th);
    if (check_failures > 5) break;
  }
  printf("slider-crank 2.5 s: slider position error %.2e, rate error %.2e\n", maxerr, maxrate);
  CHECK(maxerr <= 1e-9, "slider position error %.3g", maxerr);
  CHECK(maxrate <= 1e-8, "slider rate error %.3g", maxrate);
  pt_data_free(d);
  pt_model_free(m);
}

// Crank-rocker four-bar in the x-z plane: ground pivots A (0,0,0), D (1,0,0); crank 0.3,
// coupler 0.9, rocker 0.8 (Grashof: the crank turns fully, never aligned with the coupler).
static void fourbar_text(char *text, size_t n, double off, double crank_rate) {
  const double a = 0.3, b = 0.9, c = 0.8, th = M_PI / 2;
  const double B[3] = {a * cos(th), 0, a * sin(th)};
  // C on circles |C-B| = b, |C-D| = c (upper solution)
  const double Dx = 1, dx = Dx - B[0], dz = -B[2], dd = sqrt(dx * dx + dz * dz);
  const double l = (b * b - c * c + dd * dd) / (2 * dd), h = sqrt(b * b - l * l);
  const double C[3] = {B[0] + (l * dx + h * dz) / dd, 0, B[2] + (l * dz - h * dx) / dd};
  const double A0[3] = {0, 0, 0}, D0[3] = {1, 0, 0};
  char *p = text;
  int k = snprintf(p, n, "model: fourbar\nbodies:\n");
  p += k, n -= (size_t)k;
  double Bo[3] = {B[0] + off, B[1] + off, B[2] - off};
  k = rod(p, n, "crank", 1.0, A0, Bo);
  p += k, n -= (size_t)k;
  k = rod(p, n, "coupler", 2.0, B, C);
  p += k, n -= (size_t)k;
  k = rod(p, n, "rocker", 1.5, C, D0);
  p += k, n -= (size_t)k;
  snprintf(p, n,
           "joints:\n"
           "  - {name: A, type: revolute, body1: ground, body2: crank, point: [0, 0, 0], axis: [0, 1, 0]}\n"
           "  - {name: B, type: revolute, body1: crank, body2: coupler, point: [%.17g, 0, %.17g], axis: [0, 1, 0]}\n"
           "  - {name: C, type: revolute, body1: coupler, body2: rocker, point: [%.17g, 0, %.17g], axis: [0, 1, 0]}\n"
           "  - {name: D, type: revolute, body1: rocker, body2: ground, point: [1, 0, 0], axis: [0, 1, 0]}\n"
           "coordinates:\n"
           "  - {name: crank_tip_x, type: point_position, body: crank, point: [%.17g, 0, %.17g], component: x}\n",
           B[0], B[2], C[0], C[2], B[0], B[2]);
  (void)crank_rate;
}

static void fourbar(void) {
  char text[8192];
  fourbar_text(text, sizeof(text), 0, 0);
  pt_model *m = load_yaml(text);
  CHECK(pt_model_ndof(m) == 1, "four-bar dof %d", pt_model_ndof(m));
  CHECK(pt_model_nconstraint(m) == 17, "four-bar independent rows %d (20 - 3 redundant)",
        pt_model_nconstraint(m));
  CHECK(strstr(pt_model_warnings(m), "redundant") != NULL, "warning: '%s'", pt_model_warnings(m));
  pt_data *d = pt_data_new(m);
  pt_error err;
  pt_assign v = {pt_coord_index(m, "A"), 6.0};  // crank turning at 6 rad/s
  CHECK(pt_set_state(m, d, NULL, 0, &v, 1, &err) == PT_OK, "%s", err.msg);
  CHECK_CLOSE(pt_coord_rates(d)[0], 6.0, 1e-10, "crank rate");
  pt_set_dt(d, 1e-3);
  const double e0 = energy(d);
  double drift = 0, res = 0;
  for (int i = 0; i < 5000; i++) {
    int rc = pt_step(m, d);
    CHECK(rc == PT_OK, "four-bar step %d: %s", i, pt_strerror(rc));
    if (rc) break;
    drift = fmax(drift, fabs(energy(d) - e0) / fabs(e0));
    res = fmax(res, pt_residual_position(d));
  }
  printf("four-bar 5 s: crank at %.3f rad, energy drift %.2e, max residual %.2e\n",
         pt_coords(d)[0], drift, res);
  CHECK(fabs(pt_coords(d)[0]) > 2 * M_PI, "the crank should have turned fully: %.3f",
        pt_coords(d)[0]);
  CHECK(drift <= 1e-6, "energy drift %.3g", drift);
  CHECK(res <= 1e-10, "residual %.3g", res);
  pt_data_free(d);
  pt_model_free(m);
}

static void assembly(void) {
  // Joints are placed from the t=0 body poses, so a model is "off its constraints" through its
  // motions and initial velocities: the crank is driven to 0.05 rad (constant motion), a slider
  // on the coupler to 1 cm, and the crank is given a velocity the joints do not allow.
  char text[8192];
  fourbar_text(text, sizeof(text), 0, 0);
  char *crank = strstr(text, "name: crank,");
  CHECK(crank != NULL, "text");
  char buf[10000];
  size_t pre = (size_t)(crank - text) + strlen("name: crank,");
  snprintf(buf, sizeof(buf),
           "%.*s velocity: [0.3, 0.2, -0.1], angular_velocity: [0.1, 2.0, 0.05],%s"
           "  - {name: block, mass: 0.2, inertia: [0.001, 0.001, 0.001], position: [0.45, 0, 0.3]}\n"
           "joints2:\n",
           (int)pre, text, text + pre);
  // the slider joint and the motions go after the joints list of fourbar_text
  char *coords = strstr(buf, "coordinates:");
  char *bodies_end = strstr(buf, "  - {name: block");
  char *joints2 = strstr(buf, "joints2:\n");
  CHECK(coords && bodies_end && joints2, "layout");
  // rebuild: bodies (with block) + joints (+ slide) + motions + coordinates
  char out[12000];
  char *jstart = strstr(buf, "joints:\n");
  snprintf(out, sizeof(out), "%.*s%.*s%.*s"
           "  - {name: slide, type: prismatic, body1: coupler, body2: block, point: [0.45, 0, 0.3],"
           " axis: [1, 0, 0]}\n"
           "motions:\n"
           "  - {name: hold, joint: A, profile: constant, value: 0.05}\n"
           "  - {name: push, joint: slide, profile: constant, value: 0.01}\n"
           "%.*s",
           (int)(jstart - buf), buf,                        // model + bodies before joints
           (int)(joints2 - bodies_end), bodies_end,         // the block body
           (int)(coords - jstart), jstart,                  // joints
           (int)(bodies_end - coords), coords);             // coordinates
  if (getenv("PT_DUMP")) fputs(out, stderr);
  pt_model *m = load_yaml(out);
  CHECK(strstr(pt_model_warnings(m), "assembly moved") != NULL, "warning '%s'",
        pt_model_warnings(m));
  CHECK(pt_model_ndof(m) == 0, "dof %d", pt_model_ndof(m));
  pt_data *d = pt_data_new(m);
  printf("assembly to 0.05 rad / 1 cm: residual %.2e, velocity residual %.2e\n",
         pt_residual_position(d), pt_residual_velocity(d));
  CHECK(pt_residual_position(d) <= 1e-12, "residual after assembly %.3g",
        pt_residual_position(d));
  CHECK(pt_residual_velocity(d) <= 1e-12, "velocity residual %.3g", pt_residual_velocity(d));
  CHECK_CLOSE(pt_coords(d)[pt_coord_index(m, "A")], 0.05, 1e-12, "crank angle");
  CHECK_CLOSE(pt_coords(d)[pt_coord_index(m, "slide")], 0.01, 1e-12, "slide");
  CHECK_CLOSE(pt_coord_rates(d)[pt_coord_index(m, "A")], 0.0, 1e-12, "crank rate");
  pt_data_free(d);
  pt_model_free(m);
}

int main(void) {
  slider_crank();
  fourbar();
  assembly();
  return finish("mechanisms");
}
