// partition_policy.h: when the integrator rebuilds its partition and when it switches between
// the LU and the QR partition (hybrid mode), with the thresholds (partition_policy.c). The
// integrator (integrate.c) reports what each stage and step saw; the policy decides.
#ifndef PT_PARTITION_POLICY_H
#define PT_PARTITION_POLICY_H

#include "engine.h"

// First use (or after pt_set_state / reset / copy): the partition to start with.
int pt_policy_build_initial(const pt_model *m, pt_data *d);

// What a stage of the active LU or QR partition saw: Newton iterations, and on LU the
// conditioning of Phi_u at its last factorisation.
void pt_policy_note_stage(pt_data *d, int newton_iters);

// A failed attempt at a step: a fresh partition at the step start to retry with (QR again,
// LU -> QR in hybrid mode, an LU rebuild in LU mode).
int pt_policy_retry(const pt_model *m, pt_data *d);

// LU -> QR now (a switch, counted).
int pt_policy_to_qr(const pt_model *m, pt_data *d);

// A closed loop's Cartesian partitions stand in for its joint-coordinate ones (counted).
int pt_policy_cartesian(const pt_model *m, pt_data *d);

// The total energy jumped over the step just taken (the outputs are the step's end).
int pt_policy_energy_jump(const pt_data *d);

// After an accepted step: running energy statistics, counters, and the rebuild or switch the
// step calls for. Returns a build's failure code, or PT_OK.
int pt_policy_after_step(const pt_model *m, pt_data *d, int retried);

#endif
