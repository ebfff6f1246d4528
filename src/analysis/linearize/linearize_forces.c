// linearize_forces.c: partials of the applied forces Q(q, u, input) of force.c for the
// linearizer (seed linearization, Upsilon_u = -Q_u and the -Q_q part of Upsilon_q, Table 1),
// in the engine's chart: delta q = (delta r, delta pi), delta u = (delta rdot, delta omega).
//
// Forces along a coordinate c (torsion springs, TSDA = a force along the distance between its
// points, joint damping, joint actuators) are Q = J_c^T f(c, c'), so
//   Q_q = f D_c + J_c^T (f_c J_c + f_c' x^T D_c),   Q_u = f_c' J_c^T J_c,
// with D_c the analytic derivative of J_c (linearize_partials.c). Gravity has no partials.
// Bushings: local central differences of that one bushing's force (mirrors force.c).
#include <stdlib.h>

#include "linearize_internal.h"
#include "ptu.h"
#include "tolerances.h"

static void skew(double M[9], const double v[3]) {
  M[0] = 0, M[1] = -v[2], M[2] = v[1];
  M[3] = v[2], M[4] = 0, M[5] = -v[0];
  M[6] = -v[1], M[7] = v[0], M[8] = 0;
}

// G[6k + r0 + i][6k + c0 + j] += s M[i][j] (a 3x3 block of body k)
static void add_block(double *G, int nv, int k, int r0, int c0, const double M[9], double s) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      G[(size_t)(6 * k + r0 + i) * nv + 6 * k + c0 + j] += s * M[3 * i + j];
}

static void add_ss(double *G, int nv, int k, int r0, int c0, const double a[3],
                   const double b[3], double s) {
  double A[9], B[9], AB[9];
  skew(A, a);
  skew(B, b);
  ptu_mul_mat3(AB, A, B);
  add_block(G, nv, k, r0, c0, AB, s);
}

static void local_x(const pt_data *d, const int b[2], double x[12]) {
  for (int s = 0; s < 2; s++) {
    if (b[s] == PT_GROUND) ptu_zero(x + 6 * s, 6);
    else ptu_copy(x + 6 * s, d->x + 6 * b[s], 6);
  }
}

// Q = J^T f(c, c') with df/dc = fk, df/dc' = fc.
static void coord_force(const pt_data *d, double *Qq, double *Qu, int nv, const int b[2],
                        const double J[12], const double D[144], double f, double fk,
                        double fc) {
  double x[12], xD[12], L[144];
  local_x(d, b, x);
  for (int j = 0; j < 12; j++) {
    xD[j] = 0;
    for (int i = 0; i < 12; i++) xD[j] += x[i] * D[12 * i + j];
  }
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j++)
      L[12 * i + j] = f * D[12 * i + j] + J[i] * (fk * J[j] + fc * xD[j]);
  ptd_scatter12(Qq, nv, b, L, 1);
  if (fc == 0) return;
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j++) L[12 * i + j] = fc * J[i] * J[j];
  ptd_scatter12(Qu, nv, b, L, 1);
}

static void measure_force(const pt_model *m, const pt_data *d, double *Qq, double *Qu, int c,
                          double k, double damp, double offset, double preload) {
  double val, J[12], jdx, D[144];
  const int *b = m->meas_body + 2 * c;
  pt_measure(m, d, c, &val, J, &jdx);
  ptd_meas_jac_deriv(m, d, c, D);
  double rate = pt_jac_dot_x(d, b, J);
  double f = -k * (val - offset) - damp * rate + preload;
  coord_force(d, Qq, Qu, m->nv, b, J, D, f, -k, -damp);
}

// TSDA: a tension along the distance of its two points, Jacobian and D of that distance.
static void tsda(const pt_model *m, const pt_data *d, double *Qq, double *Qu, int f) {
  const double *par = m->force_par + PT_FORCE_PAR * f;
  const int b[2] = {m->force_body[2 * f], m->force_body[2 * f + 1]};
  double p1[3], p2[3], s1[3], s2[3], dv[3], u[3], J[12], D[144];
  pt_body_point(d, b[0], par + 4, p1, s1);
  pt_body_point(d, b[1], par + 7, p2, s2);
  ptu_sub3(dv, p2, p1);
  double l = ptu_norm3(dv);
  if (l < PT_TOL_COINCIDENT) return;  // force.c applies nothing there
  ptu_scl3(u, dv, 1 / l);
  ptu_scl3(J, u, -1);
  ptu_cross3(J + 3, s1, u);
  ptu_scl3(J + 3, J + 3, -1);
  ptu_copy(J + 6, u, 3);
  ptu_cross3(J + 9, s2, u);
  ptu_zero(D, 144);
  ptd_distance_deriv(D, s1, s2, dv);
  double rate = pt_jac_dot_x(d, b, J);
  double ten = par[0] * (l - par[2]) + par[1] * rate - par[3];
  coord_force(d, Qq, Qu, m->nv, b, J, D, -ten, -par[0], -par[1]);
}

// One bushing's generalized force on its two bodies, [F1 T1 F2 T2], exactly as force.c.
static void bushing_force(const pt_model *m, const pt_data *d, int f, double out[12]) {
  const double *par = m->force_par + PT_FORCE_PAR * f;
  const int b1 = m->force_body[2 * f], b2 = m->force_body[2 * f + 1];
  double A1[9], A2[9], R1[9], R2[9], Rrel[9], p1[3], p2[3], s1[3], s2[3], v1[3], v2[3];
  double w1[3], w2[3], t[3], x[6], xd[6], arm1[3], Fl[3], Tl[3], F[3], T[3];
  pt_body_rot(d, b1, A1);
  pt_body_rot(d, b2, A2);
  ptu_mul_mat3(R1, A1, par + 18);
  ptu_mul_mat3(R2, A2, par + 27);
  pt_body_point(d, b1, par + 12, p1, s1);
  pt_body_point(d, b2, par + 15, p2, s2);
  pt_body_vel(d, b1, v1);
  pt_body_vel(d, b2, v2);
  pt_body_omega(d, b1, w1);
  pt_body_omega(d, b2, w2);
  ptu_cross3(t, w1, s1);
  ptu_add3(v1, v1, t);
  ptu_cross3(t, w2, s2);
  ptu_add3(v2, v2, t);
  ptu_sub3(t, p2, p1);
  ptu_mul_matT_vec3(x, R1, t);
  ptu_mul_matT_mat3(Rrel, R1, R2);
  ptu_mat2rotvec(x + 3, Rrel);
  ptu_sub3(t, v2, v1);
  ptu_mul_matT_vec3(xd, R1, t);
  ptu_sub3(t, w2, w1);
  ptu_mul_matT_vec3(xd + 3, R1, t);
  if (b1 == PT_GROUND) ptu_copy(arm1, p2, 3);
  else ptu_sub3(arm1, p2, d->q + 7 * b1);
  for (int k = 0; k < 3; k++) {
    Fl[k] = -par[k] * x[k] - par[6 + k] * xd[k];
    Tl[k] = -par[3 + k] * x[3 + k] - par[9 + k] * xd[3 + k];
  }
  ptu_mul_mat_vec3(F, R1, Fl);
  ptu_mul_mat_vec3(T, R1, Tl);
  ptu_copy(out + 6, F, 3);
  ptu_cross3(out + 9, s2, F);
  ptu_add3(out + 9, out + 9, T);
  ptu_scl3(out, F, -1);
  ptu_cross3(out + 3, arm1, F);
  for (int k = 0; k < 3; k++) out[3 + k] = -out[3 + k] - T[k];
}

// Local central differences of bushing f in the 24 variables of its two bodies.
static int bushing_partials(const pt_model *m, pt_data *s, double *Qq, double *Qu, int f,
                            const double *q0, const double *qd0, const double *x0) {
  const int b[2] = {m->force_body[2 * f], m->force_body[2 * f + 1]};
  double Lq[144], Lu[144], fp[12], fm[12];
  ptu_zero(Lq, 144);
  ptu_zero(Lu, 144);
  for (int sl = 0; sl < 2; sl++) {
    const int k = b[sl];
    if (k == PT_GROUND) continue;
    for (int v = 0; v < 12; v++) {
      const double h = ptd_fd_step(v);
      ptd_perturb(m, s, q0, x0, k, v, h);
      bushing_force(m, s, f, fp);
      ptd_perturb(m, s, q0, x0, k, v, -h);
      bushing_force(m, s, f, fm);
      double *L = v < 6 ? Lq : Lu;
      const int col = 6 * sl + v % 6;
      for (int i = 0; i < 12; i++) L[12 * i + col] = (fp[i] - fm[i]) / (2 * h);
    }
    ptu_copy(s->q + 7 * k, q0 + 7 * k, 7);  // the base state, bit for bit
    ptu_copy(s->qd + 7 * k, qd0 + 7 * k, 7);
    pt_kin_bodies(m, s);
  }
  ptd_scatter12(Qq, m->nv, b, Lq, 1);
  ptd_scatter12(Qu, m->nv, b, Lu, 1);
  return PT_OK;
}

static void joint_damping(const pt_model *m, const pt_data *d, double *Qq, double *Qu, int j) {
  const double c = m->joint_damping[j];
  const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1], nv = m->nv;
  if (c == 0) return;
  if (m->joint_damp_rotation[j]) {  // -c (w2 - w1) on body2, reaction on body1
    const int b[2] = {b1, b2};
    for (int s = 0; s < 2; s++)
      for (int t = 0; t < 2; t++) {
        if (b[s] == PT_GROUND || b[t] == PT_GROUND) continue;
        const double sg = (s == t) ? -c : c;
        for (int i = 0; i < 3; i++) Qu[(size_t)(6 * b[s] + 3 + i) * nv + 6 * b[t] + 3 + i] += sg;
      }
    return;
  }
  const int adr = m->joint_coord_adr[j];
  for (int k = 0; k < m->joint_ncoord[j]; k++)
    measure_force(m, d, Qq, Qu, adr + k, 0, c, 0, 0);
}

// Regularised Coulomb friction f = -F tanh(rate / v): df/drate = -(F / v) sech^2(rate / v).
static void joint_friction(const pt_model *m, const pt_data *d, double *Qq, double *Qu, int j) {
  const double F = m->joint_friction[2 * j], v = m->joint_friction[2 * j + 1];
  if (F == 0) return;
  const int adr = m->joint_coord_adr[j];
  for (int k = 0; k < m->joint_ncoord[j]; k++) {
    const int c = adr + k;
    double val, J[12], jdx, D[144];
    const int *b = m->meas_body + 2 * c;
    pt_measure(m, d, c, &val, J, &jdx);
    ptd_meas_jac_deriv(m, d, c, D);
    const double rate = pt_jac_dot_x(d, b, J), t = tanh(rate / v);
    coord_force(d, Qq, Qu, m->nv, b, J, D, -F * t, 0, -(F / v) * (1 - t * t));
  }
}

static void actuator(const pt_model *m, const pt_data *d, double *Qq, double *Qin,
                     const int *col, int nin, int a) {
  const double *u = d->input + m->actuator_input_adr[a];
  const int body = m->actuator_body[a], nv = m->nv, adr = m->actuator_input_adr[a];
  if (m->actuator_type[a] == PT_ACT_JOINT_TORQUE || m->actuator_type[a] == PT_ACT_JOINT_FORCE) {
    const int c = m->actuator_coord[a];
    const double gear = m->input_gear[adr];  // joint effort = gear x input
    double val, J[12], jdx, D[144];
    pt_measure(m, d, c, &val, J, &jdx);
    ptd_meas_jac_deriv(m, d, c, D);
    ptd_scatter12(Qq, nv, m->meas_body + 2 * c, D, gear * u[0]);
    if (col[adr] >= 0) {
      const int *b = m->meas_body + 2 * c;
      for (int s = 0; s < 2; s++) {
        if (b[s] == PT_GROUND) continue;
        for (int i = 0; i < 6; i++)
          Qin[(size_t)(6 * b[s] + i) * nin + col[adr]] += gear * J[6 * s + i];
      }
    }
    return;
  }
  if (body == PT_GROUND) return;
  const int frame = m->actuator_frame[a];
  const double *A = d->rot + 9 * body;
  double F[3], p[3], s[3];
  if (frame) ptu_mul_mat_vec3(F, A, u);
  else ptu_copy(F, u, 3);
  if (m->actuator_type[a] == PT_ACT_BODY_TORQUE) {
    if (frame) {  // T = A u: delta T = -T~ delta pi
      double S[9];
      skew(S, F);
      add_block(Qq, nv, body, 3, 3, S, -1);
    }
  } else {
    pt_body_point(d, body, m->actuator_point + 3 * a, p, s);
    add_ss(Qq, nv, body, 3, 3, F, s, 1);  // tau = s x F: delta = F~ s~ delta pi
    if (frame) {                          // F = A u: delta F = -F~ delta pi
      double S[9];
      skew(S, F);
      add_block(Qq, nv, body, 0, 3, S, -1);
      add_ss(Qq, nv, body, 3, 3, s, F, -1);
    }
  }
  for (int i = 0; i < 3; i++) {
    if (col[adr + i] < 0) continue;
    double e[3] = {0, 0, 0}, g[3], t[3];
    e[i] = 1;
    if (frame) ptu_mul_mat_vec3(g, A, e);
    else ptu_copy(g, e, 3);
    const int cc = col[adr + i];
    if (m->actuator_type[a] == PT_ACT_BODY_TORQUE) {
      for (int k = 0; k < 3; k++) Qin[(size_t)(6 * body + 3 + k) * nin + cc] += g[k];
    } else {
      ptu_cross3(t, s, g);
      for (int k = 0; k < 3; k++) {
        Qin[(size_t)(6 * body + k) * nin + cc] += g[k];
        Qin[(size_t)(6 * body + 3 + k) * nin + cc] += t[k];
      }
    }
  }
}

int ptd_force_partials(const pt_model *m, const pt_data *d, pt_data *s, double *Qq,
                       double *Qu, double *Qin, const int *inputs, int nin) {
  const int nv = m->nv, nb = m->nbody;
  int *col = malloc(sizeof(int) * (size_t)(m->ninput + 1));
  double *q0 = malloc(sizeof(double) * (size_t)(20 * nb + 1));
  if (!col || !q0) {
    free(col), free(q0);
    return PT_ENOMEM;
  }
  double *x0 = q0 + 7 * nb, *qd0 = x0 + 6 * nb;
  ptu_copy(q0, d->q, 7 * nb);
  ptu_copy(qd0, d->qd, 7 * nb);
  ptu_copy(x0, d->x, 6 * nb);
  for (int i = 0; i < m->ninput; i++) col[i] = -1;
  for (int c = 0; c < nin; c++) col[inputs[c]] = c;
  // gyroscopic -w x (I w), I = A Ibar A^T: d/dw = (I w)~ - w~ I, d/dpi = w~ (I w)~ - w~ I w~
  for (int k = 0; k < nb; k++) {
    const double *w = d->x + 6 * k + 3, *Ig = d->inertia_g + 9 * k;
    double Iw[3], W[9], WI[9], WIW[9];
    ptu_mul_mat_vec3(Iw, Ig, w);
    skew(W, w);
    ptu_mul_mat3(WI, W, Ig);
    ptu_mul_mat3(WIW, WI, W);
    double S[9];
    skew(S, Iw);
    add_block(Qu, nv, k, 3, 3, S, 1);
    add_block(Qu, nv, k, 3, 3, WI, -1);
    add_ss(Qq, nv, k, 3, 3, w, Iw, 1);
    add_block(Qq, nv, k, 3, 3, WIW, -1);
  }
  for (int f = 0; f < m->nforce; f++) {
    const double *par = m->force_par + PT_FORCE_PAR * f;
    const int b1 = m->force_body[2 * f];
    switch ((pt_force_type)m->force_type[f]) {
    case PT_FORCE_TORSION_SPRING:
      measure_force(m, d, Qq, Qu, m->force_coord[f], par[0], par[1], par[2], par[3]);
      break;
    case PT_FORCE_SPRING_DAMPER:
      tsda(m, d, Qq, Qu, f);
      break;
    case PT_FORCE_BUSHING:
      bushing_partials(m, s, Qq, Qu, f, q0, qd0, x0);
      break;
    case PT_FORCE_FORCE: {  // tau = s x F, F constant: delta tau = F~ s~ delta pi
      double p[3], sa[3];
      if (b1 == PT_GROUND) break;
      pt_body_point(d, b1, par + 3, p, sa);
      add_ss(Qq, nv, b1, 3, 3, par, sa, 1);
      break;
    }
    case PT_FORCE_TORQUE:
    case PT_FORCE_EXPRESSION:  // a driven actuator (compile_control.c)
      break;
    }
  }
  for (int j = 0; j < m->njoint; j++) {
    joint_damping(m, d, Qq, Qu, j);
    joint_friction(m, d, Qq, Qu, j);
  }
  for (int a = 0; a < m->nactuator; a++) actuator(m, d, Qq, Qin, col, nin, a);
  free(col);
  free(q0);
  return PT_OK;
}

static int pair_cmp(const void *pa, const void *pb) {
  const int *a = pa, *b = pb;
  return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

static int add_pairs(int *pair, int n, int a, int b) {
  const int v[4][2] = {{a, a}, {b, b}, {a, b}, {b, a}};
  for (int i = 0; i < 4; i++)
    if (v[i][0] != PT_GROUND && v[i][1] != PT_GROUND) {
      pair[2 * n] = v[i][0], pair[2 * n + 1] = v[i][1];
      n++;
    }
  return n;
}

// Every body with itself (gyroscopic terms, body forces and actuators) and, both ways, the two
// bodies of every joint (damping, friction), force element (TSDA, bushing) and coordinate
// (torsion springs, joint actuators): the blocks the partials above write.
int ptd_force_pairs(const pt_model *m, int *pair) {
  int np = 0;
  for (int k = 0; k < m->nbody; k++) np = add_pairs(pair, np, k, k);
  for (int j = 0; j < m->njoint; j++)
    np = add_pairs(pair, np, m->joint_body[2 * j], m->joint_body[2 * j + 1]);
  for (int f = 0; f < m->nforce; f++)
    np = add_pairs(pair, np, m->force_body[2 * f], m->force_body[2 * f + 1]);
  for (int c = 0; c < m->ncoord; c++)
    np = add_pairs(pair, np, m->meas_body[2 * c], m->meas_body[2 * c + 1]);
  qsort(pair, (size_t)np, 2 * sizeof(int), pair_cmp);
  int n = 0;
  for (int i = 0; i < np; i++)
    if (n == 0 || pair_cmp(pair + 2 * i, pair + 2 * (n - 1)) != 0) {
      pair[2 * n] = pair[2 * i], pair[2 * n + 1] = pair[2 * i + 1];
      n++;
    }
  return n;
}

void ptd_zero_pairs(double *Qq, double *Qu, int nv, const int *pair, int npair) {
  for (int p = 0; p < npair; p++)
    for (int r = 0; r < 6; r++) {
      const size_t at = (size_t)(6 * pair[2 * p] + r) * nv + 6 * pair[2 * p + 1];
      ptu_zero(Qq + at, 6);
      ptu_zero(Qu + at, 6);
    }
}
