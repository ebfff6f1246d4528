// Models that parse but cannot be built (issue 2, test 9, the compile side; the loader's own
// checks are in tests/loader): unknown references, duplicates, motions on joints that cannot
// take them, redundant motions, unreachable assembly. Each file's first line is
// `# expect: <substring of the message>`; every message must also name the file and differ
// from the others.
#include <dirent.h>

#include "check.h"
#include "engine.h"

#define MAXF 64

int main(int argc, char **argv) {
  char dir[1024];
  snprintf(dir, sizeof(dir), "%s/tests/engine/bad", argc > 1 ? argv[1] : ".");
  DIR *dp = opendir(dir);
  CHECK(dp != NULL, "cannot open %s", dir);
  if (!dp) return finish("model_errors");
  static char msgs[MAXF][1024];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dp)) && n < MAXF) {
    if (!strstr(e->d_name, ".yaml")) continue;
    char path[2048], expect[512] = "";
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(expect, sizeof(expect), f)) {
      CHECK(0, "cannot read %s", path);
      if (f) fclose(f);
      continue;
    }
    fclose(f);
    expect[strcspn(expect, "\n")] = 0;
    const char *want = strstr(expect, "# expect: ") ? expect + 10 : expect;
    pt_model *m = NULL;
    pt_error err = {0};
    int rc = pt_model_load_file(path, NULL, &m, &err);
    CHECK(rc != PT_OK && m == NULL, "%s was accepted", e->d_name);
    CHECK(strstr(err.msg, want) != NULL, "%s: message '%s' lacks '%s'", e->d_name, err.msg, want);
    CHECK(strstr(err.msg, e->d_name) != NULL, "%s: message does not name the file: %s",
          e->d_name, err.msg);
    for (int k = 0; k < n; k++)
      CHECK(strcmp(msgs[k], err.msg) != 0, "%s: same message as another file", e->d_name);
    snprintf(msgs[n++], sizeof(msgs[0]), "%s", err.msg);
    pt_model_free(m);
  }
  closedir(dp);
  printf("%d malformed models refused\n", n);
  // and a model option that is valid reaches the model (hybrid partitioning, issue 7)
  static const char *opt =
      "model: m\nsimulation: {switch_back_steps: 20}\n"
      "bodies:\n  - {name: a, mass: 1, inertia: [0.1, 0.1, 0.1], position: [0, 0, -1]}\n";
  pt_model *m = load_yaml(opt);
  CHECK(m->switch_back_steps == 20, "switch_back_steps %d", m->switch_back_steps);
  pt_model_free(m);
  m = load_yaml("model: m\nbodies:\n  - {name: a, mass: 1, inertia: [0.1, 0.1, 0.1], "
                "position: [0, 0, -1]}\n");
  CHECK(m->switch_back_steps == 5, "default switch_back_steps %d", m->switch_back_steps);
  pt_model_free(m);
  CHECK(n >= 15, "only %d files", n);
  return finish("model_errors");
}
