// record.h: recording a live model to an MCAP file (docs/recording.md).
//
// Three parties. The loop thread starts and stops a recording (Record, StopRecording, the
// config's record.all, the duration) and answers GetRecording. The model's simulation thread
// produces records at step boundaries into three bounded SPSC rings owned by the recording:
// state frames (at the decimation), input changes (as applied: SetInputs, UDP, watchdog,
// Reset, SetState) and events; it never waits and never allocates (the rings are sized when
// the recording starts). A writer thread ("rec:MODEL", outside the "pt:*" real-time threads)
// encodes them and writes the file.
//
// When the writer falls behind: a state frame that finds its ring full is dropped and
// counted (its sequence number is skipped, so the file shows the gap); an input change is
// never dropped: its ring (record.queue_inputs, default 65536 changes) is sized so the writer
// would have to stall for minutes at a rig's input rate before it fills, and if it ever does
// the recording ends there (the file stays complete and valid up to that point, and says so
// in its "partita.end" metadata) rather than keeping a file with an input missing.
#ifndef PD_RECORD_H
#define PD_RECORD_H

#include <stddef.h>

#include "partita.h"
#include "partita.pb-c.h"
#include "model/sim.h"

struct conn;
typedef struct recorder recorder;

// The model text a recording embeds, kept by the model from its load (LoadModel or config).
typedef struct rec_source {
  char *text;
  size_t len;
  char source[256];       // the file it came from ("<LoadModel>" when unnamed)
  int format;             // 1 YAML, 2 URDF
  int floating_base;
  int balance_inertia;
  int no_joint_limits;
} rec_source;

// Loop thread: keeps a copy of the model's text for its recordings (sim_opts.src), and
// starts a recording when the config asks for every model from its load. Called after
// sim_new, before sim_start, so such a recording holds the model's first step.
void record_on_load(sim *s, const sim_opts *o, uv_loop_t *loop);
// Loop thread, at unload (after the model's thread has stopped): an active recording ends with
// the model's last step. The loop does not wait for the writer: the recording's timer sees it
// done, keeps its counts and lets the model go. With c, the UnloadModel request id of c is
// answered then, once the file is complete, and 1 is returned; 0: nothing to wait for (no
// recording, or c NULL), the caller answers.
int record_on_unload(sim *s, struct conn *c, uint64_t id);
// The same, waiting for the writer: a model whose thread never started (a failed load).
void record_on_unload_wait(sim *s);
void record_free(sim *s);    // sim_free: what record_on_load kept
// The Record, StopRecording and GetRecording operations.
void record_request(struct conn *c, Partita__V1__Request *q, sim *s);

// Simulation thread, at step boundaries (sim.c). Each returns at once without a recording.
void record_tick(sim *s);                       // starts (initial frame) and stops
void record_after_step(sim *s);                 // a state frame every k steps
void record_input(sim *s, const input_rec *in); // an input change applied
void record_watchdog(sim *s, int zeroed);       // the input watchdog fired
void record_reset(sim *s);                      // before pt_data_reset
void record_set_state(sim *s, const pt_assign *pos, int npos, const pt_assign *vel, int nvel);
void record_state_now(sim *s);                  // a state frame now (after Reset/SetState)
void record_event(sim *s, const sim_event *ev);

#endif
