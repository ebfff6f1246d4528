// The mesh-file vertex reader (src/load/mesh_read.c): binary and ASCII STL, OBJ and COLLADA
// files written here with known vertices (a COLLADA node's transforms and unit applied), their
// hulls, and the refusals.
#include <stdint.h>

#include "../engine/check.h"
#include "collide.h"
#include "mesh_read.h"
#include "ptu.h"
#include "scratch_dir.h"

static int read_mesh(double **p, int *n, const char *name, const double s[3], int max,
                     pt_error *err) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  return pt_mesh_vertices(p, n, path, s, max, err);
}

static const double one[3] = {1, 1, 1};

// The cube [-1/2, 1/2]^3 as 12 triangles (corner c: bit k set for +1/2 on axis k).
static const int tri[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                               {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
static double corner(int c, int k) { return (c >> k & 1) ? 0.5 : -0.5; }

static void stl_binary(void) {
  unsigned char buf[84 + 12 * 50] = {0};
  buf[80] = 12;
  for (int t = 0; t < 12; t++)
    for (int v = 0; v < 3; v++)
      for (int k = 0; k < 3; k++) {
        float f = (float)corner(tri[t][v], k);
        memcpy(buf + 84 + 50 * t + 12 + 12 * v + 4 * k, &f, 4);   // little-endian host
      }
  write_file("cube.stl", buf, sizeof(buf));
  double *p = NULL;
  int n = 0;
  pt_error err = {0};
  const double s[3] = {2, 1, 3};
  CHECK(read_mesh(&p, &n, "cube.stl", s, 1000, &err) == PT_OK, "binary STL: %s", err.msg);
  CHECK(n == 36, "binary STL: %d vertices", n);
  pt_hull *h = NULL;
  CHECK(p && pt_hull_build(&h, p, n, 0, &err) == PT_OK, "binary STL hull: %s", err.msg);
  if (h) {
    CHECK(h->nvert == 8 && h->nface == 6, "STL cube hull: %d vertices, %d faces", h->nvert,
          h->nface);
    CHECK_CLOSE(pt_hull_volume(h), 6, 1e-12, "scaled cube volume");
  }
  free(h);
  free(p);
}

static void stl_ascii(void) {
  const char *text =
      "solid tet\n"
      " facet normal 0 0 -1\n  outer loop\n   vertex 0 0 0\n   vertex 1 0 0\n"
      "   vertex 0 1 0\n  endloop\n endfacet\n"
      " facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n   vertex 0 1 0\n"
      "   vertex 0 0 1e0\n  endloop\n endfacet\n"
      "endsolid tet\n";
  write_file("tet.STL", text, strlen(text));
  double *p = NULL;
  int n = 0;
  pt_error err = {0};
  CHECK(read_mesh(&p, &n, "tet.STL", one, 1000, &err) == PT_OK && n == 6, "ASCII STL: %d, %s",
        n, err.msg);
  pt_hull *h = NULL;
  CHECK(p && pt_hull_build(&h, p, n, 0, &err) == PT_OK, "tetrahedron: %s", err.msg);
  if (h) CHECK_CLOSE(pt_hull_volume(h), 1.0 / 6, 1e-15, "tetrahedron volume");
  free(h);
  free(p);
}

static void obj(void) {
  const char *text = "# a tetrahedron\nmtllib x.mtl\nv 0 0 0\nvn 0 0 1\nvt 0.5 0.5\n"
                     "v 2 0 0 1\n  v 0 2 0\nv\t0 0 2\nf 1 2 3\nf 1 2 4\n";
  write_file("tet.obj", text, strlen(text));
  double *p = NULL;
  int n = 0;
  pt_error err = {0};
  CHECK(read_mesh(&p, &n, "tet.obj", one, 1000, &err) == PT_OK && n == 4, "OBJ: %d, %s", n,
        err.msg);
  if (p && n == 4) {
    CHECK(p[3] == 2 && p[7] == 2 && p[11] == 2, "OBJ vertices");
  }
  free(p);
}

static void dae(void) {
  // a unit cube's corners, in a node turned 90 degrees about z and moved by (1, 2, 3), in cm
  char pos[512] = "";
  for (int c = 0; c < 8; c++)
    snprintf(pos + strlen(pos), sizeof(pos) - strlen(pos), "%g %g %g ", corner(c, 0),
             corner(c, 1), corner(c, 2));
  char text[4096];
  snprintf(text, sizeof(text),
           "<?xml version=\"1.0\"?>\n"
           "<COLLADA xmlns=\"http://www.collada.org/2005/11/COLLADASchema\" version=\"1.4.1\">\n"
           "<asset><unit name=\"centimeter\" meter=\"0.01\"/><up_axis>Z_UP</up_axis></asset>\n"
           "<library_geometries><geometry id=\"g\"><mesh>\n"
           "<source id=\"g-pos\"><float_array id=\"g-arr\" count=\"24\">%s</float_array>\n"
           "<technique_common><accessor source=\"#g-arr\" count=\"8\" stride=\"3\"/>"
           "</technique_common></source>\n"
           "<vertices id=\"g-v\"><input semantic=\"POSITION\" source=\"#g-pos\"/></vertices>\n"
           "</mesh></geometry></library_geometries>\n"
           "<library_visual_scenes><visual_scene id=\"s\"><node id=\"n\">\n"
           "<translate>1 2 3</translate><rotate>0 0 1 90</rotate>\n"
           "<instance_geometry url=\"#g\"/></node></visual_scene></library_visual_scenes>\n"
           "<scene><instance_visual_scene url=\"#s\"/></scene></COLLADA>\n",
           pos);
  write_file("cube.dae", text, strlen(text));
  double *p = NULL;
  int n = 0;
  pt_error err = {0};
  CHECK(read_mesh(&p, &n, "cube.dae", one, 1000, &err) == PT_OK && n == 8, "DAE: %d, %s", n,
        err.msg);
  for (int c = 0; c < n && p; c++) {   // Rz(90) (x, y, z) = (-y, x, z), then + (1, 2, 3), in m
    double x = corner(c, 0), y = corner(c, 1), z = corner(c, 2);
    CHECK_CLOSE(p[3 * c], 0.01 * (1 - y), 1e-15, "DAE x");
    CHECK_CLOSE(p[3 * c + 1], 0.01 * (2 + x), 1e-15, "DAE y");
    CHECK_CLOSE(p[3 * c + 2], 0.01 * (3 + z), 1e-15, "DAE z");
  }
  free(p);
}

static void refusals(void) {
  double *p = NULL;
  int n = 0;
  pt_error err = {0};
  CHECK(read_mesh(&p, &n, "missing.stl", one, 1000, &err) == PT_EIO && strstr(err.msg, "open"),
        "missing file: %s", err.msg);
  write_file("notes.txt", "hello", 5);
  CHECK(read_mesh(&p, &n, "notes.txt", one, 1000, &err) == PT_EMODEL &&
            strstr(err.msg, "not an STL"), "other extension: %s", err.msg);
  write_file("junk.stl", "hello world", 11);
  CHECK(read_mesh(&p, &n, "junk.stl", one, 1000, &err) == PT_EMODEL &&
            strstr(err.msg, "not a readable STL"), "junk STL: %s", err.msg);
  write_file("junk.dae", "<svg/>", 6);
  CHECK(read_mesh(&p, &n, "junk.dae", one, 1000, &err) == PT_EMODEL &&
            strstr(err.msg, "COLLADA"), "junk DAE: %s", err.msg);
  write_file("empty.obj", "# nothing\n", 10);
  CHECK(read_mesh(&p, &n, "empty.obj", one, 1000, &err) == PT_EMODEL &&
            strstr(err.msg, "no vertices"), "empty OBJ: %s", err.msg);
  CHECK(read_mesh(&p, &n, "cube.stl", one, 20, &err) == PT_EMODEL &&
            strstr(err.msg, "more than 20"), "over the cap: %s", err.msg);
  CHECK(p == NULL && n == 0, "nothing returned on a refusal");
}

int main(void) {
  if (scratch_open()) return 1;
  stl_binary();
  stl_ascii();
  obj();
  dae();
  refusals();
  const char *names[] = {"cube.stl", "tet.STL", "tet.obj", "cube.dae", "notes.txt",
                         "junk.stl", "junk.dae", "empty.obj"};
  scratch_close(names, sizeof(names) / sizeof(names[0]));
  return finish("mesh vertices");
}
