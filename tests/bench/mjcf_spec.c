// mjcf_spec.c: a MuJoCo model (MJCF text) of a Partita model spec (mjcf_spec.h).
#include "mjcf_spec.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *buf;
  size_t cap, len;
  int full;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *o, const char *fmt, ...) {
  if (o->full) return;
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= o->cap - o->len) {
    o->full = 1;
    return;
  }
  o->len += (size_t)n;
}

// v' = conj(q) v q: a global vector in the frame of Euler parameters q
static void to_local(double r[3], const double q[4], const double v[3]) {
  const double w = q[0], x = -q[1], y = -q[2], z = -q[3];
  // rotate by the conjugate: r = v + 2 w (u x v) + 2 u x (u x v), u = (x, y, z)
  const double c1[3] = {y * v[2] - z * v[1], z * v[0] - x * v[2], x * v[1] - y * v[0]};
  const double c2[3] = {y * c1[2] - z * c1[1], z * c1[0] - x * c1[2], x * c1[1] - y * c1[0]};
  for (int k = 0; k < 3; k++) r[k] = v[k] + 2 * w * c1[k] + 2 * c2[k];
}

static void quat_unit(double r[4], const double q[4]) {
  const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int k = 0; k < 4; k++) r[k] = q[k] / n;
}

// conj(a) b
static void quat_rel(double r[4], const double a[4], const double b[4]) {
  const double w = a[0], x = -a[1], y = -a[2], z = -a[3];
  r[0] = w * b[0] - x * b[1] - y * b[2] - z * b[3];
  r[1] = w * b[1] + x * b[0] + y * b[3] - z * b[2];
  r[2] = w * b[2] - x * b[3] + y * b[0] + z * b[1];
  r[3] = w * b[3] + x * b[2] - y * b[1] + z * b[0];
}

static int body_of(const pt_spec *s, const char *name) {
  for (int b = 0; b < s->nbody; b++)
    if (strcmp(s->bodies[b].name, name) == 0) return b;
  return -1;  // ground
}

typedef struct {
  const pt_spec *s;
  int *parent;  // (nbody) parent body, -1 ground
  int *joint;   // (nbody) joint to the parent, -1 free
  int *tree;    // (njoint) 1 if a tree joint
  double (*quat)[4];
} tree;

static int treeable(const pt_spec_joint *j) {
  return j->type == PT_JOINT_REVOLUTE || j->type == PT_JOINT_PRISMATIC ||
         j->type == PT_JOINT_UNIVERSAL;
}

static void v3(out *o, const char *key, const double v[3]) {
  put(o, " %s=\"%.17g %.17g %.17g\"", key, v[0], v[1], v[2]);
}

static void write_joint(out *o, const tree *t, int b, const pt_spec_joint *j, int depth) {
  const pt_spec_body *body = t->s->bodies + b;
  double d[3], pos[3], ax[3];
  for (int k = 0; k < 3; k++) d[k] = j->point[k] - body->position[k];
  to_local(pos, t->quat[b], d);
  double damping = j->damping;
  // a torsion spring on this joint: stiffness and reference
  double k = 0, ref = 0;
  for (int f = 0; f < t->s->nforce; f++) {
    const pt_spec_force *fo = t->s->forces + f;
    if (fo->type != PT_FORCE_TORSION_SPRING || strcmp(fo->joint, j->name) != 0) continue;
    k = fo->stiffness;
    ref = fo->free_angle + (k > 0 ? fo->preload / k : 0);
    damping += fo->damping;
  }
  if (j->type == PT_JOINT_UNIVERSAL) {
    const double *axes[2] = {j->axis1, j->axis2};
    for (int a = 0; a < 2; a++) {
      to_local(ax, t->quat[b], axes[a]);
      put(o, "%*s<joint name=\"%s.angle%d\" type=\"hinge\"", depth, "", j->name, a + 1);
      v3(o, "pos", pos);
      v3(o, "axis", ax);
      put(o, " damping=\"%.17g\"/>\n", damping);
    }
    return;
  }
  to_local(ax, t->quat[b], j->axis);
  put(o, "%*s<joint name=\"%s\" type=\"%s\"", depth, "", j->name,
      j->type == PT_JOINT_PRISMATIC ? "slide" : "hinge");
  v3(o, "pos", pos);
  v3(o, "axis", ax);
  put(o, " damping=\"%.17g\"", damping);
  if (k > 0) put(o, " stiffness=\"%.17g\" springref=\"%.17g\"", k, ref);
  put(o, "/>\n");
}

static void write_body(out *o, const tree *t, int b, int depth) {
  const pt_spec *s = t->s;
  const pt_spec_body *body = s->bodies + b;
  const int p = t->parent[b];
  double pos[3], quat[4];
  if (p < 0) {
    memcpy(pos, body->position, sizeof(pos));
    memcpy(quat, t->quat[b], sizeof(quat));
  } else {
    double d[3];
    for (int k = 0; k < 3; k++) d[k] = body->position[k] - s->bodies[p].position[k];
    to_local(pos, t->quat[p], d);
    quat_rel(quat, t->quat[p], t->quat[b]);
  }
  put(o, "%*s<body name=\"%s\"", depth, "", body->name);
  v3(o, "pos", pos);
  put(o, " quat=\"%.17g %.17g %.17g %.17g\">\n", quat[0], quat[1], quat[2], quat[3]);
  const double *I = body->inertia;
  put(o, "%*s<inertial pos=\"0 0 0\" mass=\"%.17g\" fullinertia=\"%.17g %.17g %.17g %.17g %.17g %.17g\"/>\n",
      depth + 2, "", body->mass, I[0], I[1], I[2], I[3], I[4], I[5]);
  if (t->joint[b] < 0)
    put(o, "%*s<freejoint name=\"%s.free\"/>\n", depth + 2, "", body->name);
  else
    write_joint(o, t, b, s->joints + t->joint[b], depth + 2);
  // sites of the spring-dampers on this body
  for (int f = 0; f < s->nforce; f++) {
    const pt_spec_force *fo = s->forces + f;
    if (fo->type != PT_FORCE_SPRING_DAMPER) continue;
    for (int e = 0; e < 2; e++) {
      if (strcmp(e ? fo->body2 : fo->body1, body->name) != 0) continue;
      double d[3], sp[3];
      for (int k = 0; k < 3; k++) d[k] = (e ? fo->point2 : fo->point1)[k] - body->position[k];
      to_local(sp, t->quat[b], d);
      put(o, "%*s<site name=\"%s.%d\"", depth + 2, "", fo->name, e + 1);
      v3(o, "pos", sp);
      put(o, "/>\n");
    }
  }
  for (int c = 0; c < s->nbody; c++)
    if (t->parent[c] == b && c != b) write_body(o, t, c, depth + 2);
  put(o, "%*s</body>\n", depth, "");
}

static int fail(char *msg, size_t msglen, const char *what, const char *name) {
  snprintf(msg, msglen, "%s \"%s\" has no MuJoCo counterpart here", what, name);
  return -1;
}

int mjcf_from_spec(const pt_spec *s, double solref_time, char *buf, size_t cap, char *msg,
                   size_t msglen) {
  const int nb = s->nbody, nj = s->njoint;
  tree t = {s, calloc((size_t)nb, sizeof(int)), calloc((size_t)nb, sizeof(int)),
            calloc((size_t)(nj > 0 ? nj : 1), sizeof(int)), calloc((size_t)nb, sizeof(*t.quat))};
  int *placed = calloc((size_t)nb, sizeof(int)), *queue = calloc((size_t)nb + 1, sizeof(int));
  int rc = -1;
  if (!t.parent || !t.joint || !t.tree || !t.quat || !placed || !queue) {
    snprintf(msg, msglen, "out of memory");
    goto done;
  }
  for (int b = 0; b < nb; b++) quat_unit(t.quat[b], s->bodies[b].quat);
  // breadth first from the ground; a body no tree joint reaches gets a free joint
  int head = 0, tail = 0, nplaced = 0;
  queue[tail++] = -1;
  while (nplaced < nb) {
    if (head == tail) {
      int b = 0;
      while (placed[b]) b++;
      placed[b] = 1;
      nplaced++;
      t.parent[b] = -1;
      t.joint[b] = -1;
      queue[tail++] = b;
    }
    const int p = queue[head++];
    for (int j = 0; j < nj; j++) {
      const pt_spec_joint *jt = s->joints + j;
      if (!treeable(jt) || t.tree[j] || body_of(s, jt->body1) != p) continue;
      const int c = body_of(s, jt->body2);
      if (c < 0 || placed[c]) continue;
      placed[c] = 1;
      nplaced++;
      t.parent[c] = p;
      t.joint[c] = j;
      t.tree[j] = 1;
      queue[tail++] = c;
    }
  }
  out o = {buf, cap, 0, 0};
  put(&o, "<mujoco model=\"%s\">\n", s->model);
  put(&o, "  <compiler angle=\"radian\" inertiafromgeom=\"false\"/>\n");
  put(&o, "  <option timestep=\"%.17g\" integrator=\"RK4\" gravity=\"%.17g %.17g %.17g\">\n",
      s->dt > 0 ? s->dt : 1e-3, s->gravity[0], s->gravity[1], s->gravity[2]);
  put(&o, "    <flag contact=\"disable\" energy=\"enable\"/>\n  </option>\n  <worldbody>\n");
  for (int f = 0; f < s->nforce; f++) {
    const pt_spec_force *fo = s->forces + f;
    if (fo->type != PT_FORCE_SPRING_DAMPER) continue;
    for (int e = 0; e < 2; e++) {
      if (body_of(s, e ? fo->body2 : fo->body1) >= 0) continue;
      put(&o, "    <site name=\"%s.%d\"", fo->name, e + 1);
      v3(&o, "pos", e ? fo->point2 : fo->point1);
      put(&o, "/>\n");
    }
  }
  for (int b = 0; b < nb; b++)
    if (t.parent[b] < 0) write_body(&o, &t, b, 4);
  put(&o, "  </worldbody>\n  <equality>\n");
  for (int j = 0; j < nj; j++) {
    const pt_spec_joint *jt = s->joints + j;
    if (t.tree[j]) continue;
    if (jt->type != PT_JOINT_SPHERICAL && jt->type != PT_JOINT_REVOLUTE) {
      fail(msg, msglen, "cut joint", jt->name);
      goto done;
    }
    const int b1 = body_of(s, jt->body1), b2 = body_of(s, jt->body2);
    const int a = b1 >= 0 ? b1 : b2;  // anchor body (MuJoCo's body1 must not be the world)
    double d[3], anchor[3];
    for (int k = 0; k < 3; k++) d[k] = jt->point[k] - s->bodies[a].position[k];
    to_local(anchor, t.quat[a], d);
    put(&o, "    <connect name=\"%s\" body1=\"%s\" body2=\"%s\"", jt->name, s->bodies[a].name,
        a == b1 ? (b2 >= 0 ? s->bodies[b2].name : "world") : "world");
    v3(&o, "anchor", anchor);
    put(&o, " solref=\"%.17g 1\"/>\n", solref_time);
  }
  put(&o, "  </equality>\n  <tendon>\n");
  for (int f = 0; f < s->nforce; f++) {
    const pt_spec_force *fo = s->forces + f;
    if (fo->type == PT_FORCE_TORSION_SPRING) {
      for (int j = 0; j < nj; j++)
        if (strcmp(s->joints[j].name, fo->joint) == 0 && !t.tree[j]) {
          fail(msg, msglen, "torsion spring on a cut joint", fo->name);
          goto done;
        }
      continue;
    }
    if (fo->type != PT_FORCE_SPRING_DAMPER) {
      fail(msg, msglen, "force", fo->name);
      goto done;
    }
    const double len = fo->free_length + (fo->stiffness > 0 ? fo->preload / fo->stiffness : 0);
    put(&o, "    <spatial name=\"%s\" stiffness=\"%.17g\" damping=\"%.17g\" springlength=\"%.17g\">\n",
        fo->name, fo->stiffness, fo->damping, len);
    put(&o, "      <site site=\"%s.1\"/>\n      <site site=\"%s.2\"/>\n    </spatial>\n", fo->name,
        fo->name);
  }
  put(&o, "  </tendon>\n  <actuator>\n");
  for (int a = 0; a < s->nactuator; a++) {
    const pt_spec_actuator *ac = s->actuators + a;
    if (ac->type != PT_ACT_JOINT_TORQUE && ac->type != PT_ACT_JOINT_FORCE) {
      fail(msg, msglen, "actuator", ac->name);
      goto done;
    }
    put(&o, "    <motor name=\"%s\" joint=\"%s\" gear=\"%.17g\"/>\n", ac->name, ac->joint,
        ac->gear != 0 ? ac->gear : 1);
  }
  put(&o, "  </actuator>\n</mujoco>\n");
  if (o.full) {
    snprintf(msg, msglen, "MJCF longer than %zu bytes", cap);
    goto done;
  }
  rc = (int)o.len;
done:
  free(t.parent);
  free(t.joint);
  free(t.tree);
  free(t.quat);
  free(placed);
  free(queue);
  return rc;
}
