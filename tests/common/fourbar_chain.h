// fourbar_chain.h: the IFToMM A02 N-four-bar mechanism as Partita YAML (fourbar_chain.c),
// shared by the singular-configuration tests and the closed-loop benchmarks.
#ifndef TEST_FOURBAR_CHAIN_H
#define TEST_FOURBAR_CHAIN_H

#include <stddef.h>

// IFToMM A02 with n cells (n = 40 is the benchmark; n = 1 the plain four-bar): n + 1 vertical
// cranks of 1 m on ground pivots at x = 0..n joined at their tops (y = 1) by n couplers, all
// slender rods of 1 kg, in the x-y plane with gravity -9.81 along y and revolute axes along z;
// the top of the first crank starts at 1 m/s along +x. RK4 at dt 1 ms. Written into buf
// (cap bytes); returns its length, or -1 when it does not fit.
int fourbar_chain_yaml(char *buf, size_t cap, int ncell);

// A published reference table ("t x y" lines, e.g. iftomm/a02-n-fourbar.ref under the shared
// reference folder dir): at most max rows into t, x, y. Returns the count, or -1 when the file
// cannot be read.
int reference_table(const char *dir, const char *file, double *t, double *x, double *y,
                    int max);

#endif
