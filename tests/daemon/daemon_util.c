// daemon_util.c: see daemon_util.h.
#include "daemon_util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

int failures;
const char *partitad_path;
const char *models_dir;

double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int free_udp_port(void) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(a);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
      getsockname(fd, (struct sockaddr *)&a, &len))
    return -1;
  close(fd);
  return ntohs(a.sin_port);
}

int td_start(tdaemon *d, const char *extra, int with_udp) {
  memset(d, 0, sizeof(*d));
  snprintf(d->dir, sizeof(d->dir), "/tmp/ptd-test-XXXXXX");
  if (!mkdtemp(d->dir))
    return -1;
  snprintf(d->sock, sizeof(d->sock), "%s/s.sock", d->dir);
  char cfg[128], log[128];
  snprintf(cfg, sizeof(cfg), "%s/partitad.yaml", d->dir);
  snprintf(log, sizeof(log), "%s/partitad.log", d->dir);
  d->udp_port = with_udp ? free_udp_port() : 0;
  FILE *f = fopen(cfg, "w");
  if (!f)
    return -1;
  // no browser viewer: tests of the viewer ask for it on a port of their own
  fprintf(f, "listen: \"\"\nsocket: %s\nhttp: \"\"\nlog_level: info\n", d->sock);
  if (with_udp)
    fprintf(f, "udp: 127.0.0.1:%d\n", d->udp_port);
  fprintf(f, "realtime:\n  mlockall: false\n%s\n", extra ? extra : "");
  fclose(f);
  d->pid = fork();
  if (d->pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
      dup2(fd, 2);
    execl(partitad_path, partitad_path, "--config", cfg, (char *)NULL);
    _exit(127);
  }
  // ready once the socket accepts
  for (double t0 = now_s(); now_s() - t0 < 60;) {
    char err[256];
    ptc_client *c = ptc_connect_unix(d->sock, 1000, err, sizeof(err));
    if (c) {
      ptc_close(c);
      return 0;
    }
    int st;
    if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
      fprintf(stderr, "partitad exited at start; see %s\n", log);
      d->pid = 0;
      return -1;
    }
    usleep(20000);
  }
  return -1;
}

int td_stop(tdaemon *d, int timeout_ms, double *elapsed_ms) {
  if (d->pid <= 0)
    return -1;
  double t0 = now_s();
  kill(d->pid, SIGTERM);
  int st = 0, rc = -1;
  while ((now_s() - t0) * 1e3 < timeout_ms) {
    if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
      rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      break;
    }
    usleep(5000);
  }
  if (elapsed_ms)
    *elapsed_ms = (now_s() - t0) * 1e3;
  if (rc == -1) {
    kill(d->pid, SIGKILL);
    waitpid(d->pid, &st, 0);
  }
  d->pid = 0;
  char path[160];
  snprintf(path, sizeof(path), "%s/partitad.yaml", d->dir);
  unlink(path);
  snprintf(path, sizeof(path), "%s/partitad.log", d->dir);
  if (rc == 0 && !getenv("KEEP_LOGS"))
    unlink(path);
  unlink(d->sock);
  rmdir(d->dir);
  return rc;
}

ptc_client *td_connect(tdaemon *d) {
  char err[256];
  ptc_client *c = ptc_connect_unix(d->sock, 30000, err, sizeof(err));
  if (!c)
    fprintf(stderr, "connect: %s\n", err);
  return c;
}

int td_code(const Partita__V1__ServerMessage *m) {
  if (!m || !m->response)
    return -1;
  return m->response->status ? (int)m->response->status->code : 0;
}

static Partita__V1__ServerMessage *call(ptc_client *c, Partita__V1__Request *rq) {
  Partita__V1__ServerMessage *m = NULL;
  int rc = ptc_call(c, rq, &m, 10000);
  if (rc != PTC_OK) {
    fprintf(stderr, "call: %s\n", ptc_error(c));
    return NULL;
  }
  return m;
}

Partita__V1__ServerMessage *td_load(ptc_client *c, const char *file, const char *name) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", models_dir, file);
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  static char text[1 << 20];
  size_t n = fread(text, 1, sizeof(text) - 1, f);
  fclose(f);
  text[n] = 0;
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__LoadModel lm = PARTITA__V1__LOAD_MODEL__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_LOAD_MODEL;
  rq.load_model = &lm;
  lm.name = (char *)name;
  lm.source = text;
  lm.source_name = path;
  return call(c, &rq);
}

Partita__V1__ServerMessage *td_get_state(ptc_client *c, const char *model, uint32_t fields) {
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__GetState g = PARTITA__V1__GET_STATE__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_GET_STATE;
  rq.get_state = &g;
  g.model = (char *)model;
  g.fields = fields;
  return call(c, &rq);
}

Partita__V1__ServerMessage *td_set_mode(ptc_client *c, const char *model, int mode, double rate) {
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__SetMode s = PARTITA__V1__SET_MODE__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_SET_MODE;
  rq.set_mode = &s;
  s.model = (char *)model;
  s.mode = (Partita__V1__Mode)mode;
  s.rate = rate;
  return call(c, &rq);
}

Partita__V1__ServerMessage *td_step(ptc_client *c, const char *model, uint32_t n) {
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__Step s = PARTITA__V1__STEP__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_STEP;
  rq.step = &s;
  s.model = (char *)model;
  s.n = n;
  s.fields = PARTITA__V1__FIELD__FIELD_ALL;
  return call(c, &rq);
}

Partita__V1__ServerMessage *td_subscribe(ptc_client *c, const char *model, uint32_t every_k,
                                         uint32_t fields) {
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__Subscribe s = PARTITA__V1__SUBSCRIBE__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_SUBSCRIBE;
  rq.subscribe = &s;
  s.model = (char *)model;
  s.every_k = every_k;
  s.fields = fields;
  return call(c, &rq);
}

Partita__V1__ServerMessage *td_stats(ptc_client *c, const char *model) {
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__GetStats s = PARTITA__V1__GET_STATS__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_GET_STATS;
  rq.get_stats = &s;
  s.model = (char *)model;
  return call(c, &rq);
}
