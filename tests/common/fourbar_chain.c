// fourbar_chain.c: the IFToMM A02 N-four-bar as Partita YAML (fourbar_chain.h).
#include "fourbar_chain.h"

#include <stdio.h>

int fourbar_chain_yaml(char *buf, size_t cap, int ncell) {
  size_t o = 0;
  o += (size_t)snprintf(buf + o, cap - o,
                        "model: chain%d\ngravity: [0, -9.81, 0]\nsimulation: {dt: 0.001, "
                        "integrator: rk4}\nbodies:\n",
                        ncell);
  for (int i = 0; i <= ncell && o < cap; i++)
    o += (size_t)snprintf(buf + o, cap - o,
                          "  - {name: crank%d, mass: 1, inertia: [0.0833333333333333, 0.0001, "
                          "0.0833333333333333], position: [%d, 0.5, 0], velocity: [0.5, 0, 0], "
                          "angular_velocity: [0, 0, -1]}\n",
                          i, i);
  for (int i = 0; i < ncell && o < cap; i++)
    o += (size_t)snprintf(buf + o, cap - o,
                          "  - {name: coupler%d, mass: 1, inertia: [0.0001, 0.0833333333333333, "
                          "0.0833333333333333], position: [%g, 1, 0], velocity: [1, 0, 0]}\n",
                          i, i + 0.5);
  if (o < cap) o += (size_t)snprintf(buf + o, cap - o, "joints:\n");
  for (int i = 0; i <= ncell && o < cap; i++) {
    o += (size_t)snprintf(buf + o, cap - o,
                          "  - {name: A%d, type: revolute, body1: ground, body2: crank%d, "
                          "point: [%d, 0, 0], axis: [0, 0, 1]}\n",
                          i, i, i);
    if (i < ncell && o < cap)
      o += (size_t)snprintf(buf + o, cap - o,
                            "  - {name: B%d, type: revolute, body1: crank%d, body2: coupler%d, "
                            "point: [%d, 1, 0], axis: [0, 0, 1]}\n"
                            "  - {name: C%d, type: revolute, body1: coupler%d, body2: "
                            "crank%d, point: [%d, 1, 0], axis: [0, 0, 1]}\n",
                            i, i, i, i, i, i, i + 1, i + 1);
  }
  return o < cap ? (int)o : -1;
}

int reference_table(const char *dir, const char *file, double *t, double *x, double *y,
                    int max) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int n = 0;
  while (n < max && fscanf(f, "%lf %lf %lf", &t[n], &x[n], &y[n]) == 3) n++;
  fclose(f);
  return n;
}
