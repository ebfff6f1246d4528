// test_urdf_import.c: what a URDF from ROS carries beyond the mechanics (issue 11, item 1).
// Fixed and floating joints load whatever their <axis> says (ROS ignores it); every element
// or attribute the importer does not use is named in exactly one warning per kind, with its
// count and the line of the first; <visual> and <material> are never reported, and <collision>
// is imported (a <collision> without a geometry is said to be ignored).
#include "partita.h"
#include "urdf_test.h"

#define INERTIAL                                                                              \
  "<inertial><mass value=\"1\"/><inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" ixz=\"0\" " \
  "iyz=\"0\"/></inertial>"

static const char robot_xml[] =
    "<?xml version=\"1.0\"?>\n"                                                      // 1
    "<robot name=\"ros_arm\" version=\"1.0\">\n"                                     // 2
    "  <material name=\"grey\"><color rgba=\"0.5 0.5 0.5 1\"/></material>\n"         // 3
    "  <link name=\"world\"/>\n"                                                     // 4
    "  <joint name=\"weld\" type=\"fixed\"><parent link=\"world\"/><child link=\"base\"/>\n"
    "    <axis xyz=\"0 0 0\"/></joint>\n"                                            // 6
    "  <link name=\"base\">" INERTIAL "\n"                                           // 7
    "    <visual><geometry><box size=\"1 1 1\"/></geometry><material name=\"grey\"/></visual>\n"
    "    <collision><geometry><box size=\"1 1 1\"/></geometry></collision></link>\n"  // 9
    "  <joint name=\"j1\" type=\"revolute\"><parent link=\"base\"/><child link=\"l1\"/>\n"
    "    <axis xyz=\"0 0 1\"/><limit effort=\"10\" lower=\"-1\" upper=\"1\" velocity=\"2\"/>\n"
    "    <safety_controller k_velocity=\"10\"/><calibration rising=\"0.1\"/>\n"  // 12
    "    <dynamics damping=\"0.1\" friction=\"0.2\"/></joint>\n"                      // 13
    "  <link name=\"l1\">" INERTIAL "<collision/></link>\n"                           // 14
    "  <joint name=\"j2\" type=\"continuous\"><parent link=\"l1\"/><child link=\"l2\"/>\n"
    "    <axis xyz=\"1 0 0\"/><limit effort=\"5\" velocity=\"2\"/></joint>\n"         // 16
    "  <link name=\"l2\" type=\"laser\">" INERTIAL "</link>\n"                        // 17
    "  <joint name=\"tool\" type=\"fixed\"><parent link=\"l2\"/><child link=\"tool0\"/>\n"
    "    <axis xyz=\"0 0 0\"/></joint>\n"                                            // 19
    "  <link name=\"tool0\"/>\n"                                                     // 20
    "  <gazebo reference=\"l1\"><mu1>0.2</mu1></gazebo>\n"                           // 21
    "  <gazebo/>\n"                                                                  // 22
    "</robot>\n";

// The warnings that must appear, each once, in this order (first occurrence).
static const char *const expected[] = {
    "test.urdf:6: ignored <axis> of a fixed or floating joint (2 times, the first here): "
    "such a joint has no axis (URDF ignores it too)",
    "test.urdf:11: ignored <limit velocity> (2 times, the first here): velocity limits are not "
    "enforced",
    "test.urdf:12: ignored <joint><safety_controller>: controller settings, not mechanics",
    "test.urdf:12: ignored <joint><calibration>: calibration is for the real robot's encoders",
    "test.urdf:13: ignored <dynamics friction>: Coulomb friction is not imported (docs/urdf.md: "
    "it would need a velocity scale; YAML joints take friction and friction_velocity)",
    "test.urdf:17: ignored <link type>: not used by Partita",
    "test.urdf:21: ignored <gazebo> (2 times, the first here): Gazebo simulator settings",
    "test.urdf:14: link \"l1\": <collision> without a geometry ignored",
};

static void check_warnings(void) {
  pt_model *m = NULL;
  pt_error err = {0};
  int rc = pt_model_load_string(robot_xml, strlen(robot_xml), 2, "test.urdf", NULL, &m, &err);
  CHECK(rc == PT_OK, "load: %s", err.msg);
  if (rc) return;
  CHECK(pt_model_ndof(m) == 2, "ndof %d", pt_model_ndof(m));
  const char *w = pt_model_warnings(m);
  printf("%s", w);
  const size_t n = sizeof(expected) / sizeof(expected[0]);
  const char *at = w;
  int lines = 0;
  for (const char *c = w; *c; c++) lines += *c == '\n';
  CHECK(lines == (int)n, "%d warning lines, expected %zu", lines, n);
  for (size_t i = 0; i < n; i++) {
    const char *hit = strstr(w, expected[i]);
    CHECK(hit != NULL, "missing warning: %s", expected[i]);
    CHECK(!hit || !strstr(hit + 1, expected[i]), "warning twice: %s", expected[i]);
    CHECK(!hit || hit >= at, "warning out of order: %s", expected[i]);
    if (hit) at = hit;
  }
  CHECK(!strstr(w, "visual") && !strstr(w, "material") && !strstr(w, "color"),
        "visual or material reported");
  // <limit lower upper> of a revolute joint: the joint's limits (issue 11, item 4); a
  // continuous joint has none
  double lim[2] = {0, 0};
  int j1 = -1, j2 = -1;
  for (int j = 0; j < pt_model_njoint(m); j++) {
    if (!strcmp(pt_joint_name(m, j), "j1")) j1 = j;
    if (!strcmp(pt_joint_name(m, j), "j2")) j2 = j;
  }
  CHECK(pt_joint_limits(m, j1, lim) == 1 && lim[0] == -1 && lim[1] == 1,
        "j1 limits [%g, %g]", lim[0], lim[1]);
  CHECK(pt_joint_limits(m, j2, lim) == 0, "j2 (continuous) has limits");
  CHECK(pt_model_limits_enforced(m) == 1, "limits not enforced on a tree");
  pt_model_free(m);
}

// A file with nothing unused gives no warning at all.
static void check_clean(void) {
  static const char xml[] =
      "<robot name=\"clean\"><link name=\"world\"/>"
      "<joint name=\"j\" type=\"prismatic\"><parent link=\"world\"/><child link=\"b\"/>"
      "<origin xyz=\"0 0 1\" rpy=\"0 0 0\"/><axis xyz=\"0 0 1\"/><limit effort=\"3\"/>"
      "<dynamics damping=\"0.5\" friction=\"0.0\"/></joint>"
      "<link name=\"b\">" INERTIAL
      "<visual><geometry><box size=\"0.1 0.1 0.1\"/></geometry></visual></link></robot>";
  pt_model *m = NULL;
  pt_error err = {0};
  int rc = pt_model_load_string(xml, strlen(xml), 2, "clean.urdf", NULL, &m, &err);
  CHECK(rc == PT_OK, "load: %s", err.msg);
  if (rc) return;
  CHECK(strcmp(pt_model_warnings(m), "") == 0, "warnings: %s", pt_model_warnings(m));
  pt_model_free(m);
}

// A fixed joint's axis, even a malformed one, is not read: the robot means the same with any.
static void check_fixed_axis_ignored(void) {
  static const char *const axes[] = {"0 0 0", "1 0 0", "nan", "x y"};
  for (int k = 0; k < 4; k++) {
    char xml[1024];
    snprintf(xml, sizeof(xml),
             "<robot name=\"f\"><link name=\"a\">" INERTIAL "</link><link name=\"b\">" INERTIAL
             "</link><joint name=\"w\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/>"
             "<origin xyz=\"0 0 1\"/><axis xyz=\"%s\"/></joint></robot>",
             axes[k]);
    pt_spec *s = NULL;
    pt_error err = {0};
    int rc = pt_spec_from_urdf(xml, strlen(xml), "f.urdf", NULL, &s, &err);
    CHECK(rc == PT_OK, "fixed axis \"%s\": %s", axes[k], err.msg);
    if (rc) continue;
    CHECK(s->nbody == 1 && fabs(s->bodies[0].mass - 2) < 1e-15, "axis \"%s\": merged body",
          axes[k]);
    CHECK(s->warnings && strstr(s->warnings, "f.urdf:1: ignored <axis> of a fixed or floating"),
          "axis \"%s\": warning %s", axes[k], s->warnings ? s->warnings : "(none)");
    pt_spec_free(s);
  }
}

// A planar joint: its plane normal to <axis> in the joint frame, x along the joint frame's x
// axis; here the joint frame is turned 90 degrees about z, so x pushes along global y.
static void check_planar(void) {
  static const char xml[] =
      "<robot name=\"puck\"><link name=\"world\"/>"
      "<joint name=\"p\" type=\"planar\"><parent link=\"world\"/><child link=\"puck\"/>"
      "<origin xyz=\"0 0 1\" rpy=\"0 0 1.5707963267948966\"/><axis xyz=\"0 0 1\"/>"
      "<limit effort=\"4\"/></joint>"
      "<link name=\"puck\"><inertial><mass value=\"2\"/><inertia ixx=\"0.1\" iyy=\"0.1\" "
      "izz=\"0.1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link></robot>";
  pt_model *m = NULL;
  pt_error err = {0};
  int rc = pt_model_load_string(xml, strlen(xml), 2, "p.urdf", NULL, &m, &err);
  CHECK(rc == PT_OK, "planar: %s", err.msg);
  if (rc) return;
  CHECK(pt_model_ndof(m) == 3 && pt_model_ninput(m) == 3, "planar: ndof %d, inputs %d",
        pt_model_ndof(m), pt_model_ninput(m));
  static const char *const names[3] = {"p.x", "p.y", "p.angle"};
  for (int k = 0; k < 3; k++) {
    CHECK(pt_coord_index(m, names[k]) >= 0, "coordinate %s", names[k]);
    CHECK(pt_input_index(m, names[k]) >= 0 && pt_input_limit(m, pt_input_index(m, names[k])) == 4,
          "input %s", names[k]);
  }
  pt_data *d = pt_data_new(m);
  pt_set_input(m, d, pt_input_index(m, "p.x"), 1.0);
  for (int k = 0; k < 10; k++) pt_step(m, d);
  const double *v = pt_body_velocity(d, 0);  // gravity is along the normal: only the push
  CHECK_NEAR(v[0], 0, 1e-12, "planar x pushes along global y: vx");
  CHECK_NEAR(v[1], 0.5 * pt_time(d), 1e-12, "vy = F t / m");
  CHECK_NEAR(v[2], 0, 1e-12, "vz");
  CHECK_NEAR(pt_coord_rates(d)[pt_coord_index(m, "p.x")], 0.5 * pt_time(d), 1e-12, "p.x rate");
  pt_data_free(d);
  pt_model_free(m);
}

// <collision> is imported as the spec's collision shapes (issue 22): the pose through the link
// frame and the origin, the sizes as URDF gives them, on the body carrying the link (base,
// welded to the massless world link, is carried by the body "world" that the weld makes).
static void check_collisions(void) {
  static const char xml[] =
      "<robot name=\"r\">\n"
      "  <link name=\"world\"/>\n"
      "  <joint name=\"weld\" type=\"fixed\"><parent link=\"world\"/><child link=\"base\"/>"
      "<origin xyz=\"0 0 1\"/></joint>\n"
      "  <link name=\"base\">" INERTIAL
      "<collision><geometry><box size=\"1 2 3\"/></geometry></collision></link>\n"
      "  <joint name=\"j\" type=\"revolute\"><parent link=\"base\"/><child link=\"arm\"/>"
      "<origin xyz=\"1 0 0\"/><axis xyz=\"0 0 1\"/>"
      "<limit effort=\"1\" lower=\"-1\" upper=\"1\" velocity=\"1\"/></joint>\n"
      "  <link name=\"arm\">" INERTIAL "\n"
      "    <collision name=\"c\"><origin xyz=\"0 0 0.5\" rpy=\"0 1.5707963267948966 0\"/>"
      "<geometry><cylinder radius=\"0.1\" length=\"0.4\"/></geometry></collision>\n"
      "    <collision><geometry><sphere radius=\"0.2\"/></geometry></collision>\n"
      "    <collision><geometry><mesh filename=\"package://r/arm.stl\" scale=\"2 2 2\"/>"
      "</geometry></collision>\n"
      "    <collision><geometry><cone radius=\"1\"/></geometry></collision></link>\n"
      "</robot>\n";
  pt_spec *s = NULL;
  pt_error err = {0};
  int rc = pt_spec_from_urdf(xml, strlen(xml), "c.urdf", NULL, &s, &err);
  CHECK(rc == PT_OK, "collision URDF: %s", err.msg);
  if (rc) return;
  CHECK(s->ncollision == 4 && s->nvisual == 0, "%d collision shapes, %d visuals", s->ncollision,
        s->nvisual);
  if (s->ncollision == 4) {
    const pt_spec_visual *c = s->collisions;
    CHECK(c[0].type == PT_VISUAL_BOX && !strcmp(c[0].body, "world") && c[0].size[1] == 2 &&
              c[0].position[2] == 1,
          "box on the welded base: body %s", c[0].body);
    CHECK(c[1].type == PT_VISUAL_CYLINDER && !strcmp(c[1].body, "arm") && c[1].size[0] == 0.1 &&
              c[1].size[1] == 0.4,
          "cylinder on the arm");
    CHECK_NEAR(c[1].position[0], 1, 1e-15, "cylinder x");
    CHECK_NEAR(c[1].position[2], 1.5, 1e-15, "cylinder z");
    // its axis (z) turned by pitch 90 degrees onto x: Euler parameters (cos 45, 0, sin 45, 0)
    CHECK_NEAR(c[1].quat[2], sqrt(0.5), 1e-12, "cylinder orientation");
    CHECK(c[2].type == PT_VISUAL_SPHERE && c[2].size[0] == 0.2, "sphere");
    CHECK(c[3].type == PT_VISUAL_MESH && !strcmp(c[3].uri, "package://r/arm.stl") &&
              c[3].scale[2] == 2,
          "mesh");
  }
  CHECK(s->warnings && strstr(s->warnings, "c.urdf:10: link \"arm\": <collision> geometry "
                                           "<cone> unknown; ignored"),
        "unknown geometry: %s", s->warnings ? s->warnings : "");
  pt_spec_free(s);
}

int main(void) {
  check_warnings();
  check_clean();
  check_fixed_axis_ignored();
  check_planar();
  check_collisions();
  if (nfail) fprintf(stderr, "%d failures\n", nfail);
  else printf("urdf_import: all checks passed\n");
  return nfail ? 1 : 0;
}
