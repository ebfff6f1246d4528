// compile.h: what the files of model compilation (pt_spec -> pt_model) share. Internal to
// compile/: the layers above use the public pt_model_compile.
#ifndef PT_COMPILE_H
#define PT_COMPILE_H

#include "engine.h"

// visual.c: the spec's shapes into their bodies' frames, an inertia box for each body drawn
// without one.
int pt_visuals_build(pt_model *m, const pt_spec *s, pt_error *err);

#endif
