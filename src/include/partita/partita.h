// partita.h: the public API of libpartita, the Partita multibody engine.
//
// An immutable model (pt_model) and a mutable data (pt_data), as in MuJoCo: every call is
// pt_something(const pt_model *m, pt_data *d). Several datas can share one model; copying a
// data is a snapshot. pt_step() advances one fixed step and allocates nothing.
//
// Formulation: each moving body has r (CoM, global) and Euler parameters p (7 coordinates);
// joints, motions and the Euler-parameter normalisation are algebraic constraints. The
// integrator advances the independent coordinates v of a cached generalized coordinate
// partition (Wehage & Haug, "Generalized coordinate partitioning for dimension reduction in
// analysis of constrained dynamic systems", eq. 4-16); see docs/partitioning.md.
#ifndef PARTITA_H
#define PARTITA_H

#include <stddef.h>
#include <stdint.h>

#include "pt_spec.h"

#define PT_VERSION "0.1.0"

// ---------------------------------------------------------------------------------------------
// Errors: one table gives the engine codes, their text and the protocol status they map to.
#define PT_ERRORS(X)                                                             \
  X(PT_OK, 0, "ok", "OK")                                                        \
  X(PT_EINVAL, -1, "invalid argument", "INVALID_ARGUMENT")                       \
  X(PT_ENOTFOUND, -2, "not found", "NOT_FOUND")                                  \
  X(PT_EPARSE, -3, "malformed model file", "INVALID_ARGUMENT")                   \
  X(PT_EMODEL, -4, "invalid model", "INVALID_ARGUMENT")                          \
  X(PT_EASSEMBLY, -5, "assembly failed", "MODEL_ERROR")                          \
  X(PT_ESINGULAR, -6, "singular configuration", "MODEL_ERROR")                   \
  X(PT_EDIVERGED, -7, "integration diverged", "MODEL_ERROR")                     \
  X(PT_ENOMEM, -8, "out of memory", "RESOURCE_EXHAUSTED")                        \
  X(PT_EIO, -9, "i/o error", "INVALID_ARGUMENT")                                 \
  X(PT_EPRECOND, -10, "failed precondition", "FAILED_PRECONDITION")              \
  X(PT_EUNIMPL, -11, "not implemented", "UNIMPLEMENTED")

typedef enum {
#define PT_ERR_ENUM(name, code, text, status) name = code,
  PT_ERRORS(PT_ERR_ENUM)
#undef PT_ERR_ENUM
} pt_status;

const char *pt_strerror(int code);      // "invalid argument"
const char *pt_status_name(int code);   // protocol status name, "INVALID_ARGUMENT"

// A recoverable failure: code plus a message that says what and where.
typedef struct {
  int code;
  char msg[1024];
} pt_error;

// printf-style: sets err->code and err->msg (err may be NULL). Returns code.
int pt_error_set(pt_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

// ---------------------------------------------------------------------------------------------
// Loading.
// Limits on what a model text may ask for, checked while reading, before the work they bound
// is done (docs/model-format.md, "Limits"). Zero selects the default; NULL options are all
// defaults. A text beyond a limit is refused with PT_EPARSE and a message naming the limit.
#define PT_LOAD_MAX_TEXT_BYTES (8u << 20)   // model text: 8 MiB
#define PT_LOAD_MAX_BODIES 1000             // YAML bodies, URDF links
#define PT_LOAD_MAX_JOINTS 2000             // YAML joints, URDF joints
#define PT_LOAD_MAX_YAML_DEPTH 32           // nested YAML lists and mappings
#define PT_LOAD_MAX_YAML_NODES 1000000      // YAML scalars, lists and mappings
#define PT_LOAD_MAX_URDF_ELEMENTS 100000    // XML start tags in a URDF text

typedef struct {
  int floating_base;       // URDF: root link free instead of welded to ground
  int balance_inertia;     // URDF: repair non-physical inertias to the nearest physical ones
                           // (each link changed is listed in the warnings) instead of refusing
  size_t max_text_bytes;   // 0: PT_LOAD_MAX_TEXT_BYTES
  int max_bodies;          // 0: PT_LOAD_MAX_BODIES
  int max_joints;          // 0: PT_LOAD_MAX_JOINTS
  int max_yaml_depth;      // 0: PT_LOAD_MAX_YAML_DEPTH
  int max_yaml_nodes;      // 0: PT_LOAD_MAX_YAML_NODES (aliases are always refused)
  int max_urdf_elements;   // 0: PT_LOAD_MAX_URDF_ELEMENTS
  // Simulation settings that override the model file's `simulation` section (or the
  // defaults, for URDF): dt > 0 replaces the step; integrator is used when has_integrator.
  double dt;
  int has_integrator;
  int integrator;          // a pt_integrator
  // Mesh search path: directories separated by ':' where `package://PKG/PATH` is looked up
  // as DIR/PKG/PATH (and DIR/PATH), after $PARTITA_PACKAGE_PATH. NULL: the variable only.
  const char *package_path;
  int no_joint_limits;     // joint limits kept but not enforced (simulation: joint_limits: off)
  // A ground plane z = ground_z (normal +z) added to the ground's collision shapes, when
  // ground_plane is set (a URDF has no floor; `partita --ground-plane Z`).
  int ground_plane;
  double ground_z;
} pt_load_options;

// The options in effect: `opt` (may be NULL) with every zero limit replaced by its default.
pt_load_options pt_load_options_resolve(const pt_load_options *opt);

// YAML model text (model-format.md). `source` names the text in messages ("<string>" if NULL).
int pt_spec_from_yaml(const char *text, size_t len, const char *source, pt_spec **out,
                      pt_error *err);
// Same with limits (opt may be NULL; floating_base does not apply to YAML).
int pt_spec_from_yaml_opt(const char *text, size_t len, const char *source,
                          const pt_load_options *opt, pt_spec **out, pt_error *err);
// URDF robot description (model-format.md, URDF section).
int pt_spec_from_urdf(const char *text, size_t len, const char *source,
                      const pt_load_options *opt, pt_spec **out, pt_error *err);
// A file, YAML or URDF chosen by extension (.urdf/.xml) or content (starts with '<').
int pt_spec_from_file(const char *path, const pt_load_options *opt, pt_spec **out,
                      pt_error *err);

typedef struct pt_model pt_model;
typedef struct pt_data pt_data;

// Checks the spec, assembles the initial state and builds the model. Warnings (redundant
// constraint rows removed, assembly displacement) are available from pt_model_warnings().
int pt_model_compile(const pt_spec *s, pt_model **out, pt_error *err);
// pt_spec_from_file + pt_model_compile.
int pt_model_load_file(const char *path, const pt_load_options *opt, pt_model **out,
                       pt_error *err);
// pt_model_load_file that also hands over what it read: the file's bytes (*text,
// NUL-terminated, *len without the NUL, for the caller to free(); NULL on failure) and the
// format they were read as (*format: 1 = YAML, 2 = URDF), so that a caller keeping the
// model's text (a recording) reads the file once, within the same max_text_bytes.
int pt_model_load_file_text(const char *path, const pt_load_options *opt, pt_model **out,
                            char **text, size_t *len, int *format, pt_error *err);
// Same for in-memory text; format 0 = by content, 1 = YAML, 2 = URDF.
int pt_model_load_string(const char *text, size_t len, int format, const char *source,
                         const pt_load_options *opt, pt_model **out, pt_error *err);
void pt_model_free(pt_model *m);

// ---------------------------------------------------------------------------------------------
// Model sizes and names (read-only).
const char *pt_model_name(const pt_model *m);
const char *pt_model_warnings(const pt_model *m);   // "" when none; lines end with '\n'
int pt_model_nbody(const pt_model *m);              // moving bodies (ground excluded)
int pt_model_njoint(const pt_model *m);
int pt_model_nconstraint(const pt_model *m);        // independent constraint rows (no norm.)
int pt_model_ndof(const pt_model *m);
int pt_model_ncoord(const pt_model *m);             // joint coordinates then user coordinates
int pt_model_ninput(const pt_model *m);             // scalar actuator inputs
int pt_model_nactuator(const pt_model *m);
int pt_model_nmotion(const pt_model *m);
double pt_model_dt(const pt_model *m);
pt_integrator pt_model_integrator(const pt_model *m);
const double *pt_model_gravity(const pt_model *m);  // (3)
const char *pt_body_name(const pt_model *m, int i);
const char *pt_joint_name(const pt_model *m, int i);
const char *pt_coord_name(const pt_model *m, int i);     // "hinge", "cyl.angle", "tip_z"
const char *pt_input_name(const pt_model *m, int i);     // "tau", "push.x"
const char *pt_actuator_name(const pt_model *m, int i);
const char *pt_motion_name(const pt_model *m, int i);
int pt_coord_index(const pt_model *m, const char *name);   // -1 if unknown
int pt_input_index(const pt_model *m, const char *name);   // -1 if unknown
int pt_body_index(const pt_model *m, const char *name);    // -1 if unknown (ground: -1)
double pt_input_limit(const pt_model *m, int i);            // 0 = unlimited
double pt_input_gear(const pt_model *m, int i);             // joint effort per unit input
                                                            // (1 but for geared joint actuators)

// Visual shapes, for viewers (src/compile/visual.c). Every body has at least one: a body given none
// gets its equivalent inertia box (`generated`), and so does a mesh whose file was not found.
typedef struct {
  int body;                // moving body index, -1 for ground (scenery)
  int type;                // a pt_visual_type
  double size[3];          // box: edge lengths; sphere: radius; cylinder, capsule: radius, length
  double pos[3];           // shape origin in the body frame (CoM, body axes)
  double quat[4];          // shape axes in the body frame, Euler parameters
  double rgba[4];
  double scale[3];         // mesh
  const char *mesh;        // resolved mesh file ("" when none)
  const char *uri;         // mesh as written in the model ("" when none)
  int generated;           // 1: the inertia box drawn for a body without shapes or mesh file
} pt_visual;
int pt_model_nvisual(const pt_model *m);
const pt_visual *pt_model_visual(const pt_model *m, int i);   // NULL when out of range
const char *pt_visual_type_name(int type);   // "box", "sphere", "cylinder", "capsule", "mesh"
// Where viewers draw joint j: on `body` (-1: ground), its point and unit axis in that body's
// frame (CoM, body axes); returns the joint's type name ("revolute", ...), NULL out of range.
const char *pt_joint_marker(const pt_model *m, int j, int *body, double point[3],
                            double axis[3]);
// Joint limits (model-format.md): 1 and lim = (lower, upper) when joint j has them, else 0.
int pt_joint_limits(const pt_model *m, int j, double lim[2]);
int pt_model_limits_enforced(const pt_model *m);    // 1 when limits are enforced (tree, on)
// Couplers (URDF <mimic>, YAML couplers:): q_follower = multiplier x q_leader + offset
// between two joints' coordinates, held on trees (docs/model-format.md). pt_coupler_info gives
// the follower's and the leader's joint indices; pt_coupler_force the joint force (N or N m)
// that coupler k puts on its follower in the state held now (the leader takes -multiplier
// times it), 0 when the data does not hold couplers.
int pt_model_ncoupler(const pt_model *m);
const char *pt_coupler_name(const pt_model *m, int k);
int pt_coupler_info(const pt_model *m, int k, int *follower, int *leader, double *multiplier,
                    double *offset);
double pt_coupler_force(const pt_data *d, int k);
double pt_model_restitution(const pt_model *m);      // at a limit impact, in [0, 1]
// Contact geometry (docs/model-format.md "Collision", docs/collision.md): the collision shapes
// (the ground's included), the candidate pairs of shapes fixed at load, the contact buffer.
int pt_model_nshape(const pt_model *m);
int pt_model_npair(const pt_model *m);
int pt_model_max_contacts(const pt_model *m);
// Shape i's type ("plane", "sphere", "capsule", "box", "cylinder", "hull") and its body (-1:
// the ground); NULL out of range.
const char *pt_shape_info(const pt_model *m, int i, int *body);
// Pair p's two shapes, friction and restitution; -1 out of range, else 0.
int pt_pair_info(const pt_model *m, int p, int *shape1, int *shape2, double *friction,
                 double *restitution);
// Appends to buf (NUL-terminated, size n) one line per limited joint whose coordinate in coord
// (ncoord) is on or beyond a bound: "joint NAME at its lower limit L (coordinate V): HOW".
// The analyses name with it the limits they treat as free (kinematic inverse dynamics).
// Returns the number of such joints.
int pt_joint_limits_note(const pt_model *m, const double *coord, const char *how, char *buf,
                         size_t n);
const char *pt_integrator_name(pt_integrator it);           // "rk4" | "abm4" | "euler"
int pt_integrator_parse(const char *s, pt_integrator *out);  // 0 ok, -1 unknown

// ---------------------------------------------------------------------------------------------
// Control elements (docs/controls.md): a signal graph evaluated with the mechanism in every
// stage, control states integrated beside it, parameters tuned at run time. Signals are named
// by their elements ("speed", "motor.y1", "plant.x"); states "pi.integral", "tf.x1"; parameters
// "pi.kp". An input driven by a signal (an actuator's `source:`, an expression_force) is not a
// client's: pt_set_input refuses it (PT_EPRECOND) and pt_input_source names its signal.
int pt_model_nsignal(const pt_model *m);
int pt_model_ncontrol_state(const pt_model *m);
int pt_model_nparam(const pt_model *m);
const char *pt_signal_name(const pt_model *m, int i);
const char *pt_control_state_name(const pt_model *m, int i);
const char *pt_param_name(const pt_model *m, int i);
int pt_signal_index(const pt_model *m, const char *name);          // -1 if unknown
int pt_control_state_index(const pt_model *m, const char *name);   // -1 if unknown
int pt_param_index(const pt_model *m, const char *name);           // -1 if unknown
const char *pt_input_source(const pt_model *m, int i);  // signal driving input i, or NULL
int pt_model_ncontrol_input(const pt_model *m);  // the control `input` signals, last among
                                                 // the inputs

// ---------------------------------------------------------------------------------------------
// Data.
pt_data *pt_data_new(const pt_model *m);            // at the model's assembled initial state
void pt_data_free(pt_data *d);
// Bytes a data of m holds (its header and its one buffer): what each copy costs.
size_t pt_data_bytes(const pt_model *m);
int pt_data_copy(const pt_model *m, pt_data *dst, const pt_data *src);  // snapshot
void pt_data_reset(const pt_model *m, pt_data *d);  // back to the initial state, inputs 0

// Integration settings of this data (default: the model's).
void pt_set_dt(pt_data *d, double dt);
void pt_set_integrator(pt_data *d, pt_integrator it);

// Inputs: applied from the next step on, held until changed. Non-finite values are refused
// (PT_EINVAL); values beyond the actuator limit are clipped (returns 1, counted).
int pt_set_input(const pt_model *m, pt_data *d, int i, double value);

// Set coordinate values and rates by index; the engine assembles positions (least change,
// Newton) and velocities (mass-weighted projection) around them. Nothing changes on error.
typedef struct {
  int coord;      // coordinate index
  double value;
} pt_assign;
int pt_set_state(const pt_model *m, pt_data *d, const pt_assign *pos, int npos,
                 const pt_assign *vel, int nvel, pt_error *err);

// Control states set (by index), then the state re-evaluated (pt_forward); the integrator
// restarts as after pt_set_state. Nothing changes on error (PT_EINVAL: a bad index or value).
int pt_set_control_states(const pt_model *m, pt_data *d, const int *idx, const double *value,
                          int n, pt_error *err);
// A control element's parameter (pt_param_name) from the next evaluation on: never inside a
// step (the caller's thread owns d between steps). Refused with the reason (PT_EINVAL): a value
// that is not finite, a pid term the model does not give (its gain 0 at load: no state, no
// path), tf <= 0 with a derivative term, limit <= 0, lower >= upper.
int pt_set_param(const pt_model *m, pt_data *d, int i, double value, pt_error *err);

// One fixed step with the data's integrator. Allocates nothing (unless the partition has to
// be rebuilt, which is counted in d->nrepartition). On failure the data is left at the last
// good state and a negative code is returned.
int pt_step(const pt_model *m, pt_data *d);

// Evaluate everything at the current state without stepping: dependent coordinates,
// accelerations, multipliers, outputs (coordinates, energy, residuals).
int pt_forward(const pt_model *m, pt_data *d);

// ---------------------------------------------------------------------------------------------
// Results, valid after pt_step / pt_forward / pt_set_state (read-only for users).
double pt_time(const pt_data *d);
int64_t pt_nstep(const pt_data *d);
const double *pt_coords(const pt_data *d);       // (ncoord) values
const double *pt_coord_rates(const pt_data *d);  // (ncoord) rates
const double *pt_coord_accels(const pt_data *d); // (ncoord) second derivatives
const double *pt_inputs(const pt_data *d);       // (ninput) after clipping
const double *pt_body_pose(const pt_data *d, int i);      // (7) r, Euler parameters
const double *pt_body_velocity(const pt_data *d, int i);  // (6) CoM velocity, omega (global)
const double *pt_signals(const pt_data *d);               // (nsignal)
const double *pt_control_states(const pt_data *d);        // (ncontrol_state)
const double *pt_control_state_rates(const pt_data *d);   // (ncontrol_state) their derivatives
const double *pt_params(const pt_data *d);                // (nparam) as tuned
double pt_energy_kinetic(const pt_data *d);
double pt_energy_potential(const pt_data *d);    // gravity + springs + bushings
double pt_residual_position(const pt_data *d);   // max |Phi| (all rows, incl. normalisation)
double pt_residual_velocity(const pt_data *d);   // max |Phi_q qdot + Phi_t|
int pt_independent(const pt_model *m, const pt_data *d, const char **names, int max);
                                                 // names of the independent coordinates
                                                 // (e.g. "link.r.x", "link.p1"); returns ndof

// Counters (numerical trouble is counted, never fatal by itself).
typedef struct {
  int64_t repartitions;     // partition rebuilds after the first
  int64_t newton_iters;     // total Newton iterations for u
  int64_t clipped_inputs;   // inputs clipped to their limit
  int64_t failures;         // steps that failed
  double last_rcond;        // reciprocal condition estimate of Phi_u at the last step
  int64_t qr_switches;      // hybrid partitioning: switches LU -> QR (issue 7)
  int64_t lu_switches;      // switches QR -> LU
  int64_t qr_steps;         // steps taken with the QR (tangent-space) partition
  int method;               // partition active after the last step: 0 LU, 1 QR
  int64_t qr_retakes;       // QR steps retaken as substeps after an energy jump or a failure
  int64_t limit_impacts;    // impulses taken at joint limits (issue 11, item 4)
  int64_t spin_substeps;    // extra RK4 substeps taken for fast motion on a tree (issue 10,
                            // item 8): a step taken as k substeps adds k - 1
  int spin_substeps_last;   // substeps of the last step (1: an ordinary step)
  int64_t limit_lcp_unsolved;  // limit problems (limits.c) whose principal pivoting reached
                               // its bound of flips without a solution (the last iterate is
                               // used, clipped to pushing forces): should stay 0
  int64_t cartesian_fallbacks; // closed loops in joint coordinates (docs/partitioning.md):
                               // times neither joint-coordinate partition could be built or a
                               // step failed with both, and the Cartesian ones took over
} pt_counters;
// A joint limit in the state held now: -1 resting on (held at) the lower bound, +1 on the
// upper one, 0 free or not enforced; pre and post (may be NULL) get the joint's rate just
// before and just after its last impulse (post = -restitution x pre for a lone limit).
int pt_joint_limit_state(const pt_data *d, int joint, double *pre, double *post);
void pt_get_counters(const pt_data *d, pt_counters *c);

// Coordinate partitioning (docs/partitioning.md): the LU partition of Wehage & Haug, the QR
// tangent-space partition of Yoo, Lee & Kim ("A Hybrid Coordinate Partitioning Method in
// Mechanical Systems Containing Singular Configurations") near singular configurations, or
// both (default).
#define PT_MODE_HYBRID 0
#define PT_MODE_LU 1
#define PT_MODE_QR 2
int pt_partition_method(const pt_data *d);            // active now: 0 LU, 1 QR
int pt_set_partition_mode(pt_data *d, int mode);      // PT_MODE_*; PT_EINVAL if unknown
int pt_set_switch_back(pt_model *m, int steps);       // QR -> LU after this many stable steps
                                                      // (default 5, 1..100000); call before use
// Cap of the substeps an RK4 step on a tree takes when its angles turn fast (default 8,
// 1..64; 1 = never substep; docs/partitioning.md, "Fast motion"); call before use
int pt_set_spin_substeps(pt_model *m, int max);

// Analyses: inverse dynamics and equilibrium (issue 5), linearization (issue 6).
#include "pt_inverse.h"
#include "pt_linearize.h"

#endif
