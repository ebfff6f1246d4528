// hist.h: log-linear histogram of nanosecond durations (32 sub-buckets per power of two, so
// quantiles are within about 3%). Fixed size, no allocation: safe on the simulation thread.
#ifndef PD_HIST_H
#define PD_HIST_H

#include <stdint.h>

#define HIST_SUB 32
#define HIST_NBUCKET (60 * HIST_SUB)

typedef struct {
  uint64_t count;
  uint64_t max;
  double sum;
  uint64_t bucket[HIST_NBUCKET];
} hist;

void hist_reset(hist *h);
void hist_add(hist *h, uint64_t ns);
double hist_quantile(const hist *h, double q);   // ns; 0 when empty
double hist_mean(const hist *h);                 // ns; 0 when empty

#endif
