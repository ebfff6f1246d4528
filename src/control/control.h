// control.h: control elements beside the mechanism (issue 26; docs/controls.md): a signal
// graph built once at load, evaluated in a fixed order into arrays the caller owns.
//
// These are Negrut & Ortiz's eq. (10): the states X of controllers and drives with
// Xdot = d(...) (10a), user-defined variables V = v(...) evaluated with the equations of
// motion (10b), and forces that are signals (10c, applied by the engine). The module knows
// nothing of bodies: the engine fills `meas` (the measure elements' quantities, in order) and
// `in` (the input elements' values, in order) and reads the signals back.
//
// Numbering: z = (meas, x, in) is the vector the partial derivatives are taken against,
// nz = nmeas + nx + nin; signals are numbered in the model's order (an element's outputs
// together), states likewise; `order` is the evaluation order (a topological sort of the
// direct-feedthrough graph, algebraic loops refused at build).
#ifndef PT_CONTROL_H
#define PT_CONTROL_H

#include "expr.h"
#include "partita.h"

// pid structure, fixed at load by which gains are non-zero (a term absent at load has no
// state and no feedthrough, so it stays absent: pt_ctl_param_check)
#define PT_PID_P 1        // kp != 0
#define PT_PID_I 2        // ki != 0: one state, the integral term's value (x' = ki e)
#define PT_PID_D 4        // kd != 0: one state, the derivative filter (x' = (e - x) / tf)

// Tunable parameters of each element, in `par` (the data's copy, changed between steps).
typedef enum { PT_PAR_GAIN_K = 0 } pt_par_gain;
typedef enum { PT_PAR_SAT_LOWER = 0, PT_PAR_SAT_UPPER } pt_par_sat;
typedef enum { PT_PAR_PID_KP = 0, PT_PAR_PID_KI, PT_PAR_PID_KD, PT_PAR_PID_TF,
               PT_PAR_PID_LIMIT } pt_par_pid;
#define PT_PAR_NAME_MAX 8

// One evaluation's arrays (the engine points them into its data).
typedef struct {
  double t;               // time (expressions' `t`)
  const double *par;      // (npar) parameters
  const double *meas;     // (nmeas) measured quantities
  const double *in;       // (nin) input signals
  const double *x;        // (nx) control states
  double *sig;            // (nsig) out: signals
  double *xdot;           // (nx) out: state derivatives
  double *stack;          // (nstack) work
} pt_ctl_io;

typedef struct pt_ctl {
  int nelem, nsig, nx, nmeas, nin, npar, nexpr, nedge;
  int nstack;                  // value stack entries (deepest formula; at least 1)
  int ngrad;                   // work entries of pt_ctl_partials

  // elements, in the model's order
  char (*elem_name)[PT_NAME_MAX];
  int *elem_type;              // (nelem) pt_control_type
  int *elem_line;              // (nelem) source line
  int *elem_sig_adr;           // (nelem) first output signal
  int *elem_nsig;              // (nelem) output signals
  int *elem_x_adr;             // (nelem) first state
  int *elem_nx;                // (nelem) states
  int *elem_par_adr;           // (nelem) first parameter
  int *elem_npar;              // (nelem)
  int *elem_in_adr;            // (nelem) first signal read, into in_sig
  int *elem_nin;               // (nelem)
  int *elem_data_adr;          // (nelem) constants, into data
  int *elem_expr_adr;          // (nelem) formulas, into expr
  int *elem_flags;             // (nelem) pid: PT_PID_*; transfer_function: 1 if it feeds
                               // its input through (b0 != 0)
  int *elem_aux;               // (nelem) measure: index in meas; input: index in in
  int *in_sig;                 // signals read by elements (elem_in_adr)
  double *data;                // sum: signs (nin); transfer_function: a1..an, c1..cn, b0;
                               // state_space: A, B, C, D row-major
  pt_expr *expr;               // (nexpr) expression: 1; ode: one per state

  // signals
  char (*sig_name)[PT_SIGNAL_NAME_MAX];
  int *sig_elem;               // (nsig) element
  int *sig_out;                // (nsig) output index within the element
  int *dep_adr;                // (nsig + 1) direct feedthrough: signals each signal reads
  int *dep;                    // (nedge)
  int *order;                  // (nsig) evaluation order
  int *sig_sorted;             // (nsig) signals by name (strcmp), for lookups

  // states, parameters, measures, inputs
  char (*x_name)[PT_SIGNAL_NAME_MAX];
  int *x_elem;                 // (nx)
  double *x0;                  // (nx) initial states
  char (*par_name)[PT_PAR_NAME_MAX];
  int *par_elem;               // (npar)
  double *par0;                // (npar) the model's values
  int *meas_elem;              // (nmeas) the measure element of each measured quantity
  int *input_elem;             // (nin) the input element of each input signal

  void **allocs;
  int nalloc, maxalloc;
} pt_ctl;

// Builds the control model of s->controls (names, structure, formulas, evaluation order).
// Errors: PT_EMODEL with `FILE:LINE: controls[i] "name": what` (unknown signals, algebraic
// loops named signal by signal, improper transfer functions, bad sizes); PT_ENOMEM. A spec
// without controls gives *out = NULL and PT_OK.
int pt_ctl_build(const pt_spec *s, pt_ctl **out, pt_error *err);
void pt_ctl_free(pt_ctl *c);

// Index of a signal, state or element by name, -1 if none.
int pt_ctl_signal(const pt_ctl *c, const char *name);
int pt_ctl_element(const pt_ctl *c, const char *name);
// Index of element `elem`'s parameter `name` in par, -1 if the element has none of that name.
int pt_ctl_param(const pt_ctl *c, int elem, const char *name);
// Whether par[p] may become `value` given the current parameters `par`: 0, or -1 with the
// reason in msg (a pid term absent at load, tf <= 0 with a derivative term, limit <= 0,
// lower >= upper, a value that is not finite).
int pt_ctl_param_check(const pt_ctl *c, const double *par, int p, double value, char *msg,
                       size_t msgsize);

// Every signal, in evaluation order, from io's t, par, meas, in, x (no allocation).
void pt_ctl_signals(const pt_ctl *c, pt_ctl_io *io);
// The states' derivatives from the signals of the same io (pt_ctl_signals first).
void pt_ctl_derivatives(const pt_ctl *c, pt_ctl_io *io);

// Exact partial derivatives at io (signals evaluated): sig_z (nsig x nz) and xdot_z
// (nx x nz), row-major, z = (meas, x, in); work: ngrad entries. A saturation or a pid limit
// contributes the slope of the side its input is on (0 beyond a bound); a pid whose
// integration is stopped by anti-windup has x' = 0 there.
void pt_ctl_partials(const pt_ctl *c, const pt_ctl_io *io, double *sig_z, double *xdot_z,
                     double *work);

// Where a saturation or a limited pid stands at io: -1 below its lower bound, +1 above its
// upper, 0 within (any other element: 0). *value: its unclipped value.
int pt_ctl_limit_side(const pt_ctl *c, const pt_ctl_io *io, int elem, double *value);

// The type's name as the model file writes it ("transfer_function").
const char *pt_ctl_type_name(int type);

#endif
