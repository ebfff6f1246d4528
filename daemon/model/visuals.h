// viewer.h: the browser viewer of partitad (docs/viewer.md): the HTTP/WebSocket port
// (http.c, libwebsockets on the daemon's libuv loop) and the model's shapes as protobuf
// (viewer_info.c).
#ifndef PD_VIEWER_H
#define PD_VIEWER_H

#include <stddef.h>

#include "partita.h"
#include "partita.pb-c.h"

// ModelInfo.visuals of model m registered as `model`: an array of n pointers, freed with
// viewer_visuals_free (the numbers point into m, which must outlive the array).
Partita__V1__Visual **viewer_visuals_new(const pt_model *m, const char *model, size_t *n);
void viewer_visuals_free(Partita__V1__Visual **v);
// ModelInfo.joint_markers: n pointers, freed with viewer_joints_free.
Partita__V1__JointMarker **viewer_joints_new(const pt_model *m, size_t *n);
void viewer_joints_free(Partita__V1__JointMarker **j);
// Where the HTTP port serves mesh `index` of `model` (path: the resolved file).
void viewer_mesh_url(char *out, size_t cap, const char *model, int index, const char *path);

#endif
