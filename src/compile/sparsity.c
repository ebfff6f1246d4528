// sparsity.c: the block sparsity pattern of W = J M^-1 J^T (rows couple only through a shared
// body) and its fill-reducing AMD ordering with the LDL^T symbolic analysis (local-dynamics
// seed), computed once at load so that a step only refactors numbers (core/dynamics.c).
#include <amd.h>
#include <ldl.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"

static int col_find(const pt_model *m, int row, int col) {
  int lo = m->w_colptr[col], hi = m->w_colptr[col + 1] - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (m->w_rowind[mid] == row) return mid;
    if (m->w_rowind[mid] < row) lo = mid + 1; else hi = mid - 1;
  }
  return -1;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int pt_compile_w_pattern(pt_model *m) {
  const int n = m->ncon, nb = m->nbody;
  m->body_row_adr = pt_model_alloc(m, (size_t)nb + 1, sizeof(int));
  if (!m->body_row_adr) return PT_ENOMEM;
  for (int a = 0; a < n; a++)
    for (int s = 0; s < 2; s++) {
      int b = m->row_body[2 * m->con_row[a] + s];
      if (b != PT_GROUND) m->body_row_adr[b + 1]++;
    }
  for (int k = 0; k < nb; k++) m->body_row_adr[k + 1] += m->body_row_adr[k];
  const int tot = m->body_row_adr[nb];
  m->body_rows = pt_model_alloc(m, 2 * (size_t)tot + 1, sizeof(int));
  int *fill = calloc((size_t)nb + 1, sizeof(int));
  int *mark = malloc(sizeof(int) * ((size_t)n + 1));
  if (!m->body_rows || !fill || !mark) {
    free(fill), free(mark);
    return PT_ENOMEM;
  }
  for (int a = 0; a < n; a++)  // ascending rows per body
    for (int s = 0; s < 2; s++) {
      int b = m->row_body[2 * m->con_row[a] + s];
      if (b == PT_GROUND) continue;
      int p = m->body_row_adr[b] + fill[b]++;
      m->body_rows[2 * p] = a;
      m->body_rows[2 * p + 1] = s;
    }
  free(fill);
  // pattern: column b holds every row a sharing a body with b
  m->w_colptr = pt_model_alloc(m, (size_t)n + 1, sizeof(int));
  if (!m->w_colptr) {
    free(mark);
    return PT_ENOMEM;
  }
  for (int pass = 0; pass < 2; pass++) {
    int nz = 0;
    for (int i = 0; i < n; i++) mark[i] = -1;
    for (int b = 0; b < n; b++) {
      if (pass == 0) m->w_colptr[b] = nz;
      for (int s = 0; s < 2; s++) {
        int k = m->row_body[2 * m->con_row[b] + s];
        if (k == PT_GROUND) continue;
        for (int t = m->body_row_adr[k]; t < m->body_row_adr[k + 1]; t++) {
          int a = m->body_rows[2 * t];
          if (mark[a] == b) continue;
          mark[a] = b;
          if (pass == 1) m->w_rowind[nz] = a;
          nz++;
        }
      }
      if (pass == 1) qsort(m->w_rowind + m->w_colptr[b], (size_t)(nz - m->w_colptr[b]),
                           sizeof(int), cmp_int);
    }
    if (pass == 0) {
      m->w_colptr[n] = nz;
      m->w_nnz = nz;
      m->w_rowind = pt_model_alloc(m, (size_t)nz + 1, sizeof(int));
      if (!m->w_rowind) {
        free(mark);
        return PT_ENOMEM;
      }
    }
  }
  free(mark);
  // scatter map: for body k, pair (ia, ib) -> W entry (row ia, column ib)
  m->body_pair_adr = pt_model_alloc(m, (size_t)nb + 1, sizeof(int));
  if (!m->body_pair_adr) return PT_ENOMEM;
  for (int k = 0; k < nb; k++) {
    int c = m->body_row_adr[k + 1] - m->body_row_adr[k];
    m->body_pair_adr[k + 1] = m->body_pair_adr[k] + c * c;
  }
  m->body_pair_nz = pt_model_alloc(m, (size_t)m->body_pair_adr[nb] + 1, sizeof(int));
  if (!m->body_pair_nz) return PT_ENOMEM;
  for (int k = 0; k < nb; k++) {
    const int *rows = m->body_rows + 2 * m->body_row_adr[k];
    int c = m->body_row_adr[k + 1] - m->body_row_adr[k];
    for (int ia = 0; ia < c; ia++)
      for (int ib = 0; ib < c; ib++)
        m->body_pair_nz[m->body_pair_adr[k] + ia * c + ib] =
            col_find(m, rows[2 * ia], rows[2 * ib]);
  }
  // AMD ordering and LDL^T symbolic factorisation (sizes of L known from now on)
  m->ldl_Lp = pt_model_alloc(m, (size_t)n + 1, sizeof(int));
  m->ldl_parent = pt_model_alloc(m, (size_t)n + 1, sizeof(int));
  m->ldl_lnz = pt_model_alloc(m, (size_t)n + 1, sizeof(int));
  m->ldl_P = pt_model_alloc(m, (size_t)n + 1, sizeof(int));
  m->ldl_Pinv = pt_model_alloc(m, (size_t)n + 1, sizeof(int));
  int *flag = malloc(sizeof(int) * ((size_t)n + 1));
  if (!m->ldl_Lp || !m->ldl_parent || !m->ldl_lnz || !m->ldl_P || !m->ldl_Pinv || !flag) {
    free(flag);
    return PT_ENOMEM;
  }
  if (n > 0) {
    if (amd_order(n, m->w_colptr, m->w_rowind, m->ldl_P, NULL, NULL) < AMD_OK) {
      free(flag);
      return PT_ENOMEM;
    }
    ldl_symbolic(n, m->w_colptr, m->w_rowind, m->ldl_Lp, m->ldl_parent, m->ldl_lnz, flag,
                 m->ldl_P, m->ldl_Pinv);
  }
  free(flag);
  m->ldl_nnz = m->ldl_Lp[n];
  return PT_OK;
}
