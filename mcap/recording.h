// recording.h: Partita's recordings, an MCAP file per model (docs/recording.md):
//   schemas   partita.v1.StateFrame, partita.v1.RecordedInput, partita.v1.ModelEvent
//             (encoding "protobuf", data: the protocol's FileDescriptorSet);
//   channels  /MODEL/state, /MODEL/input, /MODEL/event (message encoding "protobuf"); the
//             state channel's metadata names the coordinates, inputs and bodies;
//   metadata  "partita.model": how to rebuild the model (name, format, floating_base,
//             balance_inertia, no_joint_limits, dt, integrator, decimation, fields, initial
//             assignments, time base, start step);
//             "partita.end": the counters at the end (written by rec_writer_close);
//   attachment the model text, named after its source.
// Every message's MCAP `sequence` is the recording's own counter, shared by the three channels
// and assigned when the simulation produced the record, so sorting by it restores the order
// in which inputs, states and events happened (a state record that was dropped leaves a gap).
#ifndef PARTITA_RECORDING_H
#define PARTITA_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#include "mcap.h"
#include "partita.pb-c.h"

#define REC_META_MODEL "partita.model"
#define REC_META_END "partita.end"

typedef struct {
  const char *model;                  // the model's name
  const char *text;                   // the model text (YAML or URDF) and its length
  size_t text_len;
  const char *source_name;            // the file it came from (names the attachment)
  int format;                         // 1 YAML, 2 URDF
  int floating_base;
  int balance_inertia;                // URDF inertias repaired at load
  int no_joint_limits;                // joint limits not enforced
  int ground_plane;                   // the ground plane z = ground_z added at load
  double ground_z;
  double dt;
  const char *integrator;             // "rk4" | "abm4" | "euler"
  uint32_t every_k;                   // state decimation
  uint32_t fields;                    // Field bits of the state frames
  const char *time_base;              // log_time: "simulation" (offline) or "wall" (daemon)
  int64_t start_step;                 // the model's step when recording started
  const char *init, *init_rate;       // "NAME=VALUE" lines applied before step 0 (offline)
  const char *const *coord_names;     // (nc)
  int nc;
  const char *const *input_names;     // (ni)
  int ni;
  const char *const *body_names;      // (nb)
  int nb;
  const char *const *ctl_names;       // (nx) control states (docs/controls.md), may be 0
  int nx;
  const char *const *signal_names;    // (nsig) signals
  int nsig;
  const char *library;                // Header.library
  size_t chunk_size;                  // 0: 64 KiB
  int fsync_chunks;
} rec_info;

typedef struct rec_writer rec_writer;

// Creates the file and writes the header, schemas, channels, the model's metadata and its text.
rec_writer *rec_writer_open(const char *path, const rec_info *info, char *err, size_t errlen);
int rec_write_state(rec_writer *w, uint32_t seq, uint64_t log_time,
                    const Partita__V1__StateFrame *f);
int rec_write_input(rec_writer *w, uint32_t seq, uint64_t log_time,
                    const Partita__V1__RecordedInput *in);
int rec_write_event(rec_writer *w, uint32_t seq, uint64_t log_time,
                    const Partita__V1__ModelEvent *ev);
int rec_writer_flush(rec_writer *w);
// Writes the "partita.end" metadata (npairs key/value pairs) and ends the file; frees w.
int rec_writer_close(rec_writer *w, const char *const *kv, int npairs, char *err, size_t errlen);
void rec_writer_abandon(rec_writer *w);   // frees w, leaving the file as a crash would
const char *rec_writer_error(const rec_writer *w);
uint64_t rec_writer_bytes(const rec_writer *w);

// ---------------------------------------------------------------------------------------------
// Reading a recording.

typedef enum { REC_STATE = 0, REC_INPUT = 1, REC_EVENT = 2 } rec_kind;

// One message of the recording. Inputs and events are decoded when the file is read; state
// frames (the bulk of a long recording) when asked for, one at a time (rec_state).
typedef struct {
  rec_kind kind;
  uint32_t seq;
  uint64_t log_time;
  const uint8_t *data;                // the encoded message, inside the file
  size_t len;
  union {
    Partita__V1__RecordedInput *input;
    Partita__V1__ModelEvent *event;
  } u;
} rec_entry;

// The state frame of a REC_STATE entry, decoded (checked decodable when the file was read;
// NULL only out of memory); free it with rec_state_free.
Partita__V1__StateFrame *rec_state(const rec_entry *e);
void rec_state_free(Partita__V1__StateFrame *f);

typedef struct rec_file {
  mcap_file f;
  mcap_read_status status;
  // from "partita.model" (strings owned by f)
  const char *model, *source_name, *integrator, *time_base, *init, *init_rate, *version;
  int format, floating_base, balance_inertia, no_joint_limits, ground_plane;
  double dt, ground_z;
  uint32_t every_k, fields;
  int64_t start_step;
  const uint8_t *text;                // the model text (attachment), not NUL-terminated
  size_t text_len;
  char **coord_names, **input_names, **body_names;   // split from the state channel
  int nc, ni, nb;
  char **ctl_names, **signal_names;   // control states, signals (absent before issue 26: 0)
  int nx, nsig;
  char *const *end_kv;                // "partita.end" pairs (NULL when the file was cut off)
  int end_npairs;
  rec_entry *entries;                 // (n) sorted by seq
  size_t n, nstate, ninput, nevent;
  uint64_t overruns;                  // state frames with `overran` set
  uint64_t seq_gaps;                  // records missing from the sequence (dropped states)
} rec_file;

// Reads and decodes a recording. Returns the MCAP status (COMPLETE, PARTIAL: usable up to
// where `f.note` says; BAD: err says why), or BAD with err when it is MCAP but no recording
// of ours (no "partita.model" metadata, no state channel...).
mcap_read_status rec_file_read(const char *path, rec_file *r, char *err, size_t errlen);
void rec_file_free(rec_file *r);
// A value of "partita.end" (NULL when absent).
const char *rec_end_value(const rec_file *r, const char *key);

#endif
