// compile.h: what the files of model compilation (pt_spec -> pt_model, compile.c) share.
// Internal to compile/: the layers above use the public pt_model_compile.
#ifndef PT_COMPILE_H
#define PT_COMPILE_H

#include "engine.h"

// ---- shared.c: the model's memory and messages, the spec's names --------------------------
// An array of n elements of `size` bytes, zeroed, freed with the model (pt_model_free).
void *pt_model_alloc(pt_model *m, size_t n, size_t size);
// p (malloc'd) freed with the model from now on; when that cannot be recorded (out of memory)
// it is freed at once and -1 returned.
int pt_model_own(pt_model *m, void *p);
// One line added to the model's warnings (pt_model_warnings).
void pt_model_warn(pt_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Sets err to `FILE:LINE: joints[2] "knee": what` and returns code.
int pt_spec_fail(pt_error *err, int code, const pt_spec *s, int line, const char *list, int idx,
                 const char *name, const char *fmt, ...) __attribute__((format(printf, 8, 9)));
int pt_spec_find_body(const pt_spec *s, const char *name);   // PT_GROUND, or -2 if unknown
int pt_spec_find_joint(const pt_spec *s, const char *name);  // -1 if unknown

// ---- the steps, in the order pt_model_compile takes them --------------------------------------
// bodies.c
int pt_compile_bodies(pt_model *m, const pt_spec *s, pt_error *err);
// Body-fixed vector of a global direction, and arm of a global point, at t = 0 (the ground:
// themselves).
void pt_body_fixed_vector(const pt_model *m, int body, const double g[3], double out[3]);
void pt_body_fixed_point(const pt_model *m, int body, const double P[3], double out[3]);
// joints.c
int pt_compile_joints(pt_model *m, const pt_spec *s, pt_error *err);
int pt_compile_user_coords(pt_model *m, const pt_spec *s, pt_error *err);
// Measure index of joint j's coordinate `which` ("" for the only one of the kind; kind: 0
// angle, 1 slide, 2 any), or -1.
int pt_joint_coord_of(const pt_model *m, int j, const char *which, int kind);
void pt_compile_limits_check(pt_model *m, const pt_spec *s);
// motions.c
int pt_compile_motions(pt_model *m, const pt_spec *s, pt_error *err);
// forces.c
int pt_compile_forces(pt_model *m, const pt_spec *s, pt_error *err);
int pt_compile_count_inputs(const pt_spec *s);
int pt_compile_actuators(pt_model *m, const pt_spec *s, pt_error *err);
// couplers.c
int pt_compile_couplers(pt_model *m, const pt_spec *s, pt_error *err);
int pt_compile_couplers_initial(pt_model *m, const pt_spec *s, int ncoupler, pt_error *err);
// sparsity.c: W's pattern and symbolic LDL^T for the active rows. PT_ENOMEM or PT_OK.
int pt_compile_w_pattern(pt_model *m);
// initial_state.c
int pt_compile_initial_state(pt_model *m, const pt_spec *s, pt_error *err);
// loops.c: a closed-loop model's spanning tree, coordinates and patterns for the partitions in
// joint coordinates (partition/loop.h), when it qualifies. PT_ENOMEM or PT_OK.
int pt_compile_loops(pt_model *m, pt_error *err);
// visual.c: the spec's shapes into their bodies' frames, an inertia box for each body drawn
// without one.
int pt_visuals_build(pt_model *m, const pt_spec *s, pt_error *err);
// A shape's pose (a visual or a collision shape of s, given globally at t=0, by default the
// body's) in its body's frame: position and unit Euler parameters.
void pt_spec_shape_local(const pt_spec *s, const pt_spec_visual *v, double pos[3],
                         double quat[4]);
// collision.c: the collision shapes in their bodies' frames (meshes as hulls), the candidate
// pairs with their friction and restitution, the contact buffer's size.
int pt_compile_collision(pt_model *m, const pt_spec *s, pt_error *err);

#endif
