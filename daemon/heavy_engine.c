// heavy_engine.c: the engine calls behind InverseDynamics, Linearize and Equilibrium (see
// heavy.h). Until the engine offers these computations they answer UNIMPLEMENTED.
#include <stdio.h>

#include "heavy.h"

int heavy_inverse(const pt_model *m, pt_data *d, const Partita__V1__InverseDynamics *rq,
                  Partita__V1__InverseDynamicsReply **out, char *msg, size_t msglen) {
  (void)m, (void)d, (void)rq;
  *out = NULL;
  snprintf(msg, msglen, "InverseDynamics is not implemented by this engine build yet");
  return PT_EUNIMPL;
}

int heavy_linearize(const pt_model *m, pt_data *d, const Partita__V1__Linearize *rq,
                    Partita__V1__LinearizeReply **out, char *msg, size_t msglen) {
  (void)m, (void)d, (void)rq;
  *out = NULL;
  snprintf(msg, msglen, "Linearize is not implemented by this engine build yet");
  return PT_EUNIMPL;
}

int heavy_equilibrium(const pt_model *m, pt_data *d, const Partita__V1__Equilibrium *rq,
                      Partita__V1__EquilibriumReply **out, char *msg, size_t msglen) {
  (void)m, (void)d, (void)rq;
  *out = NULL;
  snprintf(msg, msglen, "Equilibrium is not implemented by this engine build yet");
  return PT_EUNIMPL;
}
