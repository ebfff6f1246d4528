// daemon_cmds.c: the commands of `partita` that a running partitad answers: models, load,
// unload, state, reset, watch, set, step, mode, stats. Each reads its arguments, sends one
// request (watch: then reads frames) and prints the reply with its printer (print_daemon.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "daemon_cmds.h"
#include "link.h"
#include "print_daemon.h"

typedef Partita__V1__ServerMessage pb_msg;
typedef Partita__V1__Request pb_req;

#define MAXPOS 64

// A daemon command's arguments and its connection.
typedef struct {
  const char *cmd;
  cli_link link;
  const char *name, *mode, *mode_rate, *count, *every, *dt, *integrator;
  int json, floating_base, balance_inertia, no_joint_limits;
  int ground_plane;   // --ground-plane Z
  double ground_z;
  const char *pos[MAXPOS];
  int npos;
  ptc_client *c;
} ctx;

// ---------------------------------------------------------------------------------------------
// Requests.

static int call(ctx *x, pb_req *rq, pb_msg **out) {
  return cli_link_call(x->cmd, x->c, rq, out, x->link.timeout_ms);
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
  g.fields = PARTITA__V1__FIELD__FIELD_DEFAULT | PARTITA__V1__FIELD__FIELD_CONTROLS;
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

static int need_pos(ctx *x, int min, int max) {
  if (x->npos < min || x->npos > max) {
    cli_error(x->cmd, "expected %d%s argument%s (see partita %s --help)", min,
              max > min ? " or more" : "", min == 1 && max == 1 ? "" : "s", x->cmd);
    return -1;
  }
  return 0;
}

// A reply that carries a state (state, reset, step); frees it.
static int state_reply(ctx *x, pb_msg *m) {
  const Partita__V1__StateFrame *f = m->response->state;
  int rc = CLI_EXIT_OK;
  if (f) {
    cli_print_state(f, f->coordinate_names, f->n_coordinate_names, x->json);
  } else {
    cli_error(x->cmd, "the server sent no state");
    rc = CLI_EXIT_FAIL;
  }
  ptc_free(m);
  return rc;
}

// A reply with nothing to show but success (unload, set); frees it.
static int ok_reply(ctx *x, pb_msg *m, const char *what) {
  ptc_free(m);
  cli_print_ok(what, x->json);
  return CLI_EXIT_OK;
}

static int parse_mode(ctx *x, const char *s) {
  int mode = cli_mode_value(s);
  if (mode < 0)
    cli_error(x->cmd, "unknown mode '%s' (paused, realtime, free or lockstep)", s);
  return mode;
}

// ---------------------------------------------------------------------------------------------
// Commands.

static int cmd_models(ctx *x) {
  pb_req rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__ListModels lm = PARTITA__V1__LIST_MODELS__INIT;
  pb_msg *m;
  rq.op_case = PARTITA__V1__REQUEST__OP_LIST_MODELS;
  rq.list_models = &lm;
  if (call(x, &rq, &m))
    return CLI_EXIT_FAIL;
  cli_print_model_list(m->response->model_list, x->json);
  ptc_free(m);
  return CLI_EXIT_OK;
}

static char *read_file(ctx *x, const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    cli_error(x->cmd, "%s: cannot open", path);
    return NULL;
  }
  char *buf = malloc(CLI_LINK_MAX_FILE + 1);
  size_t n = buf ? fread(buf, 1, CLI_LINK_MAX_FILE + 1, f) : 0;
  fclose(f);
  if (!buf || n > CLI_LINK_MAX_FILE) {
    cli_error(x->cmd, "%s: larger than %d bytes", path, CLI_LINK_MAX_FILE);
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
  lm.ground_plane = x->ground_plane;
  lm.ground_z = x->ground_z;
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
  if (mi) {
    cli_print_model_info(mi, x->json);
    if (!x->json && mi->warnings[0])
      fprintf(stderr, "%s", mi->warnings);
  }
  ptc_free(m);
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
  s.fields = PARTITA__V1__FIELD__FIELD_DEFAULT | PARTITA__V1__FIELD__FIELD_CONTROLS;
  // a long lockstep run takes its time: allow about 1 ms per step on top of the timeout
  int saved = x->link.timeout_ms;
  x->link.timeout_ms += n > 2000000 ? 2000000 : (int)n;
  pb_msg *m;
  int rc = call(x, &rq, &m);
  x->link.timeout_ms = saved;
  return rc ? CLI_EXIT_FAIL : state_reply(x, m);
}

// The NAME=VALUE arguments after the model (x->pos[1..]) as NamedValues (what: the form, for
// messages): *pv points into *names and *vals; all three freed by the caller. Exit code.
static int named_args(ctx *x, const char *what, char (**names)[128],
                      Partita__V1__NamedValue **vals, Partita__V1__NamedValue ***pv) {
  const int n = x->npos - 1;
  *names = calloc((size_t)n, 128);
  *vals = calloc((size_t)n, sizeof(**vals));
  *pv = calloc((size_t)n, sizeof(**pv));
  if (!*names || !*vals || !*pv)
    return CLI_EXIT_FAIL;
  for (int i = 0; i < n; i++) {
    Partita__V1__NamedValue nv = PARTITA__V1__NAMED_VALUE__INIT;
    (*vals)[i] = nv;
    if (cli_parse_assign(x->cmd, what, x->pos[i + 1], (*names)[i], 128, &(*vals)[i].value))
      return CLI_EXIT_USAGE;
    (*vals)[i].name = (*names)[i];
    (*pv)[i] = &(*vals)[i];
  }
  return CLI_EXIT_OK;
}

static int cmd_set(ctx *x) {
  if (x->npos < 2) {
    cli_error(x->cmd, "expected a model and INPUT=VALUE ... (see partita set --help)");
    return CLI_EXIT_USAGE;
  }
  char (*names)[128] = NULL;
  Partita__V1__NamedValue *vals = NULL, **pv = NULL;
  int rc = named_args(x, "INPUT=VALUE", &names, &vals, &pv);
  if (rc == CLI_EXIT_OK) {
    pb_req rq = PARTITA__V1__REQUEST__INIT;
    Partita__V1__SetInputs si = PARTITA__V1__SET_INPUTS__INIT;
    rq.op_case = PARTITA__V1__REQUEST__OP_SET_INPUTS;
    rq.set_inputs = &si;
    si.model = (char *)x->pos[0];
    si.n_by_name = (size_t)(x->npos - 1);
    si.by_name = pv;
    pb_msg *m;
    rc = call(x, &rq, &m) ? CLI_EXIT_FAIL : ok_reply(x, m, "ok");
  }
  free(names);
  free(vals);
  free(pv);
  return rc;
}

// `tune N PARAM=VALUE ...`: SetParameters (docs/controls.md), then each parameter named with
// the value now in effect (the reply's parameters, by ModelInfo.parameters' order).
static int cmd_tune(ctx *x) {
  if (x->npos < 2) {
    cli_error(x->cmd, "expected a model and PARAM=VALUE ... (see partita tune --help)");
    return CLI_EXIT_USAGE;
  }
  int n = x->npos - 1;
  char (*names)[128] = NULL;
  Partita__V1__NamedValue *vals = NULL, **pv = NULL;
  pb_msg *m = NULL, *mi = NULL;
  int rc = named_args(x, "PARAM=VALUE", &names, &vals, &pv);
  if (rc != CLI_EXIT_OK)
    goto out;
  pb_req rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__SetParameters sp = PARTITA__V1__SET_PARAMETERS__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_SET_PARAMETERS;
  rq.set_parameters = &sp;
  sp.model = (char *)x->pos[0];
  sp.n_values = (size_t)n;
  sp.values = pv;
  rc = CLI_EXIT_FAIL;
  if (call(x, &rq, &m) || call_model(x, PARTITA__V1__REQUEST__OP_GET_MODEL_INFO, x->pos[0], &mi))
    goto out;
  const Partita__V1__StateFrame *f = m->response->state;
  const Partita__V1__ModelInfo *info = mi->response->model_info;
  if (!f || !info) {
    cli_error(x->cmd, "the server sent no state or model info");
    goto out;
  }
  cli_print_parameters(info, f, x->json);
  rc = CLI_EXIT_OK;
out:
  if (m)
    ptc_free(m);
  if (mi)
    ptc_free(mi);
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
  cli_print_mode(x->pos[0], m->response->model_info, mode, rate, x->json);
  ptc_free(m);
  return CLI_EXIT_OK;
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
  cli_print_stats(m->response->stats, x->json);
  ptc_free(m);
  return CLI_EXIT_OK;
}

// watch: subscribes, then prints frames as they come (model events go to stderr).
static int watch_frames(ctx *x, const Partita__V1__ModelInfo *mi, long count) {
  int tty = !x->json && isatty(STDOUT_FILENO);
  for (long got = 0; !count || got < count;) {
    pb_msg *m;
    // with --count (scripts) a frame that never comes is an error; a person can press ^C
    if (ptc_next_event(x->c, &m, count ? x->link.timeout_ms : -1) != PTC_OK) {
      cli_error(x->cmd, "%s", ptc_error(x->c));
      return CLI_EXIT_FAIL;
    }
    Partita__V1__Event *ev = m->event;
    if (ev->kind_case == PARTITA__V1__EVENT__KIND_MODEL_EVENT) {
      const ProtobufCEnumValue *k = protobuf_c_enum_descriptor_get_value(
          &partita__v1__model_event__kind__descriptor, ev->model_event->kind);
      fprintf(stderr, "partita watch: %s: %s\n", k ? k->name : "event",
              ev->model_event->message);
    } else if (ev->kind_case == PARTITA__V1__EVENT__KIND_FRAME) {
      if (tty)
        fputs("\033[H\033[2J", stdout);   // home and clear: a view refreshed in place
      cli_print_state(ev->frame, mi->coordinates, mi->n_coordinates, x->json);
      if (!x->json && !tty)
        fputc('\n', stdout);
      fflush(stdout);
      got++;
    }
    ptc_free(m);
  }
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
            "%s realtime, or step it)\n", x->pos[0], cli_mode_name(mi->mode), x->pos[0]);
  int rc = watch_frames(x, mi, count);
  ptc_free(info);
  return rc;
}

// ---------------------------------------------------------------------------------------------

static int parse_args(ctx *x, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    struct {
      const char *opt;
      const char **dst;
    } opts[] = {{"--name", &x->name},   {"--mode", &x->mode},   {"--rate", &x->mode_rate},
                {"--count", &x->count}, {"--every", &x->every}, {"--dt", &x->dt},
                {"--integrator", &x->integrator}};
    int r = cli_link_arg(x->cmd, argc, argv, &i, &x->link);
    for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]) && r == 0; k++)
      if ((r = cli_opt_value(x->cmd, argc, argv, &i, opts[k].opt, &v)) > 0)
        *opts[k].dst = v;
    if (r < 0)
      return -1;
    if (r == 0)
      r = cli_ground_plane(x->cmd, argc, argv, &i, &x->ground_plane, &x->ground_z);
    if (r < 0)
      return -1;
    if (r > 0)
      continue;
    if (cli_is_flag(a, "--json")) {
      x->json = 1;
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

// Reads the arguments, connects and runs one command.
static int daemon_main(const cli_command *self, int argc, char **argv, int (*run)(ctx *x)) {
  ctx x;
  memset(&x, 0, sizeof(x));
  x.cmd = self->name;
  cli_link_init(&x.link);
  if (parse_args(&x, argc, argv))
    return CLI_EXIT_USAGE;
  if (cli_link_check(x.cmd, &x.link) < 0)
    return CLI_EXIT_USAGE;
  if (!(x.c = cli_link_open(x.cmd, &x.link)))
    return CLI_EXIT_FAIL;
  int code = run(&x);
  ptc_close(x.c);
  return code;
}

int cli_models_main(const cli_command *self, int argc, char **argv) {
  return daemon_main(self, argc, argv, cmd_models);
}

int cli_load_main(const cli_command *self, int argc, char **argv) {
  return daemon_main(self, argc, argv, cmd_load);
}

int cli_unload_main(const cli_command *self, int argc, char **argv) {
  return daemon_main(self, argc, argv, cmd_unload);
}

int cli_state_main(const cli_command *self, int argc, char **argv) {
  return daemon_main(self, argc, argv, cmd_state);
}

int cli_watch_main(const cli_command *self, int argc, char **argv) {
  return daemon_main(self, argc, argv, cmd_watch);
}

int cli_set_main(const cli_command *self, int argc, char **argv) {
  return daemon_main(self, argc, argv, cmd_set);
}

int cli_tune_main(const cli_command *self, int argc, char **argv) {
  return daemon_main(self, argc, argv, cmd_tune);
}

int cli_step_main(const cli_command *self, int argc, char **argv) {
  return daemon_main(self, argc, argv, cmd_step);
}

int cli_mode_main(const cli_command *self, int argc, char **argv) {
  return daemon_main(self, argc, argv, cmd_mode);
}

int cli_stats_main(const cli_command *self, int argc, char **argv) {
  return daemon_main(self, argc, argv, cmd_stats);
}
