// rec_file.c: `simulate --record FILE` (the cli_rec_* hooks file_simulate.c calls) and what
// the recording commands share (rec_file.h, docs/recording.md): rec_replay.c, rec_info.c
// read them.
#include "rec_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "ptb_frame.h"
#include "recording.h"

// ---------------------------------------------------------------------------------------------
// Writing (simulate --record).

// Every field of a StateFrame but the bodies: what replay compares.
#define RECORDED_FIELDS (PTB_FIELD_ALL & ~PTB_FIELD_BODIES)

struct cli_rec {
  rec_writer *w;
  const char *path;
  long every;
  uint32_t seq;            // the recording's sequence counter (recording.h)
  uint64_t states;
  int failed;
};

static int rec_fail(const char *cmd, cli_rec *r) {
  if (!r->failed)
    cli_error(cmd, "%s: %s", r->path, rec_writer_error(r->w));
  r->failed = 1;
  return -1;
}

cli_rec *cli_rec_open(const char *cmd, const char *path, const char *model_path,
                      const char *text, size_t len, int format,
                      const pt_load_options *lopt, const pt_model *m, const pt_data *d,
                      double dt, pt_integrator integrator, long every, const char *init,
                      const char *init_rate, const int *set_index, const double *set_value,
                      int nset) {
  cli_rec *r = calloc(1, sizeof(*r));
  int nc = pt_model_ncoord(m), ni = pt_model_ninput(m), nb = pt_model_nbody(m);
  int nx = pt_model_ncontrol_state(m), ns = pt_model_nsignal(m);
  const char **names = calloc((size_t)(nc + ni + nb + nx + ns) + 1, sizeof(char *));
  if (!r || !names) {
    cli_error(cmd, "out of memory");
    free(r);
    free(names);
    return NULL;
  }
  for (int i = 0; i < nc; i++)
    names[i] = pt_coord_name(m, i);
  for (int i = 0; i < ni; i++)
    names[nc + i] = pt_input_name(m, i);
  for (int i = 0; i < nb; i++)
    names[nc + ni + i] = pt_body_name(m, i);
  for (int i = 0; i < nx; i++)
    names[nc + ni + nb + i] = pt_control_state_name(m, i);
  for (int i = 0; i < ns; i++)
    names[nc + ni + nb + nx + i] = pt_signal_name(m, i);
  rec_info in = {
      .model = pt_model_name(m), .text = text, .text_len = len, .source_name = model_path,
      .format = format, .floating_base = lopt->floating_base,
      .balance_inertia = lopt->balance_inertia, .no_joint_limits = lopt->no_joint_limits,
      .ground_plane = lopt->ground_plane, .ground_z = lopt->ground_z,
      .dt = dt, .integrator = pt_integrator_name(integrator),
      .every_k = (uint32_t)every, .fields = RECORDED_FIELDS,
      .time_base = "simulation", .start_step = pt_nstep(d), .init = init,
      .init_rate = init_rate, .coord_names = names, .nc = nc, .input_names = names + nc,
      .ni = ni, .body_names = names + nc + ni, .nb = nb, .ctl_names = names + nc + ni + nb,
      .nx = nx, .signal_names = names + nc + ni + nb + nx, .nsig = ns,
      .library = "partita " PT_VERSION};
  char err[300];
  r->w = rec_writer_open(path, &in, err, sizeof(err));
  free(names);
  if (!r->w) {
    cli_error(cmd, "%s", err);
    free(r);
    return NULL;
  }
  r->path = path;
  r->every = every;
  // the --set inputs, applied before step 0
  if (nset > 0) {
    Partita__V1__RecordedInput ri = PARTITA__V1__RECORDED_INPUT__INIT;
    uint32_t *idx = calloc((size_t)nset, sizeof(uint32_t));
    double *val = calloc((size_t)nset, sizeof(double));
    if (!idx || !val) {
      free(idx);
      free(val);
      rec_writer_abandon(r->w);
      free(r);
      cli_error(cmd, "out of memory");
      return NULL;
    }
    for (int k = 0; k < nset; k++) {
      idx[k] = (uint32_t)set_index[k];
      val[k] = set_value[k];
    }
    ri.model = (char *)pt_model_name(m);
    ri.step = pt_nstep(d);
    ri.time = pt_time(d);
    ri.n_index = ri.n_values = (size_t)nset;
    ri.index = idx;
    ri.values = val;
    if (rec_write_input(r->w, r->seq++, (uint64_t)llround(pt_time(d) * 1e9), &ri) < 0)
      rec_fail(cmd, r);
    free(idx);
    free(val);
  }
  return r;
}

int cli_rec_step(cli_rec *r, const pt_model *m, const pt_data *d) {
  int64_t step = pt_nstep(d);
  if (r->failed)
    return -1;
  if (step % r->every != 0)
    return 0;
  ptb_state st;
  ptb_frame fr;
  ptb_state_of_data(&st, m, d);
  st.mode = PARTITA__V1__MODE__LOCKSTEP;
  ptb_frame_build(&fr, &st, RECORDED_FIELDS, 0);
  fr.f.sequence = r->states;
  int rc = rec_write_state(r->w, r->seq++, (uint64_t)llround(pt_time(d) * 1e9), &fr.f);
  ptb_frame_release(&fr);
  if (rc < 0)
    return rec_fail("simulate", r);
  r->states++;
  return 0;
}

int cli_rec_close(const char *cmd, cli_rec *r, int ok) {
  if (!r)
    return CLI_EXIT_OK;
  char states[32], err[300];
  snprintf(states, sizeof(states), "%llu", (unsigned long long)r->states);
  const char *kv[] = {"state_frames", states, "dropped_frames", "0",
                      "result", ok ? "completed" : "a step failed"};
  int failed = r->failed;
  if (rec_writer_close(r->w, kv, 3, err, sizeof(err)) < 0) {
    if (!failed)
      cli_error(cmd, "%s: %s", r->path, err);
    failed = 1;
  }
  free(r);
  return failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

// ---------------------------------------------------------------------------------------------
// Reading: shared by replay (rec_replay.c), info and export (rec_info.c).

// Reads FILE, printing a cut-off file's note as a warning. Exit code.
int cli_rec_read(const char *cmd, const char *path, rec_file *r) {
  char err[600];
  mcap_read_status st = rec_file_read(path, r, err, sizeof(err));
  if (st == MCAP_READ_BAD) {
    cli_error(cmd, "%s: %s", path, err);
    return CLI_EXIT_FAIL;
  }
  if (st == MCAP_READ_PARTIAL)
    cli_error(cmd, "warning: %s: %s; using what comes before", path, r->f.note);
  return CLI_EXIT_OK;
}
