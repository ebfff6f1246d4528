// subs.h: subscriptions: frames of one model every k steps to a connection or a UDP peer. The
// model's thread produces one state record per step that some subscription wants; each record
// is encoded once per field selection and fanned out. Slow connections lose frames (counted),
// the model never waits.
#ifndef PD_SUBS_H
#define PD_SUBS_H

#include <stdint.h>

#include "model/sim.h"
#include "net/conn.h"
#include "partita.pb-c.h"

typedef struct server server;
typedef struct sub sub;

struct sub {
  uint64_t id;
  conn *c;
  sim *s;
  uint32_t every_k, fields;
  int udp;
  struct sockaddr_storage peer;
  uint64_t seq, dropped;
  int dead;                   // its connection closed; freed at the next sweep
  sub *next;                  // in the model's list
};

// A model's subscriptions (its entry's, api/registry.h).
typedef struct subs_model subs_model;
struct subs_model {
  sub *head;
  int n;                      // live and dead, until swept
  int fanout_depth;           // > 0 while frames are being sent: frees are deferred
  int64_t dropped;            // frames dropped for slow subscribers (GetStats)
};

subs_model *subs_model_new(void);   // NULL out of memory
void subs_model_free(subs_model *sm);

// The model's on_output hook: its events and state records to the subscribers.
void subs_on_output(sim *s);
int subs_add(conn *c, sim *s, const Partita__V1__Subscribe *rq, sub **out, char *err,
             size_t errlen);
int subs_remove(conn *c, uint64_t id);   // -1: no such subscription on c
void subs_drop_conn(conn *c);            // c closes (the connection layer's hook)
void subs_drop_model(sim *s);            // s unloads

#endif
