// ptu.h: small dense maths for 3-vectors, 3x3 matrices (row-major) and Euler parameters.
// Output first, inputs after, sizes last (MuJoCo style).
#ifndef PTU_H
#define PTU_H

#include <math.h>
#include <string.h>

static inline double ptu_dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void ptu_cross3(double res[3], const double a[3], const double b[3]) {
  double r0 = a[1] * b[2] - a[2] * b[1];
  double r1 = a[2] * b[0] - a[0] * b[2];
  double r2 = a[0] * b[1] - a[1] * b[0];
  res[0] = r0;
  res[1] = r1;
  res[2] = r2;
}

static inline double ptu_norm3(const double a[3]) { return sqrt(ptu_dot3(a, a)); }

static inline void ptu_add3(double res[3], const double a[3], const double b[3]) {
  for (int i = 0; i < 3; i++) res[i] = a[i] + b[i];
}

static inline void ptu_sub3(double res[3], const double a[3], const double b[3]) {
  for (int i = 0; i < 3; i++) res[i] = a[i] - b[i];
}

static inline void ptu_scl3(double res[3], const double a[3], double s) {
  for (int i = 0; i < 3; i++) res[i] = a[i] * s;
}

static inline void ptu_copy(double *res, const double *a, int n) {
  memcpy(res, a, sizeof(double) * (size_t)n);
}

static inline void ptu_zero(double *res, int n) { memset(res, 0, sizeof(double) * (size_t)n); }

// res = A x, A (3x3) row-major
static inline void ptu_mul_mat_vec3(double res[3], const double A[9], const double x[3]) {
  double r0 = A[0] * x[0] + A[1] * x[1] + A[2] * x[2];
  double r1 = A[3] * x[0] + A[4] * x[1] + A[5] * x[2];
  double r2 = A[6] * x[0] + A[7] * x[1] + A[8] * x[2];
  res[0] = r0;
  res[1] = r1;
  res[2] = r2;
}

// res = A^T x
static inline void ptu_mul_matT_vec3(double res[3], const double A[9], const double x[3]) {
  double r0 = A[0] * x[0] + A[3] * x[1] + A[6] * x[2];
  double r1 = A[1] * x[0] + A[4] * x[1] + A[7] * x[2];
  double r2 = A[2] * x[0] + A[5] * x[1] + A[8] * x[2];
  res[0] = r0;
  res[1] = r1;
  res[2] = r2;
}

// res = A B (3x3)
static inline void ptu_mul_mat3(double res[9], const double A[9], const double B[9]) {
  double t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      t[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
  memcpy(res, t, sizeof(t));
}

// res = A^T B (3x3)
static inline void ptu_mul_matT_mat3(double res[9], const double A[9], const double B[9]) {
  double t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      t[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
  memcpy(res, t, sizeof(t));
}

// res = A B A^T (3x3)
static inline void ptu_congruence3(double res[9], const double A[9], const double B[9]) {
  double t[9], At[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) At[3 * i + j] = A[3 * j + i];
  ptu_mul_mat3(t, A, B);
  ptu_mul_mat3(res, t, At);
}

// Hamilton product of Euler parameters: A(res) = A(a) A(b).
static inline void ptu_quat_mul(double res[4], const double a[4], const double b[4]) {
  res[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  res[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  res[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  res[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

// Rotation matrix of Euler parameters p = (e0, e): A = (e0^2 - e.e) I + 2 e e^T + 2 e0 e~
// (Haug, eq. 6.2.x). Global = A * body.
static inline void ptu_quat2mat(double A[9], const double p[4]) {
  double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
  A[0] = 2 * (e0 * e0 + e1 * e1) - 1;
  A[1] = 2 * (e1 * e2 - e0 * e3);
  A[2] = 2 * (e1 * e3 + e0 * e2);
  A[3] = 2 * (e1 * e2 + e0 * e3);
  A[4] = 2 * (e0 * e0 + e2 * e2) - 1;
  A[5] = 2 * (e2 * e3 - e0 * e1);
  A[6] = 2 * (e1 * e3 - e0 * e2);
  A[7] = 2 * (e2 * e3 + e0 * e1);
  A[8] = 2 * (e0 * e0 + e3 * e3) - 1;
}

// E(p) = [-e, e~ + e0 I] (3x4 row-major): omega (global) = 2 E pdot, pdot = E^T omega / 2.
static inline void ptu_quat_E(double E[12], const double p[4]) {
  double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
  E[0] = -e1; E[1] = e0;  E[2] = -e3;  E[3] = e2;
  E[4] = -e2; E[5] = e3;  E[6] = e0;   E[7] = -e1;
  E[8] = -e3; E[9] = -e2; E[10] = e1;  E[11] = e0;
}

// Euler parameters of a rotation matrix (Shepperd's method, e0 >= 0).
static inline void ptu_mat2quat(double p[4], const double A[9]) {
  double tr = A[0] + A[4] + A[8];
  double v[4] = {tr, A[0], A[4], A[8]};
  int k = 0;
  for (int i = 1; i < 4; i++)
    if (v[i] > v[k]) k = i;
  if (k == 0) {
    double s = 2 * sqrt(1 + tr);
    p[0] = s / 4;
    p[1] = (A[7] - A[5]) / s;
    p[2] = (A[2] - A[6]) / s;
    p[3] = (A[3] - A[1]) / s;
  } else if (k == 1) {
    double s = 2 * sqrt(1 + 2 * A[0] - tr);
    p[0] = (A[7] - A[5]) / s;
    p[1] = s / 4;
    p[2] = (A[1] + A[3]) / s;
    p[3] = (A[2] + A[6]) / s;
  } else if (k == 2) {
    double s = 2 * sqrt(1 + 2 * A[4] - tr);
    p[0] = (A[2] - A[6]) / s;
    p[1] = (A[1] + A[3]) / s;
    p[2] = s / 4;
    p[3] = (A[5] + A[7]) / s;
  } else {
    double s = 2 * sqrt(1 + 2 * A[8] - tr);
    p[0] = (A[3] - A[1]) / s;
    p[1] = (A[2] + A[6]) / s;
    p[2] = (A[5] + A[7]) / s;
    p[3] = s / 4;
  }
  if (p[0] < 0)
    for (int i = 0; i < 4; i++) p[i] = -p[i];
}

// Two unit vectors f, g completing unit h to a right-handed orthonormal triad (f, g, h).
static inline void ptu_perp_frame(double f[3], double g[3], const double h[3]) {
  double a[3] = {1, 0, 0};
  if (fabs(h[0]) > 0.6) {
    a[0] = 0;
    a[1] = 1;
  }
  ptu_cross3(g, h, a);
  double n = ptu_norm3(g);
  ptu_scl3(g, g, 1 / n);
  ptu_cross3(f, g, h);
}

// Rotation vector (axis * angle) of a rotation matrix, angle in [0, pi].
static inline void ptu_mat2rotvec(double v[3], const double R[9]) {
  double p[4];
  ptu_mat2quat(p, R);
  double s = sqrt(p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
  double angle = 2 * atan2(s, p[0]);
  double k = s > 1e-300 ? angle / s : 2.0;
  v[0] = k * p[1];
  v[1] = k * p[2];
  v[2] = k * p[3];
}

#endif
