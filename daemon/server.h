// server.h: partitad as a whole, what partitad (main.c) and partita-view (view_main.c) both
// run: the server the api knows (api/registry.h), and what only the top knows: signals, the
// periodic tick, systemd's watchdog, the browser viewer, the shutdown sequence.
#ifndef PD_SERVER_H
#define PD_SERVER_H

#include <stdint.h>
#include <uv.h>

#include "api/registry.h"
#include "viewer/http.h"

typedef struct {
  server srv;                 // connections, UDP, the registry, the config (srv.cfg)
  viewer *http;               // the browser viewer, NULL when off
  uv_signal_t sigint, sigterm, sighup;
  uv_timer_t timer;           // the tick (100 ms)
  uint64_t watchdog_usec;     // systemd's WatchdogSec (0: not asked), pinged from the tick
  uint64_t watchdog_ms;       // when the last ping went out
  int abandoned;              // stopped with loads still compiling on the work pool
} partitad;

// The start-up both programs share, with the config already in d->srv.cfg: the server on
// `loop`, SIGINT and SIGTERM (a shutdown), the tick; with `as_daemon` (partitad), SIGHUP (the
// log reopened) and systemd's watchdog too. 0, or -1 out of memory.
int server_open(partitad *d, uv_loop_t *loop, int as_daemon);
// The ports the config names: the Unix socket, the viewer, TCP, UDP (in that order: once the
// TCP port answers, what readiness checks look at, the rest is there). 0, or -1 logged.
int server_listen(partitad *d);
// Runs the loop until the shutdown sequence has closed everything, then releases what
// server_open made. 1 when loads still compiling were abandoned (then nothing may be freed:
// the caller leaves with _exit).
int server_run(partitad *d);
void server_tick(partitad *d);
// Starts the shutdown: browsers and listeners first, then the answers owed, then the models.
void server_shutdown(partitad *d);

#endif
