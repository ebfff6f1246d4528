// heavy_engine.h: the engine glue of the analyses (analyses.c). Each runs on a libuv work-pool
// thread with its own copy of the model's data (taken at a step boundary), so the model keeps
// stepping.
//
// A handler fills *out with a reply built from malloc'd parts only (strings, arrays,
// submessages): it is released with protobuf_c_message_free_unpacked(). It returns PT_OK or a
// negative pt_status with a message in msg.
#ifndef PD_HEAVY_H
#define PD_HEAVY_H

#include <stddef.h>

#include "partita.h"
#include "partita.pb-c.h"

int heavy_inverse(const pt_model *m, pt_data *d, const Partita__V1__InverseDynamics *rq,
                  Partita__V1__InverseDynamicsReply **out, char *msg, size_t msglen);
// lz: the snapshot slot's linearizer (its work data is reused from one request to the next).
int heavy_linearize(const pt_model *m, pt_linearizer *lz, pt_data *d,
                    const Partita__V1__Linearize *rq, Partita__V1__LinearizeReply **out,
                    char *msg, size_t msglen);
// With rq->apply, the glue moves the live model to out->coordinates afterwards.
int heavy_equilibrium(const pt_model *m, pt_data *d, const Partita__V1__Equilibrium *rq,
                      Partita__V1__EquilibriumReply **out, char *msg, size_t msglen);

#endif
