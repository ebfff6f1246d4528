// state.c: a data's state set from outside the step, then evaluated as the step evaluates it
// (pt_forward, integrate.c): a new data at the model's initial state, a reset, and
// pt_set_state (assembled around the given coordinates first, assemble.c). The data's buffer,
// copy and accessors are core's (data.c); evaluation belongs to this layer.
#include "engine.h"
#include "partition.h"
#include "ptu.h"

pt_data *pt_data_new(const pt_model *m) {
  pt_data *d = pt_data_alloc(m);
  if (!d) return NULL;
  // outputs at the initial state (the model was assembled at compile time)
  if (m->nbody > 0 && pt_forward(m, d) != PT_OK) {
    pt_kin_bodies(m, d);
    pt_joint_rows(m, d);
    pt_motion_rows(m, d);
    pt_outputs(m, d);
  }
  return d;
}

void pt_data_reset(const pt_model *m, pt_data *d) {
  pt_data_initial(m, d);
  pt_partition_free(d);
  pt_forward(m, d);
}

int pt_set_state(const pt_model *m, pt_data *d, const pt_assign *pos, int npos,
                 const pt_assign *vel, int nvel, pt_error *err) {
  for (int i = 0; i < npos; i++)
    if (pos[i].coord < 0 || pos[i].coord >= m->ncoord || !isfinite(pos[i].value))
      return pt_error_set(err, PT_EINVAL, "bad coordinate value (index %d)", pos[i].coord);
  for (int i = 0; i < nvel; i++)
    if (vel[i].coord < 0 || vel[i].coord >= m->ncoord || !isfinite(vel[i].value))
      return pt_error_set(err, PT_EINVAL, "bad coordinate rate (index %d)", vel[i].coord);
  ptu_copy(d->q_save, d->q, m->nq);
  ptu_copy(d->qd_save, d->qd, m->nq);
  double *ref_save = d->coord_acc;  // scratch: restored by pt_forward below
  ptu_copy(ref_save, d->coord_ref, m->ncoord);
  double moved;
  int rc = pt_assemble(m, d, pos, npos, vel, nvel, &moved, err);
  if (rc) {
    ptu_copy(d->q, d->q_save, m->nq);
    ptu_copy(d->qd, d->qd_save, m->nq);
    ptu_copy(d->coord_ref, ref_save, m->ncoord);
    pt_kin_bodies(m, d);
    return rc;
  }
  pt_partition_free(d);
  pt_limits_clear(d);
  d->acc_valid = 0;
  d->abm_count = 0;
  rc = pt_forward(m, d);
  if (rc) return pt_error_set(err, rc, "state set, but evaluating it failed: %s",
                              pt_strerror(rc));
  return PT_OK;
}
