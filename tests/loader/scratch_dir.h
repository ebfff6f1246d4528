// scratch_dir.h: a temporary folder for the loader tests that write model and mesh files
// (test_mesh_read.c, test_collision_model.c), removed with what they wrote.
#ifndef TEST_SCRATCH_DIR_H
#define TEST_SCRATCH_DIR_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[64];   // the folder (scratch_open)

static inline int scratch_open(void) {
  snprintf(dir, sizeof(dir), "/tmp/pt_loader_XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

// dir/name with n bytes of data; a test that cannot write it stops.
static inline void write_file(const char *name, const void *data, size_t n) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n) {
    printf("FAIL cannot write %s\n", path);
    exit(1);
  }
  fclose(f);
}

// Removes the named files and the folder.
static inline void scratch_close(const char *const *names, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    unlink(path);
  }
  rmdir(dir);
}

#endif
