// state.c: protobuf views of a state record (through the bridge's ptb_frame.h) and of a
// model's description. The messages point into the record and the model's name tables; only
// the small arrays are allocated.
#include <stdlib.h>
#include <string.h>

#include "model/state.h"
#include "model/visuals.h"

void state_frame(ptb_frame *fr, sim *s, snap_hdr *h, uint32_t fields, int names) {
  // control states, signals and parameters, one after the other in the record
  const double *ctl = snap_ctl(h, s->nc, s->ni, s->nb);
  const ptb_state st = {
    .model = s->name,
    .time = h->time,
    .step = h->step,
    .mode = h->mode,
    .nc = s->nc,
    .ni = s->ni,
    .nb = s->nb,
    .q = snap_q(h),
    .qd = snap_qd(h, s->nc),
    .qdd = snap_qdd(h, s->nc),
    .u = snap_u(h, s->nc),
    .body = snap_body(h, s->nc, s->ni),
    .kinetic = h->kinetic,
    .potential = h->potential,
    .res_pos = h->res_pos,
    .res_vel = h->res_vel,
    .m = s->m,
    // the name arrays are built once per model and kept for its lifetime
    .coord_names = (char *const *)s->coord_names,
    .input_names = (char *const *)s->input_names,
    .nx = s->nx,
    .nsig = s->nsig,
    .npar = s->npar,
    .x = ctl,
    .sig = ctl + s->nx,
    .par = ctl + s->nx + s->nsig,
    .ctl_names = (char *const *)s->ctl_names,
    .signal_names = (char *const *)s->signal_names,
  };
  ptb_frame_build(fr, &st, fields & h->fields, names);
  // what only a live model's record knows
  fr->f.wall_time_ns = h->wall_ns;
  fr->f.input_session = h->input_session;
  fr->f.input_sequence = h->input_seq;
  fr->f.overran = h->overran != 0;
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
