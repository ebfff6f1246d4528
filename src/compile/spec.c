// spec.c: allocation of the parsed model description (pt_spec.h) and the loaders' limits.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partita.h"

pt_spec *pt_spec_new(void) {
  pt_spec *s = calloc(1, sizeof(*s));
  if (!s) return NULL;
  strcpy(s->source, "<string>");
  s->gravity[2] = -9.81;
  s->contact_friction = 0.5;
  return s;
}

void pt_spec_free(pt_spec *s) {
  if (!s) return;
  for (int i = 0; i < s->nmotion; i++) {
    free(s->motions[i].coef);
    free(s->motions[i].points);
  }
  free(s->bodies);
  free(s->joints);
  free(s->motions);
  for (int i = 0; i < s->nforce; i++) free(s->forces[i].expr);
  free(s->forces);
  free(s->actuators);
  free(s->coords);
  free(s->couplers);
  for (int i = 0; i < s->ncontrol; i++) {
    pt_spec_control *c = &s->controls[i];
    free(c->inputs);
    free(c->signs);
    free(c->num);
    free(c->den);
    for (int k = 0; k < 4; k++) free(c->mat[k].v);
    free(c->initial);
    free(c->expr);
    free(c->states);
    if (c->derivatives)
      for (int k = 0; k < c->nderivative; k++) free(c->derivatives[k]);
    free(c->derivatives);
  }
  free(s->controls);
  free(s->visuals);
  for (int i = 0; i < s->ncollision; i++) free(s->collisions[i].vert);
  free(s->collisions);
  free(s->excludes);
  free(s->contact_pairs);
  free(s->warnings);
  free(s);
}

// Appends one zeroed element of `size` bytes to *arr (capacity *cap, doubled when full);
// returns it or NULL.
static void *grow(void **arr, int *n, int *cap, size_t size) {
  if (*n == *cap) {
    int nc = *cap ? 2 * *cap : 8;
    void *p = realloc(*arr, (size_t)nc * size);
    if (!p) return NULL;
    *arr = p;
    *cap = nc;
  }
  void *e = (char *)*arr + (size_t)(*n) * size;
  memset(e, 0, size);
  (*n)++;
  return e;
}

pt_spec_body *pt_spec_add_body(pt_spec *s) {
  pt_spec_body *b = grow((void **)&s->bodies, &s->nbody, &s->cap[0], sizeof(*b));
  if (b) b->quat[0] = 1.0;
  return b;
}

pt_spec_joint *pt_spec_add_joint(pt_spec *s) {
  return grow((void **)&s->joints, &s->njoint, &s->cap[1], sizeof(pt_spec_joint));
}

pt_spec_motion *pt_spec_add_motion(pt_spec *s) {
  return grow((void **)&s->motions, &s->nmotion, &s->cap[2], sizeof(pt_spec_motion));
}

pt_spec_force *pt_spec_add_force(pt_spec *s) {
  return grow((void **)&s->forces, &s->nforce, &s->cap[3], sizeof(pt_spec_force));
}

pt_spec_actuator *pt_spec_add_actuator(pt_spec *s) {
  return grow((void **)&s->actuators, &s->nactuator, &s->cap[4], sizeof(pt_spec_actuator));
}

pt_spec_coord *pt_spec_add_coord(pt_spec *s) {
  return grow((void **)&s->coords, &s->ncoord, &s->cap[5], sizeof(pt_spec_coord));
}

pt_spec_control *pt_spec_add_control(pt_spec *s) {
  pt_spec_control *c = grow((void **)&s->controls, &s->ncontrol, &s->control_cap, sizeof(*c));
  if (c) c->k = 1;
  return c;
}

pt_spec_coupler *pt_spec_add_coupler(pt_spec *s) {
  pt_spec_coupler *c = grow((void **)&s->couplers, &s->ncoupler, &s->coupler_cap, sizeof(*c));
  if (c) c->multiplier = 1;
  return c;
}

static pt_spec_visual *shape_defaults(pt_spec_visual *v) {
  if (v) {
    v->quat[0] = 1.0;
    v->scale[0] = v->scale[1] = v->scale[2] = 1.0;
  }
  return v;
}

pt_spec_visual *pt_spec_add_visual(pt_spec *s) {
  return shape_defaults(grow((void **)&s->visuals, &s->nvisual, &s->visual_cap,
                             sizeof(pt_spec_visual)));
}

pt_spec_visual *pt_spec_add_collision(pt_spec *s) {
  return shape_defaults(grow((void **)&s->collisions, &s->ncollision, &s->collision_cap,
                             sizeof(pt_spec_visual)));
}

pt_spec_contact_pair *pt_spec_add_exclude(pt_spec *s) {
  return grow((void **)&s->excludes, &s->nexclude, &s->exclude_cap,
              sizeof(pt_spec_contact_pair));
}

pt_spec_contact_pair *pt_spec_add_contact_pair(pt_spec *s) {
  return grow((void **)&s->contact_pairs, &s->ncontact_pair, &s->contact_pair_cap,
              sizeof(pt_spec_contact_pair));
}

int pt_spec_warn(pt_spec *s, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  size_t old = s->warnings ? strlen(s->warnings) : 0, add = strlen(line);
  char *w = realloc(s->warnings, old + add + 2);
  if (!w) return -1;
  memcpy(w + old, line, add);
  w[old + add] = '\n';
  w[old + add + 1] = '\0';
  s->warnings = w;
  return 0;
}

// The loaders' limits (partita.h), resolved once per load.

pt_load_options pt_load_options_resolve(const pt_load_options *opt) {
  pt_load_options o;
  memset(&o, 0, sizeof(o));
  if (opt) o = *opt;
  if (o.max_text_bytes == 0) o.max_text_bytes = PT_LOAD_MAX_TEXT_BYTES;
  if (o.max_bodies <= 0) o.max_bodies = PT_LOAD_MAX_BODIES;
  if (o.max_joints <= 0) o.max_joints = PT_LOAD_MAX_JOINTS;
  if (o.max_yaml_depth <= 0) o.max_yaml_depth = PT_LOAD_MAX_YAML_DEPTH;
  if (o.max_yaml_nodes <= 0) o.max_yaml_nodes = PT_LOAD_MAX_YAML_NODES;
  if (o.max_urdf_elements <= 0) o.max_urdf_elements = PT_LOAD_MAX_URDF_ELEMENTS;
  return o;
}
