// dispatch.h: the request table (as Redis's command table) and one handler per operation.
#ifndef PD_DISPATCH_H
#define PD_DISPATCH_H

#include <uv.h>

#include "api/registry.h"
#include "net/conn.h"

#define PD_PROTOCOL_VERSION 1

// The api on loop, with the config already in srv->cfg: the registry allocated, and the hooks
// of the connection layer and the UDP port set (requests to dispatch, status replies,
// subscriptions dropped on close, UDP inputs). 0, or -1 out of memory.
int dispatch_init(server *srv, uv_loop_t *loop);

// The connection layer's on_request hook. Takes ownership of req.
void dispatch(conn *c, pb_request *req);

#endif
