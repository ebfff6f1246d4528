// count_alloc.h: a counting allocator for tests and benchmarks (test_alloc, bench_spikes).
// In a normal build malloc/calloc/realloc are interposed and forwarded to glibc; under
// AddressSanitizer the sanitizer's malloc hooks count instead (call count_alloc_install()).
#ifndef TEST_COUNT_ALLOC_H
#define TEST_COUNT_ALLOC_H

extern volatile long count_alloc_n;   // allocations counted so far
extern volatile int count_alloc_on;   // count while nonzero

void count_alloc_install(void);

#endif
