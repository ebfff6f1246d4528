// dispatch.c: the request table and one handler per operation (dispatch.h). Requests that
// touch a model's data become commands to its thread (reply.c answers them on completion);
// analyses go to analyses.c, loads to load.c, inputs to inputs.c, subscriptions to subs.c,
// recordings to recordings.c, statistics to stats.c.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/analyses.h"
#include "api/dispatch.h"
#include "api/inputs.h"
#include "api/load.h"
#include "api/models.h"
#include "api/recordings.h"
#include "api/reply.h"
#include "api/stats.h"
#include "api/subs.h"
#include "base/log.h"
#include "base/text.h"
#include "ptb_assign.h"
#include "ptb_fields.h"

static int do_hello(conn *c, uint64_t id, const Partita__V1__Hello *rq) {
  server *srv = server_of(c);
  if (rq->protocol_version > PD_PROTOCOL_VERSION)
    return reply_status(c, id, STATUS(FAILED_PRECONDITION),
                        "protocol version %u not supported (server speaks %d)",
                        rq->protocol_version, PD_PROTOCOL_VERSION);
  if (srv->cfg.auth_token[0]) {
    if (!text_equal_secret(rq->token, srv->cfg.auth_token)) {
      // one try per connection: counted, logged, and the connection closed after the answer
      srv->auth_failures++;
      log_warn("client %s: Hello with a wrong or missing token (%llu failures so far)",
               c->peer, (unsigned long long)srv->auth_failures);
      c->authed = 0;
      // answered after limits.auth_delay_ms by the server's tick, which then closes it;
      // meanwhile nothing more is read from it
      c->auth_answer_id = id;
      c->auth_answer_ms = net_now_ms() + (uint64_t)srv->cfg.limits.auth_delay_ms;
      c->auth_pending = 1;
      if (c->reading && !c->detached)
        uv_read_stop(&c->h.stream);
      c->reading = 0;
      return 0;
    }
    c->authed = 1;
    c->dec.max_frame = srv->cfg.limits.max_frame_bytes;
  }
  Partita__V1__HelloReply h = PARTITA__V1__HELLO_REPLY__INIT;
  pb_response r = PARTITA__V1__RESPONSE__INIT;
  h.protocol_version = PD_PROTOCOL_VERSION;
  h.server_version = PT_VERSION;
  h.server_name = "partitad";
  h.viewer_url = (char *)srv->viewer_url;
  r.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_HELLO;
  r.hello = &h;
  reply(c, id, &r);
  return 0;
}

static int do_set_inputs(conn *c, uint64_t id, sim *s, const Partita__V1__SetInputs *rq) {
  if (inputs_queue(c, id, s, rq->by_name, rq->n_by_name, rq->by_index, rq->n_by_index))
    return -1;
  reply_status(c, id, STATUS(OK), "%s", "");
  return 0;
}

static int do_subscribe(conn *c, uint64_t id, sim *s, const Partita__V1__Subscribe *rq) {
  char err[256];
  sub *sb;
  int code = subs_add(c, s, rq, &sb, err, sizeof(err));
  if (code != STATUS(OK))
    return reply_status(c, id, code, "%s", err);
  Partita__V1__SubscribeReply sr = PARTITA__V1__SUBSCRIBE_REPLY__INIT;
  pb_response r = PARTITA__V1__RESPONSE__INIT;
  sr.subscription = sb->id;
  sr.every_k = sb->every_k;
  sr.fields = sb->fields;
  r.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_SUBSCRIBE;
  r.subscribe = &sr;
  reply(c, id, &r);
  return 0;
}

static int check_fields(uint32_t *f) {
  if (*f == 0)
    *f = PTB_FIELD_DEFAULT;
  return (*f & ~PTB_FIELD_ALL) == 0;
}

// The model a request names: every operation on a model has a string field `model`, found
// through protobuf-c's descriptors rather than one case per operation.
static const char *model_of(const pb_request *q) {
  const ProtobufCFieldDescriptor *op =
      protobuf_c_message_descriptor_get_field(&partita__v1__request__descriptor,
                                              (unsigned)q->op_case);
  if (!op || op->type != PROTOBUF_C_TYPE_MESSAGE)
    return NULL;
  const ProtobufCMessage *msg = *(ProtobufCMessage *const *)((const char *)q + op->offset);
  const ProtobufCFieldDescriptor *f =
      msg ? protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, "model") : NULL;
  if (!f || f->type != PROTOBUF_C_TYPE_STRING)
    return NULL;
  return *(char *const *)((const char *)msg + f->offset);
}

// Queues cmd for model s on behalf of request q (answered by the command's completion); a
// NULL cmd is an allocation that failed.
static void queue_cmd(conn *c, const pb_request *q, sim *s, sim_cmd *cmd) {
  if (cmd)
    submit(c, q->id, (int)q->op_case, s, cmd);
  else
    reply_status(c, q->id, STATUS(RESOURCE_EXHAUSTED), "out of memory");
}

// ---------------------------------------------------------------------------------------------
// The handlers: one per operation, all of one shape. `s` is the model the request names, when
// its table entry says it needs one (looked up, and refused when missing, before the call).

static void h_not_set(conn *c, pb_request *q, sim *s) {
  (void)s;
  reply_status(c, q->id, STATUS(INVALID_ARGUMENT), "request without an operation");
}

static void h_hello(conn *c, pb_request *q, sim *s) {
  (void)s;
  do_hello(c, q->id, q->hello);
}

static void h_load(conn *c, pb_request *q, sim *s) {
  (void)s;
  load_request(c, q->id, q->load_model);
}

static void h_unload(conn *c, pb_request *q, sim *s) {
  if (!models_unload(server_of(c), s, c, q->id))
    reply_status(c, q->id, STATUS(OK), "%s", "");
}

static void h_list(conn *c, pb_request *q, sim *s) {
  (void)s;
  registry_list(c, q->id);
}

static void h_info(conn *c, pb_request *q, sim *s) { reply_info(c, q->id, s, STATUS(OK), ""); }

static void h_set_mode(conn *c, pb_request *q, sim *s) {
  const Partita__V1__SetMode *rq = q->set_mode;
  char err[256];
  if (rq->mode < PARTITA__V1__MODE__PAUSED || rq->mode > PARTITA__V1__MODE__LOCKSTEP) {
    reply_status(c, q->id, STATUS(INVALID_ARGUMENT), "SetMode: mode must be PAUSED, REALTIME, "
                 "FREE_RUN or LOCKSTEP");
    return;
  }
  // rate 0 keeps the model's rate; whatever rate real time will run at must give
  // computable deadlines (pace.h)
  double rate = rq->rate != 0 ? rq->rate : atomic_load(&s->pub_rate);
  if ((rq->rate != 0 || rq->mode == PARTITA__V1__MODE__REALTIME) &&
      pace_check(pt_model_dt(s->m), rate, err, sizeof(err))) {
    reply_status(c, q->id, STATUS(INVALID_ARGUMENT), "SetMode: %s", err);
    return;
  }
  inputs_new_session(s);   // a new mode, a new UDP input session
  sim_cmd *cmd = sim_cmd_new(s, CMD_SET_MODE);
  if (cmd) {
    cmd->mode = (int)rq->mode;
    cmd->rate = rq->rate;
  }
  queue_cmd(c, q, s, cmd);
}

static void h_step(conn *c, pb_request *q, sim *s) {
  long long max = server_of(c)->cfg.limits.max_step_count;
  if (q->step->n > max) {
    reply_status(c, q->id, STATUS(INVALID_ARGUMENT), "Step: n over the limit of %lld", max);
    return;
  }
  if (!check_fields(&q->step->fields)) {
    reply_status(c, q->id, STATUS(INVALID_ARGUMENT), "Step: unknown field bits");
    return;
  }
  sim_cmd *cmd = sim_cmd_new(s, CMD_STEP);
  if (cmd) {
    cmd->n = q->step->n ? q->step->n : 1;
    cmd->fields = q->step->fields;
  }
  queue_cmd(c, q, s, cmd);
}

static void h_step_with_inputs(conn *c, pb_request *q, sim *s) {
  Partita__V1__StepWithInputs *rq = q->step_with_inputs;
  long long max = server_of(c)->cfg.limits.max_step_count;
  if (rq->n > max || !check_fields(&rq->fields)) {
    reply_status(c, q->id, STATUS(INVALID_ARGUMENT), "StepWithInputs: n over the limit of "
                 "%lld or unknown field bits", max);
    return;
  }
  int mode = atomic_load(&s->pub_mode);
  if (mode != MODE(LOCKSTEP) && mode != MODE(PAUSED)) {
    reply_status(c, q->id, STATUS(FAILED_PRECONDITION), "StepWithInputs needs lockstep or "
                 "paused mode");
    return;
  }
  sim_cmd *cmd = sim_cmd_new(s, CMD_STEP);
  if (!cmd) {
    queue_cmd(c, q, s, NULL);
    return;
  }
  // the inputs are queued before the Step, so they apply from its first step exactly as
  // SetInputs followed by Step
  if (inputs_queue(c, q->id, s, rq->by_name, rq->n_by_name, rq->by_index, rq->n_by_index)) {
    sim_cmd_free(cmd);
    return;
  }
  cmd->n = rq->n ? rq->n : 1;
  cmd->fields = rq->fields;
  queue_cmd(c, q, s, cmd);
}

static void h_reset(conn *c, pb_request *q, sim *s) {
  inputs_new_session(s);
  queue_cmd(c, q, s, sim_cmd_new(s, CMD_RESET));
}

// SetState's coordinates, rates or control states, SetParameters' values (`field`, names of
// table t) by name, through the bridge; a refusal is answered in SetState's own words. 0, or
// -1 answered.
static int named_assigns(conn *c, uint64_t id, sim *s, Partita__V1__NamedValue **v, size_t n,
                         const char *field, const ptb_name_table *t, pt_assign **out, int *nout) {
  ptb_error e;
  ptb_error_clear(&e);
  if (ptb_named_assigns(s->m, v, n, field, t, NULL, out, nout, &e) == PT_OK)
    return 0;
  if (e.why == PTB_WHY_NAME)
    reply_status(c, id, STATUS(INVALID_ARGUMENT), "model %s has no %s '%.100s'", s->name,
                 t->what, e.name);
  else if (e.why == PTB_WHY_VALUE)
    reply_status(c, id, STATUS(INVALID_ARGUMENT),
                 "%s '%.100s': value %g is not finite or beyond +-%g", t->what, e.name, e.value,
                 PTB_MAX_ABS_STATE);
  else
    reply_status(c, id, STATUS(INVALID_ARGUMENT), "%s", e.msg);
  return -1;
}

static void h_set_state(conn *c, pb_request *q, sim *s) {
  pt_assign *pos = NULL, *vel = NULL, *ctl = NULL;
  int npos, nvel, nctl;
  const Partita__V1__SetState *rq = q->set_state;
  if (named_assigns(c, q->id, s, rq->coordinates, rq->n_coordinates, "coordinates",
                    &ptb_coordinates, &pos, &npos) ||
      named_assigns(c, q->id, s, rq->rates, rq->n_rates, "rates", &ptb_coordinates, &vel,
                    &nvel) ||
      named_assigns(c, q->id, s, rq->control_states, rq->n_control_states, "control_states",
                    &ptb_control_states, &ctl, &nctl)) {
    free(pos);
    free(vel);
    return;
  }
  sim_cmd *cmd = sim_cmd_new(s, CMD_SET_STATE);
  if (cmd) {
    cmd->pos = pos;
    cmd->npos = npos;
    cmd->vel = vel;
    cmd->nvel = nvel;
    cmd->ctl = ctl;
    cmd->nctl = nctl;
  } else {
    free(pos);
    free(vel);
    free(ctl);
  }
  queue_cmd(c, q, s, cmd);
}

// SetParameters: names checked here, values against the model on its thread, between two
// steps; the answer is the state after, with the controls (the parameters as now tuned).
static void h_set_parameters(conn *c, pb_request *q, sim *s) {
  const Partita__V1__SetParameters *rq = q->set_parameters;
  pt_assign *par;
  int npar;
  if (rq->n_values && !pt_model_nparam(s->m)) {
    reply_status(c, q->id, STATUS(INVALID_ARGUMENT),
                 "model %s has no tunable control elements (no parameter '%.100s')", s->name,
                 rq->values[0]->name);
    return;
  }
  if (named_assigns(c, q->id, s, rq->values, rq->n_values, "values", &ptb_parameters, &par,
                    &npar))
    return;
  sim_cmd *cmd = sim_cmd_new(s, CMD_SET_PARAMS);
  if (cmd) {
    cmd->pos = par;
    cmd->npos = npar;
    cmd->fields = PTB_FIELD_DEFAULT | PTB_FIELD_CONTROLS;
  } else {
    free(par);
  }
  queue_cmd(c, q, s, cmd);
}

static void h_set_inputs(conn *c, pb_request *q, sim *s) {
  do_set_inputs(c, q->id, s, q->set_inputs);
}

static void h_get_state(conn *c, pb_request *q, sim *s) {
  if (!check_fields(&q->get_state->fields)) {
    reply_status(c, q->id, STATUS(INVALID_ARGUMENT), "GetState: unknown field bits");
    return;
  }
  // A model that steps on its own (real time, free run) or has commands queued (a long
  // Step, perhaps) answers at once from its latest published step. An idle one answers
  // through its queue in microseconds, after the inputs sent before; and behind a request
  // of the same connection still in flight it queues too, so a pipelined Step then
  // GetState sees the Step's result.
  int mode = atomic_load(&s->pub_mode);
  if (c->inflight == 0 &&
      (s->outstanding > 0 || mode == MODE(REALTIME) || mode == MODE(FREE_RUN))) {
    reply_latest(c, q->id, s, q->get_state->fields);
    return;
  }
  sim_cmd *cmd = sim_cmd_new(s, CMD_GET_STATE);
  if (cmd)
    cmd->fields = q->get_state->fields;
  queue_cmd(c, q, s, cmd);
}

static void h_subscribe(conn *c, pb_request *q, sim *s) {
  do_subscribe(c, q->id, s, q->subscribe);
}

static void h_unsubscribe(conn *c, pb_request *q, sim *s) {
  (void)s;
  if (subs_remove(c, q->unsubscribe->subscription))
    reply_status(c, q->id, STATUS(NOT_FOUND), "no subscription %llu on this connection",
                 (unsigned long long)q->unsubscribe->subscription);
  else
    reply_status(c, q->id, STATUS(OK), "%s", "");
}

static void h_analysis(conn *c, pb_request *q, sim *s) { analyses_start(c, s, q); }

static void h_stats(conn *c, pb_request *q, sim *s) {
  (void)s;
  stats_request(c, q->id, q->get_stats->model);
}

// ---------------------------------------------------------------------------------------------
// The request table (as Redis's command table): what each operation needs before its handler.

enum {
  REQ_MODEL = 1,       // names a model, which must exist
  REQ_BEFORE_HELLO = 2,  // allowed before Hello when a token is configured
  REQ_TAKES = 4,       // the handler keeps the request (and frees it)
};

typedef struct {
  int op;
  const char *name;
  void (*handler)(conn *c, pb_request *q, sim *s);
  unsigned flags;
} request_def;

#define OP(x) PARTITA__V1__REQUEST__OP_##x
static const request_def requests[] = {
    {OP(_NOT_SET), "(none)", h_not_set, 0},
    {OP(HELLO), "Hello", h_hello, REQ_BEFORE_HELLO},
    {OP(LOAD_MODEL), "LoadModel", h_load, 0},
    {OP(UNLOAD_MODEL), "UnloadModel", h_unload, REQ_MODEL},
    {OP(LIST_MODELS), "ListModels", h_list, 0},
    {OP(GET_MODEL_INFO), "GetModelInfo", h_info, REQ_MODEL},
    {OP(SET_MODE), "SetMode", h_set_mode, REQ_MODEL},
    {OP(STEP), "Step", h_step, REQ_MODEL},
    {OP(STEP_WITH_INPUTS), "StepWithInputs", h_step_with_inputs, REQ_MODEL},
    {OP(RESET), "Reset", h_reset, REQ_MODEL},
    {OP(SET_STATE), "SetState", h_set_state, REQ_MODEL},
    {OP(SET_INPUTS), "SetInputs", h_set_inputs, REQ_MODEL},
    {OP(SET_PARAMETERS), "SetParameters", h_set_parameters, REQ_MODEL},
    {OP(GET_STATE), "GetState", h_get_state, REQ_MODEL},
    {OP(SUBSCRIBE), "Subscribe", h_subscribe, REQ_MODEL},
    {OP(UNSUBSCRIBE), "Unsubscribe", h_unsubscribe, 0},
    {OP(INVERSE_DYNAMICS), "InverseDynamics", h_analysis, REQ_MODEL | REQ_TAKES},
    {OP(LINEARIZE), "Linearize", h_analysis, REQ_MODEL | REQ_TAKES},
    {OP(EQUILIBRIUM), "Equilibrium", h_analysis, REQ_MODEL | REQ_TAKES},
    {OP(GET_STATS), "GetStats", h_stats, 0},
    {OP(RECORD), "Record", recordings_request, REQ_MODEL},
    {OP(STOP_RECORDING), "StopRecording", recordings_request, REQ_MODEL},
    {OP(GET_RECORDING), "GetRecording", recordings_request, REQ_MODEL},
};
#undef OP

int dispatch_init(server *srv, uv_loop_t *loop) {
  srv->net.on_request = dispatch;
  srv->net.on_conn_closing = subs_drop_conn;
  srv->net.send_status = reply_status;
  srv->udp.on_input = inputs_udp;
  return registry_init(srv, loop);
}

void dispatch(conn *c, pb_request *q) {
  const request_def *def = NULL;
  for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]) && !def; i++)
    if (requests[i].op == (int)q->op_case)
      def = &requests[i];
  sim *s = NULL;
  if (!def) {
    reply_status(c, q->id, STATUS(UNIMPLEMENTED), "unknown operation %d", (int)q->op_case);
  } else if (!c->authed && !(def->flags & REQ_BEFORE_HELLO)) {
    reply_status(c, q->id, STATUS(UNAUTHENTICATED), "send Hello with the token first");
  } else if ((def->flags & REQ_MODEL) &&
             !(s = registry_find(server_of(c), model_of(q) ? model_of(q) : ""))) {
    reply_status(c, q->id, STATUS(NOT_FOUND), "%s: no model named '%.100s'", def->name,
                 model_of(q) ? model_of(q) : "");
  } else {
    def->handler(c, q, s);
    if (def->flags & REQ_TAKES)
      return;
  }
  partita__v1__request__free_unpacked(q, NULL);
}
