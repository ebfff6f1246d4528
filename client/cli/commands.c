// commands.c: the command table of `partita`, one row per command: its name, where its work
// runs (a file here, a running partitad, or either), its handler, its synopsis for `partita
// --help` and its help for `partita CMD --help` (usage.c adds how to reach partitad).
// The handlers live with their families: file_cmds.h, analysis_cmds.h, rec_cmds.h,
// daemon_cmds.h.
#include "commands.h"

#include <string.h>

#include "analysis_cmds.h"
#include "daemon_cmds.h"
#include "file_cmds.h"
#include "partita.h"
#include "rec_cmds.h"

static const cli_command commands[] = {
  // ---- a MODEL file, here
  {"check", CLI_FILE, cli_check_main,
   "check MODEL [--json] [--floating-base] [--balance-inertia] [--no-joint-limits]\n"
   "            [--ground-plane Z]",
   "Load MODEL (YAML or URDF), assemble its initial state and print a summary: bodies,\n"
   "constraints, degrees of freedom, coordinates, actuator inputs, motions, the independent\n"
   "coordinates of the partition, integrator and step size. Warnings go to stderr.\n"
   "  --json            one JSON object instead of the text summary\n"
   "  --floating-base   URDF: the root link moves freely instead of being welded to ground\n"
   "  --balance-inertia URDF: repair non-physical inertias to the nearest physical ones\n"
   "                    (each link changed is listed in the warnings) instead of refusing\n"
   "  --no-joint-limits joint limits kept but not enforced (simulation: {joint_limits: off})\n"
   "  --ground-plane Z  add the ground plane z = Z, normal +z, to the ground's collision\n"
   "                    shapes (a URDF has no floor)\n"},
  {"simulate", CLI_FILE, cli_simulate_main,
   "simulate MODEL [--duration T] [--dt H] [--integrator rk4|abm4|euler] [--every K]\n"
   "         [--set INPUT=VALUE ...] [--init NAME=VALUE ...] [--init-rate NAME=VALUE ...]\n"
   "         [--signals NAME,NAME|all] [--json] [--floating-base] [--balance-inertia]\n"
   "         [--no-joint-limits] [--record FILE] [--ground-plane Z]",
   "Simulate MODEL with the embedded engine and print CSV on stdout: t, each coordinate,\n"
   "each coordinate rate (NAME.rate), each control state, the signals of --signals, energy,\n"
   "residual_pos, residual_vel; one row at t=0 and one every K steps. Steps = round(T / H).\n"
   "  --duration T      simulated time in seconds (default 1)\n"
   "  --dt H            step size (default: the model's simulation.dt)\n"
   "  --integrator I    rk4, abm4 or euler (default: the model's simulation.integrator)\n"
   "  --every K         print every K-th step (default 1)\n"
   "  --set A=V         hold input A (an actuator's or a control input signal) at V\n"
   "  --init C=V        start coordinate C at V; the rest is assembled around it (or\n"
   "                    control state C at V)\n"
   "  --init-rate C=V   start coordinate C with rate V\n"
   "  --signals L       also print these signals (NAME,NAME or all; docs/controls.md)\n"
   "  --json            {\"columns\": [..], \"rows\": [[..], ..]} instead of CSV\n"
   "  --no-joint-limits joint limits kept but not enforced\n"
   "  --ground-plane Z  add the ground plane z = Z (as for `partita check`)\n"
   "  --record FILE     also write an MCAP recording (states every K steps, the inputs,\n"
   "                    the model text and options): see replay, info, export\n"},
  // ---- recordings (docs/recording.md)
  {"replay", CLI_FILE, cli_replay_main, "replay FILE [--model MODEL] [--json]",
   "Rebuild the model of a recording (or MODEL instead), apply the recorded inputs at their\n"
   "recorded steps and compare every recorded state: identical bit for bit for the same\n"
   "model (exit 1 otherwise), or a table of the largest differences per coordinate.\n"
   "  --model MODEL     replay with this model file instead of the recorded one\n"
   "  --json            one JSON object\n"},
  {"info", CLI_FILE, cli_info_main, "info FILE [--json]",
   "Summary of a recording: model, channels and message counts, steps and time range,\n"
   "inputs, events, overruns, dropped state frames; a cut-off file says where it ends.\n"},
  {"export", CLI_FILE, cli_export_main, "export FILE --csv",
   "The recorded states as CSV with the columns of `partita simulate`.\n"},
  {"record", CLI_DAEMON, cli_record_main,
   "record NAME --out FILE [--duration T] [--every K] [--fields LIST] [--json]",
   "Record daemon model NAME into FILE, created by partitad inside its record directory\n"
   "(config record.dir, --record-dir; a relative FILE is taken from there), for T seconds\n"
   "or until Ctrl-C, then print what was written (frames, dropped frames, inputs, bytes).\n"
   "  --every K         one state frame every K steps (default 1)\n"
   "  --fields LIST     coordinates,rates,accelerations,inputs,bodies,energy,residual, all\n"
   "                    or default (default: all but bodies, what replay compares)\n"
   "  --json            what was written as one JSON object\n"},
    // ---- the analyses: a MODEL file here, or --model NAME in partitad
  {"inverse", CLI_BOTH, cli_inverse_main,
   "inverse MODEL|--model NAME [--at T] [--acc NAME=VALUE ...] [--gravity]\n"
   "                [--init NAME=VALUE ...] [--init-rate NAME=VALUE ...] [--floating-base]\n"
   "                [--balance-inertia] [--json]",
   "Inverse dynamics. Without --acc: kinematic inverse dynamics (every degree of freedom\n"
   "prescribed by motions): motion efforts and joint reactions at time T. With --acc: the\n"
   "actuator efforts that give the named actuated coordinates those accelerations.\n"
   "  --acc C=V         acceleration V of actuated coordinate C (repeatable); all=V: every\n"
   "                    actuated coordinate (a named one overrides it)\n"
   "  --gravity         holding efforts at the configuration: every rate and every actuated\n"
   "                    acceleration zero (gravity and spring compensation)\n"
   "  --at T            time of the evaluation (motions at T)\n"
   "  --init C=V        the state: coordinate values (the rest is assembled around them)\n"
   "  --init-rate C=V   the state: coordinate rates\n"},
  {"linearize", CLI_BOTH, cli_linearize_main,
   "linearize MODEL|--model NAME [--states A,B] [--inputs U,V] [--outputs Y,Z]\n"
   "                [--init NAME=VALUE ...] [--init-rate NAME=VALUE ...] [--set ACTUATOR=VALUE ...]\n"
   "                [--dense] [--floating-base] [--balance-inertia] [--json]",
   "Linearized state-space model (A, B, C, D), M, C, K and eigenvalues, by the augmented\n"
   "sensitivity method, in the chosen coordinates (default: the partition's independent\n"
   "coordinates, joint coordinates preferred). Outputs: NAME, NAME.rate or NAME.acc.\n"
   "  --init C=V        operating point: coordinate values (the rest is assembled)\n"
   "  --init-rate C=V   operating point: coordinate rates\n"
   "  --set A=V         actuator input A held at V at the operating point (repeatable;\n"
   "                    holding torques: partita inverse --gravity)\n"},
  {"equilibrium", CLI_BOTH, cli_equilibrium_main,
   "equilibrium MODEL|--model NAME [--apply] [--init NAME=VALUE ...]\n"
   "                [--max-iterations N] [--tolerance X] [--newton-only] [--allow-unstable] [--json]",
   "Static equilibrium configuration and reactions.\n"},
  // ---- the browser viewer: of a MODEL file here, of a model in partitad
  {"view", CLI_FILE, cli_view_main,
   "view MODEL [--http HOST:PORT] [--mode M] [--rate R] [--package-path DIRS] [--open]",
   "Step MODEL with the embedded engine in real time and show it in a browser: serves the\n"
   "viewer page (3D scene, plots, controls; docs/viewer.md) on http://127.0.0.1:7453/ (a free\n"
   "port when that one is taken) and prints the address; Ctrl-C stops. No daemon needed.\n"
   "  --http HOST:PORT   where to serve the page\n"
   "  --mode M           realtime (default), paused, free or lockstep\n"
   "  --rate R           real-time rate, 0.001 to 1000 (default 1)\n"
   "  --floating-base, --balance-inertia, --no-joint-limits   as for `partita check`\n"
   "  --package-path D   ':'-separated directories for package:// meshes (also\n"
   "                     $PARTITA_PACKAGE_PATH)\n"
   "  --open             open the page with xdg-open\n"},
  {"open", CLI_DAEMON, cli_open_main, "open NAME [--print]",
   "Print the address of the viewer page of daemon model NAME (from the daemon's Hello), and\n"
   "open it with xdg-open when a desktop session is there (not with --print).\n"
   "A daemon with an auth_token needs it in $PARTITA_TOKEN.\n"},
  // ---- a running partitad
  {"models", CLI_DAEMON, cli_models_main, "models",
   "List the models loaded in the daemon.\n"
   "  --json            machine-readable output\n"},
  {"load", CLI_DAEMON, cli_load_main, "load FILE [--name N] [--ground-plane Z]",
   "Load a model file into the daemon.\n"
   "  --name N          the name the daemon knows it by (default: the model's own)\n"
   "  --mode M          paused, realtime, free or lockstep; --rate R the real-time rate\n"
   "  --floating-base, --balance-inertia, --no-joint-limits, --ground-plane Z   as for\n"
   "                    `partita check`\n"
   "  --dt H            step size over the file's simulation.dt\n"
   "  --integrator I    rk4, abm4 or euler over the file's simulation.integrator\n"
   "  --json            machine-readable output\n"},
  {"unload", CLI_DAEMON, cli_unload_main, "unload N", "Unload a model from the daemon.\n"
   "  --json            machine-readable output\n"},
  {"state", CLI_DAEMON, cli_state_main, "state N", "Print the state of a daemon model.\n"
   "  --json            machine-readable output\n"},
  {"watch", CLI_DAEMON, cli_watch_main, "watch N",
   "Stream the state of a daemon model, until Ctrl-C.\n"
   "  --count K         stop after K frames\n"
   "  --every K         one frame every K steps (default: about ten a second)\n"
   "  --json            one JSON object a frame, one a line\n"},
  {"set", CLI_DAEMON, cli_set_main, "set N INPUT=VALUE ...",
   "Set inputs of a daemon model (actuator inputs and control input signals).\n"
   "  --json            machine-readable output\n"},
  {"tune", CLI_DAEMON, cli_tune_main, "tune N PARAM=VALUE ...",
   "Change control parameters of a daemon model (docs/controls.md: \"pid.kp\", \"k.k\",\n"
   "\"sat.lower\"), applied between two steps, all or none; prints every parameter with the\n"
   "value now in effect.\n"
   "  --json            machine-readable output\n"},
  {"step", CLI_DAEMON, cli_step_main, "step N [COUNT]",
   "Advance a lockstep daemon model COUNT steps (default 1) and print its state.\n"
   "  --json            machine-readable output\n"},
  {"mode", CLI_DAEMON, cli_mode_main, "mode N paused|realtime|free|lockstep [--rate R]",
   "Change how a daemon model runs.\n"
   "  --rate R          real-time rate (realtime)\n"
   "  --json            machine-readable output\n"},
  {"reset", CLI_DAEMON, cli_state_main, "reset N",
   "Reset a daemon model to its initial state and print it.\n"
   "  --json            machine-readable output\n"},
  {"stats", CLI_DAEMON, cli_stats_main, "stats [N]",
   "Timing and traffic statistics of the daemon (of model N only).\n"
   "  --json            machine-readable output\n"},
};

#define NCOMMAND ((int)(sizeof(commands) / sizeof(commands[0])))

const cli_command *cli_find_command(const char *name) {
  for (int i = 0; i < NCOMMAND; i++)
    if (strcmp(commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

void cli_print_commands(FILE *out) {
  fputs("usage: partita COMMAND [ARGS]\n\n"
        "Partita " PT_VERSION ": real-time multibody dynamics.\n"
        "A MODEL file is worked on locally by the embedded engine; `--model NAME` and the\n"
        "daemon commands talk to a running partitad.\n\ncommands:\n", out);
  for (int i = 0; i < NCOMMAND; i++)
    fprintf(out, "  partita %s\n", commands[i].synopsis);
  fputs("\n  partita --help | --version | COMMAND --help\n"
        "\nExit status: 0 success, 1 the work failed, 2 usage error.\n", out);
}
