// recording.c: Partita's channel layout on the MCAP module (recording.h).
#include "recording.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const unsigned char partita_fds[];
extern const size_t partita_fds_len;

enum { CH_STATE, CH_INPUT, CH_EVENT, NCH };

struct rec_writer {
  mcap_writer *w;
  int chan[NCH];
  uint8_t *buf;       // packing buffer, grown as needed
  size_t cap;
  char err[256];
};

// Names joined by '\n' (names hold no line breaks: the loaders refuse control characters).
static char *join(const char *const *names, int n) {
  size_t len = 1;
  for (int i = 0; i < n; i++)
    len += strlen(names[i]) + 1;
  char *s = malloc(len), *p = s;
  if (!s)
    return NULL;
  for (int i = 0; i < n; i++) {
    size_t k = strlen(names[i]);
    memcpy(p, names[i], k);
    p += k;
    if (i + 1 < n)
      *p++ = '\n';
  }
  *p = '\0';
  return s;
}

rec_writer *rec_writer_open(const char *path, const rec_info *in, char *err, size_t errlen) {
  rec_writer *r = calloc(1, sizeof(*r));
  if (!r) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  // 64 KiB chunks: a crash loses at most the last one (a fraction of a second at 1 kHz)
  mcap_writer_opts o = {.chunk_size = in->chunk_size ? in->chunk_size : 64u << 10,
                        .fsync_chunks = in->fsync_chunks,
                        .profile = "", .library = in->library ? in->library : "partita"};
  r->w = mcap_writer_open(path, &o, err, errlen);
  if (!r->w) {
    free(r);
    return NULL;
  }
  static const char *const types[NCH] = {"partita.v1.StateFrame", "partita.v1.RecordedInput",
                                         "partita.v1.ModelEvent"};
  static const char *const kinds[NCH] = {"state", "input", "event"};
  char *coords = join(in->coord_names, in->nc), *inputs = join(in->input_names, in->ni);
  char *bodies = join(in->body_names, in->nb);
  char *ctls = join(in->ctl_names, in->nx), *sigs = join(in->signal_names, in->nsig);
  char every[32], fields[32], dt[40], start[32], gz[40] = "";
  snprintf(every, sizeof(every), "%u", in->every_k);
  snprintf(fields, sizeof(fields), "%u", in->fields);
  snprintf(dt, sizeof(dt), "%.17g", in->dt);
  snprintf(start, sizeof(start), "%lld", (long long)in->start_step);
  if (in->ground_plane) snprintf(gz, sizeof(gz), "%.17g", in->ground_z);
  const char *fmt = in->format == 2 ? "urdf" : "yaml";
  const char *kv[] = {"model", in->model,
                      "source_name", in->source_name ? in->source_name : "",
                      "format", fmt,
                      "floating_base", in->floating_base ? "true" : "false",
                      "balance_inertia", in->balance_inertia ? "true" : "false",
                      "no_joint_limits", in->no_joint_limits ? "true" : "false",
                      "ground_plane", gz,
                      "dt", dt,
                      "integrator", in->integrator ? in->integrator : "",
                      "every_k", every,
                      "fields", fields,
                      "time_base", in->time_base ? in->time_base : "simulation",
                      "start_step", start,
                      "init", in->init ? in->init : "",
                      "init_rate", in->init_rate ? in->init_rate : "",
                      "version", in->library ? in->library : ""};
  mcap_writer_metadata(r->w, REC_META_MODEL, kv, (int)(sizeof(kv) / sizeof(kv[0]) / 2));
  char name[300];
  const char *base = in->source_name ? strrchr(in->source_name, '/') : NULL;
  base = base ? base + 1 : in->source_name;
  snprintf(name, sizeof(name), "%s", base && base[0] ? base : fmt);
  mcap_writer_attachment(r->w, name, in->format == 2 ? "application/xml" : "application/yaml",
                         0, 0, in->text, in->text_len);
  for (int c = 0; c < NCH; c++) {
    char topic[300];
    snprintf(topic, sizeof(topic), "/%s/%s", in->model, kinds[c]);
    int sid = mcap_writer_schema(r->w, types[c], "protobuf", partita_fds, partita_fds_len);
    const char *meta[] = {"kind", kinds[c], "model", in->model,
                          "coordinates", coords ? coords : "", "inputs", inputs ? inputs : "",
                          "bodies", bodies ? bodies : "", "every_k", every, "fields", fields,
                          "control_states", ctls ? ctls : "", "signals", sigs ? sigs : ""};
    // the control elements' names only when the model has some (files stay as before)
    r->chan[c] = mcap_writer_channel(r->w, sid, topic, "protobuf", meta,
                                     c == CH_STATE ? (in->nsig ? 9 : 7) : 2);
  }
  int rc = mcap_writer_flush(r->w);
  free(coords);
  free(inputs);
  free(bodies);
  free(ctls);
  free(sigs);
  if (rc < 0 || !coords || !inputs || !bodies || !ctls || !sigs) {
    snprintf(err, errlen, "%s: %s", path, rc < 0 ? mcap_writer_error(r->w) : "out of memory");
    mcap_writer_abandon(r->w);
    free(r);
    return NULL;
  }
  return r;
}

static int write_msg(rec_writer *r, int c, uint32_t seq, uint64_t t, const ProtobufCMessage *m) {
  size_t n = protobuf_c_message_get_packed_size(m);
  if (n > r->cap) {
    size_t cap = r->cap ? r->cap : 1024;
    while (cap < n)
      cap *= 2;
    uint8_t *b = realloc(r->buf, cap);
    if (!b)
      return -1;
    r->buf = b;
    r->cap = cap;
  }
  protobuf_c_message_pack(m, r->buf);
  return mcap_writer_message(r->w, r->chan[c], seq, t, t, r->buf, n);
}

int rec_write_state(rec_writer *w, uint32_t seq, uint64_t t, const Partita__V1__StateFrame *f) {
  return write_msg(w, CH_STATE, seq, t, &f->base);
}

int rec_write_input(rec_writer *w, uint32_t seq, uint64_t t,
                    const Partita__V1__RecordedInput *in) {
  return write_msg(w, CH_INPUT, seq, t, &in->base);
}

int rec_write_event(rec_writer *w, uint32_t seq, uint64_t t, const Partita__V1__ModelEvent *e) {
  return write_msg(w, CH_EVENT, seq, t, &e->base);
}

int rec_writer_flush(rec_writer *w) { return mcap_writer_flush(w->w); }
const char *rec_writer_error(const rec_writer *w) { return mcap_writer_error(w->w); }
uint64_t rec_writer_bytes(const rec_writer *w) { return mcap_writer_bytes(w->w); }

int rec_writer_close(rec_writer *w, const char *const *kv, int npairs, char *err,
                     size_t errlen) {
  mcap_writer_metadata(w->w, REC_META_END, kv, npairs);
  int rc = mcap_writer_close(w->w, err, errlen);
  free(w->buf);
  free(w);
  return rc;
}

void rec_writer_abandon(rec_writer *w) {
  if (!w)
    return;
  mcap_writer_abandon(w->w);
  free(w->buf);
  free(w);
}

// ---------------------------------------------------------------------------------------------
// Reading.

static char **split(const char *s, int *n) {
  *n = 0;
  if (!s || !s[0])
    return calloc(1, sizeof(char *));
  int cap = 1;
  for (const char *p = s; *p; p++)
    cap += *p == '\n';
  char **v = calloc((size_t)cap + 1, sizeof(char *));
  if (!v)
    return NULL;
  const char *start = s;
  for (const char *p = s;; p++) {
    if (*p == '\n' || *p == '\0') {
      size_t k = (size_t)(p - start);
      v[*n] = malloc(k + 1);
      if (!v[*n])
        return v;
      memcpy(v[*n], start, k);
      v[(*n)++][k] = '\0';
      if (!*p)
        break;
      start = p + 1;
    }
  }
  return v;
}

static void free_names(char **v, int n) {
  for (int i = 0; v && i < n; i++)
    free(v[i]);
  free(v);
}

static int cmp_entry(const void *a, const void *b) {
  const rec_entry *x = a, *y = b;
  if (x->seq != y->seq)
    return x->seq < y->seq ? -1 : 1;
  return (int)x->kind - (int)y->kind;
}

Partita__V1__StateFrame *rec_state(const rec_entry *e) {
  return e->kind == REC_STATE ? partita__v1__state_frame__unpack(NULL, e->len, e->data) : NULL;
}

void rec_state_free(Partita__V1__StateFrame *f) {
  if (f)
    partita__v1__state_frame__free_unpacked(f, NULL);
}

const char *rec_end_value(const rec_file *r, const char *key) {
  return r->end_kv ? mcap_meta_get(r->end_kv, r->end_npairs, key) : NULL;
}

mcap_read_status rec_file_read(const char *path, rec_file *r, char *err, size_t errlen) {
  memset(r, 0, sizeof(*r));
  r->status = mcap_read_file(path, &r->f);
  if (r->status == MCAP_READ_BAD) {
    snprintf(err, errlen, "%s", r->f.note);
    return MCAP_READ_BAD;
  }
  const mcap_metadata *meta = NULL;
  for (int i = 0; i < r->f.nmetadata; i++) {
    if (strcmp(r->f.metadata[i].name, REC_META_MODEL) == 0 && !meta)
      meta = &r->f.metadata[i];
    if (strcmp(r->f.metadata[i].name, REC_META_END) == 0) {
      r->end_kv = r->f.metadata[i].kv;
      r->end_npairs = r->f.metadata[i].npairs;
    }
  }
  if (!meta) {
    if (r->status == MCAP_READ_PARTIAL)
      snprintf(err, errlen, "cut off before its model metadata, nothing to read (%s)",
               r->f.note);
    else
      snprintf(err, errlen, "an MCAP file, but no Partita recording (no '%s' metadata)",
               REC_META_MODEL);
    r->status = MCAP_READ_BAD;
    return MCAP_READ_BAD;
  }
#define GET(k) mcap_meta_get(meta->kv, meta->npairs, k)
  r->model = GET("model");
  r->source_name = GET("source_name");
  r->integrator = GET("integrator");
  r->time_base = GET("time_base");
  r->init = GET("init");
  r->init_rate = GET("init_rate");
  r->version = GET("version");
  const char *v;
  r->format = (v = GET("format")) && strcmp(v, "urdf") == 0 ? 2 : 1;
  r->floating_base = (v = GET("floating_base")) && strcmp(v, "true") == 0;
  r->balance_inertia = (v = GET("balance_inertia")) && strcmp(v, "true") == 0;
  r->no_joint_limits = (v = GET("no_joint_limits")) && strcmp(v, "true") == 0;
  r->ground_plane = (v = GET("ground_plane")) && v[0];   // "": none; else its z
  r->ground_z = r->ground_plane ? strtod(v, NULL) : 0;
  r->dt = (v = GET("dt")) ? strtod(v, NULL) : 0;
  r->every_k = (v = GET("every_k")) ? (uint32_t)strtoul(v, NULL, 10) : 1;
  r->fields = (v = GET("fields")) ? (uint32_t)strtoul(v, NULL, 10) : 0;
  r->start_step = (v = GET("start_step")) ? strtoll(v, NULL, 10) : 0;
#undef GET
  if (!r->model) {
    snprintf(err, errlen, "'%s' metadata without a model name", REC_META_MODEL);
    r->status = MCAP_READ_BAD;
    return MCAP_READ_BAD;
  }
  if (r->f.nattachment > 0) {
    r->text = r->f.attachments[0].data;
    r->text_len = r->f.attachments[0].len;
  }
  // channels by kind
  int kind_of[1024];   // channel id -> kind (this reader takes ids below 1024)
  memset(kind_of, -1, sizeof(kind_of));
  for (int i = 0; i < r->f.nchannel; i++) {
    const mcap_channel *ch = &r->f.channels[i];
    const char *kind = mcap_meta_get(ch->meta, ch->nmeta, "kind");
    const char *model = mcap_meta_get(ch->meta, ch->nmeta, "model");
    if (!kind || !model || strcmp(model, r->model) != 0 || ch->id >= 1024)
      continue;
    int k = strcmp(kind, "state") == 0 ? REC_STATE
            : strcmp(kind, "input") == 0 ? REC_INPUT
            : strcmp(kind, "event") == 0 ? REC_EVENT : -1;
    kind_of[ch->id] = k;
    if (k == REC_STATE && !r->coord_names) {
      r->coord_names = split(mcap_meta_get(ch->meta, ch->nmeta, "coordinates"), &r->nc);
      r->input_names = split(mcap_meta_get(ch->meta, ch->nmeta, "inputs"), &r->ni);
      r->body_names = split(mcap_meta_get(ch->meta, ch->nmeta, "bodies"), &r->nb);
      const char *x = mcap_meta_get(ch->meta, ch->nmeta, "control_states");
      const char *sg = mcap_meta_get(ch->meta, ch->nmeta, "signals");
      r->ctl_names = split(x ? x : "", &r->nx);
      r->signal_names = split(sg ? sg : "", &r->nsig);
    }
  }
  if (!r->coord_names || !r->input_names || !r->body_names) {
    snprintf(err, errlen, "no state channel for model '%s'%s", r->model,
             r->status == MCAP_READ_PARTIAL ? " (cut off before it)" : "");
    r->status = MCAP_READ_BAD;
    return MCAP_READ_BAD;
  }
  r->entries = calloc(r->f.nmsg + 1, sizeof(rec_entry));
  if (!r->entries) {
    snprintf(err, errlen, "out of memory");
    r->status = MCAP_READ_BAD;
    return MCAP_READ_BAD;
  }
  for (size_t i = 0; i < r->f.nmsg; i++) {
    const mcap_message *m = &r->f.msgs[i];
    int k = m->channel_id < 1024 ? kind_of[m->channel_id] : -1;
    if (k < 0)
      continue;
    rec_entry *e = &r->entries[r->n];
    e->kind = (rec_kind)k;
    e->seq = m->sequence;
    e->log_time = m->log_time;
    e->data = m->data;
    e->len = m->len;
    void *msg = NULL;
    Partita__V1__StateFrame *state = NULL;
    if (k == REC_STATE)
      msg = state = partita__v1__state_frame__unpack(NULL, m->len, m->data);
    else if (k == REC_INPUT)
      msg = e->u.input = partita__v1__recorded_input__unpack(NULL, m->len, m->data);
    else
      msg = e->u.event = partita__v1__model_event__unpack(NULL, m->len, m->data);
    if (!msg) {
      snprintf(err, errlen, "message %zu (channel %u) does not decode", i, m->channel_id);
      r->status = MCAP_READ_BAD;
      return MCAP_READ_BAD;
    }
    r->n++;
    if (k == REC_STATE) {   // checked and counted; decoded again when asked for
      r->nstate++;
      r->overruns += state->overran;
      partita__v1__state_frame__free_unpacked(state, NULL);
    } else if (k == REC_INPUT) {
      r->ninput++;
    } else {
      r->nevent++;
    }
  }
  qsort(r->entries, r->n, sizeof(rec_entry), cmp_entry);
  for (size_t i = 1; i < r->n; i++)
    if (r->entries[i].seq > r->entries[i - 1].seq + 1)
      r->seq_gaps += r->entries[i].seq - r->entries[i - 1].seq - 1;
  return r->status;
}

void rec_file_free(rec_file *r) {
  for (size_t i = 0; r->entries && i < r->n; i++) {
    rec_entry *e = &r->entries[i];
    if (e->kind == REC_INPUT)
      partita__v1__recorded_input__free_unpacked(e->u.input, NULL);
    else if (e->kind == REC_EVENT)
      partita__v1__model_event__free_unpacked(e->u.event, NULL);
  }
  free(r->entries);
  free_names(r->coord_names, r->nc);
  free_names(r->input_names, r->ni);
  free_names(r->body_names, r->nb);
  free_names(r->ctl_names, r->nx);
  free_names(r->signal_names, r->nsig);
  mcap_file_free(&r->f);
  memset(r, 0, sizeof(*r));
}
