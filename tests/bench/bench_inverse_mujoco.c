// bench_inverse_mujoco: a torque request for every joint (pt_inverse_request) beside MuJoCo's
// mj_inverse on the same URDF: configs/models/panda.urdf (argv[1]), the iiwa14-class arm beside
// it (iiwa14.urdf in the same folder) and spatial revolute chains of 16 and 64 links written to
// /tmp. MuJoCo with contacts and joint limits disabled (no
// constraint forces, as in bench_mujoco), gravity the same (URDF: (0, 0, -9.81) on both sides).
// Both engines see the same joint angles, rates and accelerations at a mid-range pose; the
// table shows microseconds per call of each (interleaved rounds, the fastest round of each),
// their ratio and the largest difference of the torques relative to the largest torque (about
// 1e-15 on the chains; about 1e-9 on the Panda because MuJoCo diagonalises its full inertia
// tensors iteratively on import: tests/engine/test_inverse_mujoco.c). Measured, never asserted.
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chain_urdf.h"
#include "partita.h"

// MuJoCo runs with joint limits off (the engine issue's comparison): so does Partita here.
static const pt_load_options no_limits = {.no_joint_limits = 1};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare(const char *label, const char *path) {
  char err[1000] = "";
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof(err));
  if (!mm) {
    fprintf(stderr, "%s: MuJoCo could not load it: %s\n", label, err);
    return 1;
  }
  mm->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_LIMIT;
  mjData *md = mj_makeData(mm);
  pt_model *pm = NULL;
  pt_error perr = {0};
  if (pt_model_load_file(path, &no_limits, &pm, &perr)) {
    fprintf(stderr, "%s: Partita could not load it: %s\n", label, perr.msg);
    mj_deleteData(md);
    mj_deleteModel(mm);
    return 1;
  }
  const int nj = mm->njnt;
  pt_data *pd = pt_data_new(pm);
  pt_inverse_result *res = pt_inverse_result_new(pm, nj);
  pt_assign *pos = calloc((size_t)nj + 1, sizeof(*pos));
  pt_assign *vel = calloc((size_t)nj + 1, sizeof(*vel));
  pt_assign *acc = calloc((size_t)nj + 1, sizeof(*acc));
  int *dof = calloc((size_t)nj + 1, sizeof(int));
  int *qadr = calloc((size_t)nj + 1, sizeof(int));
  int n = 0, rc = 0;
  // a mid-range pose with nonzero rates: every hinge joint, matched by name
  for (int j = 0; j < nj; j++) {
    const char *name = mj_id2name(mm, mjOBJ_JOINT, j);
    const int c = name ? pt_coord_index(pm, name) : -1;
    if (mm->jnt_type[j] != mjJNT_HINGE || c < 0) {
      fprintf(stderr, "%s: joint %d (%s) not matched\n", label, j, name ? name : "?");
      rc = 1;
      goto done;
    }
    pos[n] = (pt_assign){c, 0.6 * sin(1.3 * j + 0.4)};
    vel[n] = (pt_assign){c, 0.8 * cos(0.7 * j + 0.2)};
    acc[n] = (pt_assign){c, 1.5 * sin(0.9 * j + 1.1)};
    dof[n] = mm->jnt_dofadr[j];
    qadr[n] = mm->jnt_qposadr[j];
    md->qpos[qadr[n]] = pos[n].value;
    md->qvel[dof[n]] = vel[n].value;
    md->qacc[dof[n]] = acc[n].value;
    n++;
  }
  if (pt_set_state(pm, pd, pos, n, vel, n, &perr) ||
      pt_inverse_request(pm, pd, acc, n, res, &perr)) {
    fprintf(stderr, "%s: %s\n", label, perr.msg);
    rc = 1;
    goto done;
  }
  // Partita's state is assembled from the requested values: give MuJoCo the exact ones
  for (int k = 0; k < n; k++) {
    md->qpos[qadr[k]] = pt_coords(pd)[pos[k].coord];
    md->qvel[dof[k]] = pt_coord_rates(pd)[pos[k].coord];
  }
  mj_inverse(mm, md);
  double dmax = 0, tmax = 0;
  for (int k = 0; k < n; k++) {
    dmax = fmax(dmax, fabs(res->req_effort[k] - md->qfrc_inverse[dof[k]]));
    tmax = fmax(tmax, fabs(md->qfrc_inverse[dof[k]]));
  }
  // interleaved rounds of about 20 ms each; the fastest round of each engine
  double best_pt = INFINITY, best_mj = INFINITY;
  long reps = 1;
  for (double t0 = now(), t1 = t0; t1 - t0 < 0.01; reps *= 2, t1 = now())
    for (long r = 0; r < reps; r++) mj_inverse(mm, md);
  for (int round = 0; round < 15; round++) {
    double t0 = now();
    for (long r = 0; r < reps; r++) pt_inverse_request(pm, pd, acc, n, res, &perr);
    double t1 = now();
    for (long r = 0; r < reps; r++) mj_inverse(mm, md);
    double t2 = now();
    best_pt = fmin(best_pt, 1e6 * (t1 - t0) / (double)reps);
    best_mj = fmin(best_mj, 1e6 * (t2 - t1) / (double)reps);
  }
  printf("| %-12s | %4d | %10.2f | %10.2f | %6.2fx | %9.1e |\n", label, n, best_pt, best_mj,
         best_pt / best_mj, dmax / fmax(tmax, 1e-300));
done:
  free(pos);
  free(vel);
  free(acc);
  free(dof);
  free(qadr);
  pt_inverse_result_free(res);
  pt_data_free(pd);
  pt_model_free(pm);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return rc;
}

int main(int argc, char **argv) {
  const char *panda = argc > 1 ? argv[1] : "configs/models/panda.urdf";
  printf("| model        |  dof | Partita us | MuJoCo us |  ratio | max torque diff / max torque |\n"
         "|--------------|-----:|-----------:|----------:|-------:|-----------:|\n");
  int rc = compare("panda (7R)", panda);
  char iiwa[1024];
  const char *slash = strrchr(panda, '/');
  snprintf(iiwa, sizeof(iiwa), "%.*siiwa14.urdf", slash ? (int)(slash - panda + 1) : 0, panda);
  rc |= compare("iiwa14 (7R)", iiwa);
  const int sizes[2] = {16, 64};
  for (int i = 0; i < 2; i++) {
    char path[64], label[32];
    snprintf(path, sizeof(path), "/tmp/partita_bench_chain%d.urdf", sizes[i]);
    snprintf(label, sizeof(label), "chain %d", sizes[i]);
    if (chain_urdf_write(path, sizes[i])) {
      fprintf(stderr, "cannot write %s\n", path);
      rc = 1;
      continue;
    }
    rc |= compare(label, path);
  }
  return rc;
}
