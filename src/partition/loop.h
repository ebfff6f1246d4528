// loop.h: closed loops in joint coordinates (issue 23).
//
// Generalized coordinate partitioning (Wehage and Haug) works in any coordinates. Here the
// coordinates of a closed-loop model are those of a spanning tree: the joint coordinates of
// its revolute, prismatic, universal and fixed joints from the ground (compile/loops.c), plus the
// Cartesian coordinates (r, Euler parameters) of the bodies the tree does not reach (the
// platform of a parallel robot hung on spherical joints). The rows of the other joints ("cut"
// joints) and the motions close the loops; an independent subset of them is kept at load.
//   s (nls): position coordinates, tree coordinates then 7 per floating body;
//   w (nlw): velocity coordinates, tree coordinate rates then (rdot, omega) per floating body;
//   G: the kept cut rows' Jacobian, G_w in w (dynamics), G_s in s with the floating bodies'
//      normalisation rows (partition, positions, velocities).
// Forward kinematics gives every body's q and x from s and sd exactly (loop_kin.c); the
// equations of motion are M(s) wdd = Q - G_w^T lambda, G_w wdd = gamma, with M the joint-space
// inertia (composite rigid bodies, Featherstone), factored as L^T D L along the tree, and the
// multipliers from the small Schur complement S = G_w M^-1 G_w^T (loop_dyn.c), sparse and
// banded along the loops. The partitions (loop_partition.c) are those of partition.h in these
// coordinates: LU (v a subset of s, u by Newton on the cut rows with the sparse LU of G_u) and
// QR (tangent coordinates z = Q2^T (s - s_ref) with the sparse LU of B = [G_s; Q2^T]).
#ifndef PT_LOOP_H
#define PT_LOOP_H

#include "engine.h"
#include "splu.h"

// The hybrid mode integrates a closed-loop model in joint coordinates when the model allows
// (unless the Cartesian partitions stand in for them: d->loop_off, partition_policy.c).
static inline int pt_loop_on(const pt_data *d) {
  return d->model->loop_ok && d->part_mode == PT_MODE_HYBRID && !d->loop_off;
}

// ---- compile/loops.c builds a model's loop structure at load (pt_compile_loops) -------------

// ---- loop_kin.c: kinematics and cut rows ----------------------------------------------------
void pt_loop_positions(const pt_model *m, pt_data *d);   // q, rot of every body from loop_s
void pt_loop_subspaces(const pt_model *m, pt_data *d);   // loop_S (positions evaluated)
void pt_loop_velocities(const pt_model *m, pt_data *d);  // x, qd from loop_sd
// The cut joints' rows and the motion rows: values only (full 0) or with Jacobian, gamma, nu.
void pt_loop_rows(const pt_model *m, pt_data *d, int full);
// Largest |value| of the position rows (kept cut rows, normalisation), their values in phi
// (nlcs; may be NULL). Rows evaluated.
double pt_loop_residual(const pt_model *m, const pt_data *d, double *phi);
// G on the rows' supports (w space), the floating bodies' q blocks, then G_s (rows and
// subspaces evaluated at the current positions).
void pt_loop_jacobian(const pt_model *m, pt_data *d);
// Right-hand sides of the kept rows in joint space: gamma - J kappa, nu (rows, velocities and
// pt_loop_bias evaluated).
void pt_loop_rhs(const pt_model *m, pt_data *d);
// loop_s, loop_sd measured in the state held now (q, qd).
void pt_loop_sync(const pt_model *m, pt_data *d);

// ---- loop_dyn.c: equations of motion ---------------------------------------------------------
void pt_loop_bias(const pt_model *m, pt_data *d);        // kappa (x space), spatial bias acc.
void pt_loop_inertia(const pt_model *m, pt_data *d);     // joint-space inertia in loop_m
// qfrc by pt_forces but for the joint actuators on tree coordinates, which pt_loop_gen_forces
// adds along their coordinates.
void pt_loop_forces(const pt_model *m, pt_data *d);
// Q = T^T (qfrc - M kappa) plus the tree coordinates' actuators, in loop_qb; records the
// inputs it took (loop_u).
void pt_loop_gen_forces(const pt_model *m, pt_data *d);
// 1 when the inputs changed since pt_loop_gen_forces only on actuators of tree coordinates
// (qfrc stands); never on a model with control elements.
int pt_loop_inputs_on_tree(const pt_model *m, const pt_data *d);
// L^T D L of loop_m, Z, S and its LDL^T. Returns PT_OK, or PT_ESINGULAR when S is singular
// (d->w_singular, w_ratio as for W = J M^-1 J^T on the Cartesian partitions).
int pt_loop_factor(const pt_model *m, pt_data *d);
void pt_loop_solve(const pt_model *m, pt_data *d);       // wdd, lambda with those factors
// The change of Q with the inputs since pt_loop_gen_forces (dq: nlw), the inputs recorded.
void pt_loop_input_change(const pt_model *m, pt_data *d, double *dq);
// wdd, lambda and loop_sdd moved by the response to that change (an inner stage at the held
// state whose inputs changed only on tree coordinates; xdd and qdd stay).
void pt_loop_solve_input_change(const pt_model *m, pt_data *d);
// y += M x for the joint-space inertia in loop_m (not factored).
void pt_loop_mul_m(const pt_model *m, const pt_data *d, const double *x, double *y);
// xdd, qdd of every body and loop_sdd from loop_wdd.
void pt_loop_outputs(const pt_model *m, pt_data *d);
// loop_sdd alone from loop_wdd.
void pt_loop_sdd(const pt_model *m, pt_data *d);

// ---- loop_partition.c ------------------------------------------------------------------------
// The views of the two sparse LU workspaces (splu.h) held in the data.
pt_splu pt_loop_lu_view(const pt_model *m, pt_data *d);
pt_splu pt_loop_qr_view(const pt_model *m, pt_data *d);
// The names of the independent coordinates of the LU partition (pt_independent).
int pt_loop_independent(const pt_model *m, const pt_data *d, const char **names, int max);
// For the linearization's choice of states: an LU partition built at d's state (q, qd) and
// the null space of G_s there, N = [-G_u^-1 G_v; I] (nls x ndof, column-major, s's numbering)
// in d->loop_n. Returns PT_OK, or the build's error (a singular configuration).
int pt_loop_null_space(const pt_model *m, pt_data *d);
// A coordinate's gradient in s (gs: nls) from its x-space row jx (nv), at d's positions (the
// partition built there).
void pt_loop_grad_s(const pt_model *m, const pt_data *d, const double *jx, double *gs);

#endif
