// initial_state.c: the model's initial state at load (model compilation, compile.c):
// positions assembled on every row, redundant joint rows found by a rank-revealing
// factorisation (pivoted QR of J^T, or the body-block structure when it decides) and
// removed, motions checked independent, velocities assembled, and the initial
// configuration checked to partition.
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "partition.h"
#include "ptu.h"
#include "tolerances.h"

static void set_active(pt_model *m, const int *keep) {
  m->ncon = 0;
  for (int r = 0; r < m->nrow; r++) {
    m->row_active[r] = keep[r] ? m->ncon : -1;
    if (keep[r]) m->con_row[m->ncon++] = r;
  }
  m->ncq = m->ncon + m->nbody;
  m->ndof = m->nq - m->ncq;
}

// Whether rows `rows` of J (x space) are independent by the body-block structure, in
// O(nbody): with the bodies in breadth-first order from the ground, each row belongs to the
// later of its two bodies; J is then block lower triangular (rows of a body x its 6 columns),
// and regular diagonal blocks (complete pivoting finds each pivot above PT_TOL_BLOCK_PIVOT of
// the largest row norm) make every row independent. 1 when that holds (a tree with sound joints), 0
// when the blocks cannot tell (closed loops, a body with more than 6 rows, small pivots) and the
// dense rank decision must decide. -1 on allocation failure.
static int rows_independent_by_blocks(const pt_model *m, const pt_data *d, const int *rows,
                                      int n) {
  const int nb = m->nbody;
  int *adr = calloc((size_t)nb + 2, sizeof(int)), *list = malloc(sizeof(int) * (2 * (size_t)n + 1));
  int *order = malloc(sizeof(int) * ((size_t)nb + 1)),
      *queue = malloc(sizeof(int) * ((size_t)nb + 1));
  int ok = 1;
  if (!adr || !list || !order || !queue) {
    ok = -1;
    goto done;
  }
  double rmax = 0;
  for (int i = 0; i < n; i++) {
    const double *jac = d->row_jac + 12 * rows[i];
    rmax = fmax(rmax, sqrt(ptu_dot3(jac, jac) + ptu_dot3(jac + 3, jac + 3) +
                           ptu_dot3(jac + 6, jac + 6) + ptu_dot3(jac + 9, jac + 9)));
    for (int s = 0; s < 2; s++)
      if (m->row_body[2 * rows[i] + s] != PT_GROUND) adr[m->row_body[2 * rows[i] + s] + 2]++;
  }
  for (int b = 0; b < nb; b++) adr[b + 2] += adr[b + 1];
  for (int i = 0; i < n; i++)  // list[adr[b] ..] = entries 2 i + slot of the rows of body b
    for (int s = 0; s < 2; s++)
      if (m->row_body[2 * rows[i] + s] != PT_GROUND)
        list[adr[m->row_body[2 * rows[i] + s] + 1]++] = 2 * i + s;
  for (int b = 0; b < nb; b++) order[b] = -1;
  int head = 0, tail = 0, seed = 0;
  for (int b = 0; b < nb; b++)  // bodies tied to the ground first
    for (int t = adr[b]; t < adr[b + 1] && order[b] < 0; t++)
      if (m->row_body[2 * rows[list[t] / 2] + 1 - list[t] % 2] == PT_GROUND)
        order[b] = tail, queue[tail++] = b;
  while (head < tail || tail < nb) {
    if (head == tail) {
      while (order[seed] >= 0) seed++;
      order[seed] = tail, queue[tail++] = seed;
    }
    const int b = queue[head++];
    for (int t = adr[b]; t < adr[b + 1]; t++) {
      const int o = m->row_body[2 * rows[list[t] / 2] + 1 - list[t] % 2];
      if (o != PT_GROUND && order[o] < 0) order[o] = tail, queue[tail++] = o;
    }
  }
  for (int k = 0; k < nb && ok == 1; k++) {
    const int b = queue[k];
    double G[6 * 6];  // (owned rows x 6)
    int nr = 0;
    for (int t = adr[b]; t < adr[b + 1] && ok == 1; t++) {
      const int i = list[t] / 2, s = list[t] % 2, o = m->row_body[2 * rows[i] + 1 - s];
      if (o != PT_GROUND && order[o] > k) continue;  // the later body owns it
      if (nr == 6) ok = 0;
      else ptu_copy(G + 6 * nr++, d->row_jac + 12 * rows[i] + 6 * s, 6);
    }
    int colperm[6] = {0, 1, 2, 3, 4, 5};
    for (int r = 0; r < nr && ok == 1; r++) {
      int pi = r, pj = r;
      double best = -1;
      for (int i = r; i < nr; i++)
        for (int j = r; j < 6; j++)
          if (fabs(G[6 * i + colperm[j]]) > best)
            best = fabs(G[6 * i + colperm[j]]), pi = i, pj = j;
      if (!(best > PT_TOL_BLOCK_PIVOT * rmax)) {
        ok = 0;
        break;
      }
      for (int j = 0; j < 6 && pi != r; j++) {
        const double t = G[6 * r + j];
        G[6 * r + j] = G[6 * pi + j];
        G[6 * pi + j] = t;
      }
      const int t = colperm[r];
      colperm[r] = colperm[pj];
      colperm[pj] = t;
      const int cr = colperm[r];
      for (int i = r + 1; i < nr; i++) {
        const double f = G[6 * i + cr] / G[6 * r + cr];
        for (int j = r; j < 6; j++) G[6 * i + colperm[j]] -= f * G[6 * r + colperm[j]];
      }
    }
  }
done:
  free(adr), free(list), free(order), free(queue);
  return ok;
}

// Rank of rows `rows` of J (dense, in x space) by pivoted QR of J^T. keep[row] = 1 for the
// independent rows. Returns the rank, or -1 on error.
static int rank_rows(const pt_model *m, const pt_data *d, const int *rows, int n, int *keep) {
  const int nv = m->nv;
  if (n == 0) return 0;
  const int blocks = rows_independent_by_blocks(m, d, rows, n);
  if (blocks < 0) return -1;
  if (blocks) {  // all independent: no dense factorisation needed
    for (int i = 0; i < n; i++) keep[rows[i]] = 1;
    return n;
  }
  double *Jt = calloc((size_t)nv * n, sizeof(double));
  double *tau = calloc((size_t)(n < nv ? n : nv) + 1, sizeof(double));
  lapack_int *jpvt = calloc((size_t)n, sizeof(lapack_int));
  if (!Jt || !tau || !jpvt) {
    free(Jt), free(tau), free(jpvt);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    const int r = rows[i];
    for (int s = 0; s < 2; s++) {
      const int b = m->row_body[2 * r + s];
      if (b == PT_GROUND) continue;
      for (int c = 0; c < 6; c++) Jt[(size_t)(6 * b + c) * n + i] += d->row_jac[12 * r + 6 * s + c];
    }
  }
  int info = LAPACKE_dgeqp3(LAPACK_ROW_MAJOR, nv, n, Jt, n, jpvt, tau);
  int rank = 0;
  if (info == 0) {
    const int kmax = n < nv ? n : nv;
    double r0 = fabs(Jt[0]);
    for (int k = 0; k < kmax; k++)
      if (fabs(Jt[(size_t)k * n + k]) > PT_TOL_RANK_ROWS * r0 && r0 > 0) rank++;
    for (int i = 0; i < n; i++) keep[rows[i]] = 0;
    for (int k = 0; k < rank; k++) keep[rows[jpvt[k] - 1]] = 1;
  }
  free(Jt), free(tau), free(jpvt);
  return info == 0 ? rank : -1;
}

static const char *row_label(const pt_model *m, int r, char *buf, size_t len) {
  int j = 0;
  while (j + 1 < m->njoint && m->joint_row_adr[j + 1] <= r) j++;
  snprintf(buf, len, "%s row %d", m->joint_name[j], r - m->joint_row_adr[j]);
  return buf;
}

// The model's own error naming it: `FILE:LINE: model "name": ` before err's message.
static int model_error(pt_error *err, int rc, const pt_spec *s) {
  char msg[sizeof(err->msg)];
  snprintf(msg, sizeof(msg), "%s", err->msg);
  return pt_error_set(err, rc, "%s:%d: model \"%s\": %s", s->source, s->line, s->model, msg);
}

// The joint rows at d's (assembled) state that are independent: keep[r] for each, the others
// named in a warning. *rank: how many are kept.
static int redundant_rows(pt_model *m, const pt_data *d, int *keep, int *rows, int *rank,
                          pt_error *err) {
  for (int r = 0; r < m->nrow_joint; r++) rows[r] = r;
  *rank = rank_rows(m, d, rows, m->nrow_joint, keep);
  if (*rank < 0) return pt_error_set(err, PT_ENOMEM, "rank factorisation failed");
  if (*rank < m->nrow_joint) {
    char line[4096] = "", lab[160];
    size_t used = 0;
    for (int r = 0; r < m->nrow_joint; r++)
      if (!keep[r] && used + 170 < sizeof(line))
        used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s", used ? ", " : "",
                                 row_label(m, r, lab, sizeof(lab)));
    pt_model_warn(m, "removed %d redundant constraint rows: %s", m->nrow_joint - *rank, line);
  }
  return PT_OK;
}

// Motions must be independent of the kept joint rows and of each other; then kept too.
static int independent_motions(const pt_model *m, const pt_spec *s, const pt_data *d, int *keep,
                               int *rows, pt_error *err) {
  int nk = 0;
  for (int r = 0; r < m->nrow_joint; r++)
    if (keep[r]) rows[nk++] = r;
  for (int i = 0; i < m->nmotion; i++) rows[nk++] = m->nrow_joint + i;
  int *keep2 = calloc((size_t)m->nrow + 1, sizeof(int));
  int rank2 = keep2 ? rank_rows(m, d, rows, nk, keep2) : -1;
  if (rank2 >= 0 && rank2 < nk) {
    int bad = 0;
    for (int i = 0; i < m->nmotion; i++)
      if (!keep2[m->nrow_joint + i]) bad = i;
    free(keep2);
    return pt_spec_fail(err, PT_EMODEL, s, s->motions[bad].line, "motions", bad,
                        m->motion_name[bad], "the motion is redundant with the joints or other "
                        "motions (the coordinate it drives is not free)");
  }
  free(keep2);
  for (int i = 0; i < m->nmotion; i++) keep[m->nrow_joint + i] = 1;
  return PT_OK;
}

// A joint that starts outside its limits (a URDF's zero configuration may be): said once.
static void warn_outside_limits(pt_model *m, const pt_data *d) {
  for (int j = 0; j < m->njoint; j++) {
    const int c = m->joint_coord_adr[j];
    if (!m->joint_limited[j] || c < 0) continue;
    double v, jac[12], jdx;
    pt_measure(m, d, c, &v, jac, &jdx);
    if (v < m->joint_limit[2 * j] - PT_TOL_LIMIT_POS ||
        v > m->joint_limit[2 * j + 1] + PT_TOL_LIMIT_POS)
      pt_model_warn(m, "joint %s starts outside its limits [%g, %g] (coordinate %.9g); where "
                       "limits are enforced it is put on the nearest bound at the first step",
                    m->joint_name[j], m->joint_limit[2 * j], m->joint_limit[2 * j + 1], v);
  }
}

// Assemble positions on all rows, remove redundant rows, assemble velocities.
int pt_compile_initial_state(pt_model *m, const pt_spec *s, pt_error *err) {
  int *keep = calloc((size_t)m->nrow + 1, sizeof(int));
  int *rows = calloc((size_t)m->nrow + 1, sizeof(int));
  if (!keep || !rows) {
    free(keep), free(rows);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  for (int r = 0; r < m->nrow; r++) keep[r] = 1;
  set_active(m, keep);
  int rc = pt_compile_w_pattern(m);
  pt_data *d = rc ? NULL : pt_data_new(m);
  if (!d) {
    free(keep), free(rows);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  // measure the displacement from the positions as given (pt_data_new evaluated them)
  ptu_copy(d->q, m->q0, m->nq);
  ptu_copy(d->qd, m->qd0, m->nq);
  double moved = 0;
  int rank = 0;
  rc = pt_assemble_positions(m, d, NULL, 0, 1, &moved, err);
  if (rc) {
    rc = model_error(err, rc, s);
    goto done;
  }
  if (moved > PT_TOL_ASSEMBLY_MOVED)
    pt_model_warn(m, "assembly moved the initial positions by up to %.3g (max |dq|)", moved);
  pt_kin_bodies(m, d);
  pt_joint_rows(m, d);
  pt_motion_rows(m, d);
  rc = redundant_rows(m, d, keep, rows, &rank, err);
  if (!rc) rc = independent_motions(m, s, d, keep, rows, err);
  if (rc) goto done;
  ptu_copy(m->q0, d->q, m->nq);
  // When assembly moved nothing and no row went, the model is as d was made from: keep d
  // (a new data costs O(nq^2) memory to set up) instead of making it again.
  if (!(moved == 0 && rank == m->nrow_joint)) {
    pt_data_free(d);
    d = NULL;
    set_active(m, keep);
    rc = pt_compile_w_pattern(m);
    if (rc) {
      rc = pt_error_set(err, rc, "out of memory");
      goto done;
    }
    d = pt_data_new(m);
    if (!d) {
      rc = pt_error_set(err, PT_ENOMEM, "out of memory");
      goto done;
    }
  }
  ptu_copy(d->q, m->q0, m->nq);
  ptu_copy(d->qd, m->qd0, m->nq);
  pt_kin_bodies(m, d);
  rc = pt_assemble_velocities(m, d, NULL, 0, err);
  if (rc) {   // named like every other refusal of the model (the fuzzer checks it)
    rc = model_error(err, rc, s);
    goto done;
  }
  ptu_copy(m->qd0, d->qd, m->nq);
  // the initial state must partition (d->q is m->q0: velocity assembly moves rates only); a
  // tree's joint coordinates passed their own check (pt_tree_init, rank_rows kept every row)
  if (!d->tree_ok && pt_partition_build(m, d))
    rc = pt_error_set(err, PT_EASSEMBLY,
                      "%s:%d: model \"%s\": the initial configuration is singular (the "
                      "constraint Jacobian has dependent rows that are not removable)",
                      s->source, s->line, s->model);
  if (!rc) warn_outside_limits(m, d);
done:
  pt_data_free(d);
  free(keep), free(rows);
  return rc;
}
