// mesh.h: the mesh files of a spec's visuals, found through the package search path (mesh.c).
#ifndef PT_MESH_H
#define PT_MESH_H

#include "partita.h"

// Each mesh visual of s gets the absolute path of its file (v->mesh), or a warning in s and an
// empty path when the file is not a mesh viewers draw or is not found (search: opt's
// package_path, $PARTITA_PACKAGE_PATH, the model's directory and its parent). Each mesh
// collision shape gets its path the same way, or "" without a warning (mesh_read.c refuses it).
void pt_spec_resolve_meshes(pt_spec *s, const pt_load_options *opt);

#endif
