// inputs.h: inputs into a model: SetInputs and StepWithInputs (by name or index), and the UDP
// fast path's InputFrames (per model and sender session, sequence numbers only go up: an
// older one is stale and dropped, the latest wins; with a token, the digest is checked).
#ifndef PD_INPUTS_H
#define PD_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "model/sim.h"
#include "net/conn.h"
#include "net/udp.h"
#include "partita.pb-c.h"

// A model's UDP input session and counters (its entry's, api/registry.h).
typedef struct inputs_model inputs_model;
struct inputs_model {
  uint64_t session, seq;      // the current session and its last sequence
  int open;                   // a session is current (cleared by Reset and SetMode)
  int64_t udp, stale, malformed, unauthorized, dropped;
};

inputs_model *inputs_model_new(void);   // NULL out of memory
void inputs_model_free(inputs_model *in);

// Queues the inputs of a SetInputs or StepWithInputs for model s. 0, or -1 after answering
// the request with the reason it was refused (nothing queued then).
int inputs_queue(conn *c, uint64_t id, sim *s, Partita__V1__NamedValue **by_name,
                 size_t n_by_name, Partita__V1__IndexedValue **by_index, size_t n_by_index);
// A new mode or a reset: the next UDP frame opens a new session.
void inputs_new_session(sim *s);
// The UDP port's hook: an InputFrame applied, or counted by why it was not.
void inputs_udp(udp_port *u, const Partita__V1__InputFrame *f);

#endif
