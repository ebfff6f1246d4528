// file_view.c: `partita view MODEL` (docs/viewer.md, docs/cli.md): runs partita-view
// (daemon/view_main.c), the embedded engine with partitad's viewer page for one model file.
// It is looked up beside this program, in the build tree's daemon/ directory, then on PATH.
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "file_cmds.h"

int cli_view_main(const cli_command *self, int argc, char **argv) {
  (void)self;
  (void)argc;   // argv is NULL-terminated: passed on whole
  char me[PATH_MAX], path[PATH_MAX + 32];
  ssize_t n = readlink("/proc/self/exe", me, sizeof(me) - 1);
  argv[0] = "partita-view";
  if (n > 0) {
    me[n] = 0;
    char *slash = strrchr(me, '/');
    if (slash) *slash = 0;
    const char *tries[] = {"%s/partita-view", "%s/../daemon/partita-view"};
    for (int i = 0; i < 2; i++) {
      snprintf(path, sizeof(path), tries[i], me);
      if (access(path, X_OK) == 0) {
        execv(path, argv);
      }
    }
  }
  execvp("partita-view", argv);
  fprintf(stderr, "partita view: partita-view is not installed beside partita or on PATH\n");
  return CLI_EXIT_FAIL;
}
