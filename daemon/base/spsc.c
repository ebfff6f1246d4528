// spsc.c: acquire/release on head and tail order the record bytes between the two threads.
#include "base/spsc.h"

#include <stdlib.h>
#include <string.h>

int spsc_init(spsc *q, size_t esize, size_t cap) {
  size_t c = 1;
  while (c < cap)
    c *= 2;
  q->buf = calloc(c, esize);
  if (!q->buf)
    return -1;
  q->esize = esize;
  q->cap = c;
  atomic_init(&q->head, 0);
  atomic_init(&q->tail, 0);
  return 0;
}

void spsc_free(spsc *q) {
  free(q->buf);
  q->buf = NULL;
}

void *spsc_claim(spsc *q) {
  size_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
  size_t head = atomic_load_explicit(&q->head, memory_order_acquire);
  if (tail - head >= q->cap)
    return NULL;
  return q->buf + (tail & (q->cap - 1)) * q->esize;
}

void spsc_publish(spsc *q) {
  size_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
  atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
}

int spsc_push(spsc *q, const void *rec) {
  void *slot = spsc_claim(q);
  if (!slot)
    return -1;
  memcpy(slot, rec, q->esize);
  spsc_publish(q);
  return 0;
}

void *spsc_peek(spsc *q) {
  size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
  size_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
  if (head == tail)
    return NULL;
  return q->buf + (head & (q->cap - 1)) * q->esize;
}

void spsc_release(spsc *q) {
  size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
  atomic_store_explicit(&q->head, head + 1, memory_order_release);
}

int spsc_pop(spsc *q, void *rec) {
  void *slot = spsc_peek(q);
  if (!slot)
    return -1;
  memcpy(rec, slot, q->esize);
  spsc_release(q);
  return 0;
}
