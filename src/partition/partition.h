// partition.h: the Cartesian partitions behind one interface (issue 10, "Restructure").
//
// The integrator (integrate.c) integrates ndof independent coordinates y and their rates; a
// partition says what they are and how the dependent part of the state follows from them:
//   LU (partition.c, seed gcp eq. 4-16): y = v, the independent subset of q; u by Newton on
//      Phi(u, v, t) = 0 with the cached LU of Phi_u, udot from Phi_u udot = nu - Phi_v vdot,
//      accelerations from W = J M^-1 J^T (dynamics.c);
//   QR (qr_partition.c, seed hybrid eq. 4-9): y = z = Q2^T (q - q_ref), the tangent
//      coordinates; q by Newton on [Phi^F; Q2^T (q - q_ref) - z], qd from B qd = [nu; zd],
//      accelerations from the same B.
// Which partition is active, and when it is rebuilt or switched, is partition_policy.c's
// decision (d->part_method). A tree in its joint coordinates (tree.c) is not one of these:
// forward kinematics replaces Newton there.
#ifndef PT_PARTITION_H
#define PT_PARTITION_H

#include "engine.h"
#include "loop.h"  // pt_loop_on

typedef struct {
  const char *name;  // "LU", "QR"
  // A new partition at the current (consistent) q; makes it the active method. Allocates
  // nothing (but a tree's dense work, once). Counted by the caller.
  int (*build)(const pt_model *m, pt_data *d);
  // y = (ndof coordinates, ndof rates) -> q, qd: Newton for the positions (from the q held
  // now, at most maxit iterations), then the velocities. Returns Newton's iterations, or < 0.
  int (*recover)(const pt_model *m, pt_data *d, const double *y, int maxit);
  // Accelerations (xdd, qdd) and multipliers at a state whose kinematics, rows and forces
  // are evaluated. Returns PT_OK or < 0.
  int (*accelerations)(const pt_model *m, pt_data *d);
  // The independent coordinates of the state held now: y, yd, ydd (each may be NULL; ydd
  // from qdd).
  void (*coords)(const pt_model *m, const pt_data *d, double *y, double *yd, double *ydd);
  // Rows, forces and accelerations at the state recover left (NULL: kinematics from q, every
  // row, forces, then accelerations, as pt_eval).
  int (*evaluate)(const pt_model *m, pt_data *d);
  // Moves the state held now on by tau along its Taylor expansion, Newton's starting point
  // for a stage tau later (NULL: q += tau qd + tau^2 qdd / 2).
  void (*predict)(const pt_model *m, pt_data *d, double tau);
  // Takes the partition's own coordinates from the state held now, q and qd (NULL: it reads
  // q and qd directly).
  void (*sync)(const pt_model *m, pt_data *d);
  // QR partitions: the share of the velocity in the reference tangent space (seed hybrid,
  // step 12); 1 at rest.
  double (*alpha)(const pt_model *m, const pt_data *d);
} pt_partition_class;

extern const pt_partition_class pt_partition_lu;  // partition.c
extern const pt_partition_class pt_partition_qr;  // qr_partition.c
// The same two in the joint coordinates of a closed loop (loop_partition.c, loop.h).
extern const pt_partition_class pt_partition_loop_lu;
extern const pt_partition_class pt_partition_loop_qr;

// The LU and the QR partition of d: in joint coordinates when the hybrid mode integrates a
// closed loop that way (pt_loop_on), else Cartesian.
static inline const pt_partition_class *pt_partition_lu_of(const pt_data *d) {
  return pt_loop_on(d) ? &pt_partition_loop_lu : &pt_partition_lu;
}
static inline const pt_partition_class *pt_partition_qr_of(const pt_data *d) {
  return pt_loop_on(d) ? &pt_partition_loop_qr : &pt_partition_qr;
}

// The active partition.
static inline const pt_partition_class *pt_partition_of(const pt_data *d) {
  return d->part_method == PT_PART_QR ? pt_partition_qr_of(d) : pt_partition_lu_of(d);
}

// Newton's tolerance on the constraint values: PT_TOL_NEWTON times the largest body position
// (at least 1 m) (partition.c).
double pt_newton_tol(const pt_model *m, const pt_data *d);
// Newton's verdict after iteration `it` with the residual err: 1 when it is over, with *rc the
// iterations taken (converged: counted in d) or PT_EDIVERGED (not finite, or maxit reached);
// 0 to go on (partition.c).
int pt_newton_done(pt_data *d, double err, double tol, int it, int maxit, int *rc);

// Joint limits on closed loops (loop_limits.c): the held limits' reactions at an evaluated
// stage, and the limits at the end of a step.
int pt_loop_limits_hold(const pt_model *m, pt_data *d, const pt_partition_class *p);
int pt_loop_limits_after_step(const pt_model *m, pt_data *d, const pt_partition_class *p,
                              double *y);

// ---- the partition layer's entries for state.c and the layers above (compile, analysis) ------
// partition.c: the LU partition built and used directly (equilibrium, model compilation)
int pt_partition_build(const pt_model *m, pt_data *d);
int pt_solve_positions(const pt_model *m, pt_data *d, int maxit);
int pt_solve_velocities(const pt_model *m, pt_data *d);
void pt_partition_free(pt_data *d);  // forgets the cached partition (and the tree's held state)
void pt_jq_rows(const pt_model *m, pt_data *d);
// qr_partition.c: accelerations through W (dynamics.c), or the dense solve at a singular W
int pt_accelerations(const pt_model *m, pt_data *d);
// loop_dyn.c: the multipliers of the state held now (lambda), when a step left them stale
void pt_lambda(const pt_model *m, pt_data *d);
// integrate.c: full evaluation at a consistent (q, qd, t)
int pt_eval(const pt_model *m, pt_data *d);
// assemble.c: a consistent state around given coordinate values and rates
int pt_assemble(const pt_model *m, pt_data *d, const pt_assign *pos, int npos,
                const pt_assign *vel, int nvel, double *moved, pt_error *err);
int pt_assemble_positions(const pt_model *m, pt_data *d, const pt_assign *pos, int npos,
                          int use_all, double *moved, pt_error *err);
int pt_assemble_velocities(const pt_model *m, pt_data *d, const pt_assign *vel, int nvel,
                           pt_error *err);

#endif
