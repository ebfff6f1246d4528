// manifold.c: contact points of two touching shapes. Closed-form pairs and the convex path both
// end here: the features of the two shapes that face each other are clipped against each other
// (Sutherland and Hodgman, "Reentrant polygon clipping", 1974), each point with its own exact
// gap, so that a box on a box gets its four corners and a capsule on a capsule two points.
#include <math.h>
#include <string.h>

#include "collide_internal.h"
#include "ptu.h"
#include "tolerances.h"

void contact_set(pt_contact *c, const double pa[3], const double n[3], double g, uint32_t id) {
  for (int k = 0; k < 3; k++) {
    c->pos[k] = pa[k] + 0.5 * g * n[k];
    c->normal[k] = n[k];
  }
  c->gap = g;
  c->id = id;
  c->pair = -1;
}

// ---------------------------------------------------------------------------------------------
// Choosing at most four points.

int reduce4(int out[4], int n, void (*get)(const void *ctx, int i, double p[3], double *gap),
            const void *ctx, const double n3[3], double margin) {
  double p0[3], p1[3], x[3], d[3], e[3], c[3], g;
  int i0 = -1, count = 0;
  double best = INFINITY;
  for (int i = 0; i < n; i++) {   // the deepest
    get(ctx, i, x, &g);
    if (g >= margin) continue;
    count++;
    if (g < best) best = g, i0 = i;
  }
  if (count <= 4) {
    int k = 0;
    for (int i = 0; i < n && k < 4; i++) {
      get(ctx, i, x, &g);
      if (g < margin) out[k++] = i;
    }
    return k;
  }
  get(ctx, i0, p0, &g);
  int i1 = -1;
  best = -1;
  for (int i = 0; i < n; i++) {   // the farthest from it
    get(ctx, i, x, &g);
    if (g >= margin) continue;
    ptu_sub3(d, x, p0);
    double r = ptu_dot3(d, d);
    if (r > best) best = r, i1 = i;
  }
  get(ctx, i1, p1, &g);
  ptu_sub3(e, p1, p0);
  int i2 = -1, i3 = -1;
  double hi = -INFINITY, lo = INFINITY;
  for (int i = 0; i < n; i++) {   // the farthest on each side of their line
    if (i == i0 || i == i1) continue;
    get(ctx, i, x, &g);
    if (g >= margin) continue;
    ptu_sub3(d, x, p0);
    ptu_cross3(c, e, d);
    double side = ptu_dot3(c, n3);
    if (side > hi) hi = side, i2 = i;
    if (side < lo) lo = side, i3 = i;
  }
  int k = 0, pick[4] = {i0, i1, i2, i3};
  if (i3 == i2) pick[3] = -1;
  // ascending, no repeats
  for (int i = 0; i < n && k < 4; i++)
    for (int j = 0; j < 4; j++)
      if (pick[j] == i) {
        out[k++] = i;
        break;
      }
  return k;
}

static void get_contact(const void *ctx, int i, double p[3], double *gap) {
  const pt_contact *c = (const pt_contact *)ctx + i;
  ptu_copy(p, c->pos, 3);
  *gap = c->gap;
}

int manifold_reduce(pt_contact *con, int n) {
  if (n <= 4) return n;
  int keep[4];
  int k = reduce4(keep, n, get_contact, con, con[0].normal, INFINITY);
  for (int j = 0; j < k; j++) con[j] = con[keep[j]];   // keep[j] >= j: no overwrite first
  return k;
}

// ---------------------------------------------------------------------------------------------
// Segments.

void segment_closest(double *s, double *t, const double p0[3], const double p1[3],
                     const double q0[3], const double q1[3]) {
  double d1[3], d2[3], r[3];
  ptu_sub3(d1, p1, p0);
  ptu_sub3(d2, q1, q0);
  ptu_sub3(r, p0, q0);
  double a = ptu_dot3(d1, d1), e = ptu_dot3(d2, d2), f = ptu_dot3(d2, r);
  double tiny = PT_TOL_COINCIDENT * PT_TOL_COINCIDENT;
  if (a <= tiny && e <= tiny) {
    *s = *t = 0;
    return;
  }
  if (a <= tiny) {
    *s = 0;
    *t = fmin(fmax(f / e, 0), 1);
    return;
  }
  double c = ptu_dot3(d1, r);
  if (e <= tiny) {
    *t = 0;
    *s = fmin(fmax(-c / a, 0), 1);
    return;
  }
  double b = ptu_dot3(d1, d2), den = a * e - b * b;
  // parallel (den ~ 0): any s; take 0 and let the clamps below settle t
  double ss = den > 1e-14 * a * e ? fmin(fmax((b * f - c * e) / den, 0), 1) : 0;
  double tt = (b * ss + f) / e;
  if (tt < 0) {
    tt = 0;
    ss = fmin(fmax(-c / a, 0), 1);
  } else if (tt > 1) {
    tt = 1;
    ss = fmin(fmax((b - c) / a, 0), 1);
  }
  *s = ss;
  *t = tt;
}

static void lerp3(double res[3], const double a[3], const double b[3], double s) {
  for (int k = 0; k < 3; k++) res[k] = a[k] + s * (b[k] - a[k]);
}

// One contact between point x on A's core (radius ra) and y on B's (radius rb): along their
// difference, or (along: edges of solids, which may pass through each other) along normal nf.
static int point_pair(pt_contact *c, const double x[3], const double y[3], double ra, double rb,
                      const double nf[3], int along, double margin, uint32_t id) {
  double d[3], n[3], pa[3];
  ptu_sub3(d, y, x);
  double dist = ptu_norm3(d);
  if (along) {
    ptu_copy(n, nf, 3);
    dist = ptu_dot3(d, nf);
  } else if (dist > PT_TOL_COINCIDENT) {
    ptu_scl3(n, d, 1 / dist);
  } else {
    ptu_copy(n, nf, 3);
  }
  double g = dist - ra - rb;
  if (g >= margin) return 0;
  for (int k = 0; k < 3; k++) pa[k] = x[k] + ra * n[k];
  contact_set(c, pa, n, g, id);
  return 1;
}

int segment_pair(pt_contact *con, const double p0[3], const double p1[3], double ra,
                 const double q0[3], const double q1[3], double rb, const double fallback[3],
                 int along, double margin, int base) {
  double s, t, x[3], y[3], u[3], v[3];
  segment_closest(&s, &t, p0, p1, q0, q1);
  lerp3(x, p0, p1, s);
  lerp3(y, q0, q1, t);
  pt_contact closest;
  int nc = point_pair(&closest, x, y, ra, rb, fallback, along, INFINITY,
                      PT_FEATURE(base, base));
  ptu_sub3(u, p1, p0);
  ptu_sub3(v, q1, q0);
  double la = ptu_norm3(u), lb = ptu_norm3(v), cr[3];
  ptu_cross3(cr, u, v);
  int n = 0;
  double scale = la + lb + ra + rb;
  if (la > PT_TOL_COINCIDENT * scale && lb > PT_TOL_COINCIDENT * scale &&
      ptu_norm3(cr) < PT_TOL_COLLIDE_FEATURE * la * lb) {
    // near parallel: the overlap of q's projection on p, if any, gives two points
    ptu_scl3(u, u, 1 / la);
    double d0[3], d1[3];
    ptu_sub3(d0, q0, p0);
    ptu_sub3(d1, q1, p0);
    double a0 = ptu_dot3(d0, u), a1 = ptu_dot3(d1, u);
    double lo = fmax(0, fmin(a0, a1)), hi = fmin(la, fmax(a0, a1));
    if (hi - lo > PT_TOL_COLLIDE_FEATURE * scale) {
      double ends[2] = {lo, hi}, gmin = INFINITY;
      for (int e = 0; e < 2; e++) {
        double xe[3], ye[3], tt, ss;
        ptu_scl3(xe, u, ends[e]);
        ptu_add3(xe, p0, xe);
        segment_closest(&ss, &tt, xe, xe, q0, q1);
        lerp3(ye, q0, q1, tt);
        pt_contact ce;
        point_pair(&ce, xe, ye, ra, rb, closest.normal, along, INFINITY,
                   PT_FEATURE(base + 1 + e, base + 1 + e));
        gmin = fmin(gmin, ce.gap);
        if (ce.gap < margin) con[n++] = ce;
      }
      // the closest points too when they are deeper than both ends (segments crossing at a
      // small angle)
      if (closest.gap < gmin - PT_TOL_COLLIDE_FEATURE * 1e-6 * scale && closest.gap < margin)
        con[n++] = closest;
      return n;
    }
  }
  if (nc && closest.gap < margin) con[n++] = closest;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Feature clipping.

// Clips polygon (or segment, or point) in[0..n) against the half-space (x - o).s <= 0; open:
// a segment (no closing edge). Intersection points get id 0x8000 | plane << 7 | edge.
static int clip_half(double (*out)[3], int *oid, double (*in)[3], const int *iid, int n,
                     const double o[3], const double s[3], int plane, int open) {
  int m = 0;
  if (n == 1) {
    double d[3];
    ptu_sub3(d, in[0], o);
    if (ptu_dot3(d, s) <= 0) {
      ptu_copy(out[0], in[0], 3);
      oid[0] = iid[0];
      m = 1;
    }
    return m;
  }
  int nedge = open ? n - 1 : n;
  for (int i = 0; i < n; i++) {
    double d[3];
    ptu_sub3(d, in[i], o);
    double di = ptu_dot3(d, s);
    if (di <= 0) {
      ptu_copy(out[m], in[i], 3);
      oid[m++] = iid[i];
    }
    if (i >= nedge) continue;
    int j = (i + 1) % n;
    ptu_sub3(d, in[j], o);
    double dj = ptu_dot3(d, s);
    if ((di < 0 && dj > 0) || (di > 0 && dj < 0)) {
      lerp3(out[m], in[i], in[j], di / (di - dj));
      oid[m++] = 0x8000 | (plane & 0x7f) << 7 | (i & 0x7f);
    }
  }
  return m;
}

// Incident feature fi clipped by the side planes of reference face fr (normal nr): the points
// left into w->clip[*which].
static int clip_feature(int *which, const feature *fr, const feature *fi, pt_collide_work *w) {
  int cur = 0, n = fi->n;
  memcpy(w->clip[0], fi->p, sizeof(double[3]) * (size_t)n);
  memcpy(w->clip_id[0], fi->id, sizeof(int) * (size_t)n);
  for (int k = 0; k < fr->n && n > 0; k++) {
    double e[3], s[3];
    ptu_sub3(e, fr->p[(k + 1) % fr->n], fr->p[k]);
    ptu_cross3(s, e, fr->normal);   // outward for a counter-clockwise polygon about normal
    n = clip_half(w->clip[!cur], w->clip_id[!cur], w->clip[cur], w->clip_id[cur], n, fr->p[k],
                  s, k, fi->n == 2);
    cur = !cur;
  }
  *which = cur;
  return n;
}

typedef struct {
  double (*x)[3];      // clipped incident points
  const feature *fr;   // the reference face
  double radius;       // both shapes' radii
} clip_ctx;

static void clip_get(const void *c, int i, double p[3], double *gap) {
  const clip_ctx *ctx = c;
  double d[3];
  ptu_copy(p, ctx->x[i], 3);
  ptu_sub3(d, p, ctx->fr->p[0]);
  *gap = ptu_dot3(d, ctx->fr->normal) - ctx->radius;
}

int manifold_clip(pt_contact *con, const pt_shape *a, const pt_pose *pa, const pt_shape *b,
                  const pt_pose *pb, const double n[3], const double wa[3], const double wb[3],
                  double g, double margin, pt_collide_work *w) {
  feature fa = {.p = w->feat_p[0], .id = w->feat_id[0]};
  feature fb = {.p = w->feat_p[1], .id = w->feat_id[1]};
  double mn[3];
  ptu_scl3(mn, n, -1);
  shape_feature(&fa, a, pa, n);
  shape_feature(&fb, b, pb, mn);
  int count = 0;
  int face_a = fa.n >= 3, face_b = fb.n >= 3;
  if (face_a || face_b) {
    // the face better aligned with n; A's unless B's is clearly better (two faces parallel to
    // rounding would otherwise trade places from step to step, and the contact ids with them)
    int ref_a = face_a && (!face_b || ptu_dot3(fa.normal, n) >= -ptu_dot3(fb.normal, n) - 1e-9);
    feature *fr = ref_a ? &fa : &fb, *fi = ref_a ? &fb : &fa;
    // the incident feature again, facing the reference face exactly
    double toward[3];
    ptu_scl3(toward, fr->normal, -1);
    shape_feature(fi, ref_a ? b : a, ref_a ? pb : pa, toward);
    int which;
    int m = clip_feature(&which, fr, fi, w);
    double nout[3];
    ptu_scl3(nout, fr->normal, ref_a ? 1 : -1);
    clip_ctx ctx = {w->clip[which], fr, fi->radius + fr->radius};
    double gmin = INFINITY, x[3], gi;
    for (int i = 0; i < m; i++) {
      clip_get(&ctx, i, x, &gi);
      gmin = fmin(gmin, gi);
    }
    int keep[4];
    int k4 = reduce4(keep, m, clip_get, &ctx, nout, margin);
    for (int j = 0; j < k4; j++) {
      double surf[3], *xi = w->clip[which][keep[j]];
      clip_get(&ctx, keep[j], x, &gi);
      double dist = gi + ctx.radius;
      if (ref_a)   // A's surface: the point's projection on A's face
        for (int k = 0; k < 3; k++) surf[k] = xi[k] - dist * fr->normal[k];
      else   // A's surface: the incident point, moved out by A's radius towards B
        for (int k = 0; k < 3; k++) surf[k] = xi[k] - fi->radius * fr->normal[k];
      int id = w->clip_id[which][keep[j]];
      contact_set(con + count++, surf, nout, gi,
                  ref_a ? PT_FEATURE(fr->face, id) : PT_FEATURE(id, fr->face));
    }
    // the deepest point GJK/EPA found, when no clipped point comes near it
    if (g < margin && (count == 0 || g < gmin - 1e-9 * (a->rbound + b->rbound))) {
      double surf[3];
      for (int k = 0; k < 3; k++) surf[k] = wa[k] + shape_radius(a) * n[k];
      contact_set(con + count++, surf, n, g, PT_FEATURE(0xffff, 0xffff));
    }
    return manifold_reduce(con, count);
  }
  if (fa.n == 2 && fb.n == 2)
    return segment_pair(con, fa.p[0], fa.p[1], fa.radius, fb.p[0], fb.p[1], fb.radius, n, 1,
                        margin, 0xfff0);
  if (g >= margin) return 0;
  double surf[3];
  for (int k = 0; k < 3; k++) surf[k] = wa[k] + shape_radius(a) * n[k];
  (void)wb;
  contact_set(con, surf, n, g, PT_FEATURE(fa.n == 1 ? fa.id[0] : 0xfffe,
                                          fb.n == 1 ? fb.id[0] : 0xfffe));
  return 1;
}
