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

#include "partita.h"

#define PT_GROUND (-1)
#define PT_MEAS_GEOM 12  // body-fixed vectors of a measure (4 x 3)
#define PT_JOINT_GEOM 27 // body-fixed vectors of a joint (9 x 3)

typedef enum {
  PT_MEAS_ANGLE = 0,  // revolute/cylindrical angle: v0 = h (b1), v1 = f (b1), v2 = f (b2)
  PT_MEAS_UANGLE1,    // universal angle1: v0 = h1 (b1), v1 = axis2 copy (b1), v2 = h2 (b2)
  PT_MEAS_UANGLE2,    // universal angle2: v0 = h2 (b2), v1 = h1 (b1), v2 = axis1 copy (b2)
  PT_MEAS_SLIDE,      // slide along h: v0 = h (b1), v1 = s1 (b1), v2 = s2 (b2)
  PT_MEAS_POINT,      // component of a point: v0 = s (b1), comp
  PT_MEAS_DISTANCE    // |p2 - p1|: v0 = s1 (b1), v1 = s2 (b2)
} pt_meas_type;

// A joint class: how many rows and how to fill them (one table, src/joint.c).
typedef struct {
  const char *name;
  int nrow;
  int ncoord;
} pt_joint_class;
extern const pt_joint_class pt_joint_classes[PT_JOINT_NTYPES];

struct pt_model {
  char name[PT_NAME_MAX];
  char *warnings;              // '\n'-terminated lines
  int nvisual;                 // visual shapes (src/visual.c), never read by the mechanics
  pt_visual *visual;           // (nvisual), strings inside visual_text
  char *visual_text;
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
  int *joint_coord_adr;        // (njoint) first joint coordinate (measure), -1 if none
  int *joint_limited;          // (njoint) 1 if the joint's coordinate has limits
  double *joint_limit;         // (njoint x 2) lower, upper (rad or m)
  int nlimit;                  // joints with limits
  int limits_on;               // limits enforced (option on; on a tree's data only: limits.c)
  double restitution;          // Newton's coefficient at a limit impact, in [0, 1]

  // couplers (coupler.c, issue 11 item 3): q_follower = mult q_leader + offset on a tree
  int ncoupler;
  char (*coupler_name)[PT_NAME_MAX];
  int *coupler_joint;          // (ncoupler x 2) follower joint, leader joint
  double *coupler_mult;        // (ncoupler) multiplier, finite and not 0
  double *coupler_offset;      // (ncoupler)

  // rows: the all-rows numbering (joint rows, then motion rows)
  int *row_body;               // (nrow x 2)
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

  // initial state (assembled)
  double *q0;                  // (nq)
  double *qd0;                 // (nq)

  void **allocs;               // every array above, freed by pt_model_free
  int nalloc, maxalloc;
};

#define PT_FORCE_PAR 40

typedef enum { PT_PART_LU = 0, PT_PART_QR = 1 } pt_part_method;

struct pt_data {
  const pt_model *model;
  double time;
  int64_t nstep;
  double time_base, dt_base;   // time = time_base + (nstep - nstep_base) dt_base, no drift
  int64_t nstep_base;
  double dt;
  pt_integrator integrator;

  double *q;                   // (nq) r, p per body
  double *qd;                  // (nq)
  double *qdd;                 // (nq)
  double *x;                   // (nv) rdot, omega per body
  double *xdd;                 // (nv) rddot, omegadot per body
  double *rot;                 // (nbody x 9) rotation matrices
  double *inertia_g;           // (nbody x 9) inertia in global axes
  double *inertia_ginv;        // (nbody x 9)
  double *input;               // (ninput) clipped inputs
  double *qfrc;                // (nv) applied generalized forces (force, torque global)

  // rows (all-rows numbering)
  double *row_phi;             // (nrow)
  double *row_jac;             // (nrow x 12)
  double *row_gamma;           // (nrow) acceleration right-hand side
  double *row_nu;              // (nrow) velocity right-hand side (-Phi_t)
  double *lambda;              // (ncon) multipliers of the active rows; on a tree's step end
                               // not computed until asked for: pt_lambda (lambda_stale)

  // W and its LDL factor
  double *w_val;               // (w_nnz)
  double *mjt;                 // (ncon x 12) M^-1 J^T by row blocks (body1, body2)
  double *ldl_Lx;              // (ldl_nnz)
  int *ldl_Li;                 // (ldl_nnz)
  double *ldl_D;               // (ncon)
  double *ldl_Y;               // (ncon) work
  int *ldl_pattern;            // (ncon) work
  int *ldl_flag;               // (ncon) work
  int *ldl_rowptr;             // (ncon + 1) row patterns of L (pt_ldl_pattern)
  int *ldl_rowpat;             // (ldl_nnz) columns of each row of L, in topological order
  double *ldl_rhs;             // (ncon) work
  double *wrk6;                // (nv) work

  // measures
  double *coord;               // (ncoord)
  double *coord_rate;          // (ncoord)
  double *coord_acc;           // (ncoord)
  double *coord_ref;           // (ncoord) unwrap reference of angles

  // partition
  int part_valid;
  pt_part_method part_method;
  int *q_dep;                  // (nq) 1 if dependent
  int *indep;                  // (ndof) independent q indices
  int *dep;                    // (ncq) dependent q indices
  double *jq;                  // (ncq x 14) Phi_q rows by body blocks (r 3, p 4) x 2
  double *phiF;                // (ncq) Phi with normalisation
  double *rhs;                 // (ncq) work
  int *lu_colptr;              // (ncq + 1) Phi_u CSC
  int *lu_rowind;              // (max nnz)
  int *lu_src;                 // (max nnz) index into jq
  double *lu_val;              // (max nnz)
  int lu_nnz;
  // sparse LU of Phi_u, P Phi_u = L U (rows pivoted, columns in dependent order), on storage
  // sized at load for the dense worst case: a rebuild or a copy never allocates (issue 10)
  int lu_ready;                // the arrays below hold a factorization (pattern and pivots)
  int *lu_prow;                // (ncq) row of Phi_u chosen as pivot k
  int *lu_pinv;                // (ncq) pivot index of each row (build)
  int *lu_Lp;                  // (ncq + 1) columns of L in lu_Li / lu_Lx
  int *lu_Li;                  // (ncq (ncq - 1) / 2) rows of L below the diagonal (row numbering)
  double *lu_Lx;               // (ncq (ncq - 1) / 2)
  int *lu_Up;                  // (ncq + 1) columns of U in lu_Ui / lu_Ux, diagonal apart
  int *lu_Ui;                  // (ncq (ncq - 1) / 2) pivot indices j < k, in elimination order
  double *lu_Ux;               // (ncq (ncq - 1) / 2)
  double *lu_Ud;               // (ncq) diagonal of U (the pivots)
  double *lu_x;                // (ncq) dense work, all zero between uses
  double *lu_y;                // (ncq) solve work
  int *lu_mark;                // (ncq) depth-first search marks (build)
  int *lu_stack;               // (2 ncq) search stack and reach (build)
  double rcond_built;          // rcond of Phi_u when the partition was built
  double *piv_built;           // (ncq) |pivots of Phi_u| when the partition was built
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
  int *tree_joint;             // (njoint) joints in parent-first order
  int *tree_child;             // (njoint) slot of the child body of each joint (0 body1, 1 body2)
  int *tree_dof;               // (njoint) independent coordinate of each joint, -1 if fixed
  int *tree_coord;             // (ndof) joint coordinate (measure) of each independent one
  double *tree_pref;           // (njoint x 4) Euler parameters of A1^T A2 at the reference
  double *tree_tref;           // (njoint x 3) A1^T (r2 - r1) at the reference
  double *tree_theta_ref;      // (njoint) joint coordinate at the reference
  double *tree_y;              // (2 ndof) theta, thetadot of the state held now (integrated)
  double *tree_y_save;         // (2 ndof) at the step start
  int tree_aba;                // intermediate stages by the articulated-body algorithm
  int tree_fast;               // this stage: ABA only (no rows, no W, no multipliers)
  int tree_coords_first;       // tree_coord is a permutation of the coordinates 0..ndof-1
  int *tree_body_joint;        // (nbody) the joint whose child each body is
  int lambda_stale;            // lambda is not the multipliers of the state held now (tree)

  // joint limits on the tree partition (limits.c, issue 11 item 4)
  int lim_on;                  // enforced on this data (model option on, tree partition)
  int lim_n;                   // limited joints with a coordinate in the tree
  int lim_nactive;             // limits held now (lim_state != 0)
  int *lim_joint;              // (nlimit) joint of each limit
  int *lim_dof;                // (nlimit) its independent coordinate (tree_y index)
  int *lim_state;              // (nlimit) -1 held at lower, +1 held at upper, 0 free
  int *lim_set;                // (nlimit) work: limits in the current problem
  double *lim_pre, *lim_post;  // (nlimit) rate before / after the last impulse
  double *lim_minv;            // (nlimit x ndof) columns H^-1 e_i of the current problem
  double *lim_w;               // (nlimit x nlimit) local-dynamics matrix W
  double *lim_l;               // (nlimit x nlimit) Cholesky factor of W's pushing block
  int *lim_in;                 // (nlimit) 1 for the limits in the pushing set
  double *lim_b, *lim_x;       // (nlimit) LCP right-hand side and solution
  double *lim_u;               // (nlimit) approaching rates before the impulses
  double *lim_acc;             // (ndof) free accelerations
  double *lim_qfrc;            // (nv) applied forces saved during the columns

  // couplers on the tree partition (coupler.c): always-active rows G = e_f - mult e_l
  int cpl_on;                  // held on this data (tree partition)
  int *cpl_dof;                // (ncoupler x 2) follower, leader independent coordinate
  double *cpl_minv;            // (ncoupler x ndof) columns H^-1 G^T at the current stage
  double *cpl_w;               // (ncoupler x ncoupler) W = G H^-1 G^T, then its Cholesky factor
  double *cpl_acc;             // (ndof) accelerations without the couplers' forces
  double *cpl_qfrc;            // (nv) applied forces saved during the columns
  double *cpl_rhs;             // (ncoupler) work
  double *cpl_force;           // (ncoupler) joint force on the follower at the last hold (the
                               // leader takes -mult times it)

  // dense (nq x nq) work for partition rebuilds and the QR partition (issue 7)
  double *qr_work;
  int *iwork;                  // (2 nq)

  // integrator state
  double *y;                   // (2 ndof) v, vdot at step start
  double *ystage;              // (2 ndof)
  double *k;                   // (8 x 2 ndof) RK4 stages k1..k4, ABM history f_n..f_n-3
  double *ysum;                // (2 ndof)
  double *q_save;              // (nq) state at step start
  double *qd_save;             // (nq)
  int abm_count;               // valid history entries
  int acc_valid;               // qdd/xdd valid for the current state and inputs

  // outputs
  double energy_kin, energy_pot;
  double res_pos, res_vel;

  pt_counters counters;
  void *buffer;
  int dense;                   // the buffer holds the dense Cartesian-partition work (data.c)

  // hybrid LU/QR partitioning (issue 7, src/qr_partition.c, seed hybrid eq. 4-9)
  int part_mode;               // PT_MODE_HYBRID, PT_MODE_LU, PT_MODE_QR (partita.h)
  double *qr_ref;              // (nq) q at the QR build: z = Q2^T (q - qr_ref)
  double *qr_q2;               // (nq x ndof) orthonormal tangent basis Q2, column-major
  double *qr_b;                // (nq x nq) LU of B = [Phi^F_q; Q2^T], column-major; build work
  double *qr_n;                // (nq x ndof) Q2bar = B^-1 [0; I], the updated null space
  double *qr_nx;               // (nv x ndof) Q2bar in velocities x, then M Q2bar
  double *qr_vec;              // (nq) work
  double *qr_lwork;            // (64 nq + 64) LAPACK work
  int *qr_ipiv;                // (nq) pivots of B
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
  double *fb_a;                // (nv x nv) dense fallback for a singular W: J^T, then Q
  double *fb_b;                // (nv x nv) M Q2, then Q2^T M Q2
  int *fb_jpvt;                // (nv)
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
// motion.c
void pt_motion_eval(const pt_model *m, int i, double t, double f[3]);
void pt_motion_rows(const pt_model *m, pt_data *d);
// measure.c: value (unwrapped), Jacobian (12) and quadratic term Jdot x of a coordinate
void pt_measure(const pt_model *m, const pt_data *d, int i, double *value, double jac[12],
                double *jdotx);
double pt_jac_dot_x(const pt_data *d, const int body[2], const double jac[12]);
void pt_measure_all(const pt_model *m, pt_data *d);          // coord, coord_rate, coord_acc
void pt_measure_jac(const pt_model *m, const pt_data *d, int i, double jac[12]);  // J only
void pt_measure_from(const pt_model *m, pt_data *d, int first);  // coordinates first..ncoord-1
// force.c: qfrc (applied + gyroscopic) and potential energy
void pt_forces(const pt_model *m, pt_data *d);
double pt_potential(const pt_model *m, const pt_data *d);
// Kinetic energy of the bodies at the velocities d->x (output.c).
double pt_kinetic(const pt_model *m, const pt_data *d);
void pt_apply_coord_force(const pt_data *d, int b1, int b2, const double jac[12], double f,
                          double *qfrc);
// dynamics.c: accelerations and multipliers from W lambda = J M^-1 Q - gamma
int pt_accelerations(const pt_model *m, pt_data *d);
int pt_w_factor(const pt_model *m, pt_data *d);
void pt_ldl_pattern(const pt_model *m, pt_data *d);          // once per data
void pt_w_solve(const pt_model *m, pt_data *d, double *b);
void pt_minv_jt(const pt_model *m, const pt_data *d, const double *lam, double *out);
// partition.c
int pt_partition_build(const pt_model *m, pt_data *d);
int pt_solve_positions(const pt_model *m, pt_data *d, int maxit);
int pt_solve_velocities(const pt_model *m, pt_data *d);
void pt_partition_free(pt_data *d);
void pt_jq_rows(const pt_model *m, pt_data *d);
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
void pt_kin_inertias(const pt_model *m, pt_data *d, int inv);
int pt_tree_lambda_fits(const pt_model *m);
void pt_tree_lambda(const pt_model *m, pt_data *d);
void pt_tree_reactions(const pt_model *m, const pt_data *d, double *reaction);
void pt_lambda(const pt_model *m, pt_data *d);  // lambda of the state held now
void pt_tree_positions(const pt_model *m, pt_data *d, const double *theta);
void pt_tree_velocities(const pt_model *m, pt_data *d, const double *rate);
void pt_tree_coords(const pt_model *m, const pt_data *d, double *theta, double *rate,
                    double *acc);
int pt_tree_outputs(const pt_model *m, pt_data *d);
// limits.c
void pt_limits_init(const pt_model *m, pt_data *d);
void pt_limits_clear(pt_data *d);
int pt_limits_hold(const pt_model *m, pt_data *d, const double *rate);
int pt_limits_after_step(const pt_model *m, pt_data *d, double *y);
// coupler.c
void pt_couplers_init(const pt_model *m, pt_data *d);
int pt_couplers_prepare(const pt_model *m, pt_data *d, const double *rate);
void pt_couplers_project(const pt_model *m, const pt_data *d, double *v, int stride, int ncol);
void pt_couplers_hold(const pt_model *m, pt_data *d, const double *rate, const double *acc);
int pt_tree_hold(const pt_model *m, pt_data *d, const double *rate);
int pt_couplers_after_step(const pt_model *m, pt_data *d, double *y);
void pt_couplers_fix(const pt_model *m, double *y, int n, const int *dof);
// assemble.c
int pt_assemble(const pt_model *m, pt_data *d, const pt_assign *pos, int npos,
                const pt_assign *vel, int nvel, double *moved, pt_error *err);
// integrate.c
int pt_eval(const pt_model *m, pt_data *d);                  // full evaluation at (q, qd, t)
// output.c
void pt_outputs(const pt_model *m, pt_data *d);
// data.c
void pt_qd_from_x(const pt_model *m, pt_data *d);
// Gives d the dense work of the Cartesian partitions (LU of Phi_u, QR partition, dense
// fallback) if it lacks it (a tree's data): one allocation and copy, never inside pt_step.
int pt_data_dense(const pt_model *m, pt_data *d);

// visual.c: shapes into body frames (pt_model_compile), mesh files through the search path
// (the loaders), and which mesh files a viewer can draw.
int pt_visuals_build(pt_model *m, const pt_spec *s, pt_error *err);
void pt_spec_resolve_meshes(pt_spec *s, const pt_load_options *opt);
// load_urdf.c's hook: the <visual> elements of one <link> (src/visual_urdf.c). R, p: the
// link frame at the zero configuration (x_global = R x_link + p); body: the body carrying it.
struct _xmlNode;
int pt_urdf_link_visuals(const struct _xmlNode *link, const struct _xmlNode *robot,
                         const double R[9], const double p[3], const char *body,
                         pt_spec *s, pt_error *err);

#endif
