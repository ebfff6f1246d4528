// config.h: partitad settings from configs/partitad.yaml and the command line.
#ifndef PD_CONFIG_H
#define PD_CONFIG_H

#include <stddef.h>

#define CFG_MAX_MODELS 64
#define CFG_STR 256

typedef struct {
  char file[CFG_STR];
  char name[128];
  int mode;             // the protocol's Mode (MODE(x), base/protocol.h)
  double rate;
  int floating_base;
  int balance_inertia;         // URDF: repair non-physical inertias
  int no_joint_limits;         // joint limits kept but not enforced
  int ground_plane;            // add the ground plane z = ground_z
  double ground_z;
  unsigned input_timeout_ms;   // real-time input watchdog (0: off)
  int input_hold;              // on timeout hold the inputs instead of zeroing them
} cfg_model;

typedef struct {
  char listen[CFG_STR];       // "HOST:PORT" or "" (off)
  char socket[CFG_STR];       // path or "" (off)
  char socket_group[128];     // group given access to the socket ("" = the daemon's own)
  char udp[CFG_STR];          // "HOST:PORT" or "" (off)
  int log_level;
  char log_file[CFG_STR];     // "" = stderr; reopened on SIGHUP
  char auth_token[128];
  cfg_model models[CFG_MAX_MODELS];
  int nmodel;
  struct {
    int max_clients;
    int max_models;
    size_t max_frame_bytes;
    int max_in_flight;
    int max_subscriptions;
    size_t backlog_soft_bytes;
    int slow_timeout_ms;
    size_t backlog_hard_bytes;
    long long max_step_count;
    int hello_timeout_ms;       // a connection without a first request is closed after this
    int max_clients_per_peer;   // connections from one address at once
    int auth_delay_ms;          // a wrong token is answered after this
    // model texts from clients (LoadModel): 0 = the engine's defaults (partita.h)
    long long model_bytes;
    int model_bodies, model_joints;
  } limits;
  // The browser viewer (docs/viewer.md): HTTP + WebSocket on its own port (viewer/http.c).
  struct {
    char http[CFG_STR];         // "HOST:PORT" or "" (off)
    int http_set;               // given in the file or on the command line (else: the default,
                                // skipped with a warning when the port is taken)
    char web_root[CFG_STR];     // the page's files ("" = the installed or source copy)
    char three_root[CFG_STR];   // three.js (Debian's libjs-three)
    int fps;                    // pose frames per second to each browser
    int queue_frames;           // frames waiting for a slow browser before the oldest is dropped
    int drop_limit;             // frames dropped in a row before the browser is disconnected
    int max_browsers;           // WebSocket sessions at once (more are closed at once)
    char package_path[CFG_STR];  // ':'-separated directories for package:// meshes
  } viewer;
  struct {
    int sched_fifo;
    int priority;
    int mlockall;
    int overrun_burst;
    int max_lag_ms;
    int overrun_pause_ms;       // a model overrunning without a break this long is paused (0: never)
  } realtime;
  struct {                      // recordings (docs/recording.md)
    char dir[CFG_STR];          // files are created inside it ("": recording is off)
    int all;                    // record every model from its load
    unsigned every_k;           // state decimation of those recordings (0 = 1)
    unsigned fields;            // their Field bits (0 = all but bodies)
    int fsync;                  // fsync after each chunk (power loss)
    int queue_frames;           // state frames the writer may fall behind by (then dropped)
    int queue_inputs;           // input changes it may fall behind by (then it ends)
    int queue_events;           // model events it may fall behind by (then dropped, counted)
    int test_slow_us;           // testing: the writer sleeps this long per state frame
  } record;
} config;

void config_defaults(config *c);
// Reads the YAML file into c (values not in the file keep their current value).
int config_load(config *c, const char *path, char *err, size_t errlen);
// Parses argv: --config first (loaded), then the other options override. 1 = exit 0 (help),
// 0 = run, -1 = error (message in err).
int config_from_args(config *c, int argc, char **argv, char *err, size_t errlen);
int config_parse_mode(const char *s);   // MODE(x) or -1
// Settings that are each valid but unsafe together (a non-loopback address without a token).
int config_check(const config *c, char *err, size_t errlen);

#endif
