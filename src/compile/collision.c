// collision.c: the model's contact geometry (issue 22; docs/collision.md): the spec's
// collision shapes in their bodies' frames (half sizes; a mesh as the convex hull of its
// vertices), the candidate pairs fixed at load (shapes of different bodies, neither joined
// directly by a joint nor excluded by the model) with each pair's friction and restitution,
// and the contact buffer's size.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collide.h"
#include "compile.h"
#include "ptu.h"
#include "tolerances.h"

#define ALLOC_ARR(field, n) \
  (m->field = pt_model_alloc(m, (size_t)(n) + 1, sizeof(*m->field)), m->field != NULL)

// `FILE:LINE: collision of body "B": what` for collision shape i.
__attribute__((format(printf, 5, 6))) static int shape_fail(pt_error *err, int code,
                                                            const pt_spec *s, int i,
                                                            const char *fmt, ...) {
  char what[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  const pt_spec_visual *v = &s->collisions[i];
  return pt_error_set(err, code, "%s:%d: collision of body \"%s\": %s", s->source, v->line,
                      v->body, what);
}

// The body index of a name ("ground": PT_GROUND), -2 when there is none.
static int body_index(const pt_model *m, const char *name) {
  if (!strcmp(name, "ground")) return PT_GROUND;
  for (int b = 0; b < m->nbody; b++)
    if (!strcmp(m->body_name[b], name)) return b;
  return -2;
}

// Shape i of the spec into m->shape[i]: type and half sizes, its pose in its body's frame, its
// hull (from the mesh's vertices).
static int build_shape(pt_model *m, const pt_spec *s, int i, pt_error *err) {
  const pt_spec_visual *v = &s->collisions[i];
  pt_shape *sh = &m->shape[i];
  int b = body_index(m, v->body);
  if (b == -2) return shape_fail(err, PT_EMODEL, s, i, "no such body");
  m->shape_body[i] = b;
  memset(sh, 0, sizeof(*sh));
  switch (v->type) {
  case PT_VISUAL_BOX:
    sh->type = PT_SHAPE_BOX;
    for (int k = 0; k < 3; k++) sh->size[k] = v->size[k] / 2;
    break;
  case PT_VISUAL_SPHERE:
    sh->type = PT_SHAPE_SPHERE;
    sh->size[0] = v->size[0];
    break;
  case PT_VISUAL_CAPSULE:
  case PT_VISUAL_CYLINDER:
    sh->type = v->type == PT_VISUAL_CAPSULE ? PT_SHAPE_CAPSULE : PT_SHAPE_CYLINDER;
    sh->size[0] = v->size[0];
    sh->size[1] = v->size[1] / 2;
    break;
  case PT_VISUAL_MESH: {
    sh->type = PT_SHAPE_HULL;
    if (!v->vert || v->nvert < 1)
      return shape_fail(err, PT_EMODEL, s, i, "mesh \"%.200s\" has no vertices (not read)",
                        v->uri);
    pt_error e = {0};
    pt_hull *h = NULL;
    int rc = pt_hull_build(&h, v->vert, v->nvert, 0, &e);
    if (rc) return shape_fail(err, rc, s, i, "mesh \"%.200s\": %s", v->uri, e.msg);
    if (pt_model_own(m, h)) {
      free(h);
      return pt_error_set(err, PT_ENOMEM, "out of memory");
    }
    sh->hull = h;
    break;
  }
  case PT_VISUAL_PLANE:
    sh->type = PT_SHAPE_PLANE;
    if (b != PT_GROUND) return shape_fail(err, PT_EMODEL, s, i, "a plane is for the ground only");
    break;
  default:
    return shape_fail(err, PT_EMODEL, s, i, "unknown shape type %d", (int)v->type);
  }
  if (v->type == PT_VISUAL_PLANE) {   // on the ground: its frame is the global one
    double n[3], f[3], g[3], R[9];
    double l = ptu_norm3(v->normal);
    if (!(l > PT_TOL_LENGTH)) return shape_fail(err, PT_EMODEL, s, i, "plane normal is zero");
    ptu_scl3(n, v->normal, 1 / l);
    ptu_perp_frame(f, g, n);
    for (int k = 0; k < 3; k++) R[3 * k] = f[k], R[3 * k + 1] = g[k], R[3 * k + 2] = n[k];
    ptu_copy(sh->pos, v->point, 3);
    ptu_mat2quat(sh->quat, R);
  } else {
    pt_spec_shape_local(s, v, sh->pos, sh->quat);
  }
  pt_error e = {0};
  if (pt_shape_init(sh, &e)) return shape_fail(err, PT_EMODEL, s, i, "%s", e.msg);
  return PT_OK;
}

// The body pairs that never collide: every joint's two bodies, then the model's `exclude`
// list ((njoint + nexclude) x 2 into ex); *n their count.
static int excluded_bodies(int *ex, int *n, const pt_model *m, const pt_spec *s,
                           pt_error *err) {
  int k = 0;
  for (int j = 0; j < m->njoint; j++, k++) {
    ex[2 * k] = m->joint_body[2 * j];
    ex[2 * k + 1] = m->joint_body[2 * j + 1];
  }
  for (int e = 0; e < s->nexclude; e++, k++) {
    const pt_spec_contact_pair *p = &s->excludes[e];
    int b1 = body_index(m, p->body1), b2 = body_index(m, p->body2);
    if (b1 == -2 || b2 == -2)
      return pt_error_set(err, PT_EMODEL, "%s:%d: contact exclude[%d]: no body \"%s\"",
                          s->source, p->line, e, b1 == -2 ? p->body1 : p->body2);
    ex[2 * k] = b1, ex[2 * k + 1] = b2;
  }
  *n = k;
  return PT_OK;
}

// Each pair's friction and restitution: the model's, then the `pairs` entries naming its two
// bodies (in either order; a later entry over an earlier one).
static int pair_coefficients(pt_model *m, const pt_spec *s, pt_error *err) {
  for (int p = 0; p < m->npair; p++) {
    m->pair_friction[p] = s->contact_friction;
    m->pair_restitution[p] = s->contact_restitution;
  }
  for (int e = 0; e < s->ncontact_pair; e++) {
    const pt_spec_contact_pair *c = &s->contact_pairs[e];
    int b1 = body_index(m, c->body1), b2 = body_index(m, c->body2);
    if (b1 == -2 || b2 == -2)
      return pt_error_set(err, PT_EMODEL, "%s:%d: contact pairs[%d]: no body \"%s\"", s->source,
                          c->line, e, b1 == -2 ? c->body1 : c->body2);
    for (int p = 0; p < m->npair; p++) {
      int x = m->shape_body[m->pair[2 * p]], y = m->shape_body[m->pair[2 * p + 1]];
      if (!((x == b1 && y == b2) || (x == b2 && y == b1))) continue;
      if (c->has_friction) m->pair_friction[p] = c->friction;
      if (c->has_restitution) m->pair_restitution[p] = c->restitution;
    }
  }
  return PT_OK;
}

int pt_compile_collision(pt_model *m, const pt_spec *s, pt_error *err) {
  if (!(s->contact_friction >= 0 && isfinite(s->contact_friction)) ||
      !(s->contact_restitution >= 0 && s->contact_restitution <= 1))
    return pt_error_set(err, PT_EMODEL, "%s:%d: contact: friction must be >= 0 and restitution "
                        "in [0, 1], got %g and %g", s->source, s->contact_line,
                        s->contact_friction, s->contact_restitution);
  m->nshape = s->ncollision;
  if (!ALLOC_ARR(shape, m->nshape) || !ALLOC_ARR(shape_body, m->nshape))
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  for (int i = 0; i < m->nshape; i++) {
    int rc = build_shape(m, s, i, err);
    if (rc) return rc;
  }
  int *ex = malloc(sizeof(int) * 2 * ((size_t)m->njoint + (size_t)s->nexclude + 1)), nex = 0;
  if (!ex) return pt_error_set(err, PT_ENOMEM, "out of memory");
  int rc = excluded_bodies(ex, &nex, m, s, err);
  if (!rc) {
    m->npair = pt_collide_pairs(NULL, 0, m->shape_body, m->nshape, ex, nex);
    if (!ALLOC_ARR(pair, 2 * m->npair) || !ALLOC_ARR(pair_friction, m->npair) ||
        !ALLOC_ARR(pair_restitution, m->npair))
      rc = pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  if (!rc) pt_collide_pairs(m->pair, m->npair, m->shape_body, m->nshape, ex, nex);
  free(ex);
  if (!rc) rc = pair_coefficients(m, s, err);
  if (rc) return rc;
  // the contact buffer: as asked, else 4 points per candidate pair up to PT_MAX_CONTACTS_DEFAULT
  m->max_contacts = s->max_contacts > 0 ? s->max_contacts
                    : m->npair < PT_MAX_CONTACTS_DEFAULT / 4 ? 4 * m->npair
                                                             : PT_MAX_CONTACTS_DEFAULT;
  return PT_OK;
}
