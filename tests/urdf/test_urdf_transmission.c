// test_urdf_transmission.c: URDF <transmission> reductions as actuator gears (issue 11, item
// 4). Two wheels spin about vertical axes (gravity does no work on them), so the joint
// acceleration is exactly reduction x input / I. Both of ROS's transmission spellings, a
// negative reduction, the effort limit moved to the motor side, inverse dynamics (the joint
// effort), the linearization's B column, a YAML `gear`, and the warnings for transmissions
// that are not imported.
#include "partita.h"
#include "urdf_test.h"

#define IZZ1 0.02
#define IZZ2 0.1  // w2 and w3, welded on the same axis: 0.05 each

#define WHEEL(name, izz)                                                                     \
  "<link name=\"" name "\"><inertial><mass value=\"1\"/><inertia ixx=\"0.03\" iyy=\"0.03\" " \
  "izz=\"" izz "\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"

static const char robot_xml[] =
    "<robot name=\"wheels\"><link name=\"world\"/>\n"                                   // 1
    WHEEL("w1", "0.02") WHEEL("w2", "0.05") WHEEL("w3", "0.05")                          // 2-4
    "<joint name=\"j1\" type=\"continuous\"><parent link=\"world\"/><child link=\"w1\"/>"
    "<axis xyz=\"0 0 1\"/><limit effort=\"20\"/></joint>\n"                               // 5
    "<joint name=\"j2\" type=\"continuous\"><parent link=\"world\"/><child link=\"w2\"/>"
    "<origin xyz=\"1 0 0\"/><axis xyz=\"0 0 1\"/></joint>\n"                              // 6
    "<joint name=\"j3\" type=\"fixed\"><parent link=\"w2\"/><child link=\"w3\"/>"
    "<origin xyz=\"0 0 1\"/></joint>\n"                                                    // 7
    "<transmission name=\"t1\" type=\"pr2_mechanism_model/SimpleTransmission\">\n"         // 8
    "  <actuator name=\"m1\"/><joint name=\"j1\"/><mechanicalReduction>50</mechanicalReduction>\n"
    "</transmission>\n"
    "<transmission name=\"t2\">\n"                                                       // 11
    "  <type> transmission_interface/SimpleTransmission\n </type>\n"
    "  <joint name=\"j2\"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>\n"
    "  <actuator name=\"m2\"><mechanicalReduction>-8</mechanicalReduction></actuator>\n"
    "</transmission>\n"
    "<transmission name=\"t3\"><type>transmission_interface/SimpleTransmission</type>\n"  // 17
    "  <joint name=\"j3\"/><actuator name=\"m3\"><mechanicalReduction>3</mechanicalReduction>"
    "</actuator></transmission>\n"
    "<transmission name=\"t4\"><type>transmission_interface/DifferentialTransmission</type>\n"
    "  <joint name=\"j1\"/><joint name=\"j2\"/></transmission>\n"                          // 19
    "</robot>\n";

static void check_urdf(void) {
  pt_model *m = NULL;
  pt_error err = {0};
  int rc = pt_model_load_string(robot_xml, strlen(robot_xml), 2, "w.urdf", NULL, &m, &err);
  CHECK(rc == PT_OK, "load: %s", err.msg);
  if (rc) return;
  const char *w = pt_model_warnings(m);
  printf("%s", w);
  CHECK(strstr(w, "w.urdf:17: ignored <transmission> of a joint that does not move (fixed, or "
                  "no such joint): only a SimpleTransmission of a moving joint becomes an "
                  "actuator gear"), "fixed joint's transmission: %s", w);
  CHECK(strstr(w, "w.urdf:19: ignored <transmission> of type "
                  "\"transmission_interface/DifferentialTransmission\""), "differential: %s", w);
  CHECK(!strstr(w, "hardwareInterface") && !strstr(w, "mechanicalReduction"), "parts: %s", w);
  const int u1 = pt_input_index(m, "j1"), u2 = pt_input_index(m, "j2");
  CHECK(u1 >= 0 && u2 >= 0, "inputs");
  CHECK_NEAR(pt_input_gear(m, u1), 50, 0, "gear j1");
  CHECK_NEAR(pt_input_gear(m, u2), -8, 0, "gear j2");
  CHECK_NEAR(pt_input_limit(m, u1), 20.0 / 50, 1e-15, "input limit = effort / reduction");
  CHECK_NEAR(pt_input_limit(m, u2), 0, 0, "no limit");
  // accelerations: reduction x input / I
  pt_data *d = pt_data_new(m);
  pt_set_input(m, d, u1, 0.1);
  pt_set_input(m, d, u2, 0.5);
  pt_forward(m, d);
  const int c1 = pt_coord_index(m, "j1"), c2 = pt_coord_index(m, "j2");
  CHECK_NEAR(pt_coord_accels(d)[c1], 50 * 0.1 / IZZ1, 1e-9, "j1 acceleration");
  CHECK_NEAR(pt_coord_accels(d)[c2], -8 * 0.5 / IZZ2, 1e-9, "j2 acceleration (w2 + w3 on axis)");
  // the limit is on the motor side: 1 clips to 0.4
  CHECK(pt_set_input(m, d, u1, 1.0) == 1 && fabs(pt_inputs(d)[u1] - 0.4) < 1e-15, "clip");
  // inverse dynamics reports the joint effort (I thetadd), whatever the inputs hold
  pt_inverse_result *res = pt_inverse_result_new(m, 2);
  pt_assign acc[2] = {{c1, 10}, {c2, -3}};
  rc = pt_inverse_request(m, d, acc, 2, res, &err);
  CHECK(rc == PT_OK, "inverse: %s", err.msg);
  if (!rc) {
    CHECK_NEAR(res->req_effort[0], IZZ1 * 10, 1e-12, "j1 joint effort");
    CHECK_NEAR(res->req_effort[1], IZZ2 * -3, 1e-12, "j2 joint effort");
  }
  pt_inverse_result_free(res);
  // linearization: d thetadd / d u = reduction / I
  pt_linearization *lin = NULL;
  rc = pt_linearize(m, d, NULL, &lin, &err);
  CHECK(rc == PT_OK, "linearize: %s", err.msg);
  if (!rc) {
    for (int i = 0; i < lin->nz; i++)
      for (int k = 0; k < lin->nu; k++) {
        const int ci = pt_coord_index(m, lin->state_name[i]);
        const int uk = pt_input_index(m, lin->input_name[k]);
        double want = 0;
        if (ci == c1 && uk == u1) want = 50 / IZZ1;
        if (ci == c2 && uk == u2) want = -8 / IZZ2;
        CHECK_NEAR(lin->B[(lin->nz + i) * lin->nu + k], want, 1e-9 * fmax(1, fabs(want)),
                   "B entry");
      }
  }
  pt_linearization_free(lin);
  pt_data_free(d);
  pt_model_free(m);
}

static void check_bad_reduction(void) {
  static const char *const bad[] = {"abc", "0", "1 2", "nan"};
  for (int k = 0; k < 4; k++) {
    char xml[1024];
    snprintf(xml, sizeof(xml),
             "<robot name=\"r\"><link name=\"world\"/>" WHEEL("w", "0.02")
             "<joint name=\"j\" type=\"continuous\"><parent link=\"world\"/><child link=\"w\"/>"
             "</joint>\n<transmission name=\"t\" type=\"SimpleTransmission\"><joint name=\"j\"/>"
             "\n<mechanicalReduction>%s</mechanicalReduction></transmission></robot>", bad[k]);
    pt_spec *s = NULL;
    pt_error err = {0};
    int rc = pt_spec_from_urdf(xml, strlen(xml), "t.urdf", NULL, &s, &err);
    CHECK(rc == PT_EPARSE && s == NULL &&
              strstr(err.msg, "t.urdf:4: transmission \"t\": <mechanicalReduction> must be one "
                              "finite non-zero number"),
          "reduction \"%s\": rc %d %s", bad[k], rc, err.msg);
    pt_spec_free(s);
  }
}

static void check_yaml(void) {
  static const char yaml[] =
      "model: geared\n"
      "gravity: [0, 0, 0]\n"
      "bodies:\n"
      "  - {name: b, mass: 1, inertia: [0.1, 0.1, 0.04], position: [0, 0, 0]}\n"
      "joints:\n"
      "  - {name: j, type: revolute, body1: ground, body2: b, point: [0, 0, 0], axis: [0, 0, 1]}\n"
      "actuators:\n"
      "  - {name: motor, type: joint_torque, joint: j, gear: 12.5}\n";
  pt_model *m = NULL;
  pt_error err = {0};
  int rc = pt_model_load_string(yaml, strlen(yaml), 1, "g.yaml", NULL, &m, &err);
  CHECK(rc == PT_OK, "yaml: %s", err.msg);
  if (rc) return;
  pt_data *d = pt_data_new(m);
  pt_set_input(m, d, 0, 0.2);
  pt_forward(m, d);
  CHECK_NEAR(pt_coord_accels(d)[0], 12.5 * 0.2 / 0.04, 1e-9, "yaml gear");
  pt_data_free(d);
  pt_model_free(m);
}

int main(void) {
  check_urdf();
  check_bad_reduction();
  check_yaml();
  if (nfail) fprintf(stderr, "%d failures\n", nfail);
  else printf("urdf_transmission: all checks passed\n");
  return nfail ? 1 : 0;
}
