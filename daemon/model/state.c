// state.c: protobuf views of a state record and of a model's description. The messages point
// into the record and the model's name tables; only the small arrays are allocated.
#include <stdlib.h>
#include <string.h>

#include "model/state.h"
#include "model/visuals.h"

void state_build(state_msg *m, sim *s, snap_hdr *h, uint32_t fields, int names) {
  Partita__V1__StateFrame f = PARTITA__V1__STATE_FRAME__INIT;
  Partita__V1__Energy e = PARTITA__V1__ENERGY__INIT;
  Partita__V1__Residual r = PARTITA__V1__RESIDUAL__INIT;
  memset(m, 0, sizeof(*m));
  m->f = f;
  m->energy = e;
  m->residual = r;
  fields &= h->fields;
  m->f.model = s->name;
  m->f.time = h->time;
  m->f.step = h->step;
  m->f.mode = (Partita__V1__Mode)h->mode;
  m->f.wall_time_ns = h->wall_ns;
  m->f.input_session = h->input_session;
  m->f.input_sequence = h->input_seq;
  m->f.overran = h->overran != 0;
  size_t nc = (size_t)s->nc, ni = (size_t)s->ni;
  if (fields & FIELD(COORDINATES)) {
    m->f.n_coordinates = nc;
    m->f.coordinates = snap_q(h);
  }
  if (fields & FIELD(RATES)) {
    m->f.n_rates = nc;
    m->f.rates = snap_qd(h, s->nc);
  }
  if (fields & FIELD(ACCELERATIONS)) {
    m->f.n_accelerations = nc;
    m->f.accelerations = snap_qdd(h, s->nc);
  }
  if (fields & FIELD(INPUTS)) {
    m->f.n_inputs = ni;
    m->f.inputs = snap_u(h, s->nc);
  }
  if ((fields & FIELD(BODIES)) && s->nb > 0) {
    m->body = calloc((size_t)s->nb, sizeof(*m->body));
    m->bodyp = calloc((size_t)s->nb, sizeof(*m->bodyp));
    if (m->body && m->bodyp) {
      double *b = snap_body(h, s->nc, s->ni);
      for (int i = 0; i < s->nb; i++, b += 13) {
        Partita__V1__BodyState bs = PARTITA__V1__BODY_STATE__INIT;
        if (names)
          bs.name = (char *)pt_body_name(s->m, i);
        bs.n_position = 3;
        bs.position = b;
        bs.n_orientation = 4;
        bs.orientation = b + 3;
        bs.n_velocity = 3;
        bs.velocity = b + 7;
        bs.n_angular_velocity = 3;
        bs.angular_velocity = b + 10;
        m->body[i] = bs;
        m->bodyp[i] = &m->body[i];
      }
      m->f.n_bodies = (size_t)s->nb;
      m->f.bodies = m->bodyp;
    }
  }
  if (fields & FIELD(ENERGY)) {
    m->energy.kinetic = h->kinetic;
    m->energy.potential = h->potential;
    m->energy.total = h->kinetic + h->potential;
    m->f.energy = &m->energy;
  }
  if (fields & FIELD(RESIDUAL)) {
    m->residual.position = h->res_pos;
    m->residual.velocity = h->res_vel;
    m->f.residual = &m->residual;
  }
  if ((fields & FIELD(CONTROLS)) && s->nsig) {  // control states, signals, parameters
    double *x = snap_ctl(h, s->nc, s->ni, s->nb);
    m->f.n_control_states = (size_t)s->nx;
    m->f.control_states = x;
    m->f.n_signals = (size_t)s->nsig;
    m->f.signals = x + s->nx;
    m->f.n_parameters = (size_t)s->npar;
    m->f.parameters = x + s->nx + s->nsig;
    if (names) {
      m->f.n_signal_names = (size_t)s->nsig;
      m->f.signal_names = (char **)s->signal_names;
      m->f.n_control_state_names = (size_t)s->nx;
      m->f.control_state_names = (char **)s->ctl_names;
    }
  }
  if (names) {
    // the name arrays are built once per model and kept for its lifetime
    m->f.n_coordinate_names = nc;
    m->f.coordinate_names = (char **)s->coord_names;
    m->f.n_input_names = ni;
    m->f.input_names = (char **)s->input_names;
  }
}

void state_release(state_msg *m) {
  free(m->body);
  free(m->bodyp);
  m->body = NULL;
  m->bodyp = NULL;
}

static char **names(int n, const char *(*get)(const pt_model *, int), const pt_model *m) {
  char **v = calloc((size_t)n + 1, sizeof(char *));
  for (int i = 0; v && i < n; i++)
    v[i] = (char *)get(m, i);
  return v;
}

Partita__V1__ModelInfo *model_info_new(sim *s) {
  Partita__V1__ModelInfo init = PARTITA__V1__MODEL_INFO__INIT;
  Partita__V1__ModelInfo *mi = malloc(sizeof(*mi));
  if (!mi)
    return NULL;
  *mi = init;
  const pt_model *m = s->m;
  mi->name = s->name;
  mi->bodies = pt_model_nbody(m);
  mi->joints = pt_model_njoint(m);
  mi->constraints = pt_model_nconstraint(m);
  mi->dof = pt_model_ndof(m);
  mi->n_coordinates = (size_t)s->nc;
  mi->coordinates = (char **)s->coord_names;
  mi->n_inputs = (size_t)s->ni;
  mi->inputs = (char **)s->input_names;
  mi->n_actuators = (size_t)pt_model_nactuator(m);
  mi->actuators = names(pt_model_nactuator(m), pt_actuator_name, m);
  mi->n_motions = (size_t)pt_model_nmotion(m);
  mi->motions = names(pt_model_nmotion(m), pt_motion_name, m);
  mi->n_body_names = (size_t)pt_model_nbody(m);
  mi->body_names = names(pt_model_nbody(m), pt_body_name, m);
  mi->n_joint_names = (size_t)pt_model_njoint(m);
  mi->joint_names = names(pt_model_njoint(m), pt_joint_name, m);
  int ndof = pt_model_ndof(m);
  mi->independent = calloc((size_t)ndof + 1, sizeof(char *));
  if (mi->independent)
    mi->n_independent = (size_t)sim_read_indep(s, (const char **)mi->independent, ndof);
  mi->integrator = (char *)pt_integrator_name(pt_model_integrator(m));
  mi->dt = pt_model_dt(m);
  mi->mode = (Partita__V1__Mode)atomic_load(&s->pub_mode);
  mi->rate = atomic_load(&s->pub_rate);
  mi->warnings = (char *)pt_model_warnings(m);
  mi->time = atomic_load(&s->pub_time);
  mi->step = atomic_load(&s->pub_step);
  mi->n_signals = (size_t)s->nsig;
  mi->signals = (char **)s->signal_names;
  mi->n_control_states = (size_t)s->nx;
  mi->control_states = (char **)s->ctl_names;
  mi->parameters = names(pt_model_nparam(m), pt_param_name, m);
  mi->n_parameters = mi->parameters ? (size_t)pt_model_nparam(m) : 0;
  mi->input_sources = calloc((size_t)s->ni + 1, sizeof(char *));
  for (int i = 0; mi->input_sources && i < s->ni; i++)
    mi->input_sources[i] = (char *)(pt_input_source(m, i) ? pt_input_source(m, i) : "");
  mi->n_input_sources = mi->input_sources ? (size_t)s->ni : 0;
  mi->visuals = visuals_new(m, s->name, &mi->n_visuals);
  mi->joint_markers = joint_markers_new(m, &mi->n_joint_markers);
  if (!mi->actuators || !mi->motions || !mi->body_names || !mi->joint_names)
    mi->n_actuators = mi->n_motions = mi->n_body_names = mi->n_joint_names = 0;
  if (!mi->independent)
    mi->n_independent = 0;
  return mi;
}

void model_info_free(Partita__V1__ModelInfo *mi) {
  if (!mi)
    return;
  free(mi->actuators);
  free(mi->motions);
  free(mi->body_names);
  free(mi->joint_names);
  free(mi->independent);
  free(mi->parameters);
  free(mi->input_sources);
  visuals_free(mi->visuals);
  joint_markers_free(mi->joint_markers);
  free(mi);
}
