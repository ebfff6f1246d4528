// hist.c: bucket i covers [lo(i), lo(i+1)); values below HIST_SUB have a bucket each.
#include "base/hist.h"

#include <string.h>

void hist_reset(hist *h) { memset(h, 0, sizeof(*h)); }

static int bucket_of(uint64_t v) {
  if (v < HIST_SUB)
    return (int)v;
  int e = 63 - __builtin_clzll(v);            // v in [2^e, 2^(e+1)), e >= 5
  int sub = (int)((v >> (e - 5)) & (HIST_SUB - 1));
  int i = (e - 4) * HIST_SUB + sub;
  return i < HIST_NBUCKET ? i : HIST_NBUCKET - 1;
}

static double bucket_mid(int i) {
  if (i < HIST_SUB)
    return i;
  int e = i / HIST_SUB + 4, sub = i % HIST_SUB;
  double lo = (double)(1ull << e) + (double)sub * (double)(1ull << (e - 5));
  return lo + 0.5 * (double)(1ull << (e - 5));
}

void hist_add(hist *h, uint64_t ns) {
  h->count++;
  h->sum += (double)ns;
  if (ns > h->max)
    h->max = ns;
  h->bucket[bucket_of(ns)]++;
}

double hist_mean(const hist *h) { return h->count ? h->sum / (double)h->count : 0; }

double hist_quantile(const hist *h, double q) {
  if (!h->count)
    return 0;
  uint64_t rank = (uint64_t)(q * (double)(h->count - 1)) + 1, seen = 0;
  for (int i = 0; i < HIST_NBUCKET; i++) {
    seen += h->bucket[i];
    if (seen >= rank) {
      double v = bucket_mid(i);
      return v > (double)h->max ? (double)h->max : v;
    }
  }
  return (double)h->max;
}
