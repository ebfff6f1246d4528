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
  d->lu_Up = TAKE_I(a, ncq + 1);
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
  const int nl = m->nlimit, nd = n2 / 2;
  d->lim_joint = TAKE_I(a, nl);
  d->lim_dof = TAKE_I(a, nl);
  d->lim_state = TAKE_I(a, nl);
  d->lim_set = TAKE_I(a, nl);
  d->lim_pre = TAKE_D(a, nl);
  d->lim_post = TAKE_D(a, nl);
  d->lim_minv = TAKE_D(a, (size_t)nl * nd);
  d->lim_w = TAKE_D(a, (size_t)nl * nl);
  d->lim_l = TAKE_D(a, (size_t)nl * nl);
  d->lim_in = TAKE_I(a, nl);
  d->lim_b = TAKE_D(a, nl);
  d->lim_x = TAKE_D(a, nl);
  d->lim_u = TAKE_D(a, nl);
  d->lim_acc = TAKE_D(a, nd);
  d->lim_qfrc = TAKE_D(a, nv);
  const int nk = m->ncoupler;
  d->cpl_dof = TAKE_I(a, 2 * nk);
  d->cpl_minv = TAKE_D(a, (size_t)nk * nd);
  d->cpl_w = TAKE_D(a, (size_t)nk * nk);
  d->cpl_acc = TAKE_D(a, nd);
  d->cpl_qfrc = TAKE_D(a, nv);
  d->cpl_rhs = TAKE_D(a, nk);
  d->cpl_force = TAKE_D(a, nk);
  d->iwork = TAKE_I(a, 2 * nq);
  d->y = TAKE_D(a, n2);
  d->ystage = TAKE_D(a, n2);
  d->k = TAKE_D(a, 8 * n2);
  d->ysum = TAKE_D(a, n2);
  d->q_save = TAKE_D(a, nq);
  d->qd_save = TAKE_D(a, nq);
  d->qr_ref = TAKE_D(a, nq);
  d->qr_vec = TAKE_D(a, nq);
  d->qr_lwork = TAKE_D(a, 64 * (size_t)nq + 64);
  d->qr_ipiv = TAKE_I(a, nq);
  d->fb_jpvt = TAKE_I(a, nv);
  // The dense work of the Cartesian partitions, last so that the arrays above keep their
  // offsets whether it is there or not (pt_data_dense grows a data by one copy): the LU of
  // Phi_u at its dense worst case, the QR partition's and the fallback's (nq x nq, nv x nv).
  // A tree integrated in its joint coordinates needs none of it (sizes grow as n^2).
  if (!d->dense) {
    d->lu_Li = d->lu_Ui = NULL;
    d->lu_Lx = d->lu_Ux = d->qr_work = d->qr_q2 = d->qr_b = d->qr_n = d->qr_nx = NULL;
    d->fb_a = d->fb_b = NULL;
    return;
  }
  d->lu_Li = TAKE_I(a, ntri);
  d->lu_Lx = TAKE_D(a, ntri);
  d->lu_Ui = TAKE_I(a, ntri);
  d->lu_Ux = TAKE_D(a, ntri);
  d->qr_work = TAKE_D(a, (size_t)nq * nq);
  d->qr_q2 = TAKE_D(a, (size_t)nq * (n2 / 2));
  d->qr_b = TAKE_D(a, (size_t)nq * nq);
  d->qr_n = TAKE_D(a, (size_t)nq * (n2 / 2));
  d->qr_nx = TAKE_D(a, (size_t)nv * (n2 / 2));
  d->fb_a = TAKE_D(a, (size_t)nv * nv);
  d->fb_b = TAKE_D(a, (size_t)nv * nv);
}

// Bytes of d's layout (its dense flag decides), before alignment of the buffer.
static size_t layout_bytes(const pt_model *m, const pt_data *d) {
  pt_data tmp = *d;
  arena a = {NULL, 0};
  layout(m, &tmp, &a);
  return a.off;
}

// A buffer of n bytes (plus alignment), every page touched: a large calloc is mapped lazily,
// and the first LU rebuild or QR switch would otherwise take its page faults inside a step.
static void *new_buffer(size_t n) {
  char *b = calloc(1, n + 64);
  if (b)
    for (size_t i = 0; i < n + 64; i += 4096) ((volatile char *)b)[i] = 0;
  return b;
}

static char *buffer_base(void *buffer) {
  return (char *)(((uintptr_t)buffer + 63) & ~(uintptr_t)63);
}

int pt_data_dense(const pt_model *m, pt_data *d) {
  if (d->dense) return PT_OK;
  const size_t old = layout_bytes(m, d);
  d->dense = 1;
  void *nb = new_buffer(layout_bytes(m, d));
  if (!nb) {
    d->dense = 0;
    return PT_ENOMEM;
  }
  memcpy(buffer_base(nb), buffer_base(d->buffer), old);
  free(d->buffer);
  d->buffer = nb;
  arena a = {buffer_base(nb), 0};
  layout(m, d, &a);
  return PT_OK;
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
  pt_limits_clear(d);
  memset(&d->counters, 0, sizeof(d->counters));
}

pt_data *pt_data_new(const pt_model *m) {
  pt_data *d = calloc(1, sizeof(*d));
  if (!d) return NULL;
  d->dense = !pt_tree_qualifies(m);
  d->buffer = new_buffer(layout_bytes(m, d));
  if (!d->buffer) {
    free(d);
    return NULL;
  }
  arena a = {buffer_base(d->buffer), 0};
  layout(m, d, &a);
  d->model = m;
  d->dt = m->dt;
  d->integrator = m->integrator;
  pt_ldl_pattern(m, d);
  set_initial(m, d);
  // at the assembled initial state; a tree that fails its self-check takes the Cartesian
  // partitions after all
  if (!pt_tree_init(m, d) && pt_data_dense(m, d)) {
    pt_data_free(d);
    return NULL;
  }
  pt_limits_init(m, d);
  pt_couplers_init(m, d);
  if (m->ncoupler > 0 && !d->cpl_on) {  // couplers are held on the tree partition only
    pt_data_free(d);
    return NULL;
  }
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
  pt_data tmp;
  memset(&tmp, 0, sizeof(tmp));
  tmp.dense = !pt_tree_qualifies(m);
  return sizeof(pt_data) + layout_bytes(m, &tmp) + 64;
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
//
// A tree's data holds no dense Cartesian-partition work until a Cartesian partition is asked
// for (pt_data_dense): copying such a source into a destination without it grows the
// destination once (the only allocation a copy can make); a destination with it keeps it.
int pt_data_copy(const pt_model *m, pt_data *dst, const pt_data *src) {
  if (dst == src) return PT_OK;
  if (dst->model != m || src->model != m) return PT_EINVAL;
  if (src->dense && !dst->dense && pt_data_dense(m, dst)) return PT_ENOMEM;
  void *buffer = dst->buffer;
  const int dense = dst->dense;
  *dst = *src;
  dst->buffer = buffer;
  dst->dense = dense;
  arena a = {buffer_base(buffer), 0};
  layout(m, dst, &a);  // dst's own arrays, at the same offsets as src's
  memcpy(a.base, buffer_base(src->buffer), layout_bytes(m, src));
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
  pt_limits_clear(d);
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
