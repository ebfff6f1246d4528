// data.c: pt_data, one buffer sized at load and split into arrays by a layout table that runs
// twice (measure, then place), plus the state accessors of partita.h.
#include <stdlib.h>

#include "engine.h"
#include "qr_partition.h"
#include "ptu.h"

typedef struct {
  char *base;
  size_t off;
} arena;

static void *take(arena *a, size_t n) {
  size_t o = (a->off + 63) & ~(size_t)63;
  a->off = o + n;
  return a->base ? a->base + o : NULL;
}

#define TAKE_D(a, n) ((double *)take(a, sizeof(double) * (size_t)(n)))
#define TAKE_I(a, n) ((int *)take(a, sizeof(int) * (size_t)(n)))

static void layout(const pt_model *m, pt_data *d, arena *a) {
  const int nq = m->nq, nv = m->nv, nb = m->nbody, n2 = 2 * (m->ndof > 0 ? m->ndof : 0);
  const int ncq = m->ncq, nrow = m->nrow, ncon = m->ncon, nc = m->ncoord;
  int lu_max = 0;
  for (int k = 0; k < nb; k++) lu_max += 7 * (m->body_row_adr[k + 1] - m->body_row_adr[k] + 1);
  d->q = TAKE_D(a, nq);
  d->qd = TAKE_D(a, nq);
  d->qdd = TAKE_D(a, nq);
  d->x = TAKE_D(a, nv);
  d->xdd = TAKE_D(a, nv);
  d->rot = TAKE_D(a, 9 * nb);
  d->inertia_g = TAKE_D(a, 9 * nb);
  d->inertia_ginv = TAKE_D(a, 9 * nb);
  d->input = TAKE_D(a, m->ninput);
  d->qfrc = TAKE_D(a, nv);
  d->row_phi = TAKE_D(a, nrow);
  d->row_jac = TAKE_D(a, 12 * nrow);
  d->row_gamma = TAKE_D(a, nrow);
  d->row_nu = TAKE_D(a, nrow);
  d->lambda = TAKE_D(a, ncon);
  d->w_val = TAKE_D(a, m->w_nnz);
  d->mjt = TAKE_D(a, 12 * ncon);
  d->ldl_Lx = TAKE_D(a, m->ldl_nnz);
  d->ldl_Li = TAKE_I(a, m->ldl_nnz);
  d->ldl_D = TAKE_D(a, ncon);
  d->ldl_Y = TAKE_D(a, ncon);
  d->ldl_pattern = TAKE_I(a, ncon);
  d->ldl_flag = TAKE_I(a, ncon);
  d->ldl_rowptr = TAKE_I(a, ncon + 1);
  d->ldl_rowpat = TAKE_I(a, m->ldl_nnz);
  d->ldl_rhs = TAKE_D(a, ncon);
  d->wrk6 = TAKE_D(a, nv);
  d->coord = TAKE_D(a, nc);
  d->coord_rate = TAKE_D(a, nc);
  d->coord_acc = TAKE_D(a, nc);
  d->coord_ref = TAKE_D(a, nc);
  d->q_dep = TAKE_I(a, nq);
  d->indep = TAKE_I(a, nq);
  d->dep = TAKE_I(a, nq);
  d->jq = TAKE_D(a, 14 * ncq);
  d->phiF = TAKE_D(a, ncq);
  d->piv_built = TAKE_D(a, ncq);
  d->rhs = TAKE_D(a, nq);
  d->lu_colptr = TAKE_I(a, ncq + 1);
  d->lu_rowind = TAKE_I(a, lu_max);
  d->lu_src = TAKE_I(a, lu_max);
  d->lu_val = TAKE_D(a, lu_max);
  const size_t ntri = (size_t)ncq * (size_t)(ncq > 0 ? ncq - 1 : 0) / 2;
  d->lu_prow = TAKE_I(a, ncq);
  d->lu_pinv = TAKE_I(a, ncq);
  d->lu_Lp = TAKE_I(a, ncq + 1);
  d->lu_Li = TAKE_I(a, ntri);
  d->lu_Lx = TAKE_D(a, ntri);
  d->lu_Up = TAKE_I(a, ncq + 1);
  d->lu_Ui = TAKE_I(a, ntri);
  d->lu_Ux = TAKE_D(a, ntri);
  d->lu_Ud = TAKE_D(a, ncq);
  d->lu_x = TAKE_D(a, ncq);
  d->lu_y = TAKE_D(a, ncq);
  d->lu_mark = TAKE_I(a, ncq);
  d->lu_stack = TAKE_I(a, 2 * ncq);
  d->tree_joint = TAKE_I(a, m->njoint);
  d->tree_child = TAKE_I(a, m->njoint);
  d->tree_dof = TAKE_I(a, m->njoint);
  d->tree_coord = TAKE_I(a, n2 / 2);
  d->tree_body_joint = TAKE_I(a, m->nbody);
  d->tree_pref = TAKE_D(a, 4 * m->njoint);
  d->tree_tref = TAKE_D(a, 3 * m->njoint);
  d->tree_theta_ref = TAKE_D(a, m->njoint);
  d->tree_y = TAKE_D(a, n2);
  d->tree_y_save = TAKE_D(a, n2);
  d->qr_work = TAKE_D(a, (size_t)nq * nq);
  d->iwork = TAKE_I(a, 2 * nq);
  d->y = TAKE_D(a, n2);
  d->ystage = TAKE_D(a, n2);
  d->k = TAKE_D(a, 8 * n2);
  d->ysum = TAKE_D(a, n2);
  d->q_save = TAKE_D(a, nq);
  d->qd_save = TAKE_D(a, nq);
  d->qr_ref = TAKE_D(a, nq);
  d->qr_q2 = TAKE_D(a, (size_t)nq * (n2 / 2));
  d->qr_b = TAKE_D(a, (size_t)nq * nq);
  d->qr_n = TAKE_D(a, (size_t)nq * (n2 / 2));
  d->qr_nx = TAKE_D(a, (size_t)nv * (n2 / 2));
  d->qr_vec = TAKE_D(a, nq);
  d->qr_lwork = TAKE_D(a, 64 * (size_t)nq + 64);
  d->qr_ipiv = TAKE_I(a, nq);
  d->fb_a = TAKE_D(a, (size_t)nv * nv);
  d->fb_b = TAKE_D(a, (size_t)nv * nv);
  d->fb_jpvt = TAKE_I(a, nv);
}

static void set_initial(const pt_model *m, pt_data *d) {
  d->time = 0;
  d->nstep = 0;
  ptu_copy(d->q, m->q0, m->nq);
  ptu_copy(d->qd, m->qd0, m->nq);
  ptu_zero(d->input, m->ninput);
  ptu_zero(d->coord_ref, m->ncoord);
  d->acc_valid = 0;
  d->abm_count = 0;
  pt_partition_free(d);
  memset(&d->counters, 0, sizeof(d->counters));
}

pt_data *pt_data_new(const pt_model *m) {
  pt_data *d = calloc(1, sizeof(*d));
  if (!d) return NULL;
  arena a = {NULL, 0};
  layout(m, d, &a);
  d->buffer = calloc(1, a.off + 64);
  if (!d->buffer) {
    free(d);
    return NULL;
  }
  // touch every page now: a large calloc is mapped lazily, and the first LU rebuild or QR
  // switch would otherwise take its page faults inside a step
  for (size_t i = 0; i < a.off + 64; i += 4096) ((volatile char *)d->buffer)[i] = 0;
  a.base = (char *)(((uintptr_t)d->buffer + 63) & ~(uintptr_t)63);
  a.off = 0;
  layout(m, d, &a);
  d->model = m;
  d->dt = m->dt;
  d->integrator = m->integrator;
  pt_ldl_pattern(m, d);
  set_initial(m, d);
  pt_tree_init(m, d);  // at the assembled initial state
  // outputs at the initial state (the model was assembled at compile time)
  if (m->nbody > 0 && pt_forward(m, d) != PT_OK) {
    pt_kin_bodies(m, d);
    pt_joint_rows(m, d);
    pt_motion_rows(m, d);
    pt_outputs(m, d);
  }
  return d;
}

size_t pt_data_bytes(const pt_model *m) {
  arena a = {NULL, 0};
  pt_data tmp;
  memset(&tmp, 0, sizeof(tmp));
  layout(m, &tmp, &a);
  return sizeof(pt_data) + a.off + 64;
}

void pt_data_free(pt_data *d) {
  if (!d) return;
  pt_partition_free(d);
  free(d->buffer);
  free(d);
}

// A snapshot: the header and the buffer copied byte for byte. Everything the step uses (the
// cached LU or QR partition with its pattern, pivots and factors, the integrator's history,
// the switching state) lives in one or the other, so the copy continues bit-identically to
// src, with no rebuild, no evaluation and no allocation (issue 10, item 5).
int pt_data_copy(const pt_model *m, pt_data *dst, const pt_data *src) {
  if (dst == src) return PT_OK;
  if (dst->model != m || src->model != m) return PT_EINVAL;
  void *buffer = dst->buffer;
  *dst = *src;
  dst->buffer = buffer;
  arena a = {(char *)(((uintptr_t)buffer + 63) & ~(uintptr_t)63), 0};
  layout(m, dst, &a);  // dst's own arrays, at the same offsets as src's
  const char *sbase = (const char *)(((uintptr_t)src->buffer + 63) & ~(uintptr_t)63);
  memcpy(a.base, sbase, a.off);
  return PT_OK;
}

void pt_data_reset(const pt_model *m, pt_data *d) {
  set_initial(m, d);
  pt_forward(m, d);
}

void pt_set_dt(pt_data *d, double dt) {
  if (dt > 0 && isfinite(dt)) {
    d->dt = dt;
    d->abm_count = 0;
  }
}

void pt_set_integrator(pt_data *d, pt_integrator it) {
  d->integrator = it;
  d->abm_count = 0;
}

int pt_set_input(const pt_model *m, pt_data *d, int i, double value) {
  if (i < 0 || i >= m->ninput || !isfinite(value)) return PT_EINVAL;
  int clipped = 0;
  const double lim = m->input_limit[i];
  if (lim > 0 && fabs(value) > lim) {
    value = value > 0 ? lim : -lim;
    clipped = 1;
    d->counters.clipped_inputs++;
  }
  if (d->input[i] != value) {
    d->input[i] = value;
    d->acc_valid = 0;
  }
  return clipped;
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
  d->acc_valid = 0;
  d->abm_count = 0;
  rc = pt_forward(m, d);
  if (rc) return pt_error_set(err, rc, "state set, but evaluating it failed: %s",
                              pt_strerror(rc));
  return PT_OK;
}

// ---- accessors --------------------------------------------------------------------------
double pt_time(const pt_data *d) { return d->time; }
int64_t pt_nstep(const pt_data *d) { return d->nstep; }
const double *pt_coords(const pt_data *d) { return d->coord; }
const double *pt_coord_rates(const pt_data *d) { return d->coord_rate; }
const double *pt_coord_accels(const pt_data *d) { return d->coord_acc; }
const double *pt_inputs(const pt_data *d) { return d->input; }
const double *pt_body_pose(const pt_data *d, int i) { return d->q + 7 * i; }
const double *pt_body_velocity(const pt_data *d, int i) { return d->x + 6 * i; }
double pt_energy_kinetic(const pt_data *d) { return d->energy_kin; }
double pt_energy_potential(const pt_data *d) { return d->energy_pot; }
double pt_residual_position(const pt_data *d) { return d->res_pos; }
double pt_residual_velocity(const pt_data *d) { return d->res_vel; }
void pt_get_counters(const pt_data *d, pt_counters *c) { *c = d->counters; }
