// bench_mujoco: Partita beside MuJoCo (a fair peer on tree-shaped models; it loads URDF).
// Both engines load the same URDF, integrate 1 s from the zero configuration under gravity
// (the iiwa, upright at zero, from joints bent by +-0.5 rad) with RK4 at dt = 1 ms (or argv[2])
// (MuJoCo with contacts and joint limits disabled, so the two solve the same ODE), and the
// table shows the largest joint-angle difference at the end, the cost per step of each and
// their ratio. The two run interleaved in chunks of 50 steps
// (thread CPU time), so that a change of machine load hits both alike; the whole 1 s is run
// three times and the fastest kept. Besides the shipped URDFs, spatial chains of 16 and 64
// links (written to a temporary URDF, joint axes alternating y, x). Then the fast spin of issue
// 10, item 8 (argv[3] seconds, default 300; 0 skips it), each engine with RK4 and with
// semi-implicit Euler. Measured, never asserted.
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

static double step_dt = 1e-3;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// Starts from every hinge at +-bend rad (alternating) when bend != 0, in both engines: an arm
// upright at zero (the iiwa) would otherwise stay at rest.
static void set_bend(const mjModel *mm, mjData *md, const pt_model *pm, pt_data *pd,
                     double bend) {
  pt_assign pos[128];
  int np = 0;
  for (int j = 0; j < mm->njnt && np < 128; j++) {
    const char *name = mj_id2name(mm, mjOBJ_JOINT, j);
    const int c = name ? pt_coord_index(pm, name) : -1;
    if (c < 0 || mm->jnt_type[j] != mjJNT_HINGE) continue;
    const double v = np % 2 ? -bend : bend;
    md->qpos[mm->jnt_qposadr[j]] = v;
    pos[np].coord = c;
    pos[np++].value = v;
  }
  pt_error err;
  if (pt_set_state(pm, pd, pos, np, NULL, 0, &err)) printf("set_state: %s\n", err.msg);
}

static int compare(const char *dir, const char *file, double bend) {
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
  if (pt_model_load_file(path, &no_limits, &pm, &perr)) {
    printf("| %s | Partita could not load it: %s | | | |\n", file, perr.msg);
    mj_deleteData(md);
    mj_deleteModel(mm);
    return 0;
  }
  pt_data *pd = pt_data_new(pm);
  pt_set_dt(pd, step_dt);
  pt_set_integrator(pd, PT_INT_RK4);

  const int n = (int)lround(1.0 / step_dt), chunk = 50;
  double mj_best = INFINITY, pt_best = INFINITY;
  for (int rep = 0; rep < 3; rep++) {
    mj_resetData(mm, md);
    pt_data_reset(pm, pd);
    if (bend != 0) set_bend(mm, md, pm, pd, bend);
    double mj_t = 0, pt_t = 0;
    for (int i0 = 0; i0 < n; i0 += chunk) {
      const int i1 = i0 + chunk < n ? i0 + chunk : n;
      double t0 = now();
      for (int i = i0; i < i1; i++) mj_step(mm, md);
      mj_t += now() - t0;
      t0 = now();
      for (int i = i0; i < i1; i++)
        if (pt_step(pm, pd)) break;
      pt_t += now() - t0;
    }
    mj_best = fmin(mj_best, mj_t);
    pt_best = fmin(pt_best, pt_t);
  }
  const double mj_us = 1e6 * mj_best / n, pt_us = 1e6 * pt_best / n;
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
  printf("| %s | %d | %.2e | %.1f | %.1f | %.2f |\n", file, matched, maxdiff, pt_us, mj_us,
         pt_us / mj_us);
  pt_data_free(pd);
  pt_model_free(pm);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return 0;
}

// A spatial chain of n links (0.1 m, 0.1 kg rods along x) hanging from the ground, joint axes
// alternating y and x, limited to [-3.14, 3.14], written to dir/chain<n>.urdf.
static void write_chain(const char *dir, int n) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/chain%d.urdf", dir, n);
  chain_link l = chain_rods;
  l.limit = 3.14;
  chain_urdf_write_link(path, n, &l);
}

// Issue 10, item 8: iiwa14 under tau_j = 2 sin(pi t + j) N m (j = 0..6, held over each step;
// no damping, no limits) at 1 ms for `horizon` seconds, each engine and integrator on its own
// run. For each: the time of its first divergence and how many there were, the fastest joint-7
// rate, the largest kinetic energy and energy-balance error |E - E0 - work| (work = sum tau
// (theta(t + h) - theta(t)), exact for held torques) before the first divergence, and when
// that error first passed 10 % of the largest kinetic energy so far (at least 1 J): where the
// state stops meaning anything, well before a number overflows. The rate, energy and balance
// columns are taken up to that point.
//
// MuJoCo's check (mj_checkPos/Vel/Acc) sees a value above 1e10 or not finite, prints a
// warning, resets the data to the model's initial state and carries on stepping: a run that
// "completes" 300 s may have started over several times. A reset is seen here as d->time
// going back. Partita's check (integrate.c) returns PT_EDIVERGED from pt_step when a stage
// produces a value that is not finite; the run stops there.
typedef struct {
  double first_div, bal_fail;  // s (-1: never)
  int ndiv;
  double w, ke, bal, us;
  double substeps;             // Partita: RK4 substeps per step
} spin_result;

static void spin_print(const char *name, const spin_result *r, double horizon) {
  char div[64], bal[32];
  if (r->first_div < 0)
    snprintf(div, sizeof(div), "completed %.0f s", horizon);
  else
    snprintf(div, sizeof(div), "%.3f s (%d in %.0f s)", r->first_div, r->ndiv, horizon);
  if (r->bal_fail < 0) snprintf(bal, sizeof(bal), "never");
  else snprintf(bal, sizeof(bal), "%.3f s", r->bal_fail);
  printf("| %s | %s | %s | %.4g | %.4g | %.3g | %.1f |", name, div, bal, r->w, r->ke, r->bal,
         r->us);
  if (r->substeps > 0) printf(" %.2f |\n", r->substeps);
  else printf(" |\n");
}

static void quiet(const char *msg) { (void)msg; }  // the table says what MuJoCo warned of

static void spin_mujoco(const char *path, int integrator, double horizon, spin_result *r) {
  char err[1000] = "";
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof(err));
  memset(r, 0, sizeof(*r));
  r->first_div = r->bal_fail = -1;
  if (!mm) return;
  mm->opt.integrator = integrator;
  mm->opt.timestep = 1e-3;
  mm->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_LIMIT;
  mm->opt.enableflags |= mjENBL_ENERGY;
  mjData *md = mj_makeData(mm);
  mju_user_warning = quiet;
  int dof[7], qadr[7];
  for (int j = 0; j < 7; j++) {
    char name[32];
    snprintf(name, sizeof(name), "iiwa_joint_%d", j + 1);
    const int id = mj_name2id(mm, mjOBJ_JOINT, name);
    dof[j] = mm->jnt_dofadr[id];
    qadr[j] = mm->jnt_qposadr[id];
  }
  const long n = lround(horizon / 1e-3);
  mj_forward(mm, md);
  const double e0 = md->energy[0] + md->energy[1];
  double work = 0, cpu = 0;
  long counted = 0;
  for (long i = 0; i < n; i++) {
    const double t = i * 1e-3, t_before = md->time;
    double th[7];
    for (int j = 0; j < 7; j++) {
      md->qfrc_applied[dof[j]] = 2 * sin(M_PI * t + j);
      th[j] = md->qpos[qadr[j]];
    }
    const double t0 = now();
    mj_step(mm, md);
    cpu += now() - t0;
    if (md->time < t_before + 0.5e-3) {  // reset to the initial state inside mj_step
      if (r->first_div < 0) r->first_div = t;
      r->ndiv++;
      continue;
    }
    if (r->first_div >= 0 || r->bal_fail >= 0) continue;
    counted++;
    r->w = fmax(r->w, fabs(md->qvel[dof[6]]));
    for (int j = 0; j < 7; j++) work += 2 * sin(M_PI * t + j) * (md->qpos[qadr[j]] - th[j]);
    mj_forward(mm, md);  // md->energy is of the state at the start of a step
    r->ke = fmax(r->ke, md->energy[1]);
    const double bal = fabs(md->energy[0] + md->energy[1] - e0 - work);
    r->bal = fmax(r->bal, bal);
    if (bal > 0.1 * fmax(r->ke, 1.0)) r->bal_fail = t + 1e-3;
  }
  r->us = 1e6 * cpu / (double)n;
  (void)counted;
  mju_user_warning = NULL;
  mj_deleteData(md);
  mj_deleteModel(mm);
}

static void spin_partita(const char *path, pt_integrator integrator, int substeps,
                         double horizon, spin_result *r) {
  pt_model *pm = NULL;
  pt_error perr;
  memset(r, 0, sizeof(*r));
  r->first_div = r->bal_fail = -1;
  if (pt_model_load_file(path, &no_limits, &pm, &perr)) return;
  pt_set_spin_substeps(pm, substeps);
  pt_data *pd = pt_data_new(pm);
  pt_set_dt(pd, 1e-3);
  pt_set_integrator(pd, integrator);
  int in[7], co[7];
  for (int j = 0; j < 7; j++) {
    char name[32];
    snprintf(name, sizeof(name), "iiwa_joint_%d", j + 1);
    in[j] = pt_input_index(pm, name);
    co[j] = pt_coord_index(pm, name);
  }
  const long n = lround(horizon / 1e-3);
  const double e0 = pt_energy_kinetic(pd) + pt_energy_potential(pd);
  double work = 0, cpu = 0;
  long done = 0;
  for (long i = 0; i < n; i++) {
    const double t = i * 1e-3;
    double th[7];
    for (int j = 0; j < 7; j++) {
      pt_set_input(pm, pd, in[j], 2 * sin(M_PI * t + j));
      th[j] = pt_coords(pd)[co[j]];
    }
    const double t0 = now();
    const int rc = pt_step(pm, pd);
    cpu += now() - t0;
    if (rc) {
      r->first_div = t;
      r->ndiv = 1;
      break;
    }
    done++;
    if (r->bal_fail >= 0) continue;
    r->w = fmax(r->w, fabs(pt_coord_rates(pd)[co[6]]));
    for (int j = 0; j < 7; j++)
      work += 2 * sin(M_PI * t + j) * remainder(pt_coords(pd)[co[j]] - th[j], 2 * M_PI);
    const double ke = pt_energy_kinetic(pd);
    r->ke = fmax(r->ke, ke);
    const double bal = fabs(ke + pt_energy_potential(pd) - e0 - work);
    r->bal = fmax(r->bal, bal);
    if (bal > 0.1 * fmax(r->ke, 1.0)) r->bal_fail = t + 1e-3;
  }
  pt_counters c;
  pt_get_counters(pd, &c);
  r->us = 1e6 * cpu / (double)(done > 0 ? done : 1);
  if (integrator == PT_INT_RK4) r->substeps = 1 + (double)c.spin_substeps / (double)(done > 0 ? done : 1);
  pt_data_free(pd);
  pt_model_free(pm);
}

static void spin(const char *dir, double horizon) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/iiwa14.urdf", dir);
  printf("\nspin (iiwa14, tau_j = 2 sin(pi t + j), 1 ms, %.0f s):\n"
         "| engine, integrator | diverged at (count) | balance > 10 %% KE at | "
         "max joint-7 rate [rad/s] | max kinetic energy [J] | max |E - E0 - work| [J] | "
         "us/step | RK4 substeps/step |\n|---|---|---|---:|---:|---:|---:|---:|\n",
         horizon);
  spin_result r;
  spin_partita(path, PT_INT_RK4, 8, horizon, &r);
  spin_print("Partita RK4, substeps <= 8", &r, horizon);
  spin_partita(path, PT_INT_RK4, 1, horizon, &r);
  spin_print("Partita RK4, no substeps", &r, horizon);
  spin_partita(path, PT_INT_EULER, 1, horizon, &r);
  spin_print("Partita semi-implicit Euler", &r, horizon);
  spin_mujoco(path, mjINT_RK4, horizon, &r);
  spin_print("MuJoCo RK4", &r, horizon);
  spin_mujoco(path, mjINT_EULER, horizon, &r);
  spin_print("MuJoCo Euler (its default)", &r, horizon);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "configs/models";
  if (argc > 2) step_dt = atof(argv[2]);
  printf("| model | joints compared | max |q_partita - q_mujoco| after 1 s | Partita us/step "
         "| MuJoCo us/step | ratio |\n|---|---:|---:|---:|---:|---:|\n");
  compare(dir, "arm2r.urdf", 0);
  compare(dir, "panda.urdf", 0);
  compare(dir, "iiwa14.urdf", 0.5);
  char tmp[] = "/tmp/bench_mujoco_XXXXXX";
  if (mkdtemp(tmp)) {
    char path[1200];
    for (int n = 16; n <= 64; n *= 4) {
      write_chain(tmp, n);
      snprintf(path, sizeof(path), "chain%d.urdf", n);
      compare(tmp, path, 0);
      snprintf(path, sizeof(path), "%s/chain%d.urdf", tmp, n);
      remove(path);
    }
    remove(tmp);
  }
  const double spin_s = argc > 3 ? atof(argv[3]) : 300;
  if (spin_s > 0) spin(dir, spin_s);
  return 0;
}
