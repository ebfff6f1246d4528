// splu.c: sparse LU with partial pivoting, left-looking (Gilbert and Peierls, "Sparse partial
// pivoting in time proportional to arithmetic operations", SIAM J. Sci. Stat. Comput. 9, 1988):
// column k of L and U is x = L^-1 A(:, k) restricted to the rows a depth-first search reaches
// from A(:, k)'s non-zeros through the columns of L built so far, taken in topological order.
// Storage is the caller's (splu.h), so nothing here allocates.
#include "splu.h"

#include <math.h>

// Rows reached from column k of A through the columns of L built so far (a pivotal row r,
// pivot j, leads to the rows of L(:, j)): returns top, the reach in topological order in
// stack[top .. nr). Non-recursive depth-first search; stack[nr ..) is the resume stack.
static int reach(pt_splu *f, const int *ap, const int *ai, int k) {
  const int nr = f->nr;
  int *xi = f->stack, *ps = f->stack + nr, *mark = f->mark;
  const int *pinv = f->pinv, *lp = f->lp, *li = f->li;
  int top = nr;
  for (int p = ap[k]; p < ap[k + 1]; p++) {
    if (mark[ai[p]] == k + 1) continue;
    int head = 0;
    xi[0] = ai[p];
    while (head >= 0) {
      const int r = xi[head], j = pinv[r];
      if (mark[r] != k + 1) {
        mark[r] = k + 1;
        ps[head] = j < 0 ? 0 : lp[j];
      }
      const int end = j < 0 ? 0 : lp[j + 1];
      int q = ps[head];
      while (q < end && mark[li[q]] == k + 1) q++;
      if (q < end) {
        ps[head] = q + 1;
        xi[++head] = li[q];
      } else {
        head--;
        xi[--top] = r;
      }
    }
  }
  return top;
}

static void clear(pt_splu *f, int top) {
  for (int t = top; t < f->nr; t++) f->x[f->stack[t]] = 0;
}

int pt_splu_factor(pt_splu *f, int nr, int nc, const int *ap, const int *ai, const double *ax,
                   int prefer, double tol) {
  double *x = f->x;
  const int *xi = f->stack;
  f->nr = nr;
  f->nc = nc;
  for (int i = 0; i < nr; i++) {
    f->pinv[i] = -1;
    f->mark[i] = 0;
  }
  f->lp[0] = f->up[0] = 0;
  int lnz = 0, unz = 0;
  for (int k = 0; k < nc; k++) {
    const int top = reach(f, ap, ai, k);
    for (int p = ap[k]; p < ap[k + 1]; p++) x[ai[p]] = ax[p];
    // the updates by the pivotal rows reached (L(:, j) changes only rows later in the order)
    for (int t = top; t < nr; t++) {
      const int r = xi[t], j = f->pinv[r];
      if (j < 0) continue;
      const double u = x[r];
      x[r] = 0;
      if (unz == f->cap) {
        clear(f, top);
        return -1;
      }
      f->ui[unz] = j;
      f->ux[unz++] = u;
      for (int q = f->lp[j]; q < f->lp[j + 1]; q++) x[f->li[q]] -= f->lx[q] * u;
    }
    double best = 0, best_pref = 0;
    int piv = -1, piv_pref = -1;
    for (int t = top; t < nr; t++) {
      const int r = xi[t];
      if (f->pinv[r] >= 0) continue;
      const double a = fabs(x[r]);
      if (a > best) best = a, piv = r;
      if (r < prefer && a > best_pref) best_pref = a, piv_pref = r;
    }
    if (!(best > 0) || !isfinite(best)) {
      clear(f, top);
      return -1;
    }
    if (piv_pref >= 0 && best_pref >= tol * best) piv = piv_pref;
    const double dk = x[piv];
    x[piv] = 0;
    f->pinv[piv] = k;
    f->prow[k] = piv;
    f->ud[k] = dk;
    for (int t = top; t < nr; t++) {
      const int r = xi[t];
      if (f->pinv[r] >= 0) continue;
      if (lnz == f->cap) {
        clear(f, top);
        return -1;
      }
      f->li[lnz] = r;
      f->lx[lnz++] = x[r] / dk;
      x[r] = 0;
    }
    f->lp[k + 1] = lnz;
    f->up[k + 1] = unz;
  }
  return 0;
}

void pt_splu_refactor(pt_splu *f, const int *ap, const int *ai, const double *ax) {
  double *x = f->x, *lx = f->lx, *ux = f->ux;
  const int *prow = f->prow, *lp = f->lp, *li = f->li, *up = f->up, *ui = f->ui;
  for (int k = 0; k < f->nc; k++) {
    for (int p = ap[k]; p < ap[k + 1]; p++) x[ai[p]] = ax[p];
    for (int q = up[k]; q < up[k + 1]; q++) {
      const int j = ui[q];
      const double u = x[prow[j]];
      x[prow[j]] = 0;
      ux[q] = u;
      for (int t = lp[j]; t < lp[j + 1]; t++) x[li[t]] -= lx[t] * u;
    }
    const double dk = x[prow[k]];
    x[prow[k]] = 0;
    f->ud[k] = dk;
    const double inv = 1 / dk;
    for (int t = lp[k]; t < lp[k + 1]; t++) {
      lx[t] = x[li[t]] * inv;
      x[li[t]] = 0;
    }
  }
}

double pt_splu_rcond(const pt_splu *f) {
  double lo = INFINITY, hi = 0;
  for (int i = 0; i < f->nc; i++) {
    const double a = fabs(f->ud[i]);
    if (!(a > 0) || !isfinite(a)) return 0;
    lo = fmin(lo, a);
    hi = fmax(hi, a);
  }
  return f->nc > 0 ? lo / hi : 1;
}

// L y = P b (row numbering), then U x = y.
void pt_splu_solve(pt_splu *f, double *b) {
  const int n = f->nc;
  const int *prow = f->prow, *lp = f->lp, *li = f->li, *up = f->up, *ui = f->ui;
  const double *lx = f->lx, *ux = f->ux, *ud = f->ud;
  double *y = f->y;
  for (int j = 0; j < n; j++) {
    const double yj = b[prow[j]];
    y[j] = yj;
    for (int t = lp[j]; t < lp[j + 1]; t++) b[li[t]] -= lx[t] * yj;
  }
  for (int k = n - 1; k >= 0; k--) {
    const double xk = y[k] / ud[k];
    y[k] = xk;
    for (int t = up[k]; t < up[k + 1]; t++) y[ui[t]] -= ux[t] * xk;
  }
  for (int k = 0; k < n; k++) b[k] = y[k];
}

// ---- sparse LDL^T --------------------------------------------------------------------------

void pt_sldl_symbolic(int n, const int *ap, const int *ai, int *lp, int *parent, int *rp,
                      int *rpat, int *li, int *work) {
  int *flag = work, *cnt = work + n;
  // elimination tree and column counts (as ldl_symbolic)
  for (int k = 0; k < n; k++) {
    parent[k] = -1;
    flag[k] = k;
    cnt[k] = 0;
    for (int p = ap[k]; p < ap[k + 1]; p++)
      for (int i = ai[p]; i < k && flag[i] != k; i = parent[i]) {
        if (parent[i] == -1) parent[i] = k;
        cnt[i]++;
        flag[i] = k;
      }
  }
  lp[0] = 0;
  for (int k = 0; k < n; k++) lp[k + 1] = lp[k] + cnt[k];
  if (!rp) return;
  // row patterns in topological order (the reach of column k's entries in the tree: each path
  // from an entry up to k, later paths first, as ldl_numeric's pattern), and the row index
  // each entry of L takes in the numeric factorisation's order
  int *stack = work + 2 * n, *out = work + 3 * n, nz = 0;
  for (int k = 0; k < n; k++) cnt[k] = 0;
  for (int k = 0; k < n; k++) {
    rp[k] = nz;
    flag[k] = n + k;  // distinct from the counts' marks above
    int top = n;
    for (int p = ap[k]; p < ap[k + 1]; p++) {
      int len = 0;
      for (int i = ai[p]; flag[i] != n + k; i = parent[i]) {
        stack[len++] = i;
        flag[i] = n + k;
      }
      while (len > 0) out[--top] = stack[--len];
    }
    for (int t = top; t < n; t++) {
      const int i = out[t];
      rpat[nz++] = i;
      li[lp[i] + cnt[i]++] = k;
    }
  }
  rp[n] = nz;
}

int pt_sldl_factor(const pt_sldl *f, const double *ax, double *lx, double *dg, double *y,
                   int *cnt) {
  const int n = f->n, *ap = f->ap, *ai = f->ai, *lp = f->lp, *li = f->li;
  for (int k = 0; k < n; k++) {
    y[k] = 0;
    cnt[k] = 0;
  }
  for (int k = 0; k < n; k++) {
    for (int p = ap[k]; p < ap[k + 1]; p++) y[ai[p]] += ax[p];
    double dk = y[k];
    y[k] = 0;
    for (int t = f->rp[k]; t < f->rp[k + 1]; t++) {
      const int i = f->rpat[t];
      const double yi = y[i];
      y[i] = 0;
      const int p2 = lp[i] + cnt[i];
      for (int p = lp[i]; p < p2; p++) y[li[p]] -= lx[p] * yi;
      const double l = yi / dg[i];
      dk -= l * yi;
      lx[p2] = l;
      cnt[i]++;
    }
    if (dk == 0 || !isfinite(dk)) return k;
    dg[k] = dk;
  }
  return n;
}

void pt_sldl_solve(const pt_sldl *f, const double *lx, const double *dg, double *b) {
  const int n = f->n, *lp = f->lp, *li = f->li;
  for (int j = 0; j < n; j++)
    for (int p = lp[j]; p < lp[j + 1]; p++) b[li[p]] -= lx[p] * b[j];
  for (int j = 0; j < n; j++) b[j] /= dg[j];
  for (int j = n - 1; j >= 0; j--)
    for (int p = lp[j]; p < lp[j + 1]; p++) b[j] -= lx[p] * b[li[p]];
}
