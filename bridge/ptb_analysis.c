// ptb_analysis.c: InverseDynamics, Linearize and Equilibrium against (pt_model, pt_data)
// (ptb_analysis.h). Each runs in three steps: the request to engine arguments (refused whole
// before anything changes), the engine on d, the result to the reply.
#include "ptb_analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ptb_assign.h"
#include "ptb_reply.h"

static int no_memory(ptb_error *e) {
  return ptb_fail(e, PT_ENOMEM, PTB_AT_MEMORY, "out of memory");
}

// Frees the n NamedValues of v and v; answers NULL.
static Partita__V1__NamedValue **free_named(Partita__V1__NamedValue **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    protobuf_c_message_free_unpacked(&v[i]->base, NULL);
  free(v);
  return NULL;
}

// n NamedValues of (name(m, i), v[i]); NULL when out of memory (*n: the count built).
static Partita__V1__NamedValue **named_list(const pt_model *m, int count,
                                            const char *(*name)(const pt_model *, int),
                                            const double *v, size_t *n) {
  Partita__V1__NamedValue **out = calloc((size_t)count + 1, sizeof(*out));
  *n = 0;
  for (int i = 0; out && i < count; i++) {
    if (!(out[i] = ptb_named_new(name(m, i), v[i]))) {
      out = free_named(out, *n);
      *n = 0;
      break;
    }
    *n = (size_t)i + 1;
  }
  return out;
}

// The limits held as constraints (their reactions by joint) and how each one on a bound was
// treated (the notes, one a line): 1, or 0 when out of memory.
static int limits_reply(const pt_model *m, const int *held, const double *reaction,
                        const char *notes, Partita__V1__NamedValue ***values, size_t *nvalues,
                        char ***lines, size_t *nlines) {
  return !ptb_limit_values(m, held, reaction, values, nvalues) &&
         !ptb_lines(notes, lines, nlines);
}

// ---------------------------------------------------------------------------------------------
// InverseDynamics (issue 5)

typedef struct {
  pt_assign *pos, *vel, *acc;
  int npos, nvel, nacc;
} inv_args;

// The request's coordinates, rates and accelerations; gravity takes neither rates nor
// accelerations; a given time must be finite.
static int inverse_args(const pt_model *m, const Partita__V1__InverseDynamics *rq,
                        const ptb_opts *o, inv_args *a, ptb_error *e) {
  int rc = ptb_coord_assigns(m, rq->coordinates, rq->n_coordinates, "coordinates", o, &a->pos,
                             &a->npos, e);
  if (!rc)
    rc = ptb_coord_assigns(m, rq->rates, rq->n_rates, "rates", o, &a->vel, &a->nvel, e);
  if (!rc)
    rc = ptb_accelerations(m, rq->accelerations, rq->n_accelerations, o, &a->acc, &a->nacc, e);
  if (!rc && rq->gravity && (a->nvel > 0 || a->nacc > 0))
    rc = ptb_refuse(e, PTB_WHY_CONFLICT, "gravity", NULL,
                    "gravity: every rate and acceleration is zero; the request must not give "
                    "%s", a->nvel > 0 ? "rates" : "accelerations");
  if (!rc && rq->use_time && !isfinite(rq->time))
    rc = ptb_refuse(e, PTB_WHY_VALUE, "time", NULL, "time is not finite");
  return rc;
}

// The engine on d: its time (a torque request at a chosen time), its state, then the holding
// efforts, the torque request or the kinematic inverse dynamics.
static int inverse_run(const pt_model *m, pt_data *d, const Partita__V1__InverseDynamics *rq,
                       const inv_args *a, pt_inverse_result *res, ptb_error *e) {
  pt_error err = {0, {0}};
  int rc = 0;
  if ((a->nacc > 0 || rq->gravity) && rq->use_time &&
      (rc = pt_inverse_set_time(m, d, rq->time, &err)) != 0)
    return ptb_engine_fail(e, rc, PTB_AT_TIME, &err, "");
  if ((a->npos > 0 || a->nvel > 0) &&
      (rc = pt_set_state(m, d, a->pos, a->npos, a->vel, a->nvel, &err)) != 0)
    return ptb_engine_fail(e, rc, PTB_AT_STATE, &err, "");
  if (rq->gravity)
    rc = pt_inverse_holding(m, d, res, &err);
  else if (a->nacc > 0)
    rc = pt_inverse_request(m, d, a->acc, a->nacc, res, &err);
  else
    rc = pt_inverse_kinematic(m, d, rq->use_time ? rq->time : pt_time(d), res, &err);
  return rc ? ptb_engine_fail(e, rc, PTB_AT_ENGINE, &err, "") : PT_OK;
}

// The efforts: the requested actuators' first, then the motions'.
static int inverse_efforts(const pt_model *m, const pt_inverse_result *res,
                           Partita__V1__InverseDynamicsReply *r) {
  r->efforts = calloc((size_t)(res->nreq + res->nmotion) + 1, sizeof(*r->efforts));
  if (!r->efforts)
    return -1;
  for (int k = 0; k < res->nreq + res->nmotion; k++) {
    const int mo = k - res->nreq;
    r->efforts[k] = mo < 0 ? ptb_named_new(pt_actuator_name(m, res->req_actuator[k]),
                                           res->req_effort[k])
                           : ptb_named_new(pt_motion_name(m, mo), res->motion_effort[mo]);
    if (!r->efforts[k])
      return -1;
    r->n_efforts = (size_t)k + 1;
  }
  return 0;
}

// What each coupler transmits: its effort in a torque request, 0 in kinematic inverse
// dynamics.
static Partita__V1__NamedValue **coupler_values(const pt_model *m, int ncoupler,
                                                const double *effort, int zero, size_t *n) {
  Partita__V1__NamedValue **out = calloc((size_t)ncoupler, sizeof(*out));
  *n = 0;
  for (int k = 0; out && k < ncoupler; k++) {
    if (!(out[k] = ptb_named_new(pt_coupler_name(m, k), zero ? 0 : effort[k]))) {
      out = free_named(out, *n);
      *n = 0;
    } else {
      *n = (size_t)k + 1;
    }
  }
  return out;
}

// The reply, NULL when out of memory (what was built is freed). `model`: the name the
// caller knows the model by.
static Partita__V1__InverseDynamicsReply *inverse_reply(const pt_model *m, const char *model,
                                                        const pt_inverse_result *res) {
  Partita__V1__InverseDynamicsReply *r = malloc(sizeof(*r));
  if (!r)
    return NULL;
  partita__v1__inverse_dynamics_reply__init(r);
  r->time = res->time;
  int ok = inverse_efforts(m, res, r) == 0;
  if (ok && (r->reactions = ptb_reactions(m, res->reaction)))
    r->n_reactions = (size_t)pt_model_njoint(m);
  // the members `partita inverse MODEL --json` prints beside these
  const size_t nc = (size_t)pt_model_ncoord(m);
  r->model = strdup(model);
  r->mode = strdup(res->nreq > 0 ? "torque_request" : "kinematic");
  r->coordinates = ptb_named_coords(m, res->coord, &r->n_coordinates);
  r->rates = ptb_named_coords(m, res->coord_rate, &r->n_rates);
  r->accelerations = ptb_named_coords(m, res->coord_acc, &r->n_accelerations);
  if (res->ncoupler > 0)
    ok = ok && (r->coupler_efforts = coupler_values(m, res->ncoupler, res->coupler_effort,
                                                    res->nreq == 0, &r->n_coupler_efforts));
  ok = ok && r->reactions && r->model && r->mode && r->n_coordinates == nc &&
       r->n_rates == nc && r->n_accelerations == nc &&
       limits_reply(m, res->limit_held, res->limit_reaction, res->limit_notes,
                    &r->limit_reactions, &r->n_limit_reactions, &r->limit_notes,
                    &r->n_limit_notes);
  if (!ok) {
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return NULL;
  }
  return r;
}

int ptb_inverse(const pt_model *m, pt_data *d, const Partita__V1__InverseDynamics *rq,
                const ptb_opts *o, Partita__V1__InverseDynamicsReply **out, ptb_error *e) {
  *out = NULL;
  ptb_error_clear(e);
  inv_args a = {0};
  pt_inverse_result *res = NULL;
  int rc = inverse_args(m, rq, o, &a, e);
  if (rc)
    goto done;
  res = pt_inverse_result_new(m, rq->gravity ? pt_actuated_coords(m, NULL, 0) : a.nacc);
  if (!res) {
    rc = no_memory(e);
    goto done;
  }
  if ((rc = inverse_run(m, d, rq, &a, res, e)) != 0)
    goto done;
  if (!(*out = inverse_reply(m, rq->model, res)))
    rc = no_memory(e);
done:
  pt_inverse_result_free(res);
  free(a.pos);
  free(a.vel);
  free(a.acc);
  return rc;
}

// ---------------------------------------------------------------------------------------------
// Linearize (issue 6)

// A given operating point, assembled on d, and the inputs held there (on d only).
static int linearize_point(const pt_model *m, pt_data *d, const Partita__V1__Linearize *rq,
                           const ptb_opts *o, ptb_error *e) {
  pt_assign *pos = NULL, *vel = NULL;
  int npos = 0, nvel = 0;
  int rc = ptb_coord_assigns(m, rq->coordinates, rq->n_coordinates, "coordinates", o, &pos,
                             &npos, e);
  if (!rc)
    rc = ptb_coord_assigns(m, rq->rates, rq->n_rates, "rates", o, &vel, &nvel, e);
  pt_error err = {0, {0}};
  if (!rc && (npos > 0 || nvel > 0) &&
      (rc = pt_set_state(m, d, pos, npos, vel, nvel, &err)) != 0) {
    e->engine = err;
    ptb_fail(e, rc, PTB_AT_STATE, "operating point: %.400s", err.msg);
  }
  free(pos);
  free(vel);
  if (!rc)
    rc = ptb_set_inputs(m, d, rq->input_values, rq->n_input_values, o, e);
  return rc;
}

// The reply; NULL when out of memory (what was built is freed). `model`: the name the caller
// knows the model by.
static Partita__V1__LinearizeReply *linearize_reply(const char *model,
                                                    const pt_linearization *r) {
  const int n2 = 2 * r->nz + r->nd;  // the mechanism's states and rates, the control states
  Partita__V1__LinearizeReply *o = malloc(sizeof(*o));
  if (!o)
    return NULL;
  partita__v1__linearize_reply__init(o);
  if ((o->states = ptb_names(r->state_name, n2)))
    o->n_states = (size_t)n2;
  if ((o->inputs = ptb_names(r->input_name, r->nu)))
    o->n_inputs = (size_t)r->nu;
  if ((o->outputs = ptb_names(r->output_name, r->ny)))
    o->n_outputs = (size_t)r->ny;
  o->a = ptb_matrix(r->A, n2, n2);
  o->b = ptb_matrix(r->B, n2, r->nu);
  o->c = ptb_matrix(r->C, r->ny, n2);
  o->d = ptb_matrix(r->D, r->ny, r->nu);
  if ((o->mck = malloc(sizeof(*o->mck)))) {
    partita__v1__mck__init(o->mck);
    o->mck->m = ptb_matrix(r->M, r->nz, r->nz);
    o->mck->c = ptb_matrix(r->Cmat, r->nz, r->nz);
    o->mck->k = ptb_matrix(r->K, r->nz, r->nz);
  }
  if ((o->eigenvalues = calloc((size_t)n2 + 1, sizeof(*o->eigenvalues)))) {
    for (int i = 0; i < n2; i++) {
      Partita__V1__Eigenvalue *ev = malloc(sizeof(*ev));
      if (!ev)
        break;
      partita__v1__eigenvalue__init(ev);
      ev->re = r->eig[i].re;
      ev->im = r->eig[i].im;
      ev->freq_hz = r->eig[i].freq_hz;
      ev->damping_ratio = r->eig[i].damping_ratio;
      o->eigenvalues[o->n_eigenvalues++] = ev;
    }
  }
  // the members `partita linearize MODEL --json` prints beside these: the notes one a line
  o->model = strdup(model);
  o->time = r->time;
  o->order = r->size;
  const int notes_ok = ptb_lines(r->notes, &o->notes, &o->n_notes) == 0;
  if (!o->states || !o->inputs || !o->outputs || !o->a || !o->b || !o->c || !o->d || !o->mck ||
      !o->mck->m || !o->mck->c || !o->mck->k || !o->eigenvalues ||
      o->n_eigenvalues != (size_t)n2 || !o->model || !notes_ok) {
    protobuf_c_message_free_unpacked(&o->base, NULL);
    return NULL;
  }
  return o;
}

int ptb_linearize(pt_linearizer *lz, const pt_model *m, pt_data *d,
                  const Partita__V1__Linearize *rq, const ptb_opts *o,
                  Partita__V1__LinearizeReply **out, ptb_error *e) {
  *out = NULL;
  ptb_error_clear(e);
  int rc = linearize_point(m, d, rq, o, e);
  if (rc)
    return rc;
  const size_t lim = (size_t)pt_model_ncoord(m) + (size_t)pt_model_ninput(m) +
                     6 * (size_t)pt_model_nbody(m);
  if (rq->n_states > lim || rq->n_inputs > lim || rq->n_outputs > 3 * lim)
    return ptb_refuse(e, PTB_WHY_COUNT, "states", NULL, "too many names in the request");
  pt_linearize_options lo = {(const char *const *)rq->states, (int)rq->n_states,
                             (const char *const *)rq->inputs, (int)rq->n_inputs,
                             (const char *const *)rq->outputs, (int)rq->n_outputs,
                             o && o->dense ? PT_LIN_DENSE : PT_LIN_SPARSE};
  pt_linearization *r = NULL;
  pt_error err = {0, {0}};
  rc = pt_linearize_with(lz, d, &lo, PT_LIN_EIGEN, &r, &err);
  if (rc)
    return ptb_engine_fail(e, rc, PTB_AT_ENGINE, &err, "");
  *out = linearize_reply(rq->model, r);
  pt_linearization_free(r);
  return *out ? PT_OK : no_memory(e);
}

// ---------------------------------------------------------------------------------------------
// Equilibrium (issue 5)

// The reply, NULL when out of memory (what was built is freed). `model`: the name the caller
// knows the model by.
static Partita__V1__EquilibriumReply *equilibrium_reply(const pt_model *m, const char *model,
                                                        const pt_equilibrium_result *res) {
  Partita__V1__EquilibriumReply *r = malloc(sizeof(*r));
  if (!r)
    return NULL;
  partita__v1__equilibrium_reply__init(r);
  r->coordinates = ptb_named_coords(m, res->coord, &r->n_coordinates);
  if ((r->reactions = ptb_reactions(m, res->reaction)))
    r->n_reactions = (size_t)pt_model_njoint(m);
  r->iterations = res->iterations;
  r->residual = res->residual;
  // the members `partita equilibrium MODEL --json` prints beside these: the efforts are those
  // of the prescribed motions, frozen at `time`
  r->model = strdup(model);
  r->time = res->time;
  r->damped_steps = res->damped_steps;
  r->stable = res->stable == 1;
  r->efforts = named_list(m, res->nmotion, pt_motion_name, res->motion_effort, &r->n_efforts);
  int ok = r->coordinates && r->n_coordinates == (size_t)pt_model_ncoord(m) && r->reactions &&
           r->model && r->efforts;
  // couplers' efforts, then the limits
  if (res->ncoupler > 0)
    ok = ok && (r->coupler_efforts = coupler_values(m, res->ncoupler, res->coupler_effort, 0,
                                                    &r->n_coupler_efforts));
  ok = ok && limits_reply(m, res->limit_held, res->limit_reaction, res->limit_notes,
                          &r->limit_reactions, &r->n_limit_reactions, &r->limit_notes,
                          &r->n_limit_notes);
  if (!ok) {
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return NULL;
  }
  return r;
}

int ptb_equilibrium(const pt_model *m, pt_data *d, const Partita__V1__Equilibrium *rq,
                    const ptb_opts *o, Partita__V1__EquilibriumReply **out, ptb_error *e) {
  *out = NULL;
  ptb_error_clear(e);
  pt_assign *pos = NULL;
  int npos = 0;
  pt_equilibrium_result *res = NULL;
  pt_error err = {0, {0}};
  int rc = ptb_coord_assigns(m, rq->coordinates, rq->n_coordinates, "coordinates", o, &pos,
                             &npos, e);
  if (!rc && (!isfinite(rq->tolerance) || rq->tolerance < 0 || rq->max_iterations > 100000))
    rc = ptb_refuse(e, PTB_WHY_VALUE, "tolerance", NULL,
                    "tolerance must be >= 0 and max_iterations <= 100000");
  if (rc)
    goto done;
  if (!(res = pt_equilibrium_result_new(m))) {
    rc = no_memory(e);
    goto done;
  }
  if (npos > 0 && (rc = pt_set_state(m, d, pos, npos, NULL, 0, &err)) != 0) {
    rc = ptb_engine_fail(e, rc, PTB_AT_STATE, &err, "");
    goto done;
  }
  pt_equilibrium_options eo = {0};
  eo.max_iterations = (int)rq->max_iterations;
  eo.tolerance = rq->tolerance;
  eo.no_damped = rq->newton_only;
  eo.allow_unstable = rq->allow_unstable;
  if ((rc = pt_equilibrium(m, d, &eo, res, &err)) != 0) {
    rc = ptb_engine_fail(e, rc, PTB_AT_ENGINE, &err, "");
    goto done;
  }
  if (!(*out = equilibrium_reply(m, rq->model, res)))
    rc = no_memory(e);
done:
  pt_equilibrium_result_free(res);
  free(pos);
  return rc;
}
