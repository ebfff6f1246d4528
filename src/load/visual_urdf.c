// visual_urdf.c: URDF <visual> and <collision> elements to pt_spec visuals and collision
// shapes (docs/urdf.md, "Visuals" and "Collision").
//
// Each <visual> or <collision> of a link: <origin> in the link frame, <geometry> one of box,
// sphere, cylinder (URDF's cylinders lie along z, as Partita's do) or mesh (filename, scale),
// and for a visual an optional <material> with a <color rgba>, or naming a material defined
// under <robot>. The pose is stored in the global frame at the zero configuration, like every
// pose of a spec.
#include <libxml/tree.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "ptu.h"
#include "urdf_xml.h"
#include "visual_urdf.h"

// Attribute `attr` of e as n numbers; absent keeps out. 0 ok, -1 malformed (message in err).
static int attr_num(const xmlNode *e, const char *attr, double *out, int n, const char *link,
                    const pt_spec *s, pt_error *err) {
  xmlChar *v = xmlGetProp(e, (const xmlChar *)attr);
  if (!v) return 0;
  int bad = uxml_numbers((const char *)v, out, n);
  if (bad)
    pt_error_set(err, PT_EPARSE, "%s:%d: link \"%s\": <%s %s=\"%.40s\">: expected %d finite "
                 "number%s", s->source, uxml_line(e), link, (const char *)e->name, attr,
                 (const char *)v, n, n == 1 ? "" : "s");
  xmlFree(v);
  return bad ? -1 : 0;
}

// The rgba of a <material>: its own <color>, or that of the <robot>-level material it names.
static int material_rgba(const xmlNode *mat, const xmlNode *robot, double rgba[4],
                         const char *link, const pt_spec *s, pt_error *err) {
  xmlNode *col = uxml_child(mat, "color", NULL);
  if (col) {
    int rc = attr_num(col, "rgba", rgba, 4, link, s, err);
    return rc ? -1 : 1;
  }
  xmlChar *name = xmlGetProp(mat, (const xmlChar *)"name");
  if (!name) return 0;
  int found = 0;
  for (xmlNode *c = robot->children; c && !found; c = c->next) {
    if (!uxml_is(c, "material") || c == mat) continue;
    xmlChar *n = xmlGetProp(c, (const xmlChar *)"name");
    if (n && !strcmp((const char *)n, (const char *)name) && (col = uxml_child(c, "color", NULL))) {
      found = attr_num(col, "rgba", rgba, 4, link, s, err) ? -1 : 1;
    }
    if (n) xmlFree(n);
  }
  xmlFree(name);
  return found;
}

// The <visual> (collision 0) or <collision> (1) elements of a link.
static int link_shapes(const xmlNode *link, const xmlNode *robot, const double R[9],
                       const double p[3], const char *body, int collision, pt_spec *s,
                       pt_error *err) {
  const char *elem = collision ? "collision" : "visual";
  int *count = collision ? &s->ncollision : &s->nvisual;
  xmlChar *lname = xmlGetProp(link, (const xmlChar *)"name");
  char name[PT_NAME_MAX];
  snprintf(name, sizeof(name), "%s", lname ? (const char *)lname : "");
  if (lname) xmlFree(lname);
  int on_body = 0;
  for (int i = 0; i < s->nbody; i++) on_body |= !strcmp(s->bodies[i].name, body);
  int index = 0;
  for (xmlNode *vis = link->children; vis; vis = vis->next) {
    if (!uxml_is(vis, elem)) continue;
    int line = uxml_line(vis);
    xmlNode *geo = uxml_child(vis, "geometry", NULL), *shape = NULL;
    for (xmlNode *c = geo ? geo->children : NULL; c && !shape; c = c->next)
      if (c->type == XML_ELEMENT_NODE) shape = c;
    if (!shape) {
      pt_spec_warn(s, "%s:%d: link \"%s\": <%s> without a geometry ignored", s->source, line,
                   name, elem);
      continue;
    }
    pt_spec_visual *v = collision ? pt_spec_add_collision(s) : pt_spec_add_visual(s);
    if (!v) return pt_error_set(err, PT_ENOMEM, "%s: out of memory", s->source);
    snprintf(v->body, sizeof(v->body), "%s", on_body ? body : "ground");
    v->line = line;
    v->index = index++;
    int rc = 0;
    const char *what = (const char *)shape->name;
    if (uxml_is(shape, "box")) {
      v->type = PT_VISUAL_BOX;
      rc = attr_num(shape, "size", v->size, 3, name, s, err);
    } else if (uxml_is(shape, "sphere")) {
      v->type = PT_VISUAL_SPHERE;
      rc = attr_num(shape, "radius", v->size, 1, name, s, err);
    } else if (uxml_is(shape, "cylinder") || uxml_is(shape, "capsule")) {
      v->type = uxml_is(shape, "cylinder") ? PT_VISUAL_CYLINDER : PT_VISUAL_CAPSULE;
      rc = attr_num(shape, "radius", v->size, 1, name, s, err);
      if (!rc) rc = attr_num(shape, "length", v->size + 1, 1, name, s, err);
    } else if (uxml_is(shape, "mesh")) {
      v->type = PT_VISUAL_MESH;
      xmlChar *fn = xmlGetProp(shape, (const xmlChar *)"filename");
      if (fn) snprintf(v->uri, sizeof(v->uri), "%s", (const char *)fn);
      if (fn) xmlFree(fn);
      rc = attr_num(shape, "scale", v->scale, 3, name, s, err);
    } else {
      pt_spec_warn(s, "%s:%d: link \"%s\": <%s> geometry <%s> unknown; ignored", s->source,
                   line, name, elem, what);
      (*count)--;
      continue;
    }
    if (rc) return PT_EPARSE;
    int bad = 0;
    if (v->type == PT_VISUAL_BOX)
      bad = !(v->size[0] > 0 && v->size[1] > 0 && v->size[2] > 0);
    else if (v->type == PT_VISUAL_SPHERE)
      bad = !(v->size[0] > 0);
    else if (v->type != PT_VISUAL_MESH)
      bad = !(v->size[0] > 0 && v->size[1] >= 0);
    else
      bad = !v->uri[0];
    if (bad)
      return pt_error_set(err, PT_EPARSE, "%s:%d: link \"%s\": <%s> <%s> needs %s", s->source,
                          line, name, elem, what,
                          v->type == PT_VISUAL_MESH ? "a filename"
                                                    : "positive dimensions (size, radius, length)");
    // pose: link frame (R, p) times the visual's origin
    double xyz[3] = {0, 0, 0}, rpy[3] = {0, 0, 0};
    xmlNode *o = uxml_child(vis, "origin", NULL);
    if (o && (attr_num(o, "xyz", xyz, 3, name, s, err) || attr_num(o, "rpy", rpy, 3, name, s, err)))
      return PT_EPARSE;
    double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]);
    double cy = cos(rpy[2]), sy = sin(rpy[2]);
    double Ro[9] = {cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                    sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                    -sp,     cp * sr,                cp * cr};   // Rz(y) Ry(p) Rx(r)
    double Rg[9], d[3];
    ptu_mul_mat3(Rg, R, Ro);
    ptu_mul_mat_vec3(d, R, xyz);
    ptu_add3(v->position, d, p);
    ptu_mat2quat(v->quat, Rg);
    v->has_position = v->has_quat = 1;
    xmlNode *mat = collision ? NULL : uxml_child(vis, "material", NULL);
    if (mat) {
      int got = material_rgba(mat, robot, v->rgba, name, s, err);
      if (got < 0) return PT_EPARSE;
      v->has_rgba = got;
      for (int k = 0; k < 4 && got; k++) v->rgba[k] = fmin(1.0, fmax(0.0, v->rgba[k]));
    }
  }
  return PT_OK;
}

int pt_urdf_link_visuals(const xmlNode *link, const xmlNode *robot, const double R[9],
                         const double p[3], const char *body, pt_spec *s, pt_error *err) {
  return link_shapes(link, robot, R, p, body, 0, s, err);
}

int pt_urdf_link_collisions(const xmlNode *link, const xmlNode *robot, const double R[9],
                            const double p[3], const char *body, pt_spec *s, pt_error *err) {
  return link_shapes(link, robot, R, p, body, 1, s, err);
}
