// analyses.c: Linearize, InverseDynamics and Equilibrium (analyses.h): snapshot the model's
// data at a step boundary into one of the model's slots made at load (a command to its
// thread: a plain copy, nothing allocated or evaluated there, nothing on the loop thread),
// compute on the libuv work pool on that copy (the bridge's ptb_analysis.h: the request's
// state set on the copy, the engine run, the reply built), answer, and for Equilibrium with
// apply, move the live model to the result (a SetState command). Requests beyond the slots
// wait their turn in order.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/analyses.h"
#include "api/registry.h"
#include "api/reply.h"
#include "ptb_analysis.h"
#include "ptb_assign.h"

struct analysis {
  conn *c;
  sim *s;
  pb_request *req;
  pt_data *copy;              // the slot it holds (NULL while waiting)
  int slot;
  analysis *next;             // in the model's waiting list
  uv_work_t work;
  int status;
  char msg[512];
  ProtobufCMessage *out;      // the reply payload, freed with free_unpacked
};

void analyses_model_free(analyses_model *a) {
  for (int i = 0; a && i < ANALYSES_SLOTS; i++) {
    pt_data_free(a->slot[i]);
    pt_linearizer_free(a->lin[i]);
  }
  free(a);
}

analyses_model *analyses_model_new(const pt_model *m) {
  analyses_model *a = calloc(1, sizeof(*a));
  for (int i = 0; a && i < ANALYSES_SLOTS; i++) {
    a->slot[i] = pt_data_new(m);
    a->lin[i] = pt_linearizer_new(m);
    if (!a->slot[i] || !a->lin[i]) {
      analyses_model_free(a);
      return NULL;
    }
  }
  return a;
}

size_t analyses_bytes(const pt_model *m) { return ANALYSES_SLOTS * pt_data_bytes(m); }

static void begin(analysis *j);

// Frees the job; its slot goes to the next waiting request of the model.
static void job_free(analysis *j) {
  sim *s = j->s;
  analyses_model *a = entry_of(s)->analyses;
  int freed_slot = j->copy != NULL;
  if (j->out)
    protobuf_c_message_free_unpacked(j->out, NULL);
  if (freed_slot)
    a->used[j->slot] = 0;
  partita__v1__request__free_unpacked(j->req, NULL);
  free(j);
  analysis *next = a->wait;
  if (next && freed_slot) {
    a->wait = next->next;
    begin(next);
  }
  sim_unref(s);
}

static void finish(analysis *j) {
  conn *c = j->c;
  if (!c->closing) {
    pb_response r = PARTITA__V1__RESPONSE__INIT;
    Partita__V1__Status st = PARTITA__V1__STATUS__INIT;
    st.code = (Partita__V1__Status__Code)status_from_pt(j->status);
    st.message = j->msg;
    r.status = &st;
    if (j->status == PT_OK && j->out) {
      switch (j->req->op_case) {
      case PARTITA__V1__REQUEST__OP_INVERSE_DYNAMICS:
        r.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_INVERSE_DYNAMICS;
        r.inverse_dynamics = (Partita__V1__InverseDynamicsReply *)j->out;
        break;
      case PARTITA__V1__REQUEST__OP_LINEARIZE:
        r.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_LINEARIZE;
        r.linearize = (Partita__V1__LinearizeReply *)j->out;
        break;
      default:
        r.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_EQUILIBRIUM;
        r.equilibrium = (Partita__V1__EquilibriumReply *)j->out;
        break;
      }
    }
    reply(c, j->req->id, &r);
  }
  job_free(j);
  conn_request_done(c);
}

static void on_applied(sim_cmd *cmd) {
  analysis *j = cmd->ctx;
  Partita__V1__EquilibriumReply *eq = (Partita__V1__EquilibriumReply *)j->out;
  if (cmd->status == PT_OK) {
    eq->applied = 1;
  } else {
    j->status = cmd->status;
    snprintf(j->msg, sizeof(j->msg), "equilibrium found but not applied: %.400s", cmd->msg);
  }
  sim_cmd_free(cmd);
  finish(j);
}

// Equilibrium with apply: set the live model's coordinates to the result.
static int apply(analysis *j) {
  Partita__V1__EquilibriumReply *eq = (Partita__V1__EquilibriumReply *)j->out;
  ptb_error e;
  pt_assign *pos;
  int npos;
  if (j->s->unloading || ptb_coord_assigns(j->s->m, eq->coordinates, eq->n_coordinates,
                                           "coordinates", NULL, &pos, &npos, &e))
    return -1;
  sim_cmd *cmd = sim_cmd_new(j->s, CMD_SET_STATE);
  if (!cmd) {
    free(pos);
    return -1;
  }
  cmd->pos = pos;
  cmd->npos = npos;
  // at rest: every coordinate rate 0 (unless motions prescribe rates at the live time)
  if (pt_model_nmotion(j->s->m) == 0 && npos > 0 && (cmd->vel = calloc((size_t)npos,
                                                                       sizeof(pt_assign)))) {
    for (int i = 0; i < npos; i++)
      cmd->vel[i] = (pt_assign){pos[i].coord, 0.0};
    cmd->nvel = npos;
  }
  cmd->ctx = j;
  cmd->done = on_applied;
  if (sim_submit(j->s, cmd)) {
    sim_cmd_free(cmd);
    return -1;
  }
  return 0;
}

static void work(uv_work_t *w) {
  analysis *j = w->data;
  pb_request *q = j->req;
  const pt_model *m = j->s->m;
  ptb_error e;
  switch (q->op_case) {
  case PARTITA__V1__REQUEST__OP_INVERSE_DYNAMICS: {
    Partita__V1__InverseDynamicsReply *o = NULL;
    j->status = ptb_inverse(m, j->copy, q->inverse_dynamics, NULL, &o, &e);
    j->out = o ? &o->base : NULL;
    break;
  }
  case PARTITA__V1__REQUEST__OP_LINEARIZE: {
    Partita__V1__LinearizeReply *o = NULL;
    j->status = ptb_linearize(entry_of(j->s)->analyses->lin[j->slot], m, j->copy, q->linearize,
                              NULL, &o, &e);
    j->out = o ? &o->base : NULL;
    break;
  }
  default: {
    Partita__V1__EquilibriumReply *o = NULL;
    j->status = ptb_equilibrium(m, j->copy, q->equilibrium, NULL, &o, &e);
    j->out = o ? &o->base : NULL;
    break;
  }
  }
  // on success the message stays the snapshot's (empty)
  if (j->status != PT_OK)
    snprintf(j->msg, sizeof(j->msg), "%s", e.msg);
}

static void after(uv_work_t *w, int status) {
  analysis *j = w->data;
  if (status < 0) {
    j->status = PT_EPRECOND;
    snprintf(j->msg, sizeof(j->msg), "cancelled");
  }
  if (j->status == PT_OK && j->out && j->req->op_case == PARTITA__V1__REQUEST__OP_EQUILIBRIUM &&
      j->req->equilibrium->apply && !j->c->closing && apply(j) == 0)
    return;   // answered once applied
  finish(j);
}

static void on_snapshot(sim_cmd *cmd) {
  analysis *j = cmd->ctx;
  int st = cmd->status;
  snprintf(j->msg, sizeof(j->msg), "%.500s", cmd->msg);
  sim_cmd_free(cmd);
  if (st < 0 || j->c->closing) {
    j->status = st < 0 ? st : PT_EPRECOND;
    finish(j);
    return;
  }
  j->work.data = j;
  if (uv_queue_work(j->c->net->loop, &j->work, work, after)) {
    j->status = PT_ENOMEM;
    snprintf(j->msg, sizeof(j->msg), "could not queue the computation");
    finish(j);
  }
}

// Takes a free slot and asks the model's thread for the snapshot; a job that cannot start is
// answered and freed here.
static void begin(analysis *j) {
  sim *s = j->s;
  analyses_model *a = entry_of(s)->analyses;
  int k = 0;
  while (k < ANALYSES_SLOTS && a->used[k])
    k++;
  sim_cmd *cmd = k < ANALYSES_SLOTS && !s->unloading ? sim_cmd_new(s, CMD_SNAPSHOT) : NULL;
  if (!cmd) {
    j->status = s->unloading ? PT_EPRECOND : PT_ENOMEM;
    snprintf(j->msg, sizeof(j->msg), s->unloading ? "model %s was unloaded" : "out of memory",
             s->name);
    finish(j);
    return;
  }
  a->used[k] = 1;
  j->slot = k;
  j->copy = a->slot[k];
  cmd->copy = j->copy;
  cmd->ctx = j;
  cmd->done = on_snapshot;
  if (sim_submit(s, cmd)) {
    sim_cmd_free(cmd);
    j->status = PT_ENOMEM;
    snprintf(j->msg, sizeof(j->msg), "model %s: command queue full", s->name);
    finish(j);
  }
}

int analyses_start(conn *c, sim *s, pb_request *req) {
  analyses_model *a = entry_of(s)->analyses;
  analysis *j = calloc(1, sizeof(*j));
  if (!j) {
    reply_status(c, req->id, STATUS(RESOURCE_EXHAUSTED), "out of memory");
    partita__v1__request__free_unpacked(req, NULL);
    return -1;
  }
  j->c = c;
  j->s = s;
  j->req = req;
  sim_ref(s);   // the model outlives the job even if unloaded meanwhile
  c->inflight++;
  int busy = 1;
  for (int k = 0; k < ANALYSES_SLOTS; k++)
    busy = busy && a->used[k];
  if (!busy) {
    begin(j);
    return 0;
  }
  analysis **tail = &a->wait;   // wait in order for a slot
  while (*tail)
    tail = &(*tail)->next;
  *tail = j;
  return 0;
}
