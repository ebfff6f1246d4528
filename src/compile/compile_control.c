// compile_control.c: control elements in the model (issue 26): expression forces turned into
// driven actuators, the signal graph built (src/control), measured quantities resolved to
// coordinates and bodies, control inputs named, actuators' `source:` signals resolved.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "compile_control.h"

// `FILE:LINE: list[idx] "name": what` (PT_EMODEL)
#define FAIL(s, line, list, idx, name, ...) \
  pt_spec_fail(err, PT_EMODEL, s, line, list, idx, name, __VA_ARGS__)

// The actuator an expression_force compiles to (f: forces[i]).
static int force_actuator(const pt_spec *s, int i, pt_spec_actuator *a, pt_error *err) {
  const pt_spec_force *f = &s->forces[i];
  for (int k = 0; k < s->nactuator; k++)
    if (!strcmp(s->actuators[k].name, f->name))
      return FAIL(s, f->line, "forces", i, f->name, "actuators[%d] has this name: an "
                  "expression_force is a driven actuator of its name", k);
  memset(a, 0, sizeof(*a));
  memcpy(a->name, f->name, PT_NAME_MAX);
  a->line = f->line;
  a->from_force = i + 1;
  a->gear = 1;
  if (f->joint[0]) {
    const int ji = pt_spec_find_joint(s, f->joint);
    if (ji < 0) return FAIL(s, f->line, "forces", i, f->name, "unknown joint \"%s\"", f->joint);
    const pt_spec_joint *j = &s->joints[ji];
    const char *c = f->coordinate;
    int torque;
    switch (j->type) {
      case PT_JOINT_REVOLUTE: torque = 1; break;
      case PT_JOINT_PRISMATIC: torque = 0; break;
      case PT_JOINT_CYLINDRICAL:
      case PT_JOINT_PLANAR:
        if (!c[0])
          return FAIL(s, f->line, "forces", i, f->name, "joint \"%s\" has several coordinates: "
                      "give coordinate: (%s)", f->joint, j->type == PT_JOINT_PLANAR
                      ? "x, y or angle" : "angle or slide");
        torque = !strcmp(c, "angle");
        break;
      default:
        return FAIL(s, f->line, "forces", i, f->name, "an expression_force drives the coordinate "
                    "of a revolute, prismatic, cylindrical or planar joint; \"%s\" is none",
                    f->joint);
    }
    if (c[0] && j->type != PT_JOINT_CYLINDRICAL && j->type != PT_JOINT_PLANAR)
      return FAIL(s, f->line, "forces", i, f->name, "joint \"%s\" has one coordinate: no "
                  "coordinate: to give", f->joint);
    if ((j->type == PT_JOINT_CYLINDRICAL && strcmp(c, "angle") && strcmp(c, "slide")) ||
        (j->type == PT_JOINT_PLANAR && strcmp(c, "angle") && strcmp(c, "x") && strcmp(c, "y")))
      return FAIL(s, f->line, "forces", i, f->name, "joint \"%s\" has no coordinate \"%s\"",
                  f->joint, c);
    a->type = torque ? PT_ACT_JOINT_TORQUE : PT_ACT_JOINT_FORCE;
    memcpy(a->joint, f->joint, PT_NAME_MAX);
    memcpy(a->coordinate, c, PT_NAME_MAX);
    a->nsource = 1;
    memcpy(a->source[0], f->name, PT_NAME_MAX);
    a->source_scale[0] = 1;
    return 0;
  }
  if (pt_spec_find_body(s, f->body) < 0)
    return FAIL(s, f->line, "forces", i, f->name, "unknown (or ground) body \"%s\"", f->body);
  a->type = f->has_axis ? PT_ACT_BODY_TORQUE : PT_ACT_BODY_FORCE;
  memcpy(a->body, f->body, PT_NAME_MAX);
  memcpy(a->point, f->point, sizeof(a->point));
  a->frame_body = f->frame_body;
  a->nsource = 3;
  for (int k = 0; k < 3; k++) {
    memcpy(a->source[k], f->name, PT_NAME_MAX);
    a->source_scale[k] = f->has_axis ? f->axis[k] : f->direction[k];
  }
  return 0;
}

int pt_control_view(const pt_spec *s, pt_spec **view, pt_error *err) {
  int nex = 0;
  for (int i = 0; i < s->nforce; i++) nex += s->forces[i].type == PT_FORCE_EXPRESSION;
  *view = (pt_spec *)s;
  if (!nex) return PT_OK;
  pt_spec *v = malloc(sizeof(*v));
  pt_spec_force *forces = malloc(sizeof(*forces) * (size_t)(s->nforce - nex + 1));
  pt_spec_actuator *acts = malloc(sizeof(*acts) * (size_t)(s->nactuator + nex));
  if (!v || !forces || !acts) {
    free(v), free(forces), free(acts);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  *v = *s;
  v->forces = forces;
  v->actuators = acts;
  v->nforce = 0;
  v->nactuator = s->nactuator;
  if (s->nactuator) memcpy(acts, s->actuators, sizeof(*acts) * (size_t)s->nactuator);
  for (int i = 0; i < s->nforce; i++) {
    if (s->forces[i].type != PT_FORCE_EXPRESSION) {
      forces[v->nforce++] = s->forces[i];
      continue;
    }
    int rc = force_actuator(s, i, &acts[v->nactuator++], err);
    if (rc) {
      pt_control_view_free(s, v);
      return rc;
    }
  }
  *view = v;
  return PT_OK;
}

void pt_control_view_free(const pt_spec *s, pt_spec *view) {
  if (!view || view == s) return;
  free(view->forces);
  free(view->actuators);
  free(view);
}

int pt_control_ninput(const pt_spec *s) {
  int n = 0;
  for (int i = 0; i < s->ncontrol; i++) n += s->controls[i].type == PT_CONTROL_INPUT;
  return n;
}

// The measured quantities: coordinate or body of each measure element.
static int resolve_measures(pt_model *m, const pt_spec *s, pt_error *err) {
  const pt_ctl *c = m->ctl;
  for (int k = 0; k < c->nmeas; k++) {
    const int i = c->meas_elem[k];  // a measure is a control element: i < ncontrol
    const pt_spec_control *e = &s->controls[i];
    m->ctl_meas_kind[k] = e->measure;
    m->ctl_meas_axis[k] = e->axis;
    if (e->measure == PT_MEASURE_COORDINATE || e->measure == PT_MEASURE_RATE) {
      const int co = pt_coord_index(m, e->target);
      if (co < 0)
        return FAIL(s, e->line, "controls", i, e->name, "%s: no coordinate named \"%s\" (joint "
                    "coordinates and coordinates:)", e->measure == PT_MEASURE_RATE ? "rate"
                    : "coordinate", e->target);
      m->ctl_meas_ref[k] = co;
    } else {
      const int b = pt_body_index(m, e->target);
      if (b < 0)
        return FAIL(s, e->line, "controls", i, e->name, "body: no moving body named \"%s\"",
                    e->target);
      m->ctl_meas_ref[k] = b;
    }
  }
  return PT_OK;
}

// Signals and coordinates share the names outputs are asked for by (linearization, plots).
static int names_apart(const pt_model *m, const pt_spec *s, pt_error *err) {
  const pt_ctl *c = m->ctl;
  for (int i = 0; i < c->nelem; i++) {
    if (pt_coord_index(m, c->elem_name[i]) < 0) continue;
    if (i < s->ncontrol)
      return FAIL(s, c->elem_line[i], "controls", i, c->elem_name[i],
                  "\"%s\" is a coordinate's name: a signal takes another (outputs and plots name "
                  "both)", c->elem_name[i]);
    for (int j = 0; j < s->nforce; j++)
      if (!strcmp(s->forces[j].name, c->elem_name[i]))
        return FAIL(s, s->forces[j].line, "forces", j, s->forces[j].name,
                    "\"%s\" is a coordinate's name: an expression_force's value is a signal, "
                    "which takes another", c->elem_name[i]);
  }
  return PT_OK;
}

// Driven inputs: each actuator's source signals (the view's actuators, expression forces
// included).
static int resolve_sources(pt_model *m, const pt_spec *s, const pt_spec *view, pt_error *err) {
  for (int i = 0; i < m->ninput; i++) m->input_source[i] = -1, m->input_scale[i] = 1;
  for (int a = 0; a < view->nactuator; a++) {
    const pt_spec_actuator *sa = &view->actuators[a];
    for (int k = 0; k < sa->nsource; k++) {
      const int sig = pt_ctl_signal(m->ctl, sa->source[k]);
      if (sig < 0)
        return FAIL(s, sa->line, "actuators", a, sa->name, "source: no signal named \"%s\"%s",
                    sa->source[k], m->ctl ? "" : " (the model has no controls:)");
      const int in = m->actuator_input_adr[a] + k;
      m->input_source[in] = sig;
      m->input_scale[in] = sa->source_scale[k];
    }
  }
  return PT_OK;
}

int pt_control_compile(pt_model *m, const pt_spec *s, const pt_spec *view, pt_error *err) {
  m->input_source = pt_model_alloc(m, (size_t)m->ninput + 1, sizeof(int));
  m->input_scale = pt_model_alloc(m, (size_t)m->ninput + 1, sizeof(double));
  if (!m->input_source || !m->input_scale) return pt_error_set(err, PT_ENOMEM, "out of memory");
  m->ctl_input_adr = m->ninput - pt_control_ninput(s);
  int rc = pt_ctl_build(s, &m->ctl, err);
  if (rc) return rc;
  if (m->ctl) {
    const pt_ctl *c = m->ctl;
    m->nsig = c->nsig, m->nctlx = c->nx, m->nctlpar = c->npar, m->nctlmeas = c->nmeas;
    m->nctlstack = c->nstack;
    m->ctl_meas_kind = pt_model_alloc(m, (size_t)c->nmeas + 1, sizeof(int));
    m->ctl_meas_ref = pt_model_alloc(m, (size_t)c->nmeas + 1, sizeof(int));
    m->ctl_meas_axis = pt_model_alloc(m, (size_t)c->nmeas + 1, sizeof(int));
    m->ctl_par_name = pt_model_alloc(m, (size_t)c->npar + 1, sizeof(*m->ctl_par_name));
    if (!m->ctl_meas_kind || !m->ctl_meas_ref || !m->ctl_meas_axis || !m->ctl_par_name)
      return pt_error_set(err, PT_ENOMEM, "out of memory");
    for (int p = 0; p < c->npar; p++)
      snprintf(m->ctl_par_name[p], sizeof(m->ctl_par_name[p]), "%s.%s",
               c->elem_name[c->par_elem[p]], c->par_name[p]);
    for (int k = 0; k < c->nin; k++) {
      const int in = m->ctl_input_adr + k;
      snprintf(m->input_name[in], PT_NAME_MAX, "%s", c->elem_name[c->input_elem[k]]);
      m->input_limit[in] = 0;
      m->input_gear[in] = 1;
    }
    if ((rc = resolve_measures(m, s, err)) || (rc = names_apart(m, s, err))) return rc;
  }
  return resolve_sources(m, s, view, err);
}
