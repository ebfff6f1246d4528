// mjcf_spec.h: a MuJoCo model (MJCF text) of a Partita model spec, for the benches that run
// the two engines side by side on closed loops (mjcf_spec.c). MuJoCo keeps a tree in joint
// coordinates and closes loops with soft equality constraints; the spec's joints become:
//   - a spanning tree, breadth first from the ground over revolute (hinge), prismatic (slide)
//     and universal (two hinges, axis1 first) joints whose body2 is the child;
//   - a free joint for every body the tree does not reach (the platform of a parallel robot),
//     the tree continuing from it;
//   - a `connect` equality constraint (solref = solref_time, 1) for every other spherical
//     joint, and for every other revolute joint, which is exact only when the rest of its loop
//     keeps the joint's axes aligned (planar mechanisms such as the IFToMM A02 chain).
// Body frames are the spec's (CoM, orientation at t = 0); torsion springs become joint
// stiffness (springref = free angle + preload / k), spring-dampers spatial tendons between
// two sites (springlength = free length + preload / k), joint actuators motors. Contacts are
// off (no geoms), energy on, RK4 at the spec's dt. The joints are named as Partita's
// coordinates ("leg0", "base0.angle1"), so states copy across by name.
#ifndef BENCH_MJCF_SPEC_H
#define BENCH_MJCF_SPEC_H

#include <stddef.h>

#include "partita.h"

// Writes the MJCF text into buf (cap bytes). Returns its length, or -1 with a reason in msg
// (a joint or force it cannot express, or buf too small).
int mjcf_from_spec(const pt_spec *s, double solref_time, char *buf, size_t cap, char *msg,
                   size_t msglen);

#endif
