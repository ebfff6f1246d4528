// load.h: LoadModel: a model text parsed and assembled on the work pool, then added to the
// registry (models.h) and answered once its thread has evaluated the initial state.
#ifndef PD_LOAD_H
#define PD_LOAD_H

#include <stdint.h>

#include "net/conn.h"
#include "partita.pb-c.h"

int load_request(conn *c, uint64_t id, const Partita__V1__LoadModel *rq);

#endif
