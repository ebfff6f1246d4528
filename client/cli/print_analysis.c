// print_analysis.c: the printers of the analyses' replies (print_analysis.h).
#include "print_analysis.h"

#include <stdio.h>
#include <string.h>

#include "json.h"

static const char *model_name(const char *name, const cli_analysis_view *v) {
  return name && *name ? name : v->model ? v->model : "";
}

// {"model": NAME, "time": t, ... on stdout; the caller goes on.
static void json_begin(cli_json *j, const char *model, double time) {
  cli_json_init(j, stdout);
  cli_json_begin_object(j);
  cli_json_member_string(j, "model", model);
  cli_json_member_number(j, "time", time);
}

static void json_end(cli_json *j) {
  cli_json_end_object(j);
  cli_json_finish(j);
}

// A NamedValue list as {"name": value, ...}.
static void json_named(cli_json *j, const char *key, Partita__V1__NamedValue *const *v,
                       size_t n) {
  cli_json_key(j, key);
  cli_json_begin_object(j);
  for (size_t i = 0; i < n; i++)
    cli_json_member_number(j, v[i]->name, v[i]->value);
  cli_json_end_object(j);
}

static void json_strings(cli_json *j, const char *key, char *const *v, size_t n) {
  cli_json_key(j, key);
  cli_json_begin_array(j);
  for (size_t i = 0; i < n; i++)
    cli_json_string(j, v[i]);
  cli_json_end_array(j);
}

// "  name value" lines (%.17g), under a heading when there are any and it is given.
static void text_named(const char *heading, Partita__V1__NamedValue *const *v, size_t n) {
  if (heading && n > 0)
    printf("%s\n", heading);
  for (size_t i = 0; i < n; i++)
    printf("  %-16s %.17g\n", v[i]->name, v[i]->value);
}

// ---------------------------------------------------------------------------------------------
// What inverse dynamics and equilibrium share: joint reactions, limits held, notes.

static double at3(const double *v, size_t n, size_t k) { return k < n ? v[k] : 0.0; }

// "reactions": {JOINT: {"force": [3], "torque": [3]}} into j, or (j NULL) a text table.
static void reactions(cli_json *j, Partita__V1__Reaction *const *r, size_t n) {
  if (j) {
    cli_json_key(j, "reactions");
    cli_json_begin_object(j);
    for (size_t i = 0; i < n; i++) {
      cli_json_key(j, r[i]->joint);
      cli_json_begin_object(j);
      for (int part = 0; part < 2; part++) {
        const double *v = part ? r[i]->torque : r[i]->force;
        const size_t nv = part ? r[i]->n_torque : r[i]->n_force;
        cli_json_key(j, part ? "torque" : "force");
        cli_json_begin_array(j);
        for (size_t c = 0; c < nv; c++)
          cli_json_number(j, v[c]);
        cli_json_end_array(j);
      }
      cli_json_end_object(j);
    }
    cli_json_end_object(j);
    return;
  }
  printf("reactions (on body2 from body1, global; torque about the joint point)\n");
  for (size_t i = 0; i < n; i++) {
    const Partita__V1__Reaction *x = r[i];
    printf("  %-16s force %.10g %.10g %.10g  torque %.10g %.10g %.10g\n", x->joint,
           at3(x->force, x->n_force, 0), at3(x->force, x->n_force, 1),
           at3(x->force, x->n_force, 2), at3(x->torque, x->n_torque, 0),
           at3(x->torque, x->n_torque, 1), at3(x->torque, x->n_torque, 2));
  }
}

// The bound a held limit rests on. The reply carries the reactions by joint and the engine's
// note for each joint on a bound ("joint NAME at its lower limit ..."), which says it; without
// the note, the reaction's sign does (>= 0 at a lower bound).
static const char *limit_side(const char *joint, double reaction, char *const *notes,
                              size_t nnotes) {
  static const char *const sides[2] = {"lower", "upper"};
  const size_t len = strlen(joint);
  for (size_t i = 0; i < nnotes; i++) {
    const char *s = notes[i];
    if (strncmp(s, "joint ", 6) != 0 || strncmp(s + 6, joint, len) != 0 ||
        strncmp(s + 6 + len, " at its ", 8) != 0)
      continue;
    for (int k = 0; k < 2; k++)
      if (strncmp(s + 14 + len, sides[k], 5) == 0)
        return sides[k];
  }
  return reaction >= 0 ? sides[0] : sides[1];
}

// The reactions of the limits held: JSON "limit_reactions" {joint: reaction}, always
// present; a text section when any is held.
static void limit_reactions(cli_json *j, Partita__V1__NamedValue *const *v, size_t n,
                            char *const *notes, size_t nnotes) {
  if (j) {
    json_named(j, "limit_reactions", v, n);
    return;
  }
  if (n > 0)
    printf("limits held (the limit's joint force or torque: >= 0 at a lower bound, <= 0 at an "
           "upper one)\n");
  for (size_t i = 0; i < n; i++)
    printf("  %-16s %s %.17g\n", v[i]->name, limit_side(v[i]->name, v[i]->value, notes, nnotes),
           v[i]->value);
}

// The limit notes: JSON "limit_notes" or a text "notes" section; nothing when there are none.
static void limit_notes(cli_json *j, char *const *notes, size_t n) {
  if (n == 0)
    return;
  if (j) {
    json_strings(j, "limit_notes", notes, n);
    return;
  }
  printf("notes\n");
  for (size_t i = 0; i < n; i++)
    printf("  %s\n", notes[i]);
}

static const char coupler_heading[] =
    "couplers (effort on the follower; the leader takes -multiplier times it)";

// ---------------------------------------------------------------------------------------------
// Inverse dynamics

void cli_print_inverse(const Partita__V1__InverseDynamicsReply *r, const cli_analysis_view *v) {
  const char *mode = r->mode && *r->mode ? r->mode : v->mode ? v->mode : "kinematic";
  const int request = strcmp(mode, "torque_request") == 0;
  // kinematic inverse dynamics drives no coupler: its efforts are shown with a torque request
  const size_t ncoupler = request ? r->n_coupler_efforts : 0;
  if (v->json) {
    cli_json j;
    json_begin(&j, model_name(r->model, v), r->time);
    cli_json_member_string(&j, "mode", mode);
    json_named(&j, "efforts", r->efforts, r->n_efforts);
    json_named(&j, "coupler_efforts", r->coupler_efforts, ncoupler);
    reactions(&j, r->reactions, r->n_reactions);
    limit_reactions(&j, r->limit_reactions, r->n_limit_reactions, NULL, 0);
    limit_notes(&j, r->limit_notes, r->n_limit_notes);
    json_named(&j, "coordinates", r->coordinates, r->n_coordinates);
    json_named(&j, "rates", r->rates, r->n_rates);
    json_named(&j, "accelerations", r->accelerations, r->n_accelerations);
    json_end(&j);
    return;
  }
  printf("%-16s%s\n", "model", model_name(r->model, v));
  printf("%-16s%.17g\n", "time", r->time);
  printf("efforts (%s)\n", request ? "torque request" : "kinematic inverse dynamics");
  text_named(NULL, r->efforts, r->n_efforts);
  text_named(coupler_heading, r->coupler_efforts, ncoupler);
  reactions(NULL, r->reactions, r->n_reactions);
  printf("coordinates (value, rate, acceleration)\n");
  for (size_t i = 0; i < r->n_coordinates; i++)
    printf("  %-16s %.12g %.12g %.12g\n", r->coordinates[i]->name, r->coordinates[i]->value,
           i < r->n_rates ? r->rates[i]->value : 0.0,
           i < r->n_accelerations ? r->accelerations[i]->value : 0.0);
  limit_reactions(NULL, r->limit_reactions, r->n_limit_reactions, r->limit_notes,
                  r->n_limit_notes);
  limit_notes(NULL, r->limit_notes, r->n_limit_notes);
}

// ---------------------------------------------------------------------------------------------
// Linearization

static const char *name_at(char *const *names, size_t n, size_t i) {
  return i < n ? names[i] : "";
}

static double entry(const Partita__V1__Matrix *a, uint32_t r, uint32_t c) {
  const size_t k = (size_t)r * a->cols + c;
  return k < a->n_data ? a->data[k] : 0.0;
}

// Matrices as lists of rows, one row a line.
static void json_matrix(cli_json *j, const char *key, const Partita__V1__Matrix *a) {
  cli_json_key(j, key);
  cli_json_begin_array(j);
  for (uint32_t r = 0; a && r < a->rows; r++) {
    cli_json_newline(j);
    cli_json_begin_array(j);
    for (uint32_t c = 0; c < a->cols; c++)
      cli_json_number(j, entry(a, r, c));
    cli_json_end_array(j);
  }
  cli_json_end_array(j);
}

static void json_linearize(const Partita__V1__LinearizeReply *r, const cli_analysis_view *v) {
  cli_json j;
  json_begin(&j, model_name(r->model, v), r->time);
  json_strings(&j, "states", r->states, r->n_states);
  json_strings(&j, "inputs", r->inputs, r->n_inputs);
  json_strings(&j, "outputs", r->outputs, r->n_outputs);
  json_matrix(&j, "A", r->a);
  json_matrix(&j, "B", r->b);
  json_matrix(&j, "C", r->c);
  json_matrix(&j, "D", r->d);
  cli_json_key(&j, "mck");
  cli_json_begin_object(&j);
  json_matrix(&j, "M", r->mck ? r->mck->m : NULL);
  json_matrix(&j, "C", r->mck ? r->mck->c : NULL);
  json_matrix(&j, "K", r->mck ? r->mck->k : NULL);
  cli_json_end_object(&j);
  cli_json_key(&j, "eigenvalues");   // one object a line
  cli_json_begin_array(&j);
  for (size_t i = 0; i < r->n_eigenvalues; i++) {
    const Partita__V1__Eigenvalue *e = r->eigenvalues[i];
    cli_json_newline(&j);
    cli_json_begin_object(&j);
    cli_json_member_number(&j, "re", e->re);
    cli_json_member_number(&j, "im", e->im);
    cli_json_member_number(&j, "freq_hz", e->freq_hz);
    cli_json_member_number(&j, "damping_ratio", e->damping_ratio);
    cli_json_end_object(&j);
  }
  cli_json_end_array(&j);
  json_strings(&j, "notes", r->notes, r->n_notes);
  cli_json_member_int(&j, "order", r->order);
  json_end(&j);
}

// A matrix under its title and size, rows and columns named.
static void text_matrix(const char *title, const Partita__V1__Matrix *a, char *const *rname,
                        size_t nr, char *const *cname, size_t nc) {
  const uint32_t rows = a ? a->rows : 0, cols = a ? a->cols : 0;
  printf("\n%s (%u x %u)\n", title, rows, cols);
  if (rows == 0 || cols == 0)
    return;
  printf("%-20s", "");
  for (uint32_t c = 0; c < cols; c++)
    printf(" %14.14s", name_at(cname, nc, c));
  putchar('\n');
  for (uint32_t r = 0; r < rows; r++) {
    printf("%-20.20s", name_at(rname, nr, r));
    for (uint32_t c = 0; c < cols; c++)
      printf(" %14.7g", entry(a, r, c));
    putchar('\n');
  }
}

static void text_linearize(const Partita__V1__LinearizeReply *r, const cli_analysis_view *v) {
  char *const *st = r->states, *const *in = r->inputs, *const *out = r->outputs;
  const size_t ns = r->n_states, ni = r->n_inputs, no = r->n_outputs;
  const Partita__V1__MCK *mck = r->mck;
  printf("model %s linearized at t = %.17g (%zu states, %zu inputs, %zu outputs)\n",
         model_name(r->model, v), r->time, ns, ni, no);
  for (size_t i = 0; i < r->n_notes; i++)
    printf("  note: %s\n", r->notes[i]);
  text_matrix("A", r->a, st, ns, st, ns);
  text_matrix("B", r->b, st, ns, in, ni);
  text_matrix("C", r->c, out, no, st, ns);
  text_matrix("D", r->d, out, no, in, ni);
  text_matrix("M", mck ? mck->m : NULL, st, ns, st, ns);
  text_matrix("C (damping)", mck ? mck->c : NULL, st, ns, st, ns);
  text_matrix("K", mck ? mck->k : NULL, st, ns, st, ns);
  printf("\neigenvalues\n%18s %18s %14s %14s\n", "re", "im", "freq_hz", "damping_ratio");
  for (size_t i = 0; i < r->n_eigenvalues; i++) {
    const Partita__V1__Eigenvalue *e = r->eigenvalues[i];
    printf("%18.10g %18.10g %14.8g %14.8g\n", e->re, e->im, e->freq_hz, e->damping_ratio);
  }
}

void cli_print_linearize(const Partita__V1__LinearizeReply *r, const cli_analysis_view *v) {
  if (v->json)
    json_linearize(r, v);
  else
    text_linearize(r, v);
}

// ---------------------------------------------------------------------------------------------
// Equilibrium

void cli_print_equilibrium(const Partita__V1__EquilibriumReply *r, const cli_analysis_view *v) {
  if (v->json) {
    cli_json j;
    json_begin(&j, model_name(r->model, v), r->time);
    json_named(&j, "coordinates", r->coordinates, r->n_coordinates);
    reactions(&j, r->reactions, r->n_reactions);
    limit_notes(&j, r->limit_notes, r->n_limit_notes);
    json_named(&j, "efforts", r->efforts, r->n_efforts);
    json_named(&j, "coupler_efforts", r->coupler_efforts, r->n_coupler_efforts);
    limit_reactions(&j, r->limit_reactions, r->n_limit_reactions, NULL, 0);
    cli_json_member_int(&j, "iterations", r->iterations);
    cli_json_member_int(&j, "damped_steps", r->damped_steps);
    cli_json_key(&j, "stable");
    cli_json_bool(&j, r->stable);
    cli_json_member_number(&j, "residual", r->residual);
    if (v->daemon) {   // whether the live model was moved there (--apply)
      cli_json_key(&j, "applied");
      cli_json_bool(&j, r->applied);
    }
    json_end(&j);
    return;
  }
  printf("%-16s%s\n", "model", model_name(r->model, v));
  printf("%-16s%.17g\n", "time", r->time);
  printf("%-16s%d (+ %d damped-dynamics steps)\n", "iterations", r->iterations,
         r->damped_steps);
  printf("%-16s%.3g\n", "residual", r->residual);
  printf("%-16s%s\n", "stable", r->stable ? "yes" : "no");
  if (r->applied)
    printf("%-16s%s\n", "applied", "yes (the live model is there now)");
  printf("coordinates\n");
  text_named(NULL, r->coordinates, r->n_coordinates);
  text_named("efforts (motions frozen at the time above)", r->efforts, r->n_efforts);
  text_named(coupler_heading, r->coupler_efforts, r->n_coupler_efforts);
  reactions(NULL, r->reactions, r->n_reactions);
  limit_reactions(NULL, r->limit_reactions, r->n_limit_reactions, r->limit_notes,
                  r->n_limit_notes);
  limit_notes(NULL, r->limit_notes, r->n_limit_notes);
}
