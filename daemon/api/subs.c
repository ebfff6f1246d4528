// subs.c: subscriptions (subs.h). The simulation thread produces one state record per step
// that some subscription wants; here each record is encoded once per field selection and
// fanned out. Slow connections lose frames (counted), the model never waits.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "api/registry.h"
#include "api/reply.h"
#include "api/subs.h"
#include "base/log.h"
#include "model/state.h"
#include "ptb_fields.h"

static void table_done(sim_cmd *cmd) { sim_cmd_free(cmd); }

subs_model *subs_model_new(void) { return calloc(1, sizeof(subs_model)); }

void subs_model_free(subs_model *sm) { free(sm); }

// Send the model thread the decimation table of the live subscriptions. -1 when it could not
// be queued (out of memory, command queue full): the thread keeps its old table.
static int push_table(sim *s) {
  subs_model *sm = entry_of(s)->subs;
  sim_cmd *cmd = sim_cmd_new(s, CMD_SET_SUBS);
  int n = 0;
  for (sub *b = sm->head; b; b = b->next)
    n += !b->dead;
  if (cmd)
    cmd->subs = calloc((size_t)n + 1, sizeof(sim_sub));
  if (!cmd || !cmd->subs) {
    sim_cmd_free(cmd);
    log_error("model %s: out of memory updating subscriptions", s->name);
    return -1;
  }
  for (sub *b = sm->head; b; b = b->next)
    if (!b->dead)
      cmd->subs[cmd->nsubs++] = (sim_sub){b->every_k, b->fields};
  cmd->done = table_done;
  if (sim_submit(s, cmd)) {
    sim_cmd_free(cmd);
    log_warn("model %s: command queue full; subscription table not updated", s->name);
    return -1;
  }
  return 0;
}

// Free dead subscriptions (not while a fan-out walks the list).
static void sweep(sim *s) {
  subs_model *sm = entry_of(s)->subs;
  if (sm->fanout_depth > 0)
    return;
  int changed = 0;
  for (sub **pp = &sm->head; *pp;) {
    sub *b = *pp;
    if (b->dead) {
      *pp = b->next;
      sm->n--;
      free(b);
      changed = 1;
    } else {
      pp = &b->next;
    }
  }
  if (changed && !s->unloading)
    push_table(s);
}

static int parse_peer(const char *addr, struct sockaddr_storage *ss) {
  char host[128];
  int port;
  if (wire_split_addr(addr, host, sizeof(host), &port) || port == 0)
    return -1;
  memset(ss, 0, sizeof(*ss));
  if (strchr(host, ':'))
    return uv_ip6_addr(host, port, (struct sockaddr_in6 *)ss) ? -1 : 0;
  return uv_ip4_addr(host, port, (struct sockaddr_in *)ss) ? -1 : 0;
}

static int is_loopback(const struct sockaddr_storage *a) {
  if (a->ss_family == AF_INET)
    return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
  if (a->ss_family == AF_INET6) {
    static const unsigned char one[16] = {[15] = 1};
    return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, one, 16) == 0;
  }
  return 0;
}

// A UDP stream may go only to the host the subscribing connection comes from (loopback for a
// Unix socket): otherwise anyone who can reach the daemon could aim its frames at a third
// party.
static int own_host(const conn *c, const struct sockaddr_storage *peer) {
  const struct sockaddr_storage *a = &c->addr;
  if (a->ss_family == AF_UNSPEC)
    return is_loopback(peer);
  if (a->ss_family != peer->ss_family)
    return 0;
  if (a->ss_family == AF_INET)
    return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
           ((const struct sockaddr_in *)peer)->sin_addr.s_addr;
  return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                &((const struct sockaddr_in6 *)peer)->sin6_addr, 16) == 0;
}

int subs_add(conn *c, sim *s, const Partita__V1__Subscribe *rq, sub **out, char *err,
             size_t errlen) {
  server *srv = server_of(c);
  subs_model *sm = entry_of(s)->subs;
  uint32_t fields = rq->fields ? rq->fields : PTB_FIELD_DEFAULT;
  if (fields & ~PTB_FIELD_ALL) {
    snprintf(err, errlen, "Subscribe: unknown field bits");
    return STATUS(INVALID_ARGUMENT);
  }
  uint32_t k = rq->every_k;
  if (k == 0 && rq->rate_hz != 0) {
    if (!isfinite(rq->rate_hz) || rq->rate_hz < 0) {
      snprintf(err, errlen, "Subscribe: rate_hz must be positive");
      return STATUS(INVALID_ARGUMENT);
    }
    // frames per second of wall clock at the current realtime rate
    double steps_per_s = atomic_load(&s->pub_rate) / pt_model_dt(s->m);
    double kk = round(steps_per_s / rq->rate_hz);
    k = kk < 1 ? 1 : kk > 1e9 ? 1000000000u : (uint32_t)kk;
  }
  if (k == 0)
    k = 1;
  if (k > 1000000000u) {
    snprintf(err, errlen, "Subscribe: every_k too large");
    return STATUS(INVALID_ARGUMENT);
  }
  if (sm->n >= srv->cfg.limits.max_subscriptions) {
    snprintf(err, errlen, "model %s: too many subscriptions (limit %d)", s->name,
             srv->cfg.limits.max_subscriptions);
    return STATUS(RESOURCE_EXHAUSTED);
  }
  sub *b = calloc(1, sizeof(*b));
  if (!b) {
    snprintf(err, errlen, "out of memory");
    return STATUS(RESOURCE_EXHAUSTED);
  }
  if (rq->udp_peer[0]) {
    if (!srv->udp.open) {
      free(b);
      snprintf(err, errlen, "Subscribe: udp_peer given but the server has no UDP socket");
      return STATUS(FAILED_PRECONDITION);
    }
    if (parse_peer(rq->udp_peer, &b->peer)) {
      free(b);
      snprintf(err, errlen, "Subscribe: bad udp_peer '%.64s' (HOST:PORT)", rq->udp_peer);
      return STATUS(INVALID_ARGUMENT);
    }
    if (!own_host(c, &b->peer)) {
      free(b);
      snprintf(err, errlen, "Subscribe: udp_peer '%.64s' is not this client's own host "
               "(frames go only to the address the request came from)", rq->udp_peer);
      return STATUS(INVALID_ARGUMENT);
    }
    b->udp = 1;
  }
  b->id = ++srv->next_sub_id;
  b->c = c;
  b->s = s;
  b->every_k = k;
  b->fields = fields;
  b->next = sm->head;
  sm->head = b;
  sm->n++;
  if (push_table(s)) {
    // the model would never send its frames: refuse rather than subscribe in silence
    sm->head = b->next;
    sm->n--;
    free(b);
    snprintf(err, errlen, "model %s: command queue full, subscription not made; try again",
             s->name);
    return STATUS(RESOURCE_EXHAUSTED);
  }
  *out = b;
  return STATUS(OK);
}

int subs_remove(conn *c, uint64_t id) {
  server *srv = server_of(c);
  for (int i = 0; i < srv->nmodels; i++) {
    sim *s = srv->models[i];
    for (sub *b = entry_of(s)->subs->head; b; b = b->next)
      if (b->id == id && b->c == c && !b->dead) {
        b->dead = 1;
        sweep(s);
        return 0;
      }
  }
  return -1;
}

void subs_drop_conn(conn *c) {
  server *srv = server_of(c);
  for (int i = 0; i < srv->nmodels; i++) {
    sim *s = srv->models[i];
    int any = 0;
    for (sub *b = entry_of(s)->subs->head; b; b = b->next)
      if (b->c == c && !b->dead)
        b->dead = any = 1;
    if (any)
      sweep(s);
  }
}

void subs_drop_model(sim *s) {
  for (sub *b = entry_of(s)->subs->head; b; b = b->next)
    b->dead = 1;
  s->unloading = 1;
  sweep(s);
}

static void send_event(sim *s, const sim_event *ev) {
  server *srv = entry_of(s)->srv;
  Partita__V1__ModelEvent me = PARTITA__V1__MODEL_EVENT__INIT;
  Partita__V1__Event e = PARTITA__V1__EVENT__INIT;
  pb_server_message sm = PARTITA__V1__SERVER_MESSAGE__INIT;
  me.model = s->name;
  me.kind = (Partita__V1__ModelEvent__Kind)ev->kind;
  me.message = (char *)ev->msg;
  me.time = ev->time;
  me.step = ev->step;
  me.code = (Partita__V1__Status__Code)status_from_pt(ev->code);
  e.kind_case = PARTITA__V1__EVENT__KIND_MODEL_EVENT;
  e.model_event = &me;
  sm.msg_case = PARTITA__V1__SERVER_MESSAGE__MSG_EVENT;
  sm.event = &e;
  uint64_t mark = ++srv->event_mark;
  for (sub *b = entry_of(s)->subs->head; b; b = b->next) {
    if (b->dead || b->c->closing || b->c->event_mark == mark)
      continue;
    b->c->event_mark = mark;
    conn_send_msg(b->c, &sm.base);
  }
}

typedef struct {
  uint32_t fields;
  uint8_t *buf;
  size_t len;
} body_cache;

// The encoded body for a field selection; *owned when the cache was full (caller frees).
static const uint8_t *body_for(sim *s, snap_hdr *h, uint32_t fields, body_cache *bc, int *nbc,
                               size_t *len, int *owned) {
  *owned = 0;
  for (int i = 0; i < *nbc; i++)
    if (bc[i].fields == fields) {
      *len = bc[i].len;
      return bc[i].buf;
    }
  ptb_frame fr;
  state_frame(&fr, s, h, fields, 0);
  size_t n = protobuf_c_message_get_packed_size(&fr.f.base);
  uint8_t *buf = malloc(n ? n : 1);
  if (buf)
    protobuf_c_message_pack(&fr.f.base, buf);
  ptb_frame_release(&fr);
  if (!buf)
    return NULL;
  if (*nbc < 8) {
    bc[*nbc] = (body_cache){fields, buf, n};
    ++*nbc;
  } else {
    *owned = 1;
  }
  *len = n;
  return buf;
}

static void send_udp_frame(sim *s, snap_hdr *h, sub *b) {
  ptb_frame fr;
  state_frame(&fr, s, h, b->fields, 0);
  fr.f.subscription = b->id;
  fr.f.sequence = b->seq;
  fr.f.dropped = b->dropped;
  uint8_t stackbuf[2048];
  size_t n = protobuf_c_message_get_packed_size(&fr.f.base);
  uint8_t *buf = n <= sizeof(stackbuf) ? stackbuf : malloc(n);
  if (buf && n <= 65507) {
    protobuf_c_message_pack(&fr.f.base, buf);
    // best effort, never queued: a frame the socket cannot take now is dropped and counted
    if (udp_send(&entry_of(s)->srv->udp, (struct sockaddr *)&b->peer, buf, n)) {
      b->dropped++;
      entry_of(s)->subs->dropped++;
    }
  } else {
    b->dropped++;   // too large for one datagram
    entry_of(s)->subs->dropped++;
  }
  if (buf != stackbuf)
    free(buf);
  ptb_frame_release(&fr);
}

static void fanout(sim *s, snap_hdr *h) {
  model_entry *e = entry_of(s);
  server *srv = e->srv;
  body_cache bc[8];
  int nbc = 0;
  for (sub *b = e->subs->head; b; b = b->next) {
    if (b->dead || h->step % b->every_k != 0)
      continue;
    uint32_t fields = b->fields & h->fields;
    b->seq++;
    if (b->udp) {
      send_udp_frame(s, h, b);
      continue;
    }
    conn *c = b->c;
    if (c->closing)
      continue;
    if (conn_backlog(c) > srv->cfg.limits.backlog_soft_bytes) {
      b->dropped++;
      e->subs->dropped++;
      continue;
    }
    size_t len;
    int owned;
    const uint8_t *body = body_for(s, h, fields, bc, &nbc, &len, &owned);
    if (!body) {
      b->dropped++;
      e->subs->dropped++;
      continue;
    }
    conn_send_frame(c, body, len, b->id, b->seq, b->dropped);
    if (owned)
      free((void *)body);
  }
  for (int i = 0; i < nbc; i++)
    free(bc[i].buf);
}

void subs_on_output(sim *s) {
  subs_model *sm = entry_of(s)->subs;
  sm->fanout_depth++;
  sim_event ev;
  while (spsc_pop(&s->eventq, &ev) == 0)
    send_event(s, &ev);
  snap_hdr *h;
  while ((h = spsc_peek(&s->frameq))) {
    fanout(s, h);
    spsc_release(&s->frameq);
  }
  sm->fanout_depth--;
  sweep(s);
}
