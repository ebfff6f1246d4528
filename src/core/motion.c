// motion.c: prescribed motions (driving constraints) Phi = c(q) - f(t) = 0.
// A motion row has Jacobian J_c, velocity right-hand side nu = f'(t) (= -Phi_t) and
// acceleration right-hand side gamma = f''(t) - Jdot_c x (seed gcp eq. 11-12).
// Every profile gives f, f' and f'' analytically.
#include "engine.h"
#include "ptu.h"

// Natural cubic spline through (t_i, v_i): f on [t_i, t_i+1] from the second derivatives
// M_i (data holds (t, v, M) triples); linear extrapolation with the end slopes outside.
static void spline_eval(const double *tvm, int n, double t, double f[3]) {
  const double *a, *b;
  if (t <= tvm[0] || t >= tvm[3 * (n - 1)]) {
    int left = t <= tvm[0];
    a = left ? tvm : tvm + 3 * (n - 2);
    b = a + 3;
    double h = b[0] - a[0];
    double slope;
    if (left)
      slope = (b[1] - a[1]) / h - h * (2 * a[2] + b[2]) / 6;
    else
      slope = (b[1] - a[1]) / h + h * (a[2] + 2 * b[2]) / 6;
    const double *e = left ? a : b;
    f[0] = e[1] + slope * (t - e[0]);
    f[1] = slope;
    f[2] = 0;
    return;
  }
  int lo = 0, hi = n - 1;
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (tvm[3 * mid] <= t)
      lo = mid;
    else
      hi = mid;
  }
  a = tvm + 3 * lo;
  b = tvm + 3 * hi;
  double h = b[0] - a[0];
  double A = (b[0] - t) / h, B = (t - a[0]) / h;
  f[0] = A * a[1] + B * b[1] + ((A * A * A - A) * a[2] + (B * B * B - B) * b[2]) * h * h / 6;
  f[1] = (b[1] - a[1]) / h - (3 * A * A - 1) * h * a[2] / 6 + (3 * B * B - 1) * h * b[2] / 6;
  f[2] = A * a[2] + B * b[2];
}

void pt_motion_eval(const pt_model *m, int i, double t, double f[3]) {
  const double *par = m->motion_par + 8 * i;
  const double *data = m->motion_data + m->motion_data_adr[i];
  const int n = m->motion_data_num[i];
  switch ((pt_profile_type)m->motion_profile[i]) {
  case PT_PROFILE_CONSTANT:
    f[0] = par[0];
    f[1] = f[2] = 0;
    return;
  case PT_PROFILE_SINE: {  // offset + amplitude sin(omega t + phase)
    double s = sin(par[2] * t + par[3]), c = cos(par[2] * t + par[3]);
    f[0] = par[0] + par[1] * s;
    f[1] = par[1] * par[2] * c;
    f[2] = -par[1] * par[2] * par[2] * s;
    return;
  }
  case PT_PROFILE_POLYNOMIAL:  // Horner for the value and both derivatives
    f[0] = f[1] = f[2] = 0;
    for (int k = n - 1; k >= 0; k--) {
      f[2] = f[2] * t + 2 * f[1];
      f[1] = f[1] * t + f[0];
      f[0] = f[0] * t + data[k];
    }
    return;
  case PT_PROFILE_STEP: {  // cubic, C1 (as Adams STEP)
    double t0 = par[0], v0 = par[1], t1 = par[2], v1 = par[3];
    if (t <= t0 || t >= t1) {
      f[0] = t <= t0 ? v0 : v1;
      f[1] = f[2] = 0;
      return;
    }
    double T = t1 - t0, u = (t - t0) / T, dv = v1 - v0;
    f[0] = v0 + dv * u * u * (3 - 2 * u);
    f[1] = dv * 6 * u * (1 - u) / T;
    f[2] = dv * (6 - 12 * u) / (T * T);
    return;
  }
  case PT_PROFILE_TABLE:
    spline_eval(data, n, t, f);
    return;
  }
  f[0] = f[1] = f[2] = 0;
}

void pt_motion_rows(const pt_model *m, pt_data *d) {
  for (int i = 0; i < m->nmotion; i++) {
    const int r = m->nrow_joint + i;
    double f[3], c, jdx;
    pt_measure(m, d, m->motion_coord[i], &c, d->row_jac + 12 * r, &jdx);
    pt_motion_eval(m, i, d->time, f);
    d->row_phi[r] = c - f[0];
    d->row_nu[r] = f[1];
    d->row_gamma[r] = f[2] - jdx;
  }
}
