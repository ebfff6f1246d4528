// heavy_engine.c: the engine calls behind InverseDynamics, Linearize and Equilibrium (see
// heavy_engine.h): each builds its reply from malloc'd protobuf parts on a copy of the model's
// data.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "api/heavy_engine.h"

// ---- InverseDynamics and Equilibrium (issue 5): engine results to malloc'd protobuf parts --

// Names to coordinate indices on the request's copy (all three heavy requests); unknown names
// and non-finite values are refused (INVALID_ARGUMENT) before anything changes. *out is
// malloc'd (freed by the caller).
static int request_assigns(const pt_model *m, Partita__V1__NamedValue **v, size_t n,
                           const char *what, pt_assign **out, int *nout, char *msg,
                           size_t msglen) {
  *out = NULL;
  *nout = 0;
  if (n == 0)
    return PT_OK;
  if (n > (size_t)pt_model_ncoord(m) + 64) {
    snprintf(msg, msglen, "%s: %zu values for %d coordinates", what, n, pt_model_ncoord(m));
    return PT_EINVAL;
  }
  pt_assign *a = calloc(n, sizeof(*a));
  if (!a) {
    snprintf(msg, msglen, "out of memory");
    return PT_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    const int k = pt_coord_index(m, v[i]->name);
    if (k < 0 || !isfinite(v[i]->value) || fabs(v[i]->value) > PD_MAX_ABS_STATE) {
      snprintf(msg, msglen, "%s: %s '%.100s'", what,
               k < 0 ? "no such coordinate" : "value not finite or beyond +-1e6 for",
               v[i]->name);
      free(a);
      return PT_EINVAL;
    }
    a[i] = (pt_assign){k, v[i]->value};
  }
  *out = a;
  *nout = (int)n;
  return PT_OK;
}

static Partita__V1__NamedValue *inv_named(const char *name, double value) {
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

// The reactions of the limits held (held[j] != 0), by joint name. 0, or -1 out of memory (the
// caller's message owns what was built either way).
static int limit_values(const pt_model *m, const int *held, const double *reaction,
                        Partita__V1__NamedValue ***out, size_t *n) {
  const int nj = pt_model_njoint(m);
  *n = 0;
  if (!(*out = calloc((size_t)nj + 1, sizeof(**out))))
    return -1;
  for (int j = 0; j < nj; j++) {
    if (!held[j])
      continue;
    if (!((*out)[*n] = inv_named(pt_joint_name(m, j), reaction[j])))
      return -1;
    (*n)++;
  }
  return 0;
}

// '\n'-terminated lines as strings, one a line. 0, or -1 out of memory (as limit_values).
static int note_lines(const char *text, char ***out, size_t *n) {
  size_t count = 0;
  for (const char *p = text; p && *p; p++)
    count += *p == '\n' || p[1] == '\0';
  *n = 0;
  if (!(*out = calloc(count + 1, sizeof(**out))))
    return -1;
  for (const char *p = text; p && *p && *n < count;) {
    const char *nl = strchr(p, '\n');
    const size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if (!((*out)[*n] = strndup(p, len)))
      return -1;
    (*n)++;
    p += len + (nl != NULL);
  }
  return 0;
}

// One NamedValue per coordinate, named as the model names them (ncoord values). NULL when out
// of memory; *n is the count built (the caller's message owns what was built either way).
static Partita__V1__NamedValue **named_coords(const pt_model *m, const double *v, size_t *n) {
  const int nc = pt_model_ncoord(m);
  Partita__V1__NamedValue **out = calloc((size_t)nc + 1, sizeof(*out));
  *n = 0;
  if (!out)
    return NULL;
  for (int i = 0; i < nc; i++) {
    if (!(out[i] = inv_named(pt_coord_name(m, i), v[i])))
      return out;
    *n = (size_t)i + 1;
  }
  return out;
}

// Reaction messages of every joint (njoint x 6: force, torque). NULL when out of memory.
static Partita__V1__Reaction **inv_reactions(const pt_model *m, const double *reaction) {
  const int nj = pt_model_njoint(m);
  Partita__V1__Reaction **rs = calloc((size_t)nj + 1, sizeof(*rs));
  if (!rs)
    return NULL;
  for (int j = 0; j < nj; j++) {
    Partita__V1__Reaction *r = malloc(sizeof(*r));
    if (!r)
      goto fail;
    partita__v1__reaction__init(r);
    rs[j] = r;
    r->joint = strdup(pt_joint_name(m, j));
    r->force = malloc(3 * sizeof(double));
    r->torque = malloc(3 * sizeof(double));
    if (!r->joint || !r->force || !r->torque)
      goto fail;
    r->n_force = r->n_torque = 3;
    memcpy(r->force, reaction + 6 * j, 3 * sizeof(double));
    memcpy(r->torque, reaction + 6 * j + 3, 3 * sizeof(double));
  }
  return rs;
fail:
  for (int j = 0; j < nj; j++)
    if (rs[j])
      protobuf_c_message_free_unpacked(&rs[j]->base, NULL);
  free(rs);
  return NULL;
}

// Accelerations of a torque request: the name "all" stands for every actuated coordinate
// (pt_actuated_coords), a coordinate named beside it overrides it. *out is malloc'd.
static int request_accelerations(const pt_model *m, Partita__V1__NamedValue **v, size_t n,
                                 pt_assign **out, int *nout, char *msg, size_t msglen) {
  size_t nall = 0;
  for (size_t i = 0; i < n; i++) nall += !strcmp(v[i]->name, "all");
  if (nall == 0)
    return request_assigns(m, v, n, "accelerations", out, nout, msg, msglen);
  *out = NULL;
  *nout = 0;
  if (n > (size_t)pt_model_ncoord(m) + 64) {
    snprintf(msg, msglen, "accelerations: %zu values for %d coordinates", n, pt_model_ncoord(m));
    return PT_EINVAL;
  }
  const int na = pt_actuated_coords(m, NULL, 0);
  double all = 0;
  Partita__V1__NamedValue **named = calloc(n + 1, sizeof(*named));
  pt_assign *a = calloc((size_t)na + n + 1, sizeof(*a));
  int *coords = calloc((size_t)na + 1, sizeof(*coords));
  pt_assign *given = NULL;
  int ngiven = 0, rc = PT_OK;
  size_t nnamed = 0;
  if (!named || !a || !coords) {
    snprintf(msg, msglen, "out of memory");
    rc = PT_ENOMEM;
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    if (strcmp(v[i]->name, "all")) {
      named[nnamed++] = v[i];
    } else if (!isfinite(v[i]->value) || fabs(v[i]->value) > PD_MAX_ABS_STATE) {
      snprintf(msg, msglen, "accelerations: value not finite or beyond +-1e6 for 'all'");
      rc = PT_EINVAL;
      goto done;
    } else {
      all = v[i]->value;
    }
  }
  if (na == 0) {
    snprintf(msg, msglen, "accelerations: 'all': the model has no actuated coordinate");
    rc = PT_EINVAL;
    goto done;
  }
  rc = request_assigns(m, named, nnamed, "accelerations", &given, &ngiven, msg, msglen);
  if (rc)
    goto done;
  pt_actuated_coords(m, coords, na);
  int k = 0;
  for (; k < na; k++) a[k] = (pt_assign){coords[k], all};
  for (int g = 0; g < ngiven; g++) {
    int j = 0;
    while (j < k && a[j].coord != given[g].coord) j++;
    a[j] = given[g];
    if (j == k) k++;
  }
  *out = a;
  *nout = k;
  a = NULL;
done:
  free(named);
  free(a);
  free(coords);
  free(given);
  return rc;
}

// Kinematic inverse dynamics without accelerations, torque requests with them (issue 5), on
// the request's copy of the data: its state is first set from coordinates/rates (and time).
// gravity: the holding efforts at the configuration (pt_inverse_holding).
int heavy_inverse(const pt_model *m, pt_data *d, const Partita__V1__InverseDynamics *rq,
                  Partita__V1__InverseDynamicsReply **out, char *msg, size_t msglen) {
  *out = NULL;
  pt_assign *pos = NULL, *vel = NULL, *acc = NULL;
  int npos = 0, nvel = 0, nacc = 0;
  pt_inverse_result *res = NULL;
  Partita__V1__InverseDynamicsReply *r = NULL;
  pt_error err = {0, {0}};
  int rc = request_assigns(m, rq->coordinates, rq->n_coordinates, "coordinates", &pos, &npos, msg,
                       msglen);
  if (!rc)
    rc = request_assigns(m, rq->rates, rq->n_rates, "rates", &vel, &nvel, msg, msglen);
  if (!rc)
    rc = request_accelerations(m, rq->accelerations, rq->n_accelerations, &acc, &nacc, msg,
                               msglen);
  if (!rc && rq->gravity && (nvel > 0 || nacc > 0)) {
    snprintf(msg, msglen, "gravity: every rate and acceleration is zero; the request must not "
             "give %s", nvel > 0 ? "rates" : "accelerations");
    rc = PT_EINVAL;
  }
  if (!rc && rq->use_time && !isfinite(rq->time)) {
    snprintf(msg, msglen, "time is not finite");
    rc = PT_EINVAL;
  }
  if (rc)
    goto done;
  res = pt_inverse_result_new(m, rq->gravity ? pt_actuated_coords(m, NULL, 0) : nacc);
  if (!res) {
    rc = PT_ENOMEM;
    snprintf(msg, msglen, "out of memory");
    goto done;
  }
  if ((nacc > 0 || rq->gravity) && rq->use_time)
    rc = pt_inverse_set_time(m, d, rq->time, &err);
  if (!rc && (npos > 0 || nvel > 0))
    rc = pt_set_state(m, d, pos, npos, vel, nvel, &err);
  if (!rc && rq->gravity)
    rc = pt_inverse_holding(m, d, res, &err);
  else if (!rc)
    rc = nacc > 0 ? pt_inverse_request(m, d, acc, nacc, res, &err)
                  : pt_inverse_kinematic(m, d, rq->use_time ? rq->time : pt_time(d), res, &err);
  if (rc) {
    snprintf(msg, msglen, "%.500s", err.msg[0] ? err.msg : pt_strerror(rc));
    goto done;
  }
  r = malloc(sizeof(*r));
  if (!r)
    goto nomem;
  partita__v1__inverse_dynamics_reply__init(r);
  r->time = res->time;
  r->efforts = calloc((size_t)(res->nreq + res->nmotion) + 1, sizeof(*r->efforts));
  if (!r->efforts)
    goto nomem;
  for (int k = 0; k < res->nreq + res->nmotion; k++) {
    const int mo = k - res->nreq;
    r->efforts[k] = mo < 0 ? inv_named(pt_actuator_name(m, res->req_actuator[k]),
                                       res->req_effort[k])
                           : inv_named(pt_motion_name(m, mo), res->motion_effort[mo]);
    if (!r->efforts[k])
      goto nomem;
    r->n_efforts = (size_t)k + 1;
  }
  r->reactions = inv_reactions(m, res->reaction);
  if (!r->reactions)
    goto nomem;
  r->n_reactions = (size_t)pt_model_njoint(m);
  // the members `partita inverse MODEL --json` prints beside these (client/cli/inverse.c)
  const size_t nc = (size_t)pt_model_ncoord(m);
  r->model = strdup(rq->model);   // the name the daemon knows it by
  r->mode = strdup(res->nreq > 0 ? "torque_request" : "kinematic");
  r->coordinates = named_coords(m, res->coord, &r->n_coordinates);
  r->rates = named_coords(m, res->coord_rate, &r->n_rates);
  r->accelerations = named_coords(m, res->coord_acc, &r->n_accelerations);
  if (res->ncoupler > 0) {  // what each coupler transmits (a torque request only)
    r->coupler_efforts = calloc((size_t)res->ncoupler, sizeof(*r->coupler_efforts));
    if (!r->coupler_efforts)
      goto nomem;
    for (int k = 0; k < res->ncoupler; k++) {
      r->coupler_efforts[k] = inv_named(pt_coupler_name(m, k), res->nreq > 0 ? res->coupler_effort[k] : 0);
      if (!r->coupler_efforts[k])
        goto nomem;
      r->n_coupler_efforts = (size_t)k + 1;
    }
  }
  if (!r->model || !r->mode || r->n_coordinates != nc || r->n_rates != nc ||
      r->n_accelerations != nc)
    goto nomem;
  // the limits held as constraints and how each one on a bound was treated
  if (limit_values(m, res->limit_held, res->limit_reaction, &r->limit_reactions,
                   &r->n_limit_reactions) ||
      note_lines(res->limit_notes, &r->limit_notes, &r->n_limit_notes))
    goto nomem;
  *out = r;
  r = NULL;
  goto done;
nomem:
  rc = PT_ENOMEM;
  snprintf(msg, msglen, "out of memory");
done:
  if (r)
    protobuf_c_message_free_unpacked(&r->base, NULL);
  pt_inverse_result_free(res);
  free(pos);
  free(vel);
  free(acc);
  return rc;
}

// ---- Linearize (issue 6): pt_linearize on the copy, the result as malloc'd protobuf parts ----

static Partita__V1__Matrix *lin_matrix(const double *a, int rows, int cols) {
  Partita__V1__Matrix *x = malloc(sizeof(*x));
  const size_t n = (size_t)rows * (size_t)cols;
  double *data = malloc(sizeof(double) * (n ? n : 1));
  if (!x || !data) {
    free(x);
    free(data);
    return NULL;
  }
  partita__v1__matrix__init(x);
  x->rows = (uint32_t)rows;
  x->cols = (uint32_t)cols;
  memcpy(data, a, sizeof(double) * n);
  x->data = data;
  x->n_data = n;
  return x;
}

// A strdup'd copy of n names; NULL when out of memory.
static char **lin_names(char (*names)[PT_LIN_NAME_MAX], int n) {
  char **v = calloc((size_t)n + 1, sizeof(char *));
  for (int i = 0; v && i < n; i++)
    if (!(v[i] = strdup(names[i]))) {
      for (int k = 0; k < i; k++)
        free(v[k]);
      free(v);
      v = NULL;
    }
  return v;
}

// The reply; NULL when out of memory (what was built is freed).
// `model`: the name the daemon knows the model by (the request's).
static Partita__V1__LinearizeReply *lin_reply(const char *model, const pt_linearization *r) {
  const int n2 = 2 * r->nz + r->nd;  // the mechanism's states and rates, the control states
  Partita__V1__LinearizeReply *o = malloc(sizeof(*o));
  if (!o)
    return NULL;
  partita__v1__linearize_reply__init(o);
  if ((o->states = lin_names(r->state_name, n2)))
    o->n_states = (size_t)n2;
  if ((o->inputs = lin_names(r->input_name, r->nu)))
    o->n_inputs = (size_t)r->nu;
  if ((o->outputs = lin_names(r->output_name, r->ny)))
    o->n_outputs = (size_t)r->ny;
  o->a = lin_matrix(r->A, n2, n2);
  o->b = lin_matrix(r->B, n2, r->nu);
  o->c = lin_matrix(r->C, r->ny, n2);
  o->d = lin_matrix(r->D, r->ny, r->nu);
  if ((o->mck = malloc(sizeof(*o->mck)))) {
    partita__v1__mck__init(o->mck);
    o->mck->m = lin_matrix(r->M, r->nz, r->nz);
    o->mck->c = lin_matrix(r->Cmat, r->nz, r->nz);
    o->mck->k = lin_matrix(r->K, r->nz, r->nz);
  }
  if ((o->eigenvalues = calloc((size_t)n2 + 1, sizeof(*o->eigenvalues)))) {
    for (int i = 0; i < n2; i++) {
      Partita__V1__Eigenvalue *e = malloc(sizeof(*e));
      if (!e)
        break;
      partita__v1__eigenvalue__init(e);
      e->re = r->eig[i].re;
      e->im = r->eig[i].im;
      e->freq_hz = r->eig[i].freq_hz;
      e->damping_ratio = r->eig[i].damping_ratio;
      o->eigenvalues[o->n_eigenvalues++] = e;
    }
  }
  // the members `partita linearize MODEL --json` prints beside these (client/cli/linearize.c):
  // the notes split at their '\n' ends, one string a line
  o->model = strdup(model);
  o->time = r->time;
  o->order = r->size;
  size_t nnote = 0, nnote_made = 0;
  for (const char *p = r->notes; p && *p; p++)
    nnote += *p == '\n' || p[1] == '\0';
  if ((o->notes = calloc(nnote + 1, sizeof(char *)))) {
    for (const char *p = r->notes; p && *p && nnote_made < nnote;) {
      const char *nl = strchr(p, '\n');
      const size_t len = nl ? (size_t)(nl - p) : strlen(p);
      if (!(o->notes[nnote_made] = strndup(p, len)))
        break;
      o->n_notes = ++nnote_made;
      p += len + (nl != NULL);
    }
  }
  if (!o->states || !o->inputs || !o->outputs || !o->a || !o->b || !o->c || !o->d || !o->mck ||
      !o->mck->m || !o->mck->c || !o->mck->k || !o->eigenvalues ||
      o->n_eigenvalues != (size_t)n2 || !o->model || !o->notes || o->n_notes != nnote) {
    protobuf_c_message_free_unpacked(&o->base, NULL);
    return NULL;
  }
  return o;
}

int heavy_linearize(const pt_model *m, pt_linearizer *lz, pt_data *d,
                    const Partita__V1__Linearize *rq, Partita__V1__LinearizeReply **out,
                    char *msg, size_t msglen) {
  *out = NULL;
  pt_assign *pos = NULL, *vel = NULL;
  int npos = 0, nvel = 0;
  int rc = request_assigns(m, rq->coordinates, rq->n_coordinates, "coordinates", &pos, &npos, msg,
                           msglen);
  if (!rc)
    rc = request_assigns(m, rq->rates, rq->n_rates, "rates", &vel, &nvel, msg, msglen);
  pt_error err = {0, {0}};
  if (!rc && (npos > 0 || nvel > 0)) {   // a given operating point, assembled on the copy
    rc = pt_set_state(m, d, pos, npos, vel, nvel, &err);
    if (rc)
      snprintf(msg, msglen, "operating point: %.400s", err.msg);
  }
  free(pos);
  free(vel);
  // inputs held at the operating point, on the copy only
  if (!rc && rq->n_input_values > (size_t)pt_model_ninput(m) + 64) {
    snprintf(msg, msglen, "input_values: %zu values for %d inputs", rq->n_input_values,
             pt_model_ninput(m));
    rc = PT_EINVAL;
  }
  for (size_t i = 0; !rc && i < rq->n_input_values; i++) {
    const Partita__V1__NamedValue *v = rq->input_values[i];
    const int k = pt_input_index(m, v->name);
    if (k < 0 || !isfinite(v->value)) {
      snprintf(msg, msglen, "input_values: %s '%.100s'",
               k < 0 ? "no such input" : "value not finite for", v->name);
      rc = PT_EINVAL;
    } else {
      pt_set_input(m, d, k, v->value);   // clipped to the actuator's limit, as SetInputs
    }
  }
  if (rc)
    return rc;
  const size_t lim = (size_t)pt_model_ncoord(m) + (size_t)pt_model_ninput(m) + 6 *
                     (size_t)pt_model_nbody(m);
  if (rq->n_states > lim || rq->n_inputs > lim || rq->n_outputs > 3 * lim) {
    snprintf(msg, msglen, "too many names in the request");
    return PT_EINVAL;
  }
  pt_linearize_options o = {(const char *const *)rq->states, (int)rq->n_states,
                            (const char *const *)rq->inputs, (int)rq->n_inputs,
                            (const char *const *)rq->outputs, (int)rq->n_outputs,
                            PT_LIN_SPARSE};
  pt_linearization *r = NULL;
  rc = pt_linearize_with(lz, d, &o, PT_LIN_EIGEN, &r, &err);
  if (rc) {
    snprintf(msg, msglen, "%.500s", err.msg[0] ? err.msg : pt_strerror(rc));
    return rc;
  }
  *out = lin_reply(rq->model, r);
  pt_linearization_free(r);
  if (!*out) {
    snprintf(msg, msglen, "out of memory");
    return PT_ENOMEM;
  }
  msg[0] = '\0';
  return PT_OK;
}

// Static equilibrium (issue 5) from the copy's state, or from the coordinates given as the
// initial guess. The glue applies it to the live model when asked (analyses.c).
int heavy_equilibrium(const pt_model *m, pt_data *d, const Partita__V1__Equilibrium *rq,
                      Partita__V1__EquilibriumReply **out, char *msg, size_t msglen) {
  *out = NULL;
  pt_assign *pos = NULL;
  int npos = 0;
  pt_equilibrium_result *res = NULL;
  Partita__V1__EquilibriumReply *r = NULL;
  pt_error err = {0, {0}};
  int rc = request_assigns(m, rq->coordinates, rq->n_coordinates, "coordinates", &pos, &npos, msg,
                       msglen);
  if (!rc && (!isfinite(rq->tolerance) || rq->tolerance < 0 || rq->max_iterations > 100000)) {
    snprintf(msg, msglen, "tolerance must be >= 0 and max_iterations <= 100000");
    rc = PT_EINVAL;
  }
  if (rc)
    goto done;
  res = pt_equilibrium_result_new(m);
  if (!res) {
    rc = PT_ENOMEM;
    snprintf(msg, msglen, "out of memory");
    goto done;
  }
  if (npos > 0)
    rc = pt_set_state(m, d, pos, npos, NULL, 0, &err);
  pt_equilibrium_options o = {0};
  o.max_iterations = (int)rq->max_iterations;
  o.tolerance = rq->tolerance;
  o.no_damped = rq->newton_only;
  o.allow_unstable = rq->allow_unstable;
  if (!rc)
    rc = pt_equilibrium(m, d, &o, res, &err);
  if (rc) {
    snprintf(msg, msglen, "%.500s", err.msg[0] ? err.msg : pt_strerror(rc));
    goto done;
  }
  r = malloc(sizeof(*r));
  if (!r)
    goto nomem;
  partita__v1__equilibrium_reply__init(r);
  const int nc = pt_model_ncoord(m);
  r->coordinates = calloc((size_t)nc + 1, sizeof(*r->coordinates));
  if (!r->coordinates)
    goto nomem;
  for (int i = 0; i < nc; i++) {
    r->coordinates[i] = inv_named(pt_coord_name(m, i), res->coord[i]);
    if (!r->coordinates[i])
      goto nomem;
    r->n_coordinates = (size_t)i + 1;
  }
  r->reactions = inv_reactions(m, res->reaction);
  if (!r->reactions)
    goto nomem;
  r->n_reactions = (size_t)pt_model_njoint(m);
  r->iterations = res->iterations;
  r->residual = res->residual;
  // the members `partita equilibrium MODEL --json` prints beside these (client/cli/
  // equilibrium.c): the efforts are those of the prescribed motions, frozen at `time`
  r->model = strdup(rq->model);   // the name the daemon knows it by
  r->time = res->time;
  r->damped_steps = res->damped_steps;
  r->stable = res->stable == 1;
  r->efforts = calloc((size_t)res->nmotion + 1, sizeof(*r->efforts));
  if (!r->model || !r->efforts)
    goto nomem;
  for (int i = 0; i < res->nmotion; i++) {
    if (!(r->efforts[i] = inv_named(pt_motion_name(m, i), res->motion_effort[i])))
      goto nomem;
    r->n_efforts = (size_t)i + 1;
  }
  // couplers' efforts, the limits held and how each one on a bound was treated
  if (res->ncoupler > 0) {
    r->coupler_efforts = calloc((size_t)res->ncoupler, sizeof(*r->coupler_efforts));
    if (!r->coupler_efforts)
      goto nomem;
    for (int k = 0; k < res->ncoupler; k++) {
      if (!(r->coupler_efforts[k] = inv_named(pt_coupler_name(m, k), res->coupler_effort[k])))
        goto nomem;
      r->n_coupler_efforts = (size_t)k + 1;
    }
  }
  if (limit_values(m, res->limit_held, res->limit_reaction, &r->limit_reactions,
                   &r->n_limit_reactions) ||
      note_lines(res->limit_notes, &r->limit_notes, &r->n_limit_notes))
    goto nomem;
  *out = r;
  r = NULL;
  goto done;
nomem:
  rc = PT_ENOMEM;
  snprintf(msg, msglen, "out of memory");
done:
  if (r)
    protobuf_c_message_free_unpacked(&r->base, NULL);
  pt_equilibrium_result_free(res);
  free(pos);
  return rc;
}
