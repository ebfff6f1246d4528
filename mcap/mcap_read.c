// mcap_read.c: the MCAP reader (mcap.h). One pass over the data section from the start: every
// record is bounds-checked before it is looked at, chunks are CRC-checked and their records
// parsed, message indexes are checked against the messages of the chunk before them. After
// Data End its CRC is checked, then the Footer, the summary CRC, and every Chunk Index,
// Attachment Index, Metadata Index, Statistics and Summary Offset record against what the pass
// found. A file that ends early, or a record that does not check, stops the pass: what came
// before it is kept and `note` says where and why.
#include "mcap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

typedef struct {
  const uint8_t *p;
  size_t n, at;
  int bad;     // read past the end
} cur;

typedef struct {
  uint64_t offset, length;     // the chunk record in the file
  uint64_t start, end;         // log_time range (as written)
  uint64_t records_at;         // file offset of its records
  size_t first_msg, nmsg;      // its messages in f->msgs
  uint64_t rlen;               // length of its records
  uint16_t idx_id[MCAP_MAX_CHANNELS];   // the message indexes after it: channel id and
  uint64_t idx_at[MCAP_MAX_CHANNELS];   // file offset
  uint64_t idx_end;            // offset after its message indexes
  int nidx;
} chunk_info;

typedef struct {
  chunk_info *chunks;
  int cap_chunks;
  size_t cap_msgs;
  uint64_t *msg_off;           // (nmsg) offset of each message in its chunk's records
  uint64_t *att_off;           // (nattachment) file offset of each attachment record
  uint64_t *meta_off;
  int scap, ccap;              // capacities of f->schemas, f->channels
} reader_priv;

uint32_t mcap_crc32(uint32_t crc, const void *p, uint64_t n) {
  const Bytef *b = p;
  uLong c = crc;
  while (n > 0) {
    uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
    c = crc32(c, b, k);
    b += k;
    n -= k;
  }
  return (uint32_t)c;
}

static uint32_t crc_of(const uint8_t *p, uint64_t n) { return mcap_crc32(0, p, n); }

static uint64_t get_uint(cur *c, int bytes) {
  if (c->bad || c->n - c->at < (size_t)bytes) {
    c->bad = 1;
    return 0;
  }
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t)c->p[c->at + (size_t)i] << (8 * i);
  c->at += (size_t)bytes;
  return v;
}

static uint64_t get_u8(cur *c) { return get_uint(c, 1); }
static uint64_t get_u16(cur *c) { return get_uint(c, 2); }
static uint64_t get_u32(cur *c) { return get_uint(c, 4); }
static uint64_t get_u64(cur *c) { return get_uint(c, 8); }

static const uint8_t *get_bytes(cur *c, uint64_t n) {
  if (c->bad || c->n - c->at < n) {
    c->bad = 1;
    return NULL;
  }
  const uint8_t *p = c->p + c->at;
  c->at += (size_t)n;
  return p;
}

// A String as a NUL-terminated copy (NULL: out of bounds or memory).
static char *get_str(cur *c) {
  uint64_t n = get_u32(c);
  const uint8_t *p = get_bytes(c, n);
  if (!p)
    return NULL;
  char *s = malloc((size_t)n + 1);
  if (!s) {
    c->bad = 1;
    return NULL;
  }
  memcpy(s, p, (size_t)n);
  s[n] = '\0';
  return s;
}

// A Map<string, string> into *kv (2 n strings).
static int get_map_str(cur *c, char ***kv, int *n) {
  uint64_t len = get_u32(c);
  const uint8_t *p = get_bytes(c, len);
  *kv = NULL;
  *n = 0;
  if (!p)
    return -1;
  cur m = {p, (size_t)len, 0, 0};
  int cap = 0;
  while (m.at < m.n && !m.bad) {
    if (2 * *n + 2 > cap) {
      cap = cap ? 2 * cap : 8;
      char **k = realloc(*kv, sizeof(char *) * (size_t)cap);
      if (!k)
        return -1;
      *kv = k;
    }
    char *key = get_str(&m);
    char *val = get_str(&m);
    if (!key || !val) {
      free(key);
      free(val);
      return -1;
    }
    (*kv)[2 * *n] = key;
    (*kv)[2 * *n + 1] = val;
    (*n)++;
  }
  return m.bad ? -1 : 0;
}

static void free_strs(char **kv, int n) {
  for (int i = 0; i < n; i++)
    free(kv[i]);
  free(kv);
}

static mcap_read_status stop(mcap_file *f, mcap_read_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mcap_read_status stop(mcap_file *f, mcap_read_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->note, sizeof(f->note), fmt, ap);
  va_end(ap);
  f->status = st;
  return st;
}

static int grow(void **p, int *cap, int n, size_t esize) {
  if (n < *cap)
    return 0;
  int c = *cap ? 2 * *cap : 16;
  void *q = realloc(*p, (size_t)c * esize);
  if (!q)
    return -1;
  memset((char *)q + (size_t)*cap * esize, 0, (size_t)(c - *cap) * esize);
  *p = q;
  *cap = c;
  return 0;
}

static int add_schema(mcap_file *f, cur *c, int *cap) {
  mcap_schema s = {0};
  s.id = (uint16_t)get_u16(c);
  s.name = get_str(c);
  s.encoding = get_str(c);
  uint64_t len = get_u32(c);
  s.data = get_bytes(c, len);
  s.len = (size_t)len;
  if (c->bad || s.id == 0 || mcap_find_schema(f, s.id) ||
      grow((void **)&f->schemas, cap, f->nschema, sizeof(s))) {
    int dup = !c->bad && s.id && mcap_find_schema(f, s.id);
    free(s.name);
    free(s.encoding);
    return dup ? 0 : -1;   // a repeated schema (same id) is allowed
  }
  f->schemas[f->nschema++] = s;
  return 0;
}

static int add_channel(mcap_file *f, cur *c, int *cap) {
  mcap_channel ch = {0};
  ch.id = (uint16_t)get_u16(c);
  ch.schema_id = (uint16_t)get_u16(c);
  ch.topic = get_str(c);
  ch.encoding = get_str(c);
  int bad = get_map_str(c, &ch.meta, &ch.nmeta) < 0 || c->bad;
  int dup = !bad && mcap_find_channel(f, ch.id);
  if (bad || dup || (ch.schema_id && !mcap_find_schema(f, ch.schema_id)) ||
      grow((void **)&f->channels, cap, f->nchannel, sizeof(ch))) {
    free(ch.topic);
    free(ch.encoding);
    free_strs(ch.meta, 2 * ch.nmeta);
    return dup ? 0 : -1;
  }
  f->channels[f->nchannel++] = ch;
  return 0;
}

static int add_message(mcap_file *f, reader_priv *pv, cur *c, uint64_t offset_in_chunk) {
  mcap_message m;
  m.channel_id = (uint16_t)get_u16(c);
  m.sequence = (uint32_t)get_u32(c);
  m.log_time = get_u64(c);
  m.publish_time = get_u64(c);
  if (c->bad || c->at > c->n)
    return -1;
  m.data = c->p + c->at;
  m.len = c->n - c->at;
  c->at = c->n;
  mcap_channel *ch = (mcap_channel *)mcap_find_channel(f, m.channel_id);
  if (!ch)
    return -2;
  if (f->nmsg == pv->cap_msgs) {
    size_t cap = pv->cap_msgs ? 2 * pv->cap_msgs : 1024;
    mcap_message *q = realloc(f->msgs, cap * sizeof(*q));
    if (!q)
      return -1;
    f->msgs = q;
    uint64_t *o = realloc(pv->msg_off, cap * sizeof(*o));
    if (!o)
      return -1;
    pv->msg_off = o;
    pv->cap_msgs = cap;
  }
  pv->msg_off[f->nmsg] = offset_in_chunk;
  f->msgs[f->nmsg++] = m;
  ch->count++;
  return 0;
}

// The records of a chunk: schemas, channels, messages; others are skipped.
static const char *read_chunk_records(mcap_file *f, reader_priv *pv, const uint8_t *p,
                                      size_t n, int *scap, int *ccap) {
  cur c = {p, n, 0, 0};
  while (c.at < c.n) {
    uint64_t at = c.at;
    int op = (int)get_u8(&c);
    uint64_t len = get_u64(&c);
    const uint8_t *body = get_bytes(&c, len);
    if (!body)
      return "a record runs past the end of its chunk";
    cur r = {body, (size_t)len, 0, 0};
    int rc = 0;
    if (op == MCAP_OP_SCHEMA)
      rc = add_schema(f, &r, scap);
    else if (op == MCAP_OP_CHANNEL)
      rc = add_channel(f, &r, ccap);
    else if (op == MCAP_OP_MESSAGE)
      rc = add_message(f, pv, &r, at);
    if (rc == -2)
      return "a message names a channel not defined before it";
    if (rc < 0)
      return "a malformed schema, channel or message record";
  }
  return NULL;
}

// Checks a Message Index record against the messages of the chunk `ch`.
static const char *check_message_index(const mcap_file *f, const reader_priv *pv,
                                       const chunk_info *ch, cur *c) {
  uint16_t id = (uint16_t)get_u16(c);
  uint64_t len = get_u32(c);
  if (c->bad || len % 16 || c->n - c->at < len)
    return "malformed message index";
  size_t n = (size_t)(len / 16), found = 0;
  for (size_t k = 0; k < n; k++) {
    uint64_t t = get_u64(c), off = get_u64(c);
    // the chunk's messages are in offset order: binary search
    size_t lo = ch->first_msg, hi = ch->first_msg + ch->nmsg;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (pv->msg_off[mid] < off)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == ch->first_msg + ch->nmsg || pv->msg_off[lo] != off)
      return "message index points at no message";
    if (f->msgs[lo].channel_id != id || f->msgs[lo].log_time != t)
      return "message index disagrees with the message (channel or log time)";
  }
  for (size_t k = ch->first_msg; k < ch->first_msg + ch->nmsg; k++)
    found += f->msgs[k].channel_id == id;
  if (found != n)
    return "message index does not list every message of its channel";
  return NULL;
}

// A Chunk Index of the summary against the chunk it indexes (the nci-th) and the message
// indexes found after it.
static const char *check_chunk_index(const chunk_info *ch, cur *r) {
  uint64_t s = get_u64(r), e = get_u64(r), o = get_u64(r), l = get_u64(r);
  if (s != ch->start || e != ch->end || o != ch->offset || l != ch->length)
    return "chunk index disagrees with its chunk";
  uint64_t mlen = get_u32(r);
  if (r->bad || mlen % 10 || r->n - r->at < mlen)
    return "malformed chunk index";
  int n = (int)(mlen / 10);
  if (n != ch->nidx)
    return "chunk index lists a different number of message indexes";
  for (int k = 0; k < n; k++) {
    uint64_t id = get_u16(r), io = get_u64(r);
    int j = 0;
    while (j < ch->nidx && ch->idx_id[j] != id)
      j++;
    if (j == ch->nidx || ch->idx_at[j] != io)
      return "chunk index points at no message index";
  }
  if (get_u64(r) != ch->idx_end - (ch->offset + ch->length))
    return "chunk index: wrong message index length";
  free(get_str(r));   // compression (checked in the chunk itself)
  uint64_t csize = get_u64(r), usize = get_u64(r);
  if (r->bad)
    return "malformed chunk index";
  if (csize != ch->rlen || usize != ch->rlen)
    return "chunk index: sizes disagree with the chunk";
  return NULL;
}

// The Statistics record against the records the pass found.
static const char *check_statistics(const mcap_file *f, cur *r) {
  uint64_t nmsg = get_u64(r);
  uint64_t nsch = get_u16(r), nch = get_u32(r), natt = get_u32(r), nmeta = get_u32(r);
  uint64_t nchunk = get_u32(r);
  get_u64(r);
  get_u64(r);
  if (r->bad || nmsg != f->nmsg || nsch != (uint64_t)f->nschema ||
      nch != (uint64_t)f->nchannel || natt != (uint64_t)f->nattachment ||
      nmeta != (uint64_t)f->nmetadata || nchunk != (uint64_t)f->nchunk)
    return "statistics disagree with the records found";
  uint64_t mlen = get_u32(r);
  for (uint64_t k = 0; k + 10 <= mlen && !r->bad; k += 10) {
    const mcap_channel *ch = mcap_find_channel(f, (uint16_t)get_u16(r));
    if (!ch || get_u64(r) != ch->count)
      return "statistics: a channel's message count disagrees";
  }
  return NULL;
}

// The Footer before the closing magic: where the summary starts (*sum_start, 0 for none) and
// ends (*footer_at).
static const char *read_footer(const mcap_file *f, uint64_t data_end, uint64_t *sum_start,
                               uint64_t *footer_at) {
  if (f->size < data_end + 29 + MCAP_MAGIC_LEN)
    return "no footer after Data End";
  const uint8_t *tail = f->bytes + f->size - MCAP_MAGIC_LEN;
  if (memcmp(tail, MCAP_MAGIC, MCAP_MAGIC_LEN) != 0)
    return "no closing magic";
  cur ft = {f->bytes + f->size - MCAP_MAGIC_LEN - 29, 29, 0, 0};
  if (get_u8(&ft) != MCAP_OP_FOOTER || get_u64(&ft) != 20)
    return "no footer record before the closing magic";
  *sum_start = get_u64(&ft);
  uint64_t off_start = get_u64(&ft);
  uint32_t sum_crc = (uint32_t)get_u32(&ft);
  *footer_at = f->size - MCAP_MAGIC_LEN - 29;
  if (*sum_start == 0)
    return f->nchunk > 0 ? "chunks but no summary (no chunk index)" : NULL;
  if (*sum_start != data_end ||
      (off_start && (off_start < *sum_start || off_start > *footer_at)))
    return "footer offsets point outside the summary";
  if (sum_crc && crc_of(f->bytes + *sum_start, *footer_at + 1 + 8 + 16 - *sum_start) != sum_crc)
    return "summary CRC mismatch";
  return NULL;
}

// The summary section and footer of a file whose Data End ended at `data_end`.
static const char *check_summary(mcap_file *f, reader_priv *pv, uint64_t data_end) {
  uint64_t sum_start = 0, footer_at = 0;
  const char *why = read_footer(f, data_end, &sum_start, &footer_at);
  if (why || sum_start == 0)
    return why;
  cur c = {f->bytes, (size_t)footer_at, (size_t)sum_start, 0};
  int nci = 0, nai = 0, nmi = 0;
  while (c.at < c.n) {
    int op = (int)get_u8(&c);
    uint64_t len = get_u64(&c);
    const uint8_t *body = get_bytes(&c, len);
    if (!body)
      return "a summary record runs past the footer";
    cur r = {body, (size_t)len, 0, 0};
    if (op == MCAP_OP_CHUNK_INDEX) {
      if (nci >= f->nchunk)
        return "more chunk indexes than chunks";
      why = check_chunk_index(&pv->chunks[nci++], &r);
    } else if (op == MCAP_OP_SCHEMA || op == MCAP_OP_CHANNEL) {
      // copies of the data section's, or the only place of one no message used
      int rc = op == MCAP_OP_SCHEMA ? add_schema(f, &r, &pv->scap)
                                    : add_channel(f, &r, &pv->ccap);
      if (rc < 0)
        why = "malformed schema or channel in the summary";
    } else if (op == MCAP_OP_ATTACHMENT_INDEX) {
      uint64_t o = get_u64(&r);
      if (nai >= f->nattachment || o != pv->att_off[nai])
        why = "attachment index points at no attachment";
      nai++;
    } else if (op == MCAP_OP_METADATA_INDEX) {
      uint64_t o = get_u64(&r);
      if (nmi >= f->nmetadata || o != pv->meta_off[nmi])
        why = "metadata index points at no metadata record";
      nmi++;
    } else if (op == MCAP_OP_STATISTICS) {
      why = check_statistics(f, &r);
    } else if (op == MCAP_OP_SUMMARY_OFFSET) {
      uint64_t gop = get_u8(&r), gs = get_u64(&r), gl = get_u64(&r);
      if (r.bad || gs < sum_start || gs >= footer_at || gl > footer_at - gs ||
          f->bytes[gs] != gop)
        why = "summary offset points at no group of its opcode";
    } else if (op == MCAP_OP_FOOTER) {
      why = "a footer inside the summary";
    }
    if (why)
      return why;
  }
  if (nci != f->nchunk)
    return "a chunk without a chunk index";
  if (nai != f->nattachment || nmi != f->nmetadata)
    return "an attachment or metadata record without its index";
  f->has_summary = 1;
  return NULL;
}

// ---- the pass over the data section ----------------------------------------------------------

// Where the pass is and what it has seen.
typedef struct {
  mcap_file *f;
  reader_priv *pv;
  cur c;                    // the file, from the next record on
  uint64_t at;              // offset of the record being read
  uint32_t crc;             // CRC of the data section up to that record
  int have_header;
  chunk_info *last_chunk;   // the chunk whose message indexes may follow
  int acap, mcap, aocap, mocap;   // capacities of attachments, metadata and their offsets
} pass;

// What a record's handler returns to go on to the next record; otherwise the pass stops with
// the status it returns (stop() has said why).
#define GO_ON 2

// The file ends at a record boundary before Data End.
static mcap_read_status ended(const pass *ps) {
  mcap_file *f = ps->f;
  if (!ps->have_header)
    return stop(f, MCAP_READ_BAD, "the file ends before its Header (%zu bytes)", f->size);
  return stop(f, MCAP_READ_PARTIAL, "the file ends after byte %llu without Data End or "
              "Footer (cut off while recording?): read %d complete chunks, %zu messages",
              (unsigned long long)ps->at, f->nchunk, f->nmsg);
}

// The file ends inside the record of opcode op.
static mcap_read_status cut_off(const pass *ps, int op) {
  mcap_file *f = ps->f;
  if (!ps->have_header)
    return stop(f, MCAP_READ_BAD, "the file ends inside its Header (%zu bytes)", f->size);
  return stop(f, MCAP_READ_PARTIAL, "the file ends inside a record (opcode 0x%02x) at byte "
              "%llu of %zu (cut off while recording?): read %d complete chunks, %zu messages",
              op, (unsigned long long)ps->at, f->size, f->nchunk, f->nmsg);
}

static int on_header(pass *ps, int op, cur *r) {
  mcap_file *f = ps->f;
  if (op != MCAP_OP_HEADER)
    return stop(f, MCAP_READ_BAD, "the first record is not a Header");
  f->profile = get_str(r);
  f->library = get_str(r);
  if (r->bad)
    return stop(f, MCAP_READ_BAD, "malformed Header");
  ps->have_header = 1;
  return GO_ON;
}

// Data End: the data section's CRC, then the summary and footer (check_summary).
static int on_data_end(pass *ps, cur *r) {
  mcap_file *f = ps->f;
  uint32_t want = (uint32_t)get_u32(r);
  if (r->bad)
    return stop(f, MCAP_READ_PARTIAL, "malformed Data End at byte %llu",
                (unsigned long long)ps->at);
  if (want && want != ps->crc)
    return stop(f, MCAP_READ_PARTIAL, "data section CRC mismatch (Data End at byte %llu)",
                (unsigned long long)ps->at);
  f->valid_end = ps->c.at;
  const char *why = check_summary(f, ps->pv, ps->c.at);
  if (why)
    return stop(f, MCAP_READ_PARTIAL, "data section complete, but its summary is not "
                "usable: %s", why);
  f->status = MCAP_READ_COMPLETE;
  return MCAP_READ_COMPLETE;
}

static int on_schema_or_channel(pass *ps, int op, cur *r) {
  mcap_file *f = ps->f;
  int rc = op == MCAP_OP_SCHEMA ? add_schema(f, r, &ps->pv->scap)
                               : add_channel(f, r, &ps->pv->ccap);
  if (rc < 0)
    return stop(f, MCAP_READ_PARTIAL, "malformed %s record at byte %llu",
                op == MCAP_OP_SCHEMA ? "Schema" : "Channel", (unsigned long long)ps->at);
  return GO_ON;
}

static int on_message(pass *ps, cur *r) {
  if (add_message(ps->f, ps->pv, r, 0) < 0)
    return stop(ps->f, MCAP_READ_PARTIAL, "bad Message record at byte %llu",
                (unsigned long long)ps->at);
  return GO_ON;
}

// A Chunk: uncompressed only, its CRC checked, its records parsed (all or nothing), and noted
// for the message indexes after it and the summary's chunk index.
static int on_chunk(pass *ps, cur *r) {
  mcap_file *f = ps->f;
  reader_priv *pv = ps->pv;
  const unsigned long long at = ps->at;
  uint64_t s = get_u64(r), e = get_u64(r), usize = get_u64(r);
  uint32_t want = (uint32_t)get_u32(r);
  char *comp = get_str(r);
  uint64_t rlen = get_u64(r);
  const uint8_t *recs = get_bytes(r, rlen);
  int empty_comp = comp && comp[0] == '\0';
  if (!recs || !comp) {
    free(comp);
    return stop(f, MCAP_READ_PARTIAL, "malformed Chunk at byte %llu", at);
  }
  if (!empty_comp) {
    stop(f, MCAP_READ_PARTIAL, "chunk at byte %llu is compressed with '%s', which this "
         "reader does not support", at, comp);
    free(comp);
    return MCAP_READ_PARTIAL;
  }
  free(comp);
  if (usize != rlen)
    return stop(f, MCAP_READ_PARTIAL, "chunk at byte %llu: wrong uncompressed size", at);
  if (want && crc_of(recs, rlen) != want)
    return stop(f, MCAP_READ_PARTIAL, "chunk at byte %llu: CRC mismatch (corrupt)", at);
  size_t first = f->nmsg;
  const char *why = read_chunk_records(f, pv, recs, (size_t)rlen, &pv->scap, &pv->ccap);
  if (why) {
    f->nmsg = first;   // nothing of a chunk that does not parse
    return stop(f, MCAP_READ_PARTIAL, "chunk at byte %llu: %s", at, why);
  }
  if (grow((void **)&pv->chunks, &pv->cap_chunks, f->nchunk, sizeof(chunk_info)))
    return stop(f, MCAP_READ_PARTIAL, "out of memory");
  chunk_info *ch = &pv->chunks[f->nchunk++];
  memset(ch, 0, sizeof(*ch));
  ch->offset = ps->at;
  ch->length = ps->c.at - ps->at;
  ch->start = s;
  ch->end = e;
  ch->records_at = (uint64_t)(recs - f->bytes);
  ch->rlen = rlen;
  ch->first_msg = first;
  ch->nmsg = f->nmsg - first;
  ch->idx_end = ps->c.at;
  ps->last_chunk = ch;
  return GO_ON;
}

// A Message Index: right after its chunk (or another of its indexes), checked against it.
static int on_message_index(pass *ps, cur *r) {
  chunk_info *ch = ps->last_chunk;
  const unsigned long long at = ps->at;
  if (!ch || ch->idx_end != ps->at)
    return stop(ps->f, MCAP_READ_PARTIAL, "message index at byte %llu does not follow a chunk",
                at);
  uint16_t id = (uint16_t)(r->n >= 2 ? r->p[0] | r->p[1] << 8 : 0);
  const char *why = ch->nidx == MCAP_MAX_CHANNELS
                        ? "more message indexes after one chunk than this reader takes"
                        : check_message_index(ps->f, ps->pv, ch, r);
  if (why)
    return stop(ps->f, MCAP_READ_PARTIAL, "message index at byte %llu: %s", at, why);
  ch->idx_id[ch->nidx] = id;
  ch->idx_at[ch->nidx++] = ps->at;
  ch->idx_end = ps->c.at;
  return GO_ON;
}

static int on_attachment(pass *ps, cur *r) {
  mcap_file *f = ps->f;
  mcap_attachment a = {0};
  a.log_time = get_u64(r);
  a.create_time = get_u64(r);
  a.name = get_str(r);
  a.media_type = get_str(r);
  uint64_t n = get_u64(r);
  a.data = get_bytes(r, n);
  a.len = (size_t)n;
  size_t crc_len = r->at;
  uint32_t want = (uint32_t)get_u32(r);
  int bad = r->bad || !a.name || !a.media_type;
  if (!bad && want && crc_of(r->p, crc_len) != want)
    bad = 2;
  if (bad || grow((void **)&f->attachments, &ps->acap, f->nattachment, sizeof(a)) ||
      grow((void **)&ps->pv->att_off, &ps->aocap, f->nattachment, sizeof(uint64_t))) {
    free(a.name);
    free(a.media_type);
    return stop(f, MCAP_READ_PARTIAL, "attachment at byte %llu: %s",
                (unsigned long long)ps->at, bad == 2 ? "CRC mismatch (corrupt)" : "malformed");
  }
  ps->pv->att_off[f->nattachment] = ps->at;
  f->attachments[f->nattachment++] = a;
  return GO_ON;
}

static int on_metadata(pass *ps, cur *r) {
  mcap_file *f = ps->f;
  mcap_metadata m = {0};
  m.name = get_str(r);
  int bad = !m.name || get_map_str(r, &m.kv, &m.npairs) < 0;
  if (bad || grow((void **)&f->metadata, &ps->mcap, f->nmetadata, sizeof(m)) ||
      grow((void **)&ps->pv->meta_off, &ps->mocap, f->nmetadata, sizeof(uint64_t))) {
    free(m.name);
    free_strs(m.kv, 2 * m.npairs);
    return stop(f, MCAP_READ_PARTIAL, "metadata at byte %llu: malformed",
                (unsigned long long)ps->at);
  }
  ps->pv->meta_off[f->nmetadata] = ps->at;
  f->metadata[f->nmetadata++] = m;
  return GO_ON;
}

// One record of the data section after the Header, by its opcode.
static int on_record(pass *ps, int op, cur *r) {
  switch (op) {
  case MCAP_OP_DATA_END:
    return on_data_end(ps, r);
  case MCAP_OP_SCHEMA:
  case MCAP_OP_CHANNEL:
    return on_schema_or_channel(ps, op, r);
  case MCAP_OP_MESSAGE:
    return on_message(ps, r);
  case MCAP_OP_CHUNK:
    return on_chunk(ps, r);
  case MCAP_OP_MESSAGE_INDEX:
    return on_message_index(ps, r);
  case MCAP_OP_ATTACHMENT:
    return on_attachment(ps, r);
  case MCAP_OP_METADATA:
    return on_metadata(ps, r);
  case MCAP_OP_FOOTER:
    return stop(ps->f, MCAP_READ_PARTIAL, "footer at byte %llu without Data End",
                (unsigned long long)ps->at);
  default:   // other opcodes (private, future) are skipped
    return GO_ON;
  }
}

// Every record from the magic on, bounds-checked before it is looked at, until Data End (and
// the summary after it) or the first record that does not check.
static mcap_read_status parse(mcap_file *f) {
  reader_priv *pv = calloc(1, sizeof(*pv));
  if (!pv)
    return stop(f, MCAP_READ_BAD, "out of memory");
  f->priv = pv;
  if (f->size < MCAP_MAGIC_LEN || memcmp(f->bytes, MCAP_MAGIC, MCAP_MAGIC_LEN) != 0)
    return stop(f, MCAP_READ_BAD, "not an MCAP file (no magic)");
  pass ps = {.f = f, .pv = pv, .c = {f->bytes, f->size, MCAP_MAGIC_LEN, 0}};
  ps.crc = crc_of(f->bytes, MCAP_MAGIC_LEN);
  f->valid_end = MCAP_MAGIC_LEN;
  while (1) {
    ps.at = ps.c.at;
    if (ps.at == f->size)
      return ended(&ps);
    int op = (int)get_u8(&ps.c);
    uint64_t len = get_u64(&ps.c);
    const uint8_t *body = get_bytes(&ps.c, len);
    if (!body)
      return cut_off(&ps, op);
    cur r = {body, (size_t)len, 0, 0};
    int st = ps.have_header ? on_record(&ps, op, &r) : on_header(&ps, op, &r);
    if (st != GO_ON)
      return (mcap_read_status)st;
    ps.crc = mcap_crc32(ps.crc, f->bytes + ps.at, ps.c.at - ps.at);
    f->valid_end = ps.c.at;
  }
}

mcap_read_status mcap_read_bytes(const void *data, size_t size, mcap_file *f) {
  memset(f, 0, sizeof(*f));
  f->bytes = malloc(size ? size : 1);
  if (!f->bytes)
    return stop(f, MCAP_READ_BAD, "out of memory (%zu bytes)", size);
  if (size)
    memcpy(f->bytes, data, size);
  f->size = size;
  return parse(f);
}

mcap_read_status mcap_read_file(const char *path, mcap_file *f) {
  memset(f, 0, sizeof(*f));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return stop(f, MCAP_READ_BAD, "cannot open: %s", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return stop(f, MCAP_READ_BAD, "not a regular file");
  }
  size_t size = (size_t)st.st_size;
  if (size == 0) {
    close(fd);
    return mcap_read_bytes("", 0, f);
  }
  void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return stop(f, MCAP_READ_BAD, "cannot map: %s", strerror(errno));
  f->bytes = p;
  f->size = size;
  f->mapped = 1;
  return parse(f);
}

void mcap_file_free(mcap_file *f) {
  for (int i = 0; i < f->nschema; i++) {
    free(f->schemas[i].name);
    free(f->schemas[i].encoding);
  }
  for (int i = 0; i < f->nchannel; i++) {
    free(f->channels[i].topic);
    free(f->channels[i].encoding);
    free_strs(f->channels[i].meta, 2 * f->channels[i].nmeta);
  }
  for (int i = 0; i < f->nattachment; i++) {
    free(f->attachments[i].name);
    free(f->attachments[i].media_type);
  }
  for (int i = 0; i < f->nmetadata; i++) {
    free(f->metadata[i].name);
    free_strs(f->metadata[i].kv, 2 * f->metadata[i].npairs);
  }
  reader_priv *pv = f->priv;
  if (pv) {
    free(pv->chunks);
    free(pv->msg_off);
    free(pv->att_off);
    free(pv->meta_off);
    free(pv);
  }
  free(f->schemas);
  free(f->channels);
  free(f->msgs);
  free(f->attachments);
  free(f->metadata);
  free(f->profile);
  free(f->library);
  if (f->mapped)
    munmap(f->bytes, f->size);
  else
    free(f->bytes);
  memset(f, 0, sizeof(*f));
}

const mcap_channel *mcap_find_channel(const mcap_file *f, uint16_t id) {
  for (int i = 0; i < f->nchannel; i++)
    if (f->channels[i].id == id)
      return &f->channels[i];
  return NULL;
}

const mcap_schema *mcap_find_schema(const mcap_file *f, uint16_t id) {
  for (int i = 0; i < f->nschema; i++)
    if (f->schemas[i].id == id)
      return &f->schemas[i];
  return NULL;
}

const char *mcap_meta_get(char *const *kv, int npairs, const char *key) {
  for (int i = 0; i < npairs; i++)
    if (strcmp(kv[2 * i], key) == 0)
      return kv[2 * i + 1];
  return NULL;
}
