// models.h: adding a model to the registry (LoadModel, the config's models, partita-view's)
// and unloading one. A model's entry is made here with each module's state for it, and freed
// (through the sim's on_release) when the last reference to its sim goes.
#ifndef PD_MODELS_H
#define PD_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "api/registry.h"

// How a model is added: how it runs and where its text came from (for recordings).
typedef struct {
  sim_opts run;
  rec_origin origin;
} model_opts;

// Adds a model (m becomes the server's on success) and starts its thread. The protocol's
// status code, with a message in err.
int models_add(server *srv, const char *name, pt_model *m, const model_opts *o, sim **out,
               char *err, size_t errlen);
// Unloads s. With c, the UnloadModel request id of c: returns 1 when its answer will come
// later (a recording finishing its file), 0 when the caller answers now.
int models_unload(server *srv, sim *s, conn *c, uint64_t id);

#endif
