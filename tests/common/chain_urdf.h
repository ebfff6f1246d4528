// chain_urdf.h: the chain models the engine tests and the benches share (chain_urdf.c): serial
// chains of slender links along +x hanging from the ground, as URDF or as Partita YAML.
#ifndef TEST_CHAIN_URDF_H
#define TEST_CHAIN_URDF_H

#include <stddef.h>

// One link and its joint, the same for every link of a chain.
typedef struct {
  double length, mass;  // a rod along +x with its centre of mass mid-link
  double i_along;       // inertia about the CoM along the rod (x) ...
  double i_across;      // ... and across it (y, z)
  int continuous;       // 1: continuous joints; 0: revolute
  int axes_yz;          // 1: joint axes y, z, y, ...; 0: y, x, y, ...
  double limit;         // > 0: revolute joints limited to [-limit, limit] (effort, velocity 10)
} chain_link;

// 0.3 m, 0.4 kg, continuous joints about y and z in turn (a spatial chain).
extern const chain_link chain_spatial;
// 0.1 m, 0.1 kg rods, revolute joints about y and x in turn, no limits.
extern const chain_link chain_rods;

// A chain of n links as URDF text (malloc'd; NULL when out of memory).
char *chain_urdf_text(int n, const chain_link *l);

// The chain_spatial chain of n links written to path. 0 ok, -1 when it cannot be written.
int chain_urdf_write(const char *path, int n);

// The URDF text of chain_urdf_text(n, l) written to path. 0 ok, -1 otherwise.
int chain_urdf_write_link(const char *path, int n, const chain_link *l);

// The chain_rods chain of n links as URDF text (malloc'd; NULL when out of memory).
char *chain_urdf_rods(int n);

// Partita YAML: n links of 0.5 m and 1 kg (inertia [0.0001, 0.0208333, 0.0208333]) released
// horizontally along +x, revolute joints about y, each limited to [-limit, limit] when
// limit > 0, gravity -9.81 along z. Written into text (cap bytes); 0 ok, -1 when it does not
// fit.
int chain_yaml_text(char *text, size_t cap, int n, double limit);

#endif
