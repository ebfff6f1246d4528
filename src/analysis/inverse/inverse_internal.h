// inverse_internal.h: the recursive torque-request pass on trees (inverse_tree.c), used by
// inverse.c.
#ifndef PT_INVERSE_INTERNAL_H
#define PT_INVERSE_INTERNAL_H

#include "engine.h"

// Tree layout (4 nbody ints: order, joint, parent, slot) or NULL when m is not a tree without
// motions and removed rows. Allocated once with the result; free() it.
int *pt_inverse_tree_new(const pt_model *m);

// 1 when the request is answered by the pass: a tree and, for every joint, its constraint rows
// and its requested coordinates make six rows. Fills jreq (njoint x 6): the requests of each
// joint, -1 after the last.
int pt_inverse_tree_applies(const pt_model *m, const int *tree, const pt_assign *acc, int nacc,
                            int *jreq);

// Work of the pass: doubles (33 nbody for the blocks and forces, then 14 ncoord for every
// coordinate's Jacobian, Jdot x and value as the caller measures them), ints (6 njoint for
// the requests of each joint, then 12 nbody) and pointers (6 nbody).
#define PT_INVERSE_TREE_NWRK_PASS(m) (33 * (size_t)(m)->nbody)
#define PT_INVERSE_TREE_NWRK(m) (PT_INVERSE_TREE_NWRK_PASS(m) + 14 * (size_t)(m)->ncoord + 1)
#define PT_INVERSE_TREE_NIWRK(m) (12 * (size_t)(m)->nbody + 6 * (size_t)(m)->njoint + 1)
#define PT_INVERSE_TREE_NPTR(m) (6 * (size_t)(m)->nbody + 1)

// Body accelerations xdd (nv), multipliers lam (ncon) and request multipliers mu at d's
// evaluated state (rot, inertia_g, x, rows, qfrc), with meas_jac (ncoord x 12) and meas_jdx
// (ncoord) of every coordinate. 0 when a joint block is (near) singular: the general path then
// decides.
int pt_inverse_tree_solve(const pt_model *m, const pt_data *d, const int *tree,
                          const int *jreq, const pt_assign *acc, const double *meas_jac,
                          const double *meas_jdx, double *wrk, int *iwrk, const double **pb,
                          double *xdd, double *lam, double *mu);

#endif
