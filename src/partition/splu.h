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

#endif
