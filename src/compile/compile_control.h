// compile_control.h: the control elements' part of pt_model_compile (compile_control.c).
#ifndef PT_COMPILE_CONTROL_H
#define PT_COMPILE_CONTROL_H

#include "engine.h"

// The spec the mechanism is built from: each expression_force becomes an actuator whose
// input(s) its formula's signal drives, and leaves the forces (Negrut & Ortiz's eq. 10c is then
// an actuator of the mechanism, with every analysis an actuator has). *view is s when there are
// none; otherwise a copy sharing s's arrays but two (pt_control_view_free). The forces' joints,
// bodies and coordinates are checked here, with their forces[i] in the messages.
int pt_control_view(const pt_spec *s, pt_spec **view, pt_error *err);
void pt_control_view_free(const pt_spec *s, pt_spec *view);

// Inputs the control `input` elements add after the actuators'.
int pt_control_ninput(const pt_spec *s);

// After the actuators are built (m->ninput counting the control inputs): the control model of
// s (the original spec: its controls and expression forces' formulas), the measured
// quantities, the control inputs' names, the driven inputs (input_source, input_scale) of
// view's actuators. Errors `FILE:LINE: controls[i] "name": ...` (PT_EMODEL), PT_ENOMEM.
int pt_control_compile(pt_model *m, const pt_spec *s, const pt_spec *view, pt_error *err);

#endif
