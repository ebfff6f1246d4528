// bench_loops: closed-loop mechanisms, Partita beside MuJoCo 2.2.2 (issue 23). Measured, never
// asserted.
//   usage: bench_loops MODELS_DIR [SECONDS [REPEATS [ONLY [REFERENCE_DIR]]]]
// Mechanisms: the four-bar (IFToMM A02 with N = 1), the A02 chain at N = 10, 20 and 40
// (tests/common/fourbar_chain.c), the 6-UPS Stewart platform (MODELS_DIR/stewart.yaml) free and
// with its six leg forces changed every step (a hardware-in-the-loop rig), and the Delta robot
// with parallelogram forearms (MODELS_DIR/delta.yaml). ONLY (a mechanism's label, e.g. a02-40)
// runs one of them.
//
// Both engines take the same model: MuJoCo's is written from Partita's spec (mjcf_spec.c: a
// spanning tree in joint coordinates, the loops closed by `connect` equality constraints with
// solref (2 dt, 1), contacts off), its initial velocities copied from Partita's assembled
// state by joint name. RK4 at dt 1 ms, SECONDS of motion (default 2), run REPEATS times
// (default 3) with the two engines interleaved in chunks of 50 steps; every step is timed on
// its own (thread CPU time, less the cost of reading the clock) and keeps the fastest of its
// repeats, so a slow step is the engine's and not the machine's. Printed per engine: mean,
// median and slowest step and slowest / median; the largest constraint violation over the run
// (Partita: its position residual, normalisation rows included; MuJoCo: |efc_pos| of the
// equality rows) and energy error |E - E0| (free runs only); the ratio of the means; the
// largest difference of the joint coordinates between the engines at the end.
// With REFERENCE_DIR (default ../shared/reference) the A02 N = 40 run also prints each
// engine's largest distance of B0 from the published solution over the time covered.
//
// Instructions per step, repeatable on a noisy machine (callgrind counts inside pt_step, then
// inside mj_step; divide by the steps of the run):
//   valgrind --tool=callgrind --toggle-collect=pt_step build/tests/bench/bench_loops
//     configs/models 0.2 1 stewart
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fourbar_chain.h"
#include "mjcf_spec.h"
#include "partita.h"

static double clock_cost;  // s: an empty interval between two clock readings

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void measure_clock(void) {
  clock_cost = INFINITY;
  for (int i = 0; i < 20000; i++) {
    const double a = now(), b = now();
    clock_cost = fmin(clock_cost, b - a);
  }
}

typedef struct {
  const char *label, *name;
  int ncell;     // > 0: the A02 chain with this many cells
  const char *file;  // else a model file in MODELS_DIR
  int driven;    // the inputs change every step
} mechanism;

static const mechanism mechanisms[] = {
    {"fourbar", "four-bar (IFToMM A02, N = 1)", 1, NULL, 0},
    {"a02-10", "A02 chain N = 10", 10, NULL, 0},
    {"a02-20", "A02 chain N = 20", 20, NULL, 0},
    {"a02-40", "A02 chain N = 40", 40, NULL, 0},
    {"stewart", "6-UPS Stewart platform", 0, "stewart.yaml", 0},
    {"stewart-driven", "same, leg forces changed every step", 0, "stewart.yaml", 1},
    {"delta", "Delta robot (parallelogram forearms)", 0, "delta.yaml", 0},
};

// Inputs of the driven run at time t: 100 sin(4 pi t + i pi / 3) N on leg i.
static double input_at(int i, double t) { return 100 * sin(4 * M_PI * t + i * M_PI / 3); }

typedef struct {
  double mean, median, slowest;  // us
  double viol, energy;           // max constraint violation, max |E - E0|
  double ref_err;                // A02 N = 40: max |B0 - reference| (-1: not measured)
} stats;

static int cmp_dbl(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void summarise(double *t, int n, stats *s) {
  double sum = 0;
  for (int i = 0; i < n; i++) sum += t[i];
  s->mean = 1e6 * sum / n;
  qsort(t, (size_t)n, sizeof(double), cmp_dbl);
  s->median = 1e6 * t[n / 2];
  s->slowest = 1e6 * t[n - 1];
}

// MuJoCo's state from Partita's (assembled) initial one: hinge and slide rates by name, free
// joints from the body's velocity (linear global, angular in the body frame).
static void copy_velocities(const mjModel *mm, mjData *md, const pt_model *pm,
                            const pt_data *pd) {
  for (int j = 0; j < mm->njnt; j++) {
    const char *name = mj_id2name(mm, mjOBJ_JOINT, j);
    const int adr = mm->jnt_dofadr[j];
    if (mm->jnt_type[j] == mjJNT_FREE) {
      const int b = pt_body_index(pm, mj_id2name(mm, mjOBJ_BODY, mm->jnt_bodyid[j]));
      if (b < 0) continue;
      const double *v = pt_body_velocity(pd, b), *q = pt_body_pose(pd, b);
      double quat[4] = {q[3], q[4], q[5], q[6]}, w[3], conj[4];
      mju_negQuat(conj, quat);
      mju_rotVecQuat(w, v + 3, conj);
      for (int k = 0; k < 3; k++) {
        md->qvel[adr + k] = v[k];
        md->qvel[adr + 3 + k] = w[k];
      }
      continue;
    }
    const int c = name ? pt_coord_index(pm, name) : -1;
    if (c >= 0) md->qvel[adr] = pt_coord_rates(pd)[c];
  }
}

// Largest distance between the two engines' body CoMs (the MJCF's geometry check).
static double geometry_check(const mjModel *mm, const mjData *md, const pt_model *pm,
                             const pt_data *pd) {
  double e = 0;
  for (int b = 1; b < mm->nbody; b++) {
    const int i = pt_body_index(pm, mj_id2name(mm, mjOBJ_BODY, b));
    if (i < 0) return INFINITY;
    for (int k = 0; k < 3; k++) e = fmax(e, fabs(md->xipos[3 * b + k] - pt_body_pose(pd, i)[k]));
  }
  return e;
}

// Largest difference of the joint coordinates (hinges and slides, matched by name) between
// the engines: the two solve the same equations, MuJoCo with soft loop closures.
static double coord_difference(const mjModel *mm, const mjData *md, const pt_model *pm,
                               const pt_data *pd) {
  double e = 0;
  for (int j = 0; j < mm->njnt; j++) {
    if (mm->jnt_type[j] != mjJNT_HINGE && mm->jnt_type[j] != mjJNT_SLIDE) continue;
    const char *name = mj_id2name(mm, mjOBJ_JOINT, j);
    const int c = name ? pt_coord_index(pm, name) : -1;
    if (c >= 0) e = fmax(e, fabs(md->qpos[mm->jnt_qposadr[j]] - pt_coords(pd)[c]));
  }
  return e;
}

static double mj_violation(const mjModel *mm, const mjData *md) {
  (void)mm;
  double v = 0;
  for (int i = 0; i < md->nefc; i++)
    if (md->efc_type[i] == mjCNSTR_EQUALITY) v = fmax(v, fabs(md->efc_pos[i]));
  return v;
}

// The top of crank 0 (B0): its CoM plus its body y axis times 0.5.
static void b0_partita(const pt_data *d, double *x, double *y) {
  const double *q = pt_body_pose(d, 0), *p = q + 3;
  *x = q[0] + 0.5 * 2 * (p[1] * p[2] - p[0] * p[3]);
  *y = q[1] + 0.5 * (2 * (p[0] * p[0] + p[2] * p[2]) - 1);
}

static void b0_mujoco(const mjModel *mm, const mjData *md, double *x, double *y) {
  const int b = mj_name2id(mm, mjOBJ_BODY, "crank0");
  const double *R = md->xmat + 9 * b, *c = md->xipos + 3 * b;
  *x = c[0] + 0.5 * R[1];
  *y = c[1] + 0.5 * R[4];
}

static int run(const char *models, const mechanism *mech, double seconds, int repeats,
               const char *refdir) {
  static char text[1 << 17], xml[1 << 18];
  char msg[256] = "", path[1100];
  pt_spec *spec = NULL;
  pt_error perr;
  if (mech->ncell > 0) {
    const int len = fourbar_chain_yaml(text, sizeof(text), mech->ncell);
    if (len < 0 || pt_spec_from_yaml(text, (size_t)len, mech->label, &spec, &perr)) {
      printf("| %s | model: %s |\n", mech->name, len < 0 ? "too long" : perr.msg);
      return 1;
    }
  } else {
    snprintf(path, sizeof(path), "%s/%s", models, mech->file);
    if (pt_spec_from_file(path, NULL, &spec, &perr)) {
      printf("| %s | %s |\n", mech->name, perr.msg);
      return 1;
    }
  }
  pt_model *pm = NULL;
  if (pt_model_compile(spec, &pm, &perr)) {
    printf("| %s | compile: %s |\n", mech->name, perr.msg);
    pt_spec_free(spec);
    return 1;
  }
  const double dt = pt_model_dt(pm);
  if (mjcf_from_spec(spec, 2 * dt, xml, sizeof(xml), msg, sizeof(msg)) < 0) {
    printf("| %s | MJCF: %s |\n", mech->name, msg);
    pt_spec_free(spec);
    pt_model_free(pm);
    return 1;
  }
  pt_spec_free(spec);
  snprintf(path, sizeof(path), "/tmp/bench_loops_%s.xml", mech->label);
  FILE *f = fopen(path, "w");
  if (!f || fputs(xml, f) < 0) {
    printf("| %s | cannot write %s |\n", mech->name, path);
    if (f) fclose(f);
    pt_model_free(pm);
    return 1;
  }
  fclose(f);
  char err[1000] = "";
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof(err));
  if (!mm) {
    printf("| %s | MuJoCo: %s |\n", mech->name, err);
    pt_model_free(pm);
    return 1;
  }
  mjData *md = mj_makeData(mm);
  pt_data *pd = pt_data_new(pm);
  pt_set_integrator(pd, PT_INT_RK4);

  enum { NREF = 1000 };
  static double rt[NREF], rx[NREF], ry[NREF];
  const int nref = mech->ncell == 40 && refdir ? reference_table(refdir, "iftomm/a02-n-fourbar.ref", rt, rx, ry, NREF) : -1;

  const int n = (int)lround(seconds / dt), chunk = 50;
  double *pt_step_t = malloc(sizeof(double) * (size_t)n);
  double *mj_step_t = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) pt_step_t[i] = mj_step_t[i] = INFINITY;
  stats ps = {0, 0, 0, 0, 0, -1}, ms = {0, 0, 0, 0, 0, -1};
  double geom = 0, cdiff = 0;
  int failed_at = -1;
  pt_counters cnt;
  memset(&cnt, 0, sizeof(cnt));
  for (int rep = 0; rep < repeats; rep++) {
    pt_data_reset(pm, pd);
    mj_resetData(mm, md);
    copy_velocities(mm, md, pm, pd);
    mj_forward(mm, md);
    if (rep == 0) geom = geometry_check(mm, md, pm, pd);
    const double pe0 = pt_energy_kinetic(pd) + pt_energy_potential(pd);
    const double me0 = md->energy[0] + md->energy[1];
    int iref = 0;
    for (int i0 = 0; i0 < n; i0 += chunk) {
      const int i1 = i0 + chunk < n ? i0 + chunk : n;
      for (int i = i0; i < i1; i++) {
        if (mech->driven)
          for (int k = 0; k < mm->nu; k++) md->ctrl[k] = input_at(k, md->time);
        const double t0 = now();
        mj_step(mm, md);
        const double t1 = now() - t0 - clock_cost;
        mj_step_t[i] = fmin(mj_step_t[i], t1);
        if (rep == 0) {
          ms.viol = fmax(ms.viol, mj_violation(mm, md));
          if (!mech->driven)
            ms.energy = fmax(ms.energy, fabs(md->energy[0] + md->energy[1] - me0));
        }
      }
      for (int i = i0; i < i1 && failed_at < 0; i++) {
        if (mech->driven)
          for (int k = 0; k < pt_model_ninput(pm); k++) pt_set_input(pm, pd, k, input_at(k, pt_time(pd)));
        const double t0 = now();
        const int rc = pt_step(pm, pd);
        const double t1 = now() - t0 - clock_cost;
        if (rc) {
          failed_at = i;
          break;
        }
        pt_step_t[i] = fmin(pt_step_t[i], t1);
        if (rep == 0) {
          ps.viol = fmax(ps.viol, pt_residual_position(pd));
          if (!mech->driven)
            ps.energy = fmax(ps.energy,
                             fabs(pt_energy_kinetic(pd) + pt_energy_potential(pd) - pe0));
        }
      }
      // the reference is sampled every 0.05 s: both engines are at the same time here
      while (rep == 0 && nref > 0 && iref < nref && rt[iref] <= md->time + dt / 2) {
        if (fabs(rt[iref] - md->time) < dt / 2 && failed_at < 0) {
          double x, y;
          b0_partita(pd, &x, &y);
          ps.ref_err = fmax(ps.ref_err, fmax(fabs(x - rx[iref]), fabs(y - ry[iref])));
          b0_mujoco(mm, md, &x, &y);
          ms.ref_err = fmax(ms.ref_err, fmax(fabs(x - rx[iref]), fabs(y - ry[iref])));
        }
        iref++;
      }
    }
    if (rep == 0) {
      pt_get_counters(pd, &cnt);
      cdiff = coord_difference(mm, md, pm, pd);
    }
    if (failed_at >= 0) break;
  }
  const int nok = failed_at >= 0 ? failed_at : n;
  if (nok > 0) {
    summarise(pt_step_t, nok, &ps);
    summarise(mj_step_t, nok, &ms);
  }
  printf("| %s | %d | %d | %.1f | %.1f | %.1f | %.2f | %.1f | %.1f | %.1f | %.2f | **%.2fx** | "
         "%.1e / %.1e | ",
         mech->name, pt_model_nbody(pm), pt_model_ndof(pm), ps.mean, ps.median, ps.slowest,
         ps.slowest / ps.median, ms.mean, ms.median, ms.slowest, ms.slowest / ms.median,
         ps.mean / ms.mean, ps.viol, ms.viol);
  if (mech->driven) printf("- | ");
  else printf("%.1e / %.1e | ", ps.energy, ms.energy);
  printf("%.1e | %lld / %lld / %lld |", cdiff, (long long)cnt.repartitions, (long long)cnt.qr_switches,
         (long long)cnt.qr_steps);
  if (failed_at >= 0) printf(" Partita failed at step %d", failed_at);
  if (geom > 1e-9) printf(" geometry differs by %.1e m", geom);
  printf("\n");
  if (ps.ref_err >= 0)
    printf("  A02 N = 40, B0 against the published solution over %.2f s: Partita %.2e, "
           "MuJoCo %.2e (acceptance 1e-3)\n",
           nok * dt, ps.ref_err, ms.ref_err);
  fflush(stdout);
  free(pt_step_t);
  free(mj_step_t);
  pt_data_free(pd);
  pt_model_free(pm);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODELS_DIR [SECONDS [REPEATS [ONLY [REFERENCE_DIR]]]]\n", argv[0]);
    return 2;
  }
  const double seconds = argc > 2 ? atof(argv[2]) : 2;
  const int repeats = argc > 3 ? atoi(argv[3]) : 3;
  const char *only = argc > 4 && strcmp(argv[4], "all") != 0 ? argv[4] : NULL;
  const char *refdir = argc > 5 ? argv[5] : "../shared/reference";
  if (!(seconds > 0) || repeats < 1) {
    fprintf(stderr, "SECONDS > 0 and REPEATS >= 1\n");
    return 2;
  }
  measure_clock();
  printf("RK4, dt 1 ms, %.2f s per mechanism, fastest of %d runs per step, thread CPU time "
         "(less %.0f ns of clock reading); MuJoCo %s, connect constraints with solref (2 dt, 1)\n\n",
         seconds, repeats, 1e9 * clock_cost, mj_versionString());
  printf("| mechanism | bodies | dof | Partita mean µs | median | slowest | slowest/median | "
         "MuJoCo mean µs | median | slowest | slowest/median | ratio (means) | "
         "max violation P / M | max energy error J P / M | coordinate difference at the end | rebuilds / LU→QR / QR steps |\n");
  printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
         "| ---: | ---: | ---: |\n");
  int bad = 0, found = 0;
  for (size_t i = 0; i < sizeof(mechanisms) / sizeof(mechanisms[0]); i++) {
    if (only && strcmp(only, mechanisms[i].label) != 0) continue;
    found = 1;
    bad |= run(argv[1], &mechanisms[i], seconds, repeats, refdir);
  }
  if (!found) {
    fprintf(stderr, "no mechanism %s\n", only);
    return 2;
  }
  return bad;
}
