// bodies.c: the spec's bodies into the model (model compilation, compile.c): names, masses,
// inertias checked positive definite (Sylvester) and inverted, initial positions, Euler
// parameters and their rates from the angular velocity (pdot = E^T omega / 2); and the
// body-fixed vectors and arms of global directions and points at t = 0 that joints,
// coordinates, forces and actuators are given in.
#include <stdio.h>
#include <string.h>

#include "compile.h"
#include "ptu.h"
#include "tolerances.h"

static int inv3(double out[9], const double a[9]) {
  double det = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
               a[2] * (a[3] * a[7] - a[4] * a[6]);
  if (!(fabs(det) > 1e-300)) return -1;
  out[0] = (a[4] * a[8] - a[5] * a[7]) / det;
  out[1] = (a[2] * a[7] - a[1] * a[8]) / det;
  out[2] = (a[1] * a[5] - a[2] * a[4]) / det;
  out[3] = (a[5] * a[6] - a[3] * a[8]) / det;
  out[4] = (a[0] * a[8] - a[2] * a[6]) / det;
  out[5] = (a[2] * a[3] - a[0] * a[5]) / det;
  out[6] = (a[3] * a[7] - a[4] * a[6]) / det;
  out[7] = (a[1] * a[6] - a[0] * a[7]) / det;
  out[8] = (a[0] * a[4] - a[1] * a[3]) / det;
  return 0;
}

int pt_compile_bodies(pt_model *m, const pt_spec *s, pt_error *err) {
  for (int i = 0; i < s->nbody; i++) {
    const pt_spec_body *b = s->bodies + i;
    for (int j = 0; j < i; j++)
      if (strcmp(s->bodies[j].name, b->name) == 0)
        return pt_spec_fail(err, PT_EMODEL, s, b->line, "bodies", i, b->name,
                            "duplicate body name");
    if (strcmp(b->name, "ground") == 0)
      return pt_spec_fail(err, PT_EMODEL, s, b->line, "bodies", i, b->name,
                          "\"ground\" is reserved for the fixed global frame");
    if (!(b->mass > 0) || !isfinite(b->mass))
      return pt_spec_fail(err, PT_EMODEL, s, b->line, "bodies", i, b->name, "mass must be > 0");
    const double *In = b->inertia;
    double *J = m->body_inertia + 9 * i;
    double t[9] = {In[0], In[3], In[4], In[3], In[1], In[5], In[4], In[5], In[2]};
    ptu_copy(J, t, 9);
    // positive definite (Sylvester) and the triangle inequalities on the diagonal
    double m2 = In[0] * In[1] - In[3] * In[3];
    double det = In[0] * (In[1] * In[2] - In[5] * In[5]) - In[3] * (In[3] * In[2] - In[5] * In[4]) +
                 In[4] * (In[3] * In[5] - In[1] * In[4]);
    if (!(In[0] > 0 && m2 > 0 && det > 0))
      return pt_spec_fail(err, PT_EMODEL, s, b->line, "bodies", i, b->name,
                          "inertia is not positive definite");
    if (inv3(m->body_inertia_inv + 9 * i, J))
      return pt_spec_fail(err, PT_EMODEL, s, b->line, "bodies", i, b->name, "inertia is singular");
    snprintf(m->body_name[i], PT_NAME_MAX, "%s", b->name);
    m->body_mass[i] = b->mass;
    double p[4];
    double n = sqrt(b->quat[0] * b->quat[0] + ptu_dot3(b->quat + 1, b->quat + 1));
    if (!(n > PT_TOL_LENGTH))
      return pt_spec_fail(err, PT_EMODEL, s, b->line, "bodies", i, b->name,
                          "orientation quaternion has zero length");
    for (int c = 0; c < 4; c++) p[c] = b->quat[c] / n;
    ptu_copy(m->q0 + 7 * i, b->position, 3);
    ptu_copy(m->q0 + 7 * i + 3, p, 4);
    double E[12];
    ptu_quat_E(E, p);
    ptu_copy(m->qd0 + 7 * i, b->velocity, 3);
    const double *w = b->angvel;
    for (int c = 0; c < 4; c++)
      m->qd0[7 * i + 3 + c] = 0.5 * (E[c] * w[0] + E[4 + c] * w[1] + E[8 + c] * w[2]);
    static const char *qn[7] = {"x", "y", "z", "e0", "e1", "e2", "e3"};
    for (int c = 0; c < 7; c++)
      snprintf(m->q_name[7 * i + c], PT_NAME_MAX + 8, "%s.%s", b->name, qn[c]);
  }
  return PT_OK;
}

// Body-fixed vector of a global direction at t = 0 (ground: itself).
void pt_body_fixed_vector(const pt_model *m, int body, const double g[3], double out[3]) {
  if (body == PT_GROUND) {
    ptu_copy(out, g, 3);
    return;
  }
  double A[9];
  ptu_quat2mat(A, m->q0 + 7 * body + 3);
  ptu_mul_matT_vec3(out, A, g);
}

// Body-fixed arm of a global point at t = 0.
void pt_body_fixed_point(const pt_model *m, int body, const double P[3], double out[3]) {
  if (body == PT_GROUND) {
    ptu_copy(out, P, 3);
    return;
  }
  double t[3];
  ptu_sub3(t, P, m->q0 + 7 * body);
  pt_body_fixed_vector(m, body, t, out);
}
