// bench_heavy.c: what heavy requests cost a real-time model (prints a table, asserts nothing).
//   usage: bench_heavy PARTITAD MODELS_DIR [SECONDS]
// Two copies of the Panda step at 1 kHz in real time side by side in one partitad; one of them
// is sent Linearize requests back to back for the whole run (each snapshots the live data on
// the model's thread, then computes on the work pool). Printed for both: overruns, step time
// and wake-up lateness, and for the busy one the simulation thread's cost of a snapshot.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon_util.h"

#define MODE(x) PARTITA__V1__MODE__##x

static Partita__V1__ServerMessage *linearize(ptc_client *c, const char *model) {
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__Linearize li = PARTITA__V1__LINEARIZE__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_LINEARIZE;
  rq.linearize = &li;
  li.model = (char *)model;
  Partita__V1__ServerMessage *m = NULL;
  return ptc_call(c, &rq, &m, 30000) == PTC_OK ? m : NULL;
}

static void row(const char *label, const Partita__V1__ModelStats *ms, long requests) {
  printf("| %-28s | %6lld | %6lld | %7.1f / %7.1f | %7.1f / %7.1f | %5ld |", label,
         (long long)ms->steps, (long long)ms->overruns, ms->step_us->p99, ms->step_us->max,
         ms->late_us->p99, ms->late_us->max, requests);
  if (ms->snapshot_us && ms->snapshots)
    printf(" %lld: %.2f / %.2f / %.2f |\n", (long long)ms->snapshots, ms->snapshot_us->mean,
           ms->snapshot_us->p99, ms->snapshot_us->max);
  else
    printf(" - |\n");
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_heavy PARTITAD MODELS_DIR [SECONDS]\n");
    return 2;
  }
  partitad_path = argv[1];
  models_dir = argv[2];
  double seconds = argc > 3 && atof(argv[3]) > 0 ? atof(argv[3]) : 3.0;
  tdaemon d;
  if (td_start(&d, "", 0)) {
    fprintf(stderr, "bench_heavy: partitad did not start\n");
    return 1;
  }
  ptc_client *c = td_connect(&d);
  ptc_free(td_load(c, "panda.urdf", "quiet"));
  ptc_free(td_load(c, "panda.urdf", "busy"));
  ptc_free(td_set_mode(c, "quiet", MODE(REALTIME), 1.0));
  ptc_free(td_set_mode(c, "busy", MODE(REALTIME), 1.0));
  usleep(200000);
  long requests = 0, failed = 0;
  double t0 = now_s();
  while (now_s() - t0 < seconds) {
    Partita__V1__ServerMessage *m = linearize(c, "busy");
    if (m && td_code(m) == 0)
      requests++;
    else
      failed++;
    ptc_free(m);
  }
  Partita__V1__ServerMessage *sq = td_stats(c, "quiet"), *sb = td_stats(c, "busy");
  printf("Two Pandas at 1 kHz in real time for %.1f s; Linearize requests to one, back to back"
         " (%ld CPUs online)\n\n", seconds, sysconf(_SC_NPROCESSORS_ONLN));
  printf("| model | steps | overruns | step us p99 / max | lateness us p99 / max | "
         "Linearize | snapshots: us mean / p99 / max |\n| --- | ---: | ---: | ---: | ---: | "
         "---: | ---: |\n");
  if (sq && sq->response->stats && sq->response->stats->n_models == 1)
    row("without requests", sq->response->stats->models[0], 0);
  if (sb && sb->response->stats && sb->response->stats->n_models == 1)
    row("with a stream of Linearize", sb->response->stats->models[0], requests);
  if (failed)
    printf("(%ld Linearize requests failed)\n", failed);
  ptc_free(sq);
  ptc_free(sb);
  ptc_close(c);
  td_stop(&d, 5000, NULL);
  return 0;
}
