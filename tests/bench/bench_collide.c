// bench_collide: nanoseconds per narrow-phase call of src/collide beside MuJoCo's collision
// (mj_collision) on the same two shapes in the same random near-contact poses, interleaved in
// one process. MuJoCo's time is that of mj_kinematics + mj_collision less mj_kinematics alone
// (its collision reads the poses kinematics writes); Partita's includes pt_shape_world for both
// shapes. Measured, never asserted: prints a table.
//
//   bench_collide [seconds per pair, default 0.2]
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collide.h"
#include "ptu.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double urand(void) { return (double)rand() / RAND_MAX; }

enum { NPOSE = 256 };

typedef struct {
  const char *name;
  int ta, tb;   // pt_shape_type (PT_SHAPE_HULL: a 0.2 m icosahedron)
} pair_def;

static const double ico_r = 0.2;

static void ico(double v[36]) {
  double phi = (1 + sqrt(5)) / 2, s = ico_r / sqrt(1 + phi * phi);
  int n = 0;
  for (int c = 0; c < 3; c++)
    for (int k = 0; k < 4; k++, n++) {
      double p[3] = {0, k & 1 ? s : -s, k & 2 ? phi * s : -phi * s};
      for (int i = 0; i < 3; i++) v[3 * n + (i + c) % 3] = p[i];
    }
}

// The MJCF geom of a shape type, sized as the Partita shape below.
static void geom_xml(char *out, size_t n, int t) {
  switch (t) {
  case PT_SHAPE_SPHERE:
    snprintf(out, n, "<geom type=\"sphere\" size=\"0.15\" margin=\"0.01\"/>");
    break;
  case PT_SHAPE_CAPSULE:
    snprintf(out, n, "<geom type=\"capsule\" size=\"0.08 0.15\" margin=\"0.01\"/>");
    break;
  case PT_SHAPE_BOX:
    snprintf(out, n, "<geom type=\"box\" size=\"0.15 0.1 0.08\" margin=\"0.01\"/>");
    break;
  case PT_SHAPE_CYLINDER:
    snprintf(out, n, "<geom type=\"cylinder\" size=\"0.12 0.1\" margin=\"0.01\"/>");
    break;
  default:
    snprintf(out, n, "<geom type=\"mesh\" mesh=\"ico\" margin=\"0.01\"/>");
  }
}

static pt_shape partita_shape(int t, const pt_hull *h) {
  pt_shape s = {.type = t, .quat = {1, 0, 0, 0}, .hull = h};
  static const double sz[6][3] = {{0}, {0.15}, {0.08, 0.15}, {0.15, 0.1, 0.08}, {0.12, 0.1}};
  if (t < PT_SHAPE_HULL) memcpy(s.size, sz[t], sizeof(s.size));
  pt_error err;
  if (pt_shape_init(&s, &err)) {
    fprintf(stderr, "shape: %s\n", err.msg);
    exit(1);
  }
  return s;
}

int main(int argc, char **argv) {
  double budget = argc > 1 ? atof(argv[1]) : 0.2;
  static const pair_def pairs[] = {
      {"plane-sphere", PT_SHAPE_PLANE, PT_SHAPE_SPHERE},
      {"plane-capsule", PT_SHAPE_PLANE, PT_SHAPE_CAPSULE},
      {"plane-box", PT_SHAPE_PLANE, PT_SHAPE_BOX},
      {"plane-cylinder", PT_SHAPE_PLANE, PT_SHAPE_CYLINDER},
      {"plane-hull", PT_SHAPE_PLANE, PT_SHAPE_HULL},
      {"sphere-sphere", PT_SHAPE_SPHERE, PT_SHAPE_SPHERE},
      {"sphere-capsule", PT_SHAPE_SPHERE, PT_SHAPE_CAPSULE},
      {"sphere-box", PT_SHAPE_SPHERE, PT_SHAPE_BOX},
      {"sphere-cylinder", PT_SHAPE_SPHERE, PT_SHAPE_CYLINDER},
      {"capsule-capsule", PT_SHAPE_CAPSULE, PT_SHAPE_CAPSULE},
      {"capsule-box", PT_SHAPE_CAPSULE, PT_SHAPE_BOX},
      {"box-box", PT_SHAPE_BOX, PT_SHAPE_BOX},
      {"box-cylinder", PT_SHAPE_BOX, PT_SHAPE_CYLINDER},
      {"cylinder-cylinder", PT_SHAPE_CYLINDER, PT_SHAPE_CYLINDER},
      {"box-hull", PT_SHAPE_BOX, PT_SHAPE_HULL},
      {"hull-hull", PT_SHAPE_HULL, PT_SHAPE_HULL},
  };
  double v[36];
  ico(v);
  pt_hull *hull = NULL;
  pt_error err;
  if (pt_hull_build(&hull, v, 12, 0, &err)) {
    fprintf(stderr, "hull: %s\n", err.msg);
    return 1;
  }
  char vtext[1024] = "";
  for (int i = 0; i < 36; i++)
    snprintf(vtext + strlen(vtext), sizeof(vtext) - strlen(vtext), "%.17g ", v[i]);
  static pt_collide_work work;
  pt_collide_work_init(&work);
  printf("| pair | Partita ns/call | MuJoCo ns/call | ratio | contacts/call Partita | MuJoCo |\n");
  printf("|---|---:|---:|---:|---:|---:|\n");
  for (size_t q = 0; q < sizeof(pairs) / sizeof(pairs[0]); q++) {
    const pair_def *P = &pairs[q];
    char ga[200], gb[200], xml[4096];
    geom_xml(ga, sizeof(ga), P->ta);
    geom_xml(gb, sizeof(gb), P->tb);
    int plane = P->ta == PT_SHAPE_PLANE;
    snprintf(xml, sizeof(xml),
             "<mujoco><option gravity=\"0 0 0\"/>"
             "<asset><mesh name=\"ico\" vertex=\"%s\"/></asset>"
             "<worldbody>%s<body name=\"b\"><freejoint/>%s</body>%s</worldbody></mujoco>",
             vtext, plane ? "<geom type=\"plane\" size=\"0 0 1\" margin=\"0.01\"/>" : "", gb,
             plane ? "" : "<body name=\"a\"><freejoint/>" "GEOM_A" "</body>");
    char *at = strstr(xml, "GEOM_A");
    if (at) {   // splice geom a in
      char tail[4096];
      snprintf(tail, sizeof(tail), "%s", at + 6);
      snprintf(at, sizeof(xml) - (size_t)(at - xml), "%s%s", ga, tail);
    }
    char mjerr[500];
    static mjVFS vfs;   // big: not on the stack
    mj_defaultVFS(&vfs);
    mj_makeEmptyFileVFS(&vfs, "pair.xml", (int)strlen(xml));
    memcpy(vfs.filedata[vfs.nfile - 1], xml, strlen(xml));
    mjModel *m = mj_loadXML("pair.xml", &vfs, mjerr, sizeof(mjerr));
    mj_deleteVFS(&vfs);
    if (!m) {
      fprintf(stderr, "%s: MuJoCo: %s\n", P->name, mjerr);
      return 1;
    }
    mjData *d = mj_makeData(m);
    // poses: body b (and a) random, b near a (or the plane)
    pt_shape sa = partita_shape(P->ta, hull), sb = partita_shape(P->tb, hull);
    double qa[NPOSE][7], qb[NPOSE][7];
    srand(7);
    for (int i = 0; i < NPOSE; i++) {
      for (int k = 0; k < 4; k++) qa[i][3 + k] = 2 * urand() - 1, qb[i][3 + k] = 2 * urand() - 1;
      double na = 0, nb = 0;
      for (int k = 0; k < 4; k++)
        na += qa[i][3 + k] * qa[i][3 + k], nb += qb[i][3 + k] * qb[i][3 + k];
      for (int k = 0; k < 4; k++) qa[i][3 + k] /= sqrt(na), qb[i][3 + k] /= sqrt(nb);
      double dir[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1};
      double r = plane ? 0 : (0.4 + 0.7 * urand()) * (sa.rbound + sb.rbound) / ptu_norm3(dir);
      for (int k = 0; k < 3; k++) qa[i][k] = 0, qb[i][k] = r * dir[k];
      if (plane) qb[i][2] = (0.3 + 0.8 * urand()) * sb.rbound;
      if (plane) qa[i][3] = 1, qa[i][4] = qa[i][5] = qa[i][6] = 0;
    }
    // MuJoCo's qpos: body order in the file (b first, then a)
    double t_pt = 0, t_mj = 0, t_kin = 0;
    long n_pt = 0, n_mj = 0, calls = 0;
    double t_end = now() + budget;
    while (now() < t_end) {
      double t0 = now();
      for (int i = 0; i < NPOSE; i++) {   // Partita
        pt_pose pa, pb;
        double Ra[9], Rb[9];
        ptu_quat2mat(Ra, qa[i] + 3);
        ptu_quat2mat(Rb, qb[i] + 3);
        pt_shape_world(&pa, &sa, qa[i], Ra);
        pt_shape_world(&pb, &sb, qb[i], Rb);
        pt_contact c[PT_COLLIDE_MAX_POINTS];
        n_pt += pt_collide(c, PT_COLLIDE_MAX_POINTS, &sa, &pa, &sb, &pb, 0.01, &work);
      }
      double t1 = now();
      for (int i = 0; i < NPOSE; i++) {   // MuJoCo: kinematics and collision
        memcpy(d->qpos, qb[i], sizeof(double[7]));
        if (!plane) memcpy(d->qpos + 7, qa[i], sizeof(double[7]));
        mj_kinematics(m, d);
        mj_collision(m, d);
        n_mj += d->ncon;
      }
      double t2 = now();
      for (int i = 0; i < NPOSE; i++) {   // MuJoCo: kinematics alone
        memcpy(d->qpos, qb[i], sizeof(double[7]));
        if (!plane) memcpy(d->qpos + 7, qa[i], sizeof(double[7]));
        mj_kinematics(m, d);
      }
      double t3 = now();
      t_pt += t1 - t0, t_mj += t2 - t1, t_kin += t3 - t2;
      calls += NPOSE;
    }
    double ns_pt = 1e9 * t_pt / calls, ns_mj = 1e9 * (t_mj - t_kin) / calls;
    printf("| %s | %.0f | %.0f | %.2f | %.2f | %.2f |\n", P->name, ns_pt, ns_mj, ns_pt / ns_mj,
           (double)n_pt / calls, (double)n_mj / calls);
    mj_deleteData(d);
    mj_deleteModel(m);
  }
  printf("\nEPA runs stopped by a cap: %ld, GJK: %ld\n", work.epa_capped, work.gjk_capped);
  free(hull);
  return 0;
}
