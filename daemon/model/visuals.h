// visuals.h: a model's shapes and joint markers as protobuf (ModelInfo.visuals,
// ModelInfo.joint_markers), drawn by partitad's viewer page (docs/viewer.md) and any client.
#ifndef PD_VISUALS_H
#define PD_VISUALS_H

#include <stddef.h>

#include "partita.h"
#include "partita.pb-c.h"

// ModelInfo.visuals of model m registered as `model`: an array of n pointers, freed with
// visuals_free (the numbers point into m, which must outlive the array). A mesh's mesh_url is
// where partitad's HTTP port serves it: /mesh/MODEL/INDEX.EXT.
Partita__V1__Visual **visuals_new(const pt_model *m, const char *model, size_t *n);
void visuals_free(Partita__V1__Visual **v);
// ModelInfo.joint_markers: n pointers, freed with joint_markers_free.
Partita__V1__JointMarker **joint_markers_new(const pt_model *m, size_t *n);
void joint_markers_free(Partita__V1__JointMarker **j);

#endif
