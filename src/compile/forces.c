// forces.c: the spec's force elements (springs, dampers, joint springs and the like) and
// actuators into the model (model compilation, compile.c), with the inputs the actuators
// read: one per actuator, three for a body force or torque.
#include <stdio.h>
#include <string.h>

#include "compile.h"
#include "ptu.h"

int pt_compile_forces(pt_model *m, const pt_spec *s, pt_error *err) {
  for (int i = 0; i < s->nforce; i++) {
    const pt_spec_force *sf = s->forces + i;
    for (int k = 0; k < i; k++)
      if (strcmp(s->forces[k].name, sf->name) == 0)
        return pt_spec_fail(err, PT_EMODEL, s, sf->line, "forces", i, sf->name,
                            "duplicate force name");
    snprintf(m->force_name[i], PT_NAME_MAX, "%s", sf->name);
    m->force_type[i] = sf->type;
    m->force_coord[i] = -1;
    double *par = m->force_par + PT_FORCE_PAR * i;
    int b1 = PT_GROUND, b2 = PT_GROUND;
    const char *missing = NULL;
    switch (sf->type) {
    case PT_FORCE_TORSION_SPRING: {
      const int j = pt_spec_find_joint(s, sf->joint);
      if (j < 0)
        return pt_spec_fail(err, PT_EMODEL, s, sf->line, "forces", i, sf->name,
                            "unknown joint \"%s\"", sf->joint);
      const int c = pt_joint_coord_of(m, j, "", 0);
      if (c < 0)
        return pt_spec_fail(err, PT_EMODEL, s, sf->line, "forces", i, sf->name,
                            "torsion_spring needs a revolute or cylindrical joint");
      m->force_coord[i] = c;
      b1 = m->meas_body[2 * c], b2 = m->meas_body[2 * c + 1];
      par[0] = sf->stiffness, par[1] = sf->damping, par[2] = sf->free_angle, par[3] = sf->preload;
      break;
    }
    case PT_FORCE_SPRING_DAMPER:
    case PT_FORCE_BUSHING:
      b1 = pt_spec_find_body(s, sf->body1), b2 = pt_spec_find_body(s, sf->body2);
      if (b1 == -2) missing = sf->body1;
      if (b2 == -2) missing = sf->body2;
      if (missing) break;
      if (b1 == b2)
        return pt_spec_fail(err, PT_EMODEL, s, sf->line, "forces", i, sf->name,
                            "body1 and body2 are the same body");
      if (sf->type == PT_FORCE_SPRING_DAMPER) {
        par[0] = sf->stiffness, par[1] = sf->damping, par[2] = sf->free_length;
        par[3] = sf->preload;
        pt_body_fixed_point(m, b1, sf->point1, par + 4);
        pt_body_fixed_point(m, b2, sf->point2, par + 7);
      } else {
        double axes[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, A1[9], A2[9];
        if (sf->has_axes) ptu_copy(axes, sf->axes, 9);
        ptu_copy(par, sf->stiffness6, 6);
        ptu_copy(par + 6, sf->damping6, 6);
        pt_body_fixed_point(m, b1, sf->point, par + 12);
        pt_body_fixed_point(m, b2, sf->point, par + 15);
        static const double eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        if (b1 == PT_GROUND) ptu_copy(A1, eye, 9); else ptu_quat2mat(A1, m->q0 + 7 * b1 + 3);
        if (b2 == PT_GROUND) ptu_copy(A2, eye, 9); else ptu_quat2mat(A2, m->q0 + 7 * b2 + 3);
        ptu_mul_matT_mat3(par + 18, A1, axes);
        ptu_mul_matT_mat3(par + 27, A2, axes);
      }
      break;
    case PT_FORCE_FORCE:
    case PT_FORCE_TORQUE:
      b1 = pt_spec_find_body(s, sf->body);
      if (b1 == -2) {
        missing = sf->body;
        break;
      }
      ptu_copy(par, sf->value, 3);
      if (sf->type == PT_FORCE_FORCE) pt_body_fixed_point(m, b1, sf->point, par + 3);
      break;
    case PT_FORCE_EXPRESSION:  // compiled into a driven actuator (compile_control.c)
      break;
    }
    if (missing)
      return pt_spec_fail(err, PT_EMODEL, s, sf->line, "forces", i, sf->name, "unknown body \"%s\"",
                          missing);
    m->force_body[2 * i] = b1;
    m->force_body[2 * i + 1] = b2;
  }
  return PT_OK;
}

int pt_compile_count_inputs(const pt_spec *s) {
  int n = 0;
  for (int i = 0; i < s->nactuator; i++)
    n += s->actuators[i].type == PT_ACT_BODY_FORCE || s->actuators[i].type == PT_ACT_BODY_TORQUE
             ? 3 : 1;
  return n;
}

int pt_compile_actuators(pt_model *m, const pt_spec *s, pt_error *err) {
  int in = 0;
  for (int i = 0; i < s->nactuator; i++) {
    const pt_spec_actuator *sa = s->actuators + i;
    for (int k = 0; k < i; k++)
      if (strcmp(s->actuators[k].name, sa->name) == 0)
        return pt_spec_fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                            "duplicate actuator name");
    snprintf(m->actuator_name[i], PT_NAME_MAX, "%s", sa->name);
    m->actuator_type[i] = sa->type;
    m->actuator_frame[i] = sa->frame_body;
    m->actuator_input_adr[i] = in;
    m->actuator_coord[i] = -1;
    m->actuator_body[i] = PT_GROUND;
    if (!(sa->limit >= 0))
      return pt_spec_fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                          "limit must be >= 0");
    if (sa->type == PT_ACT_JOINT_TORQUE || sa->type == PT_ACT_JOINT_FORCE) {
      const int j = pt_spec_find_joint(s, sa->joint);
      if (j < 0)
        return pt_spec_fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                            "unknown joint \"%s\"", sa->joint);
      const int torque = sa->type == PT_ACT_JOINT_TORQUE;
      const int c = pt_joint_coord_of(m, j, sa->coordinate, torque ? 0 : 1);
      if (c < 0)
        return pt_spec_fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                            "%s needs a %s joint%s%s", torque ? "joint_torque" : "joint_force",
                            torque ? "revolute, cylindrical or planar (angle)"
                                   : "prismatic or cylindrical, or `coordinate:` x|y of a planar",
                            sa->coordinate[0] ? "; no such coordinate: " : "", sa->coordinate);
      m->actuator_coord[i] = c;
      snprintf(m->input_name[in], PT_NAME_MAX, "%s", sa->name);
      const double gear = sa->gear != 0 ? sa->gear : 1.0;
      if (!isfinite(gear))
        return pt_spec_fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                            "gear must be a finite non-zero number");
      m->input_gear[in] = gear;
      m->input_limit[in++] = sa->limit;
    } else {
      if (sa->gear != 0 && sa->gear != 1)
        return pt_spec_fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                            "gear is for joint_torque and joint_force actuators");
      const int b = pt_spec_find_body(s, sa->body);
      if (b < 0)
        return pt_spec_fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                            "unknown (or ground) body \"%s\"", sa->body);
      m->actuator_body[i] = b;
      pt_body_fixed_point(m, b, sa->point, m->actuator_point + 3 * i);
      static const char *xyz[3] = {"x", "y", "z"};
      for (int k = 0; k < 3; k++) {
        char nm[PT_NAME_MAX + 8];
        snprintf(nm, sizeof(nm), "%s.%s", sa->name, xyz[k]);
        if (strlen(nm) >= PT_NAME_MAX)
          return pt_spec_fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                              "name too long");
        memcpy(m->input_name[in], nm, strlen(nm) + 1);
        m->input_gear[in] = 1.0;
        m->input_limit[in++] = sa->limit;
      }
    }
  }
  return PT_OK;
}
