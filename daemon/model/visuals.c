// visuals.c: a model's visual shapes as protobuf (ModelInfo.visuals), for any client that
// draws the model; partitad's own page (viewer/) reads them from GetModelInfo's JSON twin.
// The numbers point into the immutable model; only the message shells and the mesh URLs are
// allocated, in one block.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/visuals.h"

#define URL_MAX 200

// /mesh/MODEL/INDEX.EXT: the extension tells the page which loader to use (viewer/http.c
// serves that path).
static void mesh_url(char *out, size_t cap, const char *model, int index, const char *path) {
  const char *dot = strrchr(path, '.');
  char ext[8] = "";
  for (int k = 0; dot && k < 3 && dot[1 + k]; k++)
    ext[k] = (char)(dot[1 + k] | 0x20);   // ASCII lower case
  snprintf(out, cap, "/mesh/%s/%d.%s", model, index, ext);
}

Partita__V1__Visual **visuals_new(const pt_model *m, const char *model, size_t *n) {
  int nv = pt_model_nvisual(m);
  *n = 0;
  size_t bytes = (size_t)nv * (sizeof(Partita__V1__Visual *) + sizeof(Partita__V1__Visual) +
                               URL_MAX);
  char *block = malloc(bytes ? bytes : 1);
  if (!block) return NULL;
  Partita__V1__Visual **vp = (Partita__V1__Visual **)(void *)block;
  Partita__V1__Visual *vs = (Partita__V1__Visual *)(void *)(vp + nv);
  char *urls = (char *)(vs + nv);
  for (int i = 0; i < nv; i++) {
    const pt_visual *v = pt_model_visual(m, i);
    Partita__V1__Visual init = PARTITA__V1__VISUAL__INIT;
    vs[i] = init;
    vs[i].body = v->body;
    vs[i].kind = (Partita__V1__Visual__Kind)v->type;
    vs[i].n_size = 3;
    vs[i].size = (double *)v->size;
    vs[i].n_position = 3;
    vs[i].position = (double *)v->pos;
    vs[i].n_orientation = 4;
    vs[i].orientation = (double *)v->quat;
    vs[i].n_rgba = 4;
    vs[i].rgba = (double *)v->rgba;
    vs[i].n_scale = 3;
    vs[i].scale = (double *)v->scale;
    vs[i].uri = (char *)v->uri;
    char *url = urls + (size_t)i * URL_MAX;
    url[0] = '\0';
    if (v->type == PT_VISUAL_MESH && v->mesh[0])
      mesh_url(url, URL_MAX, model, i, v->mesh);
    vs[i].mesh_url = url;
    vs[i].generated = v->generated != 0;
    vp[i] = &vs[i];
  }
  *n = (size_t)nv;
  return vp;
}

void visuals_free(Partita__V1__Visual **v) { free(v); }

typedef struct {
  Partita__V1__JointMarker msg;
  double point[3], axis[3];
} marker;

Partita__V1__JointMarker **joint_markers_new(const pt_model *m, size_t *n) {
  int nj = pt_model_njoint(m);
  *n = 0;
  size_t bytes = (size_t)nj * (sizeof(Partita__V1__JointMarker *) + sizeof(marker));
  char *block = malloc(bytes ? bytes : 1);
  if (!block) return NULL;
  Partita__V1__JointMarker **jp = (Partita__V1__JointMarker **)(void *)block;
  marker *mk = (marker *)(void *)(jp + nj);
  for (int j = 0; j < nj; j++) {
    Partita__V1__JointMarker init = PARTITA__V1__JOINT_MARKER__INIT;
    mk[j].msg = init;
    int body;
    const char *type = pt_joint_marker(m, j, &body, mk[j].point, mk[j].axis);
    mk[j].msg.name = (char *)pt_joint_name(m, j);
    mk[j].msg.type = (char *)(type ? type : "");
    mk[j].msg.body = body;
    mk[j].msg.n_position = 3;
    mk[j].msg.position = mk[j].point;
    mk[j].msg.n_axis = 3;
    mk[j].msg.axis = mk[j].axis;
    jp[j] = &mk[j].msg;
  }
  *n = (size_t)nj;
  return jp;
}

void joint_markers_free(Partita__V1__JointMarker **j) { free(j); }
