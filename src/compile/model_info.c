// model_info.c: the read-only accessors of a compiled model (partita.h): counts, names,
// indexes, limits, and the independent coordinates of a data's partition.
#include <string.h>

#include "engine.h"
#include "loop.h"

const char *pt_model_name(const pt_model *m) { return m->name; }
const char *pt_model_warnings(const pt_model *m) { return m->warnings ? m->warnings : ""; }
int pt_model_nbody(const pt_model *m) { return m->nbody; }
int pt_model_njoint(const pt_model *m) { return m->njoint; }
int pt_model_nconstraint(const pt_model *m) { return m->ncon; }
// degrees of freedom: the coordinates less one per coupler (coupler.c)
int pt_model_ndof(const pt_model *m) { return m->ndof - m->ncoupler; }
int pt_model_ncoord(const pt_model *m) { return m->ncoord; }
int pt_model_ninput(const pt_model *m) { return m->ninput; }
int pt_model_nactuator(const pt_model *m) { return m->nactuator; }
int pt_model_nmotion(const pt_model *m) { return m->nmotion; }
double pt_model_dt(const pt_model *m) { return m->dt; }
pt_integrator pt_model_integrator(const pt_model *m) { return m->integrator; }
const double *pt_model_gravity(const pt_model *m) { return m->gravity; }

static const char *name_at(const void *arr, int n, int i, size_t width) {
  return (i >= 0 && i < n) ? (const char *)arr + (size_t)i * width : NULL;
}
// Name arrays differ in width (coordinates carry a suffix), so the width comes from the type.
#define NAME_AT(arr, count, i) name_at(m->arr, m->count, i, sizeof *m->arr)
const char *pt_body_name(const pt_model *m, int i) { return NAME_AT(body_name, nbody, i); }
const char *pt_joint_name(const pt_model *m, int i) { return NAME_AT(joint_name, njoint, i); }
const char *pt_coord_name(const pt_model *m, int i) { return NAME_AT(coord_name, ncoord, i); }
const char *pt_input_name(const pt_model *m, int i) { return NAME_AT(input_name, ninput, i); }
const char *pt_actuator_name(const pt_model *m, int i) {
  return NAME_AT(actuator_name, nactuator, i);
}
const char *pt_motion_name(const pt_model *m, int i) {
  return NAME_AT(motion_name, nmotion, i);
}
int pt_coord_index(const pt_model *m, const char *name) {
  for (int i = 0; i < m->ncoord; i++)
    if (strcmp(m->coord_name[i], name) == 0) return i;
  return -1;
}
int pt_input_index(const pt_model *m, const char *name) {
  for (int i = 0; i < m->ninput; i++)
    if (strcmp(m->input_name[i], name) == 0) return i;
  return -1;
}
int pt_body_index(const pt_model *m, const char *name) {
  for (int i = 0; i < m->nbody; i++)
    if (strcmp(m->body_name[i], name) == 0) return i;
  return -1;
}
double pt_input_gear(const pt_model *m, int i) {
  return (i >= 0 && i < m->ninput) ? m->input_gear[i] : 0;
}

int pt_joint_limits(const pt_model *m, int j, double lim[2]) {
  if (j < 0 || j >= m->njoint || !m->joint_limited[j]) return 0;
  lim[0] = m->joint_limit[2 * j];
  lim[1] = m->joint_limit[2 * j + 1];
  return 1;
}
int pt_model_limits_enforced(const pt_model *m) { return m->limits_on; }
double pt_model_restitution(const pt_model *m) { return m->restitution; }

int pt_model_nshape(const pt_model *m) { return m->nshape; }
int pt_model_npair(const pt_model *m) { return m->npair; }
int pt_model_max_contacts(const pt_model *m) { return m->max_contacts; }

const char *pt_shape_info(const pt_model *m, int i, int *body) {
  if (i < 0 || i >= m->nshape) return NULL;
  if (body) *body = m->shape_body[i];
  return pt_shape_type_name(m->shape[i].type);
}

int pt_pair_info(const pt_model *m, int p, int *shape1, int *shape2, double *friction,
                 double *restitution) {
  if (p < 0 || p >= m->npair) return -1;
  if (shape1) *shape1 = m->pair[2 * p];
  if (shape2) *shape2 = m->pair[2 * p + 1];
  if (friction) *friction = m->pair_friction[p];
  if (restitution) *restitution = m->pair_restitution[p];
  return 0;
}

double pt_input_limit(const pt_model *m, int i) {
  return (i >= 0 && i < m->ninput) ? m->input_limit[i] : 0;
}

const char *pt_integrator_name(pt_integrator it) {
  switch (it) {
  case PT_INT_RK4: return "rk4";
  case PT_INT_ABM4: return "abm4";
  case PT_INT_EULER: return "euler";
  }
  return "?";
}

int pt_integrator_parse(const char *s, pt_integrator *out) {
  if (strcmp(s, "rk4") == 0) *out = PT_INT_RK4;
  else if (strcmp(s, "abm4") == 0) *out = PT_INT_ABM4;
  else if (strcmp(s, "euler") == 0) *out = PT_INT_EULER;
  else return -1;
  return 0;
}

int pt_independent(const pt_model *m, const pt_data *d, const char **names, int max) {
  if (pt_tree_active(d)) {  // integrated in its joint coordinates (tree.c), followers apart
    int k = 0;
    for (int i = 0; i < m->ndof; i++) {
      int follows = 0;
      for (int c = 0; c < m->ncoupler; c++) follows |= d->cpl_on && d->cpl_dof[2 * c] == i;
      if (follows) continue;
      if (k < max) names[k] = pt_coord_name(m, d->tree_coord[i]);
      k++;
    }
    return k;
  }
  if (!d->part_valid) return m->ndof;
  if (pt_loop_on(d)) return pt_loop_independent(m, d, names, max);  // joint coordinates
  for (int i = 0; i < m->ndof && i < max; i++) names[i] = m->q_name[d->indep[i]];
  return m->ndof;
}
