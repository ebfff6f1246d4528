// remote.c: the commands of `partita` that a running partitad answers: models, load, unload,
// state, watch, set, step, mode, reset, stats, and inverse/linearize/equilibrium --model NAME.
// Text for people, --json in the shapes of spec/api.md for scripts.
#include "remote.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "partita_client.h"

typedef Partita__V1__ServerMessage pb_msg;
typedef Partita__V1__Request pb_req;

#define MAXPOS 64
#define MAXASSIGN 256

// NAME=VALUE assignments as NamedValue parts of a request; a name given twice keeps its last
// value, as the offline commands do (cli_analysis_assign).
typedef struct {
  char name[MAXASSIGN][128];
  double val[MAXASSIGN];
  int n;
  Partita__V1__NamedValue nv[MAXASSIGN];
  Partita__V1__NamedValue *pnv[MAXASSIGN];
} assign_list;

typedef struct {
  const char *cmd;
  const char *connect, *socket, *name, *mode, *mode_rate, *count, *every, *at, *model;
  const char *states, *inputs, *outputs, *dt, *integrator;
  int json, apply, floating_base, balance_inertia, no_joint_limits;
  int timeout_ms;
  const char *pos[MAXPOS];
  int npos;
  assign_list acc, init, rate;           // --acc, --init, --init-rate NAME=VALUE
  assign_list inputs_set;                // --set ACTUATOR=VALUE (linearize)
  int gravity;                           // --gravity (inverse)
  const char *max_iterations, *tolerance;
  int newton_only, allow_unstable, dense;
  unsigned given;                        // OPT_* bits: the analysis options given
  ptc_client *c;
} ctx;

// The options of the analyses, as bits of ctx.given: each analysis refuses the ones its offline
// twin does not take, so `--model` and a MODEL file accept the same command lines.
enum {
  OPT_AT = 1u << 0, OPT_ACC = 1u << 1, OPT_INIT = 1u << 2, OPT_INIT_RATE = 1u << 3,
  OPT_STATES = 1u << 4, OPT_APPLY = 1u << 5, OPT_EQ = 1u << 6,   // OPT_EQ: --max-iterations,
  OPT_GRAVITY = 1u << 7, OPT_SET = 1u << 8,
};                                                               // --tolerance, --newton-only,
                                                                 // --allow-unstable

static const char *const mode_names[] = {"unspecified", "paused", "realtime", "free", "lockstep"};

static const char *mode_name(int m) { return m >= 0 && m <= 4 ? mode_names[m] : "unknown"; }

static const char usage[] =
    "usage: partita models | load FILE [--name N] [--mode M] [--rate R] [--floating-base]\n"
    "                             [--balance-inertia] [--no-joint-limits] [--dt H]\n"
    "                             [--integrator rk4|abm4|euler]\n"
    "             | unload N | state N | watch N [--count K] [--every K] | set N ACT=VALUE ...\n"
    "             | step N [COUNT] | mode N paused|realtime|free|lockstep [--rate R]\n"
    "             | reset N | stats [N]\n"
    "       partita inverse --model N [--at T] [--acc NAME=VALUE ...] [--gravity]\n"
    "                         [--init NAME=VALUE ...] [--init-rate NAME=VALUE ...]\n"
    "       partita linearize --model N [--states A,B] [--inputs U,V] [--outputs Y,Z]\n"
    "                         [--init NAME=VALUE ...] [--init-rate NAME=VALUE ...]\n"
    "                         [--set ACTUATOR=VALUE ...]\n"
    "       partita equilibrium --model N [--apply] [--init NAME=VALUE ...]\n"
    "                         [--max-iterations N] [--tolerance X] [--newton-only]\n"
    "                         [--allow-unstable]\n"
    "options: --connect HOST:PORT (default " CLI_REMOTE_DEFAULT_CONNECT
    ", or $PARTITA_CONNECT)\n"
    "         --socket PATH (Unix socket; default $PARTITA_SOCKET if set)\n"
    "         --json (machine-readable output)  --timeout SECONDS (default 10)\n";

// ---------------------------------------------------------------------------------------------
// Requests.

static int call(ctx *x, pb_req *rq, pb_msg **out) {
  int rc = ptc_call(x->c, rq, out, x->timeout_ms);
  if (rc != PTC_OK) {
    cli_error(x->cmd, "%s", ptc_error(x->c));
    return -1;
  }
  Partita__V1__Status *st = (*out)->response->status;
  if (st && st->code != PARTITA__V1__STATUS__CODE__OK) {
    cli_error(x->cmd, "%s: %s", ptc_status_name(st->code), st->message);
    ptc_free(*out);
    *out = NULL;
    return -1;
  }
  return 0;
}

// The requests that carry just a model name (unload, state, reset, model info): *out is the
// reply, as call() leaves it.
static int call_model(ctx *x, Partita__V1__Request__OpCase op, const char *model, pb_msg **out) {
  pb_req rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__UnloadModel u = PARTITA__V1__UNLOAD_MODEL__INIT;
  Partita__V1__GetState g = PARTITA__V1__GET_STATE__INIT;
  Partita__V1__Reset r = PARTITA__V1__RESET__INIT;
  Partita__V1__GetModelInfo gi = PARTITA__V1__GET_MODEL_INFO__INIT;
  u.model = g.model = r.model = gi.model = (char *)model;
  rq.op_case = op;
  if (op == PARTITA__V1__REQUEST__OP_UNLOAD_MODEL)
    rq.unload_model = &u;
  else if (op == PARTITA__V1__REQUEST__OP_GET_STATE)
    rq.get_state = &g;
  else if (op == PARTITA__V1__REQUEST__OP_RESET)
    rq.reset = &r;
  else
    rq.get_model_info = &gi;
  return call(x, &rq, out);
}

static int connect_server(ctx *x) {
  char err[512];
  const char *sock = x->socket ? x->socket : getenv("PARTITA_SOCKET");
  if (sock && *sock && !x->connect) {
    x->c = ptc_connect_unix(sock, x->timeout_ms, err, sizeof(err));
  } else {
    const char *addr = x->connect ? x->connect : getenv("PARTITA_CONNECT");
    x->c = ptc_connect_addr(addr && *addr ? addr : CLI_REMOTE_DEFAULT_CONNECT, x->timeout_ms,
                            err, sizeof(err));
  }
  if (!x->c) {
    cli_error(x->cmd, "cannot reach partitad: %s", err);
    return -1;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Output.

// A document on stdout that is one object; json_close ends it.
static void json_open(cli_json *j) {
  cli_json_init(j, stdout);
  cli_json_begin_object(j);
}

static void json_close(cli_json *j) {
  cli_json_end_object(j);
  cli_json_finish(j);
}

// "key": value members, the bulk of every object below.
static void json_num(cli_json *j, const char *key, double v) {
  cli_json_key(j, key);
  cli_json_number(j, v);
}

static void json_int(cli_json *j, const char *key, long long v) {
  cli_json_key(j, key);
  cli_json_int(j, v);
}

static void json_str(cli_json *j, const char *key, const char *s) {
  cli_json_key(j, key);
  cli_json_string(j, s);
}

static void json_numbers(cli_json *j, const char *key, const double *v, size_t n) {
  cli_json_key(j, key);
  cli_json_begin_array(j);
  for (size_t i = 0; i < n; i++)
    cli_json_number(j, v[i]);
  cli_json_end_array(j);
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
    json_num(j, names[i], v[i]);
  cli_json_end_object(j);
}

// The `state` / `step` shape of spec/api.md.
static void json_state(cli_json *j, const Partita__V1__StateFrame *f, char **names,
                       size_t nnames) {
  cli_json_begin_object(j);
  json_str(j, "model", f->model);
  json_num(j, "time", f->time);
  json_int(j, "step", f->step);
  if (f->n_coordinates == nnames)
    json_named(j, "coordinates", names, f->coordinates, nnames);
  if (f->n_rates == nnames)
    json_named(j, "rates", names, f->rates, nnames);
  if (f->energy) {
    cli_json_key(j, "energy");
    cli_json_begin_object(j);
    json_num(j, "kinetic", f->energy->kinetic);
    json_num(j, "potential", f->energy->potential);
    json_num(j, "total", f->energy->total);
    cli_json_end_object(j);
  }
  if (f->residual) {
    cli_json_key(j, "residual");
    cli_json_begin_object(j);
    json_num(j, "position", f->residual->position);
    json_num(j, "velocity", f->residual->velocity);
    cli_json_end_object(j);
  }
  if (f->subscription) {
    json_int(j, "sequence", (long long)f->sequence);
    json_int(j, "dropped", (long long)f->dropped);
  }
  cli_json_end_object(j);
}

static void text_state(FILE *out, const Partita__V1__StateFrame *f, char **names,
                       size_t nnames) {
  fprintf(out, "%s  t = %.6f  step %lld  %s\n", f->model, f->time, (long long)f->step,
          mode_name(f->mode));
  size_t w = 10;
  for (size_t i = 0; i < nnames; i++)
    w = strlen(names[i]) > w ? strlen(names[i]) : w;
  if (f->n_coordinates == nnames)
    fprintf(out, "  %-*s  %15s  %15s\n", (int)w, "coordinate", "value", "rate");
  for (size_t i = 0; i < nnames && f->n_coordinates == nnames; i++) {
    fprintf(out, "  %-*s  %15.9g", (int)w, names[i], f->coordinates[i]);
    if (f->n_rates == nnames)
      fprintf(out, "  %15.9g", f->rates[i]);
    fputc('\n', out);
  }
  if (f->energy)
    fprintf(out, "  energy: kinetic %.9g  potential %.9g  total %.9g\n", f->energy->kinetic,
            f->energy->potential, f->energy->total);
  if (f->residual)
    fprintf(out, "  residual: position %.3g  velocity %.3g\n", f->residual->position,
            f->residual->velocity);
  if (f->subscription)
    fprintf(out, "  frame %llu, %llu dropped\n", (unsigned long long)f->sequence,
            (unsigned long long)f->dropped);
}

static int print_state(ctx *x, const Partita__V1__StateFrame *f) {
  if (!f) {
    cli_error(x->cmd, "the server sent no state");
    return CLI_EXIT_FAIL;
  }
  if (x->json) {
    cli_json j;
    cli_json_init(&j, stdout);
    json_state(&j, f, f->coordinate_names, f->n_coordinate_names);
    cli_json_finish(&j);
  } else {
    text_state(stdout, f, f->coordinate_names, f->n_coordinate_names);
  }
  return CLI_EXIT_OK;
}

// check's shape (spec/api.md) plus the live fields, for `load` and `models`.
static void json_info(cli_json *j, const Partita__V1__ModelInfo *mi) {
  cli_json_begin_object(j);
  json_str(j, "model", mi->name);
  json_int(j, "bodies", mi->bodies);
  json_int(j, "constraints", mi->constraints);
  json_int(j, "dof", mi->dof);
  json_names(j, "coordinates", mi->coordinates, mi->n_coordinates);
  json_names(j, "actuators", mi->actuators, mi->n_actuators);
  json_names(j, "inputs", mi->inputs, mi->n_inputs);
  json_names(j, "motions", mi->motions, mi->n_motions);
  json_names(j, "independent", mi->independent, mi->n_independent);
  json_str(j, "integrator", mi->integrator);
  json_num(j, "dt", mi->dt);
  json_str(j, "mode", mode_name(mi->mode));
  json_num(j, "rate", mi->rate);
  json_num(j, "time", mi->time);
  json_int(j, "step", mi->step);
  cli_json_end_object(j);
}

static void text_info(const Partita__V1__ModelInfo *mi) {
  printf("%s: %d bodies, %d joints, %d constraints, %d dof, %s dt %g, %s", mi->name, mi->bodies,
         mi->joints, mi->constraints, mi->dof, mi->integrator, mi->dt, mode_name(mi->mode));
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

// ---------------------------------------------------------------------------------------------
// Commands.

static int need_pos(ctx *x, int min, int max) {
  if (x->npos < min || x->npos > max) {
    cli_error(x->cmd, "expected %d%s argument%s (see partita %s --help)", min,
              max > min ? " or more" : "", min == 1 && max == 1 ? "" : "s", x->cmd);
    return -1;
  }
  return 0;
}

static int cmd_models(ctx *x) {
  pb_req rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__ListModels lm = PARTITA__V1__LIST_MODELS__INIT;
  pb_msg *m;
  rq.op_case = PARTITA__V1__REQUEST__OP_LIST_MODELS;
  rq.list_models = &lm;
  if (call(x, &rq, &m))
    return CLI_EXIT_FAIL;
  Partita__V1__ModelList *ml = m->response->model_list;
  size_t n = ml ? ml->n_models : 0;
  if (x->json) {
    cli_json j;
    json_open(&j);
    cli_json_key(&j, "models");
    cli_json_begin_array(&j);
    for (size_t i = 0; i < n; i++)
      json_info(&j, ml->models[i]);
    cli_json_end_array(&j);
    json_close(&j);
  } else {
    if (n == 0)
      printf("no models loaded\n");
    else
      printf("%-20s %-9s %6s %5s %14s %12s\n", "NAME", "MODE", "RATE", "DOF", "TIME", "STEP");
    for (size_t i = 0; i < n; i++) {
      const Partita__V1__ModelInfo *mi = ml->models[i];
      printf("%-20s %-9s %6g %5d %14.6f %12lld\n", mi->name, mode_name(mi->mode), mi->rate,
             mi->dof, mi->time, (long long)mi->step);
    }
  }
  ptc_free(m);
  return CLI_EXIT_OK;
}

static char *read_file(ctx *x, const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    cli_error(x->cmd, "%s: cannot open", path);
    return NULL;
  }
  char *buf = malloc(CLI_REMOTE_MAX_FILE + 1);
  size_t n = buf ? fread(buf, 1, CLI_REMOTE_MAX_FILE + 1, f) : 0;
  fclose(f);
  if (!buf || n > CLI_REMOTE_MAX_FILE) {
    cli_error(x->cmd, "%s: larger than %d bytes", path, CLI_REMOTE_MAX_FILE);
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  if (strlen(buf) != n) {
    cli_error(x->cmd, "%s: not a text file", path);
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

static int parse_mode(ctx *x, const char *s) {
  for (int i = 1; i <= 4; i++)
    if (strcmp(s, mode_names[i]) == 0)
      return i;
  if (strcmp(s, "free_run") == 0)
    return PARTITA__V1__MODE__FREE_RUN;
  cli_error(x->cmd, "unknown mode '%s' (paused, realtime, free or lockstep)", s);
  return -1;
}

static int cmd_load(ctx *x) {
  if (need_pos(x, 1, 1))
    return CLI_EXIT_USAGE;
  size_t len;
  double rate = 0;
  int mode = 0;
  if (x->mode_rate && cli_parse_double(x->cmd, "--rate", x->mode_rate, &rate))
    return CLI_EXIT_USAGE;
  if (x->mode && (mode = parse_mode(x, x->mode)) < 0)
    return CLI_EXIT_USAGE;
  char *text = read_file(x, x->pos[0], &len);
  if (!text)
    return CLI_EXIT_FAIL;
  const char *dot = strrchr(x->pos[0], '.');
  pb_req rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__LoadModel lm = PARTITA__V1__LOAD_MODEL__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_LOAD_MODEL;
  rq.load_model = &lm;
  lm.name = (char *)(x->name ? x->name : "");
  lm.source = text;
  lm.source_name = (char *)x->pos[0];
  lm.format = dot && (!strcmp(dot, ".urdf") || !strcmp(dot, ".xml"))
                  ? PARTITA__V1__MODEL_FORMAT__URDF
                  : PARTITA__V1__MODEL_FORMAT__FORMAT_AUTO;
  lm.floating_base = x->floating_base;
  lm.balance_inertia = x->balance_inertia;
  lm.no_joint_limits = x->no_joint_limits;
  lm.integrator = (char *)(x->integrator ? x->integrator : "");
  if (x->dt && cli_parse_double(x->cmd, "--dt", x->dt, &lm.dt)) {
    free(text);
    return CLI_EXIT_USAGE;
  }
  lm.mode = (Partita__V1__Mode)mode;
  lm.rate = rate;
  pb_msg *m;
  int rc = call(x, &rq, &m);
  free(text);
  if (rc)
    return CLI_EXIT_FAIL;
  Partita__V1__ModelInfo *mi = m->response->model_info;
  if (mi && x->json) {
    cli_json j;
    cli_json_init(&j, stdout);
    json_info(&j, mi);
    cli_json_finish(&j);
  } else if (mi) {
    text_info(mi);
    if (mi->warnings[0])
      fprintf(stderr, "%s", mi->warnings);
  }
  ptc_free(m);
  return CLI_EXIT_OK;
}

// A reply with nothing to show but success (unload, set); frees it.
static int ok_reply(ctx *x, pb_msg *m, const char *what) {
  ptc_free(m);
  if (x->json)
    printf("{\"ok\":true}\n");
  else
    printf("%s\n", what);
  return CLI_EXIT_OK;
}

static int cmd_unload(ctx *x) {
  if (need_pos(x, 1, 1))
    return CLI_EXIT_USAGE;
  pb_msg *m;
  if (call_model(x, PARTITA__V1__REQUEST__OP_UNLOAD_MODEL, x->pos[0], &m))
    return CLI_EXIT_FAIL;
  return ok_reply(x, m, "unloaded");
}

// A reply that carries a state (state, reset, step); frees it.
static int state_reply(ctx *x, pb_msg *m) {
  int rc = print_state(x, m->response->state);
  ptc_free(m);
  return rc;
}

// `state` and `reset`: both name a model and print the state the server answers.
static int cmd_state(ctx *x) {
  if (need_pos(x, 1, 1))
    return CLI_EXIT_USAGE;
  Partita__V1__Request__OpCase op = strcmp(x->cmd, "reset") == 0
                                        ? PARTITA__V1__REQUEST__OP_RESET
                                        : PARTITA__V1__REQUEST__OP_GET_STATE;
  pb_msg *m;
  if (call_model(x, op, x->pos[0], &m))
    return CLI_EXIT_FAIL;
  return state_reply(x, m);
}

static int cmd_step(ctx *x) {
  long n = 1;
  if (need_pos(x, 1, 2))
    return CLI_EXIT_USAGE;
  if (x->npos == 2 && cli_parse_long(x->cmd, "COUNT", x->pos[1], 1, 4000000000L, &n))
    return CLI_EXIT_USAGE;
  pb_req rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__Step s = PARTITA__V1__STEP__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_STEP;
  rq.step = &s;
  s.model = (char *)x->pos[0];
  s.n = (uint32_t)n;
  // a long lockstep run takes its time: allow about 1 ms per step on top of the timeout
  int saved = x->timeout_ms;
  x->timeout_ms += n > 2000000 ? 2000000 : (int)n;
  pb_msg *m;
  int rc = call(x, &rq, &m);
  x->timeout_ms = saved;
  return rc ? CLI_EXIT_FAIL : state_reply(x, m);
}

static int cmd_set(ctx *x) {
  if (x->npos < 2) {
    cli_error(x->cmd, "expected a model and ACT=VALUE ... (see partita set --help)");
    return CLI_EXIT_USAGE;
  }
  int n = x->npos - 1;
  char (*names)[128] = calloc((size_t)n, 128);
  Partita__V1__NamedValue *vals = calloc((size_t)n, sizeof(*vals));
  Partita__V1__NamedValue **pv = calloc((size_t)n, sizeof(*pv));
  int rc = CLI_EXIT_USAGE;
  if (!names || !vals || !pv)
    goto out;
  for (int i = 0; i < n; i++) {
    Partita__V1__NamedValue nv = PARTITA__V1__NAMED_VALUE__INIT;
    vals[i] = nv;
    if (cli_parse_assign(x->cmd, "ACT=VALUE", x->pos[i + 1], names[i], 128, &vals[i].value))
      goto out;
    vals[i].name = names[i];
    pv[i] = &vals[i];
  }
  pb_req rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__SetInputs si = PARTITA__V1__SET_INPUTS__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_SET_INPUTS;
  rq.set_inputs = &si;
  si.model = (char *)x->pos[0];
  si.n_by_name = (size_t)n;
  si.by_name = pv;
  pb_msg *m;
  rc = call(x, &rq, &m) ? CLI_EXIT_FAIL : ok_reply(x, m, "ok");
out:
  free(names);
  free(vals);
  free(pv);
  return rc;
}

static int cmd_mode(ctx *x) {
  double rate = 0;
  if (need_pos(x, 2, 2))
    return CLI_EXIT_USAGE;
  int mode = parse_mode(x, x->pos[1]);
  if (mode < 0)
    return CLI_EXIT_USAGE;
  if (x->mode_rate && (cli_parse_double(x->cmd, "--rate", x->mode_rate, &rate) || rate <= 0)) {
    if (rate <= 0 && x->mode_rate)
      cli_error(x->cmd, "--rate must be positive");
    return CLI_EXIT_USAGE;
  }
  pb_req rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__SetMode sm = PARTITA__V1__SET_MODE__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_SET_MODE;
  rq.set_mode = &sm;
  sm.model = (char *)x->pos[0];
  sm.mode = (Partita__V1__Mode)mode;
  sm.rate = rate;
  pb_msg *m;
  if (call(x, &rq, &m))
    return CLI_EXIT_FAIL;
  Partita__V1__ModelInfo *mi = m->response->model_info;
  if (x->json) {
    printf("{\"model\":");
    cli_json_write_string(stdout, x->pos[0]);
    printf(",\"mode\":\"%s\",\"rate\":%.17g}\n", mode_name(mi ? (int)mi->mode : mode),
           mi ? mi->rate : rate);
  } else {
    printf("%s: %s", x->pos[0], mode_name(mi ? (int)mi->mode : mode));
    if (mi && mi->mode == PARTITA__V1__MODE__REALTIME)
      printf(" (rate %g)", mi->rate);
    printf("\n");
  }
  ptc_free(m);
  return CLI_EXIT_OK;
}

static void json_quant(cli_json *j, const char *key, const Partita__V1__Quantiles *q, int mean) {
  Partita__V1__Quantiles zero = PARTITA__V1__QUANTILES__INIT;
  if (!q)
    q = &zero;
  cli_json_key(j, key);
  cli_json_begin_object(j);
  if (mean)
    json_num(j, "mean", q->mean);
  json_num(j, "p50", q->p50);
  json_num(j, "p99", q->p99);
  json_num(j, "max", q->max);
  cli_json_end_object(j);
}

// The partition in use; an empty name is the default LU.
static const char *partition_name(const Partita__V1__ModelStats *ms) {
  return ms->partition && ms->partition[0] ? ms->partition : "lu";
}

static void json_model_stats(cli_json *j, const Partita__V1__ModelStats *ms) {
  cli_json_key(j, ms->model);
  cli_json_begin_object(j);
  json_int(j, "steps", ms->steps);
  json_num(j, "time", ms->time);
  json_str(j, "mode", mode_name(ms->mode));
  json_quant(j, "step_us", ms->step_us, 1);
  json_quant(j, "late_us", ms->late_us, 0);
  json_int(j, "overruns", ms->overruns);
  json_int(j, "dropped_frames", ms->dropped_frames);
  json_int(j, "repartitions", ms->repartitions);
  json_str(j, "partition", partition_name(ms));
  json_int(j, "qr_switches", ms->qr_switches);
  json_int(j, "subscribers", ms->subscribers);
  cli_json_end_object(j);
}

static void text_model_stats(const Partita__V1__ModelStats *ms) {
  Partita__V1__Quantiles q0 = PARTITA__V1__QUANTILES__INIT;
  const Partita__V1__Quantiles *s = ms->step_us ? ms->step_us : &q0;
  const Partita__V1__Quantiles *l = ms->late_us ? ms->late_us : &q0;
  printf("%s: %s, %lld steps, t = %.6f\n", ms->model, mode_name(ms->mode), (long long)ms->steps,
         ms->time);
  printf("  step us: mean %.2f  p50 %.2f  p99 %.2f  max %.2f\n", s->mean, s->p50, s->p99,
         s->max);
  printf("  late us: p50 %.2f  p99 %.2f  max %.2f\n", l->p50, l->p99, l->max);
  printf("  overruns %lld  dropped frames %lld  repartitions %lld  subscribers %u\n",
         (long long)ms->overruns, (long long)ms->dropped_frames, (long long)ms->repartitions,
         ms->subscribers);
  printf("  partition %s  qr switches %lld  qr steps %lld\n", partition_name(ms),
         (long long)ms->qr_switches, (long long)ms->qr_steps);
}

static int cmd_stats(ctx *x) {
  if (need_pos(x, 0, 1))
    return CLI_EXIT_USAGE;
  pb_req rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__GetStats gs = PARTITA__V1__GET_STATS__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_GET_STATS;
  rq.get_stats = &gs;
  gs.model = (char *)(x->npos ? x->pos[0] : "");
  pb_msg *m;
  if (call(x, &rq, &m))
    return CLI_EXIT_FAIL;
  Partita__V1__Stats *st = m->response->stats;
  Partita__V1__ServerStats zero = PARTITA__V1__SERVER_STATS__INIT;
  Partita__V1__ServerStats *sv = st && st->server ? st->server : &zero;
  size_t n = st ? st->n_models : 0;
  if (x->json) {
    cli_json j;
    json_open(&j);
    cli_json_key(&j, "models");
    cli_json_begin_object(&j);
    for (size_t i = 0; i < n; i++)
      json_model_stats(&j, st->models[i]);
    cli_json_end_object(&j);
    cli_json_key(&j, "server");
    cli_json_begin_object(&j);
    json_int(&j, "clients", sv->clients);
    json_int(&j, "bytes_in", (long long)sv->bytes_in);
    json_int(&j, "bytes_out", (long long)sv->bytes_out);
    cli_json_end_object(&j);
    json_close(&j);
  } else {
    for (size_t i = 0; i < n; i++)
      text_model_stats(st->models[i]);
    printf("server: %u clients, %llu bytes in, %llu bytes out\n", sv->clients,
           (unsigned long long)sv->bytes_in, (unsigned long long)sv->bytes_out);
  }
  ptc_free(m);
  return CLI_EXIT_OK;
}

static int cmd_watch(ctx *x) {
  long count = 0, every = 0;
  if (need_pos(x, 1, 1))
    return CLI_EXIT_USAGE;
  if (x->count && cli_parse_long(x->cmd, "--count", x->count, 1, 1000000000L, &count))
    return CLI_EXIT_USAGE;
  if (x->every && cli_parse_long(x->cmd, "--every", x->every, 1, 1000000000L, &every))
    return CLI_EXIT_USAGE;
  pb_msg *info;
  if (call_model(x, PARTITA__V1__REQUEST__OP_GET_MODEL_INFO, x->pos[0], &info))
    return CLI_EXIT_FAIL;
  Partita__V1__ModelInfo *mi = info->response->model_info;
  pb_req sq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__Subscribe sub = PARTITA__V1__SUBSCRIBE__INIT;
  pb_msg *m;
  sq.op_case = PARTITA__V1__REQUEST__OP_SUBSCRIBE;
  sq.subscribe = &sub;
  sub.model = (char *)x->pos[0];
  sub.every_k = (uint32_t)every;
  sub.rate_hz = every ? 0 : 10;   // a terminal refreshes about ten times a second
  if (call(x, &sq, &m)) {
    ptc_free(info);
    return CLI_EXIT_FAIL;
  }
  ptc_free(m);
  // A model that does not step by itself sends no frames: say so rather than sit silent.
  if (mi->mode == PARTITA__V1__MODE__PAUSED || mi->mode == PARTITA__V1__MODE__LOCKSTEP)
    fprintf(stderr, "partita watch: model %s is %s: frames come only as it steps (partita mode "
            "%s realtime, or step it)\n", x->pos[0], mode_name(mi->mode), x->pos[0]);
  int tty = !x->json && isatty(STDOUT_FILENO);
  int rc = CLI_EXIT_OK;
  for (long got = 0; !count || got < count;) {
    // with --count (scripts) a frame that never comes is an error; a person can press ^C
    int r = ptc_next_event(x->c, &m, count ? x->timeout_ms : -1);
    if (r != PTC_OK) {
      cli_error(x->cmd, "%s", ptc_error(x->c));
      rc = CLI_EXIT_FAIL;
      break;
    }
    Partita__V1__Event *ev = m->event;
    if (ev->kind_case == PARTITA__V1__EVENT__KIND_MODEL_EVENT) {
      fprintf(stderr, "partita watch: %s: %s\n",
              protobuf_c_enum_descriptor_get_value(&partita__v1__model_event__kind__descriptor,
                                                   ev->model_event->kind)
                  ? protobuf_c_enum_descriptor_get_value(
                        &partita__v1__model_event__kind__descriptor, ev->model_event->kind)
                        ->name
                  : "event",
              ev->model_event->message);
    } else if (ev->kind_case == PARTITA__V1__EVENT__KIND_FRAME) {
      if (x->json) {
        cli_json j;
        cli_json_init(&j, stdout);
        json_state(&j, ev->frame, mi->coordinates, mi->n_coordinates);
        cli_json_finish(&j);
      } else {
        if (tty)
          fputs("\033[H\033[2J", stdout);   // home and clear: a view refreshed in place
        text_state(stdout, ev->frame, mi->coordinates, mi->n_coordinates);
        if (!tty)
          fputc('\n', stdout);
      }
      fflush(stdout);
      got++;
    }
    ptc_free(m);
  }
  ptc_free(info);
  return rc;
}

// "A,B,C" into strings (in place). Returns the count, -1 if more than max.
static int split_list(char *s, char **out, int max) {
  int n = 0;
  for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
    if (n == max)
      return -1;
    out[n++] = tok;
  }
  return n;
}

static void json_matrix(cli_json *j, const char *key, const Partita__V1__Matrix *a) {
  cli_json_key(j, key);
  cli_json_begin_array(j);
  for (uint32_t r = 0; a && r < a->rows; r++) {
    cli_json_newline(j);
    cli_json_begin_array(j);
    for (uint32_t c = 0; c < a->cols && (size_t)r * a->cols + c < a->n_data; c++)
      cli_json_number(j, a->data[(size_t)r * a->cols + c]);
    cli_json_end_array(j);
  }
  cli_json_end_array(j);
}

// One eigenvalue object per line, as linearize prints them offline.
static void json_eigenvalues(cli_json *j, Partita__V1__Eigenvalue **e, size_t n) {
  cli_json_key(j, "eigenvalues");
  cli_json_begin_array(j);
  for (size_t i = 0; i < n; i++) {
    cli_json_newline(j);
    cli_json_begin_object(j);
    json_num(j, "re", e[i]->re);
    json_num(j, "im", e[i]->im);
    json_num(j, "freq_hz", e[i]->freq_hz);
    json_num(j, "damping_ratio", e[i]->damping_ratio);
    cli_json_end_object(j);
  }
  cli_json_end_array(j);
}

static void json_reactions(cli_json *j, Partita__V1__Reaction **r, size_t n) {
  cli_json_key(j, "reactions");
  cli_json_begin_object(j);
  for (size_t i = 0; i < n; i++) {
    cli_json_key(j, r[i]->joint);
    cli_json_begin_object(j);
    json_numbers(j, "force", r[i]->force, r[i]->n_force);
    json_numbers(j, "torque", r[i]->torque, r[i]->n_torque);
    cli_json_end_object(j);
  }
  cli_json_end_object(j);
}

static void text_reactions(Partita__V1__Reaction **r, size_t n) {
  for (size_t i = 0; i < n; i++) {
    printf("  %s:", r[i]->joint);
    if (r[i]->n_force == 3)
      printf(" force (%.6g, %.6g, %.6g)", r[i]->force[0], r[i]->force[1], r[i]->force[2]);
    if (r[i]->n_torque == 3)
      printf(" torque (%.6g, %.6g, %.6g)", r[i]->torque[0], r[i]->torque[1], r[i]->torque[2]);
    printf("\n");
  }
}

// A reply's NamedValue list as {"name": value, ...}.
static void json_named_values(cli_json *j, const char *key, Partita__V1__NamedValue **v,
                              size_t n) {
  cli_json_key(j, key);
  cli_json_begin_object(j);
  for (size_t i = 0; i < n; i++)
    json_num(j, v[i]->name, v[i]->value);
  cli_json_end_object(j);
}

// "  name: value" lines, then the reactions: the text shape of inverse and equilibrium.
static void text_named_reactions(Partita__V1__NamedValue **v, size_t n,
                                 Partita__V1__Reaction **r, size_t nr) {
  for (size_t i = 0; i < n; i++)
    printf("  %s: %.9g\n", v[i]->name, v[i]->value);
  printf("reactions:\n");
  text_reactions(r, nr);
}

// One NAME=VALUE of option `opt` into l (a repeated name keeps its last value).
static int add_assign(ctx *x, const char *opt, const char *text, assign_list *l) {
  char name[128];
  double v;
  if (cli_parse_assign(x->cmd, opt, text, name, sizeof(name), &v))
    return -1;
  int k = 0;
  while (k < l->n && strcmp(l->name[k], name) != 0)
    k++;
  if (k == MAXASSIGN) {
    cli_error(x->cmd, "%s: more than %d names", opt, MAXASSIGN);
    return -1;
  }
  memcpy(l->name[k], name, sizeof(name));
  l->val[k] = v;
  if (k == l->n)
    l->n++;
  return 0;
}

// The request's view of l (pointers into l, valid while l lives).
static Partita__V1__NamedValue **assigns(assign_list *l, size_t *n) {
  for (int i = 0; i < l->n; i++) {
    Partita__V1__NamedValue nv = PARTITA__V1__NAMED_VALUE__INIT;
    l->nv[i] = nv;
    l->nv[i].name = l->name[i];
    l->nv[i].value = l->val[i];
    l->pnv[i] = &l->nv[i];
  }
  *n = (size_t)l->n;
  return l->pnv;
}

// What an analysis on a loaded model cannot take: options of another command (refused as the
// offline command refuses them) and the MODEL-file options, which the daemon's copy of the
// model has no use for. Exit status 2 for all of them.
static int analysis_options(const ctx *x, unsigned allowed) {
  static const struct {
    unsigned bit;
    const char *opts;
  } names[] = {{OPT_AT, "--at"}, {OPT_ACC, "--acc"}, {OPT_INIT, "--init"},
               {OPT_INIT_RATE, "--init-rate"}, {OPT_STATES, "--states/--inputs/--outputs"},
               {OPT_APPLY, "--apply"}, {OPT_GRAVITY, "--gravity"}, {OPT_SET, "--set"},
               {OPT_EQ, "--max-iterations/--tolerance/--newton-only/--allow-unstable"}};
  for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
    if (x->given & names[k].bit & ~allowed) {
      cli_error(x->cmd, "%s: not an option of partita %s (see partita %s --help)",
                names[k].opts, x->cmd, x->cmd);
      return -1;
    }
  if (x->balance_inertia) {
    cli_error(x->cmd, "--balance-inertia is for a MODEL file: model '%s' is already loaded in "
              "the daemon (give --balance-inertia to partita load)", x->model);
    return -1;
  }
  if (x->no_joint_limits) {
    cli_error(x->cmd, "--no-joint-limits is for a MODEL file: model '%s' is already loaded in "
              "the daemon (give --no-joint-limits to partita load)", x->model);
    return -1;
  }
  if (x->floating_base) {
    cli_error(x->cmd, "--floating-base is for a MODEL file: model '%s' is already loaded in the "
              "daemon (give --floating-base to partita load)", x->model);
    return -1;
  }
  if (x->dense) {
    cli_error(x->cmd, "--dense is for a MODEL file: the daemon solves with the sparse LU "
              "(the same numbers)");
    return -1;
  }
  return 0;
}

// A reply that lacks its result: free it and say so.
static int no_result(ctx *x, pb_msg *m) {
  ptc_free(m);
  cli_error(x->cmd, "the server sent no result");
  return CLI_EXIT_FAIL;
}

// The model's name a reply carries; the one asked for when an older daemon leaves it empty.
static const char *reply_model(const ctx *x, const char *name) {
  return name && *name ? name : x->model;
}

// Couplers' efforts, held limits' reactions and the limit notes of an analysis reply (text),
// each section only when it has lines.
static void text_limits(Partita__V1__NamedValue **cpl, size_t ncpl,
                        Partita__V1__NamedValue **lim, size_t nlim, char **notes,
                        size_t nnotes) {
  if (ncpl > 0)
    printf("couplers (effort on the follower):\n");
  for (size_t i = 0; i < ncpl; i++)
    printf("  %-16s %.17g\n", cpl[i]->name, cpl[i]->value);
  if (nlim > 0)
    printf("limits held (reaction):\n");
  for (size_t i = 0; i < nlim; i++)
    printf("  %-16s %.17g\n", lim[i]->name, lim[i]->value);
  if (nnotes > 0)
    printf("notes:\n");
  for (size_t i = 0; i < nnotes; i++)
    printf("  %s\n", notes[i]);
}

static int cmd_inverse(ctx *x) {
  if (need_pos(x, 0, 0) ||
      analysis_options(x, OPT_AT | OPT_ACC | OPT_INIT | OPT_INIT_RATE | OPT_GRAVITY))
    return CLI_EXIT_USAGE;
  if (x->gravity && (x->acc.n > 0 || x->rate.n > 0)) {   // as the offline command says
    cli_error(x->cmd, "--gravity: every rate and acceleration is zero; it takes no %s",
              x->acc.n > 0 ? "--acc" : "--init-rate");
    return CLI_EXIT_USAGE;
  }
  pb_req rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__InverseDynamics id = PARTITA__V1__INVERSE_DYNAMICS__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_INVERSE_DYNAMICS;
  rq.inverse_dynamics = &id;
  id.model = (char *)x->model;
  if (x->at) {
    if (cli_parse_double(x->cmd, "--at", x->at, &id.time))
      return CLI_EXIT_USAGE;
    id.use_time = 1;
  }
  id.accelerations = assigns(&x->acc, &id.n_accelerations);
  id.coordinates = assigns(&x->init, &id.n_coordinates);
  id.rates = assigns(&x->rate, &id.n_rates);
  id.gravity = x->gravity;
  pb_msg *m;
  if (call(x, &rq, &m))
    return CLI_EXIT_FAIL;
  Partita__V1__InverseDynamicsReply *r = m->response->inverse_dynamics;
  if (!r)
    return no_result(x, m);
  if (x->json) {
    cli_json j;
    json_open(&j);   // the members and order of `partita inverse MODEL --json`
    json_str(&j, "model", reply_model(x, r->model));
    json_num(&j, "time", r->time);
    json_str(&j, "mode", r->mode && *r->mode ? r->mode
                                             : x->acc.n || x->gravity ? "torque_request"
                                                                      : "kinematic");
    json_named_values(&j, "efforts", r->efforts, r->n_efforts);
    json_named_values(&j, "coupler_efforts", r->coupler_efforts, r->n_coupler_efforts);
    json_reactions(&j, r->reactions, r->n_reactions);
    json_named_values(&j, "limit_reactions", r->limit_reactions, r->n_limit_reactions);
    if (r->n_limit_notes > 0)
      json_names(&j, "limit_notes", r->limit_notes, r->n_limit_notes);
    json_named_values(&j, "coordinates", r->coordinates, r->n_coordinates);
    json_named_values(&j, "rates", r->rates, r->n_rates);
    json_named_values(&j, "accelerations", r->accelerations, r->n_accelerations);
    json_close(&j);
  } else {
    printf("t = %.6f\nefforts:\n", r->time);
    text_named_reactions(r->efforts, r->n_efforts, r->reactions, r->n_reactions);
    text_limits(r->coupler_efforts, r->n_coupler_efforts, r->limit_reactions,
                r->n_limit_reactions, r->limit_notes, r->n_limit_notes);
  }
  ptc_free(m);
  return CLI_EXIT_OK;
}

static int cmd_linearize(ctx *x) {
  char *lists[3][MAXASSIGN], bufs[3][4096];
  int counts[3] = {0, 0, 0};
  const char *src[3] = {x->states, x->inputs, x->outputs};
  const char *opt[3] = {"--states", "--inputs", "--outputs"};
  if (need_pos(x, 0, 0) || analysis_options(x, OPT_STATES | OPT_INIT | OPT_INIT_RATE | OPT_SET))
    return CLI_EXIT_USAGE;
  for (int k = 0; k < 3; k++) {
    if (!src[k])
      continue;
    snprintf(bufs[k], sizeof(bufs[k]), "%s", src[k]);
    if ((counts[k] = split_list(bufs[k], lists[k], MAXASSIGN)) < 0) {
      cli_error(x->cmd, "%s: too many names", opt[k]);
      return CLI_EXIT_USAGE;
    }
  }
  pb_req rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__Linearize li = PARTITA__V1__LINEARIZE__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_LINEARIZE;
  rq.linearize = &li;
  li.model = (char *)x->model;
  li.n_states = (size_t)counts[0];
  li.states = lists[0];
  li.n_inputs = (size_t)counts[1];
  li.inputs = lists[1];
  li.n_outputs = (size_t)counts[2];
  li.outputs = lists[2];
  li.coordinates = assigns(&x->init, &li.n_coordinates);
  li.rates = assigns(&x->rate, &li.n_rates);
  li.input_values = assigns(&x->inputs_set, &li.n_input_values);
  pb_msg *m;
  if (call(x, &rq, &m))
    return CLI_EXIT_FAIL;
  Partita__V1__LinearizeReply *r = m->response->linearize;
  if (!r)
    return no_result(x, m);
  cli_json j;
  json_open(&j);   // the members and order of `partita linearize MODEL --json`
  json_str(&j, "model", reply_model(x, r->model));
  json_num(&j, "time", r->time);
  json_names(&j, "states", r->states, r->n_states);
  json_names(&j, "inputs", r->inputs, r->n_inputs);
  json_names(&j, "outputs", r->outputs, r->n_outputs);
  json_matrix(&j, "A", r->a);
  json_matrix(&j, "B", r->b);
  json_matrix(&j, "C", r->c);
  json_matrix(&j, "D", r->d);
  cli_json_key(&j, "mck");
  cli_json_begin_object(&j);
  json_matrix(&j, "M", r->mck ? r->mck->m : NULL);
  json_matrix(&j, "C", r->mck ? r->mck->c : NULL);
  json_matrix(&j, "K", r->mck ? r->mck->k : NULL);
  cli_json_end_object(&j);
  json_eigenvalues(&j, r->eigenvalues, r->n_eigenvalues);
  json_names(&j, "notes", r->notes, r->n_notes);
  json_int(&j, "order", r->order);
  // text output is the same document: matrices read best as rows anyway
  (void)x->json;
  json_close(&j);
  ptc_free(m);
  return CLI_EXIT_OK;
}

static int cmd_equilibrium(ctx *x) {
  if (need_pos(x, 0, 0) || analysis_options(x, OPT_APPLY | OPT_INIT | OPT_EQ))
    return CLI_EXIT_USAGE;
  pb_req rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__Equilibrium eq = PARTITA__V1__EQUILIBRIUM__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_EQUILIBRIUM;
  rq.equilibrium = &eq;
  eq.model = (char *)x->model;
  eq.apply = x->apply;
  eq.coordinates = assigns(&x->init, &eq.n_coordinates);
  eq.newton_only = x->newton_only;
  eq.allow_unstable = x->allow_unstable;
  // the ranges client/cli/equilibrium.c takes
  long n;
  if (x->max_iterations) {
    if (cli_parse_long(x->cmd, "--max-iterations", x->max_iterations, 1, 100000, &n))
      return CLI_EXIT_USAGE;
    eq.max_iterations = (uint32_t)n;
  }
  if (x->tolerance) {
    if (cli_parse_double(x->cmd, "--tolerance", x->tolerance, &eq.tolerance))
      return CLI_EXIT_USAGE;
    if (!(eq.tolerance > 0)) {
      cli_error(x->cmd, "--tolerance: %s is not positive", x->tolerance);
      return CLI_EXIT_USAGE;
    }
  }
  pb_msg *m;
  if (call(x, &rq, &m))
    return CLI_EXIT_FAIL;
  Partita__V1__EquilibriumReply *r = m->response->equilibrium;
  if (!r)
    return no_result(x, m);
  if (x->json) {
    cli_json j;
    json_open(&j);   // `partita equilibrium MODEL --json`'s members and order, then "applied"
    json_str(&j, "model", reply_model(x, r->model));
    json_num(&j, "time", r->time);
    json_named_values(&j, "coordinates", r->coordinates, r->n_coordinates);
    json_reactions(&j, r->reactions, r->n_reactions);
    if (r->n_limit_notes > 0)
      json_names(&j, "limit_notes", r->limit_notes, r->n_limit_notes);
    json_named_values(&j, "efforts", r->efforts, r->n_efforts);
    json_named_values(&j, "coupler_efforts", r->coupler_efforts, r->n_coupler_efforts);
    json_named_values(&j, "limit_reactions", r->limit_reactions, r->n_limit_reactions);
    json_int(&j, "iterations", r->iterations);
    json_int(&j, "damped_steps", r->damped_steps);
    cli_json_key(&j, "stable");
    cli_json_bool(&j, r->stable);
    json_num(&j, "residual", r->residual);
    cli_json_key(&j, "applied");
    cli_json_bool(&j, r->applied);
    json_close(&j);
  } else {
    printf("equilibrium after %d iterations, residual %.3g%s\n", r->iterations, r->residual,
           r->applied ? " (applied)" : "");
    text_named_reactions(r->coordinates, r->n_coordinates, r->reactions, r->n_reactions);
    text_limits(r->coupler_efforts, r->n_coupler_efforts, r->limit_reactions,
                r->n_limit_reactions, r->limit_notes, r->n_limit_notes);
  }
  ptc_free(m);
  return CLI_EXIT_OK;
}

// ---------------------------------------------------------------------------------------------

typedef struct {
  const char *name;
  int (*run)(ctx *x);
  int by_model;   // takes --model NAME instead of positional arguments
} remote_cmd;

static const remote_cmd table[] = {
    {"models", cmd_models, 0}, {"load", cmd_load, 0},       {"unload", cmd_unload, 0},
    {"state", cmd_state, 0},   {"watch", cmd_watch, 0},     {"set", cmd_set, 0},
    {"step", cmd_step, 0},     {"mode", cmd_mode, 0},       {"reset", cmd_state, 0},
    {"stats", cmd_stats, 0},   {"inverse", cmd_inverse, 1}, {"linearize", cmd_linearize, 1},
    {"equilibrium", cmd_equilibrium, 1},
};

static int parse_args(ctx *x, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    int r = 0;
    const char **slot = NULL;
    struct {
      const char *opt;
      const char **dst;
    } opts[] = {{"--connect", &x->connect}, {"--socket", &x->socket}, {"--name", &x->name},
                {"--mode", &x->mode},       {"--rate", &x->mode_rate}, {"--count", &x->count},
                {"--every", &x->every},     {"--at", &x->at},          {"--model", &x->model},
                {"--states", &x->states},   {"--inputs", &x->inputs},  {"--outputs", &x->outputs},
                {"--dt", &x->dt},           {"--integrator", &x->integrator},
                {"--timeout", &v},          {"--acc", &v},             {"--init", &v},
                {"--init-rate", &v},        {"--max-iterations", &x->max_iterations},
                {"--tolerance", &x->tolerance}, {"--set", &v}};
    for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]) && !slot; k++) {
      const char *val;
      r = cli_opt_value(x->cmd, argc, argv, &i, opts[k].opt, &val);
      if (r < 0)
        return -1;
      if (r > 0) {
        slot = opts[k].dst;
        *slot = val;
        if (!strcmp(opts[k].opt, "--timeout")) {
          double t;
          if (cli_parse_double(x->cmd, "--timeout", val, &t) || t <= 0 || t > 86400) {
            cli_error(x->cmd, "--timeout: seconds in (0, 86400]");
            return -1;
          }
          x->timeout_ms = (int)(t * 1000);
        } else if (!strcmp(opts[k].opt, "--acc")) {
          x->given |= OPT_ACC;
          if (add_assign(x, "--acc", val, &x->acc))
            return -1;
        } else if (!strcmp(opts[k].opt, "--set")) {
          x->given |= OPT_SET;
          if (add_assign(x, "--set", val, &x->inputs_set))
            return -1;
        } else if (!strcmp(opts[k].opt, "--init")) {
          x->given |= OPT_INIT;
          if (add_assign(x, "--init", val, &x->init))
            return -1;
        } else if (!strcmp(opts[k].opt, "--init-rate")) {
          x->given |= OPT_INIT_RATE;
          if (add_assign(x, "--init-rate", val, &x->rate))
            return -1;
        } else if (!strcmp(opts[k].opt, "--at")) {
          x->given |= OPT_AT;
        } else if (!strcmp(opts[k].opt, "--states") || !strcmp(opts[k].opt, "--inputs") ||
                   !strcmp(opts[k].opt, "--outputs")) {
          x->given |= OPT_STATES;
        } else if (!strcmp(opts[k].opt, "--max-iterations") ||
                   !strcmp(opts[k].opt, "--tolerance")) {
          x->given |= OPT_EQ;
        }
      }
    }
    if (slot)
      continue;
    if (cli_is_flag(a, "--json")) {
      x->json = 1;
    } else if (cli_is_flag(a, "--gravity")) {
      x->gravity = 1;
      x->given |= OPT_GRAVITY;
    } else if (cli_is_flag(a, "--apply")) {
      x->apply = 1;
      x->given |= OPT_APPLY;
    } else if (cli_is_flag(a, "--newton-only")) {
      x->newton_only = 1;
      x->given |= OPT_EQ;
    } else if (cli_is_flag(a, "--allow-unstable")) {
      x->allow_unstable = 1;
      x->given |= OPT_EQ;
    } else if (cli_is_flag(a, "--dense")) {
      x->dense = 1;
    } else if (cli_is_flag(a, "--floating-base")) {
      x->floating_base = 1;
    } else if (cli_is_flag(a, "--balance-inertia")) {
      x->balance_inertia = 1;
    } else if (cli_is_flag(a, "--no-joint-limits")) {
      x->no_joint_limits = 1;
    } else if (a[0] == '-' && a[1] == '-') {
      cli_error(x->cmd, "unknown option '%s' (see partita %s --help)", a, x->cmd);
      return -1;
    } else if (x->npos < MAXPOS) {
      x->pos[x->npos++] = a;
    } else {
      cli_error(x->cmd, "too many arguments");
      return -1;
    }
  }
  return 0;
}

int cli_remote_main(int argc, char **argv) {
  ctx x;
  memset(&x, 0, sizeof(x));
  x.cmd = argv[0];
  x.timeout_ms = CLI_REMOTE_TIMEOUT_MS;
  const remote_cmd *rc = NULL;
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
    if (strcmp(table[i].name, x.cmd) == 0)
      rc = &table[i];
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      if (cli_usage(x.cmd, stdout) != 0)
        fputs(usage, stdout);
      else
        fputs("\n", stdout), fputs(usage, stdout);
      return CLI_EXIT_OK;
    }
  if (!rc) {
    cli_error(x.cmd, "not a remote command");
    return CLI_EXIT_USAGE;
  }
  if (parse_args(&x, argc, argv))
    return CLI_EXIT_USAGE;
  if (!rc->by_model && (x.given || x.dense)) {
    cli_error(x.cmd, "an analysis option given to partita %s (see partita %s --help)", x.cmd,
              x.cmd);
    return CLI_EXIT_USAGE;
  }
  if (rc->by_model && !x.model) {
    cli_error(x.cmd, "a running daemon needs --model NAME (or give a MODEL file)");
    return CLI_EXIT_USAGE;
  }
  if (x.connect && x.socket) {
    cli_error(x.cmd, "give --connect or --socket, not both");
    return CLI_EXIT_USAGE;
  }
  if (connect_server(&x))
    return CLI_EXIT_FAIL;
  int code = rc->run(&x);
  ptc_close(x.c);
  return code;
}
