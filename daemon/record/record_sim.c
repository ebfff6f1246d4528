// record_sim.c: the simulation thread's side of a recording (record.h): a tap on the model's
// thread (sim.h), installed while the recording runs, puts records into the recording's rings
// at step boundaries. Nothing here allocates, locks or waits: a ring slot, or a counted drop
// (states), or the end of the recording (inputs, see record.h).
#include <stddef.h>
#include <string.h>

#include "record/record_impl.h"

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
  in->wall_ns = record_wall_now();
  return in;
}

static recorder *of(sim_tap *t) {
  return (recorder *)(void *)((char *)t - offsetof(recorder, tap));
}

// The recorder when it takes records now (NULL: starting or ending).
static recorder *active(sim_tap *t) {
  recorder *r = of(t);
  int st = atomic_load_explicit(&r->state, memory_order_acquire);
  if (st == R_STOP) {
    atomic_store(&r->state, R_DONE);
    return NULL;
  }
  return st == R_ACTIVE ? r : NULL;
}

static void tick(sim_tap *t, sim *s) {
  recorder *r = of(t);
  int st = atomic_load_explicit(&r->state, memory_order_acquire);
  if (st == R_STARTING) {
    put_state(s, r);   // the state the recording starts from
    // only from STARTING: a StopRecording that came meanwhile (STARTING -> STOP) stands
    atomic_compare_exchange_strong(&r->state, &st, R_ACTIVE);
  } else if (st == R_STOP) {
    atomic_store(&r->state, R_DONE);
  }
}

static void after_step(sim_tap *t, sim *s) {
  recorder *r = active(t);
  if (r && pt_nstep(s->d) % r->every_k == 0)
    put_state(s, r);
}

static void state_now(sim_tap *t, sim *s) {
  recorder *r = active(t);
  if (r)
    put_state(s, r);
}

static void input(sim_tap *t, sim *s, const input_rec *rec) {
  recorder *r = active(t);
  rec_in *in = r ? claim_input(s, r, PARTITA__V1__RECORDED_INPUT__KIND__INPUTS) : NULL;
  if (!in)
    return;
  in->session = rec->session;
  in->sequence = rec->seq;
  in->n = rec->n;
  memcpy(in->e, rec->e, sizeof(input_entry) * (size_t)rec->n);
  spsc_publish(&r->inputs);
}

static void watchdog_fired(sim_tap *t, sim *s, int zeroed) {
  recorder *r = active(t);
  rec_in *in = r ? claim_input(s, r, PARTITA__V1__RECORDED_INPUT__KIND__WATCHDOG) : NULL;
  if (!in)
    return;
  for (int i = 0; zeroed && i < s->ni; i++)
    in->e[in->n++] = (input_entry){i, 0.0};
  spsc_publish(&r->inputs);
}

static void reset(sim_tap *t, sim *s) {
  recorder *r = active(t);
  rec_in *in = r ? claim_input(s, r, PARTITA__V1__RECORDED_INPUT__KIND__RESET) : NULL;
  if (in)
    spsc_publish(&r->inputs);
}

static void set_state(sim_tap *t, sim *s, const pt_assign *pos, int npos, const pt_assign *vel,
                      int nvel, const pt_assign *ctl, int nctl) {
  recorder *r = active(t);
  rec_in *in = r ? claim_input(s, r, PARTITA__V1__RECORDED_INPUT__KIND__SET_STATE) : NULL;
  if (!in)
    return;
  for (int i = 0; i < npos && i < s->nc; i++)
    in->e[in->npos++] = (input_entry){pos[i].coord, pos[i].value};
  for (int i = 0; i < nvel && i < s->nc; i++)
    in->e[in->npos + in->nvel++] = (input_entry){vel[i].coord, vel[i].value};
  for (int i = 0; i < nctl && i < s->nx; i++)
    in->e[in->npos + in->nvel + in->nctl++] = (input_entry){ctl[i].coord, ctl[i].value};
  spsc_publish(&r->inputs);
}

static void params(sim_tap *t, sim *s, const pt_assign *par, int npar) {
  recorder *r = active(t);
  rec_in *in = r ? claim_input(s, r, PARTITA__V1__RECORDED_INPUT__KIND__PARAMETERS) : NULL;
  if (!in)
    return;
  for (int i = 0; i < npar && i < s->npar; i++)
    in->e[in->n++] = (input_entry){par[i].coord, par[i].value};
  spsc_publish(&r->inputs);
}

static void event(sim_tap *t, sim *s, const sim_event *ev) {
  (void)s;
  recorder *r = active(t);
  if (!r)
    return;
  rec_ev *e = spsc_claim(&r->events);
  uint64_t seq = r->seq++;
  if (!e) {   // reported to subscribers and logged too: a full ring skips one here, counted
    atomic_fetch_add_explicit(&r->ndropped_events, 1, memory_order_relaxed);
    return;
  }
  e->seq = seq;
  e->ev = *ev;
  spsc_publish(&r->events);
}

const sim_tap_ops record_tap_ops = {
    .tick = tick,
    .after_step = after_step,
    .input = input,
    .watchdog = watchdog_fired,
    .reset = reset,
    .set_state = set_state,
    .params = params,
    .state_now = state_now,
    .event = event,
};
