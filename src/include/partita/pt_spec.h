// pt_spec.h: a parsed, not yet checked model description.
//
// The YAML and URDF loaders fill a pt_spec; pt_model_compile() checks it (names, masses,
// inertias, axes, consistency), converts global t=0 geometry into body-fixed vectors,
// assembles the initial state and builds the immutable pt_model. Every entry keeps the source
// line it came from so that compile errors can say `FILE:LINE: joints[2] "knee": ...`.
// All geometry is in the global frame at t = 0 (model-format.md).
#ifndef PT_SPEC_H
#define PT_SPEC_H

#include <stddef.h>

#define PT_NAME_MAX 64
// A coordinate's name is its joint's name plus a suffix (".angle1", ".slide").
#define PT_COORD_NAME_MAX (PT_NAME_MAX + 16)
// A control signal's name: an element's name, or NAME.y<k> / NAME.<state> (docs/controls.md).
#define PT_SIGNAL_NAME_MAX (2 * PT_NAME_MAX)

typedef enum {
  PT_JOINT_REVOLUTE = 0,
  PT_JOINT_PRISMATIC,
  PT_JOINT_CYLINDRICAL,
  PT_JOINT_SPHERICAL,
  PT_JOINT_UNIVERSAL,
  PT_JOINT_FIXED,
  PT_JOINT_PLANAR,          // motion in the plane normal to `axis`: NAME.x, NAME.y, NAME.angle
  PT_JOINT_NTYPES
} pt_joint_type;

typedef enum {
  PT_PROFILE_CONSTANT = 0,
  PT_PROFILE_SINE,
  PT_PROFILE_POLYNOMIAL,
  PT_PROFILE_STEP,
  PT_PROFILE_TABLE
} pt_profile_type;

typedef enum {
  PT_FORCE_TORSION_SPRING = 0,
  PT_FORCE_SPRING_DAMPER,
  PT_FORCE_BUSHING,
  PT_FORCE_FORCE,
  PT_FORCE_TORQUE,
  PT_FORCE_EXPRESSION       // a joint effort or body force whose value is a formula (controls)
} pt_force_type;

typedef enum {
  PT_ACT_JOINT_TORQUE = 0,
  PT_ACT_JOINT_FORCE,
  PT_ACT_BODY_FORCE,
  PT_ACT_BODY_TORQUE
} pt_actuator_type;

typedef enum { PT_UCOORD_POINT_POSITION = 0, PT_UCOORD_DISTANCE } pt_ucoord_type;

typedef enum { PT_INT_RK4 = 0, PT_INT_ABM4, PT_INT_EULER } pt_integrator;

// Visual shapes (for viewers; the mechanics never read them). docs/model-format.md, "Visuals".
typedef enum {
  PT_VISUAL_BOX = 0,   // size: full edge lengths along the shape's x, y, z
  PT_VISUAL_SPHERE,    // size[0]: radius
  PT_VISUAL_CYLINDER,  // size[0]: radius, size[1]: length along the shape's z
  PT_VISUAL_CAPSULE,   // size[0]: radius, size[1]: length of the cylindrical part (z)
  PT_VISUAL_MESH,      // mesh file (STL, DAE, OBJ), scaled by `scale`
  PT_VISUAL_PLANE,     // collision shapes of the ground only: `point`, `normal` (global)
  PT_VISUAL_NTYPES
} pt_visual_type;

#define PT_PATH_MAX 512

typedef struct {
  char body[PT_NAME_MAX];   // the body carrying it ("ground" for fixed scenery)
  int line;
  int index;                // place in its body's list (messages: visuals[index])
  pt_visual_type type;
  double size[3];           // see pt_visual_type
  double radius, length;    // YAML keys, copied into size by the loader
  double scale[3];          // mesh scale (default 1 1 1)
  double position[3];       // shape origin at t=0, global (default: the body's CoM)
  double quat[4];           // shape axes at t=0, global (default: the body's axes)
  int has_position, has_quat;
  double rgba[4];           // colour, each in [0, 1]; has_rgba 0: a colour by body
  int has_rgba;
  char uri[PT_PATH_MAX];    // mesh as written (file name, package://, file://)
  char mesh[PT_PATH_MAX];   // resolved file path, "" when not found (then drawn as a box)
  double point[3];          // plane: a point of it, global
  double normal[3];         // plane: unit normal, out of the solid ground
  double *vert;             // collision mesh: its vertices, scaled, in the shape's frame
  int nvert;                // (nvert x 3, owned by the spec; read by the loader or given)
} pt_spec_visual;

// Two bodies (either may be "ground") named by the top-level `contact:` mapping: a pair that
// never collides (`exclude`), or one whose friction and restitution differ (`pairs`).
typedef struct {
  char body1[PT_NAME_MAX], body2[PT_NAME_MAX];
  int line;
  double friction;          // >= 0 (pairs; when has_friction)
  double restitution;       // in [0, 1] (pairs; when has_restitution)
  int has_friction, has_restitution;
} pt_spec_contact_pair;

typedef struct {
  char name[PT_NAME_MAX];
  int line;
  double mass;
  double inertia[6];     // [Ixx Iyy Izz Ixy Ixz Iyz] in body axes (principal: last 3 zero)
  double position[3];    // CoM at t=0, global
  double quat[4];        // e0 e1 e2 e3 (normalised by compile)
  double velocity[3];    // CoM velocity at t=0
  double angvel[3];      // angular velocity at t=0, global frame
} pt_spec_body;

typedef struct {
  char name[PT_NAME_MAX];
  int line;
  pt_joint_type type;
  char body1[PT_NAME_MAX];  // reference side ("ground" allowed)
  char body2[PT_NAME_MAX];
  double point[3];          // joint point at t=0, global
  double axis[3];           // revolute, prismatic, cylindrical; planar: the plane's normal
  double axis1[3];          // universal: fixed in body1; planar: the x direction (optional)
  double axis2[3];          // universal: fixed in body2
  double damping;           // viscous damping on the joint coordinate(s)
  double friction;          // Coulomb friction force/torque on each coordinate (>= 0)
  double friction_velocity; // its regularisation scale (0: PT_FRICTION_VELOCITY)
  int has_limits;           // revolute, prismatic: lower <= coordinate <= upper (limits.c)
  double limits[2];         // lower < upper, finite (rad or m)
} pt_spec_joint;

// Regularised Coulomb friction on a joint coordinate: -friction tanh(rate / velocity scale);
// the default scale (rad/s or m/s) when a model gives none.
#define PT_FRICTION_VELOCITY 0.1

typedef struct {
  char name[PT_NAME_MAX];
  int line;
  char joint[PT_NAME_MAX];
  char coordinate[PT_NAME_MAX];  // "" or "angle"/"slide"/"angle1"/"angle2"
  pt_profile_type profile;
  // sine: offset + amplitude sin(omega t + phase); constant: value
  double offset, amplitude, omega, phase, value;
  // step: cubic from (t0, value0) to (t1, value1)
  double t0, value0, t1, value1;
  int ncoef;                // polynomial coefficients c0..c(n-1)
  double *coef;
  int npoint;               // table points (t, v), strictly increasing t, >= 2
  double *points;           // (npoint x 2)
} pt_spec_motion;

typedef struct {
  char name[PT_NAME_MAX];
  int line;
  pt_force_type type;
  char joint[PT_NAME_MAX];  // torsion_spring
  char body1[PT_NAME_MAX];  // spring_damper, bushing
  char body2[PT_NAME_MAX];
  char body[PT_NAME_MAX];   // force, torque
  double point[3];          // bushing, force
  double point1[3], point2[3];
  double stiffness, damping, free_length, free_angle, preload;  // scalar elements
  double stiffness6[6], damping6[6];                             // bushing
  double axes[9];           // bushing frame columns in global at t=0 (row-major 3x3)
  int has_axes;
  double value[3];          // force, torque (global)
  // expression_force (eq. 10c of Negrut & Ortiz): value = expr (a formula over signals and t)
  // as a joint effort along `joint`'s coordinate, or on `body` as a force along `direction`
  // at `point` or a torque about `axis` (global at t=0, or body-fixed with frame_body)
  char *expr;
  char coordinate[PT_NAME_MAX];  // "" or the joint coordinate's suffix
  double direction[3], axis[3];  // unit vectors (loader)
  int has_direction, has_axis, frame_body;
} pt_spec_force;

typedef struct {
  char name[PT_NAME_MAX];
  int line;
  pt_actuator_type type;
  char joint[PT_NAME_MAX];  // joint_torque, joint_force
  char coordinate[PT_NAME_MAX];  // "" or the joint coordinate's suffix ("angle", "x", ...)
  char body[PT_NAME_MAX];   // body_force, body_torque
  double point[3];          // body_force application point at t=0, global
  int frame_body;           // body_force/body_torque: 0 = global, 1 = body frame
  double limit;             // > 0: |u| <= limit; 0 = unlimited
  double gear;              // joint_torque/joint_force: joint effort = gear x input (0: 1)
  // `source:` the signal(s) its input(s) take instead of a client's (docs/controls.md): one
  // for a joint actuator, three (x, y, z) for a body actuator; nsource 0: a client input
  int nsource;
  char source[3][PT_SIGNAL_NAME_MAX];
  double source_scale[3];   // input k = source_scale[k] x signal (1 from the loader)
  int from_force;           // > 0: made by compile from expression_force from_force - 1
} pt_spec_actuator;

typedef struct {
  char name[PT_NAME_MAX];
  int line;
  pt_ucoord_type type;
  char body[PT_NAME_MAX];   // point_position
  double point[3];
  int component;            // 0, 1, 2 = x, y, z
  char body1[PT_NAME_MAX];  // distance
  char body2[PT_NAME_MAX];
  double point1[3], point2[3];
} pt_spec_coord;

// A coupler between two joint coordinates (URDF <mimic>, YAML couplers:):
// follower = multiplier x leader + offset, held by the engine (coupler.c).
typedef struct {
  char name[PT_NAME_MAX];
  int line;
  char follower[PT_NAME_MAX];  // a revolute or prismatic joint
  char leader[PT_NAME_MAX];    // a revolute or prismatic joint, not itself a follower
  double multiplier;           // finite, not 0
  double offset;               // finite (rad or m)
} pt_spec_coupler;

// A matrix as written in a model file: rows x cols, row-major.
typedef struct {
  double *v;
  int rows, cols;
} pt_spec_matrix;

// Control elements (docs/controls.md): a signal graph beside the mechanism. Each element's
// output signal is its name (a state_space's are NAME.y1.., an ode's NAME.<state>..).
typedef enum {
  PT_CONTROL_MEASURE = 0,        // a quantity of the mechanism
  PT_CONTROL_INPUT,              // set by clients like an actuator input
  PT_CONTROL_GAIN,               // k u
  PT_CONTROL_SUM,                // sum of signs[i] u_i
  PT_CONTROL_SATURATION,         // u clipped to [lower, upper]
  PT_CONTROL_EXPRESSION,         // a formula over signals and t
  PT_CONTROL_PID,                // kp e + ki int e + kd s/(tf s + 1) e, optional output limit
  PT_CONTROL_TRANSFER_FUNCTION,  // num(s)/den(s), proper
  PT_CONTROL_STATE_SPACE,        // x' = A x + B u, y = C x + D u
  PT_CONTROL_ODE,                // x' = f(signals, x), user formulas
  PT_CONTROL_NTYPES
} pt_control_type;

// What a measure element reads (global axes for body quantities).
typedef enum {
  PT_MEASURE_COORDINATE = 0,     // a joint or user coordinate's value
  PT_MEASURE_RATE,               // its rate
  PT_MEASURE_POSITION,           // a body's CoM position component
  PT_MEASURE_VELOCITY,           // a body's CoM velocity component
  PT_MEASURE_ANGULAR_VELOCITY    // a body's angular velocity component
} pt_measure_kind;

typedef struct {
  char name[PT_NAME_MAX];
  int line;
  pt_control_type type;
  // measure: `coordinate:`/`rate:` a coordinate, or `body:` with quantity and axis
  pt_measure_kind measure;
  char target[PT_COORD_NAME_MAX];  // the coordinate or body measured
  int axis;                        // body quantities: 0, 1, 2 = x, y, z
  // signals read: gain, saturation, pid, transfer_function: `input` (ninput = 1); sum,
  // state_space: `inputs`
  int ninput;
  char (*inputs)[PT_SIGNAL_NAME_MAX];  // (ninput)
  double *signs;                   // sum: (ninput) +1 or -1; NULL: all +1
  double k;                        // gain
  double lower, upper;             // saturation
  int has_lower, has_upper;
  double kp, ki, kd, tf;           // pid; tf > 0 when kd != 0
  double limit;                    // pid: |output| <= limit when has_limit (limit > 0)
  int has_limit;
  int nnum, nden;                  // transfer_function coefficients, highest power first
  double *num, *den;
  // state_space: A, B, C, D as written (D may be absent: v NULL), checked against each
  // other and ninput by pt_model_compile
  pt_spec_matrix mat[4];
  int ninitial;                    // ode, state_space: initial states (NULL: zeros)
  double *initial;
  char *expr;                      // expression: the formula
  int nstate;                      // ode: state names
  char (*states)[PT_NAME_MAX];
  int nderivative;                 // ode: formulas of the states' derivatives
  char **derivatives;
} pt_spec_control;

typedef struct pt_spec {
  char source[256];         // file name (or "<string>") for messages
  char model[PT_NAME_MAX];
  int line;
  double gravity[3];
  double dt;                // 0: not given (compile uses 1e-3)
  pt_integrator integrator;
  int has_integrator;
  int switch_back_steps;    // 0: not given (compile uses 5, Yoo, Lee & Kim's choice)
  int limits_off;           // joint limits not enforced (simulation: {joint_limits: off})
  double restitution;       // Newton's coefficient at a joint limit, in [0, 1] (default 0)
  int nbody, njoint, nmotion, nforce, nactuator, ncoord;
  pt_spec_body *bodies;
  pt_spec_joint *joints;
  pt_spec_motion *motions;
  pt_spec_force *forces;
  pt_spec_actuator *actuators;
  pt_spec_coord *coords;
  int ncoupler, coupler_cap;
  pt_spec_coupler *couplers;
  int ncontrol, control_cap;
  pt_spec_control *controls;
  int cap[6];               // allocated entries of the six lists (growth by doubling)
  int nvisual, visual_cap;  // visual shapes of all bodies (mesh files: src/load/mesh.c)
  pt_spec_visual *visuals;
  // Contact (docs/model-format.md, "Contact"): collision shapes of the bodies and of the
  // ground (body "ground"; planes only there), with the keys of visuals; `contact:` settings.
  int ncollision, collision_cap;
  pt_spec_visual *collisions;
  double contact_friction;     // Coulomb coefficient of every pair, >= 0 (default 0.5)
  double contact_restitution;  // Newton's coefficient at impacts, in [0, 1] (default 0)
  int max_contacts;            // contact buffer size; 0: not given (the compiler sizes it)
  int contact_line;            // line of `contact:`, 0 when absent
  int nexclude, exclude_cap;   // body pairs that never collide (besides those joined directly)
  pt_spec_contact_pair *excludes;
  int ncontact_pair, contact_pair_cap;   // per-pair friction and restitution
  pt_spec_contact_pair *contact_pairs;
  char *warnings;           // loader warnings, '\n'-terminated lines; NULL when none
} pt_spec;

// Allocation helpers shared by the loaders. All return NULL / -1 on out-of-memory.
pt_spec *pt_spec_new(void);
void pt_spec_free(pt_spec *s);
pt_spec_body *pt_spec_add_body(pt_spec *s);
pt_spec_joint *pt_spec_add_joint(pt_spec *s);
pt_spec_motion *pt_spec_add_motion(pt_spec *s);
pt_spec_force *pt_spec_add_force(pt_spec *s);
pt_spec_actuator *pt_spec_add_actuator(pt_spec *s);
pt_spec_coord *pt_spec_add_coord(pt_spec *s);
pt_spec_coupler *pt_spec_add_coupler(pt_spec *s);  // multiplier 1, offset 0
// A control element, zeroed (gain k 1); its arrays are malloc'd by the caller and freed by
// pt_spec_free.
pt_spec_control *pt_spec_add_control(pt_spec *s);
pt_spec_visual *pt_spec_add_visual(pt_spec *s);   // scale 1 1 1, identity orientation
pt_spec_visual *pt_spec_add_collision(pt_spec *s);   // as pt_spec_add_visual
pt_spec_contact_pair *pt_spec_add_exclude(pt_spec *s);
pt_spec_contact_pair *pt_spec_add_contact_pair(pt_spec *s);
int pt_mesh_kind_ok(const char *path);   // a mesh viewers draw: .stl, .dae or .obj (any case)
// Appends one warning line (printf-style; the '\n' is added). Compile hands the spec's
// warnings on to the model (pt_model_warnings) ahead of its own. -1 on out-of-memory.
int pt_spec_warn(pt_spec *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
