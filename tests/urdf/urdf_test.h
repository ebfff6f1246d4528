// urdf_test.h: small helpers shared by the URDF tests (file reading, checks, rotations).
// The rotation helpers work with quaternions, independently of the matrix code in
// src/load/load_urdf.c, so that the tests compare two different computations.
#ifndef URDF_TEST_H
#define URDF_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nfail;

#define CHECK(cond, ...)                                  \
  do {                                                    \
    if (!(cond)) {                                        \
      nfail++;                                            \
      fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                       \
      fprintf(stderr, "\n");                              \
    }                                                     \
  } while (0)

#define CHECK_NEAR(a, b, tol, what)                                                       \
  CHECK(fabs((a) - (b)) <= (tol), "%s: %.17g vs %.17g (diff %.3g > %.1g)", what, (double)(a), \
        (double)(b), fabs((a) - (b)), (double)(tol))

// The whole file, NUL-terminated; NULL if it cannot be read.
static inline char *read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n - 1, f);
    if (n < cap - 1) break;
    char *nb = realloc(buf, 2 * cap);
    if (!nb) free(buf);
    buf = nb;
    cap *= 2;
  }
  fclose(f);
  if (!buf) return NULL;
  buf[n] = '\0';
  *len = n;
  return buf;
}

// Hamilton product r = a b (e0 e1 e2 e3).
static inline void quat_mul(double *r, const double *a, const double *b) {
  double t[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                 a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                 a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                 a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  memcpy(r, t, sizeof(t));
}

// URDF rpy: roll about fixed x, then pitch about fixed y, then yaw about fixed z,
// i.e. q = qz(yaw) qy(pitch) qx(roll).
static inline void quat_rpy(double *q, double roll, double pitch, double yaw) {
  double qx[4] = {cos(roll / 2), sin(roll / 2), 0, 0};
  double qy[4] = {cos(pitch / 2), 0, sin(pitch / 2), 0};
  double qz[4] = {cos(yaw / 2), 0, 0, sin(yaw / 2)};
  quat_mul(q, qz, qy);
  quat_mul(q, q, qx);
}

// r = q v q* (r may alias v).
static inline void quat_rotate(double *r, const double *q, const double *v) {
  double p[4] = {0, v[0], v[1], v[2]}, qc[4] = {q[0], -q[1], -q[2], -q[3]}, t[4];
  quat_mul(t, q, p);
  quat_mul(t, t, qc);
  r[0] = t[1], r[1] = t[2], r[2] = t[3];
}

// Row-major rotation matrix of a (not necessarily unit) quaternion.
static inline void quat_matrix(double *R, const double *qin) {
  double n = sqrt(qin[0] * qin[0] + qin[1] * qin[1] + qin[2] * qin[2] + qin[3] * qin[3]);
  double w = qin[0] / n, x = qin[1] / n, y = qin[2] / n, z = qin[3] / n;
  R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

// A frame as position + quaternion: child = parent * (xyz, rpy).
typedef struct {
  double p[3], q[4];
} tframe;

static inline tframe tframe_mul(tframe a, const double *xyz, const double *rpy) {
  tframe r;
  double qo[4], d[3];
  quat_rpy(qo, rpy[0], rpy[1], rpy[2]);
  quat_rotate(d, a.q, xyz);
  for (int k = 0; k < 3; k++) r.p[k] = a.p[k] + d[k];
  quat_mul(r.q, a.q, qo);
  return r;
}

#endif
