// linearize_system.c: the augmented sensitivity system of the linearization seed (eq. 25b,
// Table 1) filled from the partials, in the engine's chart delta q = (delta r, delta pi).
// Equation blocks (rows) and unknown blocks (columns of X) follow Table 1; see linearize.c.
#include <stdlib.h>

#include "linearize_internal.h"
#include "ptu.h"

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
  L.ud = 0, L.qd = L.n, L.Wd = 2 * L.n, L.Sd = L.Wd + z, L.lam = L.Sd + z;
  L.u = L.lam + L.nc, L.q = L.u + L.n, L.W = L.q + L.n, L.S = L.W + z;
  L.N = L.S + z;
  return L;
}

#define AT(i, j) A[(size_t)(j) * N + (size_t)(i)]

// Row i of A += v (dense nv) in the columns of block at offset o, times s.
static void add_row(double *A, int N, int i, int o, const double *v, int nv, double s) {
  for (int j = 0; j < nv; j++)
    if (v[j] != 0) AT(i, o + j) += s * v[j];
}

// Row i += v (12, over bodies b) at block offset o.
static void add_row12(double *A, int N, int i, int o, const int b[2], const double *v,
                      double s) {
  for (int t = 0; t < 2; t++)
    if (b[t] != PT_GROUND)
      for (int k = 0; k < 6; k++) AT(i, o + 6 * b[t] + k) += s * v[6 * t + k];
}

// Fills A (eq. 25b, Table 1) and the right-hand sides [I 0 0; 0 I 0; 0 0 Q_in] of Wbar, Sbar
// and the inputs. Qq, Qu, Qin: force partials; gq, gu: gamma partials; st: the states.
void ptd_fill_system(const pt_model *m, const pt_data *w, const ptd_layout *L, double *A,
                        double *R, const double *Qq, const double *Qu, const double *Qin,
                        int nu, const double *gq, const double *gu, const ptd_grads *st) {
  const int N = L->N, n = L->n, nc = L->nc, z = L->z;
  const int r1 = 0, r2 = n, r3 = 2 * n, r4 = r3 + nc, r5 = r4 + nc, r6 = r5 + nc;
  const int r7 = r6 + z, r8 = r7 + z, r9 = r8 + z, r10 = r9 + z, r11 = r10 + z;
  const int nrhs = 2 * z + nu;
  ptu_zero(A, N * N);
  ptu_zero(R, N * nrhs);
  // (23a): M udot + J^T lambda + Upsilon_u u + Upsilon_q q
  // Upsilon_u = -Q_u; Upsilon_q = (M udot)_q + (J^T lambda)_q - Q_q
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      AT(r1 + i, L->u + j) = -Qu[(size_t)i * n + j];
      AT(r1 + i, L->q + j) = -Qq[(size_t)i * n + j];
    }
  for (int k = 0; k < m->nbody; k++) {
    const double *Ig = w->inertia_g + 9 * k, *wd = w->xdd + 6 * k + 3;
    double Iwd[3];
    ptu_mul_mat_vec3(Iwd, Ig, wd);
    for (int i = 0; i < 3; i++) {
      AT(r1 + 6 * k + i, L->ud + 6 * k + i) = m->body_mass[k];
      for (int j = 0; j < 3; j++) AT(r1 + 6 * k + 3 + i, L->ud + 6 * k + 3 + j) = Ig[3 * i + j];
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
        AT(r1 + 6 * k + 3 + i, L->q + 6 * k + 3 + j) += t - S[i];
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
        for (int k = 0; k < 6; k++) AT(r1 + 6 * b[t] + k, L->lam + a) += J[6 * t + k];
    for (int t = 0; t < 2; t++) {  // (J^T lambda)_q = lambda D
      if (b[t] == PT_GROUND) continue;
      for (int k = 0; k < 6; k++) add_row12(A, N, r1 + 6 * b[t] + k, L->q, b,
                                            D + 12 * (6 * t + k), w->lambda[a]);
    }
    // (23c): J udot - gamma_u u + ((J udot)_q - gamma_q) q
    add_row12(A, N, r3 + a, L->ud, b, J, 1);
    add_row12(A, N, r3 + a, L->u, b, gu + 12 * a, -1);
    add_row12(A, N, r3 + a, L->q, b, gq + 12 * a, -1);
    // (23d): J u + (J u)_q q;  (23e): J q
    add_row12(A, N, r4 + a, L->u, b, J, 1);
    add_row12(A, N, r5 + a, L->q, b, J, 1);
    for (int c = 0; c < 12; c++) {
      double tu = 0, tud = 0;
      for (int i = 0; i < 12; i++) tu += ul[i] * D[12 * i + c], tud += udl[i] * D[12 * i + c];
      const int t = c / 6;
      if (b[t] == PT_GROUND) continue;
      AT(r3 + a, L->q + 6 * b[t] + c % 6) += tud;
      AT(r4 + a, L->q + 6 * b[t] + c % 6) += tu;
    }
  }
  // (23b): T qdot - u + [T qdot]_q q, T = I, [T qdot]_q = -omega~ / 2 (rotation blocks)
  for (int i = 0; i < n; i++) {
    AT(r2 + i, L->qd + i) = 1;
    AT(r2 + i, L->u + i) = -1;
  }
  for (int k = 0; k < m->nbody; k++) {
    const double *wv = w->x + 6 * k + 3;
    const int o = r2 + 6 * k + 3, c = L->q + 6 * k + 3;
    AT(o + 0, c + 1) += 0.5 * wv[2], AT(o + 0, c + 2) -= 0.5 * wv[1];
    AT(o + 1, c + 0) -= 0.5 * wv[2], AT(o + 1, c + 2) += 0.5 * wv[0];
    AT(o + 2, c + 0) += 0.5 * wv[1], AT(o + 2, c + 1) -= 0.5 * wv[0];
  }
  for (int k = 0; k < z; k++) {
    const ptd_grads *g = st + k;
    // (23f): S - s(q)
    add_row(A, N, r6 + k, L->q, g->sq, n, -1);
    AT(r6 + k, L->S + k) = 1;
    // (23g): Sdot - W
    AT(r7 + k, L->Sd + k) = 1;
    AT(r7 + k, L->W + k) = -1;
    // (23h): W - sdot(u, q)
    AT(r8 + k, L->W + k) = 1;
    add_row(A, N, r8 + k, L->u, g->sq, n, -1);
    add_row(A, N, r8 + k, L->q, g->sdq, n, -1);
    // (23i): Wdot - sddot(udot, u, q)
    AT(r9 + k, L->Wd + k) = 1;
    add_row(A, N, r9 + k, L->ud, g->sq, n, -1);
    add_row(A, N, r9 + k, L->u, g->sddu, n, -1);
    add_row(A, N, r9 + k, L->q, g->sddq, n, -1);
    // (23j, k) and their right-hand sides
    AT(r10 + k, L->W + k) = 1;
    AT(r11 + k, L->S + k) = 1;
    R[(size_t)k * N + r10 + k] = 1;
    R[(size_t)(z + k) * N + r11 + k] = 1;
  }
  // inputs: dF/du_in = -Q_in moves to the right-hand side of (23a)
  for (int c = 0; c < nu; c++)
    for (int i = 0; i < n; i++) R[(size_t)(2 * z + c) * N + r1 + i] = Qin[(size_t)i * nu + c];
}


// Eq. 25b by sparse LU (KLU: block triangular form, fill-reducing order, partial pivoting):
// the augmented matrix has a few nonzeros per row, so this grows far slower than the dense LU.
int ptd_solve_sparse(int N, const double *A, double *R, int nrhs) {
  size_t nnz = 0;
  for (size_t i = 0; i < (size_t)N * N; i++) nnz += A[i] != 0;
  int *Ap = malloc(sizeof(int) * ((size_t)N + 1)), *Ai = malloc(sizeof(int) * (nnz + 1));
  double *Ax = malloc(sizeof(double) * (nnz + 1));
  int rc = PT_ENOMEM;
  if (Ap && Ai && Ax) {
    size_t k = 0;
    for (int j = 0; j < N; j++) {
      Ap[j] = (int)k;
      for (int i = 0; i < N; i++) {
        const double v = A[(size_t)j * N + i];
        if (v != 0) Ai[k] = i, Ax[k] = v, k++;
      }
    }
    Ap[N] = (int)k;
    klu_common c;
    klu_defaults(&c);
    c.tol = 0.1;  // prefer accuracy over keeping the diagonal
    klu_symbolic *sym = klu_analyze(N, Ap, Ai, &c);
    klu_numeric *num = sym ? klu_factor(Ap, Ai, Ax, sym, &c) : NULL;
    rc = PT_ESINGULAR;
    if (num && klu_rcond(sym, num, &c) && c.rcond > 1e-15 &&
        klu_solve(sym, num, N, nrhs, R, &c))
      rc = PT_OK;
    if (num) klu_free_numeric(&num, &c);
    if (sym) klu_free_symbolic(&sym, &c);
  }
  free(Ap), free(Ai), free(Ax);
  return rc;
}
