// ptb_frame.h: a StateFrame from a model's state. partitad builds its frames from the state
// records its model thread publishes; `partita simulate --record` from the engine's data.
// Both describe the state as a ptb_state and build the message here.
#ifndef PTB_FRAME_H
#define PTB_FRAME_H

#include <stdint.h>

#include "partita.h"
#include "partita.pb-c.h"
#include "ptb_fields.h"

// One state of a model: what a StateFrame can carry. The arrays are the caller's.
typedef struct {
  const char *model;            // the name the frame carries
  double time;
  int64_t step;
  int mode;                     // Partita__V1__Mode
  int nc, ni, nb;               // coordinates, inputs, bodies
  const double *q, *qd, *qdd;   // (nc) coordinates, their rates and accelerations
  const double *u;              // (ni) actuator inputs
  const double *body;           // (nb x 13) position 3, Euler parameters 4, velocity 3,
                                // angular velocity 3; NULL: no bodies
  double kinetic, potential;    // energy
  double res_pos, res_vel;      // constraint residuals
  const pt_model *m;            // body names (when asked for names)
  char *const *coord_names;     // (nc) and (ni) names (when asked for names)
  char *const *input_names;
  int nx, nsig, npar;           // control elements (docs/controls.md): states, signals,
  const double *x, *sig, *par;  // parameters (FIELD_CONTROLS)
  char *const *ctl_names;       // (nx) and (nsig) names (when asked for names; may be NULL)
  char *const *signal_names;
} ptb_state;

// A StateFrame pointing into a ptb_state; only the body messages are allocated here.
typedef struct {
  Partita__V1__StateFrame f;
  Partita__V1__Energy energy;
  Partita__V1__Residual residual;
  Partita__V1__BodyState *body;
  Partita__V1__BodyState **bodyp;
} ptb_frame;

// d's state (time, step, coordinates, rates, accelerations, inputs, energy, residuals, control
// states, signals and parameters; no bodies), as the data gives it: valid while d is unchanged.
void ptb_state_of_data(ptb_state *s, const pt_model *m, const pt_data *d);

// The frame of s with the PTB_FIELD_* bits of `fields`; names: the coordinate, input and
// body names too. Free with ptb_frame_release.
void ptb_frame_build(ptb_frame *fr, const ptb_state *s, uint32_t fields, int names);
void ptb_frame_release(ptb_frame *fr);

#endif
