// record.c: recording a live model (record.h, docs/recording.md): the loop thread's side:
// starting (Record, record.all) and stopping (StopRecording, the duration, unload) a
// recording, its end, and its counts for GetRecording. The simulation thread's side is
// record_sim.c, the writer thread record_writer.c.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "ptb_fields.h"
#include "record/record_impl.h"

#define REC_FIELDS_DEFAULT (PTB_FIELD_ALL & ~PTB_FIELD_BODIES)   // what replay compares
#define POLL_MS 10            // the loop's look at a recording (duration, end)

// The counts of a model's last recording, kept for GetRecording after it ended.
struct rec_last {
  char path[PATH_MAX];
  uint64_t nstate, ndropped, ninput, nevent, ndropped_events, bytes;
  uint32_t every_k, fields;
  char error[400];
};

static uint64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
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

static void keep_last(rec_model *rm, recorder *r) {
  rec_last *l = rm->last ? rm->last : calloc(1, sizeof(rec_last));
  if (!l)
    return;
  snprintf(l->path, sizeof(l->path), "%s", r->path);
  l->nstate = atomic_load(&r->nstate);
  l->ndropped = atomic_load(&r->ndropped);
  l->ninput = atomic_load(&r->ninput);
  l->nevent = atomic_load(&r->nevent);
  l->ndropped_events = atomic_load(&r->ndropped_events);
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
  rm->last = l;
}

// The writer has finished: join it, keep the counts, free the recorder.
static void finish(sim *s, recorder *r) {
  pthread_join(r->writer, NULL);
  keep_last(r->rm, r);
  log_info("model %s: recording %s ended: %llu state frames (%llu dropped), %llu inputs, "
           "%llu events (%llu dropped), %llu bytes", s->name, r->path,
           (unsigned long long)atomic_load(&r->nstate),
           (unsigned long long)atomic_load(&r->ndropped),
           (unsigned long long)atomic_load(&r->ninput),
           (unsigned long long)atomic_load(&r->nevent),
           (unsigned long long)atomic_load(&r->ndropped_events),
           (unsigned long long)atomic_load(&r->bytes));
  atomic_store_explicit(&s->tap, NULL, memory_order_release);
  r->rm->cur = NULL;
  uv_timer_stop(&r->timer);
  if (r->waiter)   // an UnloadModel waiting for the file to be complete
    r->waiter->done(r->waiter);
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
  sim_wake(s);   // a paused model's thread looks at it now
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
static int start(rec_model *rm, sim *s, uv_loop_t *loop, const char *full, uint32_t every_k,
                 uint32_t fields, double duration, char *err, size_t errlen) {
  const config *cfg = s->cfg;
  const rec_source *src = rm->src;
  if (rm->cur) {
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
  r->tap.ops = &record_tap_ops;
  r->s = s;
  r->rm = rm;
  snprintf(r->path, sizeof(r->path), "%s", full);
  r->every_k = every_k ? every_k : 1;
  r->fields = (fields ? fields : REC_FIELDS_DEFAULT) & PTB_FIELD_ALL;
  r->slow_us = cfg->record.test_slow_us;
  r->state_size = sizeof(uint64_t) + s->snap_size;
  r->input_size = sizeof(rec_in) + sizeof(input_entry) * (size_t)(s->ni + 2 * s->nc + s->nx +
                                                                  s->npar + 1);
  size_t nstates = cfg->record.queue_frames > 0 ? (size_t)cfg->record.queue_frames : 4096;
  size_t ninputs = cfg->record.queue_inputs > 0 ? (size_t)cfg->record.queue_inputs : 65536;
  size_t nevents = cfg->record.queue_events > 0 ? (size_t)cfg->record.queue_events : 256;
  if (spsc_init(&r->states, r->state_size, nstates) ||
      spsc_init(&r->inputs, r->input_size, ninputs) ||
      spsc_init(&r->events, sizeof(rec_ev), nevents)) {
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
                 .floating_base = src->floating_base,
                 .balance_inertia = src->balance_inertia,
                 .no_joint_limits = src->no_joint_limits,
                 .ground_plane = src->ground_plane, .ground_z = src->ground_z,
                 .dt = pt_model_dt(m),
                 .integrator = pt_integrator_name(pt_model_integrator(m)),
                 .every_k = r->every_k, .fields = r->fields, .time_base = "wall",
                 .start_step = atomic_load(&s->pub_step), .coord_names = s->coord_names,
                 .nc = s->nc, .input_names = s->input_names, .ni = s->ni,
                 .body_names = bodies, .nb = bodies ? nb : 0,
                 .ctl_names = s->ctl_names, .nx = s->nx, .signal_names = s->signal_names,
                 .nsig = s->nsig,
                 .library = "partitad " PT_VERSION, .fsync_chunks = cfg->record.fsync};
  r->w = rec_writer_open(full, &in, err, errlen);
  free(bodies);
  if (!r->w) {
    free_recorder(r);
    return STATUS(FAILED_PRECONDITION);
  }
  atomic_init(&r->state, R_STARTING);
  if (pthread_create(&r->writer, NULL, record_writer_main, r)) {
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
  rm->cur = r;
  atomic_store_explicit(&s->tap, &r->tap, memory_order_release);
  sim_wake(s);
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

void record_on_load(rec_model *rm, sim *s, const rec_origin *o, uv_loop_t *loop) {
  rec_source *src = calloc(1, sizeof(*src));
  if (!src)
    return;
  if (o->text) {
    src->text = malloc(o->len + 1);
    if (src->text) {
      memcpy(src->text, o->text, o->len);
      src->text[o->len] = '\0';
      src->len = o->len;
    }
  }
  if (!src->text) {
    free(src);
    log_warn("model %s: its text is not available: it cannot be recorded", s->name);
    return;
  }
  const char *name = o->name ? o->name : "<LoadModel>";
  snprintf(src->source, sizeof(src->source), "%s", name);
  src->format = o->format ? o->format : text_format(name, src->text);
  src->floating_base = o->floating_base;
  src->balance_inertia = o->balance_inertia;
  src->no_joint_limits = o->no_joint_limits;
  src->ground_plane = o->ground_plane;
  src->ground_z = o->ground_z;
  rm->src = src;
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
      rc = start(rm, s, loop, full, s->cfg->record.every_k, s->cfg->record.fields, 0, err,
                 sizeof(err));
    if (rc != STATUS(OK))
      log_error("model %s: recording from load: %s", s->name, err);
  }
}

int record_on_unload(rec_model *rm, rec_waiter *w) {
  recorder *r = rm->cur;
  if (!r)
    return 0;
  // the model's thread is gone: nothing more comes; the writer drains the rings, ends the
  // file and sets writer_done, which on_timer (every POLL_MS) sees and finishes
  atomic_store(&r->state, R_DONE);
  r->stopping = 1;
  if (!w || r->waiter)
    return 0;
  r->waiter = w;
  return 1;
}

void record_on_unload_wait(rec_model *rm) {
  recorder *r = rm->cur;
  if (!r)
    return;
  atomic_store(&r->state, R_DONE);
  while (!atomic_load(&r->writer_done)) {   // the thread never ran: a header and one frame
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  finish(r->s, r);
}

void record_release(rec_model *rm) {
  rec_source *src = rm->src;
  if (src)
    free(src->text);
  free(src);
  free(rm->last);
  rm->src = NULL;
  rm->last = NULL;
}

// ---------------------------------------------------------------------------------------------
// Record, StopRecording, GetRecording.

int record_start(rec_model *rm, sim *s, uv_loop_t *loop, const char *path, uint32_t every_k,
                 uint32_t fields, double duration, char *err, size_t errlen) {
  char full[PATH_MAX];
  int rc = resolve_path(s->cfg, path, full, sizeof(full), err, errlen);
  if (rc == STATUS(OK))
    rc = start(rm, s, loop, full, every_k, fields, duration, err, errlen);
  return rc;
}

int record_stop(rec_model *rm) {
  recorder *r = rm->cur;
  if (!r)
    return -1;
  request_stop(r->s, r);
  return 0;
}

const char *record_path(const rec_model *rm) { return rm->cur ? rm->cur->path : NULL; }

void record_status(const rec_model *rm, sim *s, Partita__V1__RecordStatus *st) {
  const recorder *r = rm->cur;
  const rec_last *l = rm->last;
  st->model = s->name;
  if (r) {
    st->path = (char *)r->path;
    st->active = 1;
    st->state_frames = atomic_load(&r->nstate);
    st->dropped_frames = atomic_load(&r->ndropped);
    st->inputs = atomic_load(&r->ninput);
    st->events = atomic_load(&r->nevent);
    st->dropped_events = atomic_load(&r->ndropped_events);
    st->bytes = atomic_load(&r->bytes);
    st->every_k = r->every_k;
    st->fields = r->fields;
  } else if (l) {
    st->path = (char *)l->path;
    st->state_frames = l->nstate;
    st->dropped_frames = l->ndropped;
    st->inputs = l->ninput;
    st->events = l->nevent;
    st->dropped_events = l->ndropped_events;
    st->bytes = l->bytes;
    st->every_k = l->every_k;
    st->fields = l->fields;
    st->error = (char *)l->error;
  }
}
