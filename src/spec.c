// spec.c: allocation of the parsed model description (pt_spec.h).
#include <stdlib.h>
#include <string.h>

#include "pt_spec.h"

pt_spec *pt_spec_new(void) {
  pt_spec *s = calloc(1, sizeof(*s));
  if (!s) return NULL;
  strcpy(s->source, "<string>");
  s->gravity[2] = -9.81;
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
  free(s->forces);
  free(s->actuators);
  free(s->coords);
  free(s);
}

// Grows *arr by one zeroed element of `size` bytes; returns it or NULL.
static void *grow(void **arr, int *n, size_t size) {
  void *p = realloc(*arr, (size_t)(*n + 1) * size);
  if (!p) return NULL;
  *arr = p;
  void *e = (char *)p + (size_t)(*n) * size;
  memset(e, 0, size);
  (*n)++;
  return e;
}

pt_spec_body *pt_spec_add_body(pt_spec *s) {
  pt_spec_body *b = grow((void **)&s->bodies, &s->nbody, sizeof(*b));
  if (b) b->quat[0] = 1.0;
  return b;
}

pt_spec_joint *pt_spec_add_joint(pt_spec *s) {
  return grow((void **)&s->joints, &s->njoint, sizeof(pt_spec_joint));
}

pt_spec_motion *pt_spec_add_motion(pt_spec *s) {
  return grow((void **)&s->motions, &s->nmotion, sizeof(pt_spec_motion));
}

pt_spec_force *pt_spec_add_force(pt_spec *s) {
  return grow((void **)&s->forces, &s->nforce, sizeof(pt_spec_force));
}

pt_spec_actuator *pt_spec_add_actuator(pt_spec *s) {
  return grow((void **)&s->actuators, &s->nactuator, sizeof(pt_spec_actuator));
}

pt_spec_coord *pt_spec_add_coord(pt_spec *s) {
  return grow((void **)&s->coords, &s->ncoord, sizeof(pt_spec_coord));
}
