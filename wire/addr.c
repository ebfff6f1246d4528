// addr.c: the one HOST:PORT parser (addr.h).
#include "addr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int wire_split_addr(const char *addr, char *host, size_t hostlen, int *port) {
  const char *colon = strrchr(addr, ':');
  if (!colon || colon == addr)
    return -1;
  const char *h = addr;
  size_t n = (size_t)(colon - addr);
  if (h[0] == '[' && n >= 2 && h[n - 1] == ']') {
    h++;
    n -= 2;
  }
  if (n == 0 || n >= hostlen)
    return -1;
  memcpy(host, h, n);
  host[n] = 0;
  char *end;
  errno = 0;
  long p = strtol(colon + 1, &end, 10);
  if (errno || *end || end == colon + 1 || p < 0 || p > 65535)
    return -1;
  *port = (int)p;
  return 0;
}
