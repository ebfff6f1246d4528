// rec_record.c: `partita record NAME --out FILE [--duration T] [--every K] [--fields LIST]`
// (docs/recording.md): partitad records a live model into FILE (inside its record directory)
// for T seconds, or until Ctrl-C, and this prints what was written.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "link.h"
#include "print_daemon.h"
#include "ptb_fields.h"
#include "rec_cmds.h"

typedef Partita__V1__ServerMessage pb_msg;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig) {
  (void)sig;
  interrupted = 1;
}

static const struct {
  const char *name;
  unsigned bit;
} field_names[] = {
    {"coordinates", PTB_FIELD_COORDINATES}, {"rates", PTB_FIELD_RATES},
    {"accelerations", PTB_FIELD_ACCELERATIONS}, {"inputs", PTB_FIELD_INPUTS},
    {"bodies", PTB_FIELD_BODIES}, {"energy", PTB_FIELD_ENERGY},
    {"residual", PTB_FIELD_RESIDUAL}, {"all", PTB_FIELD_ALL}, {"default", PTB_FIELD_DEFAULT}};

// "coordinates,rates,..." to Field bits; -1 after a message.
static long parse_fields(const char *s) {
  long bits = 0;
  char buf[256];
  snprintf(buf, sizeof(buf), "%s", s);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    size_t k = 0, n = sizeof(field_names) / sizeof(field_names[0]);
    while (k < n && strcmp(field_names[k].name, tok) != 0)
      k++;
    if (k == n) {
      cli_error("record", "--fields: unknown field '%s' (coordinates, rates, accelerations, "
                "inputs, bodies, energy, residual, all, default)", tok);
      return -1;
    }
    bits |= field_names[k].bit;
  }
  return bits;
}

// One request; the RecordStatus of its answer, or NULL after printing why.
static pb_msg *call(ptc_client *c, Partita__V1__Request *rq, int timeout_ms) {
  pb_msg *m = NULL;
  if (cli_link_call("record", c, rq, &m, timeout_ms) < 0)
    return NULL;
  if (!m->response->record_status) {
    cli_error("record", "the daemon answered without a recording status (too old?)");
    ptc_free(m);
    return NULL;
  }
  return m;
}

static pb_msg *simple(ptc_client *c, const char *model, int stop, int timeout_ms) {
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__StopRecording sr = PARTITA__V1__STOP_RECORDING__INIT;
  Partita__V1__GetRecording gr = PARTITA__V1__GET_RECORDING__INIT;
  sr.model = gr.model = (char *)model;
  if (stop) {
    rq.op_case = PARTITA__V1__REQUEST__OP_STOP_RECORDING;
    rq.stop_recording = &sr;
  } else {
    rq.op_case = PARTITA__V1__REQUEST__OP_GET_RECORDING;
    rq.get_recording = &gr;
  }
  return call(c, &rq, timeout_ms);
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

typedef struct {
  const char *model, *out;
  cli_link link;
  double duration;
  long every, fields;
  int json;
} rec_options;

static int record_parse(const char *cmd, int argc, char **argv, rec_options *o) {
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r;
    if ((r = cli_link_arg(cmd, argc, argv, &i, &o->link)) != 0) {
      if (r < 0)
        return -1;
    } else if (cli_is_flag(argv[i], "--json")) {
      o->json = 1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--out", &v)) != 0) {
      if (r < 0)
        return -1;
      o->out = v;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--duration", &v)) != 0) {
      if (r < 0 || cli_parse_double(cmd, "--duration", v, &o->duration) < 0)
        return -1;
      if (o->duration <= 0 || o->duration > 1e7) {
        cli_error(cmd, "--duration: seconds in (0, 1e7]");
        return -1;
      }
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--every", &v)) != 0) {
      if (r < 0 || cli_parse_long(cmd, "--every", v, 1, 1000000000L, &o->every) < 0)
        return -1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--fields", &v)) != 0) {
      if (r < 0 || (o->fields = parse_fields(v)) < 0)
        return -1;
    } else if (cli_positional(cmd, argv[i], "model name", &o->model) < 0) {
      return -1;
    }
  }
  if (!o->model || !o->out) {
    cli_error(cmd, "usage: partita record NAME --out FILE [--duration T] [--every K] "
              "[--fields LIST]");
    return -1;
  }
  return cli_link_check(cmd, &o->link);
}

// The Record request: 0 once partitad records, or -1 after printing why not.
static int record_start(ptc_client *c, const rec_options *o) {
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__Record rec = PARTITA__V1__RECORD__INIT;
  rec.model = (char *)o->model;
  rec.path = (char *)o->out;
  rec.duration = o->duration;
  rec.every_k = (uint32_t)o->every;
  rec.fields = (uint32_t)o->fields;
  rq.op_case = PARTITA__V1__REQUEST__OP_RECORD;
  rq.record = &rec;
  pb_msg *m = call(c, &rq, o->link.timeout_ms);
  if (!m)
    return -1;
  if (!o->json)
    fprintf(stderr, "partita record: recording %s to %s%s\n", o->model,
            m->response->record_status->path, o->duration > 0 ? "" : " until Ctrl-C");
  ptc_free(m);
  return 0;
}

// Until partitad says the file is complete (Ctrl-C stops the recording first); then what
// was written. An exit code.
static int record_wait(ptc_client *c, const rec_options *o) {
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  int stopped = 0;
  for (;;) {
    pb_msg *m;
    if (interrupted && !stopped) {
      stopped = 1;
      if (!(m = simple(c, o->model, 1, o->link.timeout_ms)))
        return CLI_EXIT_FAIL;
      ptc_free(m);
    }
    sleep_ms(100);
    if (!(m = simple(c, o->model, 0, o->link.timeout_ms)))
      return CLI_EXIT_FAIL;
    const Partita__V1__RecordStatus *st = m->response->record_status;
    if (!st->active) {
      cli_print_record_status(st, o->json);
      int code = st->error[0] ? CLI_EXIT_FAIL : CLI_EXIT_OK;
      ptc_free(m);
      return code;
    }
    ptc_free(m);
  }
}

int cli_record_main(const cli_command *self, int argc, char **argv) {
  rec_options o;
  memset(&o, 0, sizeof(o));
  cli_link_init(&o.link);
  if (record_parse(self->name, argc, argv, &o) < 0)
    return CLI_EXIT_USAGE;
  ptc_client *c = cli_link_open(self->name, &o.link);
  if (!c)
    return CLI_EXIT_FAIL;
  int code = record_start(c, &o) < 0 ? CLI_EXIT_FAIL : record_wait(c, &o);
  ptc_close(c);
  if (fflush(stdout) != 0)
    code = CLI_EXIT_FAIL;
  return code;
}
