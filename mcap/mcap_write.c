// mcap_write.c: the MCAP writer (mcap.h). Layout of a file it writes:
//   magic Header [Schema|Channel|Attachment|Metadata|Chunk MessageIndex...]* DataEnd
//   Schema* Channel* ChunkIndex* AttachmentIndex* MetadataIndex* Statistics SummaryOffset*
//   Footer magic
// Schemas and channels go to the data section as they are declared (before any chunk that
// uses them) and again to the summary. Chunks are uncompressed.
#include "mcap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_CHUNK (256u << 10)

typedef struct {
  uint8_t *p;
  size_t n, cap;
  int oom;
} mbuf;

typedef struct {
  uint64_t time, offset;   // log_time, offset in the chunk's records
} idx_entry;

typedef struct {
  idx_entry *e;
  size_t n, cap;
} idx_list;

struct mcap_writer {
  FILE *f;
  uint64_t pos;                      // bytes written
  uint32_t data_crc;                 // of every byte before Data End
  int failed;
  char err[256];
  size_t chunk_size;
  int fsync_chunks;
  // the chunk being built
  mbuf chunk;
  uint64_t chunk_start, chunk_end;   // log_time range
  int chunk_has_msg;
  idx_list idx[MCAP_MAX_CHANNELS];   // per channel, this chunk's messages
  // summary material
  mbuf sum_schemas, sum_channels, sum_chunk_idx, sum_att_idx, sum_meta_idx;
  int nschema, nchannel, nattachment, nmetadata, nchunk;
  uint64_t nmsg, msg_start, msg_end;
  uint64_t chan_count[MCAP_MAX_CHANNELS];
};

// ---------------------------------------------------------------------------------------------
// Little-endian serialisation into growing buffers.

static void put(mbuf *b, const void *src, size_t n) {
  if (b->oom)
    return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n)
      cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
      b->oom = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  if (n)
    memcpy(b->p + b->n, src, n);
  b->n += n;
}

static void put_uint(mbuf *b, uint64_t v, int bytes) {
  uint8_t le[8];
  for (int i = 0; i < bytes; i++)
    le[i] = (uint8_t)(v >> (8 * i));
  put(b, le, (size_t)bytes);
}

static void put_u8(mbuf *b, uint64_t v) { put_uint(b, v, 1); }
static void put_u16(mbuf *b, uint64_t v) { put_uint(b, v, 2); }
static void put_u32(mbuf *b, uint64_t v) { put_uint(b, v, 4); }
static void put_u64(mbuf *b, uint64_t v) { put_uint(b, v, 8); }

static void put_str(mbuf *b, const char *s) {
  size_t n = s ? strlen(s) : 0;
  put_u32(b, n);
  put(b, s, n);
}

static void patch_u64(mbuf *b, size_t at, uint64_t v) {
  if (b->oom)
    return;
  for (int i = 0; i < 8; i++)
    b->p[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void patch_u32(mbuf *b, size_t at, uint64_t v) {
  if (b->oom)
    return;
  for (int i = 0; i < 4; i++)
    b->p[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

// A record: opcode, u64 content length (patched by rec_end), content.
static size_t rec_begin(mbuf *b, int op) {
  put_u8(b, (uint64_t)op);
  size_t at = b->n;
  put_u64(b, 0);
  return at;
}

static void rec_end(mbuf *b, size_t at) { patch_u64(b, at, b->n - at - 8); }

// A Map<string, string> of n pairs.
static void put_map_str(mbuf *b, const char *const *kv, int n) {
  size_t at = b->n;
  put_u32(b, 0);
  for (int i = 0; i < 2 * n; i++)
    put_str(b, kv[i]);
  patch_u32(b, at, b->n - at - 4);
}

static void mbuf_free(mbuf *b) {
  free(b->p);
  memset(b, 0, sizeof(*b));
}

// ---------------------------------------------------------------------------------------------

static int fail(mcap_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(mcap_writer *w, const char *fmt, ...) {
  if (!w->failed) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, sizeof(w->err), fmt, ap);
    va_end(ap);
  }
  w->failed = 1;
  return -1;
}

// Writes bytes to the file; those of the data section go into its CRC.
static int emit(mcap_writer *w, const void *p, size_t n, int data_section) {
  if (w->failed)
    return -1;
  if (n && fwrite(p, 1, n, w->f) != n)
    return fail(w, "write failed: %s", strerror(errno));
  if (data_section)
    w->data_crc = mcap_crc32(w->data_crc, p, n);
  w->pos += n;
  return 0;
}

static int emit_buf(mcap_writer *w, mbuf *b, int data_section) {
  if (b->oom)
    return fail(w, "out of memory");
  return emit(w, b->p, b->n, data_section);
}

mcap_writer *mcap_writer_open(const char *path, const mcap_writer_opts *o, char *err,
                              size_t errlen) {
  mcap_writer *w = calloc(1, sizeof(*w));
  if (!w) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  w->f = fopen(path, "wb");
  if (!w->f) {
    snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
    free(w);
    return NULL;
  }
  w->data_crc = 0;
  w->chunk_size = o && o->chunk_size ? o->chunk_size : DEFAULT_CHUNK;
  w->fsync_chunks = o ? o->fsync_chunks : 0;
  mbuf b = {0};
  put(&b, MCAP_MAGIC, MCAP_MAGIC_LEN);
  size_t at = rec_begin(&b, MCAP_OP_HEADER);
  put_str(&b, o && o->profile ? o->profile : "");
  put_str(&b, o && o->library ? o->library : "partita");
  rec_end(&b, at);
  emit_buf(w, &b, 1);
  mbuf_free(&b);
  if (w->failed) {
    snprintf(err, errlen, "%s: %s", path, w->err);
    fclose(w->f);
    free(w);
    return NULL;
  }
  return w;
}

const char *mcap_writer_error(const mcap_writer *w) { return w->err; }
uint64_t mcap_writer_bytes(const mcap_writer *w) { return w->pos; }
uint64_t mcap_writer_messages(const mcap_writer *w) { return w->nmsg; }

int mcap_writer_schema(mcap_writer *w, const char *name, const char *encoding,
                       const void *data, size_t len) {
  if (w->failed)
    return -1;
  if (w->nschema + 1 >= MCAP_MAX_SCHEMAS)
    return fail(w, "too many schemas (at most %d)", MCAP_MAX_SCHEMAS - 1);
  int id = ++w->nschema;
  mbuf b = {0};
  size_t at = rec_begin(&b, MCAP_OP_SCHEMA);
  put_u16(&b, (uint64_t)id);
  put_str(&b, name);
  put_str(&b, encoding);
  put_u32(&b, len);
  put(&b, data, len);
  rec_end(&b, at);
  put(&w->sum_schemas, b.p, b.n);
  emit_buf(w, &b, 1);
  mbuf_free(&b);
  return w->failed ? -1 : id;
}

int mcap_writer_channel(mcap_writer *w, int schema_id, const char *topic,
                        const char *message_encoding, const char *const *meta, int nmeta) {
  if (w->failed)
    return -1;
  if (schema_id < 0 || schema_id > w->nschema)
    return fail(w, "channel '%s': unknown schema %d", topic, schema_id);
  if (w->nchannel + 1 >= MCAP_MAX_CHANNELS)
    return fail(w, "too many channels (at most %d)", MCAP_MAX_CHANNELS - 1);
  int id = ++w->nchannel;
  mbuf b = {0};
  size_t at = rec_begin(&b, MCAP_OP_CHANNEL);
  put_u16(&b, (uint64_t)id);
  put_u16(&b, (uint64_t)schema_id);
  put_str(&b, topic);
  put_str(&b, message_encoding);
  put_map_str(&b, meta, nmeta);
  rec_end(&b, at);
  put(&w->sum_channels, b.p, b.n);
  emit_buf(w, &b, 1);
  mbuf_free(&b);
  return w->failed ? -1 : id;
}

int mcap_writer_message(mcap_writer *w, int channel_id, uint32_t sequence, uint64_t log_time,
                        uint64_t publish_time, const void *data, size_t len) {
  if (w->failed)
    return -1;
  if (channel_id < 1 || channel_id > w->nchannel)
    return fail(w, "message on unknown channel %d", channel_id);
  idx_list *l = &w->idx[channel_id];
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    idx_entry *e = realloc(l->e, cap * sizeof(*e));
    if (!e)
      return fail(w, "out of memory");
    l->e = e;
    l->cap = cap;
  }
  l->e[l->n++] = (idx_entry){log_time, w->chunk.n};
  size_t at = rec_begin(&w->chunk, MCAP_OP_MESSAGE);
  put_u16(&w->chunk, (uint64_t)channel_id);
  put_u32(&w->chunk, sequence);
  put_u64(&w->chunk, log_time);
  put_u64(&w->chunk, publish_time);
  put(&w->chunk, data, len);
  rec_end(&w->chunk, at);
  if (w->chunk.oom)
    return fail(w, "out of memory");
  if (!w->chunk_has_msg || log_time < w->chunk_start)
    w->chunk_start = log_time;
  if (!w->chunk_has_msg || log_time > w->chunk_end)
    w->chunk_end = log_time;
  w->chunk_has_msg = 1;
  if (w->nmsg == 0 || log_time < w->msg_start)
    w->msg_start = log_time;
  if (w->nmsg == 0 || log_time > w->msg_end)
    w->msg_end = log_time;
  w->nmsg++;
  w->chan_count[channel_id]++;
  if (w->chunk.n >= w->chunk_size)
    return mcap_writer_flush(w);
  return 0;
}

// The chunk being built, its message indexes after it, and its Chunk Index for the summary.
static int write_chunk(mcap_writer *w) {
  if (w->chunk.n == 0)
    return 0;
  uint64_t chunk_at = w->pos;
  mbuf b = {0};
  size_t at = rec_begin(&b, MCAP_OP_CHUNK);
  put_u64(&b, w->chunk_start);
  put_u64(&b, w->chunk_end);
  put_u64(&b, w->chunk.n);
  put_u32(&b, mcap_crc32(0, w->chunk.p, w->chunk.n));
  put_str(&b, "");
  put_u64(&b, w->chunk.n);
  put(&b, w->chunk.p, w->chunk.n);
  rec_end(&b, at);
  uint64_t chunk_len = b.n;
  emit_buf(w, &b, 1);
  // message indexes, by channel id; remember where each one went
  uint64_t idx_at[MCAP_MAX_CHANNELS];
  uint64_t idx_start = w->pos;
  int nidx = 0;
  for (int c = 1; c <= w->nchannel; c++) {
    idx_list *l = &w->idx[c];
    if (!l->n)
      continue;
    b.n = 0;
    at = rec_begin(&b, MCAP_OP_MESSAGE_INDEX);
    put_u16(&b, (uint64_t)c);
    put_u32(&b, 16 * l->n);
    for (size_t k = 0; k < l->n; k++) {
      put_u64(&b, l->e[k].time);
      put_u64(&b, l->e[k].offset);
    }
    rec_end(&b, at);
    idx_at[c] = w->pos;
    nidx++;
    emit_buf(w, &b, 1);
  }
  uint64_t idx_len = w->pos - idx_start;
  // the Chunk Index
  mbuf *s = &w->sum_chunk_idx;
  at = rec_begin(s, MCAP_OP_CHUNK_INDEX);
  put_u64(s, w->chunk_start);
  put_u64(s, w->chunk_end);
  put_u64(s, chunk_at);
  put_u64(s, chunk_len);
  put_u32(s, (uint64_t)nidx * 10);
  for (int c = 1; c <= w->nchannel; c++) {
    if (!w->idx[c].n)
      continue;
    put_u16(s, (uint64_t)c);
    put_u64(s, idx_at[c]);
    w->idx[c].n = 0;
  }
  put_u64(s, idx_len);
  put_str(s, "");
  put_u64(s, w->chunk.n);
  put_u64(s, w->chunk.n);
  rec_end(s, at);
  mbuf_free(&b);
  w->nchunk++;
  w->chunk.n = 0;
  w->chunk_has_msg = 0;
  w->chunk_start = w->chunk_end = 0;
  if (s->oom)
    return fail(w, "out of memory");
  return w->failed ? -1 : 0;
}

int mcap_writer_flush(mcap_writer *w) {
  if (w->failed || write_chunk(w) < 0)
    return -1;
  if (fflush(w->f) != 0)
    return fail(w, "write failed: %s", strerror(errno));
  if (w->fsync_chunks && fsync(fileno(w->f)) != 0)
    return fail(w, "fsync failed: %s", strerror(errno));
  return 0;
}

int mcap_writer_attachment(mcap_writer *w, const char *name, const char *media_type,
                           uint64_t log_time, uint64_t create_time, const void *data,
                           size_t len) {
  if (w->failed)
    return -1;
  mbuf b = {0};
  size_t at = rec_begin(&b, MCAP_OP_ATTACHMENT);
  put_u64(&b, log_time);
  put_u64(&b, create_time);
  put_str(&b, name);
  put_str(&b, media_type);
  put_u64(&b, len);
  put(&b, data, len);
  // CRC-32 of the fields before it (the record's content so far)
  if (!b.oom)
    put_u32(&b, mcap_crc32(0, b.p + 9, b.n - 9));
  rec_end(&b, at);
  uint64_t rec_at = w->pos, rec_len = b.n;
  emit_buf(w, &b, 1);
  mbuf_free(&b);
  mbuf *s = &w->sum_att_idx;
  at = rec_begin(s, MCAP_OP_ATTACHMENT_INDEX);
  put_u64(s, rec_at);
  put_u64(s, rec_len);
  put_u64(s, log_time);
  put_u64(s, create_time);
  put_u64(s, len);
  put_str(s, name);
  put_str(s, media_type);
  rec_end(s, at);
  w->nattachment++;
  if (s->oom)
    return fail(w, "out of memory");
  return w->failed ? -1 : 0;
}

int mcap_writer_metadata(mcap_writer *w, const char *name, const char *const *kv, int npairs) {
  if (w->failed)
    return -1;
  mbuf b = {0};
  size_t at = rec_begin(&b, MCAP_OP_METADATA);
  put_str(&b, name);
  put_map_str(&b, kv, npairs);
  rec_end(&b, at);
  uint64_t rec_at = w->pos, rec_len = b.n;
  emit_buf(w, &b, 1);
  mbuf_free(&b);
  mbuf *s = &w->sum_meta_idx;
  at = rec_begin(s, MCAP_OP_METADATA_INDEX);
  put_u64(s, rec_at);
  put_u64(s, rec_len);
  put_str(s, name);
  rec_end(s, at);
  w->nmetadata++;
  if (s->oom)
    return fail(w, "out of memory");
  return w->failed ? -1 : 0;
}

static void free_writer(mcap_writer *w) {
  mbuf_free(&w->chunk);
  mbuf_free(&w->sum_schemas);
  mbuf_free(&w->sum_channels);
  mbuf_free(&w->sum_chunk_idx);
  mbuf_free(&w->sum_att_idx);
  mbuf_free(&w->sum_meta_idx);
  for (int c = 0; c < MCAP_MAX_CHANNELS; c++)
    free(w->idx[c].e);
  free(w);
}

void mcap_writer_abandon(mcap_writer *w) {
  if (!w)
    return;
  fclose(w->f);
  free_writer(w);
}

int mcap_writer_close(mcap_writer *w, char *err, size_t errlen) {
  write_chunk(w);
  // Data End: the CRC of everything before it
  mbuf b = {0};
  size_t at = rec_begin(&b, MCAP_OP_DATA_END);
  put_u32(&b, w->data_crc);
  rec_end(&b, at);
  emit_buf(w, &b, 0);
  // the summary, grouped by opcode, each group's place remembered for Summary Offset
  uint64_t summary_start = w->pos;
  uint32_t crc = 0;
  b.n = 0;
  struct {
    int op;
    uint64_t start, len;
  } groups[6];
  int ngroup = 0;
  mbuf *parts[] = {&w->sum_schemas, &w->sum_channels, &w->sum_chunk_idx, &w->sum_att_idx,
                   &w->sum_meta_idx};
  int ops[] = {MCAP_OP_SCHEMA, MCAP_OP_CHANNEL, MCAP_OP_CHUNK_INDEX, MCAP_OP_ATTACHMENT_INDEX,
               MCAP_OP_METADATA_INDEX};
  for (int i = 0; i < 5; i++) {
    if (!parts[i]->n)
      continue;
    groups[ngroup].op = ops[i];
    groups[ngroup].start = summary_start + b.n;
    groups[ngroup].len = parts[i]->n;
    ngroup++;
    put(&b, parts[i]->p, parts[i]->n);
  }
  groups[ngroup].op = MCAP_OP_STATISTICS;
  groups[ngroup].start = summary_start + b.n;
  at = rec_begin(&b, MCAP_OP_STATISTICS);
  put_u64(&b, w->nmsg);
  put_u16(&b, (uint64_t)w->nschema);
  put_u32(&b, (uint64_t)w->nchannel);
  put_u32(&b, (uint64_t)w->nattachment);
  put_u32(&b, (uint64_t)w->nmetadata);
  put_u32(&b, (uint64_t)w->nchunk);
  put_u64(&b, w->nmsg ? w->msg_start : 0);
  put_u64(&b, w->nmsg ? w->msg_end : 0);
  size_t map_at = b.n;
  put_u32(&b, 0);
  for (int c = 1; c <= w->nchannel; c++) {
    if (!w->chan_count[c])
      continue;
    put_u16(&b, (uint64_t)c);
    put_u64(&b, w->chan_count[c]);
  }
  patch_u32(&b, map_at, b.n - map_at - 4);
  rec_end(&b, at);
  groups[ngroup].len = summary_start + b.n - groups[ngroup].start;
  ngroup++;
  uint64_t offsets_start = summary_start + b.n;
  for (int i = 0; i < ngroup; i++) {
    at = rec_begin(&b, MCAP_OP_SUMMARY_OFFSET);
    put_u8(&b, (uint64_t)groups[i].op);
    put_u64(&b, groups[i].start);
    put_u64(&b, groups[i].len);
    rec_end(&b, at);
  }
  // Footer: its CRC covers the summary through summary_offset_start
  put_u8(&b, MCAP_OP_FOOTER);
  put_u64(&b, 20);   // the length is in the CRC, so it is written before, not patched
  put_u64(&b, summary_start);
  put_u64(&b, offsets_start);
  if (!b.oom)
    crc = mcap_crc32(crc, b.p, b.n);
  put_u32(&b, crc);
  put(&b, MCAP_MAGIC, MCAP_MAGIC_LEN);
  emit_buf(w, &b, 0);
  mbuf_free(&b);
  if (fflush(w->f) != 0)
    fail(w, "write failed: %s", strerror(errno));
  if (w->fsync_chunks && fsync(fileno(w->f)) != 0)
    fail(w, "fsync failed: %s", strerror(errno));
  if (fclose(w->f) != 0)
    fail(w, "close failed: %s", strerror(errno));
  int rc = w->failed ? -1 : 0;
  if (rc && err)
    snprintf(err, errlen, "%s", w->err);
  free_writer(w);
  return rc;
}
