// link.c: the connection to partitad (link.h).
#include "link.h"

#include <stdlib.h>
#include <string.h>

#include "args.h"

void cli_link_init(cli_link *l) {
  memset(l, 0, sizeof(*l));
  l->timeout_ms = CLI_LINK_TIMEOUT_S * 1000;
}

int cli_link_arg(const char *cmd, int argc, char **argv, int *i, cli_link *l) {
  const char *v = NULL;
  int r;
  if ((r = cli_opt_value(cmd, argc, argv, i, "--connect", &v)) != 0) {
    l->connect = v;
  } else if ((r = cli_opt_value(cmd, argc, argv, i, "--socket", &v)) != 0) {
    l->socket = v;
  } else if ((r = cli_opt_value(cmd, argc, argv, i, "--timeout", &v)) > 0) {
    double t;
    if (cli_parse_double(cmd, "--timeout", v, &t) || t <= 0 || t > 86400) {
      cli_error(cmd, "--timeout: seconds in (0, 86400]");
      return -1;
    }
    l->timeout_ms = (int)(t * 1000);
  }
  return r;
}

int cli_link_check(const char *cmd, const cli_link *l) {
  if (l->connect && l->socket) {
    cli_error(cmd, "give --connect or --socket, not both");
    return -1;
  }
  return 0;
}

ptc_client *cli_link_open(const char *cmd, const cli_link *l) {
  char err[512];
  const char *sock = l->socket ? l->socket : getenv("PARTITA_SOCKET");
  ptc_client *c;
  if (sock && *sock && !l->connect) {
    c = ptc_connect_unix(sock, l->timeout_ms, err, sizeof(err));
  } else {
    const char *addr = l->connect ? l->connect : getenv("PARTITA_CONNECT");
    c = ptc_connect_addr(addr && *addr ? addr : CLI_LINK_DEFAULT_CONNECT, l->timeout_ms, err,
                         sizeof(err));
  }
  if (!c)
    cli_error(cmd, "cannot reach partitad: %s", err);
  return c;
}

int cli_link_call(const char *cmd, ptc_client *c, Partita__V1__Request *rq,
                  Partita__V1__ServerMessage **out, int timeout_ms) {
  *out = NULL;
  if (ptc_call(c, rq, out, timeout_ms) != PTC_OK) {
    cli_error(cmd, "%s", ptc_error(c));
    return -1;
  }
  Partita__V1__Status *st = (*out)->response->status;
  if (st && st->code != PARTITA__V1__STATUS__CODE__OK) {
    cli_error(cmd, "%s: %s", ptc_status_name(st->code), st->message);
    ptc_free(*out);
    *out = NULL;
    return -1;
  }
  return 0;
}
