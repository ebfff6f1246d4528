// listen.h: the listening sockets of the connection layer (conn.h): TCP and a Unix socket.
// Each logs why it failed.
#ifndef PD_LISTEN_H
#define PD_LISTEN_H

#include "net/conn.h"

// "HOST:PORT" (port 0: any free one; the port taken is logged). 0 ok, -1 failed.
int listen_tcp(net *n, const char *addr);
// A Unix socket at path, rw-rw---- for the daemon's user and `group` ("" the daemon's own)
// from the moment it exists; a socket file left by an earlier run is replaced. 0 ok, -1 failed.
int listen_pipe(net *n, const char *path, const char *group);

#endif
