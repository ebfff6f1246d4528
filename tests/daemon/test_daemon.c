// test_daemon.c: partitad over a loopback Unix socket, driven by libpartita-client.
//   usage: test_daemon PARTITAD MODELS_DIR
// Lockstep against the embedded engine (bit-identical), subscription frames (envelope,
// sequence, decimation), slow subscribers (model unaffected, frames dropped, disconnected at
// the limits), many subscribers, garbage isolation, UDP inputs, realtime rate, SIGTERM.
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "daemon_util.h"
#include "partita.h"

#define MODE(x) PARTITA__V1__MODE__##x
#define OKCODE PARTITA__V1__STATUS__CODE__OK

// n lockstep steps in the daemon give the same bits as n pt_step calls here.
static void test_lockstep_bits(void) {
  tdaemon d;
  CHECK(td_start(&d, NULL, 0) == 0, "start");
  ptc_client *c = td_connect(&d);
  Partita__V1__ServerMessage *m = td_load(c, "double_pendulum.yaml", "dp");
  CHECK(td_code(m) == OKCODE, "load: %s", m ? m->response->status->message : "no answer");
  ptc_free(m);
  ptc_free(td_set_mode(c, "dp", MODE(LOCKSTEP), 0));
  m = td_step(c, "dp", 500);
  CHECK(td_code(m) == OKCODE && m->response->state, "step");

  char path[512];
  snprintf(path, sizeof(path), "%s/double_pendulum.yaml", models_dir);
  pt_model *pm;
  pt_error err;
  CHECK(pt_model_load_file(path, NULL, &pm, &err) == 0, "local load: %s", err.msg);
  pt_data *pd = pt_data_new(pm);
  for (int i = 0; i < 500; i++)
    pt_step(pm, pd);
  if (m && m->response->state) {
    const Partita__V1__StateFrame *f = m->response->state;
    CHECK(f->step == 500 && f->n_coordinates == (size_t)pt_model_ncoord(pm), "shape");
    CHECK(f->time == pt_time(pd), "time %.17g vs %.17g", f->time, pt_time(pd));
    for (size_t i = 0; i < f->n_coordinates && i < (size_t)pt_model_ncoord(pm); i++) {
      CHECK(memcmp(&f->coordinates[i], &pt_coords(pd)[i], sizeof(double)) == 0,
            "coordinate %zu: %.17g vs %.17g", i, f->coordinates[i], pt_coords(pd)[i]);
      CHECK(memcmp(&f->rates[i], &pt_coord_rates(pd)[i], sizeof(double)) == 0,
            "rate %zu: %.17g vs %.17g", i, f->rates[i], pt_coord_rates(pd)[i]);
    }
    CHECK(f->n_bodies == (size_t)pt_model_nbody(pm) && f->n_bodies > 0 &&
              f->bodies[0]->n_position == 3 &&
              memcmp(f->bodies[0]->position, pt_body_pose(pd, 0), 3 * sizeof(double)) == 0,
          "body pose");
  }
  ptc_free(m);
  pt_data_free(pd);
  pt_model_free(pm);
  ptc_close(c);
  CHECK(td_stop(&d, 30000, NULL) == 0, "stop");
}

// Frames carry the subscription id, consecutive sequence numbers and the state of their step;
// decimation every_k = 3 gives the steps 3, 6, 9.
static void test_frames(void) {
  tdaemon d;
  CHECK(td_start(&d, NULL, 0) == 0, "start");
  ptc_client *c = td_connect(&d);
  ptc_free(td_load(c, "pendulum.yaml", "p"));
  ptc_free(td_set_mode(c, "p", MODE(LOCKSTEP), 0));
  Partita__V1__ServerMessage *s1 = td_subscribe(c, "p", 1, PARTITA__V1__FIELD__FIELD_ALL);
  Partita__V1__ServerMessage *s3 = td_subscribe(c, "p", 3, PARTITA__V1__FIELD__FIELD_COORDINATES);
  CHECK(td_code(s1) == OKCODE && td_code(s3) == OKCODE, "subscribe");
  uint64_t id1 = s1 ? s1->response->subscribe->subscription : 0;
  uint64_t id3 = s3 ? s3->response->subscribe->subscription : 0;
  Partita__V1__ServerMessage *st = td_step(c, "p", 9);
  int n1 = 0, n3 = 0;
  for (int i = 0; i < 12; i++) {
    Partita__V1__ServerMessage *e;
    if (ptc_next_event(c, &e, 30000) != PTC_OK)
      break;
    const Partita__V1__StateFrame *f = e->event->frame;
    CHECK(f && !strcmp(f->model, "p"), "frame model");
    if (f && f->subscription == id1) {
      n1++;
      CHECK(f->sequence == (uint64_t)n1 && f->step == n1, "seq %llu step %lld (n1 %d)",
            (unsigned long long)f->sequence, (long long)f->step, n1);
      CHECK(f->n_coordinates == 2 && f->n_rates == 2 && f->energy && f->residual &&
                f->n_bodies == 1 && f->n_inputs == 1,
            "all fields");
      if (n1 == 9 && st && st->response->state)
        CHECK(f->coordinates[0] == st->response->state->coordinates[0], "last frame = state");
    } else if (f && f->subscription == id3) {
      n3++;
      CHECK(f->step == 3 * n3 && f->sequence == (uint64_t)n3, "decimated step %lld",
            (long long)f->step);
      CHECK(f->n_coordinates == 2 && f->n_rates == 0 && !f->energy, "selected fields");
    } else {
      CHECK(0, "frame of an unknown subscription");
    }
    ptc_free(e);
  }
  CHECK(n1 == 9 && n3 == 3, "frames: %d every step, %d every third", n1, n3);
  ptc_free(st);
  ptc_free(s1);
  ptc_free(s3);
  ptc_close(c);
  CHECK(td_stop(&d, 30000, NULL) == 0, "stop");
}

static int64_t steps_of(ptc_client *c, const char *model) {
  Partita__V1__ServerMessage *m = td_get_state(c, model, PARTITA__V1__FIELD__FIELD_COORDINATES);
  int64_t n = m && m->response->state ? m->response->state->step : -1;
  ptc_free(m);
  return n;
}

static int server_clients(ptc_client *c) {
  Partita__V1__ServerMessage *m = td_stats(c, "");
  int n = m && m->response->stats && m->response->stats->server
              ? (int)m->response->stats->server->clients : -1;
  ptc_free(m);
  return n;
}

// A subscriber that never reads: the model goes on stepping in real time, the subscriber
// loses frames (counted) and is disconnected (soft limit held too long, or the hard limit).
static void test_slow_subscriber(int hard) {
  // soft = hard: no frame is dropped before the hard limit closes the connection
  const char *limits =
      hard ? "limits:\n  backlog_soft_bytes: 200000\n  backlog_hard_bytes: 200000\n"
           : "limits:\n  backlog_soft_bytes: 16384\n  backlog_hard_bytes: 8388608\n"
             "  slow_timeout_ms: 700\n";
  tdaemon d;
  CHECK(td_start(&d, limits, 0) == 0, "start");
  ptc_client *c = td_connect(&d), *slow = td_connect(&d);
  ptc_free(td_load(c, "pendulum.yaml", "p"));
  // large frames every step so the socket buffers fill within the test
  Partita__V1__ServerMessage *s = td_subscribe(slow, "p", 1, PARTITA__V1__FIELD__FIELD_ALL);
  CHECK(td_code(s) == OKCODE, "subscribe");
  ptc_free(s);
  ptc_free(td_set_mode(c, "p", MODE(REALTIME), 1.0));
  // the window opens before the first request and closes after the second answer
  double t0 = now_s();
  int64_t n0 = steps_of(c, "p");
  // disconnected once its backlog fills (how soon depends on the machine): the server counts
  // one client left; the bound catches a daemon that never disconnects it
  int clients = -1;
  while (now_s() - t0 < 60 && (clients = server_clients(c)) != 1)
    usleep(50000);
  int64_t n1 = steps_of(c, "p");
  double wall_ms = (now_s() - t0) * 1000.0;
  // The reader that never reads does not stop the model: it stepped, and never ran ahead of
  // the wall clock (at most one step per 1 ms period and the one due at the start). How
  // closely it kept pace on a loaded machine is measured by tests/bench/bench_daemon.c.
  CHECK(n1 > n0 && (double)(n1 - n0) <= wall_ms + 1, "%lld steps in %.0f ms",
        (long long)(n1 - n0), wall_ms);
  CHECK(clients == 1, "%s limit: %d clients still connected", hard ? "hard" : "soft", clients);
  Partita__V1__ServerMessage *m = td_stats(c, "p");
  if (!hard && m && m->response->stats && m->response->stats->n_models == 1)
    CHECK(m->response->stats->models[0]->dropped_frames > 0, "no dropped frames counted");
  ptc_free(m);
  ptc_close(slow);
  ptc_close(c);
  CHECK(td_stop(&d, 30000, NULL) == 0, "stop");
}

// 50 subscribers on 50 connections all receive frames.
static void test_many_subscribers(void) {
  enum { N = 50 };
  tdaemon d;
  CHECK(td_start(&d, NULL, 0) == 0, "start");
  ptc_client *c = td_connect(&d), *subs[N];
  ptc_free(td_load(c, "pendulum.yaml", "p"));
  for (int i = 0; i < N; i++) {
    subs[i] = td_connect(&d);
    ptc_free(td_subscribe(subs[i], "p", 10, 0));
  }
  ptc_free(td_set_mode(c, "p", MODE(REALTIME), 1.0));
  int ok = 0;
  for (int i = 0; i < N; i++) {
    int got = 0;
    for (int k = 0; k < 5; k++) {
      Partita__V1__ServerMessage *e;
      if (ptc_next_event(subs[i], &e, 30000) != PTC_OK)
        break;
      got += e->event->kind_case == PARTITA__V1__EVENT__KIND_FRAME;
      ptc_free(e);
    }
    ok += got == 5;
    ptc_close(subs[i]);
  }
  CHECK(ok == N, "%d of %d subscribers received 5 frames", ok, N);
  ptc_close(c);
  CHECK(td_stop(&d, 30000, NULL) == 0, "stop");
}

// Garbage on one connection closes it after an error message; the others carry on.
static void test_garbage(void) {
  tdaemon d;
  CHECK(td_start(&d, NULL, 0) == 0, "start");
  ptc_client *good = td_connect(&d), *bad = td_connect(&d);
  ptc_free(td_load(good, "pendulum.yaml", "p"));
  const unsigned char junk[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  CHECK(write(ptc_fd(bad), junk, sizeof(junk)) == (ssize_t)sizeof(junk), "write");
  Partita__V1__ServerMessage *m = NULL;
  CHECK(ptc_recv(bad, &m, 30000) == PTC_OK && td_code(m) ==
            PARTITA__V1__STATUS__CODE__INVALID_ARGUMENT, "error message before closing");
  ptc_free(m);
  m = NULL;
  CHECK(ptc_recv(bad, &m, 30000) == PTC_ERR_CLOSED, "bad connection not closed");
  ptc_free(m);
  m = td_get_state(good, "p", 0);
  CHECK(td_code(m) == OKCODE, "good connection affected");
  ptc_free(m);
  // a well-framed message that is not a Request: same treatment
  ptc_client *bad2 = td_connect(&d);
  const unsigned char notreq[] = {3, 0x0f, 0xff, 0xff};
  CHECK(write(ptc_fd(bad2), notreq, sizeof(notreq)) == 4, "write");
  m = NULL;
  CHECK(ptc_recv(bad2, &m, 30000) == PTC_OK && td_code(m) ==
            PARTITA__V1__STATUS__CODE__INVALID_ARGUMENT, "malformed request answered");
  ptc_free(m);
  ptc_close(bad2);
  ptc_close(bad);
  ptc_close(good);
  CHECK(td_stop(&d, 30000, NULL) == 0, "stop");
}

static void send_udp(int port, const char *model, uint64_t seq, double tau) {
  Partita__V1__InputFrame f = PARTITA__V1__INPUT_FRAME__INIT;
  f.model = (char *)model;
  f.sequence = seq;
  f.n_values = 1;
  f.values = &tau;
  uint8_t buf[256];
  size_t n = partita__v1__input_frame__pack(&f, buf);
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  sendto(fd, buf, n, 0, (struct sockaddr *)&a, sizeof(a));
  close(fd);
}

static double input_of(ptc_client *c) {
  Partita__V1__ServerMessage *m = td_get_state(c, "p", PARTITA__V1__FIELD__FIELD_INPUTS);
  double v = m && m->response->state && m->response->state->n_inputs == 1
                 ? m->response->state->inputs[0] : NAN;
  ptc_free(m);
  return v;
}

// UDP inputs apply at the next step boundary; a stale sequence number is ignored.
static void test_udp(void) {
  tdaemon d;
  CHECK(td_start(&d, NULL, 1) == 0, "start");
  ptc_client *c = td_connect(&d);
  ptc_free(td_load(c, "pendulum.yaml", "p"));
  ptc_free(td_set_mode(c, "p", MODE(LOCKSTEP), 0));
  send_udp(d.udp_port, "p", 10, 3.0);
  double v = NAN;
  for (double t = now_s(); now_s() - t < 30 && v != 3.0;)
    v = input_of(c);
  CHECK(v == 3.0, "UDP input not applied: %g", v);
  send_udp(d.udp_port, "p", 9, 7.0);    // stale
  send_udp(d.udp_port, "p", 10, 7.0);   // repeated: stale too
  // a newer one after them, from the same socket address: once it is applied, the two
  // before it have been read (one loop thread reads the datagrams in order), with no sleep
  send_udp(d.udp_port, "p", 11, -2.0);
  for (double t = now_s(); now_s() - t < 30 && (v = input_of(c)) != -2.0;)
    usleep(1000);
  CHECK(v == -2.0, "newer UDP input not applied");
  Partita__V1__ServerMessage *m = td_stats(c, "p");
  if (m && m->response->stats && m->response->stats->n_models == 1)
    CHECK(m->response->stats->models[0]->stale_inputs == 2 &&
              m->response->stats->models[0]->udp_inputs == 2,
          "counters: %lld stale, %lld applied",
          (long long)m->response->stats->models[0]->stale_inputs,
          (long long)m->response->stats->models[0]->udp_inputs);
  else
    CHECK(0, "no stats");
  ptc_free(m);

  // the client library's sender: a restarted sender (a new session) numbers from 1 again and
  // is applied all the same
  char hp[64], err[256];
  snprintf(hp, sizeof(hp), "127.0.0.1:%d", d.udp_port);
  for (int k = 0; k < 2; k++) {
    ptc_udp_sender *u = ptc_udp_open(hp, "p", "", err, sizeof(err));
    CHECK(u != NULL, "udp sender: %s", err);
    if (!u)
      break;
    double val = 10.0 + k;
    CHECK(ptc_udp_send(u, &val, 1) == PTC_OK, "udp send");
    for (double t = now_s(); now_s() - t < 30 && (v = input_of(c)) != val;)
      ;
    CHECK(v == val, "sender %d (session %llx) from sequence 1 not applied: %g", k,
          (unsigned long long)ptc_udp_session(u), v);
    ptc_udp_close(u);
  }

  // state frames as datagrams to a registered peer: every 2 steps, bare StateFrames
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof(a);
  bind(fd, (struct sockaddr *)&a, sizeof(a));
  getsockname(fd, (struct sockaddr *)&a, &alen);
  char peer[64];
  snprintf(peer, sizeof(peer), "127.0.0.1:%d", ntohs(a.sin_port));
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__Subscribe sb = PARTITA__V1__SUBSCRIBE__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_SUBSCRIBE;
  rq.subscribe = &sb;
  sb.model = "p";
  sb.every_k = 2;
  sb.udp_peer = peer;
  m = NULL;
  CHECK(ptc_call(c, &rq, &m, 30000) == PTC_OK && td_code(m) == OKCODE, "UDP subscribe");
  uint64_t sub_id = m && m->response->subscribe ? m->response->subscribe->subscription : 0;
  ptc_free(m);
  m = td_step(c, "p", 6);
  int64_t last = m && m->response->state ? m->response->state->step : -1;
  ptc_free(m);
  int frames = 0;
  struct timeval tv = {.tv_sec = 30};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  for (int i = 0; i < 3; i++) {
    uint8_t buf[65536];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0)
      break;
    Partita__V1__StateFrame *f = partita__v1__state_frame__unpack(NULL, (size_t)n, buf);
    CHECK(f && f->subscription == sub_id && f->sequence == (uint64_t)i + 1 &&
              f->step == last - 4 + 2 * i && f->n_coordinates == 2,
          "UDP frame %d", i);
    if (f)
      partita__v1__state_frame__free_unpacked(f, NULL);
    frames++;
  }
  CHECK(frames == 3, "%d UDP state frames", frames);
  close(fd);
  ptc_close(c);
  CHECK(td_stop(&d, 30000, NULL) == 0, "stop");
}

// Real time at 1 kHz: the model steps, never ahead of the wall clock, with lateness reported.
static void test_realtime(void) {
  tdaemon d;
  CHECK(td_start(&d, NULL, 0) == 0, "start");
  ptc_client *c = td_connect(&d);
  ptc_free(td_load(c, "pendulum.yaml", "p"));
  ptc_free(td_set_mode(c, "p", MODE(REALTIME), 1.0));
  // the window opens before the first request and closes after the second answer
  double t0 = now_s();
  int64_t n0 = steps_of(c, "p");
  usleep(500000);
  int64_t n1 = steps_of(c, "p");
  double wall_ms = (now_s() - t0) * 1000;
  // It steps, and never ahead of the wall clock: at most one step per 1 ms period (and the
  // one due at the start), whatever the load. How closely it keeps pace is measured by
  // tests/bench/bench_daemon.c; the pacing arithmetic is tested on an injected clock in
  // test_internals.c.
  CHECK(n1 > n0 && (double)(n1 - n0) <= wall_ms + 1, "%lld steps in %.1f ms",
        (long long)(n1 - n0), wall_ms);
  Partita__V1__ServerMessage *m = td_stats(c, "p");
  if (m && m->response->stats && m->response->stats->n_models == 1) {
    const Partita__V1__ModelStats *ms = m->response->stats->models[0];
    CHECK(ms->late_us && ms->late_us->max > 0 && ms->late_us->p50 <= ms->late_us->p99 &&
              ms->late_us->p99 <= ms->late_us->max,
          "lateness quantiles");
    CHECK(ms->step_us && ms->step_us->mean > 0 && ms->overruns >= 0, "step time");
  } else {
    CHECK(0, "no stats");
  }
  ptc_free(m);
  ptc_close(c);
  CHECK(td_stop(&d, 30000, NULL) == 0, "stop");
}

// SIGTERM with clients connected (one subscribed to a running model): exit 0. The bound (10 s,
// what a service manager would wait) catches a hang, not a slow machine.
static void test_sigterm(void) {
  tdaemon d;
  CHECK(td_start(&d, NULL, 0) == 0, "start");
  ptc_client *a = td_connect(&d), *b = td_connect(&d), *s = td_connect(&d);
  ptc_free(td_load(a, "pendulum.yaml", "p"));
  ptc_free(td_subscribe(s, "p", 1, PARTITA__V1__FIELD__FIELD_ALL));
  ptc_free(td_set_mode(a, "p", MODE(FREE_RUN), 0));
  usleep(200000);
  double ms;
  int rc = td_stop(&d, 10000, &ms);
  CHECK(rc == 0, "exit status %d after %.0f ms", rc, ms);
  ptc_close(a);
  ptc_close(b);
  ptc_close(s);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_daemon PARTITAD MODELS_DIR\n");
    return 2;
  }
  partitad_path = argv[1];
  models_dir = argv[2];
  struct {
    const char *name;
    void (*fn)(void);
  } tests[] = {{"lockstep_bits", test_lockstep_bits}, {"frames", test_frames},
               {"garbage", test_garbage},             {"udp", test_udp},
               {"many_subscribers", test_many_subscribers},
               {"realtime", test_realtime},           {"sigterm", test_sigterm}};
  const char *only = argc > 3 ? argv[3] : NULL;
  for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
    if (only && strcmp(only, tests[i].name))
      continue;
    int before = failures;
    tests[i].fn();
    printf("%-20s %s\n", tests[i].name, failures == before ? "ok" : "FAILED");
  }
  if (!only || !strcmp(only, "slow_subscriber")) {
    int before = failures;
    test_slow_subscriber(0);
    test_slow_subscriber(1);
    printf("%-20s %s\n", "slow_subscriber", failures == before ? "ok" : "FAILED");
  }
  return failures ? 1 : 0;
}
