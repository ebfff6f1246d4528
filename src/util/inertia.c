// inertia.c: physical rotational inertias (docs/urdf.md, "Inertias that are not physical").
//
// The principal moments A, B, C of a mass distribution are >= 0 and satisfy the triangle
// inequalities A + B >= C (for every order): C = integral of (x^2 + y^2) dm <= A + B. An
// inertia that breaks them cannot come from any body. The repair keeps the principal axes and
// moves the moments to the nearest point of that convex cone (the Frobenius-nearest physical
// tensor, since the norm is invariant under the common rotation), then raises any moment below
// a floor so that the body has a positive definite inertia.
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "inertia.h"
#include "tolerances.h"

// Eigen-decomposition: lam ascending, V row-major with the eigenvectors in its columns.
static int eig3(const double J[6], double lam[3], double V[9]) {
  V[0] = J[0], V[1] = J[3], V[2] = J[4];
  V[3] = J[3], V[4] = J[1], V[5] = J[5];
  V[6] = J[4], V[7] = J[5], V[8] = J[2];
  return LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', 3, V, 3, lam) == 0 ? 0 : -1;
}

pt_inertia_status pt_inertia_check(const double J[6], double lam[3]) {
  lam[0] = lam[1] = lam[2] = 0;
  for (int k = 0; k < 6; k++)
    if (!isfinite(J[k])) return PT_INERTIA_NOT_FINITE;
  double V[9];
  if (eig3(J, lam, V)) return PT_INERTIA_NOT_FINITE;
  const double tol = PT_INERTIA_TOL * fmax(fabs(lam[0]), fabs(lam[2]));
  if (lam[0] < -tol) return PT_INERTIA_NOT_PSD;
  if (lam[0] + lam[1] < lam[2] - tol) return PT_INERTIA_TRIANGLE;  // ascending: the only one
  return PT_INERTIA_OK;
}

// Rows of the cone's constraints a_k . lam >= 0 (a_k . lam = lam_i + lam_j - lam_k).
static const double cone[3][3] = {{-1, 1, 1}, {1, -1, 1}, {1, 1, -1}};

// x = the projection of l onto {a_k . x = 0 for k in the subset `mask`}.
static void project_face(double x[3], const double l[3], int mask) {
  int rows[3], n = 0;
  for (int k = 0; k < 3; k++)
    if (mask & (1 << k)) rows[n++] = k;
  memcpy(x, l, 3 * sizeof(double));
  if (n == 3) {  // the three rows are independent: only 0
    x[0] = x[1] = x[2] = 0;
    return;
  }
  if (n == 0) return;
  // x = l - A^T (A A^T)^-1 A l (Eq. of the orthogonal projection onto the null space of A)
  double G[2][2], r[2], y[2];
  for (int a = 0; a < n; a++) {
    r[a] = 0;
    for (int c = 0; c < 3; c++) r[a] += cone[rows[a]][c] * l[c];
    for (int b = 0; b < n; b++) {
      G[a][b] = 0;
      for (int c = 0; c < 3; c++) G[a][b] += cone[rows[a]][c] * cone[rows[b]][c];
    }
  }
  if (n == 1) {
    y[0] = r[0] / G[0][0];
  } else {
    const double det = G[0][0] * G[1][1] - G[0][1] * G[1][0];
    y[0] = (G[1][1] * r[0] - G[0][1] * r[1]) / det;
    y[1] = (G[0][0] * r[1] - G[1][0] * r[0]) / det;
  }
  for (int a = 0; a < n; a++)
    for (int c = 0; c < 3; c++) x[c] -= cone[rows[a]][c] * y[a];
}

int pt_inertia_balance(double J[6], double floor) {
  double lam[3], V[9];
  for (int k = 0; k < 6; k++)
    if (!isfinite(J[k])) return -1;
  if (eig3(J, lam, V)) return -1;
  // The projection onto a polyhedral cone lies on one of its faces: the nearest feasible
  // candidate among the projections onto all 8 faces is it.
  double best[3] = {0, 0, 0}, bestd = INFINITY;
  const double scale = fmax(fabs(lam[0]), fabs(lam[2]));
  for (int mask = 0; mask < 8; mask++) {
    double x[3];
    project_face(x, lam, mask);
    int feasible = 1;
    for (int k = 0; k < 3; k++)
      feasible &= cone[k][0] * x[0] + cone[k][1] * x[1] + cone[k][2] * x[2] >= -PT_TOL_INERTIA_CONE * scale;
    const double d = (x[0] - lam[0]) * (x[0] - lam[0]) + (x[1] - lam[1]) * (x[1] - lam[1]) +
                     (x[2] - lam[2]) * (x[2] - lam[2]);
    if (feasible && d < bestd) {
      bestd = d;
      memcpy(best, x, sizeof(best));
    }
  }
  for (int k = 0; k < 3; k++) best[k] = fmax(best[k], floor);
  // J = V diag(best) V^T
  double M[9];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++)
      M[3 * r + c] = V[3 * r] * best[0] * V[3 * c] + V[3 * r + 1] * best[1] * V[3 * c + 1] +
                     V[3 * r + 2] * best[2] * V[3 * c + 2];
  J[0] = M[0], J[1] = M[4], J[2] = M[8];
  J[3] = 0.5 * (M[1] + M[3]), J[4] = 0.5 * (M[2] + M[6]), J[5] = 0.5 * (M[5] + M[7]);
  return 0;
}

int pt_inertia_axes(const double T[9], double lam[3], double V[9]) {
  double A[9], w[3];
  memcpy(A, T, sizeof(A));
  if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', 3, A, 3, w) != 0) return -1;
  // eigenvector j (column j of A, ascending w) goes to column p[j] of V: the permutation
  // that keeps each axis nearest a frame axis (the largest sum of |A[p[j]][j]|)
  static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1},
                                  {2, 1, 0}};
  int best = 0;
  double best_sum = -1;
  for (int k = 0; k < 6; k++) {
    double sum = 0;
    for (int j = 0; j < 3; j++) sum += fabs(A[3 * perms[k][j] + j]);
    if (sum > best_sum) best_sum = sum, best = k;
  }
  for (int j = 0; j < 3; j++) {
    const int c = perms[best][j];
    const double sign = A[3 * c + j] < 0 ? -1.0 : 1.0;
    lam[c] = w[j];
    for (int r = 0; r < 3; r++) V[3 * r + c] = sign * A[3 * r + j];
  }
  double det = V[0] * (V[4] * V[8] - V[5] * V[7]) - V[1] * (V[3] * V[8] - V[5] * V[6]) +
               V[2] * (V[3] * V[7] - V[4] * V[6]);
  if (det < 0)   // a proper rotation
    for (int r = 0; r < 3; r++) V[3 * r + 2] = -V[3 * r + 2];
  return 0;
}
