// data.c: pt_data, one buffer sized at load and split into arrays by the tables of engine.h
// (PT_DATA_ARRAYS, PT_DATA_DENSE), laid out twice (measure, then place), plus the state
// accessors of partita.h. A data is evaluated (pt_data_new, pt_data_reset, pt_set_state) by
// the partition layer (partition/state.c), which owns the step's evaluation.
#include <stdlib.h>

#include "engine.h"
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

// The buffer's arrays at their offsets (a->base != NULL) or its size (a->base == NULL), from
// the tables of engine.h; the counts below are the names their sizes are written in.
static void layout(const pt_model *m, pt_data *d, arena *a) {
  const size_t nq = (size_t)m->nq, nv = (size_t)m->nv, nbody = (size_t)m->nbody;
  const size_t ninput = (size_t)m->ninput, nrow = (size_t)m->nrow, ncon = (size_t)m->ncon;
  const size_t w_nnz = (size_t)m->w_nnz, ldl_nnz = (size_t)m->ldl_nnz;
  const size_t ncoord = (size_t)m->ncoord, ncq = (size_t)m->ncq, njoint = (size_t)m->njoint;
  const size_t ndof = (size_t)(m->ndof > 0 ? m->ndof : 0), nlimit = (size_t)m->nlimit;
  const size_t ncoupler = (size_t)m->ncoupler;
  const size_t nsig = (size_t)m->nsig, nctlx = (size_t)m->nctlx, nctlpar = (size_t)m->nctlpar;
  const size_t nctlmeas = (size_t)m->nctlmeas, nctlstack = (size_t)m->nctlstack;
  const size_t ny = (size_t)pt_ny(m);
  const size_t ntri = ncq * (ncq > 0 ? ncq - 1 : 0) / 2;
  const size_t nlw = (size_t)m->nlw, nls = (size_t)m->nls, nlc = (size_t)m->nlc;
  const size_t nlcs = (size_t)m->nlcs, nlm = (size_t)m->nlm, nlz = (size_t)m->nlz;
  const size_t nlg = (size_t)m->nlg, nlb = (size_t)m->nlb, nlsn = (size_t)m->nlsn;
  const size_t nlsl = (size_t)m->nlsl, nlf = (size_t)m->nlf, ntrs = nls * (nls + 1) / 2;
  const size_t ldof = nls > 0 ? ndof : 0;
  size_t lu_max = 0;
  for (int k = 0; k < m->nbody; k++)
    lu_max += 7 * (size_t)(m->body_row_adr[k + 1] - m->body_row_adr[k] + 1);
#define TAKE(type, name, size, stage) d->name = (type *)take(a, sizeof(type) * (size));
#define NONE(type, name, size, stage) d->name = NULL;
  PT_DATA_ARRAYS(TAKE)
  if (d->dense) {
    PT_DATA_DENSE(TAKE)
  } else {
    PT_DATA_DENSE(NONE)
  }
#undef TAKE
#undef NONE
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

// The model's initial state (not evaluated), inputs and counters zero, no limit held. The
// cached partition is the partition layer's to forget (pt_data_reset).
void pt_data_initial(const pt_model *m, pt_data *d) {
  d->time = 0;
  d->nstep = 0;
  ptu_copy(d->q, m->q0, m->nq);
  ptu_copy(d->qd, m->qd0, m->nq);
  ptu_zero(d->input, m->ninput);
  if (m->ctl) ptu_copy(d->ctl_x, m->ctl->x0, m->nctlx);  // the tuned parameters stay
  ptu_zero(d->coord_ref, m->ncoord);
  d->acc_valid = 0;
  d->abm_count = 0;
  pt_limits_clear(d);
  memset(&d->counters, 0, sizeof(d->counters));
}

// A data at the model's initial state, sized and set up but not evaluated: pt_data_new (the
// partition layer, state.c) evaluates it. NULL when out of memory, or when the model's
// couplers cannot be held on it.
pt_data *pt_data_alloc(const pt_model *m) {
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
  if (m->ctl) ptu_copy(d->ctl_par, m->ctl->par0, m->nctlpar);
  pt_ldl_pattern(m, d);
  pt_data_initial(m, d);
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
  if (m->input_source[i] >= 0) return PT_EPRECOND;  // driven by a signal (pt_input_source)
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
