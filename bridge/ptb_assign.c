// ptb_assign.c: NamedValue lists to assignments and back (ptb_assign.h).
#include "ptb_assign.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int value_ok(const ptb_opts *o, double v) {
  return isfinite(v) && ((o && o->unbounded) || fabs(v) <= PTB_MAX_ABS_STATE);
}

int ptb_named_assigns(const pt_model *m, Partita__V1__NamedValue *const *v, size_t n,
                      const char *field, const ptb_name_table *t, const ptb_opts *o,
                      pt_assign **out, int *nout, ptb_error *e) {
  *out = NULL;
  *nout = 0;
  if (n == 0)
    return PT_OK;
  const int count = t->count(m);
  if (n > (size_t)count + 64)
    return ptb_refuse(e, PTB_WHY_COUNT, field, NULL, "%s: %zu values for %d %ss", field, n,
                      count, t->what);
  pt_assign *a = calloc(n, sizeof(*a));
  if (!a)
    return ptb_fail(e, PT_ENOMEM, PTB_AT_REQUEST, "out of memory");
  for (size_t i = 0; i < n; i++) {
    const int k = t->index(m, v[i]->name);
    if (k < 0 || !value_ok(o, v[i]->value)) {
      free(a);
      e->value = v[i]->value;
      if (k < 0)
        return ptb_refuse(e, PTB_WHY_NAME, field, v[i]->name, "%s: no such %s '%.100s'", field,
                          t->what, v[i]->name);
      return ptb_refuse(e, PTB_WHY_VALUE, field, v[i]->name,
                        "%s: value not finite or beyond +-1e6 for '%.100s'", field, v[i]->name);
    }
    a[i] = (pt_assign){k, v[i]->value};
  }
  *out = a;
  *nout = (int)n;
  return PT_OK;
}

const ptb_name_table ptb_coordinates = {pt_coord_index, pt_model_ncoord, "coordinate"};
const ptb_name_table ptb_control_states = {pt_control_state_index, pt_model_ncontrol_state,
                                      "control state"};
const ptb_name_table ptb_parameters = {pt_param_index, pt_model_nparam, "parameter"};

int ptb_coord_assigns(const pt_model *m, Partita__V1__NamedValue *const *v, size_t n,
                      const char *field, const ptb_opts *o, pt_assign **out, int *nout,
                      ptb_error *e) {
  return ptb_named_assigns(m, v, n, field, &ptb_coordinates, o, out, nout, e);
}

// "all" = value as every actuated coordinate, then the named ones over it, into a (room for
// the actuated coordinates and the named ones). Answers the count.
static int expand_all(double all, const pt_assign *given, int ngiven,
                      const int *coords, int na, pt_assign *a) {
  int k = 0;
  for (; k < na; k++)
    a[k] = (pt_assign){coords[k], all};
  for (int g = 0; g < ngiven; g++) {
    int j = 0;
    while (j < k && a[j].coord != given[g].coord)
      j++;
    a[j] = given[g];
    if (j == k)
      k++;
  }
  return k;
}

int ptb_accelerations(const pt_model *m, Partita__V1__NamedValue *const *v, size_t n,
                      const ptb_opts *o, pt_assign **out, int *nout, ptb_error *e) {
  static const char *const field = "accelerations";
  size_t nall = 0;
  for (size_t i = 0; i < n; i++)
    nall += !strcmp(v[i]->name, "all");
  if (nall == 0)
    return ptb_coord_assigns(m, v, n, field, o, out, nout, e);
  *out = NULL;
  *nout = 0;
  if (n > (size_t)pt_model_ncoord(m) + 64)
    return ptb_refuse(e, PTB_WHY_COUNT, field, NULL, "%s: %zu values for %d coordinates",
                      field, n, pt_model_ncoord(m));
  const int na = pt_actuated_coords(m, NULL, 0);
  double all = 0;
  Partita__V1__NamedValue **named = calloc(n + 1, sizeof(*named));
  pt_assign *a = calloc((size_t)na + n + 1, sizeof(*a));
  int *coords = calloc((size_t)na + 1, sizeof(*coords));
  pt_assign *given = NULL;
  int ngiven = 0, rc = PT_OK;
  size_t nnamed = 0;
  if (!named || !a || !coords) {
    rc = ptb_fail(e, PT_ENOMEM, PTB_AT_REQUEST, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < n && !rc; i++) {
    if (strcmp(v[i]->name, "all")) {
      named[nnamed++] = v[i];
    } else if (!value_ok(o, v[i]->value)) {
      e->value = v[i]->value;
      rc = ptb_refuse(e, PTB_WHY_VALUE, field, "all",
                      "%s: value not finite or beyond +-1e6 for 'all'", field);
    } else {
      all = v[i]->value;
    }
  }
  if (!rc && na == 0)
    rc = ptb_refuse(e, PTB_WHY_ALL, field, "all",
                    "%s: 'all': the model has no actuated coordinate", field);
  if (!rc)
    rc = ptb_coord_assigns(m, named, nnamed, field, o, &given, &ngiven, e);
  if (rc)
    goto done;
  pt_actuated_coords(m, coords, na);
  *nout = expand_all(all, given, ngiven, coords, na, a);
  *out = a;
  a = NULL;
done:
  free(named);
  free(a);
  free(coords);
  free(given);
  return rc;
}

int ptb_set_inputs(const pt_model *m, pt_data *d, Partita__V1__NamedValue *const *v, size_t n,
                   const ptb_opts *o, ptb_error *e) {
  static const char *const field = "input_values";
  if (n > (size_t)pt_model_ninput(m) + 64)
    return ptb_refuse(e, PTB_WHY_COUNT, field, NULL, "%s: %zu values for %d inputs", field, n,
                      pt_model_ninput(m));
  for (size_t i = 0; i < n; i++) {
    const int k = pt_input_index(m, v[i]->name);
    if (k < 0 || !isfinite(v[i]->value)) {
      e->value = v[i]->value;
      return ptb_refuse(e, k < 0 ? PTB_WHY_NAME : PTB_WHY_VALUE, field, v[i]->name,
                        "%s: %s '%.100s'", field,
                        k < 0 ? "no such input" : "value not finite for", v[i]->name);
    }
    if (pt_set_input(m, d, k, v[i]->value) == 1 && o && o->clipped)
      o->clipped(o->arg, v[i]->name, v[i]->value, pt_input_limit(m, k));
  }
  return PT_OK;
}

Partita__V1__NamedValue *ptb_named_new(const char *name, double value) {
  Partita__V1__NamedValue *nv = malloc(sizeof(*nv));
  if (!nv)
    return NULL;
  partita__v1__named_value__init(nv);
  nv->name = strdup(name);
  nv->value = value;
  if (!nv->name) {
    free(nv);
    return NULL;
  }
  return nv;
}

Partita__V1__NamedValue **ptb_named_coords(const pt_model *m, const double *v, size_t *n) {
  const int nc = pt_model_ncoord(m);
  Partita__V1__NamedValue **out = calloc((size_t)nc + 1, sizeof(*out));
  *n = 0;
  if (!out)
    return NULL;
  for (int i = 0; i < nc; i++) {
    if (!(out[i] = ptb_named_new(pt_coord_name(m, i), v[i])))
      return out;
    *n = (size_t)i + 1;
  }
  return out;
}
