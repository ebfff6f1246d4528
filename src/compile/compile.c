// compile.c: pt_spec -> pt_model. Checks names and references, converts the global t=0
// geometry into body-fixed vectors, lays out constraint rows by body blocks, builds the
// sparsity pattern of W = J M^-1 J^T with its AMD + LDL^T symbolic analysis (local-dynamics
// seed), assembles the initial state and removes redundant constraint rows found by a
// rank-revealing factorisation (pivoted QR of J^T).
#include <amd.h>
#include <lapacke.h>
#include <ldl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "compile_control.h"
#include "engine.h"
#include "ptu.h"
#include "tolerances.h"

int pt_assemble_positions(const pt_model *m, pt_data *d, const pt_assign *pos, int npos,
                          int use_all, double *moved, pt_error *err);
int pt_assemble_velocities(const pt_model *m, pt_data *d, const pt_assign *vel, int nvel,
                           pt_error *err);

// ---- allocation: every model array is recorded and freed by pt_model_free ----------------
static void *alloc(pt_model *m, size_t n, size_t size) {
  if (m->nalloc == m->maxalloc) {
    int cap = m->maxalloc ? 2 * m->maxalloc : 64;
    void **a = realloc(m->allocs, sizeof(void *) * (size_t)cap);
    if (!a) return NULL;
    m->allocs = a;
    m->maxalloc = cap;
  }
  void *p = calloc(n ? n : 1, size);
  if (p) m->allocs[m->nalloc++] = p;
  return p;
}

void *pt_model_alloc(pt_model *m, size_t n, size_t size) { return alloc(m, n, size); }

void pt_model_free(pt_model *m) {
  if (!m) return;
  pt_ctl_free(m->ctl);
  for (int i = 0; i < m->nalloc; i++) free(m->allocs[i]);
  free(m->allocs);
  free(m->warnings);
  free(m->visual);
  free(m->visual_text);
  free(m);
}

static void warn(pt_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(pt_model *m, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  size_t old = m->warnings ? strlen(m->warnings) : 0, add = strlen(line);
  char *w = realloc(m->warnings, old + add + 2);
  if (!w) return;
  memcpy(w + old, line, add);
  w[old + add] = '\n';
  w[old + add + 1] = '\0';
  m->warnings = w;
}

// Joint limits are enforced on the tree partition only (limits.c): a model that is not a tree
// keeps them (check shows them) with one warning naming the joints.
static void limits_check(pt_model *m, const pt_spec *s) {
  m->limits_on = m->nlimit > 0 && !s->limits_off;
  if (!m->limits_on || pt_tree_qualifies(m)) return;
  // closed loops: enforced on the LU/QR partitions (partition/loop_limits.c) for every joint
  // with a coordinate
  int ok = 1;
  for (int j = 0; j < m->njoint; j++) ok &= !m->joint_limited[j] || m->joint_coord_adr[j] >= 0;
  if (ok) return;
  char names[512] = "";
  for (int j = 0, n = 0; j < m->njoint; j++) {
    if (!m->joint_limited[j] || m->joint_coord_adr[j] >= 0) continue;
    size_t k = strlen(names);
    if (n++ == 8) {
      snprintf(names + k, sizeof(names) - k, ", ...");
      break;
    }
    snprintf(names + k, sizeof(names) - k, "%s%s", n > 1 ? ", " : "", m->joint_name[j]);
  }
  warn(m, "joint limits not enforced (%s): limits are enforced on joints with one coordinate "
          "(revolute, prismatic, and each coordinate of the others)", names);
  m->limits_on = 0;
}

// `FILE:LINE: joints[2] "knee": what`
static int fail(pt_error *err, int code, const pt_spec *s, int line, const char *list, int idx,
                const char *name, const char *fmt, ...) __attribute__((format(printf, 8, 9)));
static int fail(pt_error *err, int code, const pt_spec *s, int line, const char *list, int idx,
                const char *name, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  return pt_error_set(err, code, "%s:%d: %s[%d] \"%s\": %s", s->source, line, list, idx, name,
                      what);
}

// ---- lookups ------------------------------------------------------------------------------
static int find_body(const pt_spec *s, const char *name) {
  if (strcmp(name, "ground") == 0) return PT_GROUND;
  for (int i = 0; i < s->nbody; i++)
    if (strcmp(s->bodies[i].name, name) == 0) return i;
  return -2;
}

static int find_joint(const pt_spec *s, const char *name) {
  for (int i = 0; i < s->njoint; i++)
    if (strcmp(s->joints[i].name, name) == 0) return i;
  return -1;
}

static int find_coord(const pt_model *m, const char *name) {
  for (int i = 0; i < m->ncoord; i++)
    if (strcmp(m->coord_name[i], name) == 0) return i;
  return -1;
}

static int unit(double out[3], const double v[3]) {
  double n = ptu_norm3(v);
  if (!(n > PT_TOL_LENGTH) || !isfinite(n)) return -1;
  ptu_scl3(out, v, 1 / n);
  return 0;
}

// ---- bodies -------------------------------------------------------------------------------
static int inv3(double out[9], const double a[9]) {
  double det = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
               a[2] * (a[3] * a[7] - a[4] * a[6]);
  if (!(fabs(det) > 1e-300)) return -1;
  out[0] = (a[4] * a[8] - a[5] * a[7]) / det;
  out[1] = (a[2] * a[7] - a[1] * a[8]) / det;
  out[2] = (a[1] * a[5] - a[2] * a[4]) / det;
  out[3] = (a[5] * a[6] - a[3] * a[8]) / det;
  out[4] = (a[0] * a[8] - a[2] * a[6]) / det;
  out[5] = (a[2] * a[3] - a[0] * a[5]) / det;
  out[6] = (a[3] * a[7] - a[4] * a[6]) / det;
  out[7] = (a[1] * a[6] - a[0] * a[7]) / det;
  out[8] = (a[0] * a[4] - a[1] * a[3]) / det;
  return 0;
}

static int build_bodies(pt_model *m, const pt_spec *s, pt_error *err) {
  for (int i = 0; i < s->nbody; i++) {
    const pt_spec_body *b = s->bodies + i;
    for (int j = 0; j < i; j++)
      if (strcmp(s->bodies[j].name, b->name) == 0)
        return fail(err, PT_EMODEL, s, b->line, "bodies", i, b->name, "duplicate body name");
    if (strcmp(b->name, "ground") == 0)
      return fail(err, PT_EMODEL, s, b->line, "bodies", i, b->name,
                  "\"ground\" is reserved for the fixed global frame");
    if (!(b->mass > 0) || !isfinite(b->mass))
      return fail(err, PT_EMODEL, s, b->line, "bodies", i, b->name, "mass must be > 0");
    const double *In = b->inertia;
    double *J = m->body_inertia + 9 * i;
    double t[9] = {In[0], In[3], In[4], In[3], In[1], In[5], In[4], In[5], In[2]};
    ptu_copy(J, t, 9);
    // positive definite (Sylvester) and the triangle inequalities on the diagonal
    double m2 = In[0] * In[1] - In[3] * In[3];
    double det = In[0] * (In[1] * In[2] - In[5] * In[5]) - In[3] * (In[3] * In[2] - In[5] * In[4]) +
                 In[4] * (In[3] * In[5] - In[1] * In[4]);
    if (!(In[0] > 0 && m2 > 0 && det > 0))
      return fail(err, PT_EMODEL, s, b->line, "bodies", i, b->name,
                  "inertia is not positive definite");
    if (inv3(m->body_inertia_inv + 9 * i, J))
      return fail(err, PT_EMODEL, s, b->line, "bodies", i, b->name, "inertia is singular");
    snprintf(m->body_name[i], PT_NAME_MAX, "%s", b->name);
    m->body_mass[i] = b->mass;
    double p[4];
    double n = sqrt(b->quat[0] * b->quat[0] + ptu_dot3(b->quat + 1, b->quat + 1));
    if (!(n > PT_TOL_LENGTH))
      return fail(err, PT_EMODEL, s, b->line, "bodies", i, b->name,
                  "orientation quaternion has zero length");
    for (int c = 0; c < 4; c++) p[c] = b->quat[c] / n;
    ptu_copy(m->q0 + 7 * i, b->position, 3);
    ptu_copy(m->q0 + 7 * i + 3, p, 4);
    double E[12];
    ptu_quat_E(E, p);
    ptu_copy(m->qd0 + 7 * i, b->velocity, 3);
    const double *w = b->angvel;
    for (int c = 0; c < 4; c++)
      m->qd0[7 * i + 3 + c] = 0.5 * (E[c] * w[0] + E[4 + c] * w[1] + E[8 + c] * w[2]);
    static const char *qn[7] = {"x", "y", "z", "e0", "e1", "e2", "e3"};
    for (int c = 0; c < 7; c++) snprintf(m->q_name[7 * i + c], PT_NAME_MAX + 8, "%s.%s", b->name, qn[c]);
  }
  return PT_OK;
}

// Body-fixed vector of a global direction (ground: itself).
static void to_body(const pt_model *m, int body, const double g[3], double out[3]) {
  if (body == PT_GROUND) {
    ptu_copy(out, g, 3);
    return;
  }
  double A[9];
  ptu_quat2mat(A, m->q0 + 7 * body + 3);
  ptu_mul_matT_vec3(out, A, g);
}

// Body-fixed arm of a global point.
static void to_body_point(const pt_model *m, int body, const double P[3], double out[3]) {
  if (body == PT_GROUND) {
    ptu_copy(out, P, 3);
    return;
  }
  double t[3];
  ptu_sub3(t, P, m->q0 + 7 * body);
  to_body(m, body, t, out);
}

// ---- joints and coordinates ---------------------------------------------------------------
static void add_coord(pt_model *m, const char *name, pt_meas_type type, int b1, int b2,
                      int joint) {
  const int i = m->ncoord++;
  snprintf(m->coord_name[i], PT_COORD_NAME_MAX, "%s", name);
  m->meas_type[i] = type;
  m->meas_body[2 * i] = b1;
  m->meas_body[2 * i + 1] = b2;
  m->meas_joint[i] = joint;
}

static int build_joints(pt_model *m, const pt_spec *s, pt_error *err) {
  int row = 0;
  m->ncoord = 0;
  for (int j = 0; j < s->njoint; j++) {
    const pt_spec_joint *sj = s->joints + j;
    for (int k = 0; k < j; k++)
      if (strcmp(s->joints[k].name, sj->name) == 0)
        return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name, "duplicate joint name");
    if ((unsigned)sj->type >= PT_JOINT_NTYPES)
      return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name, "unknown joint type");
    const int b1 = find_body(s, sj->body1), b2 = find_body(s, sj->body2);
    if (b1 == -2)
      return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name, "unknown body \"%s\"",
                  sj->body1);
    if (b2 == -2)
      return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name, "unknown body \"%s\"",
                  sj->body2);
    if (b1 == b2)
      return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name,
                  "body1 and body2 are the same body");
    snprintf(m->joint_name[j], PT_NAME_MAX, "%s", sj->name);
    m->joint_type[j] = sj->type;
    m->joint_body[2 * j] = b1;
    m->joint_body[2 * j + 1] = b2;
    m->joint_damping[j] = sj->damping;
    if (!(sj->damping >= 0))
      return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name, "damping must be >= 0");
    m->joint_friction[2 * j] = sj->friction;
    m->joint_friction[2 * j + 1] =
        sj->friction_velocity != 0 ? sj->friction_velocity : PT_FRICTION_VELOCITY;
    if (!(sj->friction >= 0 && isfinite(sj->friction)))
      return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name, "friction must be >= 0");
    if (!(m->joint_friction[2 * j + 1] > 0 && isfinite(m->joint_friction[2 * j + 1])))
      return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name,
                  "friction_velocity must be > 0");
    if (sj->friction > 0 && sj->type == PT_JOINT_SPHERICAL)
      return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name,
                  "friction needs a joint with coordinates (not spherical)");
    m->joint_limited[j] = sj->has_limits;
    m->joint_limit[2 * j] = sj->limits[0];
    m->joint_limit[2 * j + 1] = sj->limits[1];
    if (sj->has_limits) {
      if (sj->type != PT_JOINT_REVOLUTE && sj->type != PT_JOINT_PRISMATIC)
        return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name,
                    "limits apply to revolute and prismatic joints only");
      if (!(isfinite(sj->limits[0]) && isfinite(sj->limits[1]) && sj->limits[0] < sj->limits[1]))
        return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name,
                    "limits: lower must be less than upper, both finite (lower = %g, upper = %g)",
                    sj->limits[0], sj->limits[1]);
      m->nlimit++;
    }
    // the joint's rows and coordinates from its class (joint.c)
    const pt_joint_class *cls = &pt_joint_classes[sj->type];
    m->joint_row_adr[j] = row;
    m->joint_nrow[j] = cls->nrow;
    m->joint_ncoord[j] = cls->ncoord;
    m->joint_damp_rotation[j] = cls->damp_rotation;
    for (int r = 0; r < cls->nrow; r++) {
      m->row_body[2 * (row + r)] = b1;
      m->row_body[2 * (row + r) + 1] = b2;
      m->row_joint[row + r] = j;
      m->row_kind[row + r] = cls->row[r].kind;
      m->row_vec[2 * (row + r)] = cls->row[r].vec[0];
      m->row_vec[2 * (row + r) + 1] = cls->row[r].vec[1];
    }
    row += cls->nrow;

    double h[3], f[3], g[3], h1[3] = {0, 0, 1}, h2[3] = {0, 0, 1};
    double *G = m->joint_geom + PT_JOINT_GEOM * j;
    if (sj->type == PT_JOINT_UNIVERSAL) {
      if (unit(h1, sj->axis1) || unit(h2, sj->axis2))
        return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name,
                    "axis1/axis2 must have non-zero length");
      if (fabs(ptu_dot3(h1, h2)) > PT_TOL_PERPENDICULAR)
        return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name,
                    "axis1 and axis2 must be perpendicular at t=0");
      ptu_copy(h, h1, 3);
    } else if (sj->type == PT_JOINT_FIXED || sj->type == PT_JOINT_SPHERICAL) {
      h[0] = h[1] = 0;
      h[2] = 1;
    } else if (unit(h, sj->axis)) {
      return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name,
                  "axis must have non-zero length");
    }
    const int planar_x = sj->type == PT_JOINT_PLANAR && ptu_norm3(sj->axis1) > 0;
    if (sj->type == PT_JOINT_FIXED || sj->type == PT_JOINT_SPHERICAL) {
      f[0] = 1, f[1] = 0, f[2] = 0, g[0] = 0, g[1] = 1, g[2] = 0;
    } else if (planar_x) {  // the planar joint's x direction, given
      unit(f, sj->axis1);
      if (fabs(ptu_dot3(f, h)) > PT_TOL_PERPENDICULAR)
        return fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name,
                    "axis1 (the x direction) must be perpendicular to axis (the plane's normal)");
      ptu_scl3(g, h, ptu_dot3(f, h));  // exactly in the plane
      ptu_sub3(f, f, g);
      unit(f, f);
      ptu_cross3(g, h, f);
    } else {
      ptu_perp_frame(f, g, h);
    }
    const double *hb2 = sj->type == PT_JOINT_UNIVERSAL ? h2 : h;  // body2's axis
    to_body_point(m, b1, sj->point, G + 3 * PT_JV_S1);
    to_body_point(m, b2, sj->point, G + 3 * PT_JV_S2);
    to_body(m, b1, h, G + 3 * PT_JV_H1);
    to_body(m, b1, f, G + 3 * PT_JV_F1);
    to_body(m, b1, g, G + 3 * PT_JV_G1);
    to_body(m, b2, hb2, G + 3 * PT_JV_H2);
    to_body(m, b2, f, G + 3 * PT_JV_F2);
    to_body(m, b2, g, G + 3 * PT_JV_G2);
    to_body(m, b1, hb2, G + 3 * PT_JV_H2_ON1);
    to_body(m, b2, h, G + 3 * PT_JV_H1_ON2);

    // joint coordinates (zero at t=0): the class's measures on the joint's vectors
    m->joint_coord_adr[j] = cls->ncoord ? m->ncoord : -1;
    for (int k = 0; k < cls->ncoord; k++) {
      const pt_coord_def *cd = &cls->coord[k];
      char name[PT_COORD_NAME_MAX];
      if (cd->suffix[0])
        snprintf(name, sizeof(name), "%s.%s", sj->name, cd->suffix);
      else
        snprintf(name, sizeof(name), "%s", sj->name);
      add_coord(m, name, (pt_meas_type)cd->meas, b1, b2, j);
      double *mg = m->meas_geom + PT_MEAS_GEOM * (m->ncoord - 1);
      for (int v = 0; v < 3; v++) ptu_copy(mg + 3 * v, G + 3 * cd->vec[v], 3);
    }
  }
  m->nrow_joint = row;
  m->njcoord = m->ncoord;
  return PT_OK;
}

static int build_user_coords(pt_model *m, const pt_spec *s, pt_error *err) {
  for (int i = 0; i < s->ncoord; i++) {
    const pt_spec_coord *c = s->coords + i;
    if (find_coord(m, c->name) >= 0)
      return fail(err, PT_EMODEL, s, c->line, "coordinates", i, c->name,
                  "duplicate coordinate name (joint coordinates count too)");
    if (c->type == PT_UCOORD_POINT_POSITION) {
      const int b = find_body(s, c->body);
      if (b == -2)
        return fail(err, PT_EMODEL, s, c->line, "coordinates", i, c->name,
                    "unknown body \"%s\"", c->body);
      if (c->component < 0 || c->component > 2)
        return fail(err, PT_EMODEL, s, c->line, "coordinates", i, c->name, "bad component");
      add_coord(m, c->name, PT_MEAS_POINT, b, PT_GROUND, -1);
      m->meas_comp[m->ncoord - 1] = c->component;
      to_body_point(m, b, c->point, m->meas_geom + PT_MEAS_GEOM * (m->ncoord - 1));
    } else {
      const int b1 = find_body(s, c->body1), b2 = find_body(s, c->body2);
      if (b1 == -2 || b2 == -2)
        return fail(err, PT_EMODEL, s, c->line, "coordinates", i, c->name,
                    "unknown body \"%s\"", b1 == -2 ? c->body1 : c->body2);
      add_coord(m, c->name, PT_MEAS_DISTANCE, b1, b2, -1);
      double *mg = m->meas_geom + PT_MEAS_GEOM * (m->ncoord - 1);
      to_body_point(m, b1, c->point1, mg);
      to_body_point(m, b2, c->point2, mg + 3);
    }
  }
  return PT_OK;
}

// Measure index of a joint's coordinate for a motion/actuator/spring: `which` = "" (the
// joint's only coordinate of the requested kind) or a coordinate's suffix (of that kind).
// kind: 0 angle, 1 slide, 2 any.
static int joint_coord(const pt_model *m, int j, const char *which, int kind) {
  const int adr = m->joint_coord_adr[j];
  if (adr < 0) return -1;
  const pt_joint_class *cls = &pt_joint_classes[m->joint_type[j]];
  int found = -1, nfound = 0;
  for (int k = 0; k < cls->ncoord; k++) {
    const int slide = cls->coord[k].meas == PT_MEAS_SLIDE;
    if (kind != 2 && slide != (kind == 1)) continue;
    if (which[0] ? strcmp(which, cls->coord[k].suffix) == 0 : 1) found = adr + k, nfound++;
  }
  return nfound == 1 ? found : -1;
}

// Natural cubic spline second derivatives for (t_i, v_i) (tridiagonal solve).
static void spline_setup(double *tvm, int n, const double *pts) {
  for (int i = 0; i < n; i++) {
    tvm[3 * i] = pts[2 * i];
    tvm[3 * i + 1] = pts[2 * i + 1];
    tvm[3 * i + 2] = 0;
  }
  if (n < 3) return;
  double *c = calloc((size_t)n, sizeof(double)), *r = calloc((size_t)n, sizeof(double));
  if (!c || !r) {
    free(c), free(r);
    return;
  }
  for (int i = 1; i < n - 1; i++) {  // Thomas algorithm on rows 1..n-2
    double h0 = pts[2 * i] - pts[2 * (i - 1)], h1 = pts[2 * (i + 1)] - pts[2 * i];
    double rhs = 6 * ((pts[2 * i + 3] - pts[2 * i + 1]) / h1 - (pts[2 * i + 1] - pts[2 * i - 1]) / h0);
    double diag = 2 * (h0 + h1) - (i > 1 ? h0 * c[i - 1] : 0);
    c[i] = h1 / diag;
    r[i] = (rhs - (i > 1 ? h0 * r[i - 1] : 0)) / diag;
  }
  for (int i = n - 2; i >= 1; i--) tvm[3 * i + 2] = r[i] - c[i] * (i < n - 2 ? tvm[3 * (i + 1) + 2] : 0);
  free(c), free(r);
}

static int build_motions(pt_model *m, const pt_spec *s, pt_error *err) {
  int ndata = 0;
  for (int i = 0; i < s->nmotion; i++)
    ndata += s->motions[i].profile == PT_PROFILE_POLYNOMIAL ? s->motions[i].ncoef
             : s->motions[i].profile == PT_PROFILE_TABLE    ? 3 * s->motions[i].npoint
                                                            : 0;
  m->motion_data = alloc(m, (size_t)ndata, sizeof(double));
  if (!m->motion_data) return pt_error_set(err, PT_ENOMEM, "out of memory");
  int adr = 0;
  for (int i = 0; i < s->nmotion; i++) {
    const pt_spec_motion *sm = s->motions + i;
    for (int k = 0; k < i; k++)
      if (strcmp(s->motions[k].name, sm->name) == 0)
        return fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name, "duplicate motion name");
    const int j = find_joint(s, sm->joint);
    if (j < 0)
      return fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name, "unknown joint \"%s\"",
                  sm->joint);
    const int c = joint_coord(m, j, sm->coordinate, 2);
    if (c < 0)
      return fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name,
                  "a motion cannot drive joint \"%s\" (%s%s%s): it needs a revolute or "
                  "prismatic joint, or `coordinate:` angle|slide (cylindrical), "
                  "angle1|angle2 (universal) or x|y|angle (planar)", sm->joint, pt_joint_classes[m->joint_type[j]].name,
                  sm->coordinate[0] ? ", coordinate " : "", sm->coordinate);
    for (int k = 0; k < i; k++)
      if (m->motion_coord[k] == c)
        return fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name,
                    "coordinate \"%s\" is already driven by motion \"%s\"", m->coord_name[c],
                    m->motion_name[k]);
    snprintf(m->motion_name[i], PT_NAME_MAX, "%s", sm->name);
    m->motion_coord[i] = c;
    m->motion_profile[i] = sm->profile;
    double *par = m->motion_par + 8 * i;
    par[0] = sm->profile == PT_PROFILE_CONSTANT ? sm->value : sm->offset;
    par[1] = sm->amplitude, par[2] = sm->omega, par[3] = sm->phase;
    if (sm->profile == PT_PROFILE_STEP) {
      par[0] = sm->t0, par[1] = sm->value0, par[2] = sm->t1, par[3] = sm->value1;
      if (!(sm->t1 > sm->t0))
        return fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name, "step needs t1 > t0");
    }
    m->motion_data_adr[i] = adr;
    if (sm->profile == PT_PROFILE_POLYNOMIAL) {
      if (sm->ncoef < 1 || !sm->coef)
        return fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name, "no coefficients");
      ptu_copy(m->motion_data + adr, sm->coef, sm->ncoef);
      m->motion_data_num[i] = sm->ncoef;
      adr += sm->ncoef;
    } else if (sm->profile == PT_PROFILE_TABLE) {
      if (sm->npoint < 2 || !sm->points)
        return fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name, "table needs >= 2 points");
      for (int k = 1; k < sm->npoint; k++)
        if (!(sm->points[2 * k] > sm->points[2 * k - 2]))
          return fail(err, PT_EMODEL, s, sm->line, "motions", i, sm->name,
                      "table times must increase strictly");
      spline_setup(m->motion_data + adr, sm->npoint, sm->points);
      m->motion_data_num[i] = sm->npoint;
      adr += 3 * sm->npoint;
    }
    const int r = m->nrow_joint + i;
    m->row_body[2 * r] = m->meas_body[2 * c];
    m->row_body[2 * r + 1] = m->meas_body[2 * c + 1];
  }
  return PT_OK;
}

static int build_forces(pt_model *m, const pt_spec *s, pt_error *err) {
  for (int i = 0; i < s->nforce; i++) {
    const pt_spec_force *sf = s->forces + i;
    for (int k = 0; k < i; k++)
      if (strcmp(s->forces[k].name, sf->name) == 0)
        return fail(err, PT_EMODEL, s, sf->line, "forces", i, sf->name, "duplicate force name");
    snprintf(m->force_name[i], PT_NAME_MAX, "%s", sf->name);
    m->force_type[i] = sf->type;
    m->force_coord[i] = -1;
    double *par = m->force_par + PT_FORCE_PAR * i;
    int b1 = PT_GROUND, b2 = PT_GROUND;
    const char *missing = NULL;
    switch (sf->type) {
    case PT_FORCE_TORSION_SPRING: {
      const int j = find_joint(s, sf->joint);
      if (j < 0)
        return fail(err, PT_EMODEL, s, sf->line, "forces", i, sf->name, "unknown joint \"%s\"",
                    sf->joint);
      const int c = joint_coord(m, j, "", 0);
      if (c < 0)
        return fail(err, PT_EMODEL, s, sf->line, "forces", i, sf->name,
                    "torsion_spring needs a revolute or cylindrical joint");
      m->force_coord[i] = c;
      b1 = m->meas_body[2 * c], b2 = m->meas_body[2 * c + 1];
      par[0] = sf->stiffness, par[1] = sf->damping, par[2] = sf->free_angle, par[3] = sf->preload;
      break;
    }
    case PT_FORCE_SPRING_DAMPER:
    case PT_FORCE_BUSHING:
      b1 = find_body(s, sf->body1), b2 = find_body(s, sf->body2);
      if (b1 == -2) missing = sf->body1;
      if (b2 == -2) missing = sf->body2;
      if (missing) break;
      if (b1 == b2)
        return fail(err, PT_EMODEL, s, sf->line, "forces", i, sf->name,
                    "body1 and body2 are the same body");
      if (sf->type == PT_FORCE_SPRING_DAMPER) {
        par[0] = sf->stiffness, par[1] = sf->damping, par[2] = sf->free_length;
        par[3] = sf->preload;
        to_body_point(m, b1, sf->point1, par + 4);
        to_body_point(m, b2, sf->point2, par + 7);
      } else {
        double axes[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, A1[9], A2[9];
        if (sf->has_axes) ptu_copy(axes, sf->axes, 9);
        ptu_copy(par, sf->stiffness6, 6);
        ptu_copy(par + 6, sf->damping6, 6);
        to_body_point(m, b1, sf->point, par + 12);
        to_body_point(m, b2, sf->point, par + 15);
        static const double eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        if (b1 == PT_GROUND) ptu_copy(A1, eye, 9); else ptu_quat2mat(A1, m->q0 + 7 * b1 + 3);
        if (b2 == PT_GROUND) ptu_copy(A2, eye, 9); else ptu_quat2mat(A2, m->q0 + 7 * b2 + 3);
        ptu_mul_matT_mat3(par + 18, A1, axes);
        ptu_mul_matT_mat3(par + 27, A2, axes);
      }
      break;
    case PT_FORCE_FORCE:
    case PT_FORCE_TORQUE:
      b1 = find_body(s, sf->body);
      if (b1 == -2) {
        missing = sf->body;
        break;
      }
      ptu_copy(par, sf->value, 3);
      if (sf->type == PT_FORCE_FORCE) to_body_point(m, b1, sf->point, par + 3);
      break;
    case PT_FORCE_EXPRESSION:  // compiled into a driven actuator (compile_control.c)
      break;
    }
    if (missing)
      return fail(err, PT_EMODEL, s, sf->line, "forces", i, sf->name, "unknown body \"%s\"",
                  missing);
    m->force_body[2 * i] = b1;
    m->force_body[2 * i + 1] = b2;
  }
  return PT_OK;
}

static int count_inputs(const pt_spec *s) {
  int n = 0;
  for (int i = 0; i < s->nactuator; i++)
    n += s->actuators[i].type == PT_ACT_BODY_FORCE || s->actuators[i].type == PT_ACT_BODY_TORQUE
             ? 3 : 1;
  return n;
}

static int build_actuators(pt_model *m, const pt_spec *s, pt_error *err) {
  int in = 0;
  for (int i = 0; i < s->nactuator; i++) {
    const pt_spec_actuator *sa = s->actuators + i;
    for (int k = 0; k < i; k++)
      if (strcmp(s->actuators[k].name, sa->name) == 0)
        return fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                    "duplicate actuator name");
    snprintf(m->actuator_name[i], PT_NAME_MAX, "%s", sa->name);
    m->actuator_type[i] = sa->type;
    m->actuator_frame[i] = sa->frame_body;
    m->actuator_input_adr[i] = in;
    m->actuator_coord[i] = -1;
    m->actuator_body[i] = PT_GROUND;
    if (!(sa->limit >= 0))
      return fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name, "limit must be >= 0");
    if (sa->type == PT_ACT_JOINT_TORQUE || sa->type == PT_ACT_JOINT_FORCE) {
      const int j = find_joint(s, sa->joint);
      if (j < 0)
        return fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                    "unknown joint \"%s\"", sa->joint);
      const int torque = sa->type == PT_ACT_JOINT_TORQUE;
      const int c = joint_coord(m, j, sa->coordinate, torque ? 0 : 1);
      if (c < 0)
        return fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                    "%s needs a %s joint%s%s", torque ? "joint_torque" : "joint_force",
                    torque ? "revolute, cylindrical or planar (angle)"
                           : "prismatic or cylindrical, or `coordinate:` x|y of a planar",
                    sa->coordinate[0] ? "; no such coordinate: " : "", sa->coordinate);
      m->actuator_coord[i] = c;
      snprintf(m->input_name[in], PT_NAME_MAX, "%s", sa->name);
      const double gear = sa->gear != 0 ? sa->gear : 1.0;
      if (!isfinite(gear))
        return fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                    "gear must be a finite non-zero number");
      m->input_gear[in] = gear;
      m->input_limit[in++] = sa->limit;
    } else {
      if (sa->gear != 0 && sa->gear != 1)
        return fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                    "gear is for joint_torque and joint_force actuators");
      const int b = find_body(s, sa->body);
      if (b < 0)
        return fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name,
                    "unknown (or ground) body \"%s\"", sa->body);
      m->actuator_body[i] = b;
      to_body_point(m, b, sa->point, m->actuator_point + 3 * i);
      static const char *xyz[3] = {"x", "y", "z"};
      for (int k = 0; k < 3; k++) {
        char nm[PT_NAME_MAX + 8];
        snprintf(nm, sizeof(nm), "%s.%s", sa->name, xyz[k]);
        if (strlen(nm) >= PT_NAME_MAX)
          return fail(err, PT_EMODEL, s, sa->line, "actuators", i, sa->name, "name too long");
        memcpy(m->input_name[in], nm, strlen(nm) + 1);
        m->input_gear[in] = 1.0;
        m->input_limit[in++] = sa->limit;
      }
    }
  }
  return PT_OK;
}

// ---- W pattern and LDL symbolic analysis ---------------------------------------------------
static int col_find(const pt_model *m, int row, int col) {
  int lo = m->w_colptr[col], hi = m->w_colptr[col + 1] - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (m->w_rowind[mid] == row) return mid;
    if (m->w_rowind[mid] < row) lo = mid + 1; else hi = mid - 1;
  }
  return -1;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int build_w(pt_model *m) {
  const int n = m->ncon, nb = m->nbody;
  m->body_row_adr = alloc(m, (size_t)nb + 1, sizeof(int));
  if (!m->body_row_adr) return PT_ENOMEM;
  for (int a = 0; a < n; a++)
    for (int s = 0; s < 2; s++) {
      int b = m->row_body[2 * m->con_row[a] + s];
      if (b != PT_GROUND) m->body_row_adr[b + 1]++;
    }
  for (int k = 0; k < nb; k++) m->body_row_adr[k + 1] += m->body_row_adr[k];
  const int tot = m->body_row_adr[nb];
  m->body_rows = alloc(m, 2 * (size_t)tot + 1, sizeof(int));
  int *fill = calloc((size_t)nb + 1, sizeof(int));
  int *mark = malloc(sizeof(int) * ((size_t)n + 1));
  if (!m->body_rows || !fill || !mark) {
    free(fill), free(mark);
    return PT_ENOMEM;
  }
  for (int a = 0; a < n; a++)  // ascending rows per body
    for (int s = 0; s < 2; s++) {
      int b = m->row_body[2 * m->con_row[a] + s];
      if (b == PT_GROUND) continue;
      int p = m->body_row_adr[b] + fill[b]++;
      m->body_rows[2 * p] = a;
      m->body_rows[2 * p + 1] = s;
    }
  free(fill);
  // pattern: column b holds every row a sharing a body with b
  m->w_colptr = alloc(m, (size_t)n + 1, sizeof(int));
  if (!m->w_colptr) {
    free(mark);
    return PT_ENOMEM;
  }
  for (int pass = 0; pass < 2; pass++) {
    int nz = 0;
    for (int i = 0; i < n; i++) mark[i] = -1;
    for (int b = 0; b < n; b++) {
      if (pass == 0) m->w_colptr[b] = nz;
      for (int s = 0; s < 2; s++) {
        int k = m->row_body[2 * m->con_row[b] + s];
        if (k == PT_GROUND) continue;
        for (int t = m->body_row_adr[k]; t < m->body_row_adr[k + 1]; t++) {
          int a = m->body_rows[2 * t];
          if (mark[a] == b) continue;
          mark[a] = b;
          if (pass == 1) m->w_rowind[nz] = a;
          nz++;
        }
      }
      if (pass == 1) qsort(m->w_rowind + m->w_colptr[b], (size_t)(nz - m->w_colptr[b]),
                           sizeof(int), cmp_int);
    }
    if (pass == 0) {
      m->w_colptr[n] = nz;
      m->w_nnz = nz;
      m->w_rowind = alloc(m, (size_t)nz + 1, sizeof(int));
      if (!m->w_rowind) {
        free(mark);
        return PT_ENOMEM;
      }
    }
  }
  free(mark);
  // scatter map: for body k, pair (ia, ib) -> W entry (row ia, column ib)
  m->body_pair_adr = alloc(m, (size_t)nb + 1, sizeof(int));
  if (!m->body_pair_adr) return PT_ENOMEM;
  for (int k = 0; k < nb; k++) {
    int c = m->body_row_adr[k + 1] - m->body_row_adr[k];
    m->body_pair_adr[k + 1] = m->body_pair_adr[k] + c * c;
  }
  m->body_pair_nz = alloc(m, (size_t)m->body_pair_adr[nb] + 1, sizeof(int));
  if (!m->body_pair_nz) return PT_ENOMEM;
  for (int k = 0; k < nb; k++) {
    const int *rows = m->body_rows + 2 * m->body_row_adr[k];
    int c = m->body_row_adr[k + 1] - m->body_row_adr[k];
    for (int ia = 0; ia < c; ia++)
      for (int ib = 0; ib < c; ib++)
        m->body_pair_nz[m->body_pair_adr[k] + ia * c + ib] = col_find(m, rows[2 * ia], rows[2 * ib]);
  }
  // AMD ordering and LDL^T symbolic factorisation (sizes of L known from now on)
  m->ldl_Lp = alloc(m, (size_t)n + 1, sizeof(int));
  m->ldl_parent = alloc(m, (size_t)n + 1, sizeof(int));
  m->ldl_lnz = alloc(m, (size_t)n + 1, sizeof(int));
  m->ldl_P = alloc(m, (size_t)n + 1, sizeof(int));
  m->ldl_Pinv = alloc(m, (size_t)n + 1, sizeof(int));
  int *flag = malloc(sizeof(int) * ((size_t)n + 1));
  if (!m->ldl_Lp || !m->ldl_parent || !m->ldl_lnz || !m->ldl_P || !m->ldl_Pinv || !flag) {
    free(flag);
    return PT_ENOMEM;
  }
  if (n > 0) {
    if (amd_order(n, m->w_colptr, m->w_rowind, m->ldl_P, NULL, NULL) < AMD_OK) {
      free(flag);
      return PT_ENOMEM;
    }
    ldl_symbolic(n, m->w_colptr, m->w_rowind, m->ldl_Lp, m->ldl_parent, m->ldl_lnz, flag,
                 m->ldl_P, m->ldl_Pinv);
  }
  free(flag);
  m->ldl_nnz = m->ldl_Lp[n];
  return PT_OK;
}

static void set_active(pt_model *m, const int *keep) {
  m->ncon = 0;
  for (int r = 0; r < m->nrow; r++) {
    m->row_active[r] = keep[r] ? m->ncon : -1;
    if (keep[r]) m->con_row[m->ncon++] = r;
  }
  m->ncq = m->ncon + m->nbody;
  m->ndof = m->nq - m->ncq;
}

// Whether rows `rows` of J (x space) are independent by the body-block structure, in
// O(nbody): with the bodies in breadth-first order from the ground, each row belongs to the
// later of its two bodies; J is then block lower triangular (rows of a body x its 6 columns),
// and regular diagonal blocks (complete pivoting finds each pivot above PT_TOL_BLOCK_PIVOT of
// the largest row norm) make every row independent. 1 when that holds (a tree with sound joints), 0 when
// the blocks cannot tell (closed loops, a body with more than 6 rows, small pivots) and the
// dense rank decision must decide. -1 on allocation failure.
static int rows_independent_by_blocks(const pt_model *m, const pt_data *d, const int *rows,
                                      int n) {
  const int nb = m->nbody;
  int *adr = calloc((size_t)nb + 2, sizeof(int)), *list = malloc(sizeof(int) * (2 * (size_t)n + 1));
  int *order = malloc(sizeof(int) * ((size_t)nb + 1)), *queue = malloc(sizeof(int) * ((size_t)nb + 1));
  int ok = 1;
  if (!adr || !list || !order || !queue) {
    ok = -1;
    goto done;
  }
  double rmax = 0;
  for (int i = 0; i < n; i++) {
    const double *jac = d->row_jac + 12 * rows[i];
    rmax = fmax(rmax, sqrt(ptu_dot3(jac, jac) + ptu_dot3(jac + 3, jac + 3) +
                           ptu_dot3(jac + 6, jac + 6) + ptu_dot3(jac + 9, jac + 9)));
    for (int s = 0; s < 2; s++)
      if (m->row_body[2 * rows[i] + s] != PT_GROUND) adr[m->row_body[2 * rows[i] + s] + 2]++;
  }
  for (int b = 0; b < nb; b++) adr[b + 2] += adr[b + 1];
  for (int i = 0; i < n; i++)  // list[adr[b] ..] = entries 2 i + slot of the rows of body b
    for (int s = 0; s < 2; s++)
      if (m->row_body[2 * rows[i] + s] != PT_GROUND) list[adr[m->row_body[2 * rows[i] + s] + 1]++] = 2 * i + s;
  for (int b = 0; b < nb; b++) order[b] = -1;
  int head = 0, tail = 0, seed = 0;
  for (int b = 0; b < nb; b++)  // bodies tied to the ground first
    for (int t = adr[b]; t < adr[b + 1] && order[b] < 0; t++)
      if (m->row_body[2 * rows[list[t] / 2] + 1 - list[t] % 2] == PT_GROUND)
        order[b] = tail, queue[tail++] = b;
  while (head < tail || tail < nb) {
    if (head == tail) {
      while (order[seed] >= 0) seed++;
      order[seed] = tail, queue[tail++] = seed;
    }
    const int b = queue[head++];
    for (int t = adr[b]; t < adr[b + 1]; t++) {
      const int o = m->row_body[2 * rows[list[t] / 2] + 1 - list[t] % 2];
      if (o != PT_GROUND && order[o] < 0) order[o] = tail, queue[tail++] = o;
    }
  }
  for (int k = 0; k < nb && ok == 1; k++) {
    const int b = queue[k];
    double G[6 * 6];  // (owned rows x 6)
    int nr = 0;
    for (int t = adr[b]; t < adr[b + 1] && ok == 1; t++) {
      const int i = list[t] / 2, s = list[t] % 2, o = m->row_body[2 * rows[i] + 1 - s];
      if (o != PT_GROUND && order[o] > k) continue;  // the later body owns it
      if (nr == 6) ok = 0;
      else ptu_copy(G + 6 * nr++, d->row_jac + 12 * rows[i] + 6 * s, 6);
    }
    int colperm[6] = {0, 1, 2, 3, 4, 5};
    for (int r = 0; r < nr && ok == 1; r++) {
      int pi = r, pj = r;
      double best = -1;
      for (int i = r; i < nr; i++)
        for (int j = r; j < 6; j++)
          if (fabs(G[6 * i + colperm[j]]) > best) best = fabs(G[6 * i + colperm[j]]), pi = i, pj = j;
      if (!(best > PT_TOL_BLOCK_PIVOT * rmax)) {
        ok = 0;
        break;
      }
      for (int j = 0; j < 6 && pi != r; j++) {
        const double t = G[6 * r + j];
        G[6 * r + j] = G[6 * pi + j];
        G[6 * pi + j] = t;
      }
      const int t = colperm[r];
      colperm[r] = colperm[pj];
      colperm[pj] = t;
      const int cr = colperm[r];
      for (int i = r + 1; i < nr; i++) {
        const double f = G[6 * i + cr] / G[6 * r + cr];
        for (int j = r; j < 6; j++) G[6 * i + colperm[j]] -= f * G[6 * r + colperm[j]];
      }
    }
  }
done:
  free(adr), free(list), free(order), free(queue);
  return ok;
}

// Rank of rows `rows` of J (dense, in x space) by pivoted QR of J^T. keep[row] = 1 for the
// independent rows. Returns the rank, or -1 on error.
static int rank_rows(const pt_model *m, const pt_data *d, const int *rows, int n, int *keep) {
  const int nv = m->nv;
  if (n == 0) return 0;
  const int blocks = rows_independent_by_blocks(m, d, rows, n);
  if (blocks < 0) return -1;
  if (blocks) {  // all independent: no dense factorisation needed
    for (int i = 0; i < n; i++) keep[rows[i]] = 1;
    return n;
  }
  double *Jt = calloc((size_t)nv * n, sizeof(double));
  double *tau = calloc((size_t)(n < nv ? n : nv) + 1, sizeof(double));
  lapack_int *jpvt = calloc((size_t)n, sizeof(lapack_int));
  if (!Jt || !tau || !jpvt) {
    free(Jt), free(tau), free(jpvt);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    const int r = rows[i];
    for (int s = 0; s < 2; s++) {
      const int b = m->row_body[2 * r + s];
      if (b == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) Jt[(size_t)(6 * b + c) * n + i] += d->row_jac[12 * r + 6 * s + c];
    }
  }
  int info = LAPACKE_dgeqp3(LAPACK_ROW_MAJOR, nv, n, Jt, n, jpvt, tau);
  int rank = 0;
  if (info == 0) {
    const int kmax = n < nv ? n : nv;
    double r0 = fabs(Jt[0]);
    for (int k = 0; k < kmax; k++)
      if (fabs(Jt[(size_t)k * n + k]) > PT_TOL_RANK_ROWS * r0 && r0 > 0) rank++;
    for (int i = 0; i < n; i++) keep[rows[i]] = 0;
    for (int k = 0; k < rank; k++) keep[rows[jpvt[k] - 1]] = 1;
  }
  free(Jt), free(tau), free(jpvt);
  return info == 0 ? rank : -1;
}

static const char *row_label(const pt_model *m, int r, char *buf, size_t len) {
  int j = 0;
  while (j + 1 < m->njoint && m->joint_row_adr[j + 1] <= r) j++;
  snprintf(buf, len, "%s row %d", m->joint_name[j], r - m->joint_row_adr[j]);
  return buf;
}

// Assemble positions on all rows, remove redundant rows, assemble velocities.
static int assemble_initial(pt_model *m, const pt_spec *s, pt_error *err) {
  int *keep = calloc((size_t)m->nrow + 1, sizeof(int));
  int *rows = calloc((size_t)m->nrow + 1, sizeof(int));
  if (!keep || !rows) {
    free(keep), free(rows);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  for (int r = 0; r < m->nrow; r++) keep[r] = 1;
  set_active(m, keep);
  int rc = build_w(m);
  pt_data *d = rc ? NULL : pt_data_new(m);
  if (!d) {
    free(keep), free(rows);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  // measure the displacement from the positions as given (pt_data_new evaluated them)
  ptu_copy(d->q, m->q0, m->nq);
  ptu_copy(d->qd, m->qd0, m->nq);
  double moved = 0;
  rc = pt_assemble_positions(m, d, NULL, 0, 1, &moved, err);
  if (rc) {
    char msg[sizeof(err->msg)];
    snprintf(msg, sizeof(msg), "%s", err->msg);
    pt_error_set(err, rc, "%s:%d: model \"%s\": %s", s->source, s->line, s->model, msg);
    goto done;
  }
  if (moved > PT_TOL_ASSEMBLY_MOVED)
    warn(m, "assembly moved the initial positions by up to %.3g (max |dq|)", moved);
  pt_kin_bodies(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  for (int r = 0; r < m->nrow_joint; r++) rows[r] = r;
  int rank = rank_rows(m, d, rows, m->nrow_joint, keep);
  if (rank < 0) {
    rc = pt_error_set(err, PT_ENOMEM, "rank factorisation failed");
    goto done;
  }
  if (rank < m->nrow_joint) {
    char line[4096] = "", lab[160];
    size_t used = 0;
    for (int r = 0; r < m->nrow_joint; r++)
      if (!keep[r] && used + 170 < sizeof(line))
        used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s", used ? ", " : "",
                                 row_label(m, r, lab, sizeof(lab)));
    warn(m, "removed %d redundant constraint rows: %s", m->nrow_joint - rank, line);
  }
  // motions must be independent of the joints and of each other
  int nk = 0;
  for (int r = 0; r < m->nrow_joint; r++)
    if (keep[r]) rows[nk++] = r;
  for (int i = 0; i < m->nmotion; i++) rows[nk++] = m->nrow_joint + i;
  int *keep2 = calloc((size_t)m->nrow + 1, sizeof(int));
  int rank2 = keep2 ? rank_rows(m, d, rows, nk, keep2) : -1;
  if (rank2 >= 0 && rank2 < nk) {
    int bad = 0;
    for (int i = 0; i < m->nmotion; i++)
      if (!keep2[m->nrow_joint + i]) bad = i;
    rc = fail(err, PT_EMODEL, s, s->motions[bad].line, "motions", bad, m->motion_name[bad],
              "the motion is redundant with the joints or other motions (the coordinate it "
              "drives is not free)");
    free(keep2);
    goto done;
  }
  free(keep2);
  for (int i = 0; i < m->nmotion; i++) keep[m->nrow_joint + i] = 1;
  ptu_copy(m->q0, d->q, m->nq);
  // When assembly moved nothing and no row went, the model is as d was made from: keep d
  // (a new data costs O(nq^2) memory to set up) instead of making it again.
  if (!(moved == 0 && rank == m->nrow_joint)) {
    pt_data_free(d);
    d = NULL;
    set_active(m, keep);
    rc = build_w(m);
    if (rc) {
      rc = pt_error_set(err, rc, "out of memory");
      goto done;
    }
    d = pt_data_new(m);
    if (!d) {
      rc = pt_error_set(err, PT_ENOMEM, "out of memory");
      goto done;
    }
  }
  ptu_copy(d->q, m->q0, m->nq);
  ptu_copy(d->qd, m->qd0, m->nq);
  pt_kin_bodies(m, d);
  rc = pt_assemble_velocities(m, d, NULL, 0, err);
  if (rc) {   // named like every other refusal of the model (the fuzzer checks it)
    char msg[sizeof(err->msg)];
    snprintf(msg, sizeof(msg), "%s", err->msg);
    pt_error_set(err, rc, "%s:%d: model \"%s\": %s", s->source, s->line, s->model, msg);
    goto done;
  }
  ptu_copy(m->qd0, d->qd, m->nq);
  // the initial state must partition (d->q is m->q0: velocity assembly moves rates only); a
  // tree's joint coordinates passed their own check (pt_tree_init, rank_rows kept every row)
  if (!d->tree_ok && pt_partition_build(m, d))
    rc = pt_error_set(err, PT_EASSEMBLY,
                      "%s:%d: model \"%s\": the initial configuration is singular (the "
                      "constraint Jacobian has dependent rows that are not removable)",
                      s->source, s->line, s->model);
  // a joint that starts outside its limits (a URDF's zero configuration may be): said once
  for (int j = 0; !rc && j < m->njoint; j++) {
    const int c = m->joint_coord_adr[j];
    if (!m->joint_limited[j] || c < 0) continue;
    double v, jac[12], jdx;
    pt_measure(m, d, c, &v, jac, &jdx);
    if (v < m->joint_limit[2 * j] - PT_TOL_LIMIT_POS ||
        v > m->joint_limit[2 * j + 1] + PT_TOL_LIMIT_POS)
      warn(m, "joint %s starts outside its limits [%g, %g] (coordinate %.9g); where limits are "
              "enforced it is put on the nearest bound at the first step", m->joint_name[j],
           m->joint_limit[2 * j], m->joint_limit[2 * j + 1], v);
  }
done:
  pt_data_free(d);
  free(keep), free(rows);
  return rc;
}

// Couplers (coupler.c): follower = multiplier x leader + offset between the coordinates of two
// revolute or prismatic joints, a follower at most once, no chains. The arrays are filled
// here; m->ncoupler is set after the initial assembly (couplers_initial).
static int build_couplers(pt_model *m, const pt_spec *s, pt_error *err) {
  static const char *const L = "couplers";
  for (int k = 0; k < s->ncoupler; k++) {
    const pt_spec_coupler *c = &s->couplers[k];
    const char *role[2] = {"follower", "leader"}, *jn[2] = {c->follower, c->leader};
    int j[2];
    for (int r = 0; r < 2; r++) {
      j[r] = find_joint(s, jn[r]);
      if (j[r] < 0)
        return fail(err, PT_EMODEL, s, c->line, L, k, c->name, "%s: no joint named \"%s\"",
                    role[r], jn[r]);
      const int t = m->joint_type[j[r]];
      if (t != PT_JOINT_REVOLUTE && t != PT_JOINT_PRISMATIC)
        return fail(err, PT_EMODEL, s, c->line, L, k, c->name,
                    "%s \"%s\" is a %s joint: a coupler joins the coordinates of two revolute "
                    "or prismatic joints", role[r], jn[r], pt_joint_classes[t].name);
    }
    if (j[0] == j[1])
      return fail(err, PT_EMODEL, s, c->line, L, k, c->name,
                  "follower and leader are the same joint \"%s\"", jn[0]);
    if (!(isfinite(c->multiplier) && c->multiplier != 0))
      return fail(err, PT_EMODEL, s, c->line, L, k, c->name,
                  "multiplier must be a finite number other than 0, got %g", c->multiplier);
    if (!isfinite(c->offset))
      return fail(err, PT_EMODEL, s, c->line, L, k, c->name, "offset must be finite, got %g",
                  c->offset);
    for (int e = 0; e < k; e++) {
      if (strcmp(m->coupler_name[e], c->name) == 0)
        return fail(err, PT_EMODEL, s, c->line, L, k, c->name,
                    "duplicate coupler name (first on line %d)", s->couplers[e].line);
      if (m->coupler_joint[2 * e] == j[0])
        return fail(err, PT_EMODEL, s, c->line, L, k, c->name,
                    "joint \"%s\" already follows coupler \"%s\": a joint follows one leader",
                    jn[0], m->coupler_name[e]);
    }
    snprintf(m->coupler_name[k], PT_NAME_MAX, "%s", c->name);
    m->coupler_joint[2 * k] = j[0];
    m->coupler_joint[2 * k + 1] = j[1];
    m->coupler_mult[k] = c->multiplier;
    m->coupler_offset[k] = c->offset;
  }
  for (int k = 0; k < s->ncoupler; k++)  // chains: a leader that follows, a follower that leads
    for (int e = 0; e < s->ncoupler; e++)
      if (m->coupler_joint[2 * k + 1] == m->coupler_joint[2 * e])
        return fail(err, PT_EMODEL, s, s->couplers[k].line, L, k, s->couplers[k].name,
                    "leader \"%s\" is itself the follower of coupler \"%s\": chained couplers "
                    "are not supported (couple to \"%s\" with the multipliers multiplied)",
                    m->joint_name[m->coupler_joint[2 * k + 1]], m->coupler_name[e],
                    m->joint_name[m->coupler_joint[2 * e + 1]]);
  return PT_OK;
}

// After the initial assembly: couplers need the tree partition (they are rows of the joint-space
// dynamics, coupler.c); each follower is put on its coupler from its leader (position and
// rate), said in a warning when that moved it, and the model's initial state is that one.
static int couplers_initial(pt_model *m, const pt_spec *s, int ncoupler, pt_error *err) {
  if (!ncoupler) return PT_OK;
  if (!pt_tree_qualifies(m))
    return pt_error_set(err, PT_EMODEL,
                        "%s:%d: couplers[0] \"%s\": couplers are held on trees of revolute, "
                        "prismatic and fixed joints without motions, and this model has closed "
                        "loops, motions or other joints (docs/model-format.md, couplers)",
                        s->source, s->couplers[0].line, s->couplers[0].name);
  double *before = calloc(2 * (size_t)m->ncoord + 1, sizeof(double));
  if (!before) return pt_error_set(err, PT_ENOMEM, "out of memory");
  pt_data *d = pt_data_new(m);  // measures the coordinates as assembled
  if (!d) {
    free(before);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  ptu_copy(before, d->coord, m->ncoord);
  ptu_copy(before + m->ncoord, d->coord_rate, m->ncoord);
  m->ncoupler = ncoupler;
  pt_data_free(d);
  d = pt_data_new(m);  // pt_forward puts the followers on their couplers
  if (!d) {
    free(before);
    return pt_error_set(err, PT_EMODEL,
                        "%s:%d: couplers[0] \"%s\": the model's joint coordinates did not pass "
                        "the tree partition's self-check, which couplers need", s->source,
                        s->couplers[0].line, s->couplers[0].name);
  }
  for (int k = 0; k < ncoupler; k++) {
    const int c = m->joint_coord_adr[m->coupler_joint[2 * k]];
    const double dv = fabs(d->coord[c] - before[c]);
    const double dr = fabs(d->coord_rate[c] - before[m->ncoord + c]);
    if (dv > 1e-12 || dr > 1e-12)
      warn(m, "coupler %s: follower %s starts at %.9g (rate %.9g), put on the coupler at %.9g "
              "(rate %.9g)", m->coupler_name[k], m->joint_name[m->coupler_joint[2 * k]],
           before[c], before[m->ncoord + c], d->coord[c], d->coord_rate[c]);
    if (m->joint_limited[m->coupler_joint[2 * k]] && m->limits_on)
      warn(m, "coupler %s: the limits of follower %s are not enforced (its leader %s's are)",
           m->coupler_name[k], m->joint_name[m->coupler_joint[2 * k]],
           m->joint_name[m->coupler_joint[2 * k + 1]]);
  }
  ptu_copy(m->q0, d->q, m->nq);
  ptu_copy(m->qd0, d->qd, m->nq);
  pt_data_free(d);
  free(before);
  return PT_OK;
}

#define ALLOC_ARR(field, n) \
  (m->field = alloc(m, (size_t)(n) + 1, sizeof(*m->field)), m->field != NULL)

// s: the spec as compiled (expression forces as driven actuators, compile_control.c); orig:
// as loaded (its controls and expression forces' formulas).
static int compile(const pt_spec *orig, const pt_spec *s, pt_model **out, pt_error *err) {
  pt_model *m = calloc(1, sizeof(*m));
  if (!m) return pt_error_set(err, PT_ENOMEM, "out of memory");
  snprintf(m->name, PT_NAME_MAX, "%s", s->model);
  if (s->warnings && !(m->warnings = strdup(s->warnings))) {  // the loader's (unused elements, missing meshes, ...), then compile's
    free(m);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  ptu_copy(m->gravity, s->gravity, 3);
  m->dt = s->dt > 0 ? s->dt : 1e-3;
  m->integrator = s->integrator;
  m->switch_back_steps = s->switch_back_steps > 0 ? s->switch_back_steps : 5;
  m->spin_substeps_max = PT_SPIN_SUBSTEPS_MAX;  // fixed at load: the worst step's cost bound
  m->restitution = s->restitution;
  if (!(s->restitution >= 0 && s->restitution <= 1)) {
    pt_model_free(m);
    return pt_error_set(err, PT_EMODEL, "%s: model \"%s\": restitution must be in [0, 1], got %g",
                        s->source, s->model, s->restitution);
  }
  m->nbody = s->nbody;
  m->nq = 7 * s->nbody;
  m->nv = 6 * s->nbody;
  m->njoint = s->njoint;
  m->nmotion = s->nmotion;
  m->nforce = s->nforce;
  m->nactuator = s->nactuator;
  m->ninput = count_inputs(s) + pt_control_ninput(orig);  // actuators', then controls'
  int nrow = 0, ncoord = s->ncoord;
  for (int j = 0; j < s->njoint; j++) {
    if ((unsigned)s->joints[j].type >= PT_JOINT_NTYPES) {
      pt_model_free(m);
      return fail(err, PT_EMODEL, s, s->joints[j].line, "joints", j, s->joints[j].name,
                  "unknown joint type");
    }
    nrow += pt_joint_classes[s->joints[j].type].nrow;
    ncoord += pt_joint_classes[s->joints[j].type].ncoord;
  }
  m->nrow = nrow + s->nmotion;
  int ok = 1;
  const int nb = m->nbody, nj = m->njoint;
  ok = ok && ALLOC_ARR(body_name, nb) && ALLOC_ARR(body_mass, nb) &&
       ALLOC_ARR(body_inertia, 9 * nb) && ALLOC_ARR(body_inertia_inv, 9 * nb) &&
       ALLOC_ARR(q_name, m->nq) && ALLOC_ARR(q0, m->nq) && ALLOC_ARR(qd0, m->nq);
  ok = ok && ALLOC_ARR(joint_name, nj) && ALLOC_ARR(joint_type, nj) &&
       ALLOC_ARR(joint_body, 2 * nj) && ALLOC_ARR(joint_geom, PT_JOINT_GEOM * nj) &&
       ALLOC_ARR(joint_damping, nj) && ALLOC_ARR(joint_friction, 2 * nj) &&
       ALLOC_ARR(joint_row_adr, nj) && ALLOC_ARR(joint_limited, nj) &&
       ALLOC_ARR(joint_nrow, nj) && ALLOC_ARR(joint_ncoord, nj) &&
       ALLOC_ARR(joint_damp_rotation, nj) && ALLOC_ARR(row_joint, nrow) &&
       ALLOC_ARR(row_kind, nrow) && ALLOC_ARR(row_vec, 2 * nrow) &&
       ALLOC_ARR(joint_limit, 2 * nj) && ALLOC_ARR(joint_coord_adr, nj);
  ok = ok && ALLOC_ARR(row_body, 2 * m->nrow) && ALLOC_ARR(row_active, m->nrow) &&
       ALLOC_ARR(con_row, m->nrow);
  ok = ok && ALLOC_ARR(coord_name, ncoord) && ALLOC_ARR(meas_type, ncoord) &&
       ALLOC_ARR(meas_body, 2 * ncoord) && ALLOC_ARR(meas_comp, ncoord) &&
       ALLOC_ARR(meas_geom, PT_MEAS_GEOM * ncoord) && ALLOC_ARR(meas_joint, ncoord);
  ok = ok && ALLOC_ARR(motion_name, m->nmotion) && ALLOC_ARR(motion_coord, m->nmotion) &&
       ALLOC_ARR(motion_profile, m->nmotion) && ALLOC_ARR(motion_par, 8 * m->nmotion) &&
       ALLOC_ARR(motion_data_adr, m->nmotion) && ALLOC_ARR(motion_data_num, m->nmotion);
  ok = ok && ALLOC_ARR(force_name, m->nforce) && ALLOC_ARR(force_type, m->nforce) &&
       ALLOC_ARR(force_body, 2 * m->nforce) && ALLOC_ARR(force_coord, m->nforce) &&
       ALLOC_ARR(force_par, PT_FORCE_PAR * m->nforce);
  ok = ok && ALLOC_ARR(actuator_name, m->nactuator) && ALLOC_ARR(actuator_type, m->nactuator) &&
       ALLOC_ARR(actuator_body, m->nactuator) && ALLOC_ARR(actuator_coord, m->nactuator) &&
       ALLOC_ARR(actuator_frame, m->nactuator) && ALLOC_ARR(actuator_point, 3 * m->nactuator) &&
       ALLOC_ARR(actuator_input_adr, m->nactuator) && ALLOC_ARR(input_name, m->ninput) &&
       ALLOC_ARR(input_limit, m->ninput) && ALLOC_ARR(input_gear, m->ninput);
  ok = ok && ALLOC_ARR(coupler_name, s->ncoupler) && ALLOC_ARR(coupler_joint, 2 * s->ncoupler) &&
       ALLOC_ARR(coupler_mult, s->ncoupler) && ALLOC_ARR(coupler_offset, s->ncoupler);
  if (!ok) {
    pt_model_free(m);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  int rc = PT_OK;
  if (s->nbody < 1)
    rc = pt_error_set(err, PT_EMODEL, "%s:%d: model \"%s\": at least one body is required",
                      s->source, s->line, s->model);
  if (!rc) rc = build_bodies(m, s, err);
  if (!rc) rc = build_joints(m, s, err);
  if (!rc) rc = build_user_coords(m, s, err);
  if (!rc) rc = build_motions(m, s, err);
  if (!rc) rc = build_forces(m, s, err);
  if (!rc) rc = build_actuators(m, s, err);
  if (!rc) rc = pt_control_compile(m, orig, s, err);
  for (int i = 0; !rc && i < m->ninput; i++)
    for (int k = 0; k < i; k++)
      if (strcmp(m->input_name[k], m->input_name[i]) == 0) {
        rc = pt_error_set(err, PT_EMODEL, "%s: input name \"%s\" is used twice", s->source,
                          m->input_name[i]);
        break;
      }
  if (!rc) rc = build_couplers(m, s, err);
  if (!rc) rc = assemble_initial(m, s, err);  // and checks that the initial state partitions
  if (!rc) rc = pt_visuals_build(m, s, err);
  if (!rc) limits_check(m, s);
  if (!rc) rc = couplers_initial(m, s, s->ncoupler, err);
  if (rc) {
    pt_model_free(m);
    return rc;
  }
  if (!m->warnings) {
    m->warnings = calloc(1, 1);
  }
  *out = m;
  return PT_OK;
}

int pt_model_compile(const pt_spec *s, pt_model **out, pt_error *err) {
  *out = NULL;
  pt_spec *view;
  int rc = pt_control_view(s, &view, err);
  if (rc) return rc;
  rc = compile(s, view, out, err);
  pt_control_view_free(s, view);
  return rc;
}

// ---- read-only accessors ------------------------------------------------------------------
const char *pt_model_name(const pt_model *m) { return m->name; }
const char *pt_model_warnings(const pt_model *m) { return m->warnings ? m->warnings : ""; }
int pt_model_nbody(const pt_model *m) { return m->nbody; }
int pt_model_njoint(const pt_model *m) { return m->njoint; }
int pt_model_nconstraint(const pt_model *m) { return m->ncon; }
// degrees of freedom: the coordinates less one per coupler (coupler.c)
int pt_model_ndof(const pt_model *m) { return m->ndof - m->ncoupler; }
int pt_model_ncoord(const pt_model *m) { return m->ncoord; }
int pt_model_ninput(const pt_model *m) { return m->ninput; }
int pt_model_nactuator(const pt_model *m) { return m->nactuator; }
int pt_model_nmotion(const pt_model *m) { return m->nmotion; }
double pt_model_dt(const pt_model *m) { return m->dt; }
pt_integrator pt_model_integrator(const pt_model *m) { return m->integrator; }
const double *pt_model_gravity(const pt_model *m) { return m->gravity; }

static const char *name_at(const void *arr, int n, int i, size_t width) {
  return (i >= 0 && i < n) ? (const char *)arr + (size_t)i * width : NULL;
}
// Name arrays differ in width (coordinates carry a suffix), so the width comes from the type.
#define NAME_AT(arr, count, i) name_at(m->arr, m->count, i, sizeof *m->arr)
const char *pt_body_name(const pt_model *m, int i) { return NAME_AT(body_name, nbody, i); }
const char *pt_joint_name(const pt_model *m, int i) { return NAME_AT(joint_name, njoint, i); }
const char *pt_coord_name(const pt_model *m, int i) { return NAME_AT(coord_name, ncoord, i); }
const char *pt_input_name(const pt_model *m, int i) { return NAME_AT(input_name, ninput, i); }
const char *pt_actuator_name(const pt_model *m, int i) {
  return NAME_AT(actuator_name, nactuator, i);
}
const char *pt_motion_name(const pt_model *m, int i) {
  return NAME_AT(motion_name, nmotion, i);
}
int pt_coord_index(const pt_model *m, const char *name) { return find_coord(m, name); }
int pt_input_index(const pt_model *m, const char *name) {
  for (int i = 0; i < m->ninput; i++)
    if (strcmp(m->input_name[i], name) == 0) return i;
  return -1;
}
int pt_body_index(const pt_model *m, const char *name) {
  for (int i = 0; i < m->nbody; i++)
    if (strcmp(m->body_name[i], name) == 0) return i;
  return -1;
}
double pt_input_gear(const pt_model *m, int i) {
  return (i >= 0 && i < m->ninput) ? m->input_gear[i] : 0;
}

int pt_joint_limits(const pt_model *m, int j, double lim[2]) {
  if (j < 0 || j >= m->njoint || !m->joint_limited[j]) return 0;
  lim[0] = m->joint_limit[2 * j];
  lim[1] = m->joint_limit[2 * j + 1];
  return 1;
}
int pt_model_limits_enforced(const pt_model *m) { return m->limits_on; }
double pt_model_restitution(const pt_model *m) { return m->restitution; }

double pt_input_limit(const pt_model *m, int i) {
  return (i >= 0 && i < m->ninput) ? m->input_limit[i] : 0;
}

const char *pt_integrator_name(pt_integrator it) {
  switch (it) {
  case PT_INT_RK4: return "rk4";
  case PT_INT_ABM4: return "abm4";
  case PT_INT_EULER: return "euler";
  }
  return "?";
}

int pt_integrator_parse(const char *s, pt_integrator *out) {
  if (strcmp(s, "rk4") == 0) *out = PT_INT_RK4;
  else if (strcmp(s, "abm4") == 0) *out = PT_INT_ABM4;
  else if (strcmp(s, "euler") == 0) *out = PT_INT_EULER;
  else return -1;
  return 0;
}

int pt_independent(const pt_model *m, const pt_data *d, const char **names, int max) {
  if (pt_tree_active(d)) {  // integrated in its joint coordinates (tree.c), followers apart
    int k = 0;
    for (int i = 0; i < m->ndof; i++) {
      int follows = 0;
      for (int c = 0; c < m->ncoupler; c++) follows |= d->cpl_on && d->cpl_dof[2 * c] == i;
      if (follows) continue;
      if (k < max) names[k] = pt_coord_name(m, d->tree_coord[i]);
      k++;
    }
    return k;
  }
  if (!d->part_valid) return m->ndof;
  for (int i = 0; i < m->ndof && i < max; i++) names[i] = m->q_name[d->indep[i]];
  return m->ndof;
}
