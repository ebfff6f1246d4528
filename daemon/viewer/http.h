// http.h: the browser viewer's HTTP/WebSocket port (http.c, docs/viewer.md). It sits above the
// api: it reads the registry, sends the page's requests through connections without a socket,
// and gives the api its URL (Hello) and its counters (GetStats, a stats_source) by setting
// them in the server.
#ifndef PD_HTTP_H
#define PD_HTTP_H

#include <uv.h>

#include "api/registry.h"

typedef struct viewer viewer;

// Serves srv->cfg.viewer.http on srv's loop; *out is the viewer, NULL when off. 0 also when
// the default port was taken (a warning; viewer off); -1 when an address given explicitly
// cannot be served.
int http_start(server *srv, viewer **out);
void http_stop(viewer *v);            // at shutdown: browsers disconnected, port closed
void http_finish(uv_loop_t *loop);    // after the loop ended: the context freed
int http_port(const viewer *v);       // the port served
// A connection is closing (the connection layer's hook): a browser session that used it
// forgets it, and makes a new one at its next request.
void http_conn_closing(viewer *v, conn *c);

#endif
