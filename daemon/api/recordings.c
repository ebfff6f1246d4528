// recordings.c: the Record, StopRecording and GetRecording operations (recordings.h): checked
// here, done by record/, answered with the recording's status.
#include <stdio.h>

#include "api/recordings.h"
#include "api/registry.h"
#include "api/reply.h"
#include "ptb_fields.h"

static void reply_record(conn *c, uint64_t id, sim *s) {
  Partita__V1__RecordStatus st = PARTITA__V1__RECORD_STATUS__INIT;
  pb_response resp = PARTITA__V1__RESPONSE__INIT;
  record_status(&entry_of(s)->rec, s, &st);
  resp.payload_case = PARTITA__V1__RESPONSE__PAYLOAD_RECORD_STATUS;
  resp.record_status = &st;
  reply(c, id, &resp);
}

void recordings_request(conn *c, pb_request *q, sim *s) {
  rec_model *rm = &entry_of(s)->rec;
  char err[600];
  if (q->op_case == PARTITA__V1__REQUEST__OP_RECORD) {
    const Partita__V1__Record *rq = q->record;
    if (!(rq->duration >= 0 && rq->duration <= 1e7)) {
      reply_status(c, q->id, STATUS(INVALID_ARGUMENT), "Record: duration must be in [0, 1e7] s");
      return;
    }
    if (rq->fields > PTB_FIELD_ALL) {
      reply_status(c, q->id, STATUS(INVALID_ARGUMENT), "Record: unknown field bits %u",
                   rq->fields);
      return;
    }
    if (record_path(rm)) {
      reply_status(c, q->id, STATUS(ALREADY_EXISTS), "model %s is already recording to %s",
                   s->name, record_path(rm));
      return;
    }
    int rc = record_start(rm, s, c->net->loop, rq->path, rq->every_k, rq->fields, rq->duration,
                          err, sizeof(err));
    if (rc != STATUS(OK)) {
      reply_status(c, q->id, rc, "%s", err);
      return;
    }
  } else if (q->op_case == PARTITA__V1__REQUEST__OP_STOP_RECORDING) {
    if (record_stop(rm)) {
      reply_status(c, q->id, STATUS(FAILED_PRECONDITION), "model %s is not recording",
                   s->name);
      return;
    }
  }
  reply_record(c, q->id, s);
}
