// reply.h: everything that answers a client: status replies (always valid UTF-8), states,
// model descriptions, and requests answered by a model's thread (a command queued with
// submit, answered by its completion on the loop thread).
#ifndef PD_REPLY_H
#define PD_REPLY_H

#include <stdint.h>

#include "model/sim.h"
#include "net/conn.h"
#include "partita.pb-c.h"

typedef Partita__V1__Response pb_response;
typedef Partita__V1__ServerMessage pb_server_message;

void reply(conn *c, uint64_t id, pb_response *r);   // r->status set by caller or OK
int reply_status(conn *c, uint64_t id, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int status_from_pt(int rc);
void reply_info(conn *c, uint64_t id, sim *s, int code, const char *msg);   // ModelInfo
void reply_latest(conn *c, uint64_t id, sim *s, uint32_t fields);   // GetState at once
// Queues cmd for model s on behalf of request `id` (operation op); its completion answers
// with the state (or, for SetMode and LoadModel, the model's description). -1: answered with
// an error here.
int submit(conn *c, uint64_t id, int op, sim *s, sim_cmd *cmd);

#endif
