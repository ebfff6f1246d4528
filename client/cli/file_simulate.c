// file_simulate.c: `partita simulate MODEL`: the model stepped by the embedded engine, one
// row of CSV (or of JSON with --json) every K steps; with --record FILE an MCAP recording
// too (rec_file.h).
//
// Output goes to stdout; errors and the model's warnings to stderr. Numbers are printed with
// "%.17g" so that a CSV or JSON value parses back to the very double the engine computed.
// A model with control elements (docs/controls.md) adds its control states after the rates,
// and --signals the signals asked for.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "file_cmds.h"
#include "json.h"
#include "model_load.h"
#include "partita.h"
#include "rec_file.h"

#define ASSIGN_NAME_MAX 256
#define MAX_STEPS 1000000000000LL   // 1e12: beyond that the request is surely a typo

typedef struct {
  char name[ASSIGN_NAME_MAX];
  double value;
} assign_arg;

typedef struct {
  const char *path;
  double duration;
  double dt;              // 0: the model's
  int has_integrator;
  pt_integrator integrator;
  long every;
  int json;
  const char *record;              // --record FILE (rec_file.c)
  char *text;                      // with --record: the model file as loaded
  size_t text_len;
  int format;
  pt_load_options lopt;
  assign_arg *set, *init, *rate;   // (argc) each
  int nset, ninit, nrate;
  const char *signals;             // --signals NAME,NAME or all
  int *sig;                        // the signals printed (resolved after the load)
  int nsig;
} sim_options;

// Parses the options; returns -1 (message printed) or 0.
static int sim_parse(const char *cmd, int argc, char **argv, sim_options *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = NULL;
    int r;
    if ((r = cli_ground_plane(cmd, argc, argv, &i, &o->lopt.ground_plane, &o->lopt.ground_z))) {
      if (r < 0)
        return -1;
    } else if (cli_is_flag(a, "--json")) {
      o->json = 1;
    } else if (cli_is_flag(a, "--floating-base")) {
      o->lopt.floating_base = 1;
    } else if (cli_is_flag(a, "--balance-inertia")) {
      o->lopt.balance_inertia = 1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--record", &v)) != 0) {
      if (r < 0)
        return -1;
      o->record = v;
    } else if (cli_is_flag(a, "--no-joint-limits")) {
      o->lopt.no_joint_limits = 1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--duration", &v)) != 0) {
      if (r < 0 || cli_parse_double(cmd, "--duration", v, &o->duration) < 0) {
        return -1;
      }
      if (o->duration < 0) {
        cli_error(cmd, "--duration: %s is negative", v);
        return -1;
      }
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--dt", &v)) != 0) {
      if (r < 0 || cli_parse_double(cmd, "--dt", v, &o->dt) < 0) {
        return -1;
      }
      if (o->dt <= 0) {
        cli_error(cmd, "--dt: %s is not a positive step size", v);
        return -1;
      }
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--integrator", &v)) != 0) {
      if (r < 0) {
        return -1;
      }
      if (pt_integrator_parse(v, &o->integrator) != 0) {
        cli_error(cmd, "--integrator: unknown integrator '%s' (rk4, abm4 or euler)", v);
        return -1;
      }
      o->has_integrator = 1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--every", &v)) != 0) {
      if (r < 0 || cli_parse_long(cmd, "--every", v, 1, 1000000000L, &o->every) < 0) {
        return -1;
      }
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--signals", &v)) != 0) {
      if (r < 0)
        return -1;
      o->signals = v;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--set", &v)) != 0) {
      assign_arg *s = &o->set[o->nset++];
      if (r < 0 || cli_parse_assign(cmd, "--set", v, s->name, sizeof(s->name), &s->value) < 0) {
        return -1;
      }
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--init", &v)) != 0) {
      assign_arg *s = &o->init[o->ninit++];
      if (r < 0 ||
          cli_parse_assign(cmd, "--init", v, s->name, sizeof(s->name), &s->value) < 0) {
        return -1;
      }
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--init-rate", &v)) != 0) {
      assign_arg *s = &o->rate[o->nrate++];
      if (r < 0 ||
          cli_parse_assign(cmd, "--init-rate", v, s->name, sizeof(s->name), &s->value) < 0) {
        return -1;
      }
    } else if (cli_positional(cmd, a, "MODEL file", &o->path) < 0) {
      return -1;
    }
  }
  if (!o->path) {
    cli_error(cmd, "MODEL file missing (usage: partita simulate MODEL [options])");
    return -1;
  }
  return 0;
}

// Applies --set: every name must be an actuator input of the model.
static int sim_inputs(const pt_model *m, pt_data *d, const sim_options *o) {
  for (int k = 0; k < o->nset; k++) {
    const assign_arg *s = &o->set[k];
    int i = pt_input_index(m, s->name);
    if (i < 0) {
      fprintf(stderr, "partita simulate: --set: model '%s' has no actuator input '%s' "
              "(inputs: ", pt_model_name(m), s->name);
      cli_print_names(stderr, m, pt_model_ninput(m), pt_input_name);
      fputs(")\n", stderr);
      return CLI_EXIT_USAGE;
    }
    int rc = pt_set_input(m, d, i, s->value);
    if (rc == PT_EPRECOND) {
      cli_error("simulate", "--set %s: that input is driven by signal '%s' (the model's "
                "controls set it)", s->name, pt_input_source(m, i));
      return CLI_EXIT_USAGE;
    }
    if (rc < 0) {
      cli_error("simulate", "--set %s=%.17g: %s", s->name, s->value, pt_strerror(rc));
      return CLI_EXIT_USAGE;
    }
    if (rc == 1) {
      fprintf(stderr, "partita simulate: warning: --set %s=%.17g clipped to the limit %.17g\n",
              s->name, s->value, pt_input_limit(m, i));
    }
  }
  return CLI_EXIT_OK;
}

// Resolves --init / --init-rate names to coordinate indices; a name given twice keeps its
// last value (as later options override earlier ones). A control state's name (--init) goes
// to xs instead (index, value), when xs is given.
static int resolve_coords(const pt_model *m, const char *opt, const assign_arg *args, int n,
                          pt_assign *out, int *nout, pt_assign *xs, int *nxs) {
  *nout = 0;
  for (int k = 0; k < n; k++) {
    int c = pt_coord_index(m, args[k].name), x = pt_control_state_index(m, args[k].name);
    if (c < 0 && x >= 0 && xs) {
      xs[(*nxs)++] = (pt_assign){x, args[k].value};
      continue;
    }
    if (c < 0) {
      fprintf(stderr, "partita simulate: %s: model '%s' has no coordinate%s '%s' "
              "(coordinates: ", opt, pt_model_name(m), xs && pt_model_ncontrol_state(m)
              ? " or control state" : "", args[k].name);
      cli_print_names(stderr, m, pt_model_ncoord(m), pt_coord_name);
      if (xs && pt_model_ncontrol_state(m)) {
        fputs("; control states: ", stderr);
        cli_print_names(stderr, m, pt_model_ncontrol_state(m), pt_control_state_name);
      }
      fputs(")\n", stderr);
      return CLI_EXIT_USAGE;
    }
    int j = 0;
    while (j < *nout && out[j].coord != c) {
      j++;
    }
    out[j].coord = c;
    out[j].value = args[k].value;
    if (j == *nout) {
      (*nout)++;
    }
  }
  return CLI_EXIT_OK;
}

static int sim_initial_state(const pt_model *m, pt_data *d, const sim_options *o) {
  int code = CLI_EXIT_OK;
  pt_assign *pos = calloc((size_t)o->ninit + 1, sizeof(*pos));
  pt_assign *vel = calloc((size_t)o->nrate + 1, sizeof(*vel));
  pt_assign *xs = calloc((size_t)o->ninit + 1, sizeof(*xs));
  int npos = 0, nvel = 0, nxs = 0;
  if (!pos || !vel || !xs) {
    cli_error("simulate", "%s", pt_strerror(PT_ENOMEM));
    code = CLI_EXIT_FAIL;
  } else if ((code = resolve_coords(m, "--init", o->init, o->ninit, pos, &npos, xs, &nxs)) ==
                 0 &&
             (code = resolve_coords(m, "--init-rate", o->rate, o->nrate, vel, &nvel, NULL,
                                    NULL)) == 0) {
    pt_error err = {0, {0}};
    int rc = npos > 0 || nvel > 0 ? pt_set_state(m, d, pos, npos, vel, nvel, &err) : 0;
    for (int k = 0; rc == 0 && k < nxs; k++)
      rc = pt_set_control_states(m, d, &xs[k].coord, &xs[k].value, 1, &err);
    if (rc < 0) {
      cli_error("simulate", "%s: initial state: %s", o->path,
                err.msg[0] ? err.msg : pt_strerror(rc));
      code = CLI_EXIT_FAIL;
    }
  }
  free(pos);
  free(vel);
  free(xs);
  return code;
}

// --signals: "all" or names separated by commas, resolved to signal indices. Exit code.
static int sim_signals(const char *cmd, const pt_model *m, sim_options *o) {
  if (!o->signals)
    return CLI_EXIT_OK;
  const int ns = pt_model_nsignal(m);
  o->sig = calloc((size_t)ns + strlen(o->signals) + 1, sizeof(int));
  if (!o->sig) {
    cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
    return CLI_EXIT_FAIL;
  }
  if (!strcmp(o->signals, "all")) {
    for (int i = 0; i < ns; i++)
      o->sig[o->nsig++] = i;
    return CLI_EXIT_OK;
  }
  for (const char *p = o->signals; *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char name[ASSIGN_NAME_MAX];
    if (len == 0 || len >= sizeof(name)) {
      cli_error(cmd, "--signals: '%s' is not a list of names (NAME,NAME or all)", o->signals);
      return CLI_EXIT_USAGE;
    }
    memcpy(name, p, len);
    name[len] = '\0';
    const int s = pt_signal_index(m, name);
    if (s < 0) {
      fprintf(stderr, "partita %s: --signals: model '%s' has no signal '%s' (signals: ", cmd,
              pt_model_name(m), name);
      cli_print_names(stderr, m, ns, pt_signal_name);
      fputs(")\n", stderr);
      return CLI_EXIT_USAGE;
    }
    o->sig[o->nsig++] = s;
    p = comma ? comma + 1 : p + len;
  }
  return CLI_EXIT_OK;
}

// One output row: t, coordinates, rates, control states, signals asked for, energy, residuals
// (the header's order).
static void sim_row(const pt_model *m, const pt_data *d, const sim_options *o, cli_json *j) {
  int nc = pt_model_ncoord(m), nx = pt_model_ncontrol_state(m);
  const double *q = pt_coords(d), *qd = pt_coord_rates(d), *x = pt_control_states(d);
  const double *sg = pt_signals(d);
  double energy = pt_energy_kinetic(d) + pt_energy_potential(d);
  if (j) {
    cli_json_newline(j);   // one row per line keeps long outputs readable
    cli_json_begin_array(j);
    cli_json_number(j, pt_time(d));
    for (int i = 0; i < nc; i++) {
      cli_json_number(j, q[i]);
    }
    for (int i = 0; i < nc; i++) {
      cli_json_number(j, qd[i]);
    }
    for (int i = 0; i < nx; i++)
      cli_json_number(j, x[i]);
    for (int i = 0; i < o->nsig; i++)
      cli_json_number(j, sg[o->sig[i]]);
    cli_json_number(j, energy);
    cli_json_number(j, pt_residual_position(d));
    cli_json_number(j, pt_residual_velocity(d));
    cli_json_end_array(j);
    return;
  }
  printf("%.17g", pt_time(d));
  for (int i = 0; i < nc; i++) {
    printf(",%.17g", q[i]);
  }
  for (int i = 0; i < nc; i++) {
    printf(",%.17g", qd[i]);
  }
  for (int i = 0; i < nx; i++)
    printf(",%.17g", x[i]);
  for (int i = 0; i < o->nsig; i++)
    printf(",%.17g", sg[o->sig[i]]);
  printf(",%.17g,%.17g,%.17g\n", energy, pt_residual_position(d), pt_residual_velocity(d));
}

static void sim_header(const pt_model *m, const sim_options *o, cli_json *j) {
  int nc = pt_model_ncoord(m), nx = pt_model_ncontrol_state(m);
  char name[ASSIGN_NAME_MAX + 8];
  if (j) {
    cli_json_begin_object(j);
    cli_json_key(j, "columns");
    cli_json_begin_array(j);
    cli_json_string(j, "t");
    for (int i = 0; i < nc; i++) {
      cli_json_string(j, pt_coord_name(m, i));
    }
    for (int i = 0; i < nc; i++) {
      snprintf(name, sizeof(name), "%s.rate", pt_coord_name(m, i));
      cli_json_string(j, name);
    }
    for (int i = 0; i < nx; i++)
      cli_json_string(j, pt_control_state_name(m, i));
    for (int i = 0; i < o->nsig; i++)
      cli_json_string(j, pt_signal_name(m, o->sig[i]));
    cli_json_string(j, "energy");
    cli_json_string(j, "residual_pos");
    cli_json_string(j, "residual_vel");
    cli_json_end_array(j);
    cli_json_key(j, "rows");
    cli_json_begin_array(j);
    return;
  }
  fputs("t", stdout);
  for (int i = 0; i < nc; i++) {
    fputc(',', stdout);
    cli_csv_field(stdout, pt_coord_name(m, i));
  }
  for (int i = 0; i < nc; i++) {
    snprintf(name, sizeof(name), "%s.rate", pt_coord_name(m, i));
    fputc(',', stdout);
    cli_csv_field(stdout, name);
  }
  for (int i = 0; i < nx; i++) {
    fputc(',', stdout);
    cli_csv_field(stdout, pt_control_state_name(m, i));
  }
  for (int i = 0; i < o->nsig; i++) {
    fputc(',', stdout);
    cli_csv_field(stdout, pt_signal_name(m, o->sig[i]));
  }
  fputs(",energy,residual_pos,residual_vel\n", stdout);
}

// Steps and prints. A failing step ends the run after what was computed has been written.
static int sim_run(const pt_model *m, pt_data *d, const sim_options *o, int64_t nsteps,
                   cli_rec *rec) {
  cli_json j;
  cli_json *jp = o->json ? &j : NULL;
  if (jp) {
    cli_json_init(jp, stdout);
  }
  sim_header(m, o, jp);
  sim_row(m, d, o, jp);
  if (rec && cli_rec_step(rec, m, d) < 0) {
    nsteps = 0;   // the recording failed (said why): stop here
  }
  int code = CLI_EXIT_OK;
  char msg[256] = "";
  for (int64_t k = 1; k <= nsteps; k++) {
    double t = pt_time(d);
    int rc = pt_step(m, d);
    if (rc < 0) {
      snprintf(msg, sizeof(msg), "step %lld at t=%.17g failed: %s", (long long)k, t,
               pt_strerror(rc));
      code = CLI_EXIT_FAIL;
      break;
    }
    if (k % o->every == 0) {
      sim_row(m, d, o, jp);
    }
    if (rec && cli_rec_step(rec, m, d) < 0) {
      break;
    }
  }
  if (jp) {
    cli_json_newline(jp);
    cli_json_end_array(jp);
    if (msg[0]) {
      cli_json_key(jp, "error");   // the rows above are what was computed before it
      cli_json_string(jp, msg);
    }
    cli_json_end_object(jp);
    cli_json_finish(jp);
  }
  code = cli_flush("simulate", code);
  if (msg[0]) {
    cli_error("simulate", "%s: %s", o->path, msg);
  }
  int rcode = cli_rec_close("simulate", rec, !msg[0]);
  return code ? code : rcode;
}

// "NAME=VALUE" lines of --init or --init-rate, for the recording (%.17g reads back exactly).
static char *assign_lines(const assign_arg *a, int n) {
  size_t len = 1;
  for (int k = 0; k < n; k++) {
    len += strlen(a[k].name) + 32;
  }
  char *s = malloc(len);
  size_t at = 0;
  for (int k = 0; s && k < n; k++) {
    at += (size_t)snprintf(s + at, len - at, "%s=%.17g\n", a[k].name, a[k].value);
  }
  if (s) {
    s[at] = '\0';
  }
  return s;
}

// --record FILE: the model, its options, the initial assignments and the --set inputs.
static cli_rec *sim_record_open(const pt_model *m, const pt_data *d, const sim_options *o) {
  char *init = assign_lines(o->init, o->ninit), *rate = assign_lines(o->rate, o->nrate);
  int *idx = calloc((size_t)o->nset + 1, sizeof(int));
  double *val = calloc((size_t)o->nset + 1, sizeof(double));
  cli_rec *rec = NULL;
  if (init && rate && idx && val) {
    for (int k = 0; k < o->nset; k++) {
      idx[k] = pt_input_index(m, o->set[k].name);   // checked by sim_inputs
      val[k] = o->set[k].value;
    }
    rec = cli_rec_open("simulate", o->record, o->path, o->text, o->text_len, o->format,
                       &o->lopt, m, d,
                       o->dt > 0 ? o->dt : pt_model_dt(m),
                       o->has_integrator ? o->integrator : pt_model_integrator(m), o->every,
                       init, rate, idx, val, o->nset);
  } else {
    cli_error("simulate", "%s", pt_strerror(PT_ENOMEM));
  }
  free(init);
  free(rate);
  free(idx);
  free(val);
  return rec;
}

int cli_simulate_main(const cli_command *self, int argc, char **argv) {
  const char *cmd = self->name;
  sim_options o;
  memset(&o, 0, sizeof(o));
  o.duration = 1.0;
  o.every = 1;
  o.set = calloc((size_t)argc, sizeof(*o.set));
  o.init = calloc((size_t)argc, sizeof(*o.init));
  o.rate = calloc((size_t)argc, sizeof(*o.rate));
  pt_model *m = NULL;
  pt_data *d = NULL;
  int code;
  if (!o.set || !o.init || !o.rate) {
    cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
    code = CLI_EXIT_FAIL;
    goto done;
  }
  if (sim_parse(cmd, argc, argv, &o) < 0) {
    code = CLI_EXIT_USAGE;
    goto done;
  }
  if (cli_model_load(cmd, o.path, &o.lopt, &m, o.record ? &o.text : NULL, &o.text_len,
                     &o.format) < 0) {
    code = CLI_EXIT_FAIL;
    goto done;
  }

  double dt = o.dt > 0 ? o.dt : pt_model_dt(m);
  double nreal = round(o.duration / dt);
  if (!(nreal >= 0 && nreal <= (double)MAX_STEPS)) {
    cli_error(cmd, "--duration %.17g with dt %.17g asks for %.3g steps (at most %lld)",
              o.duration, dt, nreal, (long long)MAX_STEPS);
    code = CLI_EXIT_USAGE;
    goto done;
  }
  d = pt_data_new(m);
  if (!d) {
    cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
    code = CLI_EXIT_FAIL;
    goto done;
  }
  pt_set_dt(d, dt);
  if (o.has_integrator) {
    pt_set_integrator(d, o.integrator);
  }
  if ((code = sim_signals(cmd, m, &o)) != 0 || (code = sim_inputs(m, d, &o)) != 0 ||
      (code = sim_initial_state(m, d, &o)) != 0) {
    goto done;
  }
  int rc = pt_forward(m, d);   // the outputs of the t=0 row
  if (rc < 0) {
    cli_error(cmd, "%s: initial state: %s", o.path, pt_strerror(rc));
    code = CLI_EXIT_FAIL;
    goto done;
  }
  cli_rec *rec = NULL;
  if (o.record && !(rec = sim_record_open(m, d, &o))) {
    code = CLI_EXIT_FAIL;
    goto done;
  }
  code = sim_run(m, d, &o, (int64_t)nreal, rec);

done:
  if (d) {
    pt_data_free(d);
  }
  if (m) {
    pt_model_free(m);
  }
  free(o.set);
  free(o.sig);
  free(o.init);
  free(o.rate);
  free(o.text);
  return code;
}
