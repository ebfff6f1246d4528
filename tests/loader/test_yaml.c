// test_yaml.c: the YAML model loader (src/load/load_yaml.c).
//
//   test_yaml SOURCE_ROOT [examples|conventions|bad|limits|fuzz|compile]
//
// examples:    every configs/models/*.yaml loads; per model, values are compared with the
//              physics the file describes (masses, geometry, closure of loops), and every
//              entry's line holds its `name:`.
// conventions: defaults and conversions of the loader on small inline models.
// bad:         every tests/loader/bad/*.yaml is refused with PT_EPARSE and a message that
//              contains the text of its first line `# expect: ...`.
// limits:      texts beyond the limits of pt_load_options and the documented bounds are
//              refused, each with its own message; libyaml never writes to stderr.
// fuzz:        truncated prefixes and random mutations of the examples never crash: each
//              load either succeeds or fails with a message.
// compile:     every example model compiles (assembles) with pt_model_compile.
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "partita.h"

static int failures;

#define CHECK(cond, ...)                                  \
  do {                                                    \
    if (!(cond)) {                                        \
      failures++;                                         \
      fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                       \
      fputc('\n', stderr);                                \
    }                                                     \
  } while (0)

#define NEAR(a, b, tol) CHECK(fabs((a) - (b)) <= (tol), "%.12g vs %.12g", (double)(a), (double)(b))

static const char *root;

// ---------------------------------------------------------------------------------------------
// Helpers.

static char *read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 4097 > cap) {
      cap = cap ? 2 * cap : 8192;
      char *nb = realloc(buf, cap);
      if (!nb) break;
      buf = nb;
    }
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  *len = n;
  return buf;
}

// Sorted *.yaml file names of a directory (at most 256).
static int list_yaml(const char *dir, char names[][256], int max) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < max) {
    size_t k = strlen(e->d_name);
    if (k > 5 && k < 256 && !strcmp(e->d_name + k - 5, ".yaml")) strcpy(names[n++], e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
  return n;
}

static pt_spec *load(const char *path) {
  size_t len = 0;
  char *text = read_text(path, &len);
  CHECK(text != NULL, "cannot read %s", path);
  if (!text) return NULL;
  pt_spec *s = NULL;
  pt_error err = {0};
  int rc = pt_spec_from_yaml(text, len, path, &s, &err);
  CHECK(rc == PT_OK && s, "%s: %s", path, err.msg);
  free(text);
  return s;
}

static pt_spec *load_string(const char *text, pt_error *err) {
  pt_spec *s = NULL;
  memset(err, 0, sizeof(*err));
  int rc = pt_spec_from_yaml(text, strlen(text), "inline.yaml", &s, err);
  CHECK((rc == PT_OK) == (s != NULL), "rc %d but spec %p", rc, (void *)s);
  return s;
}

static const pt_spec_body *body(const pt_spec *s, const char *name) {
  for (int i = 0; i < s->nbody; i++)
    if (!strcmp(s->bodies[i].name, name)) return &s->bodies[i];
  CHECK(0, "no body %s", name);
  return NULL;
}

static const pt_spec_joint *joint(const pt_spec *s, const char *name) {
  for (int i = 0; i < s->njoint; i++)
    if (!strcmp(s->joints[i].name, name)) return &s->joints[i];
  CHECK(0, "no joint %s", name);
  return NULL;
}

static double dist(const double a[3], const double b[3]) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
              (a[2] - b[2]) * (a[2] - b[2]));
}

static double dot(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// v rotated by the Euler parameters e (v' = v + 2 e0 (e x v) + 2 e x (e x v)).
static void rotate(const double q[4], const double v[3], double out[3]) {
  const double *e = q + 1;
  double t[3] = {e[1] * v[2] - e[2] * v[1], e[2] * v[0] - e[0] * v[2],
                 e[0] * v[1] - e[1] * v[0]};
  double u[3] = {e[1] * t[2] - e[2] * t[1], e[2] * t[0] - e[0] * t[2],
                 e[0] * t[1] - e[1] * t[0]};
  for (int i = 0; i < 3; i++) out[i] = v[i] + 2 * q[0] * t[i] + 2 * u[i];
}

// The source line `line` of `text` contains `want`.
static int line_contains(const char *text, int line, const char *want) {
  const char *p = text;
  for (int i = 1; i < line && p; i++) {
    p = strchr(p, '\n');
    if (p) p++;
  }
  if (!p) return 0;
  const char *end = strchr(p, '\n');
  size_t n = end ? (size_t)(end - p) : strlen(p);
  char got[512];
  snprintf(got, sizeof(got), "%.*s", (int)(n < 511 ? n : 511), p);
  return line >= 1 && strstr(got, want) != NULL;
}

static int line_has_name(const char *text, int line, const char *name) {
  char want[96];
  snprintf(want, sizeof(want), "name: %s", name);
  return line_contains(text, line, want);
}

// ---------------------------------------------------------------------------------------------
// Per-model checks: the numbers come from each model's physical description.

static void check_pendulum(const pt_spec *s) {
  CHECK(s->nbody == 1 && s->njoint == 1, "sizes");
  const pt_spec_body *b = body(s, "rod");
  const pt_spec_joint *j = joint(s, "hinge");
  if (!b || !j) return;
  NEAR(b->mass, 1.0, 0);
  NEAR(b->inertia[1], (1.0 + 3 * 0.01 * 0.01) / 12, 1e-6);  // m (3 r^2 + l^2) / 12
  NEAR(b->inertia[3] + b->inertia[4] + b->inertia[5], 0, 0);
  NEAR(dist(b->position, j->point), 0.5, 1e-12);             // CoM half-way down the rod
  CHECK(j->type == PT_JOINT_REVOLUTE && !strcmp(j->body1, "ground"), "hinge");
  NEAR(j->axis[1], 1.0, 1e-15);
  NEAR(s->dt, 0.001, 0);
  CHECK(s->has_integrator && s->integrator == PT_INT_RK4, "integrator");
  CHECK(s->nactuator == 1 && s->actuators[0].type == PT_ACT_JOINT_TORQUE, "actuator");
  CHECK(s->ncoord == 1 && s->coords[0].component == 2, "tip_z");
  NEAR(s->coords[0].point[2], -1.0, 0);
}

static void check_double_pendulum(const pt_spec *s) {
  CHECK(s->nbody == 2 && s->njoint == 2 && s->dt == 0 && !s->has_integrator, "sizes");
  NEAR(s->gravity[2], -9.81, 0);
  const pt_spec_body *lo = body(s, "lower");
  const pt_spec_joint *elbow = joint(s, "elbow");
  if (!lo || !elbow) return;
  // The rod axis (body z) turned onto +x by a quarter turn about y.
  double z[3] = {0, 0, 1}, d[3];
  rotate(lo->quat, z, d);
  NEAR(d[0], 1.0, 1e-12);
  NEAR(lo->quat[0], cos(M_PI / 4), 1e-12);
  NEAR(dist(lo->position, elbow->point), 0.5, 1e-12);
  CHECK(s->ncoord == 1 && s->coords[0].type == PT_UCOORD_DISTANCE, "reach");
  NEAR(s->coords[0].point2[0], 1.0, 0);
}

static void check_slider_crank(const pt_spec *s) {
  CHECK(s->nbody == 3 && s->njoint == 4 && s->nmotion == 1, "sizes");
  const pt_spec_joint *rev = joint(s, "crank_pivot"), *sph = joint(s, "crank_pin");
  const pt_spec_joint *uni = joint(s, "slider_pin"), *pri = joint(s, "slider_guide");
  const pt_spec_body *rod = body(s, "rod");
  if (!rev || !sph || !uni || !pri || !rod) return;
  CHECK(rev->type == PT_JOINT_REVOLUTE && sph->type == PT_JOINT_SPHERICAL &&
            uni->type == PT_JOINT_UNIVERSAL && pri->type == PT_JOINT_PRISMATIC,
        "joint types");
  NEAR(rev->axis[0], 1.0, 1e-15);
  NEAR(sph->point[1], 0.08, 0);
  NEAR(uni->point[0], sqrt(0.0752), 1e-15);
  NEAR(dist(uni->point, sph->point), 0.3, 1e-12);  // the rod length
  double d[3];
  for (int i = 0; i < 3; i++) d[i] = (uni->point[i] - sph->point[i]) / 0.3;
  NEAR(dot(uni->axis1, d), 0, 1e-12);              // axis1 = unit(z x d)
  NEAR(dot(uni->axis1, uni->axis1), 1, 1e-12);
  NEAR(uni->axis2[2], 1.0, 0);
  NEAR(pri->axis[0], 1.0, 0);
  double y[3] = {0, 1, 0}, ry[3];                 // the rod's body y lies along d
  rotate(rod->quat, y, ry);
  for (int i = 0; i < 3; i++) NEAR(ry[i], d[i], 1e-9);
  for (int i = 0; i < 3; i++) NEAR(rod->position[i], (uni->point[i] + sph->point[i]) / 2, 1e-12);
  const pt_spec_motion *m = &s->motions[0];
  CHECK(m->profile == PT_PROFILE_POLYNOMIAL && m->ncoef == 2 && !strcmp(m->joint, "crank_pivot"),
        "crank_motor");
  if (m->ncoef == 2) NEAR(m->coef[1], 2 * M_PI, 1e-12);
}

static void check_fourbar(const pt_spec *s) {
  CHECK(s->nbody == 3 && s->njoint == 4, "sizes");
  for (int i = 0; i < s->njoint; i++) {
    CHECK(s->joints[i].type == PT_JOINT_REVOLUTE, "joint %d", i);
    NEAR(s->joints[i].axis[1], 1.0, 0);
  }
  const pt_spec_joint *a = joint(s, "A"), *b = joint(s, "B"), *c = joint(s, "C"),
                      *d = joint(s, "D");
  if (!a || !b || !c || !d) return;
  NEAR(dist(a->point, d->point), 1.0, 1e-12);  // ground pivots
  NEAR(dist(a->point, b->point), 1.0, 1e-12);  // crank
  NEAR(dist(b->point, c->point), 1.0, 1e-12);  // coupler
  NEAR(dist(c->point, d->point), 1.0, 1e-12);  // rocker
  CHECK(s->integrator == PT_INT_ABM4 && s->has_integrator, "abm4");
}

static void check_top(const pt_spec *s) {
  CHECK(s->nbody == 1 && s->njoint == 1 && s->joints[0].type == PT_JOINT_SPHERICAL, "sizes");
  const pt_spec_body *b = body(s, "top");
  if (!b) return;
  double r = sqrt(dot(b->position, b->position));
  CHECK(r >= 0.1 && r <= 0.3, "CoM %g m from the pivot", r);
  NEAR(acos(b->position[2] / r), M_PI / 6, 1e-12);  // tilted 30 degrees
  double z[3] = {0, 0, 1}, axis[3];
  rotate(b->quat, z, axis);                         // the symmetry axis points at the CoM
  for (int i = 0; i < 3; i++) NEAR(axis[i], b->position[i] / r, 1e-12);
  CHECK(dot(b->angvel, axis) > 100, "spin %g", dot(b->angvel, axis));
  NEAR(b->inertia[0], b->inertia[1], 0);            // symmetric
}

static void check_tumbling(const pt_spec *s) {
  CHECK(s->nbody == 1 && s->njoint == 0, "sizes");
  CHECK(s->gravity[0] == 0 && s->gravity[1] == 0 && s->gravity[2] == 0, "no gravity");
  const pt_spec_body *b = &s->bodies[0];
  CHECK(b->angvel[0] != 0 && b->angvel[1] != 0 && b->angvel[2] != 0, "all three axes");
  CHECK(b->inertia[0] < b->inertia[1] && b->inertia[1] < b->inertia[2], "asymmetric");
}

static void check_door(const pt_spec *s) {
  const pt_spec_body *b = body(s, "door");
  const pt_spec_joint *j = joint(s, "hinge");
  if (!b || !j) return;
  NEAR(b->mass, 30, 0);
  NEAR(b->inertia[2], 2.5, 0);
  NEAR(j->axis[2], 1.0, 0);
  NEAR(hypot(b->position[0] - j->point[0], b->position[1] - j->point[1]), 0.5, 1e-12);
  CHECK(s->nmotion == 1 && s->motions[0].profile == PT_PROFILE_SINE, "door_motor");
  NEAR(s->motions[0].amplitude, M_PI / 2, 1e-12);
  NEAR(s->motions[0].omega, M_PI / 4, 1e-12);
  CHECK(s->nforce == 1 && s->forces[0].type == PT_FORCE_TORSION_SPRING, "spring");
  NEAR(s->forces[0].stiffness, 8, 0);
  NEAR(s->forces[0].damping, 1, 0);
  NEAR(s->forces[0].free_angle, 0, 0);
  NEAR(b->angvel[2], M_PI * M_PI / 8, 1e-12);  // phi'(0) of the motion
}

static void check_chain7(const pt_spec *s) {
  CHECK(s->nbody == 7 && s->njoint == 7, "sizes");
  if (s->nbody != 7 || s->njoint != 7) return;
  for (int i = 0; i < 7; i++) {
    CHECK(s->joints[i].type == PT_JOINT_REVOLUTE, "j%d", i + 1);
    NEAR(s->joints[i].axis[1], 1.0, 0);
    NEAR(s->joints[i].point[0], 0.5 * i, 1e-12);
    NEAR(s->bodies[i].position[0], 0.5 * i + 0.25, 1e-12);  // CoM mid-link
  }
}

static void check_joint_model(const pt_spec *s, pt_joint_type type) {
  CHECK(s->njoint >= 1 && s->joints[0].type == type, "joint type");
}

static void check_joint_revolute(const pt_spec *s) {
  check_joint_model(s, PT_JOINT_REVOLUTE);
  NEAR(s->bodies[0].inertia[2], 2.0 * 0.2 * 0.2 / 2, 1e-12);  // disc m r^2 / 2
  NEAR(s->joints[0].damping, 0.05, 0);
  CHECK(s->nforce == 1 && s->forces[0].type == PT_FORCE_TORQUE, "torque");
  NEAR(s->forces[0].value[2], 0.5, 0);
}

static void check_joint_prismatic(const pt_spec *s) {
  check_joint_model(s, PT_JOINT_PRISMATIC);
  CHECK(s->nforce == 1 && s->forces[0].type == PT_FORCE_SPRING_DAMPER, "spring_damper");
  NEAR(s->forces[0].stiffness, 200, 0);
  NEAR(s->forces[0].free_length, 0.5, 0);
  NEAR(dist(s->forces[0].point2, s->bodies[0].position), 0, 0);
  CHECK(s->nactuator == 1 && s->actuators[0].type == PT_ACT_JOINT_FORCE, "joint_force");
}

static void check_joint_cylindrical(const pt_spec *s) {
  check_joint_model(s, PT_JOINT_CYLINDRICAL);
  CHECK(s->nmotion == 1 && !strcmp(s->motions[0].coordinate, "slide"), "slide motion");
  CHECK(s->nforce == 2 && s->forces[1].type == PT_FORCE_FORCE, "force");
  NEAR(s->forces[1].value[1], 1.0, 0);
}

static void check_joint_spherical(const pt_spec *s) {
  check_joint_model(s, PT_JOINT_SPHERICAL);
  const pt_spec_body *b = &s->bodies[0];
  NEAR(sqrt(dot(b->position, b->position)), 0.5, 1e-12);
  CHECK(s->nactuator == 1 && s->actuators[0].type == PT_ACT_BODY_FORCE, "body_force");
  CHECK(s->actuators[0].frame_body == 0, "global frame");
  NEAR(dist(s->actuators[0].point, s->joints[0].point), 1.0, 1e-12);  // the rod's tip
}

static void check_joint_universal(const pt_spec *s) {
  check_joint_model(s, PT_JOINT_UNIVERSAL);
  NEAR(s->joints[0].axis1[0], 1.0, 0);
  NEAR(s->joints[0].axis2[1], 1.0, 0);
  CHECK(s->nactuator == 1 && s->actuators[0].type == PT_ACT_BODY_TORQUE, "body_torque");
  CHECK(s->actuators[0].frame_body == 1, "body frame");
}

static void check_joint_fixed(const pt_spec *s) {
  check_joint_model(s, PT_JOINT_FIXED);
  CHECK(s->nforce == 1 && s->forces[0].type == PT_FORCE_BUSHING && s->forces[0].has_axes,
        "bushing");
  NEAR(s->forces[0].stiffness6[0], 1e4, 0);
  NEAR(s->forces[0].damping6[5], 0.5, 0);
  NEAR(s->forces[0].axes[4], 1.0, 0);
  const pt_spec_body *p = body(s, "payload");
  if (p) NEAR(p->inertia[0], 2.0 * (0.1 * 0.1 + 0.2 * 0.2) / 12, 1e-7);
}

// dof: 6 per body minus what the joints and motions take (Gruebler), counted by hand from
// each model's description; the planar four-bar's redundant rows do not count.
static const struct {
  const char *file;
  void (*check)(const pt_spec *s);
  int dof;
} models[] = {
    {"pendulum.yaml", check_pendulum, 1},
    {"double_pendulum.yaml", check_double_pendulum, 2},
    {"slider_crank.yaml", check_slider_crank, 0},          // 18 - 5 - 3 - 4 - 5 - 1
    {"fourbar_parallelogram.yaml", check_fourbar, 1},
    {"top.yaml", check_top, 3},
    {"tumbling.yaml", check_tumbling, 6},
    {"door.yaml", check_door, 0},
    {"chain7.yaml", check_chain7, 7},
    {"joint_revolute.yaml", check_joint_revolute, 1},
    {"joint_prismatic.yaml", check_joint_prismatic, 1},
    {"joint_cylindrical.yaml", check_joint_cylindrical, 1},  // 6 - 4 - 1 (the slide motion)
    {"joint_spherical.yaml", check_joint_spherical, 3},
    {"joint_universal.yaml", check_joint_universal, 2},
    {"joint_fixed.yaml", check_joint_fixed, 6},             // 12 - 6: the bushing holds it
};
#define NMODELS ((int)(sizeof(models) / sizeof(models[0])))

// Every entry's line holds its name, and every quaternion is a unit one.
static void check_lines(const pt_spec *s, const char *text) {
  CHECK(!strncmp(s->source, root, strlen(root)), "source %s", s->source);
  for (int i = 0; i < s->nbody; i++) {
    const pt_spec_body *b = &s->bodies[i];
    CHECK(line_has_name(text, b->line, b->name), "%s: body %s at line %d", s->model, b->name,
          b->line);
    NEAR(b->quat[0] * b->quat[0] + b->quat[1] * b->quat[1] + b->quat[2] * b->quat[2] +
             b->quat[3] * b->quat[3],
         1.0, 1e-12);
  }
#define LINES(n, arr)                                                                       \
  for (int i = 0; i < s->n; i++)                                                            \
    CHECK(line_has_name(text, s->arr[i].line, s->arr[i].name), "%s: %s at line %d", s->model, \
          s->arr[i].name, s->arr[i].line);
  LINES(njoint, joints)
  LINES(nmotion, motions)
  LINES(nforce, forces)
  LINES(nactuator, actuators)
  LINES(ncoord, coords)
#undef LINES
  CHECK(line_contains(text, s->line, "model:"), "model line %d", s->line);
}

static void test_examples(void) {
  char dir[4096], names[256][256];
  snprintf(dir, sizeof(dir), "%s/configs/models", root);
  int n = list_yaml(dir, names, 256);
  CHECK(n >= NMODELS, "%d example models in %s", n, dir);
  int seen_kind[7] = {0};  // bushing, force, torque, point_position, distance, bforce, btorque
  for (int k = 0; k < n; k++) {
    char path[4400];
    if (snprintf(path, sizeof(path), "%s/%s", dir, names[k]) >= (int)sizeof(path)) continue;
    size_t len = 0;
    char *text = read_text(path, &len);
    pt_spec *s = load(path);
    if (s && text) {
      check_lines(s, text);
      for (int i = 0; i < NMODELS; i++)
        if (!strcmp(models[i].file, names[k])) models[i].check(s);
      for (int i = 0; i < s->nforce; i++) {
        seen_kind[0] |= s->forces[i].type == PT_FORCE_BUSHING;
        seen_kind[1] |= s->forces[i].type == PT_FORCE_FORCE;
        seen_kind[2] |= s->forces[i].type == PT_FORCE_TORQUE;
      }
      for (int i = 0; i < s->ncoord; i++) {
        seen_kind[3] |= s->coords[i].type == PT_UCOORD_POINT_POSITION;
        seen_kind[4] |= s->coords[i].type == PT_UCOORD_DISTANCE;
      }
      for (int i = 0; i < s->nactuator; i++) {
        seen_kind[5] |= s->actuators[i].type == PT_ACT_BODY_FORCE;
        seen_kind[6] |= s->actuators[i].type == PT_ACT_BODY_TORQUE;
      }
    }
    pt_spec_free(s);
    free(text);
  }
  for (int i = 0; i < 7; i++) CHECK(seen_kind[i], "no example of element kind %d", i);
  for (int i = 0; i < NMODELS; i++) {
    int found = 0;
    for (int k = 0; k < n; k++) found |= !strcmp(models[i].file, names[k]);
    CHECK(found, "missing example %s", models[i].file);
  }
}

// ---------------------------------------------------------------------------------------------
// Conventions on inline models.

static const char *const MINIMAL = "model: m\n"
                                   "bodies:\n"
                                   "  - {name: b, mass: 2, inertia: [1, 2, 2.5], position: "
                                   "[1, 2, 3]}\n";

// Collision shapes, the ground and the contact settings (issue 22): parsed into the spec with
// the visuals' conventions; defaults when absent.
static void test_contact_keys(void) {
  pt_error err;
  pt_spec *s = load_string(MINIMAL, &err);
  CHECK(s && s->ncollision == 0 && s->contact_friction == 0.5 && s->contact_restitution == 0 &&
            s->max_contacts == 0 && s->nexclude == 0 && s->ncontact_pair == 0,
        "contact defaults");
  pt_spec_free(s);
  s = load_string("model: m\n"
                  "ground:\n"
                  "  collision:\n"
                  "    - {type: plane, point: [0, 0, -1], normal: [0, 0, 2]}\n"
                  "    - {type: box, size: [4, 4, 0.2], position: [0, 0, -1.1]}\n"
                  "bodies:\n"
                  "  - name: a\n    mass: 1\n    inertia: [1, 1, 1]\n    position: [1, 2, 3]\n"
                  "    collision:\n"
                  "      - {type: sphere, radius: 0.1}\n"
                  "      - {type: capsule, radius: 0.05, length: 0.4, position: [1, 2, 3.5]}\n"
                  "  - name: b\n    mass: 1\n    inertia: [1, 1, 1]\n    position: [0, 0, 0]\n"
                  "    collision:\n"
                  "      - {type: mesh, file: part.stl, scale: [0.001, 0.001, 0.001]}\n"
                  "contact:\n"
                  "  friction: 0.8\n"
                  "  restitution: 0.25\n"
                  "  max_contacts: 64\n"
                  "  exclude: [[a, b]]\n"
                  "  pairs:\n"
                  "    - {body1: a, body2: ground, friction: 1.2}\n"
                  "    - {body1: b, body2: a, restitution: 0.5}\n",
                  &err);
  CHECK(s, "%s", err.msg);
  if (!s) return;
  CHECK(s->ncollision == 5, "collision shapes: %d", s->ncollision);
  if (s->ncollision == 5) {
    const pt_spec_visual *c = s->collisions;
    CHECK(c[0].type == PT_VISUAL_PLANE && !strcmp(c[0].body, "ground") && c[0].line == 4,
          "ground plane: type %d, body %s, line %d", c[0].type, c[0].body, c[0].line);
    NEAR(c[0].normal[2], 1, 1e-15);
    NEAR(c[0].point[2], -1, 0);
    CHECK(c[1].type == PT_VISUAL_BOX && !strcmp(c[1].body, "ground") && c[1].has_position,
          "ground box");
    CHECK(c[2].type == PT_VISUAL_SPHERE && !strcmp(c[2].body, "a") && c[2].size[0] == 0.1 &&
              !c[2].has_position && c[2].index == 0,
          "sphere on a");
    CHECK(c[3].type == PT_VISUAL_CAPSULE && !strcmp(c[3].body, "a") && c[3].size[1] == 0.4 &&
              c[3].index == 1,
          "capsule on a");
    CHECK(c[4].type == PT_VISUAL_MESH && !strcmp(c[4].body, "b") && !strcmp(c[4].uri, "part.stl")
              && c[4].scale[0] == 0.001,
          "mesh on b");
  }
  CHECK(s->nvisual == 0, "collision shapes are not visuals: %d", s->nvisual);
  CHECK(s->contact_friction == 0.8 && s->contact_restitution == 0.25 && s->max_contacts == 64,
        "contact settings");
  CHECK(s->nexclude == 1 && !strcmp(s->excludes[0].body1, "a") &&
            !strcmp(s->excludes[0].body2, "b") && s->excludes[0].line == 24,
        "exclude");
  CHECK(s->ncontact_pair == 2, "pairs: %d", s->ncontact_pair);
  if (s->ncontact_pair == 2) {
    const pt_spec_contact_pair *p = s->contact_pairs;
    CHECK(!strcmp(p[0].body2, "ground") && p[0].has_friction && p[0].friction == 1.2 &&
              !p[0].has_restitution && p[0].line == 26,
          "pair 0");
    CHECK(!strcmp(p[1].body1, "b") && !p[1].has_friction && p[1].has_restitution &&
              p[1].restitution == 0.5,
          "pair 1");
  }
  pt_spec_free(s);
}

static void test_conventions(void) {
  pt_error err;
  pt_spec *s = load_string(MINIMAL, &err);
  CHECK(s, "%s", err.msg);
  if (s) {
    // Defaults: gravity, dt not given, rk4 not given, identity, rest.
    NEAR(s->gravity[0], 0, 0);
    NEAR(s->gravity[2], -9.81, 0);
    CHECK(s->dt == 0 && s->integrator == PT_INT_RK4 && !s->has_integrator, "simulation");
    CHECK(!strcmp(s->source, "inline.yaml") && !strcmp(s->model, "m") && s->line == 1, "spec");
    const pt_spec_body *b = &s->bodies[0];
    CHECK(b->line == 3 && b->quat[0] == 1 && b->quat[3] == 0 && b->velocity[0] == 0, "body");
    NEAR(b->inertia[2], 2.5, 0);
    CHECK(b->inertia[3] == 0 && b->inertia[4] == 0 && b->inertia[5] == 0, "principal");
  }
  pt_spec_free(s);

  // A tensor with products of inertia: eigenvalues 1.5, 2, 2.5 (positive, triangle holds).
  // Orientation: Euler parameters normalised; axis-angle: e0 = cos(a/2), e = sin(a/2) unit axis.
  s = load_string("model: m\ngravity: [0, -9.81, 0]\nsimulation: {dt: 0.002, integrator: euler}\n"
                  "bodies:\n"
                  "  - name: a\n    mass: 1\n    inertia: [2, 2, 2, 0.5, 0, 0]\n"
                  "    position: [0, 0, 0]\n    orientation: [2, 0, 0, 0]\n"
                  "  - name: b\n    mass: 1\n    inertia: [1, 1, 1]\n    position: [0, 0, 0]\n"
                  "    orientation: {axis: [0, 0, 3], angle: 1.2}\n"
                  "    angular_velocity: [1, 2, 3]\n",
                  &err);
  CHECK(s, "%s", err.msg);
  if (s) {
    NEAR(s->gravity[1], -9.81, 0);
    CHECK(s->dt == 0.002 && s->integrator == PT_INT_EULER && s->has_integrator, "simulation");
    NEAR(s->bodies[0].inertia[3], 0.5, 0);
    NEAR(s->bodies[0].quat[0], 1, 0);
    NEAR(s->bodies[1].quat[0], cos(0.6), 1e-15);
    NEAR(s->bodies[1].quat[3], sin(0.6), 1e-15);
    NEAR(s->bodies[1].quat[1], 0, 0);
    NEAR(s->bodies[1].angvel[2], 3, 0);
    CHECK(s->bodies[1].line == 10, "line %d", s->bodies[1].line);
  }
  pt_spec_free(s);

  // Every entry kind with its conversions.
  s = load_string(
      "model: all.kinds-1\n"
      "bodies:\n"
      "  - {name: b, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}\n"
      "joints:\n"
      "  - {name: c, type: cylindrical, body1: ground, body2: b, point: [0, 0, 0],\n"
      "     axis: [0, 2, 0], damping: 0.5}\n"
      "  - {name: u, type: universal, body1: ground, body2: b, point: [0, 0, 0],\n"
      "     axis1: [3, 0, 0], axis2: [0, 0, 1]}\n"
      "motions:\n"
      "  - {name: m1, joint: c, coordinate: slide, profile: table,\n"
      "     points: [[0, 0], [1, 0.5], [2, 0.25]]}\n"
      "  - {name: m2, joint: u, coordinate: angle2, profile: step, t0: 1, value0: 0,\n"
      "     t1: 2, value1: 3}\n"
      "  - {name: m3, joint: c, profile: constant, value: 0.25}\n"
      "forces:\n"
      "  - {name: f, type: bushing, body1: ground, body2: b, point: [0, 0, 0],\n"
      "     stiffness: [1, 2, 3, 4, 5, 6], axes: [[0, -1, 0], [1, 0, 0], [0, 0, 1]]}\n"
      "  - {name: g, type: spring_damper, body1: ground, point1: [0, 0, 1], body2: b,\n"
      "     point2: [0, 0, 0], stiffness: 10, free_length: 0.5, preload: -1}\n"
      "actuators:\n"
      "  - {name: a, type: body_force, body: b, point: [0, 0, 0], frame: body, limit: 3}\n"
      "  - {name: t, type: body_torque, body: b}\n"
      "coordinates:\n"
      "  - {name: k, type: point_position, body: b, point: [1, 0, 0], component: y}\n",
      &err);
  CHECK(s, "%s", err.msg);
  if (s) {
    NEAR(s->joints[0].axis[1], 1.0, 0);  // axes are normalised
    NEAR(s->joints[0].damping, 0.5, 0);
    NEAR(s->joints[1].axis1[0], 1.0, 0);
    CHECK(s->joints[1].line == 7, "line %d", s->joints[1].line);
    const pt_spec_motion *m = s->motions;
    CHECK(m[0].npoint == 3 && !strcmp(m[0].coordinate, "slide"), "table");
    if (m[0].npoint == 3) NEAR(m[0].points[3], 0.5, 0);  // row-major (t, v) pairs
    CHECK(m[1].profile == PT_PROFILE_STEP && m[1].t1 == 2 && m[1].value1 == 3, "step");
    CHECK(!strcmp(m[1].coordinate, "angle2") && m[2].coordinate[0] == 0, "coordinate");
    NEAR(m[2].value, 0.25, 0);
    const pt_spec_force *f = s->forces;
    CHECK(f[0].has_axes && f[0].axes[1] == -1 && f[0].axes[3] == 1, "axes row-major");
    NEAR(f[0].stiffness6[5], 6, 0);
    NEAR(f[0].damping6[0], 0, 0);
    CHECK(!f[1].has_axes && f[1].stiffness == 10 && f[1].preload == -1, "spring_damper");
    CHECK(s->actuators[0].frame_body == 1 && s->actuators[0].limit == 3, "body_force");
    CHECK(s->actuators[1].frame_body == 0 && s->actuators[1].limit == 0, "body_torque");
    CHECK(s->coords[0].component == 1, "component");
  }
  pt_spec_free(s);

  // NULL source, empty optional sections.
  pt_spec *t = NULL;
  const char *text = "model: m\njoints:\nbodies:\n  - {name: b, mass: 1, inertia: [1, 1, 1], "
                     "position: [0, 0, 0]}\n";
  int rc = pt_spec_from_yaml(text, strlen(text), NULL, &t, &err);
  CHECK(rc == PT_OK && t && !strcmp(t->source, "<string>") && t->njoint == 0, "%s", err.msg);
  pt_spec_free(t);
  test_contact_keys();
}

// ---------------------------------------------------------------------------------------------
// Malformed files.

static void test_bad(void) {
  char dir[4096], names[256][256];
  snprintf(dir, sizeof(dir), "%s/tests/loader/bad", root);
  int n = list_yaml(dir, names, 256);
  CHECK(n >= 22, "only %d malformed models in %s", n, dir);
  for (int k = 0; k < n; k++) {
    char path[4400];
    if (snprintf(path, sizeof(path), "%s/%s", dir, names[k]) >= (int)sizeof(path)) continue;
    size_t len = 0;
    char *text = read_text(path, &len);
    if (!text) continue;
    char expect[512] = "";
    const char *tag = "# expect: ";
    if (!strncmp(text, tag, strlen(tag))) {
      const char *p = text + strlen(tag), *e = strchr(p, '\n');
      snprintf(expect, sizeof(expect), "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
    }
    CHECK(expect[0], "%s: first line is not `# expect: ...`", names[k]);
    pt_spec *s = NULL;
    pt_error err = {0};
    int rc = pt_spec_from_yaml(text, len, path, &s, &err);
    CHECK(rc == PT_EPARSE && s == NULL, "%s: rc %d", names[k], rc);
    CHECK(strstr(err.msg, expect) != NULL, "%s:\n  message: %s\n  expected: %s", names[k],
          err.msg, expect);
    CHECK(!strncmp(err.msg, path, strlen(path)), "%s: message does not start with the file",
          names[k]);
    pt_spec_free(s);
    free(text);
  }
}

// ---------------------------------------------------------------------------------------------
// Bounds.

// A growing text buffer (the tests build large models).
typedef struct {
  char *p;
  size_t n, cap;
} buf;

static void put(buf *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  if (b->n + (size_t)k + 1 > b->cap) {
    b->cap = 2 * (b->n + (size_t)k + 1);
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
  }
  memcpy(b->p + b->n, tmp, (size_t)k + 1);
  b->n += (size_t)k;
}

static void expect_fail_opt(const char *text, size_t len, const pt_load_options *opt,
                            const char *want) {
  pt_spec *s = NULL;
  pt_error err = {0};
  int rc = pt_spec_from_yaml_opt(text, len, "big.yaml", opt, &s, &err);
  CHECK(rc == PT_EPARSE && !s && strstr(err.msg, want), "%s (wanted %s)", err.msg, want);
  pt_spec_free(s);
}

static void expect_fail(const char *text, size_t len, const char *want) {
  expect_fail_opt(text, len, NULL, want);
}

#define BODY "{name: b%d, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}"

// Texts beyond the limits of pt_load_options (docs/model-format.md): each refused with its
// own message, at the line where the limit was crossed.
static void test_load_limits(void) {
  buf b = {0};
  // Bodies: the default, then a caller's smaller limit.
  put(&b, "model: big\nbodies:\n");
  for (int i = 0; i < PT_LOAD_MAX_BODIES + 1; i++) put(&b, "- " BODY "\n", i);
  expect_fail(b.p, b.n, "big.yaml:1003: bodies[1000]: more than 1000 bodies (max_bodies)");
  pt_load_options opt = {.max_bodies = 5};
  expect_fail_opt(b.p, b.n, &opt, "big.yaml:8: bodies[5]: more than 5 bodies (max_bodies)");
  opt.max_bodies = 2000;  // within the caller's limit: loads
  pt_spec *s = NULL;
  pt_error err = {0};
  CHECK(pt_spec_from_yaml_opt(b.p, b.n, "big.yaml", &opt, &s, &err) == PT_OK && s &&
            s->nbody == 1001, "%s", err.msg);
  pt_spec_free(s);

  // Joints.
  b.n = 0;
  put(&b, "model: big\nbodies:\n- " BODY "\njoints:\n", 0);
  for (int i = 0; i < 4; i++)
    put(&b, "- {name: j%d, type: spherical, body1: ground, body2: b0, point: [0, 0, 0]}\n", i);
  opt = (pt_load_options){.max_joints = 3};
  expect_fail_opt(b.p, b.n, &opt, "big.yaml:8: joints[3]: more than 3 joints (max_joints)");

  // 10 MB of text: refused before it is parsed, from a string, a model load and a file.
  b.n = 0;
  put(&b, "model: big\nbodies:\n- " BODY "\n", 0);
  while (b.n < 10000000) put(&b, "# %0100d\n", 0);
  const char *big = "big.yaml:1: model: text larger than 8388608 bytes (max_text_bytes)";
  expect_fail(b.p, b.n, big);
  pt_model *m = NULL;
  int rc = pt_model_load_string(b.p, b.n, 0, "big.yaml", NULL, &m, &err);
  CHECK(rc == PT_EPARSE && !m && strstr(err.msg, big), "%s", err.msg);
  char path[] = "/tmp/partita_big_XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
  CHECK(f && fwrite(b.p, 1, b.n, f) == b.n, "cannot write %s", path);
  if (f) fclose(f);
  rc = pt_spec_from_file(path, NULL, &s, &err);
  CHECK(rc == PT_EPARSE && !s && strstr(err.msg, "text larger than 8388608 bytes"), "%s",
        err.msg);
  unlink(path);
  opt = (pt_load_options){.max_text_bytes = 1000};
  expect_fail_opt(b.p, 1001, &opt, "big.yaml:1: model: text larger than 1000 bytes");

  // 100,000-deep nesting: flow and block style.
  b.n = 0;
  put(&b, "model: deep\nbodies: ");
  for (int i = 0; i < 100000; i++) put(&b, "[");
  expect_fail(b.p, b.n, "big.yaml:2: model: YAML nesting deeper than 32 levels (max_yaml_depth)");
  opt = (pt_load_options){.max_yaml_depth = 200};
  expect_fail_opt(b.p, b.n, &opt, "big.yaml:2: model: YAML nesting deeper than 200 levels");
  b.n = 0;
  put(&b, "model: deep\n");
  for (int i = 0; i < 100; i++) put(&b, "%*sk%d:\n", i, "", i);
  expect_fail(b.p, b.n, "big.yaml:34: model: YAML nesting deeper than 32 levels");

  // Nodes: a million and one numbers in a list of 3 are refused before they are read.
  b.n = 0;
  put(&b, "model: many\ngravity: [");
  for (int i = 0; i < PT_LOAD_MAX_YAML_NODES + 1; i++) put(&b, "0,");
  put(&b, "0]\nbodies:\n- " BODY "\n", 0);
  expect_fail(b.p, b.n, "big.yaml:2: model: more than 1000000 YAML nodes (max_yaml_nodes)");

  // "Billion laughs": every alias is refused at its first use, nothing is expanded.
  b.n = 0;
  put(&b, "model: lol\ngravity: &l0 [0, 0, -9.81]\n");
  const char *lists[] = {"bodies", "joints", "motions", "forces", "actuators", "coordinates"};
  for (int k = 0; k < 6; k++) {
    put(&b, "%s: &l%d [", lists[k], k + 1);
    for (int i = 0; i < 9; i++) put(&b, "%s*l%d", i ? ", " : "", k);
    put(&b, "]\n");
  }
  expect_fail(b.p, b.n, "big.yaml:3: model: YAML aliases are not supported (alias \"l0\")");

  // The older bounds: entries per list, table points, coefficients.
  b.n = 0;
  put(&b, "model: big\nbodies:\n");
  for (int i = 0; i < 10001; i++) put(&b, "- " BODY "\n", i);
  opt = (pt_load_options){.max_bodies = 20000};
  expect_fail_opt(b.p, b.n, &opt, ":10003: bodies[10000]: more than 10000 entries in bodies");

  b.n = 0;
  put(&b, "model: big\nbodies:\n- " BODY "\n"
          "motions:\n- name: m\n  joint: j\n  profile: table\n  points:\n", 0);
  for (int i = 0; i < 100001; i++) put(&b, "  - [%d, 0]\n", i);
  expect_fail(b.p, b.n, ":100009: motions[0] \"m\": points: more than 100000 table points");

  b.n = 0;
  put(&b, "model: big\nbodies:\n- " BODY "\n"
          "motions:\n- {name: m, joint: j, profile: polynomial, coefficients: [", 0);
  for (int i = 0; i < 101; i++) put(&b, "%s1", i ? ", " : "");
  put(&b, "]}\n");
  expect_fail(b.p, b.n, "coefficients: list of at most 100 numbers expected, got more values");
  free(b.p);
}

// libyaml never prints: hostile and malformed texts leave stderr empty (a client's model text
// must not write into the daemon's log).
static void test_silent(void) {
  static const char *docs[] = {
      "model: a\xff\xfe\n", "\xef\xbb\xbf\xfe\xff", "model: [\n", "a: *x\n", "a: &a\n  - *a\n",
      "%YAML 9.9\n--- a\n", "%TAG ! !\n--- !<x> a\n", "model: \"\\uD800\"\n", "\t- x\n",
      "model: 'a\n", "? [a\n: b\n", "model: x\nbodies: [{name: \"\\xff\"}]\n",
  };
  FILE *tmp = tmpfile();
  CHECK(tmp != NULL, "tmpfile");
  if (!tmp) return;
  fflush(stderr);
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  int refused = 0;
  for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
    pt_spec *s = NULL;
    pt_error err = {0};
    refused += pt_spec_from_yaml(docs[i], strlen(docs[i]), "x.yaml", &s, &err) != PT_OK;
    pt_spec_free(s);
  }
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  long printed = ftell(tmp);
  fclose(tmp);
  CHECK(printed == 0, "the loader wrote %ld bytes to stderr", printed);
  CHECK(refused == (int)(sizeof(docs) / sizeof(docs[0])), "%d refused", refused);
}

static void test_limits(void) {
  test_load_limits();
  test_silent();
}

// ---------------------------------------------------------------------------------------------
// Fuzz: prefixes and mutations of the examples.

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint32_t next_rand(void) {  // xorshift64*
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (uint32_t)((rng * 2685821657736338717u) >> 32);
}

static int nloads, nok;

static void fuzz_one(const char *text, size_t len) {
  pt_spec *s = NULL;
  pt_error err = {0};
  int rc = pt_spec_from_yaml(text, len, "fuzz.yaml", &s, &err);
  nloads++;
  if (rc == PT_OK) {
    nok++;
    CHECK(s != NULL, "OK without a spec");
  } else {
    CHECK(s == NULL && rc < 0 && err.msg[0] && err.code == rc, "rc %d, message \"%s\"", rc,
          err.msg);
  }
  pt_spec_free(s);
}

static void test_fuzz(void) {
  char dir[4096], names[256][256];
  snprintf(dir, sizeof(dir), "%s/configs/models", root);
  int n = list_yaml(dir, names, 256);
  static const char noise[] = "-:[]{},#&*!|>'\"%@` \n\t0.e+x\x01\xff";
  for (int k = 0; k < n; k++) {
    char path[4400];
    if (snprintf(path, sizeof(path), "%s/%s", dir, names[k]) >= (int)sizeof(path)) continue;
    size_t len = 0;
    char *text = read_text(path, &len);
    if (!text) continue;
    for (size_t cut = 0; cut <= len; cut++) fuzz_one(text, cut);
    char *m = malloc(len + 64);
    for (int trial = 0; trial < 300 && m; trial++) {
      memcpy(m, text, len);
      size_t mlen = len;
      int edits = 1 + (int)(next_rand() % 4);
      for (int e = 0; e < edits && mlen > 0; e++) {
        size_t at = next_rand() % mlen;
        uint32_t r = next_rand();
        char c = (r & 1) ? noise[(r >> 1) % (sizeof(noise) - 1)] : (char)(r >> 8);
        switch (r % 3) {
          case 0:  // replace
            m[at] = c;
            break;
          case 1:  // delete
            memmove(m + at, m + at + 1, mlen - at - 1);
            mlen--;
            break;
          default:  // insert
            if (mlen + 1 < len + 64) {
              memmove(m + at + 1, m + at, mlen - at);
              m[at] = c;
              mlen++;
            }
        }
      }
      fuzz_one(m, mlen);
    }
    free(m);
    free(text);
  }
  printf("fuzz: %d loads, %d accepted\n", nloads, nok);
  CHECK(nloads > 1000 && nok > 0 && nok < nloads, "%d loads, %d accepted", nloads, nok);
}

// ---------------------------------------------------------------------------------------------
// Every example model compiles and assembles.

static void test_compile(void) {
  char dir[4096], names[256][256];
  snprintf(dir, sizeof(dir), "%s/configs/models", root);
  int n = list_yaml(dir, names, 256);
  for (int k = 0; k < n; k++) {
    char path[4400];
    if (snprintf(path, sizeof(path), "%s/%s", dir, names[k]) >= (int)sizeof(path)) continue;
    pt_spec *s = load(path);
    if (!s) continue;
    pt_model *m = NULL;
    pt_error err = {0};
    int rc = pt_model_compile(s, &m, &err);
    CHECK(rc == PT_OK && m, "%s: %s", names[k], err.msg);
    if (m) printf("%s: %d dof\n%s", names[k], pt_model_ndof(m), pt_model_warnings(m));
    for (int i = 0; i < NMODELS && m; i++)
      if (!strcmp(models[i].file, names[k]))
        CHECK(pt_model_ndof(m) == models[i].dof, "%s: %d dof, expected %d", names[k],
              pt_model_ndof(m), models[i].dof);
    pt_model_free(m);
    pt_spec_free(s);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s SOURCE_ROOT [examples|conventions|bad|limits|fuzz|compile]\n",
            argv[0]);
    return 2;
  }
  root = argv[1];
  const char *only = argc > 2 ? argv[2] : "";
  static const struct {
    const char *name;
    void (*fn)(void);
  } tests[] = {{"examples", test_examples}, {"conventions", test_conventions},
               {"bad", test_bad},           {"limits", test_limits},
               {"fuzz", test_fuzz},         {"compile", test_compile}};
  for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
    if (only[0] && strcmp(only, tests[i].name)) continue;
    int before = failures;
    tests[i].fn();
    printf("%s: %s\n", tests[i].name, failures == before ? "ok" : "FAILED");
  }
  return failures ? 1 : 0;
}
