// config.c: a small libyaml document walk; unknown keys are errors so typos are noticed.
#include "base/config.h"
#include "addr.h"
#include "base/pace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/log.h"

void config_defaults(config *c) {
  memset(c, 0, sizeof(*c));
  snprintf(c->listen, sizeof(c->listen), "127.0.0.1:7450");
  c->log_level = LOG_INFO;
  c->limits.max_clients = 64;
  c->limits.max_models = 16;
  c->limits.max_frame_bytes = 16u << 20;
  c->limits.max_in_flight = 64;
  c->limits.max_subscriptions = 256;
  c->limits.backlog_soft_bytes = 1u << 20;
  c->limits.slow_timeout_ms = 5000;
  c->limits.backlog_hard_bytes = 8u << 20;
  c->limits.max_step_count = 10000000;
  c->limits.hello_timeout_ms = 10000;
  c->limits.max_clients_per_peer = 32;
  c->limits.auth_delay_ms = 500;
  snprintf(c->viewer.http, sizeof(c->viewer.http), "127.0.0.1:7452");
  snprintf(c->viewer.three_root, sizeof(c->viewer.three_root), "/usr/share/javascript/three");
  c->viewer.fps = 60;
  c->viewer.queue_frames = 8;
  c->viewer.drop_limit = 600;
  c->viewer.max_browsers = 16;
  c->realtime.sched_fifo = 1;
  c->realtime.priority = 80;
  c->realtime.mlockall = 1;
  c->realtime.overrun_burst = 10;
  c->realtime.max_lag_ms = 100;
  c->realtime.overrun_pause_ms = 2000;
}

int config_parse_mode(const char *s) {
  if (!strcmp(s, "paused"))
    return MODE_PAUSED;
  if (!strcmp(s, "realtime"))
    return MODE_REALTIME;
  if (!strcmp(s, "free") || !strcmp(s, "free_run"))
    return MODE_FREE_RUN;
  if (!strcmp(s, "lockstep"))
    return MODE_LOCKSTEP;
  return -1;
}

typedef struct {
  yaml_document_t doc;
  const char *path;
  char *err;
  size_t errlen;
} walk;

static int bad(walk *w, yaml_node_t *n, const char *what) {
  snprintf(w->err, w->errlen, "%s:%lu: %s", w->path,
           n ? (unsigned long)n->start_mark.line + 1 : 0ul, what);
  return -1;
}

static const char *scalar(yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int get_str(walk *w, yaml_node_t *n, char *out, size_t len) {
  const char *s = scalar(n);
  if (!s)
    return bad(w, n, "expected a string");
  if (strlen(s) >= len)
    return bad(w, n, "string too long");
  snprintf(out, len, "%s", s);
  return 0;
}

static int get_num(walk *w, yaml_node_t *n, double lo, double hi, double *out) {
  const char *s = scalar(n);
  char *end;
  if (!s || !*s)
    return bad(w, n, "expected a number");
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || !(v >= lo && v <= hi))
    return bad(w, n, "number missing or out of range");
  *out = v;
  return 0;
}

static int get_bool(walk *w, yaml_node_t *n, int *out) {
  const char *s = scalar(n);
  if (s && (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on")))
    *out = 1;
  else if (s && (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off")))
    *out = 0;
  else
    return bad(w, n, "expected true or false");
  return 0;
}

#define FOR_PAIRS(w, map, k, v)                                                         \
  for (yaml_node_pair_t *p_ = (map)->data.mapping.pairs.start;                          \
       p_ < (map)->data.mapping.pairs.top &&                                            \
       ((k) = scalar(yaml_document_get_node(&(w)->doc, p_->key)),                       \
       (v) = yaml_document_get_node(&(w)->doc, p_->value), 1);                          \
       p_++)

static int num_key(walk *w, yaml_node_t *v, double lo, double hi, double *out) {
  return get_num(w, v, lo, hi, out);
}

static int load_limits(walk *w, config *c, yaml_node_t *map) {
  const char *k;
  yaml_node_t *v;
  if (map->type != YAML_MAPPING_NODE)
    return bad(w, map, "limits: expected a mapping");
  FOR_PAIRS(w, map, k, v) {
    double x;
    if (!k)
      return bad(w, v, "bad key");
    if (!strcmp(k, "max_clients") && !num_key(w, v, 1, 100000, &x))
      c->limits.max_clients = (int)x;
    else if (!strcmp(k, "max_models") && !num_key(w, v, 1, 1024, &x))
      c->limits.max_models = (int)x;
    else if (!strcmp(k, "max_frame_bytes") && !num_key(w, v, 1024, 1 << 30, &x))
      c->limits.max_frame_bytes = (size_t)x;
    else if (!strcmp(k, "max_in_flight") && !num_key(w, v, 1, 4096, &x))
      c->limits.max_in_flight = (int)x;
    else if (!strcmp(k, "max_subscriptions") && !num_key(w, v, 1, 4096, &x))
      c->limits.max_subscriptions = (int)x;
    else if (!strcmp(k, "backlog_soft_bytes") && !num_key(w, v, 1024, 1 << 30, &x))
      c->limits.backlog_soft_bytes = (size_t)x;
    else if (!strcmp(k, "slow_timeout_ms") && !num_key(w, v, 0, 3600000, &x))
      c->limits.slow_timeout_ms = (int)x;
    else if (!strcmp(k, "backlog_hard_bytes") && !num_key(w, v, 1024, 1 << 30, &x))
      c->limits.backlog_hard_bytes = (size_t)x;
    else if (!strcmp(k, "max_step_count") && !num_key(w, v, 1, 1e12, &x))
      c->limits.max_step_count = (long long)x;
    else if (!strcmp(k, "hello_timeout_ms") && !num_key(w, v, 100, 3600000, &x))
      c->limits.hello_timeout_ms = (int)x;
    else if (!strcmp(k, "max_clients_per_peer") && !num_key(w, v, 1, 100000, &x))
      c->limits.max_clients_per_peer = (int)x;
    else if (!strcmp(k, "auth_delay_ms") && !num_key(w, v, 0, 60000, &x))
      c->limits.auth_delay_ms = (int)x;
    else if (!strcmp(k, "model_bytes") && !num_key(w, v, 1024, 1 << 30, &x))
      c->limits.model_bytes = (long long)x;
    else if (!strcmp(k, "model_bodies") && !num_key(w, v, 1, 1000000, &x))
      c->limits.model_bodies = (int)x;
    else if (!strcmp(k, "model_joints") && !num_key(w, v, 1, 1000000, &x))
      c->limits.model_joints = (int)x;
    else if (!w->err[0])
      return bad(w, v, "unknown key in limits");
    else
      return -1;
  }
  return 0;
}

static int load_viewer(walk *w, config *c, yaml_node_t *map) {
  const char *k;
  yaml_node_t *v;
  if (map->type != YAML_MAPPING_NODE)
    return bad(w, map, "viewer: expected a mapping");
  FOR_PAIRS(w, map, k, v) {
    double x;
    int rc = 0;
    if (!k)
      return bad(w, v, "bad key");
    if (!strcmp(k, "web_root"))
      rc = get_str(w, v, c->viewer.web_root, sizeof(c->viewer.web_root));
    else if (!strcmp(k, "three_root"))
      rc = get_str(w, v, c->viewer.three_root, sizeof(c->viewer.three_root));
    else if (!strcmp(k, "package_path"))
      rc = get_str(w, v, c->viewer.package_path, sizeof(c->viewer.package_path));
    else if (!strcmp(k, "fps") && !num_key(w, v, 1, 240, &x))
      c->viewer.fps = (int)x;
    else if (!strcmp(k, "queue_frames") && !num_key(w, v, 1, 1024, &x))
      c->viewer.queue_frames = (int)x;
    else if (!strcmp(k, "max_browsers") && !num_key(w, v, 1, 1024, &x))
      c->viewer.max_browsers = (int)x;
    else if (!strcmp(k, "drop_limit") && !num_key(w, v, 1, 1e6, &x))
      c->viewer.drop_limit = (int)x;
    else if (!w->err[0])   // a bad value leaves the config as it was (get_num said why)
      return bad(w, v, "unknown key in viewer");
    else
      return -1;
    if (rc)
      return -1;
  }
  return 0;
}

static int load_realtime(walk *w, config *c, yaml_node_t *map) {
  const char *k;
  yaml_node_t *v;
  if (map->type != YAML_MAPPING_NODE)
    return bad(w, map, "realtime: expected a mapping");
  FOR_PAIRS(w, map, k, v) {
    double x;
    if (!k)
      return bad(w, v, "bad key");
    if (!strcmp(k, "sched_fifo")) {
      if (get_bool(w, v, &c->realtime.sched_fifo))
        return -1;
    } else if (!strcmp(k, "mlockall")) {
      if (get_bool(w, v, &c->realtime.mlockall))
        return -1;
    } else if (!strcmp(k, "priority")) {
      if (get_num(w, v, 1, 99, &x))
        return -1;
      c->realtime.priority = (int)x;
    } else if (!strcmp(k, "overrun_burst")) {
      if (get_num(w, v, 1, 1e6, &x))
        return -1;
      c->realtime.overrun_burst = (int)x;
    } else if (!strcmp(k, "max_lag_ms")) {
      if (get_num(w, v, 1, 3600000, &x))
        return -1;
      c->realtime.max_lag_ms = (int)x;
    } else if (!strcmp(k, "overrun_pause_ms")) {
      if (get_num(w, v, 0, 3600000, &x))
        return -1;
      c->realtime.overrun_pause_ms = (int)x;
    } else {
      return bad(w, v, "unknown key in realtime");
    }
  }
  return 0;
}

static int load_record(walk *w, config *c, yaml_node_t *map) {
  const char *k;
  yaml_node_t *v;
  if (map->type != YAML_MAPPING_NODE)
    return bad(w, map, "record: expected a mapping");
  FOR_PAIRS(w, map, k, v) {
    double x;
    if (!k)
      return bad(w, v, "bad key");
    if (!strcmp(k, "dir")) {
      if (get_str(w, v, c->record.dir, sizeof(c->record.dir)))
        return -1;
    } else if (!strcmp(k, "all")) {
      if (get_bool(w, v, &c->record.all))
        return -1;
    } else if (!strcmp(k, "fsync")) {
      if (get_bool(w, v, &c->record.fsync))
        return -1;
    } else if (!strcmp(k, "every_k")) {
      if (get_num(w, v, 1, 1e9, &x))
        return -1;
      c->record.every_k = (unsigned)x;
    } else if (!strcmp(k, "fields")) {
      if (get_num(w, v, 0, 127, &x))
        return -1;
      c->record.fields = (unsigned)x;
    } else if (!strcmp(k, "queue_frames")) {
      if (get_num(w, v, 2, 1 << 24, &x))
        return -1;
      c->record.queue_frames = (int)x;
    } else if (!strcmp(k, "queue_inputs")) {
      if (get_num(w, v, 2, 1 << 24, &x))
        return -1;
      c->record.queue_inputs = (int)x;
    } else if (!strcmp(k, "queue_events")) {
      if (get_num(w, v, 2, 1 << 20, &x))
        return -1;
      c->record.queue_events = (int)x;
    } else if (!strcmp(k, "test_slow_us")) {
      if (get_num(w, v, 0, 1e6, &x))
        return -1;
      c->record.test_slow_us = (int)x;
    } else {
      return bad(w, v, "unknown key in record");
    }
  }
  return 0;
}

static int load_models(walk *w, config *c, yaml_node_t *seq, const char *dir) {
  if (seq->type == YAML_SCALAR_NODE && !*scalar(seq))
    return 0;   // "models:" with nothing
  if (seq->type != YAML_SEQUENCE_NODE)
    return bad(w, seq, "models: expected a list");
  for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
       it++) {
    yaml_node_t *map = yaml_document_get_node(&w->doc, *it);
    if (c->nmodel >= CFG_MAX_MODELS)
      return bad(w, map, "too many models");
    cfg_model *cm = &c->models[c->nmodel];
    memset(cm, 0, sizeof(*cm));
    cm->mode = MODE_PAUSED;
    cm->rate = 1.0;
    if (map->type != YAML_MAPPING_NODE)
      return bad(w, map, "model: expected a mapping with file:");
    const char *k;
    yaml_node_t *v;
    char file[CFG_STR] = "", mode[32];
    FOR_PAIRS(w, map, k, v) {
      if (!k)
        return bad(w, v, "bad key");
      if (!strcmp(k, "file")) {
        if (get_str(w, v, file, sizeof(file)))
          return -1;
      } else if (!strcmp(k, "name")) {
        if (get_str(w, v, cm->name, sizeof(cm->name)))
          return -1;
      } else if (!strcmp(k, "mode")) {
        if (get_str(w, v, mode, sizeof(mode)) )
          return -1;
        if ((cm->mode = config_parse_mode(mode)) < 0)
          return bad(w, v, "mode: paused, realtime, free or lockstep");
      } else if (!strcmp(k, "rate")) {
        if (get_num(w, v, PACE_RATE_MIN, PACE_RATE_MAX, &cm->rate))
          return -1;
      } else if (!strcmp(k, "floating_base")) {
        if (get_bool(w, v, &cm->floating_base))
          return -1;
      } else if (!strcmp(k, "balance_inertia")) {
        if (get_bool(w, v, &cm->balance_inertia))
          return -1;
      } else if (!strcmp(k, "no_joint_limits")) {
        if (get_bool(w, v, &cm->no_joint_limits))
          return -1;
      } else if (!strcmp(k, "input_timeout_ms")) {
        double ms;
        if (get_num(w, v, 0, 3600000, &ms))
          return -1;
        cm->input_timeout_ms = (unsigned)ms;
      } else if (!strcmp(k, "input_safe")) {
        char safe[16];
        if (get_str(w, v, safe, sizeof(safe)))
          return -1;
        if (strcmp(safe, "zero") && strcmp(safe, "hold"))
          return bad(w, v, "input_safe: zero or hold");
        cm->input_hold = !strcmp(safe, "hold");
      } else {
        return bad(w, v, "unknown key in model");
      }
    }
    if (!file[0])
      return bad(w, map, "model: file missing");
    int n = file[0] == '/' || !dir[0] ? snprintf(cm->file, sizeof(cm->file), "%s", file)
                                      : snprintf(cm->file, sizeof(cm->file), "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= sizeof(cm->file))
      return bad(w, map, "model file path too long");
    c->nmodel++;
  }
  return 0;
}

static int load_root(walk *w, config *c, yaml_node_t *root, const char *dir) {
  const char *k;
  yaml_node_t *v;
  if (!root)
    return 0;   // empty file
  if (root->type != YAML_MAPPING_NODE)
    return bad(w, root, "expected a mapping at the top");
  FOR_PAIRS(w, root, k, v) {
    int rc = 0;
    if (!k)
      return bad(w, v, "bad key");
    if (!strcmp(k, "listen"))
      rc = get_str(w, v, c->listen, sizeof(c->listen));
    else if (!strcmp(k, "socket"))
      rc = get_str(w, v, c->socket, sizeof(c->socket));
    else if (!strcmp(k, "udp"))
      rc = get_str(w, v, c->udp, sizeof(c->udp));
    else if (!strcmp(k, "http")) {
      rc = get_str(w, v, c->viewer.http, sizeof(c->viewer.http));
      c->viewer.http_set = 1;
    } else if (!strcmp(k, "viewer"))
      rc = load_viewer(w, c, v);
    else if (!strcmp(k, "socket_group"))
      rc = get_str(w, v, c->socket_group, sizeof(c->socket_group));
    else if (!strcmp(k, "log_file"))
      rc = get_str(w, v, c->log_file, sizeof(c->log_file));
    else if (!strcmp(k, "auth_token"))
      rc = get_str(w, v, c->auth_token, sizeof(c->auth_token));
    else if (!strcmp(k, "log_level")) {
      char lv[16];
      rc = get_str(w, v, lv, sizeof(lv));
      if (!rc && (c->log_level = log_parse_level(lv)) < 0)
        return bad(w, v, "log_level: error, warn, info or debug");
    } else if (!strcmp(k, "models"))
      rc = load_models(w, c, v, dir);
    else if (!strcmp(k, "limits"))
      rc = load_limits(w, c, v);
    else if (!strcmp(k, "realtime"))
      rc = load_realtime(w, c, v);
    else if (!strcmp(k, "record"))
      rc = load_record(w, c, v);
    else
      return bad(w, v, "unknown key");
    if (rc)
      return -1;
  }
  return 0;
}

int config_load(config *c, const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return -1;
  }
  walk w = {.path = path, .err = err, .errlen = errlen};
  err[0] = 0;
  yaml_parser_t parser;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_file(&parser, f);
  int rc = -1;
  if (!yaml_parser_load(&parser, &w.doc)) {
    snprintf(err, errlen, "%s:%lu: %s", path, (unsigned long)parser.problem_mark.line + 1,
             parser.problem ? parser.problem : "YAML error");
  } else {
    char dir[CFG_STR] = "";
    const char *slash = strrchr(path, '/');
    if (slash && (size_t)(slash - path) < sizeof(dir))
      memcpy(dir, path, (size_t)(slash - path)), dir[slash - path] = 0;
    rc = load_root(&w, c, yaml_document_get_root_node(&w.doc), dir);
    yaml_document_delete(&w.doc);
  }
  yaml_parser_delete(&parser);
  fclose(f);
  return rc;
}

static const char usage[] =
    "usage: partitad [--config FILE] [--listen HOST:PORT] [--udp HOST:PORT] [--socket PATH]\n"
    "                [--http HOST:PORT | --no-http] [--web-root DIR]\n"
    "                [--model FILE ...] [--log FILE] [--log-level error|warn|info|debug]\n"
    "                [--record-dir DIR]\n"
    "Defaults: --listen 127.0.0.1:7450, --http 127.0.0.1:7452 (the browser viewer), no Unix\n"
    "socket, no UDP. An empty value (\"\") disables a transport. Command-line values override\n"
    "the config file.\n";

static int copy_opt(char *dst, size_t n, const char *v, char *err, size_t errlen) {
  if (strlen(v) >= n) {
    snprintf(err, errlen, "option value too long: %s", v);
    return -1;
  }
  snprintf(dst, n, "%s", v);
  return 0;
}

int config_from_args(config *c, int argc, char **argv, char *err, size_t errlen) {
  // The config file is read first so that every other option overrides it.
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage, stdout);
      return 1;
    }
    if (!strcmp(argv[i], "--config")) {
      if (i + 1 >= argc) {
        snprintf(err, errlen, "--config needs a file\n%s", usage);
        return -1;
      }
      if (config_load(c, argv[i + 1], err, errlen))
        return -1;
    }
  }
  for (int i = 1; i < argc; i += 2) {   // every option takes a value
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int rc = 0;
    if (!strcmp(o, "--no-http")) {   // the one option without a value
      c->viewer.http[0] = 0;
      c->viewer.http_set = 1;
      i--;
    } else if (!strcmp(o, "--http") && v) {
      rc = copy_opt(c->viewer.http, sizeof(c->viewer.http), v, err, errlen);
      c->viewer.http_set = 1;
    } else if (!strcmp(o, "--web-root") && v) {
      rc = copy_opt(c->viewer.web_root, sizeof(c->viewer.web_root), v, err, errlen);
    } else if (!strcmp(o, "--config") && v) {
    } else if (!strcmp(o, "--listen") && v) {
      rc = copy_opt(c->listen, sizeof(c->listen), v, err, errlen);
    } else if (!strcmp(o, "--record-dir") && v) {
      rc = copy_opt(c->record.dir, sizeof(c->record.dir), v, err, errlen);
    } else if (!strcmp(o, "--udp") && v) {
      rc = copy_opt(c->udp, sizeof(c->udp), v, err, errlen);
    } else if (!strcmp(o, "--socket") && v) {
      rc = copy_opt(c->socket, sizeof(c->socket), v, err, errlen);
    } else if (!strcmp(o, "--log") && v) {
      rc = copy_opt(c->log_file, sizeof(c->log_file), v, err, errlen);
    } else if (!strcmp(o, "--log-level") && v) {
      if ((c->log_level = log_parse_level(v)) < 0) {
        snprintf(err, errlen, "--log-level: error, warn, info or debug");
        return -1;
      }
    } else if (!strcmp(o, "--model") && v) {
      if (c->nmodel >= CFG_MAX_MODELS) {
        snprintf(err, errlen, "too many models");
        return -1;
      }
      cfg_model *cm = &c->models[c->nmodel++];
      memset(cm, 0, sizeof(*cm));
      cm->mode = MODE_PAUSED;
      cm->rate = 1.0;
      rc = copy_opt(cm->file, sizeof(cm->file), v, err, errlen);
    } else {
      snprintf(err, errlen, "unknown option or missing value: %s\n%s", o, usage);
      return -1;
    }
    if (rc)
      return -1;
  }
  return 0;
}

// 1 when addr ("HOST:PORT") names a loopback host.
static int loopback(const char *addr) {
  char host[128];
  int port;
  if (wire_split_addr(addr, host, sizeof(host), &port))
    return 0;
  return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
         strcmp(host, "localhost") == 0;
}

int config_check(const config *c, char *err, size_t errlen) {
  const char *open = c->listen[0] && !loopback(c->listen) ? c->listen
                     : c->udp[0] && !loopback(c->udp)     ? c->udp
                     : c->viewer.http[0] && !loopback(c->viewer.http) ? c->viewer.http
                                                           : NULL;
  if (open && !c->auth_token[0]) {
    snprintf(err, errlen,
             "refusing to listen on %s without a token: anyone who can reach it could load "
             "models and drive them. Set auth_token in the config file (clients then send it "
             "in Hello), or listen on 127.0.0.1 or a Unix socket.", open);
    return -1;
  }
  return 0;
}
