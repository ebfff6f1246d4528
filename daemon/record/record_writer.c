// record_writer.c: the writer thread of a recording ("rec:MODEL"): it takes the records out of
// the rings in sequence order, encodes them (protobuf) and writes the MCAP file (recording.h),
// flushing at least once a second; at the end it writes the "partita.end" metadata and the
// summary. It may allocate and block on the disk: the simulation never waits for it.
#define _GNU_SOURCE   // pthread_setname_np
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "model/state.h"
#include "record/record_impl.h"

#define WRITER_IDLE_NS 2000000
#define FLUSH_NS 1000000000   // the writer flushes at least once a second

// ---------------------------------------------------------------------------------------------
// Writer thread.

static uint64_t head_seq(spsc *q) {
  uint64_t *p = spsc_peek(q);
  return p ? *p : UINT64_MAX;
}

static int write_state(recorder *r, uint64_t *slot) {
  snap_hdr *h = (snap_hdr *)(slot + 1);
  ptb_frame fr;
  state_frame(&fr, r->s, h, h->fields, 0);
  fr.f.sequence = atomic_load_explicit(&r->nstate, memory_order_relaxed);
  int rc = rec_write_state(r->w, (uint32_t)*slot, (uint64_t)h->wall_ns, &fr.f);
  ptb_frame_release(&fr);
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
  size_t na = (size_t)(in->npos + in->nvel + in->nctl);
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
    m.n_control_states = (size_t)in->nctl;
    m.control_states = ivp + in->npos + in->nvel;
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
  return rec_write_event(r->w, (uint32_t)e->seq, (uint64_t)record_wall_now(), &m);
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

void *record_writer_main(void *arg) {
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
      // the simulation stops producing: only a live recording becomes STOP (one already DONE,
      // by an unload or a full input ring, stays DONE, or nobody would end it), and a paused
      // model's thread is woken to see it
      int st = atomic_load(&r->state);
      while ((st == R_STARTING || st == R_ACTIVE) &&
             !atomic_compare_exchange_weak(&r->state, &st, R_STOP)) {
      }
      sim_wake(r->s);
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
  char ns[24], nd[24], ni[24], ne[24], nde[24], err[300];
  snprintf(ns, sizeof(ns), "%llu", (unsigned long long)atomic_load(&r->nstate));
  snprintf(nd, sizeof(nd), "%llu", (unsigned long long)atomic_load(&r->ndropped));
  snprintf(ni, sizeof(ni), "%llu", (unsigned long long)atomic_load(&r->ninput));
  snprintf(ne, sizeof(ne), "%llu", (unsigned long long)atomic_load(&r->nevent));
  snprintf(nde, sizeof(nde), "%llu", (unsigned long long)atomic_load(&r->ndropped_events));
  const char *result = failed ? "write error"
                       : atomic_load(&r->overflow)
                           ? "ended: the input ring was full (the writer could not keep up)"
                           : "completed";
  const char *kv[] = {"state_frames", ns, "dropped_frames", nd, "inputs", ni,
                      "events", ne, "dropped_events", nde, "result", result};
  uint64_t bytes = rec_writer_bytes(r->w);
  if (failed) {
    rec_writer_abandon(r->w);
  } else if (rec_writer_close(r->w, kv, 6, err, sizeof(err)) < 0) {
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
