// rec_replay.c: `partita replay FILE [--model MODEL] [--json]` (docs/recording.md): the model
// rebuilt from the recording (or MODEL), the recorded inputs applied at their recorded steps,
// every recorded state compared bit for bit, or the largest differences per coordinate.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "json.h"
#include "rec_cmds.h"
#include "rec_file.h"
#include "recording.h"

#define REPLAY_MAX_GAP 1000000000LL   // steps between two records (every_k is at most 1e9)

// "NAME=VALUE" lines to coordinate assignments, a name given twice keeping its last value at
// its first place (as simulate's --init does); a control state's name (simulate's --init of
// one) to xs when given, in order. Exit code.
static int parse_lines(const char *cmd, const pt_model *m, const char *lines, pt_assign *out,
                       int *n, pt_assign *xs, int *nxs) {
  *n = 0;
  const char *p = lines;
  while (p && *p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    char line[512];
    if (len >= sizeof(line)) {
      cli_error(cmd, "recorded initial assignment too long");
      return CLI_EXIT_FAIL;
    }
    memcpy(line, p, len);
    line[len] = '\0';
    char *eq = strrchr(line, '=');
    if (len > 0) {
      if (!eq) {
        cli_error(cmd, "recorded initial assignment '%s' is malformed", line);
        return CLI_EXIT_FAIL;
      }
      *eq = '\0';
      int c = pt_coord_index(m, line), x = pt_control_state_index(m, line);
      if (c < 0 && x >= 0 && xs) {
        xs[(*nxs)++] = (pt_assign){x, strtod(eq + 1, NULL)};
        p = nl ? nl + 1 : NULL;
        continue;
      }
      if (c < 0) {
        cli_error(cmd, "the model has no coordinate '%s' (recorded --init)", line);
        return CLI_EXIT_FAIL;
      }
      int j = 0;
      while (j < *n && out[j].coord != c)
        j++;
      out[j].coord = c;
      out[j].value = strtod(eq + 1, NULL);
      if (j == *n)
        (*n)++;
    }
    p = nl ? nl + 1 : NULL;
  }
  return CLI_EXIT_OK;
}

static int count_lines(const char *s) {
  int n = 1;
  for (; s && *s; s++)
    n += *s == '\n';
  return n;
}

// Recorded input and coordinate indices to the replayed model's, by name (a changed model
// may order or name them differently); -1 where the model lacks the name.
typedef struct {
  int *input;   // (r->ni)
  int *coord;   // (r->nc)
  int ni, nc;
} index_map;

static int map_build(index_map *x, const rec_file *r, const pt_model *m) {
  x->ni = r->ni;
  x->nc = r->nc;
  x->input = calloc((size_t)r->ni + 1, sizeof(int));
  x->coord = calloc((size_t)r->nc + 1, sizeof(int));
  if (!x->input || !x->coord)
    return -1;
  for (int i = 0; i < r->ni; i++)
    x->input[i] = pt_input_index(m, r->input_names[i]);
  for (int i = 0; i < r->nc; i++)
    x->coord[i] = pt_coord_index(m, r->coord_names[i]);
  return 0;
}

static void map_free(index_map *x) {
  free(x->input);
  free(x->coord);
}

static int map_input(const index_map *x, uint32_t i) {
  return i < (uint32_t)x->ni ? x->input[i] : -1;
}

static int map_coord(const index_map *x, uint32_t i) {
  return i < (uint32_t)x->nc ? x->coord[i] : -1;
}

// The recorded model (or model_path) loaded as the recording's options say, with a data at
// the recorded initial state: the inputs recorded before the first state (simulate's --set)
// set first, then the initial assignments, then one evaluation, as simulate does. Exit code.
static int rebuild(const char *cmd, const rec_file *r, const char *model_path, pt_model **m,
                   pt_data **d, size_t npre, index_map *map) {
  if (!(r->dt > 0 && r->dt <= 1.0)) {
    cli_error(cmd, "the recording's dt (%g) is not a step in (0, 1] s", r->dt);
    return CLI_EXIT_FAIL;
  }
  pt_load_options lo;
  memset(&lo, 0, sizeof(lo));
  lo.floating_base = r->floating_base;
  lo.balance_inertia = r->balance_inertia;
  lo.no_joint_limits = r->no_joint_limits;
  lo.ground_plane = r->ground_plane;
  lo.ground_z = r->ground_z;
  lo.dt = r->dt;
  pt_integrator it;
  if (r->integrator && pt_integrator_parse(r->integrator, &it) == 0) {
    lo.has_integrator = 1;
    lo.integrator = (int)it;
  }
  pt_error err = {0, {0}};
  int rc;
  if (model_path) {
    rc = pt_model_load_file(model_path, &lo, m, &err);
  } else {
    if (!r->text) {
      cli_error(cmd, "the recording holds no model text (give --model FILE)");
      return CLI_EXIT_FAIL;
    }
    rc = pt_model_load_string((const char *)r->text, r->text_len, r->format,
                              r->source_name && r->source_name[0] ? r->source_name
                                                                  : "<recording>",
                              &lo, m, &err);
  }
  if (rc < 0 || !*m) {
    cli_error(cmd, "%s", err.msg[0] ? err.msg : pt_strerror(rc));
    return CLI_EXIT_FAIL;
  }
  *d = pt_data_new(*m);
  if (!*d) {
    cli_error(cmd, "out of memory");
    return CLI_EXIT_FAIL;
  }
  pt_set_dt(*d, r->dt);
  if (lo.has_integrator)
    pt_set_integrator(*d, it);
  if (map_build(map, r, *m) < 0) {
    cli_error(cmd, "out of memory");
    return CLI_EXIT_FAIL;
  }
  for (size_t k = 0; k < npre; k++) {
    const Partita__V1__RecordedInput *in = r->entries[k].u.input;
    for (size_t i = 0; i < in->n_index && i < in->n_values; i++)
      if (map_input(map, in->index[i]) >= 0)
        pt_set_input(*m, *d, map_input(map, in->index[i]), in->values[i]);
  }
  pt_assign *pos = calloc((size_t)count_lines(r->init), sizeof(*pos));
  pt_assign *vel = calloc((size_t)count_lines(r->init_rate), sizeof(*vel));
  pt_assign *xs = calloc((size_t)count_lines(r->init), sizeof(*xs));
  int npos = 0, nvel = 0, nxs = 0, code = CLI_EXIT_OK;
  if (!pos || !vel || !xs) {
    cli_error(cmd, "out of memory");
    code = CLI_EXIT_FAIL;
  } else if ((code = parse_lines(cmd, *m, r->init, pos, &npos, xs, &nxs)) == 0 &&
             (code = parse_lines(cmd, *m, r->init_rate, vel, &nvel, NULL, NULL)) == 0) {
    // as simulate: the coordinates assembled, then the control states
    rc = npos || nvel ? pt_set_state(*m, *d, pos, npos, vel, nvel, &err) : 0;
    for (int k = 0; rc >= 0 && k < nxs; k++)
      rc = pt_set_control_states(*m, *d, &xs[k].coord, &xs[k].value, 1, &err);
    if (rc < 0) {
      cli_error(cmd, "initial state: %s", err.msg[0] ? err.msg : pt_strerror(rc));
      code = CLI_EXIT_FAIL;
    }
  }
  free(pos);
  free(vel);
  free(xs);
  if (code == CLI_EXIT_OK && (rc = pt_forward(*m, *d)) < 0) {
    cli_error(cmd, "initial state: %s", pt_strerror(rc));
    code = CLI_EXIT_FAIL;
  }
  return code;
}

// ---------------------------------------------------------------------------------------------
// replay

typedef struct {
  const char *name;
  int rec_i, rep_i;           // index in the recording and in the replayed model (-1: absent)
  double max_q, max_qd;       // largest |recorded - replayed| of value and rate
  double t_q, rec_q, rep_q;   // where the value's largest difference was
} coord_diff;

typedef struct {
  int64_t states, compared, identical, inputs, resets, steps;
  int64_t first_step;         // first state that differs (-1: none)
  double first_time;
  const char *first_field;
} replay_result;

static int same(double a, double b) { return memcmp(&a, &b, sizeof(double)) == 0; }

static int same_vec(const double *a, size_t na, const double *b, size_t nb) {
  return na == nb && (na == 0 || memcmp(a, b, na * sizeof(double)) == 0);
}

// Whether the recorded frame f and the replayed data agree bit for bit in every field f holds.
static const char *compare_frame(const Partita__V1__StateFrame *f, const pt_model *m,
                                 const pt_data *d) {
  size_t nc = (size_t)pt_model_ncoord(m), ni = (size_t)pt_model_ninput(m);
  if (!same(f->time, pt_time(d)))
    return "time";
  if (f->n_coordinates && !same_vec(f->coordinates, f->n_coordinates, pt_coords(d), nc))
    return "coordinates";
  if (f->n_rates && !same_vec(f->rates, f->n_rates, pt_coord_rates(d), nc))
    return "rates";
  if (f->n_accelerations &&
      !same_vec(f->accelerations, f->n_accelerations, pt_coord_accels(d), nc))
    return "accelerations";
  if (f->n_inputs && !same_vec(f->inputs, f->n_inputs, pt_inputs(d), ni))
    return "inputs";
  if (f->energy && (!same(f->energy->kinetic, pt_energy_kinetic(d)) ||
                    !same(f->energy->potential, pt_energy_potential(d))))
    return "energy";
  if (f->residual && (!same(f->residual->position, pt_residual_position(d)) ||
                      !same(f->residual->velocity, pt_residual_velocity(d))))
    return "residual";
  // control elements (FIELD_CONTROLS): states, signals, tuned parameters
  if (f->n_control_states && !same_vec(f->control_states, f->n_control_states,
                                       pt_control_states(d), (size_t)pt_model_ncontrol_state(m)))
    return "control_states";
  if (f->n_signals &&
      !same_vec(f->signals, f->n_signals, pt_signals(d), (size_t)pt_model_nsignal(m)))
    return "signals";
  if (f->n_parameters &&
      !same_vec(f->parameters, f->n_parameters, pt_params(d), (size_t)pt_model_nparam(m)))
    return "parameters";
  for (size_t b = 0; b < f->n_bodies && b < (size_t)pt_model_nbody(m); b++) {
    const Partita__V1__BodyState *s = f->bodies[b];
    if (!same_vec(s->position, s->n_position, pt_body_pose(d, (int)b), 3) ||
        !same_vec(s->orientation, s->n_orientation, pt_body_pose(d, (int)b) + 3, 4) ||
        !same_vec(s->velocity, s->n_velocity, pt_body_velocity(d, (int)b), 3) ||
        !same_vec(s->angular_velocity, s->n_angular_velocity, pt_body_velocity(d, (int)b) + 3,
                  3))
      return "bodies";
  }
  return NULL;
}

static void note_diffs(coord_diff *cd, int n, const Partita__V1__StateFrame *f,
                       const pt_data *d) {
  const double *q = pt_coords(d), *qd = pt_coord_rates(d);
  for (int i = 0; i < n; i++) {
    coord_diff *c = &cd[i];
    if (c->rep_i < 0)
      continue;
    if ((size_t)c->rec_i < f->n_coordinates) {
      double e = fabs(f->coordinates[c->rec_i] - q[c->rep_i]);
      if (e > c->max_q || isnan(e)) {
        c->max_q = e;
        c->t_q = f->time;
        c->rec_q = f->coordinates[c->rec_i];
        c->rep_q = q[c->rep_i];
      }
    }
    if ((size_t)c->rec_i < f->n_rates) {
      double e = fabs(f->rates[c->rec_i] - qd[c->rep_i]);
      if (e > c->max_qd || isnan(e))
        c->max_qd = e;
    }
  }
}

// Steps d until it has taken `step` steps. Exit code.
static int advance_to(const char *cmd, const pt_model *m, pt_data *d, int64_t step,
                      replay_result *res) {
  if (step - pt_nstep(d) > REPLAY_MAX_GAP) {
    cli_error(cmd, "the recording jumps from step %lld to %lld (more than %lld steps without "
              "a record): not replayed", (long long)pt_nstep(d), (long long)step,
              (long long)REPLAY_MAX_GAP);
    return CLI_EXIT_FAIL;
  }
  if (pt_nstep(d) > step) {
    cli_error(cmd, "the recording goes back from step %lld to %lld without a reset",
              (long long)pt_nstep(d), (long long)step);
    return CLI_EXIT_FAIL;
  }
  while (pt_nstep(d) < step) {
    int rc = pt_step(m, d);
    if (rc < 0) {
      cli_error(cmd, "replay step %lld at t=%.17g failed: %s", (long long)pt_nstep(d) + 1,
                pt_time(d), pt_strerror(rc));
      return CLI_EXIT_FAIL;
    }
    res->steps++;
  }
  return CLI_EXIT_OK;
}

static int apply_input(const char *cmd, const pt_model *m, pt_data *d, const index_map *map,
                       const Partita__V1__RecordedInput *in, replay_result *res) {
  int code = advance_to(cmd, m, d, in->step, res);
  if (code)
    return code;
  res->inputs++;
  switch (in->kind) {
  case PARTITA__V1__RECORDED_INPUT__KIND__RESET:
    pt_data_reset(m, d);
    pt_forward(m, d);
    res->resets++;
    return CLI_EXIT_OK;
  case PARTITA__V1__RECORDED_INPUT__KIND__SET_STATE: {
    pt_assign *pos = calloc(in->n_coordinates + 1, sizeof(*pos));
    pt_assign *vel = calloc(in->n_rates + 1, sizeof(*vel));
    int np = 0, nv = 0;
    for (size_t k = 0; pos && k < in->n_coordinates; k++)
      if (map_coord(map, in->coordinates[k]->index) >= 0)
        pos[np++] = (pt_assign){map_coord(map, in->coordinates[k]->index),
                                in->coordinates[k]->value};
    for (size_t k = 0; vel && k < in->n_rates; k++)
      if (map_coord(map, in->rates[k]->index) >= 0)
        vel[nv++] = (pt_assign){map_coord(map, in->rates[k]->index), in->rates[k]->value};
    pt_error err = {0, {0}};
    int rc = pos && vel ? PT_OK : PT_ENOMEM;
    // the control states first, one by one, then the coordinates: as partitad applied them
    for (size_t k = 0; rc == PT_OK && k < in->n_control_states; k++) {
      const int x = (int)in->control_states[k]->index;
      const double v = in->control_states[k]->value;
      if (x < pt_model_ncontrol_state(m))
        rc = pt_set_control_states(m, d, &x, &v, 1, &err);
    }
    if (rc == PT_OK)
      rc = pt_set_state(m, d, pos, np, vel, nv, &err);
    free(pos);
    free(vel);
    if (rc < 0)
      cli_error(cmd, "warning: recorded SetState at step %lld: %s", (long long)in->step,
                err.msg[0] ? err.msg : pt_strerror(rc));
    return CLI_EXIT_OK;
  }
  case PARTITA__V1__RECORDED_INPUT__KIND__PARAMETERS:  // SetParameters (by index)
    for (size_t k = 0; k < in->n_index && k < in->n_values; k++) {
      pt_error err = {0, {0}};
      if ((int)in->index[k] < pt_model_nparam(m) &&
          pt_set_param(m, d, (int)in->index[k], in->values[k], &err) < 0)
        cli_error(cmd, "warning: recorded SetParameters at step %lld: %s", (long long)in->step,
                  err.msg);
    }
    return CLI_EXIT_OK;
  default:
    for (size_t k = 0; k < in->n_index && k < in->n_values; k++)
      if (map_input(map, in->index[k]) >= 0)
        pt_set_input(m, d, map_input(map, in->index[k]), in->values[k]);
    return CLI_EXIT_OK;
  }
}

static void replay_print(const char *path, const rec_file *r, const replay_result *res,
                         const coord_diff *cd, int ncd, int changed, int json) {
  if (json) {
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_key(&j, "file");
    cli_json_string(&j, path);
    cli_json_key(&j, "model");
    cli_json_string(&j, r->model);
    cli_json_key(&j, "complete");
    cli_json_bool(&j, r->status == MCAP_READ_COMPLETE);
    cli_json_key(&j, "states");
    cli_json_int(&j, res->states);
    cli_json_key(&j, "inputs");
    cli_json_int(&j, res->inputs);
    cli_json_key(&j, "resets");
    cli_json_int(&j, res->resets);
    cli_json_key(&j, "steps");
    cli_json_int(&j, res->steps);
    cli_json_key(&j, "identical");
    cli_json_int(&j, res->identical);
    cli_json_key(&j, "bit_identical");
    cli_json_bool(&j, res->identical == res->states);
    cli_json_key(&j, "first_difference");
    if (res->first_step < 0) {
      cli_json_null(&j);
    } else {
      cli_json_begin_object(&j);
      cli_json_key(&j, "step");
      cli_json_int(&j, res->first_step);
      cli_json_key(&j, "time");
      cli_json_number(&j, res->first_time);
      cli_json_key(&j, "field");
      cli_json_string(&j, res->first_field);
      cli_json_end_object(&j);
    }
    cli_json_key(&j, "differences");
    cli_json_begin_array(&j);
    for (int i = 0; i < ncd; i++) {
      cli_json_newline(&j);
      cli_json_begin_object(&j);
      cli_json_key(&j, "coordinate");
      cli_json_string(&j, cd[i].name);
      cli_json_key(&j, "in_model");
      cli_json_bool(&j, cd[i].rep_i >= 0);
      cli_json_key(&j, "max_abs_diff");
      cli_json_number(&j, cd[i].max_q);
      cli_json_key(&j, "at_time");
      cli_json_number(&j, cd[i].t_q);
      cli_json_key(&j, "recorded");
      cli_json_number(&j, cd[i].rec_q);
      cli_json_key(&j, "replayed");
      cli_json_number(&j, cd[i].rep_q);
      cli_json_key(&j, "rate_max_abs_diff");
      cli_json_number(&j, cd[i].max_qd);
      cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    cli_json_finish(&j);
    return;
  }
  printf("recording  %s (model %s%s)\n", path, r->model,
         r->status == MCAP_READ_COMPLETE ? "" : ", cut off");
  printf("replayed   %lld steps, %lld input changes, %lld resets, with %s\n",
         (long long)res->steps, (long long)res->inputs, (long long)res->resets,
         changed ? "the given model" : "the recorded model");
  if (res->identical == res->states) {
    printf("result     identical: %lld of %lld states bit for bit\n", (long long)res->identical,
           (long long)res->states);
    return;
  }
  printf("result     %lld of %lld states identical; first difference at step %lld "
         "(t=%.17g) in %s\n", (long long)res->identical, (long long)res->states,
         (long long)res->first_step, res->first_time, res->first_field);
  printf("\n%-20s %14s %12s %22s %22s %14s\n", "coordinate", "max |diff|", "at t",
         "recorded", "replayed", "rate max |diff|");
  for (int i = 0; i < ncd; i++) {
    if (cd[i].rep_i < 0) {
      printf("%-20s %14s\n", cd[i].name, "(not in model)");
      continue;
    }
    printf("%-20s %14.6g %12.6g %22.17g %22.17g %14.6g\n", cd[i].name, cd[i].max_q,
           cd[i].t_q, cd[i].rec_q, cd[i].rep_q, cd[i].max_qd);
  }
}

static int cmp_diff(const void *a, const void *b) {
  const coord_diff *x = a, *y = b;
  double dx = x->rep_i < 0 ? -1 : x->max_q, dy = y->rep_i < 0 ? -1 : y->max_q;
  return dx < dy ? 1 : dx > dy ? -1 : 0;
}

// The step of the recording's first state, unless a reset comes before it (0 then).
static int64_t first_state_step(const rec_file *r) {
  for (size_t k = 0; k < r->n; k++) {
    if (r->entries[k].kind == REC_INPUT &&
        r->entries[k].u.input->kind == PARTITA__V1__RECORDED_INPUT__KIND__RESET)
      return 0;
    if (r->entries[k].kind == REC_STATE) {
      Partita__V1__StateFrame *f = rec_state(&r->entries[k]);
      int64_t step = f ? f->step : 0;
      rec_state_free(f);
      return step;
    }
  }
  return 0;
}

// The plain inputs before the first state: part of the initial state (simulate's --set).
static size_t initial_inputs(const rec_file *r) {
  size_t npre = 0;
  while (npre < r->n && r->entries[npre].kind == REC_INPUT &&
         r->entries[npre].u.input->kind == PARTITA__V1__RECORDED_INPUT__KIND__INPUTS &&
         r->entries[npre].u.input->step == 0)
    npre++;
  return npre;
}

// The recording from entry npre on: inputs applied at their steps, every state compared
// (res, and per coordinate in cd). An exit code.
static int replay_entries(const char *cmd, const rec_file *r, size_t npre, const pt_model *m,
                          pt_data *d, const index_map *map, coord_diff *cd,
                          replay_result *res) {
  int code = CLI_EXIT_OK;
  for (size_t k = npre; k < r->n && code == 0; k++) {
    const rec_entry *e = &r->entries[k];
    if (e->kind == REC_INPUT) {
      code = apply_input(cmd, m, d, map, e->u.input, res);
    } else if (e->kind == REC_STATE) {
      Partita__V1__StateFrame *f = rec_state(e);
      if (!f) {
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAIL;
      }
      if ((code = advance_to(cmd, m, d, f->step, res)) == 0) {
        res->states++;
        const char *field = compare_frame(f, m, d);
        if (!field) {
          res->identical++;
        } else if (res->first_step < 0) {
          res->first_step = f->step;
          res->first_time = f->time;
          res->first_field = field;
        }
        note_diffs(cd, r->nc, f, d);
      }
      rec_state_free(f);
    }
  }
  return code;
}

int cli_replay_main(const cli_command *self, int argc, char **argv) {
  const char *cmd = self->name, *path = NULL, *model_path = NULL;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r;
    if (cli_is_flag(argv[i], "--json")) {
      json = 1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--model", &v)) != 0) {
      if (r < 0)
        return CLI_EXIT_USAGE;
      model_path = v;
    } else if (cli_positional(cmd, argv[i], "recording", &path) < 0) {
      return CLI_EXIT_USAGE;
    }
  }
  if (!path) {
    cli_error(cmd, "FILE missing (usage: partita replay FILE [--model MODEL] [--json])");
    return CLI_EXIT_USAGE;
  }
  rec_file r;
  int code = cli_rec_read(cmd, path, &r);
  pt_model *m = NULL;
  pt_data *d = NULL;
  coord_diff *cd = NULL;
  index_map map = {0};
  if (code)
    goto done;
  int64_t first_step = first_state_step(&r);
  if (r.start_step != 0 || first_step != 0) {
    cli_error(cmd, "%s: recording started at step %lld of the model; replay needs a recording "
              "that starts at step 0 (from load, before the model first steps, or with a "
              "Reset)", path, (long long)(r.start_step ? r.start_step : first_step));
    code = CLI_EXIT_FAIL;
    goto done;
  }
  size_t npre = initial_inputs(&r);
  if ((code = rebuild(cmd, &r, model_path, &m, &d, npre, &map)) != 0)
    goto done;
  cd = calloc((size_t)r.nc + 1, sizeof(*cd));
  if (!cd) {
    code = CLI_EXIT_FAIL;
    goto done;
  }
  for (int i = 0; i < r.nc; i++) {
    cd[i].name = r.coord_names[i];
    cd[i].rec_i = i;
    cd[i].rep_i = pt_coord_index(m, r.coord_names[i]);
  }
  replay_result res = {.first_step = -1, .inputs = (int64_t)npre};
  if ((code = replay_entries(cmd, &r, npre, m, d, &map, cd, &res)) != 0)
    goto done;
  qsort(cd, (size_t)r.nc, sizeof(*cd), cmp_diff);
  replay_print(path, &r, &res, cd, r.nc, model_path != NULL, json);
  if (fflush(stdout) != 0) {
    cli_error(cmd, "writing the output failed");
    code = CLI_EXIT_FAIL;
  } else if (!model_path && res.identical != res.states) {
    code = CLI_EXIT_FAIL;   // the same model must reproduce every bit
  }
done:
  free(cd);
  map_free(&map);
  if (d)
    pt_data_free(d);
  if (m)
    pt_model_free(m);
  rec_file_free(&r);
  return code;
}
