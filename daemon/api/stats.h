// stats.h: GetStats: the server's counters, and each model's, gathered from its thread.
#ifndef PD_STATS_H
#define PD_STATS_H

#include <stdint.h>

#include "net/conn.h"
#include "partita.pb-c.h"

// GetStats for `model` ("" every model). 0.
int stats_request(conn *c, uint64_t id, const char *model);

#endif
