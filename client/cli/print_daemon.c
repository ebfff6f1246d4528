// print_daemon.c: the printers of partitad's replies (print_daemon.h).
#include "print_daemon.h"

#include <stdio.h>
#include <string.h>

#include "json.h"

static const char *const mode_names[] = {"unspecified", "paused", "realtime", "free", "lockstep"};

const char *cli_mode_name(int m) { return m >= 0 && m <= 4 ? mode_names[m] : "unknown"; }

int cli_mode_value(const char *name) {
  for (int i = 1; i <= 4; i++)
    if (strcmp(name, mode_names[i]) == 0)
      return i;
  return strcmp(name, "free_run") == 0 ? PARTITA__V1__MODE__FREE_RUN : -1;
}

// A document on stdout that is one object; json_close ends it.
static void json_open(cli_json *j) {
  cli_json_init(j, stdout);
  cli_json_begin_object(j);
}

static void json_close(cli_json *j) {
  cli_json_end_object(j);
  cli_json_finish(j);
}

static void json_names(cli_json *j, const char *key, char **v, size_t n) {
  cli_json_key(j, key);
  cli_json_begin_array(j);
  for (size_t i = 0; i < n; i++)
    cli_json_string(j, v[i]);
  cli_json_end_array(j);
}

static void json_named(cli_json *j, const char *key, char **names, const double *v, size_t n) {
  cli_json_key(j, key);
  cli_json_begin_object(j);
  for (size_t i = 0; i < n; i++)
    cli_json_member_number(j, names[i], v[i]);
  cli_json_end_object(j);
}

// ---------------------------------------------------------------------------------------------
// State

// The `state` / `step` shape of docs/protocol.md.
static void json_state(cli_json *j, const Partita__V1__StateFrame *f, char **names,
                       size_t nnames) {
  cli_json_begin_object(j);
  cli_json_member_string(j, "model", f->model);
  cli_json_member_number(j, "time", f->time);
  cli_json_member_int(j, "step", f->step);
  if (f->n_coordinates == nnames)
    json_named(j, "coordinates", names, f->coordinates, nnames);
  if (f->n_rates == nnames)
    json_named(j, "rates", names, f->rates, nnames);
  if (f->energy) {
    cli_json_key(j, "energy");
    cli_json_begin_object(j);
    cli_json_member_number(j, "kinetic", f->energy->kinetic);
    cli_json_member_number(j, "potential", f->energy->potential);
    cli_json_member_number(j, "total", f->energy->total);
    cli_json_end_object(j);
  }
  if (f->residual) {
    cli_json_key(j, "residual");
    cli_json_begin_object(j);
    cli_json_member_number(j, "position", f->residual->position);
    cli_json_member_number(j, "velocity", f->residual->velocity);
    cli_json_end_object(j);
  }
  // control elements (docs/controls.md), named in responses
  if (f->n_control_states && f->n_control_state_names == f->n_control_states)
    json_named(j, "control_states", f->control_state_names, f->control_states,
               f->n_control_states);
  if (f->n_signals && f->n_signal_names == f->n_signals)
    json_named(j, "signals", f->signal_names, f->signals, f->n_signals);
  if (f->subscription) {
    cli_json_member_int(j, "sequence", (long long)f->sequence);
    cli_json_member_int(j, "dropped", (long long)f->dropped);
  }
  cli_json_end_object(j);
}

// Control states or signals under a title, one per line (nothing when the frame has none).
static void text_named(const char *title, char **names, size_t nn, const double *v, size_t n) {
  if (!n || nn != n)
    return;
  size_t w = 10;
  for (size_t i = 0; i < n; i++)
    w = strlen(names[i]) > w ? strlen(names[i]) : w;
  printf("  %-*s  %15s\n", (int)w, title, "value");
  for (size_t i = 0; i < n; i++)
    printf("  %-*s  %15.9g\n", (int)w, names[i], v[i]);
}

static void text_state(const Partita__V1__StateFrame *f, char **names, size_t nnames) {
  printf("%s  t = %.6f  step %lld  %s\n", f->model, f->time, (long long)f->step,
         cli_mode_name(f->mode));
  size_t w = 10;
  for (size_t i = 0; i < nnames; i++)
    w = strlen(names[i]) > w ? strlen(names[i]) : w;
  if (f->n_coordinates == nnames)
    printf("  %-*s  %15s  %15s\n", (int)w, "coordinate", "value", "rate");
  for (size_t i = 0; i < nnames && f->n_coordinates == nnames; i++) {
    printf("  %-*s  %15.9g", (int)w, names[i], f->coordinates[i]);
    if (f->n_rates == nnames)
      printf("  %15.9g", f->rates[i]);
    putchar('\n');
  }
  text_named("control state", f->control_state_names, f->n_control_state_names,
             f->control_states, f->n_control_states);
  text_named("signal", f->signal_names, f->n_signal_names, f->signals, f->n_signals);
  if (f->energy)
    printf("  energy: kinetic %.9g  potential %.9g  total %.9g\n", f->energy->kinetic,
           f->energy->potential, f->energy->total);
  if (f->residual)
    printf("  residual: position %.3g  velocity %.3g\n", f->residual->position,
           f->residual->velocity);
  if (f->subscription)
    printf("  frame %llu, %llu dropped\n", (unsigned long long)f->sequence,
           (unsigned long long)f->dropped);
}

void cli_print_state(const Partita__V1__StateFrame *f, char **names, size_t n, int json) {
  if (json) {
    cli_json j;
    cli_json_init(&j, stdout);
    json_state(&j, f, names, n);
    cli_json_finish(&j);
  } else {
    text_state(f, names, n);
  }
}

// `tune`: every control parameter (ModelInfo.parameters) with its value in the state f
// (FIELD_CONTROLS): "NAME = VALUE" lines, or one JSON object {name: value}.
void cli_print_parameters(const Partita__V1__ModelInfo *mi, const Partita__V1__StateFrame *f,
                          int json) {
  cli_json j;
  if (json) {
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
  }
  for (size_t k = 0; k < mi->n_parameters && k < f->n_parameters; k++) {
    if (json)
      cli_json_member_number(&j, mi->parameters[k], f->parameters[k]);
    else
      printf("%s = %.9g\n", mi->parameters[k], f->parameters[k]);
  }
  if (json) {
    cli_json_end_object(&j);
    cli_json_finish(&j);
  }
}

// ---------------------------------------------------------------------------------------------
// Models

// check's shape (docs/protocol.md) plus the live fields, for `load` and `models`.
static void json_info(cli_json *j, const Partita__V1__ModelInfo *mi) {
  cli_json_begin_object(j);
  cli_json_member_string(j, "model", mi->name);
  cli_json_member_int(j, "bodies", mi->bodies);
  cli_json_member_int(j, "constraints", mi->constraints);
  cli_json_member_int(j, "dof", mi->dof);
  json_names(j, "coordinates", mi->coordinates, mi->n_coordinates);
  json_names(j, "actuators", mi->actuators, mi->n_actuators);
  json_names(j, "inputs", mi->inputs, mi->n_inputs);
  json_names(j, "motions", mi->motions, mi->n_motions);
  json_names(j, "independent", mi->independent, mi->n_independent);
  cli_json_member_string(j, "integrator", mi->integrator);
  cli_json_member_number(j, "dt", mi->dt);
  cli_json_member_string(j, "mode", cli_mode_name(mi->mode));
  cli_json_member_number(j, "rate", mi->rate);
  cli_json_member_number(j, "time", mi->time);
  cli_json_member_int(j, "step", mi->step);
  cli_json_end_object(j);
}

static void text_info(const Partita__V1__ModelInfo *mi) {
  printf("%s: %d bodies, %d joints, %d constraints, %d dof, %s dt %g, %s", mi->name, mi->bodies,
         mi->joints, mi->constraints, mi->dof, mi->integrator, mi->dt, cli_mode_name(mi->mode));
  if (mi->mode == PARTITA__V1__MODE__REALTIME)
    printf(" x%g", mi->rate);
  printf(", t = %.6f (step %lld)\n", mi->time, (long long)mi->step);
  const char *labels[] = {"coordinates", "inputs", "independent"};
  char **lists[] = {mi->coordinates, mi->inputs, mi->independent};
  size_t counts[] = {mi->n_coordinates, mi->n_inputs, mi->n_independent};
  for (int k = 0; k < 3; k++) {
    printf("  %s:", labels[k]);
    for (size_t i = 0; i < counts[k]; i++)
      printf(" %s", lists[k][i]);
    printf("\n");
  }
}

void cli_print_model_info(const Partita__V1__ModelInfo *mi, int json) {
  if (json) {
    cli_json j;
    cli_json_init(&j, stdout);
    json_info(&j, mi);
    cli_json_finish(&j);
  } else {
    text_info(mi);
  }
}

void cli_print_model_list(const Partita__V1__ModelList *ml, int json) {
  size_t n = ml ? ml->n_models : 0;
  if (json) {
    cli_json j;
    json_open(&j);
    cli_json_key(&j, "models");
    cli_json_begin_array(&j);
    for (size_t i = 0; i < n; i++)
      json_info(&j, ml->models[i]);
    cli_json_end_array(&j);
    json_close(&j);
    return;
  }
  if (n == 0)
    printf("no models loaded\n");
  else
    printf("%-20s %-9s %6s %5s %14s %12s\n", "NAME", "MODE", "RATE", "DOF", "TIME", "STEP");
  for (size_t i = 0; i < n; i++) {
    const Partita__V1__ModelInfo *mi = ml->models[i];
    printf("%-20s %-9s %6g %5d %14.6f %12lld\n", mi->name, cli_mode_name(mi->mode), mi->rate,
           mi->dof, mi->time, (long long)mi->step);
  }
}

void cli_print_mode(const char *model, const Partita__V1__ModelInfo *mi, int mode, double rate,
                    int json) {
  if (json) {
    printf("{\"model\":");
    cli_json_write_string(stdout, model);
    printf(",\"mode\":\"%s\",\"rate\":%.17g}\n", cli_mode_name(mi ? (int)mi->mode : mode),
           mi ? mi->rate : rate);
    return;
  }
  printf("%s: %s", model, cli_mode_name(mi ? (int)mi->mode : mode));
  if (mi && mi->mode == PARTITA__V1__MODE__REALTIME)
    printf(" (rate %g)", mi->rate);
  printf("\n");
}

void cli_print_ok(const char *what, int json) {
  if (json)
    printf("{\"ok\":true}\n");
  else
    printf("%s\n", what);
}

// ---------------------------------------------------------------------------------------------
// Stats

static void json_quant(cli_json *j, const char *key, const Partita__V1__Quantiles *q, int mean) {
  Partita__V1__Quantiles zero = PARTITA__V1__QUANTILES__INIT;
  if (!q)
    q = &zero;
  cli_json_key(j, key);
  cli_json_begin_object(j);
  if (mean)
    cli_json_member_number(j, "mean", q->mean);
  cli_json_member_number(j, "p50", q->p50);
  cli_json_member_number(j, "p99", q->p99);
  cli_json_member_number(j, "max", q->max);
  cli_json_end_object(j);
}

// The partition in use; an empty name is the default LU.
static const char *partition_name(const Partita__V1__ModelStats *ms) {
  return ms->partition && ms->partition[0] ? ms->partition : "lu";
}

static void json_model_stats(cli_json *j, const Partita__V1__ModelStats *ms) {
  cli_json_key(j, ms->model);
  cli_json_begin_object(j);
  cli_json_member_int(j, "steps", ms->steps);
  cli_json_member_number(j, "time", ms->time);
  cli_json_member_string(j, "mode", cli_mode_name(ms->mode));
  json_quant(j, "step_us", ms->step_us, 1);
  json_quant(j, "late_us", ms->late_us, 0);
  cli_json_member_int(j, "overruns", ms->overruns);
  cli_json_member_int(j, "dropped_frames", ms->dropped_frames);
  cli_json_member_int(j, "repartitions", ms->repartitions);
  cli_json_member_string(j, "partition", partition_name(ms));
  cli_json_member_int(j, "qr_switches", ms->qr_switches);
  cli_json_member_int(j, "subscribers", ms->subscribers);
  cli_json_end_object(j);
}

static void text_model_stats(const Partita__V1__ModelStats *ms) {
  Partita__V1__Quantiles q0 = PARTITA__V1__QUANTILES__INIT;
  const Partita__V1__Quantiles *s = ms->step_us ? ms->step_us : &q0;
  const Partita__V1__Quantiles *l = ms->late_us ? ms->late_us : &q0;
  printf("%s: %s, %lld steps, t = %.6f\n", ms->model, cli_mode_name(ms->mode),
         (long long)ms->steps, ms->time);
  printf("  step us: mean %.2f  p50 %.2f  p99 %.2f  max %.2f\n", s->mean, s->p50, s->p99,
         s->max);
  printf("  late us: p50 %.2f  p99 %.2f  max %.2f\n", l->p50, l->p99, l->max);
  printf("  overruns %lld  dropped frames %lld  repartitions %lld  subscribers %u\n",
         (long long)ms->overruns, (long long)ms->dropped_frames, (long long)ms->repartitions,
         ms->subscribers);
  printf("  partition %s  qr switches %lld  qr steps %lld\n", partition_name(ms),
         (long long)ms->qr_switches, (long long)ms->qr_steps);
}

void cli_print_stats(const Partita__V1__Stats *st, int json) {
  Partita__V1__ServerStats zero = PARTITA__V1__SERVER_STATS__INIT;
  const Partita__V1__ServerStats *sv = st && st->server ? st->server : &zero;
  size_t n = st ? st->n_models : 0;
  if (!json) {
    for (size_t i = 0; i < n; i++)
      text_model_stats(st->models[i]);
    printf("server: %u clients, %llu bytes in, %llu bytes out\n", sv->clients,
           (unsigned long long)sv->bytes_in, (unsigned long long)sv->bytes_out);
    return;
  }
  cli_json j;
  json_open(&j);
  cli_json_key(&j, "models");
  cli_json_begin_object(&j);
  for (size_t i = 0; i < n; i++)
    json_model_stats(&j, st->models[i]);
  cli_json_end_object(&j);
  cli_json_key(&j, "server");
  cli_json_begin_object(&j);
  cli_json_member_int(&j, "clients", sv->clients);
  cli_json_member_int(&j, "bytes_in", (long long)sv->bytes_in);
  cli_json_member_int(&j, "bytes_out", (long long)sv->bytes_out);
  cli_json_end_object(&j);
  json_close(&j);
}

// ---------------------------------------------------------------------------------------------
// Recordings

void cli_print_record_status(const Partita__V1__RecordStatus *st, int json) {
  if (!json) {
    printf("recorded   %s\nmodel      %s\nstates     %llu (every %u steps), %llu dropped\n"
           "inputs     %llu\nevents     %llu, %llu dropped\nbytes      %llu\n", st->path,
           st->model, (unsigned long long)st->state_frames, st->every_k,
           (unsigned long long)st->dropped_frames, (unsigned long long)st->inputs,
           (unsigned long long)st->events, (unsigned long long)st->dropped_events,
           (unsigned long long)st->bytes);
    if (st->error[0])
      printf("error      %s\n", st->error);
    return;
  }
  cli_json j;
  json_open(&j);
  cli_json_member_string(&j, "model", st->model);
  cli_json_member_string(&j, "file", st->path);
  cli_json_member_int(&j, "state_frames", (long long)st->state_frames);
  cli_json_member_int(&j, "dropped_frames", (long long)st->dropped_frames);
  cli_json_member_int(&j, "inputs", (long long)st->inputs);
  cli_json_member_int(&j, "events", (long long)st->events);
  cli_json_member_int(&j, "dropped_events", (long long)st->dropped_events);
  cli_json_member_int(&j, "bytes", (long long)st->bytes);
  cli_json_member_int(&j, "every_k", st->every_k);
  cli_json_member_int(&j, "fields", st->fields);
  cli_json_member_string(&j, "error", st->error);
  json_close(&j);
}
