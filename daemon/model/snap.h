// snap.h: a state record, the unit the model thread publishes (the latest state, subscription
// frames, command answers, recordings): this header, then doubles q[nc], qd[nc], qdd[nc],
// u[ni], body[nb][13] (position 3, Euler parameters 4, velocity 3, angular velocity 3), then
// the control elements' x[nx], sig[nsig], par[npar] (FIELD_CONTROLS). Only
// the `fields` (the protocol's Field bits) are filled; sim.c fills records, state.c views one
// as a StateFrame.
#ifndef PD_SNAP_H
#define PD_SNAP_H

#include <stdint.h>

typedef struct {
  double time;
  int64_t step;
  uint32_t fields;
  int32_t mode;
  double kinetic, potential, res_pos, res_vel;
  int64_t wall_ns;                  // CLOCK_REALTIME when the step ended
  uint64_t input_session, input_seq;  // the last input applied (UDP; 0 for SetInputs)
  int overran;                      // the step ended after the next real-time deadline
} snap_hdr;

// Offsets into a state record.
static inline double *snap_q(snap_hdr *h) { return (double *)(h + 1); }
static inline double *snap_qd(snap_hdr *h, int nc) { return snap_q(h) + nc; }
static inline double *snap_qdd(snap_hdr *h, int nc) { return snap_q(h) + 2 * nc; }
static inline double *snap_u(snap_hdr *h, int nc) { return snap_q(h) + 3 * nc; }
static inline double *snap_body(snap_hdr *h, int nc, int ni) { return snap_q(h) + 3 * nc + ni; }
// x[nx], sig[nsig], par[npar] follow: control states, signals, tuned parameters
static inline double *snap_ctl(snap_hdr *h, int nc, int ni, int nb) {
  return snap_q(h) + 3 * nc + ni + 13 * nb;
}

#endif
