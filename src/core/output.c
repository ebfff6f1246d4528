// output.c: coordinates, energy and constraint residuals after a step or an evaluation.
#include "engine.h"
#include "ptu.h"

// Requires rows evaluated at the current state (pt_eval). Residuals cover every row,
// including redundant rows removed from the solve, and the normalisation.
double pt_kinetic(const pt_model *m, const pt_data *d) {
  double ek = 0;
  for (int k = 0; k < m->nbody; k++) {   // sum of m v.v / 2 + w.(I w) / 2, I in global axes
    const double *v = d->x + 6 * k, *w = v + 3;
    double Iw[3];
    ptu_mul_mat_vec3(Iw, d->inertia_g + 9 * k, w);
    ek += 0.5 * m->body_mass[k] * ptu_dot3(v, v) + 0.5 * ptu_dot3(w, Iw);
  }
  return ek;
}

void pt_outputs(const pt_model *m, pt_data *d) {
  pt_measure_from(m, d, pt_tree_outputs(m, d));
  for (int i = 0; i < m->ncoord; i++) d->coord_ref[i] = d->coord[i];

  d->energy_kin = pt_kinetic(m, d);
  d->energy_pot = pt_potential(m, d);

  double rp = 0, rv = 0;
  for (int r = 0; r < m->nrow; r++) {
    rp = fmax(rp, fabs(d->row_phi[r]));
    double v = pt_jac_dot_x(d, m->row_body + 2 * r, d->row_jac + 12 * r) - d->row_nu[r];
    rv = fmax(rv, fabs(v));
  }
  for (int k = 0; k < m->nbody; k++) {
    const double *p = d->q + 7 * k + 3, *pd = d->qd + 7 * k + 3;
    rp = fmax(rp, fabs(p[0] * p[0] + ptu_dot3(p + 1, p + 1) - 1));
    rv = fmax(rv, fabs(2 * (p[0] * pd[0] + ptu_dot3(p + 1, pd + 1))));
  }
  d->res_pos = rp;
  d->res_vel = rv;
}
