// count_alloc.c: the counting allocator (count_alloc.h).
#include "count_alloc.h"

#include <stddef.h>

volatile long count_alloc_n;
volatile int count_alloc_on;

#if defined(__SANITIZE_ADDRESS__)
// from <sanitizer/allocator_interface.h> (not shipped with every gcc): the runtime provides it
void __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));
static void on_malloc(const volatile void *ptr, size_t size) {
  (void)ptr;
  (void)size;
  if (count_alloc_on) count_alloc_n++;
}
static void on_free(const volatile void *ptr) { (void)ptr; }
void count_alloc_install(void) { __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free); }
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
  if (count_alloc_on) count_alloc_n++;
  return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
  if (count_alloc_on) count_alloc_n++;
  return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
  if (count_alloc_on) count_alloc_n++;
  return __libc_realloc(p, n);
}
void free(void *p) { __libc_free(p); }
void count_alloc_install(void) {}
#endif
