// couplers.c: the spec's couplers into the model (model compilation, compile.c): follower =
// multiplier x leader + offset between two joint coordinates, checked (revolute or
// prismatic, a follower once, no chains), then the followers put on their couplers at the
// initial state. Held in the dynamics by core/coupler.c.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "ptu.h"

// Couplers (coupler.c): follower = multiplier x leader + offset between the coordinates of two
// revolute or prismatic joints, a follower at most once, no chains. The arrays are filled
// here; m->ncoupler is set after the initial assembly (pt_compile_couplers_initial).
int pt_compile_couplers(pt_model *m, const pt_spec *s, pt_error *err) {
  static const char *const L = "couplers";
  for (int k = 0; k < s->ncoupler; k++) {
    const pt_spec_coupler *c = &s->couplers[k];
    const char *role[2] = {"follower", "leader"}, *jn[2] = {c->follower, c->leader};
    int j[2];
    for (int r = 0; r < 2; r++) {
      j[r] = pt_spec_find_joint(s, jn[r]);
      if (j[r] < 0)
        return pt_spec_fail(err, PT_EMODEL, s, c->line, L, k, c->name, "%s: no joint named \"%s\"",
                            role[r], jn[r]);
      const int t = m->joint_type[j[r]];
      if (t != PT_JOINT_REVOLUTE && t != PT_JOINT_PRISMATIC)
        return pt_spec_fail(
            err, PT_EMODEL, s, c->line, L, k, c->name,
            "%s \"%s\" is a %s joint: a coupler joins the coordinates of two revolute "
            "or prismatic joints",
            role[r], jn[r], pt_joint_classes[t].name);
    }
    if (j[0] == j[1])
      return pt_spec_fail(err, PT_EMODEL, s, c->line, L, k, c->name,
                          "follower and leader are the same joint \"%s\"", jn[0]);
    if (!(isfinite(c->multiplier) && c->multiplier != 0))
      return pt_spec_fail(err, PT_EMODEL, s, c->line, L, k, c->name,
                          "multiplier must be a finite number other than 0, got %g", c->multiplier);
    if (!isfinite(c->offset))
      return pt_spec_fail(err, PT_EMODEL, s, c->line, L, k, c->name,
                          "offset must be finite, got %g", c->offset);
    for (int e = 0; e < k; e++) {
      if (strcmp(m->coupler_name[e], c->name) == 0)
        return pt_spec_fail(err, PT_EMODEL, s, c->line, L, k, c->name,
                            "duplicate coupler name (first on line %d)", s->couplers[e].line);
      if (m->coupler_joint[2 * e] == j[0])
        return pt_spec_fail(
            err, PT_EMODEL, s, c->line, L, k, c->name,
            "joint \"%s\" already follows coupler \"%s\": a joint follows one leader", jn[0],
            m->coupler_name[e]);
    }
    snprintf(m->coupler_name[k], PT_NAME_MAX, "%s", c->name);
    m->coupler_joint[2 * k] = j[0];
    m->coupler_joint[2 * k + 1] = j[1];
    m->coupler_mult[k] = c->multiplier;
    m->coupler_offset[k] = c->offset;
  }
  for (int k = 0; k < s->ncoupler; k++)  // chains: a leader that follows, a follower that leads
    for (int e = 0; e < s->ncoupler; e++)
      if (m->coupler_joint[2 * k + 1] == m->coupler_joint[2 * e])
        return pt_spec_fail(
            err, PT_EMODEL, s, s->couplers[k].line, L, k, s->couplers[k].name,
            "leader \"%s\" is itself the follower of coupler \"%s\": chained couplers "
            "are not supported (couple to \"%s\" with the multipliers multiplied)",
            m->joint_name[m->coupler_joint[2 * k + 1]], m->coupler_name[e],
            m->joint_name[m->coupler_joint[2 * e + 1]]);
  return PT_OK;
}

// After the initial assembly: couplers need the tree partition (they are rows of the joint-space
// dynamics, coupler.c); each follower is put on its coupler from its leader (position and
// rate), said in a warning when that moved it, and the model's initial state is that one.
int pt_compile_couplers_initial(pt_model *m, const pt_spec *s, int ncoupler, pt_error *err) {
  if (!ncoupler) return PT_OK;
  if (!pt_tree_qualifies(m))
    return pt_error_set(err, PT_EMODEL,
                        "%s:%d: couplers[0] \"%s\": couplers are held on trees of revolute, "
                        "prismatic and fixed joints without motions, and this model has closed "
                        "loops, motions or other joints (docs/model-format.md, couplers)",
                        s->source, s->couplers[0].line, s->couplers[0].name);
  double *before = calloc(2 * (size_t)m->ncoord + 1, sizeof(double));
  if (!before) return pt_error_set(err, PT_ENOMEM, "out of memory");
  pt_data *d = pt_data_new(m);  // measures the coordinates as assembled
  if (!d) {
    free(before);
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  }
  ptu_copy(before, d->coord, m->ncoord);
  ptu_copy(before + m->ncoord, d->coord_rate, m->ncoord);
  m->ncoupler = ncoupler;
  pt_data_free(d);
  d = pt_data_new(m);  // pt_forward puts the followers on their couplers
  if (!d) {
    free(before);
    return pt_error_set(err, PT_EMODEL,
                        "%s:%d: couplers[0] \"%s\": the model's joint coordinates did not pass "
                        "the tree partition's self-check, which couplers need", s->source,
                        s->couplers[0].line, s->couplers[0].name);
  }
  for (int k = 0; k < ncoupler; k++) {
    const int c = m->joint_coord_adr[m->coupler_joint[2 * k]];
    const double dv = fabs(d->coord[c] - before[c]);
    const double dr = fabs(d->coord_rate[c] - before[m->ncoord + c]);
    if (dv > 1e-12 || dr > 1e-12)
      pt_model_warn(m, "coupler %s: follower %s starts at %.9g (rate %.9g), put on the coupler "
                       "at %.9g (rate %.9g)", m->coupler_name[k],
                    m->joint_name[m->coupler_joint[2 * k]], before[c], before[m->ncoord + c],
                    d->coord[c], d->coord_rate[c]);
    if (m->joint_limited[m->coupler_joint[2 * k]] && m->limits_on)
      pt_model_warn(m,
                    "coupler %s: the limits of follower %s are not enforced (its leader %s's are)",
                    m->coupler_name[k], m->joint_name[m->coupler_joint[2 * k]],
                    m->joint_name[m->coupler_joint[2 * k + 1]]);
  }
  ptu_copy(m->q0, d->q, m->nq);
  ptu_copy(m->qd0, d->qd, m->nq);
  pt_data_free(d);
  free(before);
  return PT_OK;
}
