// chain_urdf.h: spatial chain URDFs the engine tests and the benches share.
#ifndef TEST_CHAIN_URDF_H
#define TEST_CHAIN_URDF_H

// A chain of n slender links (0.3 m, 0.4 kg, CoM mid-link) along +x from a massless base,
// continuous joints with axes alternating y and z so the chain is spatial, written to path.
// 0 ok, -1 when the file cannot be written.
int chain_urdf_write(const char *path, int n);

// A chain of n rods (0.1 m, 0.1 kg along +x) hanging from the ground by revolute joints with
// axes alternating y and x, as URDF text (malloc'd; NULL when out of memory).
char *chain_urdf_rods(int n);

#endif
