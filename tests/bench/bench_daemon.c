// bench_daemon.c: partitad measured over loopback (prints a table, asserts nothing).
//   usage: bench_daemon PARTITAD MODELS_DIR [SECONDS]
//   - GetState round trip, p50/p99, over TCP and over the Unix socket;
//   - frames per second delivered to 1, 10 and 100 subscribers of a free-running model;
//   - real-time wake-up lateness of a 1 kHz model beside a bare clock_nanosleep(TIMER_ABSTIME)
//     loop run at the same time in this process (the ratio is the figure of merit).
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon_util.h"

#define MODE(x) PARTITA__V1__MODE__##x

static double seconds = 1.0;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double quantile(double *v, int n, double q) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  int i = (int)(q * (n - 1));
  return n ? v[i] : 0;
}

static int free_tcp_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(a);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
      getsockname(fd, (struct sockaddr *)&a, &len))
    return -1;
  close(fd);
  return ntohs(a.sin_port);
}

static void bench_roundtrip(const char *label, ptc_client *c) {
  enum { N = 5000 };
  static double us[N];
  for (int i = 0; i < 200; i++)   // warm up
    ptc_free(td_get_state(c, "p", 0));
  for (int i = 0; i < N; i++) {
    double t0 = now_s();
    ptc_free(td_get_state(c, "p", 0));
    us[i] = (now_s() - t0) * 1e6;
  }
  double p50 = quantile(us, N, 0.5), p99 = quantile(us, N, 0.99);
  printf("| GetState round trip, %-6s | p50 %8.1f us | p99 %8.1f us |\n", label, p50, p99);
}

// GetState on a paused model and on a 7-DOF arm stepping at 1 kHz in real time, interleaved
// in blocks so both see the same machine: the real-time one is answered from the latest
// published step, not after the next step boundary.
static void bench_roundtrip_realtime(ptc_client *c) {
  enum { BLOCK = 250, NBLOCK = 20, N = BLOCK * NBLOCK };
  static double paused[N], rt[N];
  const char *names[2] = {"p", "arm"};
  double *out[2] = {paused, rt};
  for (int b = 0; b < NBLOCK; b++)
    for (int w = 0; w < 2; w++)
      for (int i = 0; i < BLOCK; i++) {
        double t0 = now_s();
        ptc_free(td_get_state(c, names[w], 0));
        out[w][b * BLOCK + i] = (now_s() - t0) * 1e6;
      }
  double p50p = quantile(paused, N, 0.5), p99p = quantile(paused, N, 0.99);
  double p50r = quantile(rt, N, 0.5), p99r = quantile(rt, N, 0.99);
  printf("| GetState, paused pendulum        | p50 %8.1f us | p99 %8.1f us |\n", p50p, p99p);
  printf("| GetState, Panda at 1 kHz realtime| p50 %8.1f us | p99 %8.1f us |\n", p50r, p99r);
  printf("| ratio realtime / paused          | p50 %8.2f    | p99 %8.2f    |\n", p50r / p50p,
         p99r / p99p);
}

static int64_t steps_of(ptc_client *c) {
  Partita__V1__ServerMessage *m = td_get_state(c, "p", PARTITA__V1__FIELD__FIELD_COORDINATES);
  int64_t n = m && m->response->state ? m->response->state->step : 0;
  ptc_free(m);
  return n;
}

static void bench_fanout(tdaemon *d, ptc_client *ctl, int nsub) {
  ptc_client **subs = calloc((size_t)nsub, sizeof(*subs));
  struct pollfd *pf = calloc((size_t)nsub, sizeof(*pf));
  for (int i = 0; i < nsub; i++) {
    subs[i] = td_connect(d);
    ptc_free(td_subscribe(subs[i], "p", 1, PARTITA__V1__FIELD__FIELD_DEFAULT));
    pf[i].fd = ptc_fd(subs[i]);
    pf[i].events = POLLIN;
  }
  ptc_free(td_set_mode(ctl, "p", MODE(FREE_RUN), 0));
  long long frames = 0;
  int64_t s0 = steps_of(ctl), s1;
  double t0 = now_s();
  while (now_s() - t0 < seconds) {
    if (poll(pf, (nfds_t)nsub, 100) <= 0)
      continue;
    for (int i = 0; i < nsub; i++) {
      if (!(pf[i].revents & POLLIN))
        continue;
      // take every whole frame that has arrived, without blocking
      Partita__V1__ServerMessage *m;
      int first = 1;
      while (ptc_next_event(subs[i], &m, first ? 50 : 0) == PTC_OK) {
        first = 0;
        frames += m->event->kind_case == PARTITA__V1__EVENT__KIND_FRAME;
        ptc_free(m);
      }
    }
  }
  double dt = now_s() - t0;
  s1 = steps_of(ctl);
  ptc_free(td_set_mode(ctl, "p", MODE(PAUSED), 0));
  printf("| frames to %3d subscriber%s   | %9.0f frames/s total | %8.0f per subscriber "
         "(model %.0f steps/s) |\n",
         nsub, nsub == 1 ? " " : "s", frames / dt, frames / dt / nsub, (double)(s1 - s0) / dt);
  for (int i = 0; i < nsub; i++)
    ptc_close(subs[i]);
  free(subs);
  free(pf);
}

typedef struct {
  double p50, p99, max;
  int n;
} lateness;

// The reference: a bare absolute-deadline loop at 1 kHz with the same thread settings the
// daemon uses (timer slack 1 ns, SCHED_FIFO when permitted).
static void *bare_loop(void *arg) {
  lateness *out = arg;
  int n = (int)(seconds * 1000);
  double *late = calloc((size_t)n, sizeof(double));
  prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
  struct sched_param sp = {.sched_priority = 80};
  pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  int64_t t0 = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
  for (int k = 1; k <= n; k++) {
    int64_t dl = t0 + (int64_t)k * 1000000;
    struct timespec ts = {.tv_sec = (time_t)(dl / 1000000000), .tv_nsec = (long)(dl % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
    clock_gettime(CLOCK_MONOTONIC, &t);
    int64_t now = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
    late[k - 1] = (double)(now - dl) / 1e3;
  }
  out->n = n;
  out->p50 = quantile(late, n, 0.5);
  out->p99 = quantile(late, n, 0.99);
  out->max = late[n - 1];
  free(late);
  return NULL;
}

static void bench_lateness(ptc_client *ctl) {
  lateness bare = {0};
  pthread_t th;
  ptc_free(td_load(ctl, "pendulum.yaml", "rt"));
  ptc_free(td_set_mode(ctl, "rt", MODE(REALTIME), 1.0));
  pthread_create(&th, NULL, bare_loop, &bare);
  pthread_join(th, NULL);
  Partita__V1__ServerMessage *m = td_stats(ctl, "rt");
  if (!m || !m->response->stats || m->response->stats->n_models != 1) {
    printf("| realtime lateness: no stats |\n");
    ptc_free(m);
    return;
  }
  const Partita__V1__ModelStats *ms = m->response->stats->models[0];
  printf("| wake-up lateness, partitad 1 kHz | p50 %7.1f us | p99 %7.1f us | max %8.1f us | "
         "%lld steps, %lld overruns |\n",
         ms->late_us->p50, ms->late_us->p99, ms->late_us->max, (long long)ms->steps,
         (long long)ms->overruns);
  printf("| wake-up lateness, bare loop      | p50 %7.1f us | p99 %7.1f us | max %8.1f us | "
         "%d wake-ups |\n",
         bare.p50, bare.p99, bare.max, bare.n);
  printf("| ratio partitad / bare            | p50 %7.2f    | p99 %7.2f    |\n",
         bare.p50 > 0 ? ms->late_us->p50 / bare.p50 : 0,
         bare.p99 > 0 ? ms->late_us->p99 / bare.p99 : 0);
  printf("| step compute time                | mean %6.1f us | p99 %7.1f us | max %8.1f us |\n",
         ms->step_us->mean, ms->step_us->p99, ms->step_us->max);
  ptc_free(m);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_daemon PARTITAD MODELS_DIR [SECONDS]\n");
    return 2;
  }
  partitad_path = argv[1];
  models_dir = argv[2];
  if (argc > 3)
    seconds = atof(argv[3]) > 0 ? atof(argv[3]) : 1.0;
  int port = free_tcp_port();
  char extra[256];
  snprintf(extra, sizeof(extra),
           "listen: 127.0.0.1:%d\nlimits:\n  max_clients: 256\n  max_subscriptions: 256\n", port);
  tdaemon d;
  if (td_start(&d, extra, 0)) {
    fprintf(stderr, "bench_daemon: partitad did not start\n");
    return 1;
  }
  char err[256];
  ptc_client *unix_c = td_connect(&d);
  ptc_client *tcp_c = ptc_connect_tcp("127.0.0.1", port, 2000, err, sizeof(err));
  if (!unix_c || !tcp_c) {
    fprintf(stderr, "bench_daemon: connect: %s\n", err);
    td_stop(&d, 3000, NULL);
    return 1;
  }
  ptc_free(td_load(unix_c, "pendulum.yaml", "p"));
  printf("partitad over loopback (%.1f s per measurement, %ld CPUs online)\n\n", seconds,
         sysconf(_SC_NPROCESSORS_ONLN));
  bench_roundtrip("TCP", tcp_c);
  bench_roundtrip("Unix", unix_c);
  ptc_free(td_load(unix_c, "panda.urdf", "arm"));
  ptc_free(td_set_mode(unix_c, "arm", MODE(REALTIME), 1.0));
  bench_roundtrip_realtime(tcp_c);
  ptc_free(td_set_mode(unix_c, "arm", MODE(PAUSED), 0));
  int counts[] = {1, 10, 100};
  for (int i = 0; i < 3; i++)
    bench_fanout(&d, unix_c, counts[i]);
  bench_lateness(unix_c);
  Partita__V1__ServerMessage *st = td_stats(unix_c, "");
  if (st && st->response->stats && st->response->stats->server)
    printf("| memory with the pendulum, the Panda and the 1 kHz model loaded | resident %.1f MB "
           "| locked %.1f MB |\n",
           (double)st->response->stats->server->memory_resident_bytes / (1 << 20),
           (double)st->response->stats->server->memory_locked_bytes / (1 << 20));
  ptc_free(st);
  ptc_close(tcp_c);
  ptc_close(unix_c);
  td_stop(&d, 3000, NULL);
  return 0;
}
