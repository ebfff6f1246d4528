// urdf_scan.c: whole-document checks of a URDF (docs/urdf.md, "What is not imported").
//
// A xacro source is refused before anything is built: its `${...}` and `<xacro:...>` are macros
// for the xacro preprocessor, not URDF. After a successful import every element or attribute
// the importer did not read is named, one warning per kind with its count and the line of the
// first, so that nothing a user wrote is dropped silently. The table of what is read lives
// here, beside the reasons given for what is not.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urdf_scan.h"
#include "urdf_xml.h"

static int is_xacro_elem(const xmlNode *n) {
  if (n->ns && n->ns->prefix && strcmp((const char *)n->ns->prefix, "xacro") == 0) return 1;
  return strncmp((const char *)n->name, "xacro:", 6) == 0;
}

// The first xacro construct at or below n: element, or attribute with a substitution.
static const xmlNode *find_xacro(const xmlNode *n, char *what, size_t size) {
  for (; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE) continue;
    if (is_xacro_elem(n)) {
      snprintf(what, size, "<%s%.60s>", n->ns && n->ns->prefix ? "xacro:" : "",
               (const char *)n->name);
      return n;
    }
    for (const xmlAttr *a = n->properties; a; a = a->next) {
      xmlChar *v = xmlNodeGetContent((const xmlNode *)a);
      int hit = v && (strstr((const char *)v, "${") || strstr((const char *)v, "$("));
      if (hit) snprintf(what, size, "%.40s=\"%.60s\"", (const char *)a->name, (const char *)v);
      xmlFree(v);
      if (hit) return n;
    }
    const xmlNode *c = find_xacro(n->children, what, size);
    if (c) return c;
  }
  return NULL;
}

int pt_urdf_refuse_xacro(const xmlNode *robot, const char *source, pt_error *err) {
  char what[160];
  const xmlNode *n = find_xacro(robot, what, sizeof(what));
  if (!n) return PT_OK;
  return pt_error_set(err, PT_EPARSE,
                      "%s:%d: robot: this is a xacro file (%s), not URDF: run `xacro FILE > "
                      "robot.urdf` first and load its output", source, uxml_line(n), what);
}

// What the importer reads: for each element, its attributes and child elements. A child in
// `skip` is for viewers and is neither read nor reported.
typedef struct {
  const char *elem;
  const char *attrs;     // space-separated
  const char *children;  // space-separated
  const char *skip;
} known_elem;

static const known_elem known[] = {
    {"robot", "name version", "link joint transmission", "material"},
    {"transmission", "name type", "type joint actuator mechanicalReduction", ""},
    {"link", "name", "inertial collision", "visual"},
    {"inertial", "", "origin mass inertia", ""},
    {"origin", "xyz rpy", "", ""},
    {"mass", "value", "", ""},
    {"inertia", "ixx ixy ixz iyy iyz izz", "", ""},
    {"joint", "name type", "parent child origin axis limit dynamics mimic", ""},
    {"mimic", "joint multiplier offset", "", ""},
    {"parent", "link", "", ""},
    {"child", "link", "", ""},
    {"axis", "xyz", "", ""},
    {"limit", "effort lower upper", "", ""},
    {"dynamics", "damping", "", ""},
};

// Why a kind is not used; kinds not listed get the generic reason.
static const struct {
  const char *kind;
  const char *why;
} reasons[] = {
    {"<gazebo>", "Gazebo simulator settings"},
    {"<joint><calibration>", "calibration is for the real robot's encoders"},
    {"<joint><safety_controller>", "controller settings, not mechanics"},
    {"<limit velocity>", "velocity limits are not enforced"},
    {"<dynamics friction>", "Coulomb friction is not imported (docs/urdf.md: it would need a "
                            "velocity scale; YAML joints take friction and friction_velocity)"},
    {"<axis> of a fixed or floating joint", "such a joint has no axis (URDF ignores it too)"},
};

#define MAX_KINDS 48

typedef struct {
  char kind[200];
  int line, count;
} unused_kind;

typedef struct {
  unused_kind k[MAX_KINDS];
  int n;
  int overflow, overflow_line;  // kinds beyond MAX_KINDS, lumped together
} unused_set;

static void note(unused_set *u, const char *kind, int line) {
  for (int i = 0; i < u->n; i++)
    if (strcmp(u->k[i].kind, kind) == 0) {
      u->k[i].count++;
      return;
    }
  if (u->n == MAX_KINDS) {
    if (u->overflow++ == 0) u->overflow_line = line;
    return;
  }
  unused_kind *k = &u->k[u->n++];
  snprintf(k->kind, sizeof(k->kind), "%s", kind);
  k->line = line;
  k->count = 1;
}

// 1 if `word` is one of the space-separated words of `list`.
static int in_list(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ' ');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && strncmp(p, word, n) == 0) return 1;
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

static const known_elem *find_known(const char *name) {
  for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
    if (strcmp(known[i].elem, name) == 0) return &known[i];
  return NULL;
}

static int fixed_or_floating(const xmlNode *joint) {
  xmlChar *t = xmlGetProp(joint, (const xmlChar *)"type");
  int r = t && (strcmp((const char *)t, "fixed") == 0 || strcmp((const char *)t, "floating") == 0);
  xmlFree(t);
  return r;
}

// 1 if the attribute's value is a number equal to 0 ("0", "0.0", " 0 ").
static int zero_value(const xmlAttr *a) {
  xmlChar *v = xmlNodeGetContent((const xmlNode *)a);
  int zero = 0;
  if (v) {
    char *end;
    double x = strtod((const char *)v, &end);
    while (*end == ' ' || *end == '\t') end++;
    zero = end != (char *)v && *end == '\0' && x == 0;
  }
  xmlFree(v);
  return zero;
}

static void scan(unused_set *u, const xmlNode *e, const known_elem *k, int fixed_joint) {
  char kind[200];
  const char *name = (const char *)e->name;
  int bounds = 0;  // lower and upper of one <limit> count once
  for (const xmlAttr *a = e->properties; a; a = a->next)
    if (!in_list(k->attrs, (const char *)a->name)) {
      const char *an = (const char *)a->name;
      int bound = strcmp(name, "limit") == 0 && in_list("lower upper", an);
      if (bound && bounds++) continue;
      if (strcmp(name, "dynamics") == 0 && strcmp(an, "friction") == 0 && zero_value(a))
        continue;  // no friction: nothing is lost
      snprintf(kind, sizeof(kind), "<%.40s %.40s>", name, bound ? "lower/upper" : an);
      note(u, kind, uxml_line(e));
    }
  for (const xmlNode *c = e->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    const char *cn = (const char *)c->name;
    if (in_list(k->skip, cn)) continue;
    if (strcmp(name, "transmission") == 0) continue;  // urdf_transmission.c reports these
    if (!in_list(k->children, cn)) {
      if (strcmp(name, "robot") == 0)
        snprintf(kind, sizeof(kind), "<%.60s>", cn);
      else
        snprintf(kind, sizeof(kind), "<%.40s><%.60s>", name, cn);
      note(u, kind, uxml_line(c));
      continue;
    }
    if (fixed_joint && strcmp(cn, "axis") == 0) {
      note(u, "<axis> of a fixed or floating joint", uxml_line(c));
      continue;
    }
    const known_elem *ck = find_known(cn);
    if (ck) scan(u, c, ck, strcmp(cn, "joint") == 0 && fixed_or_floating(c));
  }
}

int pt_urdf_warn_unused(const xmlNode *robot, const char *source, pt_spec *s) {
  static unused_set zero;
  unused_set *u = malloc(sizeof(*u));  // a few kB: not on the stack of a daemon thread
  if (!u) return PT_ENOMEM;
  *u = zero;
  scan(u, robot, find_known("robot"), 0);
  int rc = PT_OK;
  for (int i = 0; i < u->n && !rc; i++) {
    const char *why = "not used by Partita";
    for (size_t r = 0; r < sizeof(reasons) / sizeof(reasons[0]); r++)
      if (strcmp(reasons[r].kind, u->k[i].kind) == 0) why = reasons[r].why;
    if (u->k[i].count == 1)
      rc = pt_spec_warn(s, "%s:%d: ignored %s: %s", source, u->k[i].line, u->k[i].kind, why);
    else
      rc = pt_spec_warn(s, "%s:%d: ignored %s (%d times, the first here): %s", source,
                        u->k[i].line, u->k[i].kind, u->k[i].count, why);
  }
  if (!rc && u->overflow)
    rc = pt_spec_warn(s, "%s:%d: ignored %d more kinds of elements or attributes", source,
                      u->overflow_line, u->overflow);
  free(u);
  return rc ? PT_ENOMEM : PT_OK;
}
