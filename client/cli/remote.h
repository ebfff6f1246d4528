// remote.h: the daemon commands of `partita` (remote.c), talking to partitad through
// libpartita-client. cli_remote_main is declared in cli.h; this header holds the defaults.
#ifndef PARTITA_CLI_REMOTE_H
#define PARTITA_CLI_REMOTE_H

#define CLI_REMOTE_DEFAULT_CONNECT "127.0.0.1:7450"   // --connect default (PARTITA_CONNECT)
#define CLI_REMOTE_TIMEOUT_MS 10000                   // per request (--timeout SECONDS)
#define CLI_REMOTE_MAX_FILE (16 << 20)                // largest model file `load` sends

int cli_remote_main(int argc, char **argv);

#endif
