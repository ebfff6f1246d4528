// model_load.c: loading a MODEL file for a command (model_load.h).
#include "model_load.h"

#include <string.h>

#include "args.h"

// The model's warnings, one line each, to stderr.
static void print_warnings(const char *cmd, const pt_model *m) {
  const char *w = pt_model_warnings(m);
  while (w && *w) {
    const char *nl = strchr(w, '\n');
    int n = nl ? (int)(nl - w) : (int)strlen(w);
    if (n > 0)
      fprintf(stderr, "partita %s: warning: %.*s\n", cmd, n, w);
    w = nl ? nl + 1 : w + n;
  }
}

int cli_model_load(const char *cmd, const char *path, const pt_load_options *o, pt_model **m,
                   char **text, size_t *len, int *format) {
  pt_error err = {0, {0}};
  *m = NULL;
  int rc = text ? pt_model_load_file_text(path, o, m, text, len, format, &err)
                : pt_model_load_file(path, o, m, &err);
  if (rc < 0 || !*m) {
    if (err.msg[0])
      cli_error(cmd, "%s", err.msg);
    else
      cli_error(cmd, "%s: %s", path, pt_strerror(rc < 0 ? rc : PT_EMODEL));
    *m = NULL;
    return -1;
  }
  print_warnings(cmd, *m);
  return 0;
}

void cli_print_names(FILE *out, const pt_model *m, int n,
                     const char *(*name)(const pt_model *, int)) {
  if (n == 0)
    fputs("none", out);
  for (int i = 0; i < n && i < 40; i++)
    fprintf(out, "%s%s", i ? ", " : "", name(m, i));
  if (n > 40)
    fprintf(out, ", ... (%d in all)", n);
}
