// ptb_assign.h: NamedValue lists of the protocol to the engine's assignments and back.
//
// Requests name coordinates and inputs; the engine takes indices (pt_assign, pt_set_input).
// Every name and value is checked before anything changes: an unknown name, a value that is
// not finite (or beyond PTB_MAX_ABS_STATE unless the options say unbounded) or more values
// than the model could take is refused with PT_EINVAL and a message naming the field and the
// entry (ptb_error.h). Replies name every value the other way (ptb_named_*).
#ifndef PTB_ASSIGN_H
#define PTB_ASSIGN_H

#include <stddef.h>

#include "partita.h"
#include "partita.pb-c.h"
#include "ptb_error.h"

// The n values of request field `field` ("coordinates", "rates") as coordinate assignments,
// in the request's order: *out is malloc'd (NULL when n is 0; the caller frees it).
int ptb_coord_assigns(const pt_model *m, Partita__V1__NamedValue *const *v, size_t n,
                      const char *field, const ptb_opts *o, pt_assign **out, int *nout,
                      ptb_error *e);

// One of the model's name tables: coordinates, control states, tunable parameters
// (docs/controls.md). `what` names an entry in messages.
typedef struct {
  int (*index)(const pt_model *m, const char *name);  // -1 when unknown
  int (*count)(const pt_model *m);
  const char *what;
} ptb_name_table;
extern const ptb_name_table ptb_coordinates, ptb_control_states, ptb_parameters;

// As ptb_coord_assigns with the names of table t: "control_states" of SetState,
// "values" of SetParameters (the parameter's index in pt_assign.coord).
int ptb_named_assigns(const pt_model *m, Partita__V1__NamedValue *const *v, size_t n,
                      const char *field, const ptb_name_table *t, const ptb_opts *o,
                      pt_assign **out, int *nout, ptb_error *e);

// The accelerations of a torque request: as ptb_coord_assigns, and the name "all" stands for
// every actuated coordinate (pt_actuated_coords); a coordinate named beside it overrides it.
// *out is malloc'd (the caller frees it).
int ptb_accelerations(const pt_model *m, Partita__V1__NamedValue *const *v, size_t n,
                      const ptb_opts *o, pt_assign **out, int *nout, ptb_error *e);

// Actuator inputs by name on d (request field "input_values"), each clipped to its actuator's
// limit as SetInputs does (o->clipped hears of it). A refused entry stops the loop: the
// entries before it are set.
int ptb_set_inputs(const pt_model *m, pt_data *d, Partita__V1__NamedValue *const *v, size_t n,
                   const ptb_opts *o, ptb_error *e);

// A malloc'd NamedValue (name copied); NULL when out of memory.
Partita__V1__NamedValue *ptb_named_new(const char *name, double value);

// One NamedValue per coordinate, named as the model names them (ncoord values). NULL when
// out of memory; *n is the count built (free what was built with the message that holds it).
Partita__V1__NamedValue **ptb_named_coords(const pt_model *m, const double *v, size_t *n);

#endif
