// bench_mujoco: Partita beside MuJoCo (a fair peer on tree-shaped models; it loads URDF).
// Both engines load the same URDF, integrate 1 s from the zero configuration under gravity
// with RK4 at dt = 1 ms (or argv[2]) (MuJoCo with contacts and joint limits disabled, so the two solve the
// same ODE), and the table shows the largest joint-angle difference at the end and the cost
// per step of each. Measured, never asserted.
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partita.h"

static double step_dt = 1e-3;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int compare(const char *dir, const char *file) {
  char path[1024], err[1000] = "";
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof(err));
  if (!mm) {
    printf("| %s | MuJoCo could not load it: %s | | | |\n", file, err);
    return 0;
  }
  mm->opt.integrator = mjINT_RK4;
  mm->opt.timestep = step_dt;
  mm->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_LIMIT;
  mjData *md = mj_makeData(mm);

  pt_model *pm = NULL;
  pt_error perr;
  if (pt_model_load_file(path, NULL, &pm, &perr)) {
    printf("| %s | Partita could not load it: %s | | | |\n", file, perr.msg);
    mj_deleteData(md);
    mj_deleteModel(mm);
    return 0;
  }
  pt_data *pd = pt_data_new(pm);
  pt_set_dt(pd, step_dt);
  pt_set_integrator(pd, PT_INT_RK4);

  const int n = (int)lround(1.0 / step_dt);
  double t0 = now();
  for (int i = 0; i < n; i++) mj_step(mm, md);
  double mj_us = 1e6 * (now() - t0) / n;
  t0 = now();
  for (int i = 0; i < n; i++)
    if (pt_step(pm, pd)) break;
  double pt_us = 1e6 * (now() - t0) / n;

  // match hinge/slide joints by name (URDF joint names on both sides)
  double maxdiff = 0;
  int matched = 0;
  for (int j = 0; j < mm->njnt; j++) {
    if (mm->jnt_type[j] != mjJNT_HINGE && mm->jnt_type[j] != mjJNT_SLIDE) continue;
    const char *name = mj_id2name(mm, mjOBJ_JOINT, j);
    int c = name ? pt_coord_index(pm, name) : -1;
    if (c < 0) continue;
    maxdiff = fmax(maxdiff, fabs(md->qpos[mm->jnt_qposadr[j]] - pt_coords(pd)[c]));
    matched++;
  }
  printf("| %s | %d | %.2e | %.1f | %.1f |\n", file, matched, maxdiff, pt_us, mj_us);
  pt_data_free(pd);
  pt_model_free(pm);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "configs/models";
  if (argc > 2) step_dt = atof(argv[2]);
  printf("| model | joints compared | max |q_partita - q_mujoco| after 1 s | Partita us/step "
         "| MuJoCo us/step |\n|---|---:|---:|---:|---:|\n");
  compare(dir, "arm2r.urdf");
  compare(dir, "panda.urdf");
  return 0;
}
