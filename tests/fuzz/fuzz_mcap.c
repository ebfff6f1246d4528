// fuzz_mcap.c: the MCAP reader (mcap/mcap_read.c) on arbitrary bytes: whatever it is given,
// it answers COMPLETE, PARTIAL or BAD with a note, reads nothing out of bounds and leaks
// nothing; what it returns is consistent (every message inside the input, on a channel it
// lists). The corpus starts from a small recording and pieces of it.
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "mcap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mcap_file f;
  mcap_read_status st = mcap_read_bytes(data, size, &f);
  if (st != MCAP_READ_COMPLETE && !f.note[0])
    abort();   // every stop says why
  if (f.valid_end > size)
    abort();
  for (size_t i = 0; i < f.nmsg; i++) {
    const mcap_message *m = &f.msgs[i];
    if (m->data < f.bytes || m->data + m->len > f.bytes + f.size ||
        !mcap_find_channel(&f, m->channel_id))
      abort();
  }
  mcap_file_free(&f);
  return 0;
}
