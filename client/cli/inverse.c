// inverse.c: `partita inverse` with a MODEL file, done by the embedded engine (issue 5).
//
// Without --acc: kinematic inverse dynamics at time --at (default: the model's initial time),
// the efforts of the prescribed motions (the motions must remove every degree of freedom).
// With --acc NAME=VALUE: torque requests at the state given by --init/--init-rate, the
// efforts of the actuators of the named coordinates (`all=VALUE`: every actuated coordinate,
// a named one overriding it). --gravity: the holding efforts, every rate and every actuated
// coordinate's acceleration zero (pt_inverse_holding). All print the joint reactions.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partita.h"
#include "cli.h"

typedef struct {
  cli_model_args model;    // MODEL, --json, --floating-base, --init, --init-rate
  int has_at;
  double at;
  const char **acc;        // (argc) the --acc NAME=VALUE texts
  int nacc;
  int gravity;             // --gravity
} inv_options;

static int inv_parse(int argc, char **argv, inv_options *o) {
  const char *cmd = "inverse";
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r;
    if (cli_is_flag(argv[i], "--gravity")) {
      o->gravity = 1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--at", &v)) != 0) {
      if (r < 0 || cli_parse_double(cmd, "--at", v, &o->at) < 0) return -1;
      o->has_at = 1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--acc", &v)) != 0) {
      if (r < 0) return -1;
      o->acc[o->nacc++] = v;
    } else if ((r = cli_model_arg(cmd, argc, argv, &i, &o->model)) != 0) {
      return r;
    }
  }
  if (o->gravity && (o->nacc > 0 || o->model.nrate > 0)) {
    cli_error(cmd, "--gravity: every rate and acceleration is zero; it takes no %s",
              o->nacc > 0 ? "--acc" : "--init-rate");
    return -1;
  }
  return cli_model_args_done(cmd, &o->model,
                             "partita inverse MODEL [--at T] [--acc NAME=VALUE ...] [--gravity] "
                             "[--json]");
}

// The --acc texts to requests: "all=V" stands for every actuated coordinate
// (pt_actuated_coords), a coordinate named beside it overrides its value. acc has room for
// nacc + the actuated coordinates. Returns an exit code.
static int inv_requests(const char *cmd, const pt_model *m, const char **texts, int ntext,
                        pt_assign *acc, int *nacc) {
  const char **named = calloc((size_t)ntext + 1, sizeof(*named));
  pt_assign *given = calloc((size_t)ntext + 1, sizeof(*given));
  int nnamed = 0, ngiven = 0, has_all = 0, code = CLI_EXIT_OK;
  double all = 0;
  *nacc = 0;
  if (!named || !given) {
    cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
    code = CLI_EXIT_FAIL;
    goto done;
  }
  for (int k = 0; k < ntext; k++) {
    char name[8];
    if (strncmp(texts[k], "all=", 4) == 0) {
      if (cli_parse_assign(cmd, "--acc", texts[k], name, sizeof(name), &all) < 0) {
        code = CLI_EXIT_USAGE;
        goto done;
      }
      has_all = 1;
    } else {
      named[nnamed++] = texts[k];
    }
  }
  if ((code = cli_analysis_assign(cmd, "--acc", m, named, nnamed, given, &ngiven)) != 0)
    goto done;
  if (has_all) {
    const int na = pt_actuated_coords(m, NULL, 0);
    int *coords = calloc((size_t)na + 1, sizeof(*coords));
    if (!coords) {
      cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
      code = CLI_EXIT_FAIL;
      goto done;
    }
    if (na == 0) {
      cli_error(cmd, "--acc all=...: model '%s' has no actuated coordinate", pt_model_name(m));
      code = CLI_EXIT_USAGE;
    }
    pt_actuated_coords(m, coords, na);
    for (int k = 0; k < na; k++) acc[(*nacc)++] = (pt_assign){coords[k], all};
    free(coords);
    if (code) goto done;
  }
  // the coordinates named beside all=V override it; the others are added
  for (int k = 0; k < ngiven; k++) {
    int j = 0;
    while (j < *nacc && acc[j].coord != given[k].coord) j++;
    acc[j] = given[k];
    if (j == *nacc) (*nacc)++;
  }
done:
  free(named);
  free(given);
  return code;
}

static void inv_print(const pt_model *m, const pt_inverse_result *r, int json) {
  const int nc = pt_model_ncoord(m);
  if (json) {
    cli_json j;
    cli_analysis_json_begin(&j, m, r->time);
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
    cli_json_key(&j, "coupler_efforts");  // {coupler: effort on its follower}
    cli_json_begin_object(&j);
    for (int k = 0; k < r->ncoupler && r->nreq > 0; k++) {
      cli_json_key(&j, pt_coupler_name(m, k));
      cli_json_number(&j, r->coupler_effort[k]);
    }
    cli_json_end_object(&j);
    cli_analysis_reactions(&j, m, r->reaction);
    // limits held as constraints (torque requests), and how each one on a bound was treated
    cli_analysis_limit_reactions(&j, m, r->limit_held, r->limit_reaction);
    cli_analysis_note_lines(&j, r->limit_notes);
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
  if (r->ncoupler > 0 && r->nreq > 0) {
    printf("couplers (effort on the follower; the leader takes -multiplier times it)\n");
    for (int k = 0; k < r->ncoupler; k++)
      printf("  %-16s %.17g\n", pt_coupler_name(m, k), r->coupler_effort[k]);
  }
  cli_analysis_reactions(NULL, m, r->reaction);
  printf("coordinates (value, rate, acceleration)\n");
  for (int i = 0; i < nc; i++)
    printf("  %-16s %.12g %.12g %.12g\n", pt_coord_name(m, i), r->coord[i], r->coord_rate[i],
           r->coord_acc[i]);
  cli_analysis_limit_reactions(NULL, m, r->limit_held, r->limit_reaction);
  cli_analysis_note_lines(NULL, r->limit_notes);
}

static int inv_run(const inv_options *o) {
  const char *cmd = "inverse";
  pt_model *m = NULL;
  pt_data *d = NULL;
  pt_inverse_result *res = NULL;
  pt_assign *acc = NULL;
  pt_error err = {0, {0}};
  int code = cli_analysis_load(cmd, &o->model, &m, &d), nacc = 0, rc;
  if (code) goto done;
  const int nreq = o->nacc + pt_actuated_coords(m, NULL, 0);   // all=V and --gravity
  res = pt_inverse_result_new(m, nreq);
  acc = calloc((size_t)nreq + 1, sizeof(*acc));
  if (!res || !acc) {
    cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
    code = CLI_EXIT_FAIL;
    goto done;
  }
  if ((code = inv_requests(cmd, m, o->acc, o->nacc, acc, &nacc)) != 0)
    goto done;
  if (o->has_at && (nacc > 0 || o->gravity) && (rc = pt_inverse_set_time(m, d, o->at, &err)) < 0) {
    cli_error(cmd, "--at %.17g: %s", o->at, err.msg[0] ? err.msg : pt_strerror(rc));
    code = CLI_EXIT_FAIL;
    goto done;
  }
  code = cli_analysis_state(cmd, &o->model, m, d);
  if (code) goto done;
  if (o->gravity)
    rc = pt_inverse_holding(m, d, res, &err);
  else if (nacc > 0)
    rc = pt_inverse_request(m, d, acc, nacc, res, &err);
  else
    rc = pt_inverse_kinematic(m, d, o->has_at ? o->at : pt_time(d), res, &err);
  if (rc < 0) {
    code = cli_analysis_fail(cmd, rc, &err);
    goto done;
  }
  inv_print(m, res, o->model.json);
  code = cli_analysis_flush(cmd);
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
  if (cli_model_args_init("inverse", &o.model, argc, 1) < 0) return CLI_EXIT_FAIL;
  o.acc = calloc((size_t)argc, sizeof(char *));
  int code;
  if (!o.acc) {
    cli_error("inverse", "%s", pt_strerror(PT_ENOMEM));
    code = CLI_EXIT_FAIL;
  } else {
    int r = inv_parse(argc, argv, &o);
    code = r > 0 ? CLI_EXIT_OK : r < 0 ? CLI_EXIT_USAGE : inv_run(&o);
  }
  free(o.acc);
  cli_model_args_free(&o.model);
  return code;
}
