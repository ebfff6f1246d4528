// inputs.c: inputs into a model (inputs.h): SetInputs and StepWithInputs from a connection,
// and the UDP port's InputFrames. Either way the values are checked against the model and
// queued to its thread, which applies them at its next step boundary.
#include <math.h>
#include <openssl/crypto.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "api/inputs.h"
#include "api/registry.h"
#include "api/reply.h"
#include "base/log.h"
#include "digest.h"

int inputs_queue(conn *c, uint64_t id, sim *s, Partita__V1__NamedValue **by_name,
                 size_t n_by_name, Partita__V1__IndexedValue **by_index, size_t n_by_index) {
  if (atomic_load(&s->pub_failed))
    return reply_status(c, id, STATUS(FAILED_PRECONDITION),
                        "model %s is paused after a failed step; Reset it (or SetState) first",
                        s->name) - 1;
  int32_t idx[1024];
  double val[1024];
  int n = 0;
  if (n_by_name + n_by_index > 1024)
    return reply_status(c, id, STATUS(INVALID_ARGUMENT), "too many input values") - 1;
  for (size_t i = 0; i < n_by_name; i++) {
    int k = pt_input_index(s->m, by_name[i]->name);
    if (k < 0)
      return reply_status(c, id, STATUS(INVALID_ARGUMENT), "model %s has no input '%.100s'",
                          s->name, by_name[i]->name) - 1;
    idx[n] = k;
    val[n++] = by_name[i]->value;
  }
  for (size_t i = 0; i < n_by_index; i++) {
    if (by_index[i]->index >= (uint32_t)s->ni)
      return reply_status(c, id, STATUS(INVALID_ARGUMENT),
                          "input index %u out of range (model %s has %d inputs)",
                          by_index[i]->index, s->name, s->ni) - 1;
    idx[n] = (int32_t)by_index[i]->index;
    val[n++] = by_index[i]->value;
  }
  for (int i = 0; i < n; i++)
    if (!isfinite(val[i]))
      return reply_status(c, id, STATUS(INVALID_ARGUMENT), "input '%s': value is not finite",
                          pt_input_name(s->m, idx[i])) - 1;
  for (int i = 0; i < n; i++)  // (over UDP such a value is ignored: pt_set_input refuses it)
    if (pt_input_source(s->m, idx[i]))
      return reply_status(c, id, STATUS(FAILED_PRECONDITION), "input '%s' is driven by signal "
                          "'%s' (the model's controls set it)", pt_input_name(s->m, idx[i]),
                          pt_input_source(s->m, idx[i])) - 1;
  // keep the last value given for each input, so a record never exceeds ninput entries
  int m = 0;
  for (int i = 0; i < n; i++) {
    int dup = 0;
    for (int j = i + 1; j < n && !dup; j++)
      dup = idx[j] == idx[i];
    if (!dup) {
      idx[m] = idx[i];
      val[m++] = val[i];
    }
  }
  if (m > 0 && sim_input(s, idx, val, m, 0, 0))
    return reply_status(c, id, STATUS(RESOURCE_EXHAUSTED), "model %s: input queue full",
                        s->name) - 1;
  return 0;
}

inputs_model *inputs_model_new(void) { return calloc(1, sizeof(inputs_model)); }

void inputs_model_free(inputs_model *in) { free(in); }

void inputs_new_session(sim *s) { entry_of(s)->inputs->open = 0; }

// ---------------------------------------------------------------------------------------------
// The UDP fast path.

// Sequence numbers a session may jump ahead by; and the highest first sequence of a new
// session (a sender that restarts begins again near 1). Frames beyond either are dropped, not
// adopted, so one forged number cannot make every later input stale.
#define UDP_WINDOW 65536u

typedef enum { UDP_APPLY, UDP_STALE } udp_order;

// The ordering of one model's UDP inputs: per session, sequence numbers only go up.
static udp_order order(inputs_model *in, const Partita__V1__InputFrame *f) {
  if (in->open && f->session == in->session) {
    if (f->sequence <= in->seq || f->sequence - in->seq > UDP_WINDOW)
      return UDP_STALE;
  } else if (f->sequence > UDP_WINDOW) {
    return UDP_STALE;   // a new session starts low
  }
  in->open = 1;
  in->session = f->session;
  in->seq = f->sequence;
  return UDP_APPLY;
}

// Checks the values of f against the model; NULL when they can be applied. Fills idx/val
// with the last value given for each index.
static const char *check_values(sim *s, const Partita__V1__InputFrame *f, int32_t *idx,
                                double *val, int *m) {
  size_t nv = f->n_values;
  if (nv > (size_t)s->ni || nv > 1024 || (f->n_index && f->n_index != nv))
    return "wrong number of values";
  for (size_t i = 0; i < nv; i++) {
    idx[i] = f->n_index ? (int32_t)f->index[i] : (int32_t)i;
    val[i] = f->values[i];
    if (f->n_index && f->index[i] >= (uint32_t)s->ni)
      return "input index out of range";
    if (!isfinite(val[i]))
      return "non-finite value";
  }
  *m = 0;
  for (size_t i = 0; i < nv; i++) {
    int dup = 0;
    for (size_t j = i + 1; j < nv && !dup; j++)
      dup = idx[j] == idx[i];
    if (!dup) {
      idx[*m] = idx[i];
      val[(*m)++] = val[i];
    }
  }
  return NULL;
}

// With a token, a frame must carry the HMAC-SHA256 of its contents under it (the token itself
// never travels); the digest covers the session, so a frame cannot be replayed into another.
static int authentic(const Partita__V1__InputFrame *f, const char *token) {
  uint8_t want[32];
  return f->digest.len == sizeof(want) &&
         wire_input_digest(token, f->model, f->session, f->sequence, f->values, f->n_values,
                           f->index, f->n_index, want) == 0 &&
         CRYPTO_memcmp(want, f->digest.data, sizeof(want)) == 0;
}

// Every InputFrame is either applied or counted by why it was not (stats): nothing vanishes
// (what did not decode, the UDP port counts).
void inputs_udp(udp_port *u, const Partita__V1__InputFrame *f) {
  server *srv = (server *)(void *)((char *)u - offsetof(server, udp));
  sim *s = registry_find(srv, f->model);
  inputs_model *in = s ? entry_of(s)->inputs : NULL;
  int32_t idx[1024];
  double val[1024];
  int m = 0;
  const char *why = NULL;
  if (!s) {
    srv->udp_unknown_model++;
    why = "unknown model";
  } else if (srv->cfg.auth_token[0] && !authentic(f, srv->cfg.auth_token)) {
    in->unauthorized++;
    why = "missing or wrong digest";
  } else if ((why = check_values(s, f, idx, val, &m))) {
    in->malformed++;
  } else if (order(in, f) == UDP_STALE) {
    in->stale++;
    why = "stale or out-of-window sequence";
  } else if (m > 0 && sim_input(s, idx, val, m, f->session, f->sequence)) {
    in->dropped++;
    why = "input queue full";
  } else {
    in->udp++;
  }
  if (why)
    log_debug("udp: InputFrame dropped: %s", why);
}
