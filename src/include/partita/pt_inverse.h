// pt_inverse.h: inverse dynamics and static equilibrium (included by partita.h, and
// self-contained: it includes partita.h).
//
// Conventions (spec/api.md):
// - The effort of a motion or of a joint actuator is the generalized force the motor applies
//   to body2 relative to body1 along the joint coordinate: a positive effort drives the
//   coordinate up (as pt_set_input does for an actuator).
// - A joint reaction is the force and torque that the joint's constraint rows apply to body2
//   from body1, in global axes, the torque taken about the joint point on body2. It excludes
//   the efforts of motions and actuators on that joint (reported as efforts). Rows removed at
//   load as redundant carry no multiplier: on such mechanisms (a planar four-bar of spatial
//   revolutes) the split of the reaction between the joints of a loop is one of many valid
//   ones, while the efforts are unique.
//
// Results are allocated once per model (pt_*_result_new) so that repeated requests allocate
// nothing inside the torque request itself.
#ifndef PT_INVERSE_H
#define PT_INVERSE_H

#include "partita.h"

// How a torque request was answered (pt_inverse_result.method).
enum { PT_INVERSE_SCHUR = 0, PT_INVERSE_TREE = 1 };

// Result of an inverse-dynamics request. Arrays are sized for the model it was created for.
typedef struct {
  double time;              // time of the evaluation
  int maxreq;               // capacity of the request arrays
  int nreq;                 // requests answered (torque requests); 0 for kinematic inverse
  int *req_coord;           // (maxreq) requested coordinate
  int *req_actuator;        // (maxreq) actuator that produces it (joint torque or force)
  double *req_effort;       // (maxreq) total effort that actuator must apply
  int nmotion;
  double *motion_effort;    // (nmotion) effort of each prescribed motion
  int ncoord;
  double *coord;            // (ncoord) coordinate values at the evaluation
  double *coord_rate;       // (ncoord)
  double *coord_acc;        // (ncoord) resulting second derivatives
  int njoint;
  double *reaction;         // (njoint x 6) force (3) then torque about the joint point (3)
  // work (sized at creation)
  double *xdd;              // (nv) body accelerations
  double *lambda;           // (ncon) multipliers of the active rows
  double *wrk;              // scratch (nwrk)
  size_t nwrk;
  int *iwrk;                // scratch (niwrk)
  size_t niwrk;
  int *coord_actuator;      // (ncoord) joint actuator of each coordinate, -1 if none
  int method;               // PT_INVERSE_TREE or PT_INVERSE_SCHUR: how the last request went
  int schur_only;           // 1: answer every request by the Schur complement (comparisons)
  int *tree;                // (4 nbody) layout of the recursive pass on a tree, or NULL
  double *tree_wrk;         // scratch of the recursive pass
  int *tree_iwrk;           // scratch of the recursive pass (requests of each joint first)
  const double **tree_ptr;  // scratch of the recursive pass (rows of each block)
  // couplers (docs/model-format.md, "couplers"): a torque request names the leaders, the
  // followers' accelerations follow (multiplier x the leader's)
  int ncoupler;
  double *coupler_effort;   // (ncoupler) joint force or torque each coupler puts on its
                            // follower (its leader takes -multiplier times it)
  pt_assign *cpl_req;       // (maxreq + ncoupler + nlimit) scratch: the request with the
                            // followers, then the held limits
  // Joint limits in a torque request (where d enforces them: trees, docs/model-format.md): a
  // coordinate not requested that is on a bound and held there (in d's limit state, or at
  // rest on it) is a constraint of the request, its acceleration 0, while the limit's
  // reaction pushes; a limit whose reaction would pull is released (the coordinate is free).
  // A requested coordinate on a bound stays free: its actuator's effort and the limit's
  // reaction cannot be separated. limit_notes says which was done, joint by joint.
  int *limit_held;          // (njoint) -1 held at the lower bound, +1 at the upper, 0 free
  double *limit_reaction;   // (njoint) the held limit's joint force or torque (pushes:
                            // >= 0 at a lower bound, <= 0 at an upper one); 0 when free
  char *limit_notes;        // '\n'-terminated lines on the limits at their bounds ("" if none)
  int *limit_why;           // (njoint) scratch: how each limit on a bound was treated
  // The inputs at the evaluation (docs/controls.md): clients' as held, and what each drive
  // supplies (an input driven by a signal: an actuator's source, an expression_force) at
  // this state. A requested coordinate's req_effort is the total its actuator must apply; for
  // a driven actuator it includes the drive's own supply.
  int ninput;
  double *input;            // (ninput)
} pt_inverse_result;

pt_inverse_result *pt_inverse_result_new(const pt_model *m, int maxreq);
void pt_inverse_result_free(pt_inverse_result *r);

// Kinematic inverse dynamics (D. Negrut, ME751 course notes, 10 October 2016, "Inverse
// Dynamics: the 3 step approach"). The motions
// must remove every degree of freedom (pt_model_ndof(m) == 0, else PT_EPRECOND). Starting from
// d's configuration, on a private copy of d: positions at time t from the constraints alone
// (Newton), velocities from J x = nu, accelerations from J xdd = gamma (step 1), multipliers
// from J^T lambda = Q - M xdd (step 2), efforts of the motions and joint reactions from the
// multipliers (step 3). d is not changed.
int pt_inverse_kinematic(const pt_model *m, const pt_data *d, double t, pt_inverse_result *res,
                         pt_error *err);

// On a model with couplers, the request names no follower (PT_EINVAL: "... follows coupler
// ...: request its leader") and every coupler's leader (PT_EINVAL otherwise): a follower's
// acceleration is multiplier x its leader's, its actuator keeps its input, and what the
// coupler transmits is reported in coupler_effort; the leader's effort includes what it
// passes to its followers (multiplier x coupler_effort).
// Joint limits: held as constraints at a bound while they push, released when they would pull
// (see limit_held above); their reactions are in limit_reaction, not in the joint reactions.
// Torque request at d's current state (q, qd, time, inputs): the efforts the joint actuators
// of the requested coordinates must apply so that those coordinates have the requested second
// derivatives (acc[k].coord, acc[k].value); every other coordinate follows the dynamics,
// closed loops included. Actuators not requested keep their current inputs. Also gives the
// resulting accelerations of all coordinates, the motion efforts and the joint reactions.
// Errors (PT_EINVAL, message names the culprit): an unknown or repeated coordinate, a
// non-finite value, a coordinate without a joint actuator, one driven by a motion, or one the
// constraints fix (together with the other requested coordinates). The state of d (q, qd,
// time, inputs, outputs, accelerations, partition) is never changed; its row and force work
// arrays (and W's, on the general path) are re-evaluated at that same state (same values).
// Allocates nothing. On a tree (no closed loop, no motion) with every joint coordinate
// requested, the answer comes from one recursive pass over the bodies (O(n), W not factored;
// res->method = PT_INVERSE_TREE); otherwise, or if a joint's block is singular there, from the
// Schur complement on the factor of W (PT_INVERSE_SCHUR). Both solve the same equations.
int pt_inverse_request(const pt_model *m, pt_data *d, const pt_assign *acc, int nacc,
                       pt_inverse_result *res, pt_error *err);

// The coordinates a torque request can name (driven by a joint actuator, not by a motion, not
// a coupler's follower), in
// coordinate order: the first `max` indices go to coords (may be NULL); returns how many there
// are. `partita inverse --acc all=V` requests V for each of them.
int pt_actuated_coords(const pt_model *m, int *coords, int max);

// Holding efforts (gravity compensation, springs included): sets every rate of d to zero
// (pt_set_state; positions kept) and answers the torque request "every actuated coordinate at
// zero acceleration" there, so res->req_effort are the efforts that hold d's configuration at
// rest. res needs room for pt_actuated_coords(m, NULL, 0) requests. Errors as
// pt_inverse_request, and PT_EINVAL when the model has no actuated coordinate. Allocates.
int pt_inverse_holding(const pt_model *m, pt_data *d, pt_inverse_result *res, pt_error *err);

// Moves d to time t: the time-dependent motions are re-assembled (positions, then velocities,
// as pt_set_state does). For torque requests at a chosen time. Nothing changes on error.
int pt_inverse_set_time(const pt_model *m, pt_data *d, double t, pt_error *err);

// Joint reactions (njoint x 6, as in pt_inverse_result) of the forward dynamics at d's state:
// valid after pt_forward or pt_step.
void pt_joint_reactions(const pt_model *m, const pt_data *d, double *reaction);

// ---------------------------------------------------------------------------------------------
// Static equilibrium (D. Negrut, ME751 course notes, 10 October 2016, "Equilibrium Analysis"): approach 1, Newton with a line search
// on [Phi(q) = 0; J(q)^T lambda = Q(q)] at rest, from d's configuration; if it fails,
// approach 2, damped dynamics on a copy, brings the system close and Newton finishes
// (approach 4). Newton may land on an unstable equilibrium (an inverted pendulum); that is
// detected from the inertia of the KKT matrix and, unless allowed, the damped dynamics then
// look for a stable one from the start. Time-dependent motions are frozen at d's time;
// actuator inputs are held at d's values (their loads are part of the balance); the control
// elements' states are solved for (their derivatives 0), their signals drive what they drive.
typedef struct {
  int max_iterations;       // Newton iterations per attempt; 0 = default (50)
  double tolerance;         // force residual relative to the load scale; 0 = default (1e-11)
  int max_damped_steps;     // damped-dynamics steps; 0 = default (200000)
  int no_damped;            // 1: Newton only (approach 1)
  int allow_unstable;       // 1: accept an unstable equilibrium found by Newton (else the
                            //    damped dynamics look for a stable one from the start)
} pt_equilibrium_options;

typedef struct {
  double time;              // the frozen time
  int nq;
  double *q;                // (nq) body positions (r, Euler parameters)
  int ncoord;
  double *coord;            // (ncoord) coordinate values at equilibrium
  int njoint;
  double *reaction;         // (njoint x 6) as in pt_inverse_result
  int nmotion;
  double *motion_effort;    // (nmotion) efforts that hold the (frozen) motions
  int iterations;           // Newton iterations in all
  int damped_steps;         // damped-dynamics steps taken (0: Newton alone succeeded)
  int stable;               // 1 stable, 0 unstable (allow_unstable or no_damped), -1 failed
  double residual;          // max(residual_position, residual_force)
  double residual_position; // max |Phi| (with the Euler-parameter normalisation)
  double residual_force;    // max |J^T lambda - Q|
  double *lambda;           // (ncon)
  int ncoupler;
  double *coupler_effort;   // (ncoupler) joint force or torque each coupler puts on its
                            // follower at the equilibrium (the leader takes -multiplier x)
  // Joint limits (where enforced) are constraints of the equilibrium: a coordinate at or
  // beyond a bound is held there while the limit's reaction pushes, released when it would
  // pull (an active set, re-solved until it settles).
  int *limit_held;          // (njoint) -1 held at the lower bound, +1 at the upper, 0 free
  double *limit_reaction;   // (njoint) the held limit's joint force or torque (pushes:
                            // >= 0 at a lower bound, <= 0 at an upper one)
  char *limit_notes;        // '\n'-terminated lines on the limits at their bounds ("" if none)
  // Control elements (docs/controls.md): their states are unknowns too, solved with
  // Xdot(q, X) = 0 at rest (an integrator settles where its input is 0); the stability is then
  // the closed loop's (no eigenvalue of its linearization with a positive real part)
  int ncontrol_state;
  double *control_state;    // (ncontrol_state) at the equilibrium
  int ninput;
  double *input;            // (ninput) the inputs there: clients' as given, driven ones as
                            // their signals give (what the drives supply)
} pt_equilibrium_result;

pt_equilibrium_result *pt_equilibrium_result_new(const pt_model *m);
void pt_equilibrium_result_free(pt_equilibrium_result *r);

// d is not changed (the work is done on a copy). opt may be NULL (defaults).
// PT_EASSEMBLY when no equilibrium was found (the message says how close it came).
int pt_equilibrium(const pt_model *m, const pt_data *d, const pt_equilibrium_options *opt,
                   pt_equilibrium_result *res, pt_error *err);

// Moves d to the equilibrium found (velocities from the constraints at rest, time kept), as
// the daemon's Equilibrium with apply does. Nothing changes on error.
int pt_equilibrium_apply(const pt_model *m, pt_data *d, const pt_equilibrium_result *res,
                         pt_error *err);

#endif
