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

// Two points closer than this (m) define no direction (distance coordinates, point springs).
#define PT_TOL_COINCIDENT 1e-12

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

#endif
