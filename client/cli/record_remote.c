// record_remote.c: `partita record NAME --out FILE [--duration T] [--every K] [--fields LIST]`
// (docs/recording.md): partitad records a live model into FILE (inside its record directory)
// for T seconds, or until Ctrl-C, and this prints what was written.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "partita_client.h"
#include "record.h"
#include "remote.h"

typedef Partita__V1__ServerMessage pb_msg;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig) {
  (void)sig;
  interrupted = 1;
}

static const struct {
  const char *name;
  unsigned bit;
} field_names[] = {{"coordinates", 1}, {"rates", 2},    {"accelerations", 4}, {"inputs", 8},
                   {"bodies", 16},     {"energy", 32},  {"residual", 64},     {"all", 127},
                   {"default", 99}};

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
  if (ptc_call(c, rq, &m, timeout_ms) != PTC_OK) {
    cli_error("record", "%s", ptc_error(c));
    return NULL;
  }
  Partita__V1__Status *st = m->response->status;
  if (st && st->code != PARTITA__V1__STATUS__CODE__OK) {
    cli_error("record", "%s: %s", ptc_status_name(st->code), st->message);
    ptc_free(m);
    return NULL;
  }
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

static void print_status(const Partita__V1__RecordStatus *st, int json) {
  if (json) {
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_key(&j, "model");
    cli_json_string(&j, st->model);
    cli_json_key(&j, "file");
    cli_json_string(&j, st->path);
    cli_json_key(&j, "state_frames");
    cli_json_int(&j, (long long)st->state_frames);
    cli_json_key(&j, "dropped_frames");
    cli_json_int(&j, (long long)st->dropped_frames);
    cli_json_key(&j, "inputs");
    cli_json_int(&j, (long long)st->inputs);
    cli_json_key(&j, "events");
    cli_json_int(&j, (long long)st->events);
    cli_json_key(&j, "dropped_events");
    cli_json_int(&j, (long long)st->dropped_events);
    cli_json_key(&j, "bytes");
    cli_json_int(&j, (long long)st->bytes);
    cli_json_key(&j, "every_k");
    cli_json_int(&j, st->every_k);
    cli_json_key(&j, "fields");
    cli_json_int(&j, st->fields);
    cli_json_key(&j, "error");
    cli_json_string(&j, st->error);
    cli_json_end_object(&j);
    cli_json_finish(&j);
    return;
  }
  printf("recorded   %s\nmodel      %s\nstates     %llu (every %u steps), %llu dropped\n"
         "inputs     %llu\nevents     %llu, %llu dropped\nbytes      %llu\n", st->path,
         st->model, (unsigned long long)st->state_frames, st->every_k,
         (unsigned long long)st->dropped_frames, (unsigned long long)st->inputs,
         (unsigned long long)st->events, (unsigned long long)st->dropped_events,
         (unsigned long long)st->bytes);
  if (st->error[0])
    printf("error      %s\n", st->error);
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

int cli_record_remote_main(int argc, char **argv) {
  const char *cmd = "record", *model = NULL, *out = NULL, *connect = NULL, *sock = NULL;
  double duration = 0, timeout = CLI_REMOTE_TIMEOUT_MS / 1000.0;
  long every = 0, fields = 0;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r;
    if (cli_is_flag(argv[i], "--help") || cli_is_flag(argv[i], "-h")) {
      cli_usage(cmd, stdout);
      return CLI_EXIT_OK;
    } else if (cli_is_flag(argv[i], "--json")) {
      json = 1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--out", &v)) != 0) {
      if (r < 0)
        return CLI_EXIT_USAGE;
      out = v;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--duration", &v)) != 0) {
      if (r < 0 || cli_parse_double(cmd, "--duration", v, &duration) < 0)
        return CLI_EXIT_USAGE;
      if (duration <= 0 || duration > 1e7) {
        cli_error(cmd, "--duration: seconds in (0, 1e7]");
        return CLI_EXIT_USAGE;
      }
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--every", &v)) != 0) {
      if (r < 0 || cli_parse_long(cmd, "--every", v, 1, 1000000000L, &every) < 0)
        return CLI_EXIT_USAGE;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--fields", &v)) != 0) {
      if (r < 0 || (fields = parse_fields(v)) < 0)
        return CLI_EXIT_USAGE;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--connect", &v)) != 0) {
      if (r < 0)
        return CLI_EXIT_USAGE;
      connect = v;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--socket", &v)) != 0) {
      if (r < 0)
        return CLI_EXIT_USAGE;
      sock = v;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--timeout", &v)) != 0) {
      if (r < 0 || cli_parse_double(cmd, "--timeout", v, &timeout) < 0)
        return CLI_EXIT_USAGE;
      if (timeout <= 0 || timeout > 86400) {
        cli_error(cmd, "--timeout: seconds in (0, 86400]");
        return CLI_EXIT_USAGE;
      }
    } else if (cli_positional(cmd, argv[i], "model name", &model) < 0) {
      return CLI_EXIT_USAGE;
    }
  }
  if (!model || !out) {
    cli_error(cmd, "usage: partita record NAME --out FILE [--duration T] [--every K] "
              "[--fields LIST]");
    return CLI_EXIT_USAGE;
  }
  if (connect && sock) {
    cli_error(cmd, "give --connect or --socket, not both");
    return CLI_EXIT_USAGE;
  }
  int timeout_ms = (int)(timeout * 1000);
  char err[512];
  if (!sock && !connect)
    sock = getenv("PARTITA_SOCKET");
  ptc_client *c;
  if (sock && *sock) {
    c = ptc_connect_unix(sock, timeout_ms, err, sizeof(err));
  } else {
    const char *addr = connect ? connect : getenv("PARTITA_CONNECT");
    c = ptc_connect_addr(addr && *addr ? addr : CLI_REMOTE_DEFAULT_CONNECT, timeout_ms, err,
                         sizeof(err));
  }
  if (!c) {
    cli_error(cmd, "cannot reach partitad: %s", err);
    return CLI_EXIT_FAIL;
  }
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__Record rec = PARTITA__V1__RECORD__INIT;
  rec.model = (char *)model;
  rec.path = (char *)out;
  rec.duration = duration;
  rec.every_k = (uint32_t)every;
  rec.fields = (uint32_t)fields;
  rq.op_case = PARTITA__V1__REQUEST__OP_RECORD;
  rq.record = &rec;
  pb_msg *m = call(c, &rq, timeout_ms);
  if (!m) {
    ptc_close(c);
    return CLI_EXIT_FAIL;
  }
  if (!json)
    fprintf(stderr, "partita record: recording %s to %s%s\n", model,
            m->response->record_status->path,
            duration > 0 ? "" : " until Ctrl-C");
  ptc_free(m);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  int stopped = 0, code = CLI_EXIT_OK;
  for (;;) {   // until the daemon says the file is complete
    if (interrupted && !stopped) {
      stopped = 1;
      if (!(m = simple(c, model, 1, timeout_ms))) {
        code = CLI_EXIT_FAIL;
        break;
      }
      ptc_free(m);
    }
    sleep_ms(100);
    if (!(m = simple(c, model, 0, timeout_ms))) {
      code = CLI_EXIT_FAIL;
      break;
    }
    const Partita__V1__RecordStatus *st = m->response->record_status;
    if (!st->active) {
      print_status(st, json);
      code = st->error[0] ? CLI_EXIT_FAIL : CLI_EXIT_OK;
      ptc_free(m);
      break;
    }
    ptc_free(m);
  }
  ptc_close(c);
  if (fflush(stdout) != 0)
    code = CLI_EXIT_FAIL;
  return code;
}
