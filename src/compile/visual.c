// visual.c: the visual shapes of a model (docs/model-format.md, "Visuals"): shapes moved from
// the global t=0 frame into their bodies' frames at compile time, and an equivalent inertia
// box for each body drawn without a shape (the loaders found the mesh files before: mesh.c).
// The mechanics never read any of this; viewers get it through pt_model_visual() and
// GetModelInfo.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "inertia.h"
#include "ptu.h"

static const char *const type_names[PT_VISUAL_NTYPES] = {"box", "sphere", "cylinder",
                                                         "capsule", "mesh", "plane"};

const char *pt_visual_type_name(int type) {
  return type >= 0 && type < PT_VISUAL_NTYPES ? type_names[type] : "unknown";
}

int pt_model_nvisual(const pt_model *m) { return m->nvisual; }

const pt_visual *pt_model_visual(const pt_model *m, int i) {
  return i >= 0 && i < m->nvisual ? &m->visual[i] : NULL;
}

// Joint j on its body2 (the moving side, as the joint frame follows it), or on body1 when body2
// is the ground: joint_geom holds the point in body1 (0..2) and body2 (3..5), the axis h in
// body1 (6..8) and body2 (15..17) frames (compile/joints.c, joint_vectors).
const char *pt_joint_marker(const pt_model *m, int j, int *body, double point[3],
                            double axis[3]) {
  if (j < 0 || j >= m->njoint) return NULL;
  const double *G = m->joint_geom + PT_JOINT_GEOM * j;
  int b2 = m->joint_body[2 * j + 1];
  *body = b2 >= 0 ? b2 : m->joint_body[2 * j];
  ptu_copy(point, b2 >= 0 ? G + 3 : G, 3);
  ptu_copy(axis, b2 >= 0 ? G + 15 : G + 6, 3);
  int t = m->joint_type[j];
  return t >= 0 && t < PT_JOINT_NTYPES ? pt_joint_classes[t].name : "unknown";
}

// ---------------------------------------------------------------------------------------------
// Shapes into body frames.

// The uniform box with the body's mass and inertia, along its principal axes (quat, in the
// body frame): Ixx = m (b^2 + c^2) / 12, ..., so a^2 = 6 (Iyy + Izz - Ixx) / m.
static void inertia_box(const pt_model *m, int b, double size[3], double quat[4]) {
  quat[0] = 1, quat[1] = quat[2] = quat[3] = 0;
  if (b < 0) {
    size[0] = size[1] = size[2] = 0.05;
    return;
  }
  double d[3], V[9];   // principal moments and axes (src/util/inertia.c)
  if (pt_inertia_axes(m->body_inertia + 9 * b, d, V)) {
    size[0] = size[1] = size[2] = 0.05;
    return;
  }
  ptu_mat2quat(quat, V);
  double mass = m->body_mass[b], big = 0;
  for (int k = 0; k < 3; k++) {
    double s2 = 6.0 * (d[(k + 1) % 3] + d[(k + 2) % 3] - d[k]) / mass;
    size[k] = s2 > 0 ? sqrt(s2) : 0;
    if (size[k] > big) big = size[k];
  }
  for (int k = 0; k < 3; k++)   // a rod or a plate still shows a little thickness
    if (size[k] < 0.05 * big) size[k] = 0.05 * big;
  if (big == 0) size[0] = size[1] = size[2] = 0.05;
}

static void default_rgba(double rgba[4], int body) {
  static const double palette[6][3] = {{0.35, 0.55, 0.85}, {0.90, 0.55, 0.25}, {0.40, 0.75, 0.45},
                                       {0.80, 0.35, 0.40}, {0.60, 0.50, 0.80}, {0.85, 0.75, 0.30}};
  const double *c = body < 0 ? (const double[3]){0.6, 0.6, 0.6} : palette[body % 6];
  rgba[0] = c[0], rgba[1] = c[1], rgba[2] = c[2], rgba[3] = 1.0;
}

static int body_of(const pt_model *m, const char *name) {
  if (!strcmp(name, "ground")) return -1;
  for (int i = 0; i < m->nbody; i++)
    if (!strcmp(m->body_name[i], name)) return i;
  return -2;
}

void pt_spec_shape_local(const pt_spec *s, const pt_spec_visual *sv, double pos[3],
                         double quat[4]) {
  // Body frame at t=0 (as given: joints are placed from the same poses); the ground's is the
  // global frame.
  double r0[3] = {0, 0, 0}, p0[4] = {1, 0, 0, 0};
  const pt_spec_body *sb = NULL;
  for (int j = 0; j < s->nbody; j++)
    if (!strcmp(s->bodies[j].name, sv->body)) sb = &s->bodies[j];
  if (sb) {
    double nq = sqrt(ptu_dot3(sb->quat + 1, sb->quat + 1) + sb->quat[0] * sb->quat[0]);
    ptu_copy(r0, sb->position, 3);
    for (int c = 0; c < 4; c++) p0[c] = sb->quat[c] / nq;
  }
  double g[3], q[4];
  ptu_copy(g, sv->has_position ? sv->position : r0, 3);
  ptu_copy(q, sv->has_quat ? sv->quat : p0, 4);
  double qn = sqrt(q[0] * q[0] + ptu_dot3(q + 1, q + 1));
  for (int c = 0; c < 4; c++) q[c] /= qn;
  // pos_local = A0^T (pos - r0), q_local = conj(p0) q
  double A0[9], d[3], conj[4] = {p0[0], -p0[1], -p0[2], -p0[3]};
  ptu_quat2mat(A0, p0);
  ptu_sub3(d, g, r0);
  ptu_mul_matT_vec3(pos, A0, d);
  ptu_quat_mul(quat, conj, q);
}

int pt_visuals_build(pt_model *m, const pt_spec *s, pt_error *err) {
  int *count = calloc((size_t)m->nbody + 1, sizeof(int));
  if (!count) return pt_error_set(err, PT_ENOMEM, "out of memory");
  size_t text = 0;
  for (int i = 0; i < s->nvisual; i++) {
    const pt_spec_visual *v = &s->visuals[i];
    int b = body_of(m, v->body);
    if (b == -2) {
      free(count);
      return pt_error_set(err, PT_EMODEL, "%s:%d: visual of body \"%s\": no such body",
                          s->source, v->line, v->body);
    }
    if (b >= 0) count[b]++;
    text += strlen(v->uri) + strlen(v->mesh) + 2;
  }
  int n = s->nvisual;
  for (int b = 0; b < m->nbody; b++) n += count[b] == 0;
  m->visual = calloc((size_t)n + 1, sizeof(pt_visual));
  m->visual_text = calloc(text + 1, 1);
  if (!m->visual || !m->visual_text) {
    free(count);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  char *t = m->visual_text;
  int k = 0;
  for (int i = 0; i < s->nvisual; i++, k++) {
    const pt_spec_visual *sv = &s->visuals[i];
    pt_visual *v = &m->visual[k];
    v->body = body_of(m, sv->body);
    v->type = (int)sv->type;
    ptu_copy(v->size, sv->size, 3);
    ptu_copy(v->scale, sv->scale, 3);
    if (sv->has_rgba)
      ptu_copy(v->rgba, sv->rgba, 4);
    else
      default_rgba(v->rgba, v->body);
    pt_spec_shape_local(s, sv, v->pos, v->quat);
    v->uri = t;
    t += sprintf(t, "%s", sv->uri) + 1;
    v->mesh = t;
    t += sprintf(t, "%s", sv->mesh) + 1;
    if (v->type == PT_VISUAL_MESH && !sv->mesh[0]) {   // not found: the inertia box
      v->type = PT_VISUAL_BOX;
      inertia_box(m, v->body, v->size, v->quat);
      ptu_zero(v->pos, 3);
      v->generated = 1;
    }
  }
  for (int b = 0; b < m->nbody; b++) {
    if (count[b]) continue;
    pt_visual *v = &m->visual[k++];
    v->body = b;
    v->type = PT_VISUAL_BOX;
    inertia_box(m, b, v->size, v->quat);
    v->scale[0] = v->scale[1] = v->scale[2] = 1;
    default_rgba(v->rgba, b);
    v->uri = v->mesh = t;   // the final "" of the text
    v->generated = 1;
  }
  m->nvisual = k;
  free(count);
  return PT_OK;
}
