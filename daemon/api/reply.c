// reply.c: everything that answers a client: status replies (always valid UTF-8), states,
// model descriptions, statistics, and requests answered by a model's thread (a command queued
// with submit, answered by its completion on the loop thread).
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewer/http.h"
#include "server.h"
#include "base/text.h"

// The engine's codes to the protocol's: PT_ERRORS (partita.h) names the protocol status of
// each code, and the protocol's own descriptor gives that name's number.
int status_from_pt(int rc) {
  const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value_by_name(
      &partita__v1__status__code__descriptor, pt_status_name(rc));
  return v ? v->value : STATUS(INTERNAL);
}

void reply(conn *c, uint64_t id, pb_response *r) {
  Partita__V1__Status ok = PARTITA__V1__STATUS__INIT;
  pb_server_message sm = PARTITA__V1__SERVER_MESSAGE__INIT;
  char clean[1024];
  if (c->closing)
    return;
  r->id = id;
  if (!r->status)
    r->status = &ok;
  // Messages quote what clients sent (names, model text): proto3 strings must be UTF-8.
  if (r->status->message && !text_is_utf8(r->status->message))
    r->status->message = (char *)text_sanitize(clean, sizeof(clean), r->status->message);
  sm.msg_case = PARTITA__V1__SERVER_MESSAGE__MSG_RESPONSE;
  sm.response = r;
  conn_send_msg(c, &sm.base);
}

int reply_status(conn *c, uint64_t id, int code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  Partita__V1__Status st = PARTITA__V1__STATUS__INIT;
  pb_response r = PARTITA__V1__RESPONSE__INIT;
  st.code = (Partita__V1__Status__Code)code;
  st.message = msg;
  r.status = &st;
  reply(c, id, &r);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Completions of model commands.

static void reply_state(req_ctx *x, sim_cmd *cmd, int names) {
  state_msg sm;
  pb_response r = PARTITA__V1__RESPONSE__INIT;
  Partita__V1__Status st = PARTITA__V1__STATUS__INIT;
  state_build(&sm, cmd->owner, cmd->snap, cmd->fields, names);
  st.code = (Partita__V1__Status__Code)status_from_pt(cmd->status);
  st.message = cmd->msg;
  r.status = &st;
  r.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_STATE;
  r.state = &sm.f;
  reply(x->c, x->id, &r);
  state_release(&sm);
}

void reply_latest(conn *c, uint64_t id, sim *s, uint32_t fields) {
  state_msg sm;
  pb_response r = PARTITA__V1__RESPONSE__INIT;
  state_build(&sm, s, (snap_hdr *)sim_latest(s), fields, 1);
  r.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_STATE;
  r.state = &sm.f;
  reply(c, id, &r);
  state_release(&sm);
}

void reply_info(req_ctx *x, sim *s, int code, const char *msg) {
  pb_response r = PARTITA__V1__RESPONSE__INIT;
  Partita__V1__Status st = PARTITA__V1__STATUS__INIT;
  Partita__V1__ModelInfo *mi = model_info_new(s);
  st.code = (Partita__V1__Status__Code)code;
  st.message = (char *)msg;
  r.status = &st;
  if (mi) {
    r.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_MODEL_INFO;
    r.model_info = mi;
  }
  reply(x->c, x->id, &r);
  model_info_free(mi);
}

static Partita__V1__ModelStats *model_stats_new(sim *s, const sim_stats *t) {
  Partita__V1__ModelStats init = PARTITA__V1__MODEL_STATS__INIT;
  Partita__V1__Quantiles q0 = PARTITA__V1__QUANTILES__INIT;
  Partita__V1__ModelStats *ms = malloc(sizeof(*ms));
  Partita__V1__Quantiles *q = malloc(3 * sizeof(*q));
  if (!ms || !q) {
    free(ms);
    free(q);
    return NULL;
  }
  *ms = init;
  q[0] = q[1] = q[2] = q0;
  ms->model = strdup(s->name);   // the reply may go out after the model is unloaded and freed
  ms->steps = t->steps;
  ms->time = t->time;
  ms->mode = (Partita__V1__Mode)t->mode;
  ms->rate = t->rate;
  q[0].mean = t->step_mean;
  q[0].p50 = t->step_p50;
  q[0].p99 = t->step_p99;
  q[0].max = t->step_max;
  q[1].p50 = t->late_p50;
  q[1].p99 = t->late_p99;
  q[1].max = t->late_max;
  q[2].mean = t->snap_mean;
  q[2].p50 = t->snap_p50;
  q[2].p99 = t->snap_p99;
  q[2].max = t->snap_max;
  ms->step_us = &q[0];
  ms->late_us = &q[1];
  ms->snapshot_us = &q[2];
  ms->snapshots = t->snapshots;
  ms->memory_bytes = s->mem_bytes;
  ms->overruns = t->overruns;
  ms->dropped_frames = t->dropped_frames + s->dropped_loop;
  ms->repartitions = t->repartitions;
  ms->failures = t->failures;
  ms->clipped_inputs = t->clipped_inputs;
  ms->udp_inputs = s->udp_inputs;
  ms->stale_inputs = s->stale_inputs;
  ms->malformed_inputs = s->malformed_inputs;
  ms->unauthorized_inputs = s->unauthorized_inputs;
  ms->dropped_inputs = s->dropped_inputs;
  ms->subscribers = (uint32_t)s->nsubscribers;
  ms->partition = t->partition_qr ? "qr" : "lu";
  ms->qr_switches = t->qr_switches;
  ms->qr_steps = t->qr_steps;
  if (!ms->model) {
    free(q);
    free(ms);
    return NULL;
  }
  return ms;
}

static void stats_free(Partita__V1__Stats *st) {
  for (size_t i = 0; i < st->n_models; i++) {
    if (st->models[i]) {
      free(st->models[i]->step_us);   // the three quantiles in one block
      free(st->models[i]->model);
    }
    free(st->models[i]);
  }
  free(st->models);
  free(st->server);
  free(st);
}

// Resident and locked memory of the process from /proc/self/smaps_rollup (bytes; 0 when the
// kernel does not say).
static void memory_use(uint64_t *rss, uint64_t *locked) {
  *rss = *locked = 0;
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  char line[256];
  unsigned long long kb;
  while (f && fgets(line, sizeof(line), f)) {
    if (sscanf(line, "Rss: %llu kB", &kb) == 1)
      *rss = kb * 1024;
    else if (sscanf(line, "Locked: %llu kB", &kb) == 1)
      *locked = kb * 1024;
  }
  if (f)
    fclose(f);
}

static void reply_stats(req_ctx *x) {
  server *srv = x->c->srv;
  Partita__V1__ServerStats init = PARTITA__V1__SERVER_STATS__INIT;
  pb_response r = PARTITA__V1__RESPONSE__INIT;
  Partita__V1__Stats *st = x->stats;
  st->server = malloc(sizeof(*st->server));
  if (st->server) {
    *st->server = init;
    st->server->clients = (uint32_t)srv->nclients;
    st->server->bytes_in = srv->bytes_in;
    st->server->bytes_out = srv->bytes_out;
    st->server->models = (uint32_t)srv->nmodels;
    st->server->uptime_s = (double)(server_now_ms() - srv->start_ms) / 1e3;
    st->server->requests = srv->requests;
    st->server->refused_clients = srv->refused_clients;
    st->server->disconnects_idle = srv->disconnects_idle;
    st->server->disconnects_slow = srv->disconnects_slow;
    st->server->disconnects_protocol = srv->disconnects_protocol;
    st->server->auth_failures = srv->auth_failures;
    st->server->udp_malformed = srv->udp_malformed;
    st->server->udp_unknown_model = srv->udp_unknown_model;
    memory_use(&st->server->memory_resident_bytes, &st->server->memory_locked_bytes);
    http_stats(srv, st->server);
  }
  // models whose thread did not answer (unloaded meanwhile) are left out
  size_t k = 0;
  for (size_t i = 0; i < st->n_models; i++)
    if (st->models[i])
      st->models[k++] = st->models[i];
  st->n_models = k;
  r.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_STATS;
  r.stats = st;
  reply(x->c, x->id, &r);
  stats_free(st);
}

static void cmd_done(sim_cmd *cmd) {
  req_ctx *x = cmd->ctx;
  sim *s = cmd->owner;
  if (!x->c->closing) {
    switch (x->op) {
    case PARTITA__V1__REQUEST__OP_SET_MODE:
    case PARTITA__V1__REQUEST__OP_LOAD_MODEL:
      reply_info(x, s, status_from_pt(cmd->status), cmd->msg);
      break;
    case PARTITA__V1__REQUEST__OP_GET_STATS:
      if (cmd->status == PT_OK)
        x->stats->models[x->stats->n_models] = model_stats_new(s, &cmd->stats);
      break;
    default:
      reply_state(x, cmd, 1);
      break;
    }
  }
  if (x->op == PARTITA__V1__REQUEST__OP_GET_STATS) {
    x->stats->n_models++;
    if (--x->gather_left > 0) {
      sim_cmd_free(cmd);
      return;
    }
    if (!x->c->closing)
      reply_stats(x);
    else
      stats_free(x->stats);
  }
  conn_request_done(x->c);
  free(x);
  sim_cmd_free(cmd);
}

// Queue cmd for model s on behalf of request id; the completion answers it. -1: answered
// with an error here.
int submit(conn *c, uint64_t id, int op, sim *s, sim_cmd *cmd) {
  req_ctx *x = calloc(1, sizeof(*x));
  if (!x) {
    sim_cmd_free(cmd);
    return reply_status(c, id, STATUS(RESOURCE_EXHAUSTED), "out of memory") - 1;
  }
  x->c = c;
  x->id = id;
  x->op = op;
  cmd->ctx = x;
  cmd->done = cmd_done;
  cmd->cancel = &c->gone;
  if (sim_submit(s, cmd)) {
    free(x);
    sim_cmd_free(cmd);
    return reply_status(c, id, STATUS(RESOURCE_EXHAUSTED), "model %s: command queue full",
                        s->name) - 1;
  }
  c->inflight++;
  return 0;
}

int reply_stats_request(conn *c, uint64_t id, const char *model) {
  server *srv = c->srv;
  sim *one = model[0] ? server_find_model(srv, model) : NULL;
  if (model[0] && !one)
    return reply_status(c, id, STATUS(NOT_FOUND), "no model named '%.100s'", model);
  int n = one ? 1 : srv->nmodels;
  Partita__V1__Stats init = PARTITA__V1__STATS__INIT;
  req_ctx *x = calloc(1, sizeof(*x));
  Partita__V1__Stats *st = malloc(sizeof(*st));
  Partita__V1__ModelStats **ms = calloc((size_t)n + 1, sizeof(*ms));
  if (!x || !st || !ms) {
    free(x);
    free(st);
    free(ms);
    return reply_status(c, id, STATUS(RESOURCE_EXHAUSTED), "out of memory");
  }
  *st = init;
  st->models = ms;
  x->c = c;
  x->id = id;
  x->op = PARTITA__V1__REQUEST__OP_GET_STATS;
  x->stats = st;
  x->gather_left = n;
  c->inflight++;
  if (n == 0) {
    reply_stats(x);
    conn_request_done(c);
    free(x);
    return 0;
  }
  for (int i = 0; i < n; i++) {
    sim *s = one ? one : srv->models[i];
    sim_cmd *cmd = sim_cmd_new(s, CMD_STATS);
    if (cmd) {
      cmd->ctx = x;
      cmd->done = cmd_done;
      if (sim_submit(s, cmd) == 0)
        continue;
      sim_cmd_free(cmd);
    }
    // this model cannot answer now: count it as answered, without entry
    x->stats->models[x->stats->n_models++] = NULL;
    if (--x->gather_left == 0) {
      reply_stats(x);
      conn_request_done(c);
      free(x);
      return 0;
    }
  }
  return 0;
}
