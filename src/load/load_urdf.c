// load_urdf.c: URDF robot descriptions to pt_spec (model-format.md, URDF section).
//
// The robot is described at its zero configuration: every link frame is the product of the
// joint origins from the root, a link's body sits at its inertial frame, and links joined by
// fixed joints are merged into one body (mass, CoM and inertia combined exactly). A massless
// root is the ground itself; otherwise the root is welded to ground (or left free with
// opt->floating_base). docs/urdf.md describes the mapping for users.
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "inertia.h"
#include "partita.h"
#include "urdf_scan.h"
#include "urdf_xml.h"
#include "visual_urdf.h"

typedef struct {
  double R[9];  // rotation, row-major: x_outer = R x_inner + p
  double p[3];
} frame;

typedef enum { J_REVOLUTE, J_CONTINUOUS, J_PRISMATIC, J_FIXED, J_FLOATING, J_PLANAR } joint_kind;

typedef struct {
  char name[PT_NAME_MAX];
  int line;
  double mass;           // 0: massless (no <inertial> or mass 0)
  double inertia[6];     // [Ixx Iyy Izz Ixy Ixz Iyz] in the inertial frame axes
  frame inertial;        // inertial frame in the link frame
  int parent_joint;      // -1: no parent (the root)
  int first_child;       // first joint whose parent is this link, -1 if none
  frame world;           // link frame in the global frame at the zero configuration
  int group;             // topmost link of the fixed-joint group this link belongs to
} urdf_link;

typedef struct {
  char name[PT_NAME_MAX];
  int line;
  joint_kind kind;
  char parent_name[PT_NAME_MAX], child_name[PT_NAME_MAX];
  int parent, child;     // link indices
  int next_sibling;      // next joint with the same parent link, -1 if none
  frame origin;          // child link frame in the parent link frame at q = 0
  double axis[3];        // unit, in the joint (= child link) frame
  double effort;         // 0 = unlimited
  double damping;
  int has_bounds;        // <limit lower/upper> given (either; the other is 0 as in urdfdom)
  double bounds[2];      // lower, upper
  char mimic[PT_NAME_MAX];  // <mimic joint=>: the leader ("" if none)
  int mimic_line;
  double mimic_mult, mimic_offset;  // <mimic multiplier= offset=> (defaults 1 and 0)
} urdf_joint;

typedef struct {
  const char *source;
  pt_error *err;
  urdf_link *links;
  int nlink;
  urdf_joint *joints;
  int njoint;
  int *order;            // links in breadth-first order from the root (nlink)
  pt_load_options lim;   // limits in effect (pt_load_options_resolve)
  pt_spec *spec;         // the spec being built (for warnings)
} urdf;

// Formats `SOURCE:LINE: what "name": message` into u->err; returns code.
static int fail(const urdf *u, int code, int line, const char *what, const char *name,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int fail(const urdf *u, int code, int line, const char *what, const char *name,
                const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (name && name[0])
    return pt_error_set(u->err, code, "%s:%d: %s \"%s\": %s", u->source, line, what, name, msg);
  return pt_error_set(u->err, code, "%s:%d: %s: %s", u->source, line, what, msg);
}

// Copies attribute `attr` into buf (size PT_NAME_MAX). 1 = found, 0 = absent, -1 = too long.
static int attr_name(const xmlNode *n, const char *attr, char *buf) {
  xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
  if (!v) return 0;
  size_t len = strlen((const char *)v);
  int rc = len < PT_NAME_MAX ? 1 : -1;
  if (rc == 1) memcpy(buf, v, len + 1);
  xmlFree(v);
  return rc;
}

// Reads n numbers from attribute `attr` of element e. Absent: keeps out unless required.
static int attr_numbers(const urdf *u, const xmlNode *e, const char *attr, double *out, int n,
                        int required, const char *what, const char *name) {
  xmlChar *v = xmlGetProp(e, (const xmlChar *)attr);
  if (!v) {
    if (!required) return PT_OK;
    return fail(u, PT_EPARSE, uxml_line(e), what, name, "<%s> has no attribute %s", e->name,
                attr);
  }
  int bad = uxml_numbers((const char *)v, out, n);
  int rc = PT_OK;
  if (bad)
    rc = fail(u, PT_EPARSE, uxml_line(e), what, name,
              "<%s %s=\"%.40s\">: expected %d finite number%s", e->name, attr,
              (const char *)v, n, n == 1 ? "" : "s");
  xmlFree(v);
  return rc;
}

// R = Rz(yaw) Ry(pitch) Rx(roll): URDF's fixed-axis roll, pitch, yaw.
static void rpy_to_matrix(double *R, const double *rpy) {
  double cr = cos(rpy[0]), sr = sin(rpy[0]);
  double cp = cos(rpy[1]), sp = sin(rpy[1]);
  double cy = cos(rpy[2]), sy = sin(rpy[2]);
  R[0] = cy * cp, R[1] = cy * sp * sr - sy * cr, R[2] = cy * sp * cr + sy * sr;
  R[3] = sy * cp, R[4] = sy * sp * sr + cy * cr, R[5] = sy * sp * cr - cy * sr;
  R[6] = -sp, R[7] = cp * sr, R[8] = cp * cr;
}

static void frame_identity(frame *f) {
  memset(f, 0, sizeof(*f));
  f->R[0] = f->R[4] = f->R[8] = 1.0;
}

// res = a * b (a and b may not alias res).
static void frame_mul(frame *res, const frame *a, const frame *b) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++)
      res->R[3 * i + j] = a->R[3 * i] * b->R[j] + a->R[3 * i + 1] * b->R[3 + j] +
                          a->R[3 * i + 2] * b->R[6 + j];
    res->p[i] = a->R[3 * i] * b->p[0] + a->R[3 * i + 1] * b->p[1] + a->R[3 * i + 2] * b->p[2] +
                a->p[i];
  }
}

static void mat_vec(double *res, const double *R, const double *x) {
  for (int i = 0; i < 3; i++) res[i] = R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
}

// <origin xyz rpy> of element e (both optional, default 0) into f.
static int parse_origin(const urdf *u, const xmlNode *e, frame *f, const char *what,
                        const char *name) {
  double xyz[3] = {0, 0, 0}, rpy[3] = {0, 0, 0};
  frame_identity(f);
  xmlNode *o = uxml_child(e, "origin", NULL);
  if (!o) return PT_OK;
  int rc = attr_numbers(u, o, "xyz", xyz, 3, 0, what, name);
  if (!rc) rc = attr_numbers(u, o, "rpy", rpy, 3, 0, what, name);
  if (rc) return rc;
  rpy_to_matrix(f->R, rpy);
  memcpy(f->p, xyz, sizeof(xyz));
  return PT_OK;
}

// Sylvester's criterion on [Ixx Iyy Izz Ixy Ixz Iyz]; `strict` asks for definiteness, else
// semidefiniteness up to round-off (all principal minors >= -tol).
static int inertia_ok(const double *I, int strict) {
  double s = 0;
  for (int k = 0; k < 6; k++) s = fmax(s, fabs(I[k]));
  if (s == 0) return !strict;
  double xx = I[0], yy = I[1], zz = I[2], xy = I[3], xz = I[4], yz = I[5];
  double d2[3] = {xx * yy - xy * xy, xx * zz - xz * xz, yy * zz - yz * yz};
  double d3 = xx * (yy * zz - yz * yz) - xy * (xy * zz - yz * xz) + xz * (xy * yz - yy * xz);
  double t1 = 1e-12 * s, t2 = 1e-12 * s * s, t3 = 1e-12 * s * s * s;
  if (strict) return xx > t1 && d2[0] > t2 && d3 > t3;
  return xx >= -t1 && yy >= -t1 && zz >= -t1 && d2[0] >= -t2 && d2[1] >= -t2 &&
         d2[2] >= -t2 && d3 >= -t3;
}

// "ixx=.. ixy=.. ixz=.. iyy=.. iyz=.. izz=.." (URDF's attribute order) of [Ixx Iyy Izz Ixy Ixz Iyz].
static void inertia_text(char *buf, size_t size, const double *I) {
  snprintf(buf, size, "ixx=%g ixy=%g ixz=%g iyy=%g iyz=%g izz=%g", I[0], I[3], I[4], I[1], I[5],
           I[2]);
}

static int find_link(const urdf *u, const char *name) {
  for (int i = 0; i < u->nlink; i++)
    if (strcmp(u->links[i].name, name) == 0) return i;
  return -1;
}

#define BALANCE_HINT "fix the file, or import with balance_inertia (--balance-inertia) to repair it"

// Repairs inertia I of link l (balance_inertia) to the nearest physical one, no principal
// moment below `floor`, and says so in a warning.
static int repair_inertia(const urdf *u, const urdf_link *l, int line, double *I, double floor) {
  char before[200], after[200];
  inertia_text(before, sizeof(before), I);
  if (pt_inertia_balance(I, floor))
    return fail(u, PT_EMODEL, line, "link", l->name, "inertia cannot be repaired (%s)", before);
  inertia_text(after, sizeof(after), I);
  if (pt_spec_warn(u->spec, "%s:%d: link \"%s\": inertia repaired (balance_inertia): %s -> %s",
                   u->source, line, l->name, before, after))
    return pt_error_set(u->err, PT_ENOMEM, "%s: out of memory", u->source);
  return PT_OK;
}

// A link's own inertia must be that of a mass distribution: principal moments >= 0 and
// A + B >= C (util/inertia.c). All zeros is a point mass (allowed: merged into a body it is fine).
static int check_link_inertia(const urdf *u, urdf_link *l, int line) {
  double lam[3];
  int zero = 1;
  for (int k = 0; k < 6; k++) zero &= l->inertia[k] == 0;
  pt_inertia_status st = zero ? PT_INERTIA_OK : pt_inertia_check(l->inertia, lam);
  if (st == PT_INERTIA_OK) return PT_OK;
  // a solid sphere of the link's mass, 1 mm in radius: the least a repaired link keeps
  if (u->lim.balance_inertia) return repair_inertia(u, l, line, l->inertia, 0.4e-6 * l->mass);
  char v[200];
  inertia_text(v, sizeof(v), l->inertia);
  if (st == PT_INERTIA_NOT_PSD)
    return fail(u, PT_EMODEL, line, "link", l->name,
                "inertia is not positive semidefinite (%s; principal moments %.4g %.4g %.4g): "
                BALANCE_HINT, v, lam[0], lam[1], lam[2]);
  return fail(u, PT_EMODEL, line, "link", l->name,
              "inertia is not physical (%s): its principal moments %.4g %.4g %.4g break "
              "A + B >= C; " BALANCE_HINT, v, lam[0], lam[1], lam[2]);
}

static int parse_inertial(const urdf *u, const xmlNode *e, urdf_link *l) {
  int count;
  xmlNode *in = uxml_child(e, "inertial", &count);
  if (!in) return PT_OK;
  if (count > 1) return fail(u, PT_EPARSE, l->line, "link", l->name, "more than one <inertial>");
  int rc = parse_origin(u, in, &l->inertial, "link", l->name);
  if (rc) return rc;
  xmlNode *m = uxml_child(in, "mass", NULL);
  if (!m) return fail(u, PT_EPARSE, uxml_line(in), "link", l->name, "<inertial> has no <mass>");
  rc = attr_numbers(u, m, "value", &l->mass, 1, 1, "link", l->name);
  if (rc) return rc;
  if (l->mass < 0)
    return fail(u, PT_EMODEL, uxml_line(m), "link", l->name, "negative mass %g", l->mass);
  xmlNode *t = uxml_child(in, "inertia", NULL);
  if (!t) {
    if (l->mass == 0) return PT_OK;
    return fail(u, PT_EPARSE, uxml_line(in), "link", l->name, "<inertial> has no <inertia>");
  }
  static const char *const keys[6] = {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"};
  for (int k = 0; k < 6; k++) {
    rc = attr_numbers(u, t, keys[k], &l->inertia[k], 1, 1, "link", l->name);
    if (rc) return rc;
  }
  if (l->mass > 0) return check_link_inertia(u, l, uxml_line(t));
  return PT_OK;
}

static int parse_link(urdf *u, const xmlNode *e) {
  urdf_link *l = &u->links[u->nlink];
  memset(l, 0, sizeof(*l));
  l->line = uxml_line(e);
  l->parent_joint = -1;
  l->first_child = -1;
  frame_identity(&l->inertial);
  int found = attr_name(e, "name", l->name);
  if (found == 0) return fail(u, PT_EPARSE, l->line, "link", NULL, "<link> without a name");
  if (found < 0 || !l->name[0])
    return fail(u, PT_EPARSE, l->line, "link", NULL, "link name empty or longer than %d bytes",
                PT_NAME_MAX - 1);
  if (find_link(u, l->name) >= 0)
    return fail(u, PT_EPARSE, l->line, "link", l->name, "duplicate link name (first on line %d)",
                u->links[find_link(u, l->name)].line);
  int rc = parse_inertial(u, e, l);
  if (rc) return rc;
  u->nlink++;
  return PT_OK;
}

static int joint_link_name(const urdf *u, const xmlNode *e, urdf_joint *j, const char *elem,
                           char *buf) {
  int count;
  xmlNode *c = uxml_child(e, elem, &count);
  if (!c) return fail(u, PT_EPARSE, j->line, "joint", j->name, "no <%s> element", elem);
  if (count > 1) return fail(u, PT_EPARSE, j->line, "joint", j->name, "more than one <%s>", elem);
  int found = attr_name(c, "link", buf);
  if (found <= 0 || !buf[0])
    return fail(u, PT_EPARSE, uxml_line(c), "joint", j->name,
                "<%s> needs a link=\"...\" of at most %d bytes", elem, PT_NAME_MAX - 1);
  return PT_OK;
}

static int parse_joint_type(const urdf *u, const xmlNode *e, urdf_joint *j) {
  static const struct {
    const char *name;
    joint_kind kind;
  } types[] = {{"revolute", J_REVOLUTE}, {"continuous", J_CONTINUOUS},
               {"prismatic", J_PRISMATIC}, {"fixed", J_FIXED}, {"floating", J_FLOATING},
               {"planar", J_PLANAR}};
  xmlChar *t = xmlGetProp(e, (const xmlChar *)"type");
  if (!t) return fail(u, PT_EPARSE, j->line, "joint", j->name, "no type attribute");
  int rc = PT_OK;
  size_t k;
  for (k = 0; k < sizeof(types) / sizeof(types[0]); k++)
    if (strcmp((const char *)t, types[k].name) == 0) break;
  if (k < sizeof(types) / sizeof(types[0]))
    j->kind = types[k].kind;
  else
    rc = fail(u, PT_EPARSE, j->line, "joint", j->name,
              "unknown joint type \"%.40s\" (revolute, continuous, prismatic, fixed, floating, "
              "planar)", (const char *)t);
  xmlFree(t);
  return rc;
}

// <axis xyz> (default 1 0 0), normalised. A fixed or floating joint has no axis: as in ROS's
// parser its <axis> is not read (often `0 0 0`; urdf_scan.c reports it unused).
static int parse_axis(const urdf *u, const xmlNode *e, urdf_joint *j) {
  if (j->kind == J_FIXED || j->kind == J_FLOATING) return PT_OK;
  xmlNode *a = uxml_child(e, "axis", NULL);
  int rc;
  if (a && (rc = attr_numbers(u, a, "xyz", j->axis, 3, 1, "joint", j->name))) return rc;
  double n = sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]);
  if (!(n > 1e-12))
    return fail(u, PT_EMODEL, a ? uxml_line(a) : j->line, "joint", j->name,
                "axis has zero length");
  for (int k = 0; k < 3; k++) j->axis[k] /= n;
  return PT_OK;
}

static int parse_joint(urdf *u, const xmlNode *e) {
  urdf_joint *j = &u->joints[u->njoint];
  memset(j, 0, sizeof(*j));
  j->line = uxml_line(e);
  j->next_sibling = -1;
  j->axis[0] = 1.0;
  int found = attr_name(e, "name", j->name);
  if (found == 0) return fail(u, PT_EPARSE, j->line, "joint", NULL, "<joint> without a name");
  if (found < 0 || !j->name[0])
    return fail(u, PT_EPARSE, j->line, "joint", NULL, "joint name empty or longer than %d bytes",
                PT_NAME_MAX - 1);
  for (int k = 0; k < u->njoint; k++)
    if (strcmp(u->joints[k].name, j->name) == 0)
      return fail(u, PT_EPARSE, j->line, "joint", j->name,
                  "duplicate joint name (first on line %d)", u->joints[k].line);
  int rc = parse_joint_type(u, e, j);
  if (!rc) rc = joint_link_name(u, e, j, "parent", j->parent_name);
  if (!rc) rc = joint_link_name(u, e, j, "child", j->child_name);
  if (!rc) rc = parse_origin(u, e, &j->origin, "joint", j->name);
  if (rc) return rc;
  rc = parse_axis(u, e, j);
  if (rc) return rc;
  xmlNode *lim = uxml_child(e, "limit", NULL);
  if (lim && (rc = attr_numbers(u, lim, "effort", &j->effort, 1, 0, "joint", j->name))) return rc;
  if (j->effort < 0)
    return fail(u, PT_EMODEL, uxml_line(lim), "joint", j->name, "negative effort limit %g",
                j->effort);
  if (lim && (j->kind == J_REVOLUTE || j->kind == J_PRISMATIC)) {
    static const char *const bound[2] = {"lower", "upper"};
    for (int k = 0; k < 2; k++) {
      xmlChar *v = xmlGetProp(lim, (const xmlChar *)bound[k]);
      if (!v) continue;
      xmlFree(v);
      j->has_bounds = 1;
      rc = attr_numbers(u, lim, bound[k], &j->bounds[k], 1, 0, "joint", j->name);
      if (rc) return rc;
    }
  }
  xmlNode *mim = uxml_child(e, "mimic", NULL);
  if (mim) {  // follower = multiplier x leader + offset (a coupler: compile/couplers.c)
    j->mimic_line = uxml_line(mim);
    j->mimic_mult = 1;
    const int got = attr_name(mim, "joint", j->mimic);
    if (got <= 0 || !j->mimic[0])
      return fail(u, PT_EPARSE, j->mimic_line, "joint", j->name,
                  got < 0    ? "<mimic joint=\"...\">: name too long"
                  : got == 0 ? "<mimic> has no attribute joint"
                             : "<mimic joint=\"\">: the leader's name is empty");
    rc = attr_numbers(u, mim, "multiplier", &j->mimic_mult, 1, 0, "joint", j->name);
    if (!rc) rc = attr_numbers(u, mim, "offset", &j->mimic_offset, 1, 0, "joint", j->name);
    if (rc) return rc;
  }
  xmlNode *dyn = uxml_child(e, "dynamics", NULL);
  if (dyn && (rc = attr_numbers(u, dyn, "damping", &j->damping, 1, 0, "joint", j->name)))
    return rc;
  if (j->damping < 0)
    return fail(u, PT_EMODEL, uxml_line(dyn), "joint", j->name, "negative damping %g",
                j->damping);
  u->njoint++;
  return PT_OK;
}

// Resolves parent/child names, checks the links form one tree and orders it from the root.
static int build_tree(urdf *u, int robot_line) {
  if (u->nlink == 0) return fail(u, PT_EPARSE, robot_line, "robot", NULL, "no <link>");
  for (int k = 0; k < u->njoint; k++) {
    urdf_joint *j = &u->joints[k];
    j->parent = find_link(u, j->parent_name);
    j->child = find_link(u, j->child_name);
    if (j->parent < 0)
      return fail(u, PT_EPARSE, j->line, "joint", j->name, "unknown parent link \"%s\"",
                  j->parent_name);
    if (j->child < 0)
      return fail(u, PT_EPARSE, j->line, "joint", j->name, "unknown child link \"%s\"",
                  j->child_name);
    if (j->child == j->parent)
      return fail(u, PT_EPARSE, j->line, "joint", j->name, "link \"%s\" is its own parent",
                  j->child_name);
    urdf_link *c = &u->links[j->child];
    if (c->parent_joint >= 0)
      return fail(u, PT_EPARSE, j->line, "joint", j->name,
                  "link \"%s\" has two parents (joints \"%s\" and \"%s\"); URDF needs a tree",
                  c->name, u->joints[c->parent_joint].name, j->name);
    c->parent_joint = k;
    j->next_sibling = u->links[j->parent].first_child;
    u->links[j->parent].first_child = k;
  }
  int root = -1;
  for (int i = 0; i < u->nlink; i++) {
    if (u->links[i].parent_joint >= 0) continue;
    if (root >= 0)
      return fail(u, PT_EPARSE, u->links[i].line, "link", u->links[i].name,
                  "several root links (\"%s\" and \"%s\"): every link but one must be the child "
                  "of a joint", u->links[root].name, u->links[i].name);
    root = i;
  }
  if (root < 0)
    return fail(u, PT_EPARSE, robot_line, "robot", NULL,
                "no root link: the joints form a cycle");
  // Breadth-first from the root; a link not reached lies on a cycle of parent joints.
  int n = 0;
  u->order[n++] = root;
  frame_identity(&u->links[root].world);
  u->links[root].group = root;
  for (int h = 0; h < n; h++) {
    urdf_link *p = &u->links[u->order[h]];
    for (int k = p->first_child; k >= 0; k = u->joints[k].next_sibling) {
      urdf_joint *j = &u->joints[k];
      urdf_link *c = &u->links[j->child];
      frame_mul(&c->world, &p->world, &j->origin);
      c->group = j->kind == J_FIXED ? p->group : j->child;
      u->order[n++] = j->child;
    }
  }
  if (n < u->nlink) {
    for (int i = 0; i < u->nlink; i++) {
      int reached = 0;
      for (int h = 0; h < n && !reached; h++) reached = u->order[h] == i;
      if (!reached)
        return fail(u, PT_EPARSE, u->links[i].line, "link", u->links[i].name,
                    "the joints form a cycle through this link (not connected to root \"%s\")",
                    u->links[root].name);
    }
  }
  return PT_OK;
}

// Shepperd's method: Euler parameters (e0 >= 0) of a rotation matrix.
static void matrix_to_quat(double *q, const double *R) {
  double tr = R[0] + R[4] + R[8];
  if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
    double s = 2.0 * sqrt(1.0 + tr);
    q[0] = 0.25 * s, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
  } else if (R[0] >= R[4] && R[0] >= R[8]) {
    double s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8]);
    q[0] = (R[7] - R[5]) / s, q[1] = 0.25 * s, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
  } else if (R[4] >= R[8]) {
    double s = 2.0 * sqrt(1.0 + R[4] - R[0] - R[8]);
    q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = 0.25 * s, q[3] = (R[5] + R[7]) / s;
  } else {
    double s = 2.0 * sqrt(1.0 + R[8] - R[0] - R[4]);
    q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = 0.25 * s;
  }
  if (q[0] < 0)
    for (int k = 0; k < 4; k++) q[k] = -q[k];
}

// Fills body b with the merged fixed-joint group whose topmost link is g: mass sum, combined
// CoM, and sum_i R_i I_i R_i^T + m_i (|d_i|^2 E - d_i d_i^T) about it (parallel axes).
static void merge_group(const urdf *u, int g, pt_spec_body *b) {
  double m = 0, mc[3] = {0, 0, 0};
  int nmass = 0, axes_link = -1;
  frame fi;
  for (int h = 0; h < u->nlink; h++) {
    const urdf_link *l = &u->links[u->order[h]];
    if (l->group != g || l->mass <= 0) continue;
    frame_mul(&fi, &l->world, &l->inertial);
    m += l->mass;
    for (int k = 0; k < 3; k++) mc[k] += l->mass * fi.p[k];
    if (nmass++ == 0) axes_link = u->order[h];
  }
  // Body axes: the inertial frame of the group's first massive link.
  const urdf_link *a = &u->links[axes_link];
  frame ax;
  frame_mul(&ax, &a->world, &a->inertial);
  b->mass = m;
  for (int k = 0; k < 3; k++) b->position[k] = mc[k] / m;
  matrix_to_quat(b->quat, ax.R);
  if (nmass == 1) {
    memcpy(b->inertia, a->inertia, sizeof(b->inertia));
    memcpy(b->position, ax.p, sizeof(b->position));
    return;
  }
  double Iw[9] = {0};  // about the combined CoM, global axes
  for (int h = 0; h < u->nlink; h++) {
    const urdf_link *l = &u->links[u->order[h]];
    if (l->group != g || l->mass <= 0) continue;
    frame_mul(&fi, &l->world, &l->inertial);
    const double *I = l->inertia, *R = fi.R;
    double Il[9] = {I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2]};
    double d[3] = {fi.p[0] - b->position[0], fi.p[1] - b->position[1],
                   fi.p[2] - b->position[2]};
    double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) {
        double rir = 0;
        for (int s = 0; s < 3; s++)
          for (int t = 0; t < 3; t++) rir += R[3 * r + s] * Il[3 * s + t] * R[3 * c + t];
        Iw[3 * r + c] += rir + l->mass * ((r == c ? dd : 0.0) - d[r] * d[c]);
      }
  }
  // Into the body axes: Ib = A^T Iw A.
  double Ib[9];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      double v = 0;
      for (int s = 0; s < 3; s++)
        for (int t = 0; t < 3; t++) v += ax.R[3 * s + r] * Iw[3 * s + t] * ax.R[3 * t + c];
      Ib[3 * r + c] = v;
    }
  b->inertia[0] = Ib[0], b->inertia[1] = Ib[4], b->inertia[2] = Ib[8];
  b->inertia[3] = 0.5 * (Ib[1] + Ib[3]);
  b->inertia[4] = 0.5 * (Ib[2] + Ib[6]);
  b->inertia[5] = 0.5 * (Ib[5] + Ib[7]);
}

// Name of the body that carries link i: its group's topmost link, or "ground".
static const char *body_name(const urdf *u, int i, int ground_group) {
  int g = u->links[i].group;
  return g == ground_group ? "ground" : u->links[g].name;
}

static int add_weld(const urdf *u, pt_spec *s, int root) {
  const urdf_link *r = &u->links[root];
  char name[PT_NAME_MAX + 16];
  snprintf(name, sizeof(name), "%s_to_ground", r->name);
  if (strlen(name) >= PT_NAME_MAX)
    return fail(u, PT_EPARSE, r->line, "link", r->name,
                "root link name too long for its weld joint \"%s\"", name);
  for (int k = 0; k < u->njoint; k++)
    if (strcmp(u->joints[k].name, name) == 0)
      return fail(u, PT_EPARSE, u->joints[k].line, "joint", name,
                  "this name is taken by the weld of root link \"%s\" to ground", r->name);
  pt_spec_joint *j = pt_spec_add_joint(s);
  if (!j) return pt_error_set(u->err, PT_ENOMEM, "%s: out of memory", u->source);
  memcpy(j->name, name, strlen(name) + 1);
  j->line = r->line;
  j->type = PT_JOINT_FIXED;
  strcpy(j->body1, "ground");
  strcpy(j->body2, r->name);
  memcpy(j->point, r->world.p, sizeof(j->point));
  j->axis[2] = 1.0;
  return PT_OK;
}

static int add_joint(const urdf *u, pt_spec *s, const urdf_joint *uj, int ground_group) {
  const urdf_link *c = &u->links[uj->child];
  pt_spec_joint *j = pt_spec_add_joint(s);
  pt_spec_actuator *a = j ? pt_spec_add_actuator(s) : NULL;
  if (!a) return pt_error_set(u->err, PT_ENOMEM, "%s: out of memory", u->source);
  int prismatic = uj->kind == J_PRISMATIC;
  strcpy(j->name, uj->name);
  j->line = uj->line;
  j->type = prismatic ? PT_JOINT_PRISMATIC : PT_JOINT_REVOLUTE;
  strcpy(j->body1, body_name(u, uj->parent, ground_group));
  strcpy(j->body2, c->name);
  // The joint frame is the child link frame at q = 0; the axis is given in it.
  memcpy(j->point, c->world.p, sizeof(j->point));
  mat_vec(j->axis, c->world.R, uj->axis);
  j->damping = uj->damping;
  if (uj->has_bounds && uj->bounds[0] < uj->bounds[1]) {
    j->has_limits = 1;
    j->limits[0] = uj->bounds[0];
    j->limits[1] = uj->bounds[1];
  } else if (uj->has_bounds &&
             pt_spec_warn(s, "%s:%d: joint \"%s\": <limit lower=\"%g\" upper=\"%g\">: lower is "
                             "not below upper; no position limits on this joint", u->source,
                          uj->line, uj->name, uj->bounds[0], uj->bounds[1]))
    return pt_error_set(u->err, PT_ENOMEM, "%s: out of memory", u->source);
  strcpy(a->name, uj->name);
  a->line = uj->line;
  a->type = prismatic ? PT_ACT_JOINT_FORCE : PT_ACT_JOINT_TORQUE;
  strcpy(a->joint, uj->name);
  a->limit = uj->effort;
  return PT_OK;
}

// A planar joint: the plane normal to <axis>, its x direction the joint frame's first axis
// perpendicular to it (as compile/joints.c's frame for a normal along z: x, y), and three actuators
// NAME.x, NAME.y (forces) and NAME.angle (torque), each with the joint's effort limit.
static int add_planar(const urdf *u, pt_spec *s, const urdf_joint *uj, int ground_group) {
  const urdf_link *c = &u->links[uj->child];
  static const char *const sfx[3] = {"x", "y", "angle"};
  char names[3][PT_NAME_MAX + 8];
  for (int k = 0; k < 3; k++) {
    snprintf(names[k], sizeof(names[k]), "%s.%s", uj->name, sfx[k]);
    if (strlen(names[k]) >= PT_NAME_MAX)
      return fail(u, PT_EPARSE, uj->line, "joint", uj->name,
                  "name too long for its actuator \"%s\" (at most %d bytes)", names[k],
                  PT_NAME_MAX - 1);
  }
  pt_spec_joint *j = pt_spec_add_joint(s);
  if (!j) return pt_error_set(u->err, PT_ENOMEM, "%s: out of memory", u->source);
  strcpy(j->name, uj->name);
  j->line = uj->line;
  j->type = PT_JOINT_PLANAR;
  strcpy(j->body1, body_name(u, uj->parent, ground_group));
  strcpy(j->body2, c->name);
  memcpy(j->point, c->world.p, sizeof(j->point));
  mat_vec(j->axis, c->world.R, uj->axis);
  double a[3] = {1, 0, 0}, f[3], n;  // x: joint-frame x (or y) with the normal taken out
  if (fabs(uj->axis[0]) > 0.6) a[0] = 0, a[1] = 1;
  const double an = a[0] * uj->axis[0] + a[1] * uj->axis[1];
  for (int k = 0; k < 3; k++) f[k] = a[k] - an * uj->axis[k];
  n = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
  for (int k = 0; k < 3; k++) f[k] /= n;
  mat_vec(j->axis1, c->world.R, f);
  j->damping = uj->damping;
  for (int k = 0; k < 3; k++) {
    pt_spec_actuator *ac = pt_spec_add_actuator(s);
    if (!ac) return pt_error_set(u->err, PT_ENOMEM, "%s: out of memory", u->source);
    memcpy(ac->name, names[k], strlen(names[k]) + 1);
    ac->line = uj->line;
    ac->type = k < 2 ? PT_ACT_JOINT_FORCE : PT_ACT_JOINT_TORQUE;
    strcpy(ac->joint, uj->name);
    strcpy(ac->coordinate, sfx[k]);
    ac->limit = uj->effort;
  }
  return PT_OK;
}

// <mimic> joints become couplers named after their follower (compile/couplers.c checks leader and
// follower). A fixed follower has no coordinate to couple (urdfdom keeps the element, ROS's
// robot_state_publisher moves nothing): said in one warning.
static int add_mimics(const urdf *u, pt_spec *s) {
  int nfixed = 0, first = 0;
  for (int k = 0; k < u->njoint; k++) {
    const urdf_joint *j = &u->joints[k];
    if (!j->mimic[0]) continue;
    if (j->kind == J_FIXED) {
      if (!nfixed++) first = j->mimic_line;
      continue;
    }
    pt_spec_coupler *c = pt_spec_add_coupler(s);
    if (!c) return pt_error_set(u->err, PT_ENOMEM, "%s: out of memory", u->source);
    strcpy(c->name, j->name);
    c->line = j->mimic_line;
    strcpy(c->follower, j->name);
    strcpy(c->leader, j->mimic);
    c->multiplier = j->mimic_mult;
    c->offset = j->mimic_offset;
  }
  if (nfixed && pt_spec_warn(s, "%s:%d: ignored <mimic> of %d fixed joint%s (the first here): a "
                                "fixed joint has no coordinate to couple", u->source, first,
                             nfixed, nfixed == 1 ? "" : "s"))
    return pt_error_set(u->err, PT_ENOMEM, "%s: out of memory", u->source);
  return PT_OK;
}

static int build_spec(const urdf *u, const pt_load_options *opt, pt_spec *s) {
  int root = u->order[0];
  double *gmass = calloc((size_t)u->nlink, sizeof(double));
  if (!gmass) return pt_error_set(u->err, PT_ENOMEM, "%s: out of memory", u->source);
  for (int i = 0; i < u->nlink; i++) gmass[u->links[i].group] += u->links[i].mass;
  int floating = opt && opt->floating_base;
  int ground_group = gmass[root] > 0 ? -1 : root;  // a massless root is the ground itself
  int rc = PT_OK;
  if (ground_group >= 0 && floating)
    rc = fail(u, PT_EMODEL, u->links[root].line, "link", u->links[root].name,
              "root link has no mass: a floating base needs a body with mass and inertia");
  for (int k = 0; k < u->njoint && !rc; k++) {
    const urdf_joint *j = &u->joints[k];
    if (j->kind != J_FIXED && gmass[j->child] <= 0)
      rc = fail(u, PT_EMODEL, j->line, "joint", j->name,
                "child link \"%s\" has no mass (no <inertial> or mass 0, also after merging "
                "fixed children): a movable joint needs a body with mass and inertia",
                u->links[j->child].name);
  }
  for (int i = 0; i < u->nlink && !rc; i++) {
    const urdf_link *l = &u->links[i];
    if (l->group != i || gmass[i] <= 0) continue;
    if (strcmp(l->name, "ground") == 0) {
      rc = fail(u, PT_EMODEL, l->line, "link", l->name,
                "\"ground\" is the fixed global frame: only a massless root link may be so named");
      break;
    }
    pt_spec_body *b = pt_spec_add_body(s);
    if (!b) {
      rc = pt_error_set(u->err, PT_ENOMEM, "%s: out of memory", u->source);
      break;
    }
    strcpy(b->name, l->name);
    b->line = l->line;
    merge_group(u, i, b);
    if (!inertia_ok(b->inertia, 1)) {
      char v[200];
      inertia_text(v, sizeof(v), b->inertia);
      if (u->lim.balance_inertia)
        rc = repair_inertia(u, l, l->line, b->inertia, 0.4e-6 * b->mass);
      else
        rc = fail(u, PT_EMODEL, l->line, "link", l->name,
                  "inertia%s is not positive definite (%s): " BALANCE_HINT,
                  gmass[i] > l->mass ? " (merged with its fixed children)" : "", v);
    }
  }
  free(gmass);
  if (!rc && s->nbody == 0)
    rc = fail(u, PT_EMODEL, s->line, "robot", NULL, "no link has mass: nothing would move");
  if (!rc && ground_group < 0 && !floating) rc = add_weld(u, s, root);
  for (int k = 0; k < u->njoint && !rc; k++) {
    const urdf_joint *j = &u->joints[k];
    if (j->kind == J_REVOLUTE || j->kind == J_CONTINUOUS || j->kind == J_PRISMATIC)
      rc = add_joint(u, s, j, ground_group);
    else if (j->kind == J_PLANAR)
      rc = add_planar(u, s, j, ground_group);
  }
  if (!rc) rc = add_mimics(u, s);
  return rc;
}

// The <visual> and <collision> elements of every link, on the body that carries it
// (src/load/visual_urdf.c).
static int add_visuals(const urdf *u, const xmlNode *robot, pt_spec *s) {
  for (xmlNode *c = robot->children; c; c = c->next) {
    char name[PT_NAME_MAX];
    if (!uxml_is(c, "link") || attr_name(c, "name", name) <= 0) continue;
    const urdf_link *l = &u->links[find_link(u, name)];
    const char *body = u->links[l->group].name;
    int rc = pt_urdf_link_visuals(c, robot, l->world.R, l->world.p, body, s, u->err);
    if (!rc) rc = pt_urdf_link_collisions(c, robot, l->world.R, l->world.p, body, s, u->err);
    if (rc) return rc;
  }
  return PT_OK;
}

// Counts, bounds and parses the <link> and <joint> children of <robot>.
static int parse_robot(urdf *u, const xmlNode *robot) {
  int nl = 0, nj = 0;
  for (xmlNode *c = robot->children; c; c = c->next) {
    nl += uxml_is(c, "link");
    nj += uxml_is(c, "joint");
    if (nl > u->lim.max_bodies)
      return fail(u, PT_EPARSE, uxml_line(c), "robot", NULL, "more than %d links (max_bodies)",
                  u->lim.max_bodies);
    if (nj > u->lim.max_joints)
      return fail(u, PT_EPARSE, uxml_line(c), "robot", NULL, "more than %d joints (max_joints)",
                  u->lim.max_joints);
  }
  u->links = calloc((size_t)nl + 1, sizeof(*u->links));
  u->joints = calloc((size_t)nj + 1, sizeof(*u->joints));
  u->order = calloc((size_t)nl + 1, sizeof(*u->order));
  if (!u->links || !u->joints || !u->order)
    return pt_error_set(u->err, PT_ENOMEM, "%s: out of memory", u->source);
  // <visual> (with <material>) is read by add_visuals after the tree is built; everything
  // else (collision, gazebo, transmission, ...) is ignored.
  for (xmlNode *c = robot->children; c; c = c->next) {
    int rc = PT_OK;
    if (uxml_is(c, "link")) rc = parse_link(u, c);
    if (uxml_is(c, "joint")) rc = parse_joint(u, c);
    if (rc) return rc;
  }
  return build_tree(u, uxml_line(robot));
}

static int parse_document(urdf *u, xmlDoc *doc, const pt_load_options *opt, pt_spec *s) {
  xmlNode *robot = xmlDocGetRootElement(doc);
  // No URDF needs a DTD; refusing it keeps entity tricks out entirely.
  if (doc->intSubset || doc->extSubset)
    return fail(u, PT_EPARSE, robot ? uxml_line(robot) : 1, "robot", NULL,
                "<!DOCTYPE> is not accepted in a URDF file");
  if (!robot || !uxml_is(robot, "robot"))
    return fail(u, PT_EPARSE, robot ? uxml_line(robot) : 1, "robot", NULL,
                "the root element is <%s>, expected <robot>",
                robot ? (const char *)robot->name : "");
  s->line = uxml_line(robot);
  int found = attr_name(robot, "name", s->model);
  if (found <= 0 || !s->model[0])
    return fail(u, PT_EPARSE, s->line, "robot", NULL,
                "<robot> needs a name=\"...\" of at most %d bytes", PT_NAME_MAX - 1);
  u->spec = s;
  int rc = pt_urdf_refuse_xacro(robot, u->source, u->err);
  if (!rc) rc = parse_robot(u, robot);
  if (!rc) rc = build_spec(u, opt, s);
  if (!rc) rc = pt_urdf_transmissions(robot, u->source, s, u->err);
  if (!rc && pt_urdf_warn_unused(robot, u->source, s))
    rc = pt_error_set(u->err, PT_ENOMEM, "%s: out of memory", u->source);
  if (!rc) rc = add_visuals(u, robot, s);
  return rc;
}

// libxml2 reports some errors (encoding conversion, I/O) through its global handlers, which
// print to stderr by default: a client's model text would write into the daemon's log. While a
// document is parsed, this thread's handlers keep the first message for the loader's own
// error instead.
typedef struct {
  char msg[256];
  int line;
} xml_first_error;

static void xml_keep_error(void *ctx, xmlErrorPtr e) {
  xml_first_error *f = ctx;
  if (f->msg[0] || !e || !e->message) return;
  snprintf(f->msg, sizeof(f->msg), "%s", e->message);
  size_t n = strlen(f->msg);
  while (n > 0 && (f->msg[n - 1] == '\n' || f->msg[n - 1] == ' ')) f->msg[--n] = '\0';
  for (char *c = f->msg; *c; c++)
    if (*c == '\n') *c = ' ';   // one line per message
  f->line = e->line;
}

// Counts the start tags of the raw text before libxml2 builds a tree of them: every `<` not
// followed by `/`, `!` or `?`. An upper bound in any encoding libxml2 reads from the bytes
// (UTF-8, Latin-1, UTF-16 and UCS-4 either way round, where `<` is followed or preceded by a
// zero byte): tags inside comments count too, and in UTF-16 end tags count as well. 0 when
// within the limit, else the 1-based line of the first `<` beyond it.
static int element_limit_line(const char *text, size_t len, int max) {
  int count = 0, line = 1;
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '\n') line++;
    if (text[i] != '<') continue;
    char c = i + 1 < len ? text[i + 1] : '\0';
    if (c != '/' && c != '!' && c != '?' && ++count > max) return line;
  }
  return 0;
}

static void xml_silent(void *ctx, const char *fmt, ...) {
  (void)ctx;
  (void)fmt;
}

int pt_spec_from_urdf(const char *text, size_t len, const char *source,
                      const pt_load_options *opt, pt_spec **out, pt_error *err) {
  urdf u = {.source = source ? source : "<string>", .err = err};
  u.lim = pt_load_options_resolve(opt);
  *out = NULL;
  if (!text || len == 0) return fail(&u, PT_EPARSE, 0, "robot", NULL, "empty document");
  if (len > u.lim.max_text_bytes || len > (size_t)INT32_MAX)
    return fail(&u, PT_EPARSE, 1, "robot", NULL, "text larger than %zu bytes (max_text_bytes)",
                u.lim.max_text_bytes);
  int at = element_limit_line(text, len, u.lim.max_urdf_elements);
  if (at)
    return fail(&u, PT_EPARSE, at, "robot", NULL, "more than %d XML elements (max_urdf_elements)",
                u.lim.max_urdf_elements);
  xmlInitParser();
  xmlParserCtxt *ctxt = xmlNewParserCtxt();
  pt_spec *s = pt_spec_new();
  if (!ctxt || !s) {
    xmlFreeParserCtxt(ctxt);
    pt_spec_free(s);
    return pt_error_set(err, PT_ENOMEM, "%s: out of memory", u.source);
  }
  snprintf(s->source, sizeof(s->source), "%s", u.source);
  // No network, no entity substitution, no DTD loading; errors come back, not on stderr.
  int flags = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES;
  xml_first_error first = {{0}, 0};
  xmlSetGenericErrorFunc(NULL, xml_silent);
  xmlSetStructuredErrorFunc(&first, xml_keep_error);
  xmlDoc *doc = xmlCtxtReadMemory(ctxt, text, (int)len, NULL, NULL, flags);
  xmlSetStructuredErrorFunc(NULL, NULL);
  xmlSetGenericErrorFunc(NULL, NULL);
  int rc;
  if (!doc) {
    xml_first_error last = {"unknown error", 0};
    const xmlError *e = xmlCtxtGetLastError(ctxt);
    if (e && e->message) {
      last.msg[0] = '\0';
      xml_keep_error(&last, (xmlErrorPtr)e);
    }
    // the first error says what went wrong (an encoding error before the parser gives up)
    const char *msg = first.msg[0] ? first.msg : last.msg;
    int line = first.line ? first.line : last.line;
    rc = fail(&u, PT_EPARSE, line, "robot", NULL, "not well-formed XML: %s", msg);
  } else {
    rc = parse_document(&u, doc, opt, s);
  }
  xmlFreeDoc(doc);
  xmlFreeParserCtxt(ctxt);
  free(u.links);
  free(u.joints);
  free(u.order);
  if (rc) {
    pt_spec_free(s);
    return rc;
  }
  *out = s;
  return PT_OK;
}
