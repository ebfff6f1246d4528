// state.h: protobuf views of a state record (StateFrame) and of a model's description
// (ModelInfo). The messages point into the record and the model's name tables; only the small
// arrays are allocated.
#ifndef PD_STATE_H
#define PD_STATE_H

#include "model/sim.h"
#include "partita.pb-c.h"
#include "ptb_frame.h"

// fr->f views record h of model s: the fields both asked for and filled, body names when
// `names` (ptb_frame_build), and what only a live model's record holds (wall time, the last
// input applied, overran). Release with ptb_frame_release.
void state_frame(ptb_frame *fr, sim *s, snap_hdr *h, uint32_t fields, int names);
// The model's description as it is now (its independent coordinates, mode, time); freed with
// model_info_free.
Partita__V1__ModelInfo *model_info_new(sim *s);
void model_info_free(Partita__V1__ModelInfo *mi);

#endif
