// load.c: LoadModel (load.h): the text is parsed and assembled on the work pool (physics
// stays off the loop), then the model joins the registry and the answer waits for its thread
// to have evaluated the initial state.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/load.h"
#include "api/models.h"
#include "api/reply.h"

typedef struct {
  char *text;
  size_t len;
  char name[SIM_NAME];
  char source[128];
  int format;
  pt_load_options load;
  model_opts opts;
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
  server *srv = server_of(j->c);
  srv->loading--;
  char err[256];
  if (status < 0 || j->err.code < 0 || !j->m) {
    if (!j->c->closing)
      reply_status(j->c, j->id, status < 0 ? STATUS(INTERNAL) : status_from_pt(j->err.code),
                   "%s", status < 0 ? "load cancelled" : j->err.msg);
  } else {
    const char *name = j->name[0] ? j->name : pt_model_name(j->m);
    sim *s = NULL;
    j->opts.origin.text = j->text;   // kept by the model for its recordings
    j->opts.origin.len = j->len;
    j->opts.origin.name = j->source;
    int code = srv->net.stopping ? STATUS(FAILED_PRECONDITION)
                                 : models_add(srv, name, j->m, &j->opts, &s, err, sizeof(err));
    if (srv->net.stopping)
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
      if (cmd)
        submit(j->c, j->id, PARTITA__V1__REQUEST__OP_LOAD_MODEL, s, cmd);
      else
        reply_info(j->c, j->id, s, STATUS(OK), "");
    }
  }
  conn_request_done(j->c);
  free(j->text);
  free(j);
  if (srv->net.on_work_done)
    srv->net.on_work_done(&srv->net);
}

int load_request(conn *c, uint64_t id, const Partita__V1__LoadModel *rq) {
  server *srv = server_of(c);
  if (rq->name[0] && !registry_valid_name(rq->name))
    return reply_status(c, id, STATUS(INVALID_ARGUMENT),
                        "invalid model name (1-127 bytes of UTF-8, no spaces or control "
                        "characters)");
  if (rq->name[0] && registry_find(srv, rq->name))
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
  j->opts.run.mode = rq->mode ? (int)rq->mode : MODE(PAUSED);
  j->opts.run.rate = rq->rate > 0 ? rq->rate : 1.0;
  j->opts.run.input_timeout_ms = rq->input_timeout_ms;
  j->opts.run.input_hold = rq->input_hold;
  j->opts.origin.floating_base = rq->floating_base;
  j->opts.origin.balance_inertia = rq->balance_inertia;
  j->opts.origin.no_joint_limits = rq->no_joint_limits;
  j->opts.origin.ground_plane = rq->ground_plane;
  j->opts.origin.ground_z = rq->ground_z;
  j->opts.origin.format = (int)rq->format;   // 0: by content, as the loader decides
  j->load.floating_base = rq->floating_base;
  j->load.balance_inertia = rq->balance_inertia;
  j->load.no_joint_limits = rq->no_joint_limits;
  j->load.ground_plane = rq->ground_plane;
  j->load.ground_z = rq->ground_z;
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
  if (uv_queue_work(srv->net.loop, &j->work, load_work, load_after)) {
    free(j->text);
    free(j);
    return reply_status(c, id, STATUS(INTERNAL), "could not queue the load");
  }
  srv->loading++;
  c->inflight++;
  return 0;
}
