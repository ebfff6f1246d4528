// splu.h: a sparse LU factorisation with partial pivoting (Gilbert and Peierls' left-looking
// algorithm: a depth-first search gives each column's pattern, then a sparse triangular solve),
// on storage sized by the caller, so that neither a factorisation nor a refactorisation
// allocates. For the joint-coordinate partitions of closed loops (loop_partition.c): the
// choice of dependent coordinates (P G^T = L U, rectangular), the LU of G_u and of the QR
// partition's B = [G; Q2^T].
#ifndef PT_SPLU_H
#define PT_SPLU_H

// The factors of P A = L U for an (nr x nc) A, nr >= nc, in CSC: L (nr x nc, unit diagonal not
// stored, rows in A's numbering), U (nc x nc, diagonal in ud, off-diagonal entries by pivot
// index). prow[k] is the row of A chosen as pivot k; pinv[r] the pivot index of row r (-1 for
// the nr - nc rows left over).
typedef struct {
  int nr, nc;          // A's shape
  int cap;             // capacity of li/lx and of ui/ux
  int *lp, *li;        // (nc + 1), (cap)
  double *lx;          // (cap)
  int *up, *ui;        // (nc + 1), (cap)
  double *ux;          // (cap)
  double *ud;          // (nc) pivots
  int *prow, *pinv;    // (nc), (nr)
  double *x;           // (nr) dense work, all zero between uses
  int *stack, *mark;   // (2 nr), (nr)
  double *y;           // (nr) solve work
} pt_splu;

// Factors A (CSC ap, ai, ax) choosing the pivots: in each column the largest entry of the rows
// not yet pivotal, but a row below `prefer` (its index in A) whenever one reaches `tol` of
// that largest (prefer = nr: no preference). Returns 0, or -1 when a column has no non-zero
// pivot or the factors outgrow cap.
int pt_splu_factor(pt_splu *f, int nr, int nc, const int *ap, const int *ai, const double *ax,
                   int prefer, double tol);
// The same pattern and pivot order for new values of A (same shape and pattern): as KLU's
// refactor. A zero pivot shows in the pivots' spread (pt_splu_rcond).
void pt_splu_refactor(pt_splu *f, const int *ap, const int *ai, const double *ax);
// min |pivot| / max |pivot|, 0 if a pivot is 0 or not finite.
double pt_splu_rcond(const pt_splu *f);
// A x = b for a square factor, in place (b: nr).
void pt_splu_solve(pt_splu *f, double *b);

// ---- sparse LDL^T with the symbolic work done once -------------------------------------------
// For a symmetric matrix whose pattern is fixed (the Schur complement of loop_dyn.c): the
// upper triangle of P A P^T held by columns (ap, ai with ai <= column, the diagonal included),
// its elimination tree, the column counts and row patterns of L and L's row indices, all at
// load (pt_sldl_symbolic); each factorisation is then numeric only (up-looking, as ldl_numeric
// of Davis' LDL package, without walking the tree again).
typedef struct {
  int n;
  const int *ap, *ai;    // upper triangle of P A P^T by columns (n + 1), (ap[n])
  const int *lp, *li;    // L by columns (n + 1), (lp[n]): fixed pattern
  const int *rp, *rpat;  // row patterns of L (n + 1), (lp[n]): columns of each row, topological
} pt_sldl;

// From the upper pattern (ap, ai; n columns): lp (n + 1), parent (n), and, when rp, rpat and
// li are not NULL, the row patterns and L's row indices (each lp[n] long). work: 4 n ints.
void pt_sldl_symbolic(int n, const int *ap, const int *ai, int *lp, int *parent, int *rp,
                      int *rpat, int *li, int *work);
// L D L^T of the values ax (on ap, ai): lx (lp[n]), dg (n); y (n doubles) and cnt (n ints) are
// work. Returns n, or the column of a zero pivot.
int pt_sldl_factor(const pt_sldl *f, const double *ax, double *lx, double *dg, double *y,
                   int *cnt);
// (L D L^T) x = b in place (permuted numbering).
void pt_sldl_solve(const pt_sldl *f, const double *lx, const double *dg, double *b);

#endif
