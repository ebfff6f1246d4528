// http.h: the browser viewer's HTTP/WebSocket port (http.c, docs/viewer.md).
#ifndef PD_HTTP_H
#define PD_HTTP_H

#include "server.h"

typedef struct viewer viewer;

// Serves srv->cfg.viewer.http on srv's loop (srv->http set). 0 also when the default port was
// taken (a warning; viewer off); -1 when an address given explicitly cannot be served.
int http_start(server *srv);
void http_stop(server *srv);          // at shutdown: browsers disconnected, port closed
void http_finish(uv_loop_t *loop);    // after the loop ended: the context freed
void http_stats(server *srv, Partita__V1__ServerStats *st);   // viewer_* counters
int http_port(server *srv);           // the port served (0: off)
const char *http_url(server *srv);
void http_conn_closing(conn *c);      // a browser session's connection closes (conn.c)    // "http://HOST:PORT/", "" when off

#endif
