// mesh_read.h: the vertices of a mesh file, for the convex hull a mesh collides as
// (mesh_read.c). The viewers draw the same files with their own readers; this one reads the
// same frame they draw: the file's own axes, a COLLADA file's node transforms and unit.
#ifndef PT_MESH_READ_H
#define PT_MESH_READ_H

#include "partita.h"

// Bytes of a mesh file read at most (a bigger one is refused).
#define PT_MESH_MAX_BYTES (256L << 20)

// The vertices of the mesh file at path (STL binary or ASCII, Wavefront OBJ, COLLADA .dae), each
// multiplied by scale (3) component-wise, as a new array freed by free(): *pts (*n x 3). At most
// max_points (more: refused). PT_EIO when the file cannot be read, PT_EMODEL when it is not a
// mesh of its kind, has no vertex or too many; the message names the file.
int pt_mesh_vertices(double **pts, int *n, const char *path, const double scale[3],
                     int max_points, pt_error *err);

// The vertices of every collision mesh of s (v->mesh, found by pt_spec_resolve_meshes) into
// v->vert and v->nvert, scaled. A mesh that was not found is left out with a warning (a URDF
// is often shared without its meshes; the body then does not collide through that shape); one
// that cannot be read, or has too many vertices, is refused (PT_EMODEL or PT_EIO,
// `FILE:LINE: collision of body "B": ...`).
int pt_spec_read_collision_meshes(pt_spec *s, pt_error *err);

#endif
