// visual_urdf.h: the URDF importer's <visual> and <collision> elements (visual_urdf.c), called
// by load_urdf.c.
#ifndef PT_VISUAL_URDF_H
#define PT_VISUAL_URDF_H

#include <libxml/tree.h>

#include "partita.h"

// The <visual> elements of one <link> into s's visuals. R, p: the link frame at the zero
// configuration (x_global = R x_link + p); body: the body carrying it.
int pt_urdf_link_visuals(const xmlNode *link, const xmlNode *robot, const double R[9],
                         const double p[3], const char *body, pt_spec *s, pt_error *err);
// The same for its <collision> elements, into s's collision shapes.
int pt_urdf_link_collisions(const xmlNode *link, const xmlNode *robot, const double R[9],
                            const double p[3], const char *body, pt_spec *s, pt_error *err);

#endif
