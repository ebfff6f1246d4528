// shape.c: shapes, their world poses, support points and facing features (collide.h).
#include <math.h>
#include <string.h>

#include "collide_internal.h"
#include "ptu.h"
#include "tolerances.h"

static const char *const type_names[PT_SHAPE_NTYPES] = {"plane", "sphere", "capsule", "box",
                                                        "cylinder", "hull"};

const char *pt_shape_type_name(int type) {
  return type >= 0 && type < PT_SHAPE_NTYPES ? type_names[type] : "unknown";
}

void pt_collide_work_init(pt_collide_work *w) {
  memset(w, 0, sizeof(*w));
  w->clip_max = 2 * PT_HULL_MAX_FACE_VERT + 8;
}

static int finite_positive(double x) { return isfinite(x) && x > 0; }

int pt_shape_init(pt_shape *s, pt_error *err) {
  if (s->type < 0 || s->type >= PT_SHAPE_NTYPES)
    return pt_error_set(err, PT_EINVAL, "unknown shape type %d", s->type);
  const char *name = type_names[s->type];
  for (int k = 0; k < 3; k++)
    if (!isfinite(s->pos[k]) || !isfinite(s->size[k]))
      return pt_error_set(err, PT_EINVAL, "%s: position and size must be finite", name);
  double qn = 0;
  for (int k = 0; k < 4; k++) {
    if (!isfinite(s->quat[k]))
      return pt_error_set(err, PT_EINVAL, "%s: orientation must be finite", name);
    qn += s->quat[k] * s->quat[k];
  }
  qn = sqrt(qn);
  if (qn < PT_TOL_LENGTH)
    return pt_error_set(err, PT_EINVAL, "%s: orientation quaternion is zero", name);
  for (int k = 0; k < 4; k++) s->quat[k] /= qn;
  const double *z = s->size;
  switch (s->type) {
  case PT_SHAPE_PLANE:
    s->rbound = INFINITY;
    return PT_OK;
  case PT_SHAPE_SPHERE:
    if (!finite_positive(z[0]))
      return pt_error_set(err, PT_EINVAL, "sphere: radius must be > 0, got %g", z[0]);
    s->rbound = z[0];
    return PT_OK;
  case PT_SHAPE_CAPSULE:   // a capsule of zero length is a sphere
    if (!finite_positive(z[0]) || !(z[1] >= 0))
      return pt_error_set(err, PT_EINVAL, "capsule: radius must be > 0 and length >= 0, got "
                          "%g and %g", z[0], 2 * z[1]);
    s->rbound = z[0] + z[1];
    return PT_OK;
  case PT_SHAPE_BOX:
    if (!finite_positive(z[0]) || !finite_positive(z[1]) || !finite_positive(z[2]))
      return pt_error_set(err, PT_EINVAL, "box: every size must be > 0, got %g %g %g",
                          2 * z[0], 2 * z[1], 2 * z[2]);
    s->rbound = ptu_norm3(z);
    return PT_OK;
  case PT_SHAPE_CYLINDER:
    if (!finite_positive(z[0]) || !finite_positive(z[1]))
      return pt_error_set(err, PT_EINVAL, "cylinder: radius and length must be > 0, got %g "
                          "and %g", z[0], 2 * z[1]);
    s->rbound = sqrt(z[0] * z[0] + z[1] * z[1]);
    return PT_OK;
  case PT_SHAPE_HULL:
    if (!s->hull || s->hull->nvert < 4 || s->hull->nface < 4)
      return pt_error_set(err, PT_EINVAL, "hull: no hull (it needs 4 vertices at least)");
    s->rbound = 0;
    for (int i = 0; i < s->hull->nvert; i++) {
      double r = ptu_norm3(s->hull->vert + 3 * i);
      if (r > s->rbound) s->rbound = r;
    }
    return PT_OK;
  }
  return PT_EINVAL;
}

void pt_shape_world(pt_pose *res, const pt_shape *s, const double body_pos[3],
                    const double body_rot[9]) {
  double R[9];
  ptu_quat2mat(R, s->quat);
  if (!body_rot) {
    ptu_copy(res->pos, s->pos, 3);
    ptu_copy(res->rot, R, 9);
    return;
  }
  double d[3];
  ptu_mul_mat_vec3(d, body_rot, s->pos);
  ptu_add3(res->pos, body_pos, d);
  ptu_mul_mat3(res->rot, body_rot, R);
}

void perp_unit(double res[3], const double n[3]) {
  double f[3], g[3];
  ptu_perp_frame(f, g, n);
  ptu_copy(res, f, 3);
}

double shape_radius(const pt_shape *s) {
  return s->type == PT_SHAPE_SPHERE || s->type == PT_SHAPE_CAPSULE ? s->size[0] : 0;
}

// local point -> world
static void to_world(double res[3], const pt_pose *p, const double x[3]) {
  double t[3];
  ptu_mul_mat_vec3(t, p->rot, x);
  ptu_add3(res, p->pos, t);
}

// Corner of a box from its sign bits (bit k set: +size[k]).
static void box_corner(double res[3], const double h[3], int bits) {
  for (int k = 0; k < 3; k++) res[k] = (bits >> k & 1) ? h[k] : -h[k];
}

int shape_support(double res[3], const pt_shape *s, const pt_pose *p, const double d[3]) {
  double dl[3], x[3] = {0, 0, 0};
  ptu_mul_matT_vec3(dl, p->rot, d);
  const double *h = s->size;
  int id = 0;
  switch (s->type) {
  case PT_SHAPE_CAPSULE:
    id = dl[2] >= 0;
    x[2] = id ? h[1] : -h[1];
    break;
  case PT_SHAPE_BOX:
    for (int k = 0; k < 3; k++) id |= (dl[k] >= 0) << k;
    box_corner(x, h, id);
    break;
  case PT_SHAPE_CYLINDER: {
    double rho = sqrt(dl[0] * dl[0] + dl[1] * dl[1]);
    id = dl[2] >= 0;
    x[2] = id ? h[1] : -h[1];
    if (rho > PT_TOL_COINCIDENT * (fabs(dl[2]) + rho)) {
      x[0] = h[0] * dl[0] / rho;
      x[1] = h[0] * dl[1] / rho;
    } else {
      x[0] = h[0];   // along the axis every cap point supports: a fixed one
    }
    break;
  }
  case PT_SHAPE_HULL: {
    const pt_hull *hl = s->hull;
    double best = -INFINITY;
    for (int i = 0; i < hl->nvert; i++) {
      double v = ptu_dot3(hl->vert + 3 * i, dl);
      if (v > best) best = v, id = i;
    }
    ptu_copy(x, hl->vert + 3 * id, 3);
    break;
  }
  default:   // sphere: its centre; plane: never asked
    break;
  }
  to_world(res, p, x);
  return id;
}

// sin of the angle between unit vectors with cosine c is below tol
static int faces(double c) { return 1 - c * c < PT_TOL_COLLIDE_FEATURE * PT_TOL_COLLIDE_FEATURE; }

static void box_feature(feature *f, const pt_shape *s, const pt_pose *p, const double ul[3]) {
  const double *h = s->size;
  int i = 0;
  for (int k = 1; k < 3; k++)
    if (fabs(ul[k]) > fabs(ul[i])) i = k;
  int signs = 0;
  for (int k = 0; k < 3; k++) signs |= (ul[k] >= 0) << k;
  if (faces(ul[i])) {   // face i: corners counter-clockwise about its outward normal
    int j = (i + 1) % 3, k = (i + 2) % 3, plus = ul[i] >= 0;
    static const int sj[4] = {0, 1, 1, 0}, sk[4] = {0, 0, 1, 1};
    f->n = 4;
    for (int c = 0; c < 4; c++) {
      int q = plus ? c : 3 - c;
      int bits = (plus << i) | (sj[q] << j) | (sk[q] << k);
      double x[3];
      box_corner(x, h, bits);
      to_world(f->p[c], p, x);
      f->id[c] = bits;
    }
    pose_axis(f->normal, p, i);
    if (!plus) ptu_scl3(f->normal, f->normal, -1);
    f->face = 2 * i + plus;
    return;
  }
  int edge = -1, nsmall = 0;
  for (int k = 0; k < 3; k++)
    if (fabs(ul[k]) < PT_TOL_COLLIDE_FEATURE) edge = k, nsmall++;
  double x[3];
  if (nsmall == 1) {   // the edge along axis `edge`
    f->n = 2;
    for (int c = 0; c < 2; c++) {
      int bits = (signs & ~(1 << edge)) | (c << edge);
      box_corner(x, h, bits);
      to_world(f->p[c], p, x);
      f->id[c] = bits;
    }
    return;
  }
  f->n = 1;
  box_corner(x, h, signs);
  to_world(f->p[0], p, x);
  f->id[0] = signs;
}

static void cylinder_feature(feature *f, const pt_shape *s, const pt_pose *p, const double u[3],
                             const double ul[3]) {
  double r = s->size[0], h = s->size[1], a[3];
  pose_axis(a, p, 2);
  int top = ul[2] >= 0;
  if (faces(ul[2])) {   // the cap: PT_CYL_RIM rim points at fixed angles of the shape's frame
    f->n = PT_CYL_RIM;
    for (int c = 0; c < PT_CYL_RIM; c++) {
      int k = top ? c : PT_CYL_RIM - 1 - c;
      double th = 2 * M_PI * k / PT_CYL_RIM;
      double x[3] = {r * cos(th), r * sin(th), top ? h : -h};
      to_world(f->p[c], p, x);
      f->id[c] = top * PT_CYL_RIM + k;
    }
    ptu_scl3(f->normal, a, top ? 1 : -1);
    f->face = top;
    return;
  }
  // the side towards u: u's part across the axis (not zero here: u is not along the axis)
  double v[3], t[3];
  ptu_scl3(t, a, ptu_dot3(u, a));
  ptu_sub3(v, u, t);
  ptu_scl3(v, v, r / ptu_norm3(v));
  if (fabs(ul[2]) < PT_TOL_COLLIDE_FEATURE) {   // the side line, from cap to cap
    f->n = 2;
    for (int c = 0; c < 2; c++) {
      ptu_scl3(t, a, c ? h : -h);
      ptu_add3(f->p[c], p->pos, t);
      ptu_add3(f->p[c], f->p[c], v);
      f->id[c] = 2 * PT_CYL_RIM + c;
    }
    return;
  }
  f->n = 1;   // the rim point of the cap towards u
  ptu_scl3(t, a, top ? h : -h);
  ptu_add3(f->p[0], p->pos, t);
  ptu_add3(f->p[0], f->p[0], v);
  f->id[0] = 2 * PT_CYL_RIM + top;
}

static void hull_feature(feature *f, const pt_shape *s, const pt_pose *p,
                         const double ul[3]) {
  const pt_hull *hl = s->hull;
  int best = 0;
  for (int i = 1; i < hl->nface; i++)
    if (ptu_dot3(hl->face_plane + 4 * i, ul) > ptu_dot3(hl->face_plane + 4 * best, ul))
      best = i;
  if (faces(ptu_dot3(hl->face_plane + 4 * best, ul))) {
    const int *fv = hl->face_vert + hl->face_adr[best];
    f->n = hl->face_num[best];
    for (int c = 0; c < f->n; c++) {
      to_world(f->p[c], p, hl->vert + 3 * fv[c]);
      f->id[c] = fv[c];
    }
    ptu_mul_mat_vec3(f->normal, p->rot, hl->face_plane + 4 * best);
    f->face = best;
    return;
  }
  // an edge across u: both ends within the tolerance's angle of the support plane
  double top = -INFINITY;
  int sv = 0;
  for (int i = 0; i < hl->nvert; i++) {
    double v = ptu_dot3(hl->vert + 3 * i, ul);
    if (v > top) top = v, sv = i;
  }
  for (int fc = 0; fc < hl->nface; fc++) {
    const int *fv = hl->face_vert + hl->face_adr[fc];
    for (int i = 0; i < hl->face_num[fc]; i++) {
      int v0 = fv[i], v1 = fv[(i + 1) % hl->face_num[fc]];
      if (v0 != sv && v1 != sv) continue;
      double e[3];
      ptu_sub3(e, hl->vert + 3 * v1, hl->vert + 3 * v0);
      double lim = PT_TOL_COLLIDE_FEATURE * ptu_norm3(e);
      if (top - ptu_dot3(hl->vert + 3 * v0, ul) > lim ||
          top - ptu_dot3(hl->vert + 3 * v1, ul) > lim)
        continue;
      f->n = 2;
      int lo = v0 < v1 ? v0 : v1, hi = v0 < v1 ? v1 : v0;   // the same edge from either face
      to_world(f->p[0], p, hl->vert + 3 * lo);
      to_world(f->p[1], p, hl->vert + 3 * hi);
      f->id[0] = lo, f->id[1] = hi;
      return;
    }
  }
  f->n = 1;
  f->id[0] = sv;
  to_world(f->p[0], p, hl->vert + 3 * sv);
}

void shape_feature(feature *f, const pt_shape *s, const pt_pose *p, const double u[3]) {
  double ul[3];
  ptu_mul_matT_vec3(ul, p->rot, u);
  f->radius = shape_radius(s);
  f->face = 0;
  ptu_zero(f->normal, 3);
  switch (s->type) {
  case PT_SHAPE_SPHERE:
    f->n = 1;
    ptu_copy(f->p[0], p->pos, 3);
    f->id[0] = 0;
    return;
  case PT_SHAPE_CAPSULE: {
    double t[3], a[3];
    pose_axis(a, p, 2);
    int both = fabs(ul[2]) < PT_TOL_COLLIDE_FEATURE;
    f->n = both ? 2 : 1;
    for (int c = 0; c < f->n; c++) {
      int end = both ? c : ul[2] >= 0;
      ptu_scl3(t, a, end ? s->size[1] : -s->size[1]);
      ptu_add3(f->p[c], p->pos, t);
      f->id[c] = end;
    }
    return;
  }
  case PT_SHAPE_BOX:
    box_feature(f, s, p, ul);
    return;
  case PT_SHAPE_CYLINDER:
    cylinder_feature(f, s, p, u, ul);
    return;
  case PT_SHAPE_HULL:
    hull_feature(f, s, p, ul);
    return;
  default:
    f->n = 0;
  }
}
