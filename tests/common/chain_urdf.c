// chain_urdf.c: the shared spatial chain URDF (chain_urdf.h).
#include "chain_urdf.h"

#include <stdio.h>
#include <stdlib.h>

int chain_urdf_write(const char *path, int n) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "<?xml version=\"1.0\"?>\n<robot name=\"chain%d\">\n  <link name=\"base\"/>\n", n);
  for (int i = 0; i < n; i++) {
    char parent[16] = "base";
    if (i > 0) snprintf(parent, sizeof(parent), "l%d", i - 1);
    fprintf(f,
            "  <joint name=\"j%d\" type=\"continuous\">\n"
            "    <parent link=\"%s\"/>\n    <child link=\"l%d\"/>\n"
            "    <origin xyz=\"%g 0 0\" rpy=\"0 0 0\"/>\n    <axis xyz=\"0 %d %d\"/>\n"
            "  </joint>\n"
            "  <link name=\"l%d\">\n    <inertial>\n      <origin xyz=\"0.15 0 0\"/>\n"
            "      <mass value=\"0.4\"/>\n"
            "      <inertia ixx=\"0.00002\" ixy=\"0\" ixz=\"0\" iyy=\"0.003\" iyz=\"0\" "
            "izz=\"0.003\"/>\n    </inertial>\n  </link>\n",
            i, parent, i, i == 0 ? 0.0 : 0.3, i % 2 == 0, i % 2 == 1, i);
  }
  fprintf(f, "</robot>\n");
  return fclose(f) == 0 ? 0 : -1;
}

char *chain_urdf_rods(int n) {
  size_t cap = 256 + (size_t)n * 700, k = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  k += (size_t)snprintf(t + k, cap - k,
                        "<?xml version=\"1.0\"?>\n<robot name=\"chain%d\">\n"
                        "  <link name=\"base\"/>\n", n);
  for (int i = 0; i < n; i++) {
    char parent[32] = "base";
    if (i > 0) snprintf(parent, sizeof(parent), "l%d", i - 1);
    k += (size_t)snprintf(t + k, cap - k,
                          "  <joint name=\"j%d\" type=\"revolute\">\n    <parent link=\"%s\"/>\n"
                          "    <child link=\"l%d\"/>\n    <origin xyz=\"%g 0 0\"/>\n"
                          "    <axis xyz=\"%d %d 0\"/>\n  </joint>\n",
                          i, parent, i, i == 0 ? 0.0 : 0.1, i % 2, 1 - i % 2);
    k += (size_t)snprintf(t + k, cap - k,
                          "  <link name=\"l%d\">\n    <inertial>\n      <origin xyz=\"0.05 0 0\"/>\n"
                          "      <mass value=\"0.1\"/>\n      <inertia ixx=\"1e-5\" ixy=\"0\" "
                          "ixz=\"0\" iyy=\"8.3e-5\" iyz=\"0\" izz=\"8.3e-5\"/>\n    </inertial>\n"
                          "  </link>\n", i);
  }
  snprintf(t + k, cap - k, "</robot>\n");
  return t;
}
