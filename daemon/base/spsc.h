// spsc.h: bounded single-producer/single-consumer ring of fixed-size records. The producer
// and the consumer are each one thread; neither ever blocks: a full ring refuses the record.
#ifndef PD_SPSC_H
#define PD_SPSC_H

#include <stdatomic.h>
#include <stddef.h>

typedef struct {
  unsigned char *buf;       // cap records of esize bytes
  size_t esize;
  size_t cap;               // a power of two
  atomic_size_t head;       // next record to read (written by the consumer)
  atomic_size_t tail;       // next record to write (written by the producer)
} spsc;

int spsc_init(spsc *q, size_t esize, size_t cap);   // 0 ok, -1 out of memory
void spsc_free(spsc *q);

// Producer: a slot to fill (NULL when full), then publish it.
void *spsc_claim(spsc *q);
void spsc_publish(spsc *q);
int spsc_push(spsc *q, const void *rec);            // 0 ok, -1 full

// Consumer: the oldest record (NULL when empty), then release it.
void *spsc_peek(spsc *q);
void spsc_release(spsc *q);
int spsc_pop(spsc *q, void *rec);                   // 0 ok, -1 empty

#endif
