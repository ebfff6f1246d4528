// test_linearize_rotor.c: the rotor-stator model of the linearization seed
// (configs/models/rotor_stator.yaml, issue 6 test 6) against an independent derivation.
//
// Small motions of the stator on its bushing (x, y, z, rotations tx, ty, tz about the bushing
// point = the stator's centre of mass) plus the rotor's spin psi relative to the stator; the
// rotor's centre of mass is h = 0.75 above. With the rotor spinning at W about z:
//   T = 1/2 ms |v|^2 + 1/2 t'^T Is t' + 1/2 mr |v + t' x h e_z|^2
//       + 1/2 (t' + psi' e_z)^T Ir (t' + psi' e_z)
// gives M (parallel-axis terms mr h^2, couplings x-ty = mr h, y-tx = -mr h, tz-psi = Irz);
// the bushing gives K and C; the spin gives the gyroscopic coupling G[tx][ty] = Irz W =
// -G[ty][tx] (d/dt of Irz W e_z' with e_z' = e_z + t x e_z). The eigenvalues of
// [0 I; -M^-1 K, -M^-1 (C + G)] come from LAPACK here, independently of the engine.
// argv[1]: the project root.
#include <lapacke.h>

#include "test_linearize_util.h"

#define NQ 7

static int cmp_eig(const void *pa, const void *pb) {
  const double *a = pa, *b = pb;
  double fa = hypot(a[0], a[1]), fb = hypot(b[0], b[1]);
  if (fabs(fa - fb) > 1e-9 * fmax(1, fa)) return fa < fb ? -1 : 1;
  return (a[1] > b[1]) - (a[1] < b[1]);
}

// Reference eigenvalues (re, im pairs, 2 NQ of them), sorted by |lambda| then Im.
static void reference(double spin, double *ev) {
  const double ms = 200, mr = 1300, h = 0.75, Isx = 50, Isz = 10, Irx = 500, Irz = 1000;
  double M[NQ * NQ] = {0}, K[NQ * NQ] = {0}, C[NQ * NQ] = {0};
  enum { X, Y, Z, TX, TY, TZ, PSI };
  for (int i = X; i <= Z; i++) M[i * NQ + i] = ms + mr;
  M[X * NQ + TY] = M[TY * NQ + X] = mr * h;
  M[Y * NQ + TX] = M[TX * NQ + Y] = -mr * h;
  M[TX * NQ + TX] = M[TY * NQ + TY] = Isx + Irx + mr * h * h;
  M[TZ * NQ + TZ] = Isz + Irz;
  M[TZ * NQ + PSI] = M[PSI * NQ + TZ] = Irz;
  M[PSI * NQ + PSI] = Irz;
  const double k[NQ] = {1000, 1000, 1000, 1e4, 1e4, 1e5, 0}, c[NQ] = {1, 1, 1, 10, 10, 100, 0};
  for (int i = 0; i < NQ; i++) K[i * NQ + i] = k[i], C[i * NQ + i] = c[i];
  C[TX * NQ + TY] += Irz * spin;
  C[TY * NQ + TX] -= Irz * spin;
  // [M^-1 K, M^-1 C] by one solve with 2 NQ right-hand sides
  double MK[NQ * 2 * NQ], Mf[NQ * NQ];
  lapack_int piv[NQ];
  for (int i = 0; i < NQ; i++)
    for (int j = 0; j < NQ; j++) {
      MK[i * 2 * NQ + j] = K[i * NQ + j];
      MK[i * 2 * NQ + NQ + j] = C[i * NQ + j];
    }
  memcpy(Mf, M, sizeof(Mf));
  if (LAPACKE_dgesv(LAPACK_ROW_MAJOR, NQ, 2 * NQ, Mf, NQ, piv, MK, 2 * NQ) != 0) exit(1);
  double A[4 * NQ * NQ] = {0}, wr[2 * NQ], wi[2 * NQ], dummy;
  const int n = 2 * NQ;
  for (int i = 0; i < NQ; i++) {
    A[i * n + NQ + i] = 1;
    for (int j = 0; j < n; j++) A[(NQ + i) * n + j] = -MK[i * 2 * NQ + j];
  }
  if (LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'N', n, A, n, wr, wi, &dummy, 1, &dummy, 1)) exit(1);
  for (int i = 0; i < n; i++) ev[2 * i] = wr[i], ev[2 * i + 1] = wi[i];
  qsort(ev, (size_t)n, 2 * sizeof(double), cmp_eig);
}

static void compare(const pt_linearization *r, double spin, const char *what) {
  double ref[4 * NQ], got[4 * NQ];
  reference(spin, ref);
  CHECK(r->nz == NQ, "%s: %d states", what, r->nz);
  if (r->nz != NQ) return;
  for (int i = 0; i < 2 * NQ; i++) got[2 * i] = r->eig[i].re, got[2 * i + 1] = r->eig[i].im;
  qsort(got, 2 * NQ, 2 * sizeof(double), cmp_eig);
  double scale = 0;
  for (int i = 0; i < 2 * NQ; i++) scale = fmax(scale, hypot(ref[2 * i], ref[2 * i + 1]));
  for (int i = 0; i < 2 * NQ; i++) {
    CHECK(fabs(got[2 * i] - ref[2 * i]) < 1e-8 * scale &&
              fabs(got[2 * i + 1] - ref[2 * i + 1]) < 1e-8 * scale,
          "%s: eigenvalue %d: engine %.12g%+.12gi, reference %.12g%+.12gi", what, i,
          got[2 * i], got[2 * i + 1], ref[2 * i], ref[2 * i + 1]);
  }
  printf("%s:", what);
  for (int i = 0; i < 2 * NQ; i++)
    if (ref[2 * i + 1] >= 0) printf(" %.4f Hz", hypot(ref[2 * i], ref[2 * i + 1]) / (2 * M_PI));
  printf("\n");
}

int main(int argc, char **argv) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/configs/models/rotor_stator.yaml", argc > 1 ? argv[1] : ".");
  pt_model *m = NULL;
  pt_error err = {0};
  if (pt_model_load_file(path, NULL, &m, &err)) {
    printf("FAIL load: %s\n", err.msg);
    return 1;
  }
  CHECK(pt_model_ndof(m) == NQ, "dof %d", pt_model_ndof(m));
  pt_data *d = pt_data_new(m);
  pt_forward(m, d);
  // at rest (0 Hz spin): default states = the spin angle, completed by internal coordinates
  pt_linearization *r = linearize(m, d, NULL, 0, NULL, 0);
  CHECK(strcmp(r->state_name[0], "spin") == 0, "first state %s", r->state_name[0]);
  CHECK(strstr(r->notes, "added ") != NULL, "notes say which were added: %s", r->notes);
  compare(r, 0, "0 Hz, default states");
  pt_linearization_free(r);
  // the same in the stator's point coordinates
  const char *st[] = {"stator_x", "stator_y", "stator_z", "stator_ax_y", "stator_ax_z",
                      "stator_ay_z", "spin"};
  r = linearize(m, d, st, NQ, NULL, 0);
  compare(r, 0, "0 Hz, stator coordinates");
  pt_linearization_free(r);
  // spinning at 0.5 Hz: forward and backward whirl split by the gyroscopic coupling
  const double W = 2 * M_PI * 0.5;
  // (the stator's rates given too: otherwise the least-change velocity projection would
  // share the spin between rotor and stator)
  const double q0[NQ] = {0}, v0[NQ] = {0, 0, 0, 0, 0, 0, W};
  set_named(m, d, st, q0, v0, NQ);
  CHECK(fabs(pt_body_velocity(d, 1)[5] - W) < 1e-12 && fabs(pt_body_velocity(d, 0)[5]) < 1e-12,
        "rotor spinning at W, stator at rest");
  r = linearize(m, d, st, NQ, NULL, 0);
  compare(r, W, "0.5 Hz, stator coordinates");
  pt_linearization_free(r);
  pt_data_free(d);
  pt_model_free(m);
  return finish("linearize_rotor");
}
