// config.c: partitad settings: one table of keys (section, name, type, field, range, option)
// read by a small libyaml document walk and by the option parser; unknown keys are errors so
// typos are noticed.
#include "base/config.h"
#include "addr.h"
#include "base/pace.h"
#include "base/protocol.h"

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
    return MODE(PAUSED);
  if (!strcmp(s, "realtime"))
    return MODE(REALTIME);
  if (!strcmp(s, "free") || !strcmp(s, "free_run"))
    return MODE(FREE_RUN);
  if (!strcmp(s, "lockstep"))
    return MODE(LOCKSTEP);
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

// ---------------------------------------------------------------------------------------------
// The keys: one row each (as Redis's static_configs in its config.c). The file walk and the
// option parser below read this table; nothing else names a key.

typedef enum {
  K_STR,          // a string into a char array (size bytes)
  K_BOOL,         // true/yes/on, false/no/off into an int
  K_INT,          // numbers in [lo, hi], stored as the field's type
  K_UINT,
  K_SIZE,
  K_LLONG,
  K_DOUBLE,
  K_MODE,         // paused, realtime, free (free_run), lockstep
  K_LOG_LEVEL,    // error, warn, info, debug
  K_INPUT_SAFE,   // zero or hold: the int is 1 for hold
  K_SECTION,      // a mapping of the keys whose section is this key's name
  K_MODELS,       // the list of models (section "model", each a cfg_model)
} key_type;

typedef struct {
  const char *section;   // "" at the top; "model" for the keys of each models: entry
  const char *name;
  key_type type;
  size_t offset;         // of the field in config, or in cfg_model for section "model"
  size_t size;           // of the field
  double lo, hi;         // the range of a number
  const char *option;    // the command-line option that sets it too (NULL: none)
  size_t given;          // offset in config of an int set to 1 when the key is given (0: none)
} cfg_key;

#define C(field) offsetof(config, field), sizeof(((config *)0)->field)
#define M(field) offsetof(cfg_model, field), sizeof(((cfg_model *)0)->field)
#define SECTION(name) {"", #name, K_SECTION, 0, 0, 0, 0, NULL, 0}

static const cfg_key keys[] = {
    // section, key, type, field, lo, hi, option, given
    {"", "listen", K_STR, C(listen), 0, 0, "--listen", 0},
    {"", "socket", K_STR, C(socket), 0, 0, "--socket", 0},
    {"", "udp", K_STR, C(udp), 0, 0, "--udp", 0},
    {"", "http", K_STR, C(viewer.http), 0, 0, "--http", offsetof(config, viewer.http_set)},
    SECTION(viewer),
    {"", "socket_group", K_STR, C(socket_group), 0, 0, NULL, 0},
    {"", "log_file", K_STR, C(log_file), 0, 0, "--log", 0},
    {"", "auth_token", K_STR, C(auth_token), 0, 0, NULL, 0},
    {"", "log_level", K_LOG_LEVEL, C(log_level), 0, 0, "--log-level", 0},
    {"", "models", K_MODELS, 0, 0, 0, 0, NULL, 0},
    SECTION(limits),
    SECTION(realtime),
    SECTION(record),

    {"limits", "max_clients", K_INT, C(limits.max_clients), 1, 100000, NULL, 0},
    {"limits", "max_models", K_INT, C(limits.max_models), 1, 1024, NULL, 0},
    {"limits", "max_frame_bytes", K_SIZE, C(limits.max_frame_bytes), 1024, 1 << 30, NULL, 0},
    {"limits", "max_in_flight", K_INT, C(limits.max_in_flight), 1, 4096, NULL, 0},
    {"limits", "max_subscriptions", K_INT, C(limits.max_subscriptions), 1, 4096, NULL, 0},
    {"limits", "backlog_soft_bytes", K_SIZE, C(limits.backlog_soft_bytes), 1024, 1 << 30, NULL,
     0},
    {"limits", "slow_timeout_ms", K_INT, C(limits.slow_timeout_ms), 0, 3600000, NULL, 0},
    {"limits", "backlog_hard_bytes", K_SIZE, C(limits.backlog_hard_bytes), 1024, 1 << 30, NULL,
     0},
    {"limits", "max_step_count", K_LLONG, C(limits.max_step_count), 1, 1e12, NULL, 0},
    {"limits", "hello_timeout_ms", K_INT, C(limits.hello_timeout_ms), 100, 3600000, NULL, 0},
    {"limits", "max_clients_per_peer", K_INT, C(limits.max_clients_per_peer), 1, 100000, NULL,
     0},
    {"limits", "auth_delay_ms", K_INT, C(limits.auth_delay_ms), 0, 60000, NULL, 0},
    {"limits", "model_bytes", K_LLONG, C(limits.model_bytes), 1024, 1 << 30, NULL, 0},
    {"limits", "model_bodies", K_INT, C(limits.model_bodies), 1, 1000000, NULL, 0},
    {"limits", "model_joints", K_INT, C(limits.model_joints), 1, 1000000, NULL, 0},

    {"viewer", "web_root", K_STR, C(viewer.web_root), 0, 0, "--web-root", 0},
    {"viewer", "three_root", K_STR, C(viewer.three_root), 0, 0, NULL, 0},
    {"viewer", "package_path", K_STR, C(viewer.package_path), 0, 0, NULL, 0},
    {"viewer", "fps", K_INT, C(viewer.fps), 1, 240, NULL, 0},
    {"viewer", "queue_frames", K_INT, C(viewer.queue_frames), 1, 1024, NULL, 0},
    {"viewer", "max_browsers", K_INT, C(viewer.max_browsers), 1, 1024, NULL, 0},
    {"viewer", "drop_limit", K_INT, C(viewer.drop_limit), 1, 1e6, NULL, 0},

    {"realtime", "sched_fifo", K_BOOL, C(realtime.sched_fifo), 0, 0, NULL, 0},
    {"realtime", "mlockall", K_BOOL, C(realtime.mlockall), 0, 0, NULL, 0},
    {"realtime", "priority", K_INT, C(realtime.priority), 1, 99, NULL, 0},
    {"realtime", "overrun_burst", K_INT, C(realtime.overrun_burst), 1, 1e6, NULL, 0},
    {"realtime", "max_lag_ms", K_INT, C(realtime.max_lag_ms), 1, 3600000, NULL, 0},
    {"realtime", "overrun_pause_ms", K_INT, C(realtime.overrun_pause_ms), 0, 3600000, NULL, 0},

    {"record", "dir", K_STR, C(record.dir), 0, 0, "--record-dir", 0},
    {"record", "all", K_BOOL, C(record.all), 0, 0, NULL, 0},
    {"record", "fsync", K_BOOL, C(record.fsync), 0, 0, NULL, 0},
    {"record", "every_k", K_UINT, C(record.every_k), 1, 1e9, NULL, 0},
    {"record", "fields", K_UINT, C(record.fields), 0, PARTITA__V1__FIELD__FIELD_ALL, NULL, 0},
    {"record", "queue_frames", K_INT, C(record.queue_frames), 2, 1 << 24, NULL, 0},
    {"record", "queue_inputs", K_INT, C(record.queue_inputs), 2, 1 << 24, NULL, 0},
    {"record", "queue_events", K_INT, C(record.queue_events), 2, 1 << 20, NULL, 0},
    {"record", "test_slow_us", K_INT, C(record.test_slow_us), 0, 1e6, NULL, 0},

    {"model", "file", K_STR, M(file), 0, 0, NULL, 0},   // relative to the config's folder
    {"model", "name", K_STR, M(name), 0, 0, NULL, 0},
    {"model", "mode", K_MODE, M(mode), 0, 0, NULL, 0},
    {"model", "rate", K_DOUBLE, M(rate), PACE_RATE_MIN, PACE_RATE_MAX, NULL, 0},
    {"model", "floating_base", K_BOOL, M(floating_base), 0, 0, NULL, 0},
    {"model", "balance_inertia", K_BOOL, M(balance_inertia), 0, 0, NULL, 0},
    {"model", "no_joint_limits", K_BOOL, M(no_joint_limits), 0, 0, NULL, 0},
    {"model", "ground_plane", K_BOOL, M(ground_plane), 0, 0, NULL, 0},
    {"model", "ground_z", K_DOUBLE, M(ground_z), -1e6, 1e6, NULL, 0},
    {"model", "input_timeout_ms", K_UINT, M(input_timeout_ms), 0, 3600000, NULL, 0},
    {"model", "input_safe", K_INPUT_SAFE, M(input_hold), 0, 0, NULL, 0},
};

#undef C
#undef M
#undef SECTION

static const cfg_key *find_key(const char *section, const char *name) {
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
    if (!strcmp(keys[i].section, section) && !strcmp(keys[i].name, name))
      return &keys[i];
  return NULL;
}

// The number a word of a K_MODE, K_LOG_LEVEL or K_INPUT_SAFE key stands for; -1 when none.
static int word_value(key_type t, const char *s) {
  if (t == K_MODE)
    return config_parse_mode(s);
  if (t == K_LOG_LEVEL)
    return log_parse_level(s);
  return !strcmp(s, "hold") ? 1 : !strcmp(s, "zero") ? 0 : -1;
}

static int load_models(walk *w, config *c, yaml_node_t *seq, const char *dir);
static int load_section(walk *w, config *c, const char *section, yaml_node_t *map, char *base,
                        const char *dir);

// Key k's value v into the struct at base (config, or a cfg_model). A bad value changes
// nothing and says why.
static int set_key(walk *w, config *c, const cfg_key *k, yaml_node_t *v, char *base,
                   const char *dir) {
  void *field = base + k->offset;
  double x = 0;
  int rc = 0;
  switch (k->type) {
  case K_STR:
    rc = get_str(w, v, field, k->size);
    break;
  case K_BOOL:
    rc = get_bool(w, v, field);
    break;
  case K_INT:
  case K_UINT:
  case K_SIZE:
  case K_LLONG:
  case K_DOUBLE:
    if ((rc = get_num(w, v, k->lo, k->hi, &x)))
      break;
    if (k->type == K_INT)
      *(int *)field = (int)x;
    else if (k->type == K_UINT)
      *(unsigned *)field = (unsigned)x;
    else if (k->type == K_SIZE)
      *(size_t *)field = (size_t)x;
    else if (k->type == K_LLONG)
      *(long long *)field = (long long)x;
    else
      *(double *)field = x;
    break;
  case K_MODE:
  case K_LOG_LEVEL:
  case K_INPUT_SAFE: {
    char word[32];
    int n;
    if ((rc = get_str(w, v, word, k->type == K_MODE ? 32 : 16)))
      break;
    if ((n = word_value(k->type, word)) < 0)
      rc = bad(w, v, k->type == K_MODE        ? "mode: paused, realtime, free or lockstep"
                     : k->type == K_LOG_LEVEL ? "log_level: error, warn, info or debug"
                                              : "input_safe: zero or hold");
    else
      *(int *)field = n;
    break;
  }
  case K_SECTION:
    rc = load_section(w, c, k->name, v, (char *)c, dir);
    break;
  case K_MODELS:
    rc = load_models(w, c, v, dir);
    break;
  }
  if (k->given)
    *(int *)((char *)c + k->given) = 1;
  return rc;
}

// The keys of a mapping in `section` ("" the top) into the struct at base.
static int load_section(walk *w, config *c, const char *section, yaml_node_t *map, char *base,
                        const char *dir) {
  const char *k;
  yaml_node_t *v;
  if (map->type != YAML_MAPPING_NODE) {
    char what[64];
    snprintf(what, sizeof(what), "%s: expected a mapping", section);
    return bad(w, map, !section[0]                  ? "expected a mapping at the top"
                       : !strcmp(section, "model") ? "model: expected a mapping with file:"
                                                   : what);
  }
  FOR_PAIRS(w, map, k, v) {
    if (!k)
      return bad(w, v, "bad key");
    const cfg_key *key = find_key(section, k);
    if (!key) {
      char what[64];
      snprintf(what, sizeof(what), "unknown key in %s", section);
      return bad(w, v, section[0] ? what : "unknown key");
    }
    if (set_key(w, c, key, v, base, dir))
      return -1;
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
    cm->mode = MODE(PAUSED);
    cm->rate = 1.0;
    if (load_section(w, c, "model", map, (char *)cm, dir))
      return -1;
    if (!cm->file[0])
      return bad(w, map, "model: file missing");
    char file[CFG_STR];
    memcpy(file, cm->file, sizeof(file));
    int n = file[0] == '/' || !dir[0] ? snprintf(cm->file, sizeof(cm->file), "%s", file)
                                      : snprintf(cm->file, sizeof(cm->file), "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= sizeof(cm->file))
      return bad(w, map, "model file path too long");
    c->nmodel++;
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
    yaml_node_t *root = yaml_document_get_root_node(&w.doc);
    rc = root ? load_section(&w, c, "", root, (char *)c, dir) : 0;   // an empty file: nothing
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

static const cfg_key *find_option(const char *option) {
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
    if (keys[i].option && !strcmp(keys[i].option, option))
      return &keys[i];
  return NULL;
}

// An option's value v for key k (a string, or --log-level's word).
static int set_option(config *c, const cfg_key *k, const char *v, char *err, size_t errlen) {
  if (k->type == K_LOG_LEVEL) {
    int level = log_parse_level(v);
    if (level < 0) {
      snprintf(err, errlen, "%s: error, warn, info or debug", k->option);
      return -1;
    }
    *(int *)((char *)c + k->offset) = level;
    return 0;
  }
  int rc = copy_opt((char *)c + k->offset, k->size, v, err, errlen);
  if (k->given)
    *(int *)((char *)c + k->given) = 1;
  return rc;
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
    const cfg_key *k;
    int rc = 0;
    if (!strcmp(o, "--no-http")) {   // the one option without a value
      c->viewer.http[0] = 0;
      c->viewer.http_set = 1;
      i--;
    } else if (!strcmp(o, "--config") && v) {
    } else if (!strcmp(o, "--model") && v) {
      if (c->nmodel >= CFG_MAX_MODELS) {
        snprintf(err, errlen, "too many models");
        return -1;
      }
      cfg_model *cm = &c->models[c->nmodel++];
      memset(cm, 0, sizeof(*cm));
      cm->mode = MODE(PAUSED);
      cm->rate = 1.0;
      rc = copy_opt(cm->file, sizeof(cm->file), v, err, errlen);
    } else if ((k = find_option(o)) && v) {
      rc = set_option(c, k, v, err, errlen);
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
