// force.c: applied generalized forces Q = (F, n) per body (force at the CoM and torque, both
// global) for the right-hand side of the Newton-Euler equations (seed gcp eq. 1/21), and the
// potential energy of gravity and springs.
//
// Gyroscopic torque -w x (I w) is part of Q. Forces along a coordinate (joint damping,
// torsion springs, joint actuators) enter as Q += J_c^T f.
#include "engine.h"
#include "tolerances.h"
#include "ptu.h"

// Q += J^T f for a coordinate Jacobian row (12 numbers over bodies b1, b2).
void pt_apply_coord_force(const pt_data *d, int b1, int b2, const double jac[12], double f,
                          double *qfrc) {
  (void)d;
  const int body[2] = {b1, b2};
  for (int b = 0; b < 2; b++) {
    if (body[b] == PT_GROUND) continue;
    for (int k = 0; k < 6; k++) qfrc[6 * body[b] + k] += jac[6 * b + k] * f;
  }
}

// A force F (global) at global arm s from the CoM of `body`.
static void apply_point_force(int body, const double s[3], const double F[3], double *qfrc) {
  if (body == PT_GROUND) return;
  double n[3];
  ptu_cross3(n, s, F);
  for (int k = 0; k < 3; k++) {
    qfrc[6 * body + k] += F[k];
    qfrc[6 * body + 3 + k] += n[k];
  }
}

static void apply_torque(int body, const double T[3], double *qfrc) {
  if (body == PT_GROUND) return;
  for (int k = 0; k < 3; k++) qfrc[6 * body + 3 + k] += T[k];
}

// Point, arm and velocity of a body-fixed point.
static void point_state(const pt_data *d, int body, const double sbar[3], double p[3],
                        double s[3], double v[3]) {
  double w[3], t[3];
  pt_body_point(d, body, sbar, p, s);
  pt_body_vel(d, body, v);
  pt_body_omega(d, body, w);
  ptu_cross3(t, w, s);
  ptu_add3(v, v, t);
}

// Bushing deflection in the bushing frame on body1: translation, rotation vector, and their
// rates (relative velocity and angular velocity in that frame).
static void bushing_state(const pt_model *m, const pt_data *d, int f, double R1[9],
                          double x[6], double xd[6], double arm2[3], double arm1p2[3]) {
  const double *par = m->force_par + PT_FORCE_PAR * f;
  const int b1 = m->force_body[2 * f], b2 = m->force_body[2 * f + 1];
  double A1[9], A2[9], R2[9], Rrel[9], p1[3], p2[3], s1[3], v1[3], v2[3], w1[3], w2[3], t[3];
  pt_body_rot(d, b1, A1);
  pt_body_rot(d, b2, A2);
  ptu_mul_mat3(R1, A1, par + 18);
  ptu_mul_mat3(R2, A2, par + 27);
  point_state(d, b1, par + 12, p1, s1, v1);
  point_state(d, b2, par + 15, p2, arm2, v2);
  ptu_sub3(t, p2, p1);
  ptu_mul_matT_vec3(x, R1, t);
  ptu_mul_matT_mat3(Rrel, R1, R2);
  ptu_mat2rotvec(x + 3, Rrel);
  ptu_sub3(t, v2, v1);
  ptu_mul_matT_vec3(xd, R1, t);
  pt_body_omega(d, b1, w1);
  pt_body_omega(d, b2, w2);
  ptu_sub3(t, w2, w1);
  ptu_mul_matT_vec3(xd + 3, R1, t);
  // arm from body1's CoM to the point on body2, where the reaction acts
  if (b1 == PT_GROUND)
    ptu_copy(arm1p2, p2, 3);
  else
    ptu_sub3(arm1p2, p2, d->q + 7 * b1);
}

static void force_element(const pt_model *m, pt_data *d, int f, double *qfrc) {
  const double *par = m->force_par + PT_FORCE_PAR * f;
  const int b1 = m->force_body[2 * f], b2 = m->force_body[2 * f + 1];
  switch ((pt_force_type)m->force_type[f]) {
  case PT_FORCE_TORSION_SPRING: {  // tau = -k (theta - theta0) - c theta' + preload
    const int c = m->force_coord[f];
    double val, jac[12], jdx;
    pt_measure(m, d, c, &val, jac, &jdx);
    double rate = pt_jac_dot_x(d, m->meas_body + 2 * c, jac);
    double tau = -par[0] * (val - par[2]) - par[1] * rate + par[3];
    pt_apply_coord_force(d, m->meas_body[2 * c], m->meas_body[2 * c + 1], jac, tau, qfrc);
    return;
  }
  case PT_FORCE_SPRING_DAMPER: {  // tension f = k (l - l0) + c l' - preload
    double p1[3], p2[3], s1[3], s2[3], v1[3], v2[3], dv[3], dd[3], u[3], F[3];
    point_state(d, b1, par + 4, p1, s1, v1);
    point_state(d, b2, par + 7, p2, s2, v2);
    ptu_sub3(dv, p2, p1);
    ptu_sub3(dd, v2, v1);
    double l = ptu_norm3(dv);
    if (l < PT_TOL_COINCIDENT) return;  // coincident points: direction undefined, no force
    ptu_scl3(u, dv, 1 / l);
    double ten = par[0] * (l - par[2]) + par[1] * ptu_dot3(u, dd) - par[3];
    ptu_scl3(F, u, -ten);  // on body2
    apply_point_force(b2, s2, F, qfrc);
    ptu_scl3(F, F, -1);
    apply_point_force(b1, s1, F, qfrc);
    return;
  }
  case PT_FORCE_BUSHING: {  // F = -K x - C x' in the bushing frame on body1
    double R1[9], x[6], xd[6], arm2[3], arm1[3], Fl[3], Tl[3], F[3], T[3];
    bushing_state(m, d, f, R1, x, xd, arm2, arm1);
    for (int k = 0; k < 3; k++) {
      Fl[k] = -par[k] * x[k] - par[6 + k] * xd[k];
      Tl[k] = -par[3 + k] * x[3 + k] - par[9 + k] * xd[3 + k];
    }
    ptu_mul_mat_vec3(F, R1, Fl);
    ptu_mul_mat_vec3(T, R1, Tl);
    apply_point_force(b2, arm2, F, qfrc);
    apply_torque(b2, T, qfrc);
    ptu_scl3(F, F, -1);
    ptu_scl3(T, T, -1);
    apply_point_force(b1, arm1, F, qfrc);  // reaction at the same point: momentum balance
    apply_torque(b1, T, qfrc);
    return;
  }
  case PT_FORCE_FORCE: {
    double p[3], s[3];
    pt_body_point(d, b1, par + 3, p, s);
    apply_point_force(b1, s, par, qfrc);
    return;
  }
  case PT_FORCE_TORQUE:
    apply_torque(b1, par, qfrc);
    return;
  case PT_FORCE_EXPRESSION:  // compiled into a driven actuator (compile_control.c)
    return;
  }
}

static void joint_damping(const pt_model *m, pt_data *d, int j, double *qfrc) {
  const double c = m->joint_damping[j];
  const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
  if (c == 0) return;
  if (m->joint_damp_rotation[j]) {  // -c (w2 - w1) on body2, reaction on body1
    double w1[3], w2[3], T[3];
    pt_body_omega(d, b1, w1);
    pt_body_omega(d, b2, w2);
    ptu_sub3(T, w2, w1);
    ptu_scl3(T, T, -c);
    apply_torque(b2, T, qfrc);
    ptu_scl3(T, T, -1);
    apply_torque(b1, T, qfrc);
    return;
  }
  const int adr = m->joint_coord_adr[j];
  for (int k = 0; k < m->joint_ncoord[j]; k++) {
    double val, jac[12], jdx;
    pt_measure(m, d, adr + k, &val, jac, &jdx);
    double rate = pt_jac_dot_x(d, m->meas_body + 2 * (adr + k), jac);
    pt_apply_coord_force(d, b1, b2, jac, -c * rate, qfrc);
  }
}

// Regularised Coulomb friction on each joint coordinate: -F tanh(rate / v) (docs/model-format.md).
static void joint_friction(const pt_model *m, pt_data *d, int j, double *qfrc) {
  const double F = m->joint_friction[2 * j], v = m->joint_friction[2 * j + 1];
  if (F == 0) return;
  const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
  const int adr = m->joint_coord_adr[j];
  for (int k = 0; k < m->joint_ncoord[j]; k++) {
    double val, jac[12], jdx;
    pt_measure(m, d, adr + k, &val, jac, &jdx);
    double rate = pt_jac_dot_x(d, m->meas_body + 2 * (adr + k), jac);
    pt_apply_coord_force(d, b1, b2, jac, -F * tanh(rate / v), qfrc);
  }
}

static void actuator(const pt_model *m, pt_data *d, int a, double *qfrc) {
  const double *u = d->input + m->actuator_input_adr[a];
  const int body = m->actuator_body[a];
  switch ((pt_actuator_type)m->actuator_type[a]) {
  case PT_ACT_JOINT_TORQUE:
  case PT_ACT_JOINT_FORCE: {
    if (u[0] == 0) return;  // no force: spare the joint's measure
    const int c = m->actuator_coord[a];
    // a closed loop in joint coordinates takes it along its tree coordinate (loop_dyn.c)
    if (d->loop_efforts && m->loop_coord[c] >= 0) return;
    const double effort = m->input_gear[m->actuator_input_adr[a]] * u[0];  // through the gear
    double jac[12];
    pt_measure_jac(m, d, c, jac);  // the direction only: no value needed
    pt_apply_coord_force(d, m->meas_body[2 * c], m->meas_body[2 * c + 1], jac, effort, qfrc);
    return;
  }
  case PT_ACT_BODY_FORCE:
  case PT_ACT_BODY_TORQUE: {
    double F[3], p[3], s[3];
    if (m->actuator_frame[a] && body != PT_GROUND)
      ptu_mul_mat_vec3(F, d->rot + 9 * body, u);
    else
      ptu_copy(F, u, 3);
    if (m->actuator_type[a] == PT_ACT_BODY_TORQUE) {
      apply_torque(body, F, qfrc);
    } else {
      pt_body_point(d, body, m->actuator_point + 3 * a, p, s);
      apply_point_force(body, s, F, qfrc);
    }
    return;
  }
  }
}

void pt_forces(const pt_model *m, pt_data *d) {
  double *qfrc = d->qfrc;
  pt_control_eval(m, d);  // signals first: driven actuators apply them (control_stage.c)
  for (int i = 0; i < m->nbody; i++) {
    const double *w = d->x + 6 * i + 3;
    double Iw[3], g[3];
    ptu_mul_mat_vec3(Iw, d->inertia_g + 9 * i, w);
    ptu_cross3(g, w, Iw);
    for (int k = 0; k < 3; k++) {
      qfrc[6 * i + k] = m->body_mass[i] * m->gravity[k];
      qfrc[6 * i + 3 + k] = -g[k];
    }
  }
  for (int f = 0; f < m->nforce; f++) force_element(m, d, f, qfrc);
  for (int j = 0; j < m->njoint; j++) {
    joint_damping(m, d, j, qfrc);
    joint_friction(m, d, j, qfrc);
  }
  for (int a = 0; a < m->nactuator; a++) actuator(m, d, a, qfrc);
}

double pt_potential(const pt_model *m, const pt_data *d) {
  double V = 0;
  for (int i = 0; i < m->nbody; i++)
    V -= m->body_mass[i] * ptu_dot3(m->gravity, d->q + 7 * i);
  for (int f = 0; f < m->nforce; f++) {
    const double *par = m->force_par + PT_FORCE_PAR * f;
    const int b1 = m->force_body[2 * f], b2 = m->force_body[2 * f + 1];
    switch ((pt_force_type)m->force_type[f]) {
    case PT_FORCE_TORSION_SPRING: {
      double dx = d->coord[m->force_coord[f]] - par[2];
      V += 0.5 * par[0] * dx * dx - par[3] * dx;
      break;
    }
    case PT_FORCE_SPRING_DAMPER: {
      double p1[3], p2[3], s[3], dv[3];
      pt_body_point(d, b1, par + 4, p1, s);
      pt_body_point(d, b2, par + 7, p2, s);
      ptu_sub3(dv, p2, p1);
      double dx = ptu_norm3(dv) - par[2];
      V += 0.5 * par[0] * dx * dx - par[3] * dx;
      break;
    }
    case PT_FORCE_BUSHING: {
      double R1[9], x[6], xd[6], a2[3], a1[3];
      bushing_state(m, d, f, R1, x, xd, a2, a1);
      for (int k = 0; k < 6; k++) V += 0.5 * par[k] * x[k] * x[k];
      break;
    }
    case PT_FORCE_FORCE: {  // constant force: potential -F . p
      double p[3], s[3];
      pt_body_point(d, b1, par + 3, p, s);
      V -= ptu_dot3(par, p);
      break;
    }
    case PT_FORCE_TORQUE:  // a constant torque has no potential in general
    case PT_FORCE_EXPRESSION:
      break;
    }
  }
  return V;
}
