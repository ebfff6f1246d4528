// ptb_analysis.h: the analysis requests of the protocol run against a model and a data:
// InverseDynamics, Linearize and Equilibrium in, their replies out. partitad runs them on a
// copy of a live model's data (a work-pool thread); `partita inverse|linearize|equilibrium
// MODEL` runs the very request it would send to partitad against the file's model, so the
// answers are the same by construction.
//
// Each call first checks the whole request (names, values, counts: refused with PT_EINVAL
// before anything changes), then sets d's time, state and inputs from it, runs the engine and
// builds *out from malloc'd parts only, released with protobuf_c_message_free_unpacked().
// It answers PT_OK or the negative pt_status, with e saying where and why (ptb_error.h).
// o: NULL for partitad's way (ptb_opts).
#ifndef PTB_ANALYSIS_H
#define PTB_ANALYSIS_H

#include "partita.h"
#include "partita.pb-c.h"
#include "pt_inverse.h"
#include "pt_linearize.h"
#include "ptb_error.h"

// Kinematic inverse dynamics without accelerations, a torque request with them (the name
// "all": every actuated coordinate), the holding efforts with rq->gravity; d's state is first
// set from the request's coordinates, rates and time. The reply's model is rq->model.
int ptb_inverse(const pt_model *m, pt_data *d, const Partita__V1__InverseDynamics *rq,
                const ptb_opts *o, Partita__V1__InverseDynamicsReply **out, ptb_error *e);

// The linearization at d's state, or at the operating point the request's coordinates and
// rates give (assembled on d), with its input_values held there. lz: a linearizer of the
// model (its work data reused from one request to the next; pt_linearizer_new).
int ptb_linearize(pt_linearizer *lz, const pt_model *m, pt_data *d,
                  const Partita__V1__Linearize *rq, const ptb_opts *o,
                  Partita__V1__LinearizeReply **out, ptb_error *e);

// Static equilibrium from d's configuration, or from the request's coordinates as the
// initial guess. rq->apply is the caller's business (moving a live model there).
int ptb_equilibrium(const pt_model *m, pt_data *d, const Partita__V1__Equilibrium *rq,
                    const ptb_opts *o, Partita__V1__EquilibriumReply **out, ptb_error *e);

#endif
