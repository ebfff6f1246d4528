// stats.c: GetStats (stats.h): the server's counters, the viewer's (a stats_source), and each
// model's, gathered from its thread by a command; a model that cannot answer (unloaded
// meanwhile, its queue full) is left out.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/analyses.h"
#include "api/inputs.h"
#include "api/registry.h"
#include "api/reply.h"
#include "api/stats.h"
#include "api/subs.h"

// One GetStats gathering the answers of several models' threads.
typedef struct {
  conn *c;
  uint64_t id;
  int gather_left;
  Partita__V1__Stats *stats;
} stats_ctx;

static Partita__V1__ModelStats *model_stats_new(sim *s, const sim_stats *t) {
  const model_entry *e = entry_of(s);
  Partita__V1__ModelStats init = PARTITA__V1__MODEL_STATS__INIT;
  Partita__V1__Quantiles q0 = PARTITA__V1__QUANTILES__INIT;
  Partita__V1__ModelStats *ms = malloc(sizeof(*ms));
  Partita__V1__Quantiles *q = malloc(3 * sizeof(*q));
  if (!ms || !q) {
    free(ms);
    free(q);
    return NULL;
  }
  *ms = init;
  q[0] = q[1] = q[2] = q0;
  ms->model = strdup(s->name);   // the reply may go out after the model is unloaded and freed
  ms->steps = t->steps;
  ms->time = t->time;
  ms->mode = (Partita__V1__Mode)t->mode;
  ms->rate = t->rate;
  q[0].mean = t->step_mean;
  q[0].p50 = t->step_p50;
  q[0].p99 = t->step_p99;
  q[0].max = t->step_max;
  q[1].p50 = t->late_p50;
  q[1].p99 = t->late_p99;
  q[1].max = t->late_max;
  q[2].mean = t->snap_mean;
  q[2].p50 = t->snap_p50;
  q[2].p99 = t->snap_p99;
  q[2].max = t->snap_max;
  ms->step_us = &q[0];
  ms->late_us = &q[1];
  ms->snapshot_us = &q[2];
  ms->snapshots = t->snapshots;
  ms->memory_bytes = s->mem_bytes + analyses_bytes(s->m);
  ms->overruns = t->overruns;
  ms->dropped_frames = t->dropped_frames + e->subs->dropped;
  ms->repartitions = t->repartitions;
  ms->failures = t->failures;
  ms->clipped_inputs = t->clipped_inputs;
  ms->udp_inputs = e->inputs->udp;
  ms->stale_inputs = e->inputs->stale;
  ms->malformed_inputs = e->inputs->malformed;
  ms->unauthorized_inputs = e->inputs->unauthorized;
  ms->dropped_inputs = e->inputs->dropped;
  ms->subscribers = (uint32_t)e->subs->n;
  ms->partition = t->partition_qr ? "qr" : "lu";
  ms->qr_switches = t->qr_switches;
  ms->qr_steps = t->qr_steps;
  if (!ms->model) {
    free(q);
    free(ms);
    return NULL;
  }
  return ms;
}

static void stats_free(Partita__V1__Stats *st) {
  for (size_t i = 0; i < st->n_models; i++) {
    if (st->models[i]) {
      free(st->models[i]->step_us);   // the three quantiles in one block
      free(st->models[i]->model);
    }
    free(st->models[i]);
  }
  free(st->models);
  free(st->server);
  free(st);
}

// Resident and locked memory of the process from /proc/self/smaps_rollup (bytes; 0 when the
// kernel does not say).
static void memory_use(uint64_t *rss, uint64_t *locked) {
  *rss = *locked = 0;
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  char line[256];
  unsigned long long kb;
  while (f && fgets(line, sizeof(line), f)) {
    if (sscanf(line, "Rss: %llu kB", &kb) == 1)
      *rss = kb * 1024;
    else if (sscanf(line, "Locked: %llu kB", &kb) == 1)
      *locked = kb * 1024;
  }
  if (f)
    fclose(f);
}

static void reply_stats(stats_ctx *x) {
  server *srv = server_of(x->c);
  Partita__V1__ServerStats init = PARTITA__V1__SERVER_STATS__INIT;
  pb_response r = PARTITA__V1__RESPONSE__INIT;
  Partita__V1__Stats *st = x->stats;
  st->server = malloc(sizeof(*st->server));
  if (st->server) {
    *st->server = init;
    const net *n = &srv->net;
    st->server->clients = (uint32_t)n->nclients;
    st->server->bytes_in = n->bytes_in + srv->udp.bytes_in;
    st->server->bytes_out = n->bytes_out + srv->udp.bytes_out;
    st->server->models = (uint32_t)srv->nmodels;
    st->server->uptime_s = (double)(net_now_ms() - srv->start_ms) / 1e3;
    st->server->requests = n->requests;
    st->server->refused_clients = n->refused_clients;
    st->server->disconnects_idle = n->disconnects_idle;
    st->server->disconnects_slow = n->disconnects_slow;
    st->server->disconnects_protocol = n->disconnects_protocol;
    st->server->auth_failures = srv->auth_failures;
    st->server->udp_malformed = srv->udp.malformed;
    st->server->udp_unknown_model = srv->udp_unknown_model;
    memory_use(&st->server->memory_resident_bytes, &st->server->memory_locked_bytes);
    if (srv->viewer_stats)
      srv->viewer_stats->add(srv->viewer_stats, st->server);
  }
  // models whose thread did not answer (unloaded meanwhile) are left out
  size_t k = 0;
  for (size_t i = 0; i < st->n_models; i++)
    if (st->models[i])
      st->models[k++] = st->models[i];
  st->n_models = k;
  r.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_STATS;
  r.stats = st;
  reply(x->c, x->id, &r);
  stats_free(st);
}

// A model's answer (its thread's counters); the last one answers the request.
static void stats_done(sim_cmd *cmd) {
  stats_ctx *x = cmd->ctx;
  sim *s = cmd->owner;
  if (!x->c->closing && cmd->status == PT_OK)
    x->stats->models[x->stats->n_models] = model_stats_new(s, &cmd->stats);
  x->stats->n_models++;
  if (--x->gather_left > 0) {
    sim_cmd_free(cmd);
    return;
  }
  if (!x->c->closing)
    reply_stats(x);
  else
    stats_free(x->stats);
  conn_request_done(x->c);
  free(x);
  sim_cmd_free(cmd);
}

int stats_request(conn *c, uint64_t id, const char *model) {
  server *srv = server_of(c);
  sim *one = model[0] ? registry_find(srv, model) : NULL;
  if (model[0] && !one)
    return reply_status(c, id, STATUS(NOT_FOUND), "no model named '%.100s'", model);
  int n = one ? 1 : srv->nmodels;
  Partita__V1__Stats init = PARTITA__V1__STATS__INIT;
  stats_ctx *x = calloc(1, sizeof(*x));
  Partita__V1__Stats *st = malloc(sizeof(*st));
  Partita__V1__ModelStats **ms = calloc((size_t)n + 1, sizeof(*ms));
  if (!x || !st || !ms) {
    free(x);
    free(st);
    free(ms);
    return reply_status(c, id, STATUS(RESOURCE_EXHAUSTED), "out of memory");
  }
  *st = init;
  st->models = ms;
  x->c = c;
  x->id = id;
  x->stats = st;
  x->gather_left = n;
  c->inflight++;
  if (n == 0) {
    reply_stats(x);
    conn_request_done(c);
    free(x);
    return 0;
  }
  for (int i = 0; i < n; i++) {
    sim *s = one ? one : srv->models[i];
    sim_cmd *cmd = sim_cmd_new(s, CMD_STATS);
    if (cmd) {
      cmd->ctx = x;
      cmd->done = stats_done;
      if (sim_submit(s, cmd) == 0)
        continue;
      sim_cmd_free(cmd);
    }
    // this model cannot answer now: count it as answered, without entry
    x->stats->models[x->stats->n_models++] = NULL;
    if (--x->gather_left == 0) {
      reply_stats(x);
      conn_request_done(c);
      free(x);
      return 0;
    }
  }
  return 0;
}
