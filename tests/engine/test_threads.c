// test_threads.c: results do not depend on the host's core count (issue 23, item 4). OpenBLAS
// splits its work by its thread count, and a different split rounds differently: a model's load
// (the rank of its rows) and the Cartesian partitions' dense factorisations would then give
// results that differ with the number of cores. The library runs OpenBLAS on one thread
// (pt_model_compile), whatever OPENBLAS_NUM_THREADS says.
//   usage: test_threads            runs itself under OPENBLAS_NUM_THREADS=1 and =2 and
//                                  compares what each printed, to the bit
//          test_threads run        the run: the IFToMM A02 chain (N = 40) loaded, 1.5 s in the
//                                  hybrid mode (joint coordinates), then 0.2 s with the
//                                  Cartesian QR partition (dense LU of a 567 x 567 matrix in
//                                  every stage) and 0.1 s with the Cartesian LU partition; every
//                                  body's pose and velocity printed as the bits of the doubles
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fourbar_chain.h"
#include "partita.h"

static int run(void) {
  static char text[1 << 17];
  if (fourbar_chain_yaml(text, sizeof(text), 40) < 0) return 1;
  pt_model *m = NULL;
  pt_error err;
  if (pt_model_load_string(text, strlen(text), 1, "a02", NULL, &m, &err)) {
    printf("load: %s\n", err.msg);
    return 1;
  }
  pt_data *d = pt_data_new(m);
  const int phases[3][2] = {{PT_MODE_HYBRID, 1500}, {PT_MODE_QR, 200}, {PT_MODE_LU, 100}};
  for (int p = 0; p < 3; p++) {
    pt_set_partition_mode(d, phases[p][0]);
    for (int i = 0; i < phases[p][1]; i++) {
      const int rc = pt_step(m, d);
      if (rc) {
        printf("step failed: %s\n", pt_strerror(rc));
        return 1;
      }
    }
  }
  for (int b = 0; b < pt_model_nbody(m); b++) {
    const double *v[2] = {pt_body_pose(d, b), pt_body_velocity(d, b)};
    for (int k = 0; k < 2; k++)
      for (int c = 0; c < 7 - k; c++) {
        uint64_t bits;
        memcpy(&bits, v[k] + c, sizeof(bits));
        printf("%016llx%c", (unsigned long long)bits, c == 6 - k ? '\n' : ' ');
      }
  }
  pt_data_free(d);
  pt_model_free(m);
  return 0;
}

// The output of this program's run under OPENBLAS_NUM_THREADS=threads, into buf.
static size_t output(const char *self, const char *threads, char *buf, size_t cap) {
  char cmd[4200];
  snprintf(cmd, sizeof(cmd), "OPENBLAS_NUM_THREADS=%s '%s' run", threads, self);
  FILE *p = popen(cmd, "r");
  if (!p) return 0;
  size_t n = fread(buf, 1, cap - 1, p);
  buf[n] = 0;
  return pclose(p) == 0 ? n : 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "run") == 0) return run();
  static char one[1 << 16], two[1 << 16];
  const size_t n1 = output(argv[0], "1", one, sizeof(one));
  const size_t n2 = output(argv[0], "2", two, sizeof(two));
  if (n1 == 0 || n2 == 0) {
    printf("FAIL: a run failed (%zu, %zu bytes):\n%s\n%s\n", n1, n2, one, two);
    return 1;
  }
  if (n1 != n2 || memcmp(one, two, n1) != 0) {
    printf("FAIL: OPENBLAS_NUM_THREADS=1 and =2 differ\n");
    return 1;
  }
  printf("OPENBLAS_NUM_THREADS=1 and =2: the same %zu bytes (81 bodies' poses and velocities, "
         "to the bit)\n", n1);
  return 0;
}
