// test_internals.c: daemon modules without sockets: the SPSC ring between two threads, the
// latency histogram against exact quantiles, the real-time schedule on an injected clock, and
// the config file and option parser.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addr.h"
#include "base/config.h"
#include "base/hist.h"
#include "base/pace.h"
#include "base/protocol.h"
#include "base/text.h"
#include "base/spsc.h"

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

// ---------------------------------------------------------------------------------------------
// SPSC: a producer thread pushes 0..N-1 (retrying when full); the consumer must see each
// exactly once, in order, with the record bytes intact.
enum { NREC = 200000 };
typedef struct {
  long seq;
  long check;   // seq * 7 + 1: a torn record would not match
} rec;

static void *producer(void *arg) {
  spsc *q = arg;
  for (long i = 0; i < NREC;) {
    rec r = {i, i * 7 + 1};
    if (spsc_push(q, &r) == 0)
      i++;
  }
  return NULL;
}

static void test_spsc(void) {
  spsc q;
  CHECK(spsc_init(&q, sizeof(rec), 100) == 0 && q.cap == 128, "capacity rounds to 128");
  rec r;
  CHECK(spsc_pop(&q, &r) == -1 && spsc_peek(&q) == NULL, "empty ring");
  for (int i = 0; i < 128; i++)
    CHECK(spsc_push(&q, &(rec){i, 0}) == 0, "push %d", i);
  CHECK(spsc_push(&q, &(rec){999, 0}) == -1 && spsc_claim(&q) == NULL, "full ring refuses");
  for (int i = 0; i < 128; i++)
    CHECK(spsc_pop(&q, &r) == 0 && r.seq == i, "pop %d", i);
  pthread_t th;
  pthread_create(&th, NULL, producer, &q);
  long expect = 0, bad = 0;
  while (expect < NREC) {
    if (spsc_pop(&q, &r) == 0) {
      bad += r.seq != expect || r.check != expect * 7 + 1;
      expect++;
    }
  }
  pthread_join(th, NULL);
  CHECK(bad == 0, "%ld records out of order or torn", bad);
  CHECK(spsc_pop(&q, &r) == -1, "ring not empty at the end");
  spsc_free(&q);
}

// ---------------------------------------------------------------------------------------------
// Histogram quantiles within 3.5% of the exact order statistics of the same samples.
static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static void test_hist(void) {
  enum { N = 100000 };
  static uint64_t v[N];
  static hist h;
  hist_reset(&h);
  uint64_t s = 12345, max = 0;
  double sum = 0;
  for (int i = 0; i < N; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    // log-uniform between 100 ns and 10 ms, like step times and lateness
    double e = 2.0 + 5.0 * (double)(s >> 11) / 9007199254740992.0;
    double x = 1.0;
    for (int k = 0; k < 7; k++)
      x *= k < (int)e ? 10.0 : 1.0;
    x *= 1.0 + 9.0 * (e - (int)e);
    v[i] = (uint64_t)x;
    hist_add(&h, v[i]);
    sum += (double)v[i];
    max = v[i] > max ? v[i] : max;
  }
  qsort(v, N, sizeof(v[0]), cmp_u64);
  double qs[] = {0.5, 0.9, 0.99, 0.999};
  for (int i = 0; i < 4; i++) {
    double exact = (double)v[(int)(qs[i] * (N - 1))];
    double got = hist_quantile(&h, qs[i]);
    CHECK(got > 0.965 * exact && got < 1.035 * exact, "q%.3f: %.0f vs exact %.0f", qs[i], got,
          exact);
  }
  CHECK(h.max == max && h.count == N, "max and count");
  CHECK(hist_mean(&h) > 0.999999 * sum / N && hist_mean(&h) < 1.000001 * sum / N, "mean");
  hist_reset(&h);
  CHECK(hist_quantile(&h, 0.5) == 0 && hist_mean(&h) == 0, "empty histogram");
  hist_add(&h, 7);
  CHECK(hist_quantile(&h, 0.99) == 7, "small values are exact");
}

// ---------------------------------------------------------------------------------------------
static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  fputs(text, f);
  return fclose(f);
}

static void test_config(void) {
  char dir[] = "/tmp/ptd-cfg-XXXXXX", path[64], err[512];
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(path, sizeof(path), "%s/c.yaml", dir);
  config c;
  config_defaults(&c);
  CHECK(!strcmp(c.listen, "127.0.0.1:7450") && !c.socket[0] && !c.udp[0], "defaults");

  write_file(path, "listen: 127.0.0.1:9000\nsocket: /tmp/x.sock\nlog_level: debug\n"
                   "models:\n  - file: m/p.yaml\n    name: p\n    mode: realtime\n"
                   "    rate: 0.5\n  - file: /abs/q.urdf\n    floating_base: true\n"
                   "limits:\n  max_clients: 5\n  backlog_hard_bytes: 65536\n"
                   "realtime:\n  sched_fifo: false\n  priority: 10\n");
  CHECK(config_load(&c, path, err, sizeof(err)) == 0, "load: %s", err);
  CHECK(!strcmp(c.listen, "127.0.0.1:9000") && !strcmp(c.socket, "/tmp/x.sock"), "addresses");
  CHECK(c.log_level == 3 && c.limits.max_clients == 5 &&
            c.limits.backlog_hard_bytes == 65536 && c.limits.max_models == 16,
        "limits (set and default)");
  CHECK(!c.realtime.sched_fifo && c.realtime.priority == 10 && c.realtime.mlockall, "realtime");
  CHECK(c.nmodel == 2, "models: %d", c.nmodel);
  char want[128];
  snprintf(want, sizeof(want), "%s/m/p.yaml", dir);
  CHECK(!strcmp(c.models[0].file, want), "relative model file: %s", c.models[0].file);
  CHECK(c.models[0].mode == MODE(REALTIME) && c.models[0].rate == 0.5 &&
            !strcmp(c.models[0].name, "p"),
        "model 0");
  CHECK(!strcmp(c.models[1].file, "/abs/q.urdf") && c.models[1].floating_base &&
            c.models[1].mode == MODE(PAUSED),
        "model 1");

  // the command line overrides the file
  char *argv[] = {"partitad", "--listen", "[::1]:7", "--config", path, "--model", "z.yaml",
                  "--udp", "", NULL};
  config_defaults(&c);
  CHECK(config_from_args(&c, 9, argv, err, sizeof(err)) == 0, "args: %s", err);
  CHECK(!strcmp(c.listen, "[::1]:7") && !strcmp(c.socket, "/tmp/x.sock") && !c.udp[0] &&
            c.nmodel == 3 && !strcmp(c.models[2].file, "z.yaml"),
        "overrides");
  char host[64];
  int port;
  CHECK(wire_split_addr(c.listen, host, sizeof(host), &port) == 0 && !strcmp(host, "::1") &&
            port == 7,
        "v6 address");
  CHECK(wire_split_addr("nohost", host, sizeof(host), &port) == -1 &&
            wire_split_addr("h:99999", host, sizeof(host), &port) == -1 &&
            wire_split_addr("h:12x", host, sizeof(host), &port) == -1,
        "bad addresses refused");

  // errors name the file and line
  const char *bad[] = {"listen: a:1\nlisten_typo: 3\n", "limits:\n  max_clients: -4\n",
                       "models:\n  - name: nofile\n", "realtime:\n  sched_fifo: maybe\n",
                       "log_level: loud\n", "[1, 2\n", "models:\n  - file: a\n    mode: fast\n"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    write_file(path, bad[i]);
    config_defaults(&c);
    err[0] = 0;
    CHECK(config_load(&c, path, err, sizeof(err)) == -1, "bad config %zu accepted", i);
    CHECK(strstr(err, "c.yaml:") != NULL, "message without file:line: %s", err);
  }
  // what each error says (the key table's messages)
  const struct {
    const char *text, *says;
  } said[] = {
      {"listen_typo: 3\n", "c.yaml:1: unknown key"},
      {"limits:\n  max_clients: -4\n", "c.yaml:2: number missing or out of range"},
      {"limits:\n  max_client: 4\n", "c.yaml:2: unknown key in limits"},
      {"limits: 3\n", "c.yaml:1: limits: expected a mapping"},
      {"viewer:\n  fps: many\n", "c.yaml:2: number missing or out of range"},
      {"record:\n  fsync: perhaps\n", "c.yaml:2: expected true or false"},
      {"models:\n  - file: a\n    mode: fast\n",
       "c.yaml:3: mode: paused, realtime, free or lockstep"},
      {"models:\n  - file: a\n    input_safe: keep\n", "c.yaml:3: input_safe: zero or hold"},
      {"models:\n  - file: a\n    speed: 2\n", "c.yaml:3: unknown key in model"},
      {"models:\n  - 3\n", "c.yaml:2: model: expected a mapping with file:"},
      {"log_level: loud\n", "c.yaml:1: log_level: error, warn, info or debug"},
  };
  for (size_t i = 0; i < sizeof(said) / sizeof(said[0]); i++) {
    write_file(path, said[i].text);
    config_defaults(&c);
    err[0] = 0;
    CHECK(config_load(&c, path, err, sizeof(err)) == -1 && strstr(err, said[i].says),
          "'%s' says '%s', not '%s'", said[i].text, err, said[i].says);
  }
  char *argv2[] = {"partitad", "--bogus", NULL};
  CHECK(config_from_args(&c, 2, argv2, err, sizeof(err)) == -1, "unknown option accepted");
  char *argv3[] = {"partitad", "--listen", NULL};
  CHECK(config_from_args(&c, 2, argv3, err, sizeof(err)) == -1, "missing value accepted");
  unlink(path);
  rmdir(dir);
}

// Every key of the config file lands in its own field, with its own type: each value below
// differs from the default and from every other value of its type.
static void test_config_every_key(void) {
  char dir[] = "/tmp/ptd-cfg-XXXXXX", path[64], err[512];
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(path, sizeof(path), "%s/c.yaml", dir);
  write_file(path,
             "listen: 127.0.0.1:1\nsocket: /s\nudp: 127.0.0.1:2\nhttp: 127.0.0.1:3\n"
             "socket_group: g\nlog_file: /l\nauth_token: t\nlog_level: warn\n"
             "viewer:\n  web_root: /w\n  three_root: /t\n  package_path: /p\n  fps: 31\n"
             "  queue_frames: 32\n  max_browsers: 33\n  drop_limit: 34\n"
             "limits:\n  max_clients: 1001\n  max_models: 1002\n  max_frame_bytes: 2003\n"
             "  max_in_flight: 1004\n  max_subscriptions: 1005\n  backlog_soft_bytes: 2006\n"
             "  slow_timeout_ms: 1007\n  backlog_hard_bytes: 2008\n  max_step_count: 1009\n"
             "  hello_timeout_ms: 1010\n  max_clients_per_peer: 1011\n  auth_delay_ms: 1012\n"
             "  model_bytes: 2013\n  model_bodies: 1014\n  model_joints: 1015\n"
             "realtime:\n  sched_fifo: no\n  mlockall: off\n  priority: 41\n"
             "  overrun_burst: 42\n  max_lag_ms: 43\n  overrun_pause_ms: 44\n"
             "record:\n  dir: /r\n  all: yes\n  fsync: on\n  every_k: 51\n  fields: 52\n"
             "  queue_frames: 53\n  queue_inputs: 54\n  queue_events: 55\n"
             "  test_slow_us: 56\n"
             "models:\n  - file: f.yaml\n    name: n\n    mode: lockstep\n    rate: 2.5\n"
             "    floating_base: true\n    balance_inertia: true\n    no_joint_limits: true\n"
             "    input_timeout_ms: 61\n    input_safe: hold\n");
  config c;
  config_defaults(&c);
  CHECK(config_load(&c, path, err, sizeof(err)) == 0, "load: %s", err);
  CHECK(!strcmp(c.listen, "127.0.0.1:1") && !strcmp(c.socket, "/s") &&
            !strcmp(c.udp, "127.0.0.1:2") && !strcmp(c.viewer.http, "127.0.0.1:3") &&
            c.viewer.http_set && !strcmp(c.socket_group, "g") && !strcmp(c.log_file, "/l") &&
            !strcmp(c.auth_token, "t") && c.log_level == 1,
        "top-level keys");
  CHECK(!strcmp(c.viewer.web_root, "/w") && !strcmp(c.viewer.three_root, "/t") &&
            !strcmp(c.viewer.package_path, "/p") && c.viewer.fps == 31 &&
            c.viewer.queue_frames == 32 && c.viewer.max_browsers == 33 &&
            c.viewer.drop_limit == 34,
        "viewer");
  CHECK(c.limits.max_clients == 1001 && c.limits.max_models == 1002 &&
            c.limits.max_frame_bytes == 2003 && c.limits.max_in_flight == 1004 &&
            c.limits.max_subscriptions == 1005 && c.limits.backlog_soft_bytes == 2006 &&
            c.limits.slow_timeout_ms == 1007 && c.limits.backlog_hard_bytes == 2008 &&
            c.limits.max_step_count == 1009 && c.limits.hello_timeout_ms == 1010 &&
            c.limits.max_clients_per_peer == 1011 && c.limits.auth_delay_ms == 1012 &&
            c.limits.model_bytes == 2013 && c.limits.model_bodies == 1014 &&
            c.limits.model_joints == 1015,
        "limits");
  CHECK(!c.realtime.sched_fifo && !c.realtime.mlockall && c.realtime.priority == 41 &&
            c.realtime.overrun_burst == 42 && c.realtime.max_lag_ms == 43 &&
            c.realtime.overrun_pause_ms == 44,
        "realtime");
  CHECK(!strcmp(c.record.dir, "/r") && c.record.all && c.record.fsync &&
            c.record.every_k == 51 && c.record.fields == 52 && c.record.queue_frames == 53 &&
            c.record.queue_inputs == 54 && c.record.queue_events == 55 &&
            c.record.test_slow_us == 56,
        "record");
  char want[128];
  snprintf(want, sizeof(want), "%s/f.yaml", dir);
  const cfg_model *m = &c.models[0];
  CHECK(c.nmodel == 1 && !strcmp(m->file, want) && !strcmp(m->name, "n") &&
            m->mode == MODE(LOCKSTEP) && m->rate == 2.5 && m->floating_base &&
            m->balance_inertia && m->no_joint_limits && m->input_timeout_ms == 61 &&
            m->input_hold,
        "model");

  // the options set the keys they name
  char *argv[] = {"partitad", "--listen", "a:1", "--socket", "b", "--udp", "c:2", "--http",
                  "d:3", "--log", "e", "--log-level", "debug", "--web-root", "f",
                  "--record-dir", "g", NULL};
  config_defaults(&c);
  CHECK(config_from_args(&c, 17, argv, err, sizeof(err)) == 0, "args: %s", err);
  CHECK(!strcmp(c.listen, "a:1") && !strcmp(c.socket, "b") && !strcmp(c.udp, "c:2") &&
            !strcmp(c.viewer.http, "d:3") && c.viewer.http_set && !strcmp(c.log_file, "e") &&
            c.log_level == 3 && !strcmp(c.viewer.web_root, "f") && !strcmp(c.record.dir, "g"),
        "options");
  char *argv4[] = {"partitad", "--log-level", "loud", NULL};
  CHECK(config_from_args(&c, 3, argv4, err, sizeof(err)) == -1 &&
            !strcmp(err, "--log-level: error, warn, info or debug"),
        "bad --log-level: %s", err);
  char *argv5[] = {"partitad", "--no-http", NULL};
  CHECK(config_from_args(&c, 2, argv5, err, sizeof(err)) == 0 && !c.viewer.http[0],
        "--no-http");
  unlink(path);
  rmdir(dir);
}

// ---------------------------------------------------------------------------------------------
// The real-time schedule (pace.c) on a made-up clock: a thread that sleeps exactly to each
// deadline and whose steps cost what the test says, so every count below is exact.
#define MS 1000000LL
#define US 1000LL

typedef struct {
  pace p;
  int64_t now;
  int overruns, bursts, resyncs;
} rig;

// One iteration of the simulation thread's real-time loop (sim.c realtime_tick): coarse waits
// until the deadline is near, a sleep to it (no time passes if it is behind), the step.
static int rig_tick(rig *r, int64_t cost, int burst, int64_t max_lag) {
  int64_t coarse;
  while ((coarse = pace_coarse_wait(&r->p, r->now, MS)) != 0)
    r->now = coarse;
  int64_t deadline = pace_deadline(&r->p);
  if (r->now < deadline)
    r->now = deadline;
  r->now += cost;
  int64_t behind;
  int f = pace_step_done(&r->p, r->now, burst, max_lag, &behind);
  r->overruns += (f & PACE_OVERRUN) != 0;
  r->bursts += (f & PACE_BURST) != 0;
  r->resyncs += (f & PACE_RESYNC) != 0;
  CHECK(((f & PACE_OVERRUN) != 0) == (behind > 0), "behind %lld with flags %d",
        (long long)behind, f);
  return f;
}

static void test_pace(void) {
  char err[256];
  // Rates that would overflow the deadline arithmetic, spin the thread, or are not numbers.
  const double bad[] = {1e-13, 1e-300, 0.0, -1.0, 1e5, 1e6, 1.0 / 0.0, 0.0 / 0.0};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    CHECK(pace_check(1e-3, bad[i], err, sizeof(err)) == -1 && strstr(err, "rate"),
          "rate %g refused (%s)", bad[i], err);
  CHECK(pace_check(1e-3, 1.0, err, sizeof(err)) == 0, "1 kHz at rate 1");
  CHECK(pace_check(1e-3, 100.0, err, sizeof(err)) == 0, "10 us per step is the limit");
  CHECK(pace_check(1e-3, 101.0, err, sizeof(err)) == -1 && strstr(err, "100"),
        "under 10 us per step refused, naming the largest rate: %s", err);
  CHECK(pace_check(1e-6, 1.0, err, sizeof(err)) == -1, "dt 1 us cannot run in real time");
  CHECK(pace_check(1.0, 1e-3, err, sizeof(err)) == 0, "1000 s per step is allowed");
  CHECK(pace_check(10.0, 1e-3, err, sizeof(err)) == -1, "over an hour per step refused");

  // Steps of 100 us at 1 kHz: every deadline met, deadlines exactly k ms from the origin.
  rig r = {.now = 5 * MS};
  pace_start(&r.p, r.now, 1e6);
  for (int k = 0; k < 1000; k++) {
    CHECK(pace_deadline(&r.p) == 5 * MS + (int64_t)(k + 1) * MS, "deadline of step %d", k);
    rig_tick(&r, 100 * US, 3, 50 * MS);
  }
  CHECK(r.overruns == 0 && r.p.overruns == 0 && r.p.k == 1000, "on time: %d overruns",
        r.overruns);
  CHECK(r.now == 5 * MS + 1000 * MS + 100 * US, "the clock followed the schedule");

  // One step of 3.5 ms: it and the two steps run back to back after it miss their deadlines
  // (2.5, 1.6 and 0.7 ms behind); the third catches up. No simulated time is lost.
  int64_t k0 = r.p.k;
  rig_tick(&r, 3500 * US, 3, 50 * MS);
  for (int i = 0; i < 10; i++)
    rig_tick(&r, 100 * US, 3, 50 * MS);
  CHECK(r.overruns == 3 && r.p.overruns == 3, "a 3.5 ms hiccup costs 3 overruns, not %d",
        r.overruns);
  CHECK(r.bursts == 1, "three in a row make one burst (%d)", r.bursts);
  CHECK(r.resyncs == 0 && r.p.k == k0 + 11, "no resync, every step taken");
  CHECK(r.p.late_run == 0, "back on schedule");

  // A step of 60 ms with max_lag 50 ms: the schedule restarts from the end of that step.
  rig_tick(&r, 60 * MS, 3, 50 * MS);
  CHECK(r.resyncs == 1 && r.p.resyncs == 1 && r.p.k == 0, "a 59 ms lag resyncs");
  CHECK(pace_deadline(&r.p) == r.now + MS, "the next deadline is one period after the resync");
  int64_t before = r.overruns;
  for (int i = 0; i < 100; i++)
    rig_tick(&r, 100 * US, 3, 50 * MS);
  CHECK(r.overruns == before, "on time again after the resync");

  // A step that costs more than its period every time: each one overruns; bursts are reported
  // once per run of misses, and resyncs keep the lag bounded.
  rig slow = {.now = 0};
  pace_start(&slow.p, 0, 1e6);
  for (int i = 0; i < 1000; i++)
    rig_tick(&slow, 2 * MS, 5, 50 * MS);
  CHECK(slow.overruns == 1000, "every slow step overruns (%d)", slow.overruns);
  CHECK(slow.resyncs == 19, "lag grows 1 ms a step: a resync every 51 steps (%d)",
        slow.resyncs);
  CHECK(slow.bursts == slow.resyncs + 1, "one burst per run of misses (%d)", slow.bursts);
  // The run of misses goes on through the resyncs: 1000 steps of 2 ms, the first miss at the
  // end of the first step, so it has lasted 999 steps of 2 ms and the 19 waits of one period
  // for the first deadline after each resync.
  CHECK(pace_missing_for(&slow.p, slow.now) == 999 * 2 * MS + 19 * MS, "missing for %lld ns",
        (long long)pace_missing_for(&slow.p, slow.now));
  rig_tick(&slow, 100 * US, 5, 50 * MS);
  while (slow.p.late_run)
    rig_tick(&slow, 100 * US, 5, 50 * MS);
  CHECK(pace_missing_for(&slow.p, slow.now) == 0, "an on-time step ends the run");

  // Rate 3 on dt 1 ms: a period of 1/3 ms that is no whole number of nanoseconds; deadlines
  // come from the step count, so they do not drift (within 1 ns after 3 million steps).
  pace p3;
  pace_start(&p3, 0, 1e-3 / 3.0 * 1e9);
  p3.k = 3000000 - 1;
  CHECK(pace_deadline(&p3) == 1000000000000LL, "deadline %lld", (long long)pace_deadline(&p3));

  // The slowest schedule allowed (an hour a step) stays representable for two centuries.
  pace ph;
  pace_start(&ph, 0, PACE_PERIOD_MAX_NS);
  ph.k = 24 * 365 * 200;
  CHECK(pace_deadline(&ph) > 0 && pace_deadline(&ph) == (int64_t)(ph.k + 1) * 3600000000000LL,
        "hourly deadlines after 200 years");

  // Coarse waits: far from the deadline, wait until one slice before it; near it, none.
  pace pc;
  pace_start(&pc, 0, 10e6);
  CHECK(pace_coarse_wait(&pc, 0, MS) == 9 * MS, "coarse wait ends a slice early");
  CHECK(pace_coarse_wait(&pc, 9 * MS, MS) == 0, "within 1.5 slices: sleep to the deadline");
  CHECK(pace_coarse_wait(&pc, 20 * MS, MS) == 0, "behind: no wait");
}

// ---------------------------------------------------------------------------------------------
// UTF-8 checks and repairs of client text, against the definitions of RFC 3629.
static void test_text(void) {
  CHECK(text_utf8_len("a") == 1 && text_utf8_len("\xc3\xa9") == 2, "ASCII, U+00E9");
  CHECK(text_utf8_len("\xe2\x82\xac") == 3 && text_utf8_len("\xf0\x9f\x98\x80") == 4,
        "U+20AC, U+1F600");
  CHECK(text_utf8_len("\xc0\xaf") == 0 && text_utf8_len("\xe0\x80\xaf") == 0, "overlong");
  CHECK(text_utf8_len("\xed\xa0\x80") == 0, "surrogate U+D800");
  CHECK(text_utf8_len("\xf4\x90\x80\x80") == 0, "beyond U+10FFFF");
  CHECK(text_utf8_len("\xc3") == 0 && text_utf8_len("\xe2\x82") == 0, "cut short");
  CHECK(text_utf8_len("\x80") == 0 && text_utf8_len("\xff") == 0, "stray bytes");
  CHECK(text_is_utf8("abc\xc3\xa9\n") && !text_is_utf8("ab\xff"), "is_utf8");
  CHECK(text_is_clean("r\xc3\xa9sum\xc3\xa9") && !text_is_clean("a\tb") &&
            !text_is_clean("a\x7f"), "is_clean");
  char out[16];
  CHECK(!strcmp(text_sanitize(out, sizeof(out), "a\xff\xc3\xa9\xc3"), "a?\xc3\xa9?"),
        "repaired: %s", out);
  // never a character cut by the capacity: 7 x U+00E9 (14 bytes) in 10 bytes keeps 4
  CHECK(!strcmp(text_sanitize(out, 10, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"),
                "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"), "cut at a character boundary");
  CHECK(text_is_utf8(out), "the repair is valid UTF-8");
}

// ---------------------------------------------------------------------------------------------
// The input watchdog on a made-up clock: it trips once after the timeout of silence, not
// before, and an input ends it.
static void test_watchdog(void) {
  watchdog w;
  watchdog_start(&w, 0, 50 * MS);
  CHECK(watchdog_poll(&w, 50 * MS) == WD_NONE, "exactly the timeout is not yet silence");
  CHECK(watchdog_poll(&w, 50 * MS + 1) == WD_TIMEOUT, "trips after the timeout");
  CHECK(watchdog_poll(&w, 60 * MS) == WD_NONE && w.tripped, "trips once");
  CHECK(watchdog_input(&w, 70 * MS) == WD_RESUMED && !w.tripped, "an input resumes it");
  CHECK(watchdog_input(&w, 80 * MS) == WD_NONE, "later inputs are ordinary");
  CHECK(watchdog_poll(&w, 130 * MS) == WD_NONE, "50 ms after the last input: not yet");
  CHECK(watchdog_poll(&w, 131 * MS) == WD_TIMEOUT, "then it trips again");
  // A 1 kHz model polled before each step trips at the first step after the timeout.
  watchdog_start(&w, 0, 20 * MS);
  int trip_step = -1;
  for (int k = 1; k <= 100 && trip_step < 0; k++)
    if (watchdog_poll(&w, k * MS) == WD_TIMEOUT)
      trip_step = k;
  CHECK(trip_step == 21, "tripped at step %d (timeout 20 ms, 1 ms steps)", trip_step);
  watchdog_start(&w, 0, 0);
  CHECK(watchdog_poll(&w, 1000000 * MS) == WD_NONE, "timeout 0: off");
}

int main(void) {
  test_spsc();
  test_hist();
  test_pace();
  test_watchdog();
  test_text();
  test_config();
  test_config_every_key();
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("daemon internals: all checks passed\n");
  return 0;
}
