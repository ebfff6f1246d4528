// alloc_shim.c: an LD_PRELOAD library for tests that counts heap allocations made on the
// daemon's simulation threads (named "pt:MODEL"), to prove what runs there allocates nothing.
// On SIGUSR2 it writes the count so far, as one decimal line, to the file named by
// PT_ALLOC_COUNT_FILE (truncated each time). Not for production builds (a prctl per call).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static atomic_long count;
static const char *count_file;

// dlsym may itself call calloc before real_calloc is known: serve that from here.
static char bootstrap[4096];
static size_t bootstrap_used;

static void count_if_sim_thread(void) {
  char name[17] = {0};
  if (prctl(PR_GET_NAME, name, 0, 0, 0) == 0 && strncmp(name, "pt:", 3) == 0)
    atomic_fetch_add(&count, 1);
}

static void dump(int sig) {
  (void)sig;
  if (!count_file)
    return;
  char buf[32];
  long n = atomic_load(&count);
  int len = 0;
  char tmp[24];
  do {
    tmp[len++] = (char)('0' + n % 10);
    n /= 10;
  } while (n > 0);
  for (int i = 0; i < len; i++)
    buf[i] = tmp[len - 1 - i];
  buf[len++] = '\n';
  int fd = open(count_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    ssize_t w = write(fd, buf, (size_t)len);
    (void)w;
    close(fd);
  }
}

// POSIX's way to store dlsym's object pointer into a function pointer.
#define LOOKUP(var, name) (*(void **)&(var) = dlsym(RTLD_NEXT, name))

__attribute__((constructor)) static void init(void) {
  LOOKUP(real_malloc, "malloc");
  LOOKUP(real_calloc, "calloc");
  LOOKUP(real_realloc, "realloc");
  LOOKUP(real_posix_memalign, "posix_memalign");
  LOOKUP(real_aligned_alloc, "aligned_alloc");
  count_file = getenv("PT_ALLOC_COUNT_FILE");
  signal(SIGUSR2, dump);
}

void *malloc(size_t n) {
  if (!real_malloc)
    init();
  count_if_sim_thread();
  return real_malloc(n);
}

void *calloc(size_t a, size_t b) {
  if (!real_calloc) {
    size_t n = a * b;
    if (bootstrap_used + n > sizeof(bootstrap))
      return NULL;
    void *p = bootstrap + bootstrap_used;
    bootstrap_used += (n + 15) & ~(size_t)15;
    return p;
  }
  count_if_sim_thread();
  return real_calloc(a, b);
}

void *realloc(void *p, size_t n) {
  if (!real_realloc)
    init();
  count_if_sim_thread();
  return real_realloc(p, n);
}

int posix_memalign(void **p, size_t align, size_t n) {
  if (!real_posix_memalign)
    init();
  count_if_sim_thread();
  return real_posix_memalign(p, align, n);
}

void *aligned_alloc(size_t align, size_t n) {
  if (!real_aligned_alloc)
    init();
  count_if_sim_thread();
  return real_aligned_alloc(align, n);
}

void free(void *p) {
  static void (*real_free)(void *);
  if ((char *)p >= bootstrap && (char *)p < bootstrap + sizeof(bootstrap))
    return;
  if (!real_free)
    LOOKUP(real_free, "free");
  real_free(p);
}
