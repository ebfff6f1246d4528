// state.h: protobuf views of a state record (StateFrame) and of a model's description
// (ModelInfo). The messages point into the record and the model's name tables; only the small
// arrays are allocated.
#ifndef PD_STATE_H
#define PD_STATE_H

#include "model/sim.h"
#include "partita.pb-c.h"

typedef struct {
  Partita__V1__StateFrame f;
  Partita__V1__Energy energy;
  Partita__V1__Residual residual;
  Partita__V1__BodyState *body;
  Partita__V1__BodyState **bodyp;
} state_msg;

// m->f views record h of model s (the fields both asked for and filled; body names when
// `names`). Release with state_release.
void state_build(state_msg *m, sim *s, snap_hdr *h, uint32_t fields, int names);
void state_release(state_msg *m);
// The model's description as it is now (its independent coordinates, mode, time); freed with
// model_info_free.
Partita__V1__ModelInfo *model_info_new(sim *s);
void model_info_free(Partita__V1__ModelInfo *mi);

#endif
