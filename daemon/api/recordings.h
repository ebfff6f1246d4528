// recordings.h: the Record, StopRecording and GetRecording operations (record/ records).
#ifndef PD_RECORDINGS_H
#define PD_RECORDINGS_H

#include "model/sim.h"
#include "net/conn.h"

void recordings_request(conn *c, pb_request *q, sim *s);

#endif
