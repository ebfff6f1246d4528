// record.h: recording a live model to an MCAP file (docs/recording.md).
//
// Three parties. The loop thread starts and stops a recording (Record, StopRecording, the
// config's record.all, the duration) and says what GetRecording answers. The model's
// simulation thread produces records at step boundaries into three bounded SPSC rings owned
// by the recording: state frames (at the decimation), input changes (as applied: SetInputs,
// UDP, watchdog, Reset, SetState) and events; it never waits and never allocates (the rings
// are sized when the recording starts). A writer thread ("rec:MODEL", outside the "pt:*" real-time threads)
// encodes them and writes the file.
//
// When the writer falls behind: a state frame that finds its ring full is dropped and
// counted (its sequence number is skipped, so the file shows the gap); an input change is
// never dropped: its ring (record.queue_inputs, default 65536 changes) is sized so the writer
// would have to stall for minutes at a rig's input rate before it fills, and if it ever does
// the recording ends there (the file stays complete and valid up to that point, and says so
// in its "partita.end" metadata) rather than keeping a file with an input missing.
//
// The loop thread's side is record.c, the simulation thread's record_sim.c (a tap on the model
// thread, sim.h: the model layer never calls up here), the writer thread record_writer.c.
#ifndef PD_RECORD_H
#define PD_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "model/sim.h"
#include "partita.pb-c.h"

typedef struct recorder recorder;
typedef struct rec_source rec_source;
typedef struct rec_last rec_last;

// Where a model's text came from: what its recordings embed (LoadModel's text, or the bytes
// the load of a config model read).
typedef struct {
  const char *text;
  size_t len;
  const char *name;       // names the text (the attachment); NULL: "<LoadModel>"
  int format;             // 1 YAML, 2 URDF, 0: by name and content
  int floating_base;
  int balance_inertia;    // URDF inertias repaired at load (kept for recordings)
  int no_joint_limits;    // joint limits not enforced (kept for recordings)
  int ground_plane;       // the ground plane z = ground_z added at load (kept for recordings)
  double ground_z;
} rec_origin;

// The recordings of one model, kept by the model's owner (api/models.c) for the model's life
// and read by record/ alone.
typedef struct {
  rec_source *src;        // the text recordings embed (NULL: not kept: no recordings)
  recorder *cur;          // the recording in progress (loop thread's view), NULL: none
  rec_last *last;         // the counts of the one before, for GetRecording
} rec_model;

// A request that waits for a recording's file to be complete (an UnloadModel): done runs then,
// on the loop thread. Embedded in the waiter's own struct.
typedef struct rec_waiter rec_waiter;
struct rec_waiter {
  void (*done)(rec_waiter *w);
};

// Loop thread: keeps a copy of the model's text for its recordings, and starts a recording
// when the config asks for every model from its load. Called after sim_init, before
// sim_start, so such a recording holds the model's first step.
void record_on_load(rec_model *rm, sim *s, const rec_origin *o, uv_loop_t *loop);
// Loop thread, at unload (after the model's thread has stopped): an active recording ends with
// the model's last step. The loop does not wait for the writer: the recording's timer sees it
// done, keeps its counts and lets the model go. With w, w->done runs once the file is
// complete and 1 is returned; 0: nothing to wait for (no recording, or w NULL, or a waiter
// already), the caller answers now.
int record_on_unload(rec_model *rm, rec_waiter *w);
// The same, waiting for the writer: a model whose thread never started (a failed load).
void record_on_unload_wait(rec_model *rm);
void record_release(rec_model *rm);   // when the model is freed: what record_on_load kept

// Record: a recording of s into `path` (relative to the record directory, or absolute inside
// it), every_k steps (0: 1), fields (0: all but bodies), for `duration` seconds (0: until
// stopped). The protocol's status code, with a message in err.
int record_start(rec_model *rm, sim *s, uv_loop_t *loop, const char *path, uint32_t every_k,
                 uint32_t fields, double duration, char *err, size_t errlen);
// StopRecording: the file ends at the next step boundary. -1: not recording.
int record_stop(rec_model *rm);
// The recording in progress (NULL: none): its file.
const char *record_path(const rec_model *rm);
// GetRecording: the recording in progress, else the last one's counts (st points into rm).
void record_status(const rec_model *rm, sim *s, Partita__V1__RecordStatus *st);

#endif
