// ptb_frame.c: a StateFrame from a model's state (ptb_frame.h).
#include "ptb_frame.h"

#include <stdlib.h>
#include <string.h>

void ptb_state_of_data(ptb_state *s, const pt_model *m, const pt_data *d) {
  memset(s, 0, sizeof(*s));
  s->model = pt_model_name(m);
  s->time = pt_time(d);
  s->step = pt_nstep(d);
  s->nc = pt_model_ncoord(m);
  s->ni = pt_model_ninput(m);
  s->q = pt_coords(d);
  s->qd = pt_coord_rates(d);
  s->qdd = pt_coord_accels(d);
  s->u = pt_inputs(d);
  s->kinetic = pt_energy_kinetic(d);
  s->potential = pt_energy_potential(d);
  s->res_pos = pt_residual_position(d);
  s->res_vel = pt_residual_velocity(d);
  s->m = m;
  s->nx = pt_model_ncontrol_state(m);
  s->nsig = pt_model_nsignal(m);
  s->npar = pt_model_nparam(m);
  s->x = pt_control_states(d);
  s->sig = pt_signals(d);
  s->par = pt_params(d);
}

// Body poses and velocities, 13 doubles a body; nothing when out of memory.
static void frame_bodies(ptb_frame *fr, const ptb_state *s, int names) {
  fr->body = calloc((size_t)s->nb, sizeof(*fr->body));
  fr->bodyp = calloc((size_t)s->nb, sizeof(*fr->bodyp));
  if (!fr->body || !fr->bodyp)
    return;
  const double *b = s->body;
  for (int i = 0; i < s->nb; i++, b += 13) {
    Partita__V1__BodyState bs = PARTITA__V1__BODY_STATE__INIT;
    if (names && s->m)
      bs.name = (char *)pt_body_name(s->m, i);
    bs.n_position = 3;
    bs.position = (double *)b;
    bs.n_orientation = 4;
    bs.orientation = (double *)b + 3;
    bs.n_velocity = 3;
    bs.velocity = (double *)b + 7;
    bs.n_angular_velocity = 3;
    bs.angular_velocity = (double *)b + 10;
    fr->body[i] = bs;
    fr->bodyp[i] = &fr->body[i];
  }
  fr->f.n_bodies = (size_t)s->nb;
  fr->f.bodies = fr->bodyp;
}

void ptb_frame_build(ptb_frame *fr, const ptb_state *s, uint32_t fields, int names) {
  Partita__V1__StateFrame f = PARTITA__V1__STATE_FRAME__INIT;
  Partita__V1__Energy en = PARTITA__V1__ENERGY__INIT;
  Partita__V1__Residual res = PARTITA__V1__RESIDUAL__INIT;
  memset(fr, 0, sizeof(*fr));
  fr->f = f;
  fr->energy = en;
  fr->residual = res;
  fr->f.model = (char *)s->model;
  fr->f.time = s->time;
  fr->f.step = s->step;
  fr->f.mode = (Partita__V1__Mode)s->mode;
  const size_t nc = (size_t)s->nc, ni = (size_t)s->ni;
  if (fields & PTB_FIELD_COORDINATES) {
    fr->f.n_coordinates = nc;
    fr->f.coordinates = (double *)s->q;
  }
  if (fields & PTB_FIELD_RATES) {
    fr->f.n_rates = nc;
    fr->f.rates = (double *)s->qd;
  }
  if (fields & PTB_FIELD_ACCELERATIONS) {
    fr->f.n_accelerations = nc;
    fr->f.accelerations = (double *)s->qdd;
  }
  if (fields & PTB_FIELD_INPUTS) {
    fr->f.n_inputs = ni;
    fr->f.inputs = (double *)s->u;
  }
  if ((fields & PTB_FIELD_BODIES) && s->nb > 0 && s->body)
    frame_bodies(fr, s, names);
  if (fields & PTB_FIELD_ENERGY) {
    fr->energy.kinetic = s->kinetic;
    fr->energy.potential = s->potential;
    fr->energy.total = s->kinetic + s->potential;
    fr->f.energy = &fr->energy;
  }
  if (fields & PTB_FIELD_RESIDUAL) {
    fr->residual.position = s->res_pos;
    fr->residual.velocity = s->res_vel;
    fr->f.residual = &fr->residual;
  }
  if ((fields & PTB_FIELD_CONTROLS) && s->nsig > 0) {
    fr->f.n_control_states = (size_t)s->nx;
    fr->f.control_states = (double *)s->x;
    fr->f.n_signals = (size_t)s->nsig;
    fr->f.signals = (double *)s->sig;
    fr->f.n_parameters = (size_t)s->npar;
    fr->f.parameters = (double *)s->par;
    if (names && s->signal_names && s->ctl_names) {
      fr->f.n_signal_names = (size_t)s->nsig;
      fr->f.signal_names = (char **)s->signal_names;
      fr->f.n_control_state_names = (size_t)s->nx;
      fr->f.control_state_names = (char **)s->ctl_names;
    }
  }
  if (names) {
    fr->f.n_coordinate_names = nc;
    fr->f.coordinate_names = (char **)s->coord_names;
    fr->f.n_input_names = ni;
    fr->f.input_names = (char **)s->input_names;
  }
}

void ptb_frame_release(ptb_frame *fr) {
  free(fr->body);
  free(fr->bodyp);
  fr->body = NULL;
  fr->bodyp = NULL;
}
