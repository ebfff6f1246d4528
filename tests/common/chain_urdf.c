// chain_urdf.c: the shared chain models (chain_urdf.h).
#include "chain_urdf.h"

#include <stdio.h>
#include <stdlib.h>

const chain_link chain_spatial = {0.3, 0.4, 0.00002, 0.003, 1, 1, 0};
const chain_link chain_rods = {0.1, 0.1, 1e-5, 8.3e-5, 0, 0, 0};

char *chain_urdf_text(int n, const chain_link *l) {
  size_t cap = 256 + (size_t)n * 800, k = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  k += (size_t)snprintf(t + k, cap - k,
                        "<?xml version=\"1.0\"?>\n<robot name=\"chain%d\">\n"
                        "  <link name=\"base\"/>\n", n);
  for (int i = 0; i < n; i++) {
    char parent[32] = "base", limit[128] = "";
    if (i > 0) snprintf(parent, sizeof(parent), "l%d", i - 1);
    if (l->limit > 0)
      snprintf(limit, sizeof(limit), "    <limit lower=\"%g\" upper=\"%g\" effort=\"10\" "
               "velocity=\"10\"/>\n", -l->limit, l->limit);
    const int a = i % 2;   // 0: about y; 1: about z (axes_yz) or x
    k += (size_t)snprintf(t + k, cap - k,
                          "  <joint name=\"j%d\" type=\"%s\">\n    <parent link=\"%s\"/>\n"
                          "    <child link=\"l%d\"/>\n    <origin xyz=\"%g 0 0\"/>\n"
                          "    <axis xyz=\"%d %d %d\"/>\n%s  </joint>\n",
                          i, l->continuous ? "continuous" : "revolute", parent, i,
                          i == 0 ? 0.0 : l->length, !l->axes_yz && a, !a, l->axes_yz && a,
                          limit);
    k += (size_t)snprintf(t + k, cap - k,
                          "  <link name=\"l%d\">\n    <inertial>\n      <origin xyz=\"%g 0 0\"/>\n"
                          "      <mass value=\"%g\"/>\n      <inertia ixx=\"%g\" ixy=\"0\" "
                          "ixz=\"0\" iyy=\"%g\" iyz=\"0\" izz=\"%g\"/>\n    </inertial>\n"
                          "  </link>\n", i, 0.5 * l->length, l->mass, l->i_along, l->i_across,
                          l->i_across);
  }
  snprintf(t + k, cap - k, "</robot>\n");
  return t;
}

int chain_urdf_write_link(const char *path, int n, const chain_link *l) {
  char *t = chain_urdf_text(n, l);
  FILE *f = t ? fopen(path, "w") : NULL;
  int rc = f && fputs(t, f) >= 0 ? 0 : -1;
  if (f && fclose(f) != 0) rc = -1;
  free(t);
  return rc;
}

int chain_urdf_write(const char *path, int n) {
  return chain_urdf_write_link(path, n, &chain_spatial);
}

char *chain_urdf_rods(int n) { return chain_urdf_text(n, &chain_rods); }

int chain_yaml_text(char *text, size_t cap, int n, double limit) {
  size_t k = (size_t)snprintf(text, cap, "model: chain\ngravity: [0, 0, -9.81]\nbodies:\n");
  for (int i = 0; i < n && k < cap; i++)
    k += (size_t)snprintf(text + k, cap - k,
                          "  - {name: l%d, mass: 1, inertia: [0.0001, 0.0208333, 0.0208333], "
                          "position: [%.3f, 0, 0]}\n", i, 0.5 * i + 0.25);
  if (k < cap) k += (size_t)snprintf(text + k, cap - k, "joints:\n");
  for (int i = 0; i < n && k < cap; i++) {
    char parent[16] = "ground", lim[64] = "";
    if (i) snprintf(parent, sizeof(parent), "l%d", i - 1);
    if (limit > 0) snprintf(lim, sizeof(lim), ", limits: [%g, %g]", -limit, limit);
    k += (size_t)snprintf(text + k, cap - k,
                          "  - {name: j%d, type: revolute, body1: %s, body2: l%d, point: "
                          "[%.3f, 0, 0], axis: [0, 1, 0]%s}\n", i, parent, i, 0.5 * i, lim);
  }
  return k < cap ? 0 : -1;
}
