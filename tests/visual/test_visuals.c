// test_visuals: visual shapes in models (issue 13, item 1; issue 11, item 7).
//   YAML: every kind parses, poses given in the global t=0 frame land in the body frame
//   (compared with a rotation worked by hand), a body without shapes gets its equivalent
//   inertia box (edges from the closed form), a missing mesh is a warning and a box.
//   URDF: <visual> primitives with origins and named materials; package:// meshes load with
//   the files (found through the search path option and PARTITA_PACKAGE_PATH) and without
//   them (a warning, the link's inertia box).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "partita.h"

static int nfail;
#define CHECK(cond, ...)                                                 \
  do {                                                                   \
    if (!(cond)) {                                                       \
      nfail++;                                                           \
      fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);              \
      fprintf(stderr, __VA_ARGS__);                                      \
      fprintf(stderr, "\n");                                             \
    }                                                                    \
  } while (0)
#define NEAR(a, b, what) \
  CHECK(fabs((a) - (b)) <= 1e-12, "%s: %.17g vs %.17g", what, (double)(a), (double)(b))

static char tmp[256];

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
}

static pt_model *load(const char *path, const pt_load_options *opt) {
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_file(path, opt, &m, &err)) {
    CHECK(0, "%s: %s", path, err.msg);
    return NULL;
  }
  return m;
}

// A body turned 90 degrees about z (e0 = e3 = sqrt(1/2)) at (1, 0, 0), with one shape of each
// kind; a second body with no shapes and the inertia of a 1 x 2 x 3 box of 12 kg; a third, that
// box turned 30 degrees about z: diag(13, 10, 5) as R diag R^T, Ixx = 13 cos^2 + 10 sin^2 =
// 12.25, Iyy = 13 sin^2 + 10 cos^2 = 10.75, Ixy = (13 - 10) sin cos = 1.5 sin 60 deg.
static const char *yaml_text =
    "model: shapes\n"
    "bodies:\n"
    "  - name: a\n"
    "    mass: 1\n"
    "    inertia: [1, 1, 1]\n"
    "    position: [1, 0, 0]\n"
    "    orientation: {axis: [0, 0, 1], angle: 1.5707963267948966}\n"
    "    visuals:\n"
    "      - type: box\n"
    "        size: [0.1, 0.2, 0.3]\n"
    "        position: [1, 1, 0]\n"           // global: 1 along global y = body x
    "        rgba: [1, 0, 0, 0.5]\n"
    "      - type: sphere\n"
    "        radius: 0.25\n"                  // at the CoM, body axes
    "      - type: cylinder\n"
    "        radius: 0.05\n"
    "        length: 0.5\n"
    "        orientation: [1, 0, 0, 0]\n"     // global axes: -90 degrees about body z
    "      - type: capsule\n"
    "        radius: 0.02\n"
    "        length: 0.4\n"
    "      - type: mesh\n"
    "        file: part.stl\n"
    "        scale: [0.001, 0.001, 0.001]\n"
    "      - type: mesh\n"
    "        file: meshes/missing.dae\n"
    "  - name: b\n"
    "    mass: 12\n"
    "    inertia: [13, 10, 5]\n"
    "    position: [0, 0, -2]\n"
    "  - name: c\n"
    "    mass: 12\n"
    "    inertia: [12.25, 10.75, 5, 1.299038105676658, 0, 0]\n"
    "    position: [0, 0, -3]\n"
    "joints:\n"
    "  - {name: j, type: revolute, body1: ground, body2: a, point: [0, 0, 0], axis: [0, 0, 1]}\n"
    "  - {name: k, type: revolute, body1: a, body2: b, point: [0, 0, -1], axis: [0, 1, 0]}\n"
    "  - {name: l, type: revolute, body1: b, body2: c, point: [0, 0, -2.5], axis: [0, 1, 0]}\n";

static void test_yaml(void) {
  char path[400], stl[400];
  snprintf(path, sizeof(path), "%s/shapes.yaml", tmp);
  snprintf(stl, sizeof(stl), "%s/part.stl", tmp);
  write_file(path, yaml_text);
  write_file(stl, "solid part\nendsolid part\n");
  pt_model *m = load(path, NULL);
  if (!m) return;
  CHECK(pt_model_nvisual(m) == 8, "nvisual %d, expected 6 + 2 generated", pt_model_nvisual(m));
  const pt_visual *v = pt_model_visual(m, 0);
  CHECK(v->type == PT_VISUAL_BOX && v->body == 0 && !v->generated, "box");
  NEAR(v->size[1], 0.2, "box size y");
  NEAR(v->pos[0], 1.0, "box x in body frame");   // A^T (0, 1, 0) = (1, 0, 0)
  NEAR(v->pos[1], 0.0, "box y in body frame");
  NEAR(v->quat[0], 1.0, "box axes = body axes");
  NEAR(v->rgba[1], 0.0, "box green");
  NEAR(v->rgba[3], 0.5, "box alpha");
  v = pt_model_visual(m, 1);
  CHECK(v->type == PT_VISUAL_SPHERE, "sphere");
  NEAR(v->size[0], 0.25, "sphere radius");
  NEAR(fabs(v->pos[0]) + fabs(v->pos[1]) + fabs(v->pos[2]), 0.0, "sphere at the CoM");
  v = pt_model_visual(m, 2);
  CHECK(v->type == PT_VISUAL_CYLINDER, "cylinder");
  NEAR(v->size[0], 0.05, "cylinder radius");
  NEAR(v->size[1], 0.5, "cylinder length");
  // conj(p0) * identity: e0 = sqrt(1/2), e3 = -sqrt(1/2)
  NEAR(v->quat[0], sqrt(0.5), "cylinder e0");
  NEAR(v->quat[3], -sqrt(0.5), "cylinder e3");
  v = pt_model_visual(m, 3);
  CHECK(v->type == PT_VISUAL_CAPSULE, "capsule");
  NEAR(v->size[1], 0.4, "capsule length");
  v = pt_model_visual(m, 4);
  CHECK(v->type == PT_VISUAL_MESH && !v->generated, "mesh found");
  CHECK(v->mesh[0] == '/' && strstr(v->mesh, "/part.stl"), "mesh path '%s'", v->mesh);
  CHECK(!strcmp(v->uri, "part.stl"), "mesh uri '%s'", v->uri);
  NEAR(v->scale[2], 0.001, "mesh scale");
  v = pt_model_visual(m, 5);
  CHECK(v->type == PT_VISUAL_BOX && v->generated, "missing mesh drawn as the inertia box");
  CHECK(!strcmp(v->uri, "meshes/missing.dae"), "missing mesh keeps its uri");
  NEAR(v->size[0], sqrt(6.0 * (1 + 1 - 1) / 1), "inertia box of a");
  CHECK(strstr(pt_model_warnings(m), "mesh \"meshes/missing.dae\" not found") != NULL,
        "warning for the missing mesh: '%s'", pt_model_warnings(m));
  v = pt_model_visual(m, 6);
  CHECK(v->body == 1 && v->generated && v->type == PT_VISUAL_BOX, "b's inertia box");
  NEAR(v->size[0], 1.0, "b box x");
  NEAR(v->size[1], 2.0, "b box y");
  NEAR(v->size[2], 3.0, "b box z");
  NEAR(v->quat[0], 1.0, "b box along the body axes");
  // the turned box: the same edges, along the body axes turned 30 degrees about z
  v = pt_model_visual(m, 7);
  CHECK(v->body == 2 && v->generated && v->type == PT_VISUAL_BOX, "c's inertia box");
  NEAR(v->size[0], 1.0, "c box x");
  NEAR(v->size[1], 2.0, "c box y");
  NEAR(v->size[2], 3.0, "c box z");
  NEAR(v->quat[0], cos(M_PI / 12), "c box e0 (30 degrees about z)");
  NEAR(v->quat[1], 0.0, "c box e1");
  NEAR(v->quat[2], 0.0, "c box e2");
  NEAR(v->quat[3], sin(M_PI / 12), "c box e3");
  pt_model_free(m);
}

// Two links: base (massless: the ground) and arm, on a revolute joint 0.5 m up, turned
// 90 degrees about x at the joint origin. Visuals: a box on the base (scenery), a cylinder
// with an origin and a named material, and a package:// mesh.
static const char *urdf_text =
    "<robot name=\"r\">\n"
    "  <material name=\"blue\"><color rgba=\"0 0 1 1\"/></material>\n"
    "  <link name=\"base\">\n"
    "    <visual><geometry><box size=\"1 1 0.1\"/></geometry></visual>\n"
    "  </link>\n"
    "  <link name=\"arm\">\n"
    "    <inertial><mass value=\"2\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" "
    "ixz=\"0\" iyz=\"0\"/></inertial>\n"
    "    <visual><origin xyz=\"0 0 0.2\"/><geometry><cylinder radius=\"0.03\" "
    "length=\"0.4\"/></geometry><material name=\"blue\"/></visual>\n"
    "    <visual><geometry><mesh filename=\"package://demo_pkg/meshes/arm.stl\" "
    "scale=\"2 2 2\"/></geometry></visual>\n"
    "    <visual><geometry><sphere radius=\"0.05\"/></geometry></visual>\n"
    "  </link>\n"
    "  <joint name=\"j\" type=\"revolute\"><parent link=\"base\"/><child link=\"arm\"/>\n"
    "    <origin xyz=\"0 0 0.5\" rpy=\"1.5707963267948966 0 0\"/><axis xyz=\"0 0 1\"/>\n"
    "    <limit effort=\"10\" lower=\"-1\" upper=\"1\" velocity=\"1\"/></joint>\n"
    "</robot>\n";

static void test_urdf(void) {
  char dir[300], path[400], mesh[600];
  snprintf(dir, sizeof(dir), "%s/robot", tmp);
  mkdir(dir, 0700);
  snprintf(path, sizeof(path), "%s/r.urdf", dir);
  write_file(path, urdf_text);
  // without the mesh file: loads, warns, draws the link's inertia box
  pt_model *m = load(path, NULL);
  if (!m) return;
  CHECK(pt_model_nvisual(m) == 4, "nvisual %d", pt_model_nvisual(m));
  const pt_visual *v = pt_model_visual(m, 0);
  CHECK(v->body == -1 && v->type == PT_VISUAL_BOX, "base box on the ground");
  NEAR(v->size[2], 0.1, "base box height");
  v = pt_model_visual(m, 1);
  CHECK(v->body == 0 && v->type == PT_VISUAL_CYLINDER, "arm cylinder");
  NEAR(v->rgba[2], 1.0, "named material blue");
  NEAR(v->rgba[0], 0.0, "named material red 0");
  // the arm's body frame is the link frame (inertial at the origin): the origin stays 0.2 z
  NEAR(v->pos[2], 0.2, "cylinder origin in the link frame");
  NEAR(v->quat[0], 1.0, "cylinder axes = link axes");
  v = pt_model_visual(m, 2);
  CHECK(v->type == PT_VISUAL_BOX && v->generated, "missing package mesh: inertia box");
  CHECK(!strcmp(v->uri, "package://demo_pkg/meshes/arm.stl"), "uri kept: '%s'", v->uri);
  NEAR(v->size[0], sqrt(6.0 * (1 + 1 - 1) / 2), "arm inertia box");
  CHECK(strstr(pt_model_warnings(m), "package://demo_pkg/meshes/arm.stl\" not found") != NULL,
        "missing mesh warning: '%s'", pt_model_warnings(m));
  pt_model_free(m);

  // with the mesh under a package directory given by the option
  snprintf(mesh, sizeof(mesh), "%s/pkgs", tmp);
  mkdir(mesh, 0700);
  snprintf(mesh, sizeof(mesh), "%s/pkgs/demo_pkg", tmp);
  mkdir(mesh, 0700);
  snprintf(mesh, sizeof(mesh), "%s/pkgs/demo_pkg/meshes", tmp);
  mkdir(mesh, 0700);
  snprintf(mesh, sizeof(mesh), "%s/pkgs/demo_pkg/meshes/arm.stl", tmp);
  write_file(mesh, "solid arm\nendsolid arm\n");
  char search[600];
  snprintf(search, sizeof(search), "/nonexistent:%s/pkgs", tmp);
  pt_load_options opt = {.package_path = search};
  m = load(path, &opt);
  if (!m) return;
  v = pt_model_visual(m, 2);
  CHECK(v->type == PT_VISUAL_MESH && !v->generated, "package mesh found");
  CHECK(strstr(v->mesh, "/pkgs/demo_pkg/meshes/arm.stl") != NULL, "resolved to '%s'", v->mesh);
  NEAR(v->scale[0], 2.0, "mesh scale");
  CHECK(strstr(pt_model_warnings(m), "not found") == NULL, "no warning: '%s'",
        pt_model_warnings(m));
  pt_model_free(m);

  // the same through PARTITA_PACKAGE_PATH
  snprintf(search, sizeof(search), "%s/pkgs", tmp);
  setenv("PARTITA_PACKAGE_PATH", search, 1);
  m = load(path, NULL);
  if (m) {
    CHECK(pt_model_visual(m, 2)->type == PT_VISUAL_MESH, "found through PARTITA_PACKAGE_PATH");
    pt_model_free(m);
  }
  unsetenv("PARTITA_PACKAGE_PATH");

  // malformed visuals are refused with file, line and link
  const char *bad =
      "<robot name=\"r\"><link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" "
      "iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n"
      "<visual><geometry><box size=\"1 x 1\"/></geometry></visual></link></robot>\n";
  pt_model *mb = NULL;
  pt_error err = {0};
  int rc = pt_model_load_string(bad, strlen(bad), 2, "bad.urdf", NULL, &mb, &err);
  CHECK(rc == PT_EPARSE && strstr(err.msg, "bad.urdf:2: link \"a\": <box size=\"1 x 1\">"),
        "bad box refused: %d '%s'", rc, err.msg);
  const char *neg =
      "<robot name=\"r\"><link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" "
      "iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n"
      "<visual><geometry><sphere radius=\"-1\"/></geometry></visual></link></robot>\n";
  rc = pt_model_load_string(neg, strlen(neg), 2, "neg.urdf", NULL, &mb, &err);
  CHECK(rc == PT_EPARSE && strstr(err.msg, "neg.urdf:2: link \"a\": <visual> <sphere> needs"),
        "negative radius refused: %d '%s'", rc, err.msg);
}

// A body whose inertia is a 1 x 2 x 3 box of 12 kg turned 45 degrees about z (off-diagonal
// Ixy): its inertia box has those edges, the 1 m edge along (1, 1, 0) / sqrt(2).
static void test_principal_box(void) {
  const char *text =
      "model: tilted\nbodies:\n  - name: b\n    mass: 12\n"
      "    inertia: [11.5, 11.5, 5, 1.5, 0, 0]\n    position: [0, 0, 0]\n";
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_string(text, strlen(text), 1, "tilted", NULL, &m, &err)) {
    CHECK(0, "%s", err.msg);
    return;
  }
  const pt_visual *v = pt_model_visual(m, 0);
  CHECK(v && v->generated, "generated box");
  double q[4] = {v->quat[0], v->quat[1], v->quat[2], v->quat[3]};
  // the box's axes in the body frame: columns of the rotation of q
  double A[9] = {1 - 2 * (q[2] * q[2] + q[3] * q[3]), 2 * (q[1] * q[2] - q[0] * q[3]),
                 2 * (q[1] * q[3] + q[0] * q[2]), 2 * (q[1] * q[2] + q[0] * q[3]),
                 1 - 2 * (q[1] * q[1] + q[3] * q[3]), 2 * (q[2] * q[3] - q[0] * q[1]),
                 2 * (q[1] * q[3] - q[0] * q[2]), 2 * (q[2] * q[3] + q[0] * q[1]),
                 1 - 2 * (q[1] * q[1] + q[2] * q[2])};
  int found = 0;
  for (int k = 0; k < 3; k++) {
    double x = A[k], y = A[3 + k], z = A[6 + k];
    if (fabs(v->size[k] - 1.0) < 1e-9) {
      found++;
      CHECK(fabs(fabs(x) - sqrt(0.5)) < 1e-9 && fabs(fabs(y) - sqrt(0.5)) < 1e-9 &&
                fabs(z) < 1e-9 && x * y > 0,
            "the 1 m edge along (1, 1, 0)/sqrt(2): (%g, %g, %g)", x, y, z);
    }
  }
  double sum = v->size[0] + v->size[1] + v->size[2];
  double prod = v->size[0] * v->size[1] * v->size[2];
  CHECK(found == 1 && fabs(sum - 6.0) < 1e-9 && fabs(prod - 6.0) < 1e-9,
        "edges %g %g %g, expected 1, 2, 3", v->size[0], v->size[1], v->size[2]);
  pt_model_free(m);
}

int main(void) {
  snprintf(tmp, sizeof(tmp), "/tmp/test_visuals.XXXXXX");
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    return 1;
  }
  test_yaml();
  test_urdf();
  test_principal_box();
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
  if (nfail) {
    fprintf(stderr, "%d checks failed\n", nfail);
    return 1;
  }
  printf("visuals: ok\n");
  return 0;
}
