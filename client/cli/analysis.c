// analysis.c: what the analysis commands on a MODEL file (`partita inverse`, `equilibrium`,
// `linearize`) share: their common options, loading the model, the state given by --init /
// --init-rate, the joint reactions in the output and the mapping of engine codes to exit codes.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partita.h"
#include "cli.h"

#define NAME_CAP 256

int cli_model_args_init(const char *cmd, cli_model_args *a, int argc, int with_rate) {
  memset(a, 0, sizeof(*a));
  // Every argument could be one NAME=VALUE text; +1 keeps calloc away from a zero size.
  a->init = calloc((size_t)argc + 1, sizeof(*a->init));
  if (with_rate) a->rate = calloc((size_t)argc + 1, sizeof(*a->rate));
  if (!a->init || (with_rate && !a->rate)) {
    cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
    cli_model_args_free(a);
    return -1;
  }
  return 0;
}

void cli_model_args_free(cli_model_args *a) {
  free(a->init);
  free(a->rate);
  a->init = a->rate = NULL;
}

int cli_model_arg(const char *cmd, int argc, char **argv, int *i, cli_model_args *a) {
  const char *arg = argv[*i], *v = NULL;
  int r;
  if (cli_is_flag(arg, "--help") || cli_is_flag(arg, "-h")) {
    cli_usage(cmd, stdout);
    return 1;
  } else if (cli_is_flag(arg, "--json")) {
    a->json = 1;
  } else if (cli_is_flag(arg, "--floating-base")) {
    a->lopt.floating_base = 1;
  } else if (cli_is_flag(arg, "--balance-inertia")) {
    a->lopt.balance_inertia = 1;
  } else if ((r = cli_opt_value(cmd, argc, argv, i, "--init", &v)) != 0) {
    if (r < 0) return -1;
    a->init[a->ninit++] = v;
  } else if (a->rate && (r = cli_opt_value(cmd, argc, argv, i, "--init-rate", &v)) != 0) {
    // Without a->rate the command takes no --init-rate: it falls to "unknown option" below.
    if (r < 0) return -1;
    a->rate[a->nrate++] = v;
  } else if (cli_positional(cmd, arg, "MODEL file", &a->path) < 0) {
    return -1;
  }
  return 0;
}

int cli_model_args_done(const char *cmd, const cli_model_args *a, const char *usage) {
  if (a->path) return 0;
  cli_error(cmd, "MODEL file missing (usage: %s)", usage);
  return -1;
}

int cli_analysis_fail(const char *cmd, int rc, const pt_error *err) {
  cli_error(cmd, "%s", err->msg[0] ? err->msg : pt_strerror(rc));
  return rc == PT_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

int cli_analysis_flush(const char *cmd) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    cli_error(cmd, "error writing the output");
    return CLI_EXIT_FAIL;
  }
  return CLI_EXIT_OK;
}

int cli_analysis_load(const char *cmd, const cli_model_args *a, pt_model **m, pt_data **d) {
  pt_error err = {0, {0}};
  *m = NULL;
  *d = NULL;
  int rc = pt_model_load_file(a->path, &a->lopt, m, &err);
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

int cli_analysis_assign(const char *cmd, const char *opt, const pt_model *m,
                        const char *const *args, int n, pt_assign *out, int *nout) {
  *nout = 0;
  for (int k = 0; k < n; k++) {
    char name[NAME_CAP];
    double value;
    if (cli_parse_assign(cmd, opt, args[k], name, sizeof(name), &value) < 0)
      return CLI_EXIT_USAGE;
    const int c = pt_coord_index(m, name);
    if (c < 0) return unknown_coord(cmd, opt, m, name);
    int j = 0;
    while (j < *nout && out[j].coord != c) j++;
    out[j] = (pt_assign){c, value};
    if (j == *nout) (*nout)++;
  }
  return CLI_EXIT_OK;
}

int cli_analysis_state(const char *cmd, const cli_model_args *a, const pt_model *m,
                       pt_data *d) {
  if (a->ninit == 0 && a->nrate == 0) return CLI_EXIT_OK;
  pt_assign *pos = calloc((size_t)a->ninit + 1, sizeof(*pos));
  pt_assign *vel = calloc((size_t)a->nrate + 1, sizeof(*vel));
  int npos = 0, nvel = 0, code = CLI_EXIT_OK;
  if (!pos || !vel) {
    cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
    code = CLI_EXIT_FAIL;
  }
  if (code == CLI_EXIT_OK)
    code = cli_analysis_assign(cmd, "--init", m, a->init, a->ninit, pos, &npos);
  if (code == CLI_EXIT_OK)
    code = cli_analysis_assign(cmd, "--init-rate", m, a->rate, a->nrate, vel, &nvel);
  if (code == CLI_EXIT_OK) {
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

void cli_analysis_json_begin(cli_json *j, const pt_model *m, double time) {
  cli_json_init(j, stdout);
  cli_json_begin_object(j);
  cli_json_key(j, "model");
  cli_json_string(j, pt_model_name(m));
  cli_json_key(j, "time");
  cli_json_number(j, time);
}

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

void cli_analysis_note_lines(cli_json *j, const char *text) {
  const char *t = text ? text : "";
  if (!*t) return;
  if (j) {
    cli_json_key(j, "limit_notes");
    cli_json_begin_array(j);
  } else {
    printf("notes\n");
  }
  while (*t) {
    const char *nl = strchr(t, '\n');
    const size_t len = nl ? (size_t)(nl - t) : strlen(t);
    char line[512];
    snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), t);
    if (j)
      cli_json_string(j, line);
    else
      printf("  %s\n", line);
    t += len + (nl ? 1 : 0);
  }
  if (j) cli_json_end_array(j);
}

void cli_analysis_limit_reactions(cli_json *j, const pt_model *m, const int *held,
                                  const double *reaction) {
  const int nj = pt_model_njoint(m);
  int any = 0;
  for (int i = 0; i < nj; i++) any |= held[i] != 0;
  if (j) {
    cli_json_key(j, "limit_reactions");
    cli_json_begin_object(j);
  } else if (any) {
    printf("limits held (the limit's joint force or torque: >= 0 at a lower bound, <= 0 at an "
           "upper one)\n");
  }
  for (int i = 0; i < nj; i++) {
    if (!held[i]) continue;
    if (j) {
      cli_json_key(j, pt_joint_name(m, i));
      cli_json_number(j, reaction[i]);
    } else {
      printf("  %-16s %s %.17g\n", pt_joint_name(m, i), held[i] < 0 ? "lower" : "upper",
             reaction[i]);
    }
  }
  if (j) cli_json_end_object(j);
}
