// test_dispatch.c: every operation dispatched into a server without sockets (the harness the
// fuzzer uses too): each request gets exactly one answer with the status it deserves, hostile
// values are refused and change nothing, and the server stays usable.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "server_harness.h"

static int failures;
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      failures++;                                                              \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
    }                                                                          \
  } while (0)

#define CODE(x) PARTITA__V1__STATUS__CODE__##x
#define OP(x) PARTITA__V1__REQUEST__OP_##x

static const char *pendulum =
    "model: p\nbodies:\n  - name: link\n    mass: 1\n    inertia: [0.02, 0.02, 0.001]\n"
    "    position: [0.5, 0, 0]\njoints:\n  - name: hinge\n    type: revolute\n"
    "    body1: ground\n    body2: link\n    point: [0, 0, 0]\n    axis: [0, 1, 0]\n"
    "actuators:\n  - name: tau\n    type: joint_torque\n    joint: hinge\n";

// Sends rq; expects exactly one response with the request's id and `code`. Returns it (free
// with partita__v1__server_message__free_unpacked), or NULL.
static Partita__V1__ServerMessage *expect(harness *h, Partita__V1__Request *rq, int code,
                                          const char *what) {
  static uint64_t next_id = 100;
  rq->id = ++next_id;
  Partita__V1__ServerMessage *out[8];
  int n = harness_request(h, rq, 30.0, out, 8);
  Partita__V1__ServerMessage *r = NULL;
  int responses = 0;
  for (int i = 0; i < n; i++) {
    if (out[i]->msg_case == PARTITA__V1__SERVER_MESSAGE__MSG_RESPONSE &&
        out[i]->response->id == rq->id) {
      responses++;
      if (!r) {
        r = out[i];
        continue;
      }
    }
    partita__v1__server_message__free_unpacked(out[i], NULL);
  }
  CHECK(n >= 0, "%s: undecodable output", what);
  CHECK(responses == 1, "%s: %d answers", what, responses);
  if (r) {
    int got = r->response->status ? (int)r->response->status->code : 0;
    CHECK(got == code, "%s: status %d (%s), expected %d", what, got,
          r->response->status ? r->response->status->message : "", code);
  }
  return r;
}

static void done(Partita__V1__ServerMessage *m) {
  if (m)
    partita__v1__server_message__free_unpacked(m, NULL);
}

int main(void) {
  harness *h = harness_new();
  CHECK(h != NULL, "harness");
  if (!h)
    return 1;
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;

  // no operation, unknown model
  done(expect(h, &rq, CODE(INVALID_ARGUMENT), "no operation"));
  Partita__V1__GetState gs = PARTITA__V1__GET_STATE__INIT;
  gs.model = (char *)"nope";
  rq.op_case = OP(GET_STATE);
  rq.get_state = &gs;
  done(expect(h, &rq, CODE(NOT_FOUND), "GetState of no model"));

  // LoadModel, bad and good
  Partita__V1__LoadModel lm = PARTITA__V1__LOAD_MODEL__INIT;
  rq.op_case = OP(LOAD_MODEL);
  rq.load_model = &lm;
  lm.source = (char *)"bodies: [";
  done(expect(h, &rq, CODE(INVALID_ARGUMENT), "broken YAML"));
  lm.source = (char *)pendulum;
  lm.rate = 1e-13;
  done(expect(h, &rq, CODE(INVALID_ARGUMENT), "rate 1e-13"));
  lm.rate = 0;
  lm.mode = PARTITA__V1__MODE__LOCKSTEP;
  Partita__V1__ServerMessage *r = expect(h, &rq, CODE(OK), "LoadModel");
  CHECK(r && r->response->model_info && r->response->model_info->dof == 1, "ModelInfo");
  done(r);
  done(expect(h, &rq, CODE(ALREADY_EXISTS), "LoadModel twice"));

  // Step, StepWithInputs, SetState, SetInputs with hostile values
  Partita__V1__Step st = PARTITA__V1__STEP__INIT;
  st.model = (char *)"p";
  st.n = 10;
  rq.op_case = OP(STEP);
  rq.step = &st;
  r = expect(h, &rq, CODE(OK), "Step");
  CHECK(r && r->response->state && r->response->state->step == 10, "10 steps");
  done(r);
  st.n = 4000000000u;
  done(expect(h, &rq, CODE(INVALID_ARGUMENT), "Step over the limit"));
  Partita__V1__NamedValue nv = PARTITA__V1__NAMED_VALUE__INIT, *pnv = &nv;
  Partita__V1__SetState ss = PARTITA__V1__SET_STATE__INIT;
  ss.model = (char *)"p";
  ss.n_coordinates = 1;
  ss.coordinates = &pnv;
  rq.op_case = OP(SET_STATE);
  rq.set_state = &ss;
  nv.name = (char *)"hinge";
  const double hostile[] = {1e300, -INFINITY, NAN};
  for (int i = 0; i < 3; i++) {
    nv.value = hostile[i];
    done(expect(h, &rq, CODE(INVALID_ARGUMENT), "SetState hostile"));
  }
  nv.name = (char *)"\xff\xfe";
  nv.value = 0.1;
  r = expect(h, &rq, CODE(INVALID_ARGUMENT), "SetState invalid UTF-8 name");
  done(r);
  Partita__V1__SetInputs si = PARTITA__V1__SET_INPUTS__INIT;
  si.model = (char *)"p";
  si.n_by_name = 1;
  si.by_name = &pnv;
  rq.op_case = OP(SET_INPUTS);
  rq.set_inputs = &si;
  nv.name = (char *)"tau";
  nv.value = NAN;
  done(expect(h, &rq, CODE(INVALID_ARGUMENT), "SetInputs NaN"));
  nv.value = 0.5;
  done(expect(h, &rq, CODE(OK), "SetInputs"));
  Partita__V1__StepWithInputs swi = PARTITA__V1__STEP_WITH_INPUTS__INIT;
  swi.model = (char *)"p";
  swi.n_by_name = 1;
  swi.by_name = &pnv;
  swi.n = 5;
  rq.op_case = OP(STEP_WITH_INPUTS);
  rq.step_with_inputs = &swi;
  r = expect(h, &rq, CODE(OK), "StepWithInputs");
  CHECK(r && r->response->state && r->response->state->step == 15, "15 steps");
  done(r);

  // mode, heavy requests, stats, unload
  Partita__V1__SetMode sm = PARTITA__V1__SET_MODE__INIT;
  sm.model = (char *)"p";
  sm.mode = PARTITA__V1__MODE__REALTIME;
  sm.rate = 1e6;
  rq.op_case = OP(SET_MODE);
  rq.set_mode = &sm;
  done(expect(h, &rq, CODE(INVALID_ARGUMENT), "SetMode rate 1e6"));
  Partita__V1__Linearize li = PARTITA__V1__LINEARIZE__INIT;
  li.model = (char *)"p";
  rq.op_case = OP(LINEARIZE);
  rq.linearize = &li;
  r = expect(h, &rq, CODE(OK), "Linearize");
  CHECK(r && r->response->linearize && r->response->linearize->a &&
            r->response->linearize->a->rows == 2, "A is 2 x 2");
  done(r);
  Partita__V1__Equilibrium eq = PARTITA__V1__EQUILIBRIUM__INIT;
  eq.model = (char *)"p";
  eq.tolerance = NAN;
  rq.op_case = OP(EQUILIBRIUM);
  rq.equilibrium = &eq;
  done(expect(h, &rq, CODE(INVALID_ARGUMENT), "Equilibrium NaN tolerance"));
  Partita__V1__GetStats gst = PARTITA__V1__GET_STATS__INIT;
  gst.model = (char *)"";
  rq.op_case = OP(GET_STATS);
  rq.get_stats = &gst;
  r = expect(h, &rq, CODE(OK), "GetStats");
  CHECK(r && r->response->stats && r->response->stats->n_models == 1 &&
            r->response->stats->models[0]->steps == 15, "stats of the one model");
  done(r);
  Partita__V1__UnloadModel um = PARTITA__V1__UNLOAD_MODEL__INIT;
  um.model = (char *)"p";
  rq.op_case = OP(UNLOAD_MODEL);
  rq.unload_model = &um;
  done(expect(h, &rq, CODE(OK), "UnloadModel"));
  done(expect(h, &rq, CODE(NOT_FOUND), "UnloadModel again"));

  // garbage bytes: answered with a protocol error (id 0), never a crash
  Partita__V1__ServerMessage *out[4];
  int n = harness_send(h, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11, 5.0, out, 4);
  CHECK(n == 1 && out[0]->response && out[0]->response->id == 0 &&
            out[0]->response->status->code == CODE(INVALID_ARGUMENT),
        "malformed length prefix answered");
  for (int i = 0; i < n; i++)
    done(out[i]);
  // The per-address bound counts network peers only (conn_count_from, used at accept).
  conn *peers[3];
  for (int i = 0; i < 3; i++) {
    peers[i] = conn_detached(&h->srv->net);
    struct sockaddr_in *a = (struct sockaddr_in *)&peers[i]->addr;
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(i < 2 ? 0x0a010203u : 0x0a010204u);   // 10.1.2.3 twice
  }
  net *nt = &h->srv->net;
  CHECK(conn_count_from(nt, peers[0]) == 2 && conn_count_from(nt, peers[2]) == 1,
        "connections per address: %d, %d", conn_count_from(nt, peers[0]),
        conn_count_from(nt, peers[2]));
  ((struct sockaddr_in *)&peers[2]->addr)->sin_addr.s_addr = htonl(0x7f000001u);
  CHECK(conn_count_from(nt, peers[2]) == 0 && conn_count_from(nt, h->c) == 0,
        "loopback and detached connections are not counted");
  for (int i = 0; i < 3; i++)
    conn_close(peers[i], NULL);
  harness_free(h);
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("dispatch without sockets: all checks passed\n");
  return 0;
}
