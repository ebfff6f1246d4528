// registry.c: the registry of models (registry.h): names, lookups, ListModels.
#include <stdlib.h>
#include <string.h>

#include "api/registry.h"
#include "api/reply.h"
#include "base/text.h"
#include "model/state.h"

int registry_valid_name(const char *n) {
  size_t len = strlen(n);
  if (len == 0 || len >= SIM_NAME || !text_is_clean(n))
    return 0;
  for (size_t i = 0; i < len; i++)
    if (n[i] == ' ')
      return 0;
  return 1;
}

int registry_init(server *srv, uv_loop_t *loop) {
  srv->net.loop = loop;
  srv->net.cfg = &srv->cfg;
  srv->viewer_url = "";
  srv->start_ms = net_now_ms();
  srv->models = calloc((size_t)srv->cfg.limits.max_models, sizeof(sim *));
  return srv->models ? 0 : -1;
}

sim *registry_find(server *srv, const char *name) {
  for (int i = 0; i < srv->nmodels; i++)
    if (strcmp(srv->models[i]->name, name) == 0)
      return srv->models[i];
  return NULL;
}

int registry_list(conn *c, uint64_t id) {
  server *srv = server_of(c);
  Partita__V1__ModelList ml = PARTITA__V1__MODEL_LIST__INIT;
  pb_response r = PARTITA__V1__RESPONSE__INIT;
  ml.models = calloc((size_t)srv->nmodels + 1, sizeof(*ml.models));
  if (!ml.models)
    return reply_status(c, id, STATUS(RESOURCE_EXHAUSTED), "out of memory");
  for (int i = 0; i < srv->nmodels; i++)
    if ((ml.models[ml.n_models] = model_info_new(srv->models[i])))
      ml.n_models++;
  r.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_MODEL_LIST;
  r.model_list = &ml;
  reply(c, id, &r);
  for (size_t i = 0; i < ml.n_models; i++)
    model_info_free(ml.models[i]);
  free(ml.models);
  return 0;
}
