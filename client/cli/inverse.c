// inverse.c: `partita inverse` with a MODEL file, done by the embedded engine (issue 5).
//
// Without --acc: kinematic inverse dynamics at time --at (default: the model's initial time),
// the efforts of the prescribed motions (the motions must remove every degree of freedom).
// With --acc NAME=VALUE: torque requests at the state given by --init/--init-rate, the
// efforts of the actuators of the named coordinates. Both print the joint reactions.
//
// Also holds the pieces `partita equilibrium` shares (declared in equilibrium.c): loading,
// --init/--init-rate, reaction output.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "partita.h"

#define NAME_CAP 256

typedef struct {
  char name[NAME_CAP];
  double value;
} named_value;

// Shared with equilibrium.c.
int cli_analysis_load(const char *cmd, const char *path, const pt_load_options *opt,
                      pt_model **m, pt_data **d);
int cli_analysis_state(const char *cmd, const pt_model *m, pt_data *d, const char *const *init,
                       int ninit, const char *const *rate, int nrate);
void cli_analysis_reactions(cli_json *j, const pt_model *m, const double *reaction);
int cli_analysis_exit(int rc);

// Engine codes to exit status: a bad request is a usage error, the rest a failure.
int cli_analysis_exit(int rc) { return rc == PT_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL; }

int cli_analysis_load(const char *cmd, const char *path, const pt_load_options *opt,
                      pt_model **m, pt_data **d) {
  pt_error err = {0, {0}};
  *m = NULL;
  *d = NULL;
  int rc = pt_model_load_file(path, opt, m, &err);
  if (rc < 0 || !*m) {
    cli_error(cmd, "%s", err.msg[0] ? err.msg : pt_strerror(rc < 0 ? rc : PT_EMODEL));
    *m = NULL;
    return CLI_EXIT_FAIL;
  }
  const char *w = pt_model_warnings(*m);
  while (w && *w) {
    const char *nl = strchr(w, '\n');
    int n = nl ? (int)(nl - w) : (int)strlen(w);
    if (n > 0) fprintf(stderr, "partita %s: warning: %.*s\n", cmd, n, w);
    w = nl ? nl + 1 : w + n;
  }
  *d = pt_data_new(*m);
  if (!*d) {
    cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
    return CLI_EXIT_FAIL;
  }
  return CLI_EXIT_OK;
}

static int unknown_coord(const char *cmd, const char *opt, const pt_model *m, const char *name) {
  fprintf(stderr, "partita %s: %s: model '%s' has no coordinate '%s' (coordinates: ", cmd, opt,
          pt_model_name(m), name);
  const int n = pt_model_ncoord(m);
  for (int i = 0; i < n && i < 40; i++)
    fprintf(stderr, "%s%s", i ? ", " : "", pt_coord_name(m, i));
  fputs(n ? ")\n" : "none)\n", stderr);
  return CLI_EXIT_USAGE;
}

// "NAME=VALUE" arguments to coordinate assignments; a name given twice keeps its last value.
static int to_assign(const char *cmd, const char *opt, const pt_model *m,
                     const char *const *args, int n, pt_assign *out, int *nout) {
  *nout = 0;
  for (int k = 0; k < n; k++) {
    named_value a;
    if (cli_parse_assign(cmd, opt, args[k], a.name, sizeof(a.name), &a.value) < 0)
      return CLI_EXIT_USAGE;
    const int c = pt_coord_index(m, a.name);
    if (c < 0) return unknown_coord(cmd, opt, m, a.name);
    int j = 0;
    while (j < *nout && out[j].coord != c) j++;
    out[j] = (pt_assign){c, a.value};
    if (j == *nout) (*nout)++;
  }
  return CLI_EXIT_OK;
}

int cli_analysis_state(const char *cmd, const pt_model *m, pt_data *d, const char *const *init,
                       int ninit, const char *const *rate, int nrate) {
  if (ninit == 0 && nrate == 0) return CLI_EXIT_OK;
  pt_assign *pos = calloc((size_t)ninit + 1, sizeof(*pos));
  pt_assign *vel = calloc((size_t)nrate + 1, sizeof(*vel));
  int npos = 0, nvel = 0, code;
  if (!pos || !vel) {
    cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
    code = CLI_EXIT_FAIL;
  } else if ((code = to_assign(cmd, "--init", m, init, ninit, pos, &npos)) == 0 &&
             (code = to_assign(cmd, "--init-rate", m, rate, nrate, vel, &nvel)) == 0) {
    pt_error err = {0, {0}};
    int rc = pt_set_state(m, d, pos, npos, vel, nvel, &err);
    if (rc < 0) {
      cli_error(cmd, "initial state: %s", err.msg[0] ? err.msg : pt_strerror(rc));
      code = CLI_EXIT_FAIL;
    }
  }
  free(pos);
  free(vel);
  return code;
}

// "reactions": {JOINT: {"force": [3], "torque": [3]}} (j != NULL), else a text table.
void cli_analysis_reactions(cli_json *j, const pt_model *m, const double *reaction) {
  const int nj = pt_model_njoint(m);
  if (j) {
    cli_json_key(j, "reactions");
    cli_json_begin_object(j);
    for (int i = 0; i < nj; i++) {
      cli_json_key(j, pt_joint_name(m, i));
      cli_json_begin_object(j);
      for (int part = 0; part < 2; part++) {
        cli_json_key(j, part ? "torque" : "force");
        cli_json_begin_array(j);
        for (int c = 0; c < 3; c++) cli_json_number(j, reaction[6 * i + 3 * part + c]);
        cli_json_end_array(j);
      }
      cli_json_end_object(j);
    }
    cli_json_end_object(j);
    return;
  }
  printf("reactions (on body2 from body1, global; torque about the joint point)\n");
  for (int i = 0; i < nj; i++) {
    const double *r = reaction + 6 * i;
    printf("  %-16s force %.10g %.10g %.10g  torque %.10g %.10g %.10g\n", pt_joint_name(m, i),
           r[0], r[1], r[2], r[3], r[4], r[5]);
  }
}

// ---------------------------------------------------------------------------------------------

typedef struct {
  const char *path;
  int json, has_at;
  double at;
  pt_load_options lopt;
  const char **acc, **init, **rate;  // (argc) each: the NAME=VALUE texts
  int nacc, ninit, nrate;
} inv_options;

static int inv_parse(int argc, char **argv, inv_options *o) {
  const char *cmd = "inverse";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    int r;
    if (cli_is_flag(a, "--help") || cli_is_flag(a, "-h")) {
      cli_usage(cmd, stdout);
      return 1;
    } else if (cli_is_flag(a, "--json")) {
      o->json = 1;
    } else if (cli_is_flag(a, "--floating-base")) {
      o->lopt.floating_base = 1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--at", &v)) != 0) {
      if (r < 0 || cli_parse_double(cmd, "--at", v, &o->at) < 0) return -1;
      o->has_at = 1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--acc", &v)) != 0) {
      if (r < 0) return -1;
      o->acc[o->nacc++] = v;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--init", &v)) != 0) {
      if (r < 0) return -1;
      o->init[o->ninit++] = v;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--init-rate", &v)) != 0) {
      if (r < 0) return -1;
      o->rate[o->nrate++] = v;
    } else if (a[0] == '-' && a[1] != '\0') {
      cli_error(cmd, "unknown option '%s' (see partita %s --help)", a, cmd);
      return -1;
    } else if (o->path) {
      cli_error(cmd, "one MODEL file expected, got '%s' and '%s'", o->path, a);
      return -1;
    } else {
      o->path = a;
    }
  }
  if (!o->path) {
    cli_error(cmd, "MODEL file missing (usage: partita inverse MODEL [--at T] "
                   "[--acc NAME=VALUE ...] [--json])");
    return -1;
  }
  return 0;
}

static void inv_print(const pt_model *m, const pt_inverse_result *r, int json) {
  const int nc = pt_model_ncoord(m);
  if (json) {
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_key(&j, "model");
    cli_json_string(&j, pt_model_name(m));
    cli_json_key(&j, "time");
    cli_json_number(&j, r->time);
    cli_json_key(&j, "mode");
    cli_json_string(&j, r->nreq > 0 ? "torque_request" : "kinematic");
    cli_json_key(&j, "efforts");
    cli_json_begin_object(&j);
    for (int k = 0; k < r->nreq; k++) {
      cli_json_key(&j, pt_actuator_name(m, r->req_actuator[k]));
      cli_json_number(&j, r->req_effort[k]);
    }
    for (int i = 0; i < r->nmotion; i++) {
      cli_json_key(&j, pt_motion_name(m, i));
      cli_json_number(&j, r->motion_effort[i]);
    }
    cli_json_end_object(&j);
    cli_analysis_reactions(&j, m, r->reaction);
    const char *keys[3] = {"coordinates", "rates", "accelerations"};
    const double *vals[3] = {r->coord, r->coord_rate, r->coord_acc};
    for (int s = 0; s < 3; s++) {
      cli_json_key(&j, keys[s]);
      cli_json_begin_object(&j);
      for (int i = 0; i < nc; i++) {
        cli_json_key(&j, pt_coord_name(m, i));
        cli_json_number(&j, vals[s][i]);
      }
      cli_json_end_object(&j);
    }
    cli_json_end_object(&j);
    cli_json_finish(&j);
    return;
  }
  printf("%-16s%s\n", "model", pt_model_name(m));
  printf("%-16s%.17g\n", "time", r->time);
  printf("efforts (%s)\n", r->nreq > 0 ? "torque request" : "kinematic inverse dynamics");
  for (int k = 0; k < r->nreq; k++)
    printf("  %-16s %.17g\n", pt_actuator_name(m, r->req_actuator[k]), r->req_effort[k]);
  for (int i = 0; i < r->nmotion; i++)
    printf("  %-16s %.17g\n", pt_motion_name(m, i), r->motion_effort[i]);
  cli_analysis_reactions(NULL, m, r->reaction);
  printf("coordinates (value, rate, acceleration)\n");
  for (int i = 0; i < nc; i++)
    printf("  %-16s %.12g %.12g %.12g\n", pt_coord_name(m, i), r->coord[i], r->coord_rate[i],
           r->coord_acc[i]);
}

static int inv_run(const inv_options *o) {
  const char *cmd = "inverse";
  pt_model *m = NULL;
  pt_data *d = NULL;
  pt_inverse_result *res = NULL;
  pt_assign *acc = NULL;
  pt_error err = {0, {0}};
  int code = cli_analysis_load(cmd, o->path, &o->lopt, &m, &d), nacc = 0, rc;
  if (code) goto done;
  res = pt_inverse_result_new(m, o->nacc);
  acc = calloc((size_t)o->nacc + 1, sizeof(*acc));
  if (!res || !acc) {
    cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
    code = CLI_EXIT_FAIL;
    goto done;
  }
  if ((code = to_assign(cmd, "--acc", m, o->acc, o->nacc, acc, &nacc)) != 0) goto done;
  if (o->has_at && nacc > 0 && (rc = pt_inverse_set_time(m, d, o->at, &err)) < 0) {
    cli_error(cmd, "--at %.17g: %s", o->at, err.msg[0] ? err.msg : pt_strerror(rc));
    code = CLI_EXIT_FAIL;
    goto done;
  }
  code = cli_analysis_state(cmd, m, d, o->init, o->ninit, o->rate, o->nrate);
  if (code) goto done;
  if (nacc > 0)
    rc = pt_inverse_request(m, d, acc, nacc, res, &err);
  else
    rc = pt_inverse_kinematic(m, d, o->has_at ? o->at : pt_time(d), res, &err);
  if (rc < 0) {
    cli_error(cmd, "%s", err.msg[0] ? err.msg : pt_strerror(rc));
    code = cli_analysis_exit(rc);
    goto done;
  }
  inv_print(m, res, o->json);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    cli_error(cmd, "error writing the output");
    code = CLI_EXIT_FAIL;
  }
done:
  free(acc);
  pt_inverse_result_free(res);
  pt_data_free(d);
  pt_model_free(m);
  return code;
}

int cli_inverse_main(int argc, char **argv) {
  inv_options o;
  memset(&o, 0, sizeof(o));
  o.acc = calloc((size_t)argc, sizeof(char *));
  o.init = calloc((size_t)argc, sizeof(char *));
  o.rate = calloc((size_t)argc, sizeof(char *));
  int code;
  if (!o.acc || !o.init || !o.rate) {
    cli_error("inverse", "%s", pt_strerror(PT_ENOMEM));
    code = CLI_EXIT_FAIL;
  } else {
    int r = inv_parse(argc, argv, &o);
    code = r > 0 ? CLI_EXIT_OK : r < 0 ? CLI_EXIT_USAGE : inv_run(&o);
  }
  free(o.acc);
  free(o.init);
  free(o.rate);
  return code;
}
