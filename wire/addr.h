// addr.h: "HOST:PORT" as the daemon's options and the clients' --connect take it: one parser.
#ifndef WIRE_ADDR_H
#define WIRE_ADDR_H

#include <stddef.h>

// Splits "HOST:PORT" or "[v6]:PORT" into host (hostlen bytes) and port (0..65535; 0 asks the
// system for a free port when listening). -1 when it is not one.
int wire_split_addr(const char *addr, char *host, size_t hostlen, int *port);

#endif
