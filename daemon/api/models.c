// models.c: the model registry of the server: names, LoadModel (parsed and assembled on the
// work pool), ListModels, unloading, and coordinate names to indices.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "record/record.h"
#include "server.h"
#include "base/text.h"

static int valid_name(const char *n) {
  size_t len = strlen(n);
  if (len == 0 || len >= SIM_NAME || !text_is_clean(n))
    return 0;
  for (size_t i = 0; i < len; i++)
    if (n[i] == ' ')
      return 0;
  return 1;
}

int server_add_model(server *srv, const char *name, pt_model *m, const sim_opts *o, sim **out,
                     char *err, size_t errlen) {
  int mode = o->mode;
  double rate = o->rate > 0 ? o->rate : 1.0;
  if (!valid_name(name)) {
    snprintf(err, errlen, "invalid model name (1-127 bytes of UTF-8, no spaces or control "
             "characters)");
    return STATUS(INVALID_ARGUMENT);
  }
  if (server_find_model(srv, name)) {
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
  sim *s = sim_new(name, m, &srv->cfg);
  if (!s) {
    snprintf(err, errlen, "out of memory creating model '%s'", name);
    return STATUS(RESOURCE_EXHAUSTED);
  }
  s->server = srv;
  s->serial = ++srv->model_serial;
  s->on_async = subs_on_async;
  record_on_load(s, o, srv->loop);   // keeps the text; the config may record from the start
  if (sim_start(s, srv->loop, o)) {
    record_on_unload_wait(s);
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

int server_unload(server *srv, sim *s, conn *c, uint64_t id) {
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
  int deferred = record_on_unload(s, c, id);
  log_info("model %s unloaded", s->name);
  uv_close((uv_handle_t *)&s->async, on_async_closed);
  return deferred;
}

// Names to coordinate indices, refusing unknown names and non-finite values.
int parse_assigns(sim *s, Partita__V1__NamedValue **v, size_t n, pt_assign **out, int *nout,
                  char *err, size_t errlen) {
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
    int k = pt_coord_index(s->m, v[i]->name);
    if (k < 0) {
      snprintf(err, errlen, "model %s has no coordinate '%.100s'", s->name, v[i]->name);
      free(a);
      return -1;
    }
    if (!isfinite(v[i]->value) || fabs(v[i]->value) > PD_MAX_ABS_STATE) {
      snprintf(err, errlen, "coordinate '%.100s': value %g is not finite or beyond +-%g",
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

// ---------------------------------------------------------------------------------------------
// LoadModel and ListModels.

typedef struct {
  char *text;
  size_t len;
  char name[SIM_NAME];
  char source[128];
  int format;
  pt_load_options load;
  sim_opts opts;
  conn *c;
  uint64_t id;
  pt_model *m;
  pt_error err;
  uv_work_t work;
} load_job;

static void load_work(uv_work_t *w) {
  load_job *j = w->data;
  j->err.code =
      pt_model_load_string(j->text, j->len, j->format, j->source, &j->load, &j->m, &j->err);
}

static void load_after(uv_work_t *w, int status) {
  load_job *j = w->data;
  server *srv = j->c->srv;
  srv->loading--;
  char err[256];
  if (status < 0 || j->err.code < 0 || !j->m) {
    if (!j->c->closing)
      reply_status(j->c, j->id, status < 0 ? STATUS(INTERNAL) : status_from_pt(j->err.code),
                   "%s", status < 0 ? "load cancelled" : j->err.msg);
  } else {
    const char *name = j->name[0] ? j->name : pt_model_name(j->m);
    sim *s = NULL;
    j->opts.src_text = j->text;   // kept by the model for its recordings
    j->opts.src_len = j->len;
    j->opts.src_name = j->source;
    int code = srv->stopping ? STATUS(FAILED_PRECONDITION)
                             : server_add_model(srv, name, j->m, &j->opts, &s, err,
                                                sizeof(err));
    if (srv->stopping)
      snprintf(err, sizeof(err), "server shutting down");
    if (code != STATUS(OK)) {
      pt_model_free(j->m);
      if (!j->c->closing)
        reply_status(j->c, j->id, code, "%s", err);
    } else if (!j->c->closing) {
      // answer once the model's thread has evaluated its initial state (partition included)
      sim_cmd *cmd = sim_cmd_new(s, CMD_GET_STATE);
      if (cmd)
        cmd->fields = 0;
      if (cmd) {
        submit(j->c, j->id, PARTITA__V1__REQUEST__OP_LOAD_MODEL, s, cmd);
      } else {
        req_ctx x = {.c = j->c, .id = j->id};
        reply_info(&x, s, STATUS(OK), "");
      }
    }
  }
  conn_request_done(j->c);
  free(j->text);
  free(j);
  if (srv->on_work_done)
    srv->on_work_done(srv);
}

int do_load(conn *c, uint64_t id, const Partita__V1__LoadModel *rq) {
  server *srv = c->srv;
  if (rq->name[0] && !valid_name(rq->name))
    return reply_status(c, id, STATUS(INVALID_ARGUMENT),
                        "invalid model name (1-127 bytes of UTF-8, no spaces or control "
                        "characters)");
  if (rq->name[0] && server_find_model(srv, rq->name))
    return reply_status(c, id, STATUS(ALREADY_EXISTS), "a model named '%s' is already loaded",
                        rq->name);
  if (srv->nmodels + srv->loading >= srv->cfg.limits.max_models)
    return reply_status(c, id, STATUS(RESOURCE_EXHAUSTED), "too many models (limit %d)",
                        srv->cfg.limits.max_models);
  if (!rq->source[0])
    return reply_status(c, id, STATUS(INVALID_ARGUMENT), "LoadModel: empty source");
  if (rq->format > PARTITA__V1__MODEL_FORMAT__URDF)
    return reply_status(c, id, STATUS(INVALID_ARGUMENT), "LoadModel: unknown format");
  if ((int)rq->mode < 0 || rq->mode > PARTITA__V1__MODE__LOCKSTEP)
    return reply_status(c, id, STATUS(INVALID_ARGUMENT), "LoadModel: unknown mode");
  if (rq->dt != 0 && !(rq->dt > 0 && rq->dt <= 1.0))
    return reply_status(c, id, STATUS(INVALID_ARGUMENT), "LoadModel: dt must be in (0, 1] s");
  if (rq->input_timeout_ms > 3600000)
    return reply_status(c, id, STATUS(INVALID_ARGUMENT),
                        "LoadModel: input_timeout_ms at most 3600000 (one hour)");
  if (rq->rate != 0 && (!isfinite(rq->rate) || rq->rate < PACE_RATE_MIN ||
                        rq->rate > PACE_RATE_MAX))
    return reply_status(c, id, STATUS(INVALID_ARGUMENT), "LoadModel: rate must be in [%g, %g]",
                        PACE_RATE_MIN, PACE_RATE_MAX);
  load_job *j = calloc(1, sizeof(*j));
  if (!j || !(j->text = strdup(rq->source))) {
    free(j);
    return reply_status(c, id, STATUS(RESOURCE_EXHAUSTED), "out of memory");
  }
  j->len = strlen(rq->source);
  snprintf(j->name, sizeof(j->name), "%s", rq->name);
  snprintf(j->source, sizeof(j->source), "%s",
           rq->source_name[0] ? rq->source_name : "<LoadModel>");
  j->format = rq->format;
  j->opts.mode = rq->mode ? (int)rq->mode : MODE(PAUSED);
  j->opts.rate = rq->rate > 0 ? rq->rate : 1.0;
  j->opts.input_timeout_ms = rq->input_timeout_ms;
  j->opts.input_hold = rq->input_hold;
  j->opts.floating_base = rq->floating_base;
  j->opts.balance_inertia = rq->balance_inertia;
  j->opts.no_joint_limits = rq->no_joint_limits;
  j->opts.src_format = (int)rq->format;   // 0: by content, as the loader decides
  j->load.floating_base = rq->floating_base;
  j->load.balance_inertia = rq->balance_inertia;
  j->load.no_joint_limits = rq->no_joint_limits;
  j->load.max_text_bytes = (size_t)srv->cfg.limits.model_bytes;   // 0: the engine's defaults
  j->load.max_bodies = srv->cfg.limits.model_bodies;
  j->load.max_joints = srv->cfg.limits.model_joints;
  j->load.dt = rq->dt;
  j->load.package_path = srv->cfg.viewer.package_path;   // meshes (docs/viewer.md)
  if (rq->integrator[0]) {
    pt_integrator it;
    if (pt_integrator_parse(rq->integrator, &it)) {
      free(j->text);
      free(j);
      return reply_status(c, id, STATUS(INVALID_ARGUMENT),
                          "LoadModel: integrator must be rk4, abm4 or euler");
    }
    j->load.has_integrator = 1;
    j->load.integrator = (int)it;
  }
  j->c = c;
  j->id = id;
  j->work.data = j;
  // parsing and assembling a model is physics: it runs on the work pool, not on the loop
  if (uv_queue_work(srv->loop, &j->work, load_work, load_after)) {
    free(j->text);
    free(j);
    return reply_status(c, id, STATUS(INTERNAL), "could not queue the load");
  }
  srv->loading++;
  c->inflight++;
  return 0;
}

int do_list(conn *c, uint64_t id) {
  server *srv = c->srv;
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
