// test_frame.c: the frame codec (wire/frame.c). Real protobuf messages, split at every
// byte boundary, must come out whole and identical; an oversize length is refused before any
// buffer grows for it; garbage is an error; random input never crashes.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "envelope.h"
#include "frame.h"
#include "partita_client.h"
#include "partita.pb-c.h"

static int failures;
#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      failures++;                                                     \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                          \
    }                                                                 \
  } while (0)

// A deterministic generator (xorshift64*), so failures reproduce.
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 0x2545f4914f6cdd1dull;
}

// A stream of three different framed messages: a small request, one with a long source text,
// and an empty message (length 0).
static uint8_t *make_stream(size_t *len, size_t lens[3], uint8_t *bodies[3]) {
  Partita__V1__Request a = PARTITA__V1__REQUEST__INIT;
  Partita__V1__GetState gs = PARTITA__V1__GET_STATE__INIT;
  a.id = 300;   // a two-byte varint inside
  a.op_case = PARTITA__V1__REQUEST__OP_GET_STATE;
  a.get_state = &gs;
  gs.model = "pendulum";
  gs.fields = 127;

  Partita__V1__Request b = PARTITA__V1__REQUEST__INIT;
  Partita__V1__LoadModel lm = PARTITA__V1__LOAD_MODEL__INIT;
  static char text[1000];
  for (size_t i = 0; i < sizeof(text) - 1; i++)
    text[i] = (char)('a' + i % 26);
  b.id = 1ull << 40;
  b.op_case = PARTITA__V1__REQUEST__OP_LOAD_MODEL;
  b.load_model = &lm;
  lm.name = "x";
  lm.source = text;   // body over 128 bytes: a two-byte length prefix

  Partita__V1__Request e = PARTITA__V1__REQUEST__INIT;   // packs to zero bytes
  Partita__V1__Request *msgs[3] = {&a, &b, &e};
  uint8_t *out = malloc(4096);
  size_t n = 0;
  for (int i = 0; i < 3; i++) {
    lens[i] = partita__v1__request__get_packed_size(msgs[i]);
    n += wire_varint_encode(lens[i], out + n);
    partita__v1__request__pack(msgs[i], out + n);
    bodies[i] = malloc(lens[i] + 1);
    memcpy(bodies[i], out + n, lens[i]);
    n += lens[i];
  }
  *len = n;
  return out;
}

// Feed stream in pieces [0,cut) and [cut,len); check the three messages come out intact.
static void check_split(const uint8_t *s, size_t len, size_t cut, size_t lens[3],
                        uint8_t *bodies[3]) {
  wire_frame_decoder d;
  wire_frame_decoder_init(&d, 1 << 20);
  int got = 0;
  size_t pieces[2][2] = {{0, cut}, {cut, len}};
  for (int p = 0; p < 2; p++) {
    wire_frame_status st = wire_frame_feed(&d, s + pieces[p][0], pieces[p][1] - pieces[p][0]);
    CHECK(st == WIRE_FRAME_OK, "feed at cut %zu: %d (%s)", cut, st, d.error);
    const uint8_t *m;
    size_t n;
    while ((st = wire_frame_next(&d, &m, &n)) == WIRE_FRAME_OK) {
      CHECK(got < 3, "too many messages at cut %zu", cut);
      if (got >= 3)
        break;
      CHECK(n == lens[got] && memcmp(m, bodies[got], n) == 0, "message %d differs at cut %zu",
            got, cut);
      if (got < 2) {
        Partita__V1__Request *r = partita__v1__request__unpack(NULL, n, m);
        CHECK(r != NULL, "message %d does not unpack at cut %zu", got, cut);
        if (r)
          CHECK(r->id == (got == 0 ? 300u : 1ull << 40), "wrong id");
        partita__v1__request__free_unpacked(r, NULL);
      }
      got++;
    }
    CHECK(st == WIRE_FRAME_INCOMPLETE, "after messages: %d", st);
  }
  CHECK(got == 3, "got %d messages at cut %zu", got, cut);
  CHECK(wire_frame_pending(&d) == 0, "bytes left over at cut %zu", cut);
  wire_frame_decoder_free(&d);
}

static void test_splits(void) {
  size_t len, lens[3];
  uint8_t *bodies[3];
  uint8_t *s = make_stream(&len, lens, bodies);
  CHECK(lens[2] == 0 && lens[1] > 1000, "stream layout %zu %zu", lens[1], lens[2]);
  for (size_t cut = 0; cut <= len; cut++)
    check_split(s, len, cut, lens, bodies);
  // byte by byte
  wire_frame_decoder d;
  wire_frame_decoder_init(&d, 1 << 20);
  int got = 0;
  for (size_t i = 0; i < len; i++) {
    CHECK(wire_frame_feed(&d, s + i, 1) == WIRE_FRAME_OK, "feed byte %zu", i);
    const uint8_t *m;
    size_t n;
    while (wire_frame_next(&d, &m, &n) == WIRE_FRAME_OK) {
      CHECK(got < 3 && n == lens[got] && memcmp(m, bodies[got], n) == 0, "byte-wise %d", got);
      got++;
    }
  }
  CHECK(got == 3, "byte-wise got %d", got);
  wire_frame_decoder_free(&d);
  free(s);
  for (int i = 0; i < 3; i++)
    free(bodies[i]);
}

static void test_oversize(void) {
  // A header announcing 1 GiB against a 1 MiB limit: refused at once, buffer not grown.
  uint8_t hdr[WIRE_FRAME_HEADER_MAX];
  size_t h = wire_varint_encode(1u << 30, hdr);
  wire_frame_decoder d;
  wire_frame_decoder_init(&d, 1 << 20);
  CHECK(wire_frame_feed(&d, hdr, h) == WIRE_FRAME_ERROR, "oversize header accepted");
  CHECK(d.cap <= 4096, "buffer grew to %zu for a refused frame", d.cap);
  CHECK(strstr(d.error, "too large") != NULL, "error text: %s", d.error);
  const uint8_t *m;
  size_t n;
  CHECK(wire_frame_next(&d, &m, &n) == WIRE_FRAME_ERROR, "error is not sticky");
  wire_frame_decoder_free(&d);

  // The header split over two feeds: still refused at the byte that completes it.
  wire_frame_decoder_init(&d, 1 << 20);
  CHECK(wire_frame_feed(&d, hdr, 2) == WIRE_FRAME_OK, "partial header refused");
  CHECK(wire_frame_feed(&d, hdr + 2, h - 2) == WIRE_FRAME_ERROR, "split oversize accepted");
  wire_frame_decoder_free(&d);

  // Exactly the limit is accepted; one more byte is not.
  for (int extra = 0; extra < 2; extra++) {
    size_t lim = 5000;
    uint8_t *buf = calloc(1, lim + 16);
    size_t k = wire_varint_encode(lim + (size_t)extra, buf);
    wire_frame_decoder_init(&d, lim);
    wire_frame_status st = wire_frame_feed(&d, buf, k + lim + (size_t)extra);
    CHECK(st == (extra ? WIRE_FRAME_ERROR : WIRE_FRAME_OK), "limit+%d: %d", extra, st);
    if (!extra)
      CHECK(wire_frame_next(&d, &m, &n) == WIRE_FRAME_OK && n == lim, "frame at the limit");
    wire_frame_decoder_free(&d);
    free(buf);
  }
}

static void test_garbage(void) {
  wire_frame_decoder d;
  const uint8_t *m;
  size_t n;
  // eleven continuation bytes: no varint is that long
  uint8_t ff[11];
  memset(ff, 0xff, sizeof(ff));
  wire_frame_decoder_init(&d, 1 << 20);
  CHECK(wire_frame_feed(&d, ff, sizeof(ff)) == WIRE_FRAME_ERROR, "overlong varint accepted");
  wire_frame_decoder_free(&d);
  // a tenth byte carrying more than the 64th bit
  uint8_t big[10] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02};
  uint64_t v;
  CHECK(wire_varint_decode(big, 10, &v) == -1, "65-bit varint accepted");
  // text (an HTTP request) frames as a length of 71 then fails to parse as a Request
  const char *http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  wire_frame_decoder_init(&d, 1 << 20);
  CHECK(wire_frame_feed(&d, http, strlen(http)) == WIRE_FRAME_OK, "text framing");
  CHECK(wire_frame_next(&d, &m, &n) == WIRE_FRAME_OK && n == 'G', "'G' as a length");
  Partita__V1__Request *r = partita__v1__request__unpack(NULL, n, m);
  CHECK(r == NULL, "HTTP text parsed as a Request");
  if (r)
    partita__v1__request__free_unpacked(r, NULL);
  wire_frame_decoder_free(&d);
  // varint round trip at the edges
  uint64_t vals[] = {0, 1, 127, 128, 16383, 16384, (1ull << 32) - 1, 1ull << 63, ~0ull};
  for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
    uint8_t b[WIRE_FRAME_HEADER_MAX];
    size_t k = wire_varint_encode(vals[i], b);
    CHECK(wire_varint_decode(b, k, &v) == (int)k && v == vals[i], "varint %llu",
          (unsigned long long)vals[i]);
    CHECK(k == 0 || wire_varint_decode(b, k - 1, &v) == 0 || k == 1, "short varint");
  }
}

// Random bytes in random-sized chunks, and mutated valid streams: any status is fine, a crash
// or a sanitizer report is not. Every message returned must lie inside the limit.
static void test_fuzz(void) {
  size_t len, lens[3];
  uint8_t *bodies[3];
  uint8_t *valid = make_stream(&len, lens, bodies);
  uint8_t buf[4096];
  for (int round = 0; round < 3000; round++) {
    size_t n = next_rand() % sizeof(buf);
    if (round % 2) {
      for (size_t i = 0; i < n; i++)
        buf[i] = (uint8_t)next_rand();
    } else {
      n = len;
      memcpy(buf, valid, len);
      for (int k = 0; k < 4; k++)
        buf[next_rand() % len] = (uint8_t)next_rand();
    }
    wire_frame_decoder d;
    size_t limit = 64 + next_rand() % 2048;
    wire_frame_decoder_init(&d, limit);
    size_t off = 0;
    while (off < n) {
      size_t chunk = 1 + next_rand() % 300;
      if (chunk > n - off)
        chunk = n - off;
      if (wire_frame_feed(&d, buf + off, chunk) == WIRE_FRAME_ERROR)
        break;
      off += chunk;
      const uint8_t *m;
      size_t mlen;
      wire_frame_status st;
      while ((st = wire_frame_next(&d, &m, &mlen)) == WIRE_FRAME_OK) {
        CHECK(mlen <= limit, "message over the limit");
        Partita__V1__Request *r = partita__v1__request__unpack(NULL, mlen, m);
        if (r)
          partita__v1__request__free_unpacked(r, NULL);
      }
      if (st == WIRE_FRAME_ERROR)
        break;
    }
    CHECK(d.cap <= 2 * (limit + 300 + 2 * WIRE_FRAME_HEADER_MAX) + 4096, "buffer %zu", d.cap);
    wire_frame_decoder_free(&d);
  }
  free(valid);
  for (int i = 0; i < 3; i++)
    free(bodies[i]);
}

// A decoder that has been fed nothing has no buffer yet: asking it for a message is
// INCOMPLETE, with no pointer arithmetic on the missing buffer (UBSan reported an offset
// applied to a null pointer here), and so is feeding it zero bytes.
static void test_empty(void) {
  wire_frame_decoder d;
  wire_frame_decoder_init(&d, 1 << 20);
  const uint8_t *m = NULL;
  size_t n = 0;
  CHECK(wire_frame_next(&d, &m, &n) == WIRE_FRAME_INCOMPLETE, "empty decoder");
  CHECK(wire_frame_feed(&d, "", 0) != WIRE_FRAME_ERROR, "zero bytes fed");
  CHECK(wire_frame_next(&d, &m, &n) == WIRE_FRAME_INCOMPLETE, "still empty");
  wire_frame_decoder_free(&d);
}

// Clients within every limit are not cut off: a 64 KiB read of many small frames against a
// 1 KiB frame limit, and a frame just under the limit whose last read also carries pipelined
// requests, both decode in full (they used to fail with "input not drained").
static void feed_and_count(wire_frame_decoder *d, const uint8_t *data, size_t n, size_t chunk,
                            size_t *count, size_t *bytes) {
  for (size_t off = 0; off < n; off += chunk) {
    size_t k = n - off < chunk ? n - off : chunk;
    CHECK(wire_frame_feed(d, data + off, k) == WIRE_FRAME_OK, "feed at %zu: %s", off, d->error);
    const uint8_t *m;
    size_t len;
    while (wire_frame_next(d, &m, &len) == WIRE_FRAME_OK) {
      (*count)++;
      *bytes += len;
    }
  }
}

static void test_pipelined(void) {
  enum { SMALL = 100, NSMALL = WIRE_FRAME_READ_MAX / (SMALL + 1) };
  uint8_t *stream = malloc((size_t)NSMALL * (SMALL + 1));
  for (int i = 0; i < NSMALL; i++) {
    stream[i * (SMALL + 1)] = SMALL;   // one-byte varint
    memset(stream + i * (SMALL + 1) + 1, i & 0xff, SMALL);
  }
  wire_frame_decoder d;
  wire_frame_decoder_init(&d, 1024);
  size_t count = 0, bytes = 0;
  feed_and_count(&d, stream, (size_t)NSMALL * (SMALL + 1), WIRE_FRAME_READ_MAX, &count, &bytes);
  CHECK(count == NSMALL && bytes == (size_t)NSMALL * SMALL, "%zu of %d small frames", count,
        NSMALL);
  wire_frame_decoder_free(&d);
  free(stream);

  size_t big = WIRE_FRAME_MAX_DEFAULT - 64, n = 0;
  uint8_t *s2 = malloc(big + 16 + 20 * (SMALL + 1));
  n += wire_varint_encode(big, s2);
  memset(s2 + n, 7, big);
  n += big;
  for (int i = 0; i < 20; i++) {
    s2[n++] = SMALL;
    memset(s2 + n, 9, SMALL);
    n += SMALL;
  }
  wire_frame_decoder_init(&d, WIRE_FRAME_MAX_DEFAULT);
  count = bytes = 0;
  feed_and_count(&d, s2, n, WIRE_FRAME_READ_MAX, &count, &bytes);
  CHECK(count == 21 && bytes == big + 20 * SMALL, "big frame then pipelined: %zu frames",
        count);
  wire_frame_decoder_free(&d);
  free(s2);
}

// The keyed digest of a UDP input frame against one computed independently (Python's hmac
// and struct, from the byte layout in docs/protocol.md).
static void test_input_digest(void) {
  Partita__V1__InputFrame f = PARTITA__V1__INPUT_FRAME__INIT;
  double values[] = {1.5, -2.25};
  uint32_t index[] = {3, 0};
  f.model = (char *)"arm";
  f.session = 0x0123456789abcdefULL;
  f.sequence = 42;
  f.n_values = 2;
  f.values = values;
  f.n_index = 2;
  f.index = index;
  uint8_t d[32];
  CHECK(ptc_input_digest(&f, "s3cret", d) == PTC_OK, "digest computed");
  char hex[65];
  for (int i = 0; i < 32; i++)
    snprintf(hex + 2 * i, 3, "%02x", d[i]);
  CHECK(strcmp(hex, "1c155778745b9db1e15fbbc70c19acb3862c1252100ccb65826eb075b737b329") == 0,
        "HMAC-SHA256: %s", hex);
  uint8_t w[32];   // the function partitad checks with, which ptc_input_digest wraps
  CHECK(wire_input_digest("s3cret", f.model, f.session, f.sequence, values, 2, index, 2, w) ==
                0 && memcmp(w, d, 32) == 0,
        "wire_input_digest differs");
}

// The hand-written envelope of a shared state frame decodes, with protobuf-c, to the frame
// with its per-subscriber fields, for one- and multi-byte varints and with or without drops.
static void test_state_envelope(void) {
  Partita__V1__StateFrame f = PARTITA__V1__STATE_FRAME__INIT;
  double q[3] = {0.5, -1.25, 3.0};
  f.model = (char *)"arm";
  f.time = 1.5;
  f.step = 1500;
  f.n_coordinates = 3;
  f.coordinates = q;
  size_t len = partita__v1__state_frame__get_packed_size(&f);
  uint8_t body[256];
  partita__v1__state_frame__pack(&f, body);
  const uint64_t subs[] = {1, 300, 1ull << 40}, seqs[] = {7, 129, 1ull << 33},
                 drops[] = {0, 1, 70000};
  for (int k = 0; k < 3; k++) {
    wire_envelope e;
    wire_state_envelope(&e, len, subs[k], seqs[k], drops[k]);
    uint8_t msg[512];
    memcpy(msg, e.head, e.nhead);
    memcpy(msg + e.nhead, body, len);
    memcpy(msg + e.nhead + len, e.tail, e.ntail);
    uint64_t mlen;
    int used = wire_varint_decode(msg, e.nhead, &mlen);
    CHECK(used > 0 && mlen == e.nhead - (size_t)used + len + e.ntail, "length prefix %d", k);
    Partita__V1__ServerMessage *m =
        partita__v1__server_message__unpack(NULL, (size_t)mlen, msg + used);
    CHECK(m && m->msg_case == PARTITA__V1__SERVER_MESSAGE__MSG_EVENT &&
              m->event->kind_case == PARTITA__V1__EVENT__KIND_FRAME, "decodes as a frame %d", k);
    if (m && m->event && m->event->frame) {
      const Partita__V1__StateFrame *g = m->event->frame;
      CHECK(g->subscription == subs[k] && g->sequence == seqs[k] && g->dropped == drops[k],
            "per-subscriber fields %d", k);
      CHECK(!strcmp(g->model, "arm") && g->step == 1500 && g->n_coordinates == 3 &&
                g->coordinates[1] == -1.25, "the frame itself %d", k);
    }
    partita__v1__server_message__free_unpacked(m, NULL);
  }
}

int main(void) {
  test_input_digest();
  test_state_envelope();
  test_empty();
  test_pipelined();
  test_splits();
  test_oversize();
  test_garbage();
  test_fuzz();
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("frame codec: all checks passed\n");
  return 0;
}
