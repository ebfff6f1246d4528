// ptb_reply.c: engine results as malloc'd protobuf parts (ptb_reply.h).
#include "ptb_reply.h"

#include <stdlib.h>
#include <string.h>

#include "ptb_assign.h"

Partita__V1__Reaction **ptb_reactions(const pt_model *m, const double *reaction) {
  const int nj = pt_model_njoint(m);
  Partita__V1__Reaction **rs = calloc((size_t)nj + 1, sizeof(*rs));
  if (!rs)
    return NULL;
  for (int j = 0; j < nj; j++) {
    Partita__V1__Reaction *r = malloc(sizeof(*r));
    if (!r)
      goto fail;
    partita__v1__reaction__init(r);
    rs[j] = r;
    r->joint = strdup(pt_joint_name(m, j));
    r->force = malloc(3 * sizeof(double));
    r->torque = malloc(3 * sizeof(double));
    if (!r->joint || !r->force || !r->torque)
      goto fail;
    r->n_force = r->n_torque = 3;
    memcpy(r->force, reaction + 6 * j, 3 * sizeof(double));
    memcpy(r->torque, reaction + 6 * j + 3, 3 * sizeof(double));
  }
  return rs;
fail:
  for (int j = 0; j < nj; j++)
    if (rs[j])
      protobuf_c_message_free_unpacked(&rs[j]->base, NULL);
  free(rs);
  return NULL;
}

int ptb_limit_values(const pt_model *m, const int *held, const double *reaction,
                     Partita__V1__NamedValue ***out, size_t *n) {
  const int nj = pt_model_njoint(m);
  *n = 0;
  if (!(*out = calloc((size_t)nj + 1, sizeof(**out))))
    return -1;
  for (int j = 0; j < nj; j++) {
    if (!held[j])
      continue;
    if (!((*out)[*n] = ptb_named_new(pt_joint_name(m, j), reaction[j])))
      return -1;
    (*n)++;
  }
  return 0;
}

int ptb_lines(const char *text, char ***out, size_t *n) {
  size_t count = 0;
  for (const char *p = text; p && *p; p++)
    count += *p == '\n' || p[1] == '\0';
  *n = 0;
  if (!(*out = calloc(count + 1, sizeof(**out))))
    return -1;
  for (const char *p = text; p && *p && *n < count;) {
    const char *nl = strchr(p, '\n');
    const size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if (!((*out)[*n] = strndup(p, len)))
      return -1;
    (*n)++;
    p += len + (nl != NULL);
  }
  return 0;
}

Partita__V1__Matrix *ptb_matrix(const double *a, int rows, int cols) {
  Partita__V1__Matrix *x = malloc(sizeof(*x));
  const size_t n = (size_t)rows * (size_t)cols;
  double *data = malloc(sizeof(double) * (n ? n : 1));
  if (!x || !data) {
    free(x);
    free(data);
    return NULL;
  }
  partita__v1__matrix__init(x);
  x->rows = (uint32_t)rows;
  x->cols = (uint32_t)cols;
  memcpy(data, a, sizeof(double) * n);
  x->data = data;
  x->n_data = n;
  return x;
}

char **ptb_names(char (*names)[PT_LIN_NAME_MAX], int n) {
  char **v = calloc((size_t)n + 1, sizeof(char *));
  for (int i = 0; v && i < n; i++)
    if (!(v[i] = strdup(names[i]))) {
      for (int k = 0; k < i; k++)
        free(v[k]);
      free(v);
      v = NULL;
    }
  return v;
}
