// shared.c: what every step of model compilation uses: the model's memory (each array
// recorded and freed by pt_model_free), its warnings, the spec's error messages and its name
// lookups (compile.h).
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "control.h"

int pt_model_own(pt_model *m, void *p) {
  if (m->nalloc == m->maxalloc) {
    int cap = m->maxalloc ? 2 * m->maxalloc : 64;
    void **a = realloc(m->allocs, sizeof(void *) * (size_t)cap);
    if (!a) {
      free(p);
      return -1;
    }
    m->allocs = a;
    m->maxalloc = cap;
  }
  m->allocs[m->nalloc++] = p;
  return 0;
}

void *pt_model_alloc(pt_model *m, size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  return p && pt_model_own(m, p) == 0 ? p : NULL;
}

void pt_model_free(pt_model *m) {
  if (!m) return;
  pt_ctl_free(m->ctl);
  for (int i = 0; i < m->nalloc; i++) free(m->allocs[i]);
  free(m->allocs);
  free(m->warnings);
  free(m->visual);
  free(m->visual_text);
  free(m);
}

void pt_model_warn(pt_model *m, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  size_t old = m->warnings ? strlen(m->warnings) : 0, add = strlen(line);
  char *w = realloc(m->warnings, old + add + 2);
  if (!w) return;
  memcpy(w + old, line, add);
  w[old + add] = '\n';
  w[old + add + 1] = '\0';
  m->warnings = w;
}

// `FILE:LINE: joints[2] "knee": what`
int pt_spec_fail(pt_error *err, int code, const pt_spec *s, int line, const char *list, int idx,
                 const char *name, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  return pt_error_set(err, code, "%s:%d: %s[%d] \"%s\": %s", s->source, line, list, idx, name,
                      what);
}

int pt_spec_find_body(const pt_spec *s, const char *name) {
  if (strcmp(name, "ground") == 0) return PT_GROUND;
  for (int i = 0; i < s->nbody; i++)
    if (strcmp(s->bodies[i].name, name) == 0) return i;
  return -2;
}

int pt_spec_find_joint(const pt_spec *s, const char *name) {
  for (int i = 0; i < s->njoint; i++)
    if (strcmp(s->joints[i].name, name) == 0) return i;
  return -1;
}
