// models.c: adding and unloading models (models.h). An entry is made with the state each
// module keeps for the model, its thread started, and it joins the registry; at unload it
// leaves the registry at once, and is freed when nothing in flight refers to it any more.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/analyses.h"
#include "api/inputs.h"
#include "api/models.h"
#include "api/reply.h"
#include "api/subs.h"
#include "base/log.h"

// The sim's on_release: what the api kept for the model, then the entry.
static void entry_release(sim *s) {
  model_entry *e = entry_of(s);
  subs_model_free(e->subs);
  analyses_model_free(e->analyses);
  inputs_model_free(e->inputs);
  record_release(&e->rec);
  free(e);
}

int models_add(server *srv, const char *name, pt_model *m, const model_opts *o, sim **out,
               char *err, size_t errlen) {
  int mode = o->run.mode;
  double rate = o->run.rate > 0 ? o->run.rate : 1.0;
  if (!registry_valid_name(name)) {
    snprintf(err, errlen, "invalid model name (1-127 bytes of UTF-8, no spaces or control "
             "characters)");
    return STATUS(INVALID_ARGUMENT);
  }
  if (registry_find(srv, name)) {
    snprintf(err, errlen, "a model named '%s' is already loaded", name);
    return STATUS(ALREADY_EXISTS);
  }
  char why[200];
  if ((mode == MODE(REALTIME) || rate != 1.0) &&
      pace_check(pt_model_dt(m), rate, why, sizeof(why))) {
    snprintf(err, errlen, "model '%s': %s", name, why);
    return STATUS(INVALID_ARGUMENT);
  }
  if (srv->nmodels >= srv->cfg.limits.max_models) {
    snprintf(err, errlen, "too many models (limit %d)", srv->cfg.limits.max_models);
    return STATUS(RESOURCE_EXHAUSTED);
  }
  model_entry *e = calloc(1, sizeof(*e));
  if (e && sim_init(&e->s, name, m, &srv->cfg)) {
    free(e);
    e = NULL;
  }
  sim *s = e ? &e->s : NULL;
  if (s) {
    s->on_release = entry_release;
    s->on_output = subs_on_output;
    e->subs = subs_model_new();
    e->analyses = analyses_model_new(m);
    e->inputs = inputs_model_new();
    if (!e->subs || !e->analyses || !e->inputs) {
      s->m = NULL;   // the caller still owns the model on failure
      sim_free(s);
      s = NULL;
    }
  }
  if (!s) {
    snprintf(err, errlen, "out of memory creating model '%s'", name);
    return STATUS(RESOURCE_EXHAUSTED);
  }
  e->srv = srv;
  e->serial = ++srv->model_serial;
  record_on_load(&e->rec, s, &o->origin, srv->net.loop);   // keeps the text; the config may
                                                            // record from the start
  if (sim_start(s, srv->net.loop, &o->run)) {
    record_on_unload_wait(&e->rec);
    s->m = NULL;
    sim_free(s);
    snprintf(err, errlen, "could not start the thread of model '%s'", name);
    return STATUS(INTERNAL);
  }
  srv->models[srv->nmodels++] = s;
  log_info("model %s loaded: %d bodies, %d dof, %d inputs, dt %g, mode %d", name,
           pt_model_nbody(m), pt_model_ndof(m), s->ni, pt_model_dt(m), mode);
  if (out)
    *out = s;
  return STATUS(OK);
}

static void on_async_closed(uv_handle_t *h) { sim_unref(h->data); }

// An UnloadModel answered once the model's recording has completed its file.
typedef struct {
  rec_waiter w;
  conn *c;
  uint64_t id;
} unload_wait;

static void unload_answer(rec_waiter *w) {
  unload_wait *u = (unload_wait *)(void *)w;
  if (!u->c->closing)
    reply_status(u->c, u->id, STATUS(OK), "%s", "");
  conn_request_done(u->c);
  free(u);
}

int models_unload(server *srv, sim *s, conn *c, uint64_t id) {
  int i = 0;
  while (i < srv->nmodels && srv->models[i] != s)
    i++;
  if (i == srv->nmodels)
    return 0;
  memmove(&srv->models[i], &srv->models[i + 1], sizeof(sim *) * (size_t)(srv->nmodels - i - 1));
  srv->nmodels--;
  subs_drop_model(s);
  sim_stop(s);   // answers queued commands with "unloaded"
  // an active recording ends with the model's last step; its writer finishes the file
  // without holding up the loop (the answer to c, if any, waits for it)
  unload_wait *u = c ? calloc(1, sizeof(*u)) : NULL;
  if (u)
    *u = (unload_wait){.w.done = unload_answer, .c = c, .id = id};
  int deferred = record_on_unload(&entry_of(s)->rec, u ? &u->w : NULL);
  if (deferred)
    c->inflight++;   // the connection stays allocated until the answer
  else
    free(u);
  log_info("model %s unloaded", s->name);
  uv_close((uv_handle_t *)&s->async, on_async_closed);
  return deferred;
}
