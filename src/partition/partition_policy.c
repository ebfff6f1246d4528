// partition_policy.c: when to rebuild the partition and when to switch between LU and QR.
//
// Hybrid partitioning (seed hybrid, section 3, adapted to fixed steps): the integrated
// variables are either v of the cached LU partition or the tangent coordinates z of the QR
// partition (qr_partition.c, eq. 4-9). In the default hybrid mode the integrator goes to QR
// when the LU side shows a singular configuration coming (two LU rebuilds within a few steps,
// Newton for u struggling, rcond(Phi_u) collapsing, W near singular, a failed step or a jump
// of the total energy; the last two redo the step with QR) and back to LU after
// m->switch_back_steps unremarkable QR steps, if a fresh LU partition is well conditioned.
// A tree in hybrid mode is integrated in its joint coordinates (tree.c): nothing to decide.
#include "partition_policy.h"

#include "loop.h"
#include "partition.h"

#include "ptu.h"
#include "qr_partition.h"

#define NEWTON_SUSPECT 4       // more iterations than this: rebuild the partition
#define RCOND_DEGRADED 0.02    // rcond(Phi_u) fallen below this fraction of its build value
#define PIVOT_DEGRADED 0.85    // a pivot of Phi_u fallen below this fraction of its build value
// In a closed loop's joint coordinates the LU partition is rebuilt when the spread of G_u's
// pivots (piv_ratio: rcond over rcond at the build) has halved: the rule above rebuilt every
// few steps while a chain of loops approached a singular position, and each rebuild bought
// nothing (its Newton kept converging in one iteration).
#define LOOP_PIVOT_DEGRADED 0.5
#define NEWTON_STRUGGLE 8      // more iterations than this: Newton struggles, go QR (hybrid)
#define SUSPECT_PIVOT 1        // part_suspect bits
#define SUSPECT_NEWTON 2
#define SUSPECT_STRUGGLE 4
#define REBUILD_WINDOW 20      // two LU rebuilds within this many steps: go QR
#define RCOND_LU_BAD 1e-3     // rcond(Phi_u) below this fraction of the best seen: go QR
#define RCOND_LU_GOOD 0.1      // a fresh LU partition must reach this fraction to switch back
#define BACKOFF_WINDOW 50      // back in QR within this many steps of leaving: wait longer
#define W_DEGRADED 1e-2        // W's pivot ratio this far below its healthy value: rank is going
#define W_RECOVERED 1e-1       // ... and back within this fraction: the singularity is behind
#define ALPHA_MIN 0.98         // re-reference the QR tangent when less velocity lies in it
#define ENERGY_JUMP 50         // |dE| over a step this many times its running mean ...
#define ENERGY_FLOOR 1e-9      // ... and above this fraction of the energy scale
#define CARTESIAN_STEPS 1000   // a closed loop's Cartesian stand-in tries the joint coordinates again

void pt_policy_note_stage(pt_data *d, int newton_iters) {
  if (newton_iters > NEWTON_SUSPECT) d->part_suspect |= SUSPECT_NEWTON;
  if (d->part_method == PT_PART_QR) return;
  if (newton_iters > NEWTON_STRUGGLE) d->part_suspect |= SUSPECT_STRUGGLE;
  const double pivot_degraded = pt_loop_on(d) ? LOOP_PIVOT_DEGRADED : PIVOT_DEGRADED;
  if (d->rcond < RCOND_DEGRADED * d->rcond_built || d->piv_ratio < pivot_degraded)
    d->part_suspect |= SUSPECT_PIVOT;
}

// An LU build; rcond_healthy keeps the best conditioning seen, the scale against which
// "collapsing" and "well conditioned again" are judged (rcond depends on the model's units).
static int lu_build(const pt_model *m, pt_data *d) {
  int rc = pt_partition_lu_of(d)->build(m, d);
  if (!rc) d->rcond_healthy = fmax(d->rcond_healthy, d->rcond_built);
  return rc;
}

static int lu_rebuild(const pt_model *m, pt_data *d) {
  int rc = lu_build(m, d);
  if (rc) return rc;
  d->counters.repartitions++;
  d->lu_rebuild_step[0] = d->lu_rebuild_step[1];
  d->lu_rebuild_step[1] = d->nstep;
  return PT_OK;
}

// LU -> QR. Coming back to QR soon after leaving it doubles the stable stretch required
// before the next switch back (up to 64 times), so a long troubled stretch does not
// alternate between the methods every few steps; a long LU stretch resets it.
static int qr_build(const pt_model *m, pt_data *d) { return pt_partition_qr_of(d)->build(m, d); }

int pt_policy_to_qr(const pt_model *m, pt_data *d) {
  int rc = qr_build(m, d);
  if (rc) return rc;
  d->counters.qr_switches++;
  d->qr_stable = 0;
  if (d->qr_backoff < 1) d->qr_backoff = 1;
  if (d->counters.lu_switches > 0 && d->nstep - d->lu_back_step <= BACKOFF_WINDOW)
    d->qr_backoff = d->qr_backoff < 64 ? 2 * d->qr_backoff : 64;
  else
    d->qr_backoff = 1;
  return PT_OK;
}

// QR -> LU when a fresh LU partition is well conditioned; otherwise QR stays active with its
// reference tangent (the LU build touches nothing of the QR partition but the method flag).
static void try_back_to_lu(const pt_model *m, pt_data *d) {
  d->qr_stable = 0;
  const int rc = lu_build(m, d);
  d->counters.repartitions++;  // a build either way
  const int w_recovered = d->w_ratio_step >= W_RECOVERED * d->w_healthy;
  const int lu_good = d->rcond_built >= RCOND_LU_GOOD * d->rcond_healthy;
  // in a closed loop's joint coordinates a QR step costs about what an LU step does (both
  // sparse): stay in QR until both say the singular position is behind, rather than go back
  // and forth through the passage
  const int back = pt_loop_on(d) ? lu_good && w_recovered : lu_good || w_recovered;
  if (rc == PT_OK && back) {
    d->counters.lu_switches++;
    d->lu_back_step = d->nstep;
    d->lu_rebuild_step[0] = d->lu_rebuild_step[1] = -REBUILD_WINDOW - 1;
    return;
  }
  d->part_method = PT_PART_QR;
  d->part_valid = 1;
}

// First use (or after pt_set_state / reset / copy): LU unless QR only; QR if LU cannot. A
// tree in hybrid mode has its partition already: the joint coordinates (tree.c).
int pt_policy_build_initial(const pt_model *m, pt_data *d) {
  if (d->tree_ok && d->part_mode == PT_MODE_HYBRID) {
    pt_partition_free(d);
    d->part_method = PT_PART_LU;
    d->part_valid = 1;
    d->abm_count = 0;
    return PT_OK;
  }
  if (d->part_mode != PT_MODE_QR) {
    int rc = lu_build(m, d);
    if (!rc || d->part_mode == PT_MODE_LU) return rc;
  }
  const int rc = qr_build(m, d);
  if (rc && pt_loop_on(d)) return pt_policy_cartesian(m, d);
  return rc;
}

// A closed loop whose joint-coordinate partitions cannot be built here (an exactly singular
// configuration, where no subset of the joint coordinates is independent and the tangent
// basis is not taken from a factor) or with which a step failed twice: the Cartesian
// partitions take over (their dense fallback solves a singular W), until the state is set or
// reset, or the LU side has been calm for CARTESIAN_STEPS steps (pt_policy_after_step).
int pt_policy_cartesian(const pt_model *m, pt_data *d) {
  d->loop_off = 1;
  d->loop_off_step = d->nstep;
  d->loop_s_valid = 0;
  d->part_valid = 0;
  d->counters.cartesian_fallbacks++;
  return pt_policy_build_initial(m, d);
}

// Total energy jump against its running mean (seed section 3: "the total energy of the
// system changes suddenly").
int pt_policy_energy_jump(const pt_data *d) {
  const double e = d->energy_kin + d->energy_pot;
  const double de = fabs(e - d->energy_prev);
  const double scale = fabs(d->energy_kin) + fabs(d->energy_pot) + 1e-300;
  int jump = d->nstep > 3 && de > ENERGY_JUMP * d->energy_davg && de > ENERGY_FLOOR * scale;
  return jump;
}

static void energy_accept(pt_data *d) {
  const double e = d->energy_kin + d->energy_pot;
  const double de = fabs(e - d->energy_prev);
  d->energy_davg = d->nstep <= 1 ? de : 0.9 * d->energy_davg + 0.1 * de;
  d->energy_prev = e;
}

int pt_policy_retry(const pt_model *m, pt_data *d) {
  if (d->part_method == PT_PART_QR) return qr_build(m, d);
  if (d->part_mode == PT_MODE_HYBRID) return pt_policy_to_qr(m, d);
  return lu_rebuild(m, d);
}

// LU side after an accepted step: does it see a singular configuration coming?
// Frequent rebuilds and a falling rcond(Phi_u) also happen away from any singularity (a
// swinging body changes its best independent coordinate); they count only while W itself
// shows the constraint Jacobian losing rank, so a serial arm never leaves LU for nothing.
static int lu_wants_qr(const pt_data *d, int retried) {
  const double rcond_bad = RCOND_LU_BAD * d->rcond_healthy;
  const int rebuild_now = d->part_suspect != 0;
  const int64_t last = d->lu_rebuild_step[1];
  const int w_degraded = d->w_ratio_step < W_DEGRADED * d->w_healthy;
  return retried || d->w_singular || (d->part_suspect & SUSPECT_STRUGGLE) ||
         (w_degraded && (d->rcond < rcond_bad ||
                         (rebuild_now && d->nstep - last <= REBUILD_WINDOW)));
}

int pt_policy_after_step(const pt_model *m, pt_data *d, int retried) {
  int rc = PT_OK;
  energy_accept(d);
  if (isfinite(d->w_ratio_step) && d->w_ratio_step > d->w_healthy)
    d->w_healthy = d->w_ratio_step;
  if (d->part_method == PT_PART_QR) {
    d->counters.qr_steps++;
    d->counters.last_rcond = d->qr_rcond;
    const int calm = !retried && !(d->part_suspect & SUSPECT_NEWTON);
    d->qr_stable = calm ? d->qr_stable + 1 : 0;
    const int64_t need = (int64_t)m->switch_back_steps * (d->qr_backoff > 1 ? d->qr_backoff : 1);
    if (d->part_mode == PT_MODE_HYBRID && d->qr_stable >= need)
      try_back_to_lu(m, d);
    else if (!calm || pt_partition_qr_of(d)->alpha(m, d) < ALPHA_MIN)
      qr_build(m, d);  // seed step 12: a new tangent here (on failure the old one stays)
  } else if (pt_tree_active(d)) {
    // a tree in its joint coordinates: no partition to judge (whatever dense work a
    // Cartesian mode asked for earlier left in the data)
  } else if (d->part_mode == PT_MODE_HYBRID && lu_wants_qr(d, retried)) {
    rc = pt_policy_to_qr(m, d);
    if (rc) rc = lu_rebuild(m, d);
  } else if (d->part_suspect) {
    rc = lu_rebuild(m, d);
  } else if (d->loop_off && d->nstep - d->loop_off_step >= CARTESIAN_STEPS) {
    // back to the joint coordinates from a calm Cartesian LU step (else stay)
    d->loop_off = 0;
    d->loop_s_valid = 0;
    if (lu_build(m, d)) {
      d->loop_off = 1;
      d->loop_off_step = d->nstep;
      rc = lu_build(m, d);
    }
    d->counters.repartitions++;
  }
  return rc;
}
