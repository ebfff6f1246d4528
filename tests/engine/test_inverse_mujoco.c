// Torque requests against MuJoCo's mj_inverse, an independent implementation (built only when
// MuJoCo is found). The same URDF in both (contacts and joint limits off in MuJoCo, so no
// constraint forces), the same joint angles, rates and accelerations at random states, gravity
// (0, 0, -9.81) on both sides. Limits: 1e-12 relative on a 16-link spatial chain and on the
// Panda with its products of inertia removed; 1e-7 on configs/models/panda.urdf itself, whose
// full inertia tensors MuJoCo diagonalises iteratively on import (up to 4e-8 seen).
// argv[1] = the source root.
#include <mujoco/mujoco.h>
#include <unistd.h>

#include "chain_urdf.h"
#include "check.h"

static double urand(unsigned *seed) {  // uniform in [-1, 1)
  *seed = *seed * 1664525u + 1013904223u;
  return (double)(*seed >> 8) / (double)(1u << 23) - 1.0;
}

static void compare(const char *what, const char *path, double tol, unsigned seed) {
  char msg[1000] = "";
  mjModel *mm = mj_loadXML(path, NULL, msg, sizeof(msg));
  CHECK(mm != NULL, "%s: MuJoCo cannot load it: %s", what, msg);
  pt_model *pm = NULL;
  pt_error err = {0};
  CHECK(pt_model_load_file(path, NULL, &pm, &err) == PT_OK, "%s: %s", what, err.msg);
  if (!mm || !pm) {
    if (mm) mj_deleteModel(mm);
    pt_model_free(pm);
    return;
  }
  mm->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_LIMIT;
  mjData *md = mj_makeData(mm);
  const int nj = mm->njnt;
  pt_data *pd = pt_data_new(pm);
  pt_inverse_result *res = pt_inverse_result_new(pm, nj);
  pt_assign *pos = calloc((size_t)nj, sizeof(*pos)), *vel = calloc((size_t)nj, sizeof(*vel));
  pt_assign *acc = calloc((size_t)nj, sizeof(*acc));
  double worst = 0;
  for (int trial = 0; trial < 10; trial++) {
    for (int j = 0; j < nj; j++) {
      const int c = pt_coord_index(pm, mj_id2name(mm, mjOBJ_JOINT, j));
      CHECK(c >= 0 && mm->jnt_type[j] == mjJNT_HINGE, "%s: joint %d not matched", what, j);
      pos[j] = (pt_assign){c, 1.2 * urand(&seed)};
      vel[j] = (pt_assign){c, 2.0 * urand(&seed)};
      acc[j] = (pt_assign){c, 4.0 * urand(&seed)};
    }
    pt_data_reset(pm, pd);
    CHECK(pt_set_state(pm, pd, pos, nj, vel, nj, &err) == PT_OK, "%s state: %s", what, err.msg);
    CHECK(pt_inverse_request(pm, pd, acc, nj, res, &err) == PT_OK, "%s: %s", what, err.msg);
    for (int j = 0; j < nj; j++) {  // Partita's assembled state, exactly
      md->qpos[mm->jnt_qposadr[j]] = pt_coords(pd)[pos[j].coord];
      md->qvel[mm->jnt_dofadr[j]] = pt_coord_rates(pd)[pos[j].coord];
      md->qacc[mm->jnt_dofadr[j]] = acc[j].value;
    }
    mj_inverse(mm, md);
    double dmax = 0, tmax = 0;
    for (int j = 0; j < nj; j++) {
      const double tau = md->qfrc_inverse[mm->jnt_dofadr[j]];
      dmax = fmax(dmax, fabs(res->req_effort[j] - tau));
      tmax = fmax(tmax, fabs(tau));
    }
    CHECK(dmax <= tol * tmax, "%s trial %d: torques differ by %.3g of %.3g", what, trial, dmax,
          tmax);
    worst = fmax(worst, dmax / tmax);
  }
  printf("%s: %d joints, 10 random states, worst |tau - tau_mujoco| / max |tau| = %.3g\n", what,
         nj, worst);
  free(pos);
  free(vel);
  free(acc);
  pt_inverse_result_free(res);
  pt_data_free(pd);
  pt_model_free(pm);
  mj_deleteData(md);
  mj_deleteModel(mm);
}

// path's URDF with every product of inertia (ixy, ixz, iyz) set to 0, written to out.
static int diagonal_inertia(const char *path, const char *out) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  static char text[1 << 17];
  const size_t n = fread(text, 1, sizeof(text) - 1, f);
  fclose(f);
  text[n] = '\0';
  const char *keys[3] = {"ixy=\"", "ixz=\"", "iyz=\""};
  for (int k = 0; k < 3; k++)
    for (char *p = strstr(text, keys[k]); p; p = strstr(p, keys[k])) {
      p += 5;
      char *q = strchr(p, '"');
      if (!q) return -1;
      p[0] = '0';
      p[1] = '"';
      for (char *r = p + 2; r <= q; r++) *r = ' ';
    }
  FILE *g = fopen(out, "wb");
  if (!g) return -1;
  fwrite(text, 1, n, g);
  return fclose(g);
}

int main(int argc, char **argv) {
  char path[1200], diag[64];
  snprintf(path, sizeof(path), "%s/configs/models/panda.urdf", argc > 1 ? argv[1] : ".");
  compare("panda", path, 1e-7, 3u);
  snprintf(diag, sizeof(diag), "/tmp/partita_test_inverse_panda_%d.urdf", (int)getpid());
  CHECK(diagonal_inertia(path, diag) == 0, "cannot write %s", diag);
  compare("panda, diagonal inertias", diag, 1e-12, 3u);
  remove(diag);
  char chain[64];
  snprintf(chain, sizeof(chain), "/tmp/partita_test_inverse_chain16_%d.urdf", (int)getpid());
  CHECK(chain_urdf_write(chain, 16) == 0, "cannot write %s", chain);
  compare("chain 16", chain, 1e-12, 5u);
  remove(chain);
  return finish("inverse_mujoco");
}
