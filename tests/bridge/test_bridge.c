// test_bridge.c: the engine-protobuf bridge (bridge/) on its own: requests refused field by
// field before anything changes, the --acc all=V expansion, the three analyses against closed
// forms (a pendulum whose centre of mass is L from its hinge), the clipped-input hook and a
// StateFrame from a data. The CLI and daemon tests run the same code end to end.
#include <math.h>

#include "check.h"
#include "ptb_analysis.h"
#include "ptb_assign.h"
#include "ptb_frame.h"

#define M_LINK 1.0
#define L_COM 0.5
#define IYY 0.02
#define G 9.81
#define I_HINGE (IYY + M_LINK * L_COM * L_COM)   // parallel axis theorem
#define PI 3.14159265358979323846

// Horizontal at t=0, so gravity drives the hinge angle up (rotation about +y takes +x
// towards -z): gravity's moment about the hinge is M g L cos(q); it hangs at q = pi/2.
static const char pendulum[] =
    "model: pend\n"
    "gravity: [0, 0, -9.81]\n"
    "bodies:\n"
    "  - {name: link, mass: 1.0, inertia: [0.02, 0.02, 0.001], position: [0.5, 0, 0]}\n"
    "joints:\n"
    "  - {name: hinge, type: revolute, body1: ground, body2: link, point: [0, 0, 0],\n"
    "     axis: [0, 1, 0]}\n"
    "actuators:\n"
    "  - {name: tau, type: joint_torque, joint: hinge, limit: 5.0}\n";

// Two links, both joints actuated.
static const char two_links[] =
    "model: two\n"
    "gravity: [0, 0, -9.81]\n"
    "bodies:\n"
    "  - {name: upper, mass: 1.0, inertia: [0.02, 0.02, 0.001], position: [0.5, 0, 0]}\n"
    "  - {name: lower, mass: 0.7, inertia: [0.01, 0.01, 0.001], position: [1.5, 0, 0]}\n"
    "joints:\n"
    "  - {name: shoulder, type: revolute, body1: ground, body2: upper, point: [0, 0, 0],\n"
    "     axis: [0, 1, 0]}\n"
    "  - {name: elbow, type: revolute, body1: upper, body2: lower, point: [1, 0, 0],\n"
    "     axis: [0, 1, 0]}\n"
    "actuators:\n"
    "  - {name: tau1, type: joint_torque, joint: shoulder}\n"
    "  - {name: tau2, type: joint_torque, joint: elbow}\n";

// A request's NamedValue list of up to 4 entries.
typedef struct {
  Partita__V1__NamedValue v[4];
  Partita__V1__NamedValue *p[4];
  size_t n;
} nv_list;

static void nv_add(nv_list *l, const char *name, double value) {
  Partita__V1__NamedValue init = PARTITA__V1__NAMED_VALUE__INIT;
  l->v[l->n] = init;
  l->v[l->n].name = (char *)name;
  l->v[l->n].value = value;
  l->p[l->n] = &l->v[l->n];
  l->n++;
}

static double named(Partita__V1__NamedValue **v, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(v[i]->name, name))
      return v[i]->value;
  return NAN;
}

static void test_assigns(void) {
  pt_model *m = load_yaml(pendulum);
  ptb_error e;
  pt_assign *a = NULL;
  int n = -1;
  nv_list l = {0};
  nv_add(&l, "hinge", 0.3);
  nv_add(&l, "nope", 1.0);
  ptb_error_clear(&e);
  int rc = ptb_coord_assigns(m, l.p, l.n, "coordinates", NULL, &a, &n, &e);
  CHECK(rc == PT_EINVAL && e.stage == PTB_AT_REQUEST && e.why == PTB_WHY_NAME, "rc %d", rc);
  CHECK(!strcmp(e.field, "coordinates") && !strcmp(e.name, "nope"), "%s %s", e.field, e.name);
  CHECK(!strcmp(e.msg, "coordinates: no such coordinate 'nope'"), "%s", e.msg);
  CHECK(a == NULL && n == 0, "nothing handed out on refusal");
  // beyond 1e6 for partitad; any finite value when unbounded; never a non-finite one
  nv_list big = {0};
  nv_add(&big, "hinge", 2e6);
  ptb_error_clear(&e);
  rc = ptb_coord_assigns(m, big.p, big.n, "rates", NULL, &a, &n, &e);
  CHECK(rc == PT_EINVAL && e.why == PTB_WHY_VALUE && !strcmp(e.field, "rates"), "%s", e.msg);
  ptb_opts free_values = {.unbounded = 1};
  rc = ptb_coord_assigns(m, big.p, big.n, "rates", &free_values, &a, &n, &e);
  CHECK(rc == PT_OK && n == 1 && a[0].coord == pt_coord_index(m, "hinge") && a[0].value == 2e6,
        "unbounded: rc %d", rc);
  free(a);
  big.v[0].value = INFINITY;
  rc = ptb_coord_assigns(m, big.p, big.n, "rates", &free_values, &a, &n, &e);
  CHECK(rc == PT_EINVAL && e.why == PTB_WHY_VALUE, "infinity taken");
  // "all" on a model without an actuated coordinate is named as such
  pt_model *bare = load_yaml(
      "model: bare\nbodies:\n"
      "  - {name: b, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}\njoints:\n"
      "  - {name: j, type: revolute, body1: ground, body2: b, point: [0, 0, 0], "
      "axis: [0, 0, 1]}\n");
  nv_list all = {0};
  nv_add(&all, "all", 1.0);
  rc = ptb_accelerations(bare, all.p, all.n, NULL, &a, &n, &e);
  CHECK(rc == PT_EINVAL && e.why == PTB_WHY_ALL && !strcmp(e.field, "accelerations"), "%s",
        e.msg);
  pt_model_free(bare);
  pt_model_free(m);
}

static void test_all_expansion(void) {
  pt_model *m = load_yaml(two_links);
  ptb_error e;
  pt_assign *a = NULL;
  int n = 0;
  nv_list l = {0};   // every actuated coordinate at 1, the elbow overriding it, all given twice
  nv_add(&l, "all", 7.0);
  nv_add(&l, "elbow", -1.0);
  nv_add(&l, "all", 1.0);
  int rc = ptb_accelerations(m, l.p, l.n, NULL, &a, &n, &e);
  const int sh = pt_coord_index(m, "shoulder"), el = pt_coord_index(m, "elbow");
  CHECK(rc == PT_OK && n == 2, "rc %d n %d", rc, n);
  CHECK(n == 2 && a[0].coord == sh && a[0].value == 1.0 && a[1].coord == el &&
            a[1].value == -1.0, "%d=%g %d=%g", a[0].coord, a[0].value, a[1].coord, a[1].value);
  free(a);
  pt_model_free(m);
}

static void test_inverse(void) {
  pt_model *m = load_yaml(pendulum);
  pt_data *d = pt_data_new(m);
  ptb_error e;
  Partita__V1__InverseDynamics rq = PARTITA__V1__INVERSE_DYNAMICS__INIT;
  Partita__V1__InverseDynamicsReply *r = NULL;
  nv_list pos = {0}, vel = {0}, acc = {0};
  const double q = 0.4;
  nv_add(&pos, "hinge", q);
  nv_add(&vel, "hinge", -1.5);
  nv_add(&acc, "hinge", 3.0);
  rq.model = "the daemon's name";
  rq.coordinates = pos.p, rq.n_coordinates = pos.n;
  rq.rates = vel.p, rq.n_rates = vel.n;
  rq.accelerations = acc.p, rq.n_accelerations = acc.n;
  int rc = ptb_inverse(m, d, &rq, NULL, &r, &e);
  CHECK(rc == PT_OK && r, "torque request: %s", e.msg);
  if (r) {
    // I a = tau + M g L cos(q): the rate adds nothing about a fixed hinge
    CHECK_CLOSE(named(r->efforts, r->n_efforts, "tau"), I_HINGE * 3 - M_LINK * G * L_COM * cos(q),
                1e-9, "effort");
    CHECK(!strcmp(r->model, "the daemon's name") && !strcmp(r->mode, "torque_request"),
          "%s %s", r->model, r->mode);
    CHECK(r->n_coordinates == 1, "coordinates: %zu", r->n_coordinates);
    CHECK_CLOSE(named(r->coordinates, r->n_coordinates, "hinge"), q, 1e-12, "the state given");
    CHECK(r->n_reactions == 1 && r->reactions[0]->n_force == 3, "reactions");
    protobuf_c_message_free_unpacked(&r->base, NULL);
  }
  // gravity: the holding effort, every rate zero
  Partita__V1__InverseDynamics hold = PARTITA__V1__INVERSE_DYNAMICS__INIT;
  hold.model = "p";
  hold.gravity = 1;
  hold.coordinates = pos.p, hold.n_coordinates = pos.n;
  rc = ptb_inverse(m, d, &hold, NULL, &r, &e);
  CHECK(rc == PT_OK && r, "gravity: %s", e.msg);
  if (r) {
    CHECK_CLOSE(named(r->efforts, r->n_efforts, "tau"), -M_LINK * G * L_COM * cos(q), 1e-12,
                "holding effort");
    protobuf_c_message_free_unpacked(&r->base, NULL);
  }
  // gravity with rates is refused before the data changes
  const double before = pt_coords(d)[0];
  Partita__V1__InverseDynamics bad = hold;
  nv_list other = {0};
  nv_add(&other, "hinge", 1.2);
  bad.coordinates = other.p, bad.n_coordinates = other.n;
  bad.rates = vel.p, bad.n_rates = vel.n;
  rc = ptb_inverse(m, d, &bad, NULL, &r, &e);
  CHECK(rc == PT_EINVAL && !r && e.stage == PTB_AT_REQUEST && e.why == PTB_WHY_CONFLICT,
        "%s", e.msg);
  CHECK(pt_coords(d)[0] == before, "the data moved: %g vs %g", pt_coords(d)[0], before);
  // kinematic inverse dynamics needs motions: the engine says so, at the engine stage
  Partita__V1__InverseDynamics kin = PARTITA__V1__INVERSE_DYNAMICS__INIT;
  kin.model = "p";
  rc = ptb_inverse(m, d, &kin, NULL, &r, &e);
  CHECK(rc < 0 && !r && e.stage == PTB_AT_ENGINE && e.engine.msg[0] &&
            !strcmp(e.msg, e.engine.msg), "%d %s", rc, e.msg);
  pt_data_free(d);
  pt_model_free(m);
}

static int nclipped;
static void clipped(void *arg, const char *input, double value, double limit) {
  CHECK(arg == &nclipped && !strcmp(input, "tau") && value == 1e9 && limit == 5.0,
        "clipped %s %g %g", input, value, limit);
  nclipped++;
}

static void test_linearize(void) {
  pt_model *m = load_yaml(pendulum);
  pt_data *d = pt_data_new(m);
  pt_linearizer *lz = pt_linearizer_new(m);
  ptb_error e;
  Partita__V1__Linearize rq = PARTITA__V1__LINEARIZE__INIT;
  Partita__V1__LinearizeReply *r = NULL;
  nv_list pos = {0}, vel = {0}, in = {0};
  nv_add(&pos, "hinge", PI / 2);   // hanging straight down
  nv_add(&vel, "hinge", 0.0);
  nv_add(&in, "tau", 1e9);         // clipped to 5: the A matrix does not depend on it
  char *states[] = {"hinge"};
  rq.model = "p";
  rq.states = states, rq.n_states = 1;
  rq.coordinates = pos.p, rq.n_coordinates = pos.n;
  rq.rates = vel.p, rq.n_rates = vel.n;
  rq.input_values = in.p, rq.n_input_values = in.n;
  ptb_opts o = {.clipped = clipped, .arg = &nclipped};
  int rc = ptb_linearize(lz, m, d, &rq, &o, &r, &e);
  CHECK(rc == PT_OK && r, "%s", e.msg);
  CHECK(nclipped == 1, "clipped %d times", nclipped);
  if (r) {
    const double k = M_LINK * G * L_COM;   // gravity's stiffness about the hanging position
    CHECK(r->a && r->a->rows == 2 && r->a->cols == 2 && r->a->n_data == 4, "A's size");
    CHECK_CLOSE(r->a->data[1], 1.0, 1e-12, "A[0][1]");
    CHECK_CLOSE(r->a->data[2], -k / I_HINGE, 1e-6 * k / I_HINGE, "A[1][0]");
    CHECK(r->b && r->b->rows == 2 && r->b->cols == 1, "B's size");
    CHECK_CLOSE(r->b->data[1], 1 / I_HINGE, 1e-6 / I_HINGE, "B[1][0]");
    CHECK(r->n_states == 2 && !strcmp(r->states[1], "hinge.rate"), "states");
    CHECK(r->n_eigenvalues == 2 && r->n_notes > 0 && !strcmp(r->model, "p"), "eig, notes");
    CHECK_CLOSE(fabs(r->eigenvalues[0]->im), sqrt(k / I_HINGE), 1e-6, "natural frequency");
    protobuf_c_message_free_unpacked(&r->base, NULL);
  }
  // an unknown input is refused as such
  nv_list none = {0};
  nv_add(&none, "nope", 1.0);
  rq.input_values = none.p, rq.n_input_values = none.n;
  rc = ptb_linearize(lz, m, d, &rq, NULL, &r, &e);
  CHECK(rc == PT_EINVAL && !r && e.why == PTB_WHY_NAME && !strcmp(e.field, "input_values") &&
            !strcmp(e.name, "nope"), "%s", e.msg);
  pt_linearizer_free(lz);
  pt_data_free(d);
  pt_model_free(m);
}

static void test_equilibrium(void) {
  pt_model *m = load_yaml(pendulum);
  pt_data *d = pt_data_new(m);
  ptb_error e;
  Partita__V1__Equilibrium rq = PARTITA__V1__EQUILIBRIUM__INIT;
  Partita__V1__EquilibriumReply *r = NULL;
  nv_list pos = {0};
  nv_add(&pos, "hinge", 1.0);
  rq.model = "p";
  rq.coordinates = pos.p, rq.n_coordinates = pos.n;
  int rc = ptb_equilibrium(m, d, &rq, NULL, &r, &e);
  CHECK(rc == PT_OK && r, "%s", e.msg);
  if (r) {
    CHECK_CLOSE(named(r->coordinates, r->n_coordinates, "hinge"), PI / 2, 1e-9, "hanging");
    CHECK(r->stable && !r->applied && r->n_reactions == 1, "stable, not applied");
    CHECK_CLOSE(r->reactions[0]->force[2], M_LINK * G, 1e-9, "the hinge carries the weight");
    protobuf_c_message_free_unpacked(&r->base, NULL);
  }
  rq.tolerance = -1;
  rc = ptb_equilibrium(m, d, &rq, NULL, &r, &e);
  CHECK(rc == PT_EINVAL && !r && e.stage == PTB_AT_REQUEST, "%s", e.msg);
  pt_data_free(d);
  pt_model_free(m);
}

static void test_frame(void) {
  pt_model *m = load_yaml(pendulum);
  pt_data *d = pt_data_new(m);
  pt_forward(m, d);
  ptb_state s;
  ptb_frame fr;
  ptb_state_of_data(&s, m, d);
  char *names[] = {"hinge", "x"};
  s.coord_names = names;
  ptb_frame_build(&fr, &s, PTB_FIELD_COORDINATES | PTB_FIELD_ENERGY, 1);
  CHECK(fr.f.n_coordinates == (size_t)pt_model_ncoord(m) && fr.f.coordinates == pt_coords(d),
        "coordinates");
  CHECK(fr.f.n_rates == 0 && !fr.f.residual && fr.f.n_inputs == 0, "fields not asked");
  CHECK(fr.f.energy && fr.f.energy->total == pt_energy_kinetic(d) + pt_energy_potential(d),
        "energy");
  CHECK(fr.f.coordinate_names == names && !strcmp(fr.f.model, "pend"), "names");
  ptb_frame_release(&fr);
  CHECK(PTB_FIELD_ALL == 255 && PTB_FIELD_DEFAULT == 99 && PTB_FIELD_BODIES == 16 &&
            PTB_FIELD_CONTROLS == 128,
        "field bits as proto/partita.proto numbers them");
  pt_data_free(d);
  pt_model_free(m);
}

// Control states and parameters by name (SetState.control_states, SetParameters.values): the
// same checks with their own tables, and a frame with FIELD_CONTROLS names them.
static void test_control_names(void) {
  char text[1024];
  snprintf(text, sizeof(text),
           "%s"
           "controls:\n"
           "  - {name: angle, type: measure, coordinate: hinge}\n"
           "  - {name: pi_, type: pid, input: angle, kp: 2, ki: 1}\n",
           pendulum);
  pt_model *m = load_yaml(text);
  ptb_error e;
  pt_assign *a = NULL;
  int n = -1;
  nv_list l = {0};
  nv_add(&l, "pi_.ki", 3.0);
  ptb_error_clear(&e);
  int rc = ptb_named_assigns(m, l.p, l.n, "values", &ptb_parameters, NULL, &a, &n, &e);
  CHECK(rc == PT_OK && n == 1 && a[0].coord == pt_param_index(m, "pi_.ki") && a[0].value == 3,
        "parameter by name: rc %d", rc);
  free(a);
  nv_add(&l, "pi_.nope", 1.0);
  ptb_error_clear(&e);
  rc = ptb_named_assigns(m, l.p, l.n, "values", &ptb_parameters, NULL, &a, &n, &e);
  CHECK(rc == PT_EINVAL && e.why == PTB_WHY_NAME && !strcmp(e.name, "pi_.nope") &&
            !strcmp(e.msg, "values: no such parameter 'pi_.nope'"),
        "%s", e.msg);
  nv_list x = {0};
  nv_add(&x, "pi_.integral", 0.5);
  ptb_error_clear(&e);
  rc = ptb_named_assigns(m, x.p, x.n, "control_states", &ptb_control_states, NULL, &a, &n, &e);
  CHECK(rc == PT_OK && n == 1 && a[0].coord == pt_control_state_index(m, "pi_.integral"),
        "control state by name: rc %d %s", rc, e.msg);
  free(a);
  pt_data *d = pt_data_new(m);
  ptb_state st;
  ptb_state_of_data(&st, m, d);
  char *sig[2] = {"angle", "pi_"}, *xs[1] = {"pi_.integral"};
  st.signal_names = sig, st.ctl_names = xs;
  ptb_frame fr;
  ptb_frame_build(&fr, &st, PTB_FIELD_CONTROLS, 1);
  CHECK(fr.f.n_signals == 2 && fr.f.n_control_states == (size_t)pt_model_ncontrol_state(m) &&
            fr.f.n_parameters == (size_t)pt_model_nparam(m) && fr.f.n_signal_names == 2 &&
            !strcmp(fr.f.control_state_names[0], "pi_.integral"),
        "controls in the frame: %zu signals, %zu states, %zu parameters, %zu names",
        fr.f.n_signals, fr.f.n_control_states, fr.f.n_parameters, fr.f.n_signal_names);
  ptb_frame_release(&fr);
  pt_data_free(d);
  pt_model_free(m);
}

int main(void) {
  test_assigns();
  test_control_names();
  test_all_expansion();
  test_inverse();
  test_linearize();
  test_equilibrium();
  test_frame();
  if (check_failures) {
    printf("%d check(s) failed\n", check_failures);
    return 1;
  }
  printf("bridge: all checks passed\n");
  return 0;
}
