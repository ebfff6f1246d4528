// tolerances.h: the engine's numerical tolerances, named once (issue 10, "Restructure").
// Relative tolerances multiply a scale the caller states (the largest body position, at
// least 1 m; the largest entry or pivot of the matrix at hand); absolute ones say their unit.
#ifndef PT_TOLERANCES_H
#define PT_TOLERANCES_H

// Newton on the constraint rows (LU partition, QR partition): converged when the update is
// below this fraction of the position scale.
#define PT_TOL_NEWTON 1e-12

// Full-pivoting elimination on Phi_q (choice of dependent coordinates) and the rank of the
// dense fallback's R: a pivot below this fraction of the largest counts as zero.
#define PT_TOL_PIVOT 1e-10

// Factors refused as singular: rcond(Phi_u) of the LU partition (min |U_ii| / max |U_ii|),
// the QR partition's B, the QR build's R (smallest over largest diagonal), the LDL of W
// (smallest over largest pivot).
#define PT_TOL_RCOND_LU 1e-14
#define PT_TOL_RCOND_QR 1e-15
#define PT_TOL_RANK_QR 1e-12
#define PT_TOL_PIVOT_W 1e-14

// The tree partition's self-check (tree.c): rows and joint coordinates reproduced to this
// fraction of the position scale, velocity rows to PT_TOL_TREE_VEL of it (per second).
#define PT_TOL_TREE_POS 1e-10
#define PT_TOL_TREE_VEL 1e-9

// Two points closer than this (m) define no direction (distance coordinates, point springs,
// and their derivatives in the linearization).
#define PT_TOL_COINCIDENT 1e-12

// W = J M^-1 J^T near singular (dynamics.c; the integrator then prefers the QR partition):
// its smallest LDL pivot below this fraction of the largest (PT_TOL_PIVOT_W: singular).
#define PT_TOL_W_NEAR_SINGULAR 1e-9

// Squared velocity norm (|qd|^2) below which a state counts as at rest (QR tangent share).
#define PT_TOL_AT_REST_QD2 1e-20

// Model compilation (compile/): an axis, a direction or an orientation quaternion shorter
// than PT_TOL_LENGTH has none; two axes meant perpendicular are when |a . b| (unit vectors)
// is below PT_TOL_PERPENDICULAR; a joint row is redundant when its pivot in the rank-revealing
// QR of J^T falls below PT_TOL_RANK_ROWS of the first (below PT_TOL_BLOCK_PIVOT of the largest
// row norm the body-block test leaves the decision to that QR); initial positions moved by
// assembly more than PT_TOL_ASSEMBLY_MOVED (m, or Euler-parameter units) are reported.
#define PT_TOL_LENGTH 1e-12
#define PT_TOL_PERPENDICULAR 1e-6
#define PT_TOL_RANK_ROWS 1e-9
#define PT_TOL_BLOCK_PIVOT 1e-6
#define PT_TOL_ASSEMBLY_MOVED 1e-9

// Equilibrium (equilibrium.c): converged when the force residual is below PT_TOL_EQ_FORCE of
// the force scale and the rows below PT_TOL_EQ_POS of the position scale; a Newton that can
// no longer decrease its merit accepts PT_TOL_EQ_FORCE_STUCK / PT_TOL_EQ_POS_STUCK. Singular
// values below PT_TOL_EQ_LSQ_RCOND of the largest are dropped by its least-squares steps; a
// pivot of the stiffness matrix below PT_TOL_EQ_STABILITY of its largest entry counts as
// zero when the negative eigenvalues are counted (stability).
#define PT_TOL_EQ_FORCE 1e-11
#define PT_TOL_EQ_POS 1e-12
#define PT_TOL_EQ_FORCE_STUCK 1e-8
#define PT_TOL_EQ_POS_STUCK 1e-10
#define PT_TOL_EQ_LSQ_RCOND 1e-10
#define PT_TOL_EQ_STABILITY 1e-9

// Inverse dynamics (inverse.c): a Schur-complement pivot below PT_TOL_SCHUR_PIVOT of the
// diagonal J_c M^-1 J_c^T means the coordinate is fixed by the constraints; a kinematically
// driven system's Jacobian is singular when its smallest LU pivot falls below
// PT_TOL_KINEMATIC_PIVOT of its largest entry.
#define PT_TOL_SCHUR_PIVOT 1e-10
// A limit held in a torque request is released when its reaction pulls by more than this
// (N or N m): rounding on a limit that carries nothing does not release it.
#define PT_INVERSE_LIMIT_PULL 1e-12
#define PT_TOL_KINEMATIC_PIVOT 1e-12

// Linearization: a coordinate's pivot below PT_TOL_SELECT_PIVOT of max |J| counts as zero
// when the states are chosen, below PT_TOL_SELECT_BLOCK of the largest remaining entry when
// the internal coordinates are (linearize_select.c); a sparse solve is refused when KLU's
// rcond estimate is below PT_TOL_RCOND_KLU (linearize_system.c).
#define PT_TOL_SELECT_PIVOT 1e-9
#define PT_TOL_SELECT_BLOCK 1e-6
#define PT_TOL_RCOND_KLU 1e-15

// Inertia balancing (inertia.c): a point is inside the cone of physical inertias up to this
// fraction of the largest principal moment (rounding).
#define PT_TOL_INERTIA_CONE 1e-14

// Assembly (assemble.c): positions done below PT_TOL_ASSEMBLE_DONE of the position scale,
// accepted below PT_TOL_ASSEMBLE; velocities done below PT_TOL_ASSEMBLE_VEL of the velocity
// scale, refused above PT_TOL_ASSEMBLE_VEL_BAD; rcond of the least-squares solves (dgelsd).
#define PT_TOL_ASSEMBLE_DONE 1e-13
#define PT_TOL_ASSEMBLE 1e-10
#define PT_TOL_ASSEMBLE_VEL 1e-12
#define PT_TOL_ASSEMBLE_VEL_BAD 1e-8
#define PT_TOL_LSQ_RCOND 1e-12

// Fast motion on the tree partition (integrate.c, spin_substeps): an RK4 step whose angle
// coordinates would turn by more than PT_SPIN_OMEGA_H rad in it, by rate or by acceleration,
// (omega h with omega = max |thetadot| + sqrt(max |thetadd|)) is taken as ceil(omega h /
// PT_SPIN_OMEGA_H) equal substeps, at most PT_SPIN_SUBSTEPS_MAX (the worst step then costs
// that many ordinary ones).
#define PT_SPIN_OMEGA_H 0.5
#define PT_SPIN_SUBSTEPS_MAX 8

// Joint limits (limits.c): a coordinate within PT_TOL_LIMIT_POS of a bound is on it (rad or
// m); compile/initial_state.c's "starts outside its limits" warning uses the same test.
#define PT_TOL_LIMIT_POS 1e-9

// Collision detection (src/collide): a face or an edge of a shape faces a direction when the
// sine of the angle between them is below PT_TOL_COLLIDE_FEATURE (then its points join the
// contact manifold, each with its own exact gap); a cylinder whose axis is within
// PT_TOL_COLLIDE_TILT (sine) of a plane's normal stands on its cap and takes its rim points at
// fixed angles of its own frame; GJK stops when its lower and upper distance bounds agree to
// PT_TOL_GJK of the shapes' size (m/m), EPA when its upper and lower bounds on the depth agree to
// PT_TOL_EPA of it (polytopes get there exactly; curved surfaces converge linearly and may stop
// at a cap or at rounding first, counted as capped only with bounds further apart than
// PT_TOL_EPA_ROUND of the size); two points closer than PT_TOL_COINCIDENT define no normal.
#define PT_TOL_COLLIDE_FEATURE 1e-2
#define PT_TOL_COLLIDE_TILT 1e-6
#define PT_TOL_GJK 1e-12
#define PT_TOL_EPA 1e-9
#define PT_TOL_EPA_ROUND 1e-6

#endif
