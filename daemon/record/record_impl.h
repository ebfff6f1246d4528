// record_impl.h: what the three parts of a recording share (record.h): the simulation
// thread's producer side (record_sim.c), the writer thread (record_writer.c) and the loop
// thread's control (record.c).
#ifndef PD_RECORD_IMPL_H
#define PD_RECORD_IMPL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "base/protocol.h"
#include "base/spsc.h"
#include "record/record.h"
#include "recording.h"

enum { R_STARTING, R_ACTIVE, R_STOP, R_DONE };   // recorder.state

typedef struct {
  uint64_t seq;
  uint32_t kind;              // RecordedInput.Kind
  int32_t n, npos, nvel;      // e[0..n) inputs (or parameters), else npos coordinates, then
  int32_t nctl;               // nvel rates, then nctl control states
  int64_t step, wall_ns;
  double time;
  uint64_t session, sequence;
  input_entry e[];            // (ni + 2 nc + nx + npar)
} rec_in;

typedef struct {
  uint64_t seq;
  sim_event ev;
} rec_ev;

// The model text a recording embeds, kept by the model from its load (rec_model.src).
struct rec_source {
  char *text;
  size_t len;
  char source[256];       // the file it came from ("<LoadModel>" when unnamed)
  int format;             // 1 YAML, 2 URDF
  int floating_base;
  int balance_inertia;
  int no_joint_limits;
  int ground_plane;
  double ground_z;
};

struct recorder {
  sim_tap tap;                      // what the model's thread calls (record_sim.c)
  sim *s;
  rec_model *rm;                    // the model's recordings (its last counts go there)
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
  atomic_uint_fast64_t ndropped_events;   // events that found their ring full
  char error[400];                  // the writer's, set before writer_done
  pthread_t writer;
  int writer_started;
  // loop thread
  uv_timer_t timer;
  uint64_t stop_at_ms;              // 0: no duration
  int stopping;
  rec_waiter *waiter;               // an UnloadModel answered once the file is complete
};

// The tap's ops (record_sim.c): the model's thread calls them through sim.tap.
extern const sim_tap_ops record_tap_ops;

static inline int64_t record_wall_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

// The writer thread's body (record_writer.c): writes what the rings hold until the recording
// is R_DONE and they are empty, ends the file and sets writer_done.
void *record_writer_main(void *arg);

#endif
