// file_check.c: `partita check MODEL`: the model loaded by the embedded engine, its initial
// state assembled, and a summary printed (text, or one JSON object with --json).
//
// Numbers are printed with "%.17g" so that a JSON value parses back to the very double the
// engine computed.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "file_cmds.h"
#include "json.h"
#include "model_load.h"
#include "partita.h"

static void json_names(cli_json *j, const char *key, const pt_model *m, int n,
                       const char *(*name)(const pt_model *, int)) {
  cli_json_key(j, key);
  cli_json_begin_array(j);
  for (int i = 0; i < n; i++) {
    cli_json_string(j, name(m, i));
  }
  cli_json_end_array(j);
}

static void check_json(const pt_model *m, const char *path, const char **indep, int nindep) {
  cli_json j;
  cli_json_init(&j, stdout);
  cli_json_begin_object(&j);
  cli_json_key(&j, "model");
  cli_json_string(&j, pt_model_name(m));
  cli_json_key(&j, "file");
  cli_json_string(&j, path);
  cli_json_key(&j, "bodies");
  cli_json_int(&j, pt_model_nbody(m));
  cli_json_key(&j, "joints");
  cli_json_int(&j, pt_model_njoint(m));
  cli_json_key(&j, "constraints");
  cli_json_int(&j, pt_model_nconstraint(m));
  cli_json_key(&j, "dof");
  cli_json_int(&j, pt_model_ndof(m));
  json_names(&j, "coordinates", m, pt_model_ncoord(m), pt_coord_name);
  const int nact = pt_model_ninput(m) - pt_model_ncontrol_input(m);  // the control inputs last
  json_names(&j, "actuators", m, nact, pt_input_name);
  cli_json_key(&j, "gears");  // joint effort per unit input, one per actuator input
  cli_json_begin_array(&j);
  for (int i = 0; i < nact; i++) cli_json_number(&j, pt_input_gear(m, i));
  cli_json_end_array(&j);
  cli_json_key(&j, "limits");  // {joint: [lower, upper]} for the joints that have limits
  cli_json_begin_object(&j);
  for (int k = 0; k < pt_model_njoint(m); k++) {
    double lim[2];
    if (!pt_joint_limits(m, k, lim)) continue;
    cli_json_key(&j, pt_joint_name(m, k));
    cli_json_begin_array(&j);
    cli_json_number(&j, lim[0]);
    cli_json_number(&j, lim[1]);
    cli_json_end_array(&j);
  }
  cli_json_end_object(&j);
  cli_json_key(&j, "limits_enforced");
  cli_json_bool(&j, pt_model_limits_enforced(m));
  cli_json_key(&j, "restitution");
  cli_json_number(&j, pt_model_restitution(m));
  cli_json_key(&j, "couplers");  // [{name, follower, leader, multiplier, offset}]
  cli_json_begin_array(&j);
  for (int k = 0; k < pt_model_ncoupler(m); k++) {
    int f = 0, l = 0;
    double mu = 0, off = 0;
    pt_coupler_info(m, k, &f, &l, &mu, &off);
    cli_json_begin_object(&j);
    cli_json_key(&j, "name");
    cli_json_string(&j, pt_coupler_name(m, k));
    cli_json_key(&j, "follower");
    cli_json_string(&j, pt_joint_name(m, f));
    cli_json_key(&j, "leader");
    cli_json_string(&j, pt_joint_name(m, l));
    cli_json_key(&j, "multiplier");
    cli_json_number(&j, mu);
    cli_json_key(&j, "offset");
    cli_json_number(&j, off);
    cli_json_end_object(&j);
  }
  cli_json_end_array(&j);
  json_names(&j, "motions", m, pt_model_nmotion(m), pt_motion_name);
  // control elements (docs/controls.md): signals, control states, the tunable parameters
  // with their values, and the inputs that signals drive {input: signal}
  json_names(&j, "signals", m, pt_model_nsignal(m), pt_signal_name);
  cli_json_key(&j, "control_inputs");
  cli_json_begin_array(&j);
  for (int i = nact; i < pt_model_ninput(m); i++) cli_json_string(&j, pt_input_name(m, i));
  cli_json_end_array(&j);
  json_names(&j, "control_states", m, pt_model_ncontrol_state(m), pt_control_state_name);
  cli_json_key(&j, "parameters");
  cli_json_begin_object(&j);
  pt_data *d = pt_model_nparam(m) ? pt_data_new(m) : NULL;
  for (int k = 0; d && k < pt_model_nparam(m); k++) {
    cli_json_key(&j, pt_param_name(m, k));
    cli_json_number(&j, pt_params(d)[k]);
  }
  pt_data_free(d);
  cli_json_end_object(&j);
  cli_json_key(&j, "driven");
  cli_json_begin_object(&j);
  for (int i = 0; i < pt_model_ninput(m); i++) {
    if (!pt_input_source(m, i)) continue;
    cli_json_key(&j, pt_input_name(m, i));
    cli_json_string(&j, pt_input_source(m, i));
  }
  cli_json_end_object(&j);
  if (pt_model_nshape(m) > 0) {   // {"shapes": [{body, type}], "pairs", "max_contacts"}
    cli_json_key(&j, "collision");
    cli_json_begin_object(&j);
    cli_json_key(&j, "shapes");
    cli_json_begin_array(&j);
    for (int i = 0; i < pt_model_nshape(m); i++) {
      int b = -1;
      const char *type = pt_shape_info(m, i, &b);
      cli_json_begin_object(&j);
      cli_json_key(&j, "body");
      cli_json_string(&j, b >= 0 ? pt_body_name(m, b) : "ground");
      cli_json_key(&j, "type");
      cli_json_string(&j, type);
      cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_key(&j, "pairs");
    cli_json_int(&j, pt_model_npair(m));
    cli_json_key(&j, "max_contacts");
    cli_json_int(&j, pt_model_max_contacts(m));
    cli_json_end_object(&j);
  }
  cli_json_key(&j, "independent");
  cli_json_begin_array(&j);
  for (int i = 0; i < nindep; i++) {
    cli_json_string(&j, indep[i]);
  }
  cli_json_end_array(&j);
  cli_json_key(&j, "integrator");
  cli_json_string(&j, pt_integrator_name(pt_model_integrator(m)));
  cli_json_key(&j, "dt");
  cli_json_number(&j, pt_model_dt(m));
  cli_json_key(&j, "warnings");
  cli_json_begin_array(&j);
  const char *w = pt_model_warnings(m);
  while (w && *w) {
    const char *nl = strchr(w, '\n');
    size_t n = nl ? (size_t)(nl - w) : strlen(w);
    char line[1024];
    if (n >= sizeof(line)) {
      n = sizeof(line) - 1;
    }
    memcpy(line, w, n);
    line[n] = '\0';
    if (n > 0) {
      cli_json_string(&j, line);
    }
    w = nl ? nl + 1 : w + strlen(w);
  }
  cli_json_end_array(&j);
  cli_json_end_object(&j);
  cli_json_finish(&j);
}

static void text_list(const char *label, const pt_model *m, int n,
                      const char *(*name)(const pt_model *, int)) {
  printf("%-13s%d", label, n);
  for (int i = 0; i < n; i++) {
    printf("%s%s", i ? ", " : ": ", name(m, i));
  }
  putchar('\n');
}

// Inputs that drive their joint through a gear (URDF transmissions, YAML `gear`), with the
// ratio and the input limit: `gears        shoulder x50 (limit 3.2), ...`. Nothing without.
static void text_gears(const pt_model *m) {
  int n = 0;
  for (int i = 0; i < pt_model_ninput(m); i++) {
    if (pt_input_gear(m, i) == 1) continue;
    printf("%s%s x%.6g", n++ ? ", " : "gears        ", pt_input_name(m, i), pt_input_gear(m, i));
    if (pt_input_limit(m, i) > 0) printf(" (input limit %.6g)", pt_input_limit(m, i));
  }
  if (n) putchar('\n');
}

// Joints with position limits: `limits       elbow [-1.5, 1.5], slide [0, 0.2] (enforced,
// restitution 0)`; `(not enforced)` when switched off or on a model that is not a tree.
static void text_limits(const pt_model *m) {
  int n = 0;
  for (int j = 0; j < pt_model_njoint(m); j++) {
    double lim[2];
    if (!pt_joint_limits(m, j, lim)) continue;
    printf("%s%s [%.6g, %.6g]", n++ ? ", " : "limits       ", pt_joint_name(m, j), lim[0], lim[1]);
  }
  if (!n) return;
  if (pt_model_limits_enforced(m))
    printf(" (enforced, restitution %.6g)\n", pt_model_restitution(m));
  else
    printf(" (not enforced)\n");
}

// Couplers: `couplers     panda_finger_joint2 = 1 x panda_finger_joint1 + 0, ...`.
static void text_couplers(const pt_model *m) {
  for (int k = 0; k < pt_model_ncoupler(m); k++) {
    int f = 0, l = 0;
    double mu = 0, off = 0;
    pt_coupler_info(m, k, &f, &l, &mu, &off);
    printf("%s%s = %.6g x %s + %.6g", k ? ", " : "couplers     ", pt_joint_name(m, f), mu,
           pt_joint_name(m, l), off);
  }
  if (pt_model_ncoupler(m) > 0) printf("\n");
}

// Control elements: `signals`, `ctl states`, `parameters` (name value, what a client may
// tune), `driven` (input <- signal). Nothing without.
static void text_controls(const pt_model *m, const pt_data *d) {
  if (!pt_model_nsignal(m)) return;
  text_list("signals", m, pt_model_nsignal(m), pt_signal_name);
  const int nc = pt_model_ncontrol_input(m), na = pt_model_ninput(m) - nc;
  printf("%-13s%d", "ctl inputs", nc);
  for (int i = 0; i < nc; i++) printf("%s%s", i ? ", " : ": ", pt_input_name(m, na + i));
  putchar('\n');
  text_list("ctl states", m, pt_model_ncontrol_state(m), pt_control_state_name);
  for (int k = 0; k < pt_model_nparam(m); k++)
    printf("%s%s %.6g", k ? ", " : "parameters   ", pt_param_name(m, k), pt_params(d)[k]);
  if (pt_model_nparam(m)) putchar('\n');
  int n = 0;
  for (int i = 0; i < pt_model_ninput(m); i++)
    if (pt_input_source(m, i))
      printf("%s%s <- %s", n++ ? ", " : "driven       ", pt_input_name(m, i),
             pt_input_source(m, i));
  if (n) putchar('\n');
}

// Collision shapes, when the model has some: `collision    7 shapes (1 plane, 2 box, ...),
// 14 candidate pairs, up to 56 contacts` (the broad phase's pairs, docs/collision.md).
static void text_collision(const pt_model *m) {
  int n = pt_model_nshape(m);
  if (n == 0) return;
  static const char *const types[] = {"plane", "sphere", "capsule", "box", "cylinder", "hull"};
  printf("%-13s%d shape%s (", "collision", n, n == 1 ? "" : "s");
  int first = 1;
  for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
    int k = 0;
    for (int i = 0; i < n; i++) k += !strcmp(pt_shape_info(m, i, NULL), types[t]);
    if (k) printf("%s%d %s", first ? "" : ", ", k, types[t]);
    if (k) first = 0;
  }
  int np = pt_model_npair(m);
  printf("), %d candidate pair%s, up to %d contacts\n", np, np == 1 ? "" : "s",
         pt_model_max_contacts(m));
}

static void check_text(const pt_model *m, const pt_data *d, const char *path, const char **indep,
                       int nindep) {
  printf("%-13s%s\n", "model", pt_model_name(m));
  printf("%-13s%s\n", "file", path);
  printf("%-13s%d\n", "bodies", pt_model_nbody(m));
  printf("%-13s%d\n", "joints", pt_model_njoint(m));
  printf("%-13s%d\n", "constraints", pt_model_nconstraint(m));
  printf("%-13s%d\n", "dof", pt_model_ndof(m));
  text_list("coordinates", m, pt_model_ncoord(m), pt_coord_name);
  text_list("actuators", m, pt_model_ninput(m) - pt_model_ncontrol_input(m), pt_input_name);
  text_gears(m);
  text_limits(m);
  text_couplers(m);
  text_list("motions", m, pt_model_nmotion(m), pt_motion_name);
  text_controls(m, d);
  text_collision(m);
  printf("%-13s%d", "independent", nindep);
  for (int i = 0; i < nindep; i++) {
    printf("%s%s", i ? ", " : ": ", indep[i]);
  }
  putchar('\n');
  printf("%-13s%s\n", "integrator", pt_integrator_name(pt_model_integrator(m)));
  printf("%-13s%.17g\n", "dt", pt_model_dt(m));
}

// The summary of the loaded model m: its initial state evaluated (the partition belongs to
// the data), then printed. An exit code.
static int check_summary(const char *cmd, const char *path, const pt_model *m, int json) {
  int code = CLI_EXIT_OK;
  int ndof = pt_model_ndof(m);
  const char **indep = calloc((size_t)(ndof > 0 ? ndof : 1), sizeof(*indep));
  pt_data *d = pt_data_new(m);
  int rc;
  if (!indep || !d) {
    cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
    code = CLI_EXIT_FAIL;
  } else if ((rc = pt_forward(m, d)) < 0) {
    cli_error(cmd, "%s: initial state: %s", path, pt_strerror(rc));
    code = CLI_EXIT_FAIL;
  } else {
    int nindep = pt_independent(m, d, indep, ndof);
    nindep = nindep > ndof ? ndof : nindep < 0 ? 0 : nindep;
    if (json)
      check_json(m, path, indep, nindep);
    else
      check_text(m, d, path, indep, nindep);
    code = cli_flush(cmd, CLI_EXIT_OK);
  }
  pt_data_free(d);
  free(indep);
  return code;
}

int cli_check_main(const cli_command *self, int argc, char **argv) {
  const char *cmd = self->name;
  const char *path = NULL;
  int json = 0;
  pt_load_options lopt = {0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int r = cli_ground_plane(cmd, argc, argv, &i, &lopt.ground_plane, &lopt.ground_z);
    if (r < 0) return CLI_EXIT_USAGE;
    if (r > 0) continue;
    if (cli_is_flag(a, "--json")) {
      json = 1;
    } else if (cli_is_flag(a, "--floating-base")) {
      lopt.floating_base = 1;
    } else if (cli_is_flag(a, "--balance-inertia")) {
      lopt.balance_inertia = 1;
    } else if (cli_is_flag(a, "--no-joint-limits")) {
      lopt.no_joint_limits = 1;
    } else if (cli_positional(cmd, a, "MODEL file", &path) < 0) {
      return CLI_EXIT_USAGE;
    }
  }
  if (!path) {
    cli_error(cmd, "MODEL file missing (usage: partita check MODEL [--json])");
    return CLI_EXIT_USAGE;
  }
  pt_model *m = NULL;
  if (cli_model_load(cmd, path, &lopt, &m, NULL, NULL, NULL) < 0)
    return CLI_EXIT_FAIL;
  int code = check_summary(cmd, path, m, json);
  pt_model_free(m);
  return code;
}

