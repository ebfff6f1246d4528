// equilibrium.c: `partita equilibrium` with a MODEL file, done by the embedded engine
// (issue 5): the static equilibrium nearest (in the engine's sense) to the model's initial
// state or the one given by --init, with the joint reactions there.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partita.h"
#include "cli.h"

typedef struct {
  cli_model_args model;    // MODEL, --json, --floating-base, --init (no --init-rate)
  pt_equilibrium_options eopt;
} eq_options;

static int eq_parse(int argc, char **argv, eq_options *o) {
  const char *cmd = "equilibrium";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    int r;
    long n;
    if (cli_is_flag(a, "--newton-only")) {
      o->eopt.no_damped = 1;
    } else if (cli_is_flag(a, "--allow-unstable")) {
      o->eopt.allow_unstable = 1;
    } else if (cli_is_flag(a, "--apply")) {
      cli_error(cmd, "--apply moves a daemon's live model: use it with --model NAME");
      return -1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--max-iterations", &v)) != 0) {
      if (r < 0 || cli_parse_long(cmd, "--max-iterations", v, 1, 100000, &n) < 0) return -1;
      o->eopt.max_iterations = (int)n;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--tolerance", &v)) != 0) {
      if (r < 0 || cli_parse_double(cmd, "--tolerance", v, &o->eopt.tolerance) < 0) return -1;
      if (!(o->eopt.tolerance > 0)) {
        cli_error(cmd, "--tolerance: %s is not positive", v);
        return -1;
      }
    } else if ((r = cli_model_arg(cmd, argc, argv, &i, &o->model)) != 0) {
      return r;
    }
  }
  return cli_model_args_done(cmd, &o->model,
                             "partita equilibrium MODEL [--init NAME=VALUE ...] [--json]");
}

// The result's limit notes (limits held as constraints, or free on a bound): JSON
// "limit_notes", text "notes"; nothing when there are none.
static void eq_limit_notes(cli_json *j, const pt_equilibrium_result *r) {
  cli_analysis_note_lines(j, r->limit_notes);
}

static void eq_print(const pt_model *m, const pt_equilibrium_result *r, int json) {
  const int nc = pt_model_ncoord(m);
  if (json) {
    cli_json j;
    cli_analysis_json_begin(&j, m, r->time);
    cli_json_key(&j, "coordinates");
    cli_json_begin_object(&j);
    for (int i = 0; i < nc; i++) {
      cli_json_key(&j, pt_coord_name(m, i));
      cli_json_number(&j, r->coord[i]);
    }
    cli_json_end_object(&j);
    cli_analysis_reactions(&j, m, r->reaction);
    eq_limit_notes(&j, r);
    cli_json_key(&j, "efforts");
    cli_json_begin_object(&j);
    for (int i = 0; i < r->nmotion; i++) {
      cli_json_key(&j, pt_motion_name(m, i));
      cli_json_number(&j, r->motion_effort[i]);
    }
    cli_json_end_object(&j);
    cli_json_key(&j, "coupler_efforts");  // {coupler: effort on its follower}
    cli_json_begin_object(&j);
    for (int k = 0; k < r->ncoupler; k++) {
      cli_json_key(&j, pt_coupler_name(m, k));
      cli_json_number(&j, r->coupler_effort[k]);
    }
    cli_json_end_object(&j);
    cli_analysis_limit_reactions(&j, m, r->limit_held, r->limit_reaction);
    cli_json_key(&j, "iterations");
    cli_json_int(&j, r->iterations);
    cli_json_key(&j, "damped_steps");
    cli_json_int(&j, r->damped_steps);
    cli_json_key(&j, "stable");
    cli_json_bool(&j, r->stable == 1);
    cli_json_key(&j, "residual");
    cli_json_number(&j, r->residual);
    cli_json_end_object(&j);
    cli_json_finish(&j);
    return;
  }
  printf("%-16s%s\n", "model", pt_model_name(m));
  printf("%-16s%.17g\n", "time", r->time);
  printf("%-16s%d (+ %d damped-dynamics steps)\n", "iterations", r->iterations,
         r->damped_steps);
  printf("%-16s%.3g\n", "residual", r->residual);
  printf("%-16s%s\n", "stable", r->stable == 1 ? "yes" : "no");
  printf("coordinates\n");
  for (int i = 0; i < nc; i++) printf("  %-16s %.17g\n", pt_coord_name(m, i), r->coord[i]);
  if (r->nmotion > 0) printf("efforts (motions frozen at the time above)\n");
  for (int i = 0; i < r->nmotion; i++)
    printf("  %-16s %.17g\n", pt_motion_name(m, i), r->motion_effort[i]);
  if (r->ncoupler > 0) {
    printf("couplers (effort on the follower; the leader takes -multiplier times it)\n");
    for (int k = 0; k < r->ncoupler; k++)
      printf("  %-16s %.17g\n", pt_coupler_name(m, k), r->coupler_effort[k]);
  }
  cli_analysis_reactions(NULL, m, r->reaction);
  cli_analysis_limit_reactions(NULL, m, r->limit_held, r->limit_reaction);
  eq_limit_notes(NULL, r);
}

static int eq_run(const eq_options *o) {
  const char *cmd = "equilibrium";
  pt_model *m = NULL;
  pt_data *d = NULL;
  pt_equilibrium_result *res = NULL;
  int code = cli_analysis_load(cmd, &o->model, &m, &d);
  if (code) goto done;
  res = pt_equilibrium_result_new(m);
  if (!res) {
    cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
    code = CLI_EXIT_FAIL;
    goto done;
  }
  code = cli_analysis_state(cmd, &o->model, m, d);
  if (code) goto done;
  pt_error err = {0, {0}};
  int rc = pt_equilibrium(m, d, &o->eopt, res, &err);
  if (rc < 0) {
    code = cli_analysis_fail(cmd, rc, &err);
    goto done;
  }
  eq_print(m, res, o->model.json);
  code = cli_analysis_flush(cmd);
done:
  pt_equilibrium_result_free(res);
  pt_data_free(d);
  pt_model_free(m);
  return code;
}

int cli_equilibrium_main(int argc, char **argv) {
  eq_options o;
  memset(&o, 0, sizeof(o));
  if (cli_model_args_init("equilibrium", &o.model, argc, 0) < 0) return CLI_EXIT_FAIL;
  int r = eq_parse(argc, argv, &o);
  int code = r > 0 ? CLI_EXIT_OK : r < 0 ? CLI_EXIT_USAGE : eq_run(&o);
  cli_model_args_free(&o.model);
  return code;
}
