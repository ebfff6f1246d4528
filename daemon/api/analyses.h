// analyses.h: Linearize, InverseDynamics and Equilibrium. A request takes one of the model's
// snapshot slots made at load; the model's thread copies its data into it at a step boundary
// (a command, nothing allocated or evaluated there); the libuv work pool computes on the copy
// (the bridge, ptb_analysis.h) and the answer goes out from the loop. Requests beyond the
// slots wait their turn in order.
#ifndef PD_ANALYSES_H
#define PD_ANALYSES_H

#include <stddef.h>

#include "model/sim.h"
#include "net/conn.h"
#include "pt_linearize.h"

#define ANALYSES_SLOTS 2     // requests of one model computing at once

typedef struct analysis analysis;

// A model's slots (its entry's, api/registry.h), made at load.
typedef struct analyses_model analyses_model;
struct analyses_model {
  pt_data *slot[ANALYSES_SLOTS];         // the snapshots
  pt_linearizer *lin[ANALYSES_SLOTS];    // a linearizer each (work data kept between calls)
  int used[ANALYSES_SLOTS];
  analysis *wait;                        // requests waiting for a slot, FIFO
};

analyses_model *analyses_model_new(const pt_model *m);   // NULL out of memory
void analyses_model_free(analyses_model *a);
size_t analyses_bytes(const pt_model *m);   // the memory of a model's slots
// Starts (or queues) the request for model s; takes ownership of req. 0 queued, -1 answered.
int analyses_start(conn *c, sim *s, pb_request *req);

#endif
