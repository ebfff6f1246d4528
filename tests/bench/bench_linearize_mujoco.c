// bench_linearize_mujoco: Partita's linearization (pt_linearize: A, B, C, D, M, C, K in joint
// coordinates, eigenvalues off) beside MuJoCo's mjd_transitionFD (centred differences, Euler
// integrator, eps 1e-6) on the same URDF, interleaved in one process. Measured, never asserted.
// Partita is timed twice: the default (the tree method on these trees, linearize_tree.c) and
// the general augmented sensitivity system (PT_LIN_AUGMENTED, the default before the tree
// method), with the largest difference between their A matrices.
//   usage: bench_linearize_mujoco [MODELS_DIR] [SECONDS_PER_MODEL]
// Models: MODELS_DIR/panda.urdf, MODELS_DIR/iiwa14.urdf and 16- and 64-link spatial revolute
// chains written to /tmp; then closed loops (issue 23): the IFToMM A02 chain with N = 10 and 40,
// the Stewart platform and the Delta robot (MODELS_DIR/stewart.yaml, delta.yaml), MuJoCo's
// model written from Partita's spec (mjcf_spec.c, as bench_loops), both at the state after
// 0.1 s of motion. There MuJoCo's A (its tree's 2 nv states, the loops soft) and Partita's (2
// ndof states, the loops exact) have different sizes: the table gives the times, Partita's
// default states and the largest |eigenvalue| of its A.
// Both engines load the same file (MuJoCo with contacts and joint limits off) and are put at
// the same operating point: every joint at 0.2 rad with rate 0.3 rad/s (at rest if Partita's
// velocity assembly refuses that), the joint values and rates copied by name from Partita to
// MuJoCo.
//
// The comparison of A: MuJoCo's A is the discrete transition of one semi-implicit Euler step,
//   v+ = v + dt a(q, v),  q+ = q + dt v+,
// so its velocity rows are [dt a_q, I + dt a_v]. Partita's continuous A = [0 I; a_q a_v]; the
// table's max|dA| is max over the velocity rows of |(A_mj - [0 I]) / dt - [a_q a_v]|, joint
// rows and columns matched by name, and max|A| the largest |a_q|, |a_v| for scale. (MuJoCo's
// finite-difference error at eps 1e-6 divided by dt is about 1e-7 relative.)
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chain_urdf.h"
#include "fourbar_chain.h"
#include "mjcf_spec.h"
#include "partita.h"

// MuJoCo runs with joint limits off (the engine issue's comparison): so does Partita here.
static const pt_load_options no_limits = {.no_joint_limits = 1};

#define EPS 1e-6
#define DT 1e-3

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// k linearizations of pd by lz, the last one's result left in *r
static void linearize_k(pt_linearizer *lz, const pt_data *pd, const pt_linearize_options *opt,
                        pt_linearization **r, int k) {
  pt_error err;
  for (int i = 0; i < k; i++) {
    pt_linearization_free(*r);
    *r = NULL;
    pt_linearize_with(lz, pd, opt, 0, r, &err);
  }
}

// A chain of n slender links (0.5 m, 0.5 kg) along +x, joints about y and z in turn.
static int write_chain(const char *path, int n) {
  const chain_link l = {0.5, 0.5, 0.000025, 0.0104292, 1, 1, 0};
  return chain_urdf_write_link(path, n, &l);
}

typedef struct {
  double pt_us, aug_us, mj_us, dA, amax, dAaug;
  int nv, ok;
} result;

static int cmp_dbl(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static result compare(const char *label, const char *path, double budget) {
  result res = {0, 0, 0, 0, 0, 0, 0, 0};
  char err[1000] = "";
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof(err));
  if (!mm) {
    printf("%-10s MuJoCo could not load it: %s\n", label, err);
    return res;
  }
  mm->opt.integrator = mjINT_EULER;
  mm->opt.timestep = DT;
  mm->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_LIMIT;
  mjData *md = mj_makeData(mm);
  pt_model *pm = NULL;
  pt_error perr = {0, {0}};
  if (pt_model_load_file(path, &no_limits, &pm, &perr)) {
    printf("%-10s Partita could not load it: %s\n", label, perr.msg);
    mj_deleteData(md);
    mj_deleteModel(mm);
    return res;
  }
  pt_data *pd = pt_data_new(pm);
  const int nc = pt_model_ncoord(pm), nv = mm->nv;
  pt_assign *pos = calloc((size_t)nc + 1, sizeof(pt_assign));
  pt_assign *vel = calloc((size_t)nc + 1, sizeof(pt_assign));
  int *mj_of = calloc((size_t)nc + 1, sizeof(int));   // Partita coordinate -> MuJoCo dof
  const int n2 = 2 * nv + mm->na;
  double *Amj = calloc((size_t)n2 * n2 + 1, sizeof(double));
  double *Bmj = calloc((size_t)n2 * (mm->nu + 1), sizeof(double));
  for (int i = 0; i < nc; i++) {
    pos[i] = (pt_assign){i, 0.2};
    vel[i] = (pt_assign){i, 0.3};
  }
  if (pt_set_state(pm, pd, pos, nc, vel, nc, NULL) != 0) {
    printf("%-10s (operating point: joint rates not assembled, at rest instead)\n", label);
    pt_set_state(pm, pd, pos, nc, NULL, 0, NULL);
  }
  int matched = 0;
  for (int i = 0; i < nc; i++) {
    const int j = mj_name2id(mm, mjOBJ_JOINT, pt_coord_name(pm, i));
    mj_of[i] = j >= 0 ? mm->jnt_dofadr[j] : -1;
    if (j < 0) continue;
    md->qpos[mm->jnt_qposadr[j]] = pt_coords(pd)[i];
    md->qvel[mm->jnt_dofadr[j]] = pt_coord_rates(pd)[i];
    matched++;
  }
  mj_forward(mm, md);

  pt_linearize_options opt;
  memset(&opt, 0, sizeof(opt));
  pt_linearize_options opt_aug = opt;
  opt_aug.solver = PT_LIN_AUGMENTED;
  pt_linearization *r = NULL, *ra = NULL;
  pt_linearizer *lz = pt_linearizer_new(pm), *lza = pt_linearizer_new(pm);
  if (!lz || !lza || matched != nv || pt_linearize_with(lz, pd, &opt, 0, &r, &perr) ||
      pt_linearize_with(lza, pd, &opt_aug, 0, &ra, &perr)) {
    printf("%-10s %d of %d MuJoCo dofs matched by name; %s\n", label, matched, nv,
           matched == nv ? perr.msg : "");
    goto out;
  }
  // interleaved: batches of Partita calls, then of MuJoCo calls; median of the batch means
  enum { MAXB = 4096 };
  static double tp[MAXB], ta[MAXB], tm[MAXB];
  int nb = 0;
  const double t_end = now() + budget;
  while (nb < MAXB && (now() < t_end || nb < 5)) {
    const int k = nv > 32 ? 1 : 10;
    double t0 = now();
    linearize_k(lz, pd, &opt, &r, k);
    double t1 = now();
    for (int i = 0; i < k; i++) mjd_transitionFD(mm, md, EPS, 1, Amj, Bmj, NULL, NULL);
    double t2 = now();
    linearize_k(lza, pd, &opt_aug, &ra, k);
    double t3 = now();
    tp[nb] = (t1 - t0) / k, tm[nb] = (t2 - t1) / k, ta[nb] = (t3 - t2) / k;
    nb++;
  }
  if (!r || !ra) goto out;
  qsort(tp, (size_t)nb, sizeof(double), cmp_dbl);
  qsort(ta, (size_t)nb, sizeof(double), cmp_dbl);
  qsort(tm, (size_t)nb, sizeof(double), cmp_dbl);
  res.pt_us = 1e6 * tp[nb / 2], res.mj_us = 1e6 * tm[nb / 2], res.aug_us = 1e6 * ta[nb / 2];
  for (int i = 0; i < 4 * r->nz * r->nz && ra->nz == r->nz; i++)
    res.dAaug = fmax(res.dAaug, fabs(r->A[i] - ra->A[i]));
  // velocity rows: (A_mj - [0 I]) / dt against Partita's [a_q a_v], matched by name
  const int z = r->nz;
  int *dof = calloc((size_t)z + 1, sizeof(int));
  int found = dof != NULL;
  for (int i = 0; found && i < z; i++) {
    const int c = pt_coord_index(pm, r->state_name[i]);
    dof[i] = c >= 0 ? mj_of[c] : -1;
    found = dof[i] >= 0;
  }
  if (found && z == nv) {
    for (int i = 0; i < z; i++)
      for (int j = 0; j < 2 * z; j++) {
        const int mi = nv + dof[i], mj = j < z ? dof[j] : nv + dof[j - z];
        const double amj = (Amj[(size_t)mi * n2 + mj] - (mi == mj)) / DT;
        const double apt = r->A[(size_t)(z + i) * 2 * z + j];
        res.dA = fmax(res.dA, fabs(amj - apt));
        res.amax = fmax(res.amax, fabs(apt));
      }
    res.ok = 1;
  } else {
    printf("%-10s states do not match MuJoCo's dofs\n", label);
  }
  free(dof);
  res.nv = nv;
out:
  pt_linearization_free(r);
  pt_linearization_free(ra);
  pt_linearizer_free(lz);
  pt_linearizer_free(lza);
  free(pos), free(vel), free(mj_of), free(Amj), free(Bmj);
  pt_data_free(pd);
  pt_model_free(pm);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return res;
}

// Closed loops: both engines after 0.1 s of motion from the model's initial state; times
// only (the states differ: see above).
static void compare_loop(const char *label, pt_spec *spec, double budget) {
  static char xml[1 << 18];
  char msg[256], path[256], err[1000] = "";
  pt_model *pm = NULL;
  pt_error perr;
  if (pt_model_compile(spec, &pm, &perr)) {
    printf("%-10s compile: %s\n", label, perr.msg);
    return;
  }
  snprintf(path, sizeof(path), "/tmp/partita_lin_%s.xml", label);
  FILE *f = fopen(path, "w");
  if (mjcf_from_spec(spec, 2 * pt_model_dt(pm), xml, sizeof(xml), msg, sizeof(msg)) < 0 || !f ||
      fputs(xml, f) < 0) {
    printf("%-10s MJCF: %s\n", label, msg);
    if (f) fclose(f);
    pt_model_free(pm);
    return;
  }
  fclose(f);
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof(err));
  if (!mm) {
    printf("%-10s MuJoCo: %s\n", label, err);
    pt_model_free(pm);
    return;
  }
  mm->opt.integrator = mjINT_EULER;
  mm->opt.timestep = DT;
  mjData *md = mj_makeData(mm);
  pt_data *pd = pt_data_new(pm);
  for (int i = 0; i < 100; i++) {
    mj_step(mm, md);
    pt_step(pm, pd);
  }
  const int n2 = 2 * mm->nv + mm->na;
  double *Amj = calloc((size_t)n2 * n2 + 1, sizeof(double));
  double *Bmj = calloc((size_t)n2 * (mm->nu + 1), sizeof(double));
  pt_linearize_options opt;
  memset(&opt, 0, sizeof(opt));
  pt_linearizer *lz = pt_linearizer_new(pm);
  pt_linearization *r = NULL;
  if (!lz || pt_linearize_with(lz, pd, &opt, PT_LIN_EIGEN, &r, &perr)) {
    printf("%-10s Partita: %s\n", label, perr.msg);
    goto out;
  }
  enum { MAXB = 4096 };
  static double tp[MAXB], tm[MAXB];
  int nb = 0;
  const double t_end = now() + budget;
  while (nb < MAXB && (now() < t_end || nb < 5)) {
    const int k = mm->nv > 32 ? 1 : 10;
    double t0 = now();
    linearize_k(lz, pd, &opt, &r, k);
    double t1 = now();
    for (int i = 0; i < k; i++) mjd_transitionFD(mm, md, EPS, 1, Amj, Bmj, NULL, NULL);
    double t2 = now();
    tp[nb] = (t1 - t0) / k, tm[nb] = (t2 - t1) / k;
    nb++;
  }
  qsort(tp, (size_t)nb, sizeof(double), cmp_dbl);
  qsort(tm, (size_t)nb, sizeof(double), cmp_dbl);
  char states[96] = "";
  for (int i = 0; r && i < r->nz && strlen(states) < 60; i++)
    snprintf(states + strlen(states), sizeof(states) - strlen(states), "%s%s", i ? "," : "",
             r->state_name[i]);
  printf("%-10s %4d %4d %12.1f %12.1f %8.2f  %s\n", label, pt_model_ndof(pm), mm->nv,
         1e6 * tp[nb / 2], 1e6 * tm[nb / 2], tp[nb / 2] / tm[nb / 2], states);
out:
  pt_linearization_free(r);
  pt_linearizer_free(lz);
  free(Amj), free(Bmj);
  pt_data_free(pd);
  pt_model_free(pm);
  mj_deleteData(md);
  mj_deleteModel(mm);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "configs/models";
  const double budget = argc > 2 ? atof(argv[2]) : 1.0;
  char path[1024];
  printf("linearization: Partita pt_linearize_with (A, B, C, D, M, C, K; no eigenvalues; "
         "partita_us the default = the tree method, augmented_us the general augmented "
         "system) vs MuJoCo %s mjd_transitionFD (centred, Euler, eps %g), interleaved, median "
         "us per call\n", mj_versionString(), EPS);
  printf("%-10s %4s %12s %12s %12s %8s %9s %10s %9s %10s\n", "model", "dof", "partita_us",
         "augmented_us", "mujoco_us", "ratio", "aug_ratio", "max|dA|", "max|A|", "tree-aug");
  const char *labels[4] = {"panda", "iiwa14", "chain16", "chain64"};
  for (int k = 0; k < 4; k++) {
    if (k < 2) {
      snprintf(path, sizeof(path), "%s/%s.urdf", dir, labels[k]);
    } else {
      const int n = k == 2 ? 16 : 64;
      snprintf(path, sizeof(path), "/tmp/partita_lin_chain%d.urdf", n);
      if (write_chain(path, n)) {
        printf("%-10s cannot write %s\n", labels[k], path);
        continue;
      }
    }
    result r = compare(labels[k], path, budget);
    if (r.ok)
      printf("%-10s %4d %12.1f %12.1f %12.1f %8.2f %9.2f %10.2g %9.3g %10.2g\n", labels[k],
             r.nv, r.pt_us, r.aug_us, r.mj_us, r.pt_us / r.mj_us, r.aug_us / r.mj_us, r.dA,
             r.amax, r.dAaug);
  }
  printf("\nclosed loops (Partita: exact loops, 2 ndof states; MuJoCo: its tree's 2 nv states, "
         "soft loops), default states, median us per call:\n");
  printf("%-10s %4s %4s %12s %12s %8s  %s\n", "model", "ndof", "nv", "partita_us", "mujoco_us",
         "ratio", "Partita's states");
  static char text[1 << 17];
  for (int k = 0; k < 4; k++) {
    pt_spec *spec = NULL;
    pt_error perr;
    const char *lab[4] = {"a02-10", "a02-40", "stewart", "delta"};
    int rc;
    if (k < 2) {
      const int len = fourbar_chain_yaml(text, sizeof(text), k ? 40 : 10);
      rc = len < 0 || pt_spec_from_yaml(text, (size_t)len, lab[k], &spec, &perr);
    } else {
      snprintf(path, sizeof(path), "%s/%s.yaml", dir, lab[k]);
      rc = pt_spec_from_file(path, NULL, &spec, &perr);
    }
    if (rc) {
      printf("%-10s %s\n", lab[k], perr.msg);
      continue;
    }
    compare_loop(lab[k], spec, budget);
    pt_spec_free(spec);
  }
  return 0;
}
