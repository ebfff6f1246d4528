// mesh_read.c: vertices of STL, OBJ and COLLADA files (mesh_read.h). Only the vertices: a mesh
// collides as their convex hull, so faces, normals and materials are not read.
#include "mesh_read.h"

#include <ctype.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collide.h"   // PT_HULL_MAX_INPUT

typedef struct {
  double *p;        // (n x 3)
  int n, cap, max;
  int over;         // more than max points were offered
  double m[12];     // transform applied to what is added: x' = M[0..2] x + M[3] (rows)
} points;

static int add(points *v, double x, double y, double z) {
  if (v->n >= v->max) {
    v->over = 1;
    return -1;
  }
  if (v->n == v->cap) {
    int cap = v->cap ? 2 * v->cap : 1024;
    if (cap > v->max) cap = v->max;
    double *p = realloc(v->p, sizeof(double) * 3 * (size_t)cap);
    if (!p) return -1;
    v->p = p, v->cap = cap;
  }
  const double *m = v->m;
  double *q = v->p + 3 * v->n++;
  for (int r = 0; r < 3; r++)
    q[r] = m[4 * r] * x + m[4 * r + 1] * y + m[4 * r + 2] * z + m[4 * r + 3];
  return 0;
}

static int read_all(char **buf, long *len, const char *path, pt_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return pt_error_set(err, PT_EIO, "mesh \"%s\": cannot open", path);
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return pt_error_set(err, PT_EIO, "mesh \"%s\": cannot read", path);
  }
  if (n > PT_MESH_MAX_BYTES) {
    fclose(f);
    return pt_error_set(err, PT_EMODEL, "mesh \"%s\": %ld bytes, more than the %ld read",
                        path, n, (long)PT_MESH_MAX_BYTES);
  }
  *buf = malloc((size_t)n + 1);
  if (!*buf) {
    fclose(f);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  size_t got = fread(*buf, 1, (size_t)n, f);
  fclose(f);
  if (got != (size_t)n) {
    free(*buf);
    *buf = NULL;
    return pt_error_set(err, PT_EIO, "mesh \"%s\": cannot read", path);
  }
  (*buf)[n] = '\0';
  *len = n;
  return PT_OK;
}

// ---------------------------------------------------------------------------------------------
// STL and OBJ.

static float le_float(const unsigned char *b) {
  uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
  float f;
  memcpy(&f, &u, sizeof(f));
  return f;
}

// Three numbers after position *s; advances it. 0 ok.
static int three(const char **s, double out[3]) {
  for (int k = 0; k < 3; k++) {
    char *end;
    out[k] = strtod(*s, &end);
    if (end == *s || !isfinite(out[k])) return -1;
    *s = end;
  }
  return 0;
}

static int read_stl(points *v, const char *buf, long len) {
  const unsigned char *b = (const unsigned char *)buf;
  if (len >= 84) {   // binary: the size says so (an ASCII file of that size is unlikely)
    uint32_t ntri = (uint32_t)b[80] | (uint32_t)b[81] << 8 | (uint32_t)b[82] << 16 |
                    (uint32_t)b[83] << 24;
    if (84 + 50 * (long long)ntri == len) {
      for (uint32_t t = 0; t < ntri; t++)
        for (int c = 0; c < 3; c++) {
          const unsigned char *q = b + 84 + 50 * (size_t)t + 12 + 12 * c;
          double x = le_float(q), y = le_float(q + 4), z = le_float(q + 8);
          if (!isfinite(x) || !isfinite(y) || !isfinite(z) || add(v, x, y, z)) return -1;
        }
      return 0;
    }
  }
  const char *s = buf;
  while (isspace((unsigned char)*s)) s++;
  if (strncmp(s, "solid", 5)) return -1;
  while ((s = strstr(s, "vertex"))) {   // "vertex x y z", in every facet's loop
    s += 6;
    double x[3];
    if (three(&s, x) || add(v, x[0], x[1], x[2])) return -1;
  }
  return 0;
}

static int read_obj(points *v, const char *buf) {
  for (const char *s = buf; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL) {
    while (*s == ' ' || *s == '\t') s++;
    if (s[0] != 'v' || (s[1] != ' ' && s[1] != '\t')) continue;   // "v x y z [w]" only
    s += 1;
    double x[3];
    if (three(&s, x) || add(v, x[0], x[1], x[2])) return -1;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// COLLADA: the geometries the visual scene instantiates, through its nodes' transforms.

static int is(const xmlNode *n, const char *name) {
  return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static xmlNode *child(const xmlNode *n, const char *name) {
  for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
    if (is(c, name)) return c;
  return NULL;
}

// The element called name whose id is id ("#id" accepted), anywhere below n (depth capped).
static xmlNode *by_id(xmlNode *n, const char *name, const char *id, int depth) {
  if (id[0] == '#') id++;
  for (xmlNode *c = n->children; c && depth < 64; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (is(c, name)) {
      xmlChar *a = xmlGetProp(c, (const xmlChar *)"id");
      int hit = a && !strcmp((const char *)a, id);
      xmlFree(a);
      if (hit) return c;
    }
    xmlNode *r = by_id(c, name, id, depth + 1);
    if (r) return r;
  }
  return NULL;
}

// Up to max numbers of an element's text; returns how many, -1 on a malformed one.
static int numbers(const xmlNode *e, double *out, int max) {
  xmlChar *t = xmlNodeGetContent(e);
  if (!t) return -1;
  const char *s = (const char *)t;
  int k = 0;
  for (;;) {
    while (isspace((unsigned char)*s)) s++;
    if (!*s || k == max) break;
    char *end;
    double x = strtod(s, &end);
    if (end == s || !isfinite(x)) {
      k = -1;
      break;
    }
    out[k++] = x;
    s = end;
  }
  xmlFree(t);
  return k;
}

// m = m * t (3x4 affine, rows)
static void compose(double m[12], const double t[12]) {
  double r[12];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      r[4 * i + j] = m[4 * i] * t[j] + m[4 * i + 1] * t[4 + j] + m[4 * i + 2] * t[8 + j] +
                     (j == 3 ? m[4 * i + 3] : 0);
  memcpy(m, r, sizeof(r));
}

// One transform element of a node (matrix, translate, rotate, scale) into m. -1 malformed.
static int transform(double m[12], const xmlNode *e) {
  double a[16], t[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  if (is(e, "matrix")) {   // row-major, translation in the fourth column
    if (numbers(e, a, 16) != 16) return -1;
    memcpy(t, a, sizeof(t));
  } else if (is(e, "translate")) {
    if (numbers(e, a, 3) != 3) return -1;
    t[3] = a[0], t[7] = a[1], t[11] = a[2];
  } else if (is(e, "scale")) {
    if (numbers(e, a, 3) != 3) return -1;
    t[0] = a[0], t[5] = a[1], t[10] = a[2];
  } else if (is(e, "rotate")) {   // axis, angle in degrees (Rodrigues)
    if (numbers(e, a, 4) != 4) return -1;
    double l = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    if (l == 0) return 0;
    double x = a[0] / l, y = a[1] / l, z = a[2] / l, th = a[3] * M_PI / 180;
    double c = cos(th), s = sin(th), C = 1 - c;
    double R[12] = {c + x * x * C,     x * y * C - z * s, x * z * C + y * s, 0,
                    y * x * C + z * s, c + y * y * C,     y * z * C - x * s, 0,
                    z * x * C - y * s, z * y * C + x * s, c + z * z * C,     0};
    memcpy(t, R, sizeof(t));
  } else {
    return 0;   // lookat, skew, and anything else: not a transform we apply
  }
  compose(m, t);
  return 0;
}

// The positions of one <geometry>'s mesh, through v's transform.
static int geometry_points(points *v, xmlNode *root, const char *url) {
  xmlNode *g = by_id(root, "geometry", url, 0), *mesh = child(g, "mesh");
  if (!mesh) return 0;   // a spline or nothing: no vertices
  xmlNode *vert = child(mesh, "vertices"), *src = NULL;
  for (xmlNode *in = vert ? vert->children : NULL; in && !src; in = in->next) {
    if (!is(in, "input")) continue;
    xmlChar *sem = xmlGetProp(in, (const xmlChar *)"semantic");
    xmlChar *s = xmlGetProp(in, (const xmlChar *)"source");
    if (sem && s && !strcmp((const char *)sem, "POSITION"))
      src = by_id(mesh, "source", (const char *)s, 0);
    xmlFree(sem);
    xmlFree(s);
  }
  xmlNode *fa = child(src, "float_array");
  if (!fa) return -1;
  int stride = 3;
  xmlNode *acc = child(child(src, "technique_common"), "accessor");
  xmlChar *st = acc ? xmlGetProp(acc, (const xmlChar *)"stride") : NULL;
  if (st) stride = atoi((const char *)st);
  xmlFree(st);
  if (stride < 3 || stride > 16) return -1;
  int max = stride * (v->max - v->n + 1);   // no more than could be kept, and one over
  double *a = malloc(sizeof(double) * (size_t)max);
  if (!a) return -1;
  int k = numbers(fa, a, max), rc = k < 0 ? -1 : 0;
  for (int i = 0; rc == 0 && i + 2 < k; i += stride) rc = add(v, a[i], a[i + 1], a[i + 2]);
  free(a);
  return rc;
}

static int node_points(points *v, xmlNode *root, xmlNode *node, int depth) {
  if (depth > 32) return -1;   // instance_node loops
  double saved[12];
  memcpy(saved, v->m, sizeof(saved));
  int rc = 0;
  for (xmlNode *c = node->children; c && rc == 0; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    xmlChar *url = xmlGetProp(c, (const xmlChar *)"url");
    if (is(c, "node")) {
      rc = node_points(v, root, c, depth + 1);
    } else if (is(c, "instance_geometry") && url) {
      rc = geometry_points(v, root, (const char *)url);
    } else if (is(c, "instance_node") && url) {
      xmlNode *n = by_id(root, "node", (const char *)url, 0);
      if (n) rc = node_points(v, root, n, depth + 1);
    } else {
      rc = transform(v->m, c);
    }
    xmlFree(url);
  }
  memcpy(v->m, saved, sizeof(saved));
  return rc;
}

static int read_dae(points *v, const char *buf, long len, const char *path) {
  int flags = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_HUGE;
  xmlDoc *doc = xmlReadMemory(buf, (int)len, path, NULL, flags);
  xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
  if (!root || !is(root, "COLLADA")) {
    xmlFreeDoc(doc);
    return -1;
  }
  double unit = 1;
  xmlNode *u = child(child(root, "asset"), "unit");
  xmlChar *mt = u ? xmlGetProp(u, (const xmlChar *)"meter") : NULL;
  if (mt) unit = strtod((const char *)mt, NULL);
  xmlFree(mt);
  int rc = 0;
  if (!(unit > 0) || !isfinite(unit)) rc = -1;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 4; c++) v->m[4 * r + c] *= unit;
  // the scene's visual scene, else the first one
  xmlNode *vs = NULL, *isc = child(child(root, "scene"), "instance_visual_scene");
  xmlChar *url = isc ? xmlGetProp(isc, (const xmlChar *)"url") : NULL;
  if (url) vs = by_id(root, "visual_scene", (const char *)url, 0);
  xmlFree(url);
  if (!vs) vs = child(child(root, "library_visual_scenes"), "visual_scene");
  if (rc == 0 && vs) rc = node_points(v, root, vs, 0);
  xmlFreeDoc(doc);
  return rc;
}

// ---------------------------------------------------------------------------------------------

int pt_mesh_vertices(double **pts, int *n, const char *path, const double scale[3],
                     int max_points, pt_error *err) {
  *pts = NULL;
  *n = 0;
  const char *dot = strrchr(path, '.');
  char ext[8] = "";
  for (int i = 0; dot && i < 7 && dot[1 + i]; i++)
    ext[i] = (char)tolower((unsigned char)dot[1 + i]);
  int kind = !strcmp(ext, "stl") ? 1 : !strcmp(ext, "obj") ? 2 : !strcmp(ext, "dae") ? 3 : 0;
  if (!kind)
    return pt_error_set(err, PT_EMODEL, "mesh \"%s\": not an STL, OBJ or DAE file", path);
  char *buf = NULL;
  long len = 0;
  int rc = read_all(&buf, &len, path, err);
  if (rc) return rc;
  points v = {.max = max_points, .m = {scale[0], 0, 0, 0, 0, scale[1], 0, 0, 0, 0, scale[2], 0}};
  int bad = kind == 1 ? read_stl(&v, buf, len)
            : kind == 2 ? read_obj(&v, buf)
                        : read_dae(&v, buf, len, path);
  free(buf);
  if (v.over)
    rc = pt_error_set(err, PT_EMODEL, "mesh \"%s\": more than %d vertices", path, max_points);
  else if (bad)
    rc = pt_error_set(err, PT_EMODEL, "mesh \"%s\": not a readable %s file", path,
                      kind == 1 ? "STL" : kind == 2 ? "OBJ" : "COLLADA");
  else if (v.n == 0)
    rc = pt_error_set(err, PT_EMODEL, "mesh \"%s\": no vertices", path);
  if (rc) {
    free(v.p);
    return rc;
  }
  *pts = v.p;
  *n = v.n;
  return PT_OK;
}

int pt_spec_read_collision_meshes(pt_spec *s, pt_error *err) {
  int k = 0;
  for (int i = 0; i < s->ncollision; i++) {   // a mesh not found: said, and left out
    pt_spec_visual *v = &s->collisions[i];
    if (v->type == PT_VISUAL_MESH && !v->vert && !v->mesh[0]) {
      if (pt_spec_warn(s, "%s:%d: collision of body \"%s\": mesh \"%.200s\" not found (search "
                       "path: the load option, PARTITA_PACKAGE_PATH, the model's directory); "
                       "the body does not collide through this shape", s->source, v->line,
                       v->body, v->uri))
        return pt_error_set(err, PT_ENOMEM, "out of memory");
      continue;
    }
    s->collisions[k++] = *v;
  }
  s->ncollision = k;
  for (int i = 0; i < s->ncollision; i++) {
    pt_spec_visual *v = &s->collisions[i];
    if (v->type != PT_VISUAL_MESH || v->vert) continue;
    pt_error e = {0};
    int rc = pt_mesh_vertices(&v->vert, &v->nvert, v->mesh, v->scale, PT_HULL_MAX_INPUT, &e);
    if (rc)
      return pt_error_set(err, rc, "%s:%d: collision of body \"%s\": %s", s->source, v->line,
                          v->body, e.msg);
  }
  return PT_OK;
}
