// record.c: recording a live model (record.h, docs/recording.md).
#define _GNU_SOURCE   // pthread_setname_np
#include "record.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "log.h"
#include "recording.h"
#include "server.h"

#define STATUS(x) PARTITA__V1__STATUS__CODE__##x
#define REC_FIELDS_DEFAULT (FIELD_ALL & ~FIELD_BODIES)   // what replay compares
#define POLL_MS 10            // the loop's look at a recording (duration, end)
#define WRITER_IDLE_NS 2000000
#define FLUSH_NS 1000000000   // the writer flushes at least once a second

enum { R_STARTING, R_ACTIVE, R_STOP, R_DONE };   // recorder.state

typedef struct {
  uint64_t seq;
  uint32_t kind;              // RecordedInput.Kind
  int32_t n, npos, nvel;      // e[0..n) inputs, then npos coordinates, then nvel rates
  int64_t step, wall_ns;
  double time;
  uint64_t session, sequence;
  input_entry e[];            // (ni + 2 nc)
} rec_in;

typedef struct {
  uint64_t seq;
  sim_event ev;
} rec_ev;

struct recorder {
  sim *s;
  char path[PATH_MAX];
  rec_writer *w;                    // the writer thread's
  spsc states, inputs, events;      // sim -> writer
  size_t state_size, input_size;
  uint32_t every_k, fields;
  int slow_us;                      // testing: the writer sleeps this long per state frame
  atomic_int state;                 // R_*
  atomic_int writer_done;
  atomic_int overflow;              // the input ring was full: the recording ended there
  uint32_t seq;                     // simulation thread: the next sequence number
  atomic_uint_fast64_t nstate, ndropped, ninput, nevent, bytes;
  char error[400];                  // the writer's, set before writer_done
  pthread_t writer;
  int writer_started;
  // loop thread
  uv_timer_t timer;
  uint64_t stop_at_ms;              // 0: no duration
  int stopping;
};

// The last recording of a model, kept for GetRecording after it ended.
typedef struct {
  char path[PATH_MAX];
  uint64_t nstate, ndropped, ninput, nevent, bytes;
  uint32_t every_k, fields;
  char error[400];
} rec_last;

static recorder *current(sim *s) {
  return atomic_load_explicit(&s->rec, memory_order_acquire);
}

static uint64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static int64_t wall_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

// ---------------------------------------------------------------------------------------------
// Simulation thread. Nothing here allocates or waits: a ring slot or nothing.

static void put_state(sim *s, recorder *r) {
  uint64_t seq = r->seq++;
  uint64_t *slot = spsc_claim(&r->states);
  if (!slot) {
    atomic_fetch_add_explicit(&r->ndropped, 1, memory_order_relaxed);
    return;
  }
  *slot = seq;
  sim_fill_snap(s, (snap_hdr *)(slot + 1), r->fields);
  spsc_publish(&r->states);
}

// A slot for an input change, or NULL after ending the recording (ring full).
static rec_in *claim_input(sim *s, recorder *r, uint32_t kind) {
  rec_in *in = spsc_claim(&r->inputs);
  if (!in) {
    atomic_store(&r->overflow, 1);
    atomic_store(&r->state, R_DONE);   // the file ends before the change it could not keep
    return NULL;
  }
  memset(in, 0, sizeof(*in));
  in->seq = r->seq++;
  in->kind = kind;
  in->step = pt_nstep(s->d);
  in->time = pt_time(s->d);
  in->wall_ns = wall_now();
  return in;
}

static recorder *active(sim *s) {
  recorder *r = current(s);
  if (!r)
    return NULL;
  int st = atomic_load_explicit(&r->state, memory_order_acquire);
  if (st == R_STOP) {
    atomic_store(&r->state, R_DONE);
    return NULL;
  }
  return st == R_ACTIVE ? r : NULL;
}

void record_tick(sim *s) {
  recorder *r = current(s);
  if (!r)
    return;
  int st = atomic_load_explicit(&r->state, memory_order_acquire);
  if (st == R_STARTING) {
    put_state(s, r);   // the state the recording starts from
    atomic_store(&r->state, R_ACTIVE);
  } else if (st == R_STOP) {
    atomic_store(&r->state, R_DONE);
  }
}

void record_after_step(sim *s) {
  recorder *r = active(s);
  if (r && pt_nstep(s->d) % r->every_k == 0)
    put_state(s, r);
}

void record_state_now(sim *s) {
  recorder *r = active(s);
  if (r)
    put_state(s, r);
}

void record_input(sim *s, const input_rec *rec) {
  recorder *r = active(s);
  rec_in *in = r ? claim_input(s, r, PARTITA__V1__RECORDED_INPUT__KIND__INPUTS) : NULL;
  if (!in)
    return;
  in->session = rec->session;
  in->sequence = rec->seq;
  in->n = rec->n;
  memcpy(in->e, rec->e, sizeof(input_entry) * (size_t)rec->n);
  spsc_publish(&r->inputs);
}

void record_watchdog(sim *s, int zeroed) {
  recorder *r = active(s);
  rec_in *in = r ? claim_input(s, r, PARTITA__V1__RECORDED_INPUT__KIND__WATCHDOG) : NULL;
  if (!in)
    return;
  for (int i = 0; zeroed && i < s->ni; i++)
    in->e[in->n++] = (input_entry){i, 0.0};
  spsc_publish(&r->inputs);
}

void record_reset(sim *s) {
  recorder *r = active(s);
  rec_in *in = r ? claim_input(s, r, PARTITA__V1__RECORDED_INPUT__KIND__RESET) : NULL;
  if (in)
    spsc_publish(&r->inputs);
}

void record_set_state(sim *s, const pt_assign *pos, int npos, const pt_assign *vel,
                      int nvel) {
  recorder *r = active(s);
  rec_in *in = r ? claim_input(s, r, PARTITA__V1__RECORDED_INPUT__KIND__SET_STATE) : NULL;
  if (!in)
    return;
  for (int i = 0; i < npos && i < s->nc; i++)
    in->e[in->npos++] = (input_entry){pos[i].coord, pos[i].value};
  for (int i = 0; i < nvel && i < s->nc; i++)
    in->e[in->npos + in->nvel++] = (input_entry){vel[i].coord, vel[i].value};
  spsc_publish(&r->inputs);
}

void record_event(sim *s, const sim_event *ev) {
  recorder *r = active(s);
  if (!r)
    return;
  rec_ev *e = spsc_claim(&r->events);
  uint64_t seq = r->seq++;
  if (!e)
    return;   // events are reported to subscribers and logged too; a full ring skips one here
  e->seq = seq;
  e->ev = *ev;
  spsc_publish(&r->events);
}

// ---------------------------------------------------------------------------------------------
// Writer thread.

static uint64_t head_seq(spsc *q) {
  uint64_t *p = spsc_peek(q);
  return p ? *p : UINT64_MAX;
}

static int write_state(recorder *r, uint64_t *slot) {
  snap_hdr *h = (snap_hdr *)(slot + 1);
  state_msg sm;
  state_build(&sm, r->s, h, h->fields, 0);
  sm.f.sequence = atomic_load_explicit(&r->nstate, memory_order_relaxed);
  int rc = rec_write_state(r->w, (uint32_t)*slot, (uint64_t)h->wall_ns, &sm.f);
  state_release(&sm);
  atomic_fetch_add_explicit(&r->nstate, 1, memory_order_relaxed);
  if (r->slow_us > 0) {   // testing: a disk that cannot keep up
    struct timespec ts = {r->slow_us / 1000000, (long)(r->slow_us % 1000000) * 1000};
    nanosleep(&ts, NULL);
  }
  return rc;
}

static int write_input(recorder *r, rec_in *in) {
  sim *s = r->s;
  Partita__V1__RecordedInput m = PARTITA__V1__RECORDED_INPUT__INIT;
  size_t na = (size_t)(in->npos + in->nvel);
  uint32_t *idx = calloc((size_t)in->n + 1, sizeof(*idx));
  double *val = calloc((size_t)in->n + 1, sizeof(*val));
  Partita__V1__IndexedValue *iv = calloc(na + 1, sizeof(*iv));
  Partita__V1__IndexedValue **ivp = calloc(na + 1, sizeof(*ivp));
  int rc = -1;
  if (idx && val && iv && ivp) {
    m.model = s->name;
    m.kind = (Partita__V1__RecordedInput__Kind)in->kind;
    m.step = in->step;
    m.time = in->time;
    m.session = in->session;
    m.sequence = in->sequence;
    m.wall_time_ns = in->wall_ns;
    for (int i = 0; i < in->n; i++) {
      idx[i] = (uint32_t)in->e[i].index;
      val[i] = in->e[i].value;
    }
    m.n_index = m.n_values = (size_t)in->n;
    m.index = idx;
    m.values = val;
    for (size_t i = 0; i < na; i++) {
      Partita__V1__IndexedValue v = PARTITA__V1__INDEXED_VALUE__INIT;
      v.index = (uint32_t)in->e[i].index;
      v.value = in->e[i].value;
      iv[i] = v;
      ivp[i] = &iv[i];
    }
    m.n_coordinates = (size_t)in->npos;
    m.coordinates = ivp;
    m.n_rates = (size_t)in->nvel;
    m.rates = ivp + in->npos;
    atomic_fetch_add_explicit(&r->ninput, 1, memory_order_relaxed);
    rc = rec_write_input(r->w, (uint32_t)in->seq, (uint64_t)in->wall_ns, &m);
  }
  free(idx);
  free(val);
  free(iv);
  free(ivp);
  return rc;
}

static int write_event(recorder *r, rec_ev *e) {
  Partita__V1__ModelEvent m = PARTITA__V1__MODEL_EVENT__INIT;
  m.model = r->s->name;
  m.kind = (Partita__V1__ModelEvent__Kind)e->ev.kind;
  m.message = e->ev.msg;
  m.time = e->ev.time;
  m.step = e->ev.step;
  m.code = e->ev.code < 0 ? STATUS(MODEL_ERROR) : STATUS(OK);
  atomic_fetch_add_explicit(&r->nevent, 1, memory_order_relaxed);
  return rec_write_event(r->w, (uint32_t)e->seq, (uint64_t)wall_now(), &m);
}

// Writes every record waiting, oldest sequence first. Returns how many, -1 on a write error.
static long drain(recorder *r) {
  long n = 0;
  for (;;) {
    uint64_t a = head_seq(&r->states), b = head_seq(&r->inputs), c = head_seq(&r->events);
    int rc;
    if (a == UINT64_MAX && b == UINT64_MAX && c == UINT64_MAX)
      return n;
    if (a <= b && a <= c) {
      rc = write_state(r, spsc_peek(&r->states));
      spsc_release(&r->states);
    } else if (b <= c) {
      rc = write_input(r, spsc_peek(&r->inputs));
      spsc_release(&r->inputs);
    } else {
      rc = write_event(r, spsc_peek(&r->events));
      spsc_release(&r->events);
    }
    if (rc < 0)
      return -1;
    n++;
  }
}

static void *writer_main(void *arg) {
  recorder *r = arg;
  char name[16];
  snprintf(name, sizeof(name), "rec:%.11s", r->s->name);
  pthread_setname_np(pthread_self(), name);
  struct timespec last;
  clock_gettime(CLOCK_MONOTONIC, &last);
  int dirty = 0, failed = 0;
  for (;;) {
    int done = atomic_load(&r->state) == R_DONE;   // read before draining: nothing comes after
    long n = failed ? 0 : drain(r);
    if (n < 0) {
      snprintf(r->error, sizeof(r->error), "%s", rec_writer_error(r->w));
      log_error("model %s: recording %s: %s; recording ended", r->s->name, r->path, r->error);
      failed = 1;
      atomic_store(&r->state, R_STOP);   // the simulation stops producing
    }
    if (failed) {   // keep the rings empty until the simulation thread lets go
      while (spsc_peek(&r->states))
        spsc_release(&r->states);
      while (spsc_peek(&r->inputs))
        spsc_release(&r->inputs);
      while (spsc_peek(&r->events))
        spsc_release(&r->events);
    }
    if (done)
      break;
    dirty |= n > 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t since = (int64_t)(now.tv_sec - last.tv_sec) * 1000000000 + now.tv_nsec - last.tv_nsec;
    if (dirty && !failed && since > FLUSH_NS) {
      rec_writer_flush(r->w);
      last = now;
      dirty = 0;
    }
    atomic_store_explicit(&r->bytes, rec_writer_bytes(r->w), memory_order_relaxed);
    if (n == 0) {
      struct timespec ts = {0, WRITER_IDLE_NS};
      nanosleep(&ts, NULL);
    }
  }
  char ns[24], nd[24], ni[24], ne[24], err[300];
  snprintf(ns, sizeof(ns), "%llu", (unsigned long long)atomic_load(&r->nstate));
  snprintf(nd, sizeof(nd), "%llu", (unsigned long long)atomic_load(&r->ndropped));
  snprintf(ni, sizeof(ni), "%llu", (unsigned long long)atomic_load(&r->ninput));
  snprintf(ne, sizeof(ne), "%llu", (unsigned long long)atomic_load(&r->nevent));
  const char *result = failed ? "write error"
                       : atomic_load(&r->overflow)
                           ? "ended: the input ring was full (the writer could not keep up)"
                           : "completed";
  const char *kv[] = {"state_frames", ns, "dropped_frames", nd, "inputs", ni,
                      "events", ne, "result", result};
  uint64_t bytes = rec_writer_bytes(r->w);
  if (failed) {
    rec_writer_abandon(r->w);
  } else if (rec_writer_close(r->w, kv, 5, err, sizeof(err)) < 0) {
    snprintf(r->error, sizeof(r->error), "%.300s", err);
    log_error("model %s: recording %s: %s", r->s->name, r->path, err);
  } else {
    struct stat st;
    bytes = stat(r->path, &st) == 0 ? (uint64_t)st.st_size : bytes;
  }
  r->w = NULL;
  atomic_store(&r->bytes, bytes);
  atomic_store(&r->writer_done, 1);
  return NULL;
}

// ---------------------------------------------------------------------------------------------
// Loop thread.

static void free_recorder(recorder *r) {
  spsc_free(&r->states);
  spsc_free(&r->inputs);
  spsc_free(&r->events);
  free(r);
}

static void on_timer_closed(uv_handle_t *h) { free_recorder(h->data); }

static void keep_last(sim *s, recorder *r) {
  rec_last *l = s->rec_last ? s->rec_last : calloc(1, sizeof(rec_last));
  if (!l)
    return;
  snprintf(l->path, sizeof(l->path), "%s", r->path);
  l->nstate = atomic_load(&r->nstate);
  l->ndropped = atomic_load(&r->ndropped);
  l->ninput = atomic_load(&r->ninput);
  l->nevent = atomic_load(&r->nevent);
  l->bytes = atomic_load(&r->bytes);
  l->every_k = r->every_k;
  l->fields = r->fields;
  if (r->error[0])
    memcpy(l->error, r->error, sizeof(l->error));
  else if (atomic_load(&r->overflow))
    snprintf(l->error, sizeof(l->error), "the input ring was full (the writer could not keep "
             "up): the recording ended there");
  else
    l->error[0] = '\0';
  s->rec_last = l;
}

// The writer has finished: join it, keep the counts, free the recorder.
static void finish(sim *s, recorder *r) {
  pthread_join(r->writer, NULL);
  keep_last(s, r);
  log_info("model %s: recording %s ended: %llu state frames (%llu dropped), %llu inputs, "
           "%llu events, %llu bytes", s->name, r->path,
           (unsigned long long)atomic_load(&r->nstate),
           (unsigned long long)atomic_load(&r->ndropped),
           (unsigned long long)atomic_load(&r->ninput),
           (unsigned long long)atomic_load(&r->nevent),
           (unsigned long long)atomic_load(&r->bytes));
  atomic_store(&s->rec, NULL);
  uv_timer_stop(&r->timer);
  uv_close((uv_handle_t *)&r->timer, on_timer_closed);
  sim_unref(s);
}

static void request_stop(sim *s, recorder *r) {
  if (r->stopping)
    return;
  r->stopping = 1;
  int st = atomic_load(&r->state);
  while ((st == R_STARTING || st == R_ACTIVE) &&
         !atomic_compare_exchange_weak(&r->state, &st, R_STOP)) {
  }
  sem_post(&s->wake);   // a paused model's thread looks at it now
}

static void on_timer(uv_timer_t *t) {
  recorder *r = t->data;
  sim *s = r->s;
  if (r->stop_at_ms && now_ms() >= r->stop_at_ms)
    request_stop(s, r);
  if (atomic_load(&r->state) == R_DONE || atomic_load(&r->overflow))
    r->stopping = 1;
  if (atomic_load(&r->writer_done))
    finish(s, r);
}

// PATH inside the record directory: refused when it climbs out or already exists.
static int resolve_path(const config *cfg, const char *path, char *out, size_t cap, char *err,
                        size_t errlen) {
  const char *dir = cfg->record.dir;
  char rdir[PATH_MAX];
  if (!dir[0]) {   // a client must not be able to fill any disk the daemon can write to
    snprintf(err, errlen, "recording is off: the daemon has no record directory (config "
             "record.dir, or --record-dir DIR)");
    return STATUS(FAILED_PRECONDITION);
  }
  if (!realpath(dir, rdir)) {
    snprintf(err, errlen, "record directory %s: %s", dir, strerror(errno));
    return STATUS(FAILED_PRECONDITION);
  }
  if (!path[0] || strlen(path) >= 1024) {
    snprintf(err, errlen, "Record: path must be 1-1023 bytes");
    return STATUS(INVALID_ARGUMENT);
  }
  for (const char *p = path; *p; p++) {
    if ((p == path || p[-1] == '/') && p[0] == '.' && p[1] == '.' && (!p[2] || p[2] == '/')) {
      snprintf(err, errlen, "Record: '..' is not allowed in the path");
      return STATUS(INVALID_ARGUMENT);
    }
  }
  int n;
  if (path[0] == '/') {
    size_t k = strlen(rdir);
    if (strncmp(path, rdir, k) != 0 || (path[k] != '/' && strcmp(rdir, "/") != 0)) {
      snprintf(err, errlen, "Record: %.200s is outside the record directory %.200s", path, rdir);
      return STATUS(INVALID_ARGUMENT);
    }
    n = snprintf(out, cap, "%s", path);
  } else {
    n = snprintf(out, cap, "%s/%s", rdir, path);
  }
  if (n < 0 || (size_t)n >= cap) {
    snprintf(err, errlen, "Record: path too long");
    return STATUS(INVALID_ARGUMENT);
  }
  struct stat st;
  if (stat(out, &st) == 0) {
    snprintf(err, errlen, "Record: %s exists (recordings are never overwritten)", out);
    return STATUS(ALREADY_EXISTS);
  }
  return STATUS(OK);
}

// Creates the recorder, its file and its writer; the simulation thread starts it at its next
// step boundary. A Partita status code.
static int start(sim *s, uv_loop_t *loop, const char *full, uint32_t every_k, uint32_t fields,
                 double duration, char *err, size_t errlen) {
  const config *cfg = s->cfg;
  const rec_source *src = s->rec_src;
  if (current(s)) {
    snprintf(err, errlen, "model %s is already recording", s->name);
    return STATUS(ALREADY_EXISTS);
  }
  if (!src) {
    snprintf(err, errlen, "model %s: its text was not kept at load", s->name);
    return STATUS(FAILED_PRECONDITION);
  }
  recorder *r = calloc(1, sizeof(*r));
  if (!r) {
    snprintf(err, errlen, "out of memory");
    return STATUS(RESOURCE_EXHAUSTED);
  }
  r->s = s;
  snprintf(r->path, sizeof(r->path), "%s", full);
  r->every_k = every_k ? every_k : 1;
  r->fields = (fields ? fields : REC_FIELDS_DEFAULT) & FIELD_ALL;
  r->slow_us = cfg->record.test_slow_us;
  r->state_size = sizeof(uint64_t) + s->snap_size;
  r->input_size = sizeof(rec_in) + sizeof(input_entry) * (size_t)(s->ni + 2 * s->nc + 1);
  size_t nstates = cfg->record.queue_frames > 0 ? (size_t)cfg->record.queue_frames : 4096;
  size_t ninputs = cfg->record.queue_inputs > 0 ? (size_t)cfg->record.queue_inputs : 65536;
  if (spsc_init(&r->states, r->state_size, nstates) ||
      spsc_init(&r->inputs, r->input_size, ninputs) ||
      spsc_init(&r->events, sizeof(rec_ev), 256)) {
    free_recorder(r);
    snprintf(err, errlen, "out of memory for the recording's rings");
    return STATUS(RESOURCE_EXHAUSTED);
  }
  const pt_model *m = s->m;
  int nb = pt_model_nbody(m);
  const char **bodies = calloc((size_t)nb + 1, sizeof(char *));
  for (int i = 0; bodies && i < nb; i++)
    bodies[i] = pt_body_name(m, i);
  rec_info in = {.model = s->name, .text = src->text, .text_len = src->len,
                 .source_name = src->source, .format = src->format,
                 .floating_base = src->floating_base, .dt = pt_model_dt(m),
                 .integrator = pt_integrator_name(pt_model_integrator(m)),
                 .every_k = r->every_k, .fields = r->fields, .time_base = "wall",
                 .start_step = atomic_load(&s->pub_step), .coord_names = s->coord_names,
                 .nc = s->nc, .input_names = s->input_names, .ni = s->ni,
                 .body_names = bodies, .nb = bodies ? nb : 0,
                 .library = "partitad " PT_VERSION, .fsync_chunks = cfg->record.fsync};
  r->w = rec_writer_open(full, &in, err, errlen);
  free(bodies);
  if (!r->w) {
    free_recorder(r);
    return STATUS(FAILED_PRECONDITION);
  }
  atomic_init(&r->state, R_STARTING);
  if (pthread_create(&r->writer, NULL, writer_main, r)) {
    rec_writer_abandon(r->w);
    free_recorder(r);
    snprintf(err, errlen, "could not start the recording's writer thread");
    return STATUS(INTERNAL);
  }
  r->writer_started = 1;
  uv_timer_init(loop, &r->timer);
  r->timer.data = r;
  uv_timer_start(&r->timer, on_timer, POLL_MS, POLL_MS);
  if (duration > 0)
    r->stop_at_ms = now_ms() + (uint64_t)(duration * 1000.0);
  sim_ref(s);   // the model stays allocated while its recording finishes
  atomic_store_explicit(&s->rec, r, memory_order_release);
  sem_post(&s->wake);
  log_info("model %s: recording to %s (every %u steps, fields %u)", s->name, full, r->every_k,
           r->fields);
  return STATUS(OK);
}

static int text_format(const char *path, const char *text) {
  const char *dot = strrchr(path, '.');
  if (dot && (strcmp(dot, ".urdf") == 0 || strcmp(dot, ".xml") == 0))
    return 2;
  while (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r')
    text++;
  return *text == '<' ? 2 : 1;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *s = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? 2 * cap : 16384;
      char *t = realloc(s, cap + 1);
      if (!t)
        break;
      s = t;
    }
    size_t k = fread(s + n, 1, cap - n, f);
    n += k;
    if (k == 0)
      break;
  }
  fclose(f);
  if (s) {
    s[n] = '\0';
    *len = n;
  }
  return s;
}

void record_on_load(sim *s, const sim_opts *o, uv_loop_t *loop) {
  rec_source *src = calloc(1, sizeof(*src));
  if (!src)
    return;
  if (o->src_text) {
    src->text = malloc(o->src_len + 1);
    if (src->text) {
      memcpy(src->text, o->src_text, o->src_len);
      src->text[o->src_len] = '\0';
      src->len = o->src_len;
    }
  } else if (o->src_file) {
    src->text = read_file(o->src_file, &src->len);
  }
  if (!src->text) {
    free(src);
    log_warn("model %s: its text is not available: it cannot be recorded", s->name);
    return;
  }
  const char *name = o->src_name ? o->src_name : o->src_file ? o->src_file : "<LoadModel>";
  snprintf(src->source, sizeof(src->source), "%s", name);
  src->format = o->src_format ? o->src_format : text_format(name, src->text);
  src->floating_base = o->floating_base;
  s->rec_src = src;
  if (s->cfg->record.all) {
    char file[600], full[PATH_MAX], err[400];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    int rc = STATUS(ALREADY_EXISTS);
    for (int k = 1; k < 100 && rc == STATUS(ALREADY_EXISTS); k++) {   // the same second: -2..
      char suffix[8] = "";
      if (k > 1)
        snprintf(suffix, sizeof(suffix), "-%d", k);
      snprintf(file, sizeof(file), "%s-%04d%02d%02dT%02d%02d%02dZ%s.mcap", s->name,
               tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
               tm.tm_sec, suffix);
      rc = resolve_path(s->cfg, file, full, sizeof(full), err, sizeof(err));
    }
    if (rc == STATUS(OK))
      rc = start(s, loop, full, s->cfg->record.every_k, s->cfg->record.fields, 0, err,
                 sizeof(err));
    if (rc != STATUS(OK))
      log_error("model %s: recording from load: %s", s->name, err);
  }
}

void record_on_unload(sim *s) {
  recorder *r = current(s);
  if (!r)
    return;
  // the model's thread is gone: nothing more comes; let the writer finish and wait for it
  atomic_store(&r->state, R_DONE);
  while (!atomic_load(&r->writer_done)) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  finish(s, r);
}

void record_free(sim *s) {
  rec_source *src = s->rec_src;
  if (src)
    free(src->text);
  free(src);
  free(s->rec_last);
  s->rec_src = NULL;
  s->rec_last = NULL;
}

// ---------------------------------------------------------------------------------------------
// Record, StopRecording, GetRecording.

static void reply_record(conn *c, uint64_t id, sim *s) {
  Partita__V1__RecordStatus st = PARTITA__V1__RECORD_STATUS__INIT;
  pb_response resp = PARTITA__V1__RESPONSE__INIT;
  recorder *r = current(s);
  rec_last *l = s->rec_last;
  st.model = s->name;
  if (r) {
    st.path = r->path;
    st.active = 1;
    st.state_frames = atomic_load(&r->nstate);
    st.dropped_frames = atomic_load(&r->ndropped);
    st.inputs = atomic_load(&r->ninput);
    st.events = atomic_load(&r->nevent);
    st.bytes = atomic_load(&r->bytes);
    st.every_k = r->every_k;
    st.fields = r->fields;
  } else if (l) {
    st.path = l->path;
    st.state_frames = l->nstate;
    st.dropped_frames = l->ndropped;
    st.inputs = l->ninput;
    st.events = l->nevent;
    st.bytes = l->bytes;
    st.every_k = l->every_k;
    st.fields = l->fields;
    st.error = l->error;
  }
  resp.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_RECORD_STATUS;
  resp.record_status = &st;
  reply(c, id, &resp);
}

void record_request(conn *c, Partita__V1__Request *q, sim *s) {
  char err[600];
  if (q->op_case == PARTITA__V1__REQUEST__OP_RECORD) {
    const Partita__V1__Record *rq = q->record;
    char full[PATH_MAX];
    if (!(rq->duration >= 0 && rq->duration <= 1e7)) {
      reply_status(c, q->id, STATUS(INVALID_ARGUMENT), "Record: duration must be in [0, 1e7] s");
      return;
    }
    if (rq->fields > FIELD_ALL) {
      reply_status(c, q->id, STATUS(INVALID_ARGUMENT), "Record: unknown field bits %u",
                   rq->fields);
      return;
    }
    if (current(s)) {
      reply_status(c, q->id, STATUS(ALREADY_EXISTS), "model %s is already recording to %s",
                   s->name, current(s)->path);
      return;
    }
    int rc = resolve_path(s->cfg, rq->path, full, sizeof(full), err, sizeof(err));
    if (rc == STATUS(OK))
      rc = start(s, c->srv->loop, full, rq->every_k, rq->fields, rq->duration, err,
                 sizeof(err));
    if (rc != STATUS(OK)) {
      reply_status(c, q->id, rc, "%s", err);
      return;
    }
  } else if (q->op_case == PARTITA__V1__REQUEST__OP_STOP_RECORDING) {
    recorder *r = current(s);
    if (!r) {
      reply_status(c, q->id, STATUS(FAILED_PRECONDITION), "model %s is not recording",
                   s->name);
      return;
    }
    request_stop(s, r);
  }
  reply_record(c, q->id, s);
}
