// compile.c: pt_spec -> pt_model, the steps in order (bodies.c, joints.c, motions.c,
// forces.c, couplers.c, initial_state.c with sparsity.c, visual.c; what they share is in
// shared.c). Checks names and references, converts the global t=0 geometry into body-fixed
// vectors, lays out constraint rows by body blocks, builds the sparsity pattern of
// W = J M^-1 J^T with its AMD + LDL^T symbolic analysis (local-dynamics seed), assembles the
// initial state and removes redundant constraint rows found by a rank-revealing
// factorisation (pivoted QR of J^T).
#include <cblas.h>  // openblas_set_num_threads
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "compile_control.h"
#include "ptu.h"
#include "tolerances.h"

#define ALLOC_ARR(field, n) \
  (m->field = pt_model_alloc(m, (size_t)(n) + 1, sizeof(*m->field)), m->field != NULL)

// The model's settings from the spec: name, the loader's warnings (unused elements, missing
// meshes, ...; compile's follow), gravity, step, integrator, restitution.
static int model_settings(pt_model *m, const pt_spec *s, pt_error *err) {
  snprintf(m->name, PT_NAME_MAX, "%s", s->model);
  if (s->warnings && !(m->warnings = strdup(s->warnings)))
    return pt_error_set(err, PT_ENOMEM, "out of memory");
  ptu_copy(m->gravity, s->gravity, 3);
  m->dt = s->dt > 0 ? s->dt : 1e-3;
  m->integrator = s->integrator;
  m->switch_back_steps = s->switch_back_steps > 0 ? s->switch_back_steps : 5;
  m->spin_substeps_max = PT_SPIN_SUBSTEPS_MAX;  // fixed at load: the worst step's cost bound
  m->restitution = s->restitution;
  if (!(s->restitution >= 0 && s->restitution <= 1))
    return pt_error_set(err, PT_EMODEL, "%s: model \"%s\": restitution must be in [0, 1], got %g",
                        s->source, s->model, s->restitution);
  return PT_OK;
}

// The counts the model's arrays are sized from; *nrow_joint and *ncoord: the joints' rows and
// every coordinate (the joints' and the user's), from the joint classes.
static int model_counts(pt_model *m, const pt_spec *s, int *nrow_joint, int *ncoord,
                        pt_error *err) {
  m->nbody = s->nbody;
  m->nq = 7 * s->nbody;
  m->nv = 6 * s->nbody;
  m->njoint = s->njoint;
  m->nmotion = s->nmotion;
  m->nforce = s->nforce;
  m->nactuator = s->nactuator;
  m->ninput = pt_compile_count_inputs(s) + pt_control_ninput(s);  // actuators', controls'
  int nrow = 0, nc = s->ncoord;
  for (int j = 0; j < s->njoint; j++) {
    if ((unsigned)s->joints[j].type >= PT_JOINT_NTYPES)
      return pt_spec_fail(err, PT_EMODEL, s, s->joints[j].line, "joints", j, s->joints[j].name,
                          "unknown joint type");
    nrow += pt_joint_classes[s->joints[j].type].nrow;
    nc += pt_joint_classes[s->joints[j].type].ncoord;
  }
  m->nrow = nrow + s->nmotion;
  *nrow_joint = nrow;
  *ncoord = nc;
  return PT_OK;
}

// Every array of the model, zeroed; 0 when out of memory.
static int model_arrays(pt_model *m, const pt_spec *s, int nrow, int ncoord) {
  int ok = 1;
  const int nb = m->nbody, nj = m->njoint;
  ok = ok && ALLOC_ARR(body_name, nb) && ALLOC_ARR(body_mass, nb) &&
       ALLOC_ARR(body_inertia, 9 * nb) && ALLOC_ARR(body_inertia_inv, 9 * nb) &&
       ALLOC_ARR(q_name, m->nq) && ALLOC_ARR(q0, m->nq) && ALLOC_ARR(qd0, m->nq);
  ok = ok && ALLOC_ARR(joint_name, nj) && ALLOC_ARR(joint_type, nj) &&
       ALLOC_ARR(joint_body, 2 * nj) && ALLOC_ARR(joint_geom, PT_JOINT_GEOM * nj) &&
       ALLOC_ARR(joint_damping, nj) && ALLOC_ARR(joint_friction, 2 * nj) &&
       ALLOC_ARR(joint_row_adr, nj) && ALLOC_ARR(joint_limited, nj) &&
       ALLOC_ARR(joint_nrow, nj) && ALLOC_ARR(joint_ncoord, nj) &&
       ALLOC_ARR(joint_damp_rotation, nj) && ALLOC_ARR(row_joint, nrow) &&
       ALLOC_ARR(row_kind, nrow) && ALLOC_ARR(row_vec, 2 * nrow) &&
       ALLOC_ARR(joint_limit, 2 * nj) && ALLOC_ARR(joint_coord_adr, nj);
  ok = ok && ALLOC_ARR(row_body, 2 * m->nrow) && ALLOC_ARR(row_active, m->nrow) &&
       ALLOC_ARR(con_row, m->nrow);
  ok = ok && ALLOC_ARR(coord_name, ncoord) && ALLOC_ARR(meas_type, ncoord) &&
       ALLOC_ARR(meas_body, 2 * ncoord) && ALLOC_ARR(meas_comp, ncoord) &&
       ALLOC_ARR(meas_geom, PT_MEAS_GEOM * ncoord) && ALLOC_ARR(meas_joint, ncoord);
  ok = ok && ALLOC_ARR(motion_name, m->nmotion) && ALLOC_ARR(motion_coord, m->nmotion) &&
       ALLOC_ARR(motion_profile, m->nmotion) && ALLOC_ARR(motion_par, 8 * m->nmotion) &&
       ALLOC_ARR(motion_data_adr, m->nmotion) && ALLOC_ARR(motion_data_num, m->nmotion);
  ok = ok && ALLOC_ARR(force_name, m->nforce) && ALLOC_ARR(force_type, m->nforce) &&
       ALLOC_ARR(force_body, 2 * m->nforce) && ALLOC_ARR(force_coord, m->nforce) &&
       ALLOC_ARR(force_par, PT_FORCE_PAR * m->nforce);
  ok = ok && ALLOC_ARR(actuator_name, m->nactuator) && ALLOC_ARR(actuator_type, m->nactuator) &&
       ALLOC_ARR(actuator_body, m->nactuator) && ALLOC_ARR(actuator_coord, m->nactuator) &&
       ALLOC_ARR(actuator_frame, m->nactuator) && ALLOC_ARR(actuator_point, 3 * m->nactuator) &&
       ALLOC_ARR(actuator_input_adr, m->nactuator) && ALLOC_ARR(input_name, m->ninput) &&
       ALLOC_ARR(input_limit, m->ninput) && ALLOC_ARR(input_gear, m->ninput);
  ok = ok && ALLOC_ARR(coupler_name, s->ncoupler) && ALLOC_ARR(coupler_joint, 2 * s->ncoupler) &&
       ALLOC_ARR(coupler_mult, s->ncoupler) && ALLOC_ARR(coupler_offset, s->ncoupler);
  return ok;
}

// Names used twice across the inputs (actuators name theirs): refused.
static int check_input_names(const pt_model *m, const pt_spec *s, pt_error *err) {
  for (int i = 0; i < m->ninput; i++)
    for (int k = 0; k < i; k++)
      if (strcmp(m->input_name[k], m->input_name[i]) == 0)
        return pt_error_set(err, PT_EMODEL, "%s: input name \"%s\" is used twice", s->source,
                            m->input_name[i]);
  return PT_OK;
}

// The model's parts in order: each step reads what the ones before it built. s: the spec as
// compiled (expression forces as driven actuators, compile_control.c); orig: as loaded (its
// controls and the expression forces' formulas).
static int build(pt_model *m, const pt_spec *orig, const pt_spec *s, pt_error *err) {
  if (s->nbody < 1)
    return pt_error_set(err, PT_EMODEL, "%s:%d: model \"%s\": at least one body is required",
                        s->source, s->line, s->model);
  int rc = pt_compile_bodies(m, s, err);
  if (!rc) rc = pt_compile_joints(m, s, err);
  if (!rc) rc = pt_compile_user_coords(m, s, err);
  if (!rc) rc = pt_compile_motions(m, s, err);
  if (!rc) rc = pt_compile_forces(m, s, err);
  if (!rc) rc = pt_compile_actuators(m, s, err);
  if (!rc) rc = pt_control_compile(m, orig, s, err);
  if (!rc) rc = check_input_names(m, s, err);
  if (!rc) rc = pt_compile_couplers(m, s, err);
  if (!rc) rc = pt_compile_initial_state(m, s, err);  // and checks that it partitions
  if (!rc) rc = pt_visuals_build(m, s, err);
  if (!rc) rc = pt_compile_collision(m, s, err);
  if (!rc) pt_compile_limits_check(m, s);
  if (!rc) rc = pt_compile_loops(m, err);  // closed loops in joint coordinates (loops.c)
  if (!rc) rc = pt_compile_couplers_initial(m, s, s->ncoupler, err);
  return rc;
}

static int compile(const pt_spec *orig, const pt_spec *s, pt_model **out, pt_error *err) {
  pt_model *m = calloc(1, sizeof(*m));
  if (!m) return pt_error_set(err, PT_ENOMEM, "out of memory");
  int nrow_joint = 0, ncoord = 0;
  int rc = model_settings(m, s, err);
  if (!rc) rc = model_counts(m, s, &nrow_joint, &ncoord, err);
  if (!rc && !model_arrays(m, s, nrow_joint, ncoord))
    rc = pt_error_set(err, PT_ENOMEM, "out of memory");
  if (!rc) rc = build(m, orig, s, err);
  if (!rc && !m->warnings) m->warnings = calloc(1, 1);
  if (rc) {
    pt_model_free(m);
    return rc;
  }
  *out = m;
  return PT_OK;
}

int pt_model_compile(const pt_spec *s, pt_model **out, pt_error *err) {
  *out = NULL;
  // OpenBLAS splits its work by its thread count, and a split rounds its own way: the rank of
  // the rows and the Cartesian partitions' dense factorisations would give results that
  // depend on the host's cores (issue 23). The library runs it on one thread, in every host
  // process (the daemon, the CLI, the Python engine); its problems are small or sparse.
  openblas_set_num_threads(1);
  pt_spec *view;
  int rc = pt_control_view(s, &view, err);
  if (rc) return rc;
  rc = compile(s, view, out, err);
  pt_control_view_free(s, view);
  return rc;
}
