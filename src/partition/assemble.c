// assemble.c: position and velocity assembly (initial conditions, SetState, --init).
//
// Positions: Gauss-Newton with least-change (minimum-norm) steps dq = -Phi_q^+ Phi on the
// constraint rows, the Euler-parameter normalisation and any requested coordinate values
// (c_k(q) = value). The pseudo-inverse comes from LAPACK's SVD least squares (dgelsd), so
// redundant rows do no harm. Velocities: the mass-weighted least-change projection
//   x = x0 - M^-1 J^T mu,   (J M^-1 J^T) mu = J x0 - nu,
// with requested coordinate rates as extra rows (the same W as the local-dynamics seed).
// Runs outside the step: it allocates its dense work arrays.
#include <lapacke.h>
#include <stdlib.h>

#include "engine.h"
#include "partition.h"
#include "tolerances.h"
#include "ptu.h"

#define ASM_MAXIT 60

typedef struct {
  int nrow;        // rows used: all joint+motion rows (use_all) or the active ones
  const int *rows; // NULL = all rows
} rowset;

static int row_of(const pt_model *m, int i, int use_all) {
  return use_all ? i : m->con_row[i];
}

// Dense (n x nq) Jacobian in q of row jac (12) over bodies, p part J_pi 2 E(p).
static void put_q_row(const pt_data *d, const int body[2], const double jac[12], double *out,
                      int nq) {
  ptu_zero(out, nq);
  for (int s = 0; s < 2; s++) {
    const int b = body[s];
    if (b == PT_GROUND) continue;
    double E[12];
    ptu_quat_E(E, d->q + 7 * b + 3);
    const double *J = jac + 6 * s;
    for (int c = 0; c < 3; c++) out[7 * b + c] += J[c];
    for (int c = 0; c < 4; c++)
      out[7 * b + 3 + c] += 2 * (J[3] * E[c] + J[4] * E[4 + c] + J[5] * E[8 + c]);
  }
}

static void eval_rows(const pt_model *m, pt_data *d) {
  pt_kin_bodies(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
}

int pt_assemble_positions(const pt_model *m, pt_data *d, const pt_assign *pos, int npos,
                          int use_all, double *moved, pt_error *err) {
  const int nq = m->nq, ncr = use_all ? m->nrow : m->ncon;
  const int nr = ncr + m->nbody + npos;
  const int ld = nr > nq ? nr : nq;
  double *A = NULL, *b = NULL, *sv = NULL;  // dense Gauss-Newton arrays, made on first need
  double *q0 = malloc(sizeof(double) * (size_t)nq);
  if (!q0) return pt_error_set(err, PT_ENOMEM, "assembly: out of memory");
  ptu_copy(q0, d->q, nq);
  for (int i = 0; i < npos; i++) d->coord_ref[pos[i].coord] = pos[i].value;
  double scale = 1;
  for (int k = 0; k < m->nbody; k++)
    for (int c = 0; c < 3; c++) scale = fmax(scale, fabs(d->q[7 * k + c]));
  int rc = PT_EASSEMBLY, worst = -1;
  double res = INFINITY;
  for (int it = 0; it <= ASM_MAXIT; it++) {
    eval_rows(m, d);
    // residual first, row by row (O(rows)): an assembled state needs no dense work at all
    res = 0;
    worst = -1;
    for (int i = 0; i < ncr; i++) {
      const int r = row_of(m, i, use_all);
      if (fabs(d->row_phi[r]) > res) res = fabs(d->row_phi[r]), worst = r;
    }
    for (int k = 0; k < m->nbody; k++) {
      const double *p = d->q + 7 * k + 3;
      res = fmax(res, fabs(p[0] * p[0] + ptu_dot3(p + 1, p + 1) - 1));
    }
    for (int i = 0; i < npos; i++) {
      double v, jac[12], jdx;
      pt_measure(m, d, pos[i].coord, &v, jac, &jdx);
      res = fmax(res, fabs(pos[i].value - v));
    }
    if (!isfinite(res)) break;
    if (res <= PT_TOL_ASSEMBLE_DONE * scale) {
      rc = PT_OK;
      break;
    }
    if (it == ASM_MAXIT) {
      if (res <= PT_TOL_ASSEMBLE * scale) rc = PT_OK;
      break;
    }
    if (!A) {
      A = malloc(sizeof(double) * (size_t)nr * nq);
      b = malloc(sizeof(double) * (size_t)ld);
      sv = malloc(sizeof(double) * (size_t)(nr < nq ? nr : nq) + 8);
      if (!A || !b || !sv) {
        free(A), free(b), free(sv), free(q0);
        return pt_error_set(err, PT_ENOMEM, "assembly: out of memory");
      }
    }
    for (int i = 0; i < ncr; i++) {
      const int r = row_of(m, i, use_all);
      put_q_row(d, m->row_body + 2 * r, d->row_jac + 12 * r, A + (size_t)i * nq, nq);
      b[i] = -d->row_phi[r];
    }
    for (int k = 0; k < m->nbody; k++) {
      const double *p = d->q + 7 * k + 3;
      double *row = A + (size_t)(ncr + k) * nq;
      ptu_zero(row, nq);
      for (int c = 0; c < 4; c++) row[7 * k + 3 + c] = 2 * p[c];
      b[ncr + k] = -(p[0] * p[0] + ptu_dot3(p + 1, p + 1) - 1);
    }
    for (int i = 0; i < npos; i++) {
      double v, jac[12], jdx;
      const int c = pos[i].coord;
      pt_measure(m, d, c, &v, jac, &jdx);
      put_q_row(d, m->meas_body + 2 * c, jac, A + (size_t)(ncr + m->nbody + i) * nq, nq);
      b[ncr + m->nbody + i] = pos[i].value - v;
    }
    lapack_int rank;
    int info =
        LAPACKE_dgelsd(LAPACK_ROW_MAJOR, nr, nq, 1, A, nq, b, 1, sv, PT_TOL_LSQ_RCOND, &rank);
    if (info != 0) break;
    for (int j = 0; j < nq; j++) d->q[j] += b[j];
    for (int k = 0; k < m->nbody; k++) {  // keep Euler parameters near unit length
      double *p = d->q + 7 * k + 3;
      double n = sqrt(p[0] * p[0] + ptu_dot3(p + 1, p + 1));
      if (n > 0)
        for (int c = 0; c < 4; c++) p[c] /= n;
    }
  }
  double mv = 0;
  for (int j = 0; j < nq; j++) mv = fmax(mv, fabs(d->q[j] - q0[j]));
  if (moved) *moved = mv;
  free(A), free(b), free(sv), free(q0);
  if (rc) {
    if (worst >= 0 && worst < m->nrow_joint) {
      const int j = m->row_joint[worst];
      return pt_error_set(err, PT_EASSEMBLY,
                          "assembly did not converge: residual %.3g at joint \"%s\" "
                          "(inconsistent constraints or values out of reach)",
                          res, m->joint_name[j]);
    }
    if (worst >= m->nrow_joint)
      return pt_error_set(err, PT_EASSEMBLY,
                          "assembly did not converge: residual %.3g at motion \"%s\"", res,
                          m->motion_name[worst - m->nrow_joint]);
    return pt_error_set(err, PT_EASSEMBLY,
                        "assembly did not converge: residual %.3g (requested coordinate "
                        "values out of reach?)", res);
  }
  return PT_OK;
}

int pt_assemble_velocities(const pt_model *m, pt_data *d, const pt_assign *vel, int nvel,
                           pt_error *err) {
  const int nv = m->nv, n = m->ncon + nvel;
  if (n == 0) return PT_OK;
  eval_rows(m, d);
  {  // residual first, row by row (O(rows)): consistent rates need no dense projection
    double res = 0, vscale = 1;
    for (int c = 0; c < nv; c++) vscale = fmax(vscale, fabs(d->x[c]));
    for (int i = 0; i < n; i++) {
      double jac[12], v, jdx, target;
      const int *body;
      if (i < m->ncon) {
        const int r = m->con_row[i];
        ptu_copy(jac, d->row_jac + 12 * r, 12);
        body = m->row_body + 2 * r;
        target = d->row_nu[r];
      } else {
        const int c = vel[i - m->ncon].coord;
        pt_measure(m, d, c, &v, jac, &jdx);
        body = m->meas_body + 2 * c;
        target = vel[i - m->ncon].value;
      }
      double s = 0;
      for (int sl = 0; sl < 2; sl++)
        if (body[sl] != PT_GROUND)
          for (int c = 0; c < 6; c++) s += jac[6 * sl + c] * d->x[6 * body[sl] + c];
      res = fmax(res, fabs(s - target));
    }
    // as the first pass of the projection below would find
    if (res < PT_TOL_ASSEMBLE_VEL * vscale) {
      pt_qd_from_x(m, d);
      pt_kin_bodies(m, d);
      return PT_OK;
    }
  }
  double *J = calloc((size_t)n * nv, sizeof(double));
  double *MJ = calloc((size_t)n * nv, sizeof(double));
  double *W = calloc((size_t)n * n, sizeof(double));
  double *b = calloc((size_t)n, sizeof(double));
  double *sv = calloc((size_t)n, sizeof(double));
  if (!J || !MJ || !W || !b || !sv) {
    free(J), free(MJ), free(W), free(b), free(sv);
    return pt_error_set(err, PT_ENOMEM, "assembly: out of memory");
  }
  double *target = calloc((size_t)n, sizeof(double));
  if (!target) {
    free(J), free(MJ), free(W), free(b), free(sv);
    return pt_error_set(err, PT_ENOMEM, "assembly: out of memory");
  }
  for (int i = 0; i < n; i++) {
    double jac[12], v, jdx;
    const int *body;
    if (i < m->ncon) {
      const int r = m->con_row[i];
      ptu_copy(jac, d->row_jac + 12 * r, 12);
      body = m->row_body + 2 * r;
      target[i] = d->row_nu[r];
    } else {
      const int c = vel[i - m->ncon].coord;
      pt_measure(m, d, c, &v, jac, &jdx);
      body = m->meas_body + 2 * c;
      target[i] = vel[i - m->ncon].value;
    }
    for (int s = 0; s < 2; s++) {
      const int bb = body[s];
      if (bb == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) J[(size_t)i * nv + 6 * bb + c] += jac[6 * s + c];
    }
  }
  for (int i = 0; i < n; i++)  // MJ = J M^-1 (row by row)
    for (int k = 0; k < m->nbody; k++) {
      const double *Jr = J + (size_t)i * nv + 6 * k;
      double *o = MJ + (size_t)i * nv + 6 * k;
      for (int c = 0; c < 3; c++) o[c] = Jr[c] / m->body_mass[k];
      ptu_mul_mat_vec3(o + 3, d->inertia_ginv + 9 * k, Jr + 3);
    }
  // The projection is repeated on its own residual (iterative refinement): W is badly
  // conditioned on long chains and one least-squares solve leaves ~cond * eps behind.
  int rc = PT_OK;
  double res = INFINITY, vscale = 1;
  for (int pass = 0; pass < 4; pass++) {
    res = 0;
    vscale = 1;
    for (int c = 0; c < nv; c++) vscale = fmax(vscale, fabs(d->x[c]));
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int c = 0; c < nv; c++) s += J[(size_t)i * nv + c] * d->x[c];
      b[i] = s - target[i];
      res = fmax(res, fabs(b[i]));
    }
    if (res < PT_TOL_ASSEMBLE_VEL * vscale) break;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double s = 0;
        for (int c = 0; c < nv; c++) s += MJ[(size_t)i * nv + c] * J[(size_t)j * nv + c];
        W[(size_t)i * n + j] = s;
      }
    lapack_int rank;
    int info = LAPACKE_dgelsd(LAPACK_ROW_MAJOR, n, n, 1, W, n, b, 1, sv, PT_TOL_LSQ_RCOND, &rank);
    if (info != 0) {
      rc = pt_error_set(err, PT_EASSEMBLY, "velocity assembly failed (LAPACK info %d)", info);
      break;
    }
    for (int i = 0; i < n; i++)
      for (int c = 0; c < nv; c++) d->x[c] -= MJ[(size_t)i * nv + c] * b[i];
  }
  if (!rc) {
    pt_qd_from_x(m, d);
    pt_kin_bodies(m, d);
    if (!(res < PT_TOL_ASSEMBLE_VEL_BAD * vscale))
      rc = pt_error_set(err, PT_EASSEMBLY,
                        "velocity assembly: requested rates are not compatible with the "
                        "constraints (residual %.3g)", res);
  }
  free(target);
  free(J), free(MJ), free(W), free(b), free(sv);
  return rc;
}

int pt_assemble(const pt_model *m, pt_data *d, const pt_assign *pos, int npos,
                const pt_assign *vel, int nvel, double *moved, pt_error *err) {
  pt_kin_bodies(m, d);
  ptu_copy(d->wrk6, d->x, m->nv);  // keep rdot and omega across the position change
  int rc = pt_assemble_positions(m, d, pos, npos, 0, moved, err);
  if (rc) return rc;
  ptu_copy(d->x, d->wrk6, m->nv);
  pt_qd_from_x(m, d);
  return pt_assemble_velocities(m, d, vel, nvel, err);
}
