// reply.c: everything that answers a client (reply.h): status replies (always valid UTF-8),
// states, model descriptions, and requests answered by a model's thread (a command queued
// with submit, answered by its completion on the loop thread).
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/reply.h"
#include "base/protocol.h"
#include "base/text.h"
#include "model/state.h"

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

// A request waiting for a model command; the command's completion answers it.
typedef struct {
  conn *c;
  uint64_t id;
  int op;
} req_ctx;

static void reply_state(req_ctx *x, sim_cmd *cmd, int names) {
  ptb_frame fr;
  pb_response r = PARTITA__V1__RESPONSE__INIT;
  Partita__V1__Status st = PARTITA__V1__STATUS__INIT;
  state_frame(&fr, cmd->owner, cmd->snap, cmd->fields, names);
  st.code = (Partita__V1__Status__Code)status_from_pt(cmd->status);
  st.message = cmd->msg;
  r.status = &st;
  r.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_STATE;
  r.state = &fr.f;
  reply(x->c, x->id, &r);
  ptb_frame_release(&fr);
}

void reply_latest(conn *c, uint64_t id, sim *s, uint32_t fields) {
  ptb_frame fr;
  pb_response r = PARTITA__V1__RESPONSE__INIT;
  state_frame(&fr, s, (snap_hdr *)sim_latest(s), fields, 1);
  r.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_STATE;
  r.state = &fr.f;
  reply(c, id, &r);
  ptb_frame_release(&fr);
}

void reply_info(conn *c, uint64_t id, sim *s, int code, const char *msg) {
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
  reply(c, id, &r);
  model_info_free(mi);
}

static void cmd_done(sim_cmd *cmd) {
  req_ctx *x = cmd->ctx;
  sim *s = cmd->owner;
  if (!x->c->closing) {
    if (x->op == PARTITA__V1__REQUEST__OP_SET_MODE || x->op == PARTITA__V1__REQUEST__OP_LOAD_MODEL)
      reply_info(x->c, x->id, s, status_from_pt(cmd->status), cmd->msg);
    else
      reply_state(x, cmd, 1);
  }
  conn_request_done(x->c);
  free(x);
  sim_cmd_free(cmd);
}

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
