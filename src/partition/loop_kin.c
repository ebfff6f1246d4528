// loop_kin.c: kinematics of a closed-loop model in joint coordinates (loop.h), and its cut
// rows in those coordinates.
//
// Forward kinematics along the spanning tree, parents first (seed gcp eq. 10-11, u = g(v) made
// explicit for the tree part), from the reference taken at load (A1^T A2, A1^T (r2 - r1) and
// the coordinates there):
//   A1^T A2 = Rot(h1, dth) A1^T A2|ref                       (revolute about h1, body-fixed)
//   A1^T A2 = Rot(h1, dth1) A1^T A2|ref Rot(h2, dth2)        (universal: h1 in 1, h2 in 2)
//   A1^T A2 = A1^T A2|ref, A1^T (r2 - r1) = t_ref + h1 dth  (prismatic; fixed: dth = 0)
// and for revolute and universal joints the joint point common to both bodies. Velocities in
// spatial (Plucker) coordinates at the global origin: V = (omega, v_O), v_O = v_c - omega x c,
// V_child = V_parent + sum S_i sd_i with S = sg (a, P x a) for a rotation about the axis a
// through the joint point P and S = sg (0, a) for a slide along a (sg = -1 when the tree runs
// from body2 to body1). A floating body keeps q = (r, p) as coordinates, x = (rdot, 2 E pd).
//
// A cut row's Jacobian in w: J x = sum over its two bodies of J_v . v_c + J_w . omega, and
// with v_c = v_O + omega x c that is the force-like pair (n, f) = (J_w + c x J_v, J_v)
// applied to V, so G(r, i) = sum over the row's bodies below coordinate i of n . S_i^ang +
// f . S_i^lin; for a floating body G is J itself (w) or (J_v, 2 J_w E(p)) (s, seed gcp eq. 21).
#include "loop.h"
#include "ptu.h"

static const double ground_q[7] = {0, 0, 0, 1, 0, 0, 0};
static const double ground_rot[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
static const double ground_x[6] = {0, 0, 0, 0, 0, 0};

static const double *body_q(const pt_data *d, int b) {
  return b == PT_GROUND ? ground_q : d->q + 7 * b;
}
static const double *body_A(const pt_data *d, int b) {
  return b == PT_GROUND ? ground_rot : d->rot + 9 * b;
}
static const double *body_x(const pt_data *d, int b) {
  return b == PT_GROUND ? ground_x : d->x + 6 * b;
}

// Euler parameters of Rot(h, a) for unit h
static void quat_axis(double p[4], const double h[3], double a) {
  const double s = sin(0.5 * a);
  p[0] = cos(0.5 * a);
  for (int k = 0; k < 3; k++) p[1 + k] = s * h[k];
}

// Changes of joint j's coordinates from the reference: th[0] about (or along) h1, th[1] about
// h2 (universal).
static void joint_dtheta(const pt_model *m, const pt_data *d, int j, double th[2]) {
  th[0] = th[1] = 0;
  const int i0 = m->loop_jcoord[j];
  if (i0 < 0) return;
  for (int k = 0; k < m->joint_ncoord[j]; k++)
    th[m->loop_ck[i0 + k]] = d->loop_s[i0 + k] - m->loop_sref0[i0 + k];
}

void pt_loop_positions(const pt_model *m, pt_data *d) {
  for (int t = 0; t < m->nlj; t++) {
    const int j = m->loop_joint[t], ch = m->loop_child[j], type = m->joint_type[j];
    const double *g = m->joint_geom + PT_JOINT_GEOM * j, *pref = m->loop_pref + 4 * j;
    const double *h1 = g + 3 * PT_JV_H1, *h2 = g + 3 * PT_JV_H2;
    double th[2], rel[4], qa[4], tmp[4], w[3];  // rel: Euler parameters of A1^T A2
    joint_dtheta(m, d, j, th);
    const int point = type == PT_JOINT_REVOLUTE || type == PT_JOINT_UNIVERSAL;
    if (point) {
      quat_axis(qa, h1, th[0]);
      ptu_quat_mul(rel, qa, pref);
      if (type == PT_JOINT_UNIVERSAL) {
        quat_axis(qa, h2, th[1]);
        ptu_quat_mul(tmp, rel, qa);
        ptu_copy(rel, tmp, 4);
      }
    } else {
      ptu_copy(rel, pref, 4);
    }
    for (int k = 0; k < 3; k++)
      w[k] = m->loop_tref[3 * j + k] + (type == PT_JOINT_PRISMATIC ? h1[k] * th[0] : 0);
    pt_joint_place(m, d, j, ch, rel, point, w);
  }
  for (int f = 0; f < m->nlf; f++) {
    const int b = m->loop_float_body[f];
    const double *s = d->loop_s + m->nlt + 7 * f, *p = s + 3;
    ptu_copy(d->q + 7 * b, s, 7);
    // A(p / |p|), as pt_kin_positions: Euler parameters off the unit sphere during Newton
    const double n = sqrt(p[0] * p[0] + ptu_dot3(p + 1, p + 1));
    const double u[4] = {p[0] / n, p[1] / n, p[2] / n, p[3] / n};
    ptu_quat2mat(d->rot + 9 * b, u);
  }
}

void pt_loop_subspaces(const pt_model *m, pt_data *d) {
  for (int i = 0; i < m->nlt; i++) {
    const int j = m->loop_cjoint[i], b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const double *g = m->joint_geom + PT_JOINT_GEOM * j;
    const double sg = m->loop_child[j] == 1 ? 1 : -1;
    double a[3], P[3], s[3], *S = d->loop_S + 6 * i;
    if (m->loop_ck[i] == 0)
      ptu_mul_mat_vec3(a, body_A(d, b1), g + 3 * PT_JV_H1);
    else
      ptu_mul_mat_vec3(a, body_A(d, b2), g + 3 * PT_JV_H2);
    if (m->joint_type[j] == PT_JOINT_PRISMATIC) {
      ptu_zero(S, 3);
      ptu_scl3(S + 3, a, sg);
      continue;
    }
    pt_body_point(d, b2, g + 3, P, s);
    ptu_scl3(S, a, sg);
    ptu_cross3(S + 3, P, S);
  }
}

void pt_loop_velocities(const pt_model *m, pt_data *d) {
  const double *sd = d->loop_sd;
  for (int t = 0; t < m->nlj; t++) {
    const int j = m->loop_joint[t], ch = m->loop_child[j];
    const int par = m->joint_body[2 * j + (ch == 1 ? 0 : 1)], kid = m->joint_body[2 * j + ch];
    const double *xp = body_x(d, par), *cp = body_q(d, par);
    double V[6], t3[3];  // the parent's spatial velocity, then the child's
    ptu_copy(V, xp + 3, 3);
    ptu_cross3(t3, xp + 3, cp);
    ptu_sub3(V + 3, xp, t3);
    const int i0 = m->loop_jcoord[j];
    for (int k = 0; i0 >= 0 && k < m->joint_ncoord[j]; k++) {
      const double *S = d->loop_S + 6 * (i0 + k);
      for (int c = 0; c < 6; c++) V[c] += S[c] * sd[i0 + k];
    }
    double *xk = d->x + 6 * kid;
    ptu_copy(xk + 3, V, 3);
    ptu_cross3(t3, V, d->q + 7 * kid);
    ptu_add3(xk, V + 3, t3);
  }
  for (int f = 0; f < m->nlf; f++) {
    const int b = m->loop_float_body[f];
    const double *s = d->loop_s + m->nlt + 7 * f, *v = sd + m->nlt + 7 * f;
    double E[12], *x = d->x + 6 * b;
    ptu_quat_E(E, s + 3);
    ptu_copy(x, v, 3);
    for (int r = 0; r < 3; r++)
      x[3 + r] = 2 * (E[4 * r] * v[3] + E[4 * r + 1] * v[4] + E[4 * r + 2] * v[5] +
                      E[4 * r + 3] * v[6]);
  }
  pt_qd_from_x(m, d);
  for (int f = 0; f < m->nlf; f++)
    ptu_copy(d->qd + 7 * m->loop_float_body[f], sd + m->nlt + 7 * f, 7);
}

void pt_loop_rows(const pt_model *m, pt_data *d, int full) {
  pt_joint_rows_list(m, d, m->loop_row, m->nlc - m->nmotion, full ? PT_ROWS_FULL : PT_ROWS_PHI);
  if (m->nmotion > 0) pt_motion_rows(m, d);
}

double pt_loop_residual(const pt_model *m, const pt_data *d, double *phi) {
  double e = 0;
  for (int a = 0; a < m->nlc; a++) {
    const double v = d->row_phi[m->loop_row[a]];
    if (phi) phi[a] = v;
    e = fmax(e, fabs(v));
  }
  for (int f = 0; f < m->nlf; f++) {
    const double *p = d->loop_s + m->nlt + 7 * f + 3;
    const double v = p[0] * p[0] + ptu_dot3(p + 1, p + 1) - 1;
    if (phi) phi[m->nlc + f] = v;
    e = fmax(e, fabs(v));
  }
  return isfinite(e) ? e : INFINITY;
}

void pt_loop_jacobian(const pt_model *m, pt_data *d) {
  // outputs
  double *gv = d->loop_gval, *gq = gv + m->nlz, *gn = gq + 14 * m->nlc;
  // inputs: row_jac of the kept rows, loop_S, q
  int *pos = d->loop_iw;  // coordinate -> its entry in the current row's support
  for (int a = 0; a < m->nlc; a++) {
    const int r = m->loop_row[a], z0 = m->loop_z_adr[a], z1 = m->loop_z_adr[a + 1];
    for (int e = z0; e < z1; e++) {
      pos[m->loop_z_idx[e]] = e;
      gv[e] = 0;
    }
    for (int sl = 0; sl < 2; sl++) {
      const int b = m->row_body[2 * r + sl];
      if (b == PT_GROUND) continue;
      const double *J = d->row_jac + 12 * r + 6 * sl;
      const int f = m->loop_body_float[b];
      if (f >= 0) {  // x itself: rdot, omega
        const int w0 = m->nlt + 6 * f;
        for (int c = 0; c < 6; c++) gv[pos[w0 + c]] += J[c];
        double E[12], *o = gq + 14 * a + 7 * sl;
        ptu_quat_E(E, d->q + 7 * b + 3);
        ptu_copy(o, J, 3);
        for (int c = 0; c < 4; c++)
          o[3 + c] = 2 * (J[3] * E[c] + J[4] * E[4 + c] + J[5] * E[8 + c]);
        continue;
      }
      double n[3], t3[3];
      ptu_cross3(t3, d->q + 7 * b, J);
      ptu_add3(n, J + 3, t3);
      for (int i = m->loop_body_coord[b]; i >= 0; i = m->loop_parent[i]) {
        const double *S = d->loop_S + 6 * i;
        gv[pos[i]] += ptu_dot3(n, S) + ptu_dot3(J, S + 3);
      }
    }
  }
  for (int f = 0; f < m->nlf; f++)
    for (int c = 0; c < 4; c++) gn[4 * f + c] = 2 * d->loop_s[m->nlt + 7 * f + 3 + c];
  for (int e = 0; e < m->nlg; e++) d->loop_gs[e] = gv[m->loop_g_src[e]];
}

void pt_loop_rhs(const pt_model *m, pt_data *d) {
  for (int a = 0; a < m->nlc; a++) {
    const int r = m->loop_row[a];
    double g = d->row_gamma[r];
    for (int sl = 0; sl < 2; sl++) {
      const int b = m->row_body[2 * r + sl];
      if (b == PT_GROUND || m->loop_body_float[b] >= 0) continue;
      const double *J = d->row_jac + 12 * r + 6 * sl, *k = d->loop_kap + 6 * b;
      g -= ptu_dot3(J, k) + ptu_dot3(J + 3, k + 3);
    }
    d->loop_gam[a] = g;
    d->loop_nu[a] = d->row_nu[r];
  }
  for (int f = 0; f < m->nlf; f++) {
    const double *pd = d->loop_sd + m->nlt + 7 * f + 3;
    d->loop_gam[m->nlc + f] = -2 * (pd[0] * pd[0] + ptu_dot3(pd + 1, pd + 1));
    d->loop_nu[m->nlc + f] = 0;
  }
}

void pt_loop_sync(const pt_model *m, pt_data *d) {
  pt_kin_bodies(m, d);
  for (int i = 0; i < m->nlt; i++) {
    const int c = m->loop_meas[i];
    double v, jac[12], jdx, rate = 0;
    pt_measure(m, d, c, &v, jac, &jdx);
    for (int sl = 0; sl < 2; sl++) {
      const int b = m->meas_body[2 * c + sl];
      if (b == PT_GROUND) continue;
      for (int k = 0; k < 6; k++) rate += jac[6 * sl + k] * d->x[6 * b + k];
    }
    d->loop_s[i] = v;
    d->loop_sd[i] = rate;
  }
  for (int f = 0; f < m->nlf; f++) {
    const int b = m->loop_float_body[f];
    ptu_copy(d->loop_s + m->nlt + 7 * f, d->q + 7 * b, 7);
    ptu_copy(d->loop_sd + m->nlt + 7 * f, d->qd + 7 * b, 7);
  }
  d->loop_s_valid = 1;
  d->loop_held = 0;
}
