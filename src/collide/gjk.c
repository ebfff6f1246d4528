// gjk.c: distance and penetration of two convex cores, bounded. GJK on the Minkowski
// difference M = A - B (Gilbert, Johnson and Keerthi 1988, with the closest-point regions of
// Ericson's "Real-Time Collision Detection", 5.1.5) gives the distance of separated cores; when
// M holds the origin, the expanding polytope algorithm (van den Bergen, "Proximity queries and
// penetration depth computation on 3D game objects", 2001) gives the penetration. Both loops
// have fixed caps and work in the caller's buffers (pt_collide_work).
#include <math.h>
#include <string.h>

#include "collide_internal.h"
#include "ptu.h"
#include "tolerances.h"

typedef struct {
  int n;
  double w[4][3], a[4][3], b[4][3];   // points of M and their witnesses on A and B
  double lam[4];                      // barycentric weights of the closest point
} simplex;

// Support point of M along d: w = sA(d) - sB(-d).
static void support(double w[3], double wa[3], double wb[3], const pt_shape *a,
                    const pt_pose *pa, const pt_shape *b, const pt_pose *pb, const double d[3]) {
  double md[3];
  ptu_scl3(md, d, -1);
  shape_support(wa, a, pa, d);
  shape_support(wb, b, pb, md);
  ptu_sub3(w, wa, wb);
}

static void keep(simplex *s, const int *idx, const double *lam, int n) {
  simplex t = *s;
  for (int i = 0; i < n; i++) {
    ptu_copy(s->w[i], t.w[idx[i]], 3);
    ptu_copy(s->a[i], t.a[idx[i]], 3);
    ptu_copy(s->b[i], t.b[idx[i]], 3);
    s->lam[i] = lam[i];
  }
  s->n = n;
}

// Closest point of the triangle (i, j, k) of s to the origin (Ericson 5.1.5): reduces s to the
// smallest sub-simplex holding it.
static void closest_triangle(simplex *s, int i, int j, int k) {
  const double *A = s->w[i], *B = s->w[j], *C = s->w[k];
  double ab[3], ac[3], ap[3], bp[3], cp[3];
  ptu_sub3(ab, B, A);
  ptu_sub3(ac, C, A);
  ptu_scl3(ap, A, -1);
  double d1 = ptu_dot3(ab, ap), d2 = ptu_dot3(ac, ap);
  if (d1 <= 0 && d2 <= 0) {
    keep(s, (int[]){i}, (double[]){1}, 1);
    return;
  }
  ptu_scl3(bp, B, -1);
  double d3 = ptu_dot3(ab, bp), d4 = ptu_dot3(ac, bp);
  if (d3 >= 0 && d4 <= d3) {
    keep(s, (int[]){j}, (double[]){1}, 1);
    return;
  }
  double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    double v = d1 / (d1 - d3);
    keep(s, (int[]){i, j}, (double[]){1 - v, v}, 2);
    return;
  }
  ptu_scl3(cp, C, -1);
  double d5 = ptu_dot3(ab, cp), d6 = ptu_dot3(ac, cp);
  if (d6 >= 0 && d5 <= d6) {
    keep(s, (int[]){k}, (double[]){1}, 1);
    return;
  }
  double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    double w = d2 / (d2 - d6);
    keep(s, (int[]){i, k}, (double[]){1 - w, w}, 2);
    return;
  }
  double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    keep(s, (int[]){j, k}, (double[]){1 - w, w}, 2);
    return;
  }
  double den = va + vb + vc;
  if (!(den > 0)) {   // degenerate triangle: its best edge
    keep(s, (int[]){i, j}, (double[]){0.5, 0.5}, 2);
    return;
  }
  double v = vb / den, w = vc / den;
  keep(s, (int[]){i, j, k}, (double[]){1 - v - w, v, w}, 3);
}

static void closest_segment(simplex *s) {
  double d[3];
  ptu_sub3(d, s->w[1], s->w[0]);
  double dd = ptu_dot3(d, d);
  double t = dd > 0 ? -ptu_dot3(s->w[0], d) / dd : 0;
  if (t <= 0)
    keep(s, (int[]){0}, (double[]){1}, 1);
  else if (t >= 1)
    keep(s, (int[]){1}, (double[]){1}, 1);
  else
    keep(s, (int[]){0, 1}, (double[]){1 - t, t}, 2);
}

// Is the origin on the other side of face (i, j, k) from vertex l?
static int outside(const simplex *s, int i, int j, int k, int l) {
  double e1[3], e2[3], n[3], d[3];
  ptu_sub3(e1, s->w[j], s->w[i]);
  ptu_sub3(e2, s->w[k], s->w[i]);
  ptu_cross3(n, e1, e2);
  ptu_sub3(d, s->w[l], s->w[i]);
  double sl = ptu_dot3(n, d), so = -ptu_dot3(n, s->w[i]);
  return so * sl < 0;
}

static double point_norm2(const simplex *s) {
  double v[3] = {0, 0, 0};
  for (int i = 0; i < s->n; i++)
    for (int k = 0; k < 3; k++) v[k] += s->lam[i] * s->w[i][k];
  return ptu_dot3(v, v);
}

// Returns 1 when the tetrahedron holds the origin (s unchanged), else reduces s to the closest
// face's sub-simplex.
static int closest_tetra(simplex *s) {
  static const int f[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 3, 2, 0}};
  simplex best = *s;
  double bestd = INFINITY;
  int any = 0;
  for (int q = 0; q < 4; q++) {
    if (!outside(s, f[q][0], f[q][1], f[q][2], f[q][3])) continue;
    any = 1;
    simplex t = *s;
    closest_triangle(&t, f[q][0], f[q][1], f[q][2]);
    double d = point_norm2(&t);
    if (d < bestd) bestd = d, best = t;
  }
  if (!any) return 1;
  *s = best;
  return 0;
}

// Closest point of conv(s) to the origin into v; 1 when the origin is inside (a tetrahedron).
static int closest(simplex *s, double v[3]) {
  int inside = 0;
  if (s->n == 1)
    s->lam[0] = 1;
  else if (s->n == 2)
    closest_segment(s);
  else if (s->n == 3)
    closest_triangle(s, 0, 1, 2);
  else
    inside = closest_tetra(s);
  ptu_zero(v, 3);
  if (inside) return 1;
  for (int i = 0; i < s->n; i++)
    for (int k = 0; k < 3; k++) v[k] += s->lam[i] * s->w[i][k];
  return 0;
}

// ---------------------------------------------------------------------------------------------
// EPA

typedef struct {
  const pt_shape *a, *b;
  const pt_pose *pa, *pb;
  pt_collide_work *w;
  int nv, nf;
} polytope;

static int add_vertex(polytope *P, const double d[3]) {
  pt_collide_work *w = P->w;
  int i = P->nv++;
  support(w->epa_w[i], w->epa_a[i], w->epa_b[i], P->a, P->pa, P->b, P->pb, d);
  return i;
}

// The faces by distance from the origin: a binary heap ordered by (distance, index), so that
// the choice is the same on every run. Replaced faces stay in it and are dropped when they
// come up (closest_face).
static int heap_less(const pt_collide_work *w, int a, int b) {
  double da = w->epa_plane[a][3], db = w->epa_plane[b][3];
  return da < db || (da == db && a < b);
}

static void heap_push(pt_collide_work *w, int f) {
  int i = w->epa_nheap++;
  w->epa_heap[i] = f;
  while (i > 0 && heap_less(w, w->epa_heap[i], w->epa_heap[(i - 1) / 2])) {
    int p = (i - 1) / 2, t = w->epa_heap[p];
    w->epa_heap[p] = w->epa_heap[i], w->epa_heap[i] = t;
    i = p;
  }
}

static void heap_pop(pt_collide_work *w) {
  int n = --w->epa_nheap, i = 0;
  w->epa_heap[0] = w->epa_heap[n];
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && heap_less(w, w->epa_heap[l], w->epa_heap[m])) m = l;
    if (r < n && heap_less(w, w->epa_heap[r], w->epa_heap[m])) m = r;
    if (m == i) break;
    int t = w->epa_heap[m];
    w->epa_heap[m] = w->epa_heap[i], w->epa_heap[i] = t;
    i = m;
  }
}

// Face (i, j, k); its plane (a degenerate face gets an infinite distance: never chosen).
// Returns its index; its neighbours are set by link().
static int add_face(polytope *P, int i, int j, int k) {
  pt_collide_work *w = P->w;
  int f = P->nf++;
  w->epa_face[f][0] = i, w->epa_face[f][1] = j, w->epa_face[f][2] = k;
  w->epa_adj[f][0] = w->epa_adj[f][1] = w->epa_adj[f][2] = -1;
  w->epa_alive[f] = 1;
  double e1[3], e2[3], n[3];
  ptu_sub3(e1, w->epa_w[j], w->epa_w[i]);
  ptu_sub3(e2, w->epa_w[k], w->epa_w[i]);
  ptu_cross3(n, e1, e2);
  double l = ptu_norm3(n);
  if (l > 0) {
    ptu_scl3(w->epa_plane[f], n, 1 / l);
    w->epa_plane[f][3] = ptu_dot3(w->epa_plane[f], w->epa_w[i]);
  } else {
    ptu_zero(w->epa_plane[f], 3);
    w->epa_plane[f][3] = INFINITY;
  }
  if (isfinite(w->epa_plane[f][3])) heap_push(w, f);
  return f;
}

// Makes faces f and g neighbours across the edge they share (u, v in f, v, u in g), if any.
static void link(pt_collide_work *w, int f, int g) {
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      if (w->epa_face[f][a] == w->epa_face[g][(b + 1) % 3] &&
          w->epa_face[f][(a + 1) % 3] == w->epa_face[g][b]) {
        w->epa_adj[f][a] = g, w->epa_adje[f][a] = b;
        w->epa_adj[g][b] = f, w->epa_adje[g][b] = a;
      }
}

// A tetrahedron of M around the origin from GJK's last simplex, completed by support points
// along fixed directions. 0 when M is flat there (no volume: no penetration to measure).
static int epa_start(polytope *P, const simplex *s, double scale) {
  pt_collide_work *w = P->w;
  P->nv = 0;
  for (int i = 0; i < s->n; i++) {
    ptu_copy(w->epa_w[i], s->w[i], 3);
    ptu_copy(w->epa_a[i], s->a[i], 3);
    ptu_copy(w->epa_b[i], s->b[i], 3);
  }
  P->nv = s->n;
  static const double dirs[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0},
                                    {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  double tiny = 1e-9 * scale;
  for (int q = 0; q < 6 && P->nv < 4; q++) {   // grow a point, segment or triangle to volume
    double d[3];
    if (P->nv == 3) {   // along the triangle's normal, each way
      double e1[3], e2[3];
      ptu_sub3(e1, w->epa_w[1], w->epa_w[0]);
      ptu_sub3(e2, w->epa_w[2], w->epa_w[0]);
      ptu_cross3(d, e1, e2);
      if (q & 1) ptu_scl3(d, d, -1);
    } else if (P->nv == 2) {   // across the segment
      double e[3];
      ptu_sub3(e, w->epa_w[1], w->epa_w[0]);
      ptu_cross3(d, e, dirs[q]);
      if (ptu_norm3(d) < tiny) continue;
    } else {
      ptu_copy(d, dirs[q], 3);
    }
    int i = add_vertex(P, d);
    // keep it only if it adds a dimension
    int ok = 1;
    double e1[3], e2[3], e3[3], c[3];
    ptu_sub3(e1, w->epa_w[i], w->epa_w[0]);
    if (i == 1) ok = ptu_norm3(e1) > tiny;
    if (i == 2) {
      ptu_sub3(e2, w->epa_w[1], w->epa_w[0]);
      ptu_cross3(c, e2, e1);
      ok = ptu_norm3(c) > tiny * scale;
    }
    if (i == 3) {
      ptu_sub3(e2, w->epa_w[1], w->epa_w[0]);
      ptu_sub3(e3, w->epa_w[2], w->epa_w[0]);
      ptu_cross3(c, e2, e3);
      ok = fabs(ptu_dot3(c, e1)) > tiny * scale * scale;
    }
    if (!ok) P->nv--;
  }
  if (P->nv < 4) return 0;
  // orient: faces counter-clockwise seen from outside (normal away from the fourth vertex)
  double e1[3], e2[3], e3[3], c[3];
  ptu_sub3(e1, w->epa_w[1], w->epa_w[0]);
  ptu_sub3(e2, w->epa_w[2], w->epa_w[0]);
  ptu_sub3(e3, w->epa_w[3], w->epa_w[0]);
  ptu_cross3(c, e1, e2);
  P->nf = 0;
  w->epa_nheap = 0;
  if (ptu_dot3(c, e3) > 0) {
    add_face(P, 0, 2, 1), add_face(P, 0, 1, 3), add_face(P, 1, 2, 3), add_face(P, 0, 3, 2);
  } else {
    add_face(P, 0, 1, 2), add_face(P, 0, 3, 1), add_face(P, 1, 3, 2), add_face(P, 0, 2, 3);
  }
  for (int f = 0; f < 4; f++)
    for (int g = f + 1; g < 4; g++) link(w, f, g);
  for (int f = 0; f < 4; f++)   // the origin must be inside (or on) every face
    if (!(w->epa_plane[f][3] >= -tiny)) return 0;
  return 1;
}

// The closest live face, -1 when there is none.
static int closest_face(const polytope *P) {
  pt_collide_work *w = P->w;
  while (w->epa_nheap > 0 && !w->epa_alive[w->epa_heap[0]]) heap_pop(w);
  return w->epa_nheap > 0 ? w->epa_heap[0] : -1;
}

static int sees(const pt_collide_work *w, int f, int i) {
  double d[3];
  ptu_sub3(d, w->epa_w[i], w->epa_w[w->epa_face[f][0]]);
  return ptu_dot3(w->epa_plane[f], d) > 0;
}

// Adds vertex i, seen from face f: the faces it sees, found by walking across edges from f (so
// that they form one connected cap, whatever rounding says of faces elsewhere), die, and a fan
// from i to their silhouette replaces them (van den Bergen 2001, 4.3). 0: a cap was hit.
static int expand(polytope *P, int f, int i) {
  pt_collide_work *w = P->w;
  int ne = 0, top = 0;
  w->epa_alive[f] = 0;
  for (int e = 2; e >= 0; e--) {   // visit in edge order: the stack pops edge 0 first
    w->epa_stack[top][0] = w->epa_adj[f][e], w->epa_stack[top][1] = w->epa_adje[f][e];
    top++;
  }
  while (top > 0) {
    top--;
    int g = w->epa_stack[top][0], e = w->epa_stack[top][1];
    if (g < 0 || !w->epa_alive[g]) continue;
    if (!sees(w, g, i)) {   // a silhouette edge: g's edge e
      w->epa_edge[ne][0] = g, w->epa_edge[ne][1] = e;
      ne++;
      continue;
    }
    w->epa_alive[g] = 0;
    if (top + 2 > 3 * PT_EPA_MAX_FACE) return 0;
    for (int k = 2; k >= 1; k--) {
      int q = (e + k) % 3;
      w->epa_stack[top][0] = w->epa_adj[g][q], w->epa_stack[top][1] = w->epa_adje[g][q];
      top++;
    }
  }
  if (P->nf + ne > PT_EPA_MAX_FACE) return 0;
  int first = P->nf;
  for (int q = 0; q < ne; q++) {   // the fan: each across from its silhouette face
    int g = w->epa_edge[q][0], e = w->epa_edge[q][1];
    int nf = add_face(P, w->epa_face[g][(e + 1) % 3], w->epa_face[g][e], i);
    w->epa_adj[nf][0] = g, w->epa_adje[nf][0] = e;
    w->epa_adj[g][e] = nf, w->epa_adje[g][e] = 0;
  }
  // neighbours around the fan: face (a, b, i)'s edge 1 (b to i) meets edge 2 (i to b) of the
  // face that starts at b
  for (int q = first; q < P->nf; q++)
    for (int r = first; r < P->nf; r++)
      if (w->epa_face[r][0] == w->epa_face[q][1]) {
        w->epa_adj[q][1] = r, w->epa_adje[q][1] = 2;
        w->epa_adj[r][2] = q, w->epa_adje[r][2] = 1;
      }
  return 1;
}

// Witness points of face f's point nearest the origin (its barycentric coordinates).
static void face_witness(convex_result *r, const polytope *P, int f) {
  pt_collide_work *w = P->w;
  const int *F = w->epa_face[f];
  double p[3], e0[3], e1[3], c[3], lam[3], area = 0;
  ptu_scl3(p, w->epa_plane[f], w->epa_plane[f][3]);
  for (int k = 0; k < 3; k++) {   // sub-triangle areas opposite each vertex
    ptu_sub3(e0, w->epa_w[F[(k + 1) % 3]], p);
    ptu_sub3(e1, w->epa_w[F[(k + 2) % 3]], p);
    ptu_cross3(c, e0, e1);
    lam[k] = fmax(ptu_dot3(c, w->epa_plane[f]), 0);
    area += lam[k];
  }
  if (!(area > 0)) lam[0] = lam[1] = lam[2] = 1, area = 3;
  ptu_zero(r->wa, 3);
  ptu_zero(r->wb, 3);
  for (int k = 0; k < 3; k++)
    for (int q = 0; q < 3; q++) {
      r->wa[q] += lam[k] / area * w->epa_a[F[k]][q];
      r->wb[q] += lam[k] / area * w->epa_b[F[k]][q];
    }
}

// Expands towards the closest face until the support point along its normal adds less than
// PT_TOL_EPA of the scale: the depth is then known to that (the closest face's distance is a
// lower bound, the support along its normal an upper one). Polytopes get there exactly in a few
// steps; curved surfaces converge linearly, and their new points end up nearly coplanar with
// their neighbours, where rounding can cut a face the wrong way: a closest distance that shrinks
// (impossible for a convex polytope grown outwards) stops it with the answer of the step before.
// Returns 1 when it stopped (cap or rounding) with the bounds further apart than
// PT_TOL_EPA_ROUND of the scale.
static int epa(convex_result *r, polytope *P, double scale) {
  pt_collide_work *w = P->w;
  double last = INFINITY;   // the last gap between the bounds
  int best = -1, done = 0;  // the face of the answer (replaced faces keep their data)
  for (;;) {
    int f = closest_face(P);
    if (f < 0) break;
    const double *n = w->epa_plane[f];
    if (!isfinite(n[3])) break;
    if (best >= 0 && n[3] < w->epa_plane[best][3] - PT_TOL_EPA * scale) break;   // rounding
    best = f;
    if (P->nv >= PT_EPA_MAX_VERT) break;
    double nn[3];
    ptu_copy(nn, n, 3);
    int i = add_vertex(P, nn);
    last = ptu_dot3(w->epa_w[i], nn) - w->epa_plane[f][3];
    if (last <= PT_TOL_EPA * scale) {
      done = 1;
      break;
    }
    if (!expand(P, f, i)) break;
  }
  if (best < 0) return 1;
  ptu_copy(r->normal, w->epa_plane[best], 3);
  r->dist = -w->epa_plane[best][3];
  face_witness(r, P, best);
  return !done && !(last <= PT_TOL_EPA_ROUND * scale);
}

// ---------------------------------------------------------------------------------------------

int convex_query(convex_result *r, const pt_shape *a, const pt_pose *pa, const pt_shape *b,
                 const pt_pose *pb, pt_collide_work *w) {
  double scale = a->rbound + b->rbound, v[3], d[3];
  simplex s = {.n = 1};
  ptu_sub3(d, pa->pos, pb->pos);   // start along the centres' difference (any point of M)
  if (ptu_norm3(d) < PT_TOL_COINCIDENT) d[0] = 1, d[1] = 0, d[2] = 0;
  support(s.w[0], s.a[0], s.b[0], a, pa, b, pb, d);
  s.lam[0] = 1;
  ptu_copy(v, s.w[0], 3);
  int capped = 1, inside = 0;
  for (int it = 0; it < PT_GJK_MAX_ITER; it++) {
    double vv = ptu_dot3(v, v);
    if (vv <= (PT_TOL_GJK * scale) * (PT_TOL_GJK * scale)) {   // touching or inside
      inside = 1;
      capped = 0;
      break;
    }
    double nd[3], wn[3], wa[3], wb[3];
    ptu_scl3(nd, v, -1);
    support(wn, wa, wb, a, pa, b, pb, nd);
    // lower bound v.w/|v| against upper bound |v|
    if (vv - ptu_dot3(v, wn) <= PT_TOL_GJK * scale * sqrt(vv)) {
      capped = 0;
      break;
    }
    int dup = 0;
    for (int i = 0; i < s.n; i++)
      if (s.w[i][0] == wn[0] && s.w[i][1] == wn[1] && s.w[i][2] == wn[2]) dup = 1;
    if (dup) {
      capped = 0;
      break;
    }
    ptu_copy(s.w[s.n], wn, 3);
    ptu_copy(s.a[s.n], wa, 3);
    ptu_copy(s.b[s.n], wb, 3);
    s.n++;
    double vnew[3];
    if (closest(&s, vnew)) {
      inside = 1;
      capped = 0;
      break;
    }
    if (ptu_dot3(vnew, vnew) >= vv) {   // no progress (rounding): v is as close as it gets
      capped = 0;
      break;
    }
    ptu_copy(v, vnew, 3);
  }
  if (capped) w->gjk_capped++;
  if (!inside) {   // separated: v = pA - pB points from B to A
    double l = ptu_norm3(v);
    ptu_zero(r->wa, 3);
    ptu_zero(r->wb, 3);
    for (int i = 0; i < s.n; i++)
      for (int k = 0; k < 3; k++) {
        r->wa[k] += s.lam[i] * s.a[i][k];
        r->wb[k] += s.lam[i] * s.b[i][k];
      }
    r->dist = l;
    ptu_scl3(r->normal, v, -1 / l);
    return capped;
  }
  polytope P = {a, b, pa, pb, w, 0, 0};
  r->dist = INFINITY;
  if (!epa_start(&P, &s, scale)) {   // no volume: touching, normal between the centres
    r->dist = 0;
    ptu_sub3(d, pb->pos, pa->pos);
    double l = ptu_norm3(d);
    if (l > PT_TOL_COINCIDENT)
      ptu_scl3(r->normal, d, 1 / l);
    else
      r->normal[0] = 0, r->normal[1] = 0, r->normal[2] = 1;
    ptu_copy(r->wa, s.a[0], 3);
    ptu_copy(r->wb, s.b[0], 3);
    return 0;
  }
  int c = epa(r, &P, scale);
  if (c) w->epa_capped++;
  if (!isfinite(r->dist)) {   // every face degenerate: no depth to report
    r->dist = 0;
    r->normal[0] = 0, r->normal[1] = 0, r->normal[2] = 1;
  }
  return c;
}
