// sim.c: the simulation thread of one model: modes, absolute-deadline real-time stepping,
// commands and inputs at step boundaries, state records and events back to the loop.
#define _GNU_SOURCE   // sem_clockwait
#include "model/sim.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "base/log.h"
#include "ptb_fields.h"

#define CMDQ_CAP 256
#define INQ_CAP 64
#define FRAMEQ_CAP 256
#define EVENTQ_CAP 64
#define WAIT_SLICE_NS 1000000    // cond-wait until this close to a deadline, then nanosleep
#define LATEST_FRESH 4u          // latest_mid: the middle buffer holds a state not yet read

static int64_t ts_ns(const struct timespec *t) {
  return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static struct timespec ns_ts(int64_t ns) {
  struct timespec t = {.tv_sec = (time_t)(ns / 1000000000), .tv_nsec = (long)(ns % 1000000000)};
  return t;
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return ts_ns(&t);
}

static int64_t wall_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return ts_ns(&t);
}

size_t sim_snap_size(const sim *s) { return s->snap_size; }

static void fill_snap(sim *s, snap_hdr *h, uint32_t fields);

// Everything sim_init made but the model (on a failed init too: calloc'd parts are NULL).
static void release_parts(sim *s) {
  if (s->d)
    pt_data_free(s->d);
  sem_destroy(&s->wake);
  for (int i = 0; i < 3; i++)
    free(s->latest[i]);
  free(s->indep);
  free(s->indep_tmp);
  free(s->subs);
  free(s->coord_names);
  free(s->input_names);
  free(s->signal_names);
  free(s->ctl_names);
  spsc_free(&s->cmdq);
  spsc_free(&s->inq);
  spsc_free(&s->doneq);
  spsc_free(&s->frameq);
  spsc_free(&s->eventq);
}

int sim_init(sim *s, const char *name, pt_model *m, const config *cfg) {
  snprintf(s->name, sizeof(s->name), "%s", name);
  s->m = m;
  s->cfg = cfg;
  s->nc = pt_model_ncoord(m);
  s->ni = pt_model_ninput(m);
  s->nb = pt_model_nbody(m);
  s->nx = pt_model_ncontrol_state(m);
  s->nsig = pt_model_nsignal(m);
  s->npar = pt_model_nparam(m);
  s->snap_size = sizeof(snap_hdr) + sizeof(double) * (size_t)(3 * s->nc + s->ni + 13 * s->nb +
                                                               s->nx + s->nsig + s->npar);
  sem_init(&s->wake, 0, 0);
  s->d = pt_data_new(m);
  s->coord_names = calloc((size_t)s->nc + 1, sizeof(char *));
  s->input_names = calloc((size_t)s->ni + 1, sizeof(char *));
  for (int i = 0; s->coord_names && i < s->nc; i++)
    s->coord_names[i] = pt_coord_name(m, i);
  for (int i = 0; s->input_names && i < s->ni; i++)
    s->input_names[i] = pt_input_name(m, i);
  s->signal_names = calloc((size_t)s->nsig + 1, sizeof(char *));
  s->ctl_names = calloc((size_t)s->nx + 1, sizeof(char *));
  for (int i = 0; s->signal_names && i < s->nsig; i++)
    s->signal_names[i] = pt_signal_name(m, i);
  for (int i = 0; s->ctl_names && i < s->nx; i++)
    s->ctl_names[i] = pt_control_state_name(m, i);
  s->subs = calloc((size_t)cfg->limits.max_subscriptions, sizeof(sim_sub));
  s->indep = calloc((size_t)pt_model_ndof(m) + 1, sizeof(*s->indep));
  s->indep_tmp = calloc((size_t)pt_model_ndof(m) + 1, sizeof(char *));
  size_t in_size = sizeof(input_rec) + sizeof(input_entry) * (size_t)(s->ni + 1);
  s->mem_bytes = pt_data_bytes(m) + 3 * s->snap_size +
                 (size_t)(2 * CMDQ_CAP) * sizeof(sim_cmd *) + (size_t)INQ_CAP * in_size +
                 (size_t)FRAMEQ_CAP * s->snap_size + (size_t)EVENTQ_CAP * sizeof(sim_event);
  for (int i = 0; i < 3; i++)
    s->latest[i] = calloc(1, s->snap_size);
  s->latest_back = 0;
  atomic_init(&s->latest_mid, 1);
  s->latest_front = 2;
  for (int i = 0; i < 3 && s->latest[i] && s->d; i++)
    fill_snap(s, s->latest[i], PTB_FIELD_ALL);
  if (!s->d || !s->subs || !s->coord_names || !s->input_names || !s->indep || !s->indep_tmp ||
      !s->signal_names || !s->ctl_names ||
      !s->latest[0] || !s->latest[1] || !s->latest[2] ||
      spsc_init(&s->cmdq, sizeof(sim_cmd *), CMDQ_CAP) ||
      spsc_init(&s->inq, in_size, INQ_CAP) ||
      spsc_init(&s->doneq, sizeof(sim_cmd *), CMDQ_CAP) ||
      spsc_init(&s->frameq, s->snap_size, FRAMEQ_CAP) ||
      spsc_init(&s->eventq, sizeof(sim_event), EVENTQ_CAP)) {
    release_parts(s);   // the caller still owns the model on failure
    return -1;
  }
  s->mode = MODE(PAUSED);
  s->rate = 1.0;
  s->refs = 1;
  hist_reset(&s->h_step);
  hist_reset(&s->h_late);
  hist_reset(&s->h_snap);
  atomic_init(&s->stop, 0);
  atomic_init(&s->draining, 0);
  atomic_init(&s->pub_mode, MODE(PAUSED));
  atomic_init(&s->pub_failed, 0);
  atomic_init(&s->pub_rate, 1.0);
  atomic_init(&s->pub_time, pt_time(s->d));
  atomic_init(&s->pub_step, pt_nstep(s->d));
  atomic_init(&s->tap, NULL);
  return 0;
}

void sim_free(sim *s) {
  if (!s)
    return;
  pt_model *m = s->m;
  release_parts(s);
  if (s->on_release)
    s->on_release(s);   // s is gone after this
  if (m)
    pt_model_free(m);   // last: the owner's datas were made from it
}

void sim_ref(sim *s) { s->refs++; }

void sim_unref(sim *s) {
  if (--s->refs == 0)
    sim_free(s);
}

sim_cmd *sim_cmd_new(sim *s, cmd_kind kind) {
  sim_cmd *c = calloc(1, sizeof(*c));
  if (!c)
    return NULL;
  c->snap = calloc(1, s->snap_size);
  if (!c->snap) {
    free(c);
    return NULL;
  }
  c->kind = kind;
  c->owner = s;
  sim_ref(s);   // a command keeps its model alive until its completion has run
  c->fields = PTB_FIELD_DEFAULT;
  return c;
}

void sim_cmd_free(sim_cmd *c) {
  if (!c)
    return;
  sim_unref(c->owner);
  free(c->snap);
  free(c->pos);
  free(c->vel);
  free(c->ctl);
  free(c->subs);
  free(c);
}

static void wake(sim *s) { sem_post(&s->wake); }

void sim_wake(sim *s) { wake(s); }

// The tap installed now (NULL: none); its records are taken at this step boundary.
static sim_tap *tap(sim *s) { return atomic_load_explicit(&s->tap, memory_order_acquire); }

int sim_submit(sim *s, sim_cmd *c) {
  if (s->unloading || s->outstanding >= CMDQ_CAP || spsc_push(&s->cmdq, &c))
    return -1;
  s->outstanding++;
  wake(s);
  return 0;
}

int sim_input(sim *s, const int32_t *index, const double *value, int n, uint64_t session,
              uint64_t seq) {
  input_rec *rec = spsc_claim(&s->inq);
  if (!rec || n > s->ni)
    return -1;
  rec->n = n;
  rec->session = session;
  rec->seq = seq;
  for (int i = 0; i < n; i++) {
    rec->e[i].index = index[i];
    rec->e[i].value = value[i];
  }
  spsc_publish(&s->inq);
  if (atomic_load_explicit(&s->pub_mode, memory_order_relaxed) != MODE(FREE_RUN))
    wake(s);   // a paused thread stores them now, so the ring never fills while it sleeps
  return 0;
}

void sim_drain_done(sim *s) {
  sim_cmd *c;
  while (spsc_pop(&s->doneq, &c) == 0) {
    s->outstanding--;
    c->done(c);
  }
}

// ---------------------------------------------------------------------------------------------
// Simulation thread.

static void publish(sim *s) {
  atomic_store_explicit(&s->pub_time, pt_time(s->d), memory_order_relaxed);
  atomic_store_explicit(&s->pub_step, pt_nstep(s->d), memory_order_relaxed);
  fill_snap(s, s->latest[s->latest_back], PTB_FIELD_ALL);
  unsigned prev = atomic_exchange_explicit(&s->latest_mid, s->latest_back | LATEST_FRESH,
                                           memory_order_acq_rel);
  s->latest_back = prev & ~LATEST_FRESH;
}

const snap_hdr *sim_latest(sim *s) {
  if (atomic_load_explicit(&s->latest_mid, memory_order_relaxed) & LATEST_FRESH) {
    unsigned prev = atomic_exchange_explicit(&s->latest_mid, s->latest_front,
                                             memory_order_acq_rel);
    s->latest_front = prev & ~LATEST_FRESH;
  }
  return s->latest[s->latest_front];
}

// A sequence lock: the writer makes the counter odd, writes, makes it even; a reader retries
// when it saw an odd counter or a different one after reading.
static void publish_indep(sim *s) {
  int n = pt_independent(s->m, s->d, s->indep_tmp, pt_model_ndof(s->m));
  if (n < 0)
    n = 0;
  atomic_fetch_add_explicit(&s->indep_seq, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  for (int i = 0; i < n; i++)
    atomic_store_explicit(&s->indep[i], s->indep_tmp[i], memory_order_relaxed);
  atomic_store_explicit(&s->nindep, n, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->indep_seq, 1, memory_order_release);
}

int sim_read_indep(sim *s, const char **out, int cap) {
  for (int tries = 0; tries < 1000; tries++) {
    unsigned s1 = atomic_load_explicit(&s->indep_seq, memory_order_acquire);
    if (s1 & 1u)
      continue;
    int n = atomic_load_explicit(&s->nindep, memory_order_relaxed);
    if (n > cap)
      n = cap;
    for (int i = 0; i < n; i++)
      out[i] = atomic_load_explicit(&s->indep[i], memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->indep_seq, memory_order_relaxed) == s1)
      return n;
  }
  return 0;   // the writer kept rewriting; leave the list out rather than wait
}

static void event(sim *s, int kind, int code, const char *msg) {
  sim_event ev = {.kind = kind, .code = code, .time = pt_time(s->d), .step = pt_nstep(s->d)};
  snprintf(ev.msg, sizeof(ev.msg), "%s", msg);
  sim_tap *t = tap(s);
  if (t)
    t->ops->event(t, s, &ev);
  if (spsc_push(&s->eventq, &ev) == 0)
    uv_async_send(&s->async);
}

static void fill_snap(sim *s, snap_hdr *h, uint32_t fields) {
  const pt_data *d = s->d;
  h->time = pt_time(d);
  h->step = pt_nstep(d);
  h->fields = fields;
  h->mode = s->mode;
  h->kinetic = pt_energy_kinetic(d);
  h->potential = pt_energy_potential(d);
  h->res_pos = pt_residual_position(d);
  h->res_vel = pt_residual_velocity(d);
  h->wall_ns = wall_ns();
  h->input_session = s->in_session;
  h->input_seq = s->in_seq;
  h->overran = s->overran;
  size_t nc = (size_t)s->nc;
  if (fields & PTB_FIELD_COORDINATES)
    memcpy(snap_q(h), pt_coords(d), nc * sizeof(double));
  if (fields & PTB_FIELD_RATES)
    memcpy(snap_qd(h, s->nc), pt_coord_rates(d), nc * sizeof(double));
  if (fields & PTB_FIELD_ACCELERATIONS)
    memcpy(snap_qdd(h, s->nc), pt_coord_accels(d), nc * sizeof(double));
  if (fields & PTB_FIELD_INPUTS)
    memcpy(snap_u(h, s->nc), pt_inputs(d), (size_t)s->ni * sizeof(double));
  if (fields & PTB_FIELD_BODIES) {
    double *b = snap_body(h, s->nc, s->ni);
    for (int i = 0; i < s->nb; i++, b += 13) {
      memcpy(b, pt_body_pose(d, i), 7 * sizeof(double));
      memcpy(b + 7, pt_body_velocity(d, i), 6 * sizeof(double));
    }
  }
  if ((fields & PTB_FIELD_CONTROLS) && s->nsig) {
    double *x = snap_ctl(h, s->nc, s->ni, s->nb);
    memcpy(x, pt_control_states(d), (size_t)s->nx * sizeof(double));
    memcpy(x + s->nx, pt_signals(d), (size_t)s->nsig * sizeof(double));
    memcpy(x + s->nx + s->nsig, pt_params(d), (size_t)s->npar * sizeof(double));
  }
}

void sim_fill_snap(sim *s, snap_hdr *h, uint32_t fields) { fill_snap(s, h, fields); }

static void emit_frames(sim *s) {
  int64_t step = pt_nstep(s->d);
  uint32_t fields = 0;
  for (int i = 0; i < s->nsubs; i++)
    if (step % s->subs[i].every_k == 0)
      fields |= s->subs[i].fields;
  if (!fields)
    return;
  snap_hdr *h = spsc_claim(&s->frameq);
  if (!h) {
    s->dropped++;    // the loop thread is behind; the model does not wait for it
    return;
  }
  fill_snap(s, h, fields);
  spsc_publish(&s->frameq);
  uv_async_send(&s->async);
}

static void drain_inputs(sim *s) {
  input_rec *rec;
  while ((rec = spsc_peek(&s->inq))) {
    for (int i = 0; i < rec->n; i++)
      pt_set_input(s->m, s->d, rec->e[i].index, rec->e[i].value);
    s->in_session = rec->session;
    s->in_seq = rec->seq;
    sim_tap *t = tap(s);
    if (t)
      t->ops->input(t, s, rec);
    spsc_release(&s->inq);
    if (watchdog_input(&s->wd, now_ns()) == WD_RESUMED)
      event(s, EVENT(INPUT_RESUMED), 0, "inputs arrive again");
  }
}

// Real time only: inputs silent for longer than the watchdog's timeout go to their safe
// value (zero, or held) once, with an event.
static void watch_inputs(sim *s) {
  if (watchdog_poll(&s->wd, now_ns()) != WD_TIMEOUT)
    return;
  if (!s->input_hold)
    for (int i = 0; i < s->ni; i++)
      pt_set_input(s->m, s->d, i, 0.0);
  sim_tap *t = tap(s);
  if (t)
    t->ops->watchdog(t, s, !s->input_hold);
  char msg[200];
  snprintf(msg, sizeof(msg), "no input for %.0f ms: inputs %s", (double)s->wd.timeout / 1e6,
           s->input_hold ? "held" : "set to zero");
  event(s, EVENT(INPUT_TIMEOUT), 0, msg);
}

static void set_sched(sim *s, int realtime) {
  if (!s->cfg->realtime.sched_fifo)
    return;
  struct sched_param sp = {.sched_priority = realtime ? s->cfg->realtime.priority : 0};
  int rc = pthread_setschedparam(pthread_self(), realtime ? SCHED_FIFO : SCHED_OTHER, &sp);
  if (rc && realtime)
    log_info("model %s: SCHED_FIFO not permitted (%s); realtime runs at normal priority",
             s->name, strerror(rc));
}

// One step of the engine; on failure the model pauses with an event. The state is published
// by after_step.
static int advance(sim *s) {
  int64_t t0 = now_ns();
  int rc = pt_step(s->m, s->d);
  hist_add(&s->h_step, (uint64_t)(now_ns() - t0));
  if (rc < 0) {
    char msg[200];
    snprintf(msg, sizeof(msg), "step %lld at t=%g failed: %s; model paused",
             (long long)pt_nstep(s->d), pt_time(s->d), pt_strerror(rc));
    log_warn("model %s: %s", s->name, msg);
    if (s->mode == MODE(REALTIME))
      set_sched(s, 0);
    s->mode = MODE(PAUSED);
    atomic_store(&s->pub_mode, MODE(PAUSED));
    atomic_store(&s->pub_failed, 1);
    event(s, EVENT(PAUSED_ON_ERROR), rc, msg);
    return rc;
  }
  return 0;
}

// After a step: publish the state, report partition changes, send subscription frames.
static void after_step(sim *s) {
  publish(s);
  pt_counters c;
  pt_get_counters(s->d, &c);
  if (c.repartitions != s->last_repartitions) {
    s->last_repartitions = c.repartitions;
    publish_indep(s);
    event(s, EVENT(REPARTITIONED), 0, "coordinate partition rebuilt");
  }
  if (c.method != s->last_method) {  // hybrid LU/QR partitioning (docs/partitioning.md)
    s->last_method = c.method;
    event(s, EVENT(QR_SWITCH), 0,
          c.method ? "switched to the QR partition (singular configuration near)"
                   : "switched back to the LU partition");
  }
  emit_frames(s);
  sim_tap *t = tap(s);
  if (t)
    t->ops->after_step(t, s);
}

// A step outside real time (free run, Step): no deadline to overrun.
static int do_step(sim *s) {
  int rc = advance(s);
  s->overran = 0;
  if (rc == 0)
    after_step(s);
  return rc;
}

static void rt_resync(sim *s) {
  int64_t now = now_ns();
  pace_start(&s->pc, now, pt_model_dt(s->m) / s->rate * 1e9);
  s->pc.miss_since = 0;
  watchdog_start(&s->wd, now, s->wd.timeout);
  s->overran = 0;
}

static void set_mode(sim *s, int mode, double rate) {
  if (rate > 0)
    s->rate = rate;
  if (mode != s->mode && (mode == MODE(REALTIME) || s->mode == MODE(REALTIME)))
    set_sched(s, mode == MODE(REALTIME));
  s->mode = mode;
  rt_resync(s);
  atomic_store(&s->pub_mode, mode);
  atomic_store(&s->pub_rate, s->rate);
  publish(s);
}

static void fill_stats(sim *s, sim_stats *st) {
  pt_counters c;
  pt_get_counters(s->d, &c);
  st->steps = pt_nstep(s->d);
  st->time = pt_time(s->d);
  st->mode = s->mode;
  st->rate = s->rate;
  st->step_mean = hist_mean(&s->h_step) / 1e3;
  st->step_p50 = hist_quantile(&s->h_step, 0.5) / 1e3;
  st->step_p99 = hist_quantile(&s->h_step, 0.99) / 1e3;
  st->step_max = (double)s->h_step.max / 1e3;
  st->late_p50 = hist_quantile(&s->h_late, 0.5) / 1e3;
  st->late_p99 = hist_quantile(&s->h_late, 0.99) / 1e3;
  st->late_max = (double)s->h_late.max / 1e3;
  st->snap_mean = hist_mean(&s->h_snap) / 1e3;
  st->snap_p50 = hist_quantile(&s->h_snap, 0.5) / 1e3;
  st->snap_p99 = hist_quantile(&s->h_snap, 0.99) / 1e3;
  st->snap_max = (double)s->h_snap.max / 1e3;
  st->snapshots = (int64_t)s->h_snap.count;
  st->overruns = s->pc.overruns;
  st->dropped_frames = s->dropped;
  st->repartitions = c.repartitions;
  st->failures = c.failures;
  st->clipped_inputs = c.clipped_inputs;
  st->qr_switches = c.qr_switches;
  st->qr_steps = c.qr_steps;
  st->partition_qr = pt_partition_method(s->d);
}

// Why a command should not (go on to) be done: its connection closed, or the server is
// shutting down and answers what is in flight at once. NULL: do it.
static const char *cancelled(const sim *s, const sim_cmd *c) {
  if (atomic_load_explicit(&s->draining, memory_order_relaxed))
    return "the server is shutting down";
  if (c->cancel && atomic_load_explicit(c->cancel, memory_order_relaxed))
    return "the connection closed";
  return NULL;
}

// A Step command: n steps, ending early (with a status that says so) when a step fails, the
// requesting connection is gone, or the model is being unloaded.
static void run_steps(sim *s, sim_cmd *c) {
  int64_t i = 0;
  for (; i < c->n; i++) {
    if (atomic_load(&s->stop)) {
      c->status = PT_EPRECOND;
      snprintf(c->msg, sizeof(c->msg), "model unloaded after %lld of %lld steps",
               (long long)i, (long long)c->n);
      return;
    }
    const char *why = (i & 255) == 255 ? cancelled(s, c) : NULL;
    if (why) {
      c->status = PT_EPRECOND;
      snprintf(c->msg, sizeof(c->msg), "cancelled after %lld steps: %s", (long long)i, why);
      return;
    }
    drain_inputs(s);
    int rc = do_step(s);
    if (rc < 0) {
      c->status = rc;
      snprintf(c->msg, sizeof(c->msg), "step %lld of %lld failed: %s; model paused",
               (long long)i + 1, (long long)c->n, pt_strerror(rc));
      return;
    }
  }
}

static void run_cmd(sim *s, sim_cmd *c) {
  pt_error err = {0};
  sim_tap *t = tap(s);
  c->status = PT_OK;
  drain_inputs(s);   // inputs sent before this command take effect before it
  const char *why = cancelled(s, c);
  if (why) {   // nobody waits for the result, or the server is going: do not do the work
    c->status = PT_EPRECOND;
    snprintf(c->msg, sizeof(c->msg), "cancelled: %s", why);
    spsc_push(&s->doneq, &c);
    uv_async_send(&s->async);
    return;
  }
  switch (c->kind) {
  case CMD_GET_STATE:
    break;
  case CMD_STEP:
    if (s->mode != MODE(LOCKSTEP) && s->mode != MODE(PAUSED)) {
      c->status = PT_EPRECOND;
      snprintf(c->msg, sizeof(c->msg), "Step needs lockstep or paused mode");
      break;
    }
    run_steps(s, c);
    break;
  case CMD_RESET:
    if (t)
      t->ops->reset(t, s);
    pt_data_reset(s->m, s->d);
    c->status = pt_forward(s->m, s->d);
    if (t)
      t->ops->state_now(t, s);
    atomic_store(&s->pub_failed, c->status < 0);
    if (c->status < 0)
      snprintf(c->msg, sizeof(c->msg), "reset: %s", pt_strerror(c->status));
    publish(s);
    publish_indep(s);
    rt_resync(s);
    break;
  case CMD_SET_STATE:
    // the control states first (pt_set_state evaluates the state with them), all or none
    c->status = PT_OK;
    for (int i = 0; i < c->nctl && c->status == PT_OK; i++)
      if (c->ctl[i].coord < 0 || c->ctl[i].coord >= s->nx || !isfinite(c->ctl[i].value))
        c->status = pt_error_set(&err, PT_EINVAL, "bad control state value (index %d)",
                                 c->ctl[i].coord);
    double *xs = c->status == PT_OK && c->nctl ? malloc(sizeof(double) * (size_t)s->nx) : NULL;
    if (xs)
      memcpy(xs, pt_control_states(s->d), sizeof(double) * (size_t)s->nx);
    else if (c->status == PT_OK && c->nctl)
      c->status = pt_error_set(&err, PT_ENOMEM, "out of memory");
    for (int i = 0; i < c->nctl && c->status == PT_OK; i++)
      c->status = pt_set_control_states(s->m, s->d, &c->ctl[i].coord, &c->ctl[i].value, 1,
                                        &err);
    if (c->status == PT_OK)
      c->status = pt_set_state(s->m, s->d, c->pos, c->npos, c->vel, c->nvel, &err);
    if (c->status != PT_OK && xs) {  // the control states as they were
      for (int i = 0; i < s->nx; i++)
        pt_set_control_states(s->m, s->d, &i, xs + i, 1, NULL);
    }
    free(xs);
    if (c->status == PT_OK) {
      atomic_store(&s->pub_failed, 0);
      if (t) {
        t->ops->set_state(t, s, c->pos, c->npos, c->vel, c->nvel, c->ctl, c->nctl);
        t->ops->state_now(t, s);
      }
    }
    if (c->status < 0)
      snprintf(c->msg, sizeof(c->msg), "%s", err.msg[0] ? err.msg : pt_strerror(c->status));
    publish(s);
    break;
  case CMD_SET_MODE:
    set_mode(s, c->mode, c->rate);
    break;
  case CMD_SNAPSHOT: {
    int64_t t0 = now_ns();
    c->status = pt_data_copy(s->m, c->copy, s->d);
    hist_add(&s->h_snap, (uint64_t)(now_ns() - t0));
    break;
  }
  case CMD_SET_SUBS: {
    int n = c->nsubs < s->cfg->limits.max_subscriptions ? c->nsubs
                                                       : s->cfg->limits.max_subscriptions;
    memcpy(s->subs, c->subs, (size_t)n * sizeof(sim_sub));
    s->nsubs = n;
    break;
  }
  case CMD_STATS:
    fill_stats(s, &c->stats);
    break;
  case CMD_SET_PARAMS: {  // between steps; all or none (a refusal restores the ones set)
    double old[1024];      // (the loop thread takes at most 1024 values)
    int n = 0;
    c->status = PT_OK;
    for (; n < c->npos && n < 1024 && c->status == PT_OK; n++) {
      old[n] = pt_params(s->d)[c->pos[n].coord];
      c->status = pt_set_param(s->m, s->d, c->pos[n].coord, c->pos[n].value, &err);
    }
    for (int i = n - 1; c->status != PT_OK && i >= 0; i--)
      pt_set_param(s->m, s->d, c->pos[i].coord, old[i], NULL);
    if (c->status == PT_OK && t && t->ops->params)
      t->ops->params(t, s, c->pos, c->npos);
    if (c->status < 0)
      snprintf(c->msg, sizeof(c->msg), "%s", err.msg[0] ? err.msg : pt_strerror(c->status));
    publish(s);
    break;
  }
  }
  if (c->kind == CMD_GET_STATE || c->kind == CMD_STEP || c->kind == CMD_RESET ||
      c->kind == CMD_SET_STATE || c->kind == CMD_SET_PARAMS)
    fill_snap(s, c->snap, c->fields);
  c->snap->mode = s->mode;
  spsc_push(&s->doneq, &c);   // never full: outstanding commands <= its capacity
  uv_async_send(&s->async);
}

static void run_cmds(sim *s) {
  sim_cmd *c;
  while (spsc_pop(&s->cmdq, &c) == 0)
    run_cmd(s, c);
}

// Sleep until woken by a command or until the absolute monotonic deadline (0: no deadline).
// Any error of the wait (a deadline the kernel refuses) ends it: the caller's loop decides
// again, so the thread can never spin inside here.
static void wait_wake(sim *s, int64_t deadline) {
  if (atomic_load(&s->stop))
    return;
  if (!deadline) {
    while (sem_wait(&s->wake) != 0 && errno == EINTR) {
    }
  } else {
    struct timespec ts = ns_ts(deadline);
    while (sem_clockwait(&s->wake, CLOCK_MONOTONIC, &ts) != 0 && errno == EINTR) {
    }
  }
  while (sem_trywait(&s->wake) == 0) {   // one wake-up serves every post made meanwhile
  }
}

// One real-time step at the absolute deadline of its schedule (pace.h). Long waits are split
// so commands are served meanwhile; the final approach is one clock_nanosleep(TIMER_ABSTIME).
static void realtime_tick(sim *s) {
  int64_t coarse = pace_coarse_wait(&s->pc, now_ns(), WAIT_SLICE_NS);
  if (coarse) {
    wait_wake(s, coarse);
    return;
  }
  int64_t deadline = pace_deadline(&s->pc);
  struct timespec ts = ns_ts(deadline);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
  int64_t woke = now_ns();
  hist_add(&s->h_late, (uint64_t)(woke > deadline ? woke - deadline : 0));
  drain_inputs(s);
  watch_inputs(s);
  if (advance(s) < 0)
    return;
  int64_t behind, end = now_ns();
  int flags = pace_step_done(&s->pc, end, s->cfg->realtime.overrun_burst,
                             (int64_t)s->cfg->realtime.max_lag_ms * 1000000, &behind);
  s->overran = (flags & PACE_OVERRUN) != 0;
  after_step(s);
  int64_t missing = pace_missing_for(&s->pc, end);
  if (s->cfg->realtime.overrun_pause_ms > 0 &&
      missing > (int64_t)s->cfg->realtime.overrun_pause_ms * 1000000) {
    // a model that cannot keep up must not hold a real-time core forever
    char msg[200];
    snprintf(msg, sizeof(msg), "every deadline missed for %.1f s (a step takes longer than "
             "dt / rate); model paused: lower the rate, or SetMode to resume", missing / 1e9);
    log_warn("model %s: %s", s->name, msg);
    set_mode(s, MODE(PAUSED), 0);
    event(s, EVENT(PAUSED_ON_ERROR), PT_EPRECOND, msg);
    return;
  }
  char msg[200];
  if (flags & PACE_BURST) {
    snprintf(msg, sizeof(msg), "%d deadlines missed in a row (%.3f ms behind)",
             s->cfg->realtime.overrun_burst, (double)behind / 1e6);
    event(s, EVENT(OVERRUN_BURST), 0, msg);
  }
  if (flags & PACE_RESYNC) {
    snprintf(msg, sizeof(msg), "%.1f ms behind the wall clock; schedule restarted from now",
             (double)behind / 1e6);
    event(s, EVENT(OVERRUN_BURST), 0, msg);
  }
}

static void *run(void *arg) {
  sim *s = arg;
  char tname[16];
  snprintf(tname, sizeof(tname), "pt:%.12s", s->name);
  prctl(PR_SET_NAME, tname, 0, 0, 0);
  prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);   // wake-ups as close to the deadline as the kernel can
  int rc = pt_forward(s->m, s->d);
  if (rc < 0)
    log_warn("model %s: initial evaluation failed: %s", s->name, pt_strerror(rc));
  pt_counters c;
  pt_get_counters(s->d, &c);
  s->last_repartitions = c.repartitions;
  s->last_method = c.method;
  publish(s);
  publish_indep(s);
  if (s->mode == MODE(REALTIME))
    set_sched(s, 1);
  rt_resync(s);
  while (!atomic_load(&s->stop)) {
    sim_tap *t = tap(s);
    if (t)
      t->ops->tick(t, s);
    run_cmds(s);
    switch (s->mode) {
    case MODE(FREE_RUN):
      drain_inputs(s);
      do_step(s);
      break;
    case MODE(REALTIME):
      realtime_tick(s);
      break;
    default:
      drain_inputs(s);
      wait_wake(s, 0);
      break;
    }
  }
  return NULL;
}

// The loop side of the rings: finished commands complete here (their `done`), then the owner
// hears that records and events may wait.
static void on_async(uv_async_t *a) {
  sim *s = a->data;
  sim_drain_done(s);
  if (s->on_output)
    s->on_output(s);
}

int sim_start(sim *s, uv_loop_t *loop, const sim_opts *o) {
  s->mode = o->mode > 0 ? o->mode : MODE(PAUSED);
  s->rate = o->rate > 0 ? o->rate : 1.0;
  s->wd.timeout = (int64_t)o->input_timeout_ms * 1000000;
  s->input_hold = o->input_hold;
  atomic_store(&s->pub_mode, s->mode);
  atomic_store(&s->pub_rate, s->rate);
  if (uv_async_init(loop, &s->async, on_async))
    return -1;
  s->async.data = s;
  if (pthread_create(&s->thread, NULL, run, s)) {
    uv_close((uv_handle_t *)&s->async, NULL);
    return -1;
  }
  s->started = 1;
  return 0;
}

void sim_stop(sim *s) {
  s->unloading = 1;
  if (s->started) {
    atomic_store(&s->stop, 1);
    wake(s);
    pthread_join(s->thread, NULL);
    s->started = 0;
  }
  // The thread is gone: the loop thread may consume its rings now.
  sim_cmd *c;
  while (spsc_pop(&s->cmdq, &c) == 0) {
    c->status = PT_EPRECOND;
    snprintf(c->msg, sizeof(c->msg), "model %s was unloaded", s->name);
    spsc_push(&s->doneq, &c);
  }
  sim_drain_done(s);
}
