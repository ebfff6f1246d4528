// daemon_util.h: helpers of the C daemon tests: start partitad on a private Unix socket with a
// generated config, talk to it through libpartita-client, stop it. Every wait is bounded.
#ifndef TEST_DAEMON_UTIL_H
#define TEST_DAEMON_UTIL_H

#include <stdio.h>
#include <sys/types.h>

#include "partita_client.h"

extern int failures;
#define CHECK(cond, ...)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      failures++;                                                                \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);   \
      fprintf(stderr, __VA_ARGS__);                                              \
      fprintf(stderr, "\n");                                                     \
    }                                                                            \
  } while (0)

typedef struct {
  pid_t pid;
  char dir[64];
  char sock[128];
  int udp_port;
} tdaemon;

extern const char *partitad_path;   // argv[1]
extern const char *models_dir;      // argv[2]

// Starts partitad with `extra` appended to its YAML config (limits, ...). 0 ok.
int td_start(tdaemon *d, const char *extra, int with_udp);
// SIGTERM, wait up to timeout_ms; returns the exit status, or -1 (killed after the timeout).
int td_stop(tdaemon *d, int timeout_ms, double *elapsed_ms);
ptc_client *td_connect(tdaemon *d);
double now_s(void);

// Requests; each returns the message (caller frees with ptc_free) or NULL on failure.
Partita__V1__ServerMessage *td_load(ptc_client *c, const char *file, const char *name);
Partita__V1__ServerMessage *td_get_state(ptc_client *c, const char *model, uint32_t fields);
Partita__V1__ServerMessage *td_set_mode(ptc_client *c, const char *model, int mode, double rate);
Partita__V1__ServerMessage *td_step(ptc_client *c, const char *model, uint32_t n);
Partita__V1__ServerMessage *td_subscribe(ptc_client *c, const char *model, uint32_t every_k,
                                         uint32_t fields);
Partita__V1__ServerMessage *td_stats(ptc_client *c, const char *model);
int td_code(const Partita__V1__ServerMessage *m);   // status code of a response (-1 if none)

#endif
