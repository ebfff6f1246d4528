// engine.h: internal layout of pt_model and pt_data, and the stages of the engine.
//
// Velocities are x = (rdot, omega) per body, omega global (6 nbody); positions q = (r, p) per
// body (7 nbody). A constraint row's Jacobian is stored by body blocks: 12 numbers, the
// (d/dr, d/dpi) row of body1 then of body2, where pi is the global virtual rotation
// (delta a = delta pi x a). That is the block-sparse structure the local-dynamics seed
// exploits: W = J M^-1 J^T couples only rows that share a body.
#ifndef PT_ENGINE_H
#define PT_ENGINE_H

#include <klu.h>  // for the linearization's sparse solves (linearize_system.c)

#include "collide.h"
#include "control.h"
#include "partita.h"

#define PT_GROUND (-1)
#define PT_MEAS_GEOM 12  // body-fixed vectors of a measure (4 x 3)
#define PT_JOINT_GEOM 30 // body-fixed vectors of a joint (10 x 3): pt_joint_vec
// Bytes of the limit notes of inverse dynamics and equilibrium per joint: the longest line
// (about 180 bytes) with a joint name of PT_NAME_MAX.
#define PT_LIMIT_NOTE_MAX (PT_NAME_MAX + 256)

typedef enum {
  PT_MEAS_ANGLE = 0,  // revolute/cylindrical angle: v0 = h (b1), v1 = f (b1), v2 = f (b2)
  PT_MEAS_UANGLE1,    // universal angle1: v0 = h1 (b1), v1 = axis2 copy (b1), v2 = h2 (b2)
  PT_MEAS_UANGLE2,    // universal angle2: v0 = h2 (b2), v1 = h1 (b1), v2 = axis1 copy (b2)
  PT_MEAS_SLIDE,      // slide along h: v0 = h (b1), v1 = s1 (b1), v2 = s2 (b2)
  PT_MEAS_POINT,      // component of a point: v0 = s (b1), comp
  PT_MEAS_DISTANCE    // |p2 - p1|: v0 = s1 (b1), v1 = s2 (b2)
} pt_meas_type;

// The body-fixed vectors of a joint (joint_geom, 3 numbers each; compile/joints.c): the
// joint point on each body, the joint frame (h the axis, f, g across it) on each body, and the
// other body's axis at t = 0 (a universal joint's angles need it).
typedef enum {
  PT_JV_S1 = 0,  // point (body1)
  PT_JV_S2,      // point (body2)
  PT_JV_H1,      // axis h (body1)
  PT_JV_F1,      // f (body1)
  PT_JV_G1,      // g (body1)
  PT_JV_H2,      // axis h (body2); a universal joint's axis2
  PT_JV_F2,      // f (body2)
  PT_JV_G2,      // g (body2)
  PT_JV_H2_ON1,  // body2's axis at t = 0 (body1)
  PT_JV_H1_ON2,  // body1's axis at t = 0 (body2)
  PT_JV_COUNT
} pt_joint_vec;

// The basic constraints every joint row is one of (joint.c; Haug's spherical, dot-1, dot-2).
typedef enum {
  PT_ROW_SPHERICAL = 0,  // (p2 - p1)_k = 0: component k = vec[0]
  PT_ROW_DOT1,           // a1 . a2 = 0: a1 = vec[0] (body1), a2 = vec[1] (body2)
  PT_ROW_DOT2            // a1 . (p2 - p1) = 0: a1 = vec[0] (body1)
} pt_row_kind;

typedef struct {
  unsigned char kind;    // pt_row_kind
  unsigned char vec[2];  // component or pt_joint_vec indices
} pt_row_def;

// A joint coordinate: the measure (measure.c) and the joint vectors it reads as v0, v1, v2.
typedef struct {
  const char *suffix;    // name = joint name "." suffix, or the joint's name when ""
  unsigned char meas;    // pt_meas_type
  unsigned char vec[3];  // pt_joint_vec indices
} pt_coord_def;

// A joint class (one table, src/core/joint.c): its rows and its coordinates. The model copies the
// rows into row_kind / row_vec and the coordinates into the measures at compile, so that
// nothing after compile (rows, partitions, assembly, inverse dynamics, linearization) switches
// on the joint type.
typedef struct {
  const char *name;
  int nrow;
  int ncoord;
  pt_row_def row[6];       // (nrow)
  pt_coord_def coord[3];   // (ncoord)
  int damp_rotation;       // damping acts on the relative angular velocity (no coordinate)
} pt_joint_class;
extern const pt_joint_class pt_joint_classes[PT_JOINT_NTYPES];

// Contact points a model's buffer holds when its file does not say (contact: max_contacts).
#define PT_MAX_CONTACTS_DEFAULT 1024

struct pt_model {
  char name[PT_NAME_MAX];
  char *warnings;              // '\n'-terminated lines
  int nvisual;                 // visual shapes (src/compile/visual.c), never read by the mechanics
  pt_visual *visual;           // (nvisual), strings inside visual_text
  char *visual_text;

  // contact geometry (src/compile/collision.c, docs/collision.md): shapes on bodies (the
  // ground: PT_GROUND), the candidate pairs fixed at load and their coefficients
  int nshape;
  pt_shape *shape;             // (nshape) type, half sizes, pose in its body's frame, hull
  int *shape_body;             // (nshape) body index, PT_GROUND for the ground's
  int npair;
  int *pair;                   // (npair x 2) shape indices, the lower first
  double *pair_friction;       // (npair) Coulomb coefficient
  double *pair_restitution;    // (npair) Newton's coefficient at impacts
  int max_contacts;            // contact buffer size (contact: max_contacts, or 4 npair up to
                               // PT_MAX_CONTACTS_DEFAULT)
  double gravity[3];
  double dt;
  pt_integrator integrator;
  int switch_back_steps;       // QR -> LU after this many stable steps (issue 7)

  // sizes
  int nbody;                   // moving bodies
  int nq;                      // 7 nbody
  int nv;                      // 6 nbody
  int njoint, nmotion, nforce, nactuator, ninput, ncoord, njcoord;
  int nrow_joint;              // joint rows before redundancy removal
  int nrow;                    // nrow_joint + nmotion ("all rows")
  int ncon;                    // active rows (independent joint rows + motions)
  int ncq;                     // ncon + nbody (with Euler-parameter normalisation)
  int ndof;                    // nq - ncq

  // bodies
  char (*body_name)[PT_NAME_MAX];
  double *body_mass;           // (nbody)
  double *body_inertia;        // (nbody x 9) about CoM, body axes
  double *body_inertia_inv;    // (nbody x 9)
  char (*q_name)[PT_NAME_MAX + 8];  // (nq) "link.x" .. "link.e3"

  // joints
  char (*joint_name)[PT_NAME_MAX];
  int *joint_type;             // (njoint)
  int *joint_body;             // (njoint x 2) body1, body2 (PT_GROUND = -1)
  double *joint_geom;          // (njoint x PT_JOINT_GEOM) body-fixed vectors
  double *joint_damping;       // (njoint)
  double *joint_friction;      // (njoint x 2) Coulomb force F, velocity scale v (force.c)
  int *joint_row_adr;          // (njoint) first row in the all-rows numbering
  int *joint_nrow;             // (njoint) rows of the joint (its class's)
  int *joint_ncoord;           // (njoint) coordinates of the joint (its class's)
  int *joint_damp_rotation;    // (njoint) damping on the relative angular velocity (class)
  int *joint_coord_adr;        // (njoint) first joint coordinate (measure), -1 if none
  int *joint_limited;          // (njoint) 1 if the joint's coordinate has limits
  double *joint_limit;         // (njoint x 2) lower, upper (rad or m)
  int nlimit;                  // joints with limits
  int limits_on;               // limits enforced (option on; on a tree's data only: limits.c)
  double restitution;          // Newton's coefficient at a limit impact, in [0, 1]
  int spin_substeps_max;       // cap of an RK4 step's substeps on the tree partition
                               // (integrate.c, spin_substeps; 1 = never substep)

  // couplers (coupler.c, issue 11 item 3): q_follower = mult q_leader + offset on a tree
  int ncoupler;
  char (*coupler_name)[PT_NAME_MAX];
  int *coupler_joint;          // (ncoupler x 2) follower joint, leader joint
  double *coupler_mult;        // (ncoupler) multiplier, finite and not 0
  double *coupler_offset;      // (ncoupler)

  // rows: the all-rows numbering (joint rows, then motion rows)
  int *row_body;               // (nrow x 2)
  int *row_joint;              // (nrow_joint) owning joint
  int *row_kind;               // (nrow_joint) pt_row_kind, from the joint's class
  int *row_vec;                // (nrow_joint x 2) the kind's component or pt_joint_vec indices
  int *row_active;             // (nrow) index in the active numbering, or -1 if removed
  int *con_row;                // (ncon) all-rows index of each active row

  // measures = coordinates: joint coordinates then user coordinates
  char (*coord_name)[PT_COORD_NAME_MAX];
  int *meas_type;              // (ncoord)
  int *meas_body;              // (ncoord x 2)
  int *meas_comp;              // (ncoord) point component
  double *meas_geom;           // (ncoord x PT_MEAS_GEOM)
  int *meas_joint;             // (ncoord) owning joint or -1

  // motions
  char (*motion_name)[PT_NAME_MAX];
  int *motion_coord;           // (nmotion) measure driven
  int *motion_profile;         // (nmotion)
  double *motion_par;          // (nmotion x 8) profile parameters
  int *motion_data_adr;        // (nmotion) into motion_data
  int *motion_data_num;        // (nmotion)
  double *motion_data;         // polynomial coefficients / table (t, v, spline M) triples

  // forces
  char (*force_name)[PT_NAME_MAX];
  int *force_type;             // (nforce)
  int *force_body;             // (nforce x 2)
  int *force_coord;            // (nforce) torsion spring measure
  double *force_par;           // (nforce x PT_FORCE_PAR)

  // actuators: each has 1 or 3 inputs
  char (*actuator_name)[PT_NAME_MAX];
  int *actuator_type;          // (nactuator)
  int *actuator_body;          // (nactuator)
  int *actuator_coord;         // (nactuator) joint measure (torque/force)
  int *actuator_frame;         // (nactuator) 0 global, 1 body
  double *actuator_point;      // (nactuator x 3) body-fixed application point
  int *actuator_input_adr;     // (nactuator)
  char (*input_name)[PT_NAME_MAX];
  double *input_limit;         // (ninput)
  double *input_gear;          // (ninput) joint effort per unit input (1 but for gears)

  // control elements (src/control; the stage in control_stage.c, issue 26): the signal graph
  // and how it meets the mechanism. Inputs are the actuators' (actuator_input_adr), then the
  // control `input` signals from ctl_input_adr; an input with input_source >= 0 is driven by
  // that signal (input = input_scale x signal, clipped to its limit), not by clients.
  pt_ctl *ctl;                 // NULL without controls
  int nsig, nctlx, nctlpar, nctlmeas, nctlstack;  // its sizes (0 without)
  int ctl_input_adr;           // first control input in the inputs
  int *ctl_meas_kind;          // (nctlmeas) pt_measure_kind
  int *ctl_meas_ref;           // (nctlmeas) the coordinate or body measured
  int *ctl_meas_axis;          // (nctlmeas) body quantities: 0, 1, 2
  int *input_source;           // (ninput) the signal driving each input, -1: a client's
  double *input_scale;         // (ninput)
  char (*ctl_par_name)[PT_NAME_MAX + PT_PAR_NAME_MAX];  // (nctlpar) "pid.kp"

  // W = J M^-1 J^T sparsity (active rows), full symmetric CSC, and its LDL symbolic analysis
  int w_nnz;
  int *w_colptr;               // (ncon + 1)
  int *w_rowind;               // (w_nnz)
  int *body_row_adr;           // (nbody + 1) into body_rows
  int *body_rows;              // active rows touching each body, with the body's slot (x2)
  int *body_pair_adr;          // (nbody + 1) into body_pair_nz
  int *body_pair_nz;           // W nonzero index for each (row a, row b) pair of a body
  int *ldl_Lp;                 // (ncon + 1)
  int *ldl_parent;             // (ncon)
  int *ldl_lnz;                // (ncon)
  int *ldl_P;                  // (ncon) AMD fill-reducing order
  int *ldl_Pinv;               // (ncon)
  int ldl_nnz;

  // Closed loops in joint coordinates (src/partition/loop_*.c, issue 23): a spanning tree of
  // revolute, prismatic, universal and fixed joints from the ground, in its joint coordinates;
  // the bodies it does not reach float (6 velocity, 7 position coordinates each); the other
  // joints' rows and the motions are cut rows, an independent subset of them kept. Set at
  // compile (pt_compile_loops, compile/loops.c); all counts 0 and no arrays when loop_ok is 0.
  int loop_ok;                 // the hybrid mode integrates the model this way
  int nlt;                     // tree coordinates
  int nlf;                     // floating bodies
  int nlw;                     // velocity coordinates: nlt, then 6 per floating body
  int nls;                     // position coordinates: nlt, then 7 per floating body (r, p)
  int nlj;                     // tree joints
  int nlc;                     // cut rows kept (joint rows of cut joints, then motion rows)
  int nlcs;                    // position rows: nlc, then a normalisation row per floating body
  int nlm;                     // entries of the joint-space inertia (a coordinate, its ancestors)
  int nlz;                     // entries of the cut rows' supports
  int nlg;                     // non-zeros of G_s (position Jacobian, nlcs x nls)
  int nlb;                     // non-zeros of B = [G_s; Q2^T] (nls x nls)
  int nlpair;                  // pairs of rows through each coordinate (the Schur complement)
  int nlsn;                    // non-zeros of the upper triangle of S = G M^-1 G^T (nlc x nlc),
                               // or nlc^2 (loop_s_dense)
  int nlsl;                    // non-zeros of the LDL factor of S
  int loop_s_dense;            // S is small and its factor dense: nlc x nlc, factored in place
  int *loop_joint;             // (nlj) tree joints, parents first
  int *loop_child;             // (njoint) slot of a tree joint's child body (0, 1); -1 cut
  int *loop_jcoord;            // (njoint) first tree coordinate of a tree joint, -1 none
  int *loop_body_coord;        // (nbody) deepest coordinate above the body, -1 none
  int *loop_body_float;        // (nbody) floating index, -1 for a tree body
  int *loop_float_body;        // (nlf)
  int *loop_parent;            // (nlw) parent coordinate, -1 at a root
  int *loop_cbody;             // (nlw) the body a coordinate moves (a joint's child, floating)
  int *loop_cjoint;            // (nlt) joint of a tree coordinate
  int *loop_ck;                // (nlt) which of its joint's coordinates (0 axis h1, 1 axis h2)
  int *loop_meas;              // (nlt) the measure (joint coordinate) it is
  int *loop_coord;             // (ncoord) the tree coordinate a measure is, -1 if none
  double *loop_pref;           // (4 njoint) Euler parameters of A1^T A2 at the reference
  double *loop_tref;           // (3 njoint) A1^T (r2 - r1) at the reference
  double *loop_sref0;          // (nlt) tree coordinates at the reference
  int *loop_row;               // (nlc) all-rows index of each kept cut row (joint rows by joint,
                               // then the nmotion motion rows)
  int *loop_m_adr;             // (nlw + 1) M(i, i), M(i, parent), ... of coordinate i in loop_m
  int *loop_z_adr;             // (nlc + 1) support of cut row r: the coordinates whose ...
  int *loop_z_idx;             // (nlz) ... motion it sees and their ancestors, decreasing
  int *loop_zc_adr;            // (nlw + 1) by coordinate: the support entries through it ...
  int *loop_zc;                // (nlz) ... (index into loop_z_idx)
  int *loop_zc_row;            // (nlz) ... and their rows
  int *loop_pair_adr;          // (nlw + 1) into loop_pair
  int *loop_pair;              // (nlpair) entry of S's upper triangle (below) of each pair of
                               // rows through a coordinate (ia <= ib)
  int *loop_ldl_P, *loop_ldl_Pinv;  // (nlc) AMD order of S
  int *loop_su_colptr;         // (nlc + 1) upper triangle of P S P^T by columns
  int *loop_su_rowind;         // (nlsn)
  int *loop_ldl_Lp;            // (nlc + 1) L of S = L D L^T (splu.h, pt_sldl)
  int *loop_ldl_Li;            // (nlsl)
  int *loop_ldl_rp;            // (nlc + 1) row patterns of L
  int *loop_ldl_rpat;          // (nlsl)
  int *loop_g_colptr;          // (nls + 1) G_s CSC (rows: kept cut rows, normalisation rows)
  int *loop_g_rowind;          // (nlg)
  int *loop_g_src;             // (nlg) index into the data's loop_gval
  int *loop_gt_colptr;         // (nlcs + 1) G_s^T CSC
  int *loop_gt_rowind;         // (nlg)
  int *loop_gt_src;            // (nlg) index into the data's loop_gs (G_s's values)
  int *loop_b_colptr;          // (nls + 1) B CSC: G_s's column, then the ndof rows of Q2^T
  int *loop_b_rowind;          // (nlb)
  int *loop_b_src;             // (nlb) index into loop_gs, or -(1 + k) for Q2's column k

  // initial state (assembled)
  double *q0;                  // (nq)
  double *qd0;                 // (nq)

  void **allocs;               // every array above, freed by pt_model_free
  int nalloc, maxalloc;
};

#define PT_FORCE_PAR 40

typedef enum { PT_PART_LU = 0, PT_PART_QR = 1 } pt_part_method;

// ---- pt_data's arrays: one table, X(type, name, size, stage) ---------------------------------
// Every array of pt_data, in the order it takes in the one buffer (data.c lays the buffer out
// from these tables, each array 64-byte aligned; a copy is the header and one memcpy). The
// size is the array's shape, an expression in the model's counts (nq, nv, nbody, ninput,
// nrow, ncon, w_nnz, ldl_nnz, ncoord, ncq, njoint, ndof, nlimit) and in two of the sparse LU
// (lu_max: Phi_u's nonzeros at most, 7 x (rows + 1) per body; ntri: ncq (ncq - 1) / 2, a
// dense triangle). A matrix (a x b) is row-major unless marked column-major. stage says what
// fills it: state, kin (kinematics.c), rows (joint.c, motion.c), w (dynamics.c), coord
// (measure.c), lu (partition.c), tree (tree.c), limits (limits.c), integ (integrate.c), qr
// (qr_partition.c), fallback (the dense solve for a singular W, qr_partition.c).
#define PT_DATA_ARRAYS(X)                                                                          \
  X(double, q, nq, state)                   /* r, p per body */                                    \
  X(double, qd, nq, state)                                                                         \
  X(double, qdd, nq, state)                                                                        \
  X(double, x, nv, state)                   /* rdot, omega per body */                             \
  X(double, xdd, nv, state)                 /* rddot, omegadot per body */                         \
  X(double, rot, 9 * nbody, kin)            /* rotation matrices */                                \
  X(double, inertia_g, 9 * nbody, kin)      /* inertia in global axes */                           \
  X(double, inertia_ginv, 9 * nbody, kin)                                                          \
  X(double, input, ninput, state)           /* clipped inputs */                                   \
  /* control elements (control_stage.c): states, tuned parameters, and each evaluation's */     \
  /* measured quantities, signals, state derivatives and formula stack */                         \
  X(double, ctl_x, nctlx, state)                                                                   \
  X(double, ctl_par, nctlpar, state)                                                               \
  X(double, ctl_meas, nctlmeas, control)                                                           \
  X(double, ctl_sig, nsig, control)                                                                \
  X(double, ctl_xdot, nctlx, control)                                                              \
  X(double, ctl_stack, nctlstack, control)                                                         \
  /* applied generalized forces (force, torque global) */                                          \
  X(double, qfrc, nv, state)                                                                       \
  X(double, row_phi, nrow, rows)                                                                   \
  X(double, row_jac, 12 * nrow, rows)                                                              \
  X(double, row_gamma, nrow, rows)          /* acceleration right-hand side */                     \
  X(double, row_nu, nrow, rows)             /* velocity right-hand side (-Phi_t) */                \
  /* multipliers of the active rows; at a tree's step end computed when asked (pt_lambda) */       \
  X(double, lambda, ncon, rows)                                                                    \
  X(double, w_val, w_nnz, w)                                                                       \
  X(double, mjt, 12 * ncon, w)              /* M^-1 J^T by row blocks (body1, body2) */            \
  X(double, ldl_Lx, ldl_nnz, w)                                                                    \
  X(int, ldl_Li, ldl_nnz, w)                                                                       \
  X(double, ldl_D, ncon, w)                                                                        \
  X(double, ldl_Y, ncon, w)                 /* work */                                             \
  X(int, ldl_pattern, ncon, w)              /* work */                                             \
  X(int, ldl_flag, ncon, w)                 /* work */                                             \
  X(int, ldl_rowptr, ncon + 1, w)           /* row patterns of L (pt_ldl_pattern) */               \
  X(int, ldl_rowpat, ldl_nnz, w)            /* columns of each row of L, in topological order */   \
  X(double, ldl_rhs, ncon, w)               /* work */                                             \
  X(double, wrk6, nv, w)                    /* work */                                             \
  X(double, coord, ncoord, coord)                                                                  \
  X(double, coord_rate, ncoord, coord)                                                             \
  X(double, coord_acc, ncoord, coord)                                                              \
  X(double, coord_ref, ncoord, coord)       /* unwrap reference of angles */                       \
  X(int, q_dep, nq, lu)                     /* 1 if dependent */                                   \
  X(int, indep, nq, lu)                     /* independent q indices (the first ndof) */           \
  X(int, dep, nq, lu)                       /* dependent q indices (the first ncq) */              \
  X(double, jq, 14 * ncq, lu)               /* Phi_q rows by body blocks (r 3, p 4) x 2 */         \
  X(double, phiF, ncq, lu)                  /* Phi with normalisation */                           \
  X(double, piv_built, ncq, lu)             /* |pivots of Phi_u| when the partition was built */   \
  X(double, rhs, nq, lu)                    /* work (the first ncq) */                             \
  X(int, lu_colptr, ncq + 1, lu)            /* Phi_u CSC */                                        \
  X(int, lu_rowind, lu_max, lu)                                                                    \
  X(int, lu_src, lu_max, lu)                /* index into jq */                                    \
  X(double, lu_val, lu_max, lu)                                                                    \
  X(int, lu_prow, ncq, lu)                  /* row of Phi_u chosen as pivot k */                   \
  X(int, lu_pinv, ncq, lu)                  /* pivot index of each row (build) */                  \
  X(int, lu_Lp, ncq + 1, lu)                /* columns of L in lu_Li / lu_Lx */                    \
  X(int, lu_Up, ncq + 1, lu)                /* columns of U in lu_Ui / lu_Ux, diagonal apart */    \
  X(double, lu_Ud, ncq, lu)                 /* diagonal of U (the pivots) */                       \
  X(double, lu_x, ncq, lu)                  /* dense work, all zero between uses */                \
  X(double, lu_y, ncq, lu)                  /* solve work */                                       \
  X(int, lu_mark, ncq, lu)                  /* depth-first search marks (build) */                 \
  X(int, lu_stack, 2 * ncq, lu)             /* search stack and reach (build) */                   \
  X(int, tree_joint, njoint, tree)          /* joints in parent-first order */                     \
  /* slot of the child body of each joint (0 body1, 1 body2) */                                    \
  X(int, tree_child, njoint, tree)                                                                 \
  /* independent coordinate of each joint, -1 if fixed */                                          \
  X(int, tree_dof, njoint, tree)                                                                   \
  /* joint coordinate (measure) of each independent one */                                         \
  X(int, tree_coord, ndof, tree)                                                                   \
  X(int, tree_body_joint, nbody, tree)      /* the joint whose child each body is */               \
  X(double, tree_pref, 4 * njoint, tree)    /* Euler parameters of A1^T A2 at the reference */     \
  X(double, tree_tref, 3 * njoint, tree)    /* A1^T (r2 - r1) at the reference */                  \
  X(double, tree_theta_ref, njoint, tree)   /* joint coordinate at the reference */                \
  /* theta, thetadot of the state held now (integrated) */                                         \
  X(double, tree_y, 2 * ndof, tree)                                                                \
  X(double, tree_y_save, 2 * ndof, tree)    /* at the step start */                                \
  X(int, lim_joint, nlimit, limits)         /* joint of each limit */                              \
  X(int, lim_dof, nlimit, limits)           /* its independent coordinate (tree_y index) */        \
  X(int, lim_state, nlimit, limits)         /* -1 held at lower, +1 held at upper, 0 free */       \
  X(int, lim_state_save, nlimit, limits)    /* lim_state at the step start */                      \
  X(int, lim_set, nlimit, limits)           /* work: limits in the current problem */              \
  X(double, lim_pre, nlimit, limits)        /* rate before the last impulse */                     \
  X(double, lim_post, nlimit, limits)       /* rate after the last impulse */                      \
  X(double, lim_minv, nlimit * ndof, limits)/* columns H^-1 e_i of the current problem */          \
  X(double, lim_w, nlimit * nlimit, limits) /* local-dynamics matrix W */                          \
  X(double, lim_l, nlimit * nlimit, limits) /* Cholesky factor of W's pushing block */             \
  X(int, lim_in, nlimit, limits)            /* 1 for the limits in the pushing set */              \
  X(double, lim_b, nlimit, limits)          /* LCP right-hand side */                              \
  X(double, lim_x, nlimit, limits)          /* LCP solution */                                     \
  X(double, lim_u, nlimit, limits)          /* approaching rates before the impulses */            \
  X(double, lim_acc, ndof, limits)          /* free accelerations */                               \
  X(double, lim_qfrc, nv, limits)           /* applied forces saved during the columns */          \
  X(double, lim_xdd, nv, limits)            /* free xdd (closed loops, loop_limits.c) */           \
  X(double, lim_y, 2 * ndof, limits)        /* the state of lim_acc, lim_minv (tree) */            \
  X(int, cpl_dof, 2 * ncoupler, couplers)   /* follower, leader independent coordinate */         \
  X(double, cpl_minv, ncoupler * ndof, couplers) /* columns H^-1 G^T at the current stage */      \
  X(double, cpl_w, ncoupler * ncoupler, couplers) /* W = G H^-1 G^T, then its Cholesky factor */  \
  X(double, cpl_acc, ndof, couplers)        /* accelerations without the couplers' forces */       \
  X(double, cpl_rhs, ncoupler, couplers)    /* work */                                             \
  X(double, cpl_force, ncoupler, couplers)  /* joint force on the follower at the last hold */     \
  X(int, iwork, 2 * nq, integ)                                                                     \
  /* the integrated state y = (v, vdot, control states), ny = 2 ndof + nctlx */                    \
  X(double, y, ny, integ)                   /* at step start */                                    \
  X(double, ystage, ny, integ)                                                                     \
  X(double, k, 8 * ny, integ)               /* RK4 stages k1..k4, ABM history f_n..f_n-3 */        \
  X(double, ysum, ny, integ)                                                                       \
  X(double, q_save, nq, integ)              /* state at step start */                              \
  X(double, qd_save, nq, integ)                                                                    \
  X(double, ctl_x_save, nctlx, integ)                                                              \
  X(double, qr_ref, nq, qr)                 /* q at the QR build: z = Q2^T (q - qr_ref) */         \
  X(double, qr_vec, nq, qr)                 /* work */                                             \
  X(double, qr_lwork, 64 * nq + 64, qr)     /* LAPACK work */                                      \
  X(int, qr_ipiv, nq, qr)                   /* pivots of B */                                      \
  X(int, fb_jpvt, nv, fallback)                                                                    \
  PT_DATA_LOOP(X)

// The joint-coordinate partitions of closed loops (src/partition/loop_*.c); every size is 0
// unless m->loop_ok (ldof: ndof then). ntrs = nls (nls + 1) / 2 bounds each sparse LU factor
// (splu.h).
#define PT_DATA_LOOP(X)                                                                            \
  X(double, loop_s, nls, loop)              /* position coordinates of the state held now */       \
  X(double, loop_sd, nls, loop)             /* their rates */                                      \
  X(double, loop_sdd, nls, loop)            /* their accelerations */                              \
  X(double, loop_s_save, 2 * nls, loop)     /* s, sd at the step start */                          \
  X(double, loop_sref, nls, loop)           /* s at the QR build: z = Q2^T (s - sref) */           \
  X(double, loop_S, 6 * nlw, loop)          /* motion subspaces, Plucker at the origin */          \
  X(double, loop_kap, 6 * nbody, loop)      /* velocity-product accelerations (x space) */         \
  X(double, loop_A, 6 * nbody, loop)        /* spatial accelerations at the origin */              \
  X(double, loop_Ic, 10 * nbody, loop)      /* composite inertias (m, m c, inertia at O) */        \
  X(double, loop_F, 6 * nbody, loop)        /* subtree forces, Plucker at the origin */            \
  X(double, loop_m, nlm, loop)              /* joint-space inertia, then L^T D L */                \
  X(double, loop_qb, nlw, loop)             /* generalized forces, then L^-T of them */            \
  X(double, loop_wdd, nlw, loop)            /* accelerations of the velocity coordinates */        \
  X(double, loop_gval, nlz + 14 * nlc + 4 * nlf, loop) /* G: w space on supports, q blocks */      \
  X(double, loop_z, nlz, loop)              /* Z = L^-T G^T on the supports */                     \
  X(double, loop_gam, nlcs, loop)           /* acceleration right-hand sides (joint space) */       \
  X(double, loop_nu, nlcs, loop)            /* velocity right-hand sides */                        \
  X(double, loop_lam, nlc, loop)            /* multipliers of the kept cut rows */                 \
  X(double, loop_dlam, nlc, loop)           /* work: their change with the inputs */               \
  X(double, loop_sv, nlsn, loop)            /* S's upper triangle (AMD order) */                   \
  X(double, loop_Lx, nlsl, loop)            /* L D L^T of S */                                     \
  X(double, loop_D, nlc, loop)                                                                     \
  X(double, loop_Y, nlc, loop)              /* work */                                             \
  X(int, loop_lnz, nlc, loop)               /* work */                                             \
  X(double, loop_gs, nlg, loop)             /* G_s values */                                       \
  X(double, loop_gtv, nlg, loop)            /* G_s^T values */                                     \
  X(int, loop_dep, nls, loop)               /* dependent coordinates (nlcs), then independent */   \
  X(int, loop_gu_colptr, nlcs + 1, loop)    /* G_u CSC (columns: dependent coordinates) */         \
  X(int, loop_gu_rowind, nlg, loop)                                                                \
  X(int, loop_gu_src, nlg, loop)            /* index into loop_gs */                               \
  X(double, loop_guv, nlg, loop)                                                                   \
  X(double, loop_piv_built, nlcs, loop)     /* |pivots of G_u| at the build */                     \
  X(int, loop_lu_lp, nls + 1, loop)         /* sparse LU of G_u (and the choice): splu.h */        \
  X(int, loop_lu_li, ntrs, loop)                                                                   \
  X(double, loop_lu_lx, ntrs, loop)                                                                \
  X(int, loop_lu_up, nls + 1, loop)                                                                \
  X(int, loop_lu_ui, ntrs, loop)                                                                   \
  X(double, loop_lu_ux, ntrs, loop)                                                                \
  X(double, loop_lu_ud, nls, loop)                                                                 \
  X(int, loop_lu_prow, nls, loop)                                                                  \
  X(int, loop_lu_pinv, nls, loop)                                                                  \
  X(double, loop_lu_x, nls, loop)                                                                  \
  X(int, loop_lu_stack, 2 * nls, loop)                                                             \
  X(int, loop_lu_mark, nls, loop)                                                                  \
  X(double, loop_lu_y, nls, loop)                                                                  \
  X(int, loop_qr_lp, nls + 1, loop)         /* sparse LU of B (QR partition) */                    \
  X(int, loop_qr_li, ntrs, loop)                                                                   \
  X(double, loop_qr_lx, ntrs, loop)                                                                \
  X(int, loop_qr_up, nls + 1, loop)                                                                \
  X(int, loop_qr_ui, ntrs, loop)                                                                   \
  X(double, loop_qr_ux, ntrs, loop)                                                                \
  X(double, loop_qr_ud, nls, loop)                                                                 \
  X(int, loop_qr_prow, nls, loop)                                                                  \
  X(int, loop_qr_pinv, nls, loop)                                                                  \
  X(double, loop_qr_x, nls, loop)                                                                  \
  X(int, loop_qr_stack, 2 * nls, loop)                                                             \
  X(int, loop_qr_mark, nls, loop)                                                                  \
  X(double, loop_qr_y, nls, loop)                                                                  \
  X(double, loop_bv, nlb, loop)             /* B values */                                         \
  X(double, loop_q2, nls * ldof, loop)      /* tangent basis Q2, column-major */                   \
  X(double, loop_r, nls * ldof, loop)       /* tangent rows R = W Q2 (kinetic metric W) */         \
  X(double, loop_n, nls * ldof, loop)       /* Q2bar = B^-1 [0; I] (s space) */                    \
  X(double, loop_nw, nlw * ldof, loop)      /* Q2bar in the velocity coordinates */                \
  X(double, loop_mn, nlw * ldof, loop)      /* M Q2bar */                                          \
  X(double, loop_nmn, ldof * ldof, loop)    /* Q2bar^T M Q2bar, then its Cholesky factor */        \
  X(double, loop_wddp, nlw, loop)           /* particular accelerations (QR) */                    \
  X(double, loop_nmw, ldof, loop)           /* Q2bar^T M wdd_p (QR) */                             \
  X(double, loop_u, nls > 0 ? ninput : 0, loop) /* inputs of the held accelerations */             \
  X(double, loop_ycur, 2 * ldof, loop)      /* work: the coordinates held */                       \
  X(double, loop_rhs, nls + nlw, loop)      /* work */                                             \
  X(int, loop_iw, nls + nlw, loop)          /* work */

// The dense work of the Cartesian partitions, last in the buffer so that the arrays above keep
// their offsets whether it is there or not: a tree integrated in its joint coordinates has none
// until a Cartesian partition is asked for (pt_data_dense; these sizes grow as n^2).
#define PT_DATA_DENSE(X)                                                                           \
  X(int, lu_Li, ntri, lu)                   /* rows of L below the diagonal (row numbering) */     \
  X(double, lu_Lx, ntri, lu)                /* values of L */                                      \
  X(int, lu_Ui, ntri, lu)                   /* pivot indices j < k, in elimination order */        \
  X(double, lu_Ux, ntri, lu)                /* values of U */                                      \
  /* partition rebuilds: full-pivoting elimination, QR of Phi^T */                                 \
  X(double, qr_work, nq * nq, qr)                                                                  \
  X(double, qr_q2, nq * ndof, qr)           /* orthonormal tangent basis Q2, column-major */       \
  /* LU of B = [Phi^F_q; Q2^T], column-major; build work */                                        \
  X(double, qr_b, nq * nq, qr)                                                                     \
  X(double, qr_n, nq * ndof, qr)            /* Q2bar = B^-1 [0; I], the updated null space */      \
  X(double, qr_nx, nv * ndof, qr)           /* Q2bar in velocities x, then M Q2bar */              \
  X(double, fb_a, nv * nv, fallback)        /* dense fallback for a singular W: J^T, then Q */     \
  X(double, fb_b, nv * nv, fallback)        /* M Q2, then Q2^T M Q2 */

#define PT_DATA_POINTER(type, name, size, stage) type *name;

struct pt_data {
  PT_DATA_ARRAYS(PT_DATA_POINTER)  // the arrays, in one buffer (the tables above)
  PT_DATA_DENSE(PT_DATA_POINTER)

  const pt_model *model;
  double time;
  int64_t nstep;
  double time_base, dt_base;   // time = time_base + (nstep - nstep_base) dt_base, no drift
  int64_t nstep_base;
  double dt;
  pt_integrator integrator;

  // partition
  int part_valid;
  pt_part_method part_method;
  int lu_nnz;
  // sparse LU of Phi_u, P Phi_u = L U (rows pivoted, columns in dependent order), on storage
  // sized at load for the dense worst case: a rebuild or a copy never allocates (issue 10)
  int lu_ready;                // the lu_* arrays hold a factorization (pattern and pivots)
  double rcond_built;          // rcond of Phi_u when the partition was built
  double piv_ratio;            // min |pivot| / |pivot at build| at the last factorisation
  double rcond;                // at the last factorisation
  int newton_last;             // Newton iterations at the last solve
  int lu_current;              // the LU holds a factor usable for chord Newton steps
  int part_suspect;            // set when the partition looked degraded in the last step

  // tree partition (tree.c, issue 10): on a tree of revolute, prismatic and fixed joints the
  // joint coordinates are the independent set and forward kinematics gives q exactly
  int tree_ok;                 // the model qualifies and the self-check passed
  int tree_y_valid;            // tree_y is the state held now
  int tree_kin_held;           // rot, x and inertia_g are tree_y's (no failed stage since)
  int tree_aba;                // intermediate stages by the articulated-body algorithm
  int tree_fast;               // this stage: ABA only (no rows, no W, no multipliers)
  int tree_coords_first;       // tree_coord is a permutation of the coordinates 0..ndof-1
  int lambda_stale;            // lambda is not the multipliers of the state held now (tree)

  // joint limits on the tree partition (limits.c, issue 11 item 4)
  int lim_on;                  // enforced on this data (model option on, tree partition)
  int lim_n;                   // limited joints with a coordinate in the tree
  int lim_nactive;             // limits held now (lim_state != 0)
  int lim_cols_ok;             // lim_acc and lim_minv are the hold's at lim_y, lim_cols_t
  int lim_cols_ns;             // (for the lim_cols_ns limits of lim_set)
  double lim_cols_t;
  int lim_touched;             // this step's end was changed by the limits (closed loops)
  int lim_nactive_save;        // lim_nactive at the step start

  // couplers on the tree partition (coupler.c): always-active rows G = e_f - mult e_l; the
  // arrays are in PT_DATA_ARRAYS (stage couplers)
  int cpl_on;                  // held on this data (tree partition)

  // closed loops in joint coordinates (src/partition/loop_*.c, issue 23)
  int loop_s_valid;            // loop_s, loop_sd are the coordinates of q, qd
  int loop_lu_ready;           // the LU workspace holds G_u's factor (pattern and pivots)
  int loop_lu_current;         // ... of positions near the current ones (chord Newton steps)
  int loop_qr_ready;           // the QR workspace holds a factor of B (pattern and pivots)
  int loop_qr_current;         // ... of positions near the current ones
  int loop_qr_exact;           // ... of the current positions (velocities, accelerations)
  int loop_held;               // M's and S's (LU) or B's (QR) factors are of the state held now
  double loop_held_time;       // ... and of this time
  double loop_rcond0;          // rcond of B at its last fresh (pivoting) factorisation
  int stage_inner;             // an intermediate stage of a step: nothing reads its outputs
  int loop_efforts;            // pt_forces leaves the joint actuators on tree coordinates to
                               // the joint-coordinate evaluation (loop_dyn.c adds them to Q)
  int loop_off;                // the Cartesian partitions stand in for the joint-coordinate
                               // ones (they could not be built, or a step failed with them)
  int64_t loop_off_step;       // ... since this step

  // integrator state
  int abm_count;               // valid history entries
  int acc_valid;               // qdd/xdd valid for the current state and inputs

  // outputs
  double energy_kin, energy_pot;
  double res_pos, res_vel;

  pt_counters counters;
  void *buffer;
  int dense;                   // the buffer holds the dense Cartesian-partition work (data.c)

  // hybrid LU/QR partitioning (issue 7, src/partition/qr_partition.c, seed hybrid eq. 4-9)
  int part_mode;               // PT_MODE_HYBRID, PT_MODE_LU, PT_MODE_QR (partita.h)
  int qr_b_valid;              // qr_b holds the factor at the current q
  int qr_b_chord;              // qr_b holds a factor of B near q (chord Newton steps)
  double qr_rcond;             // rcond(B) estimate (pivot spread) at the last velocity solve
  int qr_stable;               // consecutive unremarkable steps in QR mode
  int64_t lu_rebuild_step[2];  // steps of the last two LU rebuilds
  double energy_prev;          // total energy after the previous step
  double energy_davg;          // running mean of |energy change| per step
  int w_singular;              // W = J M^-1 J^T was (near) singular in the current step
  double w_ratio;              // min / max |LDL pivot| of W at the last factorisation
  double w_ratio_step;         // smallest w_ratio during the current step
  double w_healthy;            // largest step-wise w_ratio seen: W's scale for this model
  double rcond_healthy;        // best rcond(Phi_u) of an LU build so far: the model's scale
  int qr_backoff;              // stable QR steps needed = switch_back_steps * this (1..64)
  int64_t lu_back_step;        // step of the last switch back to LU
};

// ---- stages (each file's header comment says which equations it implements) ---------------
// kinematics.c
void pt_kin_bodies(const pt_model *m, pt_data *d);           // rot, inertia_g, x from q, qd
void pt_kin_positions(const pt_model *m, pt_data *d);        // rot only
void pt_body_point(const pt_data *d, int body, const double sbar[3], double p[3],
                   double s[3]);                              // global point and arm
void pt_body_omega(const pt_data *d, int body, double w[3]);
void pt_body_vel(const pt_data *d, int body, double v[3]);
void pt_body_rot(const pt_data *d, int body, double A[9]);

// joint.c: all joint rows: phi, jac, gamma, nu for joints
void pt_joint_rows(const pt_model *m, pt_data *d);
// The n joint rows listed (grouped by joint; NULL: every joint row): phi alone (PT_ROWS_PHI:
// positions only), phi and jac (PT_ROWS_JAC: no velocities, gamma 0), or phi, jac, gamma and
// nu (PT_ROWS_FULL).
enum { PT_ROWS_PHI = 0, PT_ROWS_FULL = 1, PT_ROWS_JAC = 2 };
void pt_joint_rows_list(const pt_model *m, pt_data *d, const int *rows, int n, int what);
// motion.c
void pt_motion_eval(const pt_model *m, int i, double t, double f[3]);
void pt_motion_rows(const pt_model *m, pt_data *d);
// measure.c: value (unwrapped), Jacobian (12) and quadratic term Jdot x of a coordinate
void pt_measure(const pt_model *m, const pt_data *d, int i, double *value, double jac[12],
                double *jdotx);
double pt_jac_dot_x(const pt_data *d, const int body[2], const double jac[12]);
void pt_measure_all(const pt_model *m, pt_data *d);          // coord, coord_rate, coord_acc
void pt_measure_jac(const pt_model *m, const pt_data *d, int i, double jac[12]);  // J only
void pt_measure_jd(const pt_model *m, const pt_data *d, int i, double jac[12], double *jdotx);
// The value and rate of coordinate c when the tree partition holds it (its integrated joint
// coordinates, tree.c): 1 and *value, *rate (rate may be NULL), else 0.
int pt_tree_coord_value(const pt_data *d, int c, double *value, double *rate);
void pt_measure_from(const pt_model *m, pt_data *d, int first);  // coordinates first..ncoord-1
// force.c: qfrc (applied + gyroscopic) and potential energy
void pt_forces(const pt_model *m, pt_data *d);
double pt_potential(const pt_model *m, const pt_data *d);
// Kinetic energy of the bodies at the velocities d->x (output.c).
double pt_kinetic(const pt_model *m, const pt_data *d);
void pt_apply_coord_force(const pt_data *d, int b1, int b2, const double jac[12], double f,
                          double *qfrc);
// dynamics.c: accelerations and multipliers from W lambda = J M^-1 Q - gamma
// Accelerations and multipliers through W's LDL^T; PT_ESINGULAR when W is singular (then
// pt_accelerations, partition.h, takes the dense solve).
int pt_accelerations_w(const pt_model *m, pt_data *d);
int pt_w_factor(const pt_model *m, pt_data *d);
void pt_ldl_pattern(const pt_model *m, pt_data *d);          // once per data
void pt_w_solve(const pt_model *m, pt_data *d, double *b);
void pt_minv_jt(const pt_model *m, const pt_data *d, const double *lam, double *out);
// qdd (r, Euler parameters) from xdd (r, omega): pdd = E^T wdot / 2 - |w|^2 p / 4.
void pt_qdd_from_xdd(const pt_model *m, pt_data *d);
// tree.c: joint coordinates as independent coordinates of a tree (forward kinematics)
int pt_tree_qualifies(const pt_model *m);
// The tree partition is the LU method's partition on a tree in hybrid mode: theta integrated,
// q by forward kinematics.
static inline int pt_tree_active(const pt_data *d) {
  return d->tree_ok && d->part_mode == PT_MODE_HYBRID && d->part_method == PT_PART_LU;
}
int pt_tree_init(const pt_model *m, pt_data *d);
int pt_tree_aba_fits(const pt_model *m);
void pt_tree_aba(const pt_model *m, pt_data *d, const double *rate, double *thetadd);
// After pt_tree_aba at the same state: H^-1 tau (ndof) from its articulated inertias, and
// every body's xdd from given joint accelerations.
void pt_tree_minv(const pt_model *m, pt_data *d, const double *tau, double *out);
void pt_tree_accelerations(const pt_model *m, pt_data *d, const double *thetadd);
void pt_kin_inertias(const pt_model *m, pt_data *d, int inv);
int pt_tree_lambda_fits(const pt_model *m);
void pt_tree_lambda(const pt_model *m, pt_data *d);
void pt_tree_reactions(const pt_model *m, const pt_data *d, double *reaction);
// lambda of the state held now through W (dynamics.c); PT_ESINGULAR when W is singular
// (pt_lambda, partition.h, then takes the dense solve's)
int pt_lambda_w(const pt_model *m, pt_data *d);
void pt_tree_positions(const pt_model *m, pt_data *d, const double *theta);
// Joint j's child (ch: 1 body2, 0 body1) placed from its other body, A1^T A2 = rel and the
// common joint point (point) or A1^T (r2 - r1) = w (tree.c; the loops' kinematics too).
void pt_joint_place(const pt_model *m, pt_data *d, int j, int ch, const double rel[4],
                    int point, const double w[3]);
void pt_tree_velocities(const pt_model *m, pt_data *d, const double *rate);
void pt_tree_coords(const pt_model *m, const pt_data *d, double *theta, double *rate,
                    double *acc);
int pt_tree_outputs(const pt_model *m, pt_data *d);
// coupler.c (below limits.c: the limits see the coupled dynamics)
void pt_couplers_init(const pt_model *m, pt_data *d);
int pt_couplers_prepare(const pt_model *m, pt_data *d, const double *rate);
void pt_couplers_project(const pt_model *m, const pt_data *d, double *v, int stride, int ncol);
void pt_couplers_hold(const pt_model *m, pt_data *d, const double *rate, const double *acc);
int pt_couplers_after_step(const pt_model *m, pt_data *d, double *y);
void pt_couplers_fix(const pt_model *m, double *y, int n, const int *dof);
int pt_coupler_of_joint(const pt_model *m, int j);
// limits.c
void pt_limits_init(const pt_model *m, pt_data *d);
void pt_limits_clear(pt_data *d);
int pt_limits_hold(const pt_model *m, pt_data *d, const double *rate);
int pt_tree_hold(const pt_model *m, pt_data *d, const double *rate);  // couplers, then limits
// A tree stage's accelerations thetadd (ndof) and xdd with the couplers' and held limits'
// reactions (added to qfrc); -1 when the couplers' W is not positive definite.
int pt_tree_dynamics(const pt_model *m, pt_data *d, const double *rate, double *thetadd);
// For the analyses (inverse.c): joint j's limit at coordinate value v and rate w in d. *side:
// the bound v is on or beyond (-1 lower, +1 upper, 0 none). Returns -1 when d does not enforce
// the limit, 1 when it holds it on *side (d's limit state holds it there, or the coordinate
// is at rest on it), 0 otherwise (free: off its bounds, or moving).
int pt_limit_at(const pt_model *m, const pt_data *d, int j, double v, double w, int *side);
int pt_limits_after_step(const pt_model *m, pt_data *d, double *y);
void pt_limits_lcp(pt_data *d, int ns, const double *b);
void pt_limits_solve(pt_data *d, int ns, const double *b);
// output.c
void pt_outputs(const pt_model *m, pt_data *d);
// control_stage.c: the measured quantities, signals, driven inputs and control states'
// derivatives at the state held now (kinematics evaluated); called by pt_forces.
void pt_control_eval(const pt_model *m, pt_data *d);
// The measured quantity k of the control elements at d's state (kinematics evaluated).
double pt_control_measure(const pt_model *m, const pt_data *d, int k);
// The integrated state's size: 2 ndof + control states.
static inline int pt_ny(const pt_model *m) { return 2 * (m->ndof > 0 ? m->ndof : 0) + m->nctlx; }
// data.c
void pt_qd_from_x(const pt_model *m, pt_data *d);
// Gives d the dense work of the Cartesian partitions (LU of Phi_u, QR partition, dense
// fallback) if it lacks it (a tree's data): one allocation and copy, never inside pt_step.
int pt_data_dense(const pt_model *m, pt_data *d);
pt_data *pt_data_alloc(const pt_model *m);  // not evaluated: pt_data_new (state.c) does
void pt_data_initial(const pt_model *m, pt_data *d);  // the model's initial state, unevaluated

#endif
