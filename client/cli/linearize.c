// linearize.c: `partita linearize` with a MODEL file, done by the embedded engine (issue 6).
//
//   partita linearize MODEL [--states A,B] [--inputs U,V] [--outputs Y,Z]
//                     [--init NAME=VALUE ...] [--init-rate NAME=VALUE ...]
//                     [--set ACTUATOR=VALUE ...] [--json] [--dense]
//
// Linearizes at the model's initial state, or at the state assembled around --init /
// --init-rate (motions frozen at that time), with the actuator inputs of --set held there (an
// arm held by its gravity torques: `partita inverse --gravity` gives them); --dense solves the augmented system with LAPACK's
// dense LU instead of the sparse one (same numbers; for comparison).
// JSON: {"model", "time", "states", "inputs", "outputs", "A", "B", "C", "D",
// "mck": {"M", "C", "K"}, "eigenvalues": [{"re", "im", "freq_hz", "damping_ratio"}],
// "notes": [..], "order"}; matrices as lists of rows; "states" is the state vector: the chosen
// coordinates, then their rates (NAME.rate).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partita.h"
#include "cli.h"

#define MAX_LIST 4096   // names in one comma list

typedef struct {
  char *text;              // a copy of the option's value, split in place
  const char **item;
  int n;
} name_list;

typedef struct {
  cli_model_args model;    // MODEL, --json, --floating-base, --init, --init-rate
  int dense;
  name_list states, inputs, outputs;
  const char **set;        // (argc) the --set ACTUATOR=VALUE texts
  int nset;
} lin_options;

static const char *cmd = "linearize";

// "A,B , C" -> ["A", "B", "C"]; empty names are refused.
static int split_list(const char *opt, const char *value, name_list *l) {
  free(l->text);
  free(l->item);
  l->n = 0;
  l->text = strdup(value);
  size_t cap = 1;
  for (const char *p = value; *p; p++) cap += *p == ',';
  l->item = calloc(cap, sizeof(*l->item));
  if (!l->text || !l->item) {
    cli_error(cmd, "out of memory");
    return -1;
  }
  if (cap > MAX_LIST) {
    cli_error(cmd, "%s: more than %d names", opt, MAX_LIST);
    return -1;
  }
  char *s = l->text;
  for (size_t k = 0; k < cap; k++) {
    char *end = strchr(s, ',');
    if (end) *end = '\0';
    while (*s == ' ') s++;
    size_t len = strlen(s);
    while (len > 0 && s[len - 1] == ' ') s[--len] = '\0';
    if (len == 0) {
      cli_error(cmd, "%s: empty name in '%s'", opt, value);
      return -1;
    }
    l->item[l->n++] = s;
    if (!end) break;
    s = end + 1;
  }
  return 0;
}

static int parse(int argc, char **argv, lin_options *o) {
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r;
    if (cli_is_flag(argv[i], "--dense")) {
      o->dense = 1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--set", &v)) != 0) {
      if (r < 0) return -1;
      o->set[o->nset++] = v;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--states", &v)) != 0) {
      if (r < 0 || split_list("--states", v, &o->states) < 0) return -1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--inputs", &v)) != 0) {
      if (r < 0 || split_list("--inputs", v, &o->inputs) < 0) return -1;
    } else if ((r = cli_opt_value(cmd, argc, argv, &i, "--outputs", &v)) != 0) {
      if (r < 0 || split_list("--outputs", v, &o->outputs) < 0) return -1;
    } else if ((r = cli_model_arg(cmd, argc, argv, &i, &o->model)) != 0) {
      return r;
    }
  }
  return cli_model_args_done(cmd, &o->model,
                             "partita linearize MODEL [--states A,B] [--inputs U,V] "
                             "[--outputs Y,Z] [--init N=V ...] [--set A=V ...] [--json]");
}

// The --set ACTUATOR=VALUE inputs on d (after its state). Returns an exit code.
static int lin_inputs(const lin_options *o, const pt_model *m, pt_data *d) {
  for (int k = 0; k < o->nset; k++) {
    char name[PT_LIN_NAME_MAX];
    double value;
    if (cli_parse_assign(cmd, "--set", o->set[k], name, sizeof(name), &value) < 0)
      return CLI_EXIT_USAGE;
    const int i = pt_input_index(m, name);
    if (i < 0) {
      cli_error(cmd, "--set: model '%s' has no actuator input '%s'", pt_model_name(m), name);
      return CLI_EXIT_USAGE;
    }
    if (pt_set_input(m, d, i, value) == 1)
      fprintf(stderr, "partita %s: warning: --set %s=%.17g clipped to the actuator's limit "
              "%.17g\n", cmd, name, value, pt_input_limit(m, i));
  }
  return CLI_EXIT_OK;
}

// ---------------------------------------------------------------------------------------------
// Output

static void json_names(cli_json *j, const char *key, char (*names)[PT_LIN_NAME_MAX], int n) {
  cli_json_key(j, key);
  cli_json_begin_array(j);
  for (int i = 0; i < n; i++) cli_json_string(j, names[i]);
  cli_json_end_array(j);
}

static void json_matrix(cli_json *j, const char *key, const double *a, int rows, int cols) {
  cli_json_key(j, key);
  cli_json_begin_array(j);
  for (int r = 0; r < rows; r++) {
    cli_json_newline(j);
    cli_json_begin_array(j);
    for (int c = 0; c < cols; c++) cli_json_number(j, a[(size_t)r * cols + c]);
    cli_json_end_array(j);
  }
  cli_json_end_array(j);
}

static void print_json(const pt_model *m, const pt_linearization *r) {
  const int n2 = 2 * r->nz;
  cli_json j;
  cli_analysis_json_begin(&j, m, r->time);
  json_names(&j, "states", r->state_name, n2);
  json_names(&j, "inputs", r->input_name, r->nu);
  json_names(&j, "outputs", r->output_name, r->ny);
  json_matrix(&j, "A", r->A, n2, n2);
  json_matrix(&j, "B", r->B, n2, r->nu);
  json_matrix(&j, "C", r->C, r->ny, n2);
  json_matrix(&j, "D", r->D, r->ny, r->nu);
  cli_json_key(&j, "mck");
  cli_json_begin_object(&j);
  json_matrix(&j, "M", r->M, r->nz, r->nz);
  json_matrix(&j, "C", r->Cmat, r->nz, r->nz);
  json_matrix(&j, "K", r->K, r->nz, r->nz);
  cli_json_end_object(&j);
  cli_json_key(&j, "eigenvalues");
  cli_json_begin_array(&j);
  for (int i = 0; i < n2; i++) {
    const pt_eigenvalue *e = r->eig + i;
    cli_json_newline(&j);
    cli_json_begin_object(&j);
    cli_json_key(&j, "re");
    cli_json_number(&j, e->re);
    cli_json_key(&j, "im");
    cli_json_number(&j, e->im);
    cli_json_key(&j, "freq_hz");
    cli_json_number(&j, e->freq_hz);
    cli_json_key(&j, "damping_ratio");
    cli_json_number(&j, e->damping_ratio);
    cli_json_end_object(&j);
  }
  cli_json_end_array(&j);
  cli_json_key(&j, "notes");
  cli_json_begin_array(&j);
  for (const char *p = r->notes; p && *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    char line[1024];
    if (n >= sizeof(line)) n = sizeof(line) - 1;
    memcpy(line, p, n);
    line[n] = '\0';
    cli_json_string(&j, line);
    p = nl ? nl + 1 : p + strlen(p);
  }
  cli_json_end_array(&j);
  cli_json_key(&j, "order");
  cli_json_int(&j, r->size);
  cli_json_end_object(&j);
  cli_json_finish(&j);
}

static void text_matrix(const char *title, const double *a, int rows, int cols,
                        char (*rname)[PT_LIN_NAME_MAX], char (*cname)[PT_LIN_NAME_MAX]) {
  printf("\n%s (%d x %d)\n", title, rows, cols);
  if (rows == 0 || cols == 0) return;
  printf("%-20s", "");
  for (int c = 0; c < cols; c++) printf(" %14.14s", cname[c]);
  putchar('\n');
  for (int r = 0; r < rows; r++) {
    printf("%-20.20s", rname[r]);
    for (int c = 0; c < cols; c++) printf(" %14.7g", a[(size_t)r * cols + c]);
    putchar('\n');
  }
}

static void print_text(const pt_model *m, const pt_linearization *r) {
  const int n2 = 2 * r->nz;
  printf("model %s linearized at t = %.17g (%d states, %d inputs, %d outputs)\n",
         pt_model_name(m), r->time, n2, r->nu, r->ny);
  for (const char *p = r->notes; p && *p;) {
    const char *nl = strchr(p, '\n');
    int n = nl ? (int)(nl - p) : (int)strlen(p);
    printf("  note: %.*s\n", n, p);
    p = nl ? nl + 1 : p + n;
  }
  text_matrix("A", r->A, n2, n2, r->state_name, r->state_name);
  text_matrix("B", r->B, n2, r->nu, r->state_name, r->input_name);
  text_matrix("C", r->C, r->ny, n2, r->output_name, r->state_name);
  text_matrix("D", r->D, r->ny, r->nu, r->output_name, r->input_name);
  text_matrix("M", r->M, r->nz, r->nz, r->state_name, r->state_name);
  text_matrix("C (damping)", r->Cmat, r->nz, r->nz, r->state_name, r->state_name);
  text_matrix("K", r->K, r->nz, r->nz, r->state_name, r->state_name);
  printf("\neigenvalues\n%18s %18s %14s %14s\n", "re", "im", "freq_hz", "damping_ratio");
  for (int i = 0; i < n2; i++)
    printf("%18.10g %18.10g %14.8g %14.8g\n", r->eig[i].re, r->eig[i].im, r->eig[i].freq_hz,
           r->eig[i].damping_ratio);
}

int cli_linearize_main(int argc, char **argv) {
  lin_options o;
  memset(&o, 0, sizeof(o));
  if (cli_model_args_init(cmd, &o.model, argc, 1) < 0) return CLI_EXIT_FAIL;
  o.set = calloc((size_t)argc + 1, sizeof(*o.set));
  pt_model *m = NULL;
  pt_data *d = NULL;
  pt_linearization *r = NULL;
  int code = CLI_EXIT_OK;
  int p = o.set ? parse(argc, argv, &o) : -1;
  if (p != 0) {
    code = p > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    goto done;
  }
  code = cli_analysis_load(cmd, &o.model, &m, &d);
  if (code) goto done;
  code = cli_analysis_state(cmd, &o.model, m, d);
  if (code) goto done;
  code = lin_inputs(&o, m, d);
  if (code) goto done;
  pt_linearize_options lo = {o.states.item, o.states.n, o.inputs.item, o.inputs.n,
                             o.outputs.item, o.outputs.n,
                             o.dense ? PT_LIN_DENSE : PT_LIN_SPARSE};
  pt_error err = {0, {0}};
  int rc = pt_linearize(m, d, &lo, &r, &err);
  if (rc) {
    code = cli_analysis_fail(cmd, rc, &err);
    goto done;
  }
  if (o.model.json) print_json(m, r);
  else print_text(m, r);
  code = cli_analysis_flush(cmd);
done:
  pt_linearization_free(r);
  pt_data_free(d);
  pt_model_free(m);
  cli_model_args_free(&o.model);
  free(o.set);
  free(o.states.text), free(o.states.item);
  free(o.inputs.text), free(o.inputs.item);
  free(o.outputs.text), free(o.outputs.item);
  return code;
}
