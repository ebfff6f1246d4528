// link.h: the command line's connection to a running partitad (libpartita-client): where
// to reach it (--connect HOST:PORT, --socket PATH, their environment variables), how long to
// wait (--timeout) and one request answered or refused.
#ifndef PARTITA_CLI_LINK_H
#define PARTITA_CLI_LINK_H

#include "partita_client.h"

#define CLI_LINK_DEFAULT_CONNECT "127.0.0.1:7450"   // --connect default (PARTITA_CONNECT)
#define CLI_LINK_TIMEOUT_S 10                        // per request (--timeout SECONDS)
#define CLI_LINK_MAX_FILE (16 << 20)                 // largest model file `load` sends

typedef struct {
  const char *connect;   // --connect HOST:PORT
  const char *socket;    // --socket PATH
  int timeout_ms;        // --timeout SECONDS
} cli_link;

// Defaults: no address given, CLI_LINK_TIMEOUT_S.
void cli_link_init(cli_link *l);

// Takes argv[*i] when it is --connect, --socket or --timeout (moving *i past its value):
// 1 taken, 0 another argument, -1 after printing what is wrong.
int cli_link_arg(const char *cmd, int argc, char **argv, int *i, cli_link *l);

// After the arguments: --connect and --socket both given is a usage error. 0, or -1 after
// printing it.
int cli_link_check(const char *cmd, const cli_link *l);

// Connects: --socket (or $PARTITA_SOCKET when no --connect is given), else --connect (or
// $PARTITA_CONNECT, or the default). NULL after printing why.
ptc_client *cli_link_open(const char *cmd, const cli_link *l);

// One request: 0 with *out the answer (ptc_free it), or -1 after printing the client's error
// or the status the daemon refused it with ("NOT_FOUND: no model named ...").
int cli_link_call(const char *cmd, ptc_client *c, Partita__V1__Request *rq,
                  Partita__V1__ServerMessage **out, int timeout_ms);

#endif
