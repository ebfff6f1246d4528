// control_eval.c: evaluating the control elements in their fixed order (issue 26), their
// states' derivatives, and the exact partial derivatives of both with respect to the measured
// quantities, the control states and the input signals, which the linearization joins to the
// mechanism's (Negrut & Ortiz, eq. 10 entering eq. 17 as rows and columns). No allocation:
// every array is the caller's, sized by the model.
#include <math.h>
#include <string.h>

#include "control.h"

// ---- element kernels (shared by the values and the partials) ---------------------------------

static double in_value(const pt_ctl *c, const pt_ctl_io *io, int i, int k) {
  return io->sig[c->in_sig[c->elem_in_adr[i] + k]];
}

// A pid's output before its limit: kp e + x_I + kd (e - x_F) / tf, with x_I the integral
// term's value (x_I' = ki e) and x_F the derivative filter (x_F' = (e - x_F) / tf), so that
// the derivative term is kd s / (tf s + 1) e.
static double pid_raw(const pt_ctl *c, const pt_ctl_io *io, int i, double e) {
  const double *par = io->par + c->elem_par_adr[i];
  const double *x = io->x + c->elem_x_adr[i];
  int f = c->elem_flags[i];
  double u = 0;
  if (f & PT_PID_P) u += par[PT_PAR_PID_KP] * e;
  if (f & PT_PID_I) u += *x++;
  if (f & PT_PID_D) u += par[PT_PAR_PID_KD] * (e - *x) / par[PT_PAR_PID_TF];
  return u;
}

// -1, 0, +1: the side of [lower, upper] that v is on (0 within, bounds included)
static int side_of(double v, double lower, double upper) {
  return v < lower ? -1 : (v > upper ? 1 : 0);
}

static int pid_side(const pt_ctl *c, const pt_ctl_io *io, int i, double raw) {
  double lim = io->par[c->elem_par_adr[i] + PT_PAR_PID_LIMIT];
  return side_of(raw, -lim, lim);
}

// Anti-windup by conditional integration: the integral stops while the output is held at its
// limit and the error would drive it further.
static int pid_windup(const pt_ctl *c, const pt_ctl_io *io, int i, double e) {
  int side = pid_side(c, io, i, pid_raw(c, io, i, e));
  double ki_e = io->par[c->elem_par_adr[i] + PT_PAR_PID_KI] * e;
  return (side > 0 && ki_e > 0) || (side < 0 && ki_e < 0);
}

static const double *tf_data(const pt_ctl *c, int i) { return c->data + c->elem_data_adr[i]; }

// state_space's matrices in data: A (n x n), B (n x m), C (p x n), D (p x m)
static void ss_mats(const pt_ctl *c, int i, const double **A, const double **B,
                    const double **C, const double **D) {
  int n = c->elem_nx[i], m = c->elem_nin[i], p = c->elem_nsig[i];
  *A = c->data + c->elem_data_adr[i];
  *B = *A + n * n;
  *C = *B + n * m;
  *D = *C + p * n;
}

static double signal_value(const pt_ctl *c, pt_ctl_io *io, int s) {
  int i = c->sig_elem[s], o = c->sig_out[s];
  const double *par = io->par + c->elem_par_adr[i];
  const double *x = io->x + c->elem_x_adr[i];
  switch (c->elem_type[i]) {
    case PT_CONTROL_MEASURE:
      return io->meas[c->elem_aux[i]];
    case PT_CONTROL_INPUT:
      return io->in[c->elem_aux[i]];
    case PT_CONTROL_GAIN:
      return par[PT_PAR_GAIN_K] * in_value(c, io, i, 0);
    case PT_CONTROL_SUM: {
      const double *sign = c->data + c->elem_data_adr[i];
      double v = 0;
      for (int k = 0; k < c->elem_nin[i]; k++) v += sign[k] * in_value(c, io, i, k);
      return v;
    }
    case PT_CONTROL_SATURATION: {
      double u = in_value(c, io, i, 0);
      double lo = par[PT_PAR_SAT_LOWER], hi = par[PT_PAR_SAT_UPPER];
      return u < lo ? lo : (u > hi ? hi : u);
    }
    case PT_CONTROL_EXPRESSION:
      return pt_expr_eval(&c->expr[c->elem_expr_adr[i]], io->sig, io->t, io->stack);
    case PT_CONTROL_PID: {
      double raw = pid_raw(c, io, i, in_value(c, io, i, 0));
      double lim = par[PT_PAR_PID_LIMIT];
      return raw < -lim ? -lim : (raw > lim ? lim : raw);
    }
    case PT_CONTROL_TRANSFER_FUNCTION: {
      // y = sum_i cx_i x_i + b0 u (the canonical form of control.c, fill_tf)
      int n = c->elem_nx[i];
      const double *d = tf_data(c, i);
      double y = 0;
      for (int k = 0; k < n; k++) y += d[n + k] * x[k];
      if (c->elem_flags[i]) y += d[2 * n] * in_value(c, io, i, 0);
      return y;
    }
    case PT_CONTROL_STATE_SPACE: {
      const double *A, *B, *C, *D;
      ss_mats(c, i, &A, &B, &C, &D);
      int n = c->elem_nx[i], m = c->elem_nin[i];
      double y = 0;
      for (int k = 0; k < n; k++) y += C[o * n + k] * x[k];
      for (int k = 0; k < m; k++)
        if (D[o * m + k] != 0) y += D[o * m + k] * in_value(c, io, i, k);
      return y;
    }
    default:  // PT_CONTROL_ODE: its outputs are its states
      return x[o];
  }
}

void pt_ctl_signals(const pt_ctl *c, pt_ctl_io *io) {
  for (int k = 0; k < c->nsig; k++) {
    int s = c->order[k];
    io->sig[s] = signal_value(c, io, s);
  }
}

void pt_ctl_derivatives(const pt_ctl *c, pt_ctl_io *io) {
  for (int i = 0; i < c->nelem; i++) {
    int nx = c->elem_nx[i];
    if (!nx) continue;
    const double *x = io->x + c->elem_x_adr[i];
    const double *par = io->par + c->elem_par_adr[i];
    double *xd = io->xdot + c->elem_x_adr[i];
    switch (c->elem_type[i]) {
      case PT_CONTROL_PID: {
        double e = in_value(c, io, i, 0);
        int f = c->elem_flags[i], k = 0;
        if (f & PT_PID_I) {
          xd[k] = pid_windup(c, io, i, e) ? 0 : par[PT_PAR_PID_KI] * e;
          k++;
        }
        if (f & PT_PID_D) xd[k] = (e - x[k]) / par[PT_PAR_PID_TF];
        break;
      }
      case PT_CONTROL_TRANSFER_FUNCTION: {
        // x_k' = x_{k+1}; x_n' = u - a1 x_n - ... - an x_1
        const double *a = tf_data(c, i);
        double v = in_value(c, io, i, 0);
        for (int k = 0; k + 1 < nx; k++) xd[k] = x[k + 1];
        for (int j = 1; j <= nx; j++) v -= a[j - 1] * x[nx - j];
        xd[nx - 1] = v;
        break;
      }
      case PT_CONTROL_STATE_SPACE: {
        const double *A, *B, *C, *D;
        ss_mats(c, i, &A, &B, &C, &D);
        int m = c->elem_nin[i];
        for (int r = 0; r < nx; r++) {
          double v = 0;
          for (int k = 0; k < nx; k++) v += A[r * nx + k] * x[k];
          for (int k = 0; k < m; k++) v += B[r * m + k] * in_value(c, io, i, k);
          xd[r] = v;
        }
        break;
      }
      case PT_CONTROL_ODE:
        for (int k = 0; k < nx; k++)
          xd[k] = pt_expr_eval(&c->expr[c->elem_expr_adr[i] + k], io->sig, io->t, io->stack);
        break;
      default:
        break;
    }
  }
}

int pt_ctl_limit_side(const pt_ctl *c, const pt_ctl_io *io, int elem, double *value) {
  *value = 0;
  if (c->elem_type[elem] == PT_CONTROL_SATURATION) {
    const double *par = io->par + c->elem_par_adr[elem];
    *value = in_value(c, io, elem, 0);
    return side_of(*value, par[PT_PAR_SAT_LOWER], par[PT_PAR_SAT_UPPER]);
  }
  if (c->elem_type[elem] == PT_CONTROL_PID) {
    *value = pid_raw(c, io, elem, in_value(c, io, elem, 0));
    return pid_side(c, io, elem, *value);
  }
  return 0;
}

// ---- partial derivatives ---------------------------------------------------------------------

// row += a * src (nz entries)
static void axpy(double *row, double a, const double *src, int nz) {
  if (a == 0) return;
  for (int k = 0; k < nz; k++) row[k] += a * src[k];
}

// Row of element i's k-th input signal in sig_z.
static const double *in_row(const pt_ctl *c, const double *sig_z, int i, int k, int nz) {
  return sig_z + (size_t)c->in_sig[c->elem_in_adr[i] + k] * (size_t)nz;
}

// d(formula)/dz = sum over the signals it reads of d(formula)/d(signal) d(signal)/dz
static void expr_row(const pt_ctl_io *io, const pt_expr *x, const double *sig_z, double *row,
                     double *work, int nz) {
  double *grad = work, *stack = work + x->nref;
  pt_expr_grad(x, io->sig, io->t, grad, stack);
  for (int k = 0; k < x->nref; k++) axpy(row, grad[k], sig_z + (size_t)x->ref[k] * nz, nz);
}

static void signal_row(const pt_ctl *c, const pt_ctl_io *io, int s, double *sig_z, double *work,
                       int nz) {
  int i = c->sig_elem[s], o = c->sig_out[s];
  const double *par = io->par + c->elem_par_adr[i];
  int xz = c->nmeas + c->elem_x_adr[i];  // column of the element's first state
  double *row = sig_z + (size_t)s * (size_t)nz;
  switch (c->elem_type[i]) {
    case PT_CONTROL_MEASURE:
      row[c->elem_aux[i]] = 1;
      break;
    case PT_CONTROL_INPUT:
      row[c->nmeas + c->nx + c->elem_aux[i]] = 1;
      break;
    case PT_CONTROL_GAIN:
      axpy(row, par[PT_PAR_GAIN_K], in_row(c, sig_z, i, 0, nz), nz);
      break;
    case PT_CONTROL_SUM: {
      const double *sign = c->data + c->elem_data_adr[i];
      for (int k = 0; k < c->elem_nin[i]; k++) axpy(row, sign[k], in_row(c, sig_z, i, k, nz), nz);
      break;
    }
    case PT_CONTROL_SATURATION: {
      double u;
      if (pt_ctl_limit_side(c, io, i, &u) == 0) axpy(row, 1, in_row(c, sig_z, i, 0, nz), nz);
      break;
    }
    case PT_CONTROL_EXPRESSION:
      expr_row(io, &c->expr[c->elem_expr_adr[i]], sig_z, row, work, nz);
      break;
    case PT_CONTROL_PID: {
      double raw;
      if (pt_ctl_limit_side(c, io, i, &raw) != 0) break;  // held at its limit: slope 0
      int f = c->elem_flags[i], k = 0;
      double de = 0;
      if (f & PT_PID_P) de += par[PT_PAR_PID_KP];
      if (f & PT_PID_I) row[xz + k++] += 1;
      if (f & PT_PID_D) {
        de += par[PT_PAR_PID_KD] / par[PT_PAR_PID_TF];
        row[xz + k] -= par[PT_PAR_PID_KD] / par[PT_PAR_PID_TF];
      }
      axpy(row, de, in_row(c, sig_z, i, 0, nz), nz);
      break;
    }
    case PT_CONTROL_TRANSFER_FUNCTION: {
      int n = c->elem_nx[i];
      const double *d = tf_data(c, i);
      for (int k = 0; k < n; k++) row[xz + k] += d[n + k];
      if (c->elem_flags[i]) axpy(row, d[2 * n], in_row(c, sig_z, i, 0, nz), nz);
      break;
    }
    case PT_CONTROL_STATE_SPACE: {
      const double *A, *B, *C, *D;
      ss_mats(c, i, &A, &B, &C, &D);
      int n = c->elem_nx[i], m = c->elem_nin[i];
      for (int k = 0; k < n; k++) row[xz + k] += C[o * n + k];
      for (int k = 0; k < m; k++) axpy(row, D[o * m + k], in_row(c, sig_z, i, k, nz), nz);
      break;
    }
    default:  // ode
      row[xz + o] = 1;
      break;
  }
}

static void state_rows(const pt_ctl *c, const pt_ctl_io *io, int i, const double *sig_z,
                       double *xdot_z, double *work, int nz) {
  int nx = c->elem_nx[i], xz = c->nmeas + c->elem_x_adr[i];
  const double *par = io->par + c->elem_par_adr[i];
  double *rows = xdot_z + (size_t)c->elem_x_adr[i] * (size_t)nz;
  switch (c->elem_type[i]) {
    case PT_CONTROL_PID: {
      int f = c->elem_flags[i], k = 0;
      const double *e_z = in_row(c, sig_z, i, 0, nz);
      if (f & PT_PID_I) {
        if (!pid_windup(c, io, i, in_value(c, io, i, 0)))
          axpy(rows, par[PT_PAR_PID_KI], e_z, nz);
        k++;
      }
      if (f & PT_PID_D) {
        double itf = 1 / par[PT_PAR_PID_TF];
        axpy(rows + (size_t)k * nz, itf, e_z, nz);
        rows[(size_t)k * nz + xz + k] -= itf;
      }
      break;
    }
    case PT_CONTROL_TRANSFER_FUNCTION: {
      const double *a = tf_data(c, i);
      for (int k = 0; k + 1 < nx; k++) rows[(size_t)k * nz + xz + k + 1] = 1;
      double *last = rows + (size_t)(nx - 1) * nz;
      for (int j = 1; j <= nx; j++) last[xz + nx - j] -= a[j - 1];
      axpy(last, 1, in_row(c, sig_z, i, 0, nz), nz);
      break;
    }
    case PT_CONTROL_STATE_SPACE: {
      const double *A, *B, *C, *D;
      ss_mats(c, i, &A, &B, &C, &D);
      int m = c->elem_nin[i];
      for (int r = 0; r < nx; r++) {
        double *row = rows + (size_t)r * nz;
        for (int k = 0; k < nx; k++) row[xz + k] += A[r * nx + k];
        for (int k = 0; k < m; k++) axpy(row, B[r * m + k], in_row(c, sig_z, i, k, nz), nz);
      }
      break;
    }
    case PT_CONTROL_ODE:
      for (int k = 0; k < nx; k++)
        expr_row(io, &c->expr[c->elem_expr_adr[i] + k], sig_z, rows + (size_t)k * nz, work, nz);
      break;
    default:
      break;
  }
}

void pt_ctl_partials(const pt_ctl *c, const pt_ctl_io *io, double *sig_z, double *xdot_z,
                     double *work) {
  int nz = c->nmeas + c->nx + c->nin;
  memset(sig_z, 0, sizeof(double) * (size_t)c->nsig * (size_t)nz);
  memset(xdot_z, 0, sizeof(double) * (size_t)c->nx * (size_t)nz);
  for (int k = 0; k < c->nsig; k++) signal_row(c, io, c->order[k], sig_z, work, nz);
  for (int i = 0; i < c->nelem; i++)
    if (c->elem_nx[i]) state_rows(c, io, i, sig_z, xdot_z, work, nz);
}
