// ptb_error.h: how a bridge call says what went wrong, and the options a caller may change.
//
// A request from the wire is refused field by field before anything changes; then the engine
// works on the caller's data in stages (the request's time, its state, the analysis). msg is
// the whole message partitad puts in the reply's Status; the other members say where it
// failed, so a caller with more context (the command line knows the option a name came from
// and the model's other names) can word it its own way.
#ifndef PTB_ERROR_H
#define PTB_ERROR_H

#include <stddef.h>

#include "partita.h"

// Coordinates and rates a request may give: a model whose state is 1e300 rad or m is not a
// model, and assembling around it only produces noise (partitad refuses beyond it).
#define PTB_MAX_ABS_STATE 1e6

typedef enum {
  PTB_AT_NONE = 0,    // no failure
  PTB_AT_REQUEST,     // a field of the request refused (field, why, name say which)
  PTB_AT_TIME,        // moving the data to the request's time (pt_inverse_set_time)
  PTB_AT_STATE,       // assembling the request's coordinates and rates (pt_set_state)
  PTB_AT_ENGINE,      // the analysis itself
  PTB_AT_MEMORY,      // out of memory building the reply
} ptb_stage;

typedef enum {
  PTB_WHY_NONE = 0,
  PTB_WHY_NAME,       // no such coordinate (or input)
  PTB_WHY_VALUE,      // a value not finite, or beyond PTB_MAX_ABS_STATE
  PTB_WHY_COUNT,      // more values than the model could take
  PTB_WHY_ALL,        // accelerations "all": the model has no actuated coordinate
  PTB_WHY_CONFLICT,   // fields that exclude each other (gravity with rates or accelerations)
} ptb_why;

typedef struct {
  int code;             // PT_OK or the negative pt_status
  ptb_stage stage;
  ptb_why why;          // PTB_AT_REQUEST: what was wrong
  const char *field;    // PTB_AT_REQUEST: the request's field ("coordinates", "rates", ...)
  char name[128];       // PTB_AT_REQUEST: the refused entry's name ("" for the whole field)
  double value;         // PTB_AT_REQUEST: the refused entry's value (a caller's wording)
  pt_error engine;      // PTB_AT_TIME, _STATE, _ENGINE: the engine's own error
  char msg[512];        // the message as partitad sends it ("" on success)
} ptb_error;

// What a caller may change in how a request is run; NULL asks for partitad's way.
typedef struct {
  int unbounded;        // take any finite coordinate or rate (no PTB_MAX_ABS_STATE): a model
                        // file of the user's own, on the command line
  int dense;            // linearize with LAPACK's dense LU (PT_LIN_DENSE), not the sparse one
  // linearize: called for each input_values entry clipped to its actuator's limit
  void (*clipped)(void *arg, const char *input, double value, double limit);
  void *arg;
} ptb_opts;

// Clears e (code PT_OK, every member empty).
void ptb_error_clear(ptb_error *e);

// Sets e's code, stage and message (printf-style); answers code.
int ptb_fail(ptb_error *e, int code, ptb_stage stage, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

// A request field refused: code PT_EINVAL, why, the field and the entry's name (name may be
// NULL), and the message. Answers PT_EINVAL.
int ptb_refuse(ptb_error *e, ptb_why why, const char *field, const char *name,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));

// An engine stage failed with err: the message is prefix + err's message (or rc's text).
// Answers rc.
int ptb_engine_fail(ptb_error *e, int rc, ptb_stage stage, const pt_error *err,
                    const char *prefix);

#endif
