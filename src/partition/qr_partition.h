// qr_partition.h: the QR tangent-space partition and the dense fallback for a singular W
// (issue 7; seed hybrid eq. 4-9). Internal to the engine.
#ifndef PT_QR_PARTITION_H
#define PT_QR_PARTITION_H

#include "engine.h"

// Eq. (4)-(5): Phi^F_q^T = Q R at the current (consistent) q; keeps Q2 and q_ref = q and makes
// QR the active method. Allocates nothing.
int pt_qr_build(const pt_model *m, pt_data *d);
// Newton for q with the tangent coordinates fixed: Phi^F(q) = 0, Q2^T (q - q_ref) = z.
// Returns the iterations, or < 0.
int pt_qr_positions(const pt_model *m, pt_data *d, const double *z, int maxit);
// Eq. (6): B qd = [nu; zd] with B = [Phi^F_q; Q2^T] at the current q; keeps B's factor.
int pt_qr_velocities(const pt_model *m, pt_data *d, const double *zd);
// Eq. (7)-(9): xdd, qdd, lambda with B's factor (rows and forces evaluated at the state).
int pt_qr_accelerations(const pt_model *m, pt_data *d);
// Tangent coordinates of the current state: z, zd, zdd (from qdd); each may be NULL.
void pt_qr_coords(const pt_model *m, const pt_data *d, double *z, double *zd, double *zdd);
// Share of the velocity in the reference tangent space, |Q2^T qd|^2 / |qd|^2 (seed step 12);
// 1 at rest.
double pt_qr_alpha(const pt_model *m, const pt_data *d);
// Accelerations when W = J M^-1 J^T is singular: rank-revealing QR of J^T (dgeqp3), the null
// space form of eq. (8) for xdd and least squares for lambda. Allocates nothing.
int pt_acc_dense(const pt_model *m, pt_data *d);

#endif
