// test_mcap.c: the MCAP writer and reader (mcap/mcap.h) against each other and against the
// specification's byte layout, walked here by hand:
//  - a file with schemas, channels, messages over many chunks, an attachment and metadata is
//    read back whole (every CRC and index checked), message by message;
//  - its bytes start and end with the magic, the Footer sits before the closing magic and
//    its summary CRC is zlib's crc32 of the bytes it covers (computed here independently);
//  - cut at EVERY byte offset, the reader keeps exactly the messages of the chunks that are
//    complete before the cut (found here by walking the top-level records), says why it
//    stopped, and never reads out of bounds (the asan build runs this too);
//  - a flipped byte inside a chunk is reported as a CRC mismatch, with the chunks before kept.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "mcap.h"

static int failures;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
      failures++;                                          \
    }                                                      \
  } while (0)

#define NMSG 400

static uint64_t rd64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// The payload of message k: its number and a varying length.
static size_t payload(int k, uint8_t *buf) {
  size_t n = 4 + (size_t)(k * 7 % 37);
  for (size_t i = 0; i < n; i++)
    buf[i] = (uint8_t)(k + (int)i * 13);
  return n;
}

static int write_file(const char *path) {
  char err[256];
  mcap_writer_opts o = {.chunk_size = 700, .profile = "", .library = "partita test"};
  mcap_writer *w = mcap_writer_open(path, &o, err, sizeof(err));
  if (!w) {
    fprintf(stderr, "open: %s\n", err);
    return -1;
  }
  static const uint8_t fds[] = {1, 2, 3, 4, 5};
  int s1 = mcap_writer_schema(w, "test.A", "protobuf", fds, sizeof(fds));
  int s2 = mcap_writer_schema(w, "test.B", "protobuf", fds, 3);
  const char *meta[] = {"kind", "state", "every", "10"};
  int c1 = mcap_writer_channel(w, s1, "/m/state", "protobuf", meta, 2);
  int c2 = mcap_writer_channel(w, s2, "/m/input", "protobuf", NULL, 0);
  CHECK(s1 == 1 && s2 == 2 && c1 == 1 && c2 == 2, "ids %d %d %d %d", s1, s2, c1, c2);
  const char *kv[] = {"dt", "0.001", "integrator", "rk4"};
  mcap_writer_metadata(w, "partita.model", kv, 2);
  const char text[] = "name: m\nbodies: []\n";
  mcap_writer_attachment(w, "m.yaml", "text/yaml", 5, 0, text, sizeof(text) - 1);
  uint8_t buf[64];
  for (int k = 0; k < NMSG; k++) {
    size_t n = payload(k, buf);
    if (mcap_writer_message(w, k % 3 ? c1 : c2, (uint32_t)k, 1000 + (uint64_t)k * 10,
                            1000 + (uint64_t)k * 10, buf, n) < 0) {
      fprintf(stderr, "message: %s\n", mcap_writer_error(w));
      mcap_writer_abandon(w);
      return -1;
    }
  }
  if (mcap_writer_close(w, err, sizeof(err)) < 0) {
    fprintf(stderr, "close: %s\n", err);
    return -1;
  }
  return 0;
}

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)len + 1);
  *n = fread(b, 1, (size_t)len, f);
  fclose(f);
  return b;
}

static void check_messages(const mcap_file *f, size_t n) {
  uint8_t buf[64];
  for (size_t k = 0; k < n && k < f->nmsg; k++) {
    const mcap_message *m = &f->msgs[k];
    size_t len = payload((int)k, buf);
    int ok = m->sequence == k && m->log_time == 1000 + k * 10 && m->len == len &&
             memcmp(m->data, buf, len) == 0 && m->channel_id == (k % 3 ? 1 : 2);
    CHECK(ok, "message %zu differs", k);
    if (!ok)
      return;
  }
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  char path[1024];
  snprintf(path, sizeof(path), "%s/test_mcap.mcap", dir);
  if (write_file(path) < 0)
    return 1;

  // 1. the whole file
  mcap_file f;
  mcap_read_status st = mcap_read_file(path, &f);
  CHECK(st == MCAP_READ_COMPLETE, "status %d: %s", st, f.note);
  CHECK(f.has_summary, "no summary");
  CHECK(f.nmsg == NMSG, "%zu messages", f.nmsg);
  CHECK(f.nschema == 2 && f.nchannel == 2, "%d schemas %d channels", f.nschema, f.nchannel);
  CHECK(f.nchunk > 10, "only %d chunks", f.nchunk);
  CHECK(f.nattachment == 1 && f.attachments[0].len == 19 &&
            memcmp(f.attachments[0].data, "name: m\n", 8) == 0,
        "attachment");
  CHECK(f.nmetadata == 1 && strcmp(f.metadata[0].name, "partita.model") == 0 &&
            strcmp(mcap_meta_get(f.metadata[0].kv, f.metadata[0].npairs, "integrator"),
                   "rk4") == 0,
        "metadata");
  const mcap_channel *ch = mcap_find_channel(&f, 1);
  CHECK(ch && strcmp(ch->topic, "/m/state") == 0 && ch->nmeta == 2 &&
            strcmp(mcap_meta_get(ch->meta, ch->nmeta, "every"), "10") == 0,
        "channel 1");
  CHECK(strcmp(f.library, "partita test") == 0, "library '%s'", f.library);
  check_messages(&f, NMSG);
  mcap_file_free(&f);

  // 2. the byte layout, checked by hand
  size_t size = 0;
  uint8_t *b = slurp(path, &size);
  if (!b || size < 100) {
    fprintf(stderr, "cannot read %s back\n", path);
    return 1;
  }
  CHECK(memcmp(b, "\x89MCAP0\r\n", 8) == 0 && memcmp(b + size - 8, "\x89MCAP0\r\n", 8) == 0,
        "magic");
  const uint8_t *footer = b + size - 8 - 29;
  CHECK(footer[0] == 0x02 && rd64(footer + 1) == 20, "footer record");
  uint64_t sum_start = rd64(footer + 9);
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, b + sum_start, (uInt)(size - 8 - 4 - sum_start));
  CHECK(crc == rd32(footer + 25), "summary crc");
  // the Data End right before the summary: CRC of all bytes before it
  const uint8_t *de = b + sum_start - 13;
  CHECK(de[0] == 0x0F && rd64(de + 1) == 4, "data end");
  CHECK(crc32(crc32(0L, Z_NULL, 0), b, (uInt)(sum_start - 13)) == rd32(de + 9), "data crc");

  // the top-level records: where each chunk ends and how many messages it holds
  size_t chunk_end[256], chunk_msgs[256];
  int nchunks = 0;
  size_t at = 8, header_end = 0;
  while (at < sum_start - 13) {
    int op = b[at];
    uint64_t len = rd64(b + at + 1);
    if (op == 0x01)
      header_end = at + 9 + len;
    if (op == 0x06 && nchunks < 256) {
      const uint8_t *c = b + at + 9;
      uint64_t rlen = rd64(c + 8 + 8 + 8 + 4 + 4);   // after times, size, crc, "" compression
      const uint8_t *r = c + 8 + 8 + 8 + 4 + 4 + 8;
      CHECK(crc32(crc32(0L, Z_NULL, 0), r, (uInt)rlen) == rd32(c + 24), "chunk crc");
      size_t nm = 0;
      for (uint64_t p = 0; p < rlen; p += 9 + rd64(r + p + 1))
        nm += r[p] == 0x05;
      chunk_end[nchunks] = at + 9 + len;
      chunk_msgs[nchunks++] = nm;
    }
    at += 9 + len;
  }
  CHECK(at == sum_start - 13, "records do not tile the data section");

  // 3. cut at every byte
  int partial = 0;
  for (size_t cut = 0; cut < size; cut++) {
    mcap_file t;
    st = mcap_read_bytes(b, cut, &t);
    size_t want = 0;
    for (int k = 0; k < nchunks; k++)
      if (chunk_end[k] <= cut)
        want += chunk_msgs[k];
    if (cut < header_end) {
      CHECK(st == MCAP_READ_BAD && t.note[0], "cut %zu: status %d", cut, st);
    } else {
      CHECK(st == MCAP_READ_PARTIAL && t.note[0], "cut %zu: status %d", cut, st);
      CHECK(t.nmsg == want, "cut %zu: %zu messages, want %zu (%s)", cut, t.nmsg, want, t.note);
      CHECK(t.valid_end <= cut, "cut %zu: valid_end %llu", cut,
            (unsigned long long)t.valid_end);
      check_messages(&t, t.nmsg);
      partial++;
    }
    if (cut == chunk_end[3] + 5)
      printf("cut at byte %zu: %s\n", cut, t.note);
    mcap_file_free(&t);
  }
  printf("%zu cuts read (%d partial), %d chunks\n", size, partial, nchunks);

  // 4. a flipped byte in the fifth chunk's records
  uint8_t *bad = malloc(size);
  memcpy(bad, b, size);
  bad[chunk_end[4] - 3] ^= 0x40;
  st = mcap_read_bytes(bad, size, &f);
  size_t want = 0;
  for (int k = 0; k < 4; k++)
    want += chunk_msgs[k];
  CHECK(st == MCAP_READ_PARTIAL && strstr(f.note, "CRC mismatch") && f.nmsg == want,
        "flipped byte: status %d, %zu messages (want %zu): %s", st, f.nmsg, want, f.note);
  printf("flipped byte: %s\n", f.note);
  mcap_file_free(&f);
  free(bad);
  free(b);

  // 5. a disk that is full: the error is reported, by message, not swallowed
  {
    char err[256];
    mcap_writer *w = mcap_writer_open("/dev/full", NULL, err, sizeof(err));
    if (w) {   // the header is buffered: the failure shows at the first flush
      int s1 = mcap_writer_schema(w, "x", "", NULL, 0);
      int c1 = mcap_writer_channel(w, s1, "/x", "", NULL, 0);
      uint8_t buf[64];
      int rc = 0;
      for (int k = 0; k < 2000 && rc == 0; k++)
        rc = mcap_writer_message(w, c1, 0, (uint64_t)k, (uint64_t)k, buf, sizeof(buf));
      if (rc == 0)
        rc = mcap_writer_flush(w);
      CHECK(rc < 0 && strstr(mcap_writer_error(w), "No space"), "/dev/full: rc %d '%s'", rc,
            mcap_writer_error(w));
      CHECK(mcap_writer_close(w, err, sizeof(err)) < 0 && err[0], "/dev/full: close");
      printf("full disk: %s\n", err);
    }
  }

  // 6. not MCAP at all
  st = mcap_read_bytes("hello world, not a recording", 28, &f);
  CHECK(st == MCAP_READ_BAD && strstr(f.note, "not an MCAP file"), "garbage: %s", f.note);
  mcap_file_free(&f);

  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
