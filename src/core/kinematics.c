// kinematics.c: body rotation matrices, global inertias and velocities from (q, qdot).
// A(p) from Euler parameters (Haug eq. 6.2.x) and omega = 2 E(p) pdot (global angular
// velocity); the inverse inertia in global axes is A J^-1 A^T (block of A^-1 in the local
// dynamics seed, eq. 64).
#include "engine.h"
#include "ptu.h"

// A(p / |p|): during Newton iterations |p| departs from 1 by O(step); the unit-sphere formula
// would then give a non-orthogonal A whose error the constraint Jacobian does not describe,
// and Newton would converge only linearly whenever an Euler parameter is independent.
static void body_rotation(double A[9], const double *p) {
  const double n = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
  const double u[4] = {p[0] / n, p[1] / n, p[2] / n, p[3] / n};
  ptu_quat2mat(A, u);
}

// Rotation matrices only: what constraint values and Jacobians need (Newton iterations).
void pt_kin_positions(const pt_model *m, pt_data *d) {
  for (int i = 0; i < m->nbody; i++) body_rotation(d->rot + 9 * i, d->q + 7 * i + 3);
}

void pt_kin_bodies(const pt_model *m, pt_data *d) {
  for (int i = 0; i < m->nbody; i++) {
    // outputs
    double *A = d->rot + 9 * i;
    double *Ig = d->inertia_g + 9 * i;
    double *Iginv = d->inertia_ginv + 9 * i;
    double *xv = d->x + 6 * i;
    // inputs
    const double *p = d->q + 7 * i + 3;
    const double *rd = d->qd + 7 * i;
    const double *pd = d->qd + 7 * i + 3;

    body_rotation(A, p);
    ptu_congruence3(Ig, A, m->body_inertia + 9 * i);
    ptu_congruence3(Iginv, A, m->body_inertia_inv + 9 * i);
    double E[12];
    ptu_quat_E(E, p);
    ptu_copy(xv, rd, 3);
    for (int r = 0; r < 3; r++)
      xv[3 + r] = 2 * (E[4 * r] * pd[0] + E[4 * r + 1] * pd[1] + E[4 * r + 2] * pd[2] +
                       E[4 * r + 3] * pd[3]);
  }
}

// Global inertias I_g = A J A^T from rot (set by the caller, e.g. tree forward kinematics),
// and their inverses A J^-1 A^T if inv.
void pt_kin_inertias(const pt_model *m, pt_data *d, int inv) {
  for (int i = 0; i < m->nbody; i++) {
    ptu_congruence3(d->inertia_g + 9 * i, d->rot + 9 * i, m->body_inertia + 9 * i);
    if (inv)
      ptu_congruence3(d->inertia_ginv + 9 * i, d->rot + 9 * i, m->body_inertia_inv + 9 * i);
  }
}

// p = r + A sbar (global point), s = A sbar (arm from the CoM). Ground: p = s = sbar.
void pt_body_point(const pt_data *d, int body, const double sbar[3], double p[3],
                   double s[3]) {
  if (body == PT_GROUND) {
    ptu_copy(p, sbar, 3);
    ptu_copy(s, sbar, 3);
    return;
  }
  ptu_mul_mat_vec3(s, d->rot + 9 * body, sbar);
  ptu_add3(p, d->q + 7 * body, s);
}

void pt_body_omega(const pt_data *d, int body, double w[3]) {
  if (body == PT_GROUND) {
    ptu_zero(w, 3);
    return;
  }
  ptu_copy(w, d->x + 6 * body + 3, 3);
}

void pt_body_vel(const pt_data *d, int body, double v[3]) {
  if (body == PT_GROUND) {
    ptu_zero(v, 3);
    return;
  }
  ptu_copy(v, d->x + 6 * body, 3);
}

void pt_body_rot(const pt_data *d, int body, double A[9]) {
  if (body == PT_GROUND) {
    static const double eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    ptu_copy(A, eye, 9);
    return;
  }
  ptu_copy(A, d->rot + 9 * body, 9);
}

// qdot from x: rdot as is, pdot = E^T omega / 2.
void pt_qd_from_x(const pt_model *m, pt_data *d) {
  for (int i = 0; i < m->nbody; i++) {
    const double *p = d->q + 7 * i + 3;
    const double *w = d->x + 6 * i + 3;
    double E[12];
    ptu_quat_E(E, p);
    ptu_copy(d->qd + 7 * i, d->x + 6 * i, 3);
    for (int c = 0; c < 4; c++)
      d->qd[7 * i + 3 + c] = 0.5 * (E[c] * w[0] + E[4 + c] * w[1] + E[8 + c] * w[2]);
  }
}
