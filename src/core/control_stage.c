// control_stage.c: the control elements inside every evaluation of the mechanism (issue 26).
// pt_forces calls pt_control_eval first: the measured quantities are read from the state held
// now, the signals are evaluated in their fixed order (src/control), the driven inputs take
// their signals (so the actuators that follow apply them), and the control states' derivatives
// are left in ctl_xdot for the integrator, which carries the states beside the mechanism's
// (integrate.c). Negrut & Ortiz's eq. (10a-c) evaluated with the equations of motion; nothing
// is allocated.
#include <math.h>
#include <string.h>

#include "engine.h"

double pt_control_measure(const pt_model *m, const pt_data *d, int k) {
  const int ref = m->ctl_meas_ref[k], axis = m->ctl_meas_axis[k];
  switch ((pt_measure_kind)m->ctl_meas_kind[k]) {
    case PT_MEASURE_COORDINATE: {
      double v, jac[12], jdx;
      pt_measure(m, d, ref, &v, jac, &jdx);
      return v;
    }
    case PT_MEASURE_RATE: {  // J x: the Jacobian alone (an angle's is its axis)
      double jac[12];
      pt_measure_jac(m, d, ref, jac);
      return pt_jac_dot_x(d, m->meas_body + 2 * ref, jac);
    }
    case PT_MEASURE_POSITION:
      return d->q[7 * ref + axis];
    case PT_MEASURE_VELOCITY:
      return d->x[6 * ref + axis];
    case PT_MEASURE_ANGULAR_VELOCITY:
      return d->x[6 * ref + 3 + axis];
  }
  return 0;
}

void pt_control_eval(const pt_model *m, pt_data *d) {
  const pt_ctl *c = m->ctl;
  if (!c) return;
  for (int k = 0; k < c->nmeas; k++) d->ctl_meas[k] = pt_control_measure(m, d, k);
  pt_ctl_io io = {d->time,    d->ctl_par, d->ctl_meas,  d->input + m->ctl_input_adr,
                  d->ctl_x,   d->ctl_sig, d->ctl_xdot,  d->ctl_stack};
  pt_ctl_signals(c, &io);
  for (int i = 0; i < m->ctl_input_adr; i++) {
    const int s = m->input_source[i];
    if (s < 0) continue;
    double v = m->input_scale[i] * d->ctl_sig[s];
    const double lim = m->input_limit[i];
    if (lim > 0 && fabs(v) > lim) v = v > 0 ? lim : -lim;  // the actuator's own limit
    d->input[i] = v;
  }
  pt_ctl_derivatives(c, &io);
}

// ---- the public API (partita.h) ----------------------------------------------------------------

int pt_model_nsignal(const pt_model *m) { return m->nsig; }
int pt_model_ncontrol_state(const pt_model *m) { return m->nctlx; }
int pt_model_nparam(const pt_model *m) { return m->nctlpar; }
int pt_model_ncontrol_input(const pt_model *m) { return m->ninput - m->ctl_input_adr; }

const char *pt_signal_name(const pt_model *m, int i) {
  return i >= 0 && i < m->nsig ? m->ctl->sig_name[i] : NULL;
}
const char *pt_control_state_name(const pt_model *m, int i) {
  return i >= 0 && i < m->nctlx ? m->ctl->x_name[i] : NULL;
}
const char *pt_param_name(const pt_model *m, int i) {
  return i >= 0 && i < m->nctlpar ? m->ctl_par_name[i] : NULL;
}
int pt_signal_index(const pt_model *m, const char *name) { return pt_ctl_signal(m->ctl, name); }
int pt_control_state_index(const pt_model *m, const char *name) {
  for (int i = 0; i < m->nctlx; i++)
    if (!strcmp(m->ctl->x_name[i], name)) return i;
  return -1;
}
int pt_param_index(const pt_model *m, const char *name) {
  for (int i = 0; i < m->nctlpar; i++)
    if (!strcmp(m->ctl_par_name[i], name)) return i;
  return -1;
}
const char *pt_input_source(const pt_model *m, int i) {
  if (i < 0 || i >= m->ninput || m->input_source[i] < 0) return NULL;
  return m->ctl->sig_name[m->input_source[i]];
}

const double *pt_signals(const pt_data *d) { return d->ctl_sig; }
const double *pt_control_states(const pt_data *d) { return d->ctl_x; }
const double *pt_control_state_rates(const pt_data *d) { return d->ctl_xdot; }
const double *pt_params(const pt_data *d) { return d->ctl_par; }

int pt_set_control_states(const pt_model *m, pt_data *d, const int *idx, const double *value,
                          int n, pt_error *err) {
  for (int k = 0; k < n; k++)
    if (idx[k] < 0 || idx[k] >= m->nctlx || !isfinite(value[k]))
      return pt_error_set(err, PT_EINVAL, "bad control state value (index %d)", idx[k]);
  for (int k = 0; k < n; k++) d->ctl_x[idx[k]] = value[k];
  d->acc_valid = 0;
  d->abm_count = 0;
  const int rc = pt_forward(m, d);
  if (rc) return pt_error_set(err, rc, "state set, but evaluating it failed: %s",
                              pt_strerror(rc));
  return PT_OK;
}

int pt_set_param(const pt_model *m, pt_data *d, int i, double value, pt_error *err) {
  if (i < 0 || i >= m->nctlpar)
    return pt_error_set(err, PT_EINVAL, "no parameter %d (the model has %d)", i, m->nctlpar);
  char msg[400];
  if (pt_ctl_param_check(m->ctl, d->ctl_par, i, value, msg, sizeof(msg)))
    return pt_error_set(err, PT_EINVAL, "%s", msg);
  if (d->ctl_par[i] != value) {
    d->ctl_par[i] = value;
    d->acc_valid = 0;  // the forces change: f at the step start is evaluated again
  }
  return PT_OK;
}
