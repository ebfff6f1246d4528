// registry.c: the registry of models (registry.h): names, lookups, ListModels, and coordinate
// names to indices.
#include <math.h>
#include <stdio.h>
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

// Names to coordinate indices, refusing unknown names and non-finite values.
int parse_named(sim *s, Partita__V1__NamedValue **v, size_t n,
                int (*index)(const pt_model *, const char *), const char *what, pt_assign **out,
                int *nout, char *err, size_t errlen) {
  *out = NULL;
  *nout = 0;
  if (n == 0)
    return 0;
  pt_assign *a = calloc(n, sizeof(*a));
  if (!a) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    int k = index(s->m, v[i]->name);
    if (k < 0) {
      snprintf(err, errlen, "model %s has no %s '%.100s'", s->name, what, v[i]->name);
      free(a);
      return -1;
    }
    if (!isfinite(v[i]->value) || fabs(v[i]->value) > PD_MAX_ABS_STATE) {
      snprintf(err, errlen, "%s '%.100s': value %g is not finite or beyond +-%g", what,
               v[i]->name, v[i]->value, PD_MAX_ABS_STATE);
      free(a);
      return -1;
    }
    a[i].coord = k;
    a[i].value = v[i]->value;
  }
  *out = a;
  *nout = (int)n;
  return 0;
}

int parse_assigns(sim *s, Partita__V1__NamedValue **v, size_t n, pt_assign **out, int *nout,
                  char *err, size_t errlen) {
  return parse_named(s, v, n, pt_coord_index, "coordinate", out, nout, err, errlen);
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
