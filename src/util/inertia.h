// inertia.h: is a rotational inertia physical, and the nearest one that is (inertia.c).
// Inertias are [Ixx Iyy Izz Ixy Ixz Iyz] (tensor entries, as in pt_spec_body).
#ifndef PT_INERTIA_H
#define PT_INERTIA_H

// Relative tolerance of the checks: a principal moment may be below 0, or a sum of two below
// the third, by this fraction of the largest moment (what 6 printed digits can lose).
#define PT_INERTIA_TOL 1e-6

typedef enum {
  PT_INERTIA_OK = 0,
  PT_INERTIA_NOT_PSD,       // a principal moment is negative
  PT_INERTIA_TRIANGLE,      // A + B < C for principal moments A, B, C
  PT_INERTIA_NOT_FINITE
} pt_inertia_status;

// Principal moments (ascending) into lam, and whether they are those of a mass distribution.
pt_inertia_status pt_inertia_check(const double J[6], double lam[3]);

// J becomes the nearest physical inertia (Frobenius norm: the same principal axes, the
// principal moments projected onto {A + B >= C for every order}) with every principal moment
// at least `floor` (> 0 makes it positive definite). 0 on success, -1 if J is not finite.
int pt_inertia_balance(double J[6], double floor);

// Principal moments lam and axes V of a symmetric 3x3 inertia T (row-major), by LAPACK's
// dsyev: V (row-major) holds the axes in its columns, a proper rotation, ordered and signed
// to lie nearest the frame's own axes (column k nearest axis k, V[k][k] >= 0), so that a
// diagonal T gives V = identity and lam its diagonal in order. 0, or -1 if LAPACK fails.
int pt_inertia_axes(const double T[9], double lam[3], double V[9]);

#endif
