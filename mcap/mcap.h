// mcap.h: a small MCAP writer and reader, written to the published MCAP specification
// (https://mcap.dev/spec, major version 0): magic, Header, Schema, Channel, Message, Chunk
// (uncompressed, with its CRC-32), Message Index, Attachment, Metadata, Data End, the summary
// (Schema, Channel, Chunk Index, Attachment Index, Metadata Index, Statistics), Summary Offset,
// Footer and the closing magic. CRC-32 is zlib's.
//
// The writer buffers one chunk in memory and writes it with its message indexes when it is
// full (or on mcap_writer_flush), then flushes the stream: a process killed mid-run leaves a
// file whose complete chunks are all readable. The reader takes a whole file in memory,
// checks every CRC and, for a complete file, every index against the records it found; a file
// cut off at any byte is read up to its last complete record, with a note that says where and
// why it stopped.
#ifndef PARTITA_MCAP_H
#define PARTITA_MCAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MCAP_MAGIC "\x89MCAP0\r\n"
#define MCAP_MAGIC_LEN 8

enum {  // record opcodes (spec, "Records")
  MCAP_OP_HEADER = 0x01,
  MCAP_OP_FOOTER = 0x02,
  MCAP_OP_SCHEMA = 0x03,
  MCAP_OP_CHANNEL = 0x04,
  MCAP_OP_MESSAGE = 0x05,
  MCAP_OP_CHUNK = 0x06,
  MCAP_OP_MESSAGE_INDEX = 0x07,
  MCAP_OP_CHUNK_INDEX = 0x08,
  MCAP_OP_ATTACHMENT = 0x09,
  MCAP_OP_ATTACHMENT_INDEX = 0x0A,
  MCAP_OP_STATISTICS = 0x0B,
  MCAP_OP_METADATA = 0x0C,
  MCAP_OP_METADATA_INDEX = 0x0D,
  MCAP_OP_SUMMARY_OFFSET = 0x0E,
  MCAP_OP_DATA_END = 0x0F,
};

#define MCAP_MAX_CHANNELS 256   // channel ids 1..MCAP_MAX_CHANNELS-1 in one file (this writer)
#define MCAP_MAX_SCHEMAS 64

// ---------------------------------------------------------------------------------------------
// Writer. Every call returns 0 (or a new id > 0) on success, -1 after writing a message to the
// writer's error text (mcap_writer_error): out of memory, a failed write, a bad argument.

typedef struct mcap_writer mcap_writer;

typedef struct {
  size_t chunk_size;    // a chunk is written when its records reach this size (0: 256 KiB)
  int fsync_chunks;     // fsync after each chunk (power loss, not only a crash)
  const char *profile;  // Header.profile ("" when NULL)
  const char *library;  // Header.library
} mcap_writer_opts;

// Creates `path` (truncating it) and writes the magic and the Header. NULL on failure, with
// the reason in err.
mcap_writer *mcap_writer_open(const char *path, const mcap_writer_opts *o, char *err,
                              size_t errlen);
// Adds a schema; returns its id (1, 2, ...).
int mcap_writer_schema(mcap_writer *w, const char *name, const char *encoding,
                       const void *data, size_t len);
// Adds a channel; meta holds nmeta key/value pairs (meta[2k], meta[2k+1]). Returns its id.
int mcap_writer_channel(mcap_writer *w, int schema_id, const char *topic,
                        const char *message_encoding, const char *const *meta, int nmeta);
int mcap_writer_message(mcap_writer *w, int channel_id, uint32_t sequence, uint64_t log_time,
                        uint64_t publish_time, const void *data, size_t len);
int mcap_writer_attachment(mcap_writer *w, const char *name, const char *media_type,
                           uint64_t log_time, uint64_t create_time, const void *data,
                           size_t len);
int mcap_writer_metadata(mcap_writer *w, const char *name, const char *const *kv, int npairs);
// Writes the chunk being built (if any) and its message indexes, and flushes the stream.
int mcap_writer_flush(mcap_writer *w);
// Ends the file (chunk, Data End, summary, summary offsets, Footer, magic), closes it and
// frees the writer (also on failure). 0, or -1 with the reason in err.
int mcap_writer_close(mcap_writer *w, char *err, size_t errlen);
// Frees the writer without ending the file (what a crash leaves, for tests).
void mcap_writer_abandon(mcap_writer *w);
const char *mcap_writer_error(const mcap_writer *w);
uint64_t mcap_writer_bytes(const mcap_writer *w);     // bytes written to the file so far
uint64_t mcap_writer_messages(const mcap_writer *w);  // messages accepted so far

// ---------------------------------------------------------------------------------------------
// Reader. Strings are NUL-terminated copies; data pointers point into the file's bytes, which
// the mcap_file owns (a read-only mapping of the file: a long recording is not copied).

typedef struct {
  uint16_t id;
  char *name, *encoding;
  const uint8_t *data;
  size_t len;
} mcap_schema;

typedef struct {
  uint16_t id, schema_id;
  char *topic, *encoding;
  int nmeta;
  char **meta;          // (2 nmeta) key, value, key, value...
  uint64_t count;       // messages read on this channel
} mcap_channel;

typedef struct {
  uint16_t channel_id;
  uint32_t sequence;
  uint64_t log_time, publish_time;
  const uint8_t *data;
  size_t len;
} mcap_message;

typedef struct {
  char *name, *media_type;
  uint64_t log_time, create_time;
  const uint8_t *data;
  size_t len;
} mcap_attachment;

typedef struct {
  char *name;
  int npairs;
  char **kv;            // (2 npairs)
} mcap_metadata;

typedef enum {
  MCAP_READ_COMPLETE = 0,   // every record, CRC and index checked
  MCAP_READ_PARTIAL = 1,    // readable up to `valid_end`; `note` says why it stops there
  MCAP_READ_BAD = -1,       // not usable at all (not MCAP, no Header); `note` says why
} mcap_read_status;

typedef struct {
  uint8_t *bytes;       // the whole file
  size_t size;
  char *profile, *library;
  mcap_schema *schemas;
  int nschema;
  mcap_channel *channels;
  int nchannel;
  mcap_message *msgs;   // in file order
  size_t nmsg;
  mcap_attachment *attachments;
  int nattachment;
  mcap_metadata *metadata;
  int nmetadata;
  int nchunk;           // complete chunks read
  uint64_t valid_end;   // byte offset after the last record that was read whole
  int has_summary;      // a summary section was found and checked
  mcap_read_status status;
  char note[400];       // PARTIAL or BAD: where and why reading stopped
  // private
  void *priv;
  int mapped;           // bytes are a read-only mapping of the file (mcap_read_file)
} mcap_file;

// Reads a file. Returns the status (also in f->status); f must be freed with mcap_file_free
// whatever the status.
mcap_read_status mcap_read_file(const char *path, mcap_file *f);
// Same over bytes in memory (copied).
mcap_read_status mcap_read_bytes(const void *data, size_t size, mcap_file *f);
void mcap_file_free(mcap_file *f);

const mcap_channel *mcap_find_channel(const mcap_file *f, uint16_t id);
const mcap_schema *mcap_find_schema(const mcap_file *f, uint16_t id);
// The value of `key` in a metadata record or channel metadata, NULL when absent.
const char *mcap_meta_get(char *const *kv, int npairs, const char *key);

// The CRC-32 MCAP uses (zlib's crc32) of n bytes, continuing crc (0 to start), for any n
// (zlib takes a uInt length: longer buffers go in pieces). The writer's and the reader's.
uint32_t mcap_crc32(uint32_t crc, const void *p, uint64_t n);

#endif
