// analysis.c: `partita inverse`, `linearize` and `equilibrium`, on a MODEL file here or on a
// model loaded in partitad (--model NAME). One parser takes the same command line both ways
// and one protobuf request is built from it: partitad answers it, or the bridge runs it
// against the file's model (ptb_analysis.h) exactly as partitad would. The reply is printed
// by the same printer either way (print_analysis.h).
//
// inverse (issue 5): without --acc kinematic inverse dynamics at time --at (the motions must
// remove every degree of freedom); with --acc NAME=VALUE a torque request at the state given
// by --init/--init-rate (`all=VALUE`: every actuated coordinate, a named one overriding it);
// --gravity the holding efforts. linearize (issue 6): the plant at the initial state or the
// one --init/--init-rate give, with the --set inputs held there; --dense solves with LAPACK's
// dense LU (a MODEL file only). equilibrium (issue 5): the static equilibrium from the initial
// state or --init; --apply moves a daemon's live model there.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_cmds.h"
#include "args.h"
#include "link.h"
#include "model_load.h"
#include "print_analysis.h"
#include "ptb_analysis.h"

#define NAME_CAP 256    // a NAME of NAME=VALUE
#define MAX_LIST 4096   // names in one comma list

// The options an analysis may take beside MODEL/--model, --json, --init (one bit each).
enum {
  OPT_AT = 1u << 0,          // --at T
  OPT_ACC = 1u << 1,         // --acc NAME=VALUE
  OPT_GRAVITY = 1u << 2,     // --gravity
  OPT_INIT_RATE = 1u << 3,   // --init-rate NAME=VALUE
  OPT_LISTS = 1u << 4,       // --states, --inputs, --outputs
  OPT_SET = 1u << 5,         // --set ACTUATOR=VALUE
  OPT_DENSE = 1u << 6,       // --dense
  OPT_EQ = 1u << 7,          // --apply, --max-iterations, --tolerance, --newton-only,
                             // --allow-unstable
};

typedef enum { INVERSE, LINEARIZE, EQUILIBRIUM } kind;

typedef struct {
  kind kind;
  unsigned takes;          // OPT_* bits
  const char *missing;     // the usage "MODEL file missing" gives
} spec;

static const spec inverse_spec = {
    INVERSE, OPT_AT | OPT_ACC | OPT_GRAVITY | OPT_INIT_RATE,
    "partita inverse MODEL [--at T] [--acc NAME=VALUE ...] [--gravity] [--json]"};
static const spec linearize_spec = {
    LINEARIZE, OPT_INIT_RATE | OPT_LISTS | OPT_SET | OPT_DENSE,
    "partita linearize MODEL [--states A,B] [--inputs U,V] [--outputs Y,Z] [--init N=V ...] "
    "[--set A=V ...] [--json]"};
static const spec equilibrium_spec = {
    EQUILIBRIUM, OPT_EQ, "partita equilibrium MODEL [--init NAME=VALUE ...] [--json]"};

// The NAME=VALUE texts of one repeatable option, as given.
typedef struct {
  const char **text;
  int n;
} texts;

// "A,B , C" split in place: the names of --states, --inputs or --outputs.
typedef struct {
  char *text;
  char **item;
  size_t n;
} name_list;

typedef struct {
  const char *cmd;
  const spec *spec;
  const char *path;            // MODEL: here
  const char *model;           // --model NAME: in partitad
  cli_link link;               // --connect, --socket, --timeout
  const char *link_opt;        // the first of them given (refused with MODEL)
  int json;
  pt_load_options lopt;        // --floating-base, --balance-inertia (MODEL only)
  int no_joint_limits, dense;  // refused with --model (the first: with MODEL too)
  texts init, rate, acc, set;
  int has_at, gravity;
  double at;
  name_list lists[3];          // --states, --inputs, --outputs
  int apply, newton_only, allow_unstable;
  long max_iterations;
  double tolerance;
} options;

// ---------------------------------------------------------------------------------------------
// Parsing

// "A,B , C" -> ["A", "B", "C"]; empty names are refused.
static int split_list(const char *cmd, const char *opt, const char *value, name_list *l) {
  free(l->text);
  free(l->item);
  l->n = 0;
  l->text = strdup(value);
  size_t cap = 1;
  for (const char *p = value; *p; p++)
    cap += *p == ',';
  l->item = calloc(cap, sizeof(*l->item));
  if (!l->text || !l->item) {
    cli_error(cmd, "out of memory");
    return -1;
  }
  if (cap > MAX_LIST) {
    cli_error(cmd, "%s: more than %d names", opt, MAX_LIST);
    return -1;
  }
  char *s = l->text;
  for (size_t k = 0; k < cap; k++) {
    char *end = strchr(s, ',');
    if (end)
      *end = '\0';
    while (*s == ' ')
      s++;
    size_t len = strlen(s);
    while (len > 0 && s[len - 1] == ' ')
      s[--len] = '\0';
    if (len == 0) {
      cli_error(cmd, "%s: empty name in '%s'", opt, value);
      return -1;
    }
    l->item[l->n++] = s;
    if (!end)
      break;
    s = end + 1;
  }
  return 0;
}

// A flag the analysis takes (`bit` among its OPT_* bits): 1 and *on set, else 0.
static int flag(const options *o, const char *arg, unsigned bit, const char *name, int *on) {
  if (!(o->spec->takes & bit) || !cli_is_flag(arg, name))
    return 0;
  *on = 1;
  return 1;
}

// An option with a value the analysis takes: 1 (*val set), 0, or -1 after a message.
static int valued(options *o, int argc, char **argv, int *i, unsigned bit, const char *name,
                  const char **val) {
  if (!(o->spec->takes & bit))
    return 0;
  return cli_opt_value(o->cmd, argc, argv, i, name, val);
}

// The options every analysis takes. 1 taken, 0 not one of them, -1 after a message.
static int common_arg(options *o, int argc, char **argv, int *i) {
  const char *a = argv[*i], *v = NULL;
  int r;
  if ((r = cli_ground_plane(o->cmd, argc, argv, i, &o->lopt.ground_plane,
                            &o->lopt.ground_z))) {
    return r;
  } else if (cli_is_flag(a, "--json")) {
    o->json = 1;
  } else if (cli_is_flag(a, "--floating-base")) {
    o->lopt.floating_base = 1;
  } else if (cli_is_flag(a, "--balance-inertia")) {
    o->lopt.balance_inertia = 1;
  } else if (cli_is_flag(a, "--no-joint-limits")) {
    o->no_joint_limits = 1;
  } else if ((r = cli_opt_value(o->cmd, argc, argv, i, "--model", &v)) != 0) {
    o->model = v;
    return r;
  } else if ((r = cli_link_arg(o->cmd, argc, argv, i, &o->link)) != 0) {
    if (!o->link_opt)
      o->link_opt = a;
    return r;
  } else if ((r = cli_opt_value(o->cmd, argc, argv, i, "--init", &v)) != 0) {
    o->init.text[o->init.n++] = v;
    return r;
  } else {
    return 0;
  }
  return 1;
}

// The options of some analyses. 1 taken, 0 not one of them, -1 after a message.
static int own_arg(options *o, int argc, char **argv, int *i) {
  static const char *const list_opt[3] = {"--states", "--inputs", "--outputs"};
  const char *a = argv[*i], *v = NULL, *cmd = o->cmd;
  int r;
  if (flag(o, a, OPT_GRAVITY, "--gravity", &o->gravity) ||
      flag(o, a, OPT_DENSE, "--dense", &o->dense) ||
      flag(o, a, OPT_EQ, "--apply", &o->apply) ||
      flag(o, a, OPT_EQ, "--newton-only", &o->newton_only) ||
      flag(o, a, OPT_EQ, "--allow-unstable", &o->allow_unstable))
    return 1;
  if ((r = valued(o, argc, argv, i, OPT_INIT_RATE, "--init-rate", &v)) != 0) {
    o->rate.text[o->rate.n++] = v;
  } else if ((r = valued(o, argc, argv, i, OPT_ACC, "--acc", &v)) != 0) {
    o->acc.text[o->acc.n++] = v;
  } else if ((r = valued(o, argc, argv, i, OPT_SET, "--set", &v)) != 0) {
    o->set.text[o->set.n++] = v;
  } else if ((r = valued(o, argc, argv, i, OPT_AT, "--at", &v)) > 0) {
    o->has_at = 1;
    if (cli_parse_double(cmd, "--at", v, &o->at) < 0)
      return -1;
  } else if ((r = valued(o, argc, argv, i, OPT_EQ, "--max-iterations", &v)) > 0) {
    if (cli_parse_long(cmd, "--max-iterations", v, 1, 100000, &o->max_iterations) < 0)
      return -1;
  } else if ((r = valued(o, argc, argv, i, OPT_EQ, "--tolerance", &v)) > 0) {
    if (cli_parse_double(cmd, "--tolerance", v, &o->tolerance) < 0)
      return -1;
    if (!(o->tolerance > 0)) {
      cli_error(cmd, "--tolerance: %s is not positive", v);
      return -1;
    }
  } else {
    for (int k = 0; k < 3 && r == 0; k++)
      if ((r = valued(o, argc, argv, i, OPT_LISTS, list_opt[k], &v)) > 0 &&
          split_list(cmd, list_opt[k], v, &o->lists[k]) < 0)
        return -1;
  }
  return r;
}

// What a MODEL file here or a model in partitad cannot take, said once the command line is
// read: 0, or -1 after a message.
static int where_check(const options *o) {
  const char *cmd = o->cmd;
  if (!o->model) {
    const char *mine = o->link_opt ? o->link_opt : o->no_joint_limits ? "--no-joint-limits" : 0;
    if (mine) {
      cli_error(cmd, "unknown option '%s' (see partita %s --help)", mine, cmd);
      return -1;
    }
    if (o->apply) {
      cli_error(cmd, "--apply moves a daemon's live model: use it with --model NAME");
      return -1;
    }
    return 0;
  }
  if (o->path) {
    cli_error(cmd, "a MODEL file ('%s') and --model %s: give one of them", o->path, o->model);
    return -1;
  }
  static const char *const file_only[4] = {"--balance-inertia", "--no-joint-limits",
                                           "--floating-base", "--ground-plane"};
  const int given[4] = {o->lopt.balance_inertia, o->no_joint_limits, o->lopt.floating_base,
                        o->lopt.ground_plane};
  for (int k = 0; k < 4; k++)
    if (given[k]) {
      cli_error(cmd, "%s is for a MODEL file: model '%s' is already loaded in the daemon (give "
                "%s to partita load)", file_only[k], o->model, file_only[k]);
      return -1;
    }
  if (o->dense) {
    cli_error(cmd, "--dense is for a MODEL file: the daemon solves with the sparse LU (the same "
              "numbers)");
    return -1;
  }
  return cli_link_check(cmd, &o->link);
}

static int parse(options *o, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    int r = common_arg(o, argc, argv, &i);
    if (r == 0)
      r = own_arg(o, argc, argv, &i);
    if (r == 0 && cli_positional(o->cmd, argv[i], "MODEL file", &o->path) < 0)
      return -1;
    if (r < 0)
      return -1;
  }
  if (o->gravity && (o->acc.n > 0 || o->rate.n > 0)) {
    cli_error(o->cmd, "--gravity: every rate and acceleration is zero; it takes no %s",
              o->acc.n > 0 ? "--acc" : "--init-rate");
    return -1;
  }
  if (where_check(o) < 0)
    return -1;
  if (!o->model && !o->path) {
    cli_error(o->cmd, "MODEL file missing (usage: %s)", o->spec->missing);
    return -1;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The request

// NAME=VALUE texts as a request's NamedValue field; a name given twice keeps its place and
// its last value.
typedef struct {
  char (*name)[NAME_CAP];
  Partita__V1__NamedValue *nv;
  Partita__V1__NamedValue **p;
  size_t n;
} values;

typedef struct {
  Partita__V1__Request rq;
  Partita__V1__InverseDynamics inv;
  Partita__V1__Linearize lin;
  Partita__V1__Equilibrium eq;
  values init, rate, acc, set;
} request;

static void values_free(values *v) {
  free(v->name);
  free(v->nv);
  free(v->p);
  memset(v, 0, sizeof(*v));
}

// The texts of option `opt` into v. An exit code.
static int values_of(const char *cmd, const char *opt, const texts *t, values *v) {
  const size_t cap = (size_t)t->n + 1;
  v->name = calloc(cap, sizeof(*v->name));
  v->nv = calloc(cap, sizeof(*v->nv));
  v->p = calloc(cap, sizeof(*v->p));
  if (!v->name || !v->nv || !v->p) {
    cli_error(cmd, "%s", pt_strerror(PT_ENOMEM));
    return CLI_EXIT_FAIL;
  }
  for (int k = 0; k < t->n; k++) {
    char name[NAME_CAP];
    double value;
    if (cli_parse_assign(cmd, opt, t->text[k], name, sizeof(name), &value) < 0)
      return CLI_EXIT_USAGE;
    size_t j = 0;
    while (j < v->n && strcmp(v->name[j], name) != 0)
      j++;
    if (j == v->n) {
      Partita__V1__NamedValue init = PARTITA__V1__NAMED_VALUE__INIT;
      memcpy(v->name[j], name, sizeof(name));
      v->nv[j] = init;
      v->nv[j].name = v->name[j];
      v->p[j] = &v->nv[j];
      v->n++;
    }
    v->nv[j].value = value;
  }
  return CLI_EXIT_OK;
}

// The request of o for the model partitad or the file knows as `model`. The --acc, --set,
// --init, --init-rate texts are read here (their errors come after a MODEL file's warnings,
// as the model's names do). An exit code.
static int request_build(const options *o, const char *model, request *q) {
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__InverseDynamics inv = PARTITA__V1__INVERSE_DYNAMICS__INIT;
  Partita__V1__Linearize lin = PARTITA__V1__LINEARIZE__INIT;
  Partita__V1__Equilibrium eq = PARTITA__V1__EQUILIBRIUM__INIT;
  q->rq = rq;
  q->inv = inv;
  q->lin = lin;
  q->eq = eq;
  int code = values_of(o->cmd, "--acc", &o->acc, &q->acc);
  if (!code)
    code = values_of(o->cmd, "--init", &o->init, &q->init);
  if (!code)
    code = values_of(o->cmd, "--init-rate", &o->rate, &q->rate);
  if (!code)
    code = values_of(o->cmd, "--set", &o->set, &q->set);
  if (code)
    return code;
  switch (o->spec->kind) {
  case INVERSE:
    q->rq.op_case = PARTITA__V1__REQUEST__OP_INVERSE_DYNAMICS;
    q->rq.inverse_dynamics = &q->inv;
    q->inv.model = (char *)model;
    q->inv.use_time = o->has_at;
    q->inv.time = o->at;
    q->inv.gravity = o->gravity;
    q->inv.accelerations = q->acc.p, q->inv.n_accelerations = q->acc.n;
    q->inv.coordinates = q->init.p, q->inv.n_coordinates = q->init.n;
    q->inv.rates = q->rate.p, q->inv.n_rates = q->rate.n;
    break;
  case LINEARIZE:
    q->rq.op_case = PARTITA__V1__REQUEST__OP_LINEARIZE;
    q->rq.linearize = &q->lin;
    q->lin.model = (char *)model;
    q->lin.states = o->lists[0].item, q->lin.n_states = o->lists[0].n;
    q->lin.inputs = o->lists[1].item, q->lin.n_inputs = o->lists[1].n;
    q->lin.outputs = o->lists[2].item, q->lin.n_outputs = o->lists[2].n;
    q->lin.coordinates = q->init.p, q->lin.n_coordinates = q->init.n;
    q->lin.rates = q->rate.p, q->lin.n_rates = q->rate.n;
    q->lin.input_values = q->set.p, q->lin.n_input_values = q->set.n;
    break;
  case EQUILIBRIUM:
    q->rq.op_case = PARTITA__V1__REQUEST__OP_EQUILIBRIUM;
    q->rq.equilibrium = &q->eq;
    q->eq.model = (char *)model;
    q->eq.apply = o->apply;
    q->eq.coordinates = q->init.p, q->eq.n_coordinates = q->init.n;
    q->eq.newton_only = o->newton_only;
    q->eq.allow_unstable = o->allow_unstable;
    q->eq.max_iterations = (uint32_t)o->max_iterations;
    q->eq.tolerance = o->tolerance;
    break;
  }
  return CLI_EXIT_OK;
}

static void request_free(request *q) {
  values_free(&q->init);
  values_free(&q->rate);
  values_free(&q->acc);
  values_free(&q->set);
}

// Prints a reply (the payload of rq's kind). An exit code: writing the output may fail.
static int print_reply(const options *o, const ProtobufCMessage *reply,
                       const cli_analysis_view *v) {
  switch (o->spec->kind) {
  case INVERSE:
    cli_print_inverse((const Partita__V1__InverseDynamicsReply *)reply, v);
    break;
  case LINEARIZE:
    cli_print_linearize((const Partita__V1__LinearizeReply *)reply, v);
    break;
  case EQUILIBRIUM:
    cli_print_equilibrium((const Partita__V1__EquilibriumReply *)reply, v);
    break;
  }
  return cli_flush(o->cmd, CLI_EXIT_OK);
}

// ---------------------------------------------------------------------------------------------
// Here: the request run by the bridge against the MODEL file's model

// A refusal of the bridge, worded for the options the user typed. An exit code: usage for a
// bad request, failure for the engine's trouble (PT_EINVAL from the engine: a request the
// model cannot satisfy, usage too).
static int here_refused(const options *o, const pt_model *m, const ptb_error *e) {
  const char *cmd = o->cmd;
  static const struct {
    const char *field, *opt;
  } opts[] = {{"coordinates", "--init"}, {"rates", "--init-rate"}, {"accelerations", "--acc"}};
  const pt_error *en = &e->engine;
  const char *why = en->msg[0] ? en->msg : pt_strerror(e->code);
  switch (e->stage) {
  case PTB_AT_REQUEST:
    if (e->why == PTB_WHY_ALL) {
      cli_error(cmd, "--acc all=...: model '%s' has no actuated coordinate", pt_model_name(m));
      return CLI_EXIT_USAGE;
    }
    if (e->why == PTB_WHY_NAME && !strcmp(e->field, "input_values")) {
      cli_error(cmd, "--set: model '%s' has no actuator input '%s'", pt_model_name(m),
                e->name);
      return CLI_EXIT_USAGE;
    }
    for (size_t k = 0; k < 3 && e->why == PTB_WHY_NAME; k++)
      if (!strcmp(e->field, opts[k].field)) {
        fprintf(stderr, "partita %s: %s: model '%s' has no coordinate '%s' (coordinates: ", cmd,
                opts[k].opt, pt_model_name(m), e->name);
        cli_print_names(stderr, m, pt_model_ncoord(m), pt_coord_name);
        fputs(")\n", stderr);
        return CLI_EXIT_USAGE;
      }
    cli_error(cmd, "%s", e->msg);
    return e->code == PT_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
  case PTB_AT_TIME:
    cli_error(cmd, "--at %.17g: %s", o->at, why);
    return CLI_EXIT_FAIL;
  case PTB_AT_STATE:
    cli_error(cmd, "initial state: %s", why);
    return CLI_EXIT_FAIL;
  case PTB_AT_ENGINE:
    cli_error(cmd, "%s", why);
    return e->code == PT_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
  default:
    cli_error(cmd, "%s", e->msg);
    return CLI_EXIT_FAIL;
  }
}

// linearize --set: an input clipped to its actuator's limit is said (it is still held there).
static void warn_clipped(void *cmd, const char *input, double value, double limit) {
  fprintf(stderr, "partita %s: warning: --set %s=%.17g clipped to the actuator's limit %.17g\n",
          (const char *)cmd, input, value, limit);
}

// The request through the bridge on (m, d): *reply, or an exit code after a message.
static int here_run(const options *o, const pt_model *m, pt_data *d, const request *q,
                    ProtobufCMessage **reply) {
  ptb_opts po = {.unbounded = 1, .dense = o->dense, .clipped = warn_clipped,
                 .arg = (void *)o->cmd};
  ptb_error e;
  int rc = PT_OK;
  *reply = NULL;
  if (o->spec->kind == INVERSE) {
    Partita__V1__InverseDynamicsReply *r = NULL;
    rc = ptb_inverse(m, d, &q->inv, &po, &r, &e);
    *reply = r ? &r->base : NULL;
  } else if (o->spec->kind == LINEARIZE) {
    Partita__V1__LinearizeReply *r = NULL;
    pt_linearizer *lz = pt_linearizer_new(m);
    rc = lz ? ptb_linearize(lz, m, d, &q->lin, &po, &r, &e)
            : ptb_fail(&e, PT_ENOMEM, PTB_AT_MEMORY, "%s", pt_strerror(PT_ENOMEM));
    pt_linearizer_free(lz);
    *reply = r ? &r->base : NULL;
  } else {
    Partita__V1__EquilibriumReply *r = NULL;
    rc = ptb_equilibrium(m, d, &q->eq, &po, &r, &e);
    *reply = r ? &r->base : NULL;
  }
  return rc ? here_refused(o, m, &e) : CLI_EXIT_OK;
}

static int run_here(const options *o) {
  pt_model *m = NULL;
  pt_data *d = NULL;
  ProtobufCMessage *reply = NULL;
  request q = {0};
  int code = CLI_EXIT_FAIL;
  if (cli_model_load(o->cmd, o->path, &o->lopt, &m, NULL, NULL, NULL) < 0)
    goto done;
  if (!(d = pt_data_new(m))) {
    cli_error(o->cmd, "%s", pt_strerror(PT_ENOMEM));
    goto done;
  }
  if ((code = request_build(o, pt_model_name(m), &q)) != 0 ||
      (code = here_run(o, m, d, &q, &reply)) != 0)
    goto done;
  cli_analysis_view v = {.json = o->json};
  code = print_reply(o, reply, &v);
done:
  if (reply)
    protobuf_c_message_free_unpacked(reply, NULL);
  request_free(&q);
  pt_data_free(d);
  pt_model_free(m);
  return code;
}

// ---------------------------------------------------------------------------------------------
// In partitad: the request sent, the reply printed

// The payload of the reply for rq's kind; NULL when it has none.
static const ProtobufCMessage *payload(const options *o, const Partita__V1__Response *r) {
  switch (o->spec->kind) {
  case INVERSE:
    return r->inverse_dynamics ? &r->inverse_dynamics->base : NULL;
  case LINEARIZE:
    return r->linearize ? &r->linearize->base : NULL;
  case EQUILIBRIUM:
    return r->equilibrium ? &r->equilibrium->base : NULL;
  }
  return NULL;
}

static int run_daemon(const options *o) {
  request q = {0};
  int code = request_build(o, o->model, &q);
  ptc_client *c = NULL;
  Partita__V1__ServerMessage *m = NULL;
  if (code)
    goto done;
  code = CLI_EXIT_FAIL;
  if (!(c = cli_link_open(o->cmd, &o->link)) ||
      cli_link_call(o->cmd, c, &q.rq, &m, o->link.timeout_ms) < 0)
    goto done;
  const ProtobufCMessage *reply = payload(o, m->response);
  if (!reply) {
    cli_error(o->cmd, "the server sent no result");
    goto done;
  }
  cli_analysis_view v = {.json = o->json, .model = o->model, .daemon = 1,
                         .mode = o->acc.n || o->gravity ? "torque_request" : "kinematic"};
  code = print_reply(o, reply, &v);
done:
  if (m)
    ptc_free(m);
  if (c)
    ptc_close(c);
  request_free(&q);
  return code;
}

// ---------------------------------------------------------------------------------------------

static int analysis_main(const spec *s, const cli_command *self, int argc, char **argv) {
  options o;
  memset(&o, 0, sizeof(o));
  o.cmd = self->name;
  o.spec = s;
  cli_link_init(&o.link);
  // every argument could be one NAME=VALUE text; +1 keeps calloc away from a zero size
  texts *lists[4] = {&o.init, &o.rate, &o.acc, &o.set};
  int code = CLI_EXIT_OK;
  for (int k = 0; k < 4; k++)
    if (!(lists[k]->text = calloc((size_t)argc + 1, sizeof(char *))))
      code = CLI_EXIT_FAIL;
  if (code)
    cli_error(o.cmd, "%s", pt_strerror(PT_ENOMEM));
  else if (parse(&o, argc, argv) < 0)
    code = CLI_EXIT_USAGE;
  else
    code = o.model ? run_daemon(&o) : run_here(&o);
  for (int k = 0; k < 4; k++)
    free(lists[k]->text);
  for (int k = 0; k < 3; k++) {
    free(o.lists[k].text);
    free(o.lists[k].item);
  }
  return code;
}

int cli_inverse_main(const cli_command *self, int argc, char **argv) {
  return analysis_main(&inverse_spec, self, argc, argv);
}

int cli_linearize_main(const cli_command *self, int argc, char **argv) {
  return analysis_main(&linearize_spec, self, argc, argv);
}

int cli_equilibrium_main(const cli_command *self, int argc, char **argv) {
  return analysis_main(&equilibrium_spec, self, argc, argv);
}
