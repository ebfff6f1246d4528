// mesh.c: the mesh files of a model's visuals (docs/model-format.md, "Visuals"), found at load
// through the package search path (the load option, $PARTITA_PACKAGE_PATH, the model's
// directory and its parent), and which mesh files a viewer can draw. A mesh not found is named
// in a warning and drawn as the body's inertia box (compile/visual.c).
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mesh.h"

int pt_mesh_kind_ok(const char *path) {
  const char *dot = strrchr(path, '.');
  if (!dot) return 0;
  char ext[8] = "";
  for (int i = 0; i < 7 && dot[1 + i]; i++) ext[i] = (char)tolower((unsigned char)dot[1 + i]);
  return !strcmp(ext, "stl") || !strcmp(ext, "dae") || !strcmp(ext, "obj");
}

// A readable regular file at dir/rel: its absolute path into out.
static int try_path(char out[PT_PATH_MAX], const char *dir, const char *rel) {
  char p[2 * PT_PATH_MAX + 2];
  if (dir && dir[0])
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
  else
    snprintf(p, sizeof(p), "%s", rel);
  if (access(p, R_OK) != 0) return 0;
  char real[PATH_MAX];
  if (!realpath(p, real) || strlen(real) >= PT_PATH_MAX) return 0;
  memcpy(out, real, strlen(real) + 1);
  return 1;
}

// Each directory of a ':'-separated list: dir/pkg/rest, then dir/rest.
static int try_search_path(char out[PT_PATH_MAX], const char *list, const char *pkg,
                           const char *rest) {
  if (!list) return 0;
  const char *c = list;
  while (*c) {
    const char *e = strchr(c, ':');
    size_t n = e ? (size_t)(e - c) : strlen(c);
    if (n > 0 && n < PT_PATH_MAX) {
      char dir[PT_PATH_MAX], sub[2 * PT_PATH_MAX + 2];
      memcpy(dir, c, n);
      dir[n] = '\0';
      if (pkg && pkg[0]) {
        snprintf(sub, sizeof(sub), "%s/%s", pkg, rest);
        if (try_path(out, dir, sub)) return 1;
      }
      if (try_path(out, dir, rest)) return 1;
    }
    if (!e) break;
    c = e + 1;
  }
  return 0;
}

// Resolves `uri` (package://PKG/PATH, file://PATH, an absolute or a relative file name) to a
// readable file: relative names against the model file's directory, packages through the
// option's search path, then $PARTITA_PACKAGE_PATH, then the model's directory and its parent
// (the usual PKG/urdf/robot.urdf beside PKG/meshes/). 1 found, 0 not.
static int resolve(char out[PT_PATH_MAX], const char *uri, const char *source,
                   const char *search) {
  char dir[PT_PATH_MAX] = "", parent[PT_PATH_MAX + 4] = "";
  if (source && source[0] && source[0] != '<') {
    snprintf(dir, sizeof(dir), "%s", source);
    char *slash = strrchr(dir, '/');
    if (slash)
      *slash = '\0';
    else
      snprintf(dir, sizeof(dir), ".");
    snprintf(parent, sizeof(parent), "%s/..", dir);
  }
  const char *env = getenv("PARTITA_PACKAGE_PATH");
  if (!strncmp(uri, "package://", 10)) {
    const char *p = uri + 10;
    const char *slash = strchr(p, '/');
    if (!slash) return 0;
    char pkg[PT_PATH_MAX];
    size_t n = (size_t)(slash - p);
    if (n >= sizeof(pkg)) return 0;
    memcpy(pkg, p, n);
    pkg[n] = '\0';
    const char *rest = slash + 1;
    return try_search_path(out, search, pkg, rest) || try_search_path(out, env, pkg, rest) ||
           (dir[0] && (try_path(out, dir, rest) || try_path(out, parent, rest)));
  }
  if (!strncmp(uri, "file://", 7)) return try_path(out, NULL, uri + 7);
  if (uri[0] == '/') return try_path(out, NULL, uri);
  return (dir[0] && try_path(out, dir, uri)) || try_search_path(out, search, NULL, uri) ||
         try_search_path(out, env, NULL, uri);
}

void pt_spec_resolve_meshes(pt_spec *s, const pt_load_options *opt) {
  const char *search = opt ? opt->package_path : NULL;
  for (int i = 0; i < s->ncollision; i++) {   // not found: "" (an error when they are read)
    pt_spec_visual *v = &s->collisions[i];
    if (v->type != PT_VISUAL_MESH) continue;
    if (!resolve(v->mesh, v->uri, s->source, search)) v->mesh[0] = '\0';
  }
  for (int i = 0; i < s->nvisual; i++) {
    pt_spec_visual *v = &s->visuals[i];
    if (v->type != PT_VISUAL_MESH) continue;
    v->mesh[0] = '\0';
    if (!pt_mesh_kind_ok(v->uri)) {
      pt_spec_warn(s, "%s:%d: visual of body \"%s\": mesh \"%.200s\" is not an STL, DAE or OBJ "
                   "file; drawn as the body's inertia box", s->source, v->line, v->body, v->uri);
    } else if (!resolve(v->mesh, v->uri, s->source, search)) {
      v->mesh[0] = '\0';
      pt_spec_warn(s, "%s:%d: visual of body \"%s\": mesh \"%.200s\" not found (search path: "
                   "the load option, PARTITA_PACKAGE_PATH, the model's directory); drawn as "
                   "the body's inertia box", s->source, v->line, v->body, v->uri);
    }
  }
}
