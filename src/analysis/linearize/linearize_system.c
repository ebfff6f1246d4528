// linearize_system.c: the augmented sensitivity system of the linearization seed (eq. 25b,
// Table 1) filled from the partials, in the engine's chart delta q = (delta r, delta pi).
// Equation blocks (rows) and unknown blocks (columns of X) follow Table 1; see linearize.c.
#include <stdlib.h>

#include "linearize_internal.h"
#include "ptu.h"
#include "tolerances.h"

void ptd_local12(const int b[2], const double *v, double out[12]) {
  for (int s = 0; s < 2; s++) {
    if (b[s] == PT_GROUND) ptu_zero(out + 6 * s, 6);
    else ptu_copy(out + 6 * s, v + 6 * b[s], 6);
  }
}


// ---------------------------------------------------------------------------------------------
// The augmented system of Table 1 (column-major, order N), unknown blocks in the order of X.

ptd_layout ptd_layout_of(const pt_model *m, int z) {
  ptd_layout L;
  L.n = m->nv, L.nc = m->ncon, L.z = z;
  L.ud = 0, L.lam = L.n, L.u = L.lam + L.nc, L.q = L.u + L.n;
  L.N = L.q + L.n;
  return L;
}

// ---------------------------------------------------------------------------------------------
// Triplets and compressed columns

static void trip_put(ptd_trip *T, int i, int j, double v) {
  if (v == 0) return;   // adds nothing to a sum; ptd_csc_build drops the exact zeros anyway
  if (T->n == T->cap) {
    const size_t cap = T->cap ? 2 * T->cap : 1024;
    int *ni = realloc(T->i, sizeof(int) * cap);
    if (ni) T->i = ni;
    int *nj = realloc(T->j, sizeof(int) * cap);
    if (nj) T->j = nj;
    double *nv = realloc(T->v, sizeof(double) * cap);
    if (nv) T->v = nv;
    if (!ni || !nj || !nv) {
      T->oom = 1;
      return;
    }
    T->cap = cap;
  }
  T->i[T->n] = i, T->j[T->n] = j, T->v[T->n] = v;
  T->n++;
}

void ptd_trip_free(ptd_trip *T) {
  free(T->i), free(T->j), free(T->v);
  memset(T, 0, sizeof(*T));
}

static void forget_symbolic(ptd_csc *C) {
  if (C->sym) {
    klu_common c;
    klu_defaults(&c);
    klu_free_symbolic(&C->sym, &c);
  }
  free(C->sym_Ap), free(C->sym_Ai);
  C->sym = NULL, C->sym_Ap = C->sym_Ai = NULL, C->sym_N = C->sym_nnz = 0;
}

void ptd_csc_free(ptd_csc *C) {
  forget_symbolic(C);
  free(C->Ap), free(C->Ai), free(C->Ax), free(C->mark), free(C->ti), free(C->tj), free(C->tv);
  memset(C, 0, sizeof(*C));
}

// Two stable counting sorts (by row, then by column) give each column's entries in row order,
// the duplicates of one (row, column) adjacent and in the order they were added; they are
// summed in that order and exact zeros dropped: the entries, pattern and summation order of a
// dense fill scanned for nonzeros.
int ptd_csc_build(ptd_csc *C, const ptd_trip *T, int N) {
  if (C->N != N || !C->Ap) {
    free(C->Ap), free(C->mark);
    C->Ap = malloc(sizeof(int) * ((size_t)N + 2));
    C->mark = malloc(sizeof(int) * ((size_t)N + 2));
    C->N = N;
    if (!C->Ap || !C->mark) return PT_ENOMEM;
  }
  const size_t n = T->n;
  if (C->cap < n + 1) {
    free(C->Ai), free(C->Ax), free(C->ti), free(C->tj), free(C->tv);
    C->Ai = malloc(sizeof(int) * (n + 1));
    C->Ax = malloc(sizeof(double) * (n + 1));
    C->ti = malloc(sizeof(int) * (n + 1));
    C->tj = malloc(sizeof(int) * (n + 1));
    C->tv = malloc(sizeof(double) * (n + 1));
    C->cap = n + 1;
    if (!C->Ai || !C->Ax || !C->ti || !C->tj || !C->tv) {
      C->cap = 0;
      return PT_ENOMEM;
    }
  }
  int *Ap = C->Ap, *Ai = C->Ai, *cnt = C->mark;
  double *Ax = C->Ax;
  // by row into (ti, tj, tv)
  memset(cnt, 0, sizeof(int) * ((size_t)N + 2));
  for (size_t t = 0; t < n; t++) cnt[T->i[t] + 2]++;
  for (int r = 0; r < N; r++) cnt[r + 2] += cnt[r + 1];
  for (size_t t = 0; t < n; t++) {
    const int p = cnt[T->i[t] + 1]++;
    C->ti[p] = T->i[t], C->tj[p] = T->j[t], C->tv[p] = T->v[t];
  }
  // by column into (Ai, Ax)
  memset(Ap, 0, sizeof(int) * ((size_t)N + 2));
  for (size_t t = 0; t < n; t++) Ap[C->tj[t] + 2]++;
  for (int j = 0; j < N; j++) Ap[j + 2] += Ap[j + 1];
  for (size_t t = 0; t < n; t++) {
    const int p = Ap[C->tj[t] + 1]++;
    Ai[p] = C->ti[t], Ax[p] = C->tv[t];
  }
  // Ap[j] is the start of column j: sum adjacent duplicates, drop zeros, compact
  int nz = 0;
  for (int j = 0; j < N; j++) {
    const int p0 = Ap[j], p1 = Ap[j + 1];
    Ap[j] = nz;
    for (int p = p0; p < p1;) {
      const int r = Ai[p];
      double v = Ax[p++];
      while (p < p1 && Ai[p] == r) v += Ax[p++];
      if (v != 0) Ai[nz] = r, Ax[nz] = v, nz++;
    }
  }
  Ap[N] = nz;
  return PT_OK;
}

#define AT(i, j, v) trip_put(T, (i), (j), (v))

// Row i of A += s v (dense nv, zero outside the slots of bodies b) in the columns of block o.
static void add_row(ptd_trip *T, int i, int o, const double *v, const int b[2], double s) {
  for (int t = 0; t < 2; t++)
    if (b[t] != PT_GROUND && (t == 0 || b[1] != b[0]))
      for (int k = 0; k < 6; k++) {
        const int j = 6 * b[t] + k;
        if (v[j] != 0) trip_put(T, i, o + j, s * v[j]);
      }
}

// Row i += v (12, over bodies b) at block offset o.
static void add_row12(ptd_trip *T, int i, int o, const int b[2], const double *v, double s) {
  for (int t = 0; t < 2; t++)
    if (b[t] != PT_GROUND)
      for (int k = 0; k < 6; k++) trip_put(T, i, o + 6 * b[t] + k, s * v[6 * t + k]);
}

// Fills A (eq. 25b, Table 1) and the right-hand sides of Wbar, Sbar and the inputs, with the
// blocks of Table 1 that need no solve eliminated first:
//   23b (T qdot - u): qdot appears in no other equation and is never read: dropped;
//   23g (Sdot = W), 23j (W = Wbar), 23k (S = Sbar): W and S are the right-hand side's columns,
//     moved into 23f and 23h; Sdot_X = W_X;
//   23i (Wdot = sddot(udot, u, q)): Wdot appears nowhere else: read off after the solve.
// Left: 23a, c, d, e (n + 3 nc rows) and 23f, h (z rows each) in udot, lambda, u, q: order
// 3 nv + nc. Qq, Qu, Qin: force partials; gq, gu: gamma partials; st: the states.
int ptd_fill_system(const pt_model *m, const pt_data *w, const ptd_layout *L, ptd_trip *T,
                    double *R, const double *Qq, const double *Qu, const int *pair, int npair,
                    const double *Qin, int nu, const double *gq, const double *gu,
                    const ptd_grads *st) {
  const int N = L->N, n = L->n, nc = L->nc, z = L->z;
  const int r1 = 0, r3 = n, r4 = r3 + nc, r5 = r4 + nc, r6 = r5 + nc, r8 = r6 + z;
  const int nrhs = 2 * z + nu;
  T->n = 0, T->oom = 0;
  ptu_zero(R, N * nrhs);
  // (23a): M udot + J^T lambda + Upsilon_u u + Upsilon_q q
  // Upsilon_u = -Q_u; Upsilon_q = (M udot)_q + (J^T lambda)_q - Q_q (the force partials are
  // zero outside the body pairs' blocks: ptd_force_pairs)
  for (int p = 0; p < npair; p++)
    for (int r = 0; r < 6; r++)
      for (int c = 0; c < 6; c++) {
        const int i = 6 * pair[2 * p] + r, j = 6 * pair[2 * p + 1] + c;
        if (Qu[(size_t)i * n + j] != 0) AT(r1 + i, L->u + j, -Qu[(size_t)i * n + j]);
        if (Qq[(size_t)i * n + j] != 0) AT(r1 + i, L->q + j, -Qq[(size_t)i * n + j]);
      }
  for (int k = 0; k < m->nbody; k++) {
    const double *Ig = w->inertia_g + 9 * k, *wd = w->xdd + 6 * k + 3;
    double Iwd[3];
    ptu_mul_mat_vec3(Iwd, Ig, wd);
    for (int i = 0; i < 3; i++) {
      AT(r1 + 6 * k + i, L->ud + 6 * k + i, m->body_mass[k]);
      for (int j = 0; j < 3; j++) AT(r1 + 6 * k + 3 + i, L->ud + 6 * k + 3 + j, Ig[3 * i + j]);
    }
    // (I wd)_pi = I wd~ - (I wd)~
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double t = 0;
        const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;  // column j of a~ is a x e_j
        double col[3] = {0, 0, 0};
        col[j1] = wd[j2], col[j2] = -wd[j1];
        for (int l = 0; l < 3; l++) t += Ig[3 * i + l] * col[l];
        double S[3] = {0, 0, 0};
        S[j1] = Iwd[j2], S[j2] = -Iwd[j1];
        AT(r1 + 6 * k + 3 + i, L->q + 6 * k + 3 + j, t - S[i]);
      }
  }
  double D[144], ul[12], udl[12];
  for (int a = 0; a < nc; a++) {
    const int r = m->con_row[a];
    const int *b = m->row_body + 2 * r;
    const double *J = w->row_jac + 12 * r;
    ptd_row_jac_deriv(m, w, a, D);
    ptd_local12(b, w->x, ul);
    ptd_local12(b, w->xdd, udl);
    for (int t = 0; t < 2; t++)  // P = J^T
      if (b[t] != PT_GROUND)
        for (int k = 0; k < 6; k++) AT(r1 + 6 * b[t] + k, L->lam + a, J[6 * t + k]);
    for (int t = 0; t < 2; t++) {  // (J^T lambda)_q = lambda D
      if (b[t] == PT_GROUND) continue;
      for (int k = 0; k < 6; k++) add_row12(T, r1 + 6 * b[t] + k, L->q, b,
                                            D + 12 * (6 * t + k), w->lambda[a]);
    }
    // (23c): J udot - gamma_u u + ((J udot)_q - gamma_q) q
    add_row12(T, r3 + a, L->ud, b, J, 1);
    add_row12(T, r3 + a, L->u, b, gu + 12 * a, -1);
    add_row12(T, r3 + a, L->q, b, gq + 12 * a, -1);
    // (23d): J u + (J u)_q q;  (23e): J q
    add_row12(T, r4 + a, L->u, b, J, 1);
    add_row12(T, r5 + a, L->q, b, J, 1);
    for (int c = 0; c < 12; c++) {
      double tu = 0, tud = 0;
      for (int i = 0; i < 12; i++) tu += ul[i] * D[12 * i + c], tud += udl[i] * D[12 * i + c];
      const int t = c / 6;
      if (b[t] == PT_GROUND) continue;
      AT(r3 + a, L->q + 6 * b[t] + c % 6, tud);
      AT(r4 + a, L->q + 6 * b[t] + c % 6, tu);
    }
  }
  for (int k = 0; k < z; k++) {
    const ptd_grads *g = st + k;
    // (23f): S - s(q) = 0 with S = Sbar: -s_q q = -Sbar
    add_row(T, r6 + k, L->q, g->sq, g->body, -1);
    R[(size_t)(z + k) * N + r6 + k] = -1;
    // (23h): W - sdot(u, q) = 0 with W = Wbar: -s_q u - sdot_q q = -Wbar
    add_row(T, r8 + k, L->u, g->sq, g->body, -1);
    add_row(T, r8 + k, L->q, g->sdq, g->body, -1);
    R[(size_t)k * N + r8 + k] = -1;
  }
  // inputs: dF/du_in = -Q_in moves to the right-hand side of (23a)
  for (int c = 0; c < nu; c++)
    for (int i = 0; i < n; i++) R[(size_t)(2 * z + c) * N + r1 + i] = Qin[(size_t)i * nu + c];
  return T->oom ? PT_ENOMEM : PT_OK;
}


#undef AT

// Eq. 25b by sparse LU (KLU: block triangular form, fill-reducing order, partial pivoting):
// the augmented matrix has a few nonzeros per row, so this grows far slower than the dense LU.
int ptd_solve_sparse(ptd_csc *A, double *R, int nrhs) {
  const int N = A->N, nnz = A->Ap[N];
  klu_common c;
  klu_defaults(&c);
  c.tol = 0.1;  // prefer accuracy over keeping the diagonal
  // the orderings depend on the pattern alone: a fresh analysis of the same pattern is the same
  const int same = A->sym && A->sym_N == N && A->sym_nnz == nnz &&
                   !memcmp(A->sym_Ap, A->Ap, sizeof(int) * ((size_t)N + 1)) &&
                   !memcmp(A->sym_Ai, A->Ai, sizeof(int) * (size_t)nnz);
  if (!same) {
    forget_symbolic(A);
    A->sym = klu_analyze(N, A->Ap, A->Ai, &c);
    A->sym_Ap = malloc(sizeof(int) * ((size_t)N + 1));
    A->sym_Ai = malloc(sizeof(int) * ((size_t)nnz + 1));
    if (!A->sym || !A->sym_Ap || !A->sym_Ai) {
      forget_symbolic(A);
      return c.status == KLU_OUT_OF_MEMORY || c.status == KLU_OK ? PT_ENOMEM : PT_ESINGULAR;
    }
    memcpy(A->sym_Ap, A->Ap, sizeof(int) * ((size_t)N + 1));
    memcpy(A->sym_Ai, A->Ai, sizeof(int) * (size_t)nnz);
    A->sym_N = N, A->sym_nnz = nnz;
  }
  klu_numeric *num = klu_factor(A->Ap, A->Ai, A->Ax, A->sym, &c);
  int rc = c.status == KLU_OUT_OF_MEMORY ? PT_ENOMEM : PT_ESINGULAR;
  if (num && klu_rcond(A->sym, num, &c) && c.rcond > PT_TOL_RCOND_KLU &&
      klu_solve(A->sym, num, N, nrhs, R, &c))
    rc = PT_OK;
  if (num) klu_free_numeric(&num, &c);
  return rc;
}
