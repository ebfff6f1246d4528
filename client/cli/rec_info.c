// rec_info.c: `partita info FILE [--json]` and `partita export FILE --csv`
// (docs/recording.md).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "json.h"
#include "rec_cmds.h"
#include "rec_file.h"
#include "recording.h"

// ---------------------------------------------------------------------------------------------
// info

// What info says beyond the file's own records: the first and last state (by sequence), the
// log-time range and the drop counts of the end record.
typedef struct {
  Partita__V1__StateFrame *first, *last;
  uint64_t t0, t1;
  const char *dropped;          // NULL: the file ends before its end record
  const char *dropped_events;   // absent from files written before it was counted
} summary;

static void summarize(const rec_file *r, summary *s) {
  const rec_entry *e0 = NULL, *e1 = NULL;
  for (size_t k = 0; k < r->n; k++)
    if (r->entries[k].kind == REC_STATE) {
      if (!e0)
        e0 = &r->entries[k];
      e1 = &r->entries[k];
    }
  s->first = e0 ? rec_state(e0) : NULL;
  s->last = e1 ? rec_state(e1) : NULL;
  s->t0 = s->t1 = 0;
  for (size_t k = 0; k < r->f.nmsg; k++) {
    uint64_t t = r->f.msgs[k].log_time;
    if (k == 0 || t < s->t0)
      s->t0 = t;
    if (k == 0 || t > s->t1)
      s->t1 = t;
  }
  s->dropped = rec_end_value(r, "dropped_frames");
  s->dropped_events = rec_end_value(r, "dropped_events");
}

static void info_json(const char *path, const rec_file *r, const summary *s) {
  cli_json j;
  cli_json_init(&j, stdout);
  cli_json_begin_object(&j);
  cli_json_member_string(&j, "file", path);
  cli_json_key(&j, "complete");
  cli_json_bool(&j, r->status == MCAP_READ_COMPLETE);
  cli_json_member_string(&j, "note", r->status == MCAP_READ_COMPLETE ? "" : r->f.note);
  cli_json_member_string(&j, "model", r->model);
  cli_json_member_string(&j, "source", r->source_name);
  cli_json_member_number(&j, "dt", r->dt);
  cli_json_member_string(&j, "integrator", r->integrator);
  cli_json_member_int(&j, "every_k", r->every_k);
  cli_json_member_string(&j, "time_base", r->time_base);
  cli_json_key(&j, "channels");
  cli_json_begin_array(&j);
  for (int i = 0; i < r->f.nchannel; i++) {
    const mcap_channel *ch = &r->f.channels[i];
    const mcap_schema *sc = mcap_find_schema(&r->f, ch->schema_id);
    cli_json_begin_object(&j);
    cli_json_member_string(&j, "topic", ch->topic);
    cli_json_member_string(&j, "schema", sc ? sc->name : "");
    cli_json_member_int(&j, "messages", (long long)ch->count);
    cli_json_end_object(&j);
  }
  cli_json_end_array(&j);
  cli_json_member_int(&j, "states", (long long)r->nstate);
  cli_json_member_int(&j, "inputs", (long long)r->ninput);
  cli_json_member_int(&j, "events", (long long)r->nevent);
  cli_json_member_int(&j, "first_step", s->first ? s->first->step : 0);
  cli_json_member_int(&j, "last_step", s->last ? s->last->step : 0);
  cli_json_member_number(&j, "start_time", s->first ? s->first->time : 0);
  cli_json_member_number(&j, "end_time", s->last ? s->last->time : 0);
  cli_json_member_int(&j, "log_time_start_ns", (long long)s->t0);
  cli_json_member_int(&j, "log_time_end_ns", (long long)s->t1);
  cli_json_member_int(&j, "overruns", (long long)r->overruns);
  cli_json_member_int(&j, "dropped_frames",
                      s->dropped ? strtoll(s->dropped, NULL, 10) : (long long)r->seq_gaps);
  cli_json_member_int(&j, "dropped_events",
                      s->dropped_events ? strtoll(s->dropped_events, NULL, 10) : 0);
  cli_json_member_int(&j, "sequence_gaps", (long long)r->seq_gaps);
  cli_json_end_object(&j);
  cli_json_finish(&j);
}

static void info_text(const char *path, const rec_file *r, const summary *s) {
  printf("file        %s (%s)\n", path,
         r->status == MCAP_READ_COMPLETE ? "complete, CRCs and indexes checked" : "cut off");
  if (r->status != MCAP_READ_COMPLETE)
    printf("note        %s\n", r->f.note);
  printf("model       %s (%s, %s, dt %.17g, %s)\n", r->model,
         r->source_name && r->source_name[0] ? r->source_name : "-",
         r->format == 2 ? "urdf" : "yaml", r->dt, r->integrator ? r->integrator : "-");
  printf("channels\n");
  for (int i = 0; i < r->f.nchannel; i++) {
    const mcap_channel *ch = &r->f.channels[i];
    const mcap_schema *sc = mcap_find_schema(&r->f, ch->schema_id);
    printf("  %-28s %-26s %10llu messages\n", ch->topic, sc ? sc->name : "-",
           (unsigned long long)ch->count);
  }
  printf("states      %zu (every %u steps), steps %lld..%lld, t %.17g..%.17g s\n", r->nstate,
         r->every_k, (long long)(s->first ? s->first->step : 0),
         (long long)(s->last ? s->last->step : 0), s->first ? s->first->time : 0.0,
         s->last ? s->last->time : 0.0);
  printf("log time    %.9f..%.9f s (%s time)\n", (double)s->t0 / 1e9, (double)s->t1 / 1e9,
         r->time_base ? r->time_base : "-");
  printf("inputs      %zu\nevents      %zu\noverruns    %llu\n", r->ninput, r->nevent,
         (unsigned long long)r->overruns);
  if (s->dropped)
    printf("dropped     %s state frames (the writer fell behind), %s events\n", s->dropped,
           s->dropped_events ? s->dropped_events : "0");
  else
    printf("dropped     unknown (the file ends before its end record); %llu sequence gaps\n",
           (unsigned long long)r->seq_gaps);
}

int cli_info_main(const cli_command *self, int argc, char **argv) {
  const char *cmd = self->name, *path = NULL;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (cli_is_flag(argv[i], "--json")) {
      json = 1;
    } else if (cli_positional(cmd, argv[i], "recording", &path) < 0) {
      return CLI_EXIT_USAGE;
    }
  }
  if (!path) {
    cli_error(cmd, "FILE missing (usage: partita info FILE [--json])");
    return CLI_EXIT_USAGE;
  }
  rec_file r;
  int code = cli_rec_read(cmd, path, &r);
  if (code) {
    rec_file_free(&r);
    return code;
  }
  summary s;
  summarize(&r, &s);
  if (json)
    info_json(path, &r, &s);
  else
    info_text(path, &r, &s);
  rec_state_free(s.first);
  rec_state_free(s.last);
  rec_file_free(&r);
  if (fflush(stdout) != 0) {
    cli_error(cmd, "writing the output failed");
    return CLI_EXIT_FAIL;
  }
  return CLI_EXIT_OK;
}

// ---------------------------------------------------------------------------------------------
// export

static void csv_num(int have, double v) {
  if (have)
    printf(",%.17g", v);
  else
    fputc(',', stdout);
}

int cli_export_main(const cli_command *self, int argc, char **argv) {
  const char *cmd = self->name, *path = NULL;
  int csv = 0;
  for (int i = 1; i < argc; i++) {
    if (cli_is_flag(argv[i], "--csv")) {
      csv = 1;
    } else if (cli_positional(cmd, argv[i], "recording", &path) < 0) {
      return CLI_EXIT_USAGE;
    }
  }
  if (!path || !csv) {
    cli_error(cmd, "usage: partita export FILE --csv");
    return CLI_EXIT_USAGE;
  }
  rec_file r;
  int code = cli_rec_read(cmd, path, &r);
  if (code) {
    rec_file_free(&r);
    return code;
  }
  // the columns of `partita simulate`
  fputs("t", stdout);
  for (int i = 0; i < r.nc; i++) {
    fputc(',', stdout);
    cli_csv_field(stdout, r.coord_names[i]);
  }
  for (int i = 0; i < r.nc; i++) {
    char name[600];
    snprintf(name, sizeof(name), "%s.rate", r.coord_names[i]);
    fputc(',', stdout);
    cli_csv_field(stdout, name);
  }
  for (int i = 0; i < r.nx; i++) {   // the control states, as simulate prints them
    fputc(',', stdout);
    cli_csv_field(stdout, r.ctl_names[i]);
  }
  fputs(",energy,residual_pos,residual_vel\n", stdout);
  for (size_t k = 0; k < r.n; k++) {
    if (r.entries[k].kind != REC_STATE)
      continue;
    Partita__V1__StateFrame *f = rec_state(&r.entries[k]);
    if (!f) {
      cli_error(cmd, "out of memory");
      rec_file_free(&r);
      return CLI_EXIT_FAIL;
    }
    printf("%.17g", f->time);
    for (int i = 0; i < r.nc; i++)
      csv_num((size_t)i < f->n_coordinates, (size_t)i < f->n_coordinates ? f->coordinates[i] : 0);
    for (int i = 0; i < r.nc; i++)
      csv_num((size_t)i < f->n_rates, (size_t)i < f->n_rates ? f->rates[i] : 0);
    for (int i = 0; i < r.nx; i++)
      csv_num((size_t)i < f->n_control_states,
              (size_t)i < f->n_control_states ? f->control_states[i] : 0);
    csv_num(f->energy != NULL, f->energy ? f->energy->kinetic + f->energy->potential : 0);
    csv_num(f->residual != NULL, f->residual ? f->residual->position : 0);
    csv_num(f->residual != NULL, f->residual ? f->residual->velocity : 0);
    fputc('\n', stdout);
    rec_state_free(f);
  }
  rec_file_free(&r);
  if (fflush(stdout) != 0) {
    cli_error(cmd, "writing the output failed");
    return CLI_EXIT_FAIL;
  }
  return CLI_EXIT_OK;
}
