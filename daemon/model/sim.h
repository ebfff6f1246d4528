// sim.h: one loaded model and the thread that steps it. The model layer knows nothing above
// it: its owner (api/models.c) embeds a sim in its own struct and registers hooks for what the
// loop must hear (on_output, on_release), and a recording installs a tap (sim_tap) the thread
// calls at step boundaries.
//
// The loop thread and the simulation thread share nothing but bounded SPSC rings:
//   loop -> sim: commands (sim_cmd pointers) and inputs (index/value records);
//   sim -> loop: finished commands, state records for subscriptions, model events,
// each followed by uv_async_send. The model (pt_model) is immutable and read by both; the data
// (pt_data) belongs to the simulation thread alone.
#ifndef PD_SIM_H
#define PD_SIM_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <uv.h>

#include "base/config.h"
#include "base/hist.h"
#include "base/pace.h"
#include "base/protocol.h"
#include "base/spsc.h"
#include "model/snap.h"
#include "partita.h"

#define SIM_NAME 128

typedef struct sim sim;

typedef enum {
  CMD_GET_STATE,
  CMD_STEP,          // n steps (lockstep/paused), then the state
  CMD_RESET,
  CMD_SET_STATE,     // pos/vel assignments, then the state
  CMD_SET_MODE,
  CMD_SNAPSHOT,      // pt_data_copy into `copy` (the analyses' snapshot slots)
  CMD_SET_SUBS,      // replace the decimation table
  CMD_STATS,
  CMD_SET_PARAMS,    // control parameters (pos: index, value), between two steps
} cmd_kind;

typedef struct {
  uint32_t every_k;
  uint32_t fields;
} sim_sub;

typedef struct {
  int64_t steps;
  double time;
  int mode;
  double rate;
  double step_mean, step_p50, step_p99, step_max;   // microseconds
  double late_p50, late_p99, late_max;              // microseconds
  double snap_mean, snap_p50, snap_p99, snap_max;   // microseconds
  int64_t snapshots;
  int64_t overruns, dropped_frames, repartitions, failures, clipped_inputs;
  int64_t qr_switches, qr_steps;
  int partition_qr;  // 1 while the QR partition is active
} sim_stats;

typedef struct sim_cmd {
  cmd_kind kind;
  // request (set by the loop thread)
  int mode;
  double rate;
  int64_t n;
  uint32_t fields;
  pt_assign *pos, *vel;
  int npos, nvel;
  pt_assign *ctl;             // SetState's control states (index, value)
  int nctl;
  sim_sub *subs;
  int nsubs;
  pt_data *copy;
  const atomic_int *cancel;   // set when the requesting connection is gone (NULL: never)
  // result (set by the simulation thread)
  int status;                 // PT_OK or a negative pt_status
  char msg[1024];
  snap_hdr *snap;             // sim_snap_size() bytes, allocated by the loop thread
  sim_stats stats;
  // completion on the loop thread; `ctx` belongs to whoever queued the command
  void (*done)(struct sim_cmd *cmd);
  void *ctx;
  sim *owner;
} sim_cmd;

typedef struct {
  int kind;                   // ModelEvent kind (proto numbers)
  int code;                   // pt_status
  double time;
  int64_t step;
  char msg[200];
} sim_event;

typedef struct {
  int32_t index;
  double value;
} input_entry;

typedef struct {
  int n;
  uint64_t session, seq;      // UDP session and sequence (0 for SetInputs)
  input_entry e[];            // (ninput) entries
} input_rec;

// How a model runs, from LoadModel or the config file.
typedef struct {
  int mode;
  double rate;
  unsigned input_timeout_ms;  // real time: the input watchdog (0: off)
  int input_hold;             // on timeout hold the last inputs (default: zero them)
} sim_opts;

// A tap on the model thread (a recording installs one while it records, record/): called at
// step boundaries with the data as it is then. A tap never waits and never allocates.
typedef struct sim_tap sim_tap;
typedef struct {
  void (*tick)(sim_tap *t, sim *s);         // every pass of the thread's loop: start and stop
  void (*after_step)(sim_tap *t, sim *s);   // a step was taken and published
  void (*input)(sim_tap *t, sim *s, const input_rec *in);   // an input change applied
  void (*watchdog)(sim_tap *t, sim *s, int zeroed);         // the input watchdog fired
  void (*reset)(sim_tap *t, sim *s);        // before pt_data_reset
  void (*set_state)(sim_tap *t, sim *s, const pt_assign *pos, int npos, const pt_assign *vel,
                    int nvel, const pt_assign *ctl, int nctl);
  void (*params)(sim_tap *t, sim *s, const pt_assign *par, int npar);   // SetParameters
  void (*state_now)(sim_tap *t, sim *s);    // after Reset and SetState
  void (*event)(sim_tap *t, sim *s, const sim_event *ev);
} sim_tap_ops;
struct sim_tap {
  const sim_tap_ops *ops;   // embedded in its owner's struct, which the ops find from it
};

struct sim {
  char name[SIM_NAME];
  pt_model *m;
  pt_data *d;                       // simulation thread only
  const config *cfg;
  int nc, ni, nb;                   // coordinates, inputs, bodies
  int nx, nsig, npar;               // control states, signals, parameters (docs/controls.md)
  size_t snap_size;
  size_t mem_bytes;                 // data + rings + latest states, sized at load
  const char **coord_names;         // (nc) from the model, for messages
  const char **input_names;         // (ni)
  const char **signal_names;        // (nsig)
  const char **ctl_names;           // (nx) control states

  pthread_t thread;
  int started;
  atomic_int stop;
  atomic_int draining;              // shutting down: queued work is answered, not done
  sem_t wake;                       // posted by the loop thread: never blocks it

  spsc cmdq;                        // sim_cmd *, loop -> sim
  spsc inq;                         // input_rec records, loop -> sim
  spsc doneq;                       // sim_cmd *, sim -> loop
  spsc frameq;                      // state records, sim -> loop
  spsc eventq;                      // sim_event, sim -> loop
  uv_async_t async;                 // wakes the loop for the three rings above
  // The owner's hooks (set before sim_start; loop thread):
  void (*on_output)(sim *s);        // frameq or eventq may hold records (after the finished
                                    // commands ran): the subscriptions fan them out
  void (*on_release)(sim *s);       // sim_free released the model's memory: the owner frees
                                    // what embeds s (the model itself is freed right after)
  // The recording's tap (NULL: none), installed and removed by the loop thread, read by this
  // model's thread at step boundaries.
  _Atomic(sim_tap *) tap;

  // The latest state, every field, published by the simulation thread after each step and
  // state change through a triple buffer: the writer fills its own buffer and swaps it with
  // the middle one; the reader (loop thread) takes the middle one when it is newer. Neither
  // waits, and GetState is answered at once in every mode.
  snap_hdr *latest[3];
  atomic_uint latest_mid;           // index of the middle buffer | LATEST_FRESH
  unsigned latest_back;             // simulation thread's buffer
  unsigned latest_front;            // loop thread's buffer
  // published by the simulation thread for cheap reads on the loop thread
  atomic_int pub_mode;
  atomic_int pub_failed;            // 1 while paused on a failed step (until Reset/SetState)
  _Atomic double pub_rate;
  _Atomic double pub_time;
  _Atomic int64_t pub_step;
  // independent coordinate names (ndof), published under a sequence counter (odd while
  // written), so neither thread ever waits for the other
  atomic_uint indep_seq;
  _Atomic(const char *) *indep;     // (ndof)
  atomic_int nindep;
  const char **indep_tmp;           // (ndof) simulation thread's scratch

  // simulation thread only
  int mode;
  double rate;
  pace pc;                          // real-time schedule
  watchdog wd;                      // real-time input watchdog
  int input_hold;
  uint64_t in_session, in_seq;      // last input applied
  int overran;                      // the last step overran its deadline
  hist h_step, h_late, h_snap;
  int64_t dropped, last_repartitions;
  int last_method;                  // partition method after the last step: 0 LU, 1 QR
  sim_sub *subs;                    // (cfg max_subscriptions) decimation table
  int nsubs;

  // loop thread only
  int refs;                         // the owner + commands and jobs in flight
  int outstanding;                  // commands submitted, not yet completed
  int unloading;
};

// Makes the model's data and rings in s (zeroed by the caller, which owns its memory); the
// thread is not running yet. 0, or -1 out of memory (then nothing is kept and m is still the
// caller's).
int sim_init(sim *s, const char *name, pt_model *m, const config *cfg);
// Starts the thread (uv_async bound to loop). 0 ok.
int sim_start(sim *s, uv_loop_t *loop, const sim_opts *o);
// Stops and joins the thread; commands still queued finish with PT_EPRECOND ("unloaded").
// The owner then closes s->async; sim_free runs when the last reference goes.
void sim_stop(sim *s);
// Releases the data, the rings and then (after on_release) the model.
void sim_free(sim *s);
void sim_ref(sim *s);
void sim_unref(sim *s);            // frees at zero
// Wakes the model's thread (never blocks): a paused model looks at its tap now.
void sim_wake(sim *s);

size_t sim_snap_size(const sim *s);
sim_cmd *sim_cmd_new(sim *s, cmd_kind kind);   // with a snap buffer for state answers
void sim_cmd_free(sim_cmd *c);
// Queue a command (loop thread). -1 when the ring is full.
int sim_submit(sim *s, sim_cmd *c);
// Queue an input change (loop thread), from UDP session/seq (0, 0: SetInputs). -1 when the
// ring is full.
int sim_input(sim *s, const int32_t *index, const double *value, int n, uint64_t session,
              uint64_t seq);
// Drain finished commands (calls done), used by the loop-side async handler.
void sim_drain_done(sim *s);
// The latest published state (all fields). Loop thread only; valid until the next call.
const snap_hdr *sim_latest(sim *s);
// Copies the independent coordinate names last published into out (cap entries); returns
// how many. Never waits for the simulation thread.
int sim_read_indep(sim *s, const char **out, int cap);

// Fills a state record from the model's data (simulation thread: a tap's records).
void sim_fill_snap(sim *s, snap_hdr *h, uint32_t fields);

#endif
