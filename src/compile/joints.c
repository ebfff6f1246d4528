// joints.c: the spec's joints into constraint rows and coordinates (model compilation,
// compile.c). Each joint's rows and coordinates come from its class (pt_joint_classes,
// core/joint.c); here its global t = 0 geometry becomes the body-fixed vectors the rows read
// (joint_geom: points, the joint frame h, f, g on each body), then the user's coordinates
// (point positions, distances), and the check of where joint limits can be enforced.
#include <stdio.h>
#include <string.h>

#include "compile.h"
#include "ptu.h"
#include "tolerances.h"

static int unit(double out[3], const double v[3]) {
  double n = ptu_norm3(v);
  if (!(n > PT_TOL_LENGTH) || !isfinite(n)) return -1;
  ptu_scl3(out, v, 1 / n);
  return 0;
}

static void add_coord(pt_model *m, const char *name, pt_meas_type type, int b1, int b2,
                      int joint) {
  const int i = m->ncoord++;
  snprintf(m->coord_name[i], PT_COORD_NAME_MAX, "%s", name);
  m->meas_type[i] = type;
  m->meas_body[2 * i] = b1;
  m->meas_body[2 * i + 1] = b2;
  m->meas_joint[i] = joint;
}

// A refusal of joint j (sj) of spec s, `FILE:LINE: joints[j] "name": what`.
#define JOINT_FAIL(...) \
  pt_spec_fail(err, PT_EMODEL, s, sj->line, "joints", j, sj->name, __VA_ARGS__)

// Joint j's name, bodies (*b1, *b2), damping, friction and limits, checked and copied.
static int joint_properties(pt_model *m, const pt_spec *s, int j, int *b1, int *b2,
                            pt_error *err) {
  const pt_spec_joint *sj = s->joints + j;
  for (int k = 0; k < j; k++)
    if (strcmp(s->joints[k].name, sj->name) == 0) return JOINT_FAIL("duplicate joint name");
  if ((unsigned)sj->type >= PT_JOINT_NTYPES) return JOINT_FAIL("unknown joint type");
  *b1 = pt_spec_find_body(s, sj->body1);
  *b2 = pt_spec_find_body(s, sj->body2);
  if (*b1 == -2) return JOINT_FAIL("unknown body \"%s\"", sj->body1);
  if (*b2 == -2) return JOINT_FAIL("unknown body \"%s\"", sj->body2);
  if (*b1 == *b2) return JOINT_FAIL("body1 and body2 are the same body");
  snprintf(m->joint_name[j], PT_NAME_MAX, "%s", sj->name);
  m->joint_type[j] = sj->type;
  m->joint_body[2 * j] = *b1;
  m->joint_body[2 * j + 1] = *b2;
  m->joint_damping[j] = sj->damping;
  if (!(sj->damping >= 0)) return JOINT_FAIL("damping must be >= 0");
  m->joint_friction[2 * j] = sj->friction;
  m->joint_friction[2 * j + 1] =
      sj->friction_velocity != 0 ? sj->friction_velocity : PT_FRICTION_VELOCITY;
  if (!(sj->friction >= 0 && isfinite(sj->friction)))
    return JOINT_FAIL("friction must be >= 0");
  if (!(m->joint_friction[2 * j + 1] > 0 && isfinite(m->joint_friction[2 * j + 1])))
    return JOINT_FAIL("friction_velocity must be > 0");
  if (sj->friction > 0 && sj->type == PT_JOINT_SPHERICAL)
    return JOINT_FAIL("friction needs a joint with coordinates (not spherical)");
  m->joint_limited[j] = sj->has_limits;
  m->joint_limit[2 * j] = sj->limits[0];
  m->joint_limit[2 * j + 1] = sj->limits[1];
  if (sj->has_limits) {
    if (sj->type != PT_JOINT_REVOLUTE && sj->type != PT_JOINT_PRISMATIC)
      return JOINT_FAIL("limits apply to revolute and prismatic joints only");
    if (!(isfinite(sj->limits[0]) && isfinite(sj->limits[1]) && sj->limits[0] < sj->limits[1]))
      return JOINT_FAIL("limits: lower must be less than upper, both finite (lower = %g, "
                        "upper = %g)", sj->limits[0], sj->limits[1]);
    m->nlimit++;
  }
  return PT_OK;
}

// Joint j's rows from its class (joint.c), from row `row` on.
static void joint_rows(pt_model *m, int j, const pt_joint_class *cls, int row, int b1, int b2) {
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
}

// Joint j's frame at t = 0 in global axes from the spec's axes: h the axis, f and g across it,
// and hb2 the axis on body2 (a universal joint's second axis, h for the others).
static int joint_frame(const pt_spec *s, int j, double h[3], double f[3], double g[3],
                       double hb2[3], pt_error *err) {
  const pt_spec_joint *sj = s->joints + j;
  double h1[3] = {0, 0, 1}, h2[3] = {0, 0, 1};
  if (sj->type == PT_JOINT_UNIVERSAL) {
    if (unit(h1, sj->axis1) || unit(h2, sj->axis2))
      return JOINT_FAIL("axis1/axis2 must have non-zero length");
    if (fabs(ptu_dot3(h1, h2)) > PT_TOL_PERPENDICULAR)
      return JOINT_FAIL("axis1 and axis2 must be perpendicular at t=0");
    ptu_copy(h, h1, 3);
  } else if (sj->type == PT_JOINT_FIXED || sj->type == PT_JOINT_SPHERICAL) {
    h[0] = h[1] = 0;
    h[2] = 1;
  } else if (unit(h, sj->axis)) {
    return JOINT_FAIL("axis must have non-zero length");
  }
  const int planar_x = sj->type == PT_JOINT_PLANAR && ptu_norm3(sj->axis1) > 0;
  if (sj->type == PT_JOINT_FIXED || sj->type == PT_JOINT_SPHERICAL) {
    f[0] = 1, f[1] = 0, f[2] = 0, g[0] = 0, g[1] = 1, g[2] = 0;
  } else if (planar_x) {  // the planar joint's x direction, given
    unit(f, sj->axis1);
    if (fabs(ptu_dot3(f, h)) > PT_TOL_PERPENDICULAR)
      return JOINT_FAIL("axis1 (the x direction) must be perpendicular to axis (the plane's "
                        "normal)");
    ptu_scl3(g, h, ptu_dot3(f, h));  // exactly in the plane
    ptu_sub3(f, f, g);
    unit(f, f);
    ptu_cross3(g, h, f);
  } else {
    ptu_perp_frame(f, g, h);
  }
  ptu_copy(hb2, sj->type == PT_JOINT_UNIVERSAL ? h2 : h, 3);
  return PT_OK;
}

// Joint j's body-fixed vectors (joint_geom, pt_joint_vec): the joint point and the frame on
// each body, and each body's axis on the other.
static void joint_vectors(pt_model *m, int j, const double point[3], const double h[3],
                       const double f[3], const double g[3], const double hb2[3]) {
  const int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
  double *G = m->joint_geom + PT_JOINT_GEOM * j;
  pt_body_fixed_point(m, b1, point, G + 3 * PT_JV_S1);
  pt_body_fixed_point(m, b2, point, G + 3 * PT_JV_S2);
  pt_body_fixed_vector(m, b1, h, G + 3 * PT_JV_H1);
  pt_body_fixed_vector(m, b1, f, G + 3 * PT_JV_F1);
  pt_body_fixed_vector(m, b1, g, G + 3 * PT_JV_G1);
  pt_body_fixed_vector(m, b2, hb2, G + 3 * PT_JV_H2);
  pt_body_fixed_vector(m, b2, f, G + 3 * PT_JV_F2);
  pt_body_fixed_vector(m, b2, g, G + 3 * PT_JV_G2);
  pt_body_fixed_vector(m, b1, hb2, G + 3 * PT_JV_H2_ON1);
  pt_body_fixed_vector(m, b2, h, G + 3 * PT_JV_H1_ON2);
}

// Joint j's coordinates (zero at t=0): the class's measures on the joint's vectors.
static void joint_coords(pt_model *m, int j, const char *joint_name, const pt_joint_class *cls) {
  const double *G = m->joint_geom + PT_JOINT_GEOM * j;
  m->joint_coord_adr[j] = cls->ncoord ? m->ncoord : -1;
  for (int k = 0; k < cls->ncoord; k++) {
    const pt_coord_def *cd = &cls->coord[k];
    char name[PT_COORD_NAME_MAX];
    if (cd->suffix[0])
      snprintf(name, sizeof(name), "%s.%s", joint_name, cd->suffix);
    else
      snprintf(name, sizeof(name), "%s", joint_name);
    add_coord(m, name, (pt_meas_type)cd->meas, m->joint_body[2 * j], m->joint_body[2 * j + 1], j);
    double *mg = m->meas_geom + PT_MEAS_GEOM * (m->ncoord - 1);
    for (int v = 0; v < 3; v++) ptu_copy(mg + 3 * v, G + 3 * cd->vec[v], 3);
  }
}

#undef JOINT_FAIL

int pt_compile_joints(pt_model *m, const pt_spec *s, pt_error *err) {
  int row = 0;
  m->ncoord = 0;
  for (int j = 0; j < s->njoint; j++) {
    const pt_spec_joint *sj = s->joints + j;
    int b1 = 0, b2 = 0;
    int rc = joint_properties(m, s, j, &b1, &b2, err);
    if (rc) return rc;
    const pt_joint_class *cls = &pt_joint_classes[sj->type];
    joint_rows(m, j, cls, row, b1, b2);
    row += cls->nrow;
    double h[3], f[3], g[3], hb2[3];
    rc = joint_frame(s, j, h, f, g, hb2, err);
    if (rc) return rc;
    joint_vectors(m, j, sj->point, h, f, g, hb2);
    joint_coords(m, j, sj->name, cls);
  }
  m->nrow_joint = row;
  m->njcoord = m->ncoord;
  return PT_OK;
}

int pt_compile_user_coords(pt_model *m, const pt_spec *s, pt_error *err) {
  for (int i = 0; i < s->ncoord; i++) {
    const pt_spec_coord *c = s->coords + i;
    if (pt_coord_index(m, c->name) >= 0)
      return pt_spec_fail(err, PT_EMODEL, s, c->line, "coordinates", i, c->name,
                          "duplicate coordinate name (joint coordinates count too)");
    if (c->type == PT_UCOORD_POINT_POSITION) {
      const int b = pt_spec_find_body(s, c->body);
      if (b == -2)
        return pt_spec_fail(err, PT_EMODEL, s, c->line, "coordinates", i, c->name,
                            "unknown body \"%s\"", c->body);
      if (c->component < 0 || c->component > 2)
        return pt_spec_fail(err, PT_EMODEL, s, c->line, "coordinates", i, c->name, "bad component");
      add_coord(m, c->name, PT_MEAS_POINT, b, PT_GROUND, -1);
      m->meas_comp[m->ncoord - 1] = c->component;
      pt_body_fixed_point(m, b, c->point, m->meas_geom + PT_MEAS_GEOM * (m->ncoord - 1));
    } else {
      const int b1 = pt_spec_find_body(s, c->body1), b2 = pt_spec_find_body(s, c->body2);
      if (b1 == -2 || b2 == -2)
        return pt_spec_fail(err, PT_EMODEL, s, c->line, "coordinates", i, c->name,
                            "unknown body \"%s\"", b1 == -2 ? c->body1 : c->body2);
      add_coord(m, c->name, PT_MEAS_DISTANCE, b1, b2, -1);
      double *mg = m->meas_geom + PT_MEAS_GEOM * (m->ncoord - 1);
      pt_body_fixed_point(m, b1, c->point1, mg);
      pt_body_fixed_point(m, b2, c->point2, mg + 3);
    }
  }
  return PT_OK;
}

// Measure index of a joint's coordinate for a motion/actuator/spring: `which` = "" (the
// joint's only coordinate of the requested kind) or a coordinate's suffix (of that kind).
// kind: 0 angle, 1 slide, 2 any.
int pt_joint_coord_of(const pt_model *m, int j, const char *which, int kind) {
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

// Joint limits are enforced on the tree partition only (limits.c): a model that is not a tree
// keeps them (check shows them) with one warning naming the joints.
void pt_compile_limits_check(pt_model *m, const pt_spec *s) {
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
  pt_model_warn(m,
                "joint limits not enforced (%s): limits are enforced on joints with one coordinate "
                "(revolute, prismatic, and each coordinate of the others)",
                names);
  m->limits_on = 0;
}
