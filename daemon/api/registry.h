// registry.h: the server the request handlers share, and its registry of models: a model's
// entry (its thread, model/sim.h, and the loop-side state each api module keeps for it),
// names, lookups, ListModels. Adding and unloading are models.c's.
#ifndef PD_REGISTRY_H
#define PD_REGISTRY_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/config.h"
#include "model/sim.h"
#include "net/conn.h"
#include "net/udp.h"
#include "record/record.h"


typedef struct server server;
typedef struct subs_model subs_model;           // subs.c
typedef struct analyses_model analyses_model;   // analyses.c
typedef struct inputs_model inputs_model;       // inputs.c

// Counters a layer above adds to GetStats (the viewer's): embedded in its owner, which `add`
// finds from it.
typedef struct stats_source stats_source;
struct stats_source {
  void (*add)(stats_source *src, Partita__V1__ServerStats *st);
};

// The server as the api sees it: the connection layer and the UDP port (embedded: a
// connection's net is its server's), the config, the models.
struct server {
  net net;                    // connections (server_of(c) finds the server from one)
  udp_port udp;
  config cfg;
  sim **models;               // (cfg.limits.max_models), the registry
  int nmodels;
  uint64_t model_serial;      // the last model_entry.serial given
  int loading;                // LoadModel jobs in the work pool
  uint64_t start_ms;
  uint64_t auth_failures;     // wrong tokens: Hello, and the viewer's browsers
  uint64_t udp_unknown_model;
  uint64_t next_sub_id, event_mark;   // subscriptions (subs.c)
  // What the layer above adds (viewer/): its URL (Hello; "" when off) and its counters
  // (GetStats; NULL when off).
  const char *viewer_url;
  stats_source *viewer_stats;
};

static inline server *server_of(const conn *c) {
  return (server *)(void *)((char *)c->net - offsetof(server, net));
}

// A loaded model: its thread and the loop-side state each module keeps for it, typed, made
// and freed by that module (models.c calls them at add and release). The entry lives as long
// as its sim (refs: commands, analyses and recordings in flight keep it after an unload) and
// is freed by the sim's on_release.
typedef struct {
  sim s;                      // model/: the thread, its rings, the latest state
  server *srv;
  uint64_t serial;            // unique per load (a reload under the same name differs)
  subs_model *subs;           // subs.c: the model's subscriptions
  analyses_model *analyses;   // analyses.c: snapshot slots and the requests waiting for one
  inputs_model *inputs;       // inputs.c: the UDP input session and its counters
  rec_model rec;              // record/: the model's text, its recording
} model_entry;

static inline model_entry *entry_of(sim *s) {
  return (model_entry *)(void *)((char *)s - offsetof(model_entry, s));
}

// The registry (cfg.limits.max_models) of a server on loop, the config already in srv->cfg;
// the hooks are dispatch_init's. 0, or -1 out of memory.
int registry_init(server *srv, uv_loop_t *loop);
// The model registered under `name`, or NULL.
sim *registry_find(server *srv, const char *name);
// 1 when `name` may name a model (1-127 bytes of UTF-8, no spaces or control characters).
int registry_valid_name(const char *name);
// ListModels.
int registry_list(conn *c, uint64_t id);

#endif
