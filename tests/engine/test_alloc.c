// pt_step allocates nothing (issue 2, test 10), proven with a counting allocator: in a normal
// build malloc/calloc/realloc are interposed and forwarded to glibc; under AddressSanitizer the
// sanitizer's malloc hooks count instead. A step that rebuilds the cached partition may
// allocate (KLU's symbolic analysis): that case is checked to be the only exception.
#include <stddef.h>

#include "check.h"

static volatile long nalloc;
static volatile int counting;

#if defined(__SANITIZE_ADDRESS__)
// from <sanitizer/allocator_interface.h> (not shipped with every gcc): the runtime provides it
void __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));
static void on_malloc(const volatile void *ptr, size_t size) {
  (void)ptr;
  (void)size;
  if (counting) nalloc++;
}
static void on_free(const volatile void *ptr) { (void)ptr; }
static void install(void) { __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free); }
#else
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
void *malloc(size_t n);
void *calloc(size_t a, size_t b);
void *realloc(void *p, size_t n);
void free(void *p);
void *malloc(size_t n) {
  if (counting) nalloc++;
  return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
  if (counting) nalloc++;
  return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
  if (counting) nalloc++;
  return __libc_realloc(p, n);
}
void free(void *p) { __libc_free(p); }
static void install(void) {}
#endif

// Steps `n` times; returns allocations made in steps that did not rebuild the partition and
// stores those that did.
static long count_steps(const pt_model *m, pt_data *d, int n, long *in_rebuilds,
                        long *rebuilds) {
  long clean = 0;
  *in_rebuilds = 0;
  *rebuilds = 0;
  for (int i = 0; i < n; i++) {
    pt_counters before, after;
    pt_get_counters(d, &before);
    nalloc = 0;
    counting = 1;
    int rc = pt_step(m, d);
    counting = 0;
    pt_get_counters(d, &after);
    CHECK(rc == PT_OK, "step %d: %s", i, pt_strerror(rc));
    if (after.repartitions != before.repartitions) {
      *in_rebuilds += nalloc;
      (*rebuilds)++;
    } else {
      clean += nalloc;
    }
  }
  return clean;
}

int main(int argc, char **argv) {
  install();
  char path[1024];
  const char *models[] = {"chain7.yaml", "fourbar_parallelogram.yaml", "double_pendulum.yaml",
                          "slider_crank.yaml", "door.yaml"};
  // the counter must see an allocation at all (or this test could never fail)
  nalloc = 0;
  counting = 1;
  void *probe = malloc(64);
  counting = 0;
  CHECK(nalloc == 1, "the counting allocator did not count (%ld)", nalloc);
  free(probe);
  for (size_t k = 0; k < sizeof(models) / sizeof(models[0]); k++) {
    snprintf(path, sizeof(path), "%s/configs/models/%s", argc > 1 ? argv[1] : ".", models[k]);
    pt_model *m = NULL;
    pt_error err;
    if (pt_model_load_file(path, NULL, &m, &err)) {
      CHECK(0, "%s", err.msg);
      continue;
    }
    pt_data *d = pt_data_new(m);
    pt_set_input(m, d, 0, 0.5);  // inputs change between steps too (if the model has any)
    long in_rebuilds, rebuilds;
    long clean = count_steps(m, d, 2000, &in_rebuilds, &rebuilds);
    printf("%-28s 2000 steps: %ld allocations in steps without a rebuild; %ld rebuilds "
           "(%ld allocations in them)\n", models[k], clean, rebuilds, in_rebuilds);
    CHECK(clean == 0, "%s: %ld allocations in steps without a partition rebuild", models[k],
          clean);
    pt_data_free(d);
    pt_model_free(m);
  }
  return finish("step_allocates_nothing");
}
