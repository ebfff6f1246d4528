// partitad: the Partita simulation server (docs/protocol.md).
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cblas.h>  // openblas_set_num_threads
#include <lapacke.h>
#include <systemd/sd-daemon.h>

#include "api/models.h"
#include "base/log.h"
#include "server.h"

// mlockall(MCL_FUTURE) under a small RLIMIT_MEMLOCK would make later allocations fail, so it is
// only tried with CAP_IPC_LOCK or an unlimited limit; address-sanitizer builds map terabytes.
static void lock_memory(const config *cfg) {
  if (!cfg->realtime.mlockall)
    return;
#if defined(__SANITIZE_ADDRESS__)
  log_info("mlockall skipped (sanitizer build)");
#else
  struct rlimit rl;
  int cap = 0;
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  while (f && fgets(line, sizeof(line), f)) {
    unsigned long long eff;
    if (sscanf(line, "CapEff: %llx", &eff) == 1)
      cap = (eff >> 14) & 1;   // CAP_IPC_LOCK
  }
  if (f)
    fclose(f);
  if (!cap && !(getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY)) {
    log_info("mlockall not permitted (no CAP_IPC_LOCK, RLIMIT_MEMLOCK limited); memory may page");
    return;
  }
  // MCL_ONFAULT: a page is locked when first touched, not when mapped. What the real-time
  // path touches (model data, rings, its stack, the code it runs) stays resident, and the
  // reservations nobody touches (OpenBLAS's two 128 MB buffers, thread stacks, ICU's data)
  // cost nothing: an empty daemon holds about 10 MB instead of 361 MB.
  if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) != 0) {
    log_info("mlockall failed: %s; memory may page", strerror(errno));
    return;
  }
  // With memory locked, every page the allocator hands back to the kernel must be faulted in
  // and locked again by a later allocation, and the rare allocations of a simulation thread
  // (a partition rebuild) then took 40-60 ms instead of well under one: keep freed memory in
  // the process and serve no allocation from a fresh mmap.
  mallopt(M_TRIM_THRESHOLD, -1);
  mallopt(M_MMAP_MAX, 0);
  log_info("memory locked (mlockall); allocator trimming off");
#endif
}

// OpenBLAS maps its work buffer on the first BLAS/LAPACK call; under mlockall that mapping is
// faulted in and locked right then, which took half a second inside the first step that used
// LAPACK (a switch to the QR partition). Make those first calls here, at startup.
static void warm_up_lapack(void) {
  enum { N = 64 };
  static double a[N * N], b[N * N], c[N * N], tau[N];
  static lapack_int piv[N];
  for (int i = 0; i < N * N; i++) a[i] = b[i] = (i % (N + 1) == 0) ? 2.0 : 0.01 * (i % 7);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, a, N, b, N, 0.0, c, N);
  LAPACKE_dgetrf(LAPACK_ROW_MAJOR, N, N, b, N, piv);
  LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, N, N, a, N, tau);
}

static int preload(server *srv) {
  for (int i = 0; i < srv->cfg.nmodel; i++) {
    const cfg_model *cm = &srv->cfg.models[i];
    pt_load_options opt = {.floating_base = cm->floating_base,
                           .balance_inertia = cm->balance_inertia,
                           .package_path = srv->cfg.viewer.package_path,
                           .no_joint_limits = cm->no_joint_limits,
                           .ground_plane = cm->ground_plane,
                           .ground_z = cm->ground_z};
    pt_model *m;
    pt_error err = {0};
    char *text;   // the file as loaded, for recordings: read once, within the load's bound
    size_t len;
    int format;
    if (pt_model_load_file_text(cm->file, &opt, &m, &text, &len, &format, &err) < 0) {
      log_error("model %s: %s", cm->file, err.msg);
      return -1;
    }
    const char *w = pt_model_warnings(m);
    if (w && *w)
      log_warn("model %s: %s", cm->file, w);
    char msg[256];
    const char *name = cm->name[0] ? cm->name : pt_model_name(m);
    model_opts o = {.run = {.mode = cm->mode,
                            .rate = cm->rate,
                            .input_timeout_ms = cm->input_timeout_ms,
                            .input_hold = cm->input_hold},
                    .origin = {.text = text,   // copied for recordings (record/)
                               .len = len,
                               .name = cm->file,
                               .format = format,
                               .floating_base = cm->floating_base,
                               .balance_inertia = cm->balance_inertia,
                               .no_joint_limits = cm->no_joint_limits,
                               .ground_plane = cm->ground_plane,
                               .ground_z = cm->ground_z}};
    int added = models_add(srv, name, m, &o, NULL, msg, sizeof(msg));
    free(text);
    if (added != 0) {
      pt_model_free(m);
      log_error("model %s: %s", cm->file, msg);
      return -1;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  static partitad d;   // large (read buffers); lives for the whole run
  server *srv = &d.srv;
  char err[1024];
  config_defaults(&srv->cfg);
  int rc = config_from_args(&srv->cfg, argc, argv, err, sizeof(err));
  if (rc > 0)
    return 0;
  if (rc == 0)
    rc = config_check(&srv->cfg, err, sizeof(err));
  if (rc < 0) {
    fprintf(stderr, "partitad: %s\n", err);
    return 2;
  }
  log_set_level(srv->cfg.log_level);
  if (srv->cfg.log_file[0] && log_open(srv->cfg.log_file) != 0) {
    fprintf(stderr, "partitad: cannot open the log %s: %s\n", srv->cfg.log_file,
            strerror(errno));
    return 2;
  }
  // Dense LAPACK runs inside simulation threads (partition rebuilds, QR steps) and work-pool
  // threads (linearization): OpenBLAS's own thread pool would compete with them for cores.
  openblas_set_num_threads(1);
  signal(SIGPIPE, SIG_IGN);   // a peer closing mid-write is an error code, not a signal
  if (server_open(&d, uv_default_loop(), 1))
    return 1;
  lock_memory(&srv->cfg);
  warm_up_lapack();
  int failed = preload(srv) || server_listen(&d);
  if (failed)
    server_shutdown(&d);
  else
    log_info("partitad %s ready (%d models)", PT_VERSION, srv->nmodels);
  if (!failed)
    sd_notify(0, "READY=1");   // Type=notify units start their dependents now
  int abandoned = server_run(&d);
  log_info("stopped");
  if (abandoned)
    _exit(failed ? 1 : 0);   // without destructors: nothing is left to flush but the log
  return failed ? 1 : 0;
}
