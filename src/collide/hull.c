// hull.c: the convex hull of a mesh's vertices, computed once at load by Quickhull (Barber,
// Dobkin and Huhdanpaa, "The Quickhull algorithm for convex hulls", ACM TOMS 22(4), 1996)
// through the reentrant qhull library, which merges coplanar facets into convex polygons. The
// result is one block: the pt_hull view and its arrays.
#include <libqhull_r/qhull_ra.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collide.h"
#include "ptu.h"

// qhull's first message line, for ours.
static void first_line(char *dst, size_t cap, const char *src) {
  size_t n = 0;
  while (src[n] && src[n] != '\n' && n + 1 < cap) n++;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

typedef struct {
  int nv, nf, nfv, max_face;
  int *vmap;   // input point -> hull vertex, -1 for points inside (npts)
} hull_counts;

// Counts what qhull found and numbers the hull's vertices in input order.
static int count_hull(hull_counts *c, qhT *qh, int npts, int max_vert, pt_error *err) {
  vertexT *vertex;
  facetT *facet;
  c->vmap = malloc(sizeof(int) * (size_t)npts);
  if (!c->vmap) return pt_error_set(err, PT_ENOMEM, "out of memory");
  for (int i = 0; i < npts; i++) c->vmap[i] = -1;
  FORALLvertices c->vmap[qh_pointid(qh, vertex->point)] = -2;
  c->nv = 0;
  for (int i = 0; i < npts; i++)
    if (c->vmap[i] == -2) c->vmap[i] = c->nv++;
  if (c->nv > max_vert)
    return pt_error_set(err, PT_EMODEL, "convex hull has %d vertices, more than the cap of %d "
                        "(simplify the mesh)", c->nv, max_vert);
  c->nf = 0, c->nfv = 0, c->max_face = 0;
  FORALLfacets {
    int k = qh_setsize(qh, facet->vertices);
    if (k > PT_HULL_MAX_FACE_VERT)
      return pt_error_set(err, PT_EMODEL, "convex hull has a face of %d vertices, more than the "
                          "cap of %d", k, PT_HULL_MAX_FACE_VERT);
    c->nf++;
    c->nfv += k;
    if (k > c->max_face) c->max_face = k;
  }
  return PT_OK;
}

// Fills the block: vertices, and each face's plane and vertex loop, counter-clockwise about its
// outward normal (qhull's order, reversed where it turns the other way).
static void fill_hull(pt_hull *h, const hull_counts *c, qhT *qh, const double *pts, int npts) {
  double *vert = (double *)(h + 1), *plane = vert + 3 * c->nv;
  int *adr = (int *)(plane + 4 * c->nf), *num = adr + c->nf, *fv = num + c->nf;
  for (int i = 0; i < npts; i++)
    if (c->vmap[i] >= 0) ptu_copy(vert + 3 * c->vmap[i], pts + 3 * i, 3);
  facetT *facet;
  vertexT *vertex, **vertexp;
  int f = 0, at = 0;
  FORALLfacets {
    setT *loop = qh_facet3vertex(qh, facet);
    int k = 0, *first = fv + at;
    FOREACHvertex_(loop) first[k++] = c->vmap[qh_pointid(qh, vertex->point)];
    qh_settempfree(qh, &loop);
    double nn[3] = {0, 0, 0};   // Newell's normal of the loop
    for (int i = 0; i < k; i++) {
      const double *p = vert + 3 * first[i], *q = vert + 3 * first[(i + 1) % k];
      nn[0] += (p[1] - q[1]) * (p[2] + q[2]);
      nn[1] += (p[2] - q[2]) * (p[0] + q[0]);
      nn[2] += (p[0] - q[0]) * (p[1] + q[1]);
    }
    ptu_copy(plane + 4 * f, facet->normal, 3);
    plane[4 * f + 3] = -facet->offset;
    if (ptu_dot3(nn, facet->normal) < 0)
      for (int i = 0; i < k / 2; i++) {
        int t = first[i];
        first[i] = first[k - 1 - i];
        first[k - 1 - i] = t;
      }
    adr[f] = at;
    num[f] = k;
    at += k;
    f++;
  }
  h->nvert = c->nv;
  h->nface = c->nf;
  h->nfacevert = c->nfv;
  h->max_face_num = c->max_face;
  h->vert = vert;
  h->face_plane = plane;
  h->face_adr = adr;
  h->face_num = num;
  h->face_vert = fv;
  ptu_zero(h->center, 3);
  for (int i = 0; i < c->nv; i++)
    for (int k = 0; k < 3; k++) h->center[k] += vert[3 * i + k] / c->nv;
}

int pt_hull_build(pt_hull **out, const double *pts, int npts, int max_vert, pt_error *err) {
  *out = NULL;
  if (max_vert <= 0) max_vert = PT_HULL_MAX_VERT;
  if (npts < 4)
    return pt_error_set(err, PT_EMODEL, "a convex hull needs 4 points at least, got %d", npts);
  if (npts > PT_HULL_MAX_INPUT)
    return pt_error_set(err, PT_EMODEL, "%d points for a convex hull, more than the cap of %d",
                        npts, PT_HULL_MAX_INPUT);
  for (int i = 0; i < 3 * npts; i++)
    if (!isfinite(pts[i]))
      return pt_error_set(err, PT_EMODEL, "point %d of the convex hull is not finite", i / 3);
  coordT *copy = malloc(sizeof(coordT) * 3 * (size_t)npts);
  qhT *qh = malloc(sizeof(qhT));
  char msg[1024] = "";
  FILE *errf = fmemopen(msg, sizeof(msg) - 1, "w");
  if (!copy || !qh || !errf) {
    free(copy), free(qh);
    if (errf) fclose(errf);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  for (int i = 0; i < 3 * npts; i++) copy[i] = pts[i];
  qh_zero(qh, errf);
  int rc = qh_new_qhull(qh, 3, npts, copy, False, (char *)"qhull", NULL, errf);
  fflush(errf);
  hull_counts c = {0};
  if (rc) {
    char line[400];
    first_line(line, sizeof(line), msg);
    rc = pt_error_set(err, PT_EMODEL, "no convex hull: the points are flat or degenerate (qhull:"
                      " %s)", line[0] ? line : "failed");
  } else {
    rc = count_hull(&c, qh, npts, max_vert, err);
  }
  if (!rc) {
    size_t bytes = sizeof(pt_hull) + sizeof(double) * (3 * (size_t)c.nv + 4 * (size_t)c.nf) +
                   sizeof(int) * (2 * (size_t)c.nf + (size_t)c.nfv);
    pt_hull *h = calloc(1, bytes);
    if (!h) {
      rc = pt_error_set(err, PT_ENOMEM, "out of memory");
    } else {
      fill_hull(h, &c, qh, pts, npts);
      *out = h;
    }
  }
  int curlong, totlong;
  qh_freeqhull(qh, !qh_ALL);
  qh_memfreeshort(qh, &curlong, &totlong);
  fclose(errf);
  free(c.vmap);
  free(qh);
  free(copy);
  return rc;
}

double pt_hull_volume(const pt_hull *h) {
  double v = 0, c[3];
  for (int f = 0; f < h->nface; f++) {   // fan from each face's first vertex
    const int *fv = h->face_vert + h->face_adr[f];
    const double *p0 = h->vert + 3 * fv[0];
    for (int i = 1; i + 1 < h->face_num[f]; i++) {
      ptu_cross3(c, h->vert + 3 * fv[i], h->vert + 3 * fv[i + 1]);
      v += ptu_dot3(p0, c);
    }
  }
  return v / 6;
}
