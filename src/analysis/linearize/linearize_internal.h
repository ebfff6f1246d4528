// linearize_internal.h: the partial derivatives the linearizer needs (linearize_partials.c).
//
// Position perturbations are delta q = (delta r, delta pi) per body, 6 numbers, pi the global
// virtual rotation (the engine's Jacobian layout); velocity perturbations delta u = delta x =
// (delta rdot, delta omega). A row or coordinate Jacobian J (12 numbers over its two bodies,
// [r1 pi1 r2 pi2]) has the local derivative D (12 x 12, row-major): D[a][b] = dJ_a / dq_b, so
// that d(J^T lambda)/dq = lambda D and d(J v)/dq = v^T D.
#ifndef PT_LINEARIZE_INTERNAL_H
#define PT_LINEARIZE_INTERNAL_H

#include "engine.h"
#include "partition.h"

// D of active constraint row a (joint row or motion row), analytic.
void ptd_row_jac_deriv(const pt_model *m, const pt_data *d, int a, double D[144]);
// D of coordinate (measure) c, analytic.
void ptd_meas_jac_deriv(const pt_model *m, const pt_data *d, int c, double D[144]);

// D += the derivative of the distance |p2 - p1| between points with arms s1, s2
// (dv = p2 - p1); nothing if the points coincide.
void ptd_distance_deriv(double D[144], const double s1[3], const double s2[3],
                        const double dv[3]);

// gamma_q (12) and gamma_u (12) of active row a, analytic, if it is a joint row (1); 0 for a
// motion row.
int ptd_gamma_partials(const pt_model *m, const pt_data *d, int a, double gq[12], double gu[12]);

// d(Jdot x)/dq and d(Jdot x)/du (12 each) of coordinate c, analytic (1), except a distance (0).
int ptd_meas_quadratic_partials(const pt_model *m, const pt_data *d, int c, double jq[12],
                                double ju[12]);

// Partials of the quadratic-velocity terms: analytic for joint rows, by local central
// differences for motion rows and coordinates (one row / one
// coordinate at a time, its two bodies perturbed): per active row a, dgamma/dq (gq, 12) and
// dgamma/du (gu, 12); per listed coordinate meas[i], d(jdotx)/dq and d(jdotx)/du (12 each).
// s is the data at the operating point, used as scratch: its state is restored bit for bit and
// its kinematics and rows re-evaluated on return (forces, xdd, lambda are not touched).
int ptd_fd_quadratic(const pt_model *m, pt_data *s, double *gq, double *gu, const int *meas,
                     int nmeas, double *jq, double *ju);

// Partials of the applied forces Q(q, u, input) at d's state: Qq, Qu (nv x nv) and Qin
// (nv x nin, columns = the inputs listed in `inputs`), all row-major, accumulated (+=).
// Bushings use local central differences of their own force on the scratch data s (which may
// be d itself: its state is restored bit for bit).
int ptd_force_partials(const pt_model *m, const pt_data *d, pt_data *s, double *Qq,
                       double *Qu, double *Qin, const int *inputs, int nin);
// The body pairs (row body, column body; 2 x npair into pair, room for
// PTD_FORCE_PAIRS_MAX(m) ints) whose 6 x 6 block of Q_q or Q_u ptd_force_partials can fill:
// every body with itself and, both ways, the two bodies of every joint, force element and
// coordinate. A superset known at load, sorted: a call zeroes and reads these blocks only,
// never the whole nv x nv. Returns npair.
#define PTD_FORCE_PAIRS_MAX(m) (8 * ((m)->nbody + (m)->njoint + (m)->nforce + (m)->ncoord))
int ptd_force_pairs(const pt_model *m, int *pair);
void ptd_zero_pairs(double *Qq, double *Qu, int nv, const int *pair, int npair);

// Body k of the scratch data s set to the base state (q0, x0 for every body, 7 / 6 per body)
// with its local variable v (0-2 r, 3-5 pi, 6-8 rdot, 9-11 omega) moved by h; kinematics
// (rot, inertia, x) re-evaluated.
void ptd_perturb(const pt_model *m, pt_data *s, const double *q0, const double *x0, int k,
                 int v, double h);
double ptd_fd_step(int v);   // local difference step of variable v

// Scatters a 12 x 12 local block (bodies b[0], b[1]) times `scale` into a dense (nv x nv)
// row-major matrix; ground slots are skipped.
void ptd_scatter12(double *G, int nv, const int b[2], const double *L, double scale);

// ---- coordinates of the linearization (linearize_select.c) ---------------------------------
// An engine coordinate (meas >= 0) or an internal coordinate of a body: comp 0-2 its CoM
// position, 3-5 the rotation vector of its attitude relative to the operating point.
typedef struct {
  int meas;   // coordinate index, or -1
  int body;   // internal: body index
  int comp;   // internal: 0..5
} ptd_coord;

// comp 6-8 (internal, never parsed from a name): a body's angular velocity component, as the
// rate of an attitude increment about that global axis (Jacobian e_pi, no quadratic term):
// the control elements' angular_velocity measures (linearize_control.c), named "BODY.wx".
void ptd_coord_name(const pt_model *m, const ptd_coord *c, char *out, size_t cap);
int ptd_coord_parse(const pt_model *m, const char *name, ptd_coord *out);   // 0 ok, -1 unknown
void ptd_coord_jac(const pt_model *m, const pt_data *d, const ptd_coord *c, double *row);
// Eq. 21-22: picks the z = nv - ncon states among the candidates (kept[i] says which were
// kept), completing them with internal coordinates.
int ptd_select_states(const pt_model *m, const pt_data *d, const ptd_coord *cand, int ncand,
                      ptd_coord *states, int *kept, pt_error *err);
// The same choice on a closed loop in joint coordinates, sparse (linearize_select.c): on the
// work data d at w's state. PT_OK, or not applicable (ptd_select_states decides then).
int ptd_select_states_loop(const pt_model *m, pt_data *d, const pt_data *w, const ptd_coord *cand,
                           int ncand, ptd_coord *states, int *kept);

// ---- the augmented system (linearize_system.c) ----------------------------------------------
typedef struct {        // a state or output coordinate's partials (dense, nv each)
  double *sq;           // s_q (= sdot_u = sddot_udot)
  double *sdq;          // sdot_q
  double *sddq;         // sddot_q
  double *sddu;         // sddot_u
  int body[2];          // the bodies (or PT_GROUND) outside whose 6 slots all four are zero
} ptd_grads;

// The augmented matrix as triplets (row, column, value) in the order they are added;
// duplicates are summed by ptd_csc in that order (the order a dense fill would sum them).
typedef struct {
  int *i, *j;
  double *v;
  size_t n, cap;
  int oom;               // an addition failed for lack of memory
} ptd_trip;

// Compressed columns (N x N) of the triplets, duplicates summed, exact zeros dropped.
typedef struct {
  int N;
  int *Ap, *Ai;          // (N + 1), (nnz)
  double *Ax;            // (nnz)
  int *mark;             // (N + 2) work
  int *ti, *tj;          // (cap) work: the triplets sorted by row
  double *tv;            // (cap)
  size_t cap;
  // KLU's analysis (orderings) of the last pattern factored, reused while the pattern holds
  klu_symbolic *sym;
  int sym_N, sym_nnz;
  int *sym_Ap, *sym_Ai;  // (sym_N + 1), (sym_nnz): that pattern
} ptd_csc;

// The system solved is Table 1's with the blocks that are known or read off eliminated
// (linearize_system.c): unknowns udot, lambda, u, q; equations 23a, c, d, e, f, h.
typedef struct {
  int n, nc, z, N;          // nv, active rows, states, order of the system (3 nv + nc)
  int ud, lam, u, q;        // column offsets of the blocks of X
} ptd_layout;

ptd_layout ptd_layout_of(const pt_model *m, int z);
void ptd_local12(const int b[2], const double *v, double out[12]);  // 12 values of 2 bodies
// Fills A (triplets T, emptied first) and the right-hand sides R (N x (2z + nu), column-major):
// Wbar, Sbar, inputs. PT_ENOMEM.
int ptd_fill_system(const pt_model *m, const pt_data *w, const ptd_layout *L, ptd_trip *T,
                    double *R, const double *Qq, const double *Qu, const int *pair, int npair,
                    const double *Qin, int nu, const double *gq, const double *gu,
                    const ptd_grads *st);
int ptd_csc_build(ptd_csc *C, const ptd_trip *T, int N);   // PT_ENOMEM
void ptd_trip_free(ptd_trip *T);
void ptd_csc_free(ptd_csc *C);
// Solves A X = R in place (R: N x nrhs, column-major) by sparse LU, reusing the analysis of
// the previous call when A has its pattern. PT_ESINGULAR, PT_ENOMEM.
int ptd_solve_sparse(ptd_csc *A, double *R, int nrhs);

// ---- the tree method (linearize_tree.c) -----------------------------------------------------
// On a tree partition (tree.c) with the joint coordinates theta as states: the joint-space
// mass matrix H and the sensitivities of the joint residuals tau and of thetadd to theta,
// thetadot and the inputs, by differentiated Newton-Euler passes.
typedef struct ptd_tree ptd_tree;
ptd_tree *ptd_tree_new(const pt_model *m, const pt_data *w);   // NULL: no tree partition, or
void ptd_tree_free(ptd_tree *t);                                // out of memory
int ptd_tree_dof(const ptd_tree *t, int meas);   // tree dof of coordinate meas, or -1
int ptd_tree_ndof(const ptd_tree *t);
// With couplers (coupler.c) the dofs are the independent ones; a follower's coordinate gives
// its leader's dof and *mult, -1 for any other coordinate.
int ptd_tree_follower(const ptd_tree *t, int meas, double *mult);
// Joint limits on a bound at w's state whose reaction pushes are held (eliminated like
// followers, with multiplier 0); side and reaction per joint. Call before ptd_tree_eval.
int ptd_tree_hold_limits(const pt_model *m, pt_data *w, ptd_tree *t, int *side,
                         double *reaction);
// Evaluates the operating point on w (state set): kinematics, forces and the accelerations,
// by the articulated-body algorithm where tree.c allows it (pt_eval otherwise).
int ptd_tree_eval(const pt_model *m, pt_data *w, ptd_tree *t);
// At w's state evaluated by ptd_tree_eval (w doubles as the scratch of the bushings' local
// differences and is restored): PT_ESINGULAR (H not positive definite), PT_ENOMEM.
int ptd_tree_solve(const pt_model *m, pt_data *w, ptd_tree *t, const int *inputs, int nu);
// After ptd_tree_solve, column-major over the dofs: H (n x n); dtau and thetadd
// (n x (2n + nu)), columns theta_0.., thetadot_0.., the inputs in the order asked.
const double *ptd_tree_H(const ptd_tree *t);
const double *ptd_tree_dtau(const ptd_tree *t);
// After ptd_tree_solve, the body sensitivities the augmented path solves for, for outputs
// read through their partials: R (3 nv x (2z + nu), column-major), column j < z the rate of
// the state on dof sdof[j], z + j its value, 2z + c input c; each column (udot, u, q).
void ptd_tree_cartesian(const pt_data *w, ptd_tree *t, const int *sdof, int nu, double *R);
const double *ptd_tree_thdd(const ptd_tree *t);

// ---- the mechanism's linearization, and the closed loop with control elements ----------------
typedef struct {
  ptd_coord c;
  int kind;   // 0 value, 1 rate, 2 acceleration
} ptd_output;

// Inputs (by index, driven ones allowed) and outputs resolved by the caller: what
// linearize_control.c asks of the mechanism's linearization.
typedef struct {
  const int *inputs;
  int nu;
  const ptd_output *outs;
  int ny;
} ptd_request;

// pt_linearize_with on the mechanism alone (every input held), with req (may be NULL: the
// options' names) giving the inputs and outputs.
int ptd_linearize_mechanism(pt_linearizer *lz, const pt_data *d, const pt_linearize_options *opt,
                            const ptd_request *req, int flags, pt_linearization **out,
                            pt_error *err);
const pt_model *ptd_linearizer_model(const pt_linearizer *lz);
pt_data *ptd_linearizer_work(pt_linearizer *lz);   // at the operating point after a call
// The closed loop of a model with control elements (linearize_control.c).
int ptd_linearize_controls(pt_linearizer *lz, const pt_data *d, const pt_linearize_options *opt,
                           int flags, pt_linearization **out, pt_error *err);
// Eigenvalues of r's A (2 nz + nd), sorted (linearize.c).
int ptd_eigenvalues(pt_linearization *r);

#endif
