// motions.c: the spec's prescribed motions into the model (model compilation, compile.c):
// each one a row driving one joint coordinate along a profile (constant rate, polynomial,
// sine, or a table through a natural cubic spline).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "ptu.h"

// Natural cubic spline second derivatives for (t_i, v_i) (tridiagonal solve).
static void spline_setup(double *tvm, int n, const double *pts) {
  for (int i = 0; i < n; i++) {
    tvm[3 * i] = pts[2 * i];
    tvm[3 * i + 1] = pts[2 * i + 1];
    tvm[3 * i + 2] = 0;
  }
  if (n < 3) return;
  double *c = calloc((size_t)n, sizeof(double)), *r = calloc((size_t)n, sizeof(double));
  if (!c || !r) {
    free(c), free(r);
    return;
  }
  for (int i = 1; i < n - 1; i++) {  // Thomas algorithm on rows 1..n-2
    double h0 = pts[2 * i] - pts[2 * (i - 1)], h1 = pts[2 * (i + 1)] - pts[2 * i];
    double rhs =
        6 * ((pts[2 * i + 3] - pts[2 * i + 1]) / h1 - (pts[2 * i + 1] - pts[2 * i - 1]) / h0);
    double diag = 2 * (h0 + h1) - (i > 1 ? h0 * c[i - 1] : 0);
    c[i] = h1 / diag;
    r[i] = (rhs - (i > 1 ? h0 * r[i - 1] : 0)) / diag;
  }
  for (int i = n - 2; i >= 1; i--)
    tvm[3 * i + 2] = r[i] - c[i] * (i < n - 2 ? tvm[3 * (i + 1) + 2] : 0);
  free(c), free(r);
}

int pt_compile_motions(pt_model *m, const pt_spec *s, pt_error *err) {
  int ndata = 0;
  for (int i = 0; i < s->nmotion; i++)
    ndata += s->motions[i].profile == PT_PROFILE_POLYNOMIAL ? s->motions[i].ncoef
             : s->motions[i].profile == PT_PROFILE_TABLE    ? 3 * s->motions[i].npoint
                                                            : 0;
  m->motion_data = pt_model_alloc(m, (size_t)ndata, sizeof(double));
  if (!m->motion_data) return pt_error_set(err, PT_ENOMEM, "out of memory");
  int adr = 0;
  for (int i = 0; i < s->nmotion; i++) {
    const pt_spec_motion *sm = s->motions + i;
    for (int k = 0; k < i; k++)
      if (strcmp(s->motions[k].name, sm->name) == 0)
        return pt_spec_fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name,
                            "duplicate motion name");
    const int j = pt_spec_find_joint(s, sm->joint);
    if (j < 0)
      return pt_spec_fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name,
                          "unknown joint \"%s\"", sm->joint);
    const int c = pt_joint_coord_of(m, j, sm->coordinate, 2);
    if (c < 0)
      return pt_spec_fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name,
                          "a motion cannot drive joint \"%s\" (%s%s%s): it needs a revolute or "
                          "prismatic joint, or `coordinate:` angle|slide (cylindrical), "
                          "angle1|angle2 (universal) or x|y|angle (planar)",
                          sm->joint, pt_joint_classes[m->joint_type[j]].name,
                          sm->coordinate[0] ? ", coordinate " : "", sm->coordinate);
    for (int k = 0; k < i; k++)
      if (m->motion_coord[k] == c)
        return pt_spec_fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name,
                            "coordinate \"%s\" is already driven by motion \"%s\"",
                            m->coord_name[c], m->motion_name[k]);
    snprintf(m->motion_name[i], PT_NAME_MAX, "%s", sm->name);
    m->motion_coord[i] = c;
    m->motion_profile[i] = sm->profile;
    double *par = m->motion_par + 8 * i;
    par[0] = sm->profile == PT_PROFILE_CONSTANT ? sm->value : sm->offset;
    par[1] = sm->amplitude, par[2] = sm->omega, par[3] = sm->phase;
    if (sm->profile == PT_PROFILE_STEP) {
      par[0] = sm->t0, par[1] = sm->value0, par[2] = sm->t1, par[3] = sm->value1;
      if (!(sm->t1 > sm->t0))
        return pt_spec_fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name,
                            "step needs t1 > t0");
    }
    m->motion_data_adr[i] = adr;
    if (sm->profile == PT_PROFILE_POLYNOMIAL) {
      if (sm->ncoef < 1 || !sm->coef)
        return pt_spec_fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name, "no coefficients");
      ptu_copy(m->motion_data + adr, sm->coef, sm->ncoef);
      m->motion_data_num[i] = sm->ncoef;
      adr += sm->ncoef;
    } else if (sm->profile == PT_PROFILE_TABLE) {
      if (sm->npoint < 2 || !sm->points)
        return pt_spec_fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name,
                            "table needs >= 2 points");
      for (int k = 1; k < sm->npoint; k++)
        if (!(sm->points[2 * k] > sm->points[2 * k - 2]))
          return pt_spec_fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name,
                              "table times must increase strictly");
      spline_setup(m->motion_data + adr, sm->npoint, sm->points);
      m->motion_data_num[i] = sm->npoint;
      adr += 3 * sm->npoint;
    }
    const int r = m->nrow_joint + i;
    m->row_body[2 * r] = m->meas_body[2 * c];
    m->row_body[2 * r + 1] = m->meas_body[2 * c + 1];
  }
  return PT_OK;
}
