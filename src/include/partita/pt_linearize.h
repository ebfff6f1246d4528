// pt_linearize.h: linearization of the constrained equations of motion at an operating point
// (D. Negrut and J. L. Ortiz, "A Practical Approach for the Linearization of the Constrained
// Multibody Dynamics Equations", augmented sensitivities, eq. 14-30).
//
// The state vector is x = (S, W): z chosen coordinates S then their rates W = S'. The answer
// is the continuous-time plant
//   x' = A x + B u,   y = C x + D u
// (u: actuator inputs, y: named coordinates, rates or accelerations), the second-order form
// M S'' + C S' + K S = ... of eq. 26-29, and the eigenvalues of A. The operating point is the
// data's current state at its time (motions frozen there); it need not be an equilibrium.
// On a tree whose states are its joint coordinates the same matrices come by default from
// differentiated recursive Newton-Euler passes (linearize_tree.c).
// Included by partita.h (and self-contained: it includes partita.h).
#ifndef PT_LINEARIZE_H
#define PT_LINEARIZE_H

#include "partita.h"

#define PT_LIN_NAME_MAX 80   // coordinate names, "body.rx" and ".rate" / ".acc" suffixes

typedef enum {
  PT_LIN_SPARSE = 0,   // default: on a tree whose states are its joint coordinates, the tree
                       // method (differentiated Newton-Euler passes, one Cholesky factor of the
                       // joint-space mass matrix); otherwise KLU on the augmented system
  PT_LIN_DENSE = 1,    // LAPACK dgesv on the dense augmented system
  PT_LIN_AUGMENTED = 2 // KLU on the augmented system, trees included (the general method)
} pt_lin_solver;

// What to linearize (a zeroed struct, or NULL, asks for the defaults). Any list may be empty:
//   states:  coordinate names (joint coordinates, point_position, distance, or a body's internal
//            coordinates "BODY.x|y|z|rx|ry|rz"); empty: every joint coordinate is a candidate.
//            Too few are completed from internal coordinates, too many are dropped (eq. 21-22);
//            the result's notes say which and why.
//   inputs:  actuator input names ("tau", "push.x"); empty: every input.
//   outputs: "NAME" (value), "NAME.rate" or "NAME.acc" of a coordinate or an internal
//            coordinate; empty: the chosen states and their rates (C = I, D = 0).
//   solver:  how the augmented system is factored (same numbers either way).
typedef struct {
  const char *const *states;
  int nstates;
  const char *const *inputs;
  int ninputs;
  const char *const *outputs;
  int noutputs;
  pt_lin_solver solver;
} pt_linearize_options;

typedef struct {
  double re, im;           // eigenvalue of A (1/s)
  double freq_hz;          // |lambda| / (2 pi): undamped natural frequency
  double damping_ratio;    // -re / |lambda|; 0 for a zero eigenvalue
} pt_eigenvalue;

typedef struct {
  int nz;                  // chosen coordinates; the state vector has 2 nz (+ nd) entries
  int nu;                  // inputs
  int ny;                  // outputs
  double time;             // of the operating point
  char (*state_name)[PT_LIN_NAME_MAX];   // (2 nz + nd) coordinates, "NAME.rate", control
                                         // states
  char (*input_name)[PT_LIN_NAME_MAX];   // (nu)
  char (*output_name)[PT_LIN_NAME_MAX];  // (ny)
  double *A;               // (n x n) row-major, n = 2 nz + nd
  double *B;               // (n x nu)
  double *C;               // (ny x n)
  double *D;               // (ny x nu)
  double *M;               // (nz x nz) generalized mass, eq. 28b / 30
  double *Cmat;            // (nz x nz) damping, eq. 29a
  double *K;               // (nz x nz) stiffness, eq. 29b
  pt_eigenvalue *eig;      // (n) sorted by frequency, then imaginary part
  char *notes;             // '\n'-terminated lines: how the states were chosen, and why
  int size;                // order of the system solved: the augmented sensitivity system, or
                           // the joint-space mass matrix (nz) by the tree method
  int nd;                  // control states (docs/controls.md): the state vector is
                           // (S, W, X), 2 nz + nd entries; A, B, C, state_name and eig are
                           // sized by 2 nz + nd
} pt_linearization;

// Linearizes at d's current state, eigenvalues included. d is not changed (the work is done
// on a copy). Errors: PT_EINVAL (unknown or repeated name), PT_EPRECOND (no moving body),
// PT_ESINGULAR (the augmented system is singular: a lock-up or a singular choice of states),
// PT_ENOMEM.
int pt_linearize(const pt_model *m, const pt_data *d, const pt_linearize_options *opt,
                 pt_linearization **out, pt_error *err);
void pt_linearization_free(pt_linearization *lin);

// Repeated linearizations of one model: a workspace holding the work data (made once, with
// its evaluation at the model's initial state) and what one call can hand to the next.
// pt_linearize_with gives the same numbers as pt_linearize; flags: PT_LIN_EIGEN to compute
// the eigenvalues (without it, eig is left zeroed).
typedef struct pt_linearizer pt_linearizer;
#define PT_LIN_EIGEN 1
pt_linearizer *pt_linearizer_new(const pt_model *m);   // NULL: out of memory
void pt_linearizer_free(pt_linearizer *lz);
int pt_linearize_with(pt_linearizer *lz, const pt_data *d, const pt_linearize_options *opt,
                      int flags, pt_linearization **out, pt_error *err);

#endif
